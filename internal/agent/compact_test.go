package agent

import (
	"strings"
	"testing"

	"github.com/firegate/firegate/internal/llm"
)

// TestCompact elides the oldest tool results first, never the task or the
// last two messages, until the conversation fits.
func TestCompact(t *testing.T) {
	page := strings.Repeat("x", 1000)
	msgs := []llm.ChatMessage{{Role: "system", Content: "sys"}, {Role: "user", Content: "task"},
		{Role: "assistant"}, {Role: "tool", Content: page}, {Role: "tool", Content: page},
		{Role: "assistant"}, {Role: "tool", Content: page}, {Role: "tool", Content: page}}
	compact(msgs, 2500)
	var got []string
	total := 0
	for _, m := range msgs {
		total += len(m.Content)
		if m.Role == "tool" {
			got = append(got, map[bool]string{true: "elided", false: "kept"}[m.Content == elided])
		}
	}
	if strings.Join(got, ",") != "elided,elided,kept,kept" || total > 2500 || msgs[1].Content != "task" {
		t.Fatalf("after compact: %v, %d chars", got, total)
	}
	compact(msgs, 10) // cannot fit: the last two stay whole
	if msgs[6].Content != page || msgs[7].Content != page {
		t.Fatal("the latest results were elided")
	}
}
