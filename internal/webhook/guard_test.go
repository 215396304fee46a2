package webhook

import (
	"errors"
	"net/netip"
	"testing"
)

func TestDialGuard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr   string
		public bool
	}{
		{addr: "93.184.215.14:443", public: true},
		{addr: "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:443", public: true},
		{addr: "8.8.8.8:80", public: true},
		{addr: "127.0.0.1:80"},
		{addr: "127.9.9.9:80"},
		{addr: "[::1]:80"},
		{addr: "10.1.2.3:80"},
		{addr: "172.16.0.1:80"},
		{addr: "192.168.1.1:80"},
		{addr: "169.254.169.254:80"},    // cloud metadata
		{addr: "[fd00:ec2::254]:80"},    // AWS metadata over IPv6
		{addr: "100.100.100.200:80"},    // metadata in the CGNAT range
		{addr: "[fe80::1%eth0]:80"},     // link-local with zone
		{addr: "0.0.0.0:80"},            // unspecified
		{addr: "[::]:80"},               // unspecified
		{addr: "[::ffff:127.0.0.1]:80"}, // IPv4-mapped loopback
		{addr: "[::ffff:10.0.0.1]:80"},  // IPv4-mapped private
		{addr: "[64:ff9b::a00:1]:80"},   // NAT64 of 10.0.0.1
		{addr: "[64:ff9b::808:808]:80", public: true},
		{addr: "[2002:7f00:1::]:80"}, // 6to4 of 127.0.0.1
		{addr: "[2002:808:808::1]:80", public: true},
		{addr: "224.0.0.1:80"},       // multicast
		{addr: "255.255.255.255:80"}, // broadcast
		{addr: "198.18.0.1:80"},      // benchmarking
		{addr: "[2001:db8::1]:80"},   // documentation
		{addr: "not-an-address"},
	}
	g := newDialGuard()
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			t.Parallel()
			err := g.control(t.Context(), "tcp", tt.addr, nil)
			if tt.public {
				if err != nil {
					t.Errorf("control(%s) = %v, want allowed", tt.addr, err)
				}
				return
			}
			if !errors.Is(err, ErrBlocked) {
				t.Errorf("control(%s) = %v, want ErrBlocked", tt.addr, err)
			}
		})
	}
}

func TestNonPublicRangesParse(t *testing.T) {
	t.Parallel()
	for _, p := range nonPublicRanges() {
		if !p.IsValid() || p != p.Masked() {
			t.Errorf("range %v is not a canonical prefix", p)
		}
	}
	if !newDialGuard().public(netip.MustParseAddr("1.1.1.1")) {
		t.Error("1.1.1.1 should be public")
	}
}
