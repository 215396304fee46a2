-- Per-team overrides of the server's limits. A team without a row, or a
-- NULL column, uses the server default.
CREATE TABLE team_limits (
    team_id             uuid        PRIMARY KEY REFERENCES teams (id) ON DELETE CASCADE,
    concurrency_limit   integer     CHECK (concurrency_limit >= 0),
    rate_multiplier     integer     CHECK (rate_multiplier >= 0),
    zero_data_retention boolean     NOT NULL DEFAULT false,
    updated_at          timestamptz NOT NULL DEFAULT now()
);
