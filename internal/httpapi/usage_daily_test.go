package httpapi

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// TestUsagePerDay: period=day on the historical routes reports today's
// credits (and tokens) as one UTC day, and a bad period or days is a 400
// naming the parameter.
func TestUsagePerDay(t *testing.T) {
	t.Parallel()
	b := setupBilled(t, LimitDefaults{})
	if _, err := b.st.SetCredits(context.Background(), b.team.ID, 10); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if rec, got := b.scrape(t); rec.Code != 200 {
			t.Fatalf("scrape: %d %v", rec.Code, got)
		}
	}
	today := time.Now().UTC().Truncate(24 * time.Hour)
	for _, tt := range []struct{ path, key string }{
		{"/v2/team/credit-usage/historical?period=day", "creditsUsed"},
		{"/v2/team/token-usage/historical?period=day&days=7", "tokensUsed"},
	} {
		rec, got := do(t, b.srv, http.MethodGet, tt.path, b.key, "")
		periods, _ := got["periods"].([]any)
		if rec.Code != 200 || len(periods) != 1 {
			t.Fatalf("%s: %d %v", tt.path, rec.Code, got)
		}
		p := periods[0].(map[string]any)
		want := map[string]any{"startDate": today.Format(time.RFC3339), "endDate": today.AddDate(0, 0, 1).Format(time.RFC3339), tt.key: float64(3)}
		if tt.key == "tokensUsed" {
			want[tt.key] = float64(3 * tokensPerCredit)
		}
		for k, v := range want {
			if p[k] != v {
				t.Errorf("%s: %s = %v, want %v (%v)", tt.path, k, p[k], v, p)
			}
		}
	}
	for _, tt := range []struct{ query, field string }{
		{"period=week", "period"},
		{"period=day&days=0", "days"},
		{"period=day&days=1000", "days"},
		{"period=day&days=x", "days"},
	} {
		rec, got := do(t, b.srv, http.MethodGet, "/v2/team/credit-usage/historical?"+tt.query, b.key, "")
		details, _ := got["details"].([]any)
		if rec.Code != 400 || len(details) != 1 || details[0].(map[string]any)["path"].([]any)[0] != tt.field {
			t.Errorf("%s: %d %v, want 400 naming %s", tt.query, rec.Code, got, tt.field)
		}
	}
}
