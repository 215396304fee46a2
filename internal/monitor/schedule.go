// Package monitor runs scheduled change checks: schedules (5-field cron or
// the reference's text forms, in an IANA time zone), the scheduler that
// starts each due check once however many replicas run it, the check
// worker on the durable queue (scrape every target URL, compare each page
// with the monitor's previous check through internal/changetrack, charge
// credits, send the monitor.page and monitor.check.completed webhooks) and
// the JSON shapes of monitors and checks.
package monitor

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // IANA zones even on hosts without a zoneinfo database

	"github.com/robfig/cron/v3"
)

// MinInterval is the shortest time allowed between two runs of a schedule.
const MinInterval = 5 * time.Minute

// Schedule is a parsed, validated schedule: its normalized cron expression
// and time zone.
type Schedule struct {
	Cron     string
	Timezone string
	// spec runs on wall-clock time, written as UTC: Next converts to and
	// from the zone, so a run whose local time does not exist on the
	// spring-forward day happens at the same offset after the gap instead
	// of being skipped, and a repeated local hour never runs twice.
	spec *cron.SpecSchedule
	loc  *time.Location
}

// cronParser accepts the standard 5 fields (minute, hour, day of month,
// month, day of week) and the @ descriptors.
var cronParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ScheduleError is a schedule that cannot be used; Field is "cron",
// "text" or "timezone".
type ScheduleError struct {
	Field  string
	Reason string
}

func (e *ScheduleError) Error() string { return e.Field + ": " + e.Reason }

// ParseSchedule validates a schedule given as a cron expression or as text
// (exactly one of them) in timezone ("" is UTC).
func ParseSchedule(cronExpr, text, timezone string) (Schedule, error) {
	if timezone == "" {
		timezone = "UTC"
	}
	loc, err := loadZone(timezone)
	if err != nil {
		return Schedule{}, &ScheduleError{"timezone", err.Error()}
	}
	field := "cron"
	switch {
	case cronExpr != "" && text != "":
		return Schedule{}, &ScheduleError{"cron", "give exactly one of cron or text"}
	case cronExpr == "" && text == "":
		return Schedule{}, &ScheduleError{"cron", "give exactly one of cron or text"}
	case text != "":
		field = "text"
		if cronExpr, err = TextToCron(text); err != nil {
			return Schedule{}, &ScheduleError{"text", err.Error()}
		}
	}
	cronExpr = strings.Join(strings.Fields(cronExpr), " ")
	if strings.HasPrefix(cronExpr, "@") {
		return Schedule{}, &ScheduleError{field, "must be a 5-field cron expression (minute hour day-of-month month day-of-week)"}
	}
	if n := len(strings.Fields(cronExpr)); n != 5 {
		return Schedule{}, &ScheduleError{field, fmt.Sprintf("must have 5 fields (minute hour day-of-month month day-of-week), not %d", n)}
	}
	parsed, err := cronParser.Parse(cronExpr)
	if err != nil {
		return Schedule{}, &ScheduleError{field, "invalid cron expression: " + err.Error()}
	}
	spec, ok := parsed.(*cron.SpecSchedule)
	if !ok {
		return Schedule{}, &ScheduleError{field, "unsupported cron expression"}
	}
	spec.Location = time.UTC
	s := Schedule{Cron: cronExpr, Timezone: timezone, spec: spec, loc: loc}
	if err := s.checkInterval(); err != nil {
		return Schedule{}, &ScheduleError{field, err.Error()}
	}
	return s, nil
}

