-- +goose NO TRANSACTION
-- 00015 rebuilt agent_capabilities, and an index-only scan reads a heap page
-- as well until a vacuum marks the page all-visible: without this, FIND by a
-- capability at 1,000,000 agents took 15.7 ms (0.3 ms after). Autovacuum
-- would get there in time; FIND should not wait for it (VACUUM cannot run in
-- a migration's transaction, hence this one of its own).
-- +goose Up
VACUUM (ANALYZE) agent_capabilities;

-- +goose Down
SELECT 1;
