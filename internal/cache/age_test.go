package cache

import (
	"testing"
	"time"
)

func TestFresh(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		age    time.Duration
		maxAge time.Duration
		want   bool
	}{
		{"younger than maxAge", time.Hour, DefaultMaxAge, true},
		{"just made", 0, DefaultMaxAge, true},
		{"exactly maxAge is stale", DefaultMaxAge, DefaultMaxAge, false},
		{"older than maxAge", DefaultMaxAge + time.Millisecond, DefaultMaxAge, false},
		{"maxAge 0 never reads", 0, 0, false},
		{"negative maxAge never reads", 0, -time.Second, false},
		{"future entry (clock skew) is age 0", -time.Minute, time.Second, true},
		{"one year old under lockdown default", 365 * 24 * time.Hour, LockdownMaxAge, true},
		{"three years old under lockdown default", 3 * 365 * 24 * time.Hour, LockdownMaxAge, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := Entry{CreatedAt: now.Add(-tt.age)}
			if got := Fresh(e, tt.maxAge, now); got != tt.want {
				t.Errorf("Fresh(age %v, maxAge %v) = %v, want %v", tt.age, tt.maxAge, got, tt.want)
			}
		})
	}
}

func TestOldEnough(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name   string
		age    time.Duration
		minAge time.Duration
		want   bool
	}{
		{"minAge 1ms accepts an entry made now", 0, AnyAge, true},
		{"minAge 1ms accepts a very old entry", 10 * 365 * 24 * time.Hour, AnyAge, true},
		{"minAge 1ms accepts a future entry", -time.Hour, AnyAge, true},
		{"older than minAge", 2 * time.Hour, time.Hour, true},
		{"exactly minAge", time.Hour, time.Hour, true},
		{"younger than minAge", time.Hour - time.Millisecond, time.Hour, false},
		{"just made, minAge 2ms", 0, 2 * time.Millisecond, false},
		{"future entry is age 0", -time.Hour, time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := Entry{CreatedAt: now.Add(-tt.age)}
			if got := OldEnough(e, tt.minAge, now); got != tt.want {
				t.Errorf("OldEnough(age %v, minAge %v) = %v, want %v", tt.age, tt.minAge, got, tt.want)
			}
		})
	}
}

func TestUsable(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name           string
		age            time.Duration
		maxAge, minAge time.Duration
		want           bool
	}{
		{"no minAge, fresh", time.Hour, DefaultMaxAge, 0, true},
		{"no minAge, stale", 3 * 24 * time.Hour, DefaultMaxAge, 0, false},
		{"no minAge, maxAge 0", 0, 0, 0, false},
		{"minAge ignores maxAge", 3 * 24 * time.Hour, DefaultMaxAge, AnyAge, true},
		{"minAge ignores maxAge 0", time.Hour, 0, AnyAge, true},
		{"minAge too young", time.Minute, DefaultMaxAge, time.Hour, false},
		{"minAge old enough", 2 * time.Hour, DefaultMaxAge, time.Hour, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := Entry{CreatedAt: now.Add(-tt.age)}
			if got := Usable(e, tt.maxAge, tt.minAge, now); got != tt.want {
				t.Errorf("Usable(age %v, maxAge %v, minAge %v) = %v, want %v", tt.age, tt.maxAge, tt.minAge, got, tt.want)
			}
		})
	}
}

func TestKey(t *testing.T) {
	t.Parallel()
	a, b := Key("https://example.com/|markdown"), Key("https://example.com/|html")
	if len(a) != 64 || a == b {
		t.Errorf("Key = %q, %q; want distinct 64-character keys", a, b)
	}
	// Keys are stored (Redis): the same canonical string must give the same
	// key in every process and release, its SHA-256 in hex.
	if got, want := Key("x"), "2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881"; got != want {
		t.Errorf("Key(%q) = %q; want %q", "x", got, want)
	}
}
