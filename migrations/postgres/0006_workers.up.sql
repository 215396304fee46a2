-- The worker processes alive: each process that runs queue jobs writes its
-- row (keyed by its queue client id, new at every start) every few seconds.
-- A row whose beat_at is old belongs to a dead process; the jobs that
-- process was running go back to the queue and the row is deleted.
CREATE TABLE workers (
    id         text        NOT NULL PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now(),
    beat_at    timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX workers_beat_at_idx ON workers (beat_at);
