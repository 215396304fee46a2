package httpapi

import (
	"errors"
	"net"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/firegate/firegate/internal/exprlimit"
)

// normalizeURL applies the contract's URL rules: a scheme-less string gets
// "http://" prepended; the scheme must be http or https; the host must be an
// IP literal, "localhost" (allowed for self-hosters) or a name with a dot
// whose last label is a real TLD (two or more letters, or an IDNA "xn--"
// label). It returns the URL to fetch.
func normalizeURL(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", false
	}
	if !hasScheme(s) {
		if strings.HasPrefix(s, "://") {
			s = "http" + s
		} else {
			s = "http://" + s
		}
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	default:
		return "", false
	}
	host := u.Hostname()
	if host == "" || u.Opaque != "" {
		return "", false
	}
	if !validHost(host) {
		return "", false
	}
	return s, true
}

// hasScheme reports whether s starts with "<scheme>://" where the scheme has
// no dot or colon (so "example.com:8080/x" counts as scheme-less).
func hasScheme(s string) bool {
	i := strings.Index(s, "://")
	return i > 0 && !strings.ContainsAny(s[:i], ".:")
}

// validHost reports whether host is an IP literal, localhost, or a domain
// name with a real TLD.
func validHost(host string) bool {
	if net.ParseIP(host) != nil || strings.EqualFold(host, "localhost") {
		return true
	}
	host = strings.TrimSuffix(host, ".")
	dot := strings.LastIndexByte(host, '.')
	if dot <= 0 {
		return false
	}
	for label := range strings.SplitSeq(host, ".") {
		if label == "" || strings.ContainsAny(label, " \t\r\n/\\@?#%") {
			return false
		}
	}
	tld := host[dot+1:]
	if len(tld) >= 5 && strings.EqualFold(tld[:4], "xn--") {
		return true
	}
	if utf8.RuneCountInString(tld) < 2 {
		return false
	}
	for _, r := range tld {
		if !unicode.IsLetter(r) {
			return false
		}
	}
	return true
}

// selectorProblem returns why s is refused as a CSS selector group ("" when
// it is accepted): msgInvalidSelector when it does not parse, with the
// reason when it is out of exprlimit's bounds.
func selectorProblem(s string) string {
	if strings.TrimSpace(s) == "" {
		return msgInvalidSelector
	}
	_, err := exprlimit.Selector(s)
	var e *exprlimit.Error
	switch {
	case err == nil:
		return ""
	case errors.As(err, &e):
		return msgInvalidSelector + ": " + e.Reason
	default:
		return msgInvalidSelector
	}
}

// countryCodes lists ISO 3166-1 alpha-2 codes (plus XK, Kosovo, which proxy
// providers use), two letters each.
const countryCodes = "" +
	"ADAEAFAGAIALAMAOAQARASATAUAWAXAZ" +
	"BABBBDBEBFBGBHBIBJBLBMBNBOBQBRBSBTBVBWBYBZ" +
	"CACCCDCFCGCHCICKCLCMCNCOCRCUCVCWCXCYCZ" +
	"DEDJDKDMDODZ" +
	"ECEEEGEHERESET" +
	"FIFJFKFMFOFR" +
	"GAGBGDGEGFGGGHGIGLGMGNGPGQGRGSGTGUGWGY" +
	"HKHMHNHRHTHU" +
	"IDIEILIMINIOIQIRISIT" +
	"JEJMJOJP" +
	"KEKGKHKIKMKNKPKRKWKYKZ" +
	"LALBLCLILKLRLSLTLULVLY" +
	"MAMCMDMEMFMGMHMKMLMMMNMOMPMQMRMSMTMUMVMWMXMYMZ" +
	"NANCNENFNGNINLNONPNRNUNZ" +
	"OM" +
	"PAPEPFPGPHPKPLPMPNPRPSPTPWPY" +
	"QA" +
	"RERORSRURW" +
	"SASBSCSDSESGSHSISJSKSLSMSNSOSRSSSTSVSXSYSZ" +
	"TCTDTFTGTHTJTKTLTMTNTOTRTTTVTWTZ" +
	"UAUGUMUSUYUZ" +
	"VAVCVEVGVIVNVU" +
	"WFWS" +
	"XK" +
	"YEYT" +
	"ZAZMZW"

// normalizeCountry upper-cases a country code and checks it: an ISO 3166-1
// alpha-2 code in any case (search's country, lower-case in the reference).
func normalizeCountry(s string) (string, bool) {
	up := strings.ToUpper(s)
	if !knownCountry(up) {
		return "", false
	}
	return up, true
}

// knownCountry reports whether s is an upper-case ISO 3166-1 alpha-2 code
// (or XK).
func knownCountry(s string) bool {
	if len(s) != 2 {
		return false
	}
	for i := 0; i+2 <= len(countryCodes); i += 2 {
		if countryCodes[i:i+2] == s {
			return true
		}
	}
	return false
}

// upperPair reports whether s is two upper-case ASCII letters, the
// contract's pattern for location.country.
func upperPair(s string) bool {
	return len(s) == 2 && 'A' <= s[0] && s[0] <= 'Z' && 'A' <= s[1] && s[1] <= 'Z'
}

// nearest is the name of names closest to s when it is a likely misspelling
// of it (case aside, at most a third of its letters off, two at least),
// else "".
func nearest(s string, names []string) string {
	best, bestD := "", -1
	for _, n := range names {
		d := editDistance(strings.ToLower(s), strings.ToLower(n))
		if bestD < 0 || d < bestD {
			best, bestD = n, d
		}
	}
	if bestD < 0 || bestD > max(2, len([]rune(s))/3) {
		return ""
	}
	return best
}

// editDistance counts the insertions, deletions, substitutions and swaps
// of adjacent letters that make a into b (optimal string alignment). The
// names compared are short: a and b longer than 64 runes are far apart.
func editDistance(a, b string) int {
	x, y := []rune(a), []rune(b)
	if len(x) > 64 || len(y) > 64 {
		return 1 << 30
	}
	d := make([][]int, len(x)+1)
	for i := range d {
		d[i] = make([]int, len(y)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(x); i++ {
		for j := 1; j <= len(y); j++ {
			cost := 1
			if x[i-1] == y[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && x[i-1] == y[j-2] && x[i-2] == y[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(x)][len(y)]
}
