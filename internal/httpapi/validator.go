package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
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

// addHeadlined records a failing field with its detail message, and
// headline as the error text of the response when no headline came before.
func (v *validator) addHeadlined(path []any, code, msg, headline string) {
	if v.headline == "" {
		v.headline = headline
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
		// No contract message: the first failing field and its problem,
		// since SDKs show only this text ("limit: Number must be ...").
		msg = fieldMessage(v.details[0])
	}
	return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: msg, Details: v.details}
}

// fieldMessage is "path: message" of f ("formats[0]: ..."), or the
// message alone for the body itself.
func fieldMessage(f FieldError) string {
	if p := fieldPath(f.Path); p != "" {
		return p + ": " + f.Message
	}
	return f.Message
}

// fieldPath writes a path as JavaScript would: scrapeOptions.formats[0].
func fieldPath(p []any) string {
	var b strings.Builder
	for _, e := range p {
		switch x := e.(type) {
		case int:
			b.WriteString("[" + strconv.Itoa(x) + "]")
		default:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			fmt.Fprint(&b, x)
		}
	}
	return b.String()
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
