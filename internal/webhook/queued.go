package webhook

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/queue"
)

// Queued deliveries: the jobs runner, agent runs and monitors queue each
// event's body as Args of their own Owner and deliver it with one Worker,
// retried on the Backoff schedule.

// Delivery is the River job arguments of one queued webhook body: Args
// of an owner's Kind.
type Delivery interface {
	river.JobArgs
	// Delivery returns the spec and body to send and the key/value pairs
	// that name the delivery in the log.
	Delivery() (spec Spec, body []byte, attrs []any)
}

// Owner names an owner's deliveries: the River job kind they are queued
// under (each owner has its own, registered with its own Worker) and the
// log key of the id of what the event is about ("job_id", "check_id",
// "run_id"). Owners declare it on an empty struct type.
type Owner interface {
	Kind() string
	IDKey() string
}

// Args is one queued delivery of the owner K: the body to send to
// the spec's URL, and the id and event type it is logged under.
type Args[K Owner] struct {
	ID    string          `json:"id"`
	Event string          `json:"event"`
	Spec  Spec            `json:"spec"`
	Body  json.RawMessage `json:"body"`
}

// Kind is K's job kind.
func (Args[K]) Kind() string {
	var k K
	return k.Kind()
}

// InsertOpts are DeliveryInsertOpts.
func (Args[K]) InsertOpts() river.InsertOpts { return DeliveryInsertOpts() }

// Delivery implements Delivery.
func (a Args[K]) Delivery() (Spec, []byte, []any) {
	var k K
	return a.Spec, a.Body, []any{k.IDKey(), a.ID, "event", a.Event}
}

// UnmarshalJSON reads a's arguments, and those of deliveries queued before
// the owners shared Args, whose id was stored as "job", "check" or "run".
func (a *Args[K]) UnmarshalJSON(b []byte) error {
	var v struct {
		ID    string          `json:"id"`
		Job   string          `json:"job"`
		Check string          `json:"check"`
		Run   string          `json:"run"`
		Event string          `json:"event"`
		Spec  Spec            `json:"spec"`
		Body  json.RawMessage `json:"body"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	id := v.ID
	for _, old := range []string{v.Job, v.Check, v.Run} {
		if id == "" {
			id = old
		}
	}
	*a = Args[K]{ID: id, Event: v.Event, Spec: v.Spec, Body: v.Body}
	return nil
}

// DeliveryInsertOpts are the insert options of a Delivery: the control
// queue, at most MaxAttempts attempts.
func DeliveryInsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queue.Control, MaxAttempts: MaxAttempts}
}

// Inserter queues River jobs.
type Inserter interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
}

// Enqueue builds the envelope of ev for spec (webhookID names the
// delivery) and queues the delivery args makes of that body, with opts
// (nil: the Delivery's own), detached from ctx's cancellation so the last
// event of a finishing job is not lost with it. It does nothing when spec
// is nil, has no URL or does not want ev.
func Enqueue(ctx context.Context, q Inserter, spec *Spec, ev Event, webhookID string, opts *river.InsertOpts,
	args func(body []byte) Delivery) error {
	if spec == nil || spec.IsZero() || !spec.Wants(ev.Type) {
		return nil
	}
	body, err := Envelope(*spec, ev, webhookID)
	if err != nil {
		return err
	}
	return q.Insert(context.WithoutCancel(ctx), args(body), opts)
}

// Poster sends one webhook body; *Sender implements it.
type Poster interface {
	Send(ctx context.Context, spec Spec, body []byte) error
}

// Worker delivers queued bodies of T. A failure a retry may fix is retried
// on the Backoff schedule; a permanent one cancels the job.
type Worker[T Delivery] struct {
	river.WorkerDefaults[T]
	sender  Poster
	log     *slog.Logger
	failMsg string
}

// NewWorker returns a Worker sending with sender (nil: queued bodies are
// dropped) that logs a failed attempt as failMsg.
func NewWorker[T Delivery](sender Poster, log *slog.Logger, failMsg string) *Worker[T] {
	return &Worker[T]{sender: sender, log: log, failMsg: failMsg}
}

// Work delivers one body.
func (w *Worker[T]) Work(ctx context.Context, job *river.Job[T]) error {
	if w.sender == nil {
		return nil
	}
	spec, body, attrs := job.Args.Delivery()
	err := w.sender.Send(ctx, spec, body)
	if err == nil {
		return nil
	}
	w.log.WarnContext(ctx, w.failMsg, append(attrs, "attempt", job.Attempt, "err", err)...)
	if Permanent(err) {
		return river.JobCancel(err)
	}
	return err
}

// NextRetry follows the Backoff schedule.
func (w *Worker[T]) NextRetry(job *river.Job[T]) time.Time {
	return time.Now().Add(Backoff(job.Attempt))
}

// Timeout bounds a delivery a little above the sender's own deadline.
func (w *Worker[T]) Timeout(*river.Job[T]) time.Duration {
	return DefaultTimeout + 5*time.Second
}
