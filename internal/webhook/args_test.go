package webhook

import (
	"encoding/json"
	"fmt"
	"testing"
)

type testOwner struct{}

func (testOwner) Kind() string  { return "test_webhook" }
func (testOwner) IDKey() string { return "test_id" }

// TestArgsRoundTripAndOldRows: Args encode and decode with their id, and
// deliveries queued before the owners shared Args (the id under "job",
// "check" or "run") still decode with it.
func TestArgsRoundTripAndOldRows(t *testing.T) {
	a := Args[testOwner]{ID: "j1", Event: "crawl.page", Spec: Spec{URL: "https://hooks.example/x"}, Body: json.RawMessage(`{"a":1}`)}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back Args[testOwner]
	if err := json.Unmarshal(b, &back); err != nil || back.ID != "j1" || back.Spec.URL != a.Spec.URL || string(back.Body) != `{"a":1}` {
		t.Fatalf("round trip: %+v %v", back, err)
	}
	if back.Kind() != "test_webhook" {
		t.Errorf("Kind %q", back.Kind())
	}
	spec, body, attrs := back.Delivery()
	if spec.URL != a.Spec.URL || string(body) != `{"a":1}` || fmt.Sprint(attrs) != "[test_id j1 event crawl.page]" {
		t.Errorf("Delivery: %v %s %v", spec, body, attrs)
	}
	for _, field := range []string{"job", "check", "run"} {
		var old Args[testOwner]
		row := `{"` + field + `":"old-1","event":"e","spec":{"url":"https://hooks.example/y"},"body":{"b":2}}`
		if err := json.Unmarshal([]byte(row), &old); err != nil || old.ID != "old-1" || old.Spec.URL != "https://hooks.example/y" || string(old.Body) != `{"b":2}` {
			t.Errorf("row with %q: %+v %v", field, old, err)
		}
	}
}
