package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/firegate/firegate/internal/actions"
	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/interact"
)

// LiveViews opens sessions by their live-view tokens; *interact.Manager
// implements it.
type LiveViews interface {
	LiveTokens(id string) (view, interactive string, ok bool)
	Live(id, token string) (interact.LiveView, error)
}

// liveRoutes serves the live view of sessions (a page, its JPEG stream
// and its input) and their DevTools connections, authenticated by the
// session's token in the URL (a browser or a CDP client opens them without
// an API key).
func (s *Server) liveRoutes(r chi.Router) {
	for _, base := range []string{"/v2/interact/{id}", "/v2/browser/{id}"} {
		r.Get(base+"/live", s.handle(s.handleLivePage))
		r.Get(base+"/live/stream", s.handle(s.handleLiveStream))
		r.Post(base+"/live/input", s.handle(s.handleLiveInput))
		r.Get(base+"/cdp", s.handle(s.handleCDP))
	}
}

// DevToolsSessions serves the DevTools connections of sessions (cdpUrl);
// *interact.Manager implements it.
type DevToolsSessions interface {
	CDPToken(id string) (string, bool)
	ServeCDP(w http.ResponseWriter, r *http.Request, id, token string) error
}

// cdpURL returns the DevTools URL of a session held by this process, ""
// when it has none.
func (s *Server) cdpURL(r *http.Request, id string) string {
	d, ok := s.interact.(DevToolsSessions)
	if !ok {
		return ""
	}
	token, ok := d.CDPToken(id)
	if !ok {
		return ""
	}
	base := s.baseURL(r)
	if rest, ok := strings.CutPrefix(base, "https://"); ok {
		base = "wss://" + rest
	} else if rest, ok := strings.CutPrefix(base, "http://"); ok {
		base = "ws://" + rest
	}
	return base + "/v2/interact/" + id + "/cdp?token=" + url.QueryEscape(token)
}

// handleCDP serves GET /v2/interact/{id}/cdp?token=: a WebSocket speaking
// the DevTools protocol to the session's browser context only.
func (s *Server) handleCDP(w http.ResponseWriter, r *http.Request) error {
	d, ok := s.interact.(DevToolsSessions)
	if !ok {
		return errLiveNotFound
	}
	err := d.ServeCDP(w, r, chi.URLParam(r, "id"), r.URL.Query().Get("token"))
	if errors.Is(err, interact.ErrNotFound) {
		return errLiveNotFound
	}
	return err
}

// liveURLs returns the live view URLs of a session held by this process
// with its web view streamed.
func (s *Server) liveURLs(r *http.Request, id string) (view, interactive string, ok bool) {
	lv, is := s.interact.(LiveViews)
	if !is {
		return "", "", false
	}
	vt, it, ok := lv.LiveTokens(id)
	if !ok {
		return "", "", false
	}
	base := s.baseURL(r) + "/v2/interact/" + id + "/live?token="
	return base + url.QueryEscape(vt), base + url.QueryEscape(it), true
}

// errLiveNotFound answers a live route with an unknown session or token.
var errLiveNotFound = &Error{Status: http.StatusNotFound, Code: "NOT_FOUND",
	Message: "Browser session not found: the session has ended, is held by another server process, or the token is wrong."}

// liveView opens the session of a live route.
func (s *Server) liveView(r *http.Request) (interact.LiveView, error) {
	lv, ok := s.interact.(LiveViews)
	if !ok {
		return interact.LiveView{}, errLiveNotFound
	}
	v, err := lv.Live(chi.URLParam(r, "id"), r.URL.Query().Get("token"))
	if err != nil {
		return v, errLiveNotFound
	}
	return v, nil
}

