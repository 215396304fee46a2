package interact

import (
	"context"
	"errors"
	"fmt"

	"github.com/firegate/firegate/internal/actions"
	"github.com/firegate/firegate/internal/browser"
	"github.com/firegate/firegate/internal/errcode"
)

// unavailable is a failure of the browser (or sandbox) behind a session,
// told as msg, caused by err. Its text, for logs, ends with err, which may
// name the DevTools address, file paths and Go packages; a client is shown
// msg only, which says what failed in its terms.
func unavailable(msg string, err error) error {
	return &errcode.Failure{Kind: ErrUnavailable, Msg: errcode.Sentence(msg), Cause: err}
}

// replayError is the failure of replaying a scrape in a new session, told
// by its kind: an action's own reason (as a scrape's actions are), a
// deadline, a page the browser could not load, a browser gone; the
// browser's text (its DevTools address, Go packages) stays in Cause.
func replayError(err error) error {
	var ae *actions.Error
	var msg string
	switch {
	case errors.As(err, &ae):
		msg = fmt.Sprintf("Replaying the scrape failed: action %d (%s) failed: %s", ae.Index, ae.Type, ae.Reason)
	case errors.Is(err, browser.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		msg = fmt.Sprintf("Replaying the scrape failed: the page did not load and run its actions within %v.", openTimeout)
	case errors.Is(err, browser.ErrBlocked):
		msg = "Replaying the scrape failed: the URL resolves to a private or otherwise non-public address, which this server does not load."
	case errors.Is(err, browser.ErrDNS):
		msg = "Replaying the scrape failed: the URL's host name could not be resolved."
	case errors.Is(err, browser.ErrTLS):
		msg = "Replaying the scrape failed: the site's TLS connection failed."
	case errors.Is(err, browser.ErrNavigation):
		msg = "Replaying the scrape failed: the page could not be loaded in the browser."
	case errors.Is(err, browser.ErrSessionClosed), errors.Is(err, browser.ErrUnavailable):
		msg = "Replaying the scrape failed: the browser closed before the page was loaded."
	default:
		msg = "Replaying the scrape failed."
	}
	return &errcode.Failure{Kind: ErrReplay, Msg: errcode.Sentence(msg), Cause: err}
}
