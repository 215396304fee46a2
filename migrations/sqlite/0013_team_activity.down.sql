DROP TABLE team_activity;
