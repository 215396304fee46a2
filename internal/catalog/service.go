package catalog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/firegate/firegate/internal/netguard"
)

// DefaultMaxResponseBytes bounds an operator tool's response body.
const DefaultMaxResponseBytes = 10 << 20

// BuiltinFunc runs a built-in capability with the call's options and
// returns its data and the credits it cost. An error that is a
// *CallError is reported as is; others as an internal error.
type BuiltinFunc func(ctx context.Context, team string, options map[string]any) (data any, credits int64, err error)

// Builtin is a capability of the firecrawl provider that runs in this
// server.
type Builtin struct {
	Path, Description string
	// InputSchema validates the options (an open object when nil).
	InputSchema json.RawMessage
	// Credits is the least the call costs, checked before it runs.
	Credits int64
	Run     BuiltinFunc
}

// Options configure a Service.
type Options struct {
	// Source is the operator's catalog file; nil: only the built-in
	// provider.
	Source *Source
	// Policy is the network policy every call to an operator tool dials
	// through.
	Policy *netguard.Policy
	// MaxResponseBytes bounds an operator tool's response body; 0 =
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
	Log              *slog.Logger
}

// Service resolves, validates and executes catalog calls.
type Service struct {
	src     *Source
	builtin *Provider
	client  *http.Client
	maxBody int64
	log     *slog.Logger
}

// New builds the service with the built-in provider's capabilities:
// find-tools, then builtins in order.
func New(opts Options, builtins ...Builtin) (*Service, error) {
	if opts.Policy == nil {
		return nil, errors.New("catalog: a network policy is needed")
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.MaxResponseBytes <= 0 {
		opts.MaxResponseBytes = DefaultMaxResponseBytes
	}
	s := &Service{src: opts.Source, maxBody: opts.MaxResponseBytes, log: opts.Log}
	d := &netguard.Dialer{Policy: opts.Policy, Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	s.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil, // a proxy would dial on our behalf, past the guard
			DialContext:            d.DialContext,
			ForceAttemptHTTP2:      true,
			MaxIdleConns:           64,
			MaxIdleConnsPerHost:    16,
			IdleConnTimeout:        90 * time.Second,
			TLSHandshakeTimeout:    10 * time.Second,
			MaxResponseHeaderBytes: 64 << 10,
		},
		// Redirects are not followed: a tool answers where it is listed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	p := &Provider{Name: BuiltinProvider, Description: "This server's own tools: find-tools explores the catalog; the others run its scrape engine.", Builtin: true}
	all := append([]Builtin{{Path: "find-tools", Description: "Explore the catalog (providers, groups, tools) without executing anything.",
		InputSchema: findToolsSchema, Run: s.findTools}}, builtins...)
	for _, b := range all {
		c := &Capability{Path: b.Path, Description: b.Description, InputSchema: b.InputSchema, Credits: b.Credits, run: b.Run,
			TimeoutMs: maxToolTimeout.Milliseconds()}
		if err := compileSchema(c); err != nil {
			return nil, fmt.Errorf("catalog: built-in %s: %w", b.Path, err)
		}
		p.Capabilities = append(p.Capabilities, c)
	}
	s.builtin = p
	return s, nil
}

// Catalog returns the current catalog: the built-in provider, then the
// operator's.
func (s *Service) Catalog() *Catalog {
	ps := []*Provider{s.builtin}
	if s.src != nil {
		ps = append(ps, s.src.Catalog().Providers...)
	}
	return &Catalog{Providers: ps}
}

// Call is one requested call.
type Call struct {
	Provider, Capability string
	Options              map[string]any
}

// Resolved is a call whose capability was found and options validated.
type Resolved struct {
	Call
	Provider   *Provider
	Capability *Capability
}

// UnknownError reports a call naming no catalogued provider or
// capability.
type UnknownError struct {
	Index                int
	Provider, Capability string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("catalog[%d]: unknown provider or capability %q/%q", e.Index, e.Provider, e.Capability)
}

// OptionsError reports options that break the capability's inputSchema.
type OptionsError struct {
	Index   int
	Path    []string // inside options
	Message string
}

func (e *OptionsError) Error() string {
	return fmt.Sprintf("catalog[%d].options/%s: %s", e.Index, strings.Join(e.Path, "/"), e.Message)
}

// Resolve finds every call's capability in cat; the first unknown one is
// an *UnknownError.
func Resolve(cat *Catalog, calls []Call) ([]Resolved, error) {
	out := make([]Resolved, len(calls))
	for i, c := range calls {
		p := cat.Provider(c.Provider)
		if p == nil {
			return nil, &UnknownError{Index: i, Provider: c.Provider, Capability: c.Capability}
		}
		cp := p.Capability(c.Capability)
		if cp == nil {
			return nil, &UnknownError{Index: i, Provider: c.Provider, Capability: c.Capability}
		}
		out[i] = Resolved{Call: c, Provider: p, Capability: cp}
	}
	return out, nil
}

// Validate checks every call's options against its capability's
// inputSchema; the first failure is an *OptionsError.
func Validate(calls []Resolved) error {
	for i, c := range calls {
		if err := c.Capability.validate(c.Options); err != nil {
			err.Index = i
			return err
		}
	}
	return nil
}

func (c *Capability) validate(options map[string]any) *OptionsError {
	if options == nil {
		options = map[string]any{}
	}
	if k := c.collidingOption(options); k != "" {
		return &OptionsError{Path: []string{k}, Message: fmt.Sprintf("%q is a query parameter the operator's tool URL sets; it cannot be given as an option", k)}
	}
	raw, err := json.Marshal(options)
	if err != nil {
		return &OptionsError{Message: "options are not valid JSON"}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return &OptionsError{Message: "options are not valid JSON"}
	}
	err = c.schema.Validate(doc)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &OptionsError{Message: err.Error()}
	}
	for len(ve.Causes) > 0 {
		ve = ve.Causes[0]
	}
	return &OptionsError{Path: ve.InstanceLocation, Message: ve.ErrorKind.LocalizedString(message.NewPrinter(language.English))}
}

