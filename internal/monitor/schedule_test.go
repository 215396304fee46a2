package monitor

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestTextToCron(t *testing.T) {
	for text, want := range map[string]string{
		"every 30 minutes":                 "*/30 * * * *",
		"Every 5 Minutes":                  "*/5 * * * *",
		"every 15 minutes starting at :07": "7-59/15 * * * *",
		"hourly":                           "0 * * * *",
		"every hour":                       "0 * * * *",
		"every 2 hours":                    "0 */2 * * *",
		"daily":                            "0 0 * * *",
		"daily at 9:00":                    "0 9 * * *",
		"daily at 9am":                     "0 9 * * *",
		"daily at 5:30 PM":                 "30 17 * * *",
		"daily at 12am":                    "0 0 * * *",
		"daily at 12:15pm":                 "15 12 * * *",
		"weekly":                           "0 0 * * 0",
		"weekly on monday at 8am":          "0 8 * * 1",
	} {
		got, err := TextToCron(text)
		if err != nil || got != want {
			t.Errorf("TextToCron(%q) = %q, %v; want %q", text, got, err, want)
		}
	}
	for _, bad := range []string{"", "sometimes", "daily at 25:00", "daily at 13pm", "every 0 minutes", "every 90 minutes", "every 30 hours", "daily at 9:75"} {
		if got, err := TextToCron(bad); err == nil {
			t.Errorf("TextToCron(%q) = %q, want an error", bad, got)
		}
	}
}

func TestParseSchedule(t *testing.T) {
	s, err := ParseSchedule("", "every 15 minutes starting at :07", "")
	if err != nil || s.Cron != "7-59/15 * * * *" || s.Timezone != "UTC" {
		t.Fatalf("ParseSchedule = %+v, %v", s, err)
	}
	from := time.Date(2026, 4, 1, 10, 0, 0, 0, time.UTC)
	want := []string{"10:07", "10:22", "10:37", "10:52", "11:07"}
	at := from
	for _, w := range want {
		at = s.Next(at)
		if got := at.Format("15:04"); got != w {
			t.Errorf("run %s, want %s", got, w)
		}
	}
	if s, err := ParseSchedule("  */10   *  * * * ", "", "Asia/Tokyo"); err != nil || s.Cron != "*/10 * * * *" {
		t.Errorf("spaces: %+v, %v", s, err)
	}

	for _, tc := range []struct {
		cron, text, tz, field, reason string
	}{
		{"* * * * *", "", "", "cron", "at least 5 minutes apart"},
		{"*/4 * * * *", "", "", "cron", "at least 5 minutes apart"},
		{"0,3 * * * *", "", "", "cron", "at least 5 minutes apart"},
		{"*/7 * * * *", "", "", "cron", "at least 5 minutes apart"}, // 56 -> 0 is 4 minutes
		{"", "every 2 minutes", "", "text", "at least 5 minutes apart"},
		{"0 9 * *", "", "", "cron", "5 fields"},
		{"0 9 * * * *", "", "", "cron", "5 fields"},
		{"@hourly", "", "", "cron", "5-field"},
		{"61 * * * *", "", "", "cron", "invalid cron"},
		{"0 0 30 2 *", "", "", "cron", "never runs"},
		{"0 9 * * *", "daily", "", "cron", "exactly one"},
		{"", "", "", "cron", "exactly one"},
		{"0 9 * * *", "", "Mars/Olympus", "timezone", "IANA"},
		{"0 9 * * *", "", "Local", "timezone", "IANA"},
	} {
		_, err := ParseSchedule(tc.cron, tc.text, tc.tz)
		var se *ScheduleError
		if !errors.As(err, &se) || se.Field != tc.field || !strings.Contains(se.Reason, tc.reason) {
			t.Errorf("ParseSchedule(%q, %q, %q) = %v; want %s error containing %q", tc.cron, tc.text, tc.tz, err, tc.field, tc.reason)
		}
	}
}

// TestScheduleDST: a daily run keeps its wall-clock time across both
// daylight saving changes, and an hourly one neither repeats nor skips an
// absolute hour.
func TestScheduleDST(t *testing.T) {
	paris, _ := time.LoadLocation("Europe/Paris")
	s, err := ParseSchedule("", "daily at 9:00", "Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	// Summer time starts on 2026-03-29 in the EU.
	at := time.Date(2026, 3, 27, 12, 0, 0, 0, time.UTC)
	for _, want := range []string{"2026-03-28T08:00:00Z", "2026-03-29T07:00:00Z", "2026-03-30T07:00:00Z"} {
		at = s.Next(at)
		if got := at.Format(time.RFC3339); got != want {
			t.Errorf("daily 9:00 Paris: got %s, want %s", got, want)
		}
		if h := at.In(paris).Hour(); h != 9 {
			t.Errorf("run at %d:00 Paris time, want 9:00", h)
		}
	}
	// Back to winter time on 2026-10-25.
	at = time.Date(2026, 10, 24, 12, 0, 0, 0, time.UTC)
	for _, want := range []string{"2026-10-25T08:00:00Z", "2026-10-26T08:00:00Z"} {
		at = s.Next(at)
		if got := at.Format(time.RFC3339); got != want {
			t.Errorf("daily 9:00 Paris in October: got %s, want %s", got, want)
		}
	}

	// 02:30 does not exist in New York on 2026-03-08: that day's run is
	// at 03:30 EDT, not skipped.
	ny, err := ParseSchedule("30 2 * * *", "", "America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	got := ny.Next(time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC)) // 07:00 EST, Mar 7
	if want := "2026-03-08T07:30:00Z"; got.Format(time.RFC3339) != want {
		t.Errorf("02:30 New York on Mar 7: next %s, want %s", got.Format(time.RFC3339), want)
	}
	next := ny.Next(got)
	if next.Sub(got) < 20*time.Hour {
		t.Errorf("02:30 New York: run at %s then %s, too close", got, next)
	}

	hourly, err := ParseSchedule("", "hourly", "America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	// Across the November fall-back (2026-11-01): runs are an hour apart
	// in absolute time, never the same instant twice.
	at = time.Date(2026, 11, 1, 3, 30, 0, 0, time.UTC)
	prev := hourly.Next(at)
	for range 6 {
		n := hourly.Next(prev)
		if d := n.Sub(prev); d <= 0 || d > 2*time.Hour {
			t.Errorf("hourly across fall-back: %s then %s", prev, n)
		}
		prev = n
	}
}

func TestRunsBetween(t *testing.T) {
	s, _ := ParseSchedule("", "every 30 minutes", "UTC")
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if n := s.RunsBetween(from, from.Add(24*time.Hour), 10000); n != 48 {
		t.Errorf("RunsBetween a day = %d, want 48", n)
	}
	if n := s.RunsBetween(from, from.Add(24*time.Hour), 10); n != 10 {
		t.Errorf("RunsBetween capped = %d, want 10", n)
	}
}

// TestEmptySummaryIsAZeroSummary: the summary written for a check that
// ended before it counted a page is Summary{}'s encoding (a field added to
// Summary must appear there too).
func TestEmptySummaryIsAZeroSummary(t *testing.T) {
	want, err := json.Marshal(Summary{})
	if err != nil {
		t.Fatal(err)
	}
	if string(emptySummary) != string(want) {
		t.Errorf("emptySummary %s, want %s", emptySummary, want)
	}
}
