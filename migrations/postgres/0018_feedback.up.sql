-- Feedback teams give on their results (POST /v2/feedback and
-- /v2/search/{id}/feedback): one row per team, endpoint and rated id. Ids
-- are UUIDv7, so their order is the order of creation.
CREATE TABLE feedback (
    id         uuid        NOT NULL PRIMARY KEY,
    team_id    uuid        NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    endpoint   text        NOT NULL,
    job_id     text        NOT NULL,
    rating     text        NOT NULL,
    note       text        NOT NULL,
    details    jsonb,
    origin     text        NOT NULL,
    created_at timestamptz NOT NULL,
    UNIQUE (team_id, endpoint, job_id)
);

CREATE INDEX feedback_team_id_idx ON feedback (team_id, id DESC);
