package httpapi

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/cache"
	"github.com/firegate/firegate/internal/interact"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
)

// Interact runs live browser sessions; *interact.Manager implements it.
type Interact interface {
	Create(ctx context.Context, p interact.CreateParams) (store.InteractSession, error)
	Get(ctx context.Context, teamID, id string) (store.InteractSession, error)
	ForScrape(ctx context.Context, teamID, scrapeID string) (store.InteractSession, error)
	List(ctx context.Context, teamID, status string) ([]store.InteractSession, error)
	Execute(ctx context.Context, rec store.InteractSession, p interact.ExecParams) (interact.ExecResult, error)
	Prompt(ctx context.Context, rec store.InteractSession, p interact.PromptParams) (interact.PromptResult, error)
	// PromptEnabled reports whether a language model drives prompts.
	PromptEnabled() bool
	// CheckLanguage answers interact.ErrLanguage for code in a language
	// this server does not run.
	CheckLanguage(lang string) error
	Delete(ctx context.Context, teamID, id string) (interact.Ended, error)
	DeleteForScrape(ctx context.Context, teamID, scrapeID string) (interact.Ended, error)
}

// interactRoutes serves the session routes under /v2/interact and their
// aliases under /v2/browser, and a scrape's interact.
func (s *Server) interactRoutes(r chi.Router) {
	for _, base := range []string{"/interact", "/browser"} {
		r.Post(base, s.handle(s.handleInteractCreate))
		r.Get(base, s.handle(s.handleInteractList))
		r.Post(base+"/{id}/execute", s.handle(s.handleInteractExecute))
		r.Delete(base+"/{id}", s.handle(s.handleInteractDelete))
		r.Get(base+"/{id}/replay", s.handle(s.handleInteractReplay))
		r.Get(base+"/{id}/replay/{pageId}", s.handle(s.handleInteractReplayPage))
	}
	r.Post("/scrape/{id}/interact", s.handle(s.handleScrapeInteract))
	r.Delete("/scrape/{id}/interact", s.handle(s.handleScrapeInteractStop))
}

// Session bounds (§5.11).
const (
	minSessionTTL, maxSessionTTL, defaultSessionTTL = 30, 3600, 600
	minActivityTTL, maxActivityTTL, defaultActivity = 10, 3600, 300
	// scrapeSessionTTL and scrapeActivityTTL are the limits of a scrape's
	// session, which its interact body cannot set.
	scrapeSessionTTL  = 600 * time.Second
	scrapeActivityTTL = 300 * time.Second
	maxCodeLen        = 100000
	maxCodeTimeout    = 300
	defaultCodeTime   = 30
)

// Errors of the interact routes.
var (
	errInteractCodeOrPrompt = &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: "Either 'code' or 'prompt' must be provided.",
		Details: []FieldError{{Path: []any{"code"}, Message: "Either 'code' or 'prompt' must be provided.", Code: "custom"}}}
	errInteractSessionNotFound = &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: "Browser session not found."}
	errInteractNoReplay        = &Error{Status: http.StatusConflict, Code: "INTERACT_REPLAY_UNAVAILABLE",
		Message: "Conflict: this scrape cannot be replayed in a browser session: what it requested was not kept (it used zeroDataRetention or lockdown, or ran before this server kept replay data). Scrape the page again, then interact with the new scrape."}
	errInteractNotRecorded = &Error{Status: http.StatusNotFound, Code: "REPLAY_NOT_FOUND",
		Message: "This browser session has no replay: it was opened with recordSession: false, or its team keeps no data."}
	errInteractPageNotFound = &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: "Replay page not found."}
	errInteractPromptNoLLM  = &Error{Status: http.StatusBadRequest, Code: "SCRAPE_LLM_NOT_CONFIGURED",
		Message: "prompt-driven interaction needs a language model, and this server has none configured (set OPENAI_BASE_URL and MODEL_NAME); send code instead",
		Details: []FieldError{{Path: []any{"prompt"}, Message: "no language model is configured", Code: "not_supported"}}}
)

