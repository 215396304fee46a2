package e2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/testenv"
)

// Sitemap amplification (issue 12): a robots.txt naming the same large
// gzipped sitemap many times under different URLs.
const (
	bombCopies = 100   // Sitemap lines in robots.txt
	bombURLs   = 50000 // URLs in the sitemap, the protocol's maximum
	bombEntry  = 1000  // bytes of each <url> entry: 50 MB decompressed
	maxPeakRSS = 300 << 20
)

// bombSite serves a start page titled "Bomb", a robots.txt with bombCopies
// Sitemap lines (/s.xml.gz?copy=i) and the sitemap itself: bombURLs
// entries of bombEntry bytes each, gzipped (about 0.2 MB). With longURLs
// each entry is one long URL (/p/00042/aaa...) and every copy is the same
// file; else each entry is a short URL (/p/00042) and a long element, and
// the copies differ by a comment (so that each must be parsed). Every
// other path answers a small HTML page. sitemapHits counts the sitemap
// requests.
func bombSite(t *testing.T, longURLs bool) (srv *httptest.Server, urlLen int, sitemapHits func() int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	head := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n"
	var raw bytes.Buffer
	for i := range bombURLs {
		loc := fmt.Sprintf("%s/p/%05d", base, i)
		if longURLs {
			loc += "/"
			loc += strings.Repeat("a", bombEntry-len("<url><loc></loc></url>\n")-len(loc))
			fmt.Fprintf(&raw, "<url><loc>%s</loc></url>\n", loc)
		} else {
			pad := strings.Repeat("a", bombEntry-len("<url><loc></loc><note></note></url>\n")-len(loc))
			fmt.Fprintf(&raw, "<url><loc>%s</loc><note>%s</note></url>\n", loc, pad)
		}
		urlLen = len(loc)
	}
	raw.WriteString("</urlset>\n")
	gz := func(level int, s ...[]byte) []byte {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, level)
		for _, p := range s {
			zw.Write(p)
		}
		zw.Close()
		return b.Bytes()
	}
	body := gz(gzip.BestCompression, []byte(head), raw.Bytes())
	// A copy: a gzip member with the head and a comment naming the copy,
	// then one with the entries (gzip readers read members in sequence).
	entries := gz(gzip.BestCompression, raw.Bytes())
	copyOf := func(n string) []byte {
		if longURLs {
			return body
		}
		return append(gz(gzip.BestSpeed, []byte(head+"<!-- copy "+n+" -->\n")), entries...)
	}
	t.Logf("sitemap: %d URLs of %d bytes, %d bytes, %d gzipped", bombURLs, urlLen, len(head)+raw.Len(), len(body))

	var robots strings.Builder
	robots.WriteString("User-agent: *\nAllow: /\n")
	for i := range bombCopies {
		fmt.Fprintf(&robots, "Sitemap: %s/s.xml.gz?copy=%d\n", base, i)
	}
	var hits atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Write([]byte(robots.String()))
	})
	mux.HandleFunc("/s.xml.gz", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "application/x-gzip")
		w.Write(copyOf(r.URL.Query().Get("copy")))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(`<!doctype html><title>Bomb</title><p>nothing here</p>`))
	})
	srv = &httptest.Server{Listener: ln, Config: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, urlLen, hits.Load
}

// peakRSS reads the peak resident set size (VmHWM) of process pid.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// postJSON sends body to path with the test key and decodes the answer.
func postJSON(t *testing.T, srv *server, path, body string, out any) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.url+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode
}

