package interact

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/firegate/firegate/internal/testenv"
)

// benchCall sends a command and reads until its answer.
func benchCall(b *testing.B, ctx context.Context, c *websocket.Conn, id int64, sessionID, method string, params any) json.RawMessage {
	msg := map[string]any{"id": id, "method": method, "params": params}
	if sessionID != "" {
		msg["sessionId"] = sessionID
	}
	data, _ := json.Marshal(msg)
	if err := c.Write(ctx, websocket.MessageText, data); err != nil {
		b.Fatal(err)
	}
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		var m cdpMessage
		if json.Unmarshal(data, &m) == nil && m.ID != nil && *m.ID == id {
			if m.Error != nil {
				b.Fatalf("%s: %s", method, m.Error.Message)
			}
			return m.Result
		}
	}
}

// BenchmarkCDPEvaluate measures one Runtime.evaluate round trip on a
// session's page: through the proxy (cdpUrl) and on a direct connection
// to Chrome's endpoint, which the proxy's own connection is.
func BenchmarkCDPEvaluate(b *testing.B) {
	m := New(Config{Store: testStore(b), Browser: testPool(b), Log: testenv.Logger(b)})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rec, err := m.Create(ctx, CreateParams{TeamID: team, TTL: time.Hour, ActivityTTL: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer m.Delete(context.WithoutCancel(ctx), team, rec.ID)
	dt, err := m.live[rec.ID].sess.DevTools()
	if err != nil {
		b.Fatal(err)
	}
	tok, _ := m.CDPToken(rec.ID)
	cs := cdpServer(b, m).URL
	for _, tc := range []struct{ name, url string }{
		{"proxy", "ws" + strings.TrimPrefix(cs, "http") + "/cdp/" + rec.ID + "?token=" + tok},
		{"direct", dt.URL},
	} {
		b.Run(tc.name, func(b *testing.B) {
			c, _, err := websocket.Dial(ctx, tc.url, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer c.CloseNow()
			var at struct {
				SessionID string `json:"sessionId"`
			}
			_ = json.Unmarshal(benchCall(b, ctx, c, 1, "", "Target.attachToTarget", map[string]any{"targetId": dt.TargetID, "flatten": true}), &at)
			id := int64(2)
			b.ResetTimer()
			for b.Loop() {
				id++
				benchCall(b, ctx, c, id, at.SessionID, "Runtime.evaluate", map[string]any{"expression": "1+1", "returnByValue": true})
			}
		})
	}
}