// interactView is a session as the routes answer it. cdpUrl, liveViewUrl
// and interactiveLiveViewUrl are given for an active session held by this
// process: cdpUrl is a WebSocket (ws:// or wss://, GET
// /v2/interact/{id}/cdp?token=) speaking the Chrome DevTools protocol to
// the session's browser context only, for Playwright's connectOverCDP or
// Puppeteer's connect (see internal/interact/cdpproxy.go for what it
// refuses); its token is its only credential, like the live view's.
type interactView struct {
	ID            string `json:"id"`
	Status        string `json:"status"`
	StreamWebView bool   `json:"streamWebView"`
	CreatedAt     string `json:"createdAt"`
	LastActivity  string `json:"lastActivity"`
	ExpiresAt     string `json:"expiresAt"`
	CDPURL        string `json:"cdpUrl,omitempty"`
	// The live view URLs of an active session held by this process.
	LiveViewURL            string `json:"liveViewUrl,omitempty"`
	InteractiveLiveViewURL string `json:"interactiveLiveViewUrl,omitempty"`
}

// addLiveURLs adds liveViewUrl and interactiveLiveViewUrl to an answer
// about session id when it streams its web view.
func (s *Server) addLiveURLs(r *http.Request, id string, body map[string]any) {
	if view, interactive, ok := s.liveURLs(r, id); ok {
		body["liveViewUrl"], body["interactiveLiveViewUrl"] = view, interactive
	}
	if u := s.cdpURL(r, id); u != "" {
		body["cdpUrl"] = u
	}
}

func viewOf(rec store.InteractSession) interactView {
	return interactView{ID: rec.ID, Status: rec.Status, StreamWebView: rec.StreamWebView,
		CreatedAt: rec.CreatedAt.UTC().Format(time.RFC3339Nano), LastActivity: rec.LastActivity.UTC().Format(time.RFC3339Nano),
		ExpiresAt: rec.ExpiresAt.UTC().Format(time.RFC3339Nano)}
}

// handleInteractCreate serves POST /v2/interact and /v2/browser.
func (s *Server) handleInteractCreate(w http.ResponseWriter, r *http.Request) error {
	fields, apiErr := readJSONObject(r.Body)
	if apiErr != nil {
		return apiErr
	}
	var v validator
	v.checkKeys(nil, fields, keysIn("ttl", "activityTtl", "streamWebView", "recordSession", "profile", "integration", "origin"))
	p := interact.CreateParams{TTL: defaultSessionTTL * time.Second, ActivityTTL: defaultActivity * time.Second}
	if n, ok := v.optInt(nil, fields, "ttl", minSessionTTL, maxSessionTTL); ok {
		p.TTL = time.Duration(n) * time.Second
	}
	if n, ok := v.optInt(nil, fields, "activityTtl", minActivityTTL, maxActivityTTL); ok {
		p.ActivityTTL = time.Duration(n) * time.Second
	}
	p.StreamWebView = v.optBool(nil, fields, "streamWebView", true)
	p.Record = v.optBool(nil, fields, "recordSession", true)
	v.optString(nil, fields, "integration")
	v.optString(nil, fields, "origin")
	if present(fields, "profile") {
		if pr := v.profile([]any{"profile"}, fields.get("profile")); pr != nil {
			p.Profile = &interact.Profile{Name: pr.Name, SaveChanges: pr.SaveChanges}
		}
	}
	if err := v.err(); err != nil {
		return err
	}
	ctx := r.Context()
	team := teamFrom(ctx)
	p.TeamID = team.ID
	// A team with zero data retention forced on keeps no recording.
	p.Record = p.Record && !team.Limits.ZeroDataRetentionForced
	if err := s.rateLimited(ctx, team, limits.ClassScrape); err != nil {
		return err
	}
	endpoint := "interact"
	if strings.Contains(r.URL.Path, "/browser") {
		endpoint = "browser"
	}
	s.recordActivity(r, team, endpoint, "", nil, false) // a new session names no URL
	if err := s.checkCredits(ctx, team, billing.MinInteract); err != nil {
		return err
	}
	rec, err := s.interact.Create(ctx, p)
	if err != nil {
		return err
	}
	body := map[string]any{"success": true, "id": rec.ID, "expiresAt": rec.ExpiresAt.UTC().Format(time.RFC3339Nano)}
	s.addLiveURLs(r, rec.ID, body)
	writeJSON(w, http.StatusOK, body)
	return nil
}

