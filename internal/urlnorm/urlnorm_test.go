package urlnorm

import "testing"

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"HTTP://Example.COM", "http://example.com/"},
		{"https://example.com:443/a?b=1#frag", "https://example.com/a?b=1"},
		{"http://example.com:80/", "http://example.com/"},
		{"http://example.com:8080/x", "http://example.com:8080/x"},
		{"https://example.com:80/x", "https://example.com:80/x"},
		{"http://[::1]:80/", "http://[::1]/"},
		{"http://[::1]:8080/", "http://[::1]:8080/"},
		{"http://[::1]/", "http://[::1]/"},
		{"http://example.com:/x", "http://example.com/x"},
		{"http://example.com/A/B?Q=R", "http://example.com/A/B?Q=R"},
		{"http://example.com/%7Efoo", "http://example.com/%7Efoo"},
		{"ftp://Example.com", "ftp://example.com/"},
		{"http://a b.com/\x7f", "http://a b.com/\x7f"},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q; want %q", tc.in, got, tc.want)
		}
	}
}

func TestJoinHost(t *testing.T) {
	for _, tc := range []struct{ host, port, want string }{
		{"example.com", "", "example.com"},
		{"example.com", "8080", "example.com:8080"},
		{"::1", "", "[::1]"},
		{"::1", "8080", "[::1]:8080"},
	} {
		if got := JoinHost(tc.host, tc.port); got != tc.want {
			t.Errorf("JoinHost(%q, %q) = %q; want %q", tc.host, tc.port, got, tc.want)
		}
	}
}
