-- +goose Up
-- FIND's q and capability in one GIN index. Given both, the index intersects
-- the capability's posting list with the trigrams' inside one scan, skipping
-- through the longer lists, where two single-column indexes built two full
-- bitmaps and ANDed them (q:"chemical" + capability:"hazmat" at 1M agents:
-- 175,438 trigram matches read to keep 7,422; BENCHMARKS.md). A multicolumn
-- GIN index serves a condition on either column alone as well as the
-- single-column one did, so the trigram index it replaces goes.
-- agents_capabilities stays: the capability alone reads a far smaller index.
CREATE INDEX agents_capabilities_search ON agents USING gin (capabilities_folded, search gin_trgm_ops);
DROP INDEX agents_search_trgm;

-- +goose Down
CREATE INDEX agents_search_trgm ON agents USING gin (search gin_trgm_ops);
DROP INDEX agents_capabilities_search;
