package limits

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisOptions tunes a Redis limiter. The zero value uses the defaults.
type RedisOptions struct {
	// LeaseTTL is how long a held slot survives without renewal, so slots
	// of a crashed replica free themselves; holders renew every third of
	// it. Default 30 s.
	LeaseTTL time.Duration
	// QueueTTL is how long a queued caller's place survives without a poll
	// (a crashed replica's waiters leave the queue). Default 5 s.
	QueueTTL time.Duration
	// MaxPoll caps the interval at which queued callers retry; a release on
	// the same replica wakes them at once. Default 50 ms.
	MaxPoll time.Duration
	// Backoff is how long Redis is skipped, and Local used instead, after a
	// Redis failure. Default 1 s.
	Backoff time.Duration
}

// Redis is a Limiter shared by every replica using the same Redis server and
// key prefix. Time comes from the Redis server, so replica clocks do not
// matter. While Redis is unreachable it falls back to a Local limiter (limits
// then hold per replica), logging "limits unavailable" once per outage and
// "limits recovered" when Redis answers again. It is safe for concurrent use.
type Redis struct {
	client *redis.Client
	prefix string
	log    *slog.Logger
	opts   RedisOptions
	local  *Local
	now    func() time.Time

	acquire *redis.Script
	renew   *redis.Script
	status  *redis.Script
	allow   *redis.Script

	mu        sync.Mutex
	down      bool
	downUntil time.Time
	wake      map[string]chan struct{} // per team, closed on a local release
}

var _ Limiter = (*Redis)(nil)

// acquireScript removes expired leases and queued callers, queues the
// caller (ARGV[4], a ticket) if new, and grants it a lease when a slot is
// free and it is among the first queued callers that free slots can serve.
// KEYS: leases (zset ticket -> expiry ms), queue (zset ticket -> arrival
// sequence), queue expiries (zset ticket -> expiry ms), sequence counter.
// ARGV: lease ttl ms, queue ttl ms, limit, ticket.
// Returns {granted (1/0), leases held, callers queued}.
const acquireScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local leaseTTL, queueTTL, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local ticket = ARGV[4]
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local dead = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for _, d in ipairs(dead) do
  redis.call('ZREM', KEYS[2], d)
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local keep = math.max(leaseTTL, queueTTL) * 2
local rank = redis.call('ZRANK', KEYS[2], ticket)
if not rank then
  redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[4]), ticket)
  redis.call('PEXPIRE', KEYS[4], keep)
  rank = redis.call('ZRANK', KEYS[2], ticket)
end
local held = redis.call('ZCARD', KEYS[1])
if held < limit and rank < limit - held then
  redis.call('ZREM', KEYS[2], ticket)
  redis.call('ZREM', KEYS[3], ticket)
  redis.call('ZADD', KEYS[1], now + leaseTTL, ticket)
  redis.call('PEXPIRE', KEYS[1], keep)
  return {1, held + 1, redis.call('ZCARD', KEYS[2])}
end
redis.call('ZADD', KEYS[3], now + queueTTL, ticket)
redis.call('PEXPIRE', KEYS[2], keep)
redis.call('PEXPIRE', KEYS[3], keep)
return {0, held, redis.call('ZCARD', KEYS[2])}
`

// renewScript extends a held lease (KEYS[1], ARGV[1] ticket) by ARGV[2] ms;
// returns 0 when the lease had expired and was removed.
const renewScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = redis.call('ZADD', KEYS[1], 'XX', 'CH', now + tonumber(ARGV[2]), ARGV[1])
if n == 0 and not redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  return 0
end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 1
`

// statusScript returns {leases held, callers queued} after removing the
// expired ones. KEYS as acquireScript's first three.
const statusScript = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local dead = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now)
for _, d in ipairs(dead) do
  redis.call('ZREM', KEYS[2], d)
end
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
return {redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2])}
`

// allowScript counts a request in a fixed window that starts with its first
// request: KEYS[1] counter, ARGV[1] limit, ARGV[2] window ms. A rejected
// request is not counted. Returns {allowed (1/0), count, ms until reset}.
const allowScript = `
local limit = tonumber(ARGV[1])
local n = tonumber(redis.call('GET', KEYS[1]) or '0')
local ttl = redis.call('PTTL', KEYS[1])
if n > 0 and ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
if n >= limit then
  return {0, n, ttl}
