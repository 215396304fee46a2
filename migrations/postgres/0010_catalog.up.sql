-- Catalog access per team (server limits set --catalog) and acceptance of
-- the third-party data terms (--accept-third-party-terms).
ALTER TABLE team_limits ADD COLUMN catalog boolean NOT NULL DEFAULT false;
ALTER TABLE team_limits ADD COLUMN third_party_terms boolean NOT NULL DEFAULT false;

-- x-request-id keys of catalog calls: the request a key was first used
-- for, its state and final response, kept until expires_at. No foreign
-- key: the self-hosted team of AUTH_MODE=off has no teams row.
CREATE TABLE idempotency_keys (
    team_id      uuid        NOT NULL,
    key          text        NOT NULL,
    request_hash bytea       NOT NULL,
    owner        text        NOT NULL,
    scrape_id    text        NOT NULL,
    done         boolean     NOT NULL DEFAULT false,
    status       integer,
    response     bytea,
    created_at   timestamptz NOT NULL DEFAULT now(),
    lease_until  timestamptz NOT NULL,
    run_until    timestamptz NOT NULL,
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (team_id, key)
);
CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);
