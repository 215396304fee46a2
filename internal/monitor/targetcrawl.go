package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/changetrack"
	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
)

// targetResult is one entry of a check's targetResults.
type targetResult struct {
	TargetID     string   `json:"targetId"`
	Type         string   `json:"type"`
	ExpectedJobs []string `json:"expectedJobs,omitempty"`
	CrawlID      string   `json:"crawlId,omitempty"`
	Error        string   `json:"error,omitempty"`
}

// crawlJobID is the id of the crawl a check starts for a target: derived
// from both, so a retried check finds the crawl it started instead of
// starting another.
func crawlJobID(checkID, targetID string) string {
	return uuid.NewSHA1(crawlNamespace, []byte(checkID+"/"+targetID)).String()
}

var crawlNamespace = uuid.MustParse("7d4a2c1e-3b5f-4e8a-9c6d-0f1e2a3b4c5d")

// startCrawls starts the crawls of the check's crawl targets that have
// none yet and reports whether any is still running. The crawl ids are
// recorded in the check's target results before anything waits on them.
func (cr *checkRun) startCrawls(ctx context.Context) (running bool, err error) {
	r, c := cr.r, &cr.c
	results, err := cr.targetResults()
	if err != nil {
		return false, err
	}
	byTarget := map[string]*targetResult{}
	for i := range results {
		byTarget[results[i].TargetID] = &results[i]
	}
	changed := false
	for _, t := range cr.cfg.Targets {
		if t.Type != TargetCrawl || r.cfg.Crawler == nil || r.cfg.Jobs == nil {
			continue
		}
		tr := byTarget[t.ID]
		if tr == nil {
			results = append(results, targetResult{TargetID: t.ID, Type: t.Type})
			tr = &results[len(results)-1]
			byTarget = map[string]*targetResult{}
			for i := range results {
				byTarget[results[i].TargetID] = &results[i]
			}
		}
		if tr.CrawlID == "" {
			id := crawlJobID(c.ID, t.ID)
			o := *t.Crawl
			o.Scrape = pageOptions(o.Scrape, "", c.TeamID)
			if o.TeamConcurrency, err = r.teamLimit(ctx, c.TeamID); err != nil {
				return false, fmt.Errorf("monitor: team limit: %w", err)
			}
			if o.MaxConcurrency > 0 && o.TeamConcurrency > 0 {
				o.MaxConcurrency = min(o.MaxConcurrency, o.TeamConcurrency)
			}
			err := r.cfg.Crawler.StartCrawl(ctx, store.Job{ID: id, TeamID: c.TeamID, URL: t.URL, Limit: t.Limit,
				ZeroDataRetention: o.Scrape.ZeroDataRetention}, o)
			if err != nil && !errors.Is(err, crawljob.ErrIdempotencyKeyUsed) {
				return false, fmt.Errorf("monitor: start crawl: %w", err)
			}
			tr.CrawlID = id
			changed = true
		}
		j, err := r.cfg.Jobs.Job(ctx, tr.CrawlID)
		if err != nil {
			return false, fmt.Errorf("monitor: crawl %s: %w", tr.CrawlID, err)
		}
		if j.Status == store.JobScraping {
			running = true
		}
	}
	if changed {
		b, err := json.Marshal(results)
		if err != nil {
			// targetResult holds strings only, which always encode.
			return false, fmt.Errorf("monitor: encode target results: %w", err)
		}
		if _, err := r.cfg.Store.SetCheckTargetResults(ctx, c.ID, b); err != nil {
			return false, err
		}
		c.TargetResults = b
	}
	return running, nil
}

