package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/firegate/firegate/internal/store"
)

// purgeBatch bounds the monitors one PurgeDeletedMonitors call removes.
const purgeBatch = 500

// PurgeDeletedMonitors removes deleted monitors with their checks, pages,
// recipients and snapshots.
func (s *Store) PurgeDeletedMonitors(ctx context.Context, staleBefore time.Time) (int, error) {
	// Checks, their pages and the recipients go by cascade; monitor ids
	// are UUIDs, so the snapshot tag prefix holds no LIKE wildcard.
	var n int
	err := s.pool.QueryRow(ctx,
		`WITH gone AS (
			DELETE FROM monitors WHERE id IN (
				SELECT id FROM monitors WHERE status = 'deleted' AND (current_check_id IS NULL OR updated_at < $1)
				ORDER BY updated_at LIMIT $2)
			RETURNING id, team_id
		), snapshots AS (
			DELETE FROM scrape_snapshots s USING gone
			WHERE s.team_id = gone.team_id AND s.tag LIKE 'monitor:' || gone.id::text || ':%'
		)
		SELECT count(*) FROM gone`, staleBefore.UTC(), purgeBatch).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: purge deleted monitors: %w", err)
	}
	return n, nil
}

// SyncRecipients makes emails a monitor's recipients.
func (s *Store) SyncRecipients(ctx context.Context, monitorID string, emails []string, now, askBefore time.Time) ([]string, error) {
	mid, err := parseID(monitorID)
	if err != nil {
		return nil, fmt.Errorf("store: sync recipients: %w", err)
	}
	if emails == nil {
		emails = []string{}
	}
	var ask []string
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx,
			`DELETE FROM monitor_email_recipients
			WHERE monitor_id = $1 AND status <> 'unsubscribed' AND NOT (email = ANY($2))`, mid, emails); err != nil {
			return err
		}
		rows, err := tx.Query(ctx,
			`INSERT INTO monitor_email_recipients (monitor_id, email, status, confirm_sent_at, created_at, updated_at)
			SELECT $1, e, 'pending', $3, $3, $3 FROM unnest($2::text[]) AS e
			ON CONFLICT (monitor_id, email) DO NOTHING RETURNING email`, mid, emails, now.UTC())
		if err != nil {
			return err
		}
		added, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		rows, err = tx.Query(ctx,
			`UPDATE monitor_email_recipients SET confirm_sent_at = $3, updated_at = $3
			WHERE monitor_id = $1 AND email = ANY($2) AND status = 'pending' AND confirm_sent_at < $4
			RETURNING email`, mid, emails, now.UTC(), askBefore.UTC())
		if err != nil {
			return err
		}
		again, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		ask = append(added, again...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: sync recipients: %w", mapErr(err))
	}
	return ask, nil
}

// EarlierConfirmations counts the confirmations asked of an address
// before the monitor's.
func (s *Store) EarlierConfirmations(ctx context.Context, monitorID, email string, since time.Time) (int, error) {
	mid, err := parseID(monitorID)
	if err != nil {
		return 0, nil
	}
	var n int
	err = s.pool.QueryRow(ctx,
		`SELECT count(*) FROM monitor_email_recipients WHERE email = $1 AND confirm_sent_at >= $2 AND confirm_sent_at <
			(SELECT confirm_sent_at FROM monitor_email_recipients WHERE monitor_id = $3 AND email = $1)`,
		email, since.UTC(), mid).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: earlier confirmations: %w", err)
	}
	return n, nil
}

// RecipientStatus returns a recipient's status.
func (s *Store) RecipientStatus(ctx context.Context, monitorID, email string) (string, error) {
	mid, err := parseID(monitorID)
	if err != nil {
		return "", fmt.Errorf("store: recipient: %w", err)
	}
	var status string
	err = s.pool.QueryRow(ctx,
		`SELECT status FROM monitor_email_recipients WHERE monitor_id = $1 AND email = $2`, mid, email).Scan(&status)
	if err != nil {
		return "", fmt.Errorf("store: recipient: %w", mapErr(err))
	}
	return status, nil
}

// SetRecipientStatus confirms or unsubscribes a recipient.
func (s *Store) SetRecipientStatus(ctx context.Context, monitorID, email, status string, now time.Time) error {
	if status != store.RecipientConfirmed && status != store.RecipientUnsubscribed {
		return fmt.Errorf("store: set recipient status: bad status %q", status)
	}
	mid, err := parseID(monitorID)
	if err != nil {
		return fmt.Errorf("store: set recipient status: %w", err)
	}
	tag, err := s.pool.Exec(ctx,
		`UPDATE monitor_email_recipients SET status = $1, updated_at = $2 WHERE monitor_id = $3 AND email = $4`,
		status, now.UTC(), mid, email)
	if err != nil {
		return fmt.Errorf("store: set recipient status: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: set recipient status: %w", store.ErrNotFound)
	}
	return nil
}

// ClaimSummary claims the sending of a check's summary to a recipient.
func (s *Store) ClaimSummary(ctx context.Context, monitorID, email, checkID string, now, notBefore time.Time) (bool, error) {
	mid, err := parseID(monitorID)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	tag, err := s.pool.Exec(ctx,
		`UPDATE monitor_email_recipients SET last_sent_at = $1, last_check_id = $2, updated_at = $1
		WHERE monitor_id = $3 AND email = $4 AND status = 'confirmed'
			AND (last_check_id = $2 OR last_sent_at IS NULL OR last_sent_at <= $5)`,
		now.UTC(), checkID, mid, email, notBefore.UTC())
	if err != nil {
		return false, fmt.Errorf("store: claim summary: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}
