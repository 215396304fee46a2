-- Zero data retention forced on for a team (server limits set --zdr-forced):
-- every request of the team runs as if it asked for zero data retention.
ALTER TABLE team_limits ADD COLUMN zero_data_retention_forced boolean NOT NULL DEFAULT false;
