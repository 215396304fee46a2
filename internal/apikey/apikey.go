// Package apikey generates, hashes and checks API keys of the form
// "fc-" followed by 32 lowercase hexadecimal characters (128 random bits).
// Only the SHA-256 hash of a key is ever stored; the prefix is kept for display.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// KeyPrefix is the fixed prefix every key starts with.
const KeyPrefix = "fc-"

// randomBytes is the number of random bytes in a key (128 bits).
const randomBytes = 16

// Length is the total length of a well-formed key.
const Length = len(KeyPrefix) + 2*randomBytes

// DisplayLen is the number of leading characters Prefix returns.
const DisplayLen = 7

// Generate returns a new random key read from crypto/rand.
func Generate() (string, error) {
	var b [randomBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("apikey: generate: %w", err)
	}
	return KeyPrefix + hex.EncodeToString(b[:]), nil
}

// Hash returns the SHA-256 digest of key, the value stored and looked up.
func Hash(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

// Prefix returns the first DisplayLen characters of key (all of it if
// shorter), safe to show to users to identify a key.
func Prefix(key string) string {
	if len(key) <= DisplayLen {
		return key
	}
	return key[:DisplayLen]
}

// WellFormed reports whether key has the form "fc-" + 32 lowercase hex chars.
func WellFormed(key string) bool {
	if len(key) != Length || !strings.HasPrefix(key, KeyPrefix) {
		return false
	}
	for _, c := range key[len(KeyPrefix):] {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
