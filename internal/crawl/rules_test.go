package crawl

import (
	"errors"
	"net/url"
	"regexp/syntax"
	"testing"
)

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("parse %q: %v", s, err)
	}
	return u
}

func mustRules(t *testing.T, start string, c CrawlRules) *Rules {
	t.Helper()
	r, err := NewRules(start, c)
	if err != nil {
		t.Fatalf("NewRules(%q): %v", start, err)
	}
	return r
}

func intp(n int) *int { return &n }

func TestRulesKey(t *testing.T) {
	t.Parallel()
	similar := CrawlRules{DeduplicateSimilarURLs: true}
	exact := CrawlRules{}
	noQuery := CrawlRules{DeduplicateSimilarURLs: true, IgnoreQueryParameters: true}
	tests := []struct {
		name string
		c    CrawlRules
		a, b string
		same bool
	}{
		{"fragment dropped", exact, "https://a.com/x#top", "https://a.com/x", true},
		{"host case", exact, "https://A.COM/x", "https://a.com/x", true},
		{"path case kept", exact, "https://a.com/X", "https://a.com/x", false},
		{"default https port", exact, "https://a.com:443/x", "https://a.com/x", true},
		{"default http port", exact, "http://a.com:80/x", "http://a.com/x", true},
		{"other port", exact, "https://a.com:8443/x", "https://a.com/x", false},
		{"empty path is root", exact, "https://a.com", "https://a.com/", true},
		{"query sorted", exact, "https://a.com/p?b=2&a=1", "https://a.com/p?a=1&b=2", true},
		{"query values differ", exact, "https://a.com/p?a=1", "https://a.com/p?a=2", false},
		{"empty query params", exact, "https://a.com/p?&a=1&", "https://a.com/p?a=1", true},
		{"query kept", exact, "https://a.com/p?utm_source=x", "https://a.com/p", false},
		{"exact: www differs", exact, "https://www.a.com/x", "https://a.com/x", false},
		{"exact: scheme differs", exact, "http://a.com/x", "https://a.com/x", false},
		{"exact: slash differs", exact, "https://a.com/x/", "https://a.com/x", false},
		{"exact: index differs", exact, "https://a.com/x/index.html", "https://a.com/x/", false},
		{"similar: www", similar, "https://www.a.com/x", "https://a.com/x", true},
		{"similar: scheme", similar, "http://a.com/x", "https://a.com/x", true},
		{"similar: scheme with explicit ports", similar, "http://a.com:443/x", "https://a.com:80/x", true},
		{"similar: trailing slash", similar, "https://a.com/x/", "https://a.com/x", true},
		{"similar: root slash", similar, "https://a.com", "https://a.com/", true},
		{"similar: index.html", similar, "https://a.com/x/index.html", "https://a.com/x", true},
		{"similar: index.php", similar, "https://a.com/index.php", "https://a.com/", true},
		{"similar: index.htm", similar, "https://a.com/x/INDEX.HTM", "https://a.com/x/", true},
		{"similar: other file kept", similar, "https://a.com/x/home.html", "https://a.com/x/", false},
		{"similar: index as a directory name", similar, "https://a.com/index.html/y", "https://a.com/y", false},
		{"similar: subdomain differs", similar, "https://blog.a.com/x", "https://a.com/x", false},
		{"similar: port differs", similar, "https://a.com:8080/x", "https://a.com/x", false},
		{"similar: query still counts", similar, "https://a.com/x?p=1", "https://a.com/x", false},
		{"similar: query sorted", similar, "https://a.com/x/?b=1&a=2", "https://www.a.com/x?a=2&b=1", true},
		{"ignore query", noQuery, "https://a.com/x?utm_source=y", "https://a.com/x", true},
		{"ignore query with twins", noQuery, "http://www.a.com/x/index.html?page=2", "https://a.com/x", true},
		{"ignore query, exact otherwise", CrawlRules{IgnoreQueryParameters: true}, "https://a.com/x/?a=1", "https://a.com/x?a=1", false},
		{"escaped path kept", exact, "https://a.com/a%2Fb", "https://a.com/a/b", false},
		{"ipv6 default port", exact, "http://[::1]:80/x", "http://[::1]/x", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := mustRules(t, "https://a.com/", tt.c)
			ka, kb := r.Key(mustURL(t, tt.a)), r.Key(mustURL(t, tt.b))
			if (ka == kb) != tt.same {
				t.Errorf("Key(%q) = %q, Key(%q) = %q; same = %v, want %v", tt.a, ka, tt.b, kb, ka == kb, tt.same)
			}
		})
	}
}

func TestRulesKeyValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		c    CrawlRules
		in   string
		want string
	}{
		{CrawlRules{}, "HTTPS://Example.COM:443/A/?b=1&a=2#f", "https://example.com/A/?a=2&b=1"},
		{CrawlRules{DeduplicateSimilarURLs: true}, "http://www.example.com/a/index.php?b=1&a=2", "example.com/a?a=2&b=1"},
		{CrawlRules{DeduplicateSimilarURLs: true, IgnoreQueryParameters: true}, "https://example.com:8080/?q=1", "example.com:8080"},
		{CrawlRules{}, "http://[::1]:8080/x", "http://[::1]:8080/x"},
	}
	for _, tt := range tests {
		r := mustRules(t, "https://example.com/", tt.c)
		if got := r.Key(mustURL(t, tt.in)); got != tt.want {
			t.Errorf("%+v: Key(%q) = %q, want %q", tt.c, tt.in, got, tt.want)
		}
	}
}

func TestRulesAllow(t *testing.T) {
	t.Parallel()
	type link struct {
		url          string
		depth        int
		fromExternal bool
		want         string // "" = allowed, else the reason
	}
	tests := []struct {
		name  string
		start string
		c     CrawlRules
		links []link
	}{
		{"schemes and malformed", "https://example.com/", CrawlRules{}, []link{
			{url: "https://example.com/a"},
			{url: "http://example.com/a"},
			{url: "HTTPS://example.com/a"},
			{url: "ftp://example.com/a", want: ReasonScheme},
			{url: "mailto:someone@example.com", want: ReasonInvalidURL},
			{url: "javascript:void(0)", want: ReasonInvalidURL},
			{url: "/relative", want: ReasonInvalidURL},
			{url: "https://user:pw@example.com/a", want: ReasonInvalidURL},
		}},
		{"depth unlimited by default", "https://example.com/", CrawlRules{}, []link{
			{url: "https://example.com/a", depth: 1000},
		}},
		{"max discovery depth", "https://example.com/", CrawlRules{MaxDiscoveryDepth: intp(2)}, []link{
			{url: "https://example.com/a", depth: 0},
			{url: "https://example.com/a", depth: 2},
			{url: "https://example.com/a", depth: 3, want: ReasonDepth},
		}},
		{"max discovery depth zero", "https://example.com/", CrawlRules{MaxDiscoveryDepth: intp(0)}, []link{
			{url: "https://example.com/from-sitemap", depth: 0},
			{url: "https://example.com/a", depth: 1, want: ReasonDepth},
		}},
		{"file types", "https://example.com/", CrawlRules{}, []link{
			{url: "https://example.com/style.css", want: ReasonFileType},
			{url: "https://example.com/app.JS", want: ReasonFileType},
			{url: "https://example.com/img/logo.png?v=2", want: ReasonFileType},
			{url: "https://example.com/photo.jpeg", want: ReasonFileType},
			{url: "https://example.com/font.woff2", want: ReasonFileType},
			{url: "https://example.com/dl/release.zip", want: ReasonFileType},
			{url: "https://example.com/video.mp4", want: ReasonFileType},
			{url: "https://example.com/report.pdf"},
			{url: "https://example.com/letter.docx"},
			{url: "https://example.com/page.html"},
			{url: "https://example.com/page.php?x=.png"},
			{url: "https://example.com/v1.2/notes"},
		}},
		{"same host, www twin and scheme twin", "https://example.com/", CrawlRules{}, []link{
			{url: "https://www.example.com/a"},
			{url: "http://example.com/a"},
			{url: "https://EXAMPLE.com/a"},
			{url: "https://example.com:443/a"},
			{url: "https://example.com:8443/a", want: ReasonExternal},
			{url: "https://blog.example.com/a", want: ReasonSubdomain},
			{url: "https://other.com/a", want: ReasonExternal},
			{url: "https://example.co.uk/a", want: ReasonExternal},
		}},
		{"www start host", "https://www.example.com/", CrawlRules{}, []link{
			{url: "https://example.com/a"},
			{url: "https://www.example.com/a"},
		}},
		{"ip and port start host", "http://127.0.0.1:8080/", CrawlRules{AllowSubdomains: true}, []link{
			{url: "http://127.0.0.1:8080/a"},
			{url: "http://127.0.0.1:9090/a", want: ReasonExternal},
			{url: "http://localhost:8080/a", want: ReasonExternal},
		}},
		{"subdomains allowed", "https://www.example.com/", CrawlRules{AllowSubdomains: true}, []link{
			{url: "https://blog.example.com/a"},
			{url: "https://a.b.example.com/a"},
			{url: "https://example.com/a"},
			{url: "https://example.org/a", want: ReasonExternal},
			{url: "https://blog.example.com:8443/a", want: ReasonExternal},
		}},
		{"subdomains on a public suffix", "https://alice.github.io/", CrawlRules{AllowSubdomains: true}, []link{
			{url: "https://alice.github.io/a"},
			{url: "https://docs.alice.github.io/a"},
			{url: "https://bob.github.io/a", want: ReasonExternal},
		}},
		{"external links", "https://example.com/", CrawlRules{AllowExternalLinks: true}, []link{
			{url: "https://other.com/article"},
			{url: "https://other.com/?q=1"},
			{url: "https://other.com/", want: ReasonExternalLink},
			{url: "https://other.com", want: ReasonExternalLink},
			{url: "https://other.com/article", fromExternal: true, want: ReasonExternalHop},
			{url: "https://third.com/x", fromExternal: true, want: ReasonExternalHop},
			{url: "https://example.com/back", fromExternal: true},
			{url: "https://blog.example.com/post"},
			{url: "https://blog.example.com/", want: ReasonExternalLink},
			{url: "https://other.com/img.png", want: ReasonFileType},
			{url: "https://other.com/article", depth: 3},
		}},
		{"external links and depth", "https://example.com/", CrawlRules{AllowExternalLinks: true, MaxDiscoveryDepth: intp(1)}, []link{
			{url: "https://other.com/article", depth: 2, want: ReasonDepth},
		}},
		{"start path directory", "https://example.com/blog/", CrawlRules{}, []link{
			{url: "https://example.com/blog/"},
			{url: "https://example.com/blog"},
			{url: "https://example.com/blog/post-1"},
			{url: "https://example.com/blog/2024/x"},
			{url: "https://www.example.com/blog/post-1"},
			{url: "http://example.com/blog/post-1?x=1"},
			{url: "https://example.com/blog-archive", want: ReasonStartPath},
			{url: "https://example.com/", want: ReasonStartPath},
			{url: "https://example.com/about", want: ReasonStartPath},
			{url: "https://example.com/Blog/post", want: ReasonStartPath},
		}},
		{"start path without slash", "https://example.com/blog", CrawlRules{}, []link{
			{url: "https://example.com/blog"},
			{url: "https://example.com/blog/"},
			{url: "https://example.com/blog/post-1"},
			{url: "https://example.com/blogging", want: ReasonStartPath},
			{url: "https://example.com/blog-archive", want: ReasonStartPath},
		}},
		{"start path index file", "https://example.com/docs/index.html", CrawlRules{}, []link{
			{url: "https://example.com/docs/"},
			{url: "https://example.com/docs/index.html"},
			{url: "https://example.com/docs/a/b"},
			{url: "https://example.com/docsx", want: ReasonStartPath},
		}},
		{"start path leaf file", "https://example.com/docs/guide.html", CrawlRules{}, []link{
			{url: "https://example.com/docs/guide.html"},
			{url: "https://example.com/docs/other.html", want: ReasonStartPath},
		}},
		{"start path with subdomains", "https://example.com/blog/", CrawlRules{AllowSubdomains: true}, []link{
			{url: "https://news.example.com/blog/x"},
			{url: "https://news.example.com/other", want: ReasonStartPath},
		}},
		{"start path exempts external links", "https://example.com/blog/", CrawlRules{AllowExternalLinks: true}, []link{
			{url: "https://other.com/about"},
			{url: "https://example.com/about", want: ReasonStartPath},
		}},
		{"crawl entire domain", "https://example.com/blog/", CrawlRules{CrawlEntireDomain: true}, []link{
			{url: "https://example.com/"},
			{url: "https://example.com/about"},
			{url: "https://example.com/blog-archive"},
			{url: "https://blog.example.com/a", want: ReasonSubdomain},
		}},
		{"root start admits everything", "https://example.com", CrawlRules{}, []link{
			{url: "https://example.com/any/where"},
		}},
		{"include and exclude on the path", "https://example.com/", CrawlRules{IncludePaths: []string{"^/blog/", "^/docs/"}, ExcludePaths: []string{"/draft-", `\?`}}, []link{
			{url: "https://example.com/blog/post"},
			{url: "https://example.com/docs/a?x=1"},
			{url: "https://example.com/about", want: ReasonInclude},
			{url: "https://example.com/blog/draft-1", want: ReasonExclude},
			{url: "https://example.com/docs/draft-1", want: ReasonExclude},
		}},
		{"exclude beats include", "https://example.com/", CrawlRules{IncludePaths: []string{"blog"}, ExcludePaths: []string{"blog"}}, []link{
			{url: "https://example.com/blog", want: ReasonExclude},
		}},
		{"patterns match unescaped paths", "https://example.com/", CrawlRules{IncludePaths: []string{"^/café/"}}, []link{
			{url: "https://example.com/caf%C3%A9/menu"},
		}},
		{"regex on full url", "https://example.com/", CrawlRules{IncludePaths: []string{`^https://example\.com/docs/`}, ExcludePaths: []string{`utm_source=`}, RegexOnFullURL: true}, []link{
			{url: "https://example.com/docs/a"},
			{url: "http://example.com/docs/a", want: ReasonInclude},
			{url: "https://example.com/docs/a?utm_source=x", want: ReasonExclude},
			{url: "https://example.com/blog", want: ReasonInclude},
		}},
		{"patterns apply to external links", "https://example.com/", CrawlRules{AllowExternalLinks: true, ExcludePaths: []string{"^/private"}}, []link{
			{url: "https://other.com/private/x", want: ReasonExclude},
			{url: "https://other.com/public"},
		}},
		{"dedupe and query options do not filter", "https://example.com/", CrawlRules{DeduplicateSimilarURLs: true, IgnoreQueryParameters: true}, []link{
			{url: "https://example.com/a?utm_source=x"},
			{url: "https://www.example.com/a/index.html"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := mustRules(t, tt.start, tt.c)
			for _, l := range tt.links {
				u := mustURL(t, l.url)
				ok, reason := r.Allow(u, l.depth, l.fromExternal)
				if ok != (l.want == "") || reason != l.want {
					t.Errorf("Allow(%q, %d, %v) = %v, %q; want reason %q", l.url, l.depth, l.fromExternal, ok, reason, l.want)
				}
			}
		})
	}
}

func TestRulesAllowNil(t *testing.T) {
	t.Parallel()
	r := mustRules(t, "https://example.com/", CrawlRules{})
	if ok, reason := r.Allow(nil, 0, false); ok || reason != ReasonInvalidURL {
		t.Errorf("Allow(nil) = %v, %q", ok, reason)
	}
}

func TestNewRulesErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		start   string
		c       CrawlRules
		field   string // PatternError.Field, "" = not a pattern error
		message string // exact message, when set
	}{
		{"bad include", "https://example.com/", CrawlRules{IncludePaths: []string{"ok", "("}}, "includePaths", "error parsing regexp: missing closing ): `(`"},
		{"bad exclude", "https://example.com/", CrawlRules{ExcludePaths: []string{"a**"}}, "excludePaths", "error parsing regexp: invalid nested repetition operator: `**`"},
		{"relative start", "/blog", CrawlRules{}, "", ""},
		{"no scheme", "example.com", CrawlRules{}, "", ""},
		{"ftp start", "ftp://example.com/", CrawlRules{}, "", ""},
		{"unparsable start", "https://exa mple.com/%zz", CrawlRules{}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewRules(tt.start, tt.c)
			if !errors.Is(err, ErrInvalidOptions) {
				t.Fatalf("err = %v, want ErrInvalidOptions", err)
			}
			var pe *PatternError
			if got := errors.As(err, &pe); got != (tt.field != "") {
				t.Fatalf("errors.As(*PatternError) = %v, want %v", got, tt.field != "")
			}
			if tt.field == "" {
				return
			}
			if pe.Field != tt.field {
				t.Errorf("Field = %q, want %q", pe.Field, tt.field)
			}
			var se *syntax.Error
			if !errors.As(err, &se) {
				t.Errorf("err does not unwrap to *syntax.Error: %v", err)
			}
			if err.Error() != tt.message {
				t.Errorf("message = %q, want %q", err.Error(), tt.message)
			}
		})
	}
}

func TestRulesStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		start string
		want  string
	}{
		{"HTTPS://Example.COM", "https://example.com/"},
		{"https://example.com:443/blog/#top", "https://example.com/blog/"},
		{"http://example.com:80/?q=1", "http://example.com/?q=1"},
		{"http://example.com:8080/a", "http://example.com:8080/a"},
		{"  https://example.com/a  ", "https://example.com/a"},
		{"http://[::1]:80/", "http://[::1]/"},
	}
	for _, tt := range tests {
		r := mustRules(t, tt.start, CrawlRules{})
		if got := r.Start().String(); got != tt.want {
			t.Errorf("Start(%q) = %q, want %q", tt.start, got, tt.want)
		}
	}
}

func TestRulesAllowStart(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		start string
		c     CrawlRules
		ok    bool
	}{
		{"no patterns", "https://example.com/", CrawlRules{}, true},
		{"start matches include", "https://example.com/blog/", CrawlRules{IncludePaths: []string{"^/blog"}}, true},
		{"start misses include", "https://example.com/", CrawlRules{IncludePaths: []string{"^/blog"}}, false},
		{"full url include", "https://example.com/blog/", CrawlRules{IncludePaths: []string{`^https://example\.com/blog`}, RegexOnFullURL: true}, true},
		{"exclude does not apply to the start", "https://example.com/blog/", CrawlRules{ExcludePaths: []string{"^/blog"}}, true},
		{"file type does not apply to the start", "https://example.com/logo.png", CrawlRules{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := mustRules(t, tt.start, tt.c).AllowStart()
			if (err == nil) != tt.ok {
				t.Fatalf("AllowStart() = %v, want ok %v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrStartNotIncluded) {
				t.Errorf("err = %v, want ErrStartNotIncluded", err)
			}
		})
	}
}

