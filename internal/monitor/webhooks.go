package monitor

import (
	"context"
	"encoding/json"
	"time"

	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/webhook"
)

// webhookOwner names the deliveries of monitor checks.
type webhookOwner struct{}

func (webhookOwner) Kind() string  { return "monitor_webhook" }
func (webhookOwner) IDKey() string { return "check_id" }

// webhookArgs deliver one webhook body of a check.
type webhookArgs = webhook.Args[webhookOwner]

// notify queues one webhook delivery when the monitor has a webhook that
// wants the event.
func (r *Runner) notify(ctx context.Context, spec *webhook.Spec, event, checkID string, success bool, data any) {
	if r.cfg.Webhooks == nil || r.q == nil {
		return
	}
	var opts *river.InsertOpts
	if event == EventCheckCompleted {
		// After the page events queued before it.
		opts = &river.InsertOpts{ScheduledAt: time.Now().Add(time.Second)}
	}
	ev := webhook.Event{Type: event, JobID: checkID, Success: success, Data: []any{data}}
	err := webhook.Enqueue(ctx, r.q, spec, ev, newID(), opts, func(body []byte) webhook.Delivery {
		return webhookArgs{ID: checkID, Event: event, Spec: *spec, Body: body}
	})
	if err != nil {
		r.cfg.Log.ErrorContext(ctx, "monitor: queue webhook", "check_id", checkID, "event", event, "err", err)
	}
}

// completedPayload is the data item of monitor.check.completed.
type completedPayload struct {
	MonitorID string  `json:"monitorId"`
	CheckID   string  `json:"checkId"`
	Status    string  `json:"status"`
	Summary   Summary `json:"summary"`
}

func completedData(monitorID, checkID, status string, s Summary) completedPayload {
	return completedPayload{MonitorID: monitorID, CheckID: checkID, Status: status, Summary: s}
}

// pagePayload is the data item of monitor.page.
type pagePayload struct {
	MonitorID        string          `json:"monitorId"`
	CheckID          string          `json:"checkId"`
	URL              string          `json:"url"`
	Status           string          `json:"status"`
	PreviousScrapeID *string         `json:"previousScrapeId"`
	CurrentScrapeID  *string         `json:"currentScrapeId"`
	Error            *string         `json:"error"`
	IsMeaningful     *bool           `json:"isMeaningful"`
	Judgment         json.RawMessage `json:"judgment"`
	Diff             json.RawMessage `json:"diff"`
}
