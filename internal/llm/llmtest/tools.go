package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// ToolCall is one call of a scripted tool-calling answer. Args is written
// as the call's arguments text (marshalled unless it is a string, which is
// sent as is, so a test can send malformed arguments).
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Call builds a ToolCall of name with args.
func Call(id, name string, args any) ToolCall {
	c := ToolCall{ID: id, Type: "function"}
	c.Function.Name = name
	if s, ok := args.(string); ok {
		c.Function.Arguments = s
	} else {
		b, err := json.Marshal(args)
		if err != nil {
			panic(fmt.Sprintf("llmtest: marshal arguments: %v", err))
		}
		c.Function.Arguments = string(b)
	}
	return c
}

// WriteToolCalls answers with an assistant message asking for calls, with
// usage when set.
func WriteToolCalls(w http.ResponseWriter, usage *Usage, calls ...ToolCall) {
	resp := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls",
			"message": map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}}},
	}
	if usage != nil {
		resp["usage"] = usage
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// Calls is a step answering with tool calls.
func Calls(usage *Usage, calls ...ToolCall) Step {
	return func(w http.ResponseWriter, _ Request) { WriteToolCalls(w, usage, calls...) }
}

// WriteRefusal answers with a refusal.
func WriteRefusal(w http.ResponseWriter, reason string) {
	resp := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": nil, "refusal": reason}}},
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(resp)
}

// Refusal is a step answering with a refusal.
func Refusal(reason string) Step {
	return func(w http.ResponseWriter, _ Request) { WriteRefusal(w, reason) }
}

// ToolResult returns the content of the tool message answering call id,
// and whether there is one.
func (r Request) ToolResult(id string) (string, bool) {
	for _, m := range r.Messages {
		if m.Role == "tool" && m.ToolCallID == id {
			return m.Content, true
		}
	}
	return "", false
}
