package scrape

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/errcode"
)

// ProfileStore keeps browser profile state per team. Load returns nil, nil
// for a profile never saved.
type ProfileStore interface {
	LoadProfile(ctx context.Context, teamID, name string) ([]byte, error)
	SaveProfile(ctx context.Context, teamID, name string, state []byte) error
}

// ProfileLocker grants one saving session per profile at a time. TryLock
// returns ok false when another holds key.
type ProfileLocker interface {
	TryLock(ctx context.Context, key string) (release func(), ok bool, err error)
}

// openProfile loads the profile's state and, with saveChanges, takes its
// lock and returns save: save(state) writes the state back and releases the
// lock; save(nil) only releases it. Both are safe to call more than once.
func (e *Engine) openProfile(ctx context.Context, o *Options) (*browser.State, func(*browser.State) error, error) {
	p := o.Profile
	var save func(*browser.State) error
	if p.SaveChanges {
		release, ok, err := e.locker.TryLock(ctx, "profile:"+o.TeamID+":"+p.Name)
		if err != nil {
			return nil, nil, fmt.Errorf("scrape: profile lock: %w", err)
		}
		if !ok {
			return nil, nil, &errcode.Failure{Kind: ErrProfileBusy, Cause: ErrProfileBusy,
				Msg: fmt.Sprintf("Conflict: another session is saving profile %q; use saveChanges: false to load it without saving, or retry when that session ends.", p.Name)}
		}
		var once sync.Once
		save = func(st *browser.State) error {
			var err error
			once.Do(func() {
				defer release()
				if st == nil {
					return
				}
				var b []byte
				if b, err = json.Marshal(st); err == nil {
					err = e.profiles.SaveProfile(context.WithoutCancel(ctx), o.TeamID, p.Name, b)
				}
				if err != nil {
					err = fmt.Errorf("scrape: save profile: %w", err)
				}
			})
			return err
		}
	}
	raw, err := e.profiles.LoadProfile(ctx, o.TeamID, p.Name)
	if err != nil {
		if save != nil {
			save(nil)
		}
		return nil, nil, fmt.Errorf("scrape: load profile: %w", err)
	}
	if raw == nil {
		return nil, save, nil
	}
	var st browser.State
	if err := json.Unmarshal(raw, &st); err != nil {
		e.log.WarnContext(ctx, "profile state unreadable; starting empty", "profile", p.Name, "err", err)
		return nil, save, nil
	}
	return &st, save, nil
}

// MemoryLocker is a ProfileLocker for one process.
type MemoryLocker struct {
	mu   sync.Mutex
	held map[string]bool
}

// NewMemoryLocker returns an empty MemoryLocker.
func NewMemoryLocker() *MemoryLocker { return &MemoryLocker{held: map[string]bool{}} }

// TryLock takes key if it is free.
func (l *MemoryLocker) TryLock(_ context.Context, key string) (func(), bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[key] {
		return nil, false, nil
	}
	l.held[key] = true
	var once sync.Once
	return func() {
		once.Do(func() {
			l.mu.Lock()
			delete(l.held, key)
			l.mu.Unlock()
		})
	}, true, nil
}
