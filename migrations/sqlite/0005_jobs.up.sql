-- Crawls and batch scrapes. The counters are kept in the transactions that
-- claim and finish URLs, so reading a job never counts its URLs:
-- url_count (claimed), done_count, failed_count, skipped_count; pending is
-- url_count minus the three others. done_count doubles as the sequence of
-- job_documents and failed_count as that of job_errors.
CREATE TABLE jobs (
    id                  TEXT    NOT NULL PRIMARY KEY,
    team_id             TEXT    NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    api_key_id          TEXT    REFERENCES api_keys (id) ON DELETE SET NULL,
    kind                TEXT    NOT NULL CHECK (kind IN ('crawl', 'batch')),
    status              TEXT    NOT NULL CHECK (status IN ('scraping', 'completed', 'failed', 'cancelled')),
    url                 TEXT    NOT NULL,
    options             BLOB    NOT NULL,
    url_limit           INTEGER NOT NULL CHECK (url_limit >= 0),
    zero_data_retention INTEGER NOT NULL DEFAULT 0 CHECK (zero_data_retention IN (0, 1)),
    idempotency_key     TEXT,
    created_at          TEXT    NOT NULL,
    expires_at          TEXT    NOT NULL,
    completed_at        TEXT,
    error               TEXT    NOT NULL DEFAULT '',
    url_count           INTEGER NOT NULL DEFAULT 0,
    done_count          INTEGER NOT NULL DEFAULT 0,
    failed_count        INTEGER NOT NULL DEFAULT 0,
    skipped_count       INTEGER NOT NULL DEFAULT 0,
    credits_used        INTEGER NOT NULL DEFAULT 0,
    UNIQUE (team_id, idempotency_key)
) STRICT;

CREATE INDEX jobs_expires_at_idx ON jobs (expires_at);
CREATE INDEX jobs_team_id_status_idx ON jobs (team_id, status, kind, created_at);
CREATE INDEX jobs_scraping_idx ON jobs (created_at) WHERE status = 'scraping';

-- The URLs a job claimed, keyed by their normalized form. parent is the key
-- of the page that linked them ('' for seeds).
CREATE TABLE job_urls (
    job_id TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    key    TEXT    NOT NULL,
    url    TEXT    NOT NULL,
    depth  INTEGER NOT NULL,
    parent TEXT    NOT NULL,
    state  TEXT    NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'failed', 'skipped')),
    PRIMARY KEY (job_id, key)
) STRICT, WITHOUT ROWID;

-- Documents of done URLs; seq is the finish order within the job, from 1
-- without gaps.
CREATE TABLE job_documents (
    job_id   TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    document BLOB    NOT NULL,
    PRIMARY KEY (job_id, seq)
) STRICT;

-- Failed URLs; seq is the failure order within the job, from 1.
CREATE TABLE job_errors (
    id         TEXT    NOT NULL PRIMARY KEY,
    job_id     TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    url        TEXT    NOT NULL,
    code       TEXT    NOT NULL,
    error      TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    UNIQUE (job_id, seq)
) STRICT;

-- URLs robots.txt kept a job from; seq (the rowid) is the insertion order.
CREATE TABLE job_robots_blocked (
    seq    INTEGER NOT NULL PRIMARY KEY,
    job_id TEXT    NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    url    TEXT    NOT NULL,
    UNIQUE (job_id, url)
) STRICT;
