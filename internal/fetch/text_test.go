package fetch

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		contentType string
		body        string
		want        string
	}{
		{
			name:        "utf-8 header",
			contentType: "text/html; charset=utf-8",
			body:        "<p>Grüße €</p>",
			want:        "<p>Grüße €</p>",
		},
		{
			name:        "iso-8859-1 header",
			contentType: "text/html; charset=ISO-8859-1",
			body:        "<p>Gr\xfc\xdfe</p>",
			want:        "<p>Grüße</p>",
		},
		{
			name: "windows-1252 meta charset",
			body: `<html><head><meta charset="windows-1252"><title>x</title></head><body>` +
				"\x93quoted\x94 \x80 caf\xe9</body></html>",
			want: `<html><head><meta charset="windows-1252"><title>x</title></head><body>` +
				"“quoted” € café</body></html>",
		},
		{
			name: "shift_jis meta http-equiv",
			body: `<html><head><META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=Shift_JIS"></head>` +
				"<body>\x93\xfa\x96\x7b\x8c\xea</body></html>",
			want: `<html><head><META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=Shift_JIS"></head>` +
				"<body>日本語</body></html>",
		},
		{
			name:        "utf-8 bom beats header",
			contentType: "text/html; charset=iso-8859-1",
			body:        "\xef\xbb\xbf<p>ñ</p>",
			want:        "<p>ñ</p>",
		},
		{
			name: "utf-16le bom",
			body: "\xff\xfe<\x00p\x00>\x00\xe9\x00",
			want: "<p>é",
		},
		{
			name:        "header beats meta",
			contentType: "text/html; charset=iso-8859-1",
			body:        `<meta charset="utf-8"><p>caf` + "\xe9</p>",
			want:        `<meta charset="utf-8"><p>café</p>`,
		},
		{
			name:        "mis-declared latin1 but utf-8 bytes",
			contentType: "text/html; charset=iso-8859-1",
			body:        "<p>café naïve</p>",
			want:        "<p>café naïve</p>",
		},
		{
			name:        "declared utf-8 with invalid bytes",
			contentType: "text/html; charset=utf-8",
			body:        "<p>caf\xe9</p>",
			want:        "<p>caf\uFFFD</p>",
		},
		{
			name: "undeclared invalid utf-8 falls back to windows-1252",
			body: "<p>caf\xe9</p>",
			want: "<p>café</p>",
		},
		{
			name: "undeclared valid utf-8",
			body: "<p>日本</p>",
			want: "<p>日本</p>",
		},
		{
			name:        "unknown header label then meta",
			contentType: "text/html; charset=bogus-charset",
			body:        `<meta http-equiv="content-type" content='text/html;charset = "koi8-r"'>` + "\xf0\xd2\xc9",
			want:        `<meta http-equiv="content-type" content='text/html;charset = "koi8-r"'>` + "При",
		},
		{
			name:        "meta utf-16 means utf-8",
			contentType: "text/html",
			body:        `<meta charset="utf-16"><p>ü</p>`,
			want:        `<meta charset="utf-16"><p>ü</p>`,
		},
		{
			name: "empty",
			body: "",
			want: "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := &Response{Header: http.Header{}, Body: []byte(tt.body)}
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			if diff := cmp.Diff(tt.want, r.Text()); diff != "" {
				t.Errorf("Text() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCharsetFromContent(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"text/html; charset=utf-8":       "utf-8",
		"text/html;charset='latin1'":     "latin1",
		"text/html; CHARSET = \"gbk\" ;": "gbk",
		"text/html; charsetx; charset=x": "x",
		"text/html":                      "",
		"charset=":                       "",
		`charset="unterminated`:          "",
	}
	for in, want := range tests {
		if got := charsetFromContent(in); got != want {
			t.Errorf("charsetFromContent(%q) = %q, want %q", in, got, want)
		}
	}
}
