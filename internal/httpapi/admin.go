package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/firegate/firegate/internal/admin"
	"github.com/firegate/firegate/internal/store"
)

// Admin makes the operator's changes behind /admin; *admin.Admin
// implements it.
type Admin interface {
	Teams(ctx context.Context) ([]admin.TeamInfo, error)
	Team(ctx context.Context, teamID string) (admin.TeamInfo, error)
	CreateTeam(ctx context.Context, name string) (store.Team, error)
	CreateKey(ctx context.Context, teamID string) (string, store.APIKey, error)
	RevokeKey(ctx context.Context, teamID, keyID string) error
	AddCredits(ctx context.Context, teamID string, credits int64) (store.Balance, error)
	SetCredits(ctx context.Context, teamID string, credits int64) (store.Balance, error)
	SetUnlimited(ctx context.Context, teamID string) error
	SetLimits(ctx context.Context, teamID string, l store.TeamLimits) error
}

// maxAdminCredits bounds a credit amount of /admin (2^53, what JSON
// clients count exactly).
const maxAdminCredits = 1 << 53

// maxAdminLimit bounds a concurrency limit or rate multiplier of /admin.
const maxAdminLimit = 1_000_000

var errAdminKey = &Error{Status: http.StatusUnauthorized, Code: "UNAUTHORIZED",
	Message: "Unauthorized: /admin needs the operator key (ADMIN_API_KEY) as Authorization: Bearer <key>"}

var errTeamNotFound = &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: "Team not found"}

// adminRoutes serves the operator's JSON routes under /admin, behind
// ADMIN_API_KEY alone (team keys are refused).
func (s *Server) adminRoutes(r chi.Router, key string, a Admin) {
	want := sha256.Sum256([]byte(key))
	r.Route("/admin", func(r chi.Router) {
		r.Use(s.limitBody, s.adminAuth(want))
		r.Get("/teams", s.handle(func(w http.ResponseWriter, r *http.Request) error {
			teams, err := a.Teams(r.Context())
			if err != nil {
				return err
			}
			out := make([]adminTeam, len(teams))
			for i, t := range teams {
				out[i] = adminTeamOf(t)
			}
			writeJSON(w, http.StatusOK, map[string]any{"success": true, "teams": out,
				"defaults": map[string]any{"concurrency": s.defaults.Concurrency, "rateMultiplier": s.defaults.RateMultiplier}})
			return nil
		}))
		r.Post("/teams", s.handle(func(w http.ResponseWriter, r *http.Request) error { return s.adminCreateTeam(w, r, a) }))
		r.Get("/teams/{id}", s.handle(func(w http.ResponseWriter, r *http.Request) error {
			return writeAdminTeam(w, r, a, http.StatusOK)
		}))
		r.Post("/teams/{id}/keys", s.handle(func(w http.ResponseWriter, r *http.Request) error {
			key, k, err := a.CreateKey(r.Context(), chi.URLParam(r, "id"))
			if err != nil {
				return adminError(err)
			}
			writeJSON(w, http.StatusCreated, map[string]any{"success": true, "id": k.ID, "key": key, "prefix": k.Prefix,
				"createdAt": k.CreatedAt.UTC().Format(time.RFC3339)})
			return nil
		}))
		r.Delete("/teams/{id}/keys/{keyId}", s.handle(func(w http.ResponseWriter, r *http.Request) error {
			if err := a.RevokeKey(r.Context(), chi.URLParam(r, "id"), chi.URLParam(r, "keyId")); err != nil {
				if errors.Is(err, store.ErrNotFound) {
					return &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: "Key not found", err: err}
				}
				return adminError(err)
			}
			writeJSON(w, http.StatusOK, map[string]any{"success": true})
			return nil
		}))
		r.Post("/teams/{id}/credits", s.handle(func(w http.ResponseWriter, r *http.Request) error { return s.adminCredits(w, r, a) }))
		r.Put("/teams/{id}/limits", s.handle(func(w http.ResponseWriter, r *http.Request) error { return s.adminLimits(w, r, a) }))
		if s.feedback != nil {
			r.Get("/feedback", s.handle(s.adminFeedback))
		}
	})
}

