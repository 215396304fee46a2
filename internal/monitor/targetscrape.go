package monitor

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/firegate/firegate/internal/changetrack"
	"github.com/firegate/firegate/internal/logsafe"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
)

// scrapeTarget checks every URL of a scrape target, a few at a time, and
// returns the pages in URL order with the credits charged.
func (cr *checkRun) scrapeTarget(ctx context.Context, t Target) ([]store.MonitorPage, int64) {
	pages := make([]store.MonitorPage, len(t.URLs))
	credits := make([]int64, len(t.URLs))
	sem := make(chan struct{}, cr.r.cfg.PageConcurrency)
	var wg sync.WaitGroup
	for i, u := range t.URLs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			wg.Wait()
			return nil, 0
		}
		wg.Go(func() {
			defer func() { <-sem }()
			defer cr.recoverPage(ctx, t, u, &pages[i], &credits[i])
			pages[i], credits[i] = cr.checkPage(ctx, t, u)
		})
	}
	wg.Wait()
	var total int64
	for _, n := range credits {
		total += n
	}
	return pages, total
}

// recoverPage, deferred around a page's check on its own goroutine, turns
// a panic (in the scraper, the comparison, the model's judgment) into an
// error page with an error id, logged with its stack: a page a bug chokes
// on fails its own check instead of ending the server, whose other teams'
// work a crash would end too.
func (cr *checkRun) recoverPage(ctx context.Context, t Target, u string, page *store.MonitorPage, credits *int64) {
	p := recover()
	if p == nil {
		return
	}
	r, c := cr.r, cr.c
	err := fmt.Errorf("monitor: panic while checking the page: %v", p)
	r.cfg.Log.ErrorContext(ctx, "monitor: page check panicked", "check_id", c.ID, "url", logsafe.URL(u), "stack", string(debug.Stack()))
	*page = cr.savePage(ctx, store.MonitorPage{ID: newID(), CheckID: c.ID, MonitorID: cr.m.ID, TargetID: t.ID, URL: u,
		CreatedAt: r.now(), Status: PageError, Error: r.shown(ctx, err, "check_id", c.ID, "url", logsafe.URL(u))}, pageData{}, nil)
	*credits = 0
}

// checkPage scrapes one URL, compares it with the monitor's previous
// scrape of it, records the page, charges it and sends monitor.page.
func (cr *checkRun) checkPage(ctx context.Context, t Target, u string) (store.MonitorPage, int64) {
	r, c := cr.r, cr.c
	opts := pageOptions(t.Scrape, u, c.TeamID)
	var doc *scrape.Document
	release, err := r.slot(ctx, c.TeamID)
	if err == nil {
		pctx, cancel := context.WithTimeout(ctx, r.cfg.PageTimeout)
		doc, err = r.cfg.Scraper.Scrape(pctx, opts)
		cancel()
		release()
	}
	var credits int64
	if err == nil {
		credits = int64(doc.Metadata.CreditsUsed)
		if credits <= 0 {
			credits = PageCost(opts)
		}
	}
	page, judged := cr.recordPage(ctx, t, u, doc, err)
	if credits > 0 && r.cfg.Ledger != nil {
		_, err := r.cfg.Ledger.Charge(context.WithoutCancel(ctx), store.Charge{
			TeamID: c.TeamID, Credits: credits, Kind: "monitor",
			IdempotencyKey: "monitor:" + c.ID + ":" + t.ID + ":" + u, Clamp: true,
		})
		if err != nil {
			r.cfg.Log.ErrorContext(ctx, "monitor: charge", "check_id", c.ID, "err", err)
		}
	}
	return page, credits + judged
}

