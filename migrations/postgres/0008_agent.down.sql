DROP TABLE IF EXISTS agent_snapshots;
DROP TABLE IF EXISTS agent_events;
DROP TABLE IF EXISTS agent_runs;
