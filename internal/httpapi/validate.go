package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/andybalholm/cascadia"
)

// This file holds the request-validation machinery shared by every v2 body:
// a collector of per-field issues, typed accessors over raw JSON objects
// (decoded level by level so unknown keys and type errors get exact paths),
// and the reusable value rules (URLs, CSS selectors, country codes, JSON
// schemas).

// Messages of the contract, word for word.
const (
	msgBadRequest     = "Bad Request"
	msgInvalidJSON    = "Bad request, malformed JSON"
	msgTooLarge       = "Request body is too large"
	msgUnrecognized   = "Unrecognized key in body -- please review the v2 API documentation for request body changes"
	msgInvalidURL     = "Invalid URL"
	msgInvalidCountry = "Invalid country code. Please use a valid ISO 3166-1 alpha-2 country code."
	// msgCountryPattern is the 400 for a location.country that is not two
	// upper-case letters (the contract's pattern), such as "us".
	msgCountryPattern = "Invalid country code. location.country must be two upper-case letters (ISO 3166-1 alpha-2), such as US."
)

// Issue codes used in FieldError.Code (the names follow the reference
// server's validation library so clients see familiar values).
const (
	codeInvalidType          = "invalid_type"
	codeUnrecognizedKeys     = "unrecognized_keys"
	codeTooSmall             = "too_small"
	codeTooBig               = "too_big"
	codeInvalidEnum          = "invalid_enum_value"
	codeInvalidString        = "invalid_string"
	codeInvalidDiscriminator = "invalid_union_discriminator"
	codeInvalidUnion         = "invalid_union"
	codeCustom               = "custom"
)

// errInvalidJSON is the answer to a body that is not one JSON object.
func errInvalidJSON(cause error) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST_INVALID_JSON", Message: msgInvalidJSON, err: cause}
}

// readJSONObject reads the whole body and splits its top-level object into
// raw members. A body over the router's limit becomes 413; anything that is
// not exactly one JSON object (malformed, trailing garbage, an array, null)
// becomes 400 BAD_REQUEST_INVALID_JSON.
func readJSONObject(r io.Reader) (jsonObject, *Error) {
	body, err := io.ReadAll(r)
	if err != nil {
		var apiErr *Error
		if errors.As(err, &apiErr) {
			return nil, apiErr
		}
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, &Error{Status: http.StatusRequestEntityTooLarge, Code: "PAYLOAD_TOO_LARGE", Message: msgTooLarge, err: err}
		}
		return nil, errInvalidJSON(err)
	}
	if kindOf(body) != kindObject {
		return nil, errInvalidJSON(errors.New("httpapi: body is not a JSON object"))
	}
	if !json.Valid(body) {
		return nil, errInvalidJSON(errors.New("httpapi: malformed JSON"))
	}
	fields, ok := splitObject(body)
	if !ok {
		return nil, errInvalidJSON(errors.New("httpapi: body is not a JSON object"))
	}
	return fields, nil
}

// jsonObject is a JSON object split into its members, in body order. The
// values are slices of the (already validated) request body.
type jsonObject []jsonMember

// jsonMember is one member of a jsonObject.
type jsonMember struct {
	key string
	raw json.RawMessage
}

// get returns the raw value of key, nil when absent. As with encoding/json,
// the last of duplicate keys wins.
func (o jsonObject) get(key string) json.RawMessage {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].key == key {
			return o[i].raw
		}
	}
	return nil
}

// The splitters below walk JSON that json.Valid has accepted, so they only
// find value boundaries; every index is still bounds-checked so that a bug
// cannot panic.

// skipSpace returns the index of the first non-space byte at or after i.
func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipString returns the index just past the string literal starting at i.
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the index just past the value starting at i, or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				if i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// unquote decodes the string literal lit.
func unquote(lit []byte) (string, bool) {
	if len(lit) >= 2 && bytes.IndexByte(lit, '\\') < 0 && utf8.Valid(lit) {
		return string(lit[1 : len(lit)-1]), true
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return "", false
	}
	return s, true
}

