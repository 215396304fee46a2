package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/agent"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/store"
)

// Bounds of a feedback body (reference §feedback).
const (
	maxFeedbackCodes      = 20
	maxFeedbackCodeLen    = 80
	maxFeedbackNote       = 4000
	maxFeedbackSources    = 50
	maxFeedbackReason     = 1000
	maxFeedbackMissing    = 50
	maxSearchMissing      = 20
	maxFeedbackTopic      = 200
	maxFeedbackTopicText  = 2000
	maxFeedbackSuggestion = 2000
	maxFeedbackPages      = 100
	maxFeedbackMetadata   = 8 << 10
	maxFeedbackURL        = 2048
	msgFeedbackNoSignal   = "Feedback needs at least one of note, issues, tags, valuableSources, missingContent or querySuggestions"
	msgFeedbackJobID      = "jobId must be a UUID: the id the rated call answered (metadata.scrapeId, a search's, map's or job's id)"
)

// feedbackEndpoints are the calls feedback may rate.
var feedbackEndpoints = []string{"search", "scrape", "parse", "map", "crawl", "batch", "extract", "agent"}

// feedbackCode matches an issue or tag code.
var feedbackCode = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// feedbackRoutes serves POST /v2/feedback and /v2/search/{id}/feedback.
func (s *Server) feedbackRoutes(r chi.Router) {
	r.Post("/feedback", s.handle(s.handleFeedback))
	r.Post("/search/{id}/feedback", s.handle(s.handleSearchFeedback))
}

// handleFeedback rates an earlier result of the caller's team: stored once
// per endpoint and id (a repeat answers the first with alreadySubmitted).
func (s *Server) handleFeedback(w http.ResponseWriter, r *http.Request) error {
	m, apiErr := readJSONObject(r.Body)
	if apiErr != nil {
		return apiErr
	}
	var v validator
	f := v.feedback(m, false)
	if err := v.err(); err != nil {
		return err
	}
	return s.saveFeedback(w, r, f)
}

// handleSearchFeedback rates a search by its id (the SDK's searchFeedback).
func (s *Server) handleSearchFeedback(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if _, err := uuid.Parse(id); err != nil {
		return errInvalidJobID
	}
	m, apiErr := readJSONObject(r.Body)
	if apiErr != nil {
		return apiErr
	}
	var v validator
	f := v.feedback(m, true)
	if err := v.err(); err != nil {
		return err
	}
	f.Endpoint, f.JobID = "search", id
	return s.saveFeedback(w, r, f)
}

// saveFeedback checks that a job the store keeps is the caller's, then
// stores f under the caller's team.
func (s *Server) saveFeedback(w http.ResponseWriter, r *http.Request, f store.Feedback) error {
	ctx := r.Context()
	team := teamFrom(ctx)
	if err := s.rateLimited(ctx, team, limits.ClassStatus); err != nil {
		return err
	}
	if err := s.ownRatedJob(r, team.ID, f); err != nil {
		return err
	}
	f.TeamID = team.ID
	f.CreatedAt = time.Now()
	saved, created, err := s.feedback.AddFeedback(ctx, f)
	if err != nil {
		return err
	}
	resp := map[string]any{"success": true, "feedbackId": saved.ID, "creditsRefunded": 0}
	if !created {
		resp["alreadySubmitted"] = true
	}
	s.log.InfoContext(ctx, "feedback saved", "request_id", requestIDFrom(ctx), "team_id", team.ID,
		"endpoint", f.Endpoint, "rating", f.Rating, "created", created)
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// ownRatedJob answers 404 for a crawl, batch, extract or agent id that is
// not a job of team (those the store keeps until they expire). Scrape,
// search, map and parse ids are not kept here: any UUID is taken.
func (s *Server) ownRatedJob(r *http.Request, teamID string, f store.Feedback) error {
	ctx := r.Context()
	switch f.Endpoint {
	case "crawl", "batch", "extract":
		if s.jobStore == nil {
			return errCrawlNotFound
		}
		kind := store.JobBatch
		if f.Endpoint == "crawl" {
			kind = store.JobCrawl
		}
		j, err := s.jobStore.Job(ctx, f.JobID)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (j.Kind != kind || j.TeamID != teamID)) {
			return errCrawlNotFound
		}
		return err
	case "agent":
		if s.agents == nil {
			return errAgentNotFound
		}
		_, err := s.agents.Run(ctx, teamID, f.JobID)
		if errors.Is(err, agent.ErrNotFound) {
			return errAgentNotFound
		}
		return err
	}
	return nil
}

