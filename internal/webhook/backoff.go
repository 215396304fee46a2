package webhook

import "time"

// MaxAttempts is the number of delivery attempts of one event: the first
// one plus the three documented retries. Give it to the queue as the job's
// attempt limit.
const MaxAttempts = 4

// Backoff returns how long to wait before the next attempt after attempt
// attempts have failed (River's job.Attempt in NextRetry): 1 min after the
// first, 5 min after the second, 15 min after the third. Values outside
// 1..3 are clamped; the queue should stop at MaxAttempts.
func Backoff(attempt int) time.Duration {
	switch {
	case attempt <= 1:
		return time.Minute
	case attempt == 2:
		return 5 * time.Minute
	default:
		return 15 * time.Minute
	}
}
