package httpapi

import (
	"errors"
	"net/http"
	"net/url"

	"github.com/firegate/firegate/internal/scrape"
	"github.com/firegate/firegate/internal/threat"
)

// errThreatEnforced answers threatProtection.mode "off" on a server whose
// threat blocklist is enforced.
var errThreatEnforced = &Error{Status: http.StatusForbidden, Code: "FORBIDDEN",
	Message: `threatProtection.mode "off" is not allowed: this server enforces its threat blocklist on every request.`,
	Details: []FieldError{{Path: []any{"threatProtection", "mode"}, Message: "threat protection is enforced", Code: "forbidden"}}}

// checkTargets runs threat protection (the server's blocklist and the
// request's override o) on the URLs a request names before any work
// starts: 403 unsafe_domain_blocked naming the first blocked one.
func (s *Server) checkTargets(o *scrape.ThreatProtection, urls ...string) error {
	if err := s.threat.Validate(o); err != nil {
		return errThreatEnforced
	}
	for _, raw := range urls {
		u, err := url.Parse(raw)
		if err != nil {
			continue // the validator refused it already
		}
		if err := s.threat.Check(u.Hostname(), o); err != nil {
			return unsafeDomain(raw, err)
		}
	}
	return nil
}

// unsafeDomain is the 403 of a blocked URL.
func unsafeDomain(raw string, err error) *Error {
	return &Error{Status: http.StatusForbidden, Code: "unsafe_domain_blocked",
		Message: "Threat protection blocked " + raw + ": " + err.Error() + ".", err: err}
}

// threatAllows reports whether the URL raw passes threat protection.
func (s *Server) threatAllows(o *scrape.ThreatProtection, raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return true // not a URL this check can judge
	}
	return !errors.Is(s.threat.Check(u.Hostname(), o), threat.ErrBlocked)
}

// hopCheck checks a redirect hop of a request's own fetches (map's start
// page and sitemaps).
func (s *Server) hopCheck(o *scrape.ThreatProtection) func(u *url.URL) error {
	return func(u *url.URL) error { return s.threat.Check(u.Hostname(), o) }
}
