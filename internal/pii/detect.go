package pii

import (
	"math"
	"net/netip"
	"regexp"
	"strings"
)

// wordByte reports whether c continues a word (so a match glued to it is
// part of something larger).
func wordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// bounded reports whether text[i:j] is not glued to word characters.
func bounded(text string, i, j int) bool {
	return (i == 0 || !wordByte(text[i-1])) && (j == len(text) || !wordByte(text[j]))
}

func spans(re *regexp.Regexp, text, entity string, ok func(m string) bool) []Span {
	var out []Span
	for _, loc := range re.FindAllStringIndex(text, -1) {
		if bounded(text, loc[0], loc[1]) && (ok == nil || ok(text[loc[0]:loc[1]])) {
			out = append(out, Span{loc[0], loc[1], entity})
		}
	}
	return out
}

var emailRE = regexp.MustCompile(`[\p{L}\p{N}][\p{L}\p{N}._%+-]*@[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?)*\.\p{L}{2,24}`)

// fileExts are "top-level domains" that are really file names
// (logo@2x.png).
var fileExts = map[string]bool{"png": true, "jpg": true, "jpeg": true, "gif": true, "svg": true, "webp": true, "avif": true, "css": true, "js": true}

func findEmails(text string) []Span {
	var out []Span
	for _, w := range windows(text, func(c byte) bool { return c == '@' }, 64, 255) {
		for _, sp := range spans(emailRE, text[w[0]:w[1]], Email, func(m string) bool {
			tld := strings.ToLower(m[strings.LastIndexByte(m, '.')+1:])
			return !fileExts[tld]
		}) {
			sp.Start, sp.End = sp.Start+w[0], sp.End+w[0]
			if bounded(text, sp.Start, sp.End) {
				out = append(out, sp)
			}
		}
	}
	return out
}

// inWindows runs re over each window and returns the bounded matches ok
// accepts, in text's offsets.
func inWindows(text string, ws [][2]int, re *regexp.Regexp, entity string, ok func(string) bool) []Span {
	var out []Span
	for _, w := range ws {
		for _, loc := range re.FindAllStringIndex(text[w[0]:w[1]], -1) {
			i, j := loc[0]+w[0], loc[1]+w[0]
			if bounded(text, i, j) && (ok == nil || ok(text[i:j])) {
				out = append(out, Span{i, j, entity})
			}
		}
	}
	return out
}

// locs returns re's matches inside the windows, in text's offsets.
func locs(text string, ws [][2]int, re *regexp.Regexp) [][2]int {
	var out [][2]int
	for _, w := range ws {
		for _, loc := range re.FindAllStringIndex(text[w[0]:w[1]], -1) {
			out = append(out, [2]int{loc[0] + w[0], loc[1] + w[0]})
		}
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// windows returns merged byte ranges of text around each byte that hit
// accepts, reaching before bytes back and after bytes forward (cut at
// white space so a window never starts mid-word by more than a word).
// Detectors run their regexps only there instead of over a whole page.
func windows(text string, hit func(byte) bool, before, after int) [][2]int {
	var out [][2]int
	for i := 0; i < len(text); i++ {
		if !hit(text[i]) {
			continue
		}
		lo, hi := max(0, i-before), min(len(text), i+after)
		for lo > 0 && lo < i && text[lo-1] != ' ' && text[lo-1] != '\n' && text[lo-1] != '\t' {
			lo-- // widen to the start of a word
			if i-lo > 2*before {
				break
			}
		}
		if n := len(out); n > 0 && lo <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], hi)
		} else {
			out = append(out, [2]int{lo, hi})
		}
	}
	return out
}

