package limits

import "testing"

func TestRatePerMinute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		class      string
		multiplier int
		want       int
	}{
		{ClassScrape, 1, 10},
		{ClassScrape, 5, 50},
		{ClassMap, 1, 10},
		{ClassSearch, 2, 20},
		{ClassCrawl, 1, 2},
		{ClassAgent, 3, 6},
		{ClassInteractCreate, 1, 2},
		{ClassInteractExecute, 1, 10},
		{ClassStatus, 1, 500},
		{ClassScrape, 0, 0},
		{ClassScrape, -1, 0},
		{"unknown", 4, 0},
	}
	for _, tt := range tests {
		if got := RatePerMinute(tt.class, tt.multiplier); got != tt.want {
			t.Errorf("RatePerMinute(%q, %d) = %d, want %d", tt.class, tt.multiplier, got, tt.want)
		}
	}
}
