package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/firegate/firegate/internal/mail"
	"github.com/firegate/firegate/internal/monitor"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/webhook"
)

// Monitors serves the /v2/monitor routes; *monitor.Service implements it.
type Monitors interface {
	Create(ctx context.Context, teamID string, in monitor.Input) (monitor.View, error)
	List(ctx context.Context, teamID string, limit, offset int) ([]monitor.View, error)
	Get(ctx context.Context, teamID, id string) (monitor.View, error)
	Update(ctx context.Context, teamID, id string, p monitor.Patch) (monitor.View, error)
	Delete(ctx context.Context, teamID, id string) error
	Run(ctx context.Context, teamID, id string) (monitor.CheckView, error)
	Checks(ctx context.Context, teamID, id, status string, limit, offset int) ([]monitor.CheckView, error)
	Check(ctx context.Context, teamID, id, checkID, status string, skip, limit int) (monitor.CheckDetail, bool, error)
}

// Bounds of the monitor body (reference §5.12) and this server's own.
const (
	maxMonitorName       = 256
	maxMonitorTargets    = 50
	maxMonitorGoal       = 2000
	maxMonitorRecipients = 25
	maxSearchQueries     = 12
	maxSearchQuery       = 256
	maxSearchResults     = 50
	maxSearchDomains     = 50
	defaultRetentionDays = 30
	maxRetentionDays     = 365
	// maxMonitorURLs bounds the pages of one check (this server's bound:
	// the reference gives none).
	maxMonitorURLs = 1000
	// Page sizes of the list routes.
	defaultMonitorList = 25
	maxMonitorList     = 100
	defaultCheckPages  = 100
	maxCheckPages      = 1000
)

var (
	monitorKeys = keysIn("name", "schedule", "targets", "webhook", "notification", "retentionDays", "goal", "judgeEnabled",
		"origin", "integration")
	patchKeys = keysIn("name", "schedule", "targets", "webhook", "notification", "retentionDays", "goal", "judgeEnabled",
		"status", "origin", "integration")
)

func (s *Server) monitorRoutes(r chi.Router) {
	r.Post("/monitor", s.handle(s.handleCreateMonitor))
	r.Get("/monitor", s.handle(s.handleListMonitors))
	r.Get("/monitor/{id}", s.handle(s.handleGetMonitor))
	r.Patch("/monitor/{id}", s.handle(s.handleUpdateMonitor))
	r.Delete("/monitor/{id}", s.handle(s.handleDeleteMonitor))
	r.Post("/monitor/{id}/run", s.handle(s.handleRunMonitor))
	r.Get("/monitor/{id}/checks", s.handle(s.handleMonitorChecks))
	r.Get("/monitor/{id}/checks/{checkId}", s.handle(s.handleMonitorCheck))
}

// isMonitorRoute reports whether a notImplemented pattern is a monitor
// route.
func isMonitorRoute(p string) bool { return p == "/monitor" || p == "/monitor/*" }

type monitorBody struct {
	in    monitor.Input
	patch monitor.Patch
	// email is set when notification.email.enabled is true.
	email bool
}