// splitObject splits a valid JSON object into its members.
func splitObject(b []byte) (jsonObject, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return nil, false
	}
	out := make(jsonObject, 0, 8)
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return out, skipSpace(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return nil, false
		}
		end := skipString(b, i)
		if end < 0 {
			return nil, false
		}
		key, ok := unquote(b[i:end])
		if !ok {
			return nil, false
		}
		i = skipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return nil, false
		}
		i = skipSpace(b, i+1)
		end = skipValue(b, i)
		if end < 0 {
			return nil, false
		}
		out = append(out, jsonMember{key: key, raw: b[i:end]})
		i = skipSpace(b, end)
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return out, skipSpace(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
}

// splitArray splits a valid JSON array into its items.
func splitArray(b []byte) ([]json.RawMessage, bool) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, false
	}
	out := make([]json.RawMessage, 0, 4)
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return out, skipSpace(b, i+1) == len(b)
	}
	for {
		end := skipValue(b, i)
		if end < 0 {
			return nil, false
		}
		out = append(out, b[i:end])
		i = skipSpace(b, end)
		if i >= len(b) {
			return nil, false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return out, skipSpace(b, i+1) == len(b)
		default:
			return nil, false
		}
	}
}

// validator collects validation issues: one FieldError per failing field,
// plus the headline message (the first custom rule that failed).
type validator struct {
	details  []FieldError
	headline string
}

// add records a failing field whose message is not a headline.
func (v *validator) add(path []any, code, msg string) {
	v.details = append(v.details, FieldError{Path: path, Message: msg, Code: code})
}

// addCustom records a failing field whose message is a contract message: the
// first one becomes the error text of the response.
func (v *validator) addCustom(path []any, code, msg string) {
	if v.headline == "" {
		v.headline = msg
	}
	v.add(path, code, msg)
}

// failed reports whether any issue was recorded.
func (v *validator) failed() bool { return len(v.details) > 0 }

// err returns the 400 for the collected issues, nil when there are none.
func (v *validator) err() *Error {
	if !v.failed() {
		return nil
	}
	msg := v.headline
	if msg == "" {
		msg = msgBadRequest
	}
	return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: msg, Details: v.details}
}

// at returns a new path: p followed by elems. p is never modified, so
// sibling paths cannot alias.
func at(p []any, elems ...any) []any {
	out := make([]any, 0, len(p)+len(elems))
	return append(append(out, p...), elems...)
}

// jsonKind is the type of a raw JSON value.
type jsonKind byte

const (
	kindInvalid jsonKind = iota
	kindNull
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// String names the kind like the reference server's messages do.
func (k jsonKind) String() string {
	switch k {
	case kindNull:
		return "null"
	case kindBool:
		return "boolean"
	case kindNumber:
		return "number"
	case kindString:
		return "string"
	case kindArray:
		return "array"
	case kindObject:
		return "object"
	}
	return "unknown"
}

// kindOf classifies a raw value by its first significant byte. It assumes the
// value is syntactically valid (it came out of json.Unmarshal).
func kindOf(raw []byte) jsonKind {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case 'n':
			return kindNull
		case 't', 'f':
			return kindBool
		case '"':
			return kindString
		case '[':
			return kindArray
		case '{':
			return kindObject
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			return kindNumber
		}
		return kindInvalid
	}
	return kindInvalid
}

// present reports whether key is in m with a non-null value. null is treated
// like an absent field everywhere.
func present(m jsonObject, key string) bool {
	raw := m.get(key)
	return raw != nil && kindOf(raw) != kindNull
}

// typeMismatch records that the value at path has the wrong JSON type.
func (v *validator) typeMismatch(path []any, want string, got jsonKind) {
	v.add(path, codeInvalidType, "Expected "+want+", received "+got.String())
}

// required records a missing required field.
func (v *validator) required(path []any, want string) {
	v.add(path, codeInvalidType, "Required (expected "+want+")")
}

// checkKeys reports every key of m that allowed rejects, in body order, with
// the contract's "Unrecognized key" message.
func (v *validator) checkKeys(path []any, m jsonObject, allowed func(string) bool) {
	for _, f := range m {
		if !allowed(f.key) {
			v.addCustom(at(path, f.key), codeUnrecognizedKeys, msgUnrecognized)
		}
	}
}