// livePage is the viewer: the stream in an image; with the interactive
// token, clicks (scaled to the page's viewport) and keys are sent back.
var livePage = template.Must(template.New("live").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Live view</title>
<style>html,body{margin:0;background:#111;color:#ccc;font:13px sans-serif}#v{display:block;max-width:100vw;max-height:calc(100vh - 20px);margin:0 auto;outline:none}#s{height:20px;text-align:center}</style></head>
<body><div id="s">{{if .Interactive}}interactive: click the page, type to send keys{{else}}view only{{end}}</div>
<img id="v" tabindex="0" alt="live view" src="{{.Stream}}">
{{if .Interactive}}<script>
(() => {
  const img = document.getElementById('v'), vw = {{.Width}}, vh = {{.Height}}, input = {{.Input}};
  const send = (ev) => fetch(input, {method: 'POST', headers: {'Content-Type': 'application/json'}, body: JSON.stringify(ev)});
  img.addEventListener('click', (e) => {
    const r = img.getBoundingClientRect();
    img.focus();
    send({type: 'click', x: (e.clientX - r.left) * vw / r.width, y: (e.clientY - r.top) * vh / r.height});
  });
  const named = new Set(['Enter', 'Tab', 'Backspace', 'Delete', 'Escape', 'ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown']);
  img.addEventListener('keydown', (e) => {
    if (named.has(e.key)) { send({type: 'key', key: e.key}); e.preventDefault(); }
    else if (e.key.length === 1 && !e.ctrlKey && !e.metaKey) { send({type: 'key', text: e.key}); e.preventDefault(); }
  });
})();
</script>{{end}}
</body></html>
`))

// liveHeaders keep the page and its token out of caches, referrers and
// frames of other sites.
func liveHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Security-Policy", "default-src 'none'; img-src 'self'; connect-src 'self'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-ancestors 'self'")
}

// handleLivePage serves GET /v2/interact/{id}/live?token=.
func (s *Server) handleLivePage(w http.ResponseWriter, r *http.Request) error {
	v, err := s.liveView(r)
	if err != nil {
		return err
	}
	token := url.QueryEscape(r.URL.Query().Get("token"))
	width, height := v.Session.Viewport()
	liveHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	return livePage.Execute(w, map[string]any{
		"Interactive": v.Interactive, "Width": width, "Height": height,
		"Stream": template.URL("live/stream?token=" + token), "Input": "live/input?token=" + token,
	})
}

// handleLiveStream serves the frames as multipart/x-mixed-replace JPEGs
// until the client leaves or the session ends. One viewer per session:
// another answers 409.
func (s *Server) handleLiveStream(w http.ResponseWriter, r *http.Request) error {
	v, err := s.liveView(r)
	if err != nil {
		return err
	}
	width, height := v.Session.Viewport()
	frames, err := v.Session.Screencast(r.Context(), width, height)
	if errors.Is(err, browser.ErrViewerBusy) {
		return &Error{Status: http.StatusConflict, Code: "LIVE_VIEW_BUSY", Message: "Conflict: this session's live view is open elsewhere; one viewer at a time."}
	}
	if err != nil {
		return errLiveNotFound
	}
	const boundary = "frame"
	liveHeaders(w)
	w.Header().Set("Content-Type", "multipart/x-mixed-replace; boundary="+boundary)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	for f := range frames {
		if _, err := fmt.Fprintf(w, "--%s\r\nContent-Type: image/jpeg\r\nContent-Length: %d\r\n\r\n", boundary, len(f.JPEG)); err != nil {
			break
		}
		if _, err := w.Write(f.JPEG); err != nil {
			break
		}
		if _, err := io.WriteString(w, "\r\n"); err != nil {
			break
		}
		if err := rc.Flush(); err != nil {
			break
		}
	}
	return nil
}

// liveInputTimeout bounds sending one click or key.
const liveInputTimeout = 10 * time.Second

// liveInput is a click or a key from the viewer.
type liveInput struct {
	Type string  `json:"type"` // click, key
	X    float64 `json:"x"`
	Y    float64 `json:"y"`
	Text string  `json:"text"`
	Key  string  `json:"key"`
}

// handleLiveInput serves POST .../live/input: interactive token only.
func (s *Server) handleLiveInput(w http.ResponseWriter, r *http.Request) error {
	v, err := s.liveView(r)
	if err != nil {
		return err
	}
	if !v.Interactive {
		return &Error{Status: http.StatusForbidden, Code: "FORBIDDEN", Message: "Forbidden: this live view is view-only; use the interactiveLiveViewUrl to send input."}
	}
	var in liveInput
	dec := json.NewDecoder(io.LimitReader(r.Body, 4096))
	if err := dec.Decode(&in); err != nil {
		return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: "Bad Request: the body must be {type:\"click\",x,y} or {type:\"key\",text|key}"}
	}
	ctx, cancel := context.WithTimeout(r.Context(), liveInputTimeout)
	defer cancel()
	width, height := v.Session.Viewport()
	switch {
	case in.Type == "click" && in.X >= 0 && in.Y >= 0 && in.X <= float64(width) && in.Y <= float64(height):
		err = v.Session.Click(ctx, in.X, in.Y)
	case in.Type == "key" && (in.Key != "") != (in.Text != "") && len(in.Text) <= 100 && !strings.ContainsAny(in.Key, "\x00"):
		if in.Key != "" {
			var ae *actions.Error
			if errors.As(actions.Validate([]actions.Action{{Type: actions.TypePress, Key: in.Key}}), &ae) {
				return &Error{Status: http.StatusBadRequest, Code: "LIVE_INPUT_FAILED", Message: "The input could not be sent to the page: " + ae.Reason + "."}
			}
		}
		err = v.Session.Key(ctx, in.Text, in.Key)
	default:
		return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: fmt.Sprintf("Bad Request: a click needs x in 0..%d and y in 0..%d; a key needs text (at most 100 characters) or a key name", width, height)}
	}
	if errors.Is(err, browser.ErrSessionClosed) {
		return errLiveNotFound
	}
	if err != nil {
		return s.liveInputError(ctx, err)
	}
	v.Touch(r.Context())
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// liveInputError is the answer to an input the session's page did not
// take: a deadline says so; any other failure is the browser's (its text
// may name the DevTools address and Go packages), logged under an error id
// that the message names.
func (s *Server) liveInputError(ctx context.Context, err error) *Error {
	msg := "The input could not be sent to the page within " + liveInputTimeout.String() + "."
	if !errors.Is(err, context.DeadlineExceeded) {
		msg = "The input could not be sent to the page. " + s.unknown(ctx, err)
	}
	return &Error{Status: http.StatusBadRequest, Code: "LIVE_INPUT_FAILED", Message: msg, err: err}
}
