package postgres

import (
	"testing"

	"github.com/firegate/firegate/internal/store/storetest"
	"github.com/firegate/firegate/internal/testenv"
)

// TestClaimAcrossStores claims through two stores (two pools, as two
// server processes would have) on one schema.
func TestClaimAcrossStores(t *testing.T) {
	t.Parallel()
	url := testenv.PostgresURL(t)
	schema := newSchema(t, url)
	storetest.ClaimAcrossStores(t, openTest(t, url, schema), openTest(t, url, schema))
}

func BenchmarkJobs(b *testing.B) {
	url := testenv.PostgresURL(b)
	storetest.BenchmarkJobs(b, openTest(b, url, newSchema(b, url)))
}
