package proxypool

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	t.Parallel()
	pool, err := Parse(" DE=http://u:p%40ss@10.0.0.5:3128 , https://proxy.example:8443,socks5://s:t@[::1]:1080,,socks5://127.0.0.1:9050/ ", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pool.Proxies() {
		got = append(got, fmt.Sprintf("%s|%s|%s|%s", p.Country(), p.Scheme(), p.Addr(), p))
	}
	want := []string{
		"DE|http|10.0.0.5:3128|DE=http://***@10.0.0.5:3128",
		"|https|proxy.example:8443|https://proxy.example:8443",
		"|socks5|[::1]:1080|socks5://***@[::1]:1080",
		"|socks5|127.0.0.1:9050|socks5://127.0.0.1:9050",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("parsed:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if u := pool.Proxies()[0].URL(); u.User.String() != "u:p%40ss" {
		t.Errorf("URL user info = %q, want the credentials", u.User.String())
	}
	empty, err := Parse("  ", Options{})
	if err != nil || empty.Len() != 0 {
		t.Errorf("empty list: %d proxies, %v", empty.Len(), err)
	}
}

func TestParseErrorsMaskCredentials(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ list, want string }{
		{"ftp://alice:hunter2@h:21", `entry 1 (ftp://***@h:21): scheme "ftp" is not http, https or socks5`},
		{"http://ok:1,de=http://alice:hunter2@h:1", `entry 2 (de=http://***@h:1): country "de" is not an upper-case ISO 3166-1 alpha-2 code like DE`},
		{"DEU=http://h:1", `entry 1 (DEU=http://h:1): country "DEU"`},
		{"http://alice:hunter2@h", "entry 1 (http://***@h): host:port needs a port"},
		{"http://alice:hunter2@h:0", `port "0"`},
		{"http://alice:hunter2@h:99999", "port"},
		{"http://alice:hunter2@h:80/path", "no path, query or fragment"},
		{"alice:hunter2@h:80", "entry 1 (***@h:80): not a scheme://host:port URL"},
		{"http://alice:hun ter2@h:80%", "entry 1 (http://***@h:80%): not a valid URL"},
		{"http://:hunter2@h:80", "a password without a user name"},
		{"socks5://", "no host"},
	} {
		_, err := Parse(tc.list, Options{})
		if err == nil {
			t.Errorf("Parse(%q) accepted", tc.list)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %q, want it to contain %q", tc.list, err, tc.want)
		}
		if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "alice") {
			t.Errorf("Parse(%q) error shows credentials: %q", tc.list, err)
		}
	}
}

