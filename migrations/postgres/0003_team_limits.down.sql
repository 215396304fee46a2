DROP TABLE IF EXISTS team_limits;
