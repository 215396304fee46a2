package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Tool calling: a conversation where the model answers with calls of the
// caller's functions (OpenAI's "tools" and "tool_calls"), which the caller
// runs and answers with "tool" messages.

// ErrRefused: the model declined the request (its answer carried a refusal
// instead of content or calls). It wraps ErrRejected.
var ErrRefused = fmt.Errorf("%w: the model refused", ErrRejected)

// Tool is a function the model may call. Parameters is its JSON schema
// (an object schema).
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
}

// ToolCall is one call the model asked for. Arguments is the JSON text the
// model wrote (not necessarily valid JSON: the caller checks it).
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// ChatMessage is one message of a tool conversation: system, user,
// assistant (with the calls it asked for) or tool (the result of the call
// ToolCallID).
type ChatMessage struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// wireToolCall is a tool call as the chat completions API writes it.
type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// MarshalJSON writes the API's form: {id, type:"function", function:{name, arguments}}.
func (t ToolCall) MarshalJSON() ([]byte, error) {
	w := wireToolCall{ID: t.ID, Type: "function"}
	w.Function.Name, w.Function.Arguments = t.Name, t.Arguments
	return json.Marshal(w)
}

// UnmarshalJSON reads the API's form.
func (t *ToolCall) UnmarshalJSON(b []byte) error {
	var w wireToolCall
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*t = ToolCall{ID: w.ID, Name: w.Function.Name, Arguments: w.Function.Arguments}
	return nil
}

// ToolRequest is one turn of a tool conversation.
type ToolRequest struct {
	Messages []ChatMessage
	Tools    []Tool
	// RequireTool asks the model to call a tool rather than answer in
	// text (tool_choice "required"); otherwise it chooses ("auto").
	RequireTool bool
	// MaxTokens caps the answer; 0 leaves it to the endpoint.
	MaxTokens int
	// Purpose labels the call in the log.
	Purpose string
}

// ToolResponse is the model's turn: text, calls, or both.
type ToolResponse struct {
	Content   string
	ToolCalls []ToolCall
	// Refusal is the model's reason when it declined (the error is then
	// ErrRefused).
	Refusal      string
	FinishReason string
	Usage        Usage
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

type toolChatRequest struct {
	Model       string        `json:"model"`
	Messages    []ChatMessage `json:"messages"`
	Tools       []wireTool    `json:"tools,omitempty"`
	ToolChoice  string        `json:"tool_choice,omitempty"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	Temperature float64       `json:"temperature"`
}

type toolChatResponse struct {
	Choices []struct {
		Message struct {
			Content   *string    `json:"content"`
			Refusal   *string    `json:"refusal"`
			ToolCalls []ToolCall `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
}

// CompleteTools runs one turn of a tool conversation, with the client's
// retries, concurrency limit and token accounting. A refusal returns the
// response (with Refusal and Usage) and an error wrapping ErrRefused.
func (c *Client) CompleteTools(ctx context.Context, req ToolRequest) (*ToolResponse, error) {
	start := time.Now()
	body := toolChatRequest{Model: c.model, Messages: req.Messages, MaxTokens: req.MaxTokens}
	for _, t := range req.Tools {
		var w wireTool
		w.Type = "function"
		w.Function.Name, w.Function.Description, w.Function.Parameters = t.Name, t.Description, t.Parameters
		if len(w.Function.Parameters) == 0 {
			w.Function.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		body.Tools = append(body.Tools, w)
	}
	if len(body.Tools) > 0 {
		body.ToolChoice = "auto"
		if req.RequireTool {
			body.ToolChoice = "required"
		}
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("llm: encode request: %w", err)
	}
	// The answer is parsed once the retries are over: a malformed one is
	// not retried (unlike a text completion's).
	var raw []byte
	attempts, err := c.send(ctx, req.Purpose, start, payload, func(b []byte) error {
		raw = b
		return nil
	})
	if attempts == 0 {
		return nil, err
	}
	var resp *ToolResponse
	if err == nil {
		resp, err = parseToolAnswer(raw)
	}
	var (
		used  Usage
		attrs []any
	)
	if resp != nil {
		if resp.Usage.TotalTokens == 0 && resp.Usage.PromptTokens == 0 {
			resp.Usage = estimateToolUsage(req.Messages, resp)
		}
		used = resp.Usage
		attrs = []any{"prompt_tokens", resp.Usage.PromptTokens, "completion_tokens", resp.Usage.CompletionTokens,
			"tool_calls", len(resp.ToolCalls)}
	}
	return resp, c.finish(ctx, req.Purpose, start, attempts, err, used, attrs...)
}

// parseToolAnswer reads a chat completion with tool calls.
func parseToolAnswer(b []byte) (*ToolResponse, error) {
	var cr toolChatResponse
	if err := json.Unmarshal(b, &cr); err != nil {
		return nil, fmt.Errorf("%w: answer is not a chat completion: %v", ErrUnavailable, err)
	}
	if len(cr.Choices) == 0 {
		return nil, fmt.Errorf("%w: answer has no choices", ErrUnavailable)
	}
	ch := cr.Choices[0]
	out := &ToolResponse{ToolCalls: ch.Message.ToolCalls, FinishReason: ch.FinishReason}
	if ch.Message.Content != nil {
		out.Content = *ch.Message.Content
	}
	out.Usage = reportedUsage(cr.Usage)
	if ch.Message.Refusal != nil && *ch.Message.Refusal != "" && len(out.ToolCalls) == 0 {
		out.Refusal = *ch.Message.Refusal
		return out, fmt.Errorf("%w: %s", ErrRefused, truncate(out.Refusal, 300))
	}
	return out, nil
}

// estimateToolUsage counts tokens from the text when the endpoint
// reported none.
func estimateToolUsage(msgs []ChatMessage, r *ToolResponse) Usage {
	var p int64
	for _, m := range msgs {
		p += EstimateTokens(m.Content) + 4
		for _, tc := range m.ToolCalls {
			p += EstimateTokens(tc.Name + tc.Arguments)
		}
	}
	cpl := EstimateTokens(r.Content + r.Refusal)
	for _, tc := range r.ToolCalls {
		cpl += EstimateTokens(tc.Name + tc.Arguments)
	}
	return Usage{PromptTokens: p, CompletionTokens: cpl, TotalTokens: p + cpl, Estimated: true}
}