// adminAuth admits requests bearing the operator key (compared in
// constant time); failures count against the client's failed
// authentications like a bad API key's.
func (s *Server) adminAuth(want [sha256.Size]byte) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			addr := s.clientAddr(r)
			if s.authFails != nil {
				if wait := s.authFails.blocked(addr); wait > 0 {
					s.writeError(w, r, errAuthRateLimited(wait))
					return
				}
			}
			got := sha256.Sum256([]byte(bearer(r.Header.Get("Authorization"))))
			if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
				if s.authFails != nil {
					s.authFails.fail(addr)
				}
				s.writeError(w, r, errAdminKey)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// adminError maps the store's errors of a team's change.
func adminError(err error) error {
	switch {
	case errors.Is(err, store.ErrNotFound):
		return &Error{Status: errTeamNotFound.Status, Code: errTeamNotFound.Code, Message: errTeamNotFound.Message, err: err}
	case errors.Is(err, store.ErrConflict):
		return &Error{Status: http.StatusConflict, Code: "CONFLICT", Message: "A team of that name exists", err: err}
	}
	return err
}

// adminTeam is a team as /admin shows it.
type adminTeam struct {
	ID        string       `json:"id"`
	Name      string       `json:"name"`
	CreatedAt string       `json:"createdAt"`
	Credits   adminCredits `json:"credits"`
	Limits    adminLimits  `json:"limits"`
	Keys      []adminKey   `json:"keys"`
}

type adminCredits struct {
	Unlimited      bool  `json:"unlimited"`
	Remaining      int64 `json:"remaining"`
	Plan           int64 `json:"plan"`
	UsedThisPeriod int64 `json:"usedThisPeriod"`
}

// adminLimits are a team's overrides; a nil number is the server's
// default.
type adminLimits struct {
	Concurrency             *int `json:"concurrency"`
	RateMultiplier          *int `json:"rateMultiplier"`
	ZeroDataRetention       bool `json:"zeroDataRetention"`
	ZeroDataRetentionForced bool `json:"zeroDataRetentionForced"`
	Catalog                 bool `json:"catalog"`
	ThirdPartyTerms         bool `json:"thirdPartyTerms"`
}

type adminKey struct {
	ID        string  `json:"id"`
	Prefix    string  `json:"prefix"`
	CreatedAt string  `json:"createdAt"`
	RevokedAt *string `json:"revokedAt"`
}

func adminTeamOf(t admin.TeamInfo) adminTeam {
	out := adminTeam{ID: t.Team.ID, Name: t.Team.Name, CreatedAt: t.Team.CreatedAt.UTC().Format(time.RFC3339),
		Credits: adminCredits{Unlimited: t.Balance.Unlimited, Remaining: t.Balance.Remaining, Plan: t.Balance.Plan, UsedThisPeriod: t.UsedThisPeriod},
		Limits: adminLimits{Concurrency: t.Limits.ConcurrencyLimit, RateMultiplier: t.Limits.RateMultiplier, ZeroDataRetention: t.Limits.ZeroDataRetention,
			ZeroDataRetentionForced: t.Limits.ZeroDataRetentionForced, Catalog: t.Limits.Catalog, ThirdPartyTerms: t.Limits.ThirdPartyTerms},
		Keys: make([]adminKey, len(t.Keys))}
	for i, k := range t.Keys {
		out.Keys[i] = adminKey{ID: k.ID, Prefix: k.Prefix, CreatedAt: k.CreatedAt.UTC().Format(time.RFC3339)}
		if k.RevokedAt != nil {
			v := k.RevokedAt.UTC().Format(time.RFC3339)
			out.Keys[i].RevokedAt = &v
		}
	}
	return out
}

// writeAdminTeam answers the team of the route's id.
func writeAdminTeam(w http.ResponseWriter, r *http.Request, a Admin, status int) error {
	t, err := a.Team(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return adminError(err)
	}
	writeJSON(w, status, map[string]any{"success": true, "team": adminTeamOf(t)})
	return nil
}

// adminCreateTeam serves POST /admin/teams {name, credits?}: a new team,
// limited to credits when given.
func (s *Server) adminCreateTeam(w http.ResponseWriter, r *http.Request, a Admin) error {
	fields, apiErr := readJSONObject(r.Body)
	if apiErr != nil {
		return apiErr
	}
	var v validator
	v.checkKeys(nil, fields, keysIn("name", "credits"))
	name, _ := v.reqString(nil, fields, "name", 1, admin.MaxTeamName)
	credits, limited := v.optInt(nil, fields, "credits", 0, maxAdminCredits)
	if err := v.err(); err != nil {
		return err
	}
	t, err := a.CreateTeam(r.Context(), name)
	if err != nil {
		return adminError(err)
	}
	if limited {
		if _, err := a.SetCredits(r.Context(), t.ID, credits); err != nil {
			return adminError(err)
		}
	}
	info, err := a.Team(r.Context(), t.ID)
	if err != nil {
		return adminError(err)
	}
	writeJSON(w, http.StatusCreated, map[string]any{"success": true, "team": adminTeamOf(info)})
	return nil
}

