package product

import (
	"regexp"
	"strconv"
	"strings"
)

// iso4217 holds the active ISO 4217 currency codes.
var iso4217 = func() map[string]bool {
	m := map[string]bool{}
	for c := range strings.FieldsSeq(`AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL
	BSD BTN BWP BYN BZD CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL
	GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD
	KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD
	OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP
	SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VES VND VUV WST XAF XCD XOF XPF YER ZAR ZMW ZWL`) {
		m[c] = true
	}
	return m
}()

// zeroDecimal currencies are displayed without minor units.
var zeroDecimal = map[string]bool{"JPY": true, "KRW": true, "VND": true, "CLP": true, "ISK": true, "IDR": true, "PYG": true, "UGX": true, "XAF": true, "XOF": true}

// currencyCode returns s as an ISO 4217 code, or "" when it is none.
// Symbols are accepted too ("€" is EUR).
func currencyCode(s string) string {
	s = strings.TrimSpace(s)
	if c := strings.ToUpper(s); iso4217[c] {
		return c
	}
	return symbols[s]
}

// symbols maps currency symbols to codes; "$" is read as USD unless the
// page names another dollar (see page.currencyHint).
var symbols = map[string]string{
	"$": "USD", "US$": "USD", "C$": "CAD", "CA$": "CAD", "A$": "AUD", "AU$": "AUD", "NZ$": "NZD", "HK$": "HKD",
	"S$": "SGD", "R$": "BRL", "MX$": "MXN", "€": "EUR", "£": "GBP", "¥": "JPY", "￥": "JPY", "₹": "INR", "₩": "KRW",
	"₽": "RUB", "₺": "TRY", "₪": "ILS", "zł": "PLN", "Kč": "CZK", "kr": "SEK", "kr.": "DKK", "Fr.": "CHF",
	"CHF": "CHF", "R": "ZAR", "₫": "VND", "฿": "THB", "₱": "PHP", "Rs.": "INR", "Rs": "INR", "RM": "MYR", "lei": "RON",
}

// dollars are currencies written with a bare "$".
var dollars = map[string]bool{"USD": true, "CAD": true, "AUD": true, "NZD": true, "HKD": true, "SGD": true, "MXN": true}

// displaySymbol is the symbol formatAmount writes before an amount.
var displaySymbol = map[string]string{
	"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "INR": "₹", "KRW": "₩", "CAD": "CA$", "AUD": "A$",
	"NZD": "NZ$", "HKD": "HK$", "BRL": "R$", "ILS": "₪", "TRY": "₺", "RUB": "₽",
}

