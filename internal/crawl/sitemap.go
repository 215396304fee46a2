package crawl

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/xml"
	"io"
	"net/url"
	"strings"
	"sync"
)

// sitemapDoc is what one sitemap file contributed.
type sitemapDoc struct {
	pages    []string // page URLs (urlset or text sitemap)
	children []string // nested sitemaps (sitemapindex)
}

// sitemaps finds the site's sitemaps (robots.txt Sitemap lines, then
// /sitemap.xml) and feeds their page URLs to c, following index files
// breadth first, level by level, within the count and depth bounds. Failed
// or malformed sitemaps are skipped.
func (r *run) sitemaps(ctx context.Context, base *url.URL, c *collector) {
	root := &url.URL{Scheme: base.Scheme, Host: base.Host, Path: "/"}
	level := r.robotsSitemaps(ctx, root)
	level = append(level, root.JoinPath("sitemap.xml").String())

	seen := make(map[string]bool)
	fetched := 0
	for depth := 0; depth <= r.m.opts.MaxSitemapDepth && len(level) > 0; depth++ {
		var todo []string
		for _, s := range level {
			if !seen[s] && fetched+len(todo) < r.m.opts.MaxSitemaps {
				seen[s] = true
				todo = append(todo, s)
			}
		}
		fetched += len(todo)
		docs := r.fetchSitemaps(ctx, todo)
		level = nil
		for _, d := range docs {
			for _, p := range d.pages {
				if !c.add(p, "", "") {
					return
				}
			}
			level = append(level, d.children...)
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// robotsSitemaps returns the absolute URLs of the Sitemap lines of the
// site's robots.txt, in file order.
func (r *run) robotsSitemaps(ctx context.Context, root *url.URL) []string {
	robots := root.JoinPath("robots.txt")
	resp, err := r.get(ctx, robots.String())
	if err != nil || resp.StatusCode >= 400 {
		return nil
	}
	return robotsSitemapURLs(resp.Body, robots)
}

// fetchSitemaps fetches and parses urls, several at a time (one at a time
// with a delay), returning their contents in the order of urls.
func (r *run) fetchSitemaps(ctx context.Context, urls []string) []sitemapDoc {
	docs := make([]sitemapDoc, len(urls))
	if r.o.Delay > 0 {
		for i, u := range urls {
			docs[i] = r.sitemap(ctx, u)
		}
		return docs
	}
	sem := make(chan struct{}, r.m.opts.Concurrency)
	var wg sync.WaitGroup
	for i, u := range urls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			docs[i] = r.sitemap(ctx, u)
		})
	}
	wg.Wait()
	return docs
}

// sitemap fetches and parses one sitemap; failures yield an empty one.
func (r *run) sitemap(ctx context.Context, u string) sitemapDoc {
	resp, err := r.get(ctx, u)
	if err != nil {
		r.m.log.DebugContext(ctx, "sitemap fetch failed", "url", u, "err", err)
		return sitemapDoc{}
	}
	if resp.StatusCode >= 400 {
		return sitemapDoc{}
	}
	body, err := r.m.sitemapReader(resp.Body)
	if err != nil {
		r.m.log.DebugContext(ctx, "sitemap decompress failed", "url", u, "err", err)
		return sitemapDoc{}
	}
	base, _ := url.Parse(resp.URL)
	return parseSitemap(body, base, r.m.opts.MaxSitemapURLs)
}

// sitemapReader returns the sitemap text of body, gunzipping a gzip file
// (a .xml.gz served without Content-Encoding), capped at MaxSitemapBytes
// of decompressed data.
func (m *Mapper) sitemapReader(body []byte) (io.Reader, error) {
	var rd io.Reader = bytes.NewReader(body)
	if len(body) >= 2 && body[0] == 0x1f && body[1] == 0x8b {
		zr, err := gzip.NewReader(rd)
		if err != nil {
			return nil, err
		}
		rd = zr
	}
	return io.LimitReader(rd, m.opts.MaxSitemapBytes), nil
}

// parseSitemap reads an XML sitemap (urlset or sitemapindex) or a text
// sitemap (one URL per line), keeping at most maxURLs entries. Relative
// locations resolve against base. Malformed input yields what was read
// before the error.
func parseSitemap(rd io.Reader, base *url.URL, maxURLs int) sitemapDoc {
	br := bufio.NewReader(rd)
	if isText(br) {
		return parseTextSitemap(br, base, maxURLs)
	}
	var d sitemapDoc
	dec := xml.NewDecoder(br)
	dec.Strict = false
	dec.CharsetReader = func(_ string, in io.Reader) (io.Reader, error) { return in, nil }
	var stack []string
	var loc strings.Builder
	inLoc := false
	for len(d.pages)+len(d.children) < maxURLs {
		tok, err := dec.RawToken()
		if err != nil {
			break // io.EOF, or malformed input: keep what was read
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := strings.ToLower(t.Name.Local)
			stack = append(stack, name)
			if name == "loc" {
				inLoc = true
				loc.Reset()
			}
		case xml.CharData:
			if inLoc && loc.Len() < 8<<10 {
				loc.Write(t)
			}
		case xml.EndElement:
			name := strings.ToLower(t.Name.Local)
			if inLoc && name == "loc" {
				inLoc = false
				parent := ""
				if len(stack) >= 2 {
					parent = stack[len(stack)-2]
				}
				if u, ok := resolve(base, strings.TrimSpace(loc.String())); ok {
					switch parent {
					case "sitemap":
						d.children = append(d.children, u)
					case "url":
						d.pages = append(d.pages, u)
					}
				}
			}
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		}
	}
	return d
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
func parseTextSitemap(br *bufio.Reader, base *url.URL, maxURLs int) sitemapDoc {
	var d sitemapDoc
	sc := bufio.NewScanner(br)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() && len(d.pages) < maxURLs {
		line := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if !strings.HasPrefix(line, "http://") && !strings.HasPrefix(line, "https://") {
			continue
		}
		if u, ok := resolve(base, line); ok {
			d.pages = append(d.pages, u)
		}
	}
	return d
}
