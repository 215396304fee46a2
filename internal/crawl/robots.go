package crawl

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/temoto/robotstxt"

	"github.com/firegate/firegate/internal/fetch"
)

// RobotsAgent is the product token robots.txt groups are matched against
// when no robotsUserAgent is configured. The fetcher announces itself with
// a browser User-Agent, which names no crawler, so robots.txt rules are
// looked up for this token (case-insensitively, falling back to the "*"
// group), as the reference server does.
const RobotsAgent = "FirecrawlAgent"

// MaxRobotsBytes is the part of a robots.txt that is read; rules after it
// are ignored.
const MaxRobotsBytes = 500 << 10

// ErrRobotsUnavailable means robots.txt could not be read (a 5xx status,
// or the site could not be reached); the crawl then proceeds as if it
// allowed everything.
var ErrRobotsUnavailable = errors.New("crawl: robots.txt unavailable")

// Robots is the parsed robots.txt of one origin, seen as one user agent.
// A nil *Robots allows everything. It is safe for concurrent use.
type Robots struct {
	group    *robotstxt.Group // nil: allow all
	sitemaps []string
}

// FetchRobots fetches and parses the robots.txt of root's origin (scheme
// and host) through f, and selects the group of userAgent (RobotsAgent
// when empty; a full User-Agent string is reduced to its first product
// token), else the "*" group. The deadline comes from ctx; without one,
// 15 s apply. Only the first MaxRobotsBytes are parsed.
//
// The returned Robots is never nil. A 4xx status (404, 410, 401, 403 ...)
// or a redirect that was not followed to the end allows everything, with a
// nil error. A 5xx status, or a fetch that failed, also allows everything,
// but the error (wrapping ErrRobotsUnavailable and the cause) says so;
// callers log it and go on.
func FetchRobots(ctx context.Context, f Fetcher, root *url.URL, userAgent string) (*Robots, error) {
	robotsURL := &url.URL{Scheme: strings.ToLower(root.Scheme), Host: root.Host, Path: "/robots.txt"}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, defaultRequestTimeout)
		defer cancel()
	}
	resp, err := f.Do(ctx, fetch.Request{URL: robotsURL.String()})
	if err != nil {
		return &Robots{}, fmt.Errorf("%w: %w", ErrRobotsUnavailable, err)
	}
	switch {
	case resp.StatusCode >= 500:
		return &Robots{}, fmt.Errorf("%w: %s answered %d", ErrRobotsUnavailable, robotsURL, resp.StatusCode)
	case resp.StatusCode >= 300:
		return &Robots{}, nil
	}
	base := robotsURL
	if fu, err := url.Parse(resp.URL); err == nil && fu.Host != "" {
		base = fu
	}
	return ParseRobots(resp.Body, base, userAgent), nil
}

// ParseRobots parses the robots.txt body served at robotsURL for
// userAgent (see FetchRobots). Lines it cannot make sense of are skipped.
func ParseRobots(body []byte, robotsURL *url.URL, userAgent string) *Robots {
	if len(body) > MaxRobotsBytes {
		body = body[:MaxRobotsBytes]
		if i := bytes.LastIndexByte(body, '\n'); i >= 0 {
			body = body[:i+1] // drop the cut line
		}
	}
	r := &Robots{sitemaps: robotsSitemapURLs(body, robotsURL)}
	body = boundRobots(body)
	data, err := robotstxt.FromBytes(body)
	if err != nil {
		// The parser rejects a whole file for one bad line (a rule before
		// any User-agent, a malformed Crawl-delay); retry without them.
		data, err = robotstxt.FromBytes(sanitizeRobots(body))
		if err != nil {
			return r
		}
	}
	r.group = data.FindGroup(agentToken(userAgent))
	return r
}

// Allowed reports whether robots.txt lets the agent fetch u. Only u's path
// and query are used: u must be on the origin the robots.txt came from.
func (r *Robots) Allowed(u *url.URL) bool {
	if r == nil || r.group == nil {
		return true
	}
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return r.group.Test(p)
}

