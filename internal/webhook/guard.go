package webhook

import (
	"context"
	"fmt"
	"net/netip"
	"syscall"
)

// nonPublicRanges lists ranges refused beyond those the netip predicates
// (loopback, private, link-local, multicast, unspecified) already cover.
func nonPublicRanges() []netip.Prefix {
	cidrs := []string{
		"0.0.0.0/8",       // "this network"
		"100.64.0.0/10",   // shared address space (CGNAT); some cloud metadata
		"192.0.0.0/24",    // IETF protocol assignments
		"192.0.2.0/24",    // documentation
		"198.18.0.0/15",   // benchmarking
		"198.51.100.0/24", // documentation
		"203.0.113.0/24",  // documentation
		"240.0.0.0/4",     // reserved and broadcast
		"::/96",           // IPv4-compatible (deprecated)
		"100::/64",        // discard
		"2001:db8::/32",   // documentation
		"fec0::/10",       // site-local (deprecated)
	}
	out := make([]netip.Prefix, len(cidrs))
	for i, c := range cidrs {
		out[i] = netip.MustParsePrefix(c)
	}
	return out
}

// dialGuard refuses connections to non-public addresses. Its control method
// runs as net.Dialer.ControlContext, after name resolution and for every
// address tried, so DNS answers pointing inside the network are caught.
type dialGuard struct {
	ranges []netip.Prefix
}

func newDialGuard() *dialGuard { return &dialGuard{ranges: nonPublicRanges()} }

// blockedError unwraps to ErrBlocked.
type blockedError struct{ addr string }

func (e *blockedError) Error() string {
	return fmt.Sprintf("%s is not a public address", e.addr)
}

func (e *blockedError) Unwrap() error { return ErrBlocked }

func (g *dialGuard) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &blockedError{addr: address}
	}
	if !g.public(ap.Addr()) {
		return &blockedError{addr: ap.Addr().String()}
	}
	return nil
}

// public reports whether ip is a globally reachable unicast address.
func (g *dialGuard) public(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	if ip.Is6() {
		b := ip.As16()
		switch {
		case b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && allZero(b[4:12]):
			// NAT64 64:ff9b::/96: judge the embedded IPv4 address.
			ip = netip.AddrFrom4([4]byte(b[12:16]))
		case b[0] == 0x20 && b[1] == 0x02:
			// 6to4 2002::/16: the embedded IPv4 address must be public too.
			if !g.public(netip.AddrFrom4([4]byte(b[2:6]))) {
				return false
			}
		}
	}
	if !ip.IsValid() || ip.IsUnspecified() || ip.IsLoopback() || ip.IsPrivate() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() {
		return false
	}
	for _, p := range g.ranges {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
