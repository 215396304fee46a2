// Package mailtest runs a real SMTP server on 127.0.0.1 for tests: it
// accepts mail (optionally only after PLAIN authentication) and records
// each message, parsed, for the test to wait on.
package mailtest

import (
	"bytes"
	"errors"
	"io"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// Message is one received mail.
type Message struct {
	From   string
	To     []string
	Header mail.Header
	Body   string
	Raw    []byte
}

// Server is a recording SMTP server.
type Server struct {
	Addr string
	Host string
	Port string

	user, pass string

	mu       sync.Mutex
	msgs     []Message
	changed  chan struct{}
	failNext int // temporary failures (451) still to answer
}

// Start runs a server until the test ends. With user set, MAIL is refused
// until the client authenticates with user and pass.
func Start(t testing.TB, user, pass string) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: l.Addr().String(), user: user, pass: pass, changed: make(chan struct{})}
	s.Host, s.Port, _ = net.SplitHostPort(s.Addr)
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &session{s: s}, nil }))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.MaxMessageBytes = 1 << 20
	srv.MaxRecipients = 50
	done := make(chan struct{})
	go func() { _ = srv.Serve(l); close(done) }()
	t.Cleanup(func() { _ = srv.Close(); _ = l.Close(); <-done })
	return s
}

// FailNext makes the next n messages fail with a temporary error (451).
func (s *Server) FailNext(n int) {
	s.mu.Lock()
	s.failNext = n
	s.mu.Unlock()
}

// Messages returns the messages received so far.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Wait returns the first message for which match is true, waiting up to
// timeout for it to arrive.
func (s *Server) Wait(t testing.TB, timeout time.Duration, match func(Message) bool) Message {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		for _, m := range s.msgs {
			if match(m) {
				s.mu.Unlock()
				return m
			}
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("mailtest: no matching message within %s; received %d", timeout, len(s.Messages()))
		}
	}
}

func (s *Server) add(m Message) {
	s.mu.Lock()
	s.msgs = append(s.msgs, m)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

type session struct {
	s      *Server
	authed bool
	from   string
	to     []string
}

func (x *session) AuthMechanisms() []string {
	if x.s.user == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (x *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if user != x.s.user || pass != x.s.pass {
			return errors.New("invalid credentials")
		}
		x.authed = true
		return nil
	}), nil
}

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	if x.s.user != "" && !x.authed {
		return smtp.ErrAuthRequired
	}
	x.from = from
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.to = append(x.to, to)
	return nil
}

func (x *session) Data(r io.Reader) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	x.s.mu.Lock()
	fail := x.s.failNext > 0
	if fail {
		x.s.failNext--
	}
	x.s.mu.Unlock()
	if fail {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	m := Message{From: x.from, To: x.to, Raw: raw}
	if pm, err := mail.ReadMessage(bytes.NewReader(raw)); err == nil {
		m.Header = pm.Header
		b, _ := io.ReadAll(pm.Body)
		m.Body = string(b)
	}
	x.s.add(m)
	return nil
}

func (x *session) Reset()        { x.from, x.to = "", nil }
func (x *session) Logout() error { return nil }

// Decoded returns the message's body with quoted-printable soft breaks
// and escapes undone (go-mail writes text as quoted-printable).
func (m Message) Decoded() string {
	if !strings.EqualFold(m.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		return m.Body
	}
	b, err := io.ReadAll(quotedPrintableReader(m.Body))
	if err != nil {
		return m.Body
	}
	return string(b)
}

func quotedPrintableReader(s string) io.Reader {
	return quotedprintable.NewReader(strings.NewReader(s))
}
