package media

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestSigner(t *testing.T) {
	t.Parallel()
	secret := []byte(strings.Repeat("k", MinSecretLen))
	s, err := NewSigner(secret)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewSigner([]byte(strings.Repeat("o", MinSecretLen)))
	now := time.Unix(1_800_000_000, 0)
	id := "0123456789abcdef-0123456789abcdef0123456789abcdef.mp4"
	q, err := url.ParseQuery(s.Query(id, now.Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}
	if q.Get("expires") != strconv.FormatInt(now.Add(time.Hour).Unix(), 10) || len(q.Get("signature")) != 64 {
		t.Fatalf("query %v", q)
	}
	with := func(k, v string) url.Values {
		c := url.Values{}
		for key, vals := range q {
			c[key] = append([]string(nil), vals...)
		}
		if v == "" {
			c.Del(k)
		} else {
			c.Set(k, v)
		}
		return c
	}
	sig := q.Get("signature")
	flipped := string(rune(sig[0]^1)) + sig[1:]
	tests := []struct {
		name   string
		signer *Signer
		id     string
		q      url.Values
		at     time.Time
		want   error
	}{
		{"valid", s, id, q, now, nil},
		{"valid until the last second", s, id, q, now.Add(time.Hour - time.Second), nil},
		{"expired", s, id, q, now.Add(time.Hour), ErrLinkExpired},
		{"another id", s, strings.Replace(id, ".mp4", ".mp3", 1), q, now, ErrBadSignature},
		{"expiry extended", s, id, with("expires", strconv.FormatInt(now.Add(48*time.Hour).Unix(), 10)), now, ErrBadSignature},
		{"expired and extended", s, id, with("expires", strconv.FormatInt(now.Add(48*time.Hour).Unix(), 10)), now.Add(2 * time.Hour), ErrBadSignature},
		{"signature changed", s, id, with("signature", flipped), now, ErrBadSignature},
		{"signature not hex", s, id, with("signature", "zz"), now, ErrBadSignature},
		{"no signature", s, id, with("signature", ""), now, ErrBadSignature},
		{"no expiry", s, id, with("expires", ""), now, ErrBadSignature},
		{"another secret", other, id, q, now, ErrBadSignature},
	}
	for _, tt := range tests {
		if err := tt.signer.Verify(tt.id, tt.q, tt.at); !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
			t.Errorf("%s: Verify = %v, want %v", tt.name, err, tt.want)
		}
	}
	if _, err := NewSigner(secret[:MinSecretLen-1]); err == nil {
		t.Error("NewSigner accepted a short secret")
	}
}