// TestSitemapAmplification maps sites whose robots.txt names one 50 MB
// sitemap a hundred times (issue 12: 0.86 GB peak RSS for ten such lines
// before the budgets): the server answers with the URLs within its budgets
// and its peak RSS stays under 300 MB. The sitemap holds long URLs (the
// link budget ends a map of limit 100000) or short ones (the sitemap byte
// budget ends it). A crawl's kickoff reads the same sitemaps.
func TestSitemapAmplification(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	srv := startServer(t)
	pid := srv.cmd.Process.Pid
	t.Logf("peak RSS after start: %d MB", peakRSS(t, pid)>>20)

	for _, longURLs := range []bool{true, false} {
		site, urlLen, sitemapHits := bombSite(t, longURLs)
		for _, limit := range []int{0, 100000} {
			body := `{"url":"` + site.URL + `/"}`
			if limit > 0 {
				body = `{"url":"` + site.URL + `/","limit":` + strconv.Itoa(limit) + `}`
			}
			var got struct {
				Success bool `json:"success"`
				Links   []struct{ URL string }
				Warning string `json:"warning"`
				Code    string `json:"code"`
				Error   string `json:"error"`
			}
			before, start := sitemapHits(), time.Now()
			status := postJSON(t, srv, "/v2/map", body, &got)
			peak := peakRSS(t, pid)
			name := fmt.Sprintf("map of %d-byte URLs, limit %d", urlLen, limit)
			t.Logf("%s: status %d, %d links in %v, %d sitemap fetches, warning %q, peak RSS %d MB",
				name, status, len(got.Links), time.Since(start).Round(time.Millisecond), sitemapHits()-before, got.Warning, peak>>20)
			if status != http.StatusOK || !got.Success {
				t.Fatalf("%s: %d %s %s", name, status, got.Code, got.Error)
			}
			want, warn := 5000, "" // the default limit, reached within the first sitemap
			switch {
			case limit > 0 && longURLs:
				// As many as fit in the link budget: the start page
				// (titled "Bomb") and the sitemap's URLs.
				want = 1 + (crawl.DefaultLinkBytes-len(site.URL+"/")-len("Bomb"))/urlLen
				warn = "32 MiB of URLs"
			case limit > 0:
				// The start page and all 50,000 URLs of the first sitemap;
				// then copies until the 64 MiB sitemap budget is spent.
				want = 1 + bombURLs
				warn = "64 MiB decompressed"
			}
			if len(got.Links) != want || !strings.Contains(got.Warning, warn) || (warn == "") != (got.Warning == "") {
				t.Errorf("%s: %d links, warning %q; want %d links, warning %q", name, len(got.Links), got.Warning, want, warn)
			}
			if last := got.Links[len(got.Links)-1].URL; !strings.HasPrefix(last, site.URL+"/p/") {
				t.Errorf("%s: last link %s", name, last)
			}
			// The sitemaps read, and at most Concurrency (4) fetched ahead.
			if n := sitemapHits() - before; n > 2+4 {
				t.Errorf("%s: %d sitemap fetches", name, n)
			}
			if peak > maxPeakRSS {
				t.Errorf("%s: peak RSS %d MB, want under %d MB", name, peak>>20, maxPeakRSS>>20)
			}
		}

		// A crawl's kickoff reads the same sitemaps: its limit of seeds,
		// then it stops.
		var started struct {
			Success bool   `json:"success"`
			ID      string `json:"id"`
		}
		before := sitemapHits()
		if status := postJSON(t, srv, "/v2/crawl", `{"url":"`+site.URL+`/","limit":20}`, &started); status != http.StatusOK || !started.Success {
			t.Fatalf("crawl: %d", status)
		}
		var st struct {
			Status    string `json:"status"`
			Completed int    `json:"completed"`
		}
		if !testenv.WaitFor(2*time.Minute, func() bool {
			getJSON(t, srv, "/v2/crawl/"+started.ID, &st)
			return st.Status != "scraping"
		}) {
			t.Fatalf("crawl still scraping: %d done", st.Completed)
		}
		if st.Status != "completed" || st.Completed != 20 {
			t.Errorf("crawl: %s with %d pages, want completed with 20", st.Status, st.Completed)
		}
		peak := peakRSS(t, pid)
		t.Logf("crawl of %d-byte URLs: %d sitemap fetches, peak RSS %d MB", urlLen, sitemapHits()-before, peak>>20)
		if n := sitemapHits() - before; n > 1+4 {
			t.Errorf("crawl: %d sitemap fetches", n)
		}
		if peak > maxPeakRSS {
			t.Errorf("crawl: peak RSS %d MB, want under %d MB", peak>>20, maxPeakRSS>>20)
		}
	}
}

// getJSON GETs path with the test key and decodes the answer.
func getJSON(t *testing.T, srv *server, path string, out any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatal(err)
	}
}
