package pii

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
)

// labelled is the evaluation set: each text with the spans it holds
// ("ENTITY:text"). Positives come in the formats seen on real pages;
// negatives are look-alikes (order numbers, dates, versions, hex colours,
// prices, ISBNs, coordinates, hashes).
var labelled = []struct {
	text string
	want []string
}{
	// EMAIL
	{"Contact jane.doe@example.com for details.", []string{"EMAIL:jane.doe@example.com"}},
	{"Write to <a href=\"mailto:sales+eu@shop.example.co.uk\">us</a>", []string{"EMAIL:sales+eu@shop.example.co.uk"}},
	{"Press: PRESS@Example.ORG.", []string{"EMAIL:PRESS@Example.ORG"}},
	{"![logo](https://cdn.example/logo@2x.png)", nil},
	{"Follow @example on social media", nil},
	{"user at example dot com", nil},
	// PHONE
	{"Call +1 (415) 555-0132 today", []string{"PHONE:+1 (415) 555-0132"}},
	{"Tel. +49 30 12345678", []string{"PHONE:+49 30 12345678"}},
	{"UK office: +44 20 7946 0958.", []string{"PHONE:+44 20 7946 0958"}},
	{"Hotline (212) 555-0198", []string{"PHONE:(212) 555-0198"}},
	{"Fax 415-555-0147", []string{"PHONE:415-555-0147"}},
	{"Ruf an: 030 1234567", []string{"PHONE:030 1234567"}},
	{"Mobil 0171/2345678", []string{"PHONE:0171/2345678"}},
	{"+33 1 42 68 53 00 (Paris)", []string{"PHONE:+33 1 42 68 53 00"}},
	{"+81-3-1234-5678", []string{"PHONE:+81-3-1234-5678"}},
	{"Order #1048576233 shipped", nil},
	{"Published 2024-05-12, updated 12.05.2024", nil},
	{"Version 10.2.3 and build 2024.05.12", nil},
	{"ISBN 978-3-16-148410-0", nil},
	{"Dimensions: 120 x 80 x 45 cm", nil},
	{"Price: $1,299.00 or 3 x 433.00", nil},
	{"Score 3-2, 2-1 in the 90th minute", nil},
	// FINANCIAL: cards
	{"Card: 4111 1111 1111 1111 exp 12/27", []string{"FINANCIAL:4111 1111 1111 1111"}},
	{"MC 5555-5555-5555-4444", []string{"FINANCIAL:5555-5555-5555-4444"}},
	{"Amex 378282246310005", []string{"FINANCIAL:378282246310005"}},
	{"Ref 4111 1111 1111 1112 (fails Luhn)", nil},
	{"Tracking 1Z999AA10123456784", nil},
	{"EAN 4006381333931", nil},
	// FINANCIAL: IBAN
	{"IBAN: DE89 3704 0044 0532 0130 00", []string{"FINANCIAL:DE89 3704 0044 0532 0130 00"}},
	{"Pay to GB29NWBK60161331926819 by Friday", []string{"FINANCIAL:GB29NWBK60161331926819"}},
	{"FR14 2004 1010 0505 0001 3M02 606", []string{"FINANCIAL:FR14 2004 1010 0505 0001 3M02 606"}},
	{"Model DE12 3456 7890 1234 5678 90 (bad checksum)", nil},
	// FINANCIAL: SSN
	{"SSN 123-45-6789 on file", []string{"FINANCIAL:123-45-6789"}},
	{"Part no. 000-12-3456 and 666-12-3456", nil},
	// LOCATION: IP addresses
	{"Client 203.0.113.42 connected", []string{"LOCATION:203.0.113.42"}},
	{"Server at 2001:db8::8a2e:370:7334 answered", []string{"LOCATION:2001:db8::8a2e:370:7334"}},
	{"Upgrade to v1.2.3.4 now", nil},
	{"Meeting at 12:30:45 sharp", nil},
	{"Colour #ff00aa and #FFF", nil},
	{"Coordinates 52.5200, 13.4050", nil},
	// SECRET
	{"export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", []string{"SECRET:AKIAIOSFODNN7EXAMPLE"}},
	{"token: ghp_1234567890abcdefghijABCDEFGHIJ123456", []string{"SECRET:ghp_1234567890abcdefghijABCDEFGHIJ123456"}},
	{"stripe sk_live_4eC39HqLyjWDarjtT1zdp7dc", []string{"SECRET:sk_live_4eC39HqLyjWDarjtT1zdp7dc"}},
	{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U", []string{"SECRET:eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"}},
	{"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----", []string{"SECRET:-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----"}},
	{`api_key = "q8Zx2Lm9Tr4Vb7Nc1Pw6"`, []string{"SECRET:q8Zx2Lm9Tr4Vb7Nc1Pw6"}},
	{"Google AIzaSyA1234567890abcdefghijklmnopqrstuv", []string{"SECRET:AIzaSyA1234567890abcdefghijklmnopqrstuv"}},
	{"commit 3f786850e387550fdab836ed7e6dc881de23001b", nil},
	{"password: enter your password here", nil},
	{"the token is valid for a session of twenty minutes", nil},
	{"sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", nil},
}

var entities = []string{Email, Phone, Financial, Location, Secret}

// TestLabelledSet measures precision and recall per entity on the
// labelled set and requires both to be 1 (the set is the regression
// guard; BENCHMARKS.md records it).
func TestLabelledSet(t *testing.T) {
	t.Parallel()
	type count struct{ tp, fp, fn int }
	counts := map[string]*count{}
	for _, e := range entities {
		counts[e] = &count{}
	}
	for _, c := range labelled {
		var got []string
		for _, s := range Find(c.text, Options{}) {
			got = append(got, s.Entity+":"+c.text[s.Start:s.End])
		}
		for _, g := range got {
			e := g[:strings.IndexByte(g, ':')]
			if slices.Contains(c.want, g) {
				counts[e].tp++
			} else {
				counts[e].fp++
				t.Errorf("false positive %q in %q", g, c.text)
			}
		}
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				counts[w[:strings.IndexByte(w, ':')]].fn++
				t.Errorf("missed %q in %q (found %q)", w, c.text, got)
			}
		}
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("| entity | positives | precision | recall |\n")
	for _, k := range keys {
		c := counts[k]
		p, r := ratio(c.tp, c.tp+c.fp), ratio(c.tp, c.tp+c.fn)
		fmt.Fprintf(&b, "| %s | %d | %.2f | %.2f |\n", k, c.tp+c.fn, p, r)
	}
	t.Logf("%d texts\n%s", len(labelled), b.String())
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 1
	}
	return float64(a) / float64(b)
}

