// Package errcode declares the errors a client of the API may be shown. It
// sits at the bottom of the import graph (it imports only the standard
// library), so each domain package declares its own: a Sentinel (New) is
// one kind of failure with its text for logs, its Class, its API code and
// what a client is shown; a Failure is one failure of a sentinel told in
// the client's terms, its cause kept for logs only.
//
// Lookup and Describe give the code and message of any error. The HTTP
// layer answers each Class with a status; this package knows no HTTP.
package errcode

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Class is what kind of failure a sentinel is; the HTTP layer answers each
// class with one status.
type Class uint8

// The classes. Unknown, the zero value, is that of an error no sentinel
// describes.
const (
	Unknown Class = iota
	// Invalid: the request is malformed, or asks for something this
	// server is not set up to do.
	Invalid
	// Unsupported: a valid request for a capability this server does not
	// provide (yet, or in this configuration); a Failure of this class
	// names the request field it is about (Field).
	Unsupported
	// Unauthenticated: the request has no valid API key.
	Unauthenticated
	// NoCredits: the team's credits do not cover the request.
	NoCredits
	// Forbidden: the request, or where it leads, is not allowed.
	Forbidden
	// NotFound: what the request names does not exist.
	NotFound
	// Timeout: the work did not finish within the request's timeout.
	Timeout
	// Conflict: what the request names is in a state that refuses it.
	Conflict
	// Gone: what the request names existed and has ended.
	Gone
	// Unprocessable: the request is valid, but what it points at cannot
	// be processed (too large, an invalid schema).
	Unprocessable
	// Exhausted: a limit on concurrent or stored work is reached.
	Exhausted
	// Failed: the target could not be scraped (the site, its TLS, an
	// action, its file).
	Failed
	// Unresolved: the target's host name does not resolve, which the
	// contract answers as a request that succeeded in reporting it.
	Unresolved
	// Upstream: a service this server relies on (the language model, the
	// search engine, the browser) failed.
	Upstream
	// Unavailable: a part of this server cannot be reached; retry later.
	Unavailable
)

// Sentinel is one kind of failure a client may be shown, declared once by
// its package with New and matched with errors.Is.
type Sentinel struct {
	text    string
	class   Class
	code    string
	message string
	lead    string
}

// New declares a sentinel error. text is its Error text, for logs and
// wrapping, with its package's prefix ("scrape: timed out"); a client is
// answered by class and code and shown message. message "" shows instead
// the Msg of a Failure of it, or else the text of the error that wraps it,
// as a sentence that starts with the sentinel's lead (see WithLead).
func New(text string, class Class, code, message string) *Sentinel {
	return &Sentinel{text: text, class: class, code: code, message: message}
}

// WithLead returns s with lead as how a message made from a wrapping
// error's text starts, for a sentinel whose text without its package
// prefix does not read as the start of a sentence ("scrape: tls error"
// leads "TLS error").
func (s *Sentinel) WithLead(lead string) *Sentinel {
	c := *s
	c.lead = lead
	return &c
}

func (s *Sentinel) Error() string { return s.text }

// Code is the API code of s ("SCRAPE_TIMEOUT").
func (s *Sentinel) Code() string { return s.code }

// leadText is how a message made from a text holding s starts: its lead,
// else its text without the package prefix ("scrape: unsupported file" is
// "Unsupported file" once a sentence).
func (s *Sentinel) leadText() string {
	if s.lead != "" {
		return s.lead
	}
	text := s.text
	if i := strings.Index(text, ": "); i >= 0 && !strings.ContainsAny(text[:i], " \t") {
		text = text[i+2:]
	}
	return text
}

// Failure is one failure of kind Kind told to a client as Msg (a sentence,
// shown as written), caused by Cause, which is for logs only: it may name
// internal hosts, addresses, file paths and Go packages. Its Error text,
// for logs, is Kind's text, Msg, then Cause's text.
type Failure struct {
	Kind  *Sentinel
	Msg   string
	Cause error // nil when Msg says it all
	// Field is the request field the failure is about, for an Unsupported
	// kind ("actions", "formats.screenshot").
	Field string
}

