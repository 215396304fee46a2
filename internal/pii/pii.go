// Package pii finds and redacts personal and secret data in text without a
// language model: e-mail addresses, phone numbers, payment card numbers
// (Luhn checked), IBANs (mod-97 checked), US social security numbers, IP
// addresses, and secrets (provider API keys and tokens, JWTs, private key
// blocks, high-entropy values after key words).
//
// Each finding belongs to one of the redactPII entity kinds: EMAIL, PHONE,
// FINANCIAL (cards, IBANs, SSNs), LOCATION (IP addresses) and SECRET.
// PERSON and other LOCATION text need a model and are not found here.
package pii

import (
	"slices"
	"strings"
)

// Entity kinds.
const (
	Email     = "EMAIL"
	Phone     = "PHONE"
	Financial = "FINANCIAL"
	Location  = "LOCATION"
	Secret    = "SECRET"
	Person    = "PERSON"
)

// Replacement styles.
const (
	StyleTag    = "tag"    // <EMAIL>
	StyleMask   = "mask"   // one * per character
	StyleRemove = "remove" // the span is deleted
)

// Options selects what to redact and how.
type Options struct {
	// Entities are the kinds to redact; empty means all.
	Entities []string
	// Style is tag (default), mask or remove.
	Style string
	// Aggressive also takes phone numbers written as bare digit runs
	// (10 to 15 digits), which the default leaves alone because order
	// numbers look the same.
	Aggressive bool
	// HTML escapes the tag placeholder (&lt;EMAIL&gt;) so it stays text in
	// an HTML document.
	HTML bool
}

// Span is one finding: text[Start:End] is of kind Entity.
type Span struct {
	Start, End int
	Entity     string
}

// Find returns the non-overlapping findings in text in order. Where two
// detectors overlap, the earlier, then the longer, span wins.
func Find(text string, o Options) []Span {
	want := func(e string) bool { return len(o.Entities) == 0 || slices.Contains(o.Entities, e) }
	var all []Span
	if want(Secret) {
		all = append(all, findSecrets(text)...)
	}
	if want(Email) {
		all = append(all, findEmails(text)...)
	}
	// Everything below has digits: its regexps run only around them.
	var ws [][2]int
	if want(Financial) || want(Location) || want(Phone) {
		ws = windows(text, isDigit, 3, 48)
	}
	if want(Financial) {
		all = append(all, findCards(text, ws)...)
		all = append(all, findIBANs(text, ws)...)
		all = append(all, findSSNs(text, ws)...)
	}
	if want(Location) {
		all = append(all, findIPs(text, ws)...)
	}
	if want(Phone) {
		all = append(all, findPhones(text, ws, o.Aggressive)...)
	}
	slices.SortStableFunc(all, func(a, b Span) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return (b.End - b.Start) - (a.End - a.Start)
	})
	out := all[:0]
	end := -1
	for _, s := range all {
		if s.Start >= end {
			out = append(out, s)
			end = s.End
		}
	}
	return out
}

// Redact returns text with every finding replaced as o.Style says, and
// the number of findings.
func Redact(text string, o Options) (string, int) {
	spans := Find(text, o)
	if len(spans) == 0 {
		return text, 0
	}
	var b strings.Builder
	b.Grow(len(text))
	last := 0
	for _, s := range spans {
		b.WriteString(text[last:s.Start])
		switch o.Style {
		case StyleMask:
			for range text[s.Start:s.End] { // one per character, not byte
				b.WriteByte('*')
			}
		case StyleRemove:
		default:
			if o.HTML {
				b.WriteString("&lt;" + s.Entity + "&gt;")
			} else {
				b.WriteString("<" + s.Entity + ">")
			}
		}
		last = s.End
	}
	b.WriteString(text[last:])
	return b.String(), len(spans)
}
