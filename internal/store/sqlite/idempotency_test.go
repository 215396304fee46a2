package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/storetest"
)

func TestIdempotencyContract(t *testing.T) {
	t.Parallel()
	storetest.RunIdempotency(t, func(t *testing.T) store.IdempotencyStore {
		return openTest(t, filepath.Join(t.TempDir(), "firegate.db"))
	})
}