var (
	// phoneIntl: +CC then groups separated by space, dot, dash or
	// parentheses.
	phoneIntl = regexp.MustCompile(`\+\d{1,3}(?:[ .\-]?\(\d{1,4}\))?(?:[ .\-]?\d{1,5}){2,6}`)
	// phoneNANP: (555) 123-4567, 555-123-4567, 555.123.4567.
	phoneNANP = regexp.MustCompile(`(?:\(\d{3}\) ?|\d{3}[.\-])\d{3}[.\-]\d{4}`)
	// phoneTrunk: national numbers with a trunk 0 and separators:
	// 030 1234567, 020 7946 0958, 06-12345678, 0171/1234567.
	phoneTrunk = regexp.MustCompile(`\(?0[1-9]\d{0,3}\)?[ /\-]\d{2,8}(?:[ \-]\d{2,8}){0,3}`)
	// phoneBare: 10 to 15 digits in a row (aggressive mode only).
	phoneBare = regexp.MustCompile(`\d{10,15}`)
)

func digits(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func findPhones(text string, ws [][2]int, aggressive bool) []Span {
	var out []Span
	count := func(lo, hi int) func(string) bool {
		return func(m string) bool {
			n := len(digits(m))
			return n >= lo && n <= hi
		}
	}
	// A leading "+" or "(" is no word character, so spans checks the
	// boundary after it; check the one before it too.
	for _, loc := range locs(text, ws, phoneIntl) {
		m := text[loc[0]:loc[1]]
		if (loc[0] == 0 || !wordByte(text[loc[0]-1])) && (loc[1] == len(text) || !wordByte(text[loc[1]])) && count(8, 15)(m) {
			out = append(out, Span{loc[0], loc[1], Phone})
		}
	}
	out = append(out, inWindows(text, ws, phoneNANP, Phone, func(m string) bool { return m[0] != '0' && m[0] != '1' || m[0] == '(' })...)
	for _, loc := range locs(text, ws, phoneTrunk) {
		m := text[loc[0]:loc[1]]
		if (loc[0] == 0 || !wordByte(text[loc[0]-1]) && text[loc[0]-1] != '+' && text[loc[0]-1] != '.') && (loc[1] == len(text) || !wordByte(text[loc[1]])) && count(9, 13)(m) {
			out = append(out, Span{loc[0], loc[1], Phone})
		}
	}
	if aggressive {
		out = append(out, inWindows(text, ws, phoneBare, Phone, nil)...)
	}
	return out
}

// cardRE: 13 to 19 digits, optionally grouped by spaces or dashes.
var cardRE = regexp.MustCompile(`\d(?:[ \-]?\d){12,18}`)

func findCards(text string, ws [][2]int) []Span {
	return inWindows(text, ws, cardRE, Financial, func(m string) bool {
		d := digits(m)
		return cardPrefix(d) && luhn(d) && strings.Trim(d, d[:1]) != ""
	})
}

// cardPrefix reports whether d starts like a card of a major network.
func cardPrefix(d string) bool {
	p2 := atoi(d[:2])
	p4 := atoi(d[:4])
	switch {
	case d[0] == '4': // Visa
		return len(d) == 13 || len(d) == 16 || len(d) == 19
	case p2 >= 51 && p2 <= 55, p4 >= 2221 && p4 <= 2720: // Mastercard
		return len(d) == 16
	case p2 == 34 || p2 == 37: // Amex
		return len(d) == 15
	case strings.HasPrefix(d, "6011"), p2 == 65, strings.HasPrefix(d, "64"): // Discover
		return len(d) >= 16
	case p2 == 35: // JCB
		return len(d) >= 16
	case p2 == 36 || p2 == 38 || p2 == 30: // Diners
		return len(d) >= 14
	case p2 == 62: // UnionPay
		return len(d) >= 16
	}
	return false
}

func atoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// luhn reports whether the digit string passes the Luhn check.
func luhn(d string) bool {
	sum, double := 0, false
	for i := len(d) - 1; i >= 0; i-- {
		n := int(d[i] - '0')
		if double {
			n *= 2
			if n > 9 {
				n -= 9
			}
		}
		sum += n
		double = !double
	}
	return sum%10 == 0
}

// ibanRE: country, check digits, then 11 to 30 alphanumerics in groups of
// four or run together.
var ibanRE = regexp.MustCompile(`[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,4})?`)

// ibanLen holds the IBAN length of common countries; others take 15..34.
var ibanLen = map[string]int{"AD": 24, "AT": 20, "BE": 16, "CH": 21, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "EE": 20,
	"ES": 24, "FI": 18, "FR": 27, "GB": 22, "GR": 27, "HR": 21, "HU": 28, "IE": 22, "IS": 26, "IT": 27, "LI": 21,
	"LT": 20, "LU": 20, "LV": 21, "MC": 27, "MT": 31, "NL": 18, "NO": 15, "PL": 28, "PT": 25, "RO": 24, "SE": 24,
	"SI": 19, "SK": 24, "SM": 27, "TR": 26, "SA": 24, "AE": 23, "IL": 23, "BR": 29}

func findIBANs(text string, ws [][2]int) []Span {
	var out []Span
	for _, loc := range locs(text, ws, ibanRE) {
		m := text[loc[0]:loc[1]]
		// A trailing short group may have eaten the next word's start:
		// try the whole match, then without its last group.
		for _, cand := range []string{m, strings.TrimRight(m[:max(strings.LastIndexByte(m, ' '), 0)], " ")} {
			if cand != "" && bounded(text, loc[0], loc[0]+len(cand)) && validIBAN(strings.ReplaceAll(cand, " ", "")) {
				out = append(out, Span{loc[0], loc[0] + len(cand), Financial})
				break
			}
		}
	}
	return out
}

// validIBAN checks length and the ISO 13616 mod-97 checksum.
func validIBAN(s string) bool {
	if n, ok := ibanLen[s[:2]]; ok && len(s) != n || len(s) < 15 || len(s) > 34 {
		return false
	}
	r := s[4:] + s[:4]
	rem := 0
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c >= '0' && c <= '9':
			rem = (rem*10 + int(c-'0')) % 97
		case c >= 'A' && c <= 'Z':
			rem = (rem*100 + int(c-'A'+10)) % 97
		default:
			return false
		}
	}
	return rem == 1
}

