package catalog

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/firegate/firegate/internal/store"
)

// Defaults of Keys.
const (
	DefaultLease      = 6 * time.Second
	DefaultKeep       = 24 * time.Hour
	janitorEvery      = 10 * time.Minute
	storeWriteTimeout = 10 * time.Second
)

// Keys runs the exactly-once protocol of x-request-id keys on an
// IdempotencyStore: the first request with a key claims it and runs; a
// repeat replays the stored response once it completed, or is told the
// request is in flight, unresolved (its owner died before the run
// deadline) or a different request.
type Keys struct {
	store store.IdempotencyStore
	owner string
	// Lease is how long a claim survives its owner's silence; renewed at
	// a third of it. Keep is how long a key is kept.
	Lease, Keep time.Duration
	log         *slog.Logger
}

// NewKeys returns the protocol on st for this process (a random owner id).
func NewKeys(st store.IdempotencyStore, log *slog.Logger) *Keys {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Keys{store: st, owner: "p-" + rand.Text(), Lease: DefaultLease, Keep: DefaultKeep, log: log}
}

// Outcome is what Begin decided for a request.
type Outcome int

const (
	// Run: the key is this request's; run it and Complete or Release.
	Run Outcome = iota
	// Replay: the key completed with the same request; answer Record's
	// response.
	Replay
	// InFlight: the same key is being processed.
	InFlight
	// Duplicate: the key was used for a different request.
	Duplicate
	// Unresolved: the key's owner died before its run deadline.
	Unresolved
)

// Begun is the outcome of Begin.
type Begun struct {
	Outcome Outcome
	Record  store.IdempotencyRecord
	held    *held
}

type held struct {
	k         *Keys
	team, key string
	stop      chan struct{}
	done      sync.WaitGroup
	once      sync.Once
}

// Begin claims team's key for a request identified by hash, to answer
// with scrapeID and to run for at most run. A key whose owner died is
// reclaimed once run has passed (then executes once more).
func (k *Keys) Begin(ctx context.Context, team, key string, hash []byte, scrapeID string, run time.Duration) (Begun, error) {
	c := store.IdempotencyClaim{TeamID: team, Key: key, Owner: k.owner, RequestHash: hash, ScrapeID: scrapeID,
		Lease: k.Lease, Run: run + k.Lease, Keep: k.Keep}
	rec, ok, err := k.store.ClaimRequest(ctx, c)
	if err != nil {
		return Begun{}, err
	}
	if ok {
		return Begun{Outcome: Run, Record: rec, held: k.hold(team, key, run)}, nil
	}
	if !bytes.Equal(rec.RequestHash, hash) && rec.Done {
		return Begun{Outcome: Duplicate, Record: rec}, nil
	}
	switch {
	case rec.Done:
		return Begun{Outcome: Replay, Record: rec}, nil
	case rec.Reclaimable && bytes.Equal(rec.RequestHash, hash):
		rec, ok, err = k.store.ReclaimRequest(ctx, c)
		if errors.Is(err, store.ErrNotFound) {
			return k.Begin(ctx, team, key, hash, scrapeID, run) // released or expired meanwhile
		}
		if err != nil {
			return Begun{}, err
		}
		if ok {
			k.log.WarnContext(ctx, "catalog request reclaimed from a dead owner", "team_id", team, "request_id", key)
			return Begun{Outcome: Run, Record: rec, held: k.hold(team, key, run)}, nil
		}
		if rec.Done {
			return Begun{Outcome: Replay, Record: rec}, nil
		}
		return Begun{Outcome: InFlight, Record: rec}, nil
	case rec.LeaseLapsed:
		return Begun{Outcome: Unresolved, Record: rec}, nil
	}
	return Begun{Outcome: InFlight, Record: rec}, nil
}

// hold renews the claim until Complete or Release, and at most for run:
// a request that has not ended by then lets its key become reclaimable.
func (k *Keys) hold(team, key string, run time.Duration) *held {
	h := &held{k: k, team: team, key: key, stop: make(chan struct{})}
	h.done.Add(1)
	go func() {
		defer h.done.Done()
		t := time.NewTicker(k.Lease / 3)
		defer t.Stop()
		limit := time.NewTimer(run)
		defer limit.Stop()
		for {
			select {
			case <-h.stop:
				return
			case <-limit.C:
				k.log.Warn("catalog request outlived its timeout; its key is no longer renewed", "team_id", team, "request_id", key)
				return
			case <-t.C:
				ctx, cancel := context.WithTimeout(context.Background(), k.Lease/3)
				ok, err := k.store.RenewRequest(ctx, team, key, k.owner, k.Lease)
				cancel()
				if err != nil {
					k.log.Warn("catalog request: renewing the key failed", "team_id", team, "request_id", key, "err", err)
				} else if !ok {
					k.log.Warn("catalog request: the key was lost to another process", "team_id", team, "request_id", key)
					return
				}
			}
		}
	}()
	return h
}

func (h *held) end() {
	h.once.Do(func() { close(h.stop) })
	h.done.Wait()
}

// Complete stores the response of a request that ran (b.Outcome Run).
func (k *Keys) Complete(ctx context.Context, b Begun, status int, body []byte) error {
	if b.held == nil {
		return errors.New("catalog: complete: the key is not held")
	}
	b.held.end()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeWriteTimeout)
	defer cancel()
	if err := k.store.CompleteRequest(ctx, b.held.team, b.held.key, k.owner, status, body); err != nil {
		return fmt.Errorf("catalog: complete: %w", err)
	}
	return nil
}

// Release frees the key of a request that ended before anything ran.
func (k *Keys) Release(ctx context.Context, b Begun) {
	if b.held == nil {
		return
	}
	b.held.end()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeWriteTimeout)
	defer cancel()
	if err := k.store.ReleaseRequest(ctx, b.held.team, b.held.key, k.owner); err != nil {
		k.log.WarnContext(ctx, "catalog request: releasing the key failed; it stays until its lease lapses", "err", err)
	}
}

// Janitor deletes expired keys every few minutes until ctx ends.
func (k *Keys) Janitor(ctx context.Context) {
	t := time.NewTicker(janitorEvery)
	defer t.Stop()
	for {
		if n, err := k.store.DeleteExpiredRequests(ctx); err != nil && ctx.Err() == nil {
			k.log.WarnContext(ctx, "deleting expired catalog request keys failed", "err", err)
		} else if n > 0 {
			k.log.DebugContext(ctx, "expired catalog request keys deleted", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
