package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/v1compat"
)

// The v1 API, spoken by the 1.x JavaScript SDK and the integrations built
// on it. Scrape, map, search, crawl and batch scrape (start, status,
// cancel, errors, active), extract and the team's usage are
// translated to the v2 engine (request to a v2 body, response back to the
// v1 shape: package v1compat) and served by the v2 handlers; every other
// /v1 route answers a JSON 400 naming its v2 counterpart.

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
	return &Error{Status: http.StatusBadRequest, Code: "V1_ROUTE_NOT_SERVED", Message: v1compat.NotServed(r.Method, r.URL.Path)}
}

// handleV1Scrape serves POST /v1/scrape through the v2 scrape handler.
// Errors keep the v2 envelope (success false, error), which v1 clients
// read.
func (s *Server) handleV1Scrape(w http.ResponseWriter, r *http.Request) error {
	m, err := readV1Object(r)
	if err != nil {
		return err
	}
	body, extract, err := v1compat.ScrapeBody(m)
	if err != nil {
		return v1Error(err)
	}
	return s.viaV2(w, r, body, s.handleScrape, v1compat.ScrapeAnswer(extract))
}

// handleV1Map serves POST /v1/map through the v2 map handler; the links
// are returned as v1's URL strings.
func (s *Server) handleV1Map(w http.ResponseWriter, r *http.Request) error {
	return s.v1Translated(w, r, v1compat.MapBody, s.handleMap, v1compat.MapLinks)
}

// handleV1Crawl serves POST /v1/crawl through the v2 crawl handler; the
// answer's url points at /v1/crawl/{id}.
func (s *Server) handleV1Crawl(w http.ResponseWriter, r *http.Request) error {
	return s.v1Translated(w, r, v1compat.CrawlBody, s.handleCrawl, v1compat.CrawlStarted)
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
	return s.v1Translated(w, r, func(m v1compat.Object) ([]byte, error) {
		body, _, err := v1compat.ScrapeBody(m)
		return body, err
	}, s.handleBatchScrape, v1compat.BatchStarted)
}

// handleV1Extract serves POST /v1/extract through the v2 extract handler;
// its status, GET /v1/extract/{id}, has the v1 shape already.
func (s *Server) handleV1Extract(w http.ResponseWriter, r *http.Request) error {
	return s.v1Translated(w, r, v1compat.ExtractBody, s.handleExtract, func(out []byte) []byte { return out })
}

// handleV1Search serves POST /v1/search through the v2 search handler;
// the web results come back as v1's flat data array.
func (s *Server) handleV1Search(w http.ResponseWriter, r *http.Request) error {
	return s.v1Translated(w, r, v1compat.SearchBody, s.handleSearch, v1compat.SearchData)
}

// v1Usage serves GET /v1/team/credit-usage or token-usage through h, the
// v2 handler, with v1's names of the balance fields.
func (s *Server) v1Usage(h handlerFunc) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		return s.viaV2(w, r, nil, h, v1compat.Usage)
	}
}

// v1Translated serves a /v1 POST whose body translate rewrites to v2, by
// the v2 handler h, with a 200's answer passed through answer.
func (s *Server) v1Translated(w http.ResponseWriter, r *http.Request, translate func(v1compat.Object) ([]byte, error),
	h handlerFunc, answer func([]byte) []byte) error {
	m, err := readV1Object(r)
	if err != nil {
		return err
	}
	body, err := translate(m)
	if err != nil {
		return v1Error(err)
	}
	return s.viaV2(w, r, body, h, answer)
}

// v1Error is the answer to a v1 body v1compat could not translate: a
// scrapeOptions that is not a JSON object is named in details.
func v1Error(err error) *Error {
	e := errInvalidJSON(err)
	var fe *v1compat.FieldError
	if errors.As(err, &fe) {
		e.Details = []FieldError{{Path: []any{fe.Field}, Message: e.Message, Code: codeInvalidType}}
	}
	return e
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
