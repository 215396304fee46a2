package scrape

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/firegate/firegate/internal/changetrack"
	"github.com/firegate/firegate/internal/urlnorm"
)

// ChangeStore keeps the last scrape of a URL per team and change-tracking
// tag. PreviousScrape reports found false when there is none.
type ChangeStore interface {
	PreviousScrape(ctx context.Context, teamID, url, tag string) (s Snapshot, found bool, err error)
	SaveScrape(ctx context.Context, teamID, url, tag string, s Snapshot) error
}

// Snapshot is what change tracking keeps of a scrape.
type Snapshot struct {
	Markdown string
	// JSON is the json mode's extracted object; nil when none was made.
	JSON      json.RawMessage
	ScrapedAt time.Time
}

// ChangeTracking is the changeTracking format's output.
type ChangeTracking struct {
	// PreviousScrapeAt is when the compared scrape was made (RFC 3339),
	// null on first sight.
	PreviousScrapeAt *string `json:"previousScrapeAt"`
	// ChangeStatus is new, same, changed or removed.
	ChangeStatus string `json:"changeStatus"`
	// Visibility is visible for a URL the request names or a crawl found
	// by links or sitemap, hidden for one a crawl knew only from earlier
	// crawls.
	Visibility string `json:"visibility"`
	// Diff is set in git-diff mode when the page changed.
	Diff *changetrack.Diff `json:"diff"`
	// JSON is set in json mode when the page changed: each key whose
	// extracted value changed, with its previous and current value.
	JSON map[string]KeyChange `json:"json"`
}

// changeStoreTimeout bounds change tracking's store reads and writes.
const changeStoreTimeout = 5 * time.Second

// Change-tracking modes.
const (
	ModeGitDiff = "git-diff"
	ModeJSON    = "json"
)

// Change-tracking visibilities: a page found by links or the sitemap, or
// one known only from the memory of earlier crawls.
const (
	VisibilityVisible = "visible"
	VisibilityHidden  = "hidden"
)

// trackChanges compares doc's markdown with the team's previous scrape of
// the URL under the format's tag, sets doc.ChangeTracking and saves this
// scrape as the next one's previous (not under zero data retention, and
// not when the page is gone, so its last content stays comparable). In
// json mode current is the object extracted now (nil when none was made:
// the previous one is kept). Store failures are logged: the scrape itself
// succeeded.
func (e *Engine) trackChanges(ctx context.Context, o *Options, doc *Document, current json.RawMessage) {
	f, ok := o.FormatOf(FormatChangeTracking)
	if !ok {
		return
	}
	// The store calls get their own bound: the request's timeout covered
	// the scrape, and a slow store must not hold the answer long.
	ctx, cancel := context.WithTimeout(ctx, changeStoreTimeout)
	defer cancel()
	tag := ""
	if f.Tag != nil {
		tag = *f.Tag
	}
	url := urlnorm.String(o.URL)
	md := ""
	if doc.Markdown != nil {
		md = *doc.Markdown
	}
	prev, found, err := e.changes.PreviousScrape(ctx, o.TeamID, url, tag)
	if err != nil {
		e.log.WarnContext(ctx, "change tracking read failed", "err", err)
		found = false
	}
	ct := &ChangeTracking{
		ChangeStatus: changetrack.Status(found, prev.Markdown, md, doc.Metadata.StatusCode),
		Visibility:   VisibilityVisible,
	}
	if o.ChangeVisibility == VisibilityHidden {
		ct.Visibility = VisibilityHidden
	}
	if found {
		at := prev.ScrapedAt.UTC().Format(time.RFC3339Nano)
		ct.PreviousScrapeAt = &at
	}
	if ct.ChangeStatus == changetrack.StatusChanged && slices.Contains(f.Modes, ModeGitDiff) {
		d := changetrack.Compute(prev.Markdown, md)
		ct.Diff = &d
	}
	if ct.ChangeStatus == changetrack.StatusChanged && slices.Contains(f.Modes, ModeJSON) {
		ct.JSON = compareJSON(f.Schema, prev.JSON, current)
	}
	if current == nil {
		current = prev.JSON
	}
	doc.ChangeTracking = ct
	if o.ZeroDataRetention || ct.ChangeStatus == changetrack.StatusRemoved {
		return
	}
	if err := e.changes.SaveScrape(ctx, o.TeamID, url, tag, Snapshot{Markdown: md, JSON: current, ScrapedAt: e.now()}); err != nil {
		e.log.WarnContext(ctx, "change tracking save failed", "err", err)
	}
}
