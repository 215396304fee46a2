// Package kinderr is the error of a failure told twice: Kind, a sentinel
// the API maps to a status and code; Msg, the sentence a client is shown;
// Cause, the underlying error, for logs only (it may name internal hosts,
// addresses, file paths and Go packages). search.Error and interact.Error
// are this type under their own names.
package kinderr

// Error is a failure of kind Kind, told to a client as Msg, caused by
// Cause. Its Error text, for logs, is Kind's text, Msg, then Cause's text.
type Error struct {
	Kind  error
	Msg   string
	Cause error // nil when Msg says it all
}

func (e *Error) Error() string {
	s := e.Kind.Error() + ": " + e.Msg
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap gives Kind and Cause, so errors.Is matches the kind and any
// sentinel of the cause.
func (e *Error) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Cause}
}

// ClientMessage is Msg: what the API shows.
func (e *Error) ClientMessage() string { return e.Msg }
