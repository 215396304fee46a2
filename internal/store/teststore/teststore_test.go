package teststore

import (
	"testing"

	"github.com/firegate/firegate/internal/store"
)

func TestStores(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		open func(testing.TB) store.Store
	}{
		{"postgres", func(tb testing.TB) store.Store { return Postgres(tb) }},
		{"sqlite", func(tb testing.TB) store.Store { return SQLite(tb) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := tt.open(t)
			if _, err := s.CreateTeam(t.Context(), "t"); err != nil {
				t.Fatalf("CreateTeam: %v", err)
			}
			// A second store is empty: each test is isolated.
			if _, err := tt.open(t).TeamByName(t.Context(), "t"); err == nil {
				t.Error("second store sees the first store's team")
			}
		})
	}
}
