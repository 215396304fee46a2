package monitor

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/changetrack"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/store"
)

// Search result statuses (a page's metadata.searchStatus).
const (
	SearchAlert       = "alert"        // new, and judged meaningful for the goal
	SearchAlreadySeen = "already_seen" // found by an earlier check
	SearchWatching    = "watching"     // new, not judged (no model)
	SearchIgnored     = "ignored"      // new, judged not meaningful
	SearchSkipped     = "skipped"      // published before the window
)

// searchResult is one entry of a search target's targetResults.
type searchResult struct {
	TargetID        string  `json:"targetId"`
	Type            string  `json:"type"`
	SearchCompleted bool    `json:"searchCompleted"`
	ResultCount     int     `json:"resultCount"`
	Matches         int     `json:"matches"`
	JudgeDegraded   bool    `json:"judgeDegraded"`
	DegradedReason  *string `json:"degradedReason"`
	SearchCredits   int64   `json:"searchCredits"`
	JudgeCredits    int64   `json:"judgeCredits"`
	ResultsJudged   int     `json:"resultsJudged"`
	Error           string  `json:"error,omitempty"`
}

// searchTarget runs a search target's queries: each result the monitor
// has not seen before (under this target) is new, judged against the goal
// when a model is configured (alert or ignored; watching without one);
// results seen before are already_seen (page status same), and results
// published before the window are skipped.
func (cr *checkRun) searchTarget(ctx context.Context, t Target) ([]store.MonitorPage, int64, searchResult) {
	r, c, m, cfg := cr.r, cr.c, cr.m, cr.cfg
	res := searchResult{TargetID: t.ID, Type: t.Type}
	if r.cfg.Searcher == nil || t.Search == nil {
		res.Error = "search is not configured on this server (SEARXNG_ENDPOINT)"
		return nil, 0, res
	}
	st := t.Search
	now := r.now()
	oldest := now.Add(-searchWindows[st.Window])
	tag := "monitor:" + m.ID + ":" + t.ID
	judging := cfg.Goal != "" && cfg.JudgeEnabled
	if judging && r.cfg.Model == nil {
		res.JudgeDegraded = true
		reason := "no language model is configured: new results are watched, not judged"
		res.DegradedReason = &reason
	}
	var pages []store.MonitorPage
	seen := map[string]bool{}
	completed := true
	for _, q := range st.Queries {
		results, err := r.cfg.Searcher.Search(ctx, search.Query{Text: q, Source: search.SourceWeb, Limit: st.MaxResults,
			Time: windowRange(st.Window), IncludeDomains: st.IncludeDomains, ExcludeDomains: st.ExcludeDomains})
		if err != nil {
			completed = false
			if res.Error == "" {
				res.Error = "Search failed: " + r.shown(ctx, err, "check_id", c.ID, "target_id", t.ID)
			}
			continue
		}
		res.SearchCredits += billing.SearchCost(len(results), false)
		for _, sr := range results {
			if seen[sr.URL] {
				continue
			}
			seen[sr.URL] = true
			res.ResultCount++
			page := store.MonitorPage{ID: newID(), CheckID: c.ID, MonitorID: m.ID, TargetID: t.ID, URL: sr.URL, CreatedAt: now}
			meta := map[string]any{"query": q, "title": sr.Title, "description": sr.Description}
			if !sr.Published.IsZero() {
				meta["publishedAt"] = sr.Published.UTC()
			}
			var data pageData
			var meaningful *bool
			_, err := r.cfg.Store.PreviousScrape(ctx, c.TeamID, sr.URL, tag)
			switch {
			case err != nil && !errors.Is(err, store.ErrNotFound):
				page.Status, page.Error = PageError, "The result could not be compared with earlier checks"
			case err == nil:
				page.Status, meta["searchStatus"] = changetrack.StatusSame, SearchAlreadySeen
			case !sr.Published.IsZero() && sr.Published.Before(oldest):
				page.Status, meta["searchStatus"] = changetrack.StatusSame, SearchSkipped
			default:
				page.Status, meta["searchStatus"] = changetrack.StatusNew, SearchWatching
				text := sr.Title + "\n" + sr.Description
				if serr := r.cfg.Store.SaveScrape(ctx, store.ScrapeSnapshot{TeamID: c.TeamID, URL: sr.URL, Tag: tag,
					Markdown: text, ScrapedAt: now}); serr != nil {
					r.cfg.Log.WarnContext(ctx, "monitor: save search result", "check_id", c.ID, "err", serr)
				}
				if judging && r.cfg.Model != nil {
					j, ok, tokens, jerr := r.judge(ctx, cfg.Goal, sr.URL, "new search result for "+quote(q), text)
					res.JudgeCredits += r.chargeJudge(ctx, c, t.ID, sr.URL, tokens)
					res.ResultsJudged++
					if jerr == nil {
						data.Judgment, meaningful = j, ok
						meta["searchStatus"] = SearchIgnored
						if *ok {
							meta["searchStatus"] = SearchAlert
							res.Matches++
						}
					}
				}
			}
			md, merr := json.Marshal(meta)
			if merr != nil {
				// Only publishedAt can fail: a date the engine gave that lies
				// past year 9999 in UTC has no JSON form. The rest is kept.
				r.cfg.Log.WarnContext(ctx, "monitor: search result date", "check_id", c.ID, "url", sr.URL, "err", merr)
				delete(meta, "publishedAt")
				md, _ = json.Marshal(meta) // cannot fail: strings only now
			}
			data.Metadata = md
			pages = append(pages, cr.savePage(ctx, page, data, meaningful))
		}
	}
	res.SearchCompleted = completed
	if res.SearchCredits > 0 && r.cfg.Ledger != nil {
		_, err := r.cfg.Ledger.Charge(context.WithoutCancel(ctx), store.Charge{TeamID: c.TeamID, Credits: res.SearchCredits,
			Kind: "monitor", IdempotencyKey: "monitor-search:" + c.ID + ":" + t.ID, Clamp: true})
		if err != nil {
			r.cfg.Log.ErrorContext(ctx, "monitor: charge search", "check_id", c.ID, "err", err)
		}
	}
	return pages, res.SearchCredits + res.JudgeCredits, res
}

func quote(s string) string {
	b, _ := json.Marshal(s) // cannot fail: a string always encodes
	return string(b)
}
