package postgres

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
	err = s.pool.QueryRow(ctx,
		`SELECT markdown, json, scraped_at FROM scrape_snapshots WHERE team_id = $1 AND url = $2 AND tag = $3`,
		team, url, tag,
	).Scan(&snap.Markdown, &snap.JSON, &snap.ScrapedAt)
	if err != nil {
		return store.ScrapeSnapshot{}, fmt.Errorf("store: previous scrape: %w", mapErr(err))
	}
	snap.ScrapedAt = snap.ScrapedAt.UTC()
	return snap, nil
}

// SaveScrape creates or replaces the saved scrape of its team, URL and
// tag; store.ErrNotFound if the team does not exist.
func (s *Store) SaveScrape(ctx context.Context, snap store.ScrapeSnapshot) error {
	team, err := parseID(snap.TeamID)
	if err != nil {
		return fmt.Errorf("store: save scrape: %w", err)
	}
	_, err = s.pool.Exec(ctx,
		`INSERT INTO scrape_snapshots (team_id, url, tag, markdown, json, scraped_at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (team_id, url, tag) DO UPDATE SET markdown = EXCLUDED.markdown, json = EXCLUDED.json, scraped_at = EXCLUDED.scraped_at`,
		team, snap.URL, snap.Tag, snap.Markdown, snap.JSON, snap.ScrapedAt.UTC())
	if err != nil {
		return fmt.Errorf("store: save scrape: %w", mapErr(err))
	}
	return nil
}
