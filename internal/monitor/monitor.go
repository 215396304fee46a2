package monitor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"

	"github.com/firegate/firegate/internal/billing"
	"github.com/firegate/firegate/internal/crawljob"
	"github.com/firegate/firegate/internal/errcode"
	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/search"
	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/webhook"
)

// Errors of the service, with what the API answers for each.
var (
	// ErrNotFound: no such monitor for the team (or it was deleted).
	ErrNotFound = errcode.New("monitor: monitor not found", errcode.NotFound, "NOT_FOUND", "Monitor not found")
	// ErrCheckNotFound: no such check of the monitor.
	ErrCheckNotFound = errcode.New("monitor: check not found", errcode.NotFound, "NOT_FOUND", "Check not found")
	// ErrGoalRequired: an update leaves a search target without a goal.
	ErrGoalRequired = errcode.New("monitor: goal is required when the monitor has a search target", errcode.Invalid, "BAD_REQUEST",
		"goal is required when the monitor has a search target")
	// ErrPaused: a manual run of a monitor that is not active.
	ErrPaused = errcode.New("monitor: monitor is paused", errcode.Conflict, "MONITOR_PAUSED", "Monitor is paused: set its status to active to run it")
)

// RunningError is a manual run while a check is queued or running.
type RunningError struct{ CheckID string }

func (e *RunningError) Error() string {
	return "A check of this monitor is already running"
}

// Target types.
const (
	TargetScrape = "scrape"
	TargetCrawl  = "crawl"
	TargetSearch = "search"
)

// Target is one validated target. Echo is the target as the API shows it
// (its id filled in); Scrape the validated scrape options of its pages.
type Target struct {
	Type   string          `json:"type"`
	ID     string          `json:"id"`
	URLs   []string        `json:"urls,omitempty"`
	Scrape scrape.Options  `json:"scrape"`
	Echo   json.RawMessage `json:"echo"`
	// URL, Limit and Crawl are a crawl target's start URL, page limit and
	// crawl options (their Scrape is the target's scrape options).
	URL   string               `json:"url,omitempty"`
	Limit int                  `json:"limit,omitempty"`
	Crawl *crawljob.JobOptions `json:"crawl,omitempty"`
	// Search is a search target's settings.
	Search *SearchTarget `json:"search,omitempty"`
}

// Config is what the store keeps as a monitor's opaque config.
type Config struct {
	Targets      []Target        `json:"targets"`
	Webhook      *webhook.Spec   `json:"webhook,omitempty"`
	Notification json.RawMessage `json:"notification,omitempty"`
	Goal         string          `json:"goal,omitempty"`
	JudgeEnabled bool            `json:"judgeEnabled"`
}

// Input is a validated create body.
type Input struct {
	Name          string
	Schedule      Schedule
	Config        Config
	RetentionDays int
}

// Patch is a validated PATCH body: nil fields are unchanged.
type Patch struct {
	Name          *string
	Status        *string // active or paused
	Schedule      *Schedule
	Targets       []Target // nil: unchanged
	Webhook       **webhook.Spec
	Notification  *json.RawMessage // JSON null clears
	RetentionDays *int
	Goal          *string // "" clears
	JudgeEnabled  *bool
}

// Ledger checks and charges credits; *billing.Ledger implements it.
type Ledger interface {
	Check(ctx context.Context, teamID string, minimum int64) error
	Charge(ctx context.Context, c store.Charge) (store.ChargeResult, error)
}

// Enqueuer inserts queue jobs; *queue.Queue implements it.
type Enqueuer interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) error
}

// Store is what the monitor package needs of the store.
type Store interface {
	store.MonitorStore
	PreviousScrape(ctx context.Context, teamID, url, tag string) (store.ScrapeSnapshot, error)
	SaveScrape(ctx context.Context, s store.ScrapeSnapshot) error
}

// newID mints a time-ordered id.
func newID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return uuid.NewString()
	}
	return id.String()
}

// PageCost is the credits one scraped page of these options is estimated
// to cost.
func PageCost(o scrape.Options) int64 {
	var in billing.ScrapeCostInput
	for _, f := range o.Formats {
		switch f.Type {
		case scrape.FormatJSON:
			in.JSON = true
		case scrape.FormatDeterministicJSON:
			in.DeterministicJSON = true
		case scrape.FormatQuestion, scrape.FormatQuery:
			in.Questions++
		case scrape.FormatHighlights:
			in.Highlights++
		case scrape.FormatAudio:
			in.Audio = true
		case scrape.FormatVideo:
			in.Video = true
		case scrape.FormatChangeTracking:
			for _, m := range f.Modes {
				if m == "json" {
					in.JSON = true
				}
			}
		}
	}
	in.RedactPII = o.RedactPII != nil
	return billing.ScrapeCost(in)
}