var ssnRE = regexp.MustCompile(`\d{3}-\d{2}-\d{4}`)

func findSSNs(text string, ws [][2]int) []Span {
	return inWindows(text, ws, ssnRE, Financial, func(m string) bool {
		area, group, serial := m[:3], m[4:6], m[7:]
		return area != "000" && area != "666" && area[0] != '9' && group != "00" && serial != "0000"
	})
}

var (
	ipv4RE = regexp.MustCompile(`\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}`)
	ipv6RE = regexp.MustCompile(`[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}`)
	// versionCue precedes version numbers that look like IPv4 addresses.
	versionCue = regexp.MustCompile(`(?i)(v|version|ver\.?|release|build)\s*$`)
)

func findIPs(text string, ws [][2]int) []Span {
	var out []Span
	for _, loc := range locs(text, ws, ipv4RE) {
		m := text[loc[0]:loc[1]]
		if !bounded(text, loc[0], loc[1]) || loc[0] > 0 && text[loc[0]-1] == '.' || loc[1] < len(text)-1 && text[loc[1]] == '.' && text[loc[1]+1] >= '0' && text[loc[1]+1] <= '9' {
			continue
		}
		if versionCue.MatchString(text[max(0, loc[0]-10):loc[0]]) {
			continue
		}
		if a, err := netip.ParseAddr(m); err == nil && a.Is4() {
			out = append(out, Span{loc[0], loc[1], Location})
		}
	}
	for _, loc := range locs(text, windows(text, func(c byte) bool { return c == ':' }, 40, 40), ipv6RE) {
		m := text[loc[0]:loc[1]]
		if !bounded(text, loc[0], loc[1]) || strings.Count(m, ":") < 2 {
			continue
		}
		if a, err := netip.ParseAddr(m); err == nil && a.Is6() && strings.ContainsAny(m, "abcdefABCDEF0123456789") {
			out = append(out, Span{loc[0], loc[1], Location})
		}
	}
	return out
}

