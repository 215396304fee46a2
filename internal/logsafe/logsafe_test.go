package logsafe

import "testing"

func TestURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://user:secret@example.com/a?b=c":      "https://example.com/a?b=c",
		"http://user@example.com":                    "http://example.com",
		"http://u:p%40ss@example.com:8080/x@y":       "http://example.com:8080/x@y",
		"https://example.com/path@thing":             "https://example.com/path@thing",
		"not a url":                                  "not a url",
		"http://a b:c@d e/":                          "http://d e/",
		"https://example.com/?redirect=http://u:p@x": "https://example.com/?redirect=http://u:p@x",
	} {
		if got := URL(in); got != want {
			t.Errorf("URL(%q) = %q, want %q", in, got, want)
		}
	}
}