// Credits is the least the calls cost together: the pre-check.
func Credits(calls []Resolved) int64 {
	var n int64
	for _, c := range calls {
		n += c.Capability.Credits
	}
	return n
}

// CallError is a failed call's error in the response.
type CallError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Status  int    `json:"status,omitempty"`
}

func (e *CallError) Error() string { return e.Code + ": " + e.Message }

// Result is one call's outcome, as data.alexandria[] shows it.
type Result struct {
	Provider       string
	Capability     string
	CreditsCost    int64
	Data           any
	UpstreamStatus int
	Err            *CallError
}

// MarshalJSON writes {provider, capability, creditsCost, data,
// upstreamStatus} or {provider, capability, error}.
func (r Result) MarshalJSON() ([]byte, error) {
	if r.Err != nil {
		return json.Marshal(struct {
			Provider   string     `json:"provider"`
			Capability string     `json:"capability"`
			Error      *CallError `json:"error"`
		}{r.Provider, r.Capability, r.Err})
	}
	return json.Marshal(struct {
		Provider       string `json:"provider"`
		Capability     string `json:"capability"`
		CreditsCost    int64  `json:"creditsCost"`
		Data           any    `json:"data"`
		UpstreamStatus int    `json:"upstreamStatus,omitempty"`
	}{r.Provider, r.Capability, r.CreditsCost, r.Data, r.UpstreamStatus})
}

// Execute runs the calls concurrently, each within ctx and its
// capability's timeout, and returns their results in order.
func (s *Service) Execute(ctx context.Context, team string, calls []Resolved) []Result {
	out := make([]Result, len(calls))
	var wg sync.WaitGroup
	for i, c := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = s.execute(ctx, team, c)
		}()
	}
	wg.Wait()
	return out
}

func (s *Service) execute(ctx context.Context, team string, c Resolved) (r Result) {
	r = Result{Provider: c.Provider.Name, Capability: c.Capability.Path}
	ctx, cancel := context.WithTimeout(ctx, c.Capability.Timeout())
	defer cancel()
	defer func() {
		if p := recover(); p != nil {
			s.log.ErrorContext(ctx, "catalog call panicked", "provider", r.Provider, "capability", r.Capability, "panic", p)
			r.Data, r.Err = nil, &CallError{Code: "internal", Message: "the tool failed unexpectedly", Status: http.StatusInternalServerError}
		}
	}()
	var (
		data    any
		credits int64
		err     error
	)
	if c.Capability.run != nil {
		data, credits, err = c.Capability.run(ctx, team, c.Options)
	} else {
		data, r.UpstreamStatus, err = s.callTool(ctx, c.Capability, c.Options)
		credits = c.Capability.Credits
	}
	if err != nil {
		r.Err = toCallError(ctx, err)
		if r.Err.Code == "internal" {
			s.log.ErrorContext(ctx, "catalog call failed", "provider", r.Provider, "capability", r.Capability, "err", err)
		}
		return r
	}
	r.Data, r.CreditsCost = data, credits
	return r
}

func toCallError(ctx context.Context, err error) *CallError {
	var ce *CallError
	switch {
	case errors.As(err, &ce):
		return ce
	case errors.Is(err, netguard.ErrBlocked):
		return &CallError{Code: "tool_not_allowed", Status: http.StatusForbidden,
			Message: "the tool's address is refused by the network policy (list its host in ALLOW_TARGETS)"}
	case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
		return &CallError{Code: "timeout", Status: http.StatusGatewayTimeout, Message: "the tool did not answer within the timeout"}
	}
	return &CallError{Code: "internal", Status: http.StatusInternalServerError, Message: "the tool call failed"}
}
