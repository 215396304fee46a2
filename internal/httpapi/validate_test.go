package httpapi

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidateNormalizeURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string // "" = rejected
	}{
		{name: "https", in: "https://example.com/a?b#c", want: "https://example.com/a?b#c"},
		{name: "upper-case scheme", in: "HTTPS://Example.COM", want: "HTTPS://Example.COM"},
		{name: "scheme-less", in: "example.com", want: "http://example.com"},
		{name: "scheme-less with port", in: "example.com:8080", want: "http://example.com:8080"},
		{name: "colon-slash-slash only", in: "://example.com", want: "http://example.com"},
		{name: "surrounding space trimmed", in: "  https://example.com  ", want: "https://example.com"},
		{name: "trailing dot fqdn", in: "https://example.com./", want: "https://example.com./"},
		{name: "subdomains", in: "https://a.b.c.example.co.uk/x", want: "https://a.b.c.example.co.uk/x"},
		{name: "localhost", in: "localhost:3000", want: "http://localhost:3000"},
		{name: "ipv4", in: "http://127.0.0.1:8080/", want: "http://127.0.0.1:8080/"},
		{name: "ipv6", in: "http://[2001:db8::1]/", want: "http://[2001:db8::1]/"},
		{name: "unicode tld", in: "https://пример.рф", want: "https://пример.рф"},
		{name: "punycode tld", in: "https://xn--e1afmkfd.xn--p1ai", want: "https://xn--e1afmkfd.xn--p1ai"},
		{name: "empty", in: ""},
		{name: "spaces", in: "   "},
		{name: "ftp", in: "ftp://example.com"},
		{name: "data", in: "data://text/plain,hi"},
		{name: "no dot", in: "http://intranet"},
		{name: "numeric tld", in: "http://1.2.3"},
		{name: "short tld", in: "http://example.c"},
		{name: "digit in tld", in: "http://example.c0m"},
		{name: "empty label", in: "http://example..com"},
		{name: "leading dot", in: "http://.example.com"},
		{name: "no host", in: "http:///path"},
		{name: "bad port", in: "http://example.com:abc"},
		{name: "space in host", in: "http://exa mple.com"},
		{name: "javascript", in: "javascript:alert(1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := normalizeURL(tt.in)
			if ok != (tt.want != "") {
				t.Fatalf("normalizeURL(%q) ok = %v, want %v", tt.in, ok, tt.want != "")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("normalizeURL(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestValidateNormalizeSchema(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string // "" = rejected as a schema-less dictionary
	}{
		{name: "untouched", in: `{"type":"string","description":"a <b> & c"}`, want: `{"type":"string","description":"a <b> & c"}`},
		{name: "whitespace compacted", in: "{ \"type\" : \"object\" ,\n \"properties\" : { } }", want: `{"type":"object","properties":{}}`},
		{name: "drops additionalProperties false", in: `{"properties":{"a":{}},"additionalProperties":false}`, want: `{"properties":{"a":{}}}`},
		{name: "drops additionalProperties true", in: `{"properties":{"a":{}},"additionalProperties":true}`, want: `{"properties":{"a":{}}}`},
		{name: "keeps additionalProperties without properties", in: `{"type":"object","additionalProperties":false}`,
			want: `{"type":"object","additionalProperties":false}`},
		{name: "prunes required", in: `{"properties":{"a":{},"b":{}},"required":["b","z",1,"a"]}`,
			want: `{"properties":{"a":{},"b":{}},"required":["b","a"]}`},
		{name: "required without properties kept", in: `{"required":["x"]}`, want: `{"required":["x"]}`},
		{name: "nested in items and anyOf", in: `{"type":"array","items":{"properties":{"a":{}},"required":["q"],"additionalProperties":false},` +
			`"anyOf":[{"properties":{},"additionalProperties":false}]}`,
			want: `{"type":"array","items":{"properties":{"a":{}},"required":[]},"anyOf":[{"properties":{}}]}`},
		{name: "refs and defs allowed", in: `{"$ref":"#/$defs/x","$defs":{"x":{"properties":{"n":{}},"additionalProperties":false}}}`,
			want: `{"$ref":"#/$defs/x","$defs":{"x":{"properties":{"n":{}}}}}`},
		{name: "property named additionalProperties", in: `{"properties":{"additionalProperties":true,"properties":{"type":"string"}}}`,
			want: `{"properties":{"additionalProperties":true,"properties":{"type":"string"}}}`},
		{name: "data keywords are not schemas", in: `{"type":"object","properties":{},"default":{"additionalProperties":true},"enum":[{"additionalProperties":true}]}`,
			want: `{"type":"object","properties":{},"default":{"additionalProperties":true},"enum":[{"additionalProperties":true}]}`},
		{name: "escapes kept valid", in: `{"description":"line\nbreak \"q\" \\ \u0001 é"}`, want: `{"description":"line\nbreak \"q\" \\ \u0001 é"}`},
		{name: "numbers kept exact", in: `{"minimum":1.50,"maximum":12345678901234567890}`, want: `{"minimum":1.50,"maximum":12345678901234567890}`},
		{name: "schema-less root", in: `{"type":"object","additionalProperties":true}`},
		{name: "schema-less nested", in: `{"properties":{"a":{"type":"array","items":{"additionalProperties":true}}}}`},
		{name: "schema-less in defs", in: `{"$defs":{"d":{"additionalProperties":true}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, ok := normalizeSchema(json.RawMessage(tt.in))
			if ok != (tt.want != "") {
				t.Fatalf("normalizeSchema(%s) ok = %v, want %v", tt.in, ok, tt.want != "")
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("normalizeSchema mismatch (-want +got):\n%s", diff)
			}
			if ok && !json.Valid(got) {
				t.Errorf("normalizeSchema produced invalid JSON %s", got)
			}
		})
	}
}

func TestValidateNormalizeCountry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string // want "" = rejected
	}{
		{in: "US", want: "US"}, {in: "us", want: "US"}, {in: "De", want: "DE"}, {in: "gb", want: "GB"},
		{in: "AD", want: "AD"}, {in: "ZW", want: "ZW"}, {in: "xk", want: "XK"},
		{in: "us-generic"}, {in: "US-GENERIC"},
		{in: ""}, {in: "U"}, {in: "USA"}, {in: "XX"}, {in: "UK"}, {in: "ZZ"}, {in: "1A"}, {in: "DA"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, ok := normalizeCountry(tt.in)
			if ok != (tt.want != "") || got != tt.want {
				t.Errorf("normalizeCountry(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
			}
		})
	}
	if n := len(countryCodes) / 2; n != 250 {
		t.Errorf("countryCodes has %d codes, want 249 ISO 3166-1 + XK", n)
	}
}

func TestValidateSplitters(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
	}{
		{name: "empty object", in: ` { } `},
		{name: "members", in: `{"a":1,"b":"x,}]","c":{"d":[1,{"e":"\"}"}]},"f":null,"g":true,"h":-1.5e3}`},
		{name: "escaped keys", in: `{"\u0061":1,"b\"c":2,"\n":3}`},
		{name: "duplicate keys", in: `{"a":1,"a":2}`},
		{name: "spaces", in: "{\n\t\"a\" :\r [ 1 , 2 ] ,\"b\":{ }\n}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			obj, ok := splitObject([]byte(tt.in))
			if !ok {
				t.Fatalf("splitObject(%s) failed", tt.in)
			}
			var want map[string]json.RawMessage
			if err := json.Unmarshal([]byte(tt.in), &want); err != nil {
				t.Fatal(err)
			}
			got := map[string]json.RawMessage{}
			for _, m := range obj {
				got[m.key] = obj.get(m.key)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("splitObject mismatch (-want +got):\n%s", diff)
			}
		})
	}

	arr, ok := splitArray([]byte(` [ "a" , [1,[2]] ,{"b":"]"}, null ] `))
	if !ok {
		t.Fatal("splitArray failed")
	}
	wantArr := []string{`"a"`, `[1,[2]]`, `{"b":"]"}`, `null`}
	gotArr := make([]string, len(arr))
	for i, a := range arr {
		gotArr[i] = string(a)
	}
	if diff := cmp.Diff(wantArr, gotArr); diff != "" {
		t.Errorf("splitArray mismatch (-want +got):\n%s", diff)
	}
}

func TestValidateInteger(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in     string
		want   int64
		issues []string // codes
	}{
		{in: "5", want: 5},
		{in: "5.0", want: 5},
		{in: "5e0", want: 5},
		{in: "-0", want: 0},
		{in: "0.5e1", want: 5},
		{in: "5.5", issues: []string{codeInvalidType}},
		{in: `"5"`, issues: []string{codeInvalidType}},
		{in: "true", issues: []string{codeInvalidType}},
		{in: "null", issues: []string{codeInvalidType}},
		{in: "-1", issues: []string{codeTooSmall}},
		{in: "11", issues: []string{codeTooBig}},
		{in: "1e999", issues: []string{codeTooBig}},
		{in: "-1e999", issues: []string{codeTooSmall}},
		{in: "99999999999999999999", issues: []string{codeTooBig}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			var v validator
			got, _ := v.integer([]any{"n"}, json.RawMessage(tt.in), 0, 10)
			var codes []string
			for _, d := range v.details {
				codes = append(codes, d.Code)
			}
			if diff := cmp.Diff(tt.issues, codes); diff != "" {
				t.Errorf("integer(%s) issues mismatch (-want +got):\n%s", tt.in, diff)
			}
			if got != tt.want {
				t.Errorf("integer(%s) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestValidateJSLen(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int
	}{
		{in: "", want: 0}, {in: "abc", want: 3}, {in: "é", want: 1}, {in: "日本", want: 2}, {in: "😀", want: 2},
	}
	for _, tt := range tests {
		if got := jsLen(tt.in); got != tt.want {
			t.Errorf("jsLen(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
}
