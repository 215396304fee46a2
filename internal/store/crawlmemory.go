package store

import (
	"context"
	"time"
)

// CrawlMemoryStore keeps the URLs that crawls with changeTracking found,
// per team, change-tracking tag ("" for none) and crawl scope (the
// crawl's normalized start URL), so that the next crawl of the scope can
// revisit those its links no longer lead to and report the pages gone.
type CrawlMemoryStore interface {
	// RememberCrawlURLs records that a crawl of scope found urls at at;
	// a URL already remembered gets the newer time. ErrNotFound if the
	// team does not exist.
	RememberCrawlURLs(ctx context.Context, teamID, tag, scope string, urls []string, at time.Time) error
	// CrawlMemory returns up to limit remembered URLs of the scope, most
	// recently found first (ties by URL).
	CrawlMemory(ctx context.Context, teamID, tag, scope string, limit int) ([]string, error)
	// ForgetCrawlURLs removes urls from the scope's memory; unknown ones
	// are ignored.
	ForgetCrawlURLs(ctx context.Context, teamID, tag, scope string, urls []string) error
}
