package scrape

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/testenv"
)

// backends gives each cache test the embedded cache and real Redis.
func backends(t *testing.T) map[string]func(t *testing.T) cache.Cache {
	return map[string]func(t *testing.T) cache.Cache{
		"memory": func(t *testing.T) cache.Cache { return cache.NewMemory(64 << 20) },
		"redis": func(t *testing.T) cache.Cache {
			opts, err := cache.RedisOptions(testenv.RedisURL(t))
			if err != nil {
				t.Fatal(err)
			}
			c := redis.NewClient(opts)
			t.Cleanup(func() { c.Close() })
			return cache.NewRedis(c, fmt.Sprintf("test:%s:%d:", t.Name(), time.Now().UnixNano()), testenv.Logger(t))
		},
	}
}

func cachedEngine(t *testing.T, c cache.Cache) *Engine {
	log := testenv.Logger(t)
	return New(Config{Fetcher: fetch.New(fetch.Options{AllowPrivate: true}, log), Cache: c, Log: log})
}

func TestCacheRules(t *testing.T) {
	t.Parallel()
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newSite(t)
			e := cachedEngine(t, mk(t))
			now := time.Now()
			e.now = func() time.Time { return now }
			ctx := context.Background()
			o := defaults(s.URL+"/article", FormatMarkdown)
			o.MaxAge = time.Hour
			o.StoreInCache = true

			first, err := e.Scrape(ctx, o)
			if err != nil || first.Metadata.CacheState != "miss" || s.hits.Load() != 1 {
				t.Fatalf("first: %v state=%q hits=%d", err, first.Metadata.CacheState, s.hits.Load())
			}
			second, err := e.Scrape(ctx, o)
			if err != nil || second.Metadata.CacheState != "hit" || s.hits.Load() != 1 {
				t.Fatalf("second: %v state=%q hits=%d", err, second.Metadata.CacheState, s.hits.Load())
			}
			if *second.Markdown != *first.Markdown || second.Metadata.Page["title"] != "Tide Tables" ||
				second.Metadata.CachedAt == "" || second.Metadata.ScrapeID == first.Metadata.ScrapeID {
				t.Errorf("hit differs: %+v", second.Metadata)
			}

			// Another spelling of the same URL shares the entry.
			o2 := o
			o2.URL = "HTTP://" + s.Listener.Addr().String() + "/article#top"
			if d, err := e.Scrape(ctx, o2); err != nil || d.Metadata.CacheState != "hit" || d.Metadata.SourceURL != o2.URL {
				t.Errorf("normalized url: %v %+v", err, d.Metadata)
			}
			// Other formats are another entry.
			o3 := o
			o3.Formats = []Format{{Type: FormatHTML}}
			if d, err := e.Scrape(ctx, o3); err != nil || d.Metadata.CacheState != "miss" {
				t.Errorf("other formats must miss: %v", err)
			}
			// maxAge 0 never reads the cache.
			o4 := o
			o4.MaxAge = 0
			if d, err := e.Scrape(ctx, o4); err != nil || d.Metadata.CacheState != "" {
				t.Errorf("maxAge 0: %v state=%q", err, d.Metadata.CacheState)
			}
			hits := s.hits.Load()

			// minAge: cache only. 1 ms accepts any age; 1 h needs an older entry.
			o5 := o
			anyAge := time.Millisecond
			o5.MinAge = &anyAge
			if d, err := e.Scrape(ctx, o5); err != nil || d.Metadata.CacheState != "hit" {
				t.Errorf("minAge 1: %v", err)
			}
			hour := time.Hour
			o5.MinAge = &hour
			if _, err := e.Scrape(ctx, o5); !errors.Is(err, ErrNoCachedData) {
				t.Errorf("minAge 1h on a new entry: %v", err)
			}
			now = now.Add(2 * time.Hour)
			if d, err := e.Scrape(ctx, o5); err != nil || d.Metadata.CacheState != "hit" {
				t.Errorf("minAge 1h on a 2h entry: %v", err)
			}
			// Lockdown: a 2 h old entry is within its 2 year default.
			o6 := o
			o6.Lockdown, o6.MaxAge = true, cache.LockdownMaxAge
			if d, err := e.Scrape(ctx, o6); err != nil || d.Metadata.CacheState != "hit" || d.Metadata.CreditsUsed != 5 {
				t.Errorf("lockdown hit (5 credits): %v %+v", err, d.Metadata)
			}
			o6.URL = s.URL + "/never-scraped"
			if _, err := e.Scrape(ctx, o6); !errors.Is(err, ErrLockdownCacheMiss) {
				t.Errorf("lockdown miss: %v", err)
			}
			// Expired under maxAge 1h: fetched again.
			if d, err := e.Scrape(ctx, o); err != nil || d.Metadata.CacheState != "miss" {
				t.Errorf("expired: %v", err)
			}
			if got := s.hits.Load(); got != hits+1 {
				t.Errorf("cache-only requests fetched: %d requests, want %d", got, hits+1)
			}
		})
	}
}