// adminCredits serves POST /admin/teams/{id}/credits with exactly one of
// {add: n}, {set: n}, {unlimited: true}.
func (s *Server) adminCredits(w http.ResponseWriter, r *http.Request, a Admin) error {
	fields, apiErr := readJSONObject(r.Body)
	if apiErr != nil {
		return apiErr
	}
	var v validator
	v.checkKeys(nil, fields, keysIn("add", "set", "unlimited"))
	add, hasAdd := v.optInt(nil, fields, "add", 0, maxAdminCredits)
	set, hasSet := v.optInt(nil, fields, "set", 0, maxAdminCredits)
	unlimited := v.optBool(nil, fields, "unlimited", false)
	if err := v.err(); err != nil {
		return err
	}
	n := 0
	for _, b := range []bool{hasAdd, hasSet, unlimited} {
		if b {
			n++
		}
	}
	if n != 1 {
		msg := "send exactly one of add (credits to add), set (the new balance) or unlimited: true"
		return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: msg,
			Details: []FieldError{{Path: []any{"add"}, Message: msg, Code: codeCustom}}}
	}
	ctx, id := r.Context(), chi.URLParam(r, "id")
	var err error
	switch {
	case hasAdd:
		_, err = a.AddCredits(ctx, id, add)
	case hasSet:
		_, err = a.SetCredits(ctx, id, set)
	default:
		err = a.SetUnlimited(ctx, id)
	}
	if err != nil {
		return adminError(err)
	}
	return writeAdminTeam(w, r, a, http.StatusOK)
}

// adminLimits serves PUT /admin/teams/{id}/limits: the team's overrides,
// replaced whole (a number absent or null goes back to the server's
// default, a flag absent to false).
func (s *Server) adminLimits(w http.ResponseWriter, r *http.Request, a Admin) error {
	fields, apiErr := readJSONObject(r.Body)
	if apiErr != nil {
		return apiErr
	}
	var v validator
	v.checkKeys(nil, fields, keysIn("concurrency", "rateMultiplier", "zeroDataRetention", "zeroDataRetentionForced", "catalog", "thirdPartyTerms"))
	num := func(key string) *int {
		n, ok := v.optInt(nil, fields, key, 0, maxAdminLimit)
		if !ok {
			return nil
		}
		i := int(n)
		return &i
	}
	l := store.TeamLimits{ConcurrencyLimit: num("concurrency"), RateMultiplier: num("rateMultiplier"),
		ZeroDataRetention: v.optBool(nil, fields, "zeroDataRetention", false), ZeroDataRetentionForced: v.optBool(nil, fields, "zeroDataRetentionForced", false),
		Catalog: v.optBool(nil, fields, "catalog", false), ThirdPartyTerms: v.optBool(nil, fields, "thirdPartyTerms", false)}
	if err := v.err(); err != nil {
		return err
	}
	if err := a.SetLimits(r.Context(), chi.URLParam(r, "id"), l); err != nil {
		return adminError(err)
	}
	return writeAdminTeam(w, r, a, http.StatusOK)
}

// adminFeedback serves GET /admin/feedback?limit (1..500, 100): every
// team's feedback, newest first.
func (s *Server) adminFeedback(w http.ResponseWriter, r *http.Request) error {
	limit := 100
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return badQuery("limit", "limit must be an integer from 1 to 500")
		}
		limit = n
	}
	list, err := s.feedback.ListFeedback(r.Context(), store.FeedbackQuery{Limit: limit})
	if err != nil {
		return err
	}
	out := make([]map[string]any, len(list))
	for i, f := range list {
		out[i] = map[string]any{"id": f.ID, "teamId": f.TeamID, "team": f.TeamName, "endpoint": f.Endpoint, "jobId": f.JobID,
			"rating": f.Rating, "comment": f.Note, "origin": f.Origin, "createdAt": f.CreatedAt.UTC().Format(time.RFC3339)}
		if len(f.Details) > 0 {
			out[i]["details"] = f.Details
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "feedback": out})
	return nil
}
