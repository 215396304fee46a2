-- Catalog access per team (server limits set --catalog) and acceptance of
-- the third-party data terms (--accept-third-party-terms).
ALTER TABLE team_limits ADD COLUMN catalog INTEGER NOT NULL DEFAULT 0;
ALTER TABLE team_limits ADD COLUMN third_party_terms INTEGER NOT NULL DEFAULT 0;

-- x-request-id keys of catalog calls: the request a key was first used
-- for, its state and final response, kept until expires_at. No foreign
-- key: the self-hosted team of AUTH_MODE=off has no teams row.
CREATE TABLE idempotency_keys (
    team_id      TEXT    NOT NULL,
    key          TEXT    NOT NULL,
    request_hash BLOB    NOT NULL,
    owner        TEXT    NOT NULL,
    scrape_id    TEXT    NOT NULL,
    done         INTEGER NOT NULL DEFAULT 0 CHECK (done IN (0, 1)),
    status       INTEGER,
    response     BLOB,
    created_at   TEXT    NOT NULL,
    lease_until  TEXT    NOT NULL,
    run_until    TEXT    NOT NULL,
    expires_at   TEXT    NOT NULL,
    PRIMARY KEY (team_id, key)
) STRICT;
CREATE INDEX idempotency_keys_expires_at_idx ON idempotency_keys (expires_at);
