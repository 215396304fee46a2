package storetest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

// CrawlMemoryUnderTest is what RunCrawlMemory exercises: a store with the
// crawl memory table (teams come from store.Store).
type CrawlMemoryUnderTest interface {
	store.Store
	store.CrawlMemoryStore
}

// RunCrawlMemory runs the contract suite of store.CrawlMemoryStore.
// newStore must return a new, empty store that no other test uses, and
// must release it with t.Cleanup. Subtests run in parallel.
func RunCrawlMemory(t *testing.T, newStore func(t *testing.T) CrawlMemoryUnderTest) {
	t.Helper()
	t.Run("RememberAndForget", func(t *testing.T) {
		t.Parallel()
		testCrawlMemory(t, newStore(t))
	})
}

func testCrawlMemory(t *testing.T, s CrawlMemoryUnderTest) {
	ctx := t.Context()
	a, b := mustTeam(t, s, "a"), mustTeam(t, s, "b")
	const scope = "https://example.com/"
	at := time.Date(2026, 5, 6, 7, 8, 9, 0, time.UTC)
	list := func(team, tag, scope string, limit int) []string {
		t.Helper()
		got, err := s.CrawlMemory(ctx, team, tag, scope, limit)
		if err != nil {
			t.Fatalf("CrawlMemory: %v", err)
		}
		return got
	}
	if got := list(a.ID, "", scope, 10); len(got) != 0 || got == nil {
		t.Errorf("empty memory = %#v, want an empty list", got)
	}
	first := []string{scope + "b", scope + "a", scope + "c"}
	if err := s.RememberCrawlURLs(ctx, a.ID, "", scope, first, at); err != nil {
		t.Fatalf("RememberCrawlURLs: %v", err)
	}
	// Seen again later: newest first, ties by URL.
	if err := s.RememberCrawlURLs(ctx, a.ID, "", scope, []string{scope + "c", scope + "d"}, at.Add(time.Hour)); err != nil {
		t.Fatalf("RememberCrawlURLs again: %v", err)
	}
	// An older sighting does not move a URL back.
	if err := s.RememberCrawlURLs(ctx, a.ID, "", scope, []string{scope + "d"}, at.Add(-time.Hour)); err != nil {
		t.Fatalf("RememberCrawlURLs older: %v", err)
	}
	want := []string{scope + "c", scope + "d", scope + "a", scope + "b"}
	if got := list(a.ID, "", scope, 10); !slices.Equal(got, want) {
		t.Errorf("memory = %v, want %v", got, want)
	}
	if got := list(a.ID, "", scope, 2); !slices.Equal(got, want[:2]) {
		t.Errorf("memory limited to 2 = %v, want %v", got, want[:2])
	}
	// Tags, scopes and teams keep their own memories.
	if err := s.RememberCrawlURLs(ctx, a.ID, "weekly", scope, []string{scope + "w"}, at); err != nil {
		t.Fatal(err)
	}
	if got := list(a.ID, "weekly", scope, 10); !slices.Equal(got, []string{scope + "w"}) {
		t.Errorf("tagged memory = %v", got)
	}
	if got := list(a.ID, "", "https://example.com/docs", 10); len(got) != 0 {
		t.Errorf("another scope = %v", got)
	}
	if got := list(b.ID, "", scope, 10); len(got) != 0 {
		t.Errorf("another team = %v", got)
	}
	if err := s.ForgetCrawlURLs(ctx, a.ID, "", scope, []string{scope + "d", scope + "a", scope + "unknown"}); err != nil {
		t.Fatalf("ForgetCrawlURLs: %v", err)
	}
	if got := list(a.ID, "", scope, 10); !slices.Equal(got, []string{scope + "c", scope + "b"}) {
		t.Errorf("after forgetting = %v", got)
	}
	if got := list(a.ID, "weekly", scope, 10); len(got) != 1 {
		t.Errorf("forgetting touched another tag: %v", got)
	}
	err := s.RememberCrawlURLs(ctx, uuid.NewString(), "", scope, []string{scope}, at)
	checkErr(t, "RememberCrawlURLs for an unknown team", err, store.ErrNotFound)
}

// BenchmarkCrawlMemory measures what change tracking adds to a crawl:
// "remember" is the write of one scraped page (per page), "recall" the
// read of a scope's 1,000 most recent URLs of a 5,000-URL memory (once
// per crawl, when its discovery is done).
func BenchmarkCrawlMemory(b *testing.B, s CrawlMemoryUnderTest) {
	ctx := b.Context()
	team, err := s.CreateTeam(ctx, "bench")
	if err != nil {
		b.Fatalf("CreateTeam: %v", err)
	}
	const scope = "https://example.com/"
	at := time.Now()
	b.Run("remember", func(b *testing.B) {
		for i := range b.N {
			u := []string{fmt.Sprintf("%spage/%d", scope, i%5000)}
			if err := s.RememberCrawlURLs(ctx, team.ID, "bench", scope, u, at.Add(time.Duration(i))); err != nil {
				b.Fatal(err)
			}
		}
	})
	urls := make([]string, 5000)
	for i := range urls {
		urls[i] = fmt.Sprintf("%sother/%d", scope, i)
	}
	if err := s.RememberCrawlURLs(ctx, team.ID, "recall", scope, urls, at); err != nil {
		b.Fatal(err)
	}
	b.Run("recall", func(b *testing.B) {
		for range b.N {
			got, err := s.CrawlMemory(ctx, team.ID, "recall", scope, 1000)
			if err != nil || len(got) != 1000 {
				b.Fatalf("CrawlMemory: %d URLs, %v", len(got), err)
			}
		}
	})
}