// crawlTarget compares the pages of a target's finished crawl with the
// monitor's previous check: each document compared with its snapshot,
// each failed URL an error page, and each page of the previous check the
// crawl did not find again removed.
func (cr *checkRun) crawlTarget(ctx context.Context, t Target, crawlID string) ([]store.MonitorPage, int64, error) {
	job, err := cr.r.cfg.Jobs.Job(ctx, crawlID)
	if err != nil {
		return nil, 0, err
	}
	seen := map[string]bool{}
	pages, judgeCredits, err := cr.crawledPages(ctx, t, crawlID, seen)
	if err != nil {
		return nil, 0, err
	}
	failed, err := cr.r.cfg.Jobs.JobErrors(ctx, crawlID)
	if err != nil {
		return nil, 0, err
	}
	for _, f := range failed {
		if seen[f.URL] {
			continue
		}
		seen[f.URL] = true
		// The crawl recorded the page's error as a client sees it.
		page, _ := cr.recordPage(ctx, t, f.URL, nil, &errcode.Failure{Kind: scrape.ErrSite, Msg: f.Error})
		pages = append(pages, page)
	}
	removed, err := cr.removedPages(ctx, t, seen)
	if err != nil {
		return nil, 0, err
	}
	return append(pages, removed...), job.CreditsUsed + judgeCredits, nil
}

// crawlBatch is how many documents or pages are read at a time.
const crawlBatch = 50

// crawledPages compares each document of the crawl with its snapshot,
// once per URL (marked in seen), and returns the pages and the credits
// their judgments cost.
func (cr *checkRun) crawledPages(ctx context.Context, t Target, crawlID string, seen map[string]bool) ([]store.MonitorPage, int64, error) {
	var pages []store.MonitorPage
	var judgeCredits int64
	for skip := 0; ; skip += crawlBatch {
		docs, err := cr.r.cfg.Jobs.Documents(ctx, crawlID, skip, crawlBatch)
		if err != nil {
			return nil, 0, err
		}
		for _, raw := range docs {
			var doc scrape.Document
			if err := json.Unmarshal(raw, &doc); err != nil {
				// Documents are what the crawl stored with json.Marshal; one
				// that does not decode is skipped, and said.
				cr.r.cfg.Log.WarnContext(ctx, "monitor: unreadable crawl document skipped", "check_id", cr.c.ID, "crawl_id", crawlID, "err", err)
				continue
			}
			u := doc.Metadata.SourceURL
			if u == "" {
				u = doc.Metadata.URL
			}
			if u == "" || seen[u] {
				continue
			}
			seen[u] = true
			page, judged := cr.recordPage(ctx, t, u, &doc, nil)
			pages = append(pages, page)
			judgeCredits += judged
		}
		if len(docs) < crawlBatch {
			return pages, judgeCredits, nil
		}
	}
}

// removedPages records as removed each page of the target in the
// monitor's previous check that this crawl did not find again (not in
// seen), and not already removed or failed then.
func (cr *checkRun) removedPages(ctx context.Context, t Target, seen map[string]bool) ([]store.MonitorPage, error) {
	prev, err := cr.r.previousCheck(ctx, cr.c)
	if err != nil || prev == "" {
		return nil, err
	}
	var pages []store.MonitorPage
	for skip := 0; ; skip += crawlBatch {
		old, err := cr.r.cfg.Store.CheckPages(ctx, prev, "", skip, crawlBatch)
		if err != nil {
			return nil, err
		}
		for _, p := range old {
			if p.TargetID != t.ID || seen[p.URL] || p.Status == changetrack.StatusRemoved || p.Status == PageError {
				continue
			}
			seen[p.URL] = true
			page := store.MonitorPage{ID: newID(), CheckID: cr.c.ID, MonitorID: cr.m.ID, TargetID: t.ID, URL: p.URL,
				Status: changetrack.StatusRemoved, PreviousScrapeID: p.CurrentScrapeID, CreatedAt: cr.r.now()}
			pages = append(pages, cr.savePage(ctx, page, pageData{}, nil))
		}
		if len(old) < crawlBatch {
			return pages, nil
		}
	}
}

// previousCheck is the id of the monitor's newest finished check before
// c that recorded pages, or "".
func (r *Runner) previousCheck(ctx context.Context, c store.MonitorCheck) (string, error) {
	checks, err := r.cfg.Store.MonitorChecks(ctx, c.TeamID, c.MonitorID, "", 20, 0)
	if err != nil {
		return "", err
	}
	for _, p := range checks {
		if p.ID != c.ID && p.CreatedAt.Before(c.CreatedAt) &&
			(p.Status == store.CheckCompleted || p.Status == store.CheckPartial) {
			return p.ID, nil
		}
	}
	return "", nil
}
