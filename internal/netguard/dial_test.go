package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/netguard/netguardtest"
)

// server accepts on a loopback address and records the peer of each
// connection, in the order accepted.
type server struct {
	addr     string
	mu       sync.Mutex
	peers    []string
	accepted chan struct{} // closed (and dropped) at each accept
}

// listen starts a server on addr.
func listen(t *testing.T, addr string) (net.Listener, *server) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	s := &server{addr: ln.Addr().String()}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.peers = append(s.peers, c.RemoteAddr().String())
			if s.accepted != nil {
				close(s.accepted)
				s.accepted = nil
			}
			s.mu.Unlock()
			c.Close()
		}
	}()
	return ln, s
}

// settled returns how many connections the server took before one the
// test makes now. Every dial before has returned, its handshake done, so
// its connection waits in the listener's queue ahead of the test's, and a
// listener accepts in arrival order: once the test's is accepted, the
// count is final, with no pause for stragglers.
func (s *server) settled(t *testing.T) int {
	t.Helper()
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	me := c.LocalAddr().String()
	expired := time.After(10 * time.Second)
	for {
		s.mu.Lock()
		if i := slices.Index(s.peers, me); i >= 0 {
			s.mu.Unlock()
			return i
		}
		if s.accepted == nil {
			s.accepted = make(chan struct{})
		}
		accepted := s.accepted
		s.mu.Unlock()
		select {
		case <-accepted:
		case <-expired:
			t.Fatalf("%s did not accept the test's connection", s.addr)
		}
	}
}

// samePortPair listens on 127.0.0.2 and 127.0.0.1 on one port number.
func samePortPair(t *testing.T) (port int, public, canary *server) {
	t.Helper()
	for range 20 {
		ln, pub := listen(t, "127.0.0.2:0")
		port = ln.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue
		}
		l2.Close()
		_, can := listen(t, "127.0.0.1:"+strconv.Itoa(port))
		return port, pub, can
	}
	t.Fatal("no port free on both 127.0.0.1 and 127.0.0.2")
	return 0, nil, nil
}

// TestDialRebinding: a name answering 127.0.0.2 (playing a public address)
// and 127.0.0.1 in turn is dialled by the address the policy checked,
// never by a second lookup, so the loopback canary sees no connection.
func TestDialRebinding(t *testing.T) {
	t.Parallel()
	port, public, canary := samePortPair(t)
	dns := netguardtest.NewDNS(t)
	dns.Answer("rebind.test", netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("127.0.0.1"))
	policy, err := netguard.New(netguard.Options{
		Resolver: dns.Resolver(),
		Permit:   func(ap netip.AddrPort) bool { return ap.Addr() == netip.MustParseAddr("127.0.0.2") },
	})
	if err != nil {
		t.Fatal(err)
	}
	d := &netguard.Dialer{Policy: policy, Timeout: 2 * time.Second}
	var ok, blocked int
	for range 6 {
		c, err := d.DialContext(context.Background(), "tcp", net.JoinHostPort("rebind.test", strconv.Itoa(port)))
		switch {
		case err == nil:
			ok++
			c.Close()
		case errors.Is(err, netguard.ErrBlocked):
			blocked++
		default:
			t.Fatalf("dial: %v", err)
		}
	}
	if ok != 3 || blocked != 3 {
		t.Errorf("%d dials connected, %d refused; want 3 and 3", ok, blocked)
	}
	if n := canary.settled(t); n != 0 {
		t.Errorf("the loopback canary saw %d connections", n)
	}
	if n := public.settled(t); n != 3 {
		t.Errorf("the permitted server saw %d connections, want 3", n)
	}
	// A name that does not resolve fails closed.
	if _, err := d.DialContext(context.Background(), "tcp", "nxdomain.test:80"); err == nil || errors.Is(err, netguard.ErrBlocked) {
		t.Errorf("dial of an unresolvable name: %v, want a lookup error", err)
	}
}

// TestAllowTargetsDial: ALLOW_TARGETS opens exactly its ranges and names.
func TestAllowTargetsDial(t *testing.T) {
	t.Parallel()
	port, two, one := samePortPair(t)
	dns := netguardtest.NewDNS(t)
	dns.Answer("intranet.test", netip.MustParseAddr("127.0.0.1"))
	dns.Answer("other.test", netip.MustParseAddr("127.0.0.1"))
	policy, err := netguard.New(netguard.Options{Resolver: dns.Resolver(), Allow: []string{"127.0.0.2/32", "intranet.test"}})
	if err != nil {
		t.Fatal(err)
	}
	d := &netguard.Dialer{Policy: policy, Timeout: 2 * time.Second}
	p := strconv.Itoa(port)
	for addr, want := range map[string]bool{
		"127.0.0.2:" + p: true, "intranet.test:" + p: true,
		"127.0.0.1:" + p: false, "other.test:" + p: false, "localhost:" + p: false, "[::ffff:127.0.0.1]:" + p: false,
	} {
		c, err := d.DialContext(context.Background(), "tcp", addr)
		if want != (err == nil) {
			t.Errorf("dial %s: %v, want allowed=%v", addr, err, want)
		}
		if err == nil {
			c.Close()
		} else if !errors.Is(err, netguard.ErrBlocked) {
			t.Errorf("dial %s: %v, want ErrBlocked", addr, err)
		}
	}
	if n2, n1 := two.settled(t), one.settled(t); n2 != 1 || n1 != 1 {
		t.Errorf("127.0.0.2 saw %d connections, 127.0.0.1 saw %d; want 1 each (the allowed name)", n2, n1)
	}
}
