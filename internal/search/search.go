// Package search finds web, news and image results for a query through a
// metasearch backend (SearXNG's JSON API) behind one Go API: results are
// de-duplicated by normalised URL, filtered by domain and date, and ranked
// by the engine's score. It knows nothing of HTTP handlers or scraping.
package search

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/errcode"
)

// Errors of a search, with what the API answers for each. A failure of
// the engine is an errcode.Failure of ErrEngine or ErrTimeout: its text,
// for logs, ends with its cause, which may name the engine's host and
// address; a client is shown its Msg, which says what failed in its terms.
var (
	// ErrNotConfigured: no backend is configured (SEARXNG_ENDPOINT unset).
	ErrNotConfigured = errcode.New("search: no search engine is configured", errcode.Invalid, "SEARCH_NOT_CONFIGURED",
		"Search is not configured on this server: set SEARXNG_ENDPOINT to the URL of a SearXNG instance with the JSON format enabled (the compose file's search profile runs one).")
	// ErrTimeout: the engine did not answer within the deadline.
	ErrTimeout = errcode.New("search: the search engine timed out", errcode.Timeout, "SCRAPE_TIMEOUT",
		"Request timed out: the search engine did not answer within timeout. Raise timeout or retry.")
	// ErrEngine: the engine could not be reached or gave an answer that is
	// not a search result (an HTTP error, a body that is not its JSON).
	ErrEngine = errcode.New("search: search engine error", errcode.Upstream, "SEARCH_ENGINE_ERROR", "")
	// ErrNoEngines: the engine answered, but every upstream engine it asked
	// failed (blocked, rate limited, timed out), so it has no results.
	ErrNoEngines = errcode.New("search: no upstream search engine answered", errcode.Upstream,
		"SEARCH_ENGINE_UNAVAILABLE", "")
)

// Source names: what kind of results a query asks for.
const (
	SourceWeb    = "web"
	SourceNews   = "news"
	SourceImages = "images"
)

// Category names of web searches (reference §5.7).
const (
	CategoryGitHub   = "github"
	CategoryResearch = "research"
	CategoryPDF      = "pdf"
)

// MaxLimit is the most results one query of one source may ask for.
const MaxLimit = 100

// Query is one search of one source.
type Query struct {
	// Text is the user's query, without any operator this package adds.
	Text string
	// Source is SourceWeb, SourceNews or SourceImages.
	Source string
	// Limit is the number of results wanted, 1..MaxLimit.
	Limit int
	// Time narrows results by publication date and orders them.
	Time TimeRange
	// Language is a language code ("en", "de", "pt-BR"); Country an ISO
	// 3166-1 alpha-2 code or "" (then only the language is sent).
	Language, Country string
	// Safe asks the engine to filter explicit results.
	Safe bool
	// IncludeDomains keeps only results on these hosts (or their
	// subdomains); ExcludeDomains drops them. Bare host names.
	IncludeDomains, ExcludeDomains []string
	// Categories restrict a web search to GitHub, research sites or PDFs
	// and label the results (CategoryGitHub, ...).
	Categories []string
}

// Result is one search result.
type Result struct {
	URL         string
	Title       string
	Description string
	// Score is the engine's relevance score (higher is better).
	Score float64
	// Category is the query category the result matches, if any.
	Category string
	// Published is when the engine says the page was published; zero
	// when it does not say.
	Published time.Time
	// ImageURL is the full image of an image result, or a news result's
	// thumbnail; ImageWidth and ImageHeight are 0 when unknown.
	ImageURL                string
	ImageWidth, ImageHeight int
}

// Page is one page of a backend's answer.
type Page struct {
	Results []Result
	// Unresponsive names upstream engines that failed, with the reason.
	Unresponsive []string
}

// Backend answers one page (1-based) of a query. Backends render the query
// in their own terms (operators, categories, parameters); SearXNG is one.
type Backend interface {
	Page(ctx context.Context, q Query, page int) (Page, error)
}

// Options tune a Searcher.
type Options struct {
	// MaxPages bounds the backend pages read for one query; 0 = 10.
	MaxPages int
	// Now is the clock used for date windows; nil = time.Now.
	Now func() time.Time
}

// Searcher runs queries on a backend. Create it with New.
type Searcher struct {
	backend  Backend
	maxPages int
	now      func() time.Time
	log      *slog.Logger
}

