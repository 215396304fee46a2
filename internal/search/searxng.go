package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/firegate/firegate/internal/errcode"
)

// SearXNGOptions configure the SearXNG backend.
type SearXNGOptions struct {
	// Endpoint is the instance's base URL, e.g. http://searxng:8080 (its
	// JSON API is Endpoint + "/search").
	Endpoint string
	// Timeout bounds one call (connect to last byte); 0 = 15 s. The
	// caller's context deadline applies as well.
	Timeout time.Duration
	// MaxBodyBytes caps an answer; 0 = 8 MiB.
	MaxBodyBytes int64
	// Client, when set, is used instead of one built from Timeout (tests).
	Client *http.Client
	// Now is the clock of the time ranges; nil = time.Now.
	Now func() time.Time
}

// SearXNG is a Backend over a SearXNG instance's JSON API. The instance is
// chosen by the operator, so it is reached directly, not through the
// network policy of scraped URLs.
type SearXNG struct {
	search  string // Endpoint + "/search"
	client  *http.Client
	maxBody int64
	now     func() time.Time
}

// NewSearXNG returns the backend, or an error when o.Endpoint is not an
// http(s) URL.
func NewSearXNG(o SearXNGOptions) (*SearXNG, error) {
	u, err := url.Parse(strings.TrimSpace(o.Endpoint))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("search: SearXNG endpoint %q is not an http(s) URL", o.Endpoint)
	}
	u.RawQuery, u.Fragment = "", ""
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	u.Path = strings.TrimSuffix(u.Path, "/search")
	if o.Timeout <= 0 {
		o.Timeout = 15 * time.Second
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 8 << 20
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c := o.Client
	if c == nil {
		c = &http.Client{Timeout: o.Timeout, Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			TLSHandshakeTimeout:   5 * time.Second,
			ResponseHeaderTimeout: o.Timeout,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       90 * time.Second,
		}}
	}
	return &SearXNG{search: u.String() + "/search", client: c, maxBody: o.MaxBodyBytes, now: o.Now}, nil
}

// searxngCategory is the SearXNG category of each source.
func searxngCategory(source string) string {
	switch source {
	case SourceNews:
		return "news"
	case SourceImages:
		return "images"
	}
	return "general"
}

// Params are the query parameters of page of q: q (with operators),
// format=json, categories, language, pageno, safesearch and, with a date
// window, time_range.
func (s *SearXNG) Params(q Query, page int) url.Values {
	v := url.Values{}
	v.Set("q", QueryText(q))
	v.Set("format", "json")
	v.Set("categories", searxngCategory(q.Source))
	lang := q.Language
	if lang == "" {
		lang = "all"
	} else if q.Country != "" && !strings.Contains(lang, "-") {
		lang += "-" + strings.ToUpper(q.Country)
	}
	v.Set("language", lang)
	v.Set("pageno", strconv.Itoa(page))
	if q.Safe {
		v.Set("safesearch", "2")
	} else {
		v.Set("safesearch", "0")
	}
	if r := q.Time.EngineRange(s.now()); r != "" {
		v.Set("time_range", r)
	}
	return v
}

// searxngAnswer is the part of SearXNG's JSON answer read here.
type searxngAnswer struct {
	Results []struct {
		URL           string   `json:"url"`
		Title         string   `json:"title"`
		Content       string   `json:"content"`
		Score         float64  `json:"score"`
		PublishedDate *string  `json:"publishedDate"`
		ImgSrc        string   `json:"img_src"`
		ThumbnailSrc  string   `json:"thumbnail_src"`
		Thumbnail     string   `json:"thumbnail"`
		Resolution    string   `json:"resolution"`
		Engines       []string `json:"engines"`
	} `json:"results"`
	Unresponsive [][]any `json:"unresponsive_engines"`
}

