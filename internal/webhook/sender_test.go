package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/testenv"
	"github.com/firegate/firegate/internal/webhook"
)

// received is one request as the test receiver saw it.
type received struct {
	method string
	header http.Header
	body   []byte
}

// receiver starts a real HTTP server answering status and recording each
// request.
func receiver(t *testing.T, status int) (*httptest.Server, <-chan received) {
	t.Helper()
	ch := make(chan received, 8)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("receiver: read body: %v", err)
		}
		ch <- received{method: r.Method, header: r.Header.Clone(), body: body}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"ok":true}`)
	}))
	t.Cleanup(srv.Close)
	return srv, ch
}

func newSender(t *testing.T, opts webhook.Options) *webhook.Sender {
	t.Helper()
	s := webhook.NewSender(opts, testenv.Logger(t))
	t.Cleanup(s.CloseIdleConnections)
	return s
}

func TestSendDelivers(t *testing.T) {
	t.Parallel()
	srv, got := receiver(t, http.StatusOK)
	const secret = "s3cret"
	spec, err := webhook.ParseSpec(json.RawMessage(`{"url":"` + srv.URL + `/hook?token=abc",
		"headers":{"Authorization":"Bearer t","X-Custom":"yes","Content-Type":"text/plain"},
		"metadata":{"run":"nightly"}}`))
	if err != nil {
		t.Fatal(err)
	}
	body, err := webhook.Envelope(spec, webhook.KindCrawl.Started("job-1"), "hook-1")
	if err != nil {
		t.Fatal(err)
	}
	s := newSender(t, webhook.Options{Secret: secret, AllowPrivate: true})
	if err := s.Send(t.Context(), spec, body); err != nil {
		t.Fatalf("Send: %v", err)
	}
	r := <-got
	if r.method != http.MethodPost {
		t.Errorf("method = %s, want POST", r.method)
	}
	if string(r.body) != string(body) {
		t.Errorf("body = %s, want %s", r.body, body)
	}
	// Recompute the signature independently of Sign.
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(r.body)
	if want := "sha256=" + hex.EncodeToString(m.Sum(nil)); r.header.Get(webhook.SignatureHeader) != want {
		t.Errorf("signature = %q, want %q", r.header.Get(webhook.SignatureHeader), want)
	}
	for name, want := range map[string]string{
		"Authorization": "Bearer t",
		"X-Custom":      "yes",
		"Content-Type":  "application/json",
		"User-Agent":    webhook.DefaultUserAgent,
	} {
		if v := r.header.Get(name); v != want {
			t.Errorf("header %s = %q, want %q", name, v, want)
		}
	}
	env := decode(t, r.body)
	if env["type"] != "crawl.started" || env["id"] != "job-1" || env["webhookId"] != "hook-1" {
		t.Errorf("envelope = %s", r.body)
	}
	if md, _ := env["metadata"].(map[string]any); md["run"] != "nightly" {
		t.Errorf("metadata = %v, want run=nightly", env["metadata"])
	}
}

func TestSendHeaderOverrides(t *testing.T) {
	t.Parallel()
	srv, got := receiver(t, http.StatusNoContent)
	// Built directly: ParseSpec would reject the signature header.
	spec := webhook.Spec{URL: srv.URL, Headers: map[string]string{
		"x-firecrawl-signature": "sha256=forged",
		"content-type":          "text/plain",
		"User-Agent":            "receiver-wants-this",
	}}
	body := []byte(`{"success":true}`)

	s := newSender(t, webhook.Options{AllowPrivate: true, UserAgent: "ignored-ua"})
	if err := s.Send(t.Context(), spec, body); err != nil {
		t.Fatalf("Send: %v", err)
	}
	r := <-got
	if v := r.header.Values(webhook.SignatureHeader); len(v) != 0 {
		t.Errorf("signature header without a secret = %q, want none", v)
	}
	if v := r.header.Get("Content-Type"); v != "application/json" {
		t.Errorf("Content-Type = %q", v)
	}
	if v := r.header.Get("User-Agent"); v != "receiver-wants-this" {
		t.Errorf("User-Agent = %q", v)
	}

	signed := newSender(t, webhook.Options{AllowPrivate: true, Secret: "k"})
	if err := signed.Send(t.Context(), spec, body); err != nil {
		t.Fatalf("Send: %v", err)
	}
	r = <-got
	if v := r.header.Values(webhook.SignatureHeader); len(v) != 1 || v[0] != webhook.Sign("k", body) {
		t.Errorf("signature = %q, want only %q", v, webhook.Sign("k", body))
	}
}

func TestSendStatus(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status    int
		wantErr   bool
		permanent bool
	}{
		{status: http.StatusOK},
		{status: http.StatusAccepted},
		{status: http.StatusNoContent},
		{status: http.StatusInternalServerError, wantErr: true},
		{status: http.StatusBadGateway, wantErr: true},
		{status: http.StatusServiceUnavailable, wantErr: true},
		{status: http.StatusRequestTimeout, wantErr: true},
		{status: http.StatusTooManyRequests, wantErr: true},
		{status: http.StatusBadRequest, wantErr: true, permanent: true},
		{status: http.StatusUnauthorized, wantErr: true, permanent: true},
		{status: http.StatusNotFound, wantErr: true, permanent: true},
		{status: http.StatusGone, wantErr: true, permanent: true},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			t.Parallel()
			srv, got := receiver(t, tt.status)
			s := newSender(t, webhook.Options{AllowPrivate: true})
			err := s.Send(t.Context(), webhook.Spec{URL: srv.URL}, []byte(`{}`))
			<-got
			if !tt.wantErr {
				if err != nil {
					t.Fatalf("Send: %v", err)
				}
				return
			}
			e, ok := errors.AsType[*webhook.Error](err)
			if !ok {
				t.Fatalf("Send error = %v, want *webhook.Error", err)
			}
			if e.StatusCode != tt.status {
				t.Errorf("StatusCode = %d, want %d", e.StatusCode, tt.status)
			}
			if got := webhook.Permanent(err); got != tt.permanent {
				t.Errorf("Permanent = %v, want %v (%v)", got, tt.permanent, err)
			}
			if !strings.Contains(err.Error(), http.StatusText(tt.status)) || !strings.HasPrefix(err.Error(), "webhook: ") {
				t.Errorf("message %q should start with webhook: and name the status", err)
			}
		})
	}
}

func TestSendDoesNotFollowRedirects(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
	}))
	t.Cleanup(target.Close)
	redir := httptest.NewServer(http.RedirectHandler(target.URL, http.StatusTemporaryRedirect))
	t.Cleanup(redir.Close)

	s := newSender(t, webhook.Options{AllowPrivate: true})
	err := s.Send(t.Context(), webhook.Spec{URL: redir.URL}, []byte(`{}`))
	if e, ok := errors.AsType[*webhook.Error](err); !ok || e.StatusCode != http.StatusTemporaryRedirect {
		t.Fatalf("Send error = %v, want a 307 *webhook.Error", err)
	}
	if !webhook.Permanent(err) {
		t.Errorf("redirect should be permanent: %v", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("redirect target hit %d times", n)
	}
}

func TestSendTimeoutIsRetryable(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })

	s := newSender(t, webhook.Options{AllowPrivate: true, Timeout: 100 * time.Millisecond})
	start := time.Now()
	err := s.Send(t.Context(), webhook.Spec{URL: srv.URL}, []byte(`{}`))
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("Send took %v with a 100ms timeout", elapsed)
	}
	if !errors.Is(err, webhook.ErrTimeout) {
		t.Fatalf("Send error = %v, want ErrTimeout", err)
	}
	if webhook.Permanent(err) {
		t.Errorf("timeout should be retryable: %v", err)
	}
	if e, ok := errors.AsType[*webhook.Error](err); !ok || e.StatusCode != 0 {
		t.Errorf("error = %#v, want *webhook.Error without status", err)
	}
}

func TestSendCancelledIsRetryable(t *testing.T) {
	t.Parallel()
	srv, _ := receiver(t, http.StatusOK)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s := newSender(t, webhook.Options{AllowPrivate: true})
	err := s.Send(ctx, webhook.Spec{URL: srv.URL}, []byte(`{}`))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Send error = %v, want context.Canceled", err)
	}
	if webhook.Permanent(err) {
		t.Errorf("cancellation should be retryable: %v", err)
	}
}

func TestSendConnectionRefusedIsRetryable(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	s := newSender(t, webhook.Options{AllowPrivate: true})
	err := s.Send(t.Context(), webhook.Spec{URL: url}, []byte(`{}`))
	if err == nil {
		t.Fatal("Send to a closed server succeeded")
	}
	if webhook.Permanent(err) {
		t.Errorf("connection refused should be retryable: %v", err)
	}
	if strings.Contains(err.Error(), url) {
		t.Errorf("error %q leaks the full URL", err)
	}
}

func TestSendRefusesPrivateTargets(t *testing.T) {
	t.Parallel()
	srv, got := receiver(t, http.StatusOK)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	s := newSender(t, webhook.Options{}) // AllowPrivate false
	for _, u := range []string{srv.URL, "http://localhost" + port + "/hook", "http://[::1]" + port} {
		err := s.Send(t.Context(), webhook.Spec{URL: u}, []byte(`{}`))
		if !errors.Is(err, webhook.ErrBlocked) {
			t.Errorf("Send(%s) error = %v, want ErrBlocked", u, err)
			continue
		}
		if !webhook.Permanent(err) {
			t.Errorf("Send(%s): refused target should be permanent", u)
		}
	}
	select {
	case r := <-got:
		t.Errorf("receiver got a request despite the guard: %s", r.body)
	default:
	}
}

func TestSendInvalidSpecIsPermanent(t *testing.T) {
	t.Parallel()
	s := newSender(t, webhook.Options{AllowPrivate: true})
	for _, spec := range []webhook.Spec{
		{},
		{URL: "ftp://example.com"},
		{URL: "https://example.com", Headers: map[string]string{"X-A": "a\nb"}},
	} {
		err := s.Send(t.Context(), spec, []byte(`{}`))
		if !webhook.Permanent(err) || !errors.Is(err, webhook.ErrInvalidSpec) {
			t.Errorf("Send(%+v) error = %v, want a permanent ErrInvalidSpec", spec, err)
		}
	}
}

func TestSign(t *testing.T) {
	t.Parallel()
	// RFC 4231 test case 2.
	body := []byte("what do ya want for nothing?")
	const want = "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
	if got := webhook.Sign("Jefe", body); got != want {
		t.Errorf("Sign = %s, want %s", got, want)
	}
	if !webhook.Verify("Jefe", body, want) {
		t.Error("Verify rejected a valid signature")
	}
	for _, bad := range []string{"", want[:len(want)-1] + "4", strings.TrimPrefix(want, "sha256="), webhook.Sign("jefe", body)} {
		if webhook.Verify("Jefe", body, bad) {
			t.Errorf("Verify accepted %q", bad)
		}
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	want := map[int]time.Duration{0: time.Minute, 1: time.Minute, 2: 5 * time.Minute, 3: 15 * time.Minute, 9: 15 * time.Minute}
	for attempt, d := range want {
		if got := webhook.Backoff(attempt); got != d {
			t.Errorf("Backoff(%d) = %v, want %v", attempt, got, d)
		}
	}
	if webhook.MaxAttempts != 4 {
		t.Errorf("MaxAttempts = %d, want 4 (one try and three retries)", webhook.MaxAttempts)
	}
}
