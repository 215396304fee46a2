package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/firegate/firegate/internal/store"
)

// purgeBatch bounds the monitors one PurgeDeletedMonitors call removes.
const purgeBatch = 500

// PurgeDeletedMonitors removes deleted monitors with their checks, pages,
// recipients and snapshots.
func (s *Store) PurgeDeletedMonitors(ctx context.Context, staleBefore time.Time) (int, error) {
	n := 0
	err := s.Transact(ctx, func(tx DBTX) error {
		rows, err := tx.QueryContext(ctx,
			`SELECT id, team_id FROM monitors WHERE status = 'deleted' AND (current_check_id IS NULL OR updated_at < ?)
			ORDER BY updated_at LIMIT ?`, formatTime(staleBefore), purgeBatch)
		if err != nil {
			return err
		}
		type gone struct{ id, team string }
		var list []gone
		for rows.Next() {
			var g gone
			if err := rows.Scan(&g.id, &g.team); err != nil {
				rows.Close()
				return err
			}
			list = append(list, g)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, g := range list {
			// Monitor ids are UUIDs: no LIKE wildcard in the prefix.
			if _, err := tx.ExecContext(ctx, `DELETE FROM scrape_snapshots WHERE team_id = ? AND tag LIKE ?`,
				g.team, "monitor:"+g.id+":%"); err != nil {
				return err
			}
			// Checks, their pages and the recipients go by cascade.
			if _, err := tx.ExecContext(ctx, `DELETE FROM monitors WHERE id = ?`, g.id); err != nil {
				return err
			}
		}
		n = len(list)
		return nil
	})
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
	var ask []string
	err = s.Transact(ctx, func(tx DBTX) error {
		rows, err := tx.QueryContext(ctx,
			`SELECT email, status, confirm_sent_at FROM monitor_email_recipients WHERE monitor_id = ?`, mid)
		if err != nil {
			return err
		}
		type rec struct {
			status string
			asked  sql.NullString
		}
		have := map[string]rec{}
		for rows.Next() {
			var e string
			var r rec
			if err := rows.Scan(&e, &r.status, &r.asked); err != nil {
				rows.Close()
				return err
			}
			have[e] = r
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		nowS, beforeS := formatTime(now), formatTime(askBefore)
		for e, r := range have {
			if r.status != store.RecipientUnsubscribed && !slices.Contains(emails, e) {
				if _, err := tx.ExecContext(ctx, `DELETE FROM monitor_email_recipients WHERE monitor_id = ? AND email = ?`, mid, e); err != nil {
					return err
				}
			}
		}
		for _, e := range emails {
			r, ok := have[e]
			switch {
			case !ok:
				_, err = tx.ExecContext(ctx,
					`INSERT INTO monitor_email_recipients (monitor_id, email, status, confirm_sent_at, created_at, updated_at)
					VALUES (?, ?, 'pending', ?, ?, ?)`, mid, e, nowS, nowS, nowS)
			case r.status == store.RecipientPending && (!r.asked.Valid || r.asked.String < beforeS):
				_, err = tx.ExecContext(ctx,
					`UPDATE monitor_email_recipients SET confirm_sent_at = ?, updated_at = ? WHERE monitor_id = ? AND email = ?`,
					nowS, nowS, mid, e)
			default:
				continue
			}
			if err != nil {
				return err
			}
			ask = append(ask, e)
		}
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
	err = s.read.QueryRowContext(ctx,
		`SELECT count(*) FROM monitor_email_recipients WHERE email = ? AND confirm_sent_at >= ? AND confirm_sent_at <
			(SELECT confirm_sent_at FROM monitor_email_recipients WHERE monitor_id = ? AND email = ?)`,
		email, formatTime(since), mid, email).Scan(&n)
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
	err = s.read.QueryRowContext(ctx,
		`SELECT status FROM monitor_email_recipients WHERE monitor_id = ? AND email = ?`, mid, email).Scan(&status)
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
	res, err := s.write.ExecContext(ctx,
		`UPDATE monitor_email_recipients SET status = ?, updated_at = ? WHERE monitor_id = ? AND email = ?`,
		status, formatTime(now), mid, email)
	if err != nil {
		return fmt.Errorf("store: set recipient status: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
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
	res, err := s.write.ExecContext(ctx,
		`UPDATE monitor_email_recipients SET last_sent_at = ?, last_check_id = ?, updated_at = ?
		WHERE monitor_id = ? AND email = ? AND status = 'confirmed'
			AND (last_check_id = ? OR last_sent_at IS NULL OR last_sent_at <= ?)`,
		formatTime(now), checkID, formatTime(now), mid, email, checkID, formatTime(notBefore))
	if err != nil {
		return false, fmt.Errorf("store: claim summary: %w", err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
