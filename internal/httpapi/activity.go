package httpapi

import (
	"context"
	"encoding/base64"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/admin"
	"github.com/firegate/firegate/internal/auth"
	"github.com/firegate/firegate/internal/limits"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/store"
)

// Activity keeping.
const (
	// activityWindow is how far back GET /v2/team/activity looks, and how
	// long activities are kept.
	activityWindow = 24 * time.Hour
	// activityCleanEvery is how often recording also deletes expired
	// activities.
	activityCleanEvery = 10 * time.Minute
	// maxActivityTarget caps the target kept (bytes).
	maxActivityTarget = 2048
	// activityTimeout bounds one write of the activity table.
	activityTimeout = 5 * time.Second
)

// activityEndpoints are the endpoint values GET /v2/team/activity filters
// on, as the reference names them, and the operator's changes (admin).
var activityEndpoints = []string{"scrape", "crawl", "batch_scrape", "search", "extract", "llmstxt",
	"deep_research", "map", "agent", "browser", "interact", admin.Endpoint}

// recordActivity notes one accepted request of team in its activity: the
// endpoint, the API version of the route, the target (left out under zero
// data retention) and the caller's auditMetadata.username. A failure is
// logged, never the request's.
func (s *Server) recordActivity(r *http.Request, team auth.Team, endpoint, target string, audit *scrape.AuditMetadata, zdr bool) {
	if s.activity == nil || team.ID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), activityTimeout)
	defer cancel()
	id, err := uuid.NewV7()
	if err != nil {
		s.log.WarnContext(ctx, "activity not recorded", "err", err)
		return
	}
	a := store.Activity{ID: id.String(), TeamID: team.ID, Endpoint: endpoint, APIVersion: "v2", CreatedAt: time.Now()}
	if strings.HasPrefix(r.URL.Path, "/v1/") {
		a.APIVersion = "v1"
	}
	if !zdr {
		a.Target = truncateUTF8(target, maxActivityTarget)
	}
	if audit != nil {
		a.Username = audit.Username
	}
	if err := s.activity.RecordActivity(ctx, a); err != nil {
		s.log.WarnContext(ctx, "activity not recorded", "request_id", requestIDFrom(r.Context()), "team_id", team.ID, "err", err)
	}
	if last := s.activityCleaned.Load(); a.CreatedAt.UnixNano()-last > int64(activityCleanEvery) && s.activityCleaned.CompareAndSwap(last, a.CreatedAt.UnixNano()) {
		if n, err := s.activity.DeleteActivityBefore(ctx, a.CreatedAt.Add(-activityWindow)); err != nil {
			s.log.WarnContext(ctx, "expired activity not deleted", "err", err)
		} else if n > 0 {
			s.log.InfoContext(ctx, "expired activity deleted", "rows", n)
		}
	}
}

// truncateUTF8 cuts s to at most n bytes on a character boundary.
func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// activityItem is one entry of GET /v2/team/activity.
type activityItem struct {
	ID         string `json:"id"`
	Endpoint   string `json:"endpoint"`
	APIVersion string `json:"api_version"`
	CreatedAt  string `json:"created_at"`
	Target     string `json:"target"`
	// AuditMetadata echoes the request's auditMetadata; absent when it
	// had none.
	AuditMetadata *auditEcho `json:"auditMetadata,omitempty"`
}

type auditEcho struct {
	Username string `json:"username"`
}

// handleActivity serves GET /v2/team/activity?endpoint&limit&cursor: the
// team's requests of the last 24 hours, newest first.
func (s *Server) handleActivity(w http.ResponseWriter, r *http.Request) error {
	if s.activity == nil {
		return handleNotImplemented(w, r)
	}
	ctx := r.Context()
	team := teamFrom(ctx)
	q := r.URL.Query()
	var fields []FieldError
	endpoint := q.Get("endpoint")
	if q.Has("endpoint") && !slices.Contains(activityEndpoints, endpoint) {
		fields = append(fields, FieldError{Path: []any{"endpoint"}, Code: codeInvalidEnum,
			Message: "Invalid enum value. Expected " + quoteAlternatives(activityEndpoints) + ", received '" + endpoint + "'"})
	}
	limit := 50
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 || n > 100 {
			fields = append(fields, FieldError{Path: []any{"limit"}, Code: "invalid_number", Message: "limit must be an integer from 1 to 100"})
		}
		limit = n
	}
	before := ""
	if c := q.Get("cursor"); q.Has("cursor") {
		raw, err := base64.RawURLEncoding.DecodeString(c)
		id, perr := uuid.ParseBytes(raw)
		if err != nil || perr != nil {
			fields = append(fields, FieldError{Path: []any{"cursor"}, Code: "invalid_string", Message: "cursor is not one this server gave out"})
		}
		before = id.String()
	}
	if len(fields) > 0 {
		return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: "Invalid query parameters", Details: fields}
	}
	if err := s.rateLimited(ctx, team, limits.ClassStatus); err != nil {
		return err
	}
	list, err := s.activity.ListActivity(ctx, team.ID, store.ActivityQuery{
		Since: time.Now().Add(-activityWindow), Endpoint: endpoint, Before: before, Limit: limit + 1})
	if err != nil {
		return err
	}
	more := len(list) > limit
	list = list[:min(len(list), limit)]
	data := make([]activityItem, len(list))
	for i, a := range list {
		data[i] = activityItem{ID: a.ID, Endpoint: a.Endpoint, APIVersion: a.APIVersion,
			CreatedAt: a.CreatedAt.UTC().Format(time.RFC3339Nano), Target: a.Target}
		if a.Username != "" {
			data[i].AuditMetadata = &auditEcho{Username: a.Username}
		}
	}
	var cursor *string
	if more {
		c := base64.RawURLEncoding.EncodeToString([]byte(list[len(list)-1].ID))
		cursor = &c
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": data, "cursor": cursor, "has_more": more})
	return nil
}

// quoteAlternatives renders values as 'a' | 'b' | ...
func quoteAlternatives(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = "'" + v + "'"
	}
	return strings.Join(q, " | ")
}
