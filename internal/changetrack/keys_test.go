package changetrack

import (
	"encoding/json"
	"testing"
)

func TestCompareKeys(t *testing.T) {
	for _, tc := range []struct {
		prev, cur string
		keys      []string
		want      string
	}{
		{`{"a":1,"b":{"x":1,"y":2}}`, `{"b":{"y":2,"x":1},"a":1}`, nil, `{}`},
		{`{"a":1,"b":2}`, `{"a":1,"b":3,"c":4}`, nil, `{"b":{"previous":2,"current":3},"c":{"previous":null,"current":4}}`},
		{`{"a":1,"b":2}`, `{"a":5,"b":3}`, []string{"b"}, `{"b":{"previous":2,"current":3}}`},
		{`[1]`, `{"a":1}`, nil, `{"a":{"previous":null,"current":1}}`},
		{``, `{"a":null}`, nil, `{}`},
	} {
		got, err := json.Marshal(CompareKeys(json.RawMessage(tc.prev), json.RawMessage(tc.cur), tc.keys))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != tc.want {
			t.Errorf("CompareKeys(%s, %s, %v) = %s, want %s", tc.prev, tc.cur, tc.keys, got, tc.want)
		}
	}
	if !JSONEqual(nil, nil) || JSONEqual(nil, []byte(`null`)) || !JSONEqual([]byte(`{"a":[1, 2]}`), []byte(`{"a":[1,2]}`)) {
		t.Error("JSONEqual")
	}
}
