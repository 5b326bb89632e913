-- bench/sql/report_data.sql - turn the 577 timed snapshots that
-- bench/run.sh took (with statement and relation changes between them) into
-- two 24-hour windows: taken_at 5 minutes apart over 48 hours, 800
-- connections at each snapshot (snapshot_activity), windows over snapshots
-- 0..288 and 288..576.  Sampler data (86,400 samples per window) comes from
-- the sampler's own tables when they exist; see bench/README.md.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
\set ON_ERROR_STOP on
SET client_min_messages = warning;

-- relations stored between two snapshots: elements of the chunk store, or
-- rows of the store before it (--against an older commit)
CREATE SCHEMA IF NOT EXISTS bench;
CREATE OR REPLACE FUNCTION bench.relation_entries(b bigint, e bigint) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    IF to_regclass('folio_perf_data.rel_chunk') IS NOT NULL THEN
        EXECUTE 'SELECT coalesce(sum(cardinality(x.keys)), 0) FROM folio_perf_data.rel_chunk x
                 WHERE x.snap_id > $1 AND x.snap_id <= $2' INTO n USING b, e;
    ELSE
        EXECUTE 'SELECT count(*) FROM folio_perf_data.rel x WHERE x.snap_id > $1 AND x.snap_id <= $2'
            INTO n USING b, e;
    END IF;
    RETURN n;
END
$$;

WITH s AS (
    SELECT snap_id, row_number() OVER (ORDER BY snap_id) - 1 AS i
    FROM folio_perf_data.snapshot WHERE kind = 'timed'
)
UPDATE folio_perf_data.snapshot x
SET taken_at = date_trunc('hour', now()) - interval '48 hours' + s.i * interval '5 minutes'
FROM s WHERE x.snap_id = s.snap_id;

-- 800 connections: 40 tenants x 20 modules, 1 connection each, half idle
DELETE FROM folio_perf_data.snapshot_activity
WHERE snap_id IN (SELECT snap_id FROM folio_perf_data.snapshot WHERE kind = 'timed');
INSERT INTO folio_perf_data.snapshot_activity
    (snap_id, datname, usename, application_name, state, wait_event_type, backend_type, connections)
SELECT s.snap_id, current_database(), format('fs%s_mod_%s', 9000000 + t, m),
       format('mod-%s-1.0.0', m), CASE WHEN (t + m + s.snap_id) % 2 = 0 THEN 'idle' ELSE 'active' END,
       CASE WHEN (t + m + s.snap_id) % 2 = 0 THEN 'Client' END, 'client backend', 1
FROM folio_perf_data.snapshot s, generate_series(1, 40) t, generate_series(1, 20) m
WHERE s.kind = 'timed';

-- windows: the two days (0..288, 288..576), the first day's halves
-- (0..144, 144..288), two windows of two snapshots (0..1, 1..2) and two of
-- 22 (0..21, 21..42); kind names them for bench/run.sh
DROP TABLE IF EXISTS bench.report_windows;
CREATE TABLE bench.report_windows (kind text, window_id bigint, begin_snap bigint, end_snap bigint);
WITH s AS (
    SELECT snap_id, row_number() OVER (ORDER BY snap_id) - 1 AS i
    FROM folio_perf_data.snapshot WHERE kind = 'timed'
), w(kind, i0, i1, label) AS (
    VALUES ('day1', 0, 288, 'soak day 1'), ('day2', 288, 576, 'soak day 2'),
           ('half1', 0, 144, 'day 1, first half'), ('half2', 144, 288, 'day 1, second half'),
           ('two_a', 0, 1, 'two snapshots a'), ('two_b', 1, 2, 'two snapshots b'),
           ('w22_a', 0, 21, '22 snapshots a'), ('w22_b', 21, 42, '22 snapshots b')
)
INSERT INTO bench.report_windows
SELECT w.kind, folio_perf_window(b.snap_id, e.snap_id, w.label), b.snap_id, e.snap_id
FROM w JOIN s b ON b.i = w.i0 JOIN s e ON e.i = w.i1
ORDER BY w.i0, w.i1;

SELECT w.kind || ': window ' || w.window_id || ': snapshots ' || w.begin_snap || '..' || w.end_snap
       || ', ' || (SELECT count(*) FROM folio_perf_data.snapshot s
                   WHERE s.snap_id > w.begin_snap AND s.snap_id <= w.end_snap) || ' snapshots, '
       || (SELECT count(*) FROM folio_perf_data.stmt x
           WHERE x.snap_id > w.begin_snap AND x.snap_id <= w.end_snap) || ' statement rows, '
       || bench.relation_entries(w.begin_snap, w.end_snap) || ' relation entries, '
       || (SELECT sum(connections) FROM folio_perf_data.snapshot_activity a
           WHERE a.snap_id = w.end_snap) || ' connections per snapshot'
FROM bench.report_windows w ORDER BY w.window_id;
