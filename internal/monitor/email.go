package monitor

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/changetrack"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/mail"
	"github.com/firegate/firegate/internal/queue"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/webhook"
)

// MailSender sends one mail; *mail.Sender implements it.
type MailSender interface {
	Send(ctx context.Context, m mail.Message) error
}

// Email sends the monitors' email notifications: a confirmation to each
// new recipient, and to confirmed recipients a summary of each check that
// found changes. Both go through the durable queue, retried, never in the
// way of a check.
type Email struct {
	Sender MailSender
	// Secret signs the confirm and unsubscribe links (EMAIL_TOKEN_SECRET).
	Secret []byte
	// PublicURL is this server's base URL in the links.
	PublicURL string
	// MinInterval is the least time between two check summaries to one
	// recipient of a monitor (checks in between send none); default 2m.
	MinInterval time.Duration
	// ConfirmTTL is how long a confirmation link works; default 7 days.
	ConfirmTTL time.Duration
	Log        *slog.Logger
}

// Email bounds.
const (
	// reaskAfter is how soon a still-pending recipient listed again (an
	// update of the monitor) is sent another confirmation.
	reaskAfter = 24 * time.Hour
	// summaryPages bounds the pages a summary lists; summaryDiff the bytes
	// of one page's diff in it; summaryBytes the whole text.
	// maxConfirmations bounds the confirmations asked of one address,
	// across all monitors and teams, in confirmWindow: listing an address
	// in many monitors does not flood it.
	maxConfirmations = 5
	confirmWindow    = 24 * time.Hour
	summaryPages     = 50
	summaryDiff      = 2000
	summaryBytes     = 64 << 10
)

func (e *Email) minInterval() time.Duration {
	if e.MinInterval > 0 {
		return e.MinInterval
	}
	return 2 * time.Minute
}

func (e *Email) confirmTTL() time.Duration {
	if e.ConfirmTTL > 0 {
		return e.ConfirmTTL
	}
	return 7 * 24 * time.Hour
}

func (e *Email) log() *slog.Logger {
	if e.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Log
}

// Errors of the email routes.
var (
	// ErrEmailNotConfigured: notification.email asked of a server without
	// an SMTP relay.
	ErrEmailNotConfigured = errcode.New("monitor: email is not configured", errcode.Invalid, "EMAIL_NOT_CONFIGURED",
		"Email notifications are not configured on this server: the operator sets SMTP_URL (an SMTP relay) and EMAIL_TOKEN_SECRET to send them. Use the webhook instead.")
	// ErrBadToken: a confirm or unsubscribe token that is malformed,
	// forged, expired or of the other route.
	ErrBadToken = errcode.New("monitor: bad email token", errcode.Invalid, "INVALID_TOKEN",
		"The link is invalid or has expired")
	// ErrRecipientGone: a confirmation for an address the monitor no
	// longer lists (or a deleted monitor).
	ErrRecipientGone = errcode.New("monitor: recipient not found", errcode.NotFound, "NOT_FOUND",
		"This address is no longer a recipient of the monitor")
)

// EmailSettings is a monitor's notification.email.
type EmailSettings struct {
	Enabled      bool     `json:"enabled"`
	Recipients   []string `json:"recipients"`
	IncludeDiffs bool     `json:"includeDiffs"`
}

// emailSettings reads the config's notification.email; nil when absent.
func (c Config) emailSettings() *EmailSettings {
	if len(c.Notification) == 0 {
		return nil
	}
	var n struct {
		Email *EmailSettings `json:"email"`
	}
	if json.Unmarshal(c.Notification, &n) != nil {
		return nil
	}
	return n.Email
}

// Token purposes.
const (
	purposeConfirm     = "confirm"
	purposeUnsubscribe = "unsubscribe"
)

type tokenClaims struct {
	Purpose string `json:"p"`
	Monitor string `json:"m"`
	Email   string `json:"e"`
	Expires int64  `json:"x,omitempty"` // Unix seconds; 0: never
}