// monitorRequest validates a create body, or with patch a PATCH body.
func (v *validator) monitorRequest(m jsonObject, patch bool) monitorBody {
	var b monitorBody
	// origin and integration (the SDK adds origin to every body) are
	// bookkeeping: validated, not stored.
	v.bookkeeping(nil, m)
	if patch {
		v.checkKeys(nil, m, patchKeys)
		changes := 0
		for _, f := range m {
			if f.key != "origin" && f.key != "integration" {
				changes++
			}
		}
		if changes == 0 {
			v.addCustom(nil, codeCustom, "The update is empty: send at least one field to change")
			return b
		}
	} else {
		v.checkKeys(nil, m, monitorKeys)
	}
	if !patch || present(m, "name") {
		if name, ok := v.reqString(nil, m, "name", 1, maxMonitorName); ok {
			b.in.Name = name
			b.patch.Name = &name
		}
	}
	if !patch || present(m, "schedule") {
		if sched, ok := v.schedule(m); ok {
			b.in.Schedule = sched
			b.patch.Schedule = &sched
		}
	}
	if !patch || present(m, "targets") {
		targets := v.monitorTargets(m)
		b.in.Config.Targets, b.patch.Targets = targets, targets
		if patch && targets == nil && !v.failed() {
			b.patch.Targets = []monitor.Target{}
		}
	}
	if present(m, "webhook") {
		if spec := v.monitorWebhook(m); spec != nil {
			b.in.Config.Webhook = spec
			b.patch.Webhook = &spec
		}
	} else if raw := m.get("webhook"); patch && raw != nil {
		var none *webhook.Spec
		b.patch.Webhook = &none
	}
	if present(m, "notification") {
		raw, enabled := v.notification(m.get("notification"))
		b.in.Config.Notification = raw
		b.patch.Notification = &raw
		b.email = enabled
	} else if raw := m.get("notification"); patch && raw != nil {
		null := json.RawMessage("null")
		b.patch.Notification = &null
	}
	b.in.RetentionDays = defaultRetentionDays
	if n, ok := v.optInt(nil, m, "retentionDays", 1, maxRetentionDays); ok {
		days := int(n)
		b.in.RetentionDays = days
		b.patch.RetentionDays = &days
	}
	if present(m, "goal") {
		if goal, ok := v.strLen([]any{"goal"}, m.get("goal"), 0, maxMonitorGoal); ok {
			b.in.Config.Goal = goal
			b.patch.Goal = &goal
		}
	} else if raw := m.get("goal"); patch && raw != nil {
		empty := ""
		b.patch.Goal = &empty
	}
	b.in.Config.JudgeEnabled = b.in.Config.Goal != ""
	if present(m, "judgeEnabled") {
		if on, ok := v.boolean([]any{"judgeEnabled"}, m.get("judgeEnabled")); ok {
			b.in.Config.JudgeEnabled = on
			b.patch.JudgeEnabled = &on
		}
	}
	if patch && present(m, "status") {
		if st, ok := v.enum([]any{"status"}, m.get("status"), "active", "paused"); ok {
			b.patch.Status = &st
		}
	}
	if !patch && !v.failed() && b.in.Config.Goal == "" {
		for i, t := range b.in.Config.Targets {
			if t.Type == monitor.TargetSearch {
				v.addCustom([]any{"targets", i}, codeCustom, "goal is required when the monitor has a search target")
				break
			}
		}
	}
	return b
}

// monitorEvents maps the event names a monitor's webhook accepts to the
// full names sent.
var monitorEvents = map[string]string{
	"page": monitor.EventPage, monitor.EventPage: monitor.EventPage,
	"check.completed": monitor.EventCheckCompleted, "completed": monitor.EventCheckCompleted,
	monitor.EventCheckCompleted: monitor.EventCheckCompleted,
}

// monitorWebhook reads the webhook like a crawl's, except for events,
// which are the monitor's: page and check.completed, short or prefixed
// with monitor.
func (v *validator) monitorWebhook(m jsonObject) *webhook.Spec {
	raw := m.get("webhook")
	var events []string
	if kindOf(raw) == kindObject {
		o, _ := splitObject(raw)
		if ev := o.get("events"); ev != nil && kindOf(ev) != kindNull {
			p := []any{"webhook", "events"}
			list, ok := v.stringList(p, ev, len(monitorEvents))
			if !ok {
				return nil
			}
			for i, e := range list {
				full, known := monitorEvents[e]
				if !known {
					v.addCustom(at(p, i), codeCustom, "webhook.events["+strconv.Itoa(i)+"]: unknown event "+strconv.Quote(e)+
						": want page or check.completed, optionally prefixed with monitor.")
					return nil
				}
				if !slices.Contains(events, full) {
					events = append(events, full)
				}
			}
			rest := map[string]json.RawMessage{}
			for _, f := range o {
				if f.key != "events" {
					rest[f.key] = f.raw
				}
			}
			raw, _ = json.Marshal(rest) // cannot fail: raw members of a body json.Valid accepted
		}
	}
	spec, err := webhook.ParseSpec(raw)
	if err != nil {
		var se *webhook.SpecError
		if errors.As(err, &se) {
			v.addCustom([]any{"webhook"}, codeCustom, se.Error())
		} else {
			v.addCustom([]any{"webhook"}, codeCustom, err.Error())
		}
		return nil
	}
	spec.Events = events
	return &spec
}