end
n = redis.call('INCR', KEYS[1])
if n == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {1, n, ttl}
`

// NewRedis returns a limiter keeping its state under prefix in client's
// database. The client is owned by the caller; it should honour context
// deadlines (redis.Options.ContextTimeoutEnabled).
func NewRedis(client *redis.Client, prefix string, log *slog.Logger, opts RedisOptions) *Redis {
	if opts.LeaseTTL <= 0 {
		opts.LeaseTTL = 30 * time.Second
	}
	if opts.QueueTTL <= 0 {
		opts.QueueTTL = 5 * time.Second
	}
	if opts.MaxPoll <= 0 {
		opts.MaxPoll = 50 * time.Millisecond
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	return &Redis{
		client:  client,
		prefix:  prefix,
		log:     log,
		opts:    opts,
		local:   NewLocal(),
		now:     time.Now,
		acquire: redis.NewScript(acquireScript),
		renew:   redis.NewScript(renewScript),
		status:  redis.NewScript(statusScript),
		allow:   redis.NewScript(allowScript),
		wake:    map[string]chan struct{}{},
	}
}

// keys returns the concurrency keys of a team; the {teamID} hash tag keeps
// them in one Redis Cluster slot.
func (r *Redis) keys(teamID string) []string {
	base := r.prefix + "conc:{" + teamID + "}:"
	return []string{base + "leases", base + "queue", base + "queue-exp", base + "seq"}
}

// Acquire takes one of the team's slots, queueing in arrival order across
// replicas while all limit slots are held.
func (r *Redis) Acquire(ctx context.Context, teamID string, limit int) (func(), time.Duration, error) {
	if limit <= 0 {
		return func() {}, 0, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("limits: acquire: %w", err)
	}
	if r.skipping() {
		return r.local.Acquire(ctx, teamID, limit)
	}
	keys := r.keys(teamID)
	ticket := rand.Text()
	var start time.Time
	poll := time.Millisecond
	for attempt := 0; ; attempt++ {
		wake := r.wakeChan(teamID)
		res, err := r.runAcquire(ctx, keys, limit, ticket)
		if err != nil {
			if ctx.Err() != nil || deadlinePassed(ctx) {
				r.leave(ctx, keys, ticket)
				return nil, r.since(start), fmt.Errorf("limits: acquire: %w: %w", ErrConcurrencyTimeout, ctx.Err())
			}
			r.failed(ctx, err)
			release, waited, err := r.local.Acquire(ctx, teamID, limit)
			return release, r.since(start) + waited, err
		}
		r.succeeded(ctx)
		if res == 1 {
			var waited time.Duration
			if attempt > 0 {
				waited = max(r.since(start), time.Nanosecond)
			}
			return r.holder(ctx, teamID, keys[0], ticket), waited, nil
		}
		if attempt == 0 {
			start = r.now()
		}
		timer := time.NewTimer(poll)
		select {
		case <-ctx.Done():
			timer.Stop()
			r.leave(ctx, keys, ticket)
			return nil, r.since(start), fmt.Errorf("limits: acquire: %w: %w", ErrConcurrencyTimeout, ctx.Err())
		case <-wake:
			timer.Stop()
		case <-timer.C:
		}
		poll = min(poll*2, r.opts.MaxPoll)
	}
}

func (r *Redis) runAcquire(ctx context.Context, keys []string, limit int, ticket string) (int64, error) {
	vals, err := r.acquire.Run(ctx, r.client, keys,
		r.opts.LeaseTTL.Milliseconds(), r.opts.QueueTTL.Milliseconds(), limit, ticket).Int64Slice()
	if err != nil {
		return 0, err
	}
	if len(vals) != 3 {
		return 0, fmt.Errorf("limits: acquire script returned %d values", len(vals))
	}
	return vals[0], nil
}

func (r *Redis) since(start time.Time) time.Duration {
	if start.IsZero() {
		return 0
	}
	return r.now().Sub(start)
}

// leave removes an abandoned caller from the queue.
func (r *Redis) leave(ctx context.Context, keys []string, ticket string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if _, err := r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, keys[1], ticket)
		p.ZRem(ctx, keys[2], ticket)
		return nil
	}); err != nil {
		r.log.WarnContext(ctx, "concurrency queue leave failed", "error", err)
	}
}

// holder starts renewing the lease and returns its release function.
func (r *Redis) holder(ctx context.Context, teamID, leases, ticket string) func() {
	bg := context.WithoutCancel(ctx)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(r.opts.LeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
			}
			rctx, cancel := context.WithTimeout(bg, r.opts.LeaseTTL/3)
			ok, err := r.renew.Run(rctx, r.client, []string{leases}, ticket, r.opts.LeaseTTL.Milliseconds()).Int()
			cancel()
			switch {
			case err != nil:
				r.log.WarnContext(bg, "concurrency lease renewal failed", "team_id", teamID, "error", err)
			case ok == 0:
				r.log.WarnContext(bg, "concurrency lease lost", "team_id", teamID)
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(stop)
			<-done
			rctx, cancel := context.WithTimeout(bg, time.Second)
			defer cancel()
			if err := r.client.ZRem(rctx, leases, ticket).Err(); err != nil {
				// The lease expires by itself after LeaseTTL.
				r.log.WarnContext(bg, "concurrency release failed", "team_id", teamID, "error", err)
			}
			r.notify(teamID)
		})
	}
}

// wakeChan returns the channel closed at the next local release of the
// team's slots.
func (r *Redis) wakeChan(teamID string) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := r.wake[teamID]
	if ch == nil {
		ch = make(chan struct{})
		r.wake[teamID] = ch
	}
	return ch
}

func (r *Redis) notify(teamID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ch := r.wake[teamID]; ch != nil {
		close(ch)
		delete(r.wake, teamID)
	}
}

// InUse returns how many of the team's slots are held across replicas.
func (r *Redis) InUse(ctx context.Context, teamID string) (int, error) {
	held, _, err := r.counts(ctx, teamID)
	return held, err
}

// Waiting returns how many callers are queued for the team's slots across
// replicas.
func (r *Redis) Waiting(ctx context.Context, teamID string) (int, error) {
	_, queued, err := r.counts(ctx, teamID)
	return queued, err
}

func (r *Redis) counts(ctx context.Context, teamID string) (held, queued int, err error) {
	if r.skipping() {
		return r.localCounts(ctx, teamID)
	}
	vals, err := r.status.Run(ctx, r.client, r.keys(teamID)[:3]).Int64Slice()
	if err == nil && len(vals) != 2 {
		err = fmt.Errorf("status script returned %d values", len(vals))
	}
	if err != nil {
		if ctx.Err() != nil {
			return 0, 0, fmt.Errorf("limits: status: %w", ctx.Err())
		}
		r.failed(ctx, err)
		return r.localCounts(ctx, teamID)
	}
	r.succeeded(ctx)
	return int(vals[0]), int(vals[1]), nil
}

func (r *Redis) localCounts(ctx context.Context, teamID string) (int, int, error) {
	held, err := r.local.InUse(ctx, teamID)
	if err != nil {
		return 0, 0, err
	}
	queued, err := r.local.Waiting(ctx, teamID)
	return held, queued, err
}

// Allow counts one request of the team for class in a window shared by all
// replicas; the window starts with its first request and lasts one minute.
func (r *Redis) Allow(ctx context.Context, teamID, class string, perMinute int) (Decision, error) {
	if perMinute <= 0 {
		return Decision{Allowed: true}, nil
	}
	if err := ctx.Err(); err != nil {
		return Decision{}, fmt.Errorf("limits: allow: %w", err)
	}
	if r.skipping() {
		return r.local.Allow(ctx, teamID, class, perMinute)
	}
	key := r.prefix + "rate:{" + teamID + "}:" + class
	vals, err := r.allow.Run(ctx, r.client, []string{key}, perMinute, Window.Milliseconds()).Int64Slice()
	if err == nil && len(vals) != 3 {
		err = fmt.Errorf("allow script returned %d values", len(vals))
	}
	if err != nil {
		if ctx.Err() != nil {
			return Decision{}, fmt.Errorf("limits: allow: %w", ctx.Err())
		}
		r.failed(ctx, err)
		return r.local.Allow(ctx, teamID, class, perMinute)
	}
	r.succeeded(ctx)
	return decision(vals[0] == 1, perMinute, int(vals[1]), time.Duration(vals[2])*time.Millisecond, r.now()), nil
}

// skipping reports whether Redis is being skipped after a failure.
func (r *Redis) skipping() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.down && r.now().Before(r.downUntil)
}

func (r *Redis) failed(ctx context.Context, err error) {
	r.mu.Lock()
	started := !r.down
	r.down = true
	r.downUntil = r.now().Add(r.opts.Backoff)
	r.mu.Unlock()
	if started {
		r.log.WarnContext(ctx, "limits unavailable", "error", err)
	}
}

func (r *Redis) succeeded(ctx context.Context) {
	r.mu.Lock()
	recovered := r.down
	r.down = false
	r.mu.Unlock()
	if recovered {
		r.log.InfoContext(ctx, "limits recovered")
	}
}

// deadlinePassed reports whether ctx's deadline is (about) reached. A Redis
// call that hits the deadline fails with a socket timeout, which can arrive
// a moment before ctx.Err() turns non-nil; that is the caller's timeout,
// not Redis failing.
func deadlinePassed(ctx context.Context) bool {
	dl, ok := ctx.Deadline()
	return ok && time.Until(dl) < 5*time.Millisecond
}