// handleInteractList serves GET /v2/interact and /v2/browser.
func (s *Server) handleInteractList(w http.ResponseWriter, r *http.Request) error {
	status := r.URL.Query().Get("status")
	if status != "" && status != store.InteractActive && status != store.InteractDestroyed {
		return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: "Invalid status: use active or destroyed.",
			Details: []FieldError{{Path: []any{"status"}, Message: "Invalid enum value. Expected 'active' | 'destroyed'", Code: "invalid_enum_value"}}}
	}
	ctx := r.Context()
	team := teamFrom(ctx)
	if err := s.rateLimited(ctx, team, limits.ClassStatus); err != nil {
		return err
	}
	recs, err := s.interact.List(ctx, team.ID, status)
	if err != nil {
		return err
	}
	out := make([]interactView, len(recs))
	for i, rec := range recs {
		out[i] = viewOf(rec)
		if rec.Status == store.InteractActive {
			out[i].LiveViewURL, out[i].InteractiveLiveViewURL, _ = s.liveURLs(r, rec.ID)
			out[i].CDPURL = s.cdpURL(r, rec.ID)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "sessions": out})
	return nil
}

// execRequest is a decoded execute (or scrape interact) body.
type execRequest struct {
	interact.ExecParams
	Prompt string
}

// decodeExecRequest reads {code, prompt?, language, timeout, origin?};
// withPrompt allows prompt (the scrape's interact) and makes code
// optional.
func decodeExecRequest(r *http.Request, withPrompt bool, checkLanguage func(string) error) (execRequest, error) {
	fields, apiErr := readJSONObject(r.Body)
	if apiErr != nil {
		return execRequest{}, apiErr
	}
	var v validator
	keys := []string{"code", "language", "timeout", "origin", "integration"}
	if withPrompt {
		keys = append(keys, "prompt")
	}
	v.checkKeys(nil, fields, keysIn(keys...))
	var req execRequest
	if withPrompt {
		if present(fields, "code") {
			req.Code, _ = v.strLen([]any{"code"}, fields.get("code"), 1, maxCodeLen)
		}
		if present(fields, "prompt") {
			req.Prompt, _ = v.strLen([]any{"prompt"}, fields.get("prompt"), 1, maxPromptLen)
		}
	} else {
		req.Code, _ = v.reqString(nil, fields, "code", 1, maxCodeLen)
	}
	req.Language = v.optEnum(nil, fields, "language", "node", "node", "python", "bash", "javascript")
	req.Timeout = defaultCodeTime * time.Second
	if n, ok := v.optInt(nil, fields, "timeout", 1, maxCodeTimeout); ok {
		req.Timeout = time.Duration(n) * time.Second
	}
	v.optString(nil, fields, "origin")
	v.optString(nil, fields, "integration")
	if err := v.err(); err != nil {
		return execRequest{}, err
	}
	if withPrompt && req.Code == "" && req.Prompt == "" {
		return execRequest{}, errInteractCodeOrPrompt
	}
	if req.Code != "" {
		if err := checkLanguage(req.Language); err != nil {
			return execRequest{}, languageError(err)
		}
	}
	return req, nil
}

// languageError is the 400 of a language this server does not run (as
// toAPIError maps it) naming the field; other errors pass.
func languageError(err error) error {
	if !errors.Is(err, interact.ErrLanguage) {
		return err
	}
	e := toAPIError(err)
	e.Details = []FieldError{{Path: []any{"language"}, Message: e.Message, Code: "not_supported"}}
	return e
}

