package scrape

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// memProfiles is an in-memory ProfileStore.
type memProfiles struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (p *memProfiles) LoadProfile(_ context.Context, team, name string) ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[team+"/"+name], nil
}

func (p *memProfiles) SaveProfile(_ context.Context, team, name string, st []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m[team+"/"+name] = st
	return nil
}

func TestProfiles(t *testing.T) {
	t.Parallel()
	e, _ := browserEngine(t)
	e.profiles, e.locker = &memProfiles{m: map[string][]byte{}}, NewMemoryLocker()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/echo" {
			c, _ := r.Cookie("session")
			if c != nil {
				io.WriteString(w, c.Value)
			}
			return
		}
		if r.URL.Path == "/login" {
			http.SetCookie(w, &http.Cookie{Name: "session", Value: "s3cret", Path: "/", HttpOnly: true})
		}
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<html><body><p>Hello</p><script>localStorage.setItem("seen", (localStorage.getItem("seen")||"") + "x")</script></body></html>`)
	}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	scrapeWith := func(team, path string, save bool) *Document {
		t.Helper()
		o := defaults(srv.URL+path, FormatMarkdown)
		o.Timeout = 30 * time.Second
		o.TeamID = team
		o.Profile = &Profile{Name: "shop", SaveChanges: save}
		o.Actions = []Action{{Type: "executeJavascript", Script: `fetch("/echo").then(r => r.text()).then(c => localStorage.getItem("seen") + "|" + c)`}}
		doc, err := e.Scrape(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	seen := func(d *Document) any { return d.Actions.JavascriptReturns[0].Value }

	scrapeWith("team-a", "/login", true)
	if got := seen(scrapeWith("team-a", "/", true)); got != "xx|s3cret" {
		t.Errorf("saved local storage not loaded: %v", got)
	}
	if got := seen(scrapeWith("team-a", "/", false)); got != "xxx|s3cret" {
		t.Errorf("saveChanges false must load: %v", got)
	}
	if got := seen(scrapeWith("team-a", "/", true)); got != "xxx|s3cret" {
		t.Errorf("saveChanges false must not write back: %v", got)
	}
	if got := seen(scrapeWith("team-b", "/", true)); got != "x|" {
		t.Errorf("another team's profile of the same name leaked: %v", got)
	}

	// A second saving session of the same profile is refused.
	release, ok, _ := e.locker.TryLock(ctx, "profile:team-a:shop")
	if !ok {
		t.Fatal("lock")
	}
	defer release()
	o := defaults(srv.URL, FormatMarkdown)
	o.TeamID, o.Profile = "team-a", &Profile{Name: "shop", SaveChanges: true}
	if _, err := e.Scrape(ctx, o); !errors.Is(err, ErrProfileBusy) {
		t.Errorf("second saving session: %v", err)
	}
	o.Profile.SaveChanges = false
	if _, err := e.Scrape(ctx, o); err != nil {
		t.Errorf("a loading session while another saves: %v", err)
	}
}