// tokenKey derives the signing key of email tokens from the secret, so
// that the secret signs nothing else in the same way.
func (e *Email) tokenKey() []byte {
	m := hmac.New(sha256.New, e.Secret)
	m.Write([]byte("firegate/monitor-email-token/v1"))
	return m.Sum(nil)
}

// token signs claims: base64url(JSON) "." base64url(HMAC-SHA256).
func (e *Email) token(c tokenClaims) string {
	b, _ := json.Marshal(c) // cannot fail: tokenClaims holds strings and integers only
	p := base64.RawURLEncoding.EncodeToString(b)
	m := hmac.New(sha256.New, e.tokenKey())
	m.Write([]byte(p))
	return p + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// maxToken bounds a token read from a request.
const maxToken = 2048

// verify checks a token's signature, purpose and expiry.
func (e *Email) verify(tok, purpose string, now time.Time) (tokenClaims, error) {
	p, sig, ok := strings.Cut(tok, ".")
	if !ok || len(tok) > maxToken {
		return tokenClaims{}, ErrBadToken
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return tokenClaims{}, ErrBadToken
	}
	m := hmac.New(sha256.New, e.tokenKey())
	m.Write([]byte(p))
	if !hmac.Equal(got, m.Sum(nil)) {
		return tokenClaims{}, ErrBadToken
	}
	b, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return tokenClaims{}, ErrBadToken
	}
	var c tokenClaims
	if json.Unmarshal(b, &c) != nil || c.Purpose != purpose || c.Monitor == "" || c.Email == "" {
		return tokenClaims{}, ErrBadToken
	}
	if c.Expires != 0 && now.Unix() > c.Expires {
		return tokenClaims{}, ErrBadToken
	}
	return c, nil
}

func (e *Email) link(route, tok string) string {
	return strings.TrimRight(e.PublicURL, "/") + "/v2/monitor/email/" + route + "?token=" + url.QueryEscape(tok)
}

// EmailResult is the outcome of a confirm or unsubscribe link.
type EmailResult struct {
	MonitorID string `json:"monitorId"`
	Email     string `json:"email"`
	Status    string `json:"status"`
}

// SetEmail turns email notifications on (nil: off).
func (s *Service) SetEmail(e *Email) { s.email = e }

// EmailEnabled reports whether the server sends email notifications.
func (s *Service) EmailEnabled() bool { return s.email != nil }

// ConfirmEmail confirms the recipient a confirmation link names.
func (s *Service) ConfirmEmail(ctx context.Context, tok string) (EmailResult, error) {
	if s.email == nil {
		return EmailResult{}, ErrEmailNotConfigured
	}
	c, err := s.email.verify(tok, purposeConfirm, s.clock())
	if err != nil {
		return EmailResult{}, err
	}
	err = s.store.SetRecipientStatus(ctx, c.Monitor, c.Email, store.RecipientConfirmed, s.clock())
	if errors.Is(err, store.ErrNotFound) {
		return EmailResult{}, ErrRecipientGone
	}
	if err != nil {
		return EmailResult{}, err
	}
	return EmailResult{MonitorID: c.Monitor, Email: c.Email, Status: store.RecipientConfirmed}, nil
}

// UnsubscribeEmail unsubscribes the recipient an unsubscribe link names.
// An address the monitor no longer lists is unsubscribed already.
func (s *Service) UnsubscribeEmail(ctx context.Context, tok string) (EmailResult, error) {
	if s.email == nil {
		return EmailResult{}, ErrEmailNotConfigured
	}
	c, err := s.email.verify(tok, purposeUnsubscribe, s.clock())
	if err != nil {
		return EmailResult{}, err
	}
	err = s.store.SetRecipientStatus(ctx, c.Monitor, c.Email, store.RecipientUnsubscribed, s.clock())
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return EmailResult{}, err
	}
	return EmailResult{MonitorID: c.Monitor, Email: c.Email, Status: store.RecipientUnsubscribed}, nil
}

