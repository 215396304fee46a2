package httpapi

import (
	"bytes"
	"encoding/json"
)

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
