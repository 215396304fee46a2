package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/firegate/firegate/internal/changetrack"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
)

// compare fills the page's status, scrape ids, diff and snapshot from the
// document and the snapshot of the monitor's previous check, and saves the
// document as the new snapshot (except for a removed page, whose last
// content stays the reference).
func (cr *checkRun) compare(ctx context.Context, t Target, u string, doc *scrape.Document, page *store.MonitorPage, data *pageData, now time.Time) error {
	r, teamID, monitorID := cr.r, cr.c.TeamID, cr.m.ID
	tag := "monitor:" + monitorID + ":" + t.ID
	prev, err := r.cfg.Store.PreviousScrape(ctx, teamID, u, tag)
	had := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	md := ""
	if doc.Markdown != nil {
		md = *doc.Markdown
	}
	var cur []byte
	if doc.JSON != nil && string(*doc.JSON) != "null" {
		cur = *doc.JSON
	}
	page.StatusCode = doc.Metadata.StatusCode
	page.CurrentScrapeID = doc.Metadata.ScrapeID
	page.Status = changetrack.Status(had, prev.Markdown, md, doc.Metadata.StatusCode)
	jsonMode := hasJSONFormat(t.Scrape)
	var fields map[string]changetrack.KeyChange
	if jsonMode && had && page.Status != changetrack.StatusRemoved {
		fields = jsonFieldDiff(prev.JSON, cur)
		if len(fields) > 0 && page.Status == changetrack.StatusSame {
			page.Status = changetrack.StatusChanged
		}
	}
	if page.Status == changetrack.StatusChanged {
		d := map[string]any{}
		if prev.Markdown != md {
			cd := changetrack.Compute(prev.Markdown, md)
			d["text"] = cd.Text
			data.judgeText = cd.Text
			if !jsonMode {
				d["json"] = cd.JSON
			}
		}
		if jsonMode {
			d["json"] = fields
			fb, err := json.Marshal(fields)
			if err != nil {
				return fmt.Errorf("monitor: encode changed fields: %w", err)
			}
			data.judgeText += "\nChanged fields (previous and current values):\n" + string(fb)
		}
		var err error
		if data.Diff, err = json.Marshal(d); err != nil {
			return fmt.Errorf("monitor: encode diff: %w", err)
		}
	}
	if page.Status == changetrack.StatusNew {
		data.judgeText = md
	}
	if jsonMode && cur != nil {
		var err error
		if data.Snapshot, err = json.Marshal(map[string]json.RawMessage{"json": cur}); err != nil {
			return fmt.Errorf("monitor: encode snapshot: %w", err)
		}
	}
	if page.Status == changetrack.StatusRemoved {
		return nil
	}
	return r.cfg.Store.SaveScrape(ctx, store.ScrapeSnapshot{TeamID: teamID, URL: u, Tag: tag, Markdown: md, JSON: cur, ScrapedAt: now})
}

// jsonFieldDiff compares two extracted objects key by key (values
// compared as canonical JSON); when either is not an object, the two
// compare whole, as the single key "".
func jsonFieldDiff(prev, cur []byte) map[string]changetrack.KeyChange {
	if changetrack.Members(prev) == nil || changetrack.Members(cur) == nil {
		out := map[string]changetrack.KeyChange{}
		if !changetrack.JSONEqual(prev, cur) {
			out[""] = changetrack.KeyChange{Previous: orNull(prev), Current: orNull(cur)}
		}
		return out
	}
	return changetrack.CompareKeys(prev, cur, nil)
}
