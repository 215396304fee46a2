package agent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/firegate/firegate/internal/store"
)

// brokenKids is a store whose one subagent completed with stored data
// that is not JSON.
type brokenKids struct {
	store.AgentStore // nil: only the methods below are called
}

func (brokenKids) ChildAgentRuns(context.Context, string) ([]store.AgentRun, error) {
	return []store.AgentRun{
		{ID: "kid-ok", ParentID: "parent", Status: store.AgentCompleted, Data: json.RawMessage(`"part 1"`), CreditsUsed: 2},
		{ID: "kid-broken", ParentID: "parent", Status: store.AgentCompleted, Data: json.RawMessage(`{"cut off`), CreditsUsed: 3},
	}, nil
}

func (brokenKids) AgentEvents(context.Context, string, int, int) ([]store.AgentEvent, error) {
	return nil, nil
}

// TestDeliverSubagentsBadData: a subagent whose stored data is not JSON is
// reported to the model as unreadable, and the other results still come
// through; the answer used to be empty.
func TestDeliverSubagentsBadData(t *testing.T) {
	s := &step{r: New(Config{Runs: brokenKids{}}), run: store.AgentRun{ID: "parent"}, opts: &Options{}, st: &state{Awaiting: "w"}}
	done, err := s.deliverSubagents(t.Context(), true)
	if err != nil || !done {
		t.Fatalf("deliverSubagents = %v, %v", done, err)
	}
	msgs := s.st.Messages
	if len(msgs) != 1 || msgs[0].Role != "tool" || msgs[0].ToolCallID != "w" {
		t.Fatalf("messages %+v, want the await_subagents answer", msgs)
	}
	var got struct{ Subagents []subagentResult }
	if err := json.Unmarshal([]byte(msgs[0].Content), &got); err != nil {
		t.Fatalf("answer %q: %v", msgs[0].Content, err)
	}
	if len(got.Subagents) != 2 || string(got.Subagents[0].Data) != `"part 1"` ||
		got.Subagents[1].Data != nil || got.Subagents[1].Error == "" {
		t.Errorf("answer %s, want part 1 and an error for the broken subagent", msgs[0].Content)
	}
	if s.st.ToolCredits != 5 {
		t.Errorf("tool credits %d, want 5 (both subagents' work)", s.st.ToolCredits)
	}
}
