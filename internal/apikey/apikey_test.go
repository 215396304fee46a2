package apikey

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGenerate(t *testing.T) {
	t.Parallel()
	seen := make(map[string]bool)
	for range 100 {
		key, err := Generate()
		if err != nil {
			t.Fatalf("Generate: %v", err)
		}
		if !WellFormed(key) {
			t.Fatalf("Generate() = %q, not well formed", key)
		}
		if seen[key] {
			t.Fatalf("Generate() returned duplicate %q", key)
		}
		seen[key] = true
	}
}

func TestHash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		key  string
		want string
	}{
		{name: "empty", key: "", want: "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{name: "abc", key: "abc", want: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := hex.EncodeToString(Hash(tt.key))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Hash(%q) mismatch (-want +got):\n%s", tt.key, diff)
			}
		})
	}
}

func TestHashDistinct(t *testing.T) {
	t.Parallel()
	a, b := Hash("fc-"+strings.Repeat("0", 32)), Hash("fc-"+strings.Repeat("0", 31)+"1")
	if len(a) != 32 {
		t.Errorf("len(Hash) = %d, want 32", len(a))
	}
	if cmp.Equal(a, b) {
		t.Error("different keys hash equal")
	}
}

func TestPrefix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		key  string
		want string
	}{
		{name: "full key", key: "fc-0123456789abcdef0123456789abcdef", want: "fc-0123"},
		{name: "exactly seven", key: "fc-abcd", want: "fc-abcd"},
		{name: "short", key: "fc-", want: "fc-"},
		{name: "empty", key: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, Prefix(tt.key)); diff != "" {
				t.Errorf("Prefix(%q) mismatch (-want +got):\n%s", tt.key, diff)
			}
		})
	}
}

func TestWellFormed(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		key  string
		want bool
	}{
		{name: "valid", key: "fc-0123456789abcdef0123456789abcdef", want: true},
		{name: "empty", key: "", want: false},
		{name: "prefix only", key: "fc-", want: false},
		{name: "uppercase hex", key: "fc-0123456789ABCDEF0123456789abcdef", want: false},
		{name: "wrong prefix", key: "fx-0123456789abcdef0123456789abcdef", want: false},
		{name: "no prefix", key: "0123456789abcdef0123456789abcdef", want: false},
		{name: "too short", key: "fc-0123456789abcdef0123456789abcde", want: false},
		{name: "too long", key: "fc-0123456789abcdef0123456789abcdef0", want: false},
		{name: "non hex", key: "fc-0123456789abcdef0123456789abcdeg", want: false},
		{name: "trailing space", key: "fc-0123456789abcdef0123456789abcde ", want: false},
		{name: "multibyte", key: "fc-0123456789abcdef0123456789abcdé", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := WellFormed(tt.key); got != tt.want {
				t.Errorf("WellFormed(%q) = %v, want %v", tt.key, got, tt.want)
			}
		})
	}
}
