package pause

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestForEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- For(ctx, time.Hour) }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("For = %v; want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("For did not return when its context was cancelled")
	}
}

func TestForWaitsOutTheDelay(t *testing.T) {
	const d = 20 * time.Millisecond
	start := time.Now()
	if err := For(context.Background(), d); err != nil {
		t.Fatalf("For = %v; want nil", err)
	}
	if waited := time.Since(start); waited < d {
		t.Errorf("For returned after %v; want at least %v", waited, d)
	}
}

func TestForDoneContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := For(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("For = %v; want context.Canceled", err)
	}
}