func TestCacheNotStored(t *testing.T) {
	t.Parallel()
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newSite(t)
			e := cachedEngine(t, mk(t))
			ctx := context.Background()
			for _, mod := range []func(*Options){
				func(o *Options) { o.StoreInCache = false },
				func(o *Options) { o.ZeroDataRetention = true },
			} {
				o := defaults(s.URL+"/article", FormatMarkdown)
				o.MaxAge, o.StoreInCache = time.Hour, true
				mod(&o)
				if _, err := e.Scrape(ctx, o); err != nil {
					t.Fatal(err)
				}
				o.MinAge = new(time.Duration)
				*o.MinAge = time.Millisecond
				if _, err := e.Scrape(ctx, o); !errors.Is(err, ErrNoCachedData) {
					t.Errorf("entry was stored: %v", err)
				}
			}
		})
	}
}

func TestCacheConcurrentIdenticalScrapes(t *testing.T) {
	t.Parallel()
	for name, mk := range backends(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newSite(t)
			e := cachedEngine(t, mk(t))
			o := defaults(s.URL+"/article", FormatMarkdown, FormatLinks)
			o.MaxAge, o.StoreInCache = time.Hour, true
			want, err := cachedEngine(t, nil).Scrape(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					d, err := e.Scrape(context.Background(), o)
					if err != nil || *d.Markdown != *want.Markdown || len(d.Links) != len(want.Links) {
						t.Errorf("concurrent scrape: %v", err)
					}
				}()
			}
			wg.Wait()
		})
	}
}

// TestRedisDownDoesNotFailScrapes points the cache at a port where Redis
// is not listening: scrapes go on without the cache.
func TestRedisDownDoesNotFailScrapes(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	opts, _ := cache.RedisOptions("redis://" + addr + "/0")
	client := redis.NewClient(opts)
	t.Cleanup(func() { client.Close() })
	log := testenv.Logger(t)
	c := cache.NewResilient(cache.NewRedis(client, "down:", log), log, cache.ResilientOptions{})
	s := newSite(t)
	e := cachedEngine(t, c)
	o := defaults(s.URL+"/article", FormatMarkdown)
	o.MaxAge, o.StoreInCache = time.Hour, true
	for i := range 5 {
		start := time.Now()
		d, err := e.Scrape(context.Background(), o)
		if err != nil || d.Markdown == nil {
			t.Fatalf("scrape %d with redis down: %v", i, err)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("scrape %d took %v with redis down", i, el)
		}
	}
}

func TestCachedEncodingRoundTrip(t *testing.T) {
	t.Parallel()
	md, raw, empty := "# T\n\nbody", "<p>x</p>", ""
	in := &Document{Markdown: &md, RawHTML: &raw, RawBase64: &empty, Links: []string{"https://a/"},
		Metadata: Metadata{URL: "https://a/", StatusCode: 200, CreditsUsed: 1, Page: map[string]any{"title": "T", "og:tags": []any{"a", "b"}}}}
	b, err := encodeCached(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeCached(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("(-in +out)\n%s", diff)
	}
	for i := range len(b) {
		if _, err := decodeCached(b[:i]); err == nil && i < len(b)-1 {
			t.Errorf("truncated entry of %d bytes decoded", i)
		}
	}
}
