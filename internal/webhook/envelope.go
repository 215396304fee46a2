package webhook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Kind is the job family an event belongs to; it prefixes the event type.
type Kind string

// Event is one webhook notification, before it is wrapped in the envelope.
type Event struct {
	// Type is the full event name, e.g. "crawl.page".
	Type string
	// JobID is the crawl or batch scrape id; it becomes the envelope's id.
	JobID string
	// Success is false for a failed page or a failed job.
	Success bool
	// Data items are marshalled as they are (documents, json.RawMessage,
	// ...); nil or empty becomes [].
	Data []any
	// Error is the failure message; omitted from the envelope when empty.
	Error string
}

// Started is the "<kind>.started" event: success, no data.
func (k Kind) Started(jobID string) Event {
	return Event{Type: string(k) + "." + EventStarted, JobID: jobID, Success: true}
}

// Page is the "<kind>.page" event for a scraped page; doc is the document
// as the status endpoint returns it.
func (k Kind) Page(jobID string, doc any) Event {
	return Event{Type: string(k) + "." + EventPage, JobID: jobID, Success: true, Data: []any{doc}}
}

// PageFailed is the "<kind>.page" event for a page that could not be
// scraped: success false, the error, and data [{metadata:{sourceURL}}].
func (k Kind) PageFailed(jobID, sourceURL, errMsg string) Event {
	ref := pageRef{}
	ref.Metadata.SourceURL = sourceURL
	return Event{Type: string(k) + "." + EventPage, JobID: jobID, Success: false, Data: []any{ref}, Error: errMsg}
}

// Completed is the "<kind>.completed" event: success, no data (results are
// read from the status endpoint).
func (k Kind) Completed(jobID string) Event {
	return Event{Type: string(k) + "." + EventCompleted, JobID: jobID, Success: true}
}

// CompletedWith is the "<kind>.completed" event carrying the job's result
// (an extract's data) as its one data item.
func (k Kind) CompletedWith(jobID string, result any) Event {
	return Event{Type: string(k) + "." + EventCompleted, JobID: jobID, Success: true, Data: []any{result}}
}

// Failed is the "<kind>.failed" event: the job itself failed.
func (k Kind) Failed(jobID, errMsg string) Event {
	return Event{Type: string(k) + "." + EventFailed, JobID: jobID, Success: false, Error: errMsg}
}

// pageRef is the data item of a failed page event.
type pageRef struct {
	Metadata struct {
		SourceURL string `json:"sourceURL"`
	} `json:"metadata"`
}

// envelope is the JSON body POSTed to the receiver; field order follows the
// reference.
type envelope struct {
	Success   bool           `json:"success"`
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	WebhookID string         `json:"webhookId"`
	Data      []any          `json:"data"`
	Error     string         `json:"error,omitempty"`
	Metadata  map[string]any `json:"metadata"`
}

// Envelope builds the body of one delivery: {success, type, id, webhookId,
// data, error?, metadata}. data is always an array and metadata an object
// (the spec's metadata, or {}). webhookID identifies the delivery and must be
// reused when the same delivery is retried. HTML in strings is not escaped.
func Envelope(spec Spec, ev Event, webhookID string) ([]byte, error) {
	switch {
	case ev.Type == "":
		return nil, errors.New("webhook: envelope: empty event type")
	case ev.JobID == "":
		return nil, errors.New("webhook: envelope: empty job id")
	case webhookID == "":
		return nil, errors.New("webhook: envelope: empty webhook id")
	}
	env := envelope{
		Success:   ev.Success,
		Type:      ev.Type,
		ID:        ev.JobID,
		WebhookID: webhookID,
		Data:      ev.Data,
		Error:     ev.Error,
		Metadata:  spec.Metadata,
	}
	if env.Data == nil {
		env.Data = []any{}
	}
	if env.Metadata == nil {
		env.Metadata = map[string]any{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		return nil, fmt.Errorf("webhook: envelope: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
