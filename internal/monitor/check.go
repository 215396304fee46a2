package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/changetrack"
	"github.com/firegate/firegate/internal/store"
)

// checkRun is one check being run: the check, its monitor and the
// monitor's configuration, which every step of the check reads. The page
// checks of a target run concurrently and only read it.
type checkRun struct {
	r   *Runner
	c   store.MonitorCheck
	m   store.Monitor
	cfg Config
}

// checkOutcome is what a check's targets gave: the counts, each target's
// result (for the check's status and error) and the targetResults as shown.
type checkOutcome struct {
	sum     Summary
	results []targetResult
	entries []any
	credits int64
}

// RunCheck runs one queued check to its end. It is the check job's body;
// a check that is not queued or running (finished, or claimed by nobody)
// is left alone.
func (r *Runner) RunCheck(ctx context.Context, id string) error {
	cr, done, err := r.loadCheck(ctx, id)
	if done || err != nil {
		return err
	}
	if done, err := cr.reserveCredits(ctx); done || err != nil {
		return err
	}
	running, err := cr.startCrawls(ctx)
	if err != nil {
		return err
	}
	if running {
		// Look again later without holding a worker.
		return river.JobSnooze(r.cfg.CrawlPoll)
	}
	out, err := cr.runTargets(ctx)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		// Cancelled (shutdown or timeout): the job is retried and the
		// check, still running, is claimed again.
		return ctx.Err()
	}
	return cr.conclude(ctx, out)
}

// loadCheck claims the check and reads its monitor and configuration.
// done reports that the check needs nothing more: not claimable, or ended
// here (its monitor deleted, its configuration unreadable, its team under
// forced zero data retention), err being finish's.
func (r *Runner) loadCheck(ctx context.Context, id string) (cr *checkRun, done bool, err error) {
	c, ok, err := r.cfg.Store.ClaimCheck(ctx, id, r.now())
	if errors.Is(err, store.ErrNotFound) {
		return nil, true, nil
	}
	if err != nil || !ok {
		return nil, true, err
	}
	m, err := r.cfg.Store.Monitor(ctx, c.TeamID, c.MonitorID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, true, r.finish(ctx, c, store.CheckFailed, Summary{}, nil, "The monitor was deleted", nil)
	}
	if err != nil {
		return nil, true, err
	}
	var cfg Config
	if err := json.Unmarshal(m.Config, &cfg); err != nil {
		return nil, true, r.finish(ctx, c, store.CheckFailed, Summary{}, nil, "The monitor's stored configuration is unreadable", &cfg)
	}
	if r.cfg.ZDRForced != nil {
		forced, err := r.cfg.ZDRForced(ctx, c.TeamID)
		if err != nil {
			return nil, true, fmt.Errorf("monitor: team settings: %w", err)
		}
		if forced {
			c.BillingStatus = "not_applicable"
			return nil, true, r.finish(ctx, c, store.CheckFailed, Summary{}, nil, ZDRForcedMessage, &cfg)
		}
	}
	return &checkRun{r: r, c: c, m: m, cfg: cfg}, false, nil
}

// reserveCredits checks the team's credits for the check's estimate, once,
// before the check has started anything (a check waiting on its crawls
// comes here again and passes). done reports that the check ended here:
// skipped for credits, or failed because they could not be checked.
func (cr *checkRun) reserveCredits(ctx context.Context) (done bool, err error) {
	r, c := cr.r, &cr.c
	est := CheckCost(cr.cfg)
	if r.cfg.Ledger == nil || est <= 0 || len(c.TargetResults) > 0 {
		return false, nil
	}
	if err := r.cfg.Ledger.Check(ctx, c.TeamID, est); err != nil {
		if errors.Is(err, billing.ErrInsufficientCredits) {
			c.BillingStatus = "not_applicable"
			return true, r.finish(ctx, *c, store.CheckSkippedCredits, Summary{}, nil,
				fmt.Sprintf("Insufficient credits: this check is estimated at %d credits", est), &cr.cfg)
		}
		return true, r.finish(ctx, *c, store.CheckFailed, Summary{}, nil,
			"Credits could not be checked: "+r.shown(ctx, err, "check_id", c.ID), &cr.cfg)
	}
	c.ReservedCredits = &est
	return false, nil
}

// targetResults decodes the target results the check has recorded so far
// (the crawls it started); none before the first crawl starts.
func (cr *checkRun) targetResults() ([]targetResult, error) {
	var results []targetResult
	if len(cr.c.TargetResults) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(cr.c.TargetResults, &results); err != nil {
		return nil, fmt.Errorf("monitor: the check's stored target results: %w", err)
	}
	return results, nil
}