// loadZone accepts IANA zone names only ("Local" depends on the host).
func loadZone(name string) (*time.Location, error) {
	if name == "Local" || strings.TrimSpace(name) != name {
		return nil, fmt.Errorf("unknown IANA time zone %q", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown IANA time zone %q", name)
	}
	return loc, nil
}

// intervalProbe is how many consecutive runs checkInterval compares: more
// than a year of daily runs, a week of 5-minute runs.
const intervalProbe = 2100

// probeFrom is where checkInterval starts: a fixed instant, so the same
// expression is always judged the same way.
var probeFrom = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// checkInterval rejects schedules that never run or run twice within
// MinInterval.
func (s Schedule) checkInterval() error {
	prev := s.Next(probeFrom)
	if prev.IsZero() {
		return errors.New("the schedule never runs")
	}
	for range intervalProbe {
		next := s.Next(prev)
		if next.IsZero() {
			return nil
		}
		if next.Sub(prev) < MinInterval {
			return fmt.Errorf("runs must be at least %d minutes apart (this schedule runs at %s and again at %s)",
				int(MinInterval/time.Minute), prev.UTC().Format(time.RFC3339), next.UTC().Format(time.RFC3339))
		}
		prev = next
	}
	return nil
}

// Next returns the first run strictly after t, or the zero time if none.
func (s Schedule) Next(t time.Time) time.Time {
	if s.spec == nil {
		return time.Time{}
	}
	l := t.In(s.loc)
	wall := time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
	// A wall time in a spring-forward gap maps to the instant after it,
	// which may equal or precede t: take the following wall time then.
	for range 4 {
		nw := s.spec.Next(wall)
		if nw.IsZero() {
			return nw
		}
		abs := time.Date(nw.Year(), nw.Month(), nw.Day(), nw.Hour(), nw.Minute(), 0, 0, s.loc)
		if l := abs.In(s.loc); l.Hour() != nw.Hour() || l.Minute() != nw.Minute() {
			// In the gap: read the wall time with the offset in force
			// before it, which lands as far after the gap.
			_, off := abs.Add(-24 * time.Hour).Zone()
			abs = nw.Add(-time.Duration(off) * time.Second)
		}
		if abs.After(t) {
			return abs.UTC()
		}
		wall = nw
	}
	return time.Time{}
}

// RunsBetween counts the runs in (from, to], stopping at max.
func (s Schedule) RunsBetween(from, to time.Time, max int) int {
	n := 0
	for t := s.Next(from); !t.IsZero() && !t.After(to) && n < max; t = s.Next(t) {
		n++
	}
	return n
}

var (
	reEveryMinutes = regexp.MustCompile(`^every (\d+) minutes?(?: starting at :?(\d{1,2}))?$`)
	reEveryHours   = regexp.MustCompile(`^every (\d+) hours?$`)
	reDailyAt      = regexp.MustCompile(`^(?:daily|every day) at (\d{1,2})(?::(\d{2}))? ?(am|pm)?$`)
	reWeeklyAt     = regexp.MustCompile(`^weekly(?: on (sunday|monday|tuesday|wednesday|thursday|friday|saturday))?(?: at (\d{1,2})(?::(\d{2}))? ?(am|pm)?)?$`)
)

var weekdays = map[string]int{"sunday": 0, "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6}

// TextToCron turns the reference's text schedules into cron: "every 30
// minutes", "every 15 minutes starting at :07", "hourly", "every hour",
// "every 2 hours", "daily", "daily at 9:00" / "9am" / "5:30 PM",
// "weekly", "weekly on monday at 8am". Case and extra spaces do not
// matter.
func TextToCron(text string) (string, error) {
	t := strings.ToLower(strings.Join(strings.Fields(text), " "))
	switch t {
	case "hourly", "every hour":
		return "0 * * * *", nil
	case "daily", "every day":
		return "0 0 * * *", nil
	case "weekly", "every week":
		return "0 0 * * 0", nil
	}
	if m := reEveryMinutes.FindStringSubmatch(t); m != nil {
		n, _ := strconv.Atoi(m[1])
		if n < 1 || n > 59 {
			return "", fmt.Errorf("%q: minutes must be 5 to 59 (use hours beyond that)", text)
		}
		if m[2] == "" {
			return fmt.Sprintf("*/%d * * * *", n), nil
		}
		start, _ := strconv.Atoi(m[2])
		if start > 59 {
			return "", fmt.Errorf("%q: the starting minute must be 0 to 59", text)
		}
		return fmt.Sprintf("%d-59/%d * * * *", start, n), nil
	}
	if m := reEveryHours.FindStringSubmatch(t); m != nil {
		n, _ := strconv.Atoi(m[1])
		if n < 1 || n > 23 {
			return "", fmt.Errorf("%q: hours must be 1 to 23", text)
		}
		if n == 1 {
			return "0 * * * *", nil
		}
		return fmt.Sprintf("0 */%d * * *", n), nil
	}
	if m := reDailyAt.FindStringSubmatch(t); m != nil {
		h, min, err := clock(m[1], m[2], m[3])
		if err != nil {
			return "", fmt.Errorf("%q: %w", text, err)
		}
		return fmt.Sprintf("%d %d * * *", min, h), nil
	}
	if m := reWeeklyAt.FindStringSubmatch(t); m != nil {
		day := weekdays[m[1]] // "" (no day) is Sunday
		h, min := 0, 0
		if m[2] != "" {
			var err error
			if h, min, err = clock(m[2], m[3], m[4]); err != nil {
				return "", fmt.Errorf("%q: %w", text, err)
			}
		}
		return fmt.Sprintf("%d %d * * %d", min, h, day), nil
	}
	return "", fmt.Errorf("%q is not a schedule this server understands: use a 5-field cron expression or one of "+
		`"every 30 minutes", "every 15 minutes starting at :07", "hourly", "every 2 hours", "daily", "daily at 9:00", "daily at 9am", "daily at 5:30 PM", "weekly"`, text)
}

// clock reads an hour, optional minutes and optional am/pm.
func clock(hs, ms, ampm string) (h, m int, err error) {
	h, _ = strconv.Atoi(hs)
	if ms != "" {
		m, _ = strconv.Atoi(ms)
	}
	switch ampm {
	case "am", "pm":
		if h < 1 || h > 12 {
			return 0, 0, errors.New("the hour must be 1 to 12 with am or pm")
		}
		h %= 12
		if ampm == "pm" {
			h += 12
		}
	default:
		if h > 23 {
			return 0, 0, errors.New("the hour must be 0 to 23")
		}
	}
	if m > 59 {
		return 0, 0, errors.New("the minutes must be 0 to 59")
	}
	return h, m, nil
}