// keysIn returns an allowed-key predicate for a fixed list of names.
func keysIn(names ...string) func(string) bool {
	return func(k string) bool { return slices.Contains(names, k) }
}

// object decodes raw as a JSON object; a wrong type is recorded at path.
func (v *validator) object(path []any, raw json.RawMessage) (jsonObject, bool) {
	if k := kindOf(raw); k != kindObject {
		v.typeMismatch(path, "object", k)
		return nil, false
	}
	m, ok := splitObject(raw)
	if !ok {
		v.add(path, codeInvalidType, "Expected object")
		return nil, false
	}
	return m, true
}

// array decodes raw as a JSON array; a wrong type is recorded at path.
func (v *validator) array(path []any, raw json.RawMessage) ([]json.RawMessage, bool) {
	if k := kindOf(raw); k != kindArray {
		v.typeMismatch(path, "array", k)
		return nil, false
	}
	a, ok := splitArray(raw)
	if !ok {
		v.add(path, codeInvalidType, "Expected array")
		return nil, false
	}
	return a, true
}

// str decodes raw as a JSON string; a wrong type is recorded at path.
func (v *validator) str(path []any, raw json.RawMessage) (string, bool) {
	if k := kindOf(raw); k != kindString {
		v.typeMismatch(path, "string", k)
		return "", false
	}
	// Fast path: no escapes, valid UTF-8.
	if len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		inner := raw[1 : len(raw)-1]
		ok := true
		for _, c := range inner {
			if c < 0x20 {
				ok = false
				break
			}
		}
		if ok {
			return string(inner), true
		}
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		v.typeMismatch(path, "string", kindInvalid)
		return "", false
	}
	return s, true
}

// boolean decodes raw as a JSON boolean; a wrong type is recorded at path.
func (v *validator) boolean(path []any, raw json.RawMessage) (bool, bool) {
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	v.typeMismatch(path, "boolean", kindOf(raw))
	return false, false
}

// number decodes raw as a JSON number; a wrong type is recorded at path.
func (v *validator) number(path []any, raw json.RawMessage) (float64, bool) {
	if k := kindOf(raw); k != kindNumber {
		v.typeMismatch(path, "number", k)
		return 0, false
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(raw)), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		v.typeMismatch(path, "number", kindInvalid)
		return 0, false
	}
	return f, true // out of range: ±Inf, caught by the bounds
}

// integer decodes raw as an integral JSON number within [lo, hi]. Integral
// values written with a fraction or exponent (1000.0, 1e3) are accepted.
func (v *validator) integer(path []any, raw json.RawMessage, lo, hi int64) (int64, bool) {
	s := string(bytes.TrimSpace(raw))
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, ok := v.number(path, raw)
		if !ok {
			return 0, false
		}
		if !math.IsInf(f, 0) && f != math.Trunc(f) {
			v.add(path, codeInvalidType, "Expected integer, received float")
			return 0, false
		}
		switch {
		case f < float64(lo):
			v.tooSmall(path, lo)
			return 0, false
		case f > float64(hi) && hi != math.MaxInt64: // no upper bound: clamp below
			v.tooBig(path, hi)
			return 0, false
		}
		switch {
		case f >= math.MaxInt64:
			n = math.MaxInt64
		case f <= math.MinInt64:
			n = math.MinInt64
		default:
			n = int64(f)
		}
	}
	if n < lo {
		v.tooSmall(path, lo)
		return 0, false
	}
	if n > hi {
		v.tooBig(path, hi)
		return 0, false
	}
	return n, true
}

func (v *validator) tooSmall(path []any, lo int64) {
	v.add(path, codeTooSmall, "Number must be greater than or equal to "+strconv.FormatInt(lo, 10))
}

func (v *validator) tooBig(path []any, hi int64) {
	v.add(path, codeTooBig, "Number must be less than or equal to "+strconv.FormatInt(hi, 10))
}

// jsLen is the length of s as the reference server counts it: UTF-16 code
// units.
func jsLen(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}

