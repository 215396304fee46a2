package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/firegate/firegate/internal/store"
)

var _ store.CrawlMemoryStore = (*Store)(nil)

// RememberCrawlURLs records urls in the crawl memory of the team's tag and
// scope; store.ErrNotFound if the team does not exist.
func (s *Store) RememberCrawlURLs(ctx context.Context, teamID, tag, scope string, urls []string, at time.Time) error {
	team, err := parseID(teamID)
	if err != nil {
		return fmt.Errorf("store: remember crawl urls: %w", err)
	}
	if len(urls) == 0 {
		return nil
	}
	_, err = s.pool.Exec(ctx,
		`INSERT INTO crawl_memory (team_id, tag, scope, url, seen_at)
		SELECT $1, $2, $3, u, $5 FROM unnest($4::text[]) AS u
		ON CONFLICT (team_id, tag, scope, url) DO UPDATE SET seen_at = GREATEST(crawl_memory.seen_at, EXCLUDED.seen_at)`,
		team, tag, scope, urls, at.UTC())
	if err != nil {
		return fmt.Errorf("store: remember crawl urls: %w", mapErr(err))
	}
	return nil
}

// CrawlMemory returns up to limit remembered URLs of the scope, most
// recently found first.
func (s *Store) CrawlMemory(ctx context.Context, teamID, tag, scope string, limit int) ([]string, error) {
	team, err := parseID(teamID)
	if err != nil {
		return nil, nil // a malformed id names no team: nothing remembered
	}
	rows, err := s.pool.Query(ctx,
		`SELECT url FROM crawl_memory WHERE team_id = $1 AND tag = $2 AND scope = $3
		ORDER BY seen_at DESC, url LIMIT $4`,
		team, tag, scope, max(limit, 1))
	if err != nil {
		return nil, fmt.Errorf("store: crawl memory: %w", err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, fmt.Errorf("store: crawl memory: %w", err)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: crawl memory: %w", err)
	}
	return out, nil
}

// ForgetCrawlURLs removes urls from the scope's memory.
func (s *Store) ForgetCrawlURLs(ctx context.Context, teamID, tag, scope string, urls []string) error {
	team, err := parseID(teamID)
	if err != nil || len(urls) == 0 {
		return nil
	}
	_, err = s.pool.Exec(ctx,
		`DELETE FROM crawl_memory WHERE team_id = $1 AND tag = $2 AND scope = $3 AND url = ANY($4::text[])`,
		team, tag, scope, urls)
	if err != nil {
		return fmt.Errorf("store: forget crawl urls: %w", err)
	}
	return nil
}
