package httpapi

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/firegate/firegate/internal/cache"
)

// ResultTTL is how long a scrape's document stays readable through
// GET /v2/scrape/{id}.
const ResultTTL = 24 * time.Hour

// errJobNotFound answers an unknown or expired scrape id.
var errJobNotFound = &Error{Status: http.StatusNotFound, Code: "NOT_FOUND", Message: "Job not found."}

// results keeps scrape documents for GET /v2/scrape/{id} in the cache
// backend (Redis shared by replicas, or in-process), with the owning team.
// A nil cache keeps nothing.
type results struct {
	c   cache.Cache
	now func() time.Time
}

// put stores a document; failures only cost the later GET.
func (r results) put(ctx context.Context, id, teamID string, data []byte) {
	if r.c == nil || id == "" {
		return
	}
	v := make([]byte, 0, len(teamID)+1+len(data))
	v = append(append(append(v, teamID...), '\n'), data...)
	_ = r.c.Set(ctx, "result:"+id, cache.Entry{Value: v, CreatedAt: r.now()}, ResultTTL)
}

// get returns the owning team and the document, or errJobNotFound.
func (r results) get(ctx context.Context, id string) (string, []byte, error) {
	if r.c == nil {
		return "", nil, errJobNotFound
	}
	e, err := r.c.Get(ctx, "result:"+id)
	if errors.Is(err, cache.ErrMiss) {
		return "", nil, errJobNotFound
	}
	if err != nil {
		return "", nil, err
	}
	team, data, ok := bytes.Cut(e.Value, []byte{'\n'})
	if !ok {
		return "", nil, errJobNotFound
	}
	return string(team), data, nil
}
