package interact

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/sqlite"
	"github.com/firegate/firegate/internal/testenv"
)

// sqliteProfiles adapts the store's profile state (as cmd/server does).
type sqliteProfiles struct{ st *sqlite.Store }

func (p sqliteProfiles) LoadProfile(ctx context.Context, teamID, name string) ([]byte, error) {
	b, err := p.st.ProfileState(ctx, teamID, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return b, err
}

func (p sqliteProfiles) SaveProfile(ctx context.Context, teamID, name string, state []byte) error {
	return p.st.SaveProfileState(ctx, teamID, name, state)
}

// TestProfile: a session's profile is saved when it ends and loaded by the
// next one; a second saving session of the profile is refused meanwhile.
func TestProfile(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" {
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "s3cret", Path: "/", MaxAge: 3600})
		}
		fmt.Fprint(w, `<html><body>hello</body></html>`)
	}))
	t.Cleanup(srv.Close)
	st := testStore(t)
	tm, err := st.CreateTeam(t.Context(), "profiles")
	if err != nil {
		t.Fatal(err)
	}
	m := New(Config{Store: st, Browser: testPool(t), Profiles: sqliteProfiles{st}, Locker: scrape.NewMemoryLocker(), Log: testenv.Logger(t)})
	ctx := ctxFor(t, 60*time.Second)
	open := func(save bool) (store.InteractSession, error) {
		return m.Create(ctx, CreateParams{TeamID: tm.ID, TTL: time.Minute, ActivityTTL: time.Minute, Profile: &Profile{Name: "shop", SaveChanges: save}})
	}
	first, err := open(true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open(true); !errors.Is(err, ErrProfileBusy) {
		t.Errorf("second saving session: %v, want ErrProfileBusy", err)
	}
	reader, err := open(false) // loading without saving is allowed meanwhile
	if err != nil {
		t.Fatal(err)
	}
	code := func(rec store.InteractSession, path string) string {
		res, err := m.Execute(ctx, rec, ExecParams{Code: fmt.Sprintf("await page.goto(%q); console.log(await page.evaluate(() => document.cookie))", srv.URL+path), Timeout: 10 * time.Second})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("execute: %+v, %v", res, err)
		}
		return res.Stdout
	}
	if got := code(first, "/login"); got != "sid=s3cret\n" {
		t.Fatalf("after login: %q", got)
	}
	if got := code(reader, "/"); got != "\n" {
		t.Errorf("the reading session saw %q before the profile was saved", got)
	}
	if _, err := m.Delete(ctx, tm.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	m.Delete(ctx, tm.ID, reader.ID)
	next, err := open(true)
	if err != nil {
		t.Fatalf("saving session after the first ended: %v", err)
	}
	defer m.Delete(ctx, tm.ID, next.ID)
	if got := code(next, "/"); got != "sid=s3cret\n" {
		t.Errorf("the next session saw %q, want the saved cookie", got)
	}
}
