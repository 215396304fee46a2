package webhook_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/testenv"
	"github.com/firegate/firegate/internal/webhook"
)

// testDelivery is a caller's job args type.
type testDelivery struct {
	Owner string          `json:"owner"`
	Spec  webhook.Spec    `json:"spec"`
	Body  json.RawMessage `json:"body"`
}

func (testDelivery) Kind() string                 { return "test_webhook" }
func (testDelivery) InsertOpts() river.InsertOpts { return webhook.DeliveryInsertOpts() }
func (d testDelivery) Delivery() (webhook.Spec, []byte, []any) {
	return d.Spec, d.Body, []any{"owner", d.Owner}
}

func job(d testDelivery, attempt int) *river.Job[testDelivery] {
	return &river.Job[testDelivery]{JobRow: &rivertype.JobRow{Attempt: attempt}, Args: d}
}

// TestWorker delivers a queued body to a real receiver, signed; a
// permanent failure cancels the job, a transient one is returned for a
// retry, and without a sender the body is dropped.
func TestWorker(t *testing.T) {
	t.Parallel()
	const secret = "k"
	body := []byte(`{"success":true,"type":"x.completed"}`)
	sender := newSender(t, webhook.Options{Secret: secret, AllowPrivate: true})
	w := webhook.NewWorker[testDelivery](sender, testenv.Logger(t), "test delivery failed")

	srv, got := receiver(t, http.StatusOK)
	if err := w.Work(t.Context(), job(testDelivery{Owner: "a", Spec: webhook.Spec{URL: srv.URL}, Body: body}, 1)); err != nil {
		t.Fatalf("Work to a 200 receiver: %v", err)
	}
	r := <-got
	if string(r.body) != string(body) {
		t.Errorf("receiver got %s, want %s", r.body, body)
	}
	if !webhook.Verify(secret, r.body, r.header.Get(webhook.SignatureHeader)) {
		t.Errorf("signature %q does not verify", r.header.Get(webhook.SignatureHeader))
	}

	gone, _ := receiver(t, http.StatusGone)
	err := w.Work(t.Context(), job(testDelivery{Spec: webhook.Spec{URL: gone.URL}, Body: body}, 1))
	if _, ok := errors.AsType[*rivertype.JobCancelError](err); !ok {
		t.Errorf("Work to a 410 receiver = %v, want a job cancel", err)
	}
	busy, _ := receiver(t, http.StatusServiceUnavailable)
	err = w.Work(t.Context(), job(testDelivery{Spec: webhook.Spec{URL: busy.URL}, Body: body}, 2))
	if _, ok := errors.AsType[*rivertype.JobCancelError](err); err == nil || ok {
		t.Errorf("Work to a 503 receiver = %v, want an error to retry", err)
	}

	if err := webhook.NewWorker[testDelivery](nil, testenv.Logger(t), "x").Work(t.Context(), job(testDelivery{Spec: webhook.Spec{URL: busy.URL}}, 1)); err != nil {
		t.Errorf("Work without a sender = %v, want nil", err)
	}
	if d := time.Until(w.NextRetry(job(testDelivery{}, 2))); d < webhook.Backoff(2)-time.Second || d > webhook.Backoff(2) {
		t.Errorf("NextRetry after attempt 2 is %v away, want about %v", d, webhook.Backoff(2))
	}
	if d := w.Timeout(job(testDelivery{}, 1)); d <= webhook.DefaultTimeout {
		t.Errorf("Timeout = %v, want above the sender's %v", d, webhook.DefaultTimeout)
	}
	if o := (testDelivery{}).InsertOpts(); o.Queue != queue.Control || o.MaxAttempts != webhook.MaxAttempts {
		t.Errorf("DeliveryInsertOpts = %+v", o)
	}
}

// inserted records what Enqueue queued.
type inserted struct {
	ctxErr error
	args   river.JobArgs
	opts   *river.InsertOpts
}

type recordingInserter struct {
	got []inserted
	err error
}

func (q *recordingInserter) Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error {
	q.got = append(q.got, inserted{ctxErr: ctx.Err(), args: args, opts: opts})
	return q.err
}

// TestEnqueue queues the envelope of a wanted event, with the caller's
// options and a context that outlives the caller's, and nothing for an
// event the spec does not want or a missing spec.
func TestEnqueue(t *testing.T) {
	t.Parallel()
	spec := &webhook.Spec{URL: "https://example.com/hook", Events: []string{webhook.EventCompleted}, Metadata: map[string]any{"m": 1.0}}
	mk := func(body []byte) webhook.Delivery { return testDelivery{Owner: "j1", Spec: *spec, Body: body} }
	ev := webhook.KindCrawl.Completed("j1")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	q := &recordingInserter{}
	opts := &river.InsertOpts{ScheduledAt: time.Now().Add(time.Second)}
	if err := webhook.Enqueue(ctx, q, spec, ev, "w1", opts, mk); err != nil {
		t.Fatal(err)
	}
	if len(q.got) != 1 {
		t.Fatalf("inserted %d jobs, want 1", len(q.got))
	}
	want, err := webhook.Envelope(*spec, ev, "w1")
	if err != nil {
		t.Fatal(err)
	}
	d := q.got[0].args.(testDelivery)
	if string(d.Body) != string(want) || d.Owner != "j1" || d.Spec.URL != spec.URL {
		t.Errorf("queued %+v, want body %s", d, want)
	}
	if q.got[0].opts != opts || q.got[0].ctxErr != nil {
		t.Errorf("queued with opts %v and context error %v, want the caller's opts and a live context", q.got[0].opts, q.got[0].ctxErr)
	}

	q = &recordingInserter{}
	for _, s := range []*webhook.Spec{nil, {}, spec} {
		if err := webhook.Enqueue(t.Context(), q, s, webhook.KindCrawl.Started("j1"), "w2", nil, mk); err != nil {
			t.Fatal(err)
		}
	}
	if len(q.got) != 0 {
		t.Errorf("queued %d unwanted events", len(q.got))
	}

	q = &recordingInserter{err: errors.New("queue down")}
	if err := webhook.Enqueue(t.Context(), q, spec, ev, "w3", nil, mk); err == nil {
		t.Error("a failed insert returned no error")
	}
	if err := webhook.Enqueue(t.Context(), q, spec, ev, "", nil, mk); err == nil {
		t.Error("an envelope without a webhook id returned no error")
	}
}
