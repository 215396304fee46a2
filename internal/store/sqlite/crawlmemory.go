package sqlite

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
	seen := formatTime(at)
	err = s.Transact(ctx, func(tx DBTX) error {
		for _, u := range urls {
			_, err := tx.ExecContext(ctx,
				`INSERT INTO crawl_memory (team_id, tag, scope, url, seen_at) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (team_id, tag, scope, url) DO UPDATE SET seen_at = max(seen_at, excluded.seen_at)`,
				team, tag, scope, u, seen)
			if err != nil {
				return err
			}
		}
		return nil
	})
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
	rows, err := s.read.QueryContext(ctx,
		`SELECT url FROM crawl_memory WHERE team_id = ? AND tag = ? AND scope = ?
		ORDER BY seen_at DESC, url LIMIT ?`,
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
	err = s.Transact(ctx, func(tx DBTX) error {
		for _, u := range urls {
			if _, err := tx.ExecContext(ctx,
				`DELETE FROM crawl_memory WHERE team_id = ? AND tag = ? AND scope = ? AND url = ?`,
				team, tag, scope, u); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: forget crawl urls: %w", err)
	}
	return nil
}