// CheckCost is the estimated credits of one check of c.
func CheckCost(c Config) int64 {
	var n int64
	for _, t := range c.Targets {
		switch t.Type {
		case TargetScrape:
			n += int64(len(t.URLs)) * PageCost(t.Scrape)
		case TargetCrawl:
			n += int64(t.Limit) * PageCost(t.Scrape)
		case TargetSearch:
			if t.Search != nil {
				n += int64(len(t.Search.Queries)) * billing.SearchCost(t.Search.MaxResults, false)
			}
		}
	}
	return n
}

// monthRuns bounds the count of runs in a month (a 5-minute schedule runs
// 8928 times in 31 days).
const monthRuns = 9000

// monthlyEstimate is the estimated credits of 30 days of checks from now.
func monthlyEstimate(s Schedule, c Config, now time.Time) int64 {
	return int64(s.RunsBetween(now, now.Add(30*24*time.Hour), monthRuns)) * CheckCost(c)
}

// Service answers the API's monitor routes.
type Service struct {
	store Store
	q     Enqueuer
	now   func() time.Time
	email *Email // nil: no email notifications
}

// NewService builds the service; q enqueues manual checks.
func NewService(st Store, q Enqueuer, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: st, q: q, now: now}
}

func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// Create stores a new active monitor.
func (s *Service) Create(ctx context.Context, teamID string, in Input) (View, error) {
	now := s.clock()
	cfg, err := json.Marshal(in.Config)
	if err != nil {
		return View{}, err
	}
	next := in.Schedule.Next(now)
	m, err := s.store.CreateMonitor(ctx, store.Monitor{
		ID: newID(), TeamID: teamID, Name: in.Name, Status: store.MonitorActive,
		Cron: in.Schedule.Cron, Timezone: in.Schedule.Timezone, Config: cfg, RetentionDays: in.RetentionDays,
		EstimatedCreditsPerMonth: monthlyEstimate(in.Schedule, in.Config, now), NextRunAt: nonZero(next),
		CreatedAt: now,
	})
	if err != nil {
		return View{}, fmt.Errorf("monitor: create: %w", err)
	}
	s.syncEmail(ctx, teamID, m.ID, in.Config)
	return monitorView(m)
}

