package httpapi

import (
	"fmt"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// authFailWindow is the window failed authentications are counted over.
const authFailWindow = time.Minute

// maxTrackedClients bounds the addresses the failure counter remembers.
const maxTrackedClients = 100_000

// authFailures counts failed authentications per client address in a fixed
// one-minute window that starts at the first failure. An address with
// limit failures in its window is refused every request until the window
// ends, valid key or not, so that keys cannot be guessed faster. The count
// is per process.
type authFailures struct {
	limit int
	now   func() time.Time

	mu      sync.Mutex
	clients map[netip.Addr]*failWindow
}

type failWindow struct {
	start time.Time
	n     int
}

func newAuthFailures(limit int) *authFailures {
	return &authFailures{limit: limit, now: time.Now, clients: make(map[netip.Addr]*failWindow)}
}

// blocked returns how long addr must wait when it has used up its
// failures; 0 when it may try.
func (a *authFailures) blocked(addr netip.Addr) time.Duration {
	if a == nil {
		return 0
	}
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.clients[addr]
	if w == nil || w.n < a.limit {
		return 0
	}
	if left := w.start.Add(authFailWindow).Sub(now); left > 0 {
		return left
	}
	delete(a.clients, addr)
	return 0
}

// fail records a failed authentication from addr.
func (a *authFailures) fail(addr netip.Addr) {
	if a == nil {
		return
	}
	now := a.now()
	a.mu.Lock()
	defer a.mu.Unlock()
	w := a.clients[addr]
	if w == nil || now.Sub(w.start) >= authFailWindow {
		if w == nil && len(a.clients) >= maxTrackedClients {
			a.sweep(now)
		}
		w = &failWindow{start: now}
		a.clients[addr] = w
	}
	w.n++
}

// sweep forgets ended windows, and everything if that is not enough (the
// bound matters more than the count of a flood from many addresses).
func (a *authFailures) sweep(now time.Time) {
	for k, w := range a.clients {
		if now.Sub(w.start) >= authFailWindow {
			delete(a.clients, k)
		}
	}
	if len(a.clients) >= maxTrackedClients {
		clear(a.clients)
	}
}

// errAuthRateLimited answers an address over its failed authentications.
func errAuthRateLimited(wait time.Duration) *Error {
	secs := max(int(math.Ceil(wait.Seconds())), 1)
	return &Error{Status: http.StatusTooManyRequests, Code: "AUTH_RATE_LIMITED", RetryAfter: secs,
		Message: fmt.Sprintf("Too many failed authentications from your address. Please retry after %ds", secs)}
}

// clientAddr is the address failed authentications are counted against:
// the connection's peer, or, when that peer is a trusted proxy, the
// rightmost X-Forwarded-For address that is not one. IPv6 addresses count
// by their /64, which one client usually holds whole.
func (s *Server) clientAddr(r *http.Request) netip.Addr {
	addr := peerAddr(r.RemoteAddr)
	if s.trusted(addr) {
		hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
		for i := len(hops) - 1; i >= 0; i-- {
			hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break
			}
			addr = hop.Unmap()
			if !s.trusted(addr) {
				break
			}
		}
	}
	if addr.Is6() {
		if p, err := addr.Prefix(64); err == nil {
			return p.Addr()
		}
	}
	return addr
}

// trusted reports whether addr is one of the trusted proxies.
func (s *Server) trusted(addr netip.Addr) bool {
	for _, p := range s.trustedProxies {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// peerAddr parses the host of a RemoteAddr; the zero Addr when it is not
// an IP address.
func peerAddr(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap()
}
