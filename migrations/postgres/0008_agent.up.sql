-- Agent runs. state is the run's progress after its last recorded step
-- (step); event_count doubles as the sequence of agent_events, kept in the
-- transactions that append events under the run's row lock.
CREATE TABLE agent_runs (
    id           uuid        PRIMARY KEY,
    team_id      uuid        NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    api_key_id   uuid        REFERENCES api_keys (id) ON DELETE SET NULL,
    parent_id    uuid        REFERENCES agent_runs (id) ON DELETE CASCADE,
    status       text        NOT NULL CHECK (status IN ('processing', 'completed', 'failed', 'cancelled')),
    model        text        NOT NULL,
    options      bytea       NOT NULL,
    max_credits  bigint      NOT NULL CHECK (max_credits >= 0),
    state        bytea,
    step         integer     NOT NULL DEFAULT 0,
    credits_used bigint      NOT NULL DEFAULT 0,
    data         bytea,
    error        text        NOT NULL DEFAULT '',
    event_count  integer     NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    finished_at  timestamptz
);

CREATE INDEX agent_runs_team_idx ON agent_runs (team_id, created_at DESC) WHERE parent_id IS NULL;
CREATE INDEX agent_runs_parent_idx ON agent_runs (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX agent_runs_expires_at_idx ON agent_runs (expires_at);
CREATE INDEX agent_runs_processing_idx ON agent_runs (updated_at) WHERE status = 'processing';

-- Trace events of a run, seq from 1 without gaps.
CREATE TABLE agent_events (
    run_id     uuid        NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
    seq        integer     NOT NULL,
    body       bytea       NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, seq)
);

-- Intermediate results of a run, named by the artifact.updated events.
CREATE TABLE agent_snapshots (
    id         uuid        PRIMARY KEY,
    run_id     uuid        NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
    content    text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX agent_snapshots_run_idx ON agent_snapshots (run_id);
