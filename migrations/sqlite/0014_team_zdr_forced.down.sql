ALTER TABLE team_limits DROP COLUMN zero_data_retention_forced;
