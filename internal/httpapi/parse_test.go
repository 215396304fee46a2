package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/scrape"
)

// multipartBody builds a parse upload; an empty name leaves the part out.
func multipartBody(t *testing.T, filename, content, options string) (string, *bytes.Buffer) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	if filename != "" {
		fw, err := mw.CreateFormFile("file", filename)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write([]byte(content))
	}
	if options != "" {
		mw.WriteField("options", options)
	}
	mw.Close()
	return mw.FormDataContentType(), &b
}

func TestParseUpload(t *testing.T) {
	t.Parallel()
	engine := scrape.New(scrape.Config{Log: slog.New(slog.DiscardHandler)})
	s := New(Deps{Scraper: engine, Parser: engine, Auth: fakeAuth{}, Log: slog.New(slog.DiscardHandler)})
	s.SetReady(true)
	post := func(filename, content, options string) (int, map[string]any) {
		ct, body := multipartBody(t, filename, content, options)
		req := httptest.NewRequest(http.MethodPost, "/v2/parse", body)
		req.Header.Set("Content-Type", ct)
		req.Header.Set("Authorization", "Bearer "+goodKey)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		var m map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &m); err != nil {
			t.Fatalf("not JSON: %s", rec.Body)
		}
		return rec.Code, m
	}
	markdownOf := func(m map[string]any) string {
		d, _ := m["data"].(map[string]any)
		s, _ := d["markdown"].(string)
		return s
	}

	code, got := post("tides.csv", "place,high\nDover,06:12\n\"St Ives, Cornwall\",07:01\n", "")
	if code != 200 || !strings.Contains(markdownOf(got), "| Dover | 06:12 |") || !strings.Contains(markdownOf(got), "St Ives, Cornwall") {
		t.Errorf("csv: %d %v", code, got)
	}
	code, got = post("notes.md", "# Notes\n\n- one\n", `{"formats":["markdown"]}`)
	if code != 200 || markdownOf(got) != "# Notes\n\n- one\n" {
		t.Errorf("markdown: %d %v", code, got)
	}
	code, got = post("page.html", "<html><body><nav>Menu</nav><article><h1>Title</h1><p>Body text of the page.</p></article></body></html>", `{"formats":["markdown","html"],"onlyMainContent":true}`)
	if code != 200 || !strings.Contains(markdownOf(got), "# Title") || strings.Contains(markdownOf(got), "Menu") {
		t.Errorf("html: %d %v", code, got)
	}

	// An upload has no address: relative links and images stay relative.
	code, got = post("rel.html", `<html><head><link rel="icon" href="/favicon.ico"></head><body><main><h1>Guide</h1><p>Read the <a href="/docs/start">start page</a>, the <a href="next.html#part">next part</a> and <a href="https://example.com/abs">the site</a>.</p><p><img src="img/figure.png" alt="Figure"></p></main></body></html>`, `{"formats":["markdown","html","links"]}`)
	md := markdownOf(got)
	for _, want := range []string{"](/docs/start)", "](next.html#part)", "](https://example.com/abs)", "](img/figure.png)"} {
		if !strings.Contains(md, want) {
			t.Errorf("relative links: %q not in %q", want, md)
		}
	}
	if code != 200 || strings.Contains(fmt.Sprint(got), "file:") {
		t.Errorf("relative links: %d %v", code, got)
	}
	if d, _ := got["data"].(map[string]any); fmt.Sprint(d["links"]) != "[https://example.com/abs]" {
		t.Errorf("links of an upload: %v", d["links"])
	}

	internalPrefix := regexp.MustCompile(`\b(scrape|docconv|pdfparse|fetch|httpapi|htmlclean|markdown): `)
	for _, tc := range []struct {
		name, file, content, options string
		status                       int
		code                         string
	}{
		{"missing file", "", "", `{}`, 400, "BAD_REQUEST"},
		{"unsupported type", "deck.pptx", "PK\x03\x04junk", "", 400, "UNSUPPORTED_FILE_TYPE"},
		{"corrupt docx", "report.docx", "PK\x03\x04junk", "", 500, "SCRAPE_UNSUPPORTED_FILE_ERROR"},
		{"actions rejected", "a.txt", "x", `{"actions":[{"type":"wait","milliseconds":5}]}`, 400, "PARSE_UNSUPPORTED_OPTIONS"},
		{"screenshot rejected", "a.txt", "x", `{"formats":["screenshot"]}`, 400, "PARSE_UNSUPPORTED_OPTIONS"},
		{"stealth proxy rejected", "a.txt", "x", `{"proxy":"enhanced"}`, 400, "PARSE_UNSUPPORTED_OPTIONS"},
		{"rawBase64 rejected", "a.txt", "x", `{"formats":["rawBase64"]}`, 400, "BAD_REQUEST"},
		{"options not json", "a.txt", "x", `{nope`, 400, "BAD_REQUEST"},
		{"unknown option", "a.txt", "x", `{"colour":"red"}`, 400, "BAD_REQUEST"},
		{"timeout bound", "a.txt", "x", `{"timeout":10}`, 400, "BAD_REQUEST"},
	} {
		code, got := post(tc.file, tc.content, tc.options)
		if code != tc.status || got["code"] != tc.code || got["success"] != false {
			t.Errorf("%s: %d %v", tc.name, code, got)
		}
		if msg, _ := got["error"].(string); msg == "" || internalPrefix.MatchString(msg) {
			t.Errorf("%s: message %q names an internal package", tc.name, msg)
		}
	}

	req := httptest.NewRequest(http.MethodPost, "/v2/parse", strings.NewReader(`{"uploadRef":"x"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+goodKey)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusNotImplemented {
		t.Errorf("uploadRef: %d %s", rec.Code, rec.Body)
	}
}
