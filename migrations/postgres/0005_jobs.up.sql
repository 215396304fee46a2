-- Crawls and batch scrapes. The counters are kept in the transactions that
-- claim and finish URLs, so reading a job never counts its URLs:
-- url_count (claimed), done_count, failed_count, skipped_count; pending is
-- url_count minus the three others. done_count doubles as the sequence of
-- job_documents and failed_count as that of job_errors.
CREATE TABLE jobs (
    id                  uuid        PRIMARY KEY,
    team_id             uuid        NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    api_key_id          uuid        REFERENCES api_keys (id) ON DELETE SET NULL,
    kind                text        NOT NULL CHECK (kind IN ('crawl', 'batch')),
    status              text        NOT NULL CHECK (status IN ('scraping', 'completed', 'failed', 'cancelled')),
    url                 text        NOT NULL,
    options             bytea       NOT NULL,
    url_limit           integer     NOT NULL CHECK (url_limit >= 0),
    zero_data_retention boolean     NOT NULL DEFAULT false,
    idempotency_key     text,
    created_at          timestamptz NOT NULL DEFAULT now(),
    expires_at          timestamptz NOT NULL,
    completed_at        timestamptz,
    error               text        NOT NULL DEFAULT '',
    url_count           integer     NOT NULL DEFAULT 0,
    done_count          integer     NOT NULL DEFAULT 0,
    failed_count        integer     NOT NULL DEFAULT 0,
    skipped_count       integer     NOT NULL DEFAULT 0,
    credits_used        bigint      NOT NULL DEFAULT 0,
    UNIQUE (team_id, idempotency_key)
);

CREATE INDEX jobs_expires_at_idx ON jobs (expires_at);
CREATE INDEX jobs_team_id_status_idx ON jobs (team_id, status, kind, created_at);
CREATE INDEX jobs_scraping_idx ON jobs (created_at) WHERE status = 'scraping';

-- The URLs a job claimed, keyed by their normalized form. parent is the key
-- of the page that linked them ('' for seeds).
CREATE TABLE job_urls (
    job_id uuid    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    key    text    NOT NULL,
    url    text    NOT NULL,
    depth  integer NOT NULL,
    parent text    NOT NULL,
    state  text    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed', 'skipped')),
    PRIMARY KEY (job_id, key)
);

-- Documents of done URLs; seq is the finish order within the job, from 1
-- without gaps.
CREATE TABLE job_documents (
    job_id   uuid    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq      integer NOT NULL,
    document bytea   NOT NULL,
    PRIMARY KEY (job_id, seq)
);

-- Failed URLs; seq is the failure order within the job, from 1.
CREATE TABLE job_errors (
    id         uuid        PRIMARY KEY,
    job_id     uuid        NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq        integer     NOT NULL,
    url        text        NOT NULL,
    code       text        NOT NULL,
    error      text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (job_id, seq)
);

-- URLs robots.txt kept a job from, in insertion order (seq).
CREATE TABLE job_robots_blocked (
    job_id uuid   NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    url    text   NOT NULL,
    seq    bigint GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (job_id, url)
);
