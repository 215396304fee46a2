package crawl

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/xml"
	"errors"
	"io"
	"net/url"
	"strings"
	"sync"

	"github.com/firegate/firegate/internal/fetch"
	"github.com/firegate/firegate/internal/logsafe"
)

// Bounds of the sitemap parser.
const (
	// maxLocBytes is the longest <loc> (or text line) taken; longer ones
	// are skipped. The protocol asks for less than 2,048 characters.
	maxLocBytes = 8 << 10
	// maxXMLRun is the longest stretch of a sitemap without '<' or '>'
	// that is read: encoding/xml holds a whole token in memory, and no
	// token of a real sitemap is near this long.
	maxXMLRun = 256 << 10
)

// errSitemapBudget stops a sitemap read when the map's budget is spent.
var errSitemapBudget = errors.New("crawl: sitemap budget spent")

// errXMLRun stops a sitemap holding an overlong token.
var errXMLRun = errors.New("crawl: sitemap token too long")

// sitemapBudget is what one map may still read from sitemaps: decompressed
// bytes and entries (page URLs and child sitemaps). Only the goroutine
// that parses uses it.
type sitemapBudget struct {
	bytes int64
	urls  int
	// spent is set when a budget ran out while a sitemap had more to give.
	spent bool
}

// sitemapItem is one sitemap to read, and its fetch once started.
type sitemapItem struct {
	url   string
	depth int
	resp  chan *fetch.Response // buffered; nil when the fetch failed
}

// sitemapQueue holds the sitemaps of a map in the order they are read
// (breadth first): each URL once, at most max of them.
type sitemapQueue struct {
	max   int
	seen  map[string]bool
	items []*sitemapItem
}

// add queues u at depth unless it was queued before or the queue is full.
func (q *sitemapQueue) add(u string, depth int) {
	if q.seen[u] || len(q.items) >= q.max {
		return
	}
	q.seen[u] = true
	q.items = append(q.items, &sitemapItem{url: u, depth: depth, resp: make(chan *fetch.Response, 1)})
}

// sitemaps finds the site's sitemaps (robots.txt Sitemap lines, then
// /sitemap.xml) and feeds their page URLs to c as they are parsed,
// following index files breadth first within the count and depth bounds.
// Sitemaps are parsed one at a time, in order, while up to Concurrency are
// fetched ahead (one at a time with a delay); only their compressed bodies
// wait in memory. A URL is fetched once and a body parsed once. Reading
// stops when c is full or the map's sitemap budget (MaxSitemapTotalBytes,
// MaxSitemapTotalURLs) is spent; spent reports the latter. Failed or
// malformed sitemaps are skipped.
func (r *run) sitemaps(ctx context.Context, base *url.URL, c *collector) (spent bool) {
	root := &url.URL{Scheme: base.Scheme, Host: base.Host, Path: "/"}
	q := &sitemapQueue{max: r.m.opts.MaxSitemaps, seen: make(map[string]bool)}
	for _, s := range r.robotsSitemaps(ctx, root) {
		q.add(s, 0)
	}
	q.add(root.JoinPath("sitemap.xml").String(), 0)
	b := &sitemapBudget{bytes: r.m.opts.MaxSitemapTotalBytes, urls: r.m.opts.MaxSitemapTotalURLs}

	window := r.m.opts.Concurrency
	if r.o.Delay > 0 {
		window = 1 // r.get spaces requests; one at a time
	}
	fctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel() // fetches still running are not wanted
		wg.Wait()
	}()
	read := make(map[[sha256.Size]byte]bool) // bodies parsed already
	started := 0
	for i := 0; i < len(q.items); i++ {
		for ; started < len(q.items) && started < i+window; started++ {
			it := q.items[started]
			wg.Go(func() { it.resp <- r.fetchSitemap(fctx, it.url) })
		}
		it := q.items[i]
		q.items[i] = nil // its body is garbage once read
		var resp *fetch.Response
		select {
		case resp = <-it.resp:
		case <-ctx.Done():
			return false
		}
		if resp == nil {
			continue
		}
		// The same file under another URL adds nothing: parse it once.
		sum := sha256.Sum256(resp.Body)
		if read[sum] {
			continue
		}
		read[sum] = true
		if !r.readSitemap(ctx, resp, it.depth, q, c, b) {
			break
		}
	}
	if b.spent {
		r.m.log.InfoContext(ctx, "map sitemap budget spent", "url", logsafe.URL(r.o.URL),
			"max_bytes", r.m.opts.MaxSitemapTotalBytes, "max_urls", r.m.opts.MaxSitemapTotalURLs, "links", len(c.links))
	}
	return b.spent
}

