package crawljob

import (
	"context"
	"net/url"

	"github.com/firegate/firegate/internal/crawl"
	"github.com/firegate/firegate/internal/fetch"
)

// checkedFetcher is a Fetcher whose requests pass check first: the URL
// asked for before anything is sent, then every redirect hop (with the
// request's own CheckHop, if any). The crawl's robots.txt fetches go
// through it with threat protection.
type checkedFetcher struct {
	f     crawl.Fetcher
	check func(u *url.URL) error
}

func (g checkedFetcher) Do(ctx context.Context, req fetch.Request) (*fetch.Response, error) {
	u, err := url.Parse(req.URL)
	if err != nil {
		return g.f.Do(ctx, req) // the fetcher reports the bad URL
	}
	if err := g.check(u); err != nil {
		return nil, err
	}
	own := req.CheckHop
	req.CheckHop = func(u *url.URL) error {
		if err := g.check(u); err != nil {
			return err
		}
		if own != nil {
			return own(u)
		}
		return nil
	}
	return g.f.Do(ctx, req)
}

// threatHop is the job's threat check of one URL: the server's blocklist
// and the job's threatProtection.
func (r *Runner) threatHop(c *cachedJob) func(u *url.URL) error {
	return func(u *url.URL) error { return r.cfg.Threat.Check(u.Hostname(), c.opts.Scrape.ThreatProtection) }
}
