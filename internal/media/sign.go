package media

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// Errors of Signer.Verify.
var (
	// ErrBadSignature: the link's signature does not match its id and
	// expiry (tampered, or signed with another secret), or is missing.
	ErrBadSignature = errors.New("media: bad link signature")
	// ErrLinkExpired: the link is genuine but its expiry has passed.
	ErrLinkExpired = errors.New("media: link expired")
)

// MinSecretLen is the shortest secret NewSigner accepts.
const MinSecretLen = 32

// Link query parameters.
const (
	paramExpires   = "expires"
	paramSignature = "signature"
)

// Signer signs and checks the links of stored files: a link carries its
// expiry (Unix seconds) and an HMAC-SHA256 of the id and expiry under the
// server's secret, so that it is the only credential needed to fetch the
// file and cannot be extended or pointed at another file.
type Signer struct {
	key []byte
}

// NewSigner returns a signer with secret (at least MinSecretLen bytes).
func NewSigner(secret []byte) (*Signer, error) {
	if len(secret) < MinSecretLen {
		return nil, fmt.Errorf("media: link secret of %d bytes, want at least %d", len(secret), MinSecretLen)
	}
	return &Signer{key: append([]byte(nil), secret...)}, nil
}

// mac is the signature of id and expires.
func (s *Signer) mac(id, expires string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(id))
	m.Write([]byte{0})
	m.Write([]byte(expires))
	return m.Sum(nil)
}

// Query returns the query string ("expires=...&signature=...") that makes
// a link to id valid until expires.
func (s *Signer) Query(id string, expires time.Time) string {
	exp := strconv.FormatInt(expires.Unix(), 10)
	return url.Values{paramExpires: {exp}, paramSignature: {hex.EncodeToString(s.mac(id, exp))}}.Encode()
}

// Verify checks a link to id with query q at now: ErrBadSignature when its
// signature does not match (whatever its expiry), ErrLinkExpired when it
// matches but the expiry has passed.
func (s *Signer) Verify(id string, q url.Values, now time.Time) error {
	exp, sig := q.Get(paramExpires), q.Get(paramSignature)
	got, err := hex.DecodeString(sig)
	if err != nil || exp == "" || !hmac.Equal(got, s.mac(id, exp)) {
		return ErrBadSignature
	}
	unix, err := strconv.ParseInt(exp, 10, 64)
	if err != nil {
		return ErrBadSignature
	}
	if !now.Before(time.Unix(unix, 0)) {
		return ErrLinkExpired
	}
	return nil
}

// HasSignature reports whether query q carries a link signature.
func HasSignature(q url.Values) bool { return q.Has(paramSignature) || q.Has(paramExpires) }
