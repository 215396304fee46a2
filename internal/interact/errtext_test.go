package interact

import (
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/actions"
	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/testenv"
)

// closedPort is a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// shownAs checks that err is kind with the client message want, which
// names none of leaks, while its text (what is logged) keeps cause.
func shownAs(t *testing.T, err, kind error, want, cause string, leaks ...string) {
	t.Helper()
	var e *errcode.Failure
	if !errors.Is(err, kind) || !errors.As(err, &e) {
		t.Fatalf("err = %v; want %v with a client message", err, kind)
	}
	if e.ClientMessage() != want {
		t.Errorf("client message %q; want %q", e.ClientMessage(), want)
	}
	for _, leak := range append(leaks, "browser:", "interact:", "actions:", "devtools") {
		if strings.Contains(e.ClientMessage(), leak) {
			t.Errorf("client message %q shows %q", e.ClientMessage(), leak)
		}
	}
	if !strings.Contains(err.Error(), cause) {
		t.Errorf("the logged text %q lacks the cause %q", err.Error(), cause)
	}
}

// TestBrowserErrorsShowNoInternals: a session whose browser cannot be
// reached (its DevTools address) or whose scrape cannot be replayed (in
// the real Chrome) fails with a message in the client's terms: no DevTools
// address, no Go package of the browser's error; its text, which the API
// logs, keeps the browser's.
func TestBrowserErrorsShowNoInternals(t *testing.T) {
	t.Run("devtools unreachable", func(t *testing.T) {
		devtools := "ws://" + closedPort(t) + "/devtools/browser/0b1c"
		remote := browser.New(browser.Options{RemoteURL: devtools, MaxTabs: 1, AllowPrivate: true}, testenv.Logger(t))
		t.Cleanup(func() { remote.Close() })
		m := New(Config{Store: testStore(t), Browser: remote, Ledger: &ledger{}, Log: testenv.Logger(t)})
		_, err := m.Create(ctxFor(t, 30*time.Second), CreateParams{TeamID: team, TTL: time.Minute, ActivityTTL: time.Minute})
		shownAs(t, err, ErrUnavailable, "The browser could not open a session.", "0b1c", "127.0.0.1", "0b1c", "ws://")
	})
	pool := testPool(t)
	srv := site(t)
	for _, tc := range []struct {
		name   string
		replay Replay
		want   string
		cause  string
	}{
		{"page not loaded", Replay{URL: "http://" + closedPort(t) + "/"},
			"Replaying the scrape failed: the page could not be loaded in the browser.", "ERR_CONNECTION_REFUSED"},
		{"action failed", Replay{URL: srv.URL + "/", Actions: []actions.Action{{Type: actions.TypeClick, Selector: "#missing"}}},
			"Replaying the scrape failed: action 0 (click) failed: ", "#missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Config{Store: testStore(t), Browser: pool, Ledger: &ledger{}, Log: testenv.Logger(t)})
			_, err := m.Create(ctxFor(t, 60*time.Second), CreateParams{TeamID: team, ScrapeID: "s1", TTL: time.Minute, ActivityTTL: time.Minute, Replay: &tc.replay})
			var e *errcode.Failure
			if errors.As(err, &e) && strings.HasPrefix(e.Msg, tc.want) && strings.HasSuffix(tc.want, ": ") {
				tc.want = e.Msg // the action's own reason follows
			}
			shownAs(t, err, ErrReplay, tc.want, tc.cause, "127.0.0.1")
			if m.Held() != 0 {
				t.Errorf("%d sessions held after a failed replay", m.Held())
			}
		})
	}
}
