package netguard

import "net/netip"

// specialV4 lists the IPv4 ranges of the IANA special-purpose address
// registry that are not globally reachable (RFC 6890 and its updates), plus
// multicast and the reserved block. Ranges the registry marks globally
// reachable (AS112, AMT, the PCP and TURN anycast addresses) are left out.
var specialV4 = prefixes(
	"0.0.0.0/8",          // "this network"
	"10.0.0.0/8",         // private use
	"100.64.0.0/10",      // shared address space (CGNAT); some clouds' metadata
	"127.0.0.0/8",        // loopback
	"169.254.0.0/16",     // link local, cloud metadata (169.254.169.254)
	"172.16.0.0/12",      // private use
	"192.0.0.0/24",       // IETF protocol assignments
	"192.0.2.0/24",       // documentation (TEST-NET-1)
	"192.88.99.0/24",     // deprecated 6to4 relay anycast
	"192.168.0.0/16",     // private use
	"198.18.0.0/15",      // benchmarking
	"198.51.100.0/24",    // documentation (TEST-NET-2)
	"203.0.113.0/24",     // documentation (TEST-NET-3)
	"224.0.0.0/4",        // multicast
	"240.0.0.0/4",        // reserved
	"255.255.255.255/32", // limited broadcast
)

// specialV6 lists the IPv6 ranges inside global unicast (2000::/3) that are
// not globally reachable. Everything outside 2000::/3 is refused outright
// (loopback, unspecified, unique local fc00::/7 with AWS's fd00:ec2::254,
// link local, site local, multicast, discard 100::/64, the local-use
// translation prefix 64:ff9b:1::/48, SRv6 5f00::/16, IPv4-compatible ::/96),
// except the forms that embed an IPv4 address, which are judged by that
// address (see unwrap).
var specialV6 = prefixes(
	"2001::/23",     // IETF protocol assignments (Teredo 2001::/32 is unwrapped first)
	"2001:db8::/32", // documentation
	"3fff::/20",     // documentation
)

// globalUnicastV6 is the only IPv6 block allocated for global unicast.
var globalUnicastV6 = netip.MustParsePrefix("2000::/3")

// Forms that carry an IPv4 address.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052 well-known prefix
	sixToFour = netip.MustParsePrefix("2002::/16")    // 6to4: 2002:AABB:CCDD::/48
	teredo    = netip.MustParsePrefix("2001::/32")    // server at bits 32-63, client at 96-127 inverted
)

func prefixes(cidrs ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(cidrs))
	for i, c := range cidrs {
		out[i] = netip.MustParsePrefix(c)
	}
	return out
}

// unwrap returns the IPv4 addresses an IPv6 address stands for, if any:
// IPv4-mapped (::ffff:a.b.c.d), NAT64 (64:ff9b::a.b.c.d), 6to4
// (2002:aabb:ccdd::) and Teredo (server and client addresses). ok is false
// for any other address.
func unwrap(ip netip.Addr) (v4 []netip.Addr, ok bool) {
	if ip.Is4In6() {
		return []netip.Addr{ip.Unmap()}, true
	}
	if !ip.Is6() {
		return nil, false
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return []netip.Addr{netip.AddrFrom4([4]byte(b[12:16]))}, true
	case sixToFour.Contains(ip):
		return []netip.Addr{netip.AddrFrom4([4]byte(b[2:6]))}, true
	case teredo.Contains(ip):
		server := netip.AddrFrom4([4]byte(b[4:8]))
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return []netip.Addr{server, client}, true
	}
	return nil, false
}

// globallyReachable reports whether ip is a globally reachable unicast
// address by the special-purpose registries alone (the machine's own
// addresses are judged separately).
func globallyReachable(ip netip.Addr) bool {
	ip = ip.WithZone("")
	if !ip.IsValid() {
		return false
	}
	if v4s, ok := unwrap(ip); ok {
		for _, a := range v4s {
			if !globallyReachable(a) {
				return false
			}
		}
		// A 6to4 or Teredo address is itself routed through relays; the
		// NAT64 and mapped forms are the IPv4 address.
		return true
	}
	if ip.Is4() {
		for _, p := range specialV4 {
			if p.Contains(ip) {
				return false
			}
		}
		return true
	}
	if !globalUnicastV6.Contains(ip) {
		return false
	}
	for _, p := range specialV6 {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}
