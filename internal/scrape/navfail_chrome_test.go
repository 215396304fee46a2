package scrape

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/errcode"
)

// TestBrowserNavigationMessage: a page Chrome could not load (nothing
// listens on its port) fails with a message in Chrome's words that names
// no Go package ("browser: navigation failed" before).
func TestBrowserNavigationMessage(t *testing.T) {
	t.Parallel()
	e, _ := browserEngine(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String() + "/down"
	_ = l.Close()
	o := defaults(u, FormatMarkdown, FormatScreenshot)
	o.Timeout = 20 * time.Second
	_, err = e.Scrape(context.Background(), o)
	var f *errcode.Failure
	if !errors.As(err, &f) || !errors.Is(err, ErrSite) {
		t.Fatalf("err %v, want a site Failure", err)
	}
	if want := "Could not load " + u + " in the browser: net::ERR_CONNECTION_REFUSED."; f.Msg != want {
		t.Errorf("message %q, want %q", f.Msg, want)
	}
	if strings.Contains(f.Msg, "browser: navigat") {
		t.Errorf("message %q names a package", f.Msg)
	}
}

// TestNavigationReason: Chrome's reason is found in each shape of the
// browser's navigation errors, and none in an error without one.
func TestNavigationReason(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("browser: navigate %s: net::ERR_CONNECTION_TIMED_OUT: %w", "http://a/", browser.ErrNavigation), "net::ERR_CONNECTION_TIMED_OUT"},
		{fmt.Errorf("browser: navigate %s: the response is a download, not a page: %w", "http://a/x.zip", browser.ErrNavigation),
			"the response is a download, not a page"},
		{fmt.Errorf("browser: navigate %q: not an http(s) URL: %w", "ftp://a/", browser.ErrNavigation), "not an http(s) URL"},
		{fmt.Errorf("browser: render: %w", browser.ErrNavigation), ""},
		{browser.ErrNavigation, ""},
		{errors.New("browser: tab crashed"), ""},
	} {
		if got := navigationReason(c.err); got != c.want {
			t.Errorf("navigationReason(%q) = %q, want %q", c.err, got, c.want)
		}
	}
}
