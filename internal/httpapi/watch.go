package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// watchPoll is how often the shared poller of a watched job looks for new
// documents.
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

	team, err := s.authenticateKey(r.WithContext(ctx), key)
	var limited *Error
	if errors.As(err, &limited) && limited.Code == "AUTH_RATE_LIMITED" {
		_ = c.Close(websocket.StatusTryAgainLater, limited.Message)
		return
	}
	if err != nil {
		_ = c.Close(closeAuthFailed, "Unauthorized")
		return
	}
	noteTeam(r.Context(), team.ID)
	release, ok := s.watchers.admit(team.ID)
	if !ok {
		_ = c.Close(websocket.StatusTryAgainLater, fmt.Sprintf("Too many watchers: this team has %d open, the most allowed", s.watchers.maxPerTeam))
		return
	}
	defer release()
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
	if isFinal(j.Status) {
		// Nothing will change: the rest of the documents, then the end.
		if _, err := s.sendDocuments(ctx, c, id, sent, -1); err == nil {
			finishWatch(ctx, c, j)
		}
		return
	}
	sub, leave := s.watchers.subscribe(id, sent)
	defer leave()
	for {
		select {
		case <-ctx.Done():
			return
		case <-sub.ready:
		}
		for _, ev := range sub.take() {
			if ev.err != nil {
				_ = c.Close(websocket.StatusInternalError, "Internal error")
				return
			}
			if ev.from > sent { // this watcher is behind the poller
				if sent, err = s.sendDocuments(ctx, c, id, sent, ev.from); err != nil {
					return
				}
			}
			for i, d := range ev.docs {
				if ev.from+i < sent {
					continue
				}
				if err := writeWS(ctx, c, watchMessage{Type: "document", Data: json.RawMessage(d)}); err != nil {
					return
				}
				sent++
			}
			if isFinal(ev.job.Status) {
				finishWatch(ctx, c, ev.job)
				return
			}
		}
	}
}

// sendDocuments sends the job's documents from index sent up to end (-1:
// all there are) read from the store, for a watcher that is behind the
// shared poller or watches a finished job, and returns the new count sent.
// A store failure closes the socket.
func (s *Server) sendDocuments(ctx context.Context, c *websocket.Conn, id string, sent, end int) (int, error) {
	for end < 0 || sent < end {
		n := 100
		if end >= 0 {
			n = min(n, end-sent)
		}
		docs, err := s.jobStore.Documents(ctx, id, sent, n)
		if err != nil {
			_ = c.Close(websocket.StatusInternalError, "Internal error")
			return sent, err
		}
		for _, d := range docs {
			if err := writeWS(ctx, c, watchMessage{Type: "document", Data: json.RawMessage(d)}); err != nil {
				return sent, err
			}
			sent++
		}
		if len(docs) < n {
			break
		}
	}
	return sent, nil
}

// finishWatch sends the last message of a finished job (done, or error
// for a failed or cancelled one) and closes normally.
func finishWatch(ctx context.Context, c *websocket.Conn, j store.Job) {
	if j.Status == store.JobCompleted {
		_ = writeWS(ctx, c, watchMessage{Type: "done"})
	} else {
		msg := j.Error
		if msg == "" {
			msg = "The job was " + j.Status + "."
		}
		_ = writeWS(ctx, c, watchMessage{Type: "error", Error: msg})
	}
	_ = c.Close(websocket.StatusNormalClosure, "")
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
