-- Saved browser profiles (cookies, local storage, ...): opaque state a team
-- names and reuses across scrapes. Saving a profile replaces its state.
CREATE TABLE browser_profiles (
    team_id    TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    name       TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 128),
    state      BLOB NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (team_id, name)
) STRICT;
