-- Credit balances. A team without a row is unlimited; a row makes it
-- limited. plan is the total granted (SetCredits resets it, AddCredits adds).
CREATE TABLE team_credits (
    team_id    TEXT    NOT NULL PRIMARY KEY REFERENCES teams (id) ON DELETE CASCADE,
    remaining  INTEGER NOT NULL CHECK (remaining >= 0),
    plan       INTEGER NOT NULL CHECK (plan >= 0),
    updated_at TEXT    NOT NULL
) STRICT;

-- One row per charge, written in the transaction that decrements the
-- balance. idempotency_key, when set, is unique per team.
CREATE TABLE credit_usage (
    id              TEXT    NOT NULL PRIMARY KEY,
    team_id         TEXT    NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    api_key_id      TEXT    REFERENCES api_keys (id) ON DELETE SET NULL,
    credits         INTEGER NOT NULL CHECK (credits >= 0),
    kind            TEXT    NOT NULL,
    idempotency_key TEXT,
    created_at      TEXT    NOT NULL,
    UNIQUE (team_id, idempotency_key)
) STRICT;

CREATE INDEX credit_usage_team_id_created_at_idx ON credit_usage (team_id, created_at);