// formatAmount writes an amount as "$19.99", "€1,299.00" or "19.99 CHF".
func formatAmount(a float64, cur string) string {
	dec := 2
	if zeroDecimal[cur] {
		dec = 0
	}
	s := strconv.FormatFloat(a, 'f', dec, 64)
	intPart, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 && c != '-' && intPart[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	num := b.String()
	if frac != "" {
		num += "." + frac
	}
	if sym, ok := displaySymbol[cur]; ok {
		return sym + num
	}
	if cur == "" {
		return num
	}
	return num + " " + cur
}

// parseAmount reads a price number as shops write it: "19.99", "1,299.00",
// "1.299,00", "19,95", "1 299,00", "1'299.00", with stray currency marks
// around it. A single separator followed by exactly three digits is read
// as a thousands separator.
func parseAmount(s string) (float64, bool) {
	var b strings.Builder
	start := -1
	for i, r := range s {
		if r >= '0' && r <= '9' {
			if start < 0 {
				start = i
			}
			b.WriteRune(r)
			continue
		}
		if start >= 0 && (r == '.' || r == ',' || r == '\'' || r == ' ' || r == '\u00a0' || r == '\u202f' || r == '’') {
			b.WriteRune(r)
			continue
		}
		if start >= 0 {
			break
		}
	}
	num := strings.TrimRight(b.String(), ".,' \u00a0\u202f’")
	if num == "" {
		return 0, false
	}
	num = strings.NewReplacer(" ", "", "\u00a0", "", "\u202f", "", "'", "", "’", "").Replace(num)
	lastDot, lastComma := strings.LastIndexByte(num, '.'), strings.LastIndexByte(num, ',')
	dec := -1
	switch {
	case lastDot >= 0 && lastComma >= 0:
		dec = max(lastDot, lastComma)
	case lastDot >= 0 || lastComma >= 0:
		i := max(lastDot, lastComma)
		once := strings.Count(num, string(num[i])) == 1
		if once && (len(num)-i-1 != 3 || strings.HasPrefix(num, "0")) {
			dec = i
		}
	}
	var clean strings.Builder
	for i := 0; i < len(num); i++ {
		switch c := num[i]; {
		case c >= '0' && c <= '9':
			clean.WriteByte(c)
		case i == dec:
			clean.WriteByte('.')
		}
	}
	v, err := strconv.ParseFloat(clean.String(), 64)
	if err != nil {
		return 0, false
	}
	return v, true
}

// priceValue reads a JSON-LD price: a JSON number as is, a string with
// parseAmount.
func priceValue(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case []any:
		for _, e := range x {
			if a, ok := priceValue(e); ok {
				return a, true
			}
		}
		return 0, false
	}
	s := text(v)
	// A plain decimal string ("1.299" from a JSON-LD generator) is the
	// number it spells; the locale heuristics are for displayed prices.
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return f, true
	}
	return parseAmount(s)
}

// money is an amount found in text, as displayed.
type money struct {
	amount   float64
	currency string // "" when the text names none
	text     string
}

// numberRE is a displayed number: grouped thousands, optional decimals.
const numberRE = `\d{1,3}(?:[.,'’\x{00a0}\x{202f} ]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?`

// symbolRE lists currency marks, longest first.
const symbolRE = `US\$|CA\$|AU\$|NZ\$|HK\$|MX\$|C\$|A\$|S\$|R\$|\$|€|£|¥|￥|₹|₩|₽|₺|₪|₫|฿|₱|zł|Kč|kr\.?|Fr\.|Rs\.?|RM|lei|[A-Z]{3}`

var (
	moneyBefore = regexp.MustCompile(`(` + symbolRE + `)\s?(` + numberRE + `)`)
	moneyAfter  = regexp.MustCompile(`(` + numberRE + `)\s?(` + symbolRE + `)`)
)

// findMoney returns the money amounts in s in order of appearance; a
// match needs a currency mark, so bare numbers (quantities, ratings) are
// not prices.
func findMoney(s string) []moneyAt {
	var out []moneyAt
	add := func(loc []int, sym, num string) {
		cur := currencyCode(sym)
		if cur == "" {
			return
		}
		a, ok := parseAmount(num)
		if !ok {
			return
		}
		for _, o := range out {
			if loc[0] < o.end && o.start < loc[1] {
				return
			}
		}
		out = append(out, moneyAt{money: money{amount: a, currency: cur, text: clean(s[loc[0]:loc[1]])}, start: loc[0], end: loc[1]})
	}
	for _, m := range moneyBefore.FindAllStringSubmatchIndex(s, -1) {
		if boundaryOK(s, m[0], m[1]) {
			add(m, s[m[2]:m[3]], s[m[4]:m[5]])
		}
	}
	for _, m := range moneyAfter.FindAllStringSubmatchIndex(s, -1) {
		if boundaryOK(s, m[0], m[1]) {
			add(m, s[m[4]:m[5]], s[m[2]:m[3]])
		}
	}
	// order of appearance
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].start < out[j-1].start; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// moneyAt is a money match with its byte span.
type moneyAt struct {
	money
	start, end int
}

// boundaryOK rejects matches glued to letters or digits ("ABC123" inside
// a SKU, "USD" inside a word).
func boundaryOK(s string, i, j int) bool {
	isWord := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	return (i == 0 || !isWord(s[i-1])) && (j == len(s) || !isWord(s[j]))
}