func nonZero(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func (s *Service) get(ctx context.Context, teamID, id string) (store.Monitor, error) {
	m, err := s.store.Monitor(ctx, teamID, id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Monitor{}, ErrNotFound
	}
	return m, err
}

// Get returns a monitor.
func (s *Service) Get(ctx context.Context, teamID, id string) (View, error) {
	m, err := s.get(ctx, teamID, id)
	if err != nil {
		return View{}, err
	}
	return monitorView(m)
}

// List returns a team's monitors, newest first.
func (s *Service) List(ctx context.Context, teamID string, limit, offset int) ([]View, error) {
	ms, err := s.store.ListMonitors(ctx, teamID, limit, offset)
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(ms))
	for _, m := range ms {
		v, err := monitorView(m)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Update applies a patch. A changed schedule or a resumed monitor gets its
// next run from now; a paused one has none.
func (s *Service) Update(ctx context.Context, teamID, id string, p Patch) (View, error) {
	m, err := s.get(ctx, teamID, id)
	if err != nil {
		return View{}, err
	}
	var cfg Config
	if err := json.Unmarshal(m.Config, &cfg); err != nil {
		return View{}, fmt.Errorf("monitor: stored config: %w", err)
	}
	sched, err := ParseSchedule(m.Cron, "", m.Timezone)
	if err != nil {
		return View{}, fmt.Errorf("monitor: stored schedule: %w", err)
	}
	reschedule := false
	if p.Name != nil {
		m.Name = *p.Name
	}
	if p.Status != nil && *p.Status != m.Status {
		m.Status = *p.Status
		reschedule = true
	}
	if p.Schedule != nil {
		sched = *p.Schedule
		m.Cron, m.Timezone = sched.Cron, sched.Timezone
		reschedule = true
	}
	if p.Targets != nil {
		cfg.Targets = p.Targets
	}
	if p.Webhook != nil {
		cfg.Webhook = *p.Webhook
	}
	if p.Notification != nil {
		cfg.Notification = *p.Notification
		if string(cfg.Notification) == "null" {
			cfg.Notification = nil
		}
	}
	if p.RetentionDays != nil {
		m.RetentionDays = *p.RetentionDays
	}
	if p.Goal != nil {
		cfg.Goal = *p.Goal
	}
	if p.JudgeEnabled != nil {
		cfg.JudgeEnabled = *p.JudgeEnabled
	} else if p.Goal != nil {
		cfg.JudgeEnabled = cfg.Goal != ""
	}
	if cfg.Goal == "" {
		for _, t := range cfg.Targets {
			if t.Type == TargetSearch {
				return View{}, ErrGoalRequired
			}
		}
	}
	now := s.clock()
	if reschedule {
		m.NextRunAt = nil
		if m.Status == store.MonitorActive {
			m.NextRunAt = nonZero(sched.Next(now))
		}
	}
	if m.Config, err = json.Marshal(cfg); err != nil {
		return View{}, err
	}
	m.EstimatedCreditsPerMonth = monthlyEstimate(sched, cfg, now)
	m.UpdatedAt = now
	got, err := s.store.UpdateMonitor(ctx, m)
	if errors.Is(err, store.ErrNotFound) {
		return View{}, ErrNotFound
	}
	if err != nil {
		return View{}, fmt.Errorf("monitor: update: %w", err)
	}
	if p.Notification != nil {
		s.syncEmail(ctx, teamID, got.ID, cfg)
	}
	return monitorView(got)
}

// Delete marks a monitor deleted.
func (s *Service) Delete(ctx context.Context, teamID, id string) error {
	err := s.store.DeleteMonitor(ctx, teamID, id, s.clock())
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	return err
}

// Run starts a manual check.
func (s *Service) Run(ctx context.Context, teamID, id string) (CheckView, error) {
	m, err := s.get(ctx, teamID, id)
	if err != nil {
		return CheckView{}, err
	}
	var cfg Config
	if err := json.Unmarshal(m.Config, &cfg); err != nil {
		return CheckView{}, fmt.Errorf("monitor: stored config: %w", err)
	}
	c, err := s.store.StartCheck(ctx, store.CheckStart{TeamID: teamID, MonitorID: id, Check: store.MonitorCheck{
		ID: newID(), Trigger: store.TriggerManual, EstimatedCredits: CheckCost(cfg), CreatedAt: s.clock(),
	}})
	var running *store.CheckRunningError
	switch {
	case errors.As(err, &running):
		return CheckView{}, &RunningError{CheckID: running.CheckID}
	case errors.Is(err, store.ErrMonitorPaused):
		return CheckView{}, ErrPaused
	case errors.Is(err, store.ErrNotFound):
		return CheckView{}, ErrNotFound
	case err != nil:
		return CheckView{}, fmt.Errorf("monitor: run: %w", err)
	}
	// A failed insert leaves the check queued, and the scheduler's sweep
	// enqueues checks left queued.
	_ = enqueueCheck(ctx, s.q, c.ID)
	return checkView(c), nil
}

// Checks lists a monitor's checks, newest first.
func (s *Service) Checks(ctx context.Context, teamID, id, status string, limit, offset int) ([]CheckView, error) {
	if _, err := s.get(ctx, teamID, id); err != nil {
		return nil, err
	}
	cs, err := s.store.MonitorChecks(ctx, teamID, id, status, limit, offset)
	if err != nil {
		return nil, err
	}
	out := make([]CheckView, 0, len(cs))
	for _, c := range cs {
		out = append(out, checkView(c))
	}
	return out, nil
}

// Check returns a check with one page of its pages; more is set when
// pages follow.
func (s *Service) Check(ctx context.Context, teamID, id, checkID, status string, skip, limit int) (CheckDetail, bool, error) {
	if _, err := s.get(ctx, teamID, id); err != nil {
		return CheckDetail{}, false, err
	}
	c, err := s.store.MonitorCheck(ctx, teamID, id, checkID)
	if errors.Is(err, store.ErrNotFound) {
		return CheckDetail{}, false, ErrCheckNotFound
	}
	if err != nil {
		return CheckDetail{}, false, err
	}
	pages, err := s.store.CheckPages(ctx, checkID, status, skip, limit+1)
	if err != nil {
		return CheckDetail{}, false, err
	}
	more := len(pages) > limit
	if more {
		pages = pages[:limit]
	}
	d := CheckDetail{CheckView: checkView(c), Pages: make([]PageView, 0, len(pages))}
	for _, p := range pages {
		d.Pages = append(d.Pages, pageView(p))
	}
	return d, more, nil
}

// Searcher runs one search; *search.Searcher implements it.
type Searcher interface {
	Search(ctx context.Context, q search.Query) ([]search.Result, error)
}

// SearchTarget are a search target's settings.
type SearchTarget struct {
	Queries        []string `json:"queries"`
	Window         string   `json:"searchWindow"`
	MaxResults     int      `json:"maxResults"`
	IncludeDomains []string `json:"includeDomains,omitempty"`
	ExcludeDomains []string `json:"excludeDomains,omitempty"`
}

// searchWindows are the durations of the searchWindow values.
var searchWindows = map[string]time.Duration{
	"5m": 5 * time.Minute, "15m": 15 * time.Minute, "1h": time.Hour, "6h": 6 * time.Hour,
	"24h": 24 * time.Hour, "7d": 7 * 24 * time.Hour,
}

// windowRange is the engine's time range covering a window (the engine
// knows hours, days and weeks; results are then filtered exactly).
func windowRange(w string) search.TimeRange {
	switch w {
	case "5m", "15m", "1h":
		return search.TimeRange{Unit: 'h', N: 1}
	case "6h":
		return search.TimeRange{Unit: 'h', N: 6}
	case "7d":
		return search.TimeRange{Unit: 'w', N: 1}
	}
	return search.TimeRange{Unit: 'd', N: 1}
}
