package browser

import (
	"net/netip"
	"testing"
)

func TestGuardCheck(t *testing.T) {
	t.Parallel()
	g := newGuard(false, []string{"doubleclick.net", "ads.example"}, true)
	// Resolved hosts, so that no lookup leaves the machine.
	for host, public := range map[string]bool{"public.test": true, "private.test": false, "ads.example": false, "notdoubleclick.net.private.test": false} {
		g.cache[host] = public
	}
	tests := []struct {
		url  string
		main bool
		want verdict
	}{
		{"https://public.test/", true, allow},
		{"https://private.test/x", false, blockPrivate},
		{"http://127.0.0.1:8080/", true, blockPrivate},
		{"http://[::1]/", false, blockPrivate},
		{"http://169.254.169.254/latest/meta-data/", false, blockPrivate},
		{"http://10.1.2.3/", false, blockPrivate},
		{"http://100.64.0.1/", false, blockPrivate},
		{"http://[::ffff:192.168.0.1]/", false, blockPrivate},
		{"http://[64:ff9b::7f00:1]/", false, blockPrivate},
		{"http://8.8.8.8/", false, allow},
		{"http://localhost:3000/", false, blockPrivate},
		{"http://app.localhost/", false, blockPrivate},
		{"https://stats.g.doubleclick.net/pixel", false, blockAd},
		{"https://doubleclick.net/", false, blockAd},
		{"https://notdoubleclick.net.private.test/", false, blockPrivate},
		{"https://ads.example/", true, blockPrivate}, // the page itself is not ad-blocked, only guarded
		{"data:text/plain,hi", false, allow},
		{"file:///etc/passwd", false, blockPrivate},
		{"chrome://settings", false, blockPrivate},
	}
	for _, tt := range tests {
		if got := g.check(t.Context(), tt.url, tt.main); got != tt.want {
			t.Errorf("check(%q, main=%v) = %v, want %v", tt.url, tt.main, got, tt.want)
		}
	}

	open := newGuard(true, []string{"doubleclick.net"}, false)
	if open.active() {
		t.Error("guard active with private targets allowed and no ad blocking")
	}
	for _, u := range []string{"http://127.0.0.1/", "https://doubleclick.net/", "file:///x"} {
		if got := open.check(t.Context(), u, false); got != allow {
			t.Errorf("open guard: check(%q) = %v", u, got)
		}
	}
}

func TestPublicAddr(t *testing.T) {
	t.Parallel()
	g := newGuard(false, nil, false)
	for addr, want := range map[string]bool{
		"1.1.1.1": true, "2606:4700::1111": true, "0.0.0.0": false, "127.0.0.53": false,
		"192.168.1.1": false, "172.16.0.1": false, "fe80::1": false, "fc00::1": false,
		"198.18.0.1": false, "255.255.255.255": false, "224.0.0.1": false, "2001:db8::1": false,
	} {
		if got := g.publicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", addr, got, want)
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
