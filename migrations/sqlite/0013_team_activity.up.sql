-- The teams' recent API requests for GET /v2/team/activity (kept 24 hours):
-- endpoint, API version, target and the caller's auditMetadata.username.
-- Ids are UUIDv7 in canonical lower-case form, so their order as text is
-- the order of creation.
CREATE TABLE team_activity (
    id          TEXT NOT NULL PRIMARY KEY,
    team_id     TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    endpoint    TEXT NOT NULL,
    api_version TEXT NOT NULL,
    target      TEXT NOT NULL,
    username    TEXT NOT NULL,
    created_at  TEXT NOT NULL
) STRICT;

CREATE INDEX team_activity_team_id_idx ON team_activity (team_id, id DESC);
CREATE INDEX team_activity_created_at_idx ON team_activity (created_at);
