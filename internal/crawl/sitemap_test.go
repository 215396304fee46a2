package crawl

import (
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fixedSitemap is a urlset of n entries of exactly entry bytes each, whose
// paths start with prefix: header, entries and footer, so that a budget
// can be placed on an entry boundary.
type fixedSitemap struct {
	header, footer string
	entry          int
}

func newFixedSitemap(entry int) fixedSitemap {
	return fixedSitemap{header: `<?xml version="1.0" encoding="UTF-8"?>` + "\n<urlset>\n", footer: "</urlset>\n", entry: entry}
}

// body returns the sitemap of n entries under https://example.com/prefix/.
func (f fixedSitemap) body(prefix string, n int) string {
	var b strings.Builder
	b.WriteString(f.header)
	for i := range n {
		head := fmt.Sprintf("<url><loc>https://example.com/%s/%06d/", prefix, i)
		tail := "</loc></url>\n"
		b.WriteString(head)
		b.WriteString(strings.Repeat("a", f.entry-len(head)-len(tail)))
		b.WriteString(tail)
	}
	b.WriteString(f.footer)
	return b.String()
}

// size is the length of a sitemap of n entries.
func (f fixedSitemap) size(n int) int { return len(f.header) + n*f.entry + len(f.footer) }

// amplified is a site whose robots.txt names copies sitemaps
// /s.xml.gz?copy=i, each a gzipped sitemap of n entries (under /c<i>/, so
// every copy adds new URLs when distinct is set, else all the same file).
// fetches counts the sitemap requests.
func amplified(t testing.TB, f fixedSitemap, copies, n int, distinct bool) (*web, *atomic.Int64) {
	var fetches atomic.Int64
	var same []byte
	if !distinct {
		same = gz(t, f.body("c", n))
	}
	var robots strings.Builder
	for i := range copies {
		fmt.Fprintf(&robots, "Sitemap: https://example.com/s.xml.gz?copy=%d\n", i)
	}
	serve := func(w http.ResponseWriter, r *http.Request) {
		fetches.Add(1)
		body := same
		if distinct {
			body = gz(t, f.body("c"+r.URL.Query().Get("copy"), n))
		}
		w.Header().Set("Content-Type", "application/x-gzip")
		w.Write(body)
	}
	return newWeb(t, map[string]resource{
		"example.com/":           htmlRes(`<title>Home</title>`),
		"example.com/robots.txt": {ctype: "text/plain", body: []byte(robots.String())},
		"example.com/s.xml.gz*":  {serve: serve},
	}), &fetches
}

// TestMapSitemapBudget: a robots.txt naming 50 large sitemaps. The map
// reads them in order until its byte budget is spent, keeps exactly the
// entries that lie within the budget, says so in a warning, and fetches
// only the sitemaps it reads plus the few fetched ahead.
func TestMapSitemapBudget(t *testing.T) {
	t.Parallel()
	f := newFixedSitemap(500)
	const n = 2000 // ~1 MB a sitemap
	w, fetches := amplified(t, f, 50, n, true)
	// Two whole sitemaps, then the third's header and 123 entries up to
	// their </loc> (the </url>\n of the last one is left out).
	const m = 123
	budget := int64(2*f.size(n) + len(f.header) + m*f.entry - len("</url>\n"))
	mp := newMapper(t, w, MapperOptions{MaxSitemapTotalBytes: budget, Concurrency: 3})
	res, err := mp.Map(t.Context(), MapOptions{URL: "https://example.com/", Limit: MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(res.Links), 1+2*n+m; got != want {
		t.Errorf("%d links, want %d (the start page and the entries within the budget)", got, want)
	}
	if last := res.Links[len(res.Links)-1].URL; !strings.HasPrefix(last, fmt.Sprintf("https://example.com/c2/%06d/", m-1)) {
		t.Errorf("last link %s, want entry %d of the third sitemap", last, m-1)
	}
	if !res.BudgetSpent || !strings.Contains(res.Warning, "budget") {
		t.Errorf("spent %v, warning %q", res.BudgetSpent, res.Warning)
	}
	// Three read, at most three more fetched ahead; never the 50.
	if got := fetches.Load(); got < 3 || got > 6 {
		t.Errorf("%d sitemap fetches, want 3 to 6", got)
	}

	// A budget as large as the sitemaps: everything, no warning.
	w, _ = amplified(t, f, 3, n, true)
	mp = newMapper(t, w, MapperOptions{MaxSitemapTotalBytes: int64(3 * f.size(n))})
	res, err = mp.Map(t.Context(), MapOptions{URL: "https://example.com/", Limit: MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Links) != 1+3*n || res.BudgetSpent || res.Warning != "" {
		t.Errorf("exact budget: %d links, spent %v, warning %q", len(res.Links), res.BudgetSpent, res.Warning)
	}
}

// TestMapSitemapURLBudget: the entry budget counts the entries of every
// sitemap read.
func TestMapSitemapURLBudget(t *testing.T) {
	t.Parallel()
	w, _ := amplified(t, newFixedSitemap(100), 4, 100, true)
	mp := newMapper(t, w, MapperOptions{MaxSitemapTotalURLs: 250})
	res, err := mp.Map(t.Context(), MapOptions{URL: "https://example.com/", Limit: MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	// The start page and the first 250 entries.
	if len(res.Links) != 251 || !res.BudgetSpent || !strings.Contains(res.Warning, "250 URLs") {
		t.Errorf("%d links, spent %v, warning %q", len(res.Links), res.BudgetSpent, res.Warning)
	}
}

// TestMapSitemapStopsWhenFull: once Limit links are found no more
// sitemaps are read or fetched, and no budget warning is given.
func TestMapSitemapStopsWhenFull(t *testing.T) {
	t.Parallel()
	w, fetches := amplified(t, newFixedSitemap(100), 40, 100, true)
	mp := newMapper(t, w, MapperOptions{Concurrency: 2})
	res, err := mp.Map(t.Context(), MapOptions{URL: "https://example.com/", Limit: 150, Sitemap: SitemapOnly})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Links) != 150 || res.BudgetSpent || res.Warning != "" {
		t.Errorf("%d links, spent %v, warning %q", len(res.Links), res.BudgetSpent, res.Warning)
	}
	if got := fetches.Load(); got < 2 || got > 4 {
		t.Errorf("%d sitemap fetches, want 2 to 4", got)
	}
}

// TestMapSitemapDuplicates: a sitemap named many times (robots.txt lines,
// /sitemap.xml, index entries) is fetched once.
func TestMapSitemapDuplicates(t *testing.T) {
	t.Parallel()
	robots := strings.Repeat("Sitemap: https://example.com/sitemap.xml\nSitemap: /idx.xml\n", 20)
	w := newWeb(t, map[string]resource{
		"example.com/":            htmlRes(``),
		"example.com/robots.txt":  {ctype: "text/plain", body: []byte(robots)},
		"example.com/idx.xml":     xmlRes(sitemapIndex("https://example.com/a.xml", "https://example.com/a.xml", "https://example.com/idx.xml", "/sitemap.xml")),
		"example.com/a.xml":       xmlRes(urlset("https://example.com/a")),
		"example.com/sitemap.xml": xmlRes(urlset("https://example.com/s")),
	})
	mp := newMapper(t, w, MapperOptions{})
	res, err := mp.Map(t.Context(), MapOptions{URL: "https://example.com/", Sitemap: SitemapOnly})
	if err != nil {
		t.Fatal(err)
	}
	if got := urls(res.Links); strings.Join(got, " ") != "https://example.com/s https://example.com/a" {
		t.Errorf("links %v", got)
	}
	count := map[string]int{}
	for _, h := range w.requests() {
		count[h]++
	}
	for _, p := range []string{"example.com/sitemap.xml", "example.com/idx.xml", "example.com/a.xml"} {
		if count[p] != 1 {
			t.Errorf("%s fetched %d times, want once (all: %v)", p, count[p], count)
		}
	}

	// One file under 20 URLs is parsed once: the byte budget, enough for
	// one and a half, is not spent.
	f := newFixedSitemap(100)
	w, fetches := amplified(t, f, 20, 100, false)
	mp = newMapper(t, w, MapperOptions{MaxSitemapTotalBytes: int64(f.size(100) * 3 / 2)})
	res, err = mp.Map(t.Context(), MapOptions{URL: "https://example.com/", Limit: MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Links) != 101 || res.BudgetSpent || fetches.Load() != 20 {
		t.Errorf("copies: %d links, spent %v, %d fetches", len(res.Links), res.BudgetSpent, fetches.Load())
	}
}

// TestMapAccept: links failing MapOptions.Accept are left out and do not
// count against the limit.
func TestMapAccept(t *testing.T) {
	t.Parallel()
	w, _ := amplified(t, newFixedSitemap(100), 1, 100, false)
	mp := newMapper(t, w, MapperOptions{})
	res, err := mp.Map(t.Context(), MapOptions{URL: "https://example.com/", Sitemap: SitemapOnly, Limit: 10,
		Accept: func(u *url.URL) bool { return strings.HasPrefix(u.Path, "/c/00005") }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Links) != 10 || !strings.HasPrefix(res.Links[0].URL, "https://example.com/c/000050/") {
		t.Errorf("links %v", urls(res.Links))
	}
}

// TestMapLinkBytes: the links a map gathers are capped in bytes, whatever
// the limit; the map answers those that fit, with a warning.
func TestMapLinkBytes(t *testing.T) {
	t.Parallel()
	w, _ := amplified(t, newFixedSitemap(100), 1, 100, false)
	mp := newMapper(t, w, MapperOptions{MaxLinkBytes: 1000})
	res, err := mp.Map(t.Context(), MapOptions{URL: "https://example.com/", Sitemap: SitemapOnly, Limit: MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	// Each URL is 100-len("<url><loc></loc></url>\n") = 77 bytes: 12 fit.
	if len(res.Links) != 12 || !res.BudgetSpent || !strings.Contains(res.Warning, "the first 12 are listed") {
		t.Errorf("%d links, spent %v, warning %q", len(res.Links), res.BudgetSpent, res.Warning)
	}
	for _, l := range res.Links {
		if len(l.URL) != 77 {
			t.Errorf("link %q: %d bytes", l.URL, len(l.URL))
		}
	}
}

// TestParseSitemapBounds: a <loc> over 8 KiB is skipped, and a token long
// enough to make encoding/xml buffer it whole ends the read.
func TestParseSitemapBounds(t *testing.T) {
	t.Parallel()
	base, _ := url.Parse("https://example.com/sm.xml")
	read := func(in string) []string {
		var got []string
		parseSitemap(strings.NewReader(in), base, 100, func(u *url.URL, _ bool) bool {
			got = append(got, u.String())
			return true
		})
		return got
	}
	long := "https://example.com/" + strings.Repeat("x", 9<<10)
	if got := read(urlset("https://example.com/1", long, "https://example.com/2")); strings.Join(got, " ") != "https://example.com/1 https://example.com/2" {
		t.Errorf("long loc: %v", got)
	}
	huge := `<urlset><url><loc>https://example.com/1</loc><lastmod>` + strings.Repeat("9", 1<<20) +
		`</lastmod></url><url><loc>https://example.com/2</loc></url></urlset>`
	if got := read(huge); strings.Join(got, " ") != "https://example.com/1" {
		t.Errorf("huge token: %v", got)
	}
	// Deep nesting does not confuse the parent of a <loc>.
	deep := `<urlset><url><loc>https://example.com/1</loc></url>` + strings.Repeat("<x>", 100) + `<url><loc>https://example.com/deep</loc></url>` +
		strings.Repeat("</x>", 100) + `<url><loc>https://example.com/2</loc></url></urlset>`
	if got := read(deep); strings.Join(got, " ") != "https://example.com/1 https://example.com/2" {
		t.Errorf("deep: %v", got)
	}
}

// BenchmarkMapSitemapAmplification maps a site whose robots.txt names one
// 50 MB gzipped sitemap (50,000 URLs of 1 KB) a hundred times, and reports
// the peak Go heap in use during the map.
func BenchmarkMapSitemapAmplification(b *testing.B) {
	w, fetches := amplified(b, newFixedSitemap(1000), 100, 50000, false)
	mp := newMapper(b, w, MapperOptions{})
	b.ReportAllocs()
	runtime.GC() // the site's 50 MB sitemap text is garbage now
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	for b.Loop() {
		res, err := mp.Map(b.Context(), MapOptions{URL: "https://example.com/", Limit: MaxLimit})
		if err != nil || len(res.Links) < 30000 || !res.BudgetSpent {
			b.Fatalf("%d links, spent %v, err %v", len(res.Links), res.BudgetSpent, err)
		}
	}
	close(stop)
	<-done
	b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(fetches.Load())/float64(b.N), "fetches/op")
}
