package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
	"github.com/go-chi/chi/v5"
	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

// Close codes of the watcher (reference §5.5).
const (
	closeAuthFailed websocket.StatusCode = 3000
	closeForbidden  websocket.StatusCode = 3003
)

// watchPoll is how often the watcher looks for new documents.
const watchPoll = 250 * time.Millisecond

// isWebSocket reports whether r asks for a WebSocket upgrade.
func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// isWatchPath reports whether path is a job's own path (/v2/crawl/{id} or
// /v2/batch/scrape/{id}), the only place a watcher is served. Any id
// segment counts (but the names of the other crawl routes): the watcher
// answers a malformed one with close code 1008, which it can only do after
// the upgrade.
func isWatchPath(path string) bool {
	for _, prefix := range []string{"/v2/crawl/", "/v2/batch/scrape/"} {
		if id, ok := strings.CutPrefix(path, prefix); ok {
			switch id {
			case "", "active", "ongoing", "params-preview":
				return false
			}
			return !strings.Contains(id, "/")
		}
	}
	return false
}

// watchMessage is one message of the watcher.
type watchMessage struct {
	Type  string `json:"type"`
	Data  any    `json:"data,omitempty"`
	Error string `json:"error,omitempty"`
}

// watch streams a crawl or batch scrape over a WebSocket: a catchup with the
// status and documents so far, then each new document, then done (or error
// for a failed or cancelled job). The key comes from the Authorization
// header or, as browsers cannot set headers, from Sec-WebSocket-Protocol,
// which is echoed as the accepted subprotocol.
func (s *Server) watch(w http.ResponseWriter, r *http.Request, kind string) {
	var protos []string
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			if p = strings.TrimSpace(p); p != "" {
				protos = append(protos, p)
			}
		}
	}
	key := bearer(r.Header.Get("Authorization"))
	if key == "" && len(protos) > 0 {
		key = protos[0]
	}
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: protos, InsecureSkipVerify: true})
	if err != nil {
		return // Accept answered the bad handshake
	}
	defer c.CloseNow()
	ctx := c.CloseRead(r.Context())

	team, err := s.auth.Authenticate(ctx, key)
	if err != nil {
		_ = c.Close(closeAuthFailed, "Unauthorized")
		return
	}
	noteTeam(r.Context(), team.ID)
	id := chi.URLParam(r, "id")
	if _, err := uuid.Parse(id); err != nil {
		_ = c.Close(websocket.StatusPolicyViolation, "Invalid job ID format")
		return
	}
	j, err := s.jobStore.Job(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound) || (err == nil && j.Kind != kind):
		_ = c.Close(websocket.StatusPolicyViolation, "Job not found")
		return
	case err != nil:
		_ = c.Close(websocket.StatusInternalError, "Internal error")
		return
	case j.TeamID != team.ID:
		_ = c.Close(closeForbidden, "Forbidden")
		return
	}

	status, err := s.jobStatus(ctx, r, j, 0, maxWatchCatchup)
	if err != nil {
		_ = c.Close(websocket.StatusInternalError, "Internal error")
		return
	}
	status.Next = ""
	sent := len(status.Data)
	if err := writeWS(ctx, c, watchMessage{Type: "catchup", Data: status}); err != nil {
		return
	}
	tick := time.NewTicker(watchPoll)
	defer tick.Stop()
	for {
		j, err = s.jobStore.Job(ctx, id)
		if err != nil {
			_ = c.Close(websocket.StatusInternalError, "Internal error")
			return
		}
		for {
			docs, err := s.jobStore.Documents(ctx, id, sent, 100)
			if err != nil {
				_ = c.Close(websocket.StatusInternalError, "Internal error")
				return
			}
			for _, d := range docs {
				if err := writeWS(ctx, c, watchMessage{Type: "document", Data: json.RawMessage(d)}); err != nil {
					return
				}
			}
			sent += len(docs)
			if len(docs) < 100 {
				break
			}
		}
		switch j.Status {
		case store.JobCompleted:
			_ = writeWS(ctx, c, watchMessage{Type: "done"})
			_ = c.Close(websocket.StatusNormalClosure, "")
			return
		case store.JobFailed, store.JobCancelled:
			msg := j.Error
			if msg == "" {
				msg = "The job was " + j.Status + "."
			}
			_ = writeWS(ctx, c, watchMessage{Type: "error", Error: msg})
			_ = c.Close(websocket.StatusNormalClosure, "")
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// maxWatchCatchup bounds the documents sent in the catchup message; the
// rest follow as document messages.
const maxWatchCatchup = 1000

func writeWS(ctx context.Context, c *websocket.Conn, m watchMessage) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return c.Write(wctx, websocket.MessageText, b)
}
