DROP TABLE IF EXISTS interact_sessions;
