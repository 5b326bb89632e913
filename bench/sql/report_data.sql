-- bench/sql/report_data.sql - turn the 577 timed snapshots that
-- bench/run.sh took (with statement and relation changes between them) into
-- two 24-hour windows: taken_at 5 minutes apart over 48 hours, 800
-- connections at each snapshot (snapshot_activity), windows over snapshots
-- 0..288 and 288..576.  Sampler data (86,400 samples per window) comes from
-- the sampler's own tables when they exist; see bench/README.md.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
\set ON_ERROR_STOP on
SET client_min_messages = warning;

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

DROP TABLE IF EXISTS bench.report_windows;
CREATE TABLE bench.report_windows (window_id bigint, begin_snap bigint, end_snap bigint);
WITH s AS (
    SELECT snap_id, row_number() OVER (ORDER BY snap_id) - 1 AS i
    FROM folio_perf_data.snapshot WHERE kind = 'timed'
), b AS (
    SELECT (SELECT snap_id FROM s WHERE i = 0) AS s0,
           (SELECT snap_id FROM s WHERE i = 288) AS s1,
           (SELECT snap_id FROM s WHERE i = 576) AS s2
)
INSERT INTO bench.report_windows
SELECT folio_perf_window(b.s0, b.s1, 'soak day 1'), b.s0, b.s1 FROM b
UNION ALL
SELECT folio_perf_window(b.s1, b.s2, 'soak day 2'), b.s1, b.s2 FROM b;

SELECT 'window ' || w.window_id || ': snapshots ' || w.begin_snap || '..' || w.end_snap
       || ', ' || (SELECT count(*) FROM folio_perf_data.snapshot s
                   WHERE s.snap_id > w.begin_snap AND s.snap_id <= w.end_snap) || ' snapshots, '
       || (SELECT count(*) FROM folio_perf_data.stmt x
           WHERE x.snap_id > w.begin_snap AND x.snap_id <= w.end_snap) || ' statement rows, '
       || (SELECT count(*) FROM folio_perf_data.rel x
           WHERE x.snap_id > w.begin_snap AND x.snap_id <= w.end_snap) || ' relation rows, '
       || (SELECT sum(connections) FROM folio_perf_data.snapshot_activity a
           WHERE a.snap_id = w.end_snap) || ' connections per snapshot'
FROM bench.report_windows w ORDER BY w.window_id;
