package search_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/search/searxngtest"
	"github.com/firegate/firegate/internal/testenv"
)

// now is the fixed clock of these tests.
var now = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

// newSearcher returns a Searcher over the SearXNG backend at endpoint.
func newSearcher(t *testing.T, endpoint string, timeout time.Duration) *search.Searcher {
	t.Helper()
	b, err := search.NewSearXNG(search.SearXNGOptions{Endpoint: endpoint, Timeout: timeout, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	return search.New(b, search.Options{Now: clock}, testenv.Logger(t))
}

// numbered returns n results on example hosts, scores descending from top.
func numbered(prefix string, n int, top float64) []searxngtest.Result {
	out := make([]searxngtest.Result, n)
	for i := range n {
		out[i] = searxngtest.Result{URL: fmt.Sprintf("https://%s%d.example.com/", prefix, i), Title: fmt.Sprintf("%s %d", prefix, i),
			Content: "snippet", Score: top - float64(i)*0.1}
	}
	return out
}

func urls(rs []search.Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.URL
	}
	return out
}

func TestSearXNGParamsAndPaging(t *testing.T) {
	t.Parallel()
	srv := searxngtest.New(t, func(q url.Values) searxngtest.Answer {
		return searxngtest.Answer{Results: numbered("p"+q.Get("pageno")+"-", 10, 10-float64(len(q.Get("pageno"))))}
	})
	s := newSearcher(t, srv.URL+"/", time.Second)
	tr, err := search.ParseTBS("qdr:w")
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Search(t.Context(), search.Query{Text: "lighthouse keeper", Source: search.SourceNews, Limit: 15,
		Language: "en", Country: "us", Safe: true, Time: tr, IncludeDomains: []string{"example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 15 {
		t.Fatalf("%d results, want 15: %v", len(got), urls(got))
	}
	calls := srv.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2 (15 results need a second page)", len(calls))
	}
	for i, c := range calls {
		want := url.Values{"q": {"lighthouse keeper site:example.com"}, "format": {"json"}, "categories": {"news"},
			"language": {"en-US"}, "time_range": {"week"}, "safesearch": {"2"}, "pageno": {fmt.Sprint(i + 1)}}
		if diff := cmp.Diff(want, c); diff != "" {
			t.Errorf("call %d (-want +got)\n%s", i, diff)
		}
	}

	// Defaults: web is SearXNG's general category, no language = all, safe
	// search off, no time range.
	if _, err := s.Search(t.Context(), search.Query{Text: "x", Source: search.SourceWeb, Limit: 3,
		Categories: []string{search.CategoryGitHub, search.CategoryPDF}, ExcludeDomains: []string{"spam.com"}}); err != nil {
		t.Fatal(err)
	}
	last := srv.Calls()[2]
	want := url.Values{"q": {"x (site:github.com OR filetype:pdf) -site:spam.com"}, "format": {"json"}, "categories": {"general"},
		"language": {"all"}, "safesearch": {"0"}, "pageno": {"1"}}
	if diff := cmp.Diff(want, last); diff != "" {
		t.Errorf("defaults (-want +got)\n%s", diff)
	}
}

func TestDedupeFilterAndRank(t *testing.T) {
	t.Parallel()
	hourAgo, weekAgo := now.Add(-30*time.Minute), now.AddDate(0, 0, -6)
	page1 := []searxngtest.Result{
		{URL: "https://a.example.com/x", Title: "A", Score: 1},
		{URL: "http://www.A.example.com/x/#top", Title: "A again", Content: "more", Score: 5}, // same page, better score
		{URL: "https://b.example.com/?utm_source=s&id=1", Title: "B", Score: 3, PublishedDate: searxngtest.Date(hourAgo)},
		{URL: "https://b.example.com?id=1", Title: "B dup", Score: 0.5},
		{URL: "https://old.example.com/", Title: "Old", Score: 9, PublishedDate: searxngtest.Date(weekAgo)},
		{URL: "https://blocked.example.com/", Title: "Excluded", Score: 8},
		{URL: "https://sub.blocked.example.com/", Title: "Excluded too", Score: 8},
		{URL: "ftp://c.example.com/", Title: "not http", Score: 7},
		{URL: "https://github.com/o/r", Title: "Repo", Score: 2},
	}
	srv := searxngtest.New(t, func(q url.Values) searxngtest.Answer {
		if q.Get("pageno") == "1" {
			return searxngtest.Answer{Results: page1}
		}
		return searxngtest.Answer{Results: page1[:2]} // nothing new: paging stops
	})
	s := newSearcher(t, srv.URL, time.Second)
	tr, _ := search.ParseTBS("qdr:h")
	got, err := s.Search(t.Context(), search.Query{Text: "q", Source: search.SourceWeb, Limit: 10, Time: tr,
		ExcludeDomains: []string{"blocked.example.com"}, Categories: []string{search.CategoryGitHub}})
	if err != nil {
		t.Fatal(err)
	}
	want := []search.Result{
		{URL: "http://www.A.example.com/x/#top", Title: "A again", Description: "more", Score: 5},
		{URL: "https://b.example.com/?utm_source=s&id=1", Title: "B", Score: 3, Published: hourAgo},
		{URL: "https://github.com/o/r", Title: "Repo", Score: 2, Category: search.CategoryGitHub},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if n := len(srv.Calls()); n != 2 {
		t.Errorf("%d calls, want 2: the second page brought nothing new", n)
	}

	// Sort by date: newest first, undated last (by score).
	tr, _ = search.ParseTBS("sbd:1")
	got, err = s.Search(t.Context(), search.Query{Text: "q", Source: search.SourceWeb, Limit: 4, Time: tr})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"https://b.example.com/?utm_source=s&id=1", "https://old.example.com/",
		"https://blocked.example.com/", "https://sub.blocked.example.com/"}, urls(got)); diff != "" {
		t.Errorf("sbd:1 (-want +got)\n%s", diff)
	}

	// includeDomains keeps only those hosts, subdomains included.
	got, err = s.Search(t.Context(), search.Query{Text: "q", Source: search.SourceWeb, Limit: 10, IncludeDomains: []string{"blocked.example.com"}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"https://blocked.example.com/", "https://sub.blocked.example.com/"}, urls(got)); diff != "" {
		t.Errorf("includeDomains (-want +got)\n%s", diff)
	}
}

func TestImagesAndNewsFields(t *testing.T) {
	t.Parallel()
	srv := searxngtest.New(t, func(q url.Values) searxngtest.Answer {
		return searxngtest.Answer{Results: []searxngtest.Result{{URL: "https://pics.example.com/p", Title: "Lamp",
			ImgSrc: "https://pics.example.com/lamp.jpg", ThumbnailSrc: "https://pics.example.com/t.jpg", Resolution: "1920 x 1080", Score: 1}}}
	})
	s := newSearcher(t, srv.URL, time.Second)
	got, err := s.Search(t.Context(), search.Query{Text: "lamp", Source: search.SourceImages, Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []search.Result{{URL: "https://pics.example.com/p", Title: "Lamp", Score: 1,
		ImageURL: "https://pics.example.com/lamp.jpg", ImageWidth: 1920, ImageHeight: 1080}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("images (-want +got)\n%s", diff)
	}
	got, err = s.Search(t.Context(), search.Query{Text: "lamp", Source: search.SourceNews, Limit: 1})
	if err != nil || len(got) != 1 || got[0].ImageURL != "https://pics.example.com/t.jpg" {
		t.Errorf("news thumbnail: %v %+v", err, got)
	}
}

func TestEngineErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		answer  searxngtest.Answer
		timeout time.Duration
		want    error
		msg     string
	}{
		{"json format off", searxngtest.Answer{Status: 403, Raw: "Forbidden"}, time.Second, search.ErrEngine, "search.formats"},
		{"limiter", searxngtest.Answer{Status: 429, Raw: "Too Many Requests"}, time.Second, search.ErrEngine, "limiter"},
		{"server error", searxngtest.Answer{Status: 502, Raw: "bad gateway"}, time.Second, search.ErrEngine, "502 Bad Gateway"},
		{"html answer", searxngtest.Answer{Raw: "<html>results</html>"}, time.Second, search.ErrEngine, "not its JSON format"},
		{"empty answer", searxngtest.Answer{Raw: " "}, time.Second, search.ErrEngine, "not its JSON format"},
		{"every engine failed", searxngtest.Answer{Unresponsive: [][]string{{"google", "CAPTCHA"}, {"brave", "timeout"}}},
			time.Second, search.ErrNoEngines, "google: CAPTCHA; brave: timeout"},
		{"slow", searxngtest.Answer{Delay: 5 * time.Second}, 100 * time.Millisecond, search.ErrTimeout, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := searxngtest.New(t, func(url.Values) searxngtest.Answer { return tc.answer })
			s := newSearcher(t, srv.URL, tc.timeout)
			_, err := s.Search(t.Context(), search.Query{Text: "secret words", Source: search.SourceWeb, Limit: 5})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want %v containing %q", err, tc.want, tc.msg)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("the error shows the query: %v", err)
			}
		})
	}

	t.Run("caller deadline", func(t *testing.T) {
		t.Parallel()
		srv := searxngtest.New(t, func(url.Values) searxngtest.Answer { return searxngtest.Answer{Delay: 5 * time.Second} })
		s := newSearcher(t, srv.URL, time.Minute)
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		if _, err := s.Search(ctx, search.Query{Text: "q", Source: search.SourceWeb}); !errors.Is(err, search.ErrTimeout) {
			t.Errorf("err = %v, want ErrTimeout", err)
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		t.Parallel()
		s := newSearcher(t, "http://127.0.0.1:1", time.Second)
		_, err := s.Search(t.Context(), search.Query{Text: "q", Source: search.SourceWeb})
		if !errors.Is(err, search.ErrEngine) || !strings.Contains(err.Error(), "could not be reached") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("a later page fails", func(t *testing.T) {
		t.Parallel()
		srv := searxngtest.New(t, func(q url.Values) searxngtest.Answer {
			if q.Get("pageno") == "1" {
				return searxngtest.Answer{Results: numbered("a", 10, 5)}
			}
			return searxngtest.Answer{Status: 500, Raw: "boom"}
		})
		s := newSearcher(t, srv.URL, time.Second)
		got, err := s.Search(t.Context(), search.Query{Text: "q", Source: search.SourceWeb, Limit: 20})
		if err != nil || len(got) != 10 {
			t.Errorf("got %d results, err %v; want page 1's 10", len(got), err)
		}
	})
	t.Run("no backend", func(t *testing.T) {
		t.Parallel()
		if _, err := search.New(nil, search.Options{}, nil).Search(t.Context(), search.Query{Text: "q"}); !errors.Is(err, search.ErrNotConfigured) {
			t.Errorf("err = %v", err)
		}
	})
}

func TestNewSearXNGEndpoint(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"", "searxng:8080", "ftp://x", "http://"} {
		if _, err := search.NewSearXNG(search.SearXNGOptions{Endpoint: bad}); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
