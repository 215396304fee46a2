package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/llm/llmtest"
)

// scripted is an OpenAI-compatible endpoint on loopback that records what
// it receives and answers from a script, one step per request.
type scripted struct {
	t     *testing.T
	srv   *httptest.Server
	mu    sync.Mutex
	reqs  []recorded
	steps []func(w http.ResponseWriter, r *http.Request)
}

type recorded struct {
	Auth string
	Body chatRequestIn
}

// chatRequestIn is what the tests read back from a request body.
type chatRequestIn struct {
	Model          string          `json:"model"`
	Messages       []Message       `json:"messages"`
	ResponseFormat json.RawMessage `json:"response_format"`
}

func newScripted(t *testing.T, steps ...func(w http.ResponseWriter, r *http.Request)) *scripted {
	t.Helper()
	s := &scripted{t: t, steps: steps}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "wrong route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var in chatRequestIn
		if err := json.Unmarshal(b, &in); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, recorded{Auth: r.Header.Get("Authorization"), Body: in})
		s.mu.Unlock()
		if n >= len(s.steps) {
			http.Error(w, "script exhausted", http.StatusTeapot)
			return
		}
		s.steps[n](w, r)
	}))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *scripted) requests() []recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recorded(nil), s.reqs...)
}

// answer is a step returning a completion with content and optional usage.
func answer(content string, usage *Usage) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		resp := map[string]any{
			"id": "cmpl-1", "object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content}}},
		}
		if usage != nil {
			resp["usage"] = usage
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
	}
}

func status(code int, retryAfter string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		http.Error(w, `{"error":{"message":"scripted failure"}}`, code)
	}
}

type tlog struct{ t *testing.T }

func (l tlog) Write(p []byte) (int, error) { l.t.Log(strings.TrimSpace(string(p))); return len(p), nil }

func newClient(t *testing.T, s *scripted, mode string, mut ...func(*Options)) *Client {
	t.Helper()
	o := Options{BaseURL: s.srv.URL + "/v1/", APIKey: "sk-test", Model: "test-model", StructuredOutput: mode,
		RetryBase: time.Millisecond, Log: slog.New(slog.NewTextHandler(tlog{t}, nil))}
	for _, m := range mut {
		m(&o)
	}
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

const productSchema = `{"type":"object","properties":{"name":{"type":"string"},"price":{"type":"number"}},"required":["name","price"]}`

func mustSchema(t *testing.T, raw string) *Schema {
	t.Helper()
	s, err := CompileSchema(json.RawMessage(raw))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func jsonReq(t *testing.T) JSONRequest {
	return JSONRequest{Request: Request{Purpose: "json", Messages: []Message{
		{Role: "system", Content: "Extract the product."},
		{Role: "user", Content: "<page>Widget costs 9.5</page>"},
	}}, Schema: mustSchema(t, productSchema), SchemaName: "product"}
}

func TestCompleteJSONSchemaModeRequestShape(t *testing.T) {
	t.Parallel()
	s := newScripted(t, answer(`{"name":"Widget","price":9.5}`, &Usage{PromptTokens: 120, CompletionTokens: 12, TotalTokens: 132}))
	c := newClient(t, s, "")
	got, err := c.CompleteJSON(context.Background(), jsonReq(t))
	if err != nil {
		t.Fatal(err)
	}
	if string(got.JSON) != `{"name":"Widget","price":9.5}` {
		t.Errorf("json = %s", got.JSON)
	}
	if got.Usage.TotalTokens != 132 || got.Usage.Estimated || got.Retried {
		t.Errorf("usage = %+v retried=%v", got.Usage, got.Retried)
	}
	reqs := s.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Auth != "Bearer sk-test" || r.Body.Model != "test-model" {
		t.Errorf("auth %q model %q", r.Auth, r.Body.Model)
	}
	var rf struct {
		Type       string `json:"type"`
		JSONSchema struct {
			Name   string          `json:"name"`
			Schema json.RawMessage `json:"schema"`
			Strict *bool           `json:"strict"`
		} `json:"json_schema"`
	}
	if err := json.Unmarshal(r.Body.ResponseFormat, &rf); err != nil {
		t.Fatal(err)
	}
	if rf.Type != "json_schema" || rf.JSONSchema.Name != "product" || string(rf.JSONSchema.Schema) != productSchema || rf.JSONSchema.Strict == nil {
		t.Errorf("response_format = %s", r.Body.ResponseFormat)
	}
	if len(r.Body.Messages) != 2 || r.Body.Messages[1].Content != "<page>Widget costs 9.5</page>" {
		t.Errorf("messages = %+v", r.Body.Messages)
	}
}

func TestCompleteJSONOtherModes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode, wantFormat string
	}{
		{ModeJSONObject, `{"type":"json_object"}`},
		{ModePrompt, ``},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			s := newScripted(t, answer("```json\n{\"name\":\"Widget\",\"price\":3}\n```", nil))
			c := newClient(t, s, tc.mode)
			got, err := c.CompleteJSON(context.Background(), jsonReq(t))
			if err != nil {
				t.Fatal(err)
			}
			if string(got.JSON) != `{"name":"Widget","price":3}` {
				t.Errorf("json = %s", got.JSON)
			}
			r := s.requests()[0].Body
			if string(r.ResponseFormat) != tc.wantFormat {
				t.Errorf("response_format = %s, want %s", r.ResponseFormat, tc.wantFormat)
			}
			if sys := r.Messages[0].Content; r.Messages[0].Role != "system" || !strings.Contains(sys, productSchema) ||
				!strings.HasPrefix(sys, "Extract the product.") {
				t.Errorf("system message lacks the schema: %q", sys)
			}
			if !got.Usage.Estimated || got.Usage.PromptTokens == 0 || got.Usage.CompletionTokens == 0 {
				t.Errorf("usage not estimated: %+v", got.Usage)
			}
		})
	}
}

