package store

import (
	"context"
	"time"
)

// Activity is one API request of a team, as GET /v2/team/activity lists
// it.
type Activity struct {
	ID         string // UUIDv7; ids order activities by time
	TeamID     string
	Endpoint   string // scrape, crawl, batch_scrape, map, search, ...
	APIVersion string // v1 or v2
	Target     string // the URL (or query) asked for; "" under zero data retention
	// Username is the request's auditMetadata.username; "" when none.
	Username  string
	CreatedAt time.Time
}

// ActivityQuery selects a page of a team's activity, newest first.
type ActivityQuery struct {
	// Since leaves out older activities.
	Since time.Time
	// Endpoint, when set, keeps only that endpoint's activities.
	Endpoint string
	// Before, when set, keeps only activities whose id sorts before it
	// (the last id of the previous page).
	Before string
	// Limit is the most returned; at least 1.
	Limit int
}

// ActivityStore keeps the teams' recent requests.
type ActivityStore interface {
	// RecordActivity saves one activity; ErrNotFound if its team does not
	// exist.
	RecordActivity(ctx context.Context, a Activity) error
	// ListActivity returns a team's activities matching q, newest (highest
	// id) first.
	ListActivity(ctx context.Context, teamID string, q ActivityQuery) ([]Activity, error)
	// DeleteActivityBefore deletes every team's activities created before
	// t and says how many.
	DeleteActivityBefore(ctx context.Context, t time.Time) (int64, error)
}