func TestRedactStyles(t *testing.T) {
	t.Parallel()
	in := "Mail jane@example.com or call +44 20 7946 0958."
	tests := []struct {
		o    Options
		want string
	}{
		{Options{}, "Mail <EMAIL> or call <PHONE>."},
		{Options{Style: StyleMask}, "Mail **************** or call ****************."},
		{Options{Style: StyleRemove}, "Mail  or call ."},
		{Options{Entities: []string{Phone}}, "Mail jane@example.com or call <PHONE>."},
		{Options{HTML: true}, "Mail &lt;EMAIL&gt; or call &lt;PHONE&gt;."},
	}
	for _, tt := range tests {
		if got, _ := Redact(in, tt.o); got != tt.want {
			t.Errorf("Redact(%+v) = %q, want %q", tt.o, got, tt.want)
		}
	}
	// Mask counts characters, not bytes.
	if got, n := Redact("Kontakt: jürgen@bäcker.de", Options{Style: StyleMask}); n != 1 || strings.Contains(got, "@") {
		t.Errorf("mask of a non-ASCII address: %q (%d)", got, n)
	}
}

func TestAggressivePhones(t *testing.T) {
	t.Parallel()
	in := "Call 4155550132 now"
	if got, _ := Redact(in, Options{}); got != in {
		t.Errorf("default mode took a bare digit run: %q", got)
	}
	if got, _ := Redact(in, Options{Aggressive: true}); got != "Call <PHONE> now" {
		t.Errorf("aggressive: %q", got)
	}
}

func FuzzRedact(f *testing.F) {
	for _, c := range labelled {
		f.Add(c.text)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, n := Redact(s, Options{Style: StyleRemove})
		if n == 0 && out != s || len(out) > len(s) {
			t.Fatalf("Redact(%q) = %q, %d", s, out, n)
		}
	})
}
