DROP TABLE idempotency_keys;
ALTER TABLE team_limits DROP COLUMN third_party_terms;
ALTER TABLE team_limits DROP COLUMN catalog;
