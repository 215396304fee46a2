-- Monitors: a team's scheduled change checks. config is the monitor
-- package's JSON (targets, webhook, notification, goal); next_run_at is the
-- claim a scheduler compares-and-sets to start a scheduled check once.
CREATE TABLE monitors (
    id                          uuid        PRIMARY KEY,
    team_id                     uuid        NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    name                        text        NOT NULL,
    status                      text        NOT NULL CHECK (status IN ('active', 'paused', 'deleted')),
    cron                        text        NOT NULL,
    timezone                    text        NOT NULL,
    config                      bytea       NOT NULL,
    retention_days              integer     NOT NULL CHECK (retention_days > 0),
    estimated_credits_per_month bigint      NOT NULL DEFAULT 0,
    next_run_at                 timestamptz,
    last_run_at                 timestamptz,
    current_check_id            uuid,
    last_check_summary          bytea,
    created_at                  timestamptz NOT NULL,
    updated_at                  timestamptz NOT NULL
);

CREATE INDEX monitors_team_idx ON monitors (team_id, created_at);
CREATE INDEX monitors_due_idx ON monitors (next_run_at) WHERE status = 'active';

CREATE TABLE monitor_checks (
    id                uuid        PRIMARY KEY,
    monitor_id        uuid        NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    team_id           uuid        NOT NULL,
    status            text        NOT NULL,
    trigger           text        NOT NULL CHECK (trigger IN ('scheduled', 'manual')),
    scheduled_for     timestamptz,
    started_at        timestamptz,
    finished_at       timestamptz,
    estimated_credits bigint      NOT NULL DEFAULT 0,
    reserved_credits  bigint,
    actual_credits    bigint,
    billing_status    text        NOT NULL,
    summary           bytea,
    target_results    bytea,
    error             text        NOT NULL DEFAULT '',
    created_at        timestamptz NOT NULL,
    updated_at        timestamptz NOT NULL
);

CREATE INDEX monitor_checks_monitor_idx ON monitor_checks (monitor_id, created_at);
CREATE INDEX monitor_checks_queued_idx ON monitor_checks (created_at) WHERE status = 'queued';

CREATE TABLE monitor_pages (
    id                 uuid        PRIMARY KEY,
    check_id           uuid        NOT NULL REFERENCES monitor_checks (id) ON DELETE CASCADE,
    monitor_id         uuid        NOT NULL,
    target_id          text        NOT NULL,
    url                text        NOT NULL,
    status             text        NOT NULL,
    previous_scrape_id text        NOT NULL DEFAULT '',
    current_scrape_id  text        NOT NULL DEFAULT '',
    status_code        integer     NOT NULL DEFAULT 0,
    error              text        NOT NULL DEFAULT '',
    data               bytea,
    seq                bigserial,
    created_at         timestamptz NOT NULL,
    UNIQUE (check_id, target_id, url)
);

CREATE INDEX monitor_pages_url_idx ON monitor_pages (monitor_id, target_id, url, seq);