// robotsSitemaps returns the absolute URLs of the Sitemap lines of the
// site's robots.txt, in file order.
func (r *run) robotsSitemaps(ctx context.Context, root *url.URL) []string {
	robots := root.JoinPath("robots.txt")
	resp, err := r.get(ctx, robots.String(), nil)
	if err != nil || resp.StatusCode >= 400 {
		return nil
	}
	return robotsSitemapURLs(resp.Body, robots)
}

// fetchSitemap fetches one sitemap; nil when it failed or answered an
// error status.
func (r *run) fetchSitemap(ctx context.Context, u string) *fetch.Response {
	resp, err := r.get(ctx, u, nil)
	if err != nil {
		r.m.log.DebugContext(ctx, "sitemap fetch failed", "url", logsafe.URL(u), "err", err)
		return nil
	}
	if resp.StatusCode >= 400 {
		return nil
	}
	return resp
}

// readSitemap parses one fetched sitemap, adding its page URLs to c and
// queueing its child sitemaps. It reports whether more sitemaps are
// wanted: false once c is full, the budget is spent or ctx is done.
func (r *run) readSitemap(ctx context.Context, resp *fetch.Response, depth int, q *sitemapQueue, c *collector, b *sitemapBudget) bool {
	rd, err := r.m.sitemapReader(ctx, resp.Body, b)
	if err != nil {
		r.m.log.DebugContext(ctx, "sitemap decompress failed", "url", logsafe.URL(resp.URL), "err", err)
		return true
	}
	base, _ := url.Parse(resp.URL)
	more := true
	parseSitemap(rd, base, r.m.opts.MaxSitemapURLs, func(u *url.URL, child bool) bool {
		if b.urls <= 0 {
			b.spent = true
			return false
		}
		b.urls--
		if child {
			if depth < r.m.opts.MaxSitemapDepth {
				q.add(u.String(), depth+1)
			}
			return true
		}
		more = c.addURL(u, "", "")
		return more
	})
	return more && !b.spent && ctx.Err() == nil
}

// sitemapReader returns the sitemap text of body, gunzipping a gzip file
// (a .xml.gz served without Content-Encoding), capped at MaxSitemapBytes
// of decompressed data and drawing on the map's byte budget b. Reading
// fails once ctx is done.
func (m *Mapper) sitemapReader(ctx context.Context, body []byte, b *sitemapBudget) (io.Reader, error) {
	var rd io.Reader = bytes.NewReader(body)
	if len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b {
		zr, err := gzip.NewReader(rd)
		if err != nil {
			return nil, err
		}
		rd = zr
	}
	return &budgetReader{ctx: ctx, r: rd, file: m.opts.MaxSitemapBytes, b: b}, nil
}

// budgetReader reads at most file bytes of r, and no more than the budget
// has left, counting what it reads against the budget. Running out of
// budget with data left sets b.spent.
type budgetReader struct {
	ctx  context.Context
	r    io.Reader
	file int64 // left of this file's cap
	b    *sitemapBudget
}

func (br *budgetReader) Read(p []byte) (int, error) {
	if err := br.ctx.Err(); err != nil {
		return 0, err
	}
	if br.file <= 0 {
		return 0, io.EOF
	}
	if br.b.bytes <= 0 {
		// Spent, unless the file ends here anyway.
		var one [1]byte
		if n, _ := io.ReadFull(br.r, one[:]); n > 0 {
			br.b.spent = true
		}
		return 0, errSitemapBudget
	}
	p = p[:min(int64(len(p)), br.file, br.b.bytes)]
	n, err := br.r.Read(p)
	br.file -= int64(n)
	br.b.bytes -= int64(n)
	return n, err
}

