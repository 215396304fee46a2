-- Live browser sessions (interact and browser routes): the browser lives in
-- one server process, the record here. A scrape has at most one session,
-- ever: once it is destroyed the scrape's interact answers 410.
-- No foreign key on team_id: with auth off every request belongs to a team
-- id that has no row in teams.
CREATE TABLE interact_sessions (
    id                   uuid        PRIMARY KEY,
    team_id              uuid        NOT NULL,
    scrape_id            text,
    status               text        NOT NULL CHECK (status IN ('active', 'destroyed')),
    ttl_ms               bigint      NOT NULL,
    activity_ttl_ms      bigint      NOT NULL,
    stream_web_view      boolean     NOT NULL,
    profile_name         text        NOT NULL DEFAULT '',
    save_changes         boolean     NOT NULL DEFAULT false,
    created_at           timestamptz NOT NULL,
    last_activity        timestamptz NOT NULL,
    expires_at           timestamptz NOT NULL,
    idle_at              timestamptz NOT NULL,
    destroyed_at         timestamptz,
    end_reason           text        NOT NULL DEFAULT '',
    duration_ms          bigint      NOT NULL DEFAULT 0,
    credits_billed       bigint      NOT NULL DEFAULT 0
);

CREATE UNIQUE INDEX interact_sessions_scrape_idx ON interact_sessions (team_id, scrape_id) WHERE scrape_id IS NOT NULL;
CREATE INDEX interact_sessions_team_idx ON interact_sessions (team_id, created_at);
CREATE INDEX interact_sessions_expiry_idx ON interact_sessions (expires_at, idle_at) WHERE status = 'active';