// secretREs are provider key and token formats, each with a literal every
// match contains (checked first: a regexp scan of a long page is slow).
var secretREs = []struct {
	lit string
	re  *regexp.Regexp
}{
	{"AKIA", regexp.MustCompile(`AKIA[0-9A-Z]{16}`)},                                                // AWS access key id
	{"ASIA", regexp.MustCompile(`ASIA[0-9A-Z]{16}`)},                                                // AWS temporary key id
	{"_", regexp.MustCompile(`gh[pousr]_[A-Za-z0-9]{36,255}`)},                                      // GitHub token
	{"github_pat_", regexp.MustCompile(`github_pat_[A-Za-z0-9_]{22,255}`)},                          // GitHub fine-grained token
	{"glpat-", regexp.MustCompile(`glpat-[A-Za-z0-9_\-]{20,}`)},                                     // GitLab token
	{"xox", regexp.MustCompile(`xox[abposr]-[A-Za-z0-9\-]{10,}`)},                                   // Slack token
	{"k_", regexp.MustCompile(`[sr]k_(?:live|test)_[A-Za-z0-9]{16,}`)},                              // Stripe key
	{"sk-", regexp.MustCompile(`sk-(?:proj-|ant-)?[A-Za-z0-9_\-]{20,}`)},                            // OpenAI / Anthropic key
	{"AIza", regexp.MustCompile(`AIza[0-9A-Za-z_\-]{35}`)},                                          // Google API key
	{"SG.", regexp.MustCompile(`SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}`)},                       // SendGrid key
	{"eyJ", regexp.MustCompile(`eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`)}, // JWT
	{"npm_", regexp.MustCompile(`npm_[A-Za-z0-9]{36}`)},                                             // npm token
}

// keyWords start the key = value secrets keyValueRE reads.
var keyWords = []string{"key", "secret", "token", "passw", "pwd"}

var (
	privateKeyRE = regexp.MustCompile(`-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----`)
	// keyValueRE: a key word, then = or :, then a value.
	keyValueRE = regexp.MustCompile(`(?i)(?:api[_\-]?key|secret|token|passw(?:or)?d|pwd|access[_\-]?key|auth[_\-]?key|client[_\-]?secret|private[_\-]?key)["']?\s*[:=]\s*["']?([A-Za-z0-9_\-+/=.]{16,})`)
)

func findSecrets(text string) []Span {
	var out []Span
	for _, sr := range secretREs {
		if strings.Contains(text, sr.lit) {
			out = append(out, spans(sr.re, text, Secret, nil)...)
		}
	}
	if strings.Contains(text, "PRIVATE KEY-----") {
		for _, loc := range privateKeyRE.FindAllStringIndex(text, -1) {
			out = append(out, Span{loc[0], loc[1], Secret})
		}
	}
	lower := strings.ToLower(text)
	hasKeyWord := false
	for _, w := range keyWords {
		if strings.Contains(lower, w) {
			hasKeyWord = true
			break
		}
	}
	if !hasKeyWord || !strings.ContainsAny(text, ":=") {
		return out
	}
	for _, m := range keyValueRE.FindAllStringSubmatchIndex(text, -1) {
		v := text[m[2]:m[3]]
		if entropy(v) >= 3.5 && strings.ContainsAny(v, "0123456789") {
			out = append(out, Span{m[2], m[3], Secret})
		}
	}
	return out
}

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	var freq [256]int
	for i := 0; i < len(s); i++ {
		freq[s[i]]++
	}
	h := 0.0
	for _, f := range freq {
		if f > 0 {
			p := float64(f) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h
}
