-- The teams' recent API requests for GET /v2/team/activity (kept 24 hours):
-- endpoint, API version, target and the caller's auditMetadata.username.
-- Ids are UUIDv7, so their order is the order of creation.
CREATE TABLE team_activity (
    id          uuid        NOT NULL PRIMARY KEY,
    team_id     uuid        NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    endpoint    text        NOT NULL,
    api_version text        NOT NULL,
    target      text        NOT NULL,
    username    text        NOT NULL,
    created_at  timestamptz NOT NULL
);

CREATE INDEX team_activity_team_id_idx ON team_activity (team_id, id DESC);
CREATE INDEX team_activity_created_at_idx ON team_activity (created_at);
