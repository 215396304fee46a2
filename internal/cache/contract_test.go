package cache

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/testenv"
)

// runContract runs the behaviour every Cache must have. newCache returns an
// empty cache used by one subtest only.
func runContract(t *testing.T, newCache func(t *testing.T) Cache) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, c Cache)
	}{
		{"Miss", testMiss},
		{"RoundTrip", testRoundTrip},
		{"Overwrite", testOverwrite},
		{"ValuesAreCopied", testValuesAreCopied},
		{"TTL", testTTL},
		{"ConcurrentSetsSameKey", testConcurrentSetsSameKey},
		{"CanceledContext", testCanceledContext},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, newCache(t))
		})
	}
}

func testMiss(t *testing.T, c Cache) {
	for _, key := range []string{"absent", ""} {
		if _, err := c.Get(t.Context(), key); !errors.Is(err, ErrMiss) {
			t.Errorf("Get(%q) error = %v, want ErrMiss", key, err)
		}
	}
}

func testRoundTrip(t *testing.T, c Cache) {
	ctx := t.Context()
	binaryValue := make([]byte, 256)
	for i := range binaryValue {
		binaryValue[i] = byte(i)
	}
	created := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.UTC)
	tests := []struct {
		name string
		e    Entry
	}{
		{"text", Entry{Value: []byte(`{"markdown":"# hi"}`), CreatedAt: created}},
		{"binary", Entry{Value: binaryValue, CreatedAt: created}},
		{"empty value", Entry{Value: []byte{}, CreatedAt: created}},
		{"large value", Entry{Value: bytes.Repeat([]byte("abcdefgh"), 128<<10), CreatedAt: created}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := c.Set(ctx, tt.name, tt.e, time.Minute); err != nil {
				t.Fatalf("Set: %v", err)
			}
			got, err := c.Get(ctx, tt.name)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if !bytes.Equal(got.Value, tt.e.Value) {
				t.Errorf("Get value = %d bytes, want the %d bytes set", len(got.Value), len(tt.e.Value))
			}
			if !got.CreatedAt.Equal(tt.e.CreatedAt) {
				t.Errorf("Get CreatedAt = %v, want %v", got.CreatedAt, tt.e.CreatedAt)
			}
		})
	}
}

func testOverwrite(t *testing.T, c Cache) {
	ctx := t.Context()
	first := Entry{Value: []byte("first"), CreatedAt: time.Unix(100, 0).UTC()}
	second := Entry{Value: []byte("second"), CreatedAt: time.Unix(200, 0).UTC()}
	for _, e := range []Entry{first, second} {
		if err := c.Set(ctx, "k", e, time.Minute); err != nil {
			t.Fatalf("Set: %v", err)
		}
	}
	got, err := c.Get(ctx, "k")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if diff := cmp.Diff(second, got); diff != "" {
		t.Errorf("Get after overwrite mismatch (-want +got):\n%s", diff)
	}
}

func testValuesAreCopied(t *testing.T, c Cache) {
	ctx := t.Context()
	in := []byte("original")
	if err := c.Set(ctx, "k", Entry{Value: in, CreatedAt: time.Now()}, time.Minute); err != nil {
		t.Fatalf("Set: %v", err)
	}
	in[0] = 'X'
	got, err := c.Get(ctx, "k")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if string(got.Value) != "original" {
		t.Fatalf("Get after caller changed its buffer = %q, want %q", got.Value, "original")
	}
	got.Value[0] = 'Y'
	again, err := c.Get(ctx, "k")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if string(again.Value) != "original" {
		t.Errorf("Get after caller changed a returned value = %q, want %q", again.Value, "original")
	}
}

func testTTL(t *testing.T, c Cache) {
	ctx := t.Context()
	e := Entry{Value: []byte("v"), CreatedAt: time.Now()}
	ttl := testenv.Patient(100 * time.Millisecond)
	set := time.Now()
	if err := c.Set(ctx, "short", e, ttl); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if err := c.Set(ctx, "forever", e, 0); err != nil {
		t.Fatalf("Set: %v", err)
	}
	// Present while the TTL runs: on a loaded machine the Get may come
	// later than that, when a miss is right.
	if _, err := c.Get(ctx, "short"); err != nil && (!errors.Is(err, ErrMiss) || time.Since(set) < ttl) {
		t.Fatalf("Get right after Set: %v", err)
	}
	// The TTL runs on the cache's clock (Redis's for Redis).
	testenv.Eventually(t, 2*time.Second, func() bool {
		_, err := c.Get(ctx, "short")
		if err != nil && !errors.Is(err, ErrMiss) {
			t.Fatalf("Get: %v", err)
		}
		return errors.Is(err, ErrMiss)
	}, "entry with a %v TTL still present", ttl)
	if _, err := c.Get(ctx, "forever"); err != nil {
		t.Errorf("Get of entry without TTL: %v", err)
	}
}

// concurrentValue is writer i's value: its index, a filler byte and a
// trailer repeating the index, so a torn or mixed value is detectable.
func concurrentValue(i int) []byte {
	b := make([]byte, 8, 8+32<<10+8)
	binary.BigEndian.PutUint64(b, uint64(i))
	b = append(b, bytes.Repeat([]byte{byte('a' + i%26)}, 32<<10)...)
	return binary.BigEndian.AppendUint64(b, uint64(i))
}

func testConcurrentSetsSameKey(t *testing.T, c Cache) {
	ctx := t.Context()
	const writers = 50
	base := time.Unix(1_700_000_000, 0).UTC()
	created := func(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	report := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	for i := range writers {
		wg.Go(func() {
			for range 5 {
				if err := c.Set(ctx, "same", Entry{Value: concurrentValue(i), CreatedAt: created(i)}, time.Minute); err != nil {
					report(fmt.Errorf("writer %d: Set: %w", i, err))
					return
				}
				got, err := c.Get(ctx, "same")
				if err != nil {
					report(fmt.Errorf("writer %d: Get: %w", i, err))
					return
				}
				if len(got.Value) < 8 {
					report(fmt.Errorf("writer %d: Get returned %d bytes", i, len(got.Value)))
					return
				}
				j := int(binary.BigEndian.Uint64(got.Value)) //nolint:gosec // small test index
				if j < 0 || j >= writers || !bytes.Equal(got.Value, concurrentValue(j)) || !got.CreatedAt.Equal(created(j)) {
					report(fmt.Errorf("writer %d: Get returned a value that no single Set wrote (%d bytes, CreatedAt %v)", i, len(got.Value), got.CreatedAt))
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

func testCanceledContext(t *testing.T, c Cache) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := c.Set(ctx, "k", Entry{Value: []byte("v")}, time.Minute); !errors.Is(err, context.Canceled) {
		t.Errorf("Set with canceled ctx: %v, want context.Canceled", err)
	}
	if _, err := c.Get(ctx, "k"); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with canceled ctx: %v, want context.Canceled", err)
	}
}
