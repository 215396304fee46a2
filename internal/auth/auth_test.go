package auth

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/apikey"
	"github.com/firegate/firegate/internal/store"
)

// fakeKeys knows one key; it counts lookups and can "revoke" it.
type fakeKeys struct {
	hash    []byte
	revoked atomic.Bool
	calls   atomic.Int32
	fail    error
}

func (f *fakeKeys) APIKeyByHash(_ context.Context, h []byte) (store.APIKey, store.Team, error) {
	f.calls.Add(1)
	if f.fail != nil {
		return store.APIKey{}, store.Team{}, f.fail
	}
	if string(h) != string(f.hash) || f.revoked.Load() {
		return store.APIKey{}, store.Team{}, store.ErrNotFound
	}
	return store.APIKey{ID: "k"}, store.Team{ID: "t1", Name: "acme"}, nil
}

func (f *fakeKeys) TeamLimits(_ context.Context, teamID string) (store.TeamLimits, error) {
	n := 3
	return store.TeamLimits{ConcurrencyLimit: &n}, nil
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	const key = "fc-0123456789abcdef0123456789abcdef"
	ctx := context.Background()
	keys := &fakeKeys{hash: apikey.Hash(key)}
	a := New(keys, Options{CacheTTL: time.Minute})
	now := time.Unix(1000, 0)
	a.now = func() time.Time { return now }

	team, err := a.Authenticate(ctx, key)
	if err != nil || team.ID != "t1" || team.Name != "acme" || team.APIKeyID != "k" || *team.Limits.ConcurrencyLimit != 3 || team.Unlimited {
		t.Fatalf("got %+v, %v", team, err)
	}
	if _, err := a.Authenticate(ctx, key); err != nil || keys.calls.Load() != 1 {
		t.Fatalf("second call should hit the cache: calls=%d err=%v", keys.calls.Load(), err)
	}
	for _, bad := range []string{"", "fc-other", strings.Repeat("x", MaxKeyLen+1)} {
		if _, err := a.Authenticate(ctx, bad); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("key %.20q: err %v, want ErrInvalidKey", bad, err)
		}
	}

	// A revoked key keeps working only until the cache entry expires.
	keys.revoked.Store(true)
	now = now.Add(2 * time.Minute)
	if _, err := a.Authenticate(ctx, key); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("revoked key after TTL: %v", err)
	}
}

func TestAuthenticateStoreFailureIsNotInvalidKey(t *testing.T) {
	t.Parallel()
	a := New(&fakeKeys{fail: errors.New("db down")}, Options{})
	_, err := a.Authenticate(context.Background(), "fc-x")
	if err == nil || errors.Is(err, ErrInvalidKey) {
		t.Fatalf("store failure must surface as a server error, got %v", err)
	}
}

func TestDisabled(t *testing.T) {
	t.Parallel()
	a := New(nil, Options{Disabled: true})
	for _, key := range []string{"", "anything"} {
		team, err := a.Authenticate(context.Background(), key)
		if err != nil || team.ID != SelfHostedTeamID || !team.Unlimited {
			t.Errorf("key %q: %+v %v", key, team, err)
		}
	}
}
