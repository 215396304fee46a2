-- Monitors: a team's scheduled change checks. config is the monitor
-- package's JSON (targets, webhook, notification, goal); next_run_at is the
-- claim a scheduler compares-and-sets to start a scheduled check once.
CREATE TABLE monitors (
    id                          TEXT    NOT NULL PRIMARY KEY,
    team_id                     TEXT    NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    name                        TEXT    NOT NULL,
    status                      TEXT    NOT NULL CHECK (status IN ('active', 'paused', 'deleted')),
    cron                        TEXT    NOT NULL,
    timezone                    TEXT    NOT NULL,
    config                      BLOB    NOT NULL,
    retention_days              INTEGER NOT NULL CHECK (retention_days > 0),
    estimated_credits_per_month INTEGER NOT NULL DEFAULT 0,
    next_run_at                 TEXT,
    last_run_at                 TEXT,
    current_check_id            TEXT,
    last_check_summary          BLOB,
    created_at                  TEXT    NOT NULL,
    updated_at                  TEXT    NOT NULL
) STRICT;

CREATE INDEX monitors_team_idx ON monitors (team_id, created_at);
CREATE INDEX monitors_due_idx ON monitors (next_run_at) WHERE status = 'active';

CREATE TABLE monitor_checks (
    id                TEXT    NOT NULL PRIMARY KEY,
    monitor_id        TEXT    NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    team_id           TEXT    NOT NULL,
    status            TEXT    NOT NULL,
    trigger           TEXT    NOT NULL CHECK (trigger IN ('scheduled', 'manual')),
    scheduled_for     TEXT,
    started_at        TEXT,
    finished_at       TEXT,
    estimated_credits INTEGER NOT NULL DEFAULT 0,
    reserved_credits  INTEGER,
    actual_credits    INTEGER,
    billing_status    TEXT    NOT NULL,
    summary           BLOB,
    target_results    BLOB,
    error             TEXT    NOT NULL DEFAULT '',
    created_at        TEXT    NOT NULL,
    updated_at        TEXT    NOT NULL
) STRICT;

CREATE INDEX monitor_checks_monitor_idx ON monitor_checks (monitor_id, created_at);
CREATE INDEX monitor_checks_queued_idx ON monitor_checks (created_at) WHERE status = 'queued';

CREATE TABLE monitor_pages (
    seq                INTEGER PRIMARY KEY AUTOINCREMENT,
    id                 TEXT    NOT NULL UNIQUE,
    check_id           TEXT    NOT NULL REFERENCES monitor_checks (id) ON DELETE CASCADE,
    monitor_id         TEXT    NOT NULL,
    target_id          TEXT    NOT NULL,
    url                TEXT    NOT NULL,
    status             TEXT    NOT NULL,
    previous_scrape_id TEXT    NOT NULL DEFAULT '',
    current_scrape_id  TEXT    NOT NULL DEFAULT '',
    status_code        INTEGER NOT NULL DEFAULT 0,
    error              TEXT    NOT NULL DEFAULT '',
    data               BLOB,
    created_at         TEXT    NOT NULL,
    UNIQUE (check_id, target_id, url)
) STRICT;

CREATE INDEX monitor_pages_url_idx ON monitor_pages (monitor_id, target_id, url, seq);
