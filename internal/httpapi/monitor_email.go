package httpapi

import (
	"context"
	"encoding/json"
	"html/template"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/firegate/firegate/internal/monitor"
)

// MonitorEmails answers the confirm and unsubscribe links of monitor
// emails; *monitor.Service implements it. The server uses it when its
// Monitors implements it too.
type MonitorEmails interface {
	EmailEnabled() bool
	ConfirmEmail(ctx context.Context, token string) (monitor.EmailResult, error)
	UnsubscribeEmail(ctx context.Context, token string) (monitor.EmailResult, error)
}

// monitorEmail reports whether email notifications can be sent.
func (s *Server) monitorEmail() bool {
	em, ok := s.monitors.(MonitorEmails)
	return ok && em.EmailEnabled()
}

// maxEmailBody bounds the body of the email routes.
const maxEmailBody = 8 << 10

// monitorEmailRoutes serves POST /v2/monitor/email/{confirm,unsubscribe}
// (body {token}, a form with token, or ?token= for one-click
// unsubscription, RFC 8058) without an API key: the signed token is the
// authority. GET on the same paths, where the links in the emails lead,
// shows a page with a button that posts, so that a mail scanner following
// links confirms and unsubscribes nothing.
func (s *Server) monitorEmailRoutes(r chi.Router) {
	for _, action := range []string{"confirm", "unsubscribe"} {
		r.Get("/v2/monitor/email/"+action, s.handle(s.emailPage(action)))
		r.Post("/v2/monitor/email/"+action, s.handle(s.emailAction(action)))
	}
}

var emailPageTmpl = template.Must(template.New("email").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>{{.Title}}</title></head>
<body style="font-family:sans-serif;max-width:36em;margin:3em auto">
<h1>{{.Title}}</h1><p>{{.Text}}</p>
{{if .Token}}<form method="post"><input type="hidden" name="token" value="{{.Token}}"><button type="submit">{{.Button}}</button></form>{{end}}
</body></html>`))

type emailPageData struct{ Title, Text, Token, Button string }

func writeEmailPage(w http.ResponseWriter, status int, d emailPageData) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	_ = emailPageTmpl.Execute(w, d)
}

func (s *Server) emailPage(action string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if !s.monitorEmail() {
			return errEmailNotConfigured()
		}
		tok := r.URL.Query().Get("token")
		if tok == "" {
			return badQuery("token", "token is required: open the link from the email")
		}
		d := emailPageData{Title: "Confirm change emails", Button: "Confirm", Token: tok,
			Text: "Confirm that you want an email each time this monitor's check finds changes."}
		if action == "unsubscribe" {
			d = emailPageData{Title: "Unsubscribe", Button: "Unsubscribe", Token: tok,
				Text: "Stop the change emails of this monitor to your address."}
		}
		writeEmailPage(w, http.StatusOK, d)
		return nil
	}
}

func (s *Server) emailAction(action string) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		em, ok := s.monitors.(MonitorEmails)
		if !ok || !em.EmailEnabled() {
			return errEmailNotConfigured()
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEmailBody))
		if err != nil {
			return &Error{Status: http.StatusRequestEntityTooLarge, Code: "PAYLOAD_TOO_LARGE", Message: "Request body too large"}
		}
		ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		form := ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data"
		tok := ""
		switch {
		case form:
			vals, _ := url.ParseQuery(string(body))
			tok = vals.Get("token")
		case len(strings.TrimSpace(string(body))) > 0:
			var b struct {
				Token *string `json:"token"`
			}
			if err := json.Unmarshal(body, &b); err != nil {
				return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: "Bad Request: the body is not JSON {\"token\": string}",
					Details: []FieldError{{Path: []any{"token"}, Message: "Expected string", Code: codeInvalidType}}}
			}
			if b.Token != nil {
				tok = *b.Token
			}
		}
		if tok == "" {
			tok = r.URL.Query().Get("token") // one-click unsubscription
		}
		if tok == "" {
			return &Error{Status: http.StatusBadRequest, Code: "BAD_REQUEST", Message: "token is required",
				Details: []FieldError{{Path: []any{"token"}, Message: "Required", Code: codeInvalidType}}}
		}
		var res monitor.EmailResult
		if action == "confirm" {
			res, err = em.ConfirmEmail(r.Context(), tok)
		} else {
			res, err = em.UnsubscribeEmail(r.Context(), tok)
		}
		if form {
			if err != nil {
				e := toAPIError(err)
				if e.Status >= 500 {
					return err
				}
				writeEmailPage(w, e.Status, emailPageData{Title: "This link does not work", Text: e.Message})
				return nil
			}
			d := emailPageData{Title: "Confirmed", Text: res.Email + " will receive an email when this monitor's check finds changes."}
			if action == "unsubscribe" {
				d = emailPageData{Title: "Unsubscribed", Text: res.Email + " will receive no more emails from this monitor."}
			}
			writeEmailPage(w, http.StatusOK, d)
			return nil
		}
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, map[string]any{"success": true, "data": res})
		return nil
	}
}