func TestRulesRebase(t *testing.T) {
	t.Parallel()
	r := mustRules(t, "https://example.com/blog", CrawlRules{})
	moved := r.Rebase(mustURL(t, "https://www.example.org/news/"))
	if got := moved.Start().String(); got != "https://www.example.org/news/" {
		t.Errorf("Start() = %q", got)
	}
	if ok, reason := moved.Allow(mustURL(t, "https://example.org/news/a"), 1, false); !ok {
		t.Errorf("rebased rules reject the new site: %s", reason)
	}
	if ok, _ := moved.Allow(mustURL(t, "https://example.com/blog/a"), 1, false); ok {
		t.Error("rebased rules still admit the old site")
	}
	if ok, reason := r.Allow(mustURL(t, "https://example.com/blog/a"), 1, false); !ok {
		t.Errorf("Rebase changed the original: %s", reason)
	}
}

func TestRulesIsExternal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		c    CrawlRules
		u    string
		want bool
	}{
		{CrawlRules{}, "https://www.example.com/x", false},
		{CrawlRules{}, "http://example.com/x", false},
		{CrawlRules{}, "https://blog.example.com/x", true},
		{CrawlRules{AllowSubdomains: true}, "https://blog.example.com/x", false},
		{CrawlRules{AllowSubdomains: true}, "https://other.com/x", true},
	}
	for _, tt := range tests {
		r := mustRules(t, "https://example.com/", tt.c)
		if got := r.IsExternal(mustURL(t, tt.u)); got != tt.want {
			t.Errorf("%+v: IsExternal(%q) = %v, want %v", tt.c, tt.u, got, tt.want)
		}
	}
}

func TestStartScope(t *testing.T) {
	t.Parallel()
	tests := []struct{ path, dir, eq string }{
		{"", "", ""},
		{"/", "", ""},
		{"/index.html", "", ""},
		{"/blog/", "/blog/", "/blog"},
		{"/blog", "/blog/", "/blog"},
		{"/blog/index.php", "/blog/", "/blog"},
		{"/a/b/c", "/a/b/c/", "/a/b/c"},
	}
	for _, tt := range tests {
		if dir, eq := startScope(tt.path); dir != tt.dir || eq != tt.eq {
			t.Errorf("startScope(%q) = %q, %q; want %q, %q", tt.path, dir, eq, tt.dir, tt.eq)
		}
	}
}
