package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/firegate/firegate/internal/store"
)

// parseID returns the canonical form of a UUID, or store.ErrNotFound: a
// malformed id cannot name a row.
func parseID(id string) (uuid.UUID, error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return uuid.UUID{}, fmt.Errorf("%w: malformed id %q", store.ErrNotFound, id)
	}
	return u, nil
}

// newID returns a time-ordered UUIDv7.
func newID() (uuid.UUID, error) {
	return uuid.NewV7()
}

// CreateTeam creates a team; store.ErrConflict if the name exists.
func (s *Store) CreateTeam(ctx context.Context, name string) (store.Team, error) {
	id, err := newID()
	if err != nil {
		return store.Team{}, fmt.Errorf("store: create team: %w", err)
	}
	t, err := scanTeam(s.pool.QueryRow(ctx,
		`INSERT INTO teams (id, name) VALUES ($1, $2) RETURNING id, name, created_at`, id, name))
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
	_, err = s.pool.Exec(ctx, `INSERT INTO teams (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`, uid, name)
	if err != nil {
		return fmt.Errorf("store: ensure team: %w", mapErr(err))
	}
	return nil
}

// TeamByName returns the team of that name or store.ErrNotFound.
func (s *Store) TeamByName(ctx context.Context, name string) (store.Team, error) {
	t, err := scanTeam(s.pool.QueryRow(ctx,
		`SELECT id, name, created_at FROM teams WHERE name = $1`, name))
	if err != nil {
		return store.Team{}, fmt.Errorf("store: team by name: %w", mapErr(err))
	}
	return t, nil
}

// TeamByID returns the team or store.ErrNotFound.
func (s *Store) TeamByID(ctx context.Context, id string) (store.Team, error) {
	u, err := parseID(id)
	if err != nil {
		return store.Team{}, fmt.Errorf("store: team by id: %w", err)
	}
	t, err := scanTeam(s.pool.QueryRow(ctx,
		`SELECT id, name, created_at FROM teams WHERE id = $1`, u))
	if err != nil {
		return store.Team{}, fmt.Errorf("store: team by id: %w", mapErr(err))
	}
	return t, nil
}

// ListTeams returns every team, by name.
func (s *Store) ListTeams(ctx context.Context) ([]store.Team, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, name, created_at FROM teams ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: list teams: %w", mapErr(err))
	}
	teams, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (store.Team, error) { return scanTeam(row) })
	if err != nil {
		return nil, fmt.Errorf("store: list teams: %w", mapErr(err))
	}
	return teams, nil
}

// CreateAPIKey stores a key hash for a team; store.ErrConflict if the hash
// exists, store.ErrNotFound if the team does not.
func (s *Store) CreateAPIKey(ctx context.Context, teamID string, hash []byte, prefix string) (store.APIKey, error) {
	team, err := parseID(teamID)
	if err != nil {
		return store.APIKey{}, fmt.Errorf("store: create api key: %w", err)
	}
	id, err := newID()
	if err != nil {
		return store.APIKey{}, fmt.Errorf("store: create api key: %w", err)
	}
	k, err := scanKey(s.pool.QueryRow(ctx,
		`INSERT INTO api_keys (id, team_id, hash, prefix) VALUES ($1, $2, $3, $4)
		RETURNING id, team_id, hash, prefix, created_at, revoked_at`,
		id, team, hash, prefix))
	if err != nil {
		return store.APIKey{}, fmt.Errorf("store: create api key: %w", mapErr(err))
	}
	return k, nil
}

