-- The email recipients of a monitor's notifications. A recipient is asked
-- to confirm (pending) before any check summary is sent (confirmed); an
-- unsubscribed one is kept, even when the monitor no longer lists it, so
-- that listing it again does not ask again. last_sent_at/last_check_id are
-- the claim that sends one summary per check and bounds the rate.
CREATE TABLE monitor_email_recipients (
    monitor_id      TEXT NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    email           TEXT NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('pending', 'confirmed', 'unsubscribed')),
    confirm_sent_at TEXT,
    last_sent_at    TEXT,
    last_check_id   TEXT NOT NULL DEFAULT '',
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    PRIMARY KEY (monitor_id, email)
) STRICT;

CREATE INDEX monitors_deleted_idx ON monitors (updated_at) WHERE status = 'deleted';