// runReader fails once r yields more than maxXMLRun bytes without a '<' or
// '>'.
type runReader struct {
	r   io.Reader
	run int // bytes since the last '<' or '>'
}

func (rr *runReader) Read(p []byte) (int, error) {
	n, err := rr.r.Read(p)
	chunk := p[:n]
	if i := max(bytes.LastIndexByte(chunk, '<'), bytes.LastIndexByte(chunk, '>')); i >= 0 {
		rr.run = n - i - 1
	} else {
		rr.run += n
	}
	if rr.run > maxXMLRun {
		return n, errXMLRun
	}
	return n, err
}

// parseSitemap reads an XML sitemap (urlset or sitemapindex) or a text
// sitemap (one URL per line) token by token, handing each entry to emit as
// it is read: child is true for the sitemaps of an index. It stops after
// maxURLs entries, or when emit returns false. Locations resolve against
// base; only absolute http(s) URLs are emitted. Malformed input ends the
// read; what came before it counts.
func parseSitemap(rd io.Reader, base *url.URL, maxURLs int, emit func(u *url.URL, child bool) bool) {
	br := bufio.NewReader(rd)
	if isText(br) {
		parseTextSitemap(br, base, maxURLs, emit)
		return
	}
	dec := xml.NewDecoder(&runReader{r: br})
	dec.Strict = false
	dec.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	var stack []string // open elements, the first 64 levels
	deeper := 0        // open elements below those
	var loc strings.Builder
	inLoc, tooLong := false, false
	for n := 0; n < maxURLs; {
		tok, err := dec.RawToken()
		if err != nil {
			return // io.EOF, a spent budget, or malformed input
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := strings.ToLower(t.Name.Local)
			if len(stack) < 64 {
				stack = append(stack, name)
			} else {
				deeper++
			}
			if name == "loc" && deeper == 0 {
				inLoc, tooLong = true, false
				loc.Reset()
			}
		case xml.CharData:
			if inLoc {
				if loc.Len()+len(t) > maxLocBytes {
					tooLong = true
				} else {
					loc.Write(t)
				}
			}
		case xml.EndElement:
			name := strings.ToLower(t.Name.Local)
			if inLoc && name == "loc" && deeper == 0 {
				inLoc = false
				parent := ""
				if len(stack) >= 2 {
					parent = stack[len(stack)-2]
				}
				if (parent == "sitemap" || parent == "url") && !tooLong {
					if u, ok := resolveURL(base, loc.String()); ok {
						n++
						if !emit(u, parent == "sitemap") {
							return
						}
					}
				}
			}
			if deeper > 0 {
				deeper--
			} else if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
}

// isText reports whether the sitemap looks like a plain list of URLs
// rather than XML.
func isText(br *bufio.Reader) bool {
	head, _ := br.Peek(512)
	head = bytes.TrimLeft(head, " \t\r\n\ufeff")
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	return len(head) > 0 && head[0] != '<'
}

// parseTextSitemap reads one absolute URL per line.
func parseTextSitemap(br *bufio.Reader, base *url.URL, maxURLs int, emit func(u *url.URL, child bool) bool) {
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for n := 0; n < maxURLs && sc.Scan(); {
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if len(line) > maxLocBytes || (!strings.HasPrefix(line, "http://") && !strings.HasPrefix(line, "https://")) {
			continue
		}
		if u, ok := resolveURL(base, line); ok {
			n++
			if !emit(u, false) {
				return
			}
		}
	}
}

// resolveURL parses href against base (when not nil), accepting absolute
// http(s) URLs only.
func resolveURL(base *url.URL, href string) (*url.URL, bool) {
	href = strings.TrimSpace(href)
	if href == "" {
		return nil, false
	}
	var u *url.URL
	var err error
	if base != nil {
		u, err = base.Parse(href)
	} else {
		u, err = url.Parse(href)
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, false
	}
	return u, true
}
