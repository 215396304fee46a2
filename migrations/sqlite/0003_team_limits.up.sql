-- Per-team overrides of the server's limits. A team without a row, or a
-- NULL column, uses the server default.
CREATE TABLE team_limits (
    team_id             TEXT    NOT NULL PRIMARY KEY REFERENCES teams (id) ON DELETE CASCADE,
    concurrency_limit   INTEGER CHECK (concurrency_limit >= 0),
    rate_multiplier     INTEGER CHECK (rate_multiplier >= 0),
    zero_data_retention INTEGER NOT NULL DEFAULT 0 CHECK (zero_data_retention IN (0, 1)),
    updated_at          TEXT    NOT NULL
) STRICT;
