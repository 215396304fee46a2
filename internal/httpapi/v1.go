package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/firegate/firegate/internal/store"
)

// The v1 API, spoken by the 1.x JavaScript SDK and the integrations built
// on it. Scrape, map, search, crawl and batch scrape (start, status,
// cancel, errors, active), extract and the team's usage are
// translated to the v2 engine (request to a v2 body, response back to the
// v1 shape); every other /v1 route answers a JSON 400 naming its v2
// counterpart.

// v1Routes mounts /v1 on r. The routes served sit behind the same body
// limit and authentication as /v2; the not-served answer needs no key.
func (s *Server) v1Routes(r chi.Router) {
	r.Route("/v1", func(r chi.Router) {
		r.NotFound(s.handle(handleV1NotServed))
		r.MethodNotAllowed(s.handle(handleV1NotServed))
		r.Group(func(r chi.Router) {
			r.Use(s.limitBody, s.authenticate)
			r.Post("/scrape", s.handle(s.handleV1Scrape))
			r.Post("/map", s.handle(s.handleV1Map))
			r.Post("/search", s.handle(s.handleV1Search))
			r.Get("/team/credit-usage", s.handle(s.v1Usage(s.handleCreditUsage)))
			r.Get("/team/token-usage", s.handle(s.v1Usage(s.handleTokenUsage)))
			if s.jobs != nil && s.jobStore != nil {
				// Status, cancel and errors have the v1 shapes already; the
				// status's next link follows the request path (/v1).
				r.Post("/crawl", s.handle(s.handleV1Crawl))
				r.Get("/crawl/active", s.handle(s.handleActiveCrawls))
				r.Get("/crawl/{id}", s.handle(s.handleV1CrawlStatus))
				r.Delete("/crawl/{id}", s.handle(s.handleJobCancel(store.JobCrawl)))
				r.Get("/crawl/{id}/errors", s.handle(s.handleJobErrors(store.JobCrawl)))
				r.Post("/batch/scrape", s.handle(s.handleV1BatchScrape))
				r.Get("/batch/scrape/{id}", s.handle(s.handleJobStatus(store.JobBatch)))
				r.Delete("/batch/scrape/{id}", s.handle(s.handleJobCancel(store.JobBatch)))
				r.Get("/batch/scrape/{id}/errors", s.handle(s.handleJobErrors(store.JobBatch)))
				r.Post("/extract", s.handle(s.handleV1Extract))
				r.Get("/extract/{id}", s.handle(s.handleExtractStatus))
			}
		})
	})
}

// handleV1NotServed answers a /v1 route this server does not translate:
// 400, not 404, because the 1.x JavaScript SDK shows the server's message
// only for 400, 402, 403, 408, 409 and 500.
func handleV1NotServed(_ http.ResponseWriter, r *http.Request) error {
	v2 := "/v2" + strings.TrimPrefix(r.URL.Path, "/v1")
	msg := "This server serves the v1 API's scrape, map, search, crawl, batch scrape, extract and team usage routes only; " + r.Method + " " + r.URL.Path +
		" is not served. Use the v2 API (" + r.Method + " " + v2 + ") with a v2 SDK, such as @mendable/firecrawl-js 4.x."
	return &Error{Status: http.StatusBadRequest, Code: "V1_ROUTE_NOT_SERVED", Message: msg}
}

// v1Defaults are the v1 scrape defaults that differ from v2's: no cached
// result unless maxAge asks for one, and a 30 s timeout.
const (
	v1DefaultMaxAge  = `0`
	v1DefaultTimeout = `30000`
)

// handleV1Scrape serves POST /v1/scrape through the v2 scrape handler:
// the body is rewritten to v2 (v1ScrapeBody), and a success's document has
// json renamed extract when the v1 "extract" format was asked for. Errors
// keep the v2 envelope (success false, error), which v1 clients read.
func (s *Server) handleV1Scrape(w http.ResponseWriter, r *http.Request) error {
	raw, err := readV1Body(r)
	if err != nil {
		return err
	}
	body, extract, apiErr := v1ScrapeBody(raw)
	if apiErr != nil {
		return apiErr
	}
	return s.viaV2(w, r, body, s.handleScrape, func(out []byte) []byte {
		if extract {
			return renameDataKey(out, "json", "extract")
		}
		return out
	})
}

