package httpapi

import (
	"net/http"
	"strings"
	"testing"
)

// A header the client could not send is a 400 naming it, decided before
// any fetch: it used to reach the fetch and come back as a site error
// quoting net/http ("invalid header field value for ...").
func TestBadHeadersAre400sNamingThem(t *testing.T) {
	sc := &fakeScraper{}
	s, _ := setup(t, sc)
	rec, got := do(t, s, http.MethodPost, "/v2/scrape", goodKey, with(`"headers":{"X-Ok":"1","X-A":"a\r\nInjected: 1"}`))
	body := rec.Body.String()
	if rec.Code != http.StatusBadRequest || got["code"] != "BAD_REQUEST" ||
		!strings.Contains(body, `"path":["headers","X-A"],"message":"`+msgHeaderValue+`"`) || strings.Contains(body, "net/http") {
		t.Fatalf("status %d body %s", rec.Code, body)
	}
	if len(sc.got) != 0 {
		t.Fatal("the scraper was called")
	}
}
