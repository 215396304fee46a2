package cache

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/firegate/firegate/internal/testenv"
)

func benchGet(b *testing.B, c Cache) {
	ctx := b.Context()
	// 32 KiB: a typical cached scrape document (markdown, metadata and
	// links of an article page).
	benchValue := bytes.Repeat([]byte("0123456789abcdef"), 2048)
	if err := c.Set(ctx, "bench", Entry{Value: benchValue, CreatedAt: time.Now()}, time.Minute); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(benchValue)))
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Get(ctx, "bench"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

func BenchmarkMemoryGet(b *testing.B) {
	benchGet(b, NewMemory(64<<20))
}

func BenchmarkRedisGet(b *testing.B) {
	opts, err := RedisOptions(testenv.RedisURL(b))
	if err != nil {
		b.Fatal(err)
	}
	client := redis.NewClient(opts)
	defer client.Close()
	benchGet(b, NewResilient(NewRedis(client, "bench:cache:", testenv.Logger(b)), testenv.Logger(b), ResilientOptions{}))
}

func BenchmarkResilientOpen(b *testing.B) {
	c := NewResilient(failing{}, testenv.Logger(b), ResilientOptions{Backoff: time.Hour})
	_, _ = c.Get(b.Context(), "k") // opens the breaker
	b.ResetTimer()
	for b.Loop() {
		_, _ = c.Get(b.Context(), "k")
	}
}

// failing is a backend that always fails.
type failing struct{}

func (failing) Get(context.Context, string) (Entry, error) {
	return Entry{}, errors.New("down")
}

func (failing) Set(context.Context, string, Entry, time.Duration) error {
	return errors.New("down")
}