// schedule reads the required schedule object.
func (v *validator) schedule(m jsonObject) (monitor.Schedule, bool) {
	p := []any{"schedule"}
	if !present(m, "schedule") {
		v.required(p, "object")
		return monitor.Schedule{}, false
	}
	o, ok := v.object(p, m.get("schedule"))
	if !ok {
		return monitor.Schedule{}, false
	}
	v.checkKeys(p, o, keysIn("cron", "text", "timezone"))
	cronExpr, _ := v.optString(p, o, "cron")
	text, _ := v.optString(p, o, "text")
	tz, _ := v.optString(p, o, "timezone")
	if v.failed() {
		return monitor.Schedule{}, false
	}
	sched, err := monitor.ParseSchedule(cronExpr, text, tz)
	if err != nil {
		var se *monitor.ScheduleError
		if errors.As(err, &se) {
			v.addCustom(at(p, se.Field), codeCustom, "schedule."+se.Field+": "+se.Reason)
		} else {
			v.addCustom(p, codeCustom, err.Error())
		}
		return monitor.Schedule{}, false
	}
	return sched, true
}

// monitorTargets reads the required targets array.
func (v *validator) monitorTargets(m jsonObject) (targets []monitor.Target) {
	p := []any{"targets"}
	if !present(m, "targets") {
		v.required(p, "array")
		return nil
	}
	items, ok := v.array(p, m.get("targets"))
	if !ok {
		return nil
	}
	switch {
	case len(items) == 0:
		v.add(p, codeTooSmall, "Array must contain at least 1 element(s)")
		return nil
	case len(items) > maxMonitorTargets:
		v.add(p, codeTooBig, "Array must contain at most "+strconv.Itoa(maxMonitorTargets)+" element(s)")
		return nil
	}
	ids := map[string]bool{}
	urls := 0
	for i, raw := range items {
		tp := at(p, i)
		o, ok := v.object(tp, raw)
		if !ok {
			continue
		}
		typ := ""
		if !present(o, "type") {
			v.add(at(tp, "type"), codeInvalidDiscriminator, "Invalid discriminator value. Expected 'scrape' | 'crawl' | 'search'")
			continue
		}
		if typ, ok = v.enum(at(tp, "type"), o.get("type"), monitor.TargetScrape, monitor.TargetCrawl, monitor.TargetSearch); !ok {
			continue
		}
		t := monitor.Target{Type: typ, ID: monitorTargetID(i)}
		if present(o, "id") {
			if id, ok := v.strLen(at(tp, "id"), o.get("id"), 1, 256); ok {
				t.ID = id
			}
		}
		if ids[t.ID] {
			v.addCustom(at(tp, "id"), codeCustom, "Target ids must be unique; "+strconv.Quote(t.ID)+" is used twice")
		}
		ids[t.ID] = true
		echo := map[string]any{"type": typ, "id": t.ID}
		switch typ {
		case monitor.TargetScrape:
			v.checkKeys(tp, o, keysIn("type", "id", "urls", "scrapeOptions"))
			t.URLs = v.targetURLs(tp, o)
			urls += len(t.URLs)
			echo["urls"] = t.URLs
			t.Scrape = v.targetScrapeOptions(tp, o, echo)
		case monitor.TargetCrawl:
			v.checkKeys(tp, o, keysIn("type", "id", "url", "crawlOptions", "scrapeOptions"))
			v.crawlTarget(tp, o, &t, echo)
			urls += t.Limit
		case monitor.TargetSearch:
			v.checkKeys(tp, o, keysIn("type", "id", "queries", "searchWindow", "maxResults", "includeDomains", "excludeDomains"))
			t.Search = v.searchTarget(tp, o, echo)
		}
		if t.Scrape.ZeroDataRetention {
			// A monitor compares each check with the content the previous
			// one kept: it cannot keep nothing.
			zp := at(tp, "scrapeOptions", "zeroDataRetention")
			if typ == monitor.TargetCrawl && !scrapeOptionSet(o, "zeroDataRetention") {
				zp = at(tp, "crawlOptions", "zeroDataRetention")
			}
			v.addCustom(zp, codeCustom, msgMonitorZDR)
		}
		// Cannot fail: strings, string slices, ints and raw members of the
		// body, which json.Valid accepted.
		t.Echo, _ = json.Marshal(echo)
		targets = append(targets, t)
	}
	if urls > maxMonitorURLs {
		v.addCustom(p, codeTooBig, "A monitor may check at most "+strconv.Itoa(maxMonitorURLs)+" URLs; its targets list "+strconv.Itoa(urls))
	}
	return targets
}

