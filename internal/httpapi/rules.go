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
