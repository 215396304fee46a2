package apierr_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

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

func TestDescribe(t *testing.T) {
	if code, msg := apierr.Describe(errors.New("boom")); code != "UNKNOWN_ERROR" || msg != "boom" {
		t.Errorf("unknown: %s %q; want UNKNOWN_ERROR boom", code, msg)
	}
	if code, msg := apierr.Describe(&scrape.Failure{Kind: scrape.ErrSSL, Msg: "bad certificate"}); code != "SCRAPE_SSL_ERROR" || msg != "bad certificate" {
		t.Errorf("failure: %s %q", code, msg)
	}
}