// execBody is the answer of code run in a session.
func execBody(res interact.ExecResult) map[string]any {
	body := map[string]any{
		"success": res.ExitCode == 0 && !res.Killed, "stdout": res.Stdout, "result": res.Stdout, "stderr": res.Stderr,
		"exitCode": res.ExitCode, "killed": res.Killed,
	}
	if res.Truncated {
		body["truncated"] = true
	}
	if res.Error != "" {
		body["error"] = res.Error
	}
	return body
}

// sessionID reads and checks the {id} of a session route.
func sessionID(r *http.Request) (string, error) {
	id := chi.URLParam(r, "id")
	if _, err := uuid.Parse(id); err != nil {
		return "", errInteractSessionNotFound
	}
	return id, nil
}

// handleInteractExecute serves POST /v2/interact/{id}/execute.
func (s *Server) handleInteractExecute(w http.ResponseWriter, r *http.Request) error {
	id, err := sessionID(r)
	if err != nil {
		return err
	}
	req, err := decodeExecRequest(r, false, s.interact.CheckLanguage)
	if err != nil {
		return err
	}
	ctx := r.Context()
	team := teamFrom(ctx)
	if err := s.rateLimited(ctx, team, limits.ClassScrape); err != nil {
		return err
	}
	rec, err := s.interact.Get(ctx, team.ID, id)
	if errors.Is(err, interact.ErrNotFound) {
		return errInteractSessionNotFound
	}
	if err != nil {
		return err
	}
	res, err := s.interact.Execute(ctx, rec, req.ExecParams)
	if err != nil {
		return languageError(err)
	}
	body := execBody(res)
	s.addLiveURLs(r, rec.ID, body)
	writeJSON(w, http.StatusOK, body)
	return nil
}

// Recordings reads session recordings; *interact.Manager implements it.
type Recordings interface {
	Recording(ctx context.Context, teamID, id string) (store.InteractSession, []store.InteractPage, error)
	RecordedPage(ctx context.Context, teamID, id string, pageNo int) (store.InteractPage, []store.InteractFrame, error)
}

// recordings checks a replay route's session id and rate limit.
func (s *Server) recordings(r *http.Request) (Recordings, string, error) {
	rs, ok := s.interact.(Recordings)
	if !ok {
		return nil, "", errInteractNotRecorded
	}
	id, err := sessionID(r)
	if err != nil {
		return nil, "", err
	}
	ctx := r.Context()
	if err := s.rateLimited(ctx, teamFrom(ctx), limits.ClassStatus); err != nil {
		return nil, "", err
	}
	return rs, id, nil
}

// replayPage is a recorded page as the replay routes answer it.
type replayPage struct {
	PageID    string `json:"pageId"`
	URL       string `json:"url"`
	Title     string `json:"title"`
	StartedAt string `json:"startedAt"`
	Frames    int    `json:"frames"`
}

func pageView(p store.InteractPage) replayPage {
	return replayPage{PageID: strconv.Itoa(p.No), URL: p.URL, Title: p.Title, StartedAt: p.StartedAt.UTC().Format(time.RFC3339Nano), Frames: p.Frames}
}

// handleInteractReplay serves GET /v2/interact/{id}/replay: the pages a
// recorded session showed, in order.
func (s *Server) handleInteractReplay(w http.ResponseWriter, r *http.Request) error {
	rs, id, err := s.recordings(r)
	if err != nil {
		return err
	}
	rec, pages, err := rs.Recording(r.Context(), teamFrom(r.Context()).ID, id)
	switch {
	case errors.Is(err, interact.ErrNotFound):
		return errInteractSessionNotFound
	case errors.Is(err, interact.ErrNotRecorded):
		return errInteractNotRecorded
	case err != nil:
		return err
	}
	out := make([]replayPage, len(pages))
	for i, p := range pages {
		out[i] = pageView(p)
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": rec.ID, "status": rec.Status, "pages": out})
	return nil
}

// handleInteractReplayPage serves GET /v2/interact/{id}/replay/{pageId}:
// a recorded page with its snapshots as JPEG data URLs, oldest first.
func (s *Server) handleInteractReplayPage(w http.ResponseWriter, r *http.Request) error {
	rs, id, err := s.recordings(r)
	if err != nil {
		return err
	}
	no, err := strconv.Atoi(chi.URLParam(r, "pageId"))
	if err != nil || no < 1 {
		return errInteractPageNotFound
	}
	p, frames, err := rs.RecordedPage(r.Context(), teamFrom(r.Context()).ID, id, no)
	if errors.Is(err, interact.ErrNotFound) {
		return errInteractPageNotFound
	}
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(frames))
	for i, f := range frames {
		out[i] = map[string]any{"at": f.At.UTC().Format(time.RFC3339Nano), "image": "data:image/jpeg;base64," + base64.StdEncoding.EncodeToString(f.JPEG)}
	}
	pv := pageView(p)
	pv.Frames = len(frames)
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": id, "page": pv, "frames": out})
	return nil
}

