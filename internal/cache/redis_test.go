package cache

import (
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/firegate/firegate/internal/testenv"
)

// newRedisClient returns a client of the test Redis, closed at the end of the
// test, and a fresh key prefix whose keys are deleted at the end.
func newRedisClient(t *testing.T) (*redis.Client, string) {
	t.Helper()
	opts, err := RedisOptions(testenv.RedisURL(t))
	if err != nil {
		t.Fatal(err)
	}
	client := redis.NewClient(opts)
	prefix := "test:cache:" + strings.ToLower(rand.Text()) + ":"
	t.Cleanup(func() {
		ctx := context.WithoutCancel(t.Context())
		iter := client.Scan(ctx, 0, prefix+"*", 100).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
		_ = client.Close()
	})
	return client, prefix
}

func TestRedisContract(t *testing.T) {
	runContract(t, func(t *testing.T) Cache {
		client, prefix := newRedisClient(t)
		return NewRedis(client, prefix, testenv.Logger(t))
	})
}

func TestRedisPrefixAndTTL(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	client, prefix := newRedisClient(t)
	a := NewRedis(client, prefix+"a:", testenv.Logger(t))
	b := NewRedis(client, prefix+"b:", testenv.Logger(t))
	if err := a.Set(ctx, "k", Entry{Value: []byte("v"), CreatedAt: time.Now()}, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Get(ctx, "k"); !errors.Is(err, ErrMiss) {
		t.Errorf("Get under another prefix: %v, want ErrMiss", err)
	}
	ttl, err := client.PTTL(ctx, prefix+"a:k").Result()
	if err != nil {
		t.Fatal(err)
	}
	if ttl <= 59*time.Minute || ttl > time.Hour {
		t.Errorf("PTTL of stored key = %v, want about 1h", ttl)
	}
}

func TestRedisUnreadableEntryIsMiss(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	client, prefix := newRedisClient(t)
	c := NewRedis(client, prefix, testenv.Logger(t))
	for _, raw := range []string{"", "short", "\x09garbage-with-unknown-format"} {
		if err := client.Set(ctx, prefix+"bad", raw, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(ctx, "bad"); !errors.Is(err, ErrMiss) {
			t.Errorf("Get of stored %q: %v, want ErrMiss", raw, err)
		}
	}
}

func TestRedisZeroCreatedAt(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	client, prefix := newRedisClient(t)
	c := NewRedis(client, prefix, testenv.Logger(t))
	if err := c.Set(ctx, "k", Entry{Value: []byte("v")}, time.Minute); err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if !got.CreatedAt.IsZero() {
		t.Errorf("CreatedAt = %v, want zero", got.CreatedAt)
	}
}

func TestRedisPing(t *testing.T) {
	t.Parallel()
	client, prefix := newRedisClient(t)
	r := NewRedis(client, prefix, testenv.Logger(t))
	if err := r.Ping(t.Context()); err != nil {
		t.Errorf("Ping: %v", err)
	}
	if err := NewResilient(r, testenv.Logger(t), ResilientOptions{}).Ping(t.Context()); err != nil {
		t.Errorf("Resilient Ping: %v", err)
	}
	if err := NewResilient(NewMemory(1<<10), testenv.Logger(t), ResilientOptions{}).Ping(t.Context()); err != nil {
		t.Errorf("Ping of a backend without Ping: %v", err)
	}

	// A server that is gone fails the ping, breaker or not.
	opts, _ := RedisOptions("redis://" + deadAddr(t))
	dead := redis.NewClient(opts)
	defer dead.Close()
	if err := NewResilient(NewRedis(dead, prefix, testenv.Logger(t)), testenv.Logger(t), ResilientOptions{}).Ping(t.Context()); err == nil {
		t.Error("Ping of a dead server succeeded")
	}
}