// handleV1Map serves POST /v1/map through the v2 map handler: ignoreSitemap
// and sitemapOnly become sitemap skip and only, and the links (v2 objects
// with url, title, description) are returned as v1's URL strings.
func (s *Server) handleV1Map(w http.ResponseWriter, r *http.Request) error {
	m, err := readV1Object(r)
	if err != nil {
		return err
	}
	if _, has := m["sitemap"]; !has {
		switch {
		case string(m["sitemapOnly"]) == "true":
			m["sitemap"] = json.RawMessage(`"only"`)
		case string(m["ignoreSitemap"]) == "true":
			m["sitemap"] = json.RawMessage(`"skip"`)
		}
	}
	// v1-only switches with no v2 counterpart, dropped.
	for _, k := range []string{"ignoreSitemap", "sitemapOnly", "useMock", "filterByPath"} {
		delete(m, k)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return errInvalidJSON(err)
	}
	return s.viaV2(w, r, body, s.handleMap, v1MapLinks)
}

// handleV1Crawl serves POST /v1/crawl through the v2 crawl handler:
// ignoreSitemap becomes sitemap skip, allowBackwardLinks crawlEntireDomain,
// maxDepth maxDiscoveryDepth (link hops from the start page, where v1
// counted path segments), scrapeOptions are rewritten as a v1 scrape's are,
// and the answer's url points at /v1/crawl/{id}.
func (s *Server) handleV1Crawl(w http.ResponseWriter, r *http.Request) error {
	m, err := readV1Object(r)
	if err != nil {
		return err
	}
	rename := func(from, to string) {
		if v, ok := m[from]; ok {
			if _, has := m[to]; !has {
				m[to] = v
			}
			delete(m, from)
		}
	}
	if _, has := m["sitemap"]; !has && string(m["ignoreSitemap"]) == "true" {
		m["sitemap"] = json.RawMessage(`"skip"`)
	}
	delete(m, "ignoreSitemap")
	rename("allowBackwardLinks", "crawlEntireDomain")
	rename("maxDepth", "maxDiscoveryDepth")
	if err := v1ScrapeOptions(m); err != nil {
		return err
	}
	delete(m, "useMock")
	body, err := json.Marshal(m)
	if err != nil {
		return errInvalidJSON(err)
	}
	return s.viaV2(w, r, body, s.handleCrawl, func(out []byte) []byte {
		return bytes.Replace(out, []byte("/v2/crawl/"), []byte("/v1/crawl/"), 1)
	})
}

// handleV1CrawlStatus serves GET /v1/crawl/{id}, for crawls and, as the
// 1.x SDK polls its batch scrapes there, batch scrapes (a batch costs a
// second status request of the team's rate).
func (s *Server) handleV1CrawlStatus(w http.ResponseWriter, r *http.Request) error {
	err := s.handleJobStatus(store.JobCrawl)(w, r)
	if errors.Is(err, errCrawlNotFound) {
		return s.handleJobStatus(store.JobBatch)(w, r)
	}
	return err
}

// handleV1BatchScrape serves POST /v1/batch/scrape through the v2 batch
// handler: the scrape options beside urls are rewritten as a v1 scrape's,
// and the answer's url points at /v1/batch/scrape/{id}.
func (s *Server) handleV1BatchScrape(w http.ResponseWriter, r *http.Request) error {
	raw, err := readV1Body(r)
	if err != nil {
		return err
	}
	body, _, apiErr := v1ScrapeBody(raw)
	if apiErr != nil {
		return apiErr
	}
	return s.viaV2(w, r, body, s.handleBatchScrape, func(out []byte) []byte {
		return bytes.Replace(out, []byte("/v2/batch/scrape/"), []byte("/v1/batch/scrape/"), 1)
	})
}

// handleV1Extract serves POST /v1/extract through the v2 extract handler
// (the same body but for scrapeOptions, rewritten as a v1 scrape's); its
// status, GET /v1/extract/{id}, has the v1 shape already.
func (s *Server) handleV1Extract(w http.ResponseWriter, r *http.Request) error {
	m, err := readV1Object(r)
	if err != nil {
		return err
	}
	if err := v1ScrapeOptions(m); err != nil {
		return err
	}
	body, err := json.Marshal(m)
	if err != nil {
		return errInvalidJSON(err)
	}
	return s.viaV2(w, r, body, s.handleExtract, func(out []byte) []byte { return out })
}

// v1ScrapeOptions rewrites the scrapeOptions member of m, when present, as
// a v1 scrape body is rewritten.
func v1ScrapeOptions(m map[string]json.RawMessage) error {
	so, ok := m["scrapeOptions"]
	if !ok {
		return nil
	}
	body, _, apiErr := v1ScrapeBody(so)
	if apiErr != nil {
		return &Error{Status: apiErr.Status, Code: apiErr.Code, Message: apiErr.Message,
			Details: []FieldError{{Path: []any{"scrapeOptions"}, Message: apiErr.Message, Code: codeInvalidType}}}
	}
	m["scrapeOptions"] = body
	return nil
}

