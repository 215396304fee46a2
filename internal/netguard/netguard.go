// Package netguard is the server's one network policy: which addresses a
// request made on a caller's behalf may reach. Every path out (the plain
// HTTP engine, Chrome through the guarded proxy, sitemaps and robots.txt,
// webhooks, tools) dials through a Policy, which resolves names itself and
// decides on the resolved address at dial time, so DNS rebinding, redirects
// and preconnects cannot get past it.
//
// By default only globally reachable unicast addresses are admitted: every
// range of the IANA IPv4 and IPv6 special-purpose registries that is not
// globally reachable is refused, IPv6 forms that carry an IPv4 address
// (mapped, NAT64, 6to4, Teredo) are judged by that address, and the
// addresses of the machine's own interfaces are refused too (a service
// bound to 0.0.0.0 is reachable through them). Operators open exactly what
// they need: AllowAll (ALLOW_PRIVATE_TARGETS) admits everything, Allow
// (ALLOW_TARGETS) admits listed CIDRs and host names.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ErrBlocked is wrapped by every refusal of the policy.
var ErrBlocked = errors.New("netguard: address not allowed")

// BlockedError is a refusal: the host asked for and the address it resolved
// to (invalid when the host itself was refused). It unwraps to ErrBlocked.
type BlockedError struct {
	Host string
	Addr netip.Addr
}

func (e *BlockedError) Error() string {
	if !e.Addr.IsValid() {
		return fmt.Sprintf("%s is not a public host", e.Host)
	}
	if e.Host == "" || e.Host == e.Addr.String() {
		return fmt.Sprintf("address %s is not a public address", e.Addr)
	}
	return fmt.Sprintf("%s resolves to %s, which is not a public address", e.Host, e.Addr)
}

// Unwrap returns ErrBlocked.
func (e *BlockedError) Unwrap() error { return ErrBlocked }

// Options configures a Policy.
type Options struct {
	// AllowAll admits every address (ALLOW_PRIVATE_TARGETS=true).
	AllowAll bool
	// Allow lists CIDRs (10.1.2.0/24), single addresses and host names
	// (wiki.internal, or *.corp.example for every subdomain) admitted
	// whatever they resolve to (ALLOW_TARGETS).
	Allow []string
	// Resolver resolves host names; nil means net.DefaultResolver. Tests
	// point it at their own DNS server.
	Resolver *net.Resolver
	// InterfaceAddrs lists the machine's own addresses; nil means
	// net.InterfaceAddrs. They are re-read every InterfaceRefresh.
	InterfaceAddrs func() ([]net.Addr, error)
	// InterfaceRefresh is how old the list of own addresses may get; zero
	// means 30 s.
	InterfaceRefresh time.Duration
	// Permit, when set, admits an address and port before any other rule.
	// Tests use it to reach their own loopback server through an active
	// policy; the server never sets it.
	Permit func(netip.AddrPort) bool
}

// Policy decides which addresses may be reached. It is safe for concurrent
// use; create one per process and share it.
type Policy struct {
	allowAll   bool
	allowNets  []netip.Prefix
	allowHosts map[string]bool // exact names
	allowZones []string        // "*.corp.example" as ".corp.example"
	resolver   *net.Resolver
	permit     func(netip.AddrPort) bool

	// reserved: ports of the machine's own addresses that no target may
	// reach, whatever else admits them (Reserve).
	reservedMu sync.RWMutex
	reserved   map[uint16]bool

	ifaceAddrs   func() ([]net.Addr, error)
	ifaceRefresh time.Duration
	ifaceMu      sync.Mutex
	own          atomic.Pointer[ownAddrs]
}

// ownAddrs is a snapshot of the machine's interface addresses.
type ownAddrs struct {
	read  time.Time
	addrs map[netip.Addr]bool
}