// syncEmail records the monitor's listed recipients and queues a
// confirmation to each one not asked yet. A failure is logged: the
// monitor is saved, and its next update asks again.
func (s *Service) syncEmail(ctx context.Context, teamID, monitorID string, cfg Config) {
	set := cfg.emailSettings()
	if s.email == nil || set == nil || !set.Enabled {
		return
	}
	now := s.clock()
	ask, err := s.store.SyncRecipients(ctx, monitorID, set.Recipients, now, now.Add(-reaskAfter))
	if err != nil {
		s.email.log().ErrorContext(ctx, "monitor: email recipients", "monitor_id", monitorID, "err", err)
		return
	}
	for _, to := range ask {
		args := emailArgs{Mail: emailConfirm, Team: teamID, Monitor: monitorID, To: to, Asked: now.Unix()}
		if err := s.q.Insert(context.WithoutCancel(ctx), args, nil); err != nil {
			s.email.log().ErrorContext(ctx, "monitor: queue confirmation email", "monitor_id", monitorID, "err", err)
		}
	}
}

// Email job kinds.
const (
	emailConfirm = "confirm"
	emailSummary = "summary"
)

// emailArgs send one email: a confirmation, or a check's summary.
type emailArgs struct {
	Mail    string `json:"mail"` // emailConfirm or emailSummary
	Team    string `json:"team"`
	Monitor string `json:"monitor"`
	Check   string `json:"check,omitempty"`
	To      string `json:"to"`
	// Asked tells apart the confirmations of one address asked again.
	Asked int64 `json:"asked,omitempty"`
}

func (emailArgs) Kind() string { return "monitor_email" }