// runTargets checks every target of the monitor in order.
func (cr *checkRun) runTargets(ctx context.Context) (checkOutcome, error) {
	var out checkOutcome
	started, err := cr.targetResults()
	if err != nil {
		return out, err
	}
	crawlIDs := map[string]string{}
	for _, tr := range started {
		crawlIDs[tr.TargetID] = tr.CrawlID
	}
	for _, t := range cr.cfg.Targets {
		tr, entry, pages, credits, err := cr.runTarget(ctx, t, crawlIDs[t.ID])
		if err != nil {
			return out, err
		}
		out.credits += credits
		out.sum.count(pages)
		out.results, out.entries = append(out.results, tr), append(out.entries, entry)
	}
	return out, nil
}

// runTarget checks one target: its result, its entry as shown in
// targetResults, its pages and the credits they cost. crawlID is the crawl
// the check started for a crawl target ("" when none could start).
func (cr *checkRun) runTarget(ctx context.Context, t Target, crawlID string) (targetResult, any, []store.MonitorPage, int64, error) {
	tr := targetResult{TargetID: t.ID, Type: t.Type}
	switch {
	case t.Type == TargetSearch:
		pages, credits, sr := cr.searchTarget(ctx, t)
		tr.Error = sr.Error
		return tr, sr, pages, credits, nil
	case t.Type == TargetScrape:
		pages, credits := cr.scrapeTarget(ctx, t)
		return tr, tr, pages, credits, nil
	case t.Type == TargetCrawl && crawlID != "":
		tr.CrawlID = crawlID
		pages, credits, err := cr.crawlTarget(ctx, t, crawlID)
		return tr, tr, pages, credits, err
	default:
		tr.Error = t.Type + " targets are not supported on this server yet"
		return tr, tr, nil, 0, nil
	}
}

// count adds pages to the summary by their status.
func (s *Summary) count(pages []store.MonitorPage) {
	for _, p := range pages {
		s.TotalPages++
		switch p.Status {
		case changetrack.StatusSame:
			s.Same++
		case changetrack.StatusChanged:
			s.Changed++
		case changetrack.StatusNew:
			s.New++
		case changetrack.StatusRemoved:
			s.Removed++
		default:
			s.Error++
		}
	}
}

// status is a finished check's status and error: failed when every page
// failed, partial when some page or target did, else completed; the error
// is the first target's that has one.
func (out checkOutcome) status() (status, errMsg string) {
	status = store.CheckCompleted
	switch {
	case out.sum.TotalPages > 0 && out.sum.Error == out.sum.TotalPages:
		status, errMsg = store.CheckFailed, "Every page of the check failed"
	case out.sum.Error > 0:
		status = store.CheckPartial
	}
	for _, tr := range out.results {
		if tr.Error == "" {
			continue
		}
		if status == store.CheckCompleted {
			status = store.CheckPartial
		}
		if errMsg == "" {
			errMsg = tr.Error
		}
	}
	return status, errMsg
}

// conclude records the end of a check whose targets all ran.
func (cr *checkRun) conclude(ctx context.Context, out checkOutcome) error {
	r, c := cr.r, cr.c
	status, errMsg := out.status()
	if r.cfg.Ledger != nil {
		c.ActualCredits = &out.credits
		c.BillingStatus = "confirmed"
	}
	rb, err := json.Marshal(out.entries)
	if err != nil {
		// The entries are targetResult and searchResult values: strings,
		// numbers and booleans only, which always encode.
		return fmt.Errorf("monitor: encode target results: %w", err)
	}
	c.TargetResults = rb
	if err := r.finish(ctx, c, status, out.sum, rb, errMsg, &cr.cfg); err != nil {
		return err
	}
	r.cfg.Log.InfoContext(ctx, "monitor: check finished", "check_id", c.ID, "monitor_id", c.MonitorID,
		"status", status, "pages", out.sum.TotalPages, "changed", out.sum.Changed, "new", out.sum.New,
		"removed", out.sum.Removed, "errors", out.sum.Error, "credits", out.credits)
	return nil
}

// finish records the check's end and sends monitor.check.completed.
func (r *Runner) finish(ctx context.Context, c store.MonitorCheck, status string, sum Summary, results []byte, errMsg string, cfg *Config) error {
	sb, err := json.Marshal(sum)
	if err != nil {
		// Summary is a struct of ints, which always encodes.
		return fmt.Errorf("monitor: encode summary: %w", err)
	}
	now := r.now()
	c.Status, c.Summary, c.TargetResults, c.Error, c.FinishedAt = status, sb, results, errMsg, &now
	if c.BillingStatus == "" {
		c.BillingStatus = "not_applicable"
	}
	ok, err := r.cfg.Store.FinishCheck(context.WithoutCancel(ctx), c)
	if err != nil {
		return err
	}
	if ok && cfg != nil && status != store.CheckSkippedCredits {
		r.notify(ctx, cfg.Webhook, EventCheckCompleted, c.ID, sum.Error == 0 && status != store.CheckFailed,
			completedData(c.MonitorID, c.ID, status, sum))
		r.queueSummaries(ctx, c, status, sum, cfg)
	}
	return nil
}