// handleInteractDelete serves DELETE /v2/interact/{id}.
func (s *Server) handleInteractDelete(w http.ResponseWriter, r *http.Request) error {
	id, err := sessionID(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	end, err := s.interact.Delete(ctx, teamFrom(ctx).ID, id)
	if errors.Is(err, interact.ErrNotFound) {
		return errInteractSessionNotFound
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "status": store.InteractDestroyed, "sessionDurationMs": end.DurationMS,
		"creditsBilled": end.CreditsBilled, "cleanupQueued": true})
	return nil
}

// handleScrapeInteract serves POST /v2/scrape/{id}/interact: the first
// call replays the scrape in a new session, later ones reuse it.
func (s *Server) handleScrapeInteract(w http.ResponseWriter, r *http.Request) error {
	scrapeID := chi.URLParam(r, "id")
	if _, err := uuid.Parse(scrapeID); err != nil {
		return errInvalidJobID
	}
	req, err := decodeExecRequest(r, true, s.interact.CheckLanguage)
	if err != nil {
		return err
	}
	ctx := r.Context()
	team := teamFrom(ctx)
	if err := s.rateLimited(ctx, team, limits.ClassScrape); err != nil {
		return err
	}
	s.recordActivity(r, team, "interact", "", nil, false)
	if req.Prompt != "" && !s.interact.PromptEnabled() {
		return errInteractPromptNoLLM
	}
	rec, err := s.interact.ForScrape(ctx, team.ID, scrapeID)
	if errors.Is(err, interact.ErrNotFound) {
		rec, err = s.openScrapeSession(ctx, team.ID, scrapeID)
	}
	if err != nil {
		return err
	}
	// code runs first, then the prompt, when both are given.
	var res interact.ExecResult
	if req.Code != "" {
		if res, err = s.interact.Execute(ctx, rec, req.ExecParams); err != nil {
			return err
		}
	}
	body := execBody(res)
	if req.Prompt != "" && res.ExitCode == 0 && !res.Killed {
		pr, err := s.interact.Prompt(ctx, rec, interact.PromptParams{Prompt: req.Prompt, Timeout: req.Timeout})
		if err != nil {
			return err
		}
		body["output"], body["steps"] = pr.Output, pr.Steps
		if req.Code == "" {
			body["result"] = pr.Output
		}
		if !pr.Done {
			body["success"], body["exitCode"], body["error"] = false, 1, pr.Error
		}
	}
	body["sessionId"] = rec.ID
	s.addLiveURLs(r, rec.ID, body)
	writeJSON(w, http.StatusOK, body)
	return nil
}

