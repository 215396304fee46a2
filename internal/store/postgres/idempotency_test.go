package postgres

import (
	"testing"

	"github.com/firegate/firegate/internal/store"
	"github.com/firegate/firegate/internal/store/storetest"
	"github.com/firegate/firegate/internal/testenv"
)

func TestIdempotencyContract(t *testing.T) {
	t.Parallel()
	url := testenv.PostgresURL(t)
	storetest.RunIdempotency(t, func(t *testing.T) store.IdempotencyStore {
		return openTest(t, url, newSchema(t, url))
	})
}
