package scrape

import (
	"bytes"
	"strings"
	"testing"
)

// challengeByToLower is challengePage as first written: the whole head
// lower-cased by bytes.ToLower. challengePage must agree with it.
func challengeByToLower(body []byte) bool {
	head := body[:min(len(body), 256<<10)]
	low := bytes.ToLower(head)
	for _, m := range challengeMarkers {
		if bytes.Contains(low, []byte(m)) {
			return true
		}
	}
	if len(body) > challengeSmall {
		return false
	}
	for _, w := range captchaWords {
		if bytes.Contains(low, []byte(w)) {
			return true
		}
	}
	return false
}

func challengeBodies() []string {
	big := strings.Repeat("<p>Plain text, café — naïve ÜBER straße.</p>", 600)
	return []string{"", "<html><head><TITLE>Just a moment...</TITLE></head></html>",
		"<title>Attention Required! | Cloudflare</title>", "<div id=\"PX-CAPTCHA\"></div>",
		"window._CF_chl_opt={}", "<p>Please complete the CAPTCHA</p>", "<p>Are you a ROBOT?</p>",
		big + "<title>access denied</title>", big + "captcha", "<p>Verİfy you are human</p>", "<p>\u212aelvin</p>",
		"CF-BROWSER-VERİFİCATİON", "geo.captcha-delivery.com/\u212aaptcha", "ÄÖÜ window._cf_chl_opt",
		"\xff\xfe<title>just a moment...</title>", "<title>just a moment\u2026</title>", big}
}

func TestChallengePageAsToLower(t *testing.T) {
	seen := map[bool]int{}
	for _, b := range challengeBodies() {
		want := challengeByToLower([]byte(b))
		seen[want]++
		if got := challengePage([]byte(b)); got != want {
			t.Errorf("challengePage(%.60q) = %v, bytes.ToLower says %v", b, got, want)
		}
	}
	if seen[true] < 5 || seen[false] < 3 {
		t.Fatalf("cases: %v", seen)
	}
}

func FuzzChallengePage(f *testing.F) {
	for _, b := range challengeBodies() {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := challengePage(b), challengeByToLower(b); got != want {
			t.Errorf("challengePage(%q) = %v, bytes.ToLower says %v", b, got, want)
		}
	})
}