// APIKeyByHash returns the active key with that hash and its team, or
// store.ErrNotFound.
func (s *Store) APIKeyByHash(ctx context.Context, hash []byte) (store.APIKey, store.Team, error) {
	var (
		k store.APIKey
		t store.Team
	)
	err := s.pool.QueryRow(ctx,
		`SELECT k.id, k.team_id, k.hash, k.prefix, k.created_at, k.revoked_at, t.id, t.name, t.created_at
		FROM api_keys k JOIN teams t ON t.id = k.team_id
		WHERE k.hash = $1 AND k.revoked_at IS NULL`, hash,
	).Scan(&k.ID, &k.TeamID, &k.Hash, &k.Prefix, &k.CreatedAt, &k.RevokedAt, &t.ID, &t.Name, &t.CreatedAt)
	if err != nil {
		return store.APIKey{}, store.Team{}, fmt.Errorf("store: api key by hash: %w", mapErr(err))
	}
	normalizeKey(&k)
	t.CreatedAt = t.CreatedAt.UTC()
	return k, t, nil
}

// RevokeAPIKey marks a key revoked; store.ErrNotFound if unknown.
func (s *Store) RevokeAPIKey(ctx context.Context, id string) error {
	u, err := parseID(id)
	if err != nil {
		return fmt.Errorf("store: revoke api key: %w", err)
	}
	tag, err := s.pool.Exec(ctx,
		`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1`, u)
	if err != nil {
		return fmt.Errorf("store: revoke api key: %w", mapErr(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: revoke api key: %w", store.ErrNotFound)
	}
	return nil
}

// ListAPIKeys lists a team's keys, newest first; store.ErrNotFound if the team
// does not exist.
func (s *Store) ListAPIKeys(ctx context.Context, teamID string) ([]store.APIKey, error) {
	team, err := parseID(teamID)
	if err != nil {
		return nil, fmt.Errorf("store: list api keys: %w", err)
	}
	// The LEFT JOIN yields one all-NULL key row for a team without keys and
	// no row for a missing team, telling the two apart in one statement.
	rows, err := s.pool.Query(ctx,
		`SELECT k.id, k.team_id, k.hash, k.prefix, k.created_at, k.revoked_at
		FROM teams t LEFT JOIN api_keys k ON k.team_id = t.id
		WHERE t.id = $1
		ORDER BY k.created_at DESC, k.id DESC`, team)
	if err != nil {
		return nil, fmt.Errorf("store: list api keys: %w", mapErr(err))
	}
	defer rows.Close()
	keys := []store.APIKey{}
	found := false
	for rows.Next() {
		found = true
		var (
			id, tid, prefix *string
			hash            []byte
			created         *time.Time
			revoked         *time.Time
		)
		if err := rows.Scan(&id, &tid, &hash, &prefix, &created, &revoked); err != nil {
			return nil, fmt.Errorf("store: list api keys: %w", err)
		}
		if id == nil {
			continue
		}
		k := store.APIKey{ID: *id, TeamID: *tid, Hash: hash, Prefix: *prefix, CreatedAt: *created, RevokedAt: revoked}
		normalizeKey(&k)
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
	if err := s.pool.QueryRow(ctx,
		`SELECT count(*) FROM api_keys WHERE revoked_at IS NULL`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count api keys: %w", mapErr(err))
	}
	return n, nil
}

func scanTeam(row pgx.Row) (store.Team, error) {
	var t store.Team
	if err := row.Scan(&t.ID, &t.Name, &t.CreatedAt); err != nil {
		return store.Team{}, err
	}
	t.CreatedAt = t.CreatedAt.UTC()
	return t, nil
}

func scanKey(row pgx.Row) (store.APIKey, error) {
	var k store.APIKey
	if err := row.Scan(&k.ID, &k.TeamID, &k.Hash, &k.Prefix, &k.CreatedAt, &k.RevokedAt); err != nil {
		return store.APIKey{}, err
	}
	normalizeKey(&k)
	return k, nil
}

// normalizeKey puts the key's times in UTC.
func normalizeKey(k *store.APIKey) {
	k.CreatedAt = k.CreatedAt.UTC()
	if k.RevokedAt != nil {
		r := k.RevokedAt.UTC()
		k.RevokedAt = &r
	}
}
