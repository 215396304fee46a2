package search

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// TimeRange narrows results by publication date and orders them; the zero
// value asks for neither.
type TimeRange struct {
	// Unit ('h', 'd', 'w', 'm' or 'y') and N ask for "the past N units";
	// Unit 0 = no such window.
	Unit byte
	N    int
	// From and To bound a custom range of days (UTC), both inclusive; a
	// zero one is open.
	From, To time.Time
	// SortByDate orders results newest first instead of by relevance.
	SortByDate bool
}

// maxPastUnits bounds N of a "past N units" window.
const maxPastUnits = 10000

// ParseTBS reads the reference's time-based search string: comma-separated
// qdr:h|d|w|m|y (optionally with a count, qdr:d3 = past 3 days),
// cdr:1 with cd_min:MM/DD/YYYY and/or cd_max:MM/DD/YYYY, and sbd:1 (sort
// by date). The error says what is wrong, for the API's 400.
func ParseTBS(s string) (TimeRange, error) {
	var t TimeRange
	custom := false
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, val, ok := strings.Cut(part, ":")
		if !ok {
			return TimeRange{}, fmt.Errorf("%q is not key:value", part)
		}
		switch key {
		case "qdr":
			if t.Unit != 0 {
				return TimeRange{}, fmt.Errorf("qdr is given twice")
			}
			if val == "" || !strings.ContainsRune("hdwmy", rune(val[0])) {
				return TimeRange{}, fmt.Errorf("qdr:%s: the unit must be h, d, w, m or y", val)
			}
			t.Unit, t.N = val[0], 1
			if len(val) > 1 {
				n, err := strconv.Atoi(val[1:])
				if err != nil || n < 1 || n > maxPastUnits {
					return TimeRange{}, fmt.Errorf("qdr:%s: the count must be a whole number from 1 to %d", val, maxPastUnits)
				}
				t.N = n
			}
		case "cdr":
			if val != "1" {
				return TimeRange{}, fmt.Errorf("cdr:%s: only cdr:1 (a custom date range) is known", val)
			}
			custom = true
		case "cd_min", "cd_max":
			d, err := time.Parse("1/2/2006", val)
			if err != nil {
				return TimeRange{}, fmt.Errorf("%s:%s: the date must be MM/DD/YYYY", key, val)
			}
			if key == "cd_min" {
				t.From = d
			} else {
				t.To = d
			}
		case "sbd":
			switch val {
			case "1":
				t.SortByDate = true
			case "0":
			default:
				return TimeRange{}, fmt.Errorf("sbd:%s: sbd is 0 or 1", val)
			}
		default:
			return TimeRange{}, fmt.Errorf("%q is not supported: use qdr:h|d|w|m|y, cdr:1,cd_min:MM/DD/YYYY,cd_max:MM/DD/YYYY or sbd:1", part)
		}
	}
	hasDates := !t.From.IsZero() || !t.To.IsZero()
	switch {
	case custom && !hasDates:
		return TimeRange{}, fmt.Errorf("cdr:1 needs cd_min and/or cd_max")
	case hasDates && !custom:
		return TimeRange{}, fmt.Errorf("cd_min and cd_max need cdr:1")
	case custom && t.Unit != 0:
		return TimeRange{}, fmt.Errorf("qdr and cdr cannot be combined")
	case !t.From.IsZero() && !t.To.IsZero() && t.To.Before(t.From):
		return TimeRange{}, fmt.Errorf("cd_max is before cd_min")
	}
	return t, nil
}

// window is the time span results must be published in, at now; a zero
// bound is open.
func (t TimeRange) window(now time.Time) (from, to time.Time) {
	switch t.Unit {
	case 'h':
		from = now.Add(-time.Duration(t.N) * time.Hour)
	case 'd':
		from = now.AddDate(0, 0, -t.N)
	case 'w':
		from = now.AddDate(0, 0, -7*t.N)
	case 'm':
		from = now.AddDate(0, -t.N, 0)
	case 'y':
		from = now.AddDate(-t.N, 0, 0)
	}
	if !t.From.IsZero() {
		from = t.From
	}
	if !t.To.IsZero() {
		to = t.To.AddDate(0, 0, 1) // cd_max is inclusive
	}
	return from, to
}

// EngineRange is the coarsest time range engines such as SearXNG know
// ("day", "week", "month", "year") that covers the window at now, or ""
// when there is no window or it reaches back more than a year. The exact
// window is applied to the results' dates afterwards.
func (t TimeRange) EngineRange(now time.Time) string {
	from, _ := t.window(now)
	if from.IsZero() {
		return ""
	}
	switch span := now.Sub(from); {
	case span <= 24*time.Hour:
		return "day"
	case span <= 7*24*time.Hour:
		return "week"
	case !from.Before(now.AddDate(0, -1, 0)):
		return "month"
	case !from.Before(now.AddDate(-1, 0, 0)):
		return "year"
	}
	return ""
}