func monitorTargetID(i int) string { return "target-" + strconv.Itoa(i+1) }

// msgMonitorZDR refuses zero data retention in a monitor's targets.
const msgMonitorZDR = "zeroDataRetention cannot be used in a monitor: each check is compared with the content kept from the previous one"

// scrapeOptionSet reports whether a target's scrapeOptions set key.
func scrapeOptionSet(o jsonObject, key string) bool {
	so, ok := splitObject(o.get("scrapeOptions"))
	return ok && present(so, key)
}

// defaultMonitorCrawlLimit is a crawl target's page limit when its
// crawlOptions give none (this server's choice: the crawl route's 10000
// would make every check's estimate 10000 credits).
const defaultMonitorCrawlLimit = 100

// crawlTarget validates a crawl target: its url, its crawlOptions (the
// crawl body's fields, checked by the crawl route's own validator) and
// its scrapeOptions.
func (v *validator) crawlTarget(tp []any, o jsonObject, t *monitor.Target, echo map[string]any) {
	merged := jsonObject{}
	cp := at(tp, "crawlOptions")
	limitSet := false
	if present(o, "crawlOptions") {
		co, ok := v.object(cp, o.get("crawlOptions"))
		if !ok {
			return
		}
		v.checkKeys(cp, co, func(k string) bool {
			switch k {
			case "url", "scrapeOptions", "webhook", "prompt", "origin", "integration":
				return false
			}
			return isCrawlRequestKey(k)
		})
		for _, f := range co {
			if isCrawlRequestKey(f.key) && f.key != "url" && f.key != "scrapeOptions" && f.key != "webhook" &&
				f.key != "prompt" && f.key != "origin" && f.key != "integration" {
				merged = append(merged, f)
				limitSet = limitSet || (f.key == "limit" && kindOf(f.raw) != kindNull)
			}
		}
		echo["crawlOptions"] = o.get("crawlOptions")
	}
	for _, k := range []string{"url", "scrapeOptions"} {
		if raw := o.get(k); raw != nil {
			merged = append(merged, jsonMember{key: k, raw: raw})
		}
	}
	if raw := o.get("scrapeOptions"); raw != nil {
		echo["scrapeOptions"] = raw
	}
	before := len(v.details)
	req := v.crawlRequest(merged)
	// The crawl validator names fields from the top of a crawl body; here
	// they live in the target (url, scrapeOptions) or its crawlOptions.
	for i := before; i < len(v.details); i++ {
		p := v.details[i].Path
		if len(p) > 0 && (p[0] == "url" || p[0] == "scrapeOptions") {
			v.details[i].Path = at(tp, p...)
		} else {
			v.details[i].Path = at(cp, p...)
		}
	}
	limit := req.Limit
	if !limitSet {
		limit = defaultMonitorCrawlLimit
	}
	if limit > maxMonitorURLs {
		v.addCustom(at(cp, "limit"), codeTooBig, "A monitor's crawl target may crawl at most "+strconv.Itoa(maxMonitorURLs)+" pages")
	}
	opts := req.Options
	t.URL, t.Limit, t.Crawl, t.Scrape = req.URL, limit, &opts, req.Options.Scrape
	echo["url"] = req.URL
}

