package cache

import (
	"container/list"
	"context"
	"fmt"
	"sync"
	"time"
)

// entryOverhead approximates the bytes an entry costs beyond its key and
// value (list element, map slot, struct), so that many tiny entries still
// count against the bound.
const entryOverhead = 96

// Memory is an in-process LRU cache bounded by the total size of its entries.
// It is safe for concurrent use. Expired entries are dropped when read or
// when evicted as least recently used.
type Memory struct {
	maxBytes int64
	now      func() time.Time

	mu    sync.Mutex
	bytes int64
	order *list.List               // front = most recently used; values are *memItem
	items map[string]*list.Element // key -> element of order
}

type memItem struct {
	key       string
	value     []byte
	createdAt time.Time
	expires   time.Time // zero: never
	size      int64
}

var _ Cache = (*Memory)(nil)

// NewMemory returns an empty cache holding at most maxBytes of keys and
// values (plus a small per-entry overhead). An entry larger than maxBytes is
// not stored. maxBytes <= 0 stores nothing.
func NewMemory(maxBytes int64) *Memory {
	return &Memory{
		maxBytes: maxBytes,
		now:      time.Now,
		order:    list.New(),
		items:    make(map[string]*list.Element),
	}
}

// Get returns a copy of the live entry of key, or ErrMiss.
func (m *Memory) Get(ctx context.Context, key string) (Entry, error) {
	if err := ctx.Err(); err != nil {
		return Entry{}, fmt.Errorf("cache: get: %w", err)
	}
	now := m.now()
	m.mu.Lock()
	el, ok := m.items[key]
	if !ok {
		m.mu.Unlock()
		return Entry{}, ErrMiss
	}
	it := el.Value.(*memItem)
	if !it.expires.IsZero() && !now.Before(it.expires) {
		m.removeLocked(el)
		m.mu.Unlock()
		return Entry{}, ErrMiss
	}
	m.order.MoveToFront(el)
	// The stored slice is never mutated (Set replaces the item), so it can
	// be copied outside the lock.
	value, createdAt := it.value, it.createdAt
	m.mu.Unlock()
	return Entry{Value: append([]byte(nil), value...), CreatedAt: createdAt}, nil
}

// Set stores a copy of e under key for ttl (ttl <= 0: no expiry), evicting
// least recently used entries to stay within the byte bound.
func (m *Memory) Set(ctx context.Context, key string, e Entry, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("cache: set: %w", err)
	}
	it := &memItem{
		key:       key,
		value:     append([]byte(nil), e.Value...),
		createdAt: e.CreatedAt,
		size:      int64(len(key)+len(e.Value)) + entryOverhead,
	}
	if ttl > 0 {
		it.expires = m.now().Add(ttl)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.items[key]; ok {
		m.removeLocked(old)
	}
	if it.size > m.maxBytes {
		return nil
	}
	for m.bytes+it.size > m.maxBytes {
		m.removeLocked(m.order.Back())
	}
	m.items[key] = m.order.PushFront(it)
	m.bytes += it.size
	return nil
}

// Len returns the number of stored entries, expired ones not yet dropped
// included.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.items)
}

// Bytes returns the accounted size of the stored entries.
func (m *Memory) Bytes() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.bytes
}

func (m *Memory) removeLocked(el *list.Element) {
	it := m.order.Remove(el).(*memItem)
	delete(m.items, it.key)
	m.bytes -= it.size
}
