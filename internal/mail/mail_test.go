package mail_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firegate/firegate/internal/mail"
	"github.com/firegate/firegate/internal/mail/mailtest"
)

func TestParseURL(t *testing.T) {
	t.Parallel()
	c, err := mail.ParseURL("smtp://user:p%40ss@relay.example.com?from=Alerts%20%3Calerts@example.com%3E", "")
	if err != nil || c.Host != "relay.example.com" || c.Port != 587 || c.Username != "user" || c.Password != "p@ss" ||
		c.From != "Alerts <alerts@example.com>" || c.TLS != mail.TLSMandatory {
		t.Errorf("smtp URL = %+v, %v", c, err)
	}
	c, err = mail.ParseURL("smtps://relay.example.com:2465", "noreply@example.com")
	if err != nil || c.Port != 2465 || c.TLS != mail.TLSImplicit || c.From != "noreply@example.com" {
		t.Errorf("smtps URL = %+v, %v", c, err)
	}
	c, err = mail.ParseURL("smtp://127.0.0.1:2525?tls=none&from=a@example.com", "b@example.com")
	if err != nil || c.TLS != mail.TLSNone || c.From != "b@example.com" {
		t.Errorf("SMTP_FROM over from= : %+v, %v", c, err)
	}
	for _, bad := range []string{
		"http://relay.example.com?from=a@example.com", "smtp://?from=a@example.com", "smtp://relay.example.com",
		"smtp://relay.example.com?from=not-an-address", "smtp://relay.example.com:99999?from=a@example.com",
		"smtp://relay.example.com?from=a@example.com&tls=maybe", "smtps://relay.example.com?from=a@example.com&tls=none",
		"smtp://relay.example.com?from=a@example.com&bogus=1", "::not a url",
	} {
		if _, err := mail.ParseURL(bad, ""); err == nil {
			t.Errorf("ParseURL(%q) accepted", bad)
		}
	}
}

func TestCheckAddress(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"a@example.com", "first.last+tag@sub.example.org"} {
		if err := mail.CheckAddress(ok); err != nil {
			t.Errorf("CheckAddress(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a", "A <a@example.com>", "a@example.com\r\nBcc: x@example.com", "a@example.com, b@example.com",
		"<a@example.com>", strings.Repeat("a", 250) + "@example.com"} {
		if err := mail.CheckAddress(bad); err == nil {
			t.Errorf("CheckAddress(%q) accepted", bad)
		}
	}
}

func relay(t *testing.T, srv *mailtest.Server, user, pass string) *mail.Sender {
	port, _ := strconv.Atoi(srv.Port)
	return mail.NewSender(mail.Config{Host: srv.Host, Port: port, Username: user, Password: pass,
		From: "Firegate <monitor@firegate.test>", TLS: mail.TLSNone, Timeout: 10 * time.Second})
}

// TestSend sends through an authenticating relay: the message arrives
// with its headers, one line of subject and the unsubscribe header.
func TestSend(t *testing.T) {
	t.Parallel()
	srv := mailtest.Start(t, "relay-user", "relay-pass")
	s := relay(t, srv, "relay-user", "relay-pass")
	err := s.Send(t.Context(), mail.Message{To: "someone@example.com", Subject: "Prices\r\nBcc: evil@example.com changed",
		Text: "Hello\nwith a long line " + strings.Repeat("é", 100), Unsubscribe: "https://api.firegate.test/v2/monitor/email/unsubscribe?token=abc"})
	if err != nil {
		t.Fatal(err)
	}
	m := srv.Wait(t, 10*time.Second, func(mailtest.Message) bool { return true })
	if len(m.To) != 1 || m.To[0] != "someone@example.com" || m.From != "monitor@firegate.test" {
		t.Errorf("envelope = %s -> %v", m.From, m.To)
	}
	if got := m.Header.Get("Subject"); got != "Prices Bcc: evil@example.com changed" {
		t.Errorf("subject = %q", got)
	}
	if m.Header.Get("Bcc") != "" || strings.Contains(string(m.Raw), "\nBcc:") {
		t.Errorf("a Bcc header was injected:\n%s", m.Raw)
	}
	if got := m.Header.Get("List-Unsubscribe"); got != "<https://api.firegate.test/v2/monitor/email/unsubscribe?token=abc>" {
		t.Errorf("List-Unsubscribe = %q", got)
	}
	if m.Header.Get("List-Unsubscribe-Post") != "List-Unsubscribe=One-Click" || m.Header.Get("Auto-Submitted") != "auto-generated" {
		t.Errorf("headers = %v", m.Header)
	}
	if !strings.Contains(m.Decoded(), "Hello\r\nwith a long line "+strings.Repeat("é", 100)) && !strings.Contains(m.Decoded(), "Hello\nwith a long line "+strings.Repeat("é", 100)) {
		t.Errorf("body = %q", m.Decoded())
	}

	// Wrong credentials: the relay refuses (535), a failure no retry fixes.
	err = relay(t, srv, "relay-user", "wrong").Send(t.Context(), mail.Message{To: "someone@example.com", Subject: "x", Text: "x"})
	if err == nil {
		t.Error("send with wrong credentials succeeded")
	}
}

// TestSendRefusesInjection: a recipient carrying a header is refused
// before anything is sent.
func TestSendRefusesInjection(t *testing.T) {
	t.Parallel()
	srv := mailtest.Start(t, "", "")
	s := relay(t, srv, "", "")
	err := s.Send(t.Context(), mail.Message{To: "a@example.com\r\nBcc: evil@example.com", Subject: "x", Text: "x"})
	if !errors.Is(err, mail.ErrPermanent) {
		t.Errorf("Send = %v, want ErrPermanent", err)
	}
	if n := len(srv.Messages()); n != 0 {
		t.Errorf("%d messages sent", n)
	}
}

// TestSendTemporaryFailure: a 451 is an error worth retrying; the next
// attempt goes through.
func TestSendTemporaryFailure(t *testing.T) {
	t.Parallel()
	srv := mailtest.Start(t, "", "")
	srv.FailNext(1)
	s := relay(t, srv, "", "")
	msg := mail.Message{To: "a@example.com", Subject: "x", Text: "x"}
	err := s.Send(t.Context(), msg)
	if err == nil || errors.Is(err, mail.ErrPermanent) {
		t.Fatalf("Send during a temporary failure = %v, want a temporary error", err)
	}
	if err := s.Send(t.Context(), msg); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if n := len(srv.Messages()); n != 1 {
		t.Errorf("%d messages received, want 1", n)
	}
}

// TestSendDeadline: a relay that accepts the connection and never speaks
// fails the send at the deadline instead of holding it.
func TestSendDeadline(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	_, p, _ := net.SplitHostPort(l.Addr().String())
	port, _ := strconv.Atoi(p)
	s := mail.NewSender(mail.Config{Host: "127.0.0.1", Port: port, From: "a@example.com", TLS: mail.TLSNone, Timeout: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := s.Send(ctx, mail.Message{To: "b@example.com", Subject: "x", Text: "x"}); err == nil {
		t.Fatal("Send to a silent relay succeeded")
	}
	if ctx.Err() != nil {
		t.Fatal("Send to a silent relay outlived its own deadline")
	}
}
