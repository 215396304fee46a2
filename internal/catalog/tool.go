package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
)

// callTool sends one call to an operator tool: POST with the options as a
// JSON body, GET with them as query parameters. It returns the response's
// JSON (or its text when it is not JSON) and the upstream status; a
// non-2xx answer is a *CallError carrying the status.
func (s *Service) callTool(ctx context.Context, c *Capability, options map[string]any) (any, int, error) {
	var (
		req *http.Request
		err error
	)
	if options == nil {
		options = map[string]any{}
	}
	switch c.Method {
	case http.MethodGet:
		u, perr := url.Parse(c.URL)
		if perr != nil {
			return nil, 0, fmt.Errorf("catalog: tool url: %w", perr)
		}
		q := u.Query()
		keys := make([]string, 0, len(options))
		for k := range options {
			if operatorParam(q, k) {
				continue // the operator's parameters win (Validate refuses the option first)
			}
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v, verr := queryValue(options[k])
			if verr != nil {
				return nil, 0, fmt.Errorf("catalog: encode option %q: %w", k, verr)
			}
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	default:
		body, merr := json.Marshal(options)
		if merr != nil {
			return nil, 0, fmt.Errorf("catalog: encode options: %w", merr)
		}
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	if err != nil {
		return nil, 0, fmt.Errorf("catalog: build request: %w", err)
	}
	for k, v := range c.Headers {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, s.maxBody+1))
	if err != nil {
		return nil, resp.StatusCode, err
	}
	if int64(len(body)) > s.maxBody {
		return nil, resp.StatusCode, &CallError{Code: "response_too_large", Status: http.StatusBadGateway,
			Message: fmt.Sprintf("the tool's response is larger than %d bytes", s.maxBody)}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, resp.StatusCode, &CallError{Code: "upstream_error", Status: resp.StatusCode,
			Message: fmt.Sprintf("the tool answered HTTP %d", resp.StatusCode)}
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if (mt == "application/json" || len(mt) > 5 && mt[len(mt)-5:] == "+json") && json.Valid(body) {
		return json.RawMessage(body), resp.StatusCode, nil
	}
	if json.Valid(body) && mt == "" {
		return json.RawMessage(body), resp.StatusCode, nil
	}
	return string(body), resp.StatusCode, nil
}

// collidingOption is the first option (in sorted order) of a GET tool that
// names a query parameter of the operator's URL, or "": such an option would
// replace what the operator set there, an API key among them. Names are
// compared without case, as many servers read them.
func (c *Capability) collidingOption(options map[string]any) string {
	if c.Method != http.MethodGet || len(options) == 0 {
		return ""
	}
	u, err := url.Parse(c.URL)
	if err != nil || u.RawQuery == "" {
		return ""
	}
	q := u.Query()
	keys := make([]string, 0, len(options))
	for k := range options {
		if operatorParam(q, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return ""
	}
	sort.Strings(keys)
	return keys[0]
}

// operatorParam reports whether the tool URL's query q holds the parameter
// k, compared without case.
func operatorParam(q url.Values, k string) bool {
	for name := range q {
		if strings.EqualFold(name, k) {
			return true
		}
	}
	return false
}

// queryValue writes an option as a query parameter: strings as they are,
// other values as JSON.
func queryValue(v any) (string, error) {
	if s, ok := v.(string); ok {
		return s, nil
	}
	if n, ok := v.(json.Number); ok {
		return n.String(), nil
	}
	b, err := json.Marshal(v)
	return string(b), err
}
