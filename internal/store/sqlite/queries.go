package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/google/uuid"

	"github.com/firegate/firegate/internal/store"
)

// parseID returns the canonical form of a UUID, or store.ErrNotFound: a
// malformed id cannot name a row.
func parseID(id string) (string, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return "", fmt.Errorf("%w: malformed id %q", store.ErrNotFound, id)
	}
	return u.String(), nil
}

// newID returns a time-ordered UUIDv7 in canonical form.
func newID() (string, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

const keyColumns = `k.id, k.team_id, k.hash, k.prefix, k.created_at, k.revoked_at`

// CreateTeam creates a team; store.ErrConflict if the name exists.
func (s *Store) CreateTeam(ctx context.Context, name string) (store.Team, error) {
	id, err := newID()
	if err != nil {
		return store.Team{}, fmt.Errorf("store: create team: %w", err)
	}
	t, err := scanTeam(s.write.QueryRowContext(ctx,
		`INSERT INTO teams (id, name, created_at) VALUES (?, ?, ?) RETURNING id, name, created_at`,
		id, name, formatTime(s.now())))
	if err != nil {
		return store.Team{}, fmt.Errorf("store: create team: %w", mapErr(err))
	}
	return t, nil
}

// EnsureTeam creates the team unless one of that id exists.
func (s *Store) EnsureTeam(ctx context.Context, id, name string) error {
	uid, err := parseID(id)
	if err != nil {
		return fmt.Errorf("store: ensure team: malformed id %q", id)
	}
	_, err = s.write.ExecContext(ctx,
		`INSERT INTO teams (id, name, created_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`, uid, name, formatTime(s.now()))
	if err != nil {
		return fmt.Errorf("store: ensure team: %w", mapErr(err))
	}
	return nil
}

// TeamByName returns the team of that name or store.ErrNotFound.
func (s *Store) TeamByName(ctx context.Context, name string) (store.Team, error) {
	t, err := scanTeam(s.read.QueryRowContext(ctx,
		`SELECT id, name, created_at FROM teams WHERE name = ?`, name))
	if err != nil {
		return store.Team{}, fmt.Errorf("store: team by name: %w", mapErr(err))
	}
	return t, nil
}

// TeamByID returns the team or store.ErrNotFound.
func (s *Store) TeamByID(ctx context.Context, id string) (store.Team, error) {
	id, err := parseID(id)
	if err != nil {
		return store.Team{}, fmt.Errorf("store: team by id: %w", err)
	}
	t, err := scanTeam(s.read.QueryRowContext(ctx,
		`SELECT id, name, created_at FROM teams WHERE id = ?`, id))
	if err != nil {
		return store.Team{}, fmt.Errorf("store: team by id: %w", mapErr(err))
	}
	return t, nil
}

// ListTeams returns every team, by name.
func (s *Store) ListTeams(ctx context.Context) ([]store.Team, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT id, name, created_at FROM teams ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: list teams: %w", mapErr(err))
	}
	defer rows.Close()
	teams := []store.Team{}
	for rows.Next() {
		t, err := scanTeam(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list teams: %w", err)
		}
		teams = append(teams, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list teams: %w", mapErr(err))
	}
	return teams, nil
}

// CreateAPIKey stores a key hash for a team; store.ErrConflict if the hash
// exists, store.ErrNotFound if the team does not.
func (s *Store) CreateAPIKey(ctx context.Context, teamID string, hash []byte, prefix string) (store.APIKey, error) {
	teamID, err := parseID(teamID)
	if err != nil {
		return store.APIKey{}, fmt.Errorf("store: create api key: %w", err)
	}
	id, err := newID()
	if err != nil {
		return store.APIKey{}, fmt.Errorf("store: create api key: %w", err)
	}
	if hash == nil {
		hash = []byte{} // NOT NULL column: store an empty hash, not NULL
	}
	k, err := scanKey(s.write.QueryRowContext(ctx,
		`INSERT INTO api_keys (id, team_id, hash, prefix, created_at) VALUES (?, ?, ?, ?, ?)
		RETURNING id, team_id, hash, prefix, created_at, revoked_at`,
		id, teamID, hash, prefix, formatTime(s.now())))
	if err != nil {
		return store.APIKey{}, fmt.Errorf("store: create api key: %w", mapErr(err))
	}
	return k, nil
}

// APIKeyByHash returns the active key with that hash and its team, or
// store.ErrNotFound.
func (s *Store) APIKeyByHash(ctx context.Context, hash []byte) (store.APIKey, store.Team, error) {
	if hash == nil {
		hash = []byte{}
	}
	var (
		k                  store.APIKey
		t                  store.Team
		kCreated, tCreated string
		revoked            sql.NullString
	)
	err := s.read.QueryRowContext(ctx,
		`SELECT `+keyColumns+`, t.id, t.name, t.created_at
		FROM api_keys k JOIN teams t ON t.id = k.team_id
		WHERE k.hash = ? AND k.revoked_at IS NULL`, hash,
	).Scan(&k.ID, &k.TeamID, &k.Hash, &k.Prefix, &kCreated, &revoked, &t.ID, &t.Name, &tCreated)
	if err == nil {
		err = setKeyTimes(&k, kCreated, revoked)
	}
	if err == nil {
		t.CreatedAt, err = parseTime(tCreated)
	}
	if err != nil {
		return store.APIKey{}, store.Team{}, fmt.Errorf("store: api key by hash: %w", mapErr(err))
	}
	return k, t, nil
}

// RevokeAPIKey marks a key revoked; store.ErrNotFound if unknown.
func (s *Store) RevokeAPIKey(ctx context.Context, id string) error {
	id, err := parseID(id)
	if err != nil {
		return fmt.Errorf("store: revoke api key: %w", err)
	}
	res, err := s.write.ExecContext(ctx,
		`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`,
		formatTime(s.now()), id)
	if err != nil {
		return fmt.Errorf("store: revoke api key: %w", mapErr(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: revoke api key: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("store: revoke api key: %w", store.ErrNotFound)
	}
	return nil
}

// ListAPIKeys lists a team's keys, newest first; store.ErrNotFound if the team
// does not exist.
func (s *Store) ListAPIKeys(ctx context.Context, teamID string) ([]store.APIKey, error) {
	teamID, err := parseID(teamID)
	if err != nil {
		return nil, fmt.Errorf("store: list api keys: %w", err)
	}
	// The LEFT JOIN yields one all-NULL key row for a team without keys and
	// no row for a missing team, telling the two apart in one statement.
	rows, err := s.read.QueryContext(ctx,
		`SELECT `+keyColumns+`
		FROM teams t LEFT JOIN api_keys k ON k.team_id = t.id
		WHERE t.id = ?
		ORDER BY k.created_at DESC, k.id DESC`, teamID)
	if err != nil {
		return nil, fmt.Errorf("store: list api keys: %w", mapErr(err))
	}
	defer rows.Close()
	keys := []store.APIKey{}
	found := false
	for rows.Next() {
		found = true
		var (
			id, tid, prefix, created, revoked sql.NullString
			hash                              []byte
		)
		if err := rows.Scan(&id, &tid, &hash, &prefix, &created, &revoked); err != nil {
			return nil, fmt.Errorf("store: list api keys: %w", err)
		}
		if !id.Valid {
			continue
		}
		k := store.APIKey{ID: id.String, TeamID: tid.String, Hash: hash, Prefix: prefix.String}
		if err := setKeyTimes(&k, created.String, revoked); err != nil {
			return nil, fmt.Errorf("store: list api keys: %w", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list api keys: %w", mapErr(err))
	}
	if !found {
		return nil, fmt.Errorf("store: list api keys: %w", store.ErrNotFound)
	}
	return keys, nil
}

// CountAPIKeys counts the active keys of all teams.
func (s *Store) CountAPIKeys(ctx context.Context) (int, error) {
	var n int
	if err := s.read.QueryRowContext(ctx,
		`SELECT count(*) FROM api_keys WHERE revoked_at IS NULL`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count api keys: %w", mapErr(err))
	}
	return n, nil
}

func scanTeam(row scanner) (store.Team, error) {
	var (
		t       store.Team
		created string
	)
	if err := row.Scan(&t.ID, &t.Name, &created); err != nil {
		return store.Team{}, err
	}
	var err error
	if t.CreatedAt, err = parseTime(created); err != nil {
		return store.Team{}, err
	}
	return t, nil
}

func scanKey(row scanner) (store.APIKey, error) {
	var (
		k       store.APIKey
		created string
		revoked sql.NullString
	)
	if err := row.Scan(&k.ID, &k.TeamID, &k.Hash, &k.Prefix, &created, &revoked); err != nil {
		return store.APIKey{}, err
	}
	if err := setKeyTimes(&k, created, revoked); err != nil {
		return store.APIKey{}, err
	}
	return k, nil
}

func setKeyTimes(k *store.APIKey, created string, revoked sql.NullString) error {
	var err error
	if k.CreatedAt, err = parseTime(created); err != nil {
		return err
	}
	k.RevokedAt = nil
	if revoked.Valid {
		r, err := parseTime(revoked.String)
		if err != nil {
			return err
		}
		k.RevokedAt = &r
	}
	return nil
}