// feedback reads a feedback body: the generic one (endpoint, jobId and
// the signals), or a search's (search: rating and its sources, missing
// content and suggestions, with the reference's rules per rating).
func (v *validator) feedback(m jsonObject, search bool) store.Feedback {
	var f store.Feedback
	if search {
		v.checkKeys(nil, m, keysIn("rating", "valuableSources", "missingContent", "querySuggestions", "origin", "integration"))
	} else {
		v.checkKeys(nil, m, keysIn("endpoint", "jobId", "rating", "issues", "tags", "note", "valuableSources", "missingContent",
			"querySuggestions", "url", "pageNumbers", "metadata", "origin", "integration"))
		if !present(m, "endpoint") {
			v.required([]any{"endpoint"}, "'"+strings.Join(feedbackEndpoints, "' | '")+"'")
		} else {
			f.Endpoint, _ = v.enum([]any{"endpoint"}, m.get("endpoint"), feedbackEndpoints...)
		}
		if id, ok := v.reqString(nil, m, "jobId", 1, 100); ok {
			if u, err := uuid.Parse(id); err != nil {
				v.addCustom([]any{"jobId"}, codeInvalidString, msgFeedbackJobID)
			} else {
				f.JobID = u.String()
			}
		}
	}
	if !present(m, "rating") {
		v.required([]any{"rating"}, "'good' | 'partial' | 'bad'")
	} else {
		f.Rating, _ = v.enum([]any{"rating"}, m.get("rating"), "good", "partial", "bad")
	}
	f.Origin, _ = v.bookkeeping(nil, m)
	details := map[string]any{}
	keep := func(k string, val any) { details[k] = val }

	if !search {
		for _, k := range []string{"issues", "tags"} {
			if !present(m, k) {
				continue
			}
			p := []any{k}
			list, ok := v.stringList(p, m.get(k), maxFeedbackCodes)
			for i, c := range list {
				if len(c) == 0 || len(c) > maxFeedbackCodeLen || !feedbackCode.MatchString(c) {
					v.add(at(p, i), codeInvalidString, "Expected a code of 1 to 80 lower-case letters, digits, '_' and '-', starting with a letter or digit")
					ok = false
				}
			}
			if ok && len(list) > 0 {
				keep(k, list)
			}
		}
		if present(m, "note") {
			f.Note, _ = v.strLen([]any{"note"}, m.get("note"), 0, maxFeedbackNote)
		}
		if present(m, "url") {
			if u, ok := v.strLen([]any{"url"}, m.get("url"), 1, maxFeedbackURL); ok {
				if _, valid := normalizeURL(u); !valid {
					v.add([]any{"url"}, codeInvalidString, msgInvalidURL)
				} else {
					keep("url", u)
				}
			}
		}
		if present(m, "pageNumbers") {
			p := []any{"pageNumbers"}
			if items, ok := v.array(p, m.get("pageNumbers")); ok {
				if len(items) > maxFeedbackPages {
					v.tooBig(p, maxFeedbackPages)
				}
				var pages []int64
				for i, it := range items[:min(len(items), maxFeedbackPages)] {
					if n, ok := v.integer(at(p, i), it, 1, 1<<31); ok {
						pages = append(pages, n)
					}
				}
				keep("pageNumbers", pages)
			}
		}
		if present(m, "metadata") {
			p := []any{"metadata"}
			if _, ok := v.object(p, m.get("metadata")); ok {
				if raw := m.get("metadata"); len(raw) > maxFeedbackMetadata {
					v.add(p, codeTooBig, "metadata must be at most 8 KB of JSON")
				} else {
					keep("metadata", raw)
				}
			}
		}
	}
	var sources, missing int
	if present(m, "valuableSources") {
		p := []any{"valuableSources"}
		if items, ok := v.array(p, m.get("valuableSources")); ok {
			if len(items) > maxFeedbackSources {
				v.tooBig(p, maxFeedbackSources)
			}
			var out []map[string]string
			for i, it := range items[:min(len(items), maxFeedbackSources)] {
				ip := at(p, i)
				o, ok := v.object(ip, it)
				if !ok {
					continue
				}
				v.checkKeys(ip, o, keysIn("url", "reason"))
				src := map[string]string{}
				if u, ok := v.reqString(ip, o, "url", 1, maxFeedbackURL); ok {
					if _, valid := normalizeURL(u); !valid {
						v.add(at(ip, "url"), codeInvalidString, msgInvalidURL)
					}
					src["url"] = u
				}
				if present(o, "reason") {
					if s, ok := v.strLen(at(ip, "reason"), o.get("reason"), 0, maxFeedbackReason); ok {
						src["reason"] = s
					}
				}
				out = append(out, src)
			}
			sources = len(out)
			if sources > 0 {
				keep("valuableSources", out)
			}
		}
	}
	if present(m, "missingContent") {
		p := []any{"missingContent"}
		hi := maxFeedbackMissing
		if search {
			hi = maxSearchMissing
		}
		if items, ok := v.array(p, m.get("missingContent")); ok {
			if len(items) > hi {
				v.tooBig(p, int64(hi))
			}
			var out []map[string]string
			for i, it := range items[:min(len(items), hi)] {
				ip := at(p, i)
				o, ok := v.object(ip, it)
				if !ok {
					continue
				}
				v.checkKeys(ip, o, keysIn("topic", "description"))
				mc := map[string]string{}
				if s, ok := v.reqString(ip, o, "topic", 1, maxFeedbackTopic); ok {
					mc["topic"] = s
				}
				if present(o, "description") {
					if s, ok := v.strLen(at(ip, "description"), o.get("description"), 0, maxFeedbackTopicText); ok {
						mc["description"] = s
					}
				}
				out = append(out, mc)
			}
			missing = len(out)
			if missing > 0 {
				keep("missingContent", out)
			}
		}
	}
	var suggestion string
	if present(m, "querySuggestions") {
		suggestion, _ = v.strLen([]any{"querySuggestions"}, m.get("querySuggestions"), 0, maxFeedbackSuggestion)
		if suggestion != "" {
			keep("querySuggestions", suggestion)
		}
	}
	if v.failed() {
		return f
	}
	if search {
		switch {
		case f.Rating == "good" && sources == 0:
			v.addCustom([]any{"valuableSources"}, codeCustom, "A good rating needs at least one valuableSources entry")
		case f.Rating == "partial" && sources == 0 && missing == 0:
			v.addCustom([]any{"valuableSources"}, codeCustom, "A partial rating needs a valuableSources or missingContent entry")
		case f.Rating == "bad" && missing == 0 && suggestion == "":
			v.addCustom([]any{"missingContent"}, codeCustom, "A bad rating needs a missingContent entry or querySuggestions")
		}
	} else if f.Note == "" && onlyContext(details) {
		v.addCustom(nil, codeCustom, msgFeedbackNoSignal)
	}
	if len(details) > 0 {
		// Cannot fail: strings, string lists and maps, ints, and metadata
		// raw from the body, which json.Valid accepted.
		f.Details, _ = json.Marshal(details)
	}
	return f
}

// onlyContext reports details holding only url, pageNumbers and metadata:
// what the rating is about, not a signal.
func onlyContext(details map[string]any) bool {
	for k := range details {
		if !slices.Contains([]string{"url", "pageNumbers", "metadata"}, k) {
			return false
		}
	}
	return true
}
