package netguard

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"
)

// ownAddr is a public address the tests pretend belongs to the machine.
const ownAddr = "8.8.4.4"

func testPolicy(t *testing.T, opts Options) *Policy {
	t.Helper()
	if opts.InterfaceAddrs == nil {
		opts.InterfaceAddrs = func() ([]net.Addr, error) {
			return []net.Addr{
				&net.IPNet{IP: net.ParseIP("127.0.0.1"), Mask: net.CIDRMask(8, 32)},
				&net.IPNet{IP: net.ParseIP(ownAddr), Mask: net.CIDRMask(24, 32)},
				&net.IPNet{IP: net.ParseIP("2a00:1450:4001:82b::1"), Mask: net.CIDRMask(64, 128)},
			}, nil
		}
	}
	p, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAddrAllowed(t *testing.T) {
	t.Parallel()
	p := testPolicy(t, Options{})
	cases := []struct {
		addr string
		want bool
	}{
		// Public.
		{"93.184.215.14", true},
		{"1.1.1.1", true},
		{"172.32.0.1", true},
		{"100.128.0.1", true},
		{"169.254.1.1", false},
		{"2606:4700:4700::1111", true},
		{"::ffff:93.184.215.14", true},
		{"64:ff9b::5db8:d70e", true}, // NAT64 of 93.184.215.14
		{"2002:5db8:d70e::1", true},  // 6to4 of 93.184.215.14
		// IPv4 special-purpose.
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"10.0.0.1", false},
		{"100.64.0.1", false},
		{"100.100.100.200", false}, // Alibaba metadata
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"169.254.169.254", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.0.0.1", false},
		{"192.0.2.1", false},
		{"192.88.99.1", false},
		{"192.168.1.1", false},
		{"198.18.0.1", false},
		{"198.51.100.1", false},
		{"203.0.113.1", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"240.0.0.1", false},
		{"255.255.255.255", false},
		// IPv6 special-purpose.
		{"::", false},
		{"::1", false},
		{"::127.0.0.1", false}, // IPv4-compatible
		{"::8.8.8.8", false},   // IPv4-compatible, deprecated whatever it carries
		{"::ffff:127.0.0.1", false},
		{"::ffff:10.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"64:ff9b::7f00:1", false},    // NAT64 of 127.0.0.1
		{"64:ff9b::a9fe:a9fe", false}, // NAT64 of 169.254.169.254
		{"64:ff9b:1::1", false},       // local-use translation
		{"100::1", false},             // discard
		{"2001:db8::1", false},
		{"2001:2::1", false},                   // benchmarking
		{"2001:10::1", false},                  // ORCHID
		{"2002:7f00:1::1", false},              // 6to4 of 127.0.0.1
		{"2002:c0a8:101::1", false},            // 6to4 of 192.168.1.1
		{"2001:0:5db8:d70e::80ff:fffe", false}, // Teredo, client 127.0.0.1
		{"2001:0:7f00:1::a247:28f1", false},    // Teredo, server 127.0.0.1
		{"2001:0:5db8:d70e::a247:28f1", true},  // Teredo, both public (93.184.215.14 / 93.184.215.14)
		{"3fff::1", false},
		{"5f00::1", false},
		{"fc00::1", false},
		{"fd00:ec2::254", false}, // AWS metadata
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"fec0::1", false},
		{"ff02::1", false},
		{"4000::1", false}, // outside global unicast
		// The machine's own addresses, whatever their range.
		{ownAddr, false},
		{"::ffff:" + ownAddr, false},
		{"64:ff9b::808:404", false},
		{"2a00:1450:4001:82b::1", false},
	}
	for _, c := range cases {
		ip := netip.MustParseAddr(c.addr)
		if got := p.AddrAllowed("", ip); got != c.want {
			t.Errorf("AddrAllowed(%s) = %v, want %v", c.addr, got, c.want)
		}
	}
	// Teredo client 93.184.215.14 is stored inverted: check the test data.
	if v4s, _ := unwrap(netip.MustParseAddr("2001:0:5db8:d70e::a247:28f1")); v4s[1] != netip.MustParseAddr("93.184.215.14") {
		t.Fatalf("teredo client = %v", v4s[1])
	}

	all := testPolicy(t, Options{AllowAll: true})
	for _, c := range cases {
		if !all.AddrAllowed("", netip.MustParseAddr(c.addr)) {
			t.Errorf("AllowAll refused %s", c.addr)
		}
	}
}