// v1Usage serves GET /v1/team/credit-usage or token-usage through h, the
// v2 handler: v1 names the balance fields in snake case
// (remaining_credits, plan_credits, billing_period_start, ...).
func (s *Server) v1Usage(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		return s.viaV2(w, r, nil, h, func(out []byte) []byte {
			for _, k := range [][2]string{{"remainingCredits", "remaining_credits"}, {"planCredits", "plan_credits"},
				{"remainingTokens", "remaining_tokens"}, {"planTokens", "plan_tokens"},
				{"billingPeriodStart", "billing_period_start"}, {"billingPeriodEnd", "billing_period_end"}} {
				out = renameDataKey(out, k[0], k[1])
			}
			return out
		})
	}
}

// v1SearchLimit is v1's default number of search results (v2's is 10).
const v1SearchLimit = `5`

// handleV1Search serves POST /v1/search through the v2 search handler: the
// web results come back as v1's flat data array, scrapeOptions are
// rewritten as a v1 scrape's, and the limit defaults to v1's 5.
func (s *Server) handleV1Search(w http.ResponseWriter, r *http.Request) error {
	m, err := readV1Object(r)
	if err != nil {
		return err
	}
	if _, ok := m["limit"]; !ok {
		m["limit"] = json.RawMessage(v1SearchLimit)
	}
	if err := v1ScrapeOptions(m); err != nil {
		return err
	}
	delete(m, "useMock")
	body, err := json.Marshal(m)
	if err != nil {
		return errInvalidJSON(err)
	}
	return s.viaV2(w, r, body, s.handleSearch, v1SearchData)
}

// v1SearchData turns a v2 search answer's data {web: [...]} into v1's
// array of web results.
func v1SearchData(out []byte) []byte {
	var env map[string]json.RawMessage
	if json.Unmarshal(out, &env) != nil {
		return out
	}
	var data struct {
		Web []json.RawMessage `json:"web"`
	}
	if json.Unmarshal(env["data"], &data) != nil {
		return out
	}
	if data.Web == nil {
		data.Web = []json.RawMessage{}
	}
	env["data"], _ = json.Marshal(data.Web)
	b, err := json.Marshal(env)
	if err != nil {
		return out
	}
	return append(b, '\n')
}

// v1MapLinks turns a v2 map answer's links into v1's URL strings.
func v1MapLinks(out []byte) []byte {
	var env map[string]json.RawMessage
	if json.Unmarshal(out, &env) != nil {
		return out
	}
	var links []struct {
		URL string `json:"url"`
	}
	if json.Unmarshal(env["links"], &links) != nil {
		return out
	}
	urls := make([]string, len(links))
	for i, l := range links {
		urls[i] = l.URL
	}
	env["links"], _ = json.Marshal(urls)
	b, err := json.Marshal(env)
	if err != nil {
		return out
	}
	return append(b, '\n')
}

// readV1Object reads a /v1 request body that must be one JSON object, with
// /v2's answers otherwise, into its members.
func readV1Object(r *http.Request) (map[string]json.RawMessage, error) {
	raw, err := readV1Body(r)
	if err != nil {
		return nil, err
	}
	if _, apiErr := readJSONObject(bytes.NewReader(raw)); apiErr != nil {
		return nil, apiErr
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, errInvalidJSON(err)
	}
	return m, nil
}

// readV1Body reads a /v1 request body, with /v2's answers to a body over
// the limit (413), past its deadline or unreadable.
func readV1Body(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(r.Body)
	if err == nil {
		return raw, nil
	}
	var apiErr *Error
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &apiErr): // the body deadline
		return nil, apiErr
	case errors.As(err, &tooLarge):
		return nil, &Error{Status: http.StatusRequestEntityTooLarge, Code: "PAYLOAD_TOO_LARGE", Message: msgTooLarge, err: err}
	}
	return nil, errInvalidJSON(err)
}

// viaV2 runs the v2 handler h on r with body as its request body, and
// sends its answer with a 200's body passed through transform. h's errors
// are returned as they are (the v2 envelope).
func (s *Server) viaV2(w http.ResponseWriter, r *http.Request, body []byte, h handlerFunc, transform func([]byte) []byte) error {
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.ContentLength = int64(len(body))
	rec := &bufferedResponse{header: http.Header{}}
	if err := h(rec, r2); err != nil {
		return err
	}
	out := rec.body.Bytes()
	if rec.status == http.StatusOK {
		out = transform(out)
	}
	for k, v := range rec.header {
		w.Header()[k] = v
	}
	w.Header().Del("Content-Length")
	w.WriteHeader(rec.status)
	_, _ = w.Write(out)
	return nil
}

