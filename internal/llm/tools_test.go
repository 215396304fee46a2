package llm

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

	"github.com/firegate/firegate/internal/llm/llmtest"
)

// TestCompleteTools runs a two-turn tool conversation against the scripted
// endpoint: the model's calls come back parsed, the tools and the
// conversation (assistant calls, tool results) reach the endpoint in the
// API's wire form, and usage is reported.
func TestCompleteTools(t *testing.T) {
	srv := llmtest.New(t,
		llmtest.Calls(&llmtest.Usage{PromptTokens: 30, CompletionTokens: 5},
			llmtest.Call("c1", "search", map[string]any{"query": "lighthouses"}),
			llmtest.Call("c2", "scrape", `{"url":`)),
		func(w http.ResponseWriter, r llmtest.Request) { llmtest.Write(w, "done", nil) },
	)
	c, err := New(Options{BaseURL: srv.BaseURL, Model: "m", MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	tools := []Tool{{Name: "search", Description: "web search", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)},
		{Name: "scrape"}}
	msgs := []ChatMessage{{Role: "system", Content: "be brief"}, {Role: "user", Content: "find"}}
	resp, err := c.CompleteTools(t.Context(), ToolRequest{Messages: msgs, Tools: tools, RequireTool: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 2 || resp.ToolCalls[0] != (ToolCall{ID: "c1", Name: "search", Arguments: `{"query":"lighthouses"}`}) ||
		resp.ToolCalls[1].Arguments != `{"url":` || resp.Usage.TotalTokens != 35 || resp.Usage.Estimated {
		t.Fatalf("response = %+v", resp)
	}
	msgs = append(msgs, ChatMessage{Role: "assistant", ToolCalls: resp.ToolCalls},
		ChatMessage{Role: "tool", ToolCallID: "c1", Content: "3 results"},
		ChatMessage{Role: "tool", ToolCallID: "c2", Content: "bad arguments"})
	resp, err = c.CompleteTools(t.Context(), ToolRequest{Messages: msgs, Tools: tools})
	if err != nil || resp.Content != "done" || len(resp.ToolCalls) != 0 || !resp.Usage.Estimated {
		t.Fatalf("second turn = %+v, %v", resp, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || len(reqs[0].Tools) != 2 || reqs[0].Tools[0].Function.Name != "search" ||
		string(reqs[0].Tools[1].Function.Parameters) != `{"type":"object","properties":{}}` {
		t.Fatalf("tools sent = %+v", reqs)
	}
	second := reqs[1]
	if got, ok := second.ToolResult("c1"); !ok || got != "3 results" {
		t.Fatalf("tool result c1 = %q, %v", got, ok)
	}
	asst := second.Messages[2]
	if asst.Role != "assistant" || len(asst.ToolCalls) != 2 || asst.ToolCalls[0].Function.Name != "search" ||
		asst.ToolCalls[0].Type != "function" || asst.ToolCalls[1].ID != "c2" {
		t.Fatalf("assistant message sent = %+v", asst)
	}
}

// TestCompleteToolsRefusal reports a refusal as ErrRefused (and so
// ErrRejected) with the reason and usage in the response.
func TestCompleteToolsRefusal(t *testing.T) {
	srv := llmtest.New(t, llmtest.Refusal("I cannot help with that."))
	c, err := New(Options{BaseURL: srv.BaseURL, Model: "m"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.CompleteTools(t.Context(), ToolRequest{Messages: []ChatMessage{{Role: "user", Content: "x"}}})
	if !errors.Is(err, ErrRefused) || !errors.Is(err, ErrRejected) || resp == nil || resp.Refusal != "I cannot help with that." {
		t.Fatalf("refusal = %+v, %v", resp, err)
	}
}

// TestCompleteToolsRetries retries a 503 and gives up on a 400.
func TestCompleteToolsRetries(t *testing.T) {
	srv := llmtest.New(t, llmtest.Status(503, ""), llmtest.Answer("ok", nil), llmtest.Status(400, ""))
	c, err := New(Options{BaseURL: srv.BaseURL, Model: "m", MaxRetries: 1, RetryBase: 1})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.CompleteTools(t.Context(), ToolRequest{Messages: []ChatMessage{{Role: "user", Content: "x"}}})
	if err != nil || resp.Content != "ok" {
		t.Fatalf("after a 503 = %+v, %v", resp, err)
	}
	if _, err := c.CompleteTools(t.Context(), ToolRequest{Messages: []ChatMessage{{Role: "user", Content: "x"}}}); !errors.Is(err, ErrRejected) {
		t.Fatalf("400 = %v", err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("requests = %d, want 3", n)
	}
}
