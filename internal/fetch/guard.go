package fetch

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"syscall"
)

// blockedPrefixes lists the address ranges refused when private targets are
// not allowed, beyond what the netip predicates already cover.
const blockedPrefixes = "" +
	"0.0.0.0/8," + // "this network"
	"100.64.0.0/10," + // carrier-grade NAT
	"192.0.0.0/24," + // IETF protocol assignments
	"198.18.0.0/15," + // benchmarking
	"240.0.0.0/4," + // reserved, includes broadcast
	"fd00:ec2::254/128," + // AWS IMDS over IPv6 (also inside fc00::/7)
	"100::/64," + // discard-only
	"::/96," + // deprecated IPv4-compatible addresses (::127.0.0.1)
	"fec0::/10," + // deprecated site-local
	"2001:db8::/32" // documentation

// guard decides which dialled addresses are acceptable.
type guard struct {
	allowPrivate bool
	blocked      []netip.Prefix
	// permit, when set, is consulted first; tests use it to admit one
	// specific loopback server while the guard is otherwise active.
	permit func(netip.AddrPort) bool
}

func newGuard(allowPrivate bool) *guard {
	g := &guard{allowPrivate: allowPrivate}
	for _, s := range strings.Split(blockedPrefixes, ",") {
		g.blocked = append(g.blocked, netip.MustParsePrefix(s))
	}
	return g
}

// blockedError is returned by the dialer's Control hook; it unwraps to
// ErrBlocked.
type blockedError struct {
	addr netip.Addr
}

func (e *blockedError) Error() string {
	return fmt.Sprintf("address %s is not a public address", e.addr)
}

func (e *blockedError) Unwrap() error { return ErrBlocked }

// control is installed as net.Dialer.ControlContext: it runs after DNS
// resolution for every connection attempt, so redirects and DNS rebinding
// are covered.
func (g *guard) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: unparsable dial address %q", ErrBlocked, address)
	}
	if g.permit != nil && g.permit(ap) {
		return nil
	}
	if g.allowPrivate {
		return nil
	}
	if !g.publicAddr(ap.Addr()) {
		return &blockedError{addr: ap.Addr()}
	}
	return nil
}

// publicAddr reports whether ip is a globally routable unicast address.
func (g *guard) publicAddr(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	// NAT64 (64:ff9b::/96) embeds an IPv4 address: judge that one.
	if ip.Is6() {
		b := ip.As16()
		if b[0] == 0x00 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b && isZero(b[4:12]) {
			ip = netip.AddrFrom4([4]byte(b[12:16]))
		}
	}
	if !ip.IsValid() || ip.IsUnspecified() || ip.IsLoopback() || ip.IsPrivate() ||
		ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() ||
		ip.IsMulticast() {
		return false
	}
	for _, p := range g.blocked {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

func isZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
