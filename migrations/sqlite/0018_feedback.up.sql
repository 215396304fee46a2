-- Feedback teams give on their results (POST /v2/feedback and
-- /v2/search/{id}/feedback): one row per team, endpoint and rated id. Ids
-- are UUIDv7 in canonical lower-case form, so their order as text is the
-- order of creation.
CREATE TABLE feedback (
    id         TEXT NOT NULL PRIMARY KEY,
    team_id    TEXT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    endpoint   TEXT NOT NULL,
    job_id     TEXT NOT NULL,
    rating     TEXT NOT NULL,
    note       TEXT NOT NULL,
    details    TEXT,
    origin     TEXT NOT NULL,
    created_at TEXT NOT NULL,
    UNIQUE (team_id, endpoint, job_id)
) STRICT;

CREATE INDEX feedback_team_id_idx ON feedback (team_id, id DESC);
