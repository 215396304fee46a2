package browser

import (
	"testing"

	"github.com/firegate/firegate/internal/netguard"
)

func TestGuardCheck(t *testing.T) {
	t.Parallel()
	policy, err := netguard.New(netguard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := newGuard(policy, []string{"doubleclick.net", "ads.example"}, true)
	tests := []struct {
		url  string
		main bool
		want verdict
	}{
		// Names are decided by the proxy at dial time, not here.
		{"https://public.test/", true, allow},
		{"https://private.test/x", false, allow},
		{"http://127.0.0.1:8080/", true, blockPrivate},
		{"http://[::1]/", false, blockPrivate},
		{"http://169.254.169.254/latest/meta-data/", false, blockPrivate},
		{"http://10.1.2.3/", false, blockPrivate},
		{"http://100.64.0.1/", false, blockPrivate},
		{"http://[::ffff:192.168.0.1]/", false, blockPrivate},
		{"http://[64:ff9b::7f00:1]/", false, blockPrivate},
		{"http://[::127.0.0.1]/", false, blockPrivate},
		{"http://[fec0::1]/", false, blockPrivate},
		{"http://[2002:7f00:1::1]/", false, blockPrivate},
		{"ws://127.0.0.1:9/socket", false, blockPrivate},
		{"http://8.8.8.8/", false, allow},
		{"http://localhost:3000/", false, blockPrivate},
		{"http://app.localhost/", false, blockPrivate},
		{"https://stats.g.doubleclick.net/pixel", false, blockAd},
		{"https://doubleclick.net/", false, blockAd},
		{"https://ads.example/", true, allow}, // the page itself is not ad-blocked
		{"data:text/plain,hi", false, allow},
		{"file:///etc/passwd", false, blockPrivate},
		{"chrome://settings", false, blockPrivate},
	}
	for _, tt := range tests {
		if got := g.check(tt.url, tt.main); got != tt.want {
			t.Errorf("check(%q, main=%v) = %v, want %v", tt.url, tt.main, got, tt.want)
		}
	}

	all, err := netguard.New(netguard.Options{AllowAll: true})
	if err != nil {
		t.Fatal(err)
	}
	open := newGuard(all, []string{"doubleclick.net"}, false)
	if open.active() {
		t.Error("guard active with private targets allowed and no ad blocking")
	}
	for _, u := range []string{"http://127.0.0.1/", "https://doubleclick.net/", "file:///x"} {
		if got := open.check(u, false); got != allow {
			t.Errorf("open guard: check(%q) = %v", u, got)
		}
	}
}

func TestParseHostsAndAcceptLanguage(t *testing.T) {
	t.Parallel()
	hosts := parseHosts(defaultAdHosts)
	if len(hosts) < 50 {
		t.Errorf("bundled block list has %d hosts", len(hosts))
	}
	if got := acceptLanguage([]string{" de-DE", "", "en"}); got != "de-DE,en" {
		t.Errorf("acceptLanguage = %q", got)
	}
	if got := origin("https://user:pw@Example.COM:8443/path?q#f"); got != "https://example.com:8443" {
		t.Errorf("origin = %q", got)
	}
	if got := origin("data:text/plain,x"); got != "" {
		t.Errorf("origin(data:) = %q", got)
	}
}
