-- name: CountRequest :one
-- Counts @n requests of a key at once in its fixed window, in one
-- statement (a process claims several ahead of use: pircan/admission.go): a
-- new key starts a window at n; a key whose window has ended restarts it
-- (the row proposed, excluded, is exactly the new window) at n; else the
-- count goes up by n. ON CONFLICT DO UPDATE locks the row and works on its latest
-- version, so concurrent counts (from any process) are never lost. The SET
-- expressions all read the row as it was. (interval * bigint, in this
-- order: sqlc v1.31 garbles the statement it rewrites from
-- @window_us::bigint * interval.)
INSERT INTO request_windows AS w (key, started, ends, count)
VALUES (@key, now(), now() + interval '1 microsecond' * @window_us::bigint, @n::int)
ON CONFLICT (key) DO UPDATE SET
    started = CASE WHEN w.ends <= now() THEN excluded.started ELSE w.started END,
    ends = CASE WHEN w.ends <= now() THEN excluded.ends ELSE w.ends END,
    count = CASE WHEN w.ends <= now() THEN excluded.count ELSE w.count + excluded.count END
RETURNING count, ends;

-- name: PruneRequestWindows :execrows
-- Deletes up to max_rows windows that ended before @before: a bounded
-- batch, so one call never holds many row locks or runs long. The outer
-- condition is checked again on a row counted meanwhile (its ctid then
-- names an old version, and it is skipped).
DELETE FROM request_windows d
WHERE d.ctid = ANY (ARRAY(SELECT e.ctid FROM request_windows e WHERE e.ends < @before LIMIT @max_rows::int))
  AND d.ends < @before;