// InsertOpts: the control queue, retried like webhooks, and unique, so a
// check's summary goes to a recipient once.
func (emailArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: queue.Control, MaxAttempts: webhook.MaxAttempts, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

type emailWorker struct {
	river.WorkerDefaults[emailArgs]
	r *Runner
}

func (w *emailWorker) Timeout(*river.Job[emailArgs]) time.Duration {
	return mail.DefaultTimeout + 15*time.Second
}

// NextRetry follows the webhooks' schedule (1, 5, 15 minutes).
func (w *emailWorker) NextRetry(job *river.Job[emailArgs]) time.Time {
	return time.Now().Add(webhook.Backoff(job.Attempt))
}

func (w *emailWorker) Work(ctx context.Context, job *river.Job[emailArgs]) error {
	e := w.r.cfg.Email
	if e == nil {
		return nil
	}
	a := job.Args
	log := e.log().With("monitor_id", a.Monitor, "mail", a.Mail, "check_id", a.Check)
	var msg mail.Message
	var ok bool
	var err error
	switch a.Mail {
	case emailConfirm:
		msg, ok, err = w.r.confirmMessage(ctx, a)
	case emailSummary:
		msg, ok, err = w.r.summaryMessage(ctx, a)
	}
	if err != nil || !ok {
		return err
	}
	if err := e.Sender.Send(ctx, msg); err != nil {
		log.WarnContext(ctx, "monitor: email not sent", "attempt", job.Attempt, "err", err)
		if errors.Is(err, mail.ErrPermanent) {
			return river.JobCancel(err)
		}
		return err
	}
	log.InfoContext(ctx, "monitor: email sent")
	return nil
}

// confirmMessage is the confirmation to a pending recipient; ok is false
// when there is nothing to send (confirmed meanwhile, unlisted, or the
// monitor deleted).
func (r *Runner) confirmMessage(ctx context.Context, a emailArgs) (mail.Message, bool, error) {
	e := r.cfg.Email
	st, err := r.cfg.Store.RecipientStatus(ctx, a.Monitor, a.To)
	if errors.Is(err, store.ErrNotFound) || (err == nil && st != store.RecipientPending) {
		return mail.Message{}, false, nil
	}
	if err != nil {
		return mail.Message{}, false, err
	}
	n, err := r.cfg.Store.EarlierConfirmations(ctx, a.Monitor, a.To, r.now().Add(-confirmWindow))
	if err != nil {
		return mail.Message{}, false, err
	}
	if n >= maxConfirmations {
		e.log().WarnContext(ctx, "monitor: confirmation not sent: the address was asked too often today",
			"monitor_id", a.Monitor, "asked", n)
		return mail.Message{}, false, nil
	}
	m, err := r.cfg.Store.Monitor(ctx, a.Team, a.Monitor)
	if errors.Is(err, store.ErrNotFound) {
		return mail.Message{}, false, nil
	}
	if err != nil {
		return mail.Message{}, false, err
	}
	exp := r.now().Add(e.confirmTTL())
	tok := e.token(tokenClaims{Purpose: purposeConfirm, Monitor: a.Monitor, Email: a.To, Expires: exp.Unix()})
	var b strings.Builder
	fmt.Fprintf(&b, "Hello,\n\nThe monitor %q on %s lists %s to receive an email when one of its checks finds changes.\n\n",
		m.Name, hostOf(e.PublicURL), a.To)
	fmt.Fprintf(&b, "To receive these emails, confirm here:\n%s\n\n", e.link(purposeConfirm, tok))
	fmt.Fprintf(&b, "Until you confirm, nothing else is sent to this address. If you did not expect this message, ignore it.\n"+
		"The link works until %s.\n", exp.Format(time.RFC1123))
	return mail.Message{To: a.To, Subject: fmt.Sprintf("Confirm change emails of the monitor %q", m.Name), Text: b.String()}, true, nil
}

// summaryMessage is a check's summary to a confirmed recipient; ok is
// false when the recipient is not confirmed, or was sent another check's
// summary less than MinInterval ago.
func (r *Runner) summaryMessage(ctx context.Context, a emailArgs) (mail.Message, bool, error) {
	e := r.cfg.Email
	now := r.now()
	ok, err := r.cfg.Store.ClaimSummary(ctx, a.Monitor, a.To, a.Check, now, now.Add(-e.minInterval()))
	if err != nil || !ok {
		return mail.Message{}, false, err
	}
	m, err := r.cfg.Store.Monitor(ctx, a.Team, a.Monitor)
	if errors.Is(err, store.ErrNotFound) {
		return mail.Message{}, false, nil
	}
	if err != nil {
		return mail.Message{}, false, err
	}
	c, err := r.cfg.Store.MonitorCheck(ctx, a.Team, a.Monitor, a.Check)
	if errors.Is(err, store.ErrNotFound) {
		return mail.Message{}, false, nil
	}
	if err != nil {
		return mail.Message{}, false, err
	}
	var cfg Config
	if err := json.Unmarshal(m.Config, &cfg); err != nil {
		// The check itself failed on this; the summary goes out without diffs.
		e.log().WarnContext(ctx, "monitor: summary email: unreadable monitor config", "monitor_id", m.ID, "err", err)
	}
	withDiffs := false
	if set := cfg.emailSettings(); set != nil {
		withDiffs = set.IncludeDiffs
	}
	var sum Summary
	if err := json.Unmarshal(c.Summary, &sum); err != nil {
		// Written by finish's json.Marshal; a damaged row gives zero counts.
		e.log().WarnContext(ctx, "monitor: summary email: unreadable check summary", "check_id", c.ID, "err", err)
	}
	var b bytes.Buffer
	finished := now
	if c.FinishedAt != nil {
		finished = *c.FinishedAt
	}
	fmt.Fprintf(&b, "The check %s of the monitor %q finished (%s) at %s.\n\n", c.ID, m.Name, c.Status, finished.Format(time.RFC1123))
	fmt.Fprintf(&b, "Pages: %d checked, %d changed, %d new, %d removed, %d failed, %d unchanged.\n",
		sum.TotalPages, sum.Changed, sum.New, sum.Removed, sum.Error, sum.Same)
	listed := 0
	for _, st := range []string{changetrack.StatusChanged, changetrack.StatusNew, changetrack.StatusRemoved} {
		if listed >= summaryPages {
			break
		}
		pages, err := r.cfg.Store.CheckPages(ctx, c.ID, st, 0, summaryPages-listed+1)
		if err != nil {
			return mail.Message{}, false, err
		}
		if len(pages) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n%s:\n", strings.ToUpper(st[:1])+st[1:])
		for _, p := range pages {
			if listed >= summaryPages {
				break
			}
			listed++
			fmt.Fprintf(&b, "- %s\n", p.URL)
			if withDiffs && st == changetrack.StatusChanged {
				if text := diffText(p.Data); text != "" {
					for _, line := range strings.Split(cut(text, summaryDiff), "\n") {
						b.WriteString("    " + line + "\n")
					}
				}
			}
		}
	}
	if more := sum.Changed + sum.New + sum.Removed - listed; more > 0 {
		fmt.Fprintf(&b, "\n... and %d more pages.\n", more)
	}
	text := cut(b.String(), summaryBytes)
	unsub := e.link(purposeUnsubscribe, e.token(tokenClaims{Purpose: purposeUnsubscribe, Monitor: a.Monitor, Email: a.To}))
	text += fmt.Sprintf("\nThe check's pages: GET %s/v2/monitor/%s/checks/%s (with an API key of the team).\n"+
		"\nYou receive this email because you confirmed the change emails of this monitor.\nUnsubscribe: %s\n",
		strings.TrimRight(e.PublicURL, "/"), m.ID, c.ID, unsub)
	subject := fmt.Sprintf("%s: %d changed, %d new, %d removed", m.Name, sum.Changed, sum.New, sum.Removed)
	return mail.Message{To: a.To, Subject: subject, Text: text, Unsubscribe: unsub}, true, nil
}

// cut bounds s to n bytes, on a line or character boundary, marking the
// cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := strings.LastIndexByte(s[:n], '\n')
	if i < n/2 {
		i = n
		for i > 0 && s[i]&0xC0 == 0x80 {
			i--
		}
	}
	return s[:i] + "\n[cut]\n"
}