// New returns a Searcher over b; a nil b answers every query with
// ErrNotConfigured.
func New(b Backend, o Options, log *slog.Logger) *Searcher {
	if o.MaxPages <= 0 {
		o.MaxPages = 10
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Searcher{backend: b, maxPages: o.MaxPages, now: o.Now, log: log}
}

// Search returns up to q.Limit results of q, best first: pages are read
// from the backend until enough distinct results pass the filters (or a
// page brings nothing new), results with the same normalised URL are
// merged (keeping the best score), then they are ranked by score (or by
// date, newest first, when q.Time.SortByDate). An engine failure on the
// first page is an error; on a later page the results so far are returned.
func (s *Searcher) Search(ctx context.Context, q Query) ([]Result, error) {
	if s == nil || s.backend == nil {
		return nil, ErrNotConfigured
	}
	if q.Limit <= 0 {
		q.Limit = 10
	}
	q.Limit = min(q.Limit, MaxLimit)
	keep := s.filter(q)
	byKey := map[string]int{} // normalised URL -> index in out
	var out []Result
	for page := 1; page <= s.maxPages; page++ {
		p, err := s.backend.Page(ctx, q, page)
		if err != nil {
			if page == 1 {
				// The client is shown the error's message only: the cause
				// (the engine's address, the network's reason) is logged.
				if !errors.Is(err, context.Canceled) {
					s.log.WarnContext(ctx, "search failed", "source", q.Source, "err", err)
				}
				return nil, err
			}
			if ctx.Err() != nil {
				// The deadline is the caller's: what was found so far is
				// the answer it can still use.
				break
			}
			s.log.WarnContext(ctx, "search page failed", "source", q.Source, "page", page, "err", err)
			break
		}
		if len(p.Unresponsive) > 0 {
			s.log.WarnContext(ctx, "search engines unresponsive", "source", q.Source, "page", page,
				"engines", strings.Join(p.Unresponsive, "; "))
		}
		if page == 1 && len(p.Results) == 0 && len(p.Unresponsive) > 0 {
			return nil, fmt.Errorf("%w: %s", ErrNoEngines, strings.Join(p.Unresponsive, "; "))
		}
		added := 0
		for _, r := range p.Results {
			key := NormalizeURL(r.URL)
			if key == "" {
				continue
			}
			if i, dup := byKey[key]; dup {
				if i >= 0 {
					out[i] = merge(out[i], r)
				}
				continue
			}
			added++
			if !keep(r) {
				byKey[key] = -1 // seen and filtered out: never count it again
				continue
			}
			byKey[key] = len(out)
			out = append(out, r)
		}
		if added == 0 || len(out) >= q.Limit {
			break
		}
	}
	rank(out, q.Time.SortByDate)
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	if q.Source == SourceWeb {
		for i := range out {
			out[i].Category = categoryOf(out[i].URL, q.Categories)
		}
	}
	return out, nil
}

// merge combines two results with the same normalised URL: the better
// scored one's fields, the missing ones filled from the other.
func merge(a, b Result) Result {
	if b.Score > a.Score {
		a, b = b, a
	}
	if a.Title == "" {
		a.Title = b.Title
	}
	if a.Description == "" {
		a.Description = b.Description
	}
	if a.Published.IsZero() {
		a.Published = b.Published
	}
	if a.ImageURL == "" {
		a.ImageURL, a.ImageWidth, a.ImageHeight = b.ImageURL, b.ImageWidth, b.ImageHeight
	}
	return a
}

// rank orders results by score, best first, or by date, newest first
// (undated last, by score); ties keep the engine's order.
func rank(rs []Result, byDate bool) {
	slices.SortStableFunc(rs, func(a, b Result) int {
		if byDate {
			switch {
			case a.Published.IsZero() != b.Published.IsZero():
				if a.Published.IsZero() {
					return 1
				}
				return -1
			case !a.Published.Equal(b.Published):
				return b.Published.Compare(a.Published)
			}
		}
		return cmp.Compare(b.Score, a.Score)
	})
}

// filter returns the predicate results of q must pass: the domain lists
// and the date window (results without a date pass it: the engine's own
// time filter already applied to them).
func (s *Searcher) filter(q Query) func(Result) bool {
	from, to := q.Time.window(s.now())
	return func(r Result) bool {
		host := hostOf(r.URL)
		if host == "" {
			return false
		}
		if len(q.IncludeDomains) > 0 && !slices.ContainsFunc(q.IncludeDomains, func(d string) bool { return onDomain(host, d) }) {
			return false
		}
		if slices.ContainsFunc(q.ExcludeDomains, func(d string) bool { return onDomain(host, d) }) {
			return false
		}
		if !r.Published.IsZero() {
			if !from.IsZero() && r.Published.Before(from) {
				return false
			}
			if !to.IsZero() && !r.Published.Before(to) {
				return false
			}
		}
		return true
	}
}
