package scrape

import (
	"testing"
	"time"
)

func TestMediaCredits(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		d    time.Duration
		want int
	}{
		{0, 4}, {2 * time.Second, 4}, {4 * time.Minute, 4}, {4*time.Minute + time.Second, 5},
		{10 * time.Minute, 10}, {61*time.Minute - time.Millisecond, 61}, {time.Hour, 60},
	} {
		if got := MediaCredits(tt.d); got != tt.want {
			t.Errorf("MediaCredits(%v) = %d, want %d", tt.d, got, tt.want)
		}
	}
}
