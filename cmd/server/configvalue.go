package main

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/netguard"
	"github.com/firegate/firegate/internal/proxypool"
)

// value is the destination and parser of one setting: set parses a
// variable's text (never empty: an unset variable keeps the default) into
// the Config field that target points to. Its error is the text after
// "NAME: " (one per line when joined).
type value interface {
	set(v string) error
	target() any
}

// intBounds are the integers a setting accepts, and what its error says
// of the others (after the quoted value).
type intBounds struct {
	min, max int64
	says     string
}

// positive is 1 and up.
func positive() intBounds { return intBounds{1, math.MaxInt64, "must be a positive integer"} }

// nonNegative is 0 and up; zero says what 0 means.
func nonNegative(zero string) intBounds {
	return intBounds{0, math.MaxInt64, "must be a non-negative integer (" + zero + ")"}
}

// atLeast is min and up.
func atLeast(min int64) intBounds {
	return intBounds{min, math.MaxInt64, fmt.Sprintf("must be an integer of at least %d", min)}
}

// upTo caps b at max, its message unchanged.
func (b intBounds) upTo(max int64) intBounds { b.max = max; return b }

// intValue is an int or int64 setting within bounds.
type intValue[T int | int64] struct {
	dst *T
	b   intBounds
}

func integer[T int | int64](dst *T, b intBounds) value { return intValue[T]{dst, b} }

func (iv intValue[T]) target() any { return iv.dst }

func (iv intValue[T]) set(v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < iv.b.min || n > iv.b.max || int64(T(n)) != n {
		return fmt.Errorf("%q %s", v, iv.b.says)
	}
	*iv.dst = T(n)
	return nil
}

// durationValue is a duration setting: positive (above zero) or not
// negative; like is the example its error gives.
type durationValue struct {
	dst      *time.Duration
	positive bool
	like     string
}

// timeout is a duration above zero.
func timeout(dst *time.Duration, like string) value { return durationValue{dst, true, like} }

// duration is a duration of zero or more.
func duration(dst *time.Duration, like string) value { return durationValue{dst, false, like} }

func (dv durationValue) target() any { return dv.dst }

func (dv durationValue) set(v string) error {
	d, err := time.ParseDuration(v)
	switch {
	case dv.positive && (err != nil || d <= 0):
		return fmt.Errorf("%q is not a positive duration like %s", v, dv.like)
	case err != nil || d < 0:
		return fmt.Errorf("%q is not a duration like %s", v, dv.like)
	}
	*dv.dst = d
	return nil
}

// boolValue is true or false as strconv.ParseBool reads them.
type boolValue struct{ dst *bool }

func boolean(dst *bool) value { return boolValue{dst} }

func (bv boolValue) target() any { return bv.dst }

func (bv boolValue) set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("%q is not a boolean", v)
	}
	*bv.dst = b
	return nil
}

// enumValue is one of a few words, in any case.
type enumValue struct {
	dst   *string
	words []string
}

func oneOf(dst *string, words ...string) value { return enumValue{dst, words} }

func (ev enumValue) target() any { return ev.dst }

func (ev enumValue) set(v string) error {
	w := strings.ToLower(strings.TrimSpace(v))
	if !slices.Contains(ev.words, w) {
		return fmt.Errorf("%q must be %s", w, orList(ev.words))
	}
	*ev.dst = w
	return nil
}

// orList is "a, b or c".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// textValue is a string, trimmed as trim says (nil: as given), then
// checked by check (nil: anything) unless the trimmed text is empty. The
// text is kept even when the check fails, so that the rules between
// settings still see it was set (OPENAI_BASE_URL wants MODEL_NAME).
type textValue struct {
	dst   *string
	trim  func(string) string
	check func(string) error
}

// text is a string as given.
func text(dst *string) textValue { return textValue{dst: dst} }

// trimmed is a string without surrounding space (paths, URLs).
func trimmed(dst *string) textValue { return textValue{dst: dst, trim: strings.TrimSpace} }

// baseURL is a URL without its trailing slashes.
func baseURL(dst *string) textValue {
	return textValue{dst: dst, trim: func(s string) string { return strings.TrimRight(s, "/") }}
}

// checked is tv with check run on every value.
func (tv textValue) checked(check func(string) error) textValue { tv.check = check; return tv }

func (tv textValue) target() any { return tv.dst }

func (tv textValue) set(v string) error {
	if tv.trim != nil {
		v = tv.trim(v)
	}
	*tv.dst = v // kept when the check fails too, for the rules between settings
	if v != "" && tv.check != nil {
		return tv.check(v)
	}
	return nil
}

// hasPrefix is a check that v starts with one of prefixes; says is its error.
func hasPrefix(says string, prefixes ...string) func(string) error {
	return func(v string) error {
		for _, p := range prefixes {
			if strings.HasPrefix(v, p) {
				return nil
			}
		}
		return errors.New(says)
	}
}

// minLen is a check that v has at least n bytes; says is its error.
func minLen(n int, says string) func(string) error {
	return func(v string) error {
		if len(v) < n {
			return errors.New(says)
		}
		return nil
	}
}

// custom is a setting whose parser is its own: set parses into dst.
type custom struct {
	dst any
	fn  func(v string) error
}

func (cv custom) target() any        { return cv.dst }
func (cv custom) set(v string) error { return cv.fn(v) }

// logLevel is debug, info, warn or error (slog's names, offsets allowed).
func logLevel(dst *slog.Level) value {
	return custom{dst, func(v string) error {
		var l slog.Level
		if err := l.UnmarshalText([]byte(v)); err != nil {
			return fmt.Errorf("%q is not one of debug, info, warn, error", v)
		}
		*dst = l
		return nil
	}}
}

// commaList splits v at commas, trimming each entry and dropping empty ones.
func commaList(v string) []string {
	var out []string
	for e := range strings.SplitSeq(v, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// targets is a list of CIDRs and host names netguard admits.
func targets(dst *[]string) value {
	return custom{dst, func(v string) error {
		*dst = commaList(v)
		if _, err := netguard.New(netguard.Options{Allow: *dst}); err != nil {
			return err
		}
		return nil
	}}
}

// prefixes is a list of IP addresses and CIDRs, an address standing for
// itself alone; every bad entry is an error of its own.
func prefixes(dst *[]netip.Prefix) value {
	return custom{dst, func(v string) error {
		var errs []error
		for _, f := range commaList(v) {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				a, aerr := netip.ParseAddr(f)
				if aerr != nil {
					errs = append(errs, fmt.Errorf("%q is not an IP address or CIDR", f))
					continue
				}
				p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
			}
			*dst = append(*dst, p.Masked())
		}
		return errors.Join(errs...)
	}}
}

// words is a list of some of allowed, each once, in the order given.
func words(dst *[]string, allowed ...string) value {
	return custom{dst, func(v string) error {
		var errs []error
		for _, f := range commaList(v) {
			switch {
			case !slices.Contains(allowed, f):
				errs = append(errs, fmt.Errorf("%q is not one of %s", f, strings.Join(allowed, ", ")))
			case !slices.Contains(*dst, f):
				*dst = append(*dst, f)
			}
		}
		return errors.Join(errs...)
	}}
}

// proxies is a pool of outbound proxies (see proxypool.Parse); only
// spaces is no pool.
func proxies(dst **proxypool.Pool) value {
	return custom{dst, func(v string) error {
		if strings.TrimSpace(v) == "" {
			return nil
		}
		pool, err := proxypool.Parse(v, proxypool.Options{})
		*dst = pool
		return err
	}}
}
