package media

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"time"

	"github.com/firegate/firegate/internal/errcode"
)

// ErrQuotaExceeded is returned by Put when the team's stored media would
// exceed its quota.
var ErrQuotaExceeded = errcode.New("media: the team's media quota is used up", errcode.Exhausted, "MEDIA_QUOTA_EXCEEDED",
	"Media quota exceeded: this team's stored screenshots, PDFs, audio and video reach its quota. Screenshots and PDFs are kept 24 hours, audio and video one hour; retry once older ones have expired.")

// DefaultTeamQuota is the default quota of one team's stored media: 1 GiB
// (at most 24 hours of screenshots and PDFs).
const DefaultTeamQuota = 1 << 30

// rescanEvery is how long a team's measured usage is trusted before the
// store is measured again; files written meanwhile by this process are
// added as they are written, those of other processes sharing the store
// are seen at the next measurement.
const rescanEvery = 30 * time.Second

// teamTag is the part of an id naming its team: 64 bits of the team id's
// SHA-256, so the id says nothing of the team but its files can be found.
func teamTag(teamID string) string {
	if teamID == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(teamID))
	return hex.EncodeToString(sum[:8])
}

// quota tracks the stored bytes of each team against a limit.
type quota struct {
	limit int64 // 0 = none
	now   func() time.Time

	mu    sync.Mutex
	teams map[string]*teamUsage // by tag
}

type teamUsage struct {
	mu      sync.Mutex
	bytes   int64 // measured, plus what this process wrote since
	pending int64 // being written now
	scanned time.Time
}

// reserve makes room for n bytes of the team tagged tag, measuring its
// usage with measure when the last measurement is old. done must be called
// with whether the bytes were written.
func (q *quota) reserve(ctx context.Context, tag string, n int64, measure func(context.Context, string) (int64, error)) (done func(written bool), err error) {
	if q.limit <= 0 || tag == "" {
		return func(bool) {}, nil
	}
	q.mu.Lock()
	u := q.teams[tag]
	if u == nil {
		u = &teamUsage{}
		q.teams[tag] = u
	}
	q.mu.Unlock()

	u.mu.Lock()
	defer u.mu.Unlock()
	if now := q.now(); now.Sub(u.scanned) >= rescanEvery {
		b, err := measure(ctx, tag)
		if err != nil {
			return nil, err
		}
		u.bytes, u.scanned = b, now
	}
	if u.bytes+u.pending+n > q.limit {
		return nil, ErrQuotaExceeded
	}
	u.pending += n
	var once sync.Once
	return func(written bool) {
		once.Do(func() {
			u.mu.Lock()
			defer u.mu.Unlock()
			u.pending -= n
			if written {
				u.bytes += n
			}
		})
	}, nil
}
