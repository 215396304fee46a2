package changetrack

import (
	"bytes"
	"encoding/json"
	"sort"
)

// KeyChange is one key of a JSON object whose value differs between two
// versions: its previous and current value (null where the key is absent).
type KeyChange struct {
	Previous json.RawMessage `json:"previous"`
	Current  json.RawMessage `json:"current"`
}

// CompareKeys compares two JSON objects key by key, values by meaning
// (spacing and member order aside), and returns each key whose value
// differs. keys, when non-nil, are the keys compared; otherwise every key
// of either object, sorted. A value that is not an object (or none) counts
// as an empty object.
func CompareKeys(prev, cur json.RawMessage, keys []string) map[string]KeyChange {
	before, now := Members(prev), Members(cur)
	if keys == nil {
		for k := range before {
			keys = append(keys, k)
		}
		for k := range now {
			if _, ok := before[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
	}
	out := map[string]KeyChange{}
	for _, k := range keys {
		p, c := orNull(before[k]), orNull(now[k])
		if !JSONEqual(p, c) {
			out[k] = KeyChange{Previous: p, Current: c}
		}
	}
	return out
}

// Members decodes a JSON object into its members; nil when raw is not an
// object.
func Members(raw json.RawMessage) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// JSONEqual compares two JSON values by meaning (member order and spacing
// aside); two empty values are equal, an empty and a present one are not,
// and values that are not JSON compare byte for byte.
func JSONEqual(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	// Values decoded from JSON (maps, slices, strings, float64s, bools,
	// nil) always encode again.
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

func orNull(v json.RawMessage) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage("null")
	}
	return v
}
