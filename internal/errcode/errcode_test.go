package errcode_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/errcode"
)

var (
	errFixed       = errcode.New("pkg: timed out", errcode.Timeout, "PKG_TIMEOUT", "The work took longer than the timeout.")
	errOwnText     = errcode.New("pkg: unsupported file", errcode.Failed, "PKG_UNSUPPORTED_FILE", "")
	errLed         = errcode.New("pkg: tls error", errcode.Failed, "PKG_TLS", "").WithLead("TLS error")
	errOther       = errcode.New("other: blocked", errcode.Forbidden, "OTHER_BLOCKED", "Blocked.")
	errUnsupported = errcode.New("pkg: actions not supported", errcode.Unsupported, "PKG_ACTIONS_NOT_SUPPORTED", "")
	errCause       = errors.New("dial tcp 10.1.2.3:8080: connect: connection refused")
)

func TestLookup(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		err   error
		class errcode.Class
		code  string
		msg   string
	}{
		{"fixed message", fmt.Errorf("x: %w", errFixed), errcode.Timeout, "PKG_TIMEOUT", "The work took longer than the timeout."},
		{"own text led by the sentinel's text without its prefix",
			fmt.Errorf("pkg: browser: %w: content type %q", errOwnText, "image/png"), errcode.Failed, "PKG_UNSUPPORTED_FILE",
			`Unsupported file: content type "image/png".`},
		{"own text led by its lead", fmt.Errorf("%w: x509: unknown authority", errLed), errcode.Failed, "PKG_TLS", "TLS error: x509: unknown authority."},
		{"the sentinel alone", errOwnText, errcode.Failed, "PKG_UNSUPPORTED_FILE", "Unsupported file."},
		{"a failure's message as written", &errcode.Failure{Kind: errLed, Msg: "the certificate expired", Cause: errCause},
			errcode.Failed, "PKG_TLS", "the certificate expired"},
		{"a wrapped failure", fmt.Errorf("pkg: %w", &errcode.Failure{Kind: errOwnText, Msg: "The PDF is encrypted.", Cause: errCause}),
			errcode.Failed, "PKG_UNSUPPORTED_FILE", "The PDF is encrypted."},
		{"a failure without a message shows the lead, not the cause", &errcode.Failure{Kind: errLed, Cause: errCause},
			errcode.Failed, "PKG_TLS", "TLS error."},
		{"a sentinel's own message wins over a failure's", &errcode.Failure{Kind: errFixed, Msg: "The page took long.", Cause: errCause},
			errcode.Timeout, "PKG_TIMEOUT", "The work took longer than the timeout."},
		{"the outer sentinel wins", fmt.Errorf("%w: %w", errOther, errFixed), errcode.Forbidden, "OTHER_BLOCKED", "Blocked."},
		{"a failure's kind before a sentinel of its cause", &errcode.Failure{Kind: errOwnText, Msg: "Unreadable.", Cause: errOther},
			errcode.Failed, "PKG_UNSUPPORTED_FILE", "Unreadable."},
		{"an unsupported feature names its field", fmt.Errorf("pkg: %w", &errcode.Failure{Kind: errUnsupported, Field: "actions", Msg: "No browser."}),
			errcode.Unsupported, "PKG_ACTIONS_NOT_SUPPORTED", "No browser."},
	} {
		got, ok := errcode.Lookup(tc.err)
		want := errcode.Shown{Class: tc.class, Code: tc.code, Message: tc.msg}
		if tc.class == errcode.Unsupported {
			want.Field = "actions"
		}
		if !ok || got != want {
			t.Errorf("%s: Lookup(%v) = %+v, %v; want %+v", tc.name, tc.err, got, ok, want)
		}
		if c := errcode.ClassOf(tc.err); c != tc.class {
			t.Errorf("%s: ClassOf = %v, want %v", tc.name, c, tc.class)
		}
	}
	for _, err := range []error{errCause, context.Canceled, fmt.Errorf("x: %w", context.DeadlineExceeded), &errcode.Failure{Msg: "no kind"}} {
		if got, ok := errcode.Lookup(err); ok || errcode.ClassOf(err) != errcode.Unknown {
			t.Errorf("Lookup(%#v) = %+v; want none", err, got)
		}
	}
}

