package store

import (
	"context"
	"time"
)

// IdempotencyStore keeps the x-request-id keys of catalog calls, per team:
// which request a key was first used for (a hash of it), whether that
// request is still running or completed, and the response it completed
// with, so that a retry with the key replays the response instead of
// running the calls again.
//
// A running record is held by its owner (one process) under a lease the
// owner renews while it works. A record whose lease lapsed belongs to an
// owner presumed dead; once its run deadline (the call's timeout) has
// passed too, another process may reclaim it and run the request. Times
// are the database's clock.
type IdempotencyStore interface {
	// ClaimRequest claims (TeamID, Key) for c.Owner: when the team has no
	// record of the key, or only an expired one, it stores a running
	// record and returns it with claimed true. Otherwise it returns the
	// existing record unchanged with claimed false. Of concurrent claims
	// of one key exactly one succeeds.
	ClaimRequest(ctx context.Context, c IdempotencyClaim) (rec IdempotencyRecord, claimed bool, err error)
	// ReclaimRequest hands a running record whose lease lapsed and whose
	// run deadline passed over to c.Owner, with a new lease and run
	// deadline (its scrape id and request hash are kept), and reports
	// whether it did; of concurrent reclaims exactly one succeeds.
	// ErrNotFound if there is no live record of the key.
	ReclaimRequest(ctx context.Context, c IdempotencyClaim) (rec IdempotencyRecord, reclaimed bool, err error)
	// RenewRequest extends the lease of the running record held by owner
	// to lease from now, reporting whether owner still holds it.
	RenewRequest(ctx context.Context, teamID, key, owner string, lease time.Duration) (bool, error)
	// CompleteRequest records the final response of the running record
	// held by owner; ErrNotFound when owner does not hold it.
	CompleteRequest(ctx context.Context, teamID, key, owner string, status int, response []byte) error
	// ReleaseRequest deletes the running record held by owner (its
	// request ended before anything ran), so that the key can be used
	// again; no error when owner does not hold it.
	ReleaseRequest(ctx context.Context, teamID, key, owner string) error
	// DeleteExpiredRequests deletes the records past their expiry and
	// returns how many it deleted.
	DeleteExpiredRequests(ctx context.Context) (int64, error)
}

// IdempotencyClaim is a request to hold an idempotency key.
type IdempotencyClaim struct {
	TeamID, Key string
	Owner       string // the claiming process's id
	RequestHash []byte // identifies the request's parameters
	ScrapeID    string // the id the request answers with
	// Lease is how long the record stays the owner's without renewal.
	Lease time.Duration
	// Run is how long the request may run (its timeout): until then a
	// record whose owner died is unresolved, after it reclaimable.
	Run time.Duration
	// Keep is how long the record is kept after the claim (24 hours).
	Keep time.Duration
}

// IdempotencyRecord is the stored state of an idempotency key.
type IdempotencyRecord struct {
	TeamID, Key string
	Owner       string
	RequestHash []byte
	ScrapeID    string
	// Done is set once the request completed; Status and Response are
	// then its HTTP status and body.
	Done     bool
	Status   int
	Response []byte
	// LeaseLapsed reports, for a running record, that its owner stopped
	// renewing it: the owner is presumed dead.
	LeaseLapsed bool
	// Reclaimable reports, for a running record, that its lease lapsed
	// and its run deadline passed: ReclaimRequest may take it over.
	Reclaimable bool
	CreatedAt   time.Time
}
