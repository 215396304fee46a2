// Package llmtest is a scripted OpenAI-compatible chat completions endpoint
// on loopback for tests: it records every request and answers each with
// the next step of a script (or a reply function).
package llmtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Message is one chat message as received.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ToolCalls (assistant) and ToolCallID (tool) are set in tool
	// conversations.
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// Request is what the endpoint received.
type Request struct {
	Model          string          `json:"model"`
	Messages       []Message       `json:"messages"`
	ResponseFormat json.RawMessage `json:"response_format"`
	// Tools are the functions offered, as sent.
	Tools []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	Auth string `json:"-"`
}

// System is the content of the first system message.
func (r Request) System() string {
	for _, m := range r.Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	return ""
}

// LastUser is the content of the last user message.
func (r Request) LastUser() string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "user" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// Step answers one request.
type Step func(w http.ResponseWriter, r Request)

// Server is the scripted endpoint. BaseURL ends in /v1.
type Server struct {
	BaseURL string
	mu      sync.Mutex
	reqs    []Request
	steps   []Step
	reply   Step
}

// New starts an endpoint answering request i with steps[i]; requests past
// the script get 418.
func New(t testing.TB, steps ...Step) *Server {
	return start(t, &Server{steps: steps})
}

// NewReplying starts an endpoint answering every request with reply.
func NewReplying(t testing.TB, reply Step) *Server {
	return start(t, &Server{reply: reply})
}

func start(t testing.TB, s *Server) *Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.Error(w, "no route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		b, _ := io.ReadAll(r.Body)
		var in Request
		if err := json.Unmarshal(b, &in); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
			return
		}
		in.Auth = r.Header.Get("Authorization")
		s.mu.Lock()
		n := len(s.reqs)
		s.reqs = append(s.reqs, in)
		s.mu.Unlock()
		switch {
		case s.reply != nil:
			s.reply(w, in)
		case n < len(s.steps):
			s.steps[n](w, in)
		default:
			http.Error(w, `{"error":{"message":"script exhausted"}}`, http.StatusTeapot)
		}
	}))
	t.Cleanup(srv.Close)
	s.BaseURL = srv.URL + "/v1"
	return s
}

// Requests returns what was received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Usage is the usage block of a completion.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Write answers with a completion carrying content, and usage when set.
func Write(w http.ResponseWriter, content string, usage *Usage) {
	resp := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
	}
	if usage != nil {
		resp["usage"] = usage
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// Answer is a step answering content with usage.
func Answer(content string, usage *Usage) Step {
	return func(w http.ResponseWriter, _ Request) { Write(w, content, usage) }
}

// Status is a step failing with code (and Retry-After when set).
func Status(code int, retryAfter string) Step {
	return func(w http.ResponseWriter, _ Request) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, `{"error":{"message":"scripted failure","type":"test"}}`)
	}
}
