package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"unicode/utf8"
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
