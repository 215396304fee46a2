// Package pause waits out a delay unless the caller's context ends first.
package pause

import (
	"context"
	"time"
)

// For waits d, or until ctx ends, in which case it returns ctx.Err().
func For(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