// recordPage compares a scraped document (or records the scrape's error)
// against the monitor's previous scrape of the URL, has the model judge a
// new or changed page when the monitor has a goal and judging is on,
// saves the page and sends monitor.page. It returns the page and the
// credits its judgment cost.
func (cr *checkRun) recordPage(ctx context.Context, t Target, u string, doc *scrape.Document, scrapeErr error) (store.MonitorPage, int64) {
	r, c, m, cfg := cr.r, cr.c, cr.m, cr.cfg
	now := r.now()
	page := store.MonitorPage{ID: newID(), CheckID: c.ID, MonitorID: m.ID, TargetID: t.ID, URL: u, CreatedAt: now}
	if last, err := r.cfg.Store.LastPage(ctx, m.ID, t.ID, u, c.ID); err == nil {
		page.PreviousScrapeID = last.CurrentScrapeID
	}
	var data pageData
	if scrapeErr != nil {
		page.Status, page.Error = PageError, r.shown(ctx, scrapeErr, "check_id", c.ID, "url", logsafe.URL(u))
	} else if err := cr.compare(ctx, t, u, doc, &page, &data, now); err != nil {
		page.Status, page.Error = PageError, "The page could not be compared with its previous scrape"
		r.cfg.Log.ErrorContext(ctx, "monitor: compare page", "check_id", c.ID, "url", u, "err", err)
	}
	var meaningful *bool
	var credits int64
	if cfg.Goal != "" && cfg.JudgeEnabled && r.cfg.Model != nil && data.judgeText != "" &&
		(page.Status == changetrack.StatusChanged || page.Status == changetrack.StatusNew) {
		j, ok, tokens, err := r.judge(ctx, cfg.Goal, u, page.Status, data.judgeText)
		credits = r.chargeJudge(ctx, c, t.ID, u, tokens)
		if err != nil {
			r.cfg.Log.WarnContext(ctx, "monitor: judgment failed; the page has none", "check_id", c.ID, "err", err)
		} else {
			data.Judgment, meaningful = j, ok
		}
	}
	return cr.savePage(ctx, page, data, meaningful), credits
}

// savePage stores a page and sends its monitor.page event.
func (cr *checkRun) savePage(ctx context.Context, page store.MonitorPage, data pageData, meaningful *bool) store.MonitorPage {
	r, c, m, cfg := cr.r, cr.c, cr.m, cr.cfg
	var err error
	if page.Data, err = json.Marshal(data); err != nil {
		// Every member is JSON the monitor encoded itself or checked
		// (a model's judgment is parsed before it is kept); should one
		// still be invalid, the page is kept without its data.
		r.cfg.Log.ErrorContext(ctx, "monitor: encode page data", "check_id", c.ID, "url", logsafe.URL(page.URL), "err", err)
		page.Data, data = []byte("{}"), pageData{}
	}
	if err := r.cfg.Store.SaveCheckPage(context.WithoutCancel(ctx), page); err != nil {
		r.cfg.Log.ErrorContext(ctx, "monitor: save page", "check_id", c.ID, "url", page.URL, "err", err)
	}
	r.notify(ctx, cfg.Webhook, EventPage, c.ID, page.Status != PageError, pagePayload{
		MonitorID: m.ID, CheckID: c.ID, URL: page.URL, Status: page.Status,
		PreviousScrapeID: strPtr(page.PreviousScrapeID), CurrentScrapeID: strPtr(page.CurrentScrapeID),
		Error: strPtr(page.Error), IsMeaningful: meaningful, Judgment: orNull(data.Judgment), Diff: orNull(data.Diff),
	})
	return page
}

// pageOptions are a target's scrape options for one URL: always fetched
// afresh (a cached copy would hide the change the monitor looks for),
// markdown always (the comparison needs it), and no changeTracking format
// (the monitor compares itself, against its own snapshots).
func pageOptions(o scrape.Options, u, teamID string) scrape.Options {
	o.URL, o.TeamID = u, teamID
	o.MaxAge, o.MinAge = 0, nil
	formats := make([]scrape.Format, 0, len(o.Formats)+1)
	hasMarkdown := false
	for _, f := range o.Formats {
		switch f.Type {
		case scrape.FormatChangeTracking:
			continue
		case scrape.FormatMarkdown:
			hasMarkdown = true
		}
		formats = append(formats, f)
	}
	if !hasMarkdown {
		formats = append(formats, scrape.Format{Type: scrape.FormatMarkdown})
	}
	o.Formats = formats
	return o
}

func hasJSONFormat(o scrape.Options) bool {
	for _, f := range o.Formats {
		if f.Type == scrape.FormatJSON {
			return true
		}
	}
	return false
}
