package search_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/search/searxngtest"
	"github.com/firegate/firegate/internal/testenv"
)

// TestEngineErrorsShowNoAddress: an engine failure is shown, as the API
// maps it (the envelope, a monitor's check, the agent's search tool all
// use errcode.Describe), by what failed in the client's terms: not the engine's
// host, address or the Go packages of the error chain; the searcher logs
// the full cause.
func TestEngineErrorsShowNoAddress(t *testing.T) {
	t.Parallel()
	down := searxngtest.New(t, func(url.Values) searxngtest.Answer {
		return searxngtest.Answer{Status: 502, Raw: "upstream searxng:8080 down"}
	})
	for _, tc := range []struct {
		name   string
		opts   search.SearXNGOptions
		msg    string
		logged string
	}{
		{name: "unreachable", opts: search.SearXNGOptions{Endpoint: "http://searxng:8080", Client: searxngtest.RefusedAt(t, "10.1.2.3:8080")},
			msg: "The search engine could not be reached.", logged: "dial tcp 10.1.2.3:8080: connect: connection refused"},
		{name: "answers 502", opts: search.SearXNGOptions{Endpoint: down.URL, Timeout: 5 * time.Second},
			msg: "The search engine answered HTTP 502 Bad Gateway.", logged: "answered HTTP 502"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := search.NewSearXNG(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			log, logs := testenv.NewLogBook(t)
			s := search.New(b, search.Options{}, log)
			_, err = s.Search(t.Context(), search.Query{Text: "q", Source: search.SourceWeb})
			code, msg, id := errcode.Describe(err)
			if code != "SEARCH_ENGINE_ERROR" || msg != tc.msg || id != "" {
				t.Errorf("%v shown as %s %q (id %q); want SEARCH_ENGINE_ERROR %q", err, code, msg, id, tc.msg)
			}
			for _, leak := range []string{"10.1.2.3", "8080", "searxng:", "search:", "dial tcp", "127.0.0.1"} {
				if strings.Contains(msg, leak) {
					t.Errorf("message %q shows %q", msg, leak)
				}
			}
			if !strings.Contains(logs.String(), tc.logged) {
				t.Errorf("log %q lacks the cause %q", logs.String(), tc.logged)
			}
		})
	}
}
