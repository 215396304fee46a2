DROP TABLE IF EXISTS credit_usage;
DROP TABLE IF EXISTS team_credits;