// Page implements Backend: one GET of the JSON API.
func (s *SearXNG) Page(ctx context.Context, q Query, page int) (Page, error) {
	u := s.search + "?" + s.Params(q, page).Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return Page{}, &errcode.Failure{Kind: ErrEngine, Msg: "The search request could not be made.", Cause: err}
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		if isTimeout(ctx, err) {
			return Page{}, &errcode.Failure{Kind: ErrTimeout, Msg: "The search engine timed out.", Cause: errors.New(rootCause(err))}
		}
		return Page{}, &errcode.Failure{Kind: ErrEngine, Msg: "The search engine could not be reached.", Cause: errors.New(rootCause(err))}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.maxBody+1))
	if err != nil {
		if isTimeout(ctx, err) {
			return Page{}, &errcode.Failure{Kind: ErrTimeout, Msg: "The search engine timed out.", Cause: errors.New(rootCause(err))}
		}
		return Page{}, &errcode.Failure{Kind: ErrEngine, Msg: "The search engine's answer broke off.", Cause: err}
	}
	switch {
	case resp.StatusCode == http.StatusForbidden:
		return Page{}, &errcode.Failure{Kind: ErrEngine, Msg: "The search engine (SearXNG) answered HTTP 403 Forbidden: its settings.yml must list json under search.formats."}
	case resp.StatusCode == http.StatusTooManyRequests:
		return Page{}, &errcode.Failure{Kind: ErrEngine, Msg: "The search engine (SearXNG) answered HTTP 429 Too Many Requests: its limiter refuses this server (set server.limiter: false or allow this server's address)."}
	case resp.StatusCode != http.StatusOK:
		return Page{}, &errcode.Failure{Kind: ErrEngine, Msg: "The search engine answered HTTP " + httpStatus(resp) + "."}
	case int64(len(body)) > s.maxBody:
		return Page{}, &errcode.Failure{Kind: ErrEngine, Msg: fmt.Sprintf("The search engine's answer is larger than %d bytes.", s.maxBody)}
	}
	var a searxngAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		return Page{}, &errcode.Failure{Kind: ErrEngine, Msg: "The search engine's answer is not its JSON format: is json listed under search.formats in SearXNG's settings.yml?", Cause: err}
	}
	var p Page
	for _, e := range a.Unresponsive {
		parts := make([]string, 0, len(e))
		for _, x := range e {
			parts = append(parts, fmt.Sprint(x))
		}
		p.Unresponsive = append(p.Unresponsive, strings.Join(parts, ": "))
	}
	for _, r := range a.Results {
		res := Result{URL: r.URL, Title: strings.TrimSpace(r.Title), Description: strings.TrimSpace(r.Content), Score: r.Score}
		if r.PublishedDate != nil {
			res.Published = parseDate(*r.PublishedDate)
		}
		if q.Source == SourceImages {
			res.ImageURL = r.ImgSrc
			res.ImageWidth, res.ImageHeight = parseResolution(r.Resolution)
		} else {
			res.ImageURL = firstNonEmpty(r.ThumbnailSrc, r.Thumbnail, r.ImgSrc)
		}
		p.Results = append(p.Results, res)
	}
	return p, nil
}

// isTimeout reports whether err is the end of a deadline (the caller's or
// the client's).
func isTimeout(ctx context.Context, err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// httpStatus is resp's status line without the protocol ("502 Bad
// Gateway"), its code alone when the reason is missing.
func httpStatus(resp *http.Response) string {
	if text := http.StatusText(resp.StatusCode); text != "" {
		return strconv.Itoa(resp.StatusCode) + " " + text
	}
	return strconv.Itoa(resp.StatusCode)
}

// rootCause is err's text without the request URL, which carries the
// query.
func rootCause(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// parseDate reads the dates SearXNG writes (Python isoformat, with or
// without a zone); zero when it cannot.
func parseDate(s string) time.Time {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, strings.TrimSpace(s)); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// parseResolution reads "1920x1080" or "1920 x 1080"; zeros when it cannot.
func parseResolution(s string) (w, h int) {
	a, b, ok := strings.Cut(strings.ReplaceAll(strings.ToLower(s), " ", ""), "x")
	if !ok {
		a, b, ok = strings.Cut(strings.ReplaceAll(s, " ", ""), "×")
	}
	if !ok {
		return 0, 0
	}
	w, err1 := strconv.Atoi(a)
	h, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || w < 0 || h < 0 {
		return 0, 0
	}
	return w, h
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
