-- Teams own API keys; every operation is scoped to one team.
-- Timestamps are UTC RFC 3339 text with exactly six fractional digits
-- (2006-01-02T15:04:05.000000Z) so that text order is time order.
CREATE TABLE teams (
    id         TEXT NOT NULL PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL
) STRICT;

-- API keys are stored as their SHA-256 hash only; prefix is for display.
CREATE TABLE api_keys (
    id         TEXT NOT NULL PRIMARY KEY,
    team_id    TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    hash       BLOB NOT NULL UNIQUE,
    prefix     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
) STRICT;

CREATE INDEX api_keys_team_id_created_at_idx ON api_keys (team_id, created_at DESC, id DESC);