// targetURLs reads a scrape target's urls (at least one).
func (v *validator) targetURLs(tp []any, o jsonObject) []string {
	p := at(tp, "urls")
	if !present(o, "urls") {
		v.required(p, "array")
		return nil
	}
	list, ok := v.stringList(p, o.get("urls"), maxMonitorURLs)
	if !ok {
		return nil
	}
	if len(list) == 0 {
		v.add(p, codeTooSmall, "Array must contain at least 1 element(s)")
		return nil
	}
	out := make([]string, 0, len(list))
	seen := map[string]bool{}
	for i, s := range list {
		u, ok := normalizeURL(s)
		if !ok {
			v.addCustom(at(p, i), codeInvalidString, msgInvalidURL)
			continue
		}
		if !seen[u] {
			seen[u] = true
			out = append(out, u)
		}
	}
	return out
}

// targetScrapeOptions reads a target's optional scrapeOptions, echoing
// them as sent.
func (v *validator) targetScrapeOptions(tp []any, o jsonObject, echo map[string]any) scrape.Options {
	if !present(o, "scrapeOptions") {
		return v.scrapeOptions(at(tp, "scrapeOptions"), nil)
	}
	echo["scrapeOptions"] = o.get("scrapeOptions")
	return v.nestedScrapeOptions(at(tp, "scrapeOptions"), o.get("scrapeOptions"))
}

// searchTarget validates a search target's fields into echo.
func (v *validator) searchTarget(tp []any, o jsonObject, echo map[string]any) *monitor.SearchTarget {
	st := &monitor.SearchTarget{MaxResults: 10}
	qp := at(tp, "queries")
	if !present(o, "queries") {
		v.required(qp, "array")
	} else if qs, ok := v.stringList(qp, o.get("queries"), maxSearchQueries); ok {
		if len(qs) == 0 {
			v.add(qp, codeTooSmall, "Array must contain at least 1 element(s)")
		}
		for i, q := range qs {
			if n := jsLen(q); n < 1 || n > maxSearchQuery {
				v.add(at(qp, i), codeTooBig, "String must contain 1 to "+strconv.Itoa(maxSearchQuery)+" character(s)")
			}
		}
		echo["queries"] = qs
		st.Queries = qs
	}
	st.Window = v.optEnum(tp, o, "searchWindow", "24h", "5m", "15m", "1h", "6h", "24h", "7d")
	echo["searchWindow"] = st.Window
	if n, ok := v.optInt(tp, o, "maxResults", 1, maxSearchResults); ok {
		st.MaxResults = int(n)
	}
	echo["maxResults"] = st.MaxResults
	for _, k := range []string{"includeDomains", "excludeDomains"} {
		if present(o, k) {
			if list, ok := v.stringList(at(tp, k), o.get(k), maxSearchDomains); ok {
				for i, d := range list {
					if !validDomainPattern(d) {
						v.add(at(tp, k, i), codeInvalidString, msgInvalidDomain)
					}
				}
				echo[k] = list
				if k == "includeDomains" {
					st.IncludeDomains = list
				} else {
					st.ExcludeDomains = list
				}
			}
		}
	}
	return st
}

