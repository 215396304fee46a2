-- The email recipients of a monitor's notifications. A recipient is asked
-- to confirm (pending) before any check summary is sent (confirmed); an
-- unsubscribed one is kept, even when the monitor no longer lists it, so
-- that listing it again does not ask again. last_sent_at/last_check_id are
-- the claim that sends one summary per check and bounds the rate.
CREATE TABLE monitor_email_recipients (
    monitor_id      uuid        NOT NULL REFERENCES monitors (id) ON DELETE CASCADE,
    email           text        NOT NULL,
    status          text        NOT NULL CHECK (status IN ('pending', 'confirmed', 'unsubscribed')),
    confirm_sent_at timestamptz,
    last_sent_at    timestamptz,
    last_check_id   text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL,
    updated_at      timestamptz NOT NULL,
    PRIMARY KEY (monitor_id, email)
);

CREATE INDEX monitors_deleted_idx ON monitors (updated_at) WHERE status = 'deleted';