func hostOf(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return u
	}
	return p.Host
}

// queueSummaries queues the summary of a finished check that found
// changes to each listed recipient (the worker sends only to confirmed
// ones). A failure to queue is logged; the check is done either way.
func (r *Runner) queueSummaries(ctx context.Context, c store.MonitorCheck, status string, sum Summary, cfg *Config) {
	e := r.cfg.Email
	if e == nil || r.q == nil || cfg == nil || (status != store.CheckCompleted && status != store.CheckPartial) ||
		sum.Changed+sum.New+sum.Removed == 0 {
		return
	}
	set := cfg.emailSettings()
	if set == nil || !set.Enabled {
		return
	}
	for _, to := range set.Recipients {
		args := emailArgs{Mail: emailSummary, Team: c.TeamID, Monitor: c.MonitorID, Check: c.ID, To: to}
		if err := r.q.Insert(context.WithoutCancel(ctx), args, nil); err != nil {
			e.log().ErrorContext(ctx, "monitor: queue summary email", "check_id", c.ID, "err", err)
		}
	}
}

// diffText is the text diff a changed page's stored data holds, or "" when
// it holds none or cannot be read (the summary then lists the page alone).
func diffText(data []byte) string {
	var d pageData
	if len(data) == 0 || json.Unmarshal(data, &d) != nil || len(d.Diff) == 0 {
		return ""
	}
	var diff struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(d.Diff, &diff) != nil {
		return ""
	}
	return diff.Text
}
