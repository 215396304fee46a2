package billing

import (
	"testing"
	"time"
)

func TestScrapeCost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   ScrapeCostInput
		want int64
	}{
		{"plain scrape", ScrapeCostInput{}, 1},
		{"json format replaces the base", ScrapeCostInput{JSON: true}, 5},
		{"deterministic json first time", ScrapeCostInput{DeterministicJSON: true}, 10},
		{"deterministic json reused", ScrapeCostInput{DeterministicJSON: true, DeterministicJSONReused: true}, 3},
		{"one question", ScrapeCostInput{Questions: 1}, 5},
		{"question and highlights", ScrapeCostInput{Questions: 1, Highlights: 1}, 9},
		{"json and question", ScrapeCostInput{JSON: true, Questions: 1}, 9},
		{"audio and video", ScrapeCostInput{Audio: true, Video: true}, 9},
		{"pdf of one page", ScrapeCostInput{PDFPages: 1}, 1},
		{"pdf of 12 pages", ScrapeCostInput{PDFPages: 12}, 12},
		{"pdf base64 with parsers []", ScrapeCostInput{PDFPages: 0}, 1},
		{"pdf of 3 pages with json", ScrapeCostInput{PDFPages: 3, JSON: true}, 7},
		{"redactPII", ScrapeCostInput{RedactPII: true}, 5},
		{"redactPII on a 3 page pdf", ScrapeCostInput{RedactPII: true, PDFPages: 3}, 3 + 4 + 8},
		{"zero data retention", ScrapeCostInput{ZDRSurcharge: CostZeroDataRetention}, 2},
		{"threat scans", ScrapeCostInput{ThreatScans: 2}, 5},
		{"lockdown hit", ScrapeCostInput{Lockdown: true, CacheHit: true}, 5},
		{"lockdown miss", ScrapeCostInput{Lockdown: true}, 1},
		{"lockdown hit is flat", ScrapeCostInput{Lockdown: true, CacheHit: true, JSON: true, PDFPages: 9, ZDRSurcharge: 1}, 5},
		{"lockdown miss is flat", ScrapeCostInput{Lockdown: true, Questions: 2, ZDRSurcharge: 1}, 1},
		{"non-lockdown cache hit costs as fresh", ScrapeCostInput{CacheHit: true, JSON: true}, 5},
		{"negative counts ignored", ScrapeCostInput{Questions: -3, Highlights: -1, ThreatScans: -2, PDFPages: -5, ZDRSurcharge: -1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ScrapeCost(tt.in); got != tt.want {
				t.Errorf("ScrapeCost(%+v) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestSearchCost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		results int
		zdr     bool
		want    int64
	}{
		{0, false, 0},
		{1, false, 2},
		{10, false, 2},
		{11, false, 4},
		{100, false, 20},
		{5, true, 10},
		{25, true, 30},
	}
	for _, tt := range tests {
		if got := SearchCost(tt.results, tt.zdr); got != tt.want {
			t.Errorf("SearchCost(%d, %v) = %d, want %d", tt.results, tt.zdr, got, tt.want)
		}
	}
}

func TestExtractCost(t *testing.T) {
	t.Parallel()
	for tokens, want := range map[int64]int64{0: 0, 1: 1, 15: 1, 16: 2, 1500: 100, -4: 0} {
		if got := ExtractCost(tokens); got != want {
			t.Errorf("ExtractCost(%d) = %d, want %d", tokens, got, want)
		}
	}
}

func TestInteractCost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d      time.Duration
		prompt bool
		want   int64
	}{
		{0, false, 2},
		{30 * time.Second, false, 2},
		{time.Minute, false, 2},
		{90 * time.Second, false, 3},
		{time.Hour, false, 120},
		{0, true, 7},
		{time.Hour, true, 420},
		{2 * time.Minute, true, 14},
	}
	for _, tt := range tests {
		if got := InteractCost(tt.d, tt.prompt); got != tt.want {
			t.Errorf("InteractCost(%v, %v) = %d, want %d", tt.d, tt.prompt, got, tt.want)
		}
	}
}

func TestMinimumForCount(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]int64{-1: 1, 0: 1, 1: 1, 100: 100} {
		if got := MinimumForCount(n); got != want {
			t.Errorf("MinimumForCount(%d) = %d, want %d", n, got, want)
		}
	}
}
