package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/firegate/firegate/internal/store/storetest"
)

// TestClaimAcrossStores claims through two stores on one file, as two
// processes would.
func TestClaimAcrossStores(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "shared.db")
	storetest.ClaimAcrossStores(t, openTest(t, path), openTest(t, path))
}

func BenchmarkJobs(b *testing.B) {
	storetest.BenchmarkJobs(b, openTest(b, filepath.Join(b.TempDir(), "bench.db")))
}
