-- Live browser sessions (interact and browser routes): the browser lives in
-- one server process, the record here. A scrape has at most one session,
-- ever: once it is destroyed the scrape's interact answers 410.
-- No foreign key on team_id: with auth off every request belongs to a team
-- id that has no row in teams.
CREATE TABLE interact_sessions (
    id                   TEXT    NOT NULL PRIMARY KEY,
    team_id              TEXT    NOT NULL,
    scrape_id            TEXT,
    status               TEXT    NOT NULL CHECK (status IN ('active', 'destroyed')),
    ttl_ms               INTEGER NOT NULL,
    activity_ttl_ms      INTEGER NOT NULL,
    stream_web_view      INTEGER NOT NULL,
    profile_name         TEXT    NOT NULL DEFAULT '',
    save_changes         INTEGER NOT NULL DEFAULT 0,
    created_at           TEXT    NOT NULL,
    last_activity        TEXT    NOT NULL,
    expires_at           TEXT    NOT NULL,
    idle_at              TEXT    NOT NULL,
    destroyed_at         TEXT,
    end_reason           TEXT    NOT NULL DEFAULT '',
    duration_ms          INTEGER NOT NULL DEFAULT 0,
    credits_billed       INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE UNIQUE INDEX interact_sessions_scrape_idx ON interact_sessions (team_id, scrape_id) WHERE scrape_id IS NOT NULL;
CREATE INDEX interact_sessions_team_idx ON interact_sessions (team_id, created_at);
CREATE INDEX interact_sessions_expiry_idx ON interact_sessions (expires_at, idle_at) WHERE status = 'active';