func TestCompleteJSONRetriesOnceWithErrors(t *testing.T) {
	t.Parallel()
	s := newScripted(t,
		answer(`{"name":"Widget","price":"cheap"}`, &Usage{PromptTokens: 100, CompletionTokens: 10}),
		answer(`{"name":"Widget","price":9.5}`, &Usage{PromptTokens: 130, CompletionTokens: 10}))
	c := newClient(t, s, ModePrompt)
	got, err := c.CompleteJSON(context.Background(), jsonReq(t))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Retried || string(got.JSON) != `{"name":"Widget","price":9.5}` {
		t.Errorf("got %+v %s", got, got.JSON)
	}
	if got.Usage.PromptTokens != 230 || got.Usage.TotalTokens != 250 {
		t.Errorf("usage not summed over the retry: %+v", got.Usage)
	}
	second := s.requests()[1].Body.Messages
	if n := len(second); n != 4 || second[2].Role != "assistant" || second[2].Content != `{"name":"Widget","price":"cheap"}` {
		t.Fatalf("retry conversation = %+v", second)
	}
	if fb := second[3].Content; second[3].Role != "user" || !strings.Contains(fb, "/price") || !strings.Contains(fb, "number") {
		t.Errorf("feedback does not name the failure: %q", fb)
	}
}

func TestCompleteJSONMalformedThenValid(t *testing.T) {
	t.Parallel()
	s := newScripted(t, answer(`{"name": "Widget", "price": 9.`, nil), answer(`{"name":"Widget","price":9}`, nil))
	c := newClient(t, s, "")
	got, err := c.CompleteJSON(context.Background(), jsonReq(t))
	if err != nil {
		t.Fatal(err)
	}
	if !got.Retried || string(got.JSON) != `{"name":"Widget","price":9}` {
		t.Errorf("got %s retried=%v", got.JSON, got.Retried)
	}
	if fb := s.requests()[1].Body.Messages[3].Content; !strings.Contains(fb, "not valid JSON") {
		t.Errorf("feedback = %q", fb)
	}
}

func TestCompleteJSONInvalidTwice(t *testing.T) {
	t.Parallel()
	s := newScripted(t, answer(`{"name":"Widget"}`, nil), answer(`not json at all`, nil))
	c := newClient(t, s, "")
	got, err := c.CompleteJSON(context.Background(), jsonReq(t))
	if !errors.Is(err, ErrInvalidOutput) {
		t.Fatalf("err = %v", err)
	}
	if got == nil || got.Usage.TotalTokens == 0 {
		t.Errorf("usage of the failed attempts lost: %+v", got)
	}
	if n := len(s.requests()); n != 2 {
		t.Errorf("%d requests, want 2 (one retry)", n)
	}
}

func TestRetriesOn429And5xx(t *testing.T) {
	t.Parallel()
	s := newScripted(t, status(http.StatusTooManyRequests, "0"), status(http.StatusBadGateway, ""), answer("fine", nil))
	c := newClient(t, s, "")
	got, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got.Content != "fine" || len(s.requests()) != 3 {
		t.Errorf("content %q after %d requests", got.Content, len(s.requests()))
	}
}

func TestRetriesExhausted(t *testing.T) {
	t.Parallel()
	s := newScripted(t, status(500, ""), status(503, ""), status(500, ""), answer("too late", nil))
	c := newClient(t, s, "", func(o *Options) { o.MaxRetries = 2 })
	_, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "hi"}}})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if n := len(s.requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 500 {
		t.Errorf("status of the last answer: %v", err)
	}
}

func TestConnectionErrorIsRetriedThenUnavailable(t *testing.T) {
	t.Parallel()
	s := newScripted(t)
	s.srv.Close() // nothing listens any more
	c := newClient(t, s, "", func(o *Options) { o.MaxRetries = 1 })
	_, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "hi"}}})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
}

func TestClientErrorIsNotRetried(t *testing.T) {
	t.Parallel()
	s := newScripted(t, status(http.StatusBadRequest, ""), answer("never", nil))
	c := newClient(t, s, "")
	_, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "hi"}}})
	if !errors.Is(err, ErrRejected) || len(s.requests()) != 1 {
		t.Fatalf("err = %v after %d requests", err, len(s.requests()))
	}
	var se *StatusError
	if !errors.As(err, &se) || se.Code != http.StatusBadRequest {
		t.Errorf("status: %v", err)
	}
}

