-- Agent runs. state is the run's progress after its last recorded step
-- (step); event_count doubles as the sequence of agent_events, kept in the
-- transactions that append events.
CREATE TABLE agent_runs (
    id           TEXT    NOT NULL PRIMARY KEY,
    team_id      TEXT    NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    api_key_id   TEXT    REFERENCES api_keys (id) ON DELETE SET NULL,
    parent_id    TEXT    REFERENCES agent_runs (id) ON DELETE CASCADE,
    status       TEXT    NOT NULL CHECK (status IN ('processing', 'completed', 'failed', 'cancelled')),
    model        TEXT    NOT NULL,
    options      BLOB    NOT NULL,
    max_credits  INTEGER NOT NULL CHECK (max_credits >= 0),
    state        BLOB,
    step         INTEGER NOT NULL DEFAULT 0,
    credits_used INTEGER NOT NULL DEFAULT 0,
    data         BLOB,
    error        TEXT    NOT NULL DEFAULT '',
    event_count  INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT    NOT NULL,
    updated_at   TEXT    NOT NULL,
    expires_at   TEXT    NOT NULL,
    finished_at  TEXT
) STRICT;

CREATE INDEX agent_runs_team_idx ON agent_runs (team_id, created_at) WHERE parent_id IS NULL;
CREATE INDEX agent_runs_parent_idx ON agent_runs (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX agent_runs_expires_at_idx ON agent_runs (expires_at);
CREATE INDEX agent_runs_processing_idx ON agent_runs (updated_at) WHERE status = 'processing';

-- Trace events of a run, seq from 1 without gaps.
CREATE TABLE agent_events (
    run_id     TEXT    NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    body       BLOB    NOT NULL,
    created_at TEXT    NOT NULL,
    PRIMARY KEY (run_id, seq)
) STRICT;

-- Intermediate results of a run, named by the artifact.updated events.
CREATE TABLE agent_snapshots (
    id         TEXT    NOT NULL PRIMARY KEY,
    run_id     TEXT    NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
    content    TEXT    NOT NULL,
    created_at TEXT    NOT NULL
) STRICT;

CREATE INDEX agent_snapshots_run_idx ON agent_snapshots (run_id);