// Sitemaps returns the absolute URLs of the file's Sitemap lines, in file
// order; they belong to no group.
func (r *Robots) Sitemaps() []string {
	if r == nil {
		return nil
	}
	return append([]string(nil), r.sitemaps...)
}

// CrawlDelay returns the Crawl-delay of the agent's group, 0 when none.
// It is not capped: the caller bounds it.
func (r *Robots) CrawlDelay() time.Duration {
	if r == nil || r.group == nil {
		return 0
	}
	return r.group.CrawlDelay
}

// agentToken returns the product token robots.txt groups are matched
// against: RobotsAgent for "", else the text before the first "/" or
// space ("Mozilla/5.0 (...)" gives "Mozilla").
func agentToken(ua string) string {
	ua = strings.TrimSpace(ua)
	if i := strings.IndexAny(ua, "/ \t"); i >= 0 {
		ua = ua[:i]
	}
	if ua == "" {
		return RobotsAgent
	}
	return ua
}

// robotsSitemapURLs returns the Sitemap lines of a robots.txt body,
// resolved against robotsURL, in file order.
func robotsSitemapURLs(body []byte, robotsURL *url.URL) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "sitemap") {
			continue
		}
		if i := strings.IndexByte(v, '#'); i >= 0 {
			v = v[:i]
		}
		if u, ok := resolve(robotsURL, v); ok {
			out = append(out, u)
		}
	}
	return out
}

// Bounds on the work one robots.txt can ask of the crawler. The parser
// turns every rule with a wildcard ("*", or "$" at its end) into a
// regular expression and tests a URL against each in turn: a 500 KB file
// of one rule with 250,000 wildcards took 1 s and 328 MB to parse, and
// 10,000 rules of 16 wildcards took 1.1 s to test one 2 KB path, for
// every link of the site. Rules past the bounds are dropped (allowing what
// they would have refused); plain prefix rules, which cost a prefix
// comparison each, are all kept.
const (
	maxRobotsRuleLen      = 2048 // bytes of a rule's path
	maxRobotsRuleStars    = 10   // wildcards in one rule
	maxRobotsPatternRules = 500  // rules with a wildcard, in the whole file
)

// boundRobots returns body without the Allow and Disallow lines past the
// bounds above.
func boundRobots(body []byte) []byte {
	out := make([]byte, 0, len(body))
	patterns := 0
	for len(body) > 0 {
		line, rest, _ := bytes.Cut(body, []byte{'\n'})
		body = rest
		if robotsRuleKept(line, &patterns) {
			out = append(out, line...)
			out = append(out, '\n')
		}
	}
	return out
}

// robotsRuleKept reports whether line is within the bounds, counting
// wildcard rules in *patterns.
func robotsRuleKept(line []byte, patterns *int) bool {
	if i := bytes.IndexByte(line, '#'); i >= 0 {
		line = line[:i]
	}
	k, v, ok := bytes.Cut(line, []byte{':'})
	if !ok {
		return true
	}
	switch strings.ToLower(string(bytes.TrimSpace(k))) {
	case "allow", "disallow":
	default:
		return true
	}
	v = bytes.TrimSpace(v)
	stars := bytes.Count(v, []byte{'*'})
	switch {
	case len(v) > maxRobotsRuleLen || stars > maxRobotsRuleStars:
		return false
	case stars > 0 || bytes.HasSuffix(v, []byte{'$'}):
		*patterns++
		return *patterns <= maxRobotsPatternRules
	}
	return true
}

// sanitizeRobots keeps the lines of a robots.txt that the parser accepts:
// User-agent lines, Allow and Disallow after the first User-agent, and
// Crawl-delay with a non-negative number after it. Sitemap lines are read
// separately.
func sanitizeRobots(body []byte) []byte {
	var out bytes.Buffer
	inGroup := false
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		switch k {
		case "user-agent", "useragent":
			inGroup = true
		case "allow", "disallow":
			if !inGroup {
				continue
			}
		case "crawl-delay", "crawldelay":
			if d, err := strconv.ParseFloat(v, 64); !inGroup || err != nil || d < 0 || d > 1e6 {
				continue
			}
		default:
			continue
		}
		out.WriteString(k + ": " + v + "\n")
	}
	return out.Bytes()
}
