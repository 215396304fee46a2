-- Credit balances. A team without a row is unlimited; a row makes it
-- limited. plan is the total granted (SetCredits resets it, AddCredits adds).
CREATE TABLE team_credits (
    team_id    uuid        PRIMARY KEY REFERENCES teams (id) ON DELETE CASCADE,
    remaining  bigint      NOT NULL CHECK (remaining >= 0),
    plan       bigint      NOT NULL CHECK (plan >= 0),
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- One row per charge, written in the transaction that decrements the
-- balance. idempotency_key, when set, is unique per team.
CREATE TABLE credit_usage (
    id              uuid        PRIMARY KEY,
    team_id         uuid        NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    api_key_id      uuid        REFERENCES api_keys (id) ON DELETE SET NULL,
    credits         bigint      NOT NULL CHECK (credits >= 0),
    kind            text        NOT NULL,
    idempotency_key text,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (team_id, idempotency_key)
);

CREATE INDEX credit_usage_team_id_created_at_idx ON credit_usage (team_id, created_at);