func (f *Failure) Error() string {
	s := f.Kind.Error()
	if f.Msg != "" {
		s += ": " + f.Msg
	}
	if f.Cause != nil {
		s += ": " + f.Cause.Error()
	}
	return s
}

// Unwrap gives Kind and Cause, so errors.Is matches the kind and any
// sentinel of the cause.
func (f *Failure) Unwrap() []error {
	if f.Cause == nil {
		return []error{f.Kind}
	}
	return []error{f.Kind, f.Cause}
}

// ClientMessage is Msg: what the API shows.
func (f *Failure) ClientMessage() string { return f.Msg }

// coded is a sentinel or a failure of one.
type coded interface {
	error
	sentinel() *Sentinel
}

func (s *Sentinel) sentinel() *Sentinel { return s }
func (f *Failure) sentinel() *Sentinel  { return f.Kind }

// Shown is what a client is told of an error.
type Shown struct {
	Class   Class
	Code    string
	Message string
	Field   string // the Failure's Field
}

// Lookup gives what a client is told of err: the class and code of the
// first sentinel of its chain (in errors.As order: an error before what it
// wraps, a Failure's kind before its cause) and the sentinel's message:
// its own, else a Failure's Msg, else err's text as a sentence, the
// sentinel's text and the package prefixes before it replaced by its lead
// ("scrape: browser: scrape: unsupported file: content type ..." reads
// "Unsupported file: content type ...."). ok is false when no sentinel is
// in the chain.
func Lookup(err error) (shown Shown, ok bool) {
	c, ok := errors.AsType[coded](err)
	if !ok {
		return Shown{}, false
	}
	s := c.sentinel()
	if s == nil {
		return Shown{}, false
	}
	shown = Shown{Class: s.class, Code: s.code, Message: message(err, s)}
	if f, ok := c.(*Failure); ok {
		shown.Field = f.Field
	}
	return shown, true
}

// ClassOf is the class of the first sentinel of err's chain (as Lookup
// finds it), Unknown when there is none.
func ClassOf(err error) Class {
	if c, ok := errors.AsType[coded](err); ok {
		if s := c.sentinel(); s != nil {
			return s.class
		}
	}
	return Unknown
}

// message is the text for the API user of err, which holds sentinel s.
func message(err error, s *Sentinel) string {
	if s.message != "" {
		return s.message
	}
	if f, ok := errors.AsType[*Failure](err); ok {
		if f.Msg != "" {
			return f.Msg
		}
		return Sentence(s.leadText())
	}
	text := err.Error()
	if i := strings.Index(text, s.text); i >= 0 {
		text = s.leadText() + text[i+len(s.text):]
	}
	return Sentence(text)
}

// Sentence is text with a capital first letter and a full stop (unless it
// ends with one, a "!" or a "?").
func Sentence(text string) string {
	text = strings.TrimSpace(text)
	if text == "" {
		return text
	}
	r, n := utf8.DecodeRuneInString(text)
	if u := unicode.ToUpper(r); u != r {
		text = string(u) + text[n:]
	}
	if !strings.HasSuffix(text, ".") && !strings.HasSuffix(text, "!") && !strings.HasSuffix(text, "?") {
		text += "."
	}
	return text
}

// UnknownCode is the code of an error no sentinel describes.
const UnknownCode = "UNKNOWN_ERROR"

// UnknownMessage is the message of an unexpected error: it names the id
// under which the error's full text was logged, and nothing of the text.
func UnknownMessage(errorID string) string {
	return "An unexpected error occurred. Please contact support, error id " + errorID
}

// Describe gives the API error code and message of err, for errors
// reported outside a response (the failed pages of a crawl or batch
// scrape, stored and sent in webhooks; a monitor's check; an agent's run).
// An error no sentinel describes (a cancelled context among them: there
// is no client to have gone away) is UnknownCode with UnknownMessage of a
// new errorID, a random UUID; the caller logs err with that id. errorID is
// "" for known errors.
func Describe(err error) (code, message, errorID string) {
	if s, ok := Lookup(err); ok {
		return s.Code, s.Message, ""
	}
	id := NewID()
	return UnknownCode, UnknownMessage(id), id
}

// NewID is a random (version 4) UUID, the id an unknown error is logged
// under.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails: it panics instead
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:])
}
