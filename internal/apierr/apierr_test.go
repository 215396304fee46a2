package apierr_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/apierr"
	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/monitor"
	"github.com/firegate/firegate/internal/scrape"
)

func TestMap(t *testing.T) {
	cases := []struct {
		name   string
		err    error
		status int
		code   string
		msg    string
	}{
		{"table row with its message", fmt.Errorf("x: %w", scrape.ErrTimeout), http.StatusRequestTimeout, "SCRAPE_TIMEOUT",
			"Request timed out: the scrape took longer than the timeout. Raise timeout or simplify the request."},
		{"failure message for the user", &scrape.Failure{Kind: scrape.ErrSite, Msg: "the site answered 500"}, http.StatusInternalServerError,
			"SCRAPE_SITE_ERROR", "the site answered 500"},
		{"map error", fmt.Errorf("%w: 3s", crawl.ErrTimeout), http.StatusRequestTimeout, "MAP_TIMEOUT",
			"The map operation timed out before it finished. Raise timeout, lower limit, or set sitemap to skip or only."},
		{"row with the wrapped text", fmt.Errorf("%w: bad pattern", crawl.ErrInvalidOptions), http.StatusBadRequest, "BAD_REQUEST",
			"crawl: invalid map options: bad pattern"},
		{"coded sentinel of a package above", monitor.ErrPaused, http.StatusConflict, "MONITOR_PAUSED", "Monitor is paused: set its status to active to run it"},
		{"first matching row wins", fmt.Errorf("%w: %w", crawl.ErrBlocked, scrape.ErrTimeout), http.StatusRequestTimeout, "SCRAPE_TIMEOUT",
			"Request timed out: the scrape took longer than the timeout. Raise timeout or simplify the request."},
		{"client gone", fmt.Errorf("read: %w", context.Canceled), 499, "CLIENT_CLOSED_REQUEST", "Client closed request"},
		{"unknown", errors.New("boom"), http.StatusInternalServerError, "UNKNOWN_ERROR", ""},
	}
	for _, c := range cases {
		m := apierr.Map(c.err)
		if m.Status != c.status || m.Code != c.code || m.Message != c.msg || m.Unsupported {
			t.Errorf("%s: Map = %+v; want %d %s %q", c.name, m, c.status, c.code, c.msg)
		}
	}
}

func TestMapUnsupportedFeature(t *testing.T) {
	err := fmt.Errorf("scrape: %w", &scrape.FeatureError{Code: "SCRAPE_ACTIONS_NOT_SUPPORTED", Feature: "actions", Reason: "no browser"})
	m := apierr.Map(err)
	if m.Status != http.StatusBadRequest || m.Code != "SCRAPE_ACTIONS_NOT_SUPPORTED" || m.Message != "no browser" || !m.Unsupported || m.Feature != "actions" {
		t.Errorf("Map = %+v", m)
	}
}

// TestDescribe: a known error keeps its code and message and gets no error
// id; an unknown one (or a cancelled context, which has no client behind it
// in a job) shows none of its text, only a fresh error id.
func TestDescribe(t *testing.T) {
	known := []struct {
		err        error
		code, want string
	}{
		{&scrape.Failure{Kind: scrape.ErrSSL, Msg: "bad certificate"}, "SCRAPE_SSL_ERROR", "bad certificate"},
		{fmt.Errorf("page: %w", scrape.ErrTimeout), "SCRAPE_TIMEOUT",
			"Request timed out: the scrape took longer than the timeout. Raise timeout or simplify the request."},
		{&scrape.Failure{Kind: scrape.ErrDNSResolution, Msg: "DNS resolution failed for hostname: nowhere.invalid."},
			"SCRAPE_DNS_RESOLUTION_ERROR", "DNS resolution failed for hostname: nowhere.invalid."},
	}
	for _, k := range known {
		code, msg, id := apierr.Describe(k.err)
		if code != k.code || msg != k.want || id != "" {
			t.Errorf("%v: %s %q id %q; want %s %q and no id", k.err, code, msg, id, k.code, k.want)
		}
	}
	internal := []error{
		errors.New("store: dial tcp 10.1.2.3:5432: connect: connection refused"),
		fmt.Errorf("browser: devtools ws://127.0.0.1:9222/devtools/browser/x: %w", context.Canceled),
	}
	seen := map[string]bool{}
	for _, err := range internal {
		code, msg, id := apierr.Describe(err)
		if _, perr := uuid.Parse(id); perr != nil || seen[id] {
			t.Errorf("%v: error id %q is not a fresh UUID", err, id)
		}
		seen[id] = true
		if code != "UNKNOWN_ERROR" || msg != apierr.UnknownMessage(id) {
			t.Errorf("%v: %s %q; want UNKNOWN_ERROR %q", err, code, msg, apierr.UnknownMessage(id))
		}
		for _, leak := range []string{"10.1.2.3", "5432", "store:", "browser:", "9222", "127.0.0.1"} {
			if strings.Contains(msg, leak) {
				t.Errorf("%v: message %q shows %q", err, msg, leak)
			}
		}
	}
	// The message is the contract's one for an unexpected error.
	if got := apierr.UnknownMessage("x"); !strings.HasSuffix(got, "contact support, error id x") {
		t.Errorf("UnknownMessage = %q", got)
	}
}
