-- Teams own API keys; every operation is scoped to one team.
CREATE TABLE teams (
    id         uuid        PRIMARY KEY,
    name       text        NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- API keys are stored as their SHA-256 hash only; prefix is for display.
CREATE TABLE api_keys (
    id         uuid        PRIMARY KEY,
    team_id    uuid        NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    hash       bytea       NOT NULL UNIQUE,
    prefix     text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);

CREATE INDEX api_keys_team_id_created_at_idx ON api_keys (team_id, created_at DESC, id DESC);