func TestTimeoutFromCallerDeadline(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s := newScripted(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	c := newClient(t, s, "")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Complete(ctx, Request{Messages: []Message{{Role: "user", Content: "hi"}}})
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
}

func TestRetryNotAttemptedPastDeadline(t *testing.T) {
	t.Parallel()
	s := newScripted(t, status(http.StatusTooManyRequests, "30"), answer("late", nil))
	c := newClient(t, s, "")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := c.Complete(ctx, Request{Messages: []Message{{Role: "user", Content: "hi"}}})
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if ctx.Err() != nil {
		t.Error("the client waited out the caller's deadline instead of giving up")
	}
}

func TestConcurrencyLimit(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	inflight, peak := 0, 0
	hold := func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inflight++
		peak = max(peak, inflight)
		mu.Unlock()
		// Hold the call long enough for the others to arrive if the limit
		// leaked.
		<-time.After(100 * time.Millisecond)
		mu.Lock()
		inflight--
		mu.Unlock()
		answer("ok", nil)(w, r)
	}
	s := newScripted(t, hold, hold, hold)
	c := newClient(t, s, "", func(o *Options) { o.MaxConcurrency = 1 })
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if _, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "hi"}}}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if peak != 1 {
		t.Errorf("peak in flight = %d, want 1", peak)
	}
}

func TestCompileSchema(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, schema string
		ok           bool
	}{
		{"valid", productSchema, true},
		{"defs", `{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string"}}}`, true},
		{"bad type", `{"type":"strnig"}`, false},
		{"file ref", `{"$ref":"file:///etc/passwd"}`, false},
		{"http ref", `{"$ref":"http://127.0.0.1:1/x.json"}`, false},
		{"not json", `{"type":`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CompileSchema(json.RawMessage(tc.schema))
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrBadSchema)) {
				t.Errorf("err = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{{Model: "m"}, {BaseURL: "http://x/v1"}, {BaseURL: "http://x/v1", Model: "m", StructuredOutput: "xml"}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

// observed records what the client reports to its Observer.
type observed struct {
	mu      sync.Mutex
	calls   []string // purpose/outcome/prompt/completion
	invalid []string
}

func (o *observed) ObserveLLMCall(purpose, outcome string, d time.Duration, p, c int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if d <= 0 {
		outcome += " (no duration)"
	}
	o.calls = append(o.calls, fmt.Sprintf("%s/%s/%d/%d", purpose, outcome, p, c))
}

func (o *observed) ObserveLLMInvalidAnswer(purpose string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.invalid = append(o.invalid, purpose)
}

func TestObserver(t *testing.T) {
	t.Parallel()
	obs := &observed{}
	s := newScripted(t,
		answer(`{"name":"Widget","price":"cheap"}`, &Usage{PromptTokens: 100, CompletionTokens: 10}),
		answer(`{"name":"Widget","price":9.5}`, &Usage{PromptTokens: 130, CompletionTokens: 12}),
		status(http.StatusBadRequest, ""),
		status(http.StatusBadGateway, ""), status(http.StatusBadGateway, ""))
	c := newClient(t, s, "", func(o *Options) { o.Observer, o.MaxRetries = obs, 1 })
	req := jsonReq(t)
	req.Purpose = "json"
	if _, err := c.CompleteJSON(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), Request{Purpose: "summary", Messages: []Message{{Role: "user", Content: "hi"}}}); !errors.Is(err, ErrRejected) {
		t.Fatalf("err = %v", err)
	}
	if _, err := c.Complete(context.Background(), Request{Messages: []Message{{Role: "user", Content: "hi"}}}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	want := []string{"json/success/100/10", "json/success/130/12", "summary/rejected/0/0", "/unavailable/0/0"}
	if fmt.Sprint(obs.calls) != fmt.Sprint(want) || fmt.Sprint(obs.invalid) != "[json]" {
		t.Errorf("calls %v invalid %v; want %v and [json]", obs.calls, obs.invalid, want)
	}

	// Tool-calling turns are observed too, refusals as such.
	tobs := &observed{}
	ts := llmtest.New(t, llmtest.Calls(&llmtest.Usage{PromptTokens: 30, CompletionTokens: 5}, llmtest.Call("c1", "search", map[string]any{"q": "x"})),
		llmtest.Refusal("no"))
	tc, err := New(Options{BaseURL: ts.BaseURL, Model: "m", Observer: tobs})
	if err != nil {
		t.Fatal(err)
	}
	treq := ToolRequest{Purpose: "agent", Messages: []ChatMessage{{Role: "user", Content: "find"}}, Tools: []Tool{{Name: "search"}}}
	if _, err := tc.CompleteTools(context.Background(), treq); err != nil {
		t.Fatal(err)
	}
	if _, err := tc.CompleteTools(context.Background(), treq); !errors.Is(err, ErrRefused) {
		t.Fatalf("err = %v", err)
	}
	if got := fmt.Sprint(tobs.calls); !strings.HasPrefix(got, "[agent/success/30/5 agent/refused/") {
		t.Errorf("tool turns observed as %s", got)
	}
}