// notification validates {email:{enabled, recipients, includeDiffs}} and
// returns it normalized (recipients lower-cased, without duplicates) and
// whether email is enabled.
func (v *validator) notification(raw json.RawMessage) (json.RawMessage, bool) {
	p := []any{"notification"}
	o, ok := v.object(p, raw)
	if !ok {
		return nil, false
	}
	v.checkKeys(p, o, keysIn("email"))
	out := map[string]any{}
	enabled := false
	if present(o, "email") {
		ep := at(p, "email")
		e, ok := v.object(ep, o.get("email"))
		if !ok {
			return nil, false
		}
		v.checkKeys(ep, e, keysIn("enabled", "recipients", "includeDiffs"))
		enabled = v.optBool(ep, e, "enabled", false)
		recipients := []string{}
		if present(e, "recipients") {
			if list, ok := v.stringList(at(ep, "recipients"), e.get("recipients"), maxMonitorRecipients); ok {
				for i, addr := range list {
					// A bare address only: no display name, no line break,
					// nothing that could become another header.
					if mail.CheckAddress(addr) != nil {
						v.addCustom(at(ep, "recipients", i), codeInvalidString, "Invalid email")
						continue
					}
					addr = strings.ToLower(addr)
					if !slices.Contains(recipients, addr) {
						recipients = append(recipients, addr)
					}
				}
			}
		}
		out["email"] = map[string]any{"enabled": enabled, "recipients": recipients,
			"includeDiffs": v.optBool(ep, e, "includeDiffs", false)}
	}
	b, _ := json.Marshal(out) // cannot fail: bools and strings
	return b, enabled
}

// errEmailNotConfigured answers notification.email.enabled on a server
// without an SMTP relay.
func errEmailNotConfigured() *Error {
	const msg = "Email notifications are not configured on this server: the operator sets SMTP_URL (an SMTP relay) and EMAIL_TOKEN_SECRET to send them. Use the webhook (monitor.page, monitor.check.completed) instead."
	return &Error{Status: http.StatusBadRequest, Code: "EMAIL_NOT_CONFIGURED", Message: msg,
		Details: []FieldError{{Path: []any{"notification", "email", "enabled"}, Message: msg, Code: "not_configured"}}}
}

// monitorQuery reads limit (lo..hi, default def) and offset or skip.
func monitorQuery(r *http.Request, def, hi int, skipName string) (limit, skip int, err error) {
	q := r.URL.Query()
	limit = def
	if s := q.Get("limit"); s != "" {
		n, convErr := strconv.Atoi(s)
		if convErr != nil || n < 1 || n > hi {
			return 0, 0, badQuery("limit", "limit must be an integer from 1 to "+strconv.Itoa(hi))
		}
		limit = n
	}
	if s := q.Get(skipName); s != "" {
		n, convErr := strconv.Atoi(s)
		if convErr != nil || n < 0 {
			return 0, 0, badQuery(skipName, skipName+" must be a non-negative integer")
		}
		skip = n
	}
	return limit, skip, nil
}

// statusQuery reads the optional status filter among allowed.
func statusQuery(r *http.Request, allowed ...string) (string, error) {
	s := r.URL.Query().Get("status")
	if s == "" {
		return "", nil
	}
	for _, a := range allowed {
		if s == a {
			return s, nil
		}
	}
	return "", badQuery("status", "status must be one of "+joinQuoted(allowed))
}

func joinQuoted(list []string) string {
	out := ""
	for i, s := range list {
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(s)
	}
	return out
}

func (s *Server) readMonitorBody(r *http.Request, patch bool) (monitorBody, error) {
	fields, apiErr := readJSONObject(r.Body)
	if apiErr != nil {
		return monitorBody{}, apiErr
	}
	var v validator
	b := v.monitorRequest(fields, patch)
	if err := v.err(); err != nil {
		return monitorBody{}, err
	}
	if b.email && !s.monitorEmail() {
		return monitorBody{}, errEmailNotConfigured()
	}
	targets := b.in.Config.Targets
	if patch {
		targets = b.patch.Targets
	}
	for _, t := range targets {
		if t.Type == monitor.TargetSearch && s.searcher == nil {
			return monitorBody{}, search.ErrNotConfigured
		}
	}
	return b, nil
}