// strLen decodes raw as a string of lo..hi characters (UTF-16 units).
func (v *validator) strLen(path []any, raw json.RawMessage, lo, hi int) (string, bool) {
	s, ok := v.str(path, raw)
	if !ok {
		return "", false
	}
	n := jsLen(s)
	if n < lo {
		v.add(path, codeTooSmall, "String must contain at least "+strconv.Itoa(lo)+" character(s)")
		return "", false
	}
	if n > hi {
		v.add(path, codeTooBig, "String must contain at most "+strconv.Itoa(hi)+" character(s)")
		return "", false
	}
	return s, true
}

// enum decodes raw as one of the allowed strings.
func (v *validator) enum(path []any, raw json.RawMessage, allowed ...string) (string, bool) {
	s, ok := v.str(path, raw)
	if !ok {
		return "", false
	}
	if !slices.Contains(allowed, s) {
		v.add(path, codeInvalidEnum, "Invalid enum value. Expected '"+strings.Join(allowed, "' | '")+"', received '"+s+"'")
		return "", false
	}
	return s, true
}

// stringList decodes raw as an array of strings of at most hi items.
func (v *validator) stringList(path []any, raw json.RawMessage, hi int) ([]string, bool) {
	items, ok := v.array(path, raw)
	if !ok {
		return nil, false
	}
	if len(items) > hi {
		v.add(path, codeTooBig, "Array must contain at most "+strconv.Itoa(hi)+" element(s)")
		return nil, false
	}
	out := make([]string, 0, len(items))
	good := true
	for i, item := range items {
		s, ok := v.str(at(path, i), item)
		if !ok {
			good = false
			continue
		}
		out = append(out, s)
	}
	return out, good
}

// Field accessors: read key of object m (at path) if present and not null.
// They return the zero value and false when the field is absent or invalid;
// invalid values are recorded.

func (v *validator) optBool(path []any, m jsonObject, key string, def bool) bool {
	if !present(m, key) {
		return def
	}
	b, ok := v.boolean(at(path, key), m.get(key))
	if !ok {
		return def
	}
	return b
}

func (v *validator) optInt(path []any, m jsonObject, key string, lo, hi int64) (int64, bool) {
	if !present(m, key) {
		return 0, false
	}
	return v.integer(at(path, key), m.get(key), lo, hi)
}

func (v *validator) optString(path []any, m jsonObject, key string) (string, bool) {
	if !present(m, key) {
		return "", false
	}
	return v.str(at(path, key), m.get(key))
}

func (v *validator) optEnum(path []any, m jsonObject, key, def string, allowed ...string) string {
	if !present(m, key) {
		return def
	}
	s, ok := v.enum(at(path, key), m.get(key), allowed...)
	if !ok {
		return def
	}
	return s
}

// reqString reads a required string field of lo..hi characters.
func (v *validator) reqString(path []any, m jsonObject, key string, lo, hi int) (string, bool) {
	if !present(m, key) {
		v.required(at(path, key), "string")
		return "", false
	}
	return v.strLen(at(path, key), m.get(key), lo, hi)
}

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

// validSelector reports whether s compiles as a CSS selector group.
func validSelector(s string) bool {
	if strings.TrimSpace(s) == "" {
		return false
	}
	_, err := cascadia.ParseGroup(s)
	return err == nil
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

// msgSchemalessDict is the 400 for a JSON schema object that has no
// properties but allows additional ones.
const msgSchemalessDict = "Schema contains an object with no 'properties' and 'additionalProperties: true' " +
	"(a schema-less dictionary), which OpenAI structured outputs do not support. Please define specific properties for this object."

// jnode is a JSON value with object member order preserved, used to rewrite
// extraction schemas without reordering them.
type jnode struct {
	kind  jsonKind
	raw   string // scalar: the literal (strings decoded)
	keys  []string
	elems []*jnode // object member values (parallel to keys) or array items
}

// parseOrdered parses raw into a jnode tree in one streaming pass.
func parseOrdered(raw []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return parseNode(dec)
}

func parseNode(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		n := &jnode{kind: kindArray}
		if t == '{' {
			n.kind = kindObject
		}
		for dec.More() {
			if n.kind == kindObject {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				n.keys = append(n.keys, k)
			}
			child, err := parseNode(dec)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, child)
		}
		if _, err := dec.Token(); err != nil { // closing delimiter
			return nil, err
		}
		return n, nil
	case string:
		return &jnode{kind: kindString, raw: t}, nil
	case json.Number:
		return &jnode{kind: kindNumber, raw: string(t)}, nil
	case bool:
		if t {
			return &jnode{kind: kindBool, raw: "true"}, nil
		}
		return &jnode{kind: kindBool, raw: "false"}, nil
	default:
		return &jnode{kind: kindNull, raw: "null"}, nil
	}
}

