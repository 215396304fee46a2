package threat

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// hostsFile is the shape of the common published hosts-format blocklists.
const hostsFile = `# Title: a published blocklist
# Date: 2026-11-01
127.0.0.1 localhost
127.0.0.1 localhost.localdomain
255.255.255.255 broadcasthost
::1 localhost ip6-localhost ip6-loopback
0.0.0.0 0.0.0.0

# malware
0.0.0.0 malware-drop.example
0.0.0.0 phish.bank-login.example  # trailing comment
127.0.0.1	tabs.example
0.0.0.0 xn--bcher-kva.example
0.0.0.0 not_a*domain
`

const domainList = `
# one domain per line
evil.example
*.wild.example
EXAMPLE-UPPER.TEST.
münchen-phish.example
`

func newChecker(t *testing.T, content string) (*Checker, string, *fakeClock) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "blocklist")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{t: time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)}
	c, err := New(Options{BlocklistFile: path, Now: clk.now})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c, path, clk
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeClock) now() time.Time { f.mu.Lock(); defer f.mu.Unlock(); return f.t }
func (f *fakeClock) add(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}

func blocked(t *testing.T, err error, reason string) {
	t.Helper()
	var be *BlockedError
	if !errors.As(err, &be) || !errors.Is(err, ErrBlocked) || be.Reason != reason {
		t.Errorf("err = %v, want a %s refusal", err, reason)
	}
}

func TestHostsFile(t *testing.T) {
	c, _, _ := newChecker(t, hostsFile)
	for _, h := range []string{"malware-drop.example", "MALWARE-DROP.example.", "cdn.malware-drop.example",
		"phish.bank-login.example", "tabs.example", "bücher.example", "xn--bcher-kva.example"} {
		blocked(t, c.Check(h, nil), "blocklist")
	}
	for _, h := range []string{"localhost", "example.com", "bank-login.example", "drop.example", "127.0.0.1", "0.0.0.0", "not_a*domain"} {
		if err := c.Check(h, nil); err != nil {
			t.Errorf("Check(%q) = %v, want allowed", h, err)
		}
	}
	if len(c.domains) != 4 {
		t.Errorf("domains = %v, want the 4 real entries", c.domains)
	}
}

func TestDomainList(t *testing.T) {
	c, _, _ := newChecker(t, domainList)
	for _, h := range []string{"evil.example", "a.b.evil.example", "wild.example", "x.wild.example", "example-upper.test", "MÜNCHEN-phish.example", "xn--mnchen-phish-dlb.example"} {
		blocked(t, c.Check(h, nil), "blocklist")
	}
	if err := c.Check("notevil.example", nil); err != nil {
		t.Errorf("a name that only ends in the same letters: %v", err)
	}
}

func TestReloadOnChange(t *testing.T) {
	c, path, clk := newChecker(t, "first.example\n")
	blocked(t, c.Check("first.example", nil), "blocklist")
	if err := os.WriteFile(path, []byte("second.example\nthird.example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Within a second of the last stat the old list is still used.
	blocked(t, c.Check("first.example", nil), "blocklist")
	clk.add(2 * time.Second)
	if err := c.Check("first.example", nil); err != nil {
		t.Errorf("after reload, first.example: %v", err)
	}
	blocked(t, c.Check("second.example", nil), "blocklist")
	if c.reloaded != 2 {
		t.Errorf("loads = %d, want 2", c.reloaded)
	}
	// Unchanged: not read again.
	clk.add(2 * time.Second)
	_ = c.Check("x.example", nil)
	if c.reloaded != 2 {
		t.Errorf("loads = %d after no change, want 2", c.reloaded)
	}
	// Same size, new modification time: read again.
	if err := os.WriteFile(path, []byte("fourth.example\nthird.example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(path, future, future); err != nil {
		t.Fatal(err)
	}
	clk.add(2 * time.Second)
	blocked(t, c.Check("fourth.example", nil), "blocklist")

	// Removed: the last list stays; failurePolicy closed blocks the rest.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	clk.add(2 * time.Second)
	blocked(t, c.Check("fourth.example", nil), "blocklist")
	if err := c.Check("fine.example", nil); err != nil {
		t.Errorf("failing list, no override: %v", err)
	}
	if err := c.Check("fine.example", &Override{FailurePolicy: "open"}); err != nil {
		t.Errorf("failing list, open: %v", err)
	}
	blocked(t, c.Check("fine.example", &Override{FailurePolicy: "closed"}), "unavailable")
	// Back: the new content, and no longer failing.
	if err := os.WriteFile(path, []byte("fifth.example\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	clk.add(2 * time.Second)
	blocked(t, c.Check("fifth.example", nil), "blocklist")
	if err := c.Check("fine.example", &Override{FailurePolicy: "closed"}); err != nil {
		t.Errorf("recovered list, closed: %v", err)
	}
}

func TestNewFails(t *testing.T) {
	if _, err := New(Options{BlocklistFile: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("a missing blocklist file was accepted")
	}
}

func TestLongLinesSkipped(t *testing.T) {
	long := strings.Repeat("a", 10000) + ".example"
	domains, err := Parse(strings.NewReader("ok1.example\n" + long + " tail.example\nok2.example"))
	if err != nil {
		t.Fatal(err)
	}
	if !domains["ok1.example"] || !domains["ok2.example"] || domains["tail.example"] || len(domains) != 2 {
		t.Errorf("domains = %v", domains)
	}
}

func TestOverride(t *testing.T) {
	c, _, _ := newChecker(t, "listed.example\n")
	o := &Override{
		Blacklist:   []string{"bad.example", "*.tracker.example", "BÜCHER.example"},
		Whitelist:   []string{"listed.example", "ok.bad.example"},
		BlockedTLDs: []string{"zip", ".mov", "co.uk"},
	}
	cases := map[string]string{
		"bad.example":           "blacklist",
		"www.bad.example":       "", // a bare host is that host only
		"a.tracker.example":     "blacklist",
		"tracker.example":       "", // *.host is not host
		"xn--bcher-kva.example": "blacklist",
		"files.zip":             "tld",
		"clip.MOV":              "tld",
		"shop.co.uk":            "tld",
		"uk":                    "",
		"listed.example":        "", // whitelisted beats the operator list
		"sub.listed.example":    "blocklist",
		"ok.bad.example":        "",
		"93.184.216.34":         "",
	}
	for h, want := range cases {
		err := c.Check(h, o)
		if want == "" {
			if err != nil {
				t.Errorf("Check(%q) = %v, want allowed", h, err)
			}
			continue
		}
		blocked(t, err, want)
	}
	// mode off: the request's lists are ignored, the operator's apply.
	off := *o
	off.Mode = "off"
	if err := c.Check("bad.example", &off); err != nil {
		t.Errorf("mode off, blacklisted: %v", err)
	}
	blocked(t, c.Check("listed.example", &off), "blocklist")
	if err := c.Validate(&off); !errors.Is(err, ErrEnforced) {
		t.Errorf("Validate(off) with a blocklist = %v", err)
	}
	var none *Checker
	if err := none.Validate(&off); err != nil {
		t.Errorf("Validate(off) without a blocklist = %v", err)
	}
	blocked(t, none.Check("bad.example", o), "blacklist")
	if (*Override)(nil).Active() || off.Active() || !o.Active() {
		t.Error("Active is wrong")
	}
}
