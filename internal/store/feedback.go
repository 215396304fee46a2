package store

import (
	"context"
	"encoding/json"
	"time"
)

// Feedback is a team's rating of an earlier result: a scrape, search, map
// or parse, or a crawl, batch scrape, extract or agent job.
type Feedback struct {
	ID       string // UUIDv7; ids order feedback by time
	TeamID   string
	TeamName string // filled by ListFeedback
	Endpoint string // search, scrape, parse, map, crawl, batch, extract, agent
	JobID    string // the rated result's id (a scrapeId, search id, job id)
	Rating   string // good, partial, bad
	Note     string // the comment, "" for none
	// Details holds the other members of the feedback as a JSON object
	// (issues, tags, valuableSources, missingContent, querySuggestions,
	// url, pageNumbers, metadata); nil for none.
	Details   json.RawMessage
	Origin    string
	CreatedAt time.Time
}

// FeedbackQuery selects a page of feedback, newest first.
type FeedbackQuery struct {
	// TeamID, when set, keeps one team's; "" lists every team's (the
	// operator's view).
	TeamID string
	// Before, when set, keeps only feedback whose id sorts before it (the
	// last id of the previous page).
	Before string
	// Limit is the most returned; at least 1.
	Limit int
}

// FeedbackStore keeps the feedback teams give on their results.
type FeedbackStore interface {
	// AddFeedback saves f, once per team, endpoint and job id: when that
	// job was rated before, the earlier feedback is returned with
	// created false and f is dropped. ErrNotFound if the team does not
	// exist.
	AddFeedback(ctx context.Context, f Feedback) (saved Feedback, created bool, err error)
	// ListFeedback returns the feedback matching q, newest first, with
	// each team's name.
	ListFeedback(ctx context.Context, q FeedbackQuery) ([]Feedback, error)
}
