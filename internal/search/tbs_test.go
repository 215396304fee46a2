package search

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseTBS(t *testing.T) {
	t.Parallel()
	day := func(m time.Month, d int) time.Time { return time.Date(2026, m, d, 0, 0, 0, 0, time.UTC) }
	for _, tc := range []struct {
		in   string
		want TimeRange
		err  string
	}{
		{"", TimeRange{}, ""},
		{"qdr:h", TimeRange{Unit: 'h', N: 1}, ""},
		{"qdr:d3,sbd:1", TimeRange{Unit: 'd', N: 3, SortByDate: true}, ""},
		{"cdr:1,cd_min:01/02/2026,cd_max:1/31/2026", TimeRange{From: day(1, 2), To: day(1, 31)}, ""},
		{"cdr:1,cd_max:03/01/2026", TimeRange{To: day(3, 1)}, ""},
		{"sbd:0", TimeRange{}, ""},
		{"qdr:x", TimeRange{}, "unit must be h, d, w, m or y"},
		{"qdr:d0", TimeRange{}, "count must be"},
		{"qdr:h,qdr:d", TimeRange{}, "twice"},
		{"cdr:1", TimeRange{}, "needs cd_min"},
		{"cd_min:01/02/2026", TimeRange{}, "need cdr:1"},
		{"cdr:1,cd_min:2026-01-02", TimeRange{}, "MM/DD/YYYY"},
		{"cdr:1,cd_min:02/01/2026,cd_max:01/01/2026", TimeRange{}, "before cd_min"},
		{"qdr:d,cdr:1,cd_min:01/01/2026", TimeRange{}, "cannot be combined"},
		{"li:1", TimeRange{}, "not supported"},
		{"qdr", TimeRange{}, "not key:value"},
	} {
		got, err := ParseTBS(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: err %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q (-want +got)\n%s", tc.in, diff)
		}
	}
}

func TestEngineRange(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]string{
		"":                        "",
		"sbd:1":                   "",
		"qdr:h":                   "day",
		"qdr:d":                   "day",
		"qdr:d2":                  "week",
		"qdr:w":                   "week",
		"qdr:m":                   "month",
		"qdr:y":                   "year",
		"qdr:y2":                  "",
		"cdr:1,cd_min:11/20/2026": "week",
		"cdr:1,cd_min:11/01/2026": "month",
		"cdr:1,cd_max:11/01/2026": "",
		"cdr:1,cd_min:01/01/2020": "",
		"cdr:1,cd_min:03/01/2026,cd_max:04/01/2026": "year",
	} {
		tr, err := ParseTBS(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.EngineRange(now); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
}

func TestNormalizeURL(t *testing.T) {
	t.Parallel()
	same := [][]string{
		{"https://Example.com/a/", "http://www.example.com/a", "https://example.com:443/a#frag", "https://example.com/a?utm_source=x"},
		{"https://example.com/?b=2&a=1", "https://example.com?a=1&b=2"},
	}
	for _, group := range same {
		for _, u := range group[1:] {
			if NormalizeURL(u) != NormalizeURL(group[0]) || NormalizeURL(u) == "" {
				t.Errorf("%q -> %q, %q -> %q: want the same key", u, NormalizeURL(u), group[0], NormalizeURL(group[0]))
			}
		}
	}
	for _, pair := range [][2]string{
		{"https://example.com/a", "https://example.com/b"},
		{"https://example.com/a?id=1", "https://example.com/a?id=2"},
		{"https://example.com:8443/a", "https://example.com/a"},
		{"https://sub.example.com/", "https://example.com/"},
	} {
		if NormalizeURL(pair[0]) == NormalizeURL(pair[1]) {
			t.Errorf("%q and %q share a key", pair[0], pair[1])
		}
	}
	for _, bad := range []string{"", "ftp://x.com/", "/relative", "mailto:a@b.c"} {
		if k := NormalizeURL(bad); k != "" {
			t.Errorf("%q -> %q, want empty", bad, k)
		}
	}
}
