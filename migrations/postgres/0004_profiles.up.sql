-- Saved browser profiles (cookies, local storage, ...): opaque state a team
-- names and reuses across scrapes. Saving a profile replaces its state.
CREATE TABLE browser_profiles (
    team_id    uuid        NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    name       text        NOT NULL CHECK (char_length(name) BETWEEN 1 AND 128),
    state      bytea       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, name)
);