// get returns the value of member key of an object node, or nil.
func (n *jnode) get(key string) *jnode {
	if n == nil || n.kind != kindObject {
		return nil
	}
	// The last duplicate wins, as with encoding/json.
	for i := len(n.keys) - 1; i >= 0; i-- {
		if n.keys[i] == key {
			return n.elems[i]
		}
	}
	return nil
}

// write serializes n compactly.
func (n *jnode) write(b *bytes.Buffer) {
	switch n.kind {
	case kindObject:
		b.WriteByte('{')
		for i, k := range n.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			n.elems[i].write(b)
		}
		b.WriteByte('}')
	case kindArray:
		b.WriteByte('[')
		for i, e := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			e.write(b)
		}
		b.WriteByte(']')
	case kindString:
		writeJSONString(b, n.raw)
	default:
		b.WriteString(n.raw)
	}
}

// writeJSONString writes s as a JSON string literal (no HTML escaping).
func writeJSONString(b *bytes.Buffer, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&0xf])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
}

// schemaMapKeywords are keywords whose value maps names to subschemas.
func schemaMapKeyword(k string) bool {
	switch k {
	case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
		return true
	}
	return false
}

// schemaDataKeyword are keywords whose value is data, not a subschema.
func schemaDataKeyword(k string) bool {
	switch k {
	case "default", "const", "enum", "examples", "required", "description", "title":
		return true
	}
	return false
}

// normalizeSchema rewrites an extraction schema for the LLM: in every schema
// object that has "properties", "additionalProperties" is dropped and
// "required" names missing from "properties" are removed. It reports false
// when some schema object has no "properties" but "additionalProperties":
// true (a schema-less dictionary). Member order is preserved.
func normalizeSchema(raw json.RawMessage) (json.RawMessage, bool) {
	root, err := parseOrdered(raw)
	if err != nil {
		return nil, false
	}
	if !normalizeNode(root) {
		return nil, false
	}
	var b bytes.Buffer
	b.Grow(len(raw))
	root.write(&b)
	return b.Bytes(), true
}

// normalizeNode rewrites one schema node (object or array of schemas) in
// place and recurses into its subschemas.
func normalizeNode(n *jnode) bool {
	switch n.kind {
	case kindArray:
		for _, e := range n.elems {
			if !normalizeNode(e) {
				return false
			}
		}
		return true
	case kindObject:
	default:
		return true
	}
	props := n.get("properties")
	hasProps := props != nil && props.kind == kindObject
	if !hasProps {
		if ap := n.get("additionalProperties"); ap != nil && ap.kind == kindBool && ap.raw == "true" {
			return false
		}
	}
	keys, elems := n.keys[:0:0], n.elems[:0:0]
	for i, k := range n.keys {
		e := n.elems[i]
		switch {
		case hasProps && k == "additionalProperties":
			continue
		case hasProps && k == "required" && e.kind == kindArray:
			kept := e.elems[:0:0]
			for _, r := range e.elems {
				if r.kind == kindString && props.get(r.raw) != nil {
					kept = append(kept, r)
				}
			}
			e = &jnode{kind: kindArray, elems: kept}
		case schemaMapKeyword(k) && e.kind == kindObject:
			for _, sub := range e.elems {
				if !normalizeNode(sub) {
					return false
				}
			}
		case schemaDataKeyword(k):
		default:
			if !normalizeNode(e) {
				return false
			}
		}
		keys = append(keys, k)
		elems = append(elems, e)
	}
	n.keys, n.elems = keys, elems
	return true
}