func TestAllowTargets(t *testing.T) {
	t.Parallel()
	p := testPolicy(t, Options{Allow: []string{"10.1.2.0/24", "192.168.7.7", "wiki.internal", "*.corp.example", " "}})
	cases := []struct {
		host, addr string
		want       bool
	}{
		{"", "10.1.2.3", true},
		{"", "10.1.3.1", false},
		{"", "192.168.7.7", true},
		{"", "::ffff:10.1.2.9", true},
		{"", "192.168.7.8", false},
		{"wiki.internal", "172.16.0.5", true},
		{"WIKI.internal.", "127.0.0.1", true},
		{"other.internal", "172.16.0.5", false},
		{"a.corp.example", "10.9.9.9", true},
		{"corp.example", "10.9.9.9", false},
		{"evilcorp.example", "10.9.9.9", false},
		{"", "127.0.0.1", false},
	}
	for _, c := range cases {
		if got := p.AddrAllowed(normalizeHost(c.host), netip.MustParseAddr(c.addr)); got != c.want {
			t.Errorf("AddrAllowed(%q, %s) = %v, want %v", c.host, c.addr, got, c.want)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "http://x", "a..b", "-a.b", "x y"} {
		if _, err := New(Options{Allow: []string{bad}}); err == nil {
			t.Errorf("New accepted allow entry %q", bad)
		}
	}
}

func TestCheckHost(t *testing.T) {
	t.Parallel()
	p := testPolicy(t, Options{Allow: []string{"dev.localhost"}})
	for host, blocked := range map[string]bool{
		"localhost": true, "LOCALHOST.": true, "a.b.localhost": true, "127.0.0.1": true, "[::1]": true,
		"dev.localhost": false, "example.com": false, "93.184.215.14": false,
	} {
		err := p.CheckHost(host, 0)
		if got := errors.Is(err, ErrBlocked); got != blocked {
			t.Errorf("CheckHost(%q) = %v, want blocked=%v", host, err, blocked)
		}
	}
}

// TestDialRefusesBeforeConnecting dials a listener on loopback through the
// policy, by address and by a name resolving to it, and checks that it
// never sees a connection, while the permitted one does.
func TestDialRefusesBeforeConnecting(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	p := testPolicy(t, Options{})
	d := &Dialer{Policy: p, Timeout: 2 * time.Second}
	ctx := context.Background()
	for _, addr := range []string{ln.Addr().String(), net.JoinHostPort("localhost", strconv.Itoa(port)), net.JoinHostPort("::ffff:127.0.0.1", strconv.Itoa(port))} {
		if _, err := d.DialContext(ctx, "tcp", addr); !errors.Is(err, ErrBlocked) {
			t.Errorf("dial %s: %v, want ErrBlocked", addr, err)
		}
	}
	// A name that fails to resolve fails closed.
	if _, err := d.DialContext(ctx, "tcp", "does-not-exist.invalid:80"); err == nil {
		t.Error("dial of an unresolvable name succeeded")
	}
	select {
	case <-accepted:
		t.Fatal("the listener saw a connection")
	case <-time.After(100 * time.Millisecond):
	}
	permitted := testPolicy(t, Options{Permit: func(ap netip.AddrPort) bool { return int(ap.Port()) == port }})
	c, err := (&Dialer{Policy: permitted}).DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	<-accepted
}

// TestReserve: a reserved port of the machine's own addresses is refused in
// every form even with AllowAll, Allow and Permit; other ports, and the
// same port elsewhere, are not.
func TestReserve(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]Options{
		"allow all": {AllowAll: true},
		"allow":     {Allow: []string{"127.0.0.0/8", "::/0", ownAddr, "0.0.0.0/0"}},
		"permit":    {Permit: func(netip.AddrPort) bool { return true }},
	} {
		p := testPolicy(t, opts)
		p.Reserve(9333)
		for _, c := range []struct {
			addr string
			port uint16
			want bool
		}{
			{"127.0.0.1", 9333, false},
			{"127.8.9.1", 9333, false},
			{"::1", 9333, false},
			{"::ffff:127.0.0.1", 9333, false},
			{"0.0.0.0", 9333, false},
			{"::", 9333, false},
			{"2002:7f00:1::", 9333, false}, // 6to4 wrapping 127.0.0.1
			{ownAddr, 9333, false},
			{"2a00:1450:4001:82b::1", 9333, false},
			{"127.0.0.1", 9334, true},
			{ownAddr, 80, true},
			{"93.184.215.14", 9333, true},
		} {
			err := p.check("", netip.AddrPortFrom(netip.MustParseAddr(c.addr), c.port))
			if got := err == nil; got != c.want {
				t.Errorf("%s: %s port %d: %v, want allowed=%v", name, c.addr, c.port, err, c.want)
			}
		}
	}
}

// TestDialFuncWrapsTheCallersSentinel: a refusal through DialFunc is both
// the caller's sentinel and ErrBlocked; an allowed dial is a plain dial.
func TestDialFuncWrapsTheCallersSentinel(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	mine := errors.New("mine: blocked")
	dial := (&Dialer{Policy: testPolicy(t, Options{}), Timeout: 2 * time.Second}).DialFunc(mine)
	if _, err := dial(t.Context(), "tcp", ln.Addr().String()); !errors.Is(err, mine) || !errors.Is(err, ErrBlocked) {
		t.Errorf("refused dial: %v, want both sentinels", err)
	}
	open := (&Dialer{Policy: testPolicy(t, Options{AllowAll: true}), Timeout: 2 * time.Second}).DialFunc(mine)
	c, err := open(t.Context(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("allowed dial: %v", err)
	}
	c.Close()
}