// v1ScrapeBody rewrites a v1 scrape body into a v2 one. Keys both versions
// share pass through (v2 validation then names any bad field); formats are
// turned from v1 strings into v2 format objects; v1-only options are mapped
// (parsePDF, geolocation, extract/jsonOptions, changeTrackingOptions) or
// dropped when v2 has no counterpart (useMock, agent, ...). extract reports
// whether the v1 "extract" format was asked for.
func v1ScrapeBody(raw []byte) (body []byte, extract bool, apiErr *Error) {
	if _, apiErr := readJSONObject(bytes.NewReader(raw)); apiErr != nil {
		return nil, false, apiErr
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, false, errInvalidJSON(err)
	}
	// Options of the extraction formats, v1's two names for one thing.
	llmOpts := m["jsonOptions"]
	if llmOpts == nil {
		llmOpts = m["extract"]
	}
	if loc, ok := m["geolocation"]; ok {
		if _, has := m["location"]; !has {
			m["location"] = loc
		}
	}
	if pdf, ok := m["parsePDF"]; ok && string(pdf) == "false" {
		m["parsers"] = json.RawMessage(`[]`)
	}
	if f, ok := m["formats"]; ok {
		var formats []json.RawMessage
		if json.Unmarshal(f, &formats) == nil {
			out := make([]any, len(formats))
			for i, f := range formats {
				var name string
				if json.Unmarshal(f, &name) != nil {
					out[i] = f // not a v1 string: v2 validation decides
					continue
				}
				switch name {
				case "screenshot@fullPage":
					out[i] = map[string]any{"type": "screenshot", "fullPage": true}
				case "extract", "json":
					extract = extract || name == "extract"
					out[i] = v1JSONFormat(llmOpts)
				case "changeTracking":
					out[i] = v1ChangeTracking(m["changeTrackingOptions"])
				default:
					out[i] = name
				}
			}
			m["formats"], _ = json.Marshal(out)
		}
	}
	for _, k := range []string{"jsonOptions", "extract", "geolocation", "parsePDF", "changeTrackingOptions",
		"useMock", "agent", "__experimental_cache", "__experimental_omceDomain", "languages"} {
		delete(m, k)
	}
	if _, ok := m["maxAge"]; !ok {
		m["maxAge"] = json.RawMessage(v1DefaultMaxAge)
	}
	if _, ok := m["timeout"]; !ok {
		m["timeout"] = json.RawMessage(v1DefaultTimeout)
	}
	body, err := json.Marshal(m)
	if err != nil {
		return nil, false, errInvalidJSON(err)
	}
	return body, extract, nil
}

// v1JSONFormat is the v2 json format of v1's extract options {schema,
// prompt, systemPrompt}; v2 has no system prompt, so it leads the prompt.
func v1JSONFormat(opts json.RawMessage) any {
	var o struct {
		Schema       json.RawMessage `json:"schema"`
		Prompt       string          `json:"prompt"`
		SystemPrompt string          `json:"systemPrompt"`
	}
	f := map[string]any{"type": "json"}
	if json.Unmarshal(opts, &o) != nil {
		return f
	}
	if len(o.Schema) > 0 && string(o.Schema) != "null" {
		f["schema"] = o.Schema
	}
	prompt := strings.TrimSpace(strings.Join([]string{o.SystemPrompt, o.Prompt}, "\n\n"))
	if prompt != "" {
		f["prompt"] = prompt
	}
	return f
}

// v1ChangeTracking is the v2 changeTracking format of v1's
// changeTrackingOptions (the same keys, one level up).
func v1ChangeTracking(opts json.RawMessage) any {
	f := map[string]json.RawMessage{}
	_ = json.Unmarshal(opts, &f)
	f["type"] = json.RawMessage(`"changeTracking"`)
	return f
}

// renameDataKey renames the member from of the data object of a
// {"success":true,"data":{...}} body to to; the body is returned as is
// when it has no such member.
func renameDataKey(body []byte, from, to string) []byte {
	var env map[string]json.RawMessage
	if json.Unmarshal(body, &env) != nil {
		return body
	}
	var data map[string]json.RawMessage
	if json.Unmarshal(env["data"], &data) != nil {
		return body
	}
	v, ok := data[from]
	if !ok {
		return body
	}
	delete(data, from)
	data[to] = v
	env["data"], _ = json.Marshal(data)
	out, err := json.Marshal(env)
	if err != nil {
		return body
	}
	return append(out, '\n')
}

// bufferedResponse is an http.ResponseWriter that keeps the response, for
// a handler whose answer is rewritten before it is sent.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}