// openScrapeSession opens the session of a scrape of the team by
// replaying it; a concurrent first call that won gives its session.
func (s *Server) openScrapeSession(ctx context.Context, teamID, scrapeID string) (store.InteractSession, error) {
	owner, _, err := s.results.get(ctx, scrapeID)
	if err != nil {
		return store.InteractSession{}, err
	}
	if owner != teamID {
		return store.InteractSession{}, errJobNotFound
	}
	rp, err := s.replays.get(ctx, teamID, scrapeID)
	if err != nil {
		return store.InteractSession{}, err
	}
	if err := s.checkCredits(ctx, teamFrom(ctx), billing.MinInteract); err != nil {
		return store.InteractSession{}, err
	}
	p := interact.CreateParams{TeamID: teamID, ScrapeID: scrapeID, TTL: scrapeSessionTTL, ActivityTTL: scrapeActivityTTL, StreamWebView: true,
		Record: !teamFrom(ctx).Limits.ZeroDataRetentionForced,
		Replay: &interact.Replay{URL: rp.URL, Headers: rp.Headers, WaitFor: time.Duration(rp.WaitForMS) * time.Millisecond,
			Actions: scrape.BrowserActions(rp.Actions), Mobile: rp.Mobile, Languages: rp.Languages,
			Timezone: scrape.CountryTimezone(rp.Country), BlockAds: rp.BlockAds}}
	if rp.Profile != nil {
		p.Profile = &interact.Profile{Name: rp.Profile.Name, SaveChanges: rp.Profile.SaveChanges}
	}
	rec, err := s.interact.Create(ctx, p)
	if errors.Is(err, store.ErrConflict) {
		return s.interact.ForScrape(ctx, teamID, scrapeID)
	}
	return rec, err
}

// handleScrapeInteractStop serves DELETE /v2/scrape/{id}/interact.
func (s *Server) handleScrapeInteractStop(w http.ResponseWriter, r *http.Request) error {
	scrapeID := chi.URLParam(r, "id")
	if _, err := uuid.Parse(scrapeID); err != nil {
		return errInvalidJobID
	}
	ctx := r.Context()
	end, err := s.interact.DeleteForScrape(ctx, teamFrom(ctx).ID, scrapeID)
	if errors.Is(err, interact.ErrNotFound) {
		return errInteractSessionNotFound
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "sessionDurationMs": end.DurationMS, "creditsBilled": end.CreditsBilled, "cleanupQueued": true})
	return nil
}

// replay is what a scrape's interact needs to replay it: kept with the
// scrape's document, for as long.
type replay struct {
	URL       string            `json:"url"`
	Headers   map[string]string `json:"headers,omitempty"`
	WaitForMS int64             `json:"waitForMs,omitempty"`
	Actions   []scrape.Action   `json:"actions,omitempty"`
	Mobile    bool              `json:"mobile,omitempty"`
	Languages []string          `json:"languages,omitempty"`
	Country   string            `json:"country,omitempty"`
	BlockAds  bool              `json:"blockAds,omitempty"`
	Profile   *scrape.Profile   `json:"profile,omitempty"`
}

// replays keeps replay data in the results cache.
type replays struct {
	c   cache.Cache
	now func() time.Time
}

// put keeps what replaying scrape id of team needs; failures only cost a
// later interact.
func (rs replays) put(ctx context.Context, id, teamID string, o scrape.Options) {
	if rs.c == nil || id == "" {
		return
	}
	rp := replay{URL: o.URL, Headers: o.Headers, WaitForMS: o.WaitFor.Milliseconds(), Actions: o.Actions, Mobile: o.Mobile,
		Languages: o.Location.Languages, Country: o.Location.Country, BlockAds: o.BlockAds, Profile: o.Profile}
	data, err := json.Marshal(rp)
	if err != nil {
		return
	}
	v := append(append([]byte(teamID), '\n'), data...)
	_ = rs.c.Set(ctx, "replay:"+id, cache.Entry{Value: v, CreatedAt: rs.now()}, ResultTTL)
}

// get returns the replay data of the team's scrape, or the 409 when none
// was kept.
func (rs replays) get(ctx context.Context, teamID, id string) (replay, error) {
	if rs.c == nil {
		return replay{}, errInteractNoReplay
	}
	e, err := rs.c.Get(ctx, "replay:"+id)
	if errors.Is(err, cache.ErrMiss) {
		return replay{}, errInteractNoReplay
	}
	if err != nil {
		return replay{}, err
	}
	owner, data, ok := bytes.Cut(e.Value, []byte{'\n'})
	if !ok || string(owner) != teamID {
		return replay{}, errInteractNoReplay
	}
	var rp replay
	if err := json.Unmarshal(data, &rp); err != nil {
		return replay{}, errInteractNoReplay
	}
	return rp, nil
}