func (s *Server) handleCreateMonitor(w http.ResponseWriter, r *http.Request) error {
	if teamFrom(r.Context()).Limits.ZeroDataRetentionForced {
		return errZDRMonitor
	}
	b, err := s.readMonitorBody(r, false)
	if err != nil {
		return err
	}
	m, err := s.monitors.Create(r.Context(), teamFrom(r.Context()).ID, b.in)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": m})
	return nil
}

func (s *Server) handleListMonitors(w http.ResponseWriter, r *http.Request) error {
	limit, offset, err := monitorQuery(r, defaultMonitorList, maxMonitorList, "offset")
	if err != nil {
		return err
	}
	list, err := s.monitors.List(r.Context(), teamFrom(r.Context()).ID, limit, offset)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": list})
	return nil
}

func (s *Server) handleGetMonitor(w http.ResponseWriter, r *http.Request) error {
	m, err := s.monitors.Get(r.Context(), teamFrom(r.Context()).ID, chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": m})
	return nil
}

func (s *Server) handleUpdateMonitor(w http.ResponseWriter, r *http.Request) error {
	b, err := s.readMonitorBody(r, true)
	if err != nil {
		return err
	}
	m, err := s.monitors.Update(r.Context(), teamFrom(r.Context()).ID, chi.URLParam(r, "id"), b.patch)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": m})
	return nil
}

func (s *Server) handleDeleteMonitor(w http.ResponseWriter, r *http.Request) error {
	if err := s.monitors.Delete(r.Context(), teamFrom(r.Context()).ID, chi.URLParam(r, "id")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true})
	return nil
}

func (s *Server) handleRunMonitor(w http.ResponseWriter, r *http.Request) error {
	if teamFrom(r.Context()).Limits.ZeroDataRetentionForced {
		return errZDRMonitor
	}
	c, err := s.monitors.Run(r.Context(), teamFrom(r.Context()).ID, chi.URLParam(r, "id"))
	var running *monitor.RunningError
	if errors.As(err, &running) {
		writeJSON(w, http.StatusConflict, map[string]any{"success": false, "code": "MONITOR_CHECK_RUNNING",
			"error": running.Error(), "checkId": running.CheckID})
		return nil
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "id": c.ID, "data": c})
	return nil
}

// checkStatuses and pageStatuses are the status filters of the checks and
// check routes.
var (
	checkStatuses = []string{"queued", "running", "completed", "failed", "partial", "skipped_overlap", "skipped_no_credits"}
	pageStatuses  = []string{"same", "new", "changed", "removed", "error"}
)

func (s *Server) handleMonitorChecks(w http.ResponseWriter, r *http.Request) error {
	limit, offset, err := monitorQuery(r, defaultMonitorList, maxMonitorList, "offset")
	if err != nil {
		return err
	}
	status, err := statusQuery(r, checkStatuses...)
	if err != nil {
		return err
	}
	list, err := s.monitors.Checks(r.Context(), teamFrom(r.Context()).ID, chi.URLParam(r, "id"), status, limit, offset)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": list})
	return nil
}

func (s *Server) handleMonitorCheck(w http.ResponseWriter, r *http.Request) error {
	limit, skip, err := monitorQuery(r, defaultCheckPages, maxCheckPages, "skip")
	if err != nil {
		return err
	}
	status, err := statusQuery(r, pageStatuses...)
	if err != nil {
		return err
	}
	d, more, err := s.monitors.Check(r.Context(), teamFrom(r.Context()).ID, chi.URLParam(r, "id"),
		chi.URLParam(r, "checkId"), status, skip, limit)
	if err != nil {
		return err
	}
	var next *string
	if more {
		q := url.Values{}
		q.Set("skip", strconv.Itoa(skip+len(d.Pages)))
		q.Set("limit", strconv.Itoa(limit))
		if status != "" {
			q.Set("status", status)
		}
		n := s.baseURL(r) + r.URL.Path + "?" + q.Encode()
		next = &n
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": checkDetail{d, next}, "next": next})
	return nil
}

// checkDetail is a check with its pages and the next page's URL.
type checkDetail struct {
	monitor.CheckDetail
	Next *string `json:"next"`
}
