package cache

import "time"

// DefaultMaxAge is the maxAge of a scrape that sets none: 2 days.
const DefaultMaxAge = 2 * 24 * time.Hour

// LockdownMaxAge is the maxAge of a lockdown scrape that sets none: 2 years.
const LockdownMaxAge = 2 * 365 * 24 * time.Hour

// AnyAge is the minAge (1 ms) that accepts cached data of any age.
const AnyAge = time.Millisecond

// Age returns how old e is at now; an entry stamped in the future (clock skew
// between replicas) has age 0.
func Age(e Entry, now time.Time) time.Duration {
	return max(now.Sub(e.CreatedAt), 0)
}

// Fresh reports whether e may answer a request with this maxAge: it must be
// strictly younger than maxAge. maxAge <= 0 means the cache is never read, so
// nothing is fresh.
func Fresh(e Entry, maxAge time.Duration, now time.Time) bool {
	if maxAge <= 0 {
		return false
	}
	return Age(e, now) < maxAge
}

// OldEnough reports whether e may answer a cache-only request with this
// minAge, "the minimum age of acceptable cached data": e must be at least
// minAge old. A minAge of AnyAge (1 ms) or less accepts an entry of any age,
// even one made this millisecond.
func OldEnough(e Entry, minAge time.Duration, now time.Time) bool {
	if minAge <= AnyAge {
		return true
	}
	return Age(e, now) >= minAge
}

// Usable reports whether e may answer a request. With minAge > 0 the request
// is cache-only and only OldEnough applies (maxAge does not bound it: the
// caller asked for old data and gets nothing fresher). Otherwise e must be
// Fresh under maxAge.
func Usable(e Entry, maxAge, minAge time.Duration, now time.Time) bool {
	if minAge > 0 {
		return OldEnough(e, minAge, now)
	}
	return Fresh(e, maxAge, now)
}
