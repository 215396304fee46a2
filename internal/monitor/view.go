package monitor

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/webhook"
)

// View is a monitor as the API returns it.
type View struct {
	ID                       string            `json:"id"`
	Name                     string            `json:"name"`
	Status                   string            `json:"status"`
	Schedule                 ScheduleView      `json:"schedule"`
	NextRunAt                *time.Time        `json:"nextRunAt"`
	LastRunAt                *time.Time        `json:"lastRunAt"`
	CurrentCheckID           *string           `json:"currentCheckId"`
	Targets                  []json.RawMessage `json:"targets"`
	Webhook                  *webhook.Spec     `json:"webhook"`
	Notification             json.RawMessage   `json:"notification"`
	RetentionDays            int               `json:"retentionDays"`
	EstimatedCreditsPerMonth int64             `json:"estimatedCreditsPerMonth"`
	LastCheckSummary         *Summary          `json:"lastCheckSummary"`
	Goal                     *string           `json:"goal"`
	JudgeEnabled             bool              `json:"judgeEnabled"`
	CreatedAt                time.Time         `json:"createdAt"`
	UpdatedAt                time.Time         `json:"updatedAt"`
}

// ScheduleView is the normalized schedule.
type ScheduleView struct {
	Cron     string `json:"cron"`
	Timezone string `json:"timezone"`
}

// Summary counts a check's pages by status.
type Summary struct {
	TotalPages int `json:"totalPages"`
	Same       int `json:"same"`
	Changed    int `json:"changed"`
	New        int `json:"new"`
	Removed    int `json:"removed"`
	Error      int `json:"error"`
}

// CheckView is a check as the API returns it.
type CheckView struct {
	ID                 string          `json:"id"`
	MonitorID          string          `json:"monitorId"`
	Status             string          `json:"status"`
	Trigger            string          `json:"trigger"`
	ScheduledFor       *time.Time      `json:"scheduledFor"`
	StartedAt          *time.Time      `json:"startedAt"`
	FinishedAt         *time.Time      `json:"finishedAt"`
	EstimatedCredits   int64           `json:"estimatedCredits"`
	ReservedCredits    *int64          `json:"reservedCredits"`
	ActualCredits      *int64          `json:"actualCredits"`
	BillingStatus      string          `json:"billingStatus"`
	Summary            Summary         `json:"summary"`
	TargetResults      json.RawMessage `json:"targetResults"`
	NotificationStatus any             `json:"notificationStatus"`
	Error              *string         `json:"error"`
	CreatedAt          time.Time       `json:"createdAt"`
	UpdatedAt          time.Time       `json:"updatedAt"`
}

// CheckDetail is a check with a page of its pages.
type CheckDetail struct {
	CheckView
	Pages []PageView `json:"pages"`
}

// PageView is one page of a check as the API returns it.
type PageView struct {
	ID               string          `json:"id"`
	TargetID         string          `json:"targetId"`
	URL              string          `json:"url"`
	Status           string          `json:"status"`
	PreviousScrapeID *string         `json:"previousScrapeId"`
	CurrentScrapeID  *string         `json:"currentScrapeId"`
	StatusCode       *int            `json:"statusCode"`
	Error            *string         `json:"error"`
	Metadata         json.RawMessage `json:"metadata"`
	Judgment         json.RawMessage `json:"judgment"`
	Diff             json.RawMessage `json:"diff"`
	Snapshot         json.RawMessage `json:"snapshot,omitempty"`
	CreatedAt        time.Time       `json:"createdAt"`
}

// pageData is what a page keeps in its opaque data.
type pageData struct {
	Metadata json.RawMessage `json:"metadata,omitempty"`
	Diff     json.RawMessage `json:"diff,omitempty"`
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
	Judgment json.RawMessage `json:"judgment,omitempty"`
	// judgeText is the change shown to the judge (not stored).
	judgeText string
}

func strPtr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

var jsonNull = json.RawMessage("null")

func orNull(r json.RawMessage) json.RawMessage {
	if len(r) == 0 {
		return jsonNull
	}
	return r
}

func monitorView(m store.Monitor) (View, error) {
	var cfg Config
	if err := json.Unmarshal(m.Config, &cfg); err != nil {
		return View{}, fmt.Errorf("monitor: stored config: %w", err)
	}
	v := View{
		ID: m.ID, Name: m.Name, Status: m.Status, Schedule: ScheduleView{m.Cron, m.Timezone},
		NextRunAt: m.NextRunAt, LastRunAt: m.LastRunAt, CurrentCheckID: strPtr(m.CurrentCheckID),
		Targets: make([]json.RawMessage, 0, len(cfg.Targets)), Webhook: cfg.Webhook,
		Notification: orNull(cfg.Notification), RetentionDays: m.RetentionDays,
		EstimatedCreditsPerMonth: m.EstimatedCreditsPerMonth, Goal: strPtr(cfg.Goal), JudgeEnabled: cfg.JudgeEnabled,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}
	for _, t := range cfg.Targets {
		v.Targets = append(v.Targets, t.Echo)
	}
	if len(m.LastCheckSummary) > 0 {
		var s Summary
		if err := json.Unmarshal(m.LastCheckSummary, &s); err == nil {
			v.LastCheckSummary = &s
		}
	}
	return v, nil
}

func checkView(c store.MonitorCheck) CheckView {
	v := CheckView{
		ID: c.ID, MonitorID: c.MonitorID, Status: c.Status, Trigger: c.Trigger, ScheduledFor: c.ScheduledFor,
		StartedAt: c.StartedAt, FinishedAt: c.FinishedAt, EstimatedCredits: c.EstimatedCredits,
		ReservedCredits: c.ReservedCredits, ActualCredits: c.ActualCredits, BillingStatus: c.BillingStatus,
		TargetResults: c.TargetResults, Error: strPtr(c.Error), CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
	if len(v.TargetResults) == 0 {
		v.TargetResults = json.RawMessage("[]")
	}
	if len(c.Summary) > 0 && json.Unmarshal(c.Summary, &v.Summary) != nil {
		// Summaries are written by json.Marshal of a Summary; one that does
		// not decode (a damaged row) is shown as zero counts rather than
		// failing the whole listing.
		v.Summary = Summary{}
	}
	return v
}

func pageView(p store.MonitorPage) PageView {
	var d pageData
	if len(p.Data) > 0 && json.Unmarshal(p.Data, &d) != nil {
		// Written by savePage's json.Marshal; a damaged row shows the page
		// without its metadata, judgment and diff rather than failing the
		// listing.
		d = pageData{}
	}
	v := PageView{
		ID: p.ID, TargetID: p.TargetID, URL: p.URL, Status: p.Status,
		PreviousScrapeID: strPtr(p.PreviousScrapeID), CurrentScrapeID: strPtr(p.CurrentScrapeID),
		Error: strPtr(p.Error), Metadata: orNull(d.Metadata), Judgment: orNull(d.Judgment), Diff: orNull(d.Diff),
		Snapshot: d.Snapshot, CreatedAt: p.CreatedAt,
	}
	if p.StatusCode != 0 {
		code := p.StatusCode
		v.StatusCode = &code
	}
	return v
}
