package browser

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"

	"github.com/firegate/firegate/internal/logsafe"
	"github.com/firegate/firegate/internal/netguard"
)

// redactURL drops credentials from a URL for logs and errors.
func redactURL(raw string) string { return logsafe.URL(raw) }

// scopeCredentials moves credentials in the URL (user:pass@) into an
// Authorization header scoped like the other custom headers, so that
// Chrome never sees them: it would keep them in its HTTP auth cache for
// later renders and send them wherever the page points.
func scopeCredentials(req Request, u *url.URL) Request {
	if u.User == nil {
		return req
	}
	user := u.User.Username()
	pass, _ := u.User.Password()
	clean := *u
	clean.User = nil
	req.URL = clean.String()
	headers := make(map[string]string, len(req.Headers)+1)
	hasAuth := false
	for k, v := range req.Headers {
		headers[k] = v
		hasAuth = hasAuth || strings.EqualFold(k, "Authorization")
	}
	if !hasAuth {
		headers["Authorization"] = "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	req.Headers = headers
	return req
}

// scope sends the caller's custom headers to the target's host only.
type scope struct {
	host    string            // lower-case host name of the target
	headers map[string]string // canonical name -> value; no User-Agent, no Cookie
}

func newScope(req Request) *scope {
	sc := &scope{headers: map[string]string{}}
	if u, err := url.Parse(req.URL); err == nil {
		sc.host = strings.ToLower(u.Hostname())
	}
	for k, v := range req.Headers {
		switch {
		case strings.EqualFold(k, "User-Agent"), strings.EqualFold(k, "Cookie"), strings.EqualFold(k, "Host"):
			continue
		}
		sc.headers[http.CanonicalHeaderKey(k)] = v
	}
	return sc
}

// headersFor returns the headers a paused request is continued with: its
// own plus the custom ones when it goes to the target's host; nil (keep its
// own) otherwise.
func (sc *scope) headersFor(r *network.Request) []*fetch.HeaderEntry {
	if len(sc.headers) == 0 || r == nil {
		return nil
	}
	u, err := url.Parse(r.URL)
	if err != nil || strings.ToLower(u.Hostname()) != sc.host {
		return nil
	}
	out := make([]*fetch.HeaderEntry, 0, len(r.Headers)+len(sc.headers))
	for k, v := range r.Headers {
		if _, over := sc.headers[http.CanonicalHeaderKey(k)]; over {
			continue
		}
		out = append(out, &fetch.HeaderEntry{Name: k, Value: fmt.Sprint(v)})
	}
	for k, v := range sc.headers {
		out = append(out, &fetch.HeaderEntry{Name: k, Value: v})
	}
	return out
}

// headerCookies turns a Cookie entry of the custom headers into cookies of
// the target's URL (host-only), so the browser sends them to that host
// alone.
func headerCookies(req Request) []*network.CookieParam {
	var out []*network.CookieParam
	for k, v := range req.Headers {
		if !strings.EqualFold(k, "Cookie") {
			continue
		}
		for part := range strings.SplitSeq(v, ";") {
			name, value, ok := strings.Cut(strings.TrimSpace(part), "=")
			if !ok || name == "" {
				continue
			}
			out = append(out, &network.CookieParam{Name: name, Value: value, URL: req.URL})
		}
	}
	return out
}

// proxyRefusal reports a main document the proxy answered itself because
// its host (or one it redirected to) could not be reached.
func proxyRefusal(rawURL string, tr *tracker) error {
	tr.mu.Lock()
	resp := tr.mainResp
	tr.mu.Unlock()
	if resp == nil {
		return nil
	}
	for k, v := range resp.Headers {
		if reason, _ := v.(string); reason != "" && strings.EqualFold(k, netguard.BlockedHeader) {
			return reasonError(redactURL(rawURL), reason)
		}
	}
	return nil
}

// carriesState reports whether a render brings or takes browser state (a
// profile, cookies in its headers, certificate errors ignored): it gets a
// browser context of its own, not the one its team's other renders share.
func carriesState(req Request) bool {
	return req.State != nil || req.SaveState || req.SkipTLSVerify || len(headerCookies(req)) > 0
}
