package sqlite

import (
	"context"
	"fmt"

	"github.com/firegate/firegate/internal/store"
)

// PreviousScrape returns the saved scrape of a team's URL and tag, or
// store.ErrNotFound.
func (s *Store) PreviousScrape(ctx context.Context, teamID, url, tag string) (store.ScrapeSnapshot, error) {
	team, err := parseID(teamID)
	if err != nil {
		return store.ScrapeSnapshot{}, fmt.Errorf("store: previous scrape: %w", err)
	}
	snap := store.ScrapeSnapshot{TeamID: teamID, URL: url, Tag: tag}
	var at string
	err = s.read.QueryRowContext(ctx,
		`SELECT markdown, json, scraped_at FROM scrape_snapshots WHERE team_id = ? AND url = ? AND tag = ?`,
		team, url, tag,
	).Scan(&snap.Markdown, &snap.JSON, &at)
	if err != nil {
		return store.ScrapeSnapshot{}, fmt.Errorf("store: previous scrape: %w", mapErr(err))
	}
	if snap.ScrapedAt, err = parseTime(at); err != nil {
		return store.ScrapeSnapshot{}, fmt.Errorf("store: previous scrape: %w", err)
	}
	return snap, nil
}

// SaveScrape creates or replaces the saved scrape of its team, URL and
// tag; store.ErrNotFound if the team does not exist.
func (s *Store) SaveScrape(ctx context.Context, snap store.ScrapeSnapshot) error {
	team, err := parseID(snap.TeamID)
	if err != nil {
		return fmt.Errorf("store: save scrape: %w", err)
	}
	_, err = s.write.ExecContext(ctx,
		`INSERT INTO scrape_snapshots (team_id, url, tag, markdown, json, scraped_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (team_id, url, tag) DO UPDATE SET markdown = excluded.markdown, json = excluded.json, scraped_at = excluded.scraped_at`,
		team, snap.URL, snap.Tag, snap.Markdown, snap.JSON, formatTime(snap.ScrapedAt))
	if err != nil {
		return fmt.Errorf("store: save scrape: %w", mapErr(err))
	}
	return nil
}
