package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/netguard/netguardtest"
)

// listen accepts on addr and counts the connections.
func listen(t *testing.T, addr string) (net.Listener, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return ln, &n
}

// samePortPair listens on 127.0.0.2 and 127.0.0.1 on one port number.
func samePortPair(t *testing.T) (port int, public, canary *atomic.Int64) {
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
	time.Sleep(50 * time.Millisecond)
	if n := canary.Load(); n != 0 {
		t.Errorf("the loopback canary saw %d connections", n)
	}
	if n := public.Load(); n != 3 {
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
	time.Sleep(50 * time.Millisecond)
	if two.Load() != 1 || one.Load() != 1 {
		t.Errorf("127.0.0.2 saw %d connections, 127.0.0.1 saw %d; want 1 each (the allowed name)", two.Load(), one.Load())
	}
}
