package kinderr

import (
	"errors"
	"testing"
)

var (
	errKind  = errors.New("pkg: the kind")
	errCause = errors.New("dial tcp 10.1.2.3:8080: connect: connection refused")
)

func TestErrorText(t *testing.T) {
	for _, tc := range []struct {
		e    *Error
		want string
	}{
		{&Error{Kind: errKind, Msg: "It failed."}, "pkg: the kind: It failed."},
		{&Error{Kind: errKind, Msg: "It failed.", Cause: errCause}, "pkg: the kind: It failed.: dial tcp 10.1.2.3:8080: connect: connection refused"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
		if got := tc.e.ClientMessage(); got != "It failed." {
			t.Errorf("ClientMessage() = %q, want the Msg alone", got)
		}
	}
}

func TestUnwrap(t *testing.T) {
	var err error = &Error{Kind: errKind, Msg: "It failed.", Cause: errCause}
	if !errors.Is(err, errKind) || !errors.Is(err, errCause) {
		t.Errorf("errors.Is misses the kind or the cause of %v", err)
	}
	err = &Error{Kind: errKind, Msg: "It failed."}
	if !errors.Is(err, errKind) || errors.Is(err, errCause) {
		t.Errorf("errors.Is(%v): want the kind only", err)
	}
}