func TestProxyNeverShowsCredentials(t *testing.T) {
	t.Parallel()
	pool, err := Parse("http://alice:hunter2@10.0.0.5:3128", Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := pool.Proxies()[0]
	var log strings.Builder
	slog.New(slog.NewJSONHandler(&log, nil)).Info("x", "proxy", p)
	js, _ := json.Marshal(map[string]any{"p": p})
	for _, s := range []string{fmt.Sprint(p), fmt.Sprintf("%v %s %+v %#v", p, p, p, p), log.String(), string(js),
		(&ProxyError{Proxy: p, Err: fmt.Errorf("boom")}).Error()} {
		if strings.Contains(s, "hunter2") || strings.Contains(s, "alice") {
			t.Errorf("credentials shown: %s", s)
		}
	}
}

func names(ps []*Proxy) string {
	var s []string
	for _, p := range ps {
		s = append(s, p.Addr())
	}
	return strings.Join(s, " ")
}

func TestPickRoundRobinSkipsFailed(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	pool, err := Parse("http://a:1,http://b:1,http://c:1", Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	pick := func(n int) string {
		var got []*Proxy
		for range n {
			p, _ := pool.Pick(Choice{})
			got = append(got, p)
		}
		return names(got)
	}
	if got := pick(4); got != "a:1 b:1 c:1 a:1" {
		t.Errorf("round robin = %s", got)
	}
	pool.Proxies()[1].Failed()
	if got := pick(4); strings.Contains(got, "b:1") {
		t.Errorf("a proxy that failed a moment ago was picked: %s", got)
	}
	now = now.Add(FailureWindow - time.Second)
	if got := pick(4); strings.Contains(got, "b:1") {
		t.Errorf("a proxy that failed 59 s ago was picked: %s", got)
	}
	now = now.Add(time.Second)
	if got := pick(3); !strings.Contains(got, "b:1") {
		t.Errorf("a proxy that failed a minute ago is still skipped: %s", got)
	}
	for _, p := range pool.Proxies() {
		p.Failed()
	}
	if got := pick(3); got == "" || strings.Count(got, ":1") != 3 {
		t.Errorf("with every proxy failed, Pick should still pick one: %q", got)
	}
	var empty *Pool
	if p, _ := empty.Pick(Choice{}); p != nil {
		t.Errorf("nil pool picked %s", p)
	}
}

func TestPickCountry(t *testing.T) {
	t.Parallel()
	pool, err := Parse("DE=http://de1:1,US=http://us1:1,DE=http://de2:1,http://any:1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for range 6 {
		p, matched := pool.Pick(Choice{Country: "DE"})
		if !matched || p.Country() != "DE" {
			t.Fatalf("Pick(DE) = %s, matched %v", p, matched)
		}
		seen[p.Addr()] = true
	}
	if !seen["de1:1"] || !seen["de2:1"] {
		t.Errorf("Pick(DE) did not rotate over both German proxies: %v", seen)
	}
	seen = map[string]bool{}
	for range 8 {
		p, matched := pool.Pick(Choice{Country: "FR"})
		if matched {
			t.Errorf("Pick(FR) matched %s", p)
		}
		seen[p.Addr()] = true
	}
	if len(seen) != 4 {
		t.Errorf("Pick(FR) should use any proxy: %v", seen)
	}
}

func TestPickSticky(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	pool, err := Parse("http://a:1,http://b:1,http://c:1,http://d:1", Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	hosts := map[string]*Proxy{}
	for round := range 3 {
		for _, h := range []string{"one.example", "two.example", "three.example", "four.example", "five.example"} {
			p, _ := pool.Pick(Choice{Sticky: "crawl-1\x00" + h})
			pool.Pick(Choice{}) // round robin in between moves nothing
			if round == 0 {
				hosts[h] = p
			} else if hosts[h] != p {
				t.Errorf("round %d: %s moved from %s to %s", round, h, hosts[h], p)
			}
		}
	}
	distinct := map[*Proxy]bool{}
	for _, p := range hosts {
		distinct[p] = true
	}
	if len(distinct) < 2 {
		t.Errorf("every host got the same proxy: %v", hosts)
	}
	// The host's proxy fails: it moves, and comes back once that proxy
	// works again.
	first := hosts["one.example"]
	first.Failed()
	moved, _ := pool.Pick(Choice{Sticky: "crawl-1\x00one.example"})
	if moved == first {
		t.Errorf("a sticky choice kept a failed proxy")
	}
	again, _ := pool.Pick(Choice{Sticky: "crawl-1\x00one.example"})
	if again != moved {
		t.Errorf("while its proxy fails the host moved again: %s then %s", moved, again)
	}
	now = now.Add(FailureWindow)
	if back, _ := pool.Pick(Choice{Sticky: "crawl-1\x00one.example"}); back != first {
		t.Errorf("after the failure window the host should be back on %s, got %s", first, back)
	}
}

func TestRoute(t *testing.T) {
	t.Parallel()
	basic, _ := Parse("DE=http://b-de:1,http://b:1", Options{})
	enh, _ := Parse("US=http://e-us:1", Options{})
	none := &Pool{}
	for _, tc := range []struct {
		name     string
		pools    Pools
		tier     string
		country  string
		given    bool
		proxy    string // Addr, "" = direct
		warnings string
	}{
		{"basic", Pools{Basic: basic, Enhanced: enh}, Basic, "DE", true, "b-de:1", ""},
		{"basic direct", Pools{}, Basic, "US", false, "", ""},
		{"basic direct named country", Pools{Basic: none}, Basic, "FR", true, "", "No proxy of country FR is configured; the request left from this server's own address."},
		{"enhanced", Pools{Basic: basic, Enhanced: enh}, Enhanced, "US", true, "e-us:1", ""},
		{"enhanced default country elsewhere", Pools{Basic: basic, Enhanced: enh}, Enhanced, "DE", false, "e-us:1", ""},
		{"enhanced named country elsewhere", Pools{Basic: basic, Enhanced: enh}, Enhanced, "DE", true, "e-us:1", "No proxy of country DE is configured; the request went through a proxy of another country."},
		{"enhanced falls back to basic", Pools{Basic: basic}, Enhanced, "DE", true, "b-de:1", "No enhanced proxies are configured (ENHANCED_PROXY_URLS); the request went through a basic proxy."},
		{"enhanced falls back to direct", Pools{}, Enhanced, "US", false, "", "No enhanced proxies are configured (ENHANCED_PROXY_URLS); the request left from this server's own address."},
	} {
		r := tc.pools.Route(tc.tier, Choice{Country: tc.country}, tc.given)
		addr := ""
		if r.Proxy != nil {
			addr = r.Proxy.Addr()
		}
		if addr != tc.proxy || strings.Join(r.Warnings, " ") != tc.warnings || r.Tier != tc.tier {
			t.Errorf("%s: proxy %q warnings %q tier %s, want %q %q", tc.name, addr, r.Warnings, r.Tier, tc.proxy, tc.warnings)
		}
	}
}
