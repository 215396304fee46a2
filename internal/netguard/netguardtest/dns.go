// Package netguardtest runs a scripted DNS server on loopback for tests of
// the network policy: each name answers from a list of addresses in turn
// (a rebinding name answers a different address on each lookup), or fails.
package netguardtest

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// DNS is a scripted DNS server on 127.0.0.1 (UDP).
type DNS struct {
	conn net.PacketConn

	mu      sync.Mutex
	answers map[string][]netip.Addr // fqdn -> addresses answered in turn
	next    map[string]int
	lookups map[string]int
}

// NewDNS starts a DNS server for the test; it stops when the test ends.
// Names not set with Answer fail with NXDOMAIN.
func NewDNS(tb testing.TB) *DNS {
	tb.Helper()
	conn, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	d := &DNS{conn: conn, answers: map[string][]netip.Addr{}, next: map[string]int{}, lookups: map[string]int{}}
	go d.serve()
	tb.Cleanup(func() { conn.Close() })
	return d
}

// Answer makes name answer addrs[0] to the first A/AAAA lookup, addrs[1]
// to the second, and so on round the list.
func (d *DNS) Answer(name string, addrs ...netip.Addr) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.answers[fqdn(name)] = addrs
}

// Lookups returns how many questions name got.
func (d *DNS) Lookups(name string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lookups[fqdn(name)]
}

// Resolver returns a resolver that asks only this server.
func (d *DNS) Resolver() *net.Resolver {
	addr := d.conn.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var nd net.Dialer
		return nd.DialContext(ctx, "udp", addr)
	}}
}

func fqdn(name string) string {
	name = strings.ToLower(name)
	if !strings.HasSuffix(name, ".") {
		name += "."
	}
	return name
}

func (d *DNS) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := d.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp, ok := d.answer(buf[:n]); ok {
			_, _ = d.conn.WriteTo(resp, from)
		}
	}
}

// answer builds the response to one query. One address is chosen per
// query name and turn; A questions get it when it is IPv4, AAAA when IPv6,
// else an empty answer.
func (d *DNS) answer(query []byte) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, false
	}
	q, err := p.Question()
	if err != nil {
		return nil, false
	}
	name := strings.ToLower(q.Name.String())
	d.mu.Lock()
	list, known := d.answers[name]
	var addr netip.Addr
	if known && len(list) > 0 {
		d.lookups[name]++
		// A and AAAA of one lookup come in pairs: advance on A only.
		i := d.next[name] % len(list)
		addr = list[i]
		if q.Type == dnsmessage.TypeA {
			d.next[name]++
		}
	} else {
		d.lookups[name]++
	}
	d.mu.Unlock()

	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	_ = b.StartQuestions()
	_ = b.Question(q)
	_ = b.StartAnswers()
	rhdr := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}
	switch {
	case q.Type == dnsmessage.TypeA && addr.Is4():
		_ = b.AResource(rhdr, dnsmessage.AResource{A: addr.As4()})
	case q.Type == dnsmessage.TypeAAAA && addr.Is6() && !addr.Is4In6():
		_ = b.AAAAResource(rhdr, dnsmessage.AAAAResource{AAAA: addr.As16()})
	}
	out, err := b.Finish()
	if err != nil {
		return nil, false
	}
	return out, true
}
