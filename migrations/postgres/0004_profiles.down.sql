DROP TABLE IF EXISTS browser_profiles;
