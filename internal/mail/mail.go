// Package mail sends plain-text mail through the operator's SMTP relay
// (SMTP_URL), with a deadline on every send and errors that say whether a
// retry may help.
package mail

import (
	"context"
	"errors"
	"fmt"
	netmail "net/mail"
	"net/url"
	"strconv"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// TLS modes of the relay connection.
const (
	// TLSMandatory: STARTTLS is required (smtp:// default).
	TLSMandatory = "mandatory"
	// TLSOpportunistic: STARTTLS when the relay offers it.
	TLSOpportunistic = "opportunistic"
	// TLSNone: plain text (a relay on the same host or network).
	TLSNone = "none"
	// TLSImplicit: TLS from the first byte (smtps://).
	TLSImplicit = "implicit"
)

// DefaultTimeout bounds one send (connection, dialogue and data).
const DefaultTimeout = 30 * time.Second

// Config is the SMTP relay.
type Config struct {
	Host     string
	Port     int
	Username string
	Password string
	// From is the sender, an address with an optional display name.
	From string
	// TLS is one of the TLS* modes.
	TLS string
	// Timeout bounds one send; default DefaultTimeout.
	Timeout time.Duration
}

// ParseURL reads SMTP_URL: smtp://[user[:password]@]host[:port][?from=
// addr&tls=mandatory|opportunistic|none] (port 587, STARTTLS required by
// default) or smtps://... (implicit TLS, port 465). from, when not empty,
// is SMTP_FROM and wins over the URL's from.
func ParseURL(raw, from string) (Config, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Config{}, errors.New("not a URL")
	}
	var c Config
	switch u.Scheme {
	case "smtp":
		c.TLS, c.Port = TLSMandatory, 587
	case "smtps":
		c.TLS, c.Port = TLSImplicit, 465
	default:
		return Config{}, fmt.Errorf("scheme %q: want smtp or smtps", u.Scheme)
	}
	c.Host = u.Hostname()
	if c.Host == "" {
		return Config{}, errors.New("no host")
	}
	if p := u.Port(); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Config{}, fmt.Errorf("port %q", p)
		}
		c.Port = n
	}
	if u.User != nil {
		c.Username = u.User.Username()
		c.Password, _ = u.User.Password()
	}
	q := u.Query()
	for k := range q {
		if k != "from" && k != "tls" {
			return Config{}, fmt.Errorf("unknown parameter %q: want from or tls", k)
		}
	}
	if t := q.Get("tls"); t != "" {
		if c.TLS == TLSImplicit {
			return Config{}, errors.New("tls: smtps is always TLS")
		}
		switch t {
		case TLSMandatory, TLSOpportunistic, TLSNone:
			c.TLS = t
		default:
			return Config{}, fmt.Errorf("tls %q: want mandatory, opportunistic or none", t)
		}
	}
	c.From = q.Get("from")
	if from != "" {
		c.From = from
	}
	if c.From == "" {
		return Config{}, errors.New("no sender: add ?from=address or set SMTP_FROM")
	}
	if _, err := netmail.ParseAddress(c.From); err != nil {
		return Config{}, fmt.Errorf("sender %q is not an address: %v", c.From, err)
	}
	return c, nil
}

// Message is one plain-text mail to one recipient.
type Message struct {
	To      string
	Subject string
	Text    string
	// Unsubscribe, when set, is the URL of the List-Unsubscribe header
	// (RFC 2369), announced for one-click unsubscription (RFC 8058) when
	// it is https.
	Unsubscribe string
}

// maxSubject bounds a subject, in bytes.
const maxSubject = 200

// Sender sends mail through a relay. It is safe for concurrent use.
type Sender struct {
	cfg Config
}

// NewSender returns a Sender for cfg.
func NewSender(cfg Config) *Sender {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	return &Sender{cfg: cfg}
}

// ErrPermanent marks a failure no retry fixes: a recipient or message the
// relay refuses (5xx), or a message that cannot be built.
var ErrPermanent = errors.New("mail: permanent failure")

// CheckAddress validates a recipient: a bare address (no display name,
// no line breaks) that net/mail reads back unchanged.
func CheckAddress(addr string) error {
	a, err := netmail.ParseAddress(addr)
	if err != nil {
		return err
	}
	if a.Name != "" || a.Address != addr || len(addr) > 254 || strings.ContainsAny(addr, "\r\n<>,;") {
		return errors.New("not a bare email address")
	}
	return nil
}

// Send sends m, within the configured timeout and ctx. An error wrapping
// ErrPermanent is not worth retrying.
func (s *Sender) Send(ctx context.Context, m Message) error {
	if err := CheckAddress(m.To); err != nil {
		return fmt.Errorf("%w: recipient %q: %v", ErrPermanent, m.To, err)
	}
	msg := gomail.NewMsg()
	if err := msg.From(s.cfg.From); err != nil {
		return fmt.Errorf("%w: sender: %v", ErrPermanent, err)
	}
	if err := msg.To(m.To); err != nil {
		return fmt.Errorf("%w: recipient: %v", ErrPermanent, err)
	}
	msg.Subject(oneLine(m.Subject, maxSubject))
	msg.SetDate()
	msg.SetMessageID()
	msg.SetGenHeader(gomail.Header("Auto-Submitted"), "auto-generated")
	if m.Unsubscribe != "" {
		u, err := url.Parse(m.Unsubscribe)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("%w: unsubscribe URL %q", ErrPermanent, m.Unsubscribe)
		}
		msg.SetListUnsubscribe(u.String())
		if u.Scheme == "https" {
			msg.SetListUnsubscribePost()
		}
	}
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)

	opts := []gomail.Option{gomail.WithPort(s.cfg.Port), gomail.WithTimeout(s.cfg.Timeout)}
	switch s.cfg.TLS {
	case TLSImplicit:
		opts = append(opts, gomail.WithSSL())
	case TLSOpportunistic:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	case TLSNone:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	if s.cfg.Username != "" {
		auth := gomail.SMTPAuthAutoDiscover
		if s.cfg.TLS == TLSNone {
			// The operator chose a plain-text relay (on the same host or
			// network): PLAIN is what such relays offer.
			auth = gomail.SMTPAuthPlainNoEnc
		}
		opts = append(opts, gomail.WithSMTPAuth(auth),
			gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.cfg.Password))
	}
	client, err := gomail.NewClient(s.cfg.Host, opts...)
	if err != nil {
		return fmt.Errorf("%w: relay: %v", ErrPermanent, err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	if err := client.DialAndSendWithContext(ctx, msg); err != nil {
		var se *gomail.SendError
		if errors.As(err, &se) && se.ErrorCode() >= 500 && se.ErrorCode() < 600 {
			return fmt.Errorf("%w: %v", ErrPermanent, err)
		}
		return fmt.Errorf("mail: send: %w", err)
	}
	return nil
}

// oneLine makes s a single line of at most n bytes (line breaks become
// spaces, a cut keeps whole UTF-8 characters).
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