// New returns a Policy; it fails on an Allow entry that is neither a CIDR,
// an address nor a host name.
func New(opts Options) (*Policy, error) {
	p := &Policy{
		allowAll:     opts.AllowAll,
		allowHosts:   map[string]bool{},
		resolver:     opts.Resolver,
		permit:       opts.Permit,
		ifaceAddrs:   opts.InterfaceAddrs,
		ifaceRefresh: opts.InterfaceRefresh,
	}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	if p.ifaceAddrs == nil {
		p.ifaceAddrs = net.InterfaceAddrs
	}
	if p.ifaceRefresh <= 0 {
		p.ifaceRefresh = 30 * time.Second
	}
	for _, raw := range opts.Allow {
		e := strings.ToLower(strings.TrimSpace(raw))
		if e == "" {
			continue
		}
		if pfx, err := netip.ParsePrefix(e); err == nil {
			p.allowNets = append(p.allowNets, pfx.Masked())
			continue
		}
		if a, err := netip.ParseAddr(e); err == nil {
			p.allowNets = append(p.allowNets, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		name, wildcard := strings.CutPrefix(strings.TrimSuffix(e, "."), "*.")
		if !validHostName(name) {
			return nil, fmt.Errorf("netguard: allow entry %q is not a CIDR, an address or a host name", raw)
		}
		if wildcard {
			p.allowZones = append(p.allowZones, "."+name)
		} else {
			p.allowHosts[name] = true
		}
	}
	return p, nil
}

// validHostName reports whether s is a plausible DNS name.
func validHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// AllowsAll reports whether the policy admits every address.
func (p *Policy) AllowsAll() bool { return p.allowAll }

// hostAllowed reports whether a host name is opened by name.
func (p *Policy) hostAllowed(host string) bool {
	host = normalizeHost(host)
	if p.allowHosts[host] {
		return true
	}
	for _, z := range p.allowZones {
		if strings.HasSuffix(host, z) {
			return true
		}
	}
	return false
}

func normalizeHost(host string) string {
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// AddrAllowed reports whether ip may be reached when asked for under the
// name host ("" for an address literal).
func (p *Policy) AddrAllowed(host string, ip netip.Addr) bool {
	return p.check(host, netip.AddrPortFrom(ip, 0)) == nil
}

// check decides on one address. host is the name it was resolved from, or
// "" for a literal.
func (p *Policy) check(host string, ap netip.AddrPort) error {
	ip := ap.Addr().WithZone("")
	if p.isReserved(ip, ap.Port()) {
		return &BlockedError{Host: host, Addr: ip}
	}
	if p.permit != nil && p.permit(netip.AddrPortFrom(ip.Unmap(), ap.Port())) {
		return nil
	}
	if p.allowAll {
		return nil
	}
	if host != "" && p.hostAllowed(host) {
		return nil
	}
	for _, n := range p.allowNets {
		if n.Contains(ip.Unmap()) {
			return nil
		}
	}
	if !globallyReachable(ip) || p.isOwn(ip) {
		return &BlockedError{Host: host, Addr: ip}
	}
	return nil
}

// Reserve makes port on the machine's own addresses (loopback, the
// unspecified address and every interface address, in every wrapped form)
// unreachable for every target, even with AllowAll, Allow or Permit: a
// control endpoint of the server itself, like a local Chrome's DevTools
// port, is never something a caller may fetch.
func (p *Policy) Reserve(port uint16) {
	p.reservedMu.Lock()
	defer p.reservedMu.Unlock()
	if p.reserved == nil {
		p.reserved = map[uint16]bool{}
	}
	p.reserved[port] = true
}

// isReserved reports whether ip:port is a reserved port of this machine.
func (p *Policy) isReserved(ip netip.Addr, port uint16) bool {
	p.reservedMu.RLock()
	r := p.reserved[port]
	p.reservedMu.RUnlock()
	if !r {
		return false
	}
	local := func(a netip.Addr) bool { return a.IsLoopback() || a.IsUnspecified() }
	if local(ip.Unmap()) || p.isOwn(ip) {
		return true
	}
	if v4s, ok := unwrap(ip); ok {
		for _, a := range v4s {
			if local(a) {
				return true
			}
		}
	}
	return false
}

// isOwn reports whether ip (or the IPv4 address it carries) is an address
// of one of the machine's interfaces.
func (p *Policy) isOwn(ip netip.Addr) bool {
	own := p.ownAddrs()
	if own[ip.Unmap()] {
		return true
	}
	if v4s, ok := unwrap(ip); ok {
		for _, a := range v4s {
			if own[a] {
				return true
			}
		}
	}
	return false
}

// ownAddrs returns the machine's addresses, re-read when the snapshot is
// older than the refresh interval. A failed read keeps the last snapshot.
func (p *Policy) ownAddrs() map[netip.Addr]bool {
	if o := p.own.Load(); o != nil && time.Since(o.read) < p.ifaceRefresh {
		return o.addrs
	}
	p.ifaceMu.Lock()
	defer p.ifaceMu.Unlock()
	if o := p.own.Load(); o != nil && time.Since(o.read) < p.ifaceRefresh {
		return o.addrs
	}
	addrs, err := p.ifaceAddrs()
	if err != nil {
		if o := p.own.Load(); o != nil {
			return o.addrs
		}
		return nil
	}
	m := make(map[netip.Addr]bool, len(addrs))
	for _, a := range addrs {
		var s string
		switch v := a.(type) {
		case *net.IPNet:
			s = v.IP.String()
		case *net.IPAddr:
			s = v.IP.String()
		default:
			s, _, _ = strings.Cut(a.String(), "/")
		}
		if ip, err := netip.ParseAddr(s); err == nil {
			m[ip.WithZone("").Unmap()] = true
		}
	}
	p.own.Store(&ownAddrs{read: time.Now(), addrs: m})
	return m
}

// CheckHost is an early refusal without a lookup, for port (0 if
// unknown): it refuses an address literal the policy refuses and names
// under "localhost" (RFC 6761: always loopback). Other names are decided
// when dialled.
func (p *Policy) CheckHost(host string, port uint16) error {
	host = normalizeHost(strings.Trim(host, "[]"))
	if p.allowAll {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return p.check("", netip.AddrPortFrom(ip, port))
	}
	if isLocalhost(host) {
		for _, ip := range localhostAddrs {
			if p.check(host, netip.AddrPortFrom(ip, port)) == nil {
				return nil
			}
		}
		return &BlockedError{Host: host}
	}
	return nil
}

// localhostAddrs are what "localhost" and its subdomains resolve to.
var localhostAddrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}

func isLocalhost(host string) bool {
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// Resolve looks host up and returns its addresses the policy admits for
// port. A lookup failure is returned as such (the caller fails closed); an
// answer with no admitted address is a *BlockedError.
func (p *Policy) Resolve(ctx context.Context, host string, port uint16) ([]netip.Addr, error) {
	host = strings.Trim(host, "[]")
	if ip, err := netip.ParseAddr(host); err == nil {
		if err := p.check("", netip.AddrPortFrom(ip, port)); err != nil {
			return nil, err
		}
		return []netip.Addr{ip.WithZone("")}, nil
	}
	name := normalizeHost(host)
	var addrs []netip.Addr
	if isLocalhost(name) {
		// Never asked of DNS, as browsers do (RFC 6761).
		addrs = localhostAddrs
	} else {
		var err error
		if addrs, err = p.resolver.LookupNetIP(ctx, "ip", name); err != nil {
			return nil, fmt.Errorf("netguard: lookup %s: %w", name, err)
		}
	}
	var ok []netip.Addr
	var refused error
	for _, a := range addrs {
		if err := p.check(name, netip.AddrPortFrom(a, port)); err != nil {
			refused = err
			continue
		}
		ok = append(ok, a.WithZone(""))
	}
	if len(ok) == 0 {
		if refused == nil {
			return nil, fmt.Errorf("netguard: lookup %s: no addresses", name)
		}
		return nil, refused
	}
	return ok, nil
}

// CheckTarget decides on a connection another party makes for us, as a
// proxy that resolves names itself: it resolves host (or takes the
// literal) and refuses it unless the policy admits one of its addresses
// for port. The party may resolve the name otherwise (another DNS, a
// later answer), so what it can reach must be limited by other means too;
// this refuses what the server can tell is not allowed before handing
// the name over. A lookup failure is returned as such; a refusal is a
// *BlockedError.
func (p *Policy) CheckTarget(ctx context.Context, host string, port uint16) error {
	if p.allowAll {
		return nil
	}
	_, err := p.Resolve(ctx, host, port)
	return err
}