func TestFailureText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		f    *errcode.Failure
		want string
	}{
		{&errcode.Failure{Kind: errOwnText, Msg: "It failed."}, "pkg: unsupported file: It failed."},
		{&errcode.Failure{Kind: errOwnText, Msg: "It failed.", Cause: errCause}, "pkg: unsupported file: It failed.: dial tcp 10.1.2.3:8080: connect: connection refused"},
		{&errcode.Failure{Kind: errOwnText, Cause: errCause}, "pkg: unsupported file: dial tcp 10.1.2.3:8080: connect: connection refused"},
	} {
		if got := tc.f.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if got := tc.f.ClientMessage(); got != tc.f.Msg {
			t.Errorf("ClientMessage() = %q, want the Msg alone", got)
		}
	}
	var err error = &errcode.Failure{Kind: errOwnText, Msg: "It failed.", Cause: errCause}
	if !errors.Is(err, errOwnText) || !errors.Is(err, errCause) {
		t.Errorf("errors.Is misses the kind or the cause of %v", err)
	}
	err = &errcode.Failure{Kind: errOwnText, Msg: "It failed."}
	if !errors.Is(err, errOwnText) || errors.Is(err, errCause) {
		t.Errorf("errors.Is(%v): want the kind only", err)
	}
}

// TestWithLead: a lead changes the copy only; the sentinel keeps its text
// for logs.
func TestWithLead(t *testing.T) {
	t.Parallel()
	base := errcode.New("pkg: dns resolution failed", errcode.Unresolved, "PKG_DNS", "")
	led := base.WithLead("DNS resolution failed")
	if led.Error() != base.Error() || led.Code() != "PKG_DNS" {
		t.Errorf("WithLead changed the text or code: %q %q", led.Error(), led.Code())
	}
	if s, _ := errcode.Lookup(fmt.Errorf("%w: nowhere.invalid", base)); s.Message != "Dns resolution failed: nowhere.invalid." {
		t.Errorf("base: %q", s.Message)
	}
	if s, _ := errcode.Lookup(fmt.Errorf("%w: nowhere.invalid", led)); s.Message != "DNS resolution failed: nowhere.invalid." {
		t.Errorf("led: %q", s.Message)
	}
}

func TestSentence(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                   "",
		"  spaced  ":         "Spaced.",
		"already done.":      "Already done.",
		"Asks?":              "Asks?",
		"Bang!":              "Bang!",
		"élan":               "Élan.",
		"(8)":                "(8).",
		"The limit (8)":      "The limit (8).",
		"ends with a quote'": "Ends with a quote'.",
	} {
		if got := errcode.Sentence(in); got != want {
			t.Errorf("Sentence(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestDescribe: a known error keeps its code and message and gets no error
// id; an unknown one (or a cancelled context, which has no client behind it
// in a job) shows none of its text, only a fresh error id.
func TestDescribe(t *testing.T) {
	t.Parallel()
	code, msg, id := errcode.Describe(fmt.Errorf("page: %w", errFixed))
	if code != "PKG_TIMEOUT" || msg != "The work took longer than the timeout." || id != "" {
		t.Errorf("known: %s %q id %q", code, msg, id)
	}
	uuid := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for _, err := range []error{
		errors.New("store: dial tcp 10.1.2.3:5432: connect: connection refused"),
		fmt.Errorf("browser: devtools ws://127.0.0.1:9222/devtools/browser/x: %w", context.Canceled),
	} {
		code, msg, id := errcode.Describe(err)
		if !uuid.MatchString(id) || seen[id] {
			t.Errorf("%v: error id %q is not a fresh UUID", err, id)
		}
		seen[id] = true
		if code != errcode.UnknownCode || msg != errcode.UnknownMessage(id) {
			t.Errorf("%v: %s %q; want %s %q", err, code, msg, errcode.UnknownCode, errcode.UnknownMessage(id))
		}
		for _, leak := range []string{"10.1.2.3", "5432", "store:", "browser:", "9222", "127.0.0.1"} {
			if strings.Contains(msg, leak) {
				t.Errorf("%v: message %q shows %q", err, msg, leak)
			}
		}
	}
	if got := errcode.UnknownMessage("x"); !strings.HasSuffix(got, "contact support, error id x") {
		t.Errorf("UnknownMessage = %q", got)
	}
}

// BenchmarkDescribe: the error path's allocations (a failure, a sentinel
// wrapped with its own text).
func BenchmarkDescribe(b *testing.B) {
	failure := fmt.Errorf("scrape: %w", &errcode.Failure{Kind: errLed, Msg: "TLS error while connecting.", Cause: errCause})
	wrapped := fmt.Errorf("pkg: browser: %w: content type %q", errOwnText, "image/png")
	b.ReportAllocs()
	for b.Loop() {
		errcode.Describe(failure)
		errcode.Describe(wrapped)
	}
}
