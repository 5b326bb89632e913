-- The sampler: settings, status, live samples, flush, and the reports.
-- Live sampled numbers are never printed; exact figures are checked on
-- synthetic intervals with known contents.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION IF NOT EXISTS folio_perf;
RESET client_min_messages;

-- Settings: names, units, contexts.
SELECT name, unit, context, vartype
  FROM pg_settings
 WHERE name IN ('folio_perf.sample_interval', 'folio_perf.flush_interval',
                'folio_perf.snapshot_interval', 'folio_perf.retention',
                'folio_perf.database', 'folio_perf.sample_buffer')
 ORDER BY name COLLATE "C";

-- Wait (bounded) until the worker runs in this database and has flushed.
DO $$
BEGIN
    FOR i IN 1..300 LOOP
        PERFORM folio_perf_sampler_flush();
        EXIT WHEN (SELECT state = 'sampling' AND ticks_flushed > 0
                     FROM folio_perf_sampler_status());
        PERFORM pg_sleep(0.1);
    END LOOP;
END
$$;

SELECT preloaded, state, pid > 0 AS has_pid,
       database = current_database() AS stores_here,
       sample_interval_ms, ticks > 0 AS sampled, ticks_flushed > 0 AS flushed,
       intervals > 0 AS has_intervals, buffer_size, buffer_used > 0 AS buffer_in_use,
       shmem_bytes > buffer_size * 100 AS shmem_sized, flush_errors, last_error
  FROM folio_perf_sampler_status();

-- a session that ends leaves its CPU for the sampler (TAP 014 checks the
-- figures): this one ends (\c) while the sampler samples, and the count
-- of ended sessions grows by it; none found the buffer full.  (#37:
-- "ended_sessions IS NOT NULL" passed with the exit reading off; mutation
-- run: exitcpu_at_exit returning at once fails this.)
SELECT ended_sessions AS ended_before FROM folio_perf_sampler_status() \gset
\c
SET folio_perf_test.ended_before = :'ended_before';
DO $$
BEGIN
    FOR i IN 1..200 LOOP
        EXIT WHEN (SELECT ended_sessions > current_setting('folio_perf_test.ended_before')::bigint
                     FROM folio_perf_sampler_status());
        PERFORM pg_sleep(0.05);
    END LOOP;
END
$$;
SELECT ended_sessions > current_setting('folio_perf_test.ended_before')::bigint AS ended_session_counted,
       ended_sessions_lost
  FROM folio_perf_sampler_status();
RESET folio_perf_test.ended_before;

SELECT pid = (SELECT pid FROM pg_stat_activity WHERE backend_type = 'folio_perf sampler')
       AS pid_matches_activity
  FROM folio_perf_sampler_status;

-- Live samples: this session is in them, as a client backend (wait,
-- bounded, until the sampler has passed since this session connected).
-- The wait is for the sample asserted below: from PostgreSQL 18 a backend
-- is listed before it has authenticated (no user yet), and the sampler
-- can take this session (new since the \c above) at that moment.
DO $$
BEGIN
    FOR i IN 1..400 LOOP
        EXIT WHEN EXISTS (SELECT 1 FROM folio_perf_samples
                          WHERE pid = pg_backend_pid() AND backend_type = 'client backend'
                            AND userid = (SELECT oid FROM pg_roles WHERE rolname = current_user));
        PERFORM pg_sleep(0.05);
    END LOOP;
END
$$;
SELECT count(*) > 0 AS any,
       bool_or(pid = pg_backend_pid() AND backend_type = 'client backend'
               AND userid = (SELECT oid FROM pg_roles WHERE rolname = current_user))
           AS this_session,
       bool_or(backend_type = 'checkpointer') AS aux_processes
  FROM folio_perf_samples;

SELECT folio_perf_sampler_flush() >= 0 AS flush_returns;

-- A window over two snapshots.
CREATE TEMP TABLE w AS SELECT folio_perf_snapshot() AS s0;
SELECT pg_sleep(1.5);
ALTER TABLE w ADD COLUMN s1 bigint, ADD COLUMN id bigint;
UPDATE w SET s1 = folio_perf_snapshot();
UPDATE w SET id = folio_perf_window(s0, s1);

-- Samples reach the window's end: the snapshot flushed.
SELECT max(i.ended_at) >= e.taken_at - interval '300 ms' AS samples_up_to_end
  FROM w
  JOIN folio_perf_data.snapshot b ON b.snap_id = w.s0
  JOIN folio_perf_data.snapshot e ON e.snap_id = w.s1
  JOIN folio_perf_data.sample_interval i ON i.ended_at > b.taken_at AND i.ended_at <= e.taken_at
 GROUP BY e.taken_at;

-- Connections: every dimension is there; this session held a connection
-- for the whole window.
SELECT dimension, count(*) > 0 AS has_rows,
       bool_and(avg <= max AND p95 <= max AND p95 >= 0) AS ordered
  FROM folio_perf_connections((SELECT id FROM w))
 WHERE dimension <> 'sampler'   -- a gap in a busy machine's ticks: timing
 GROUP BY dimension ORDER BY min(array_position(ARRAY['total', 'database', 'state', 'tenant',
     'module', 'tenant_module', 'role', 'application_name', 'attribution'], dimension));
SELECT avg >= 1 AND p95 >= 1 AND max >= 1 AS this_role_counted,
       pct_of_max_connections > 0 AS pct
  FROM folio_perf_connections((SELECT id FROM w))
 WHERE dimension = 'role' AND key = current_user;

-- DB load: this session was active at times, waiting in pg_sleep.
SELECT bool_or(dimension = 'total' AND aas > 0) AS total,
       bool_or(dimension = 'wait_event' AND key = 'Timeout:PgSleep') AS pg_sleep_seen,
       bool_or(dimension = 'statement' AND queryid IS NOT NULL) AS statements
  FROM folio_perf_db_load((SELECT id FROM w));

-- CPU: a host row with a percentage (Linux), or one "unavailable" row.
SELECT bool_or(dimension = 'host' AND pct_of_host_capacity BETWEEN 0 AND 100
               OR dimension = 'cpu' AND key LIKE 'unavailable%') AS host_or_unavailable
  FROM folio_perf_cpu((SELECT id FROM w));

-- Time series: 1-second buckets for a short window.
SELECT DISTINCT bucket_end - bucket_start AS width, series
  FROM folio_perf_timeseries((SELECT id FROM w))
 ORDER BY series;

------------------------------------------------------------------------
-- Exact figures on synthetic intervals (in 2001, far from live data).
------------------------------------------------------------------------
INSERT INTO folio_perf_data.sample_series
    (series_id, kind, dimension, key, dbid, userid, queryid, tenant, module, attributed_by)
VALUES
    (900001, 'connections', 'total', 'regress_all', NULL, NULL, NULL, NULL, NULL, NULL),
    (900002, 'connections', 'role', 'regress_fs01_mod_users', NULL, NULL, NULL, 'fs01', 'mod_users', 'role'),
    (900003, 'load', 'total', 'regress_all', NULL, NULL, NULL, NULL, NULL, NULL),
    (900004, 'load', 'wait_event', 'regress_LWLock:WALWrite', NULL, NULL, NULL, NULL, NULL, NULL),
    (900005, 'load', 'statement', 'regress_1:2:77', 1, 2, 77, NULL, NULL, NULL),
    (900006, 'cpu', 'total', 'regress_all', NULL, NULL, NULL, NULL, NULL, NULL),
    (900007, 'cpu', 'module', 'regress_mod_users', NULL, NULL, NULL, NULL, 'mod_users', NULL);

-- Statement 77 is known to the snapshots, attributed by relations.
INSERT INTO folio_perf_data.snapshot
    (taken_at, dbid, datname, server_version_num, server_start, preloaded, max_connections)
VALUES ('2001-01-01 00:00:00+00', 1, 'regress', 150000, '2001-01-01', true, 50),
       ('2001-01-01 00:01:00+00', 1, 'regress', 150000, '2001-01-01', true, 50),
       ('2001-01-01 00:03:00+00', 1, 'regress', 150000, '2001-01-01', true, 50);
CREATE TEMP TABLE syn AS
SELECT min(snap_id) AS s0, min(snap_id) + 1 AS s1, min(snap_id) + 2 AS s2
  FROM folio_perf_data.snapshot WHERE taken_at >= '2001-01-01 00:00:00+00' AND taken_at < '2001-01-02 00:00:00+00';
INSERT INTO folio_perf_data.query_text (text_md5, query)
VALUES (md5('SELECT regress')::uuid, 'SELECT regress');
INSERT INTO folio_perf_data.stmt_key
    (dbid, userid, queryid, toplevel, text_id, tenant, module, attributed_by, first_snap)
SELECT 1, 2, 77, true, text_id, 'fs01', 'mod_inventory_storage', 'relations', (SELECT s0 FROM syn)
  FROM folio_perf_data.query_text WHERE query = 'SELECT regress';

-- Two 30-tick intervals at 1 s.  Total connections: 20 ticks at 2, 10 at
-- 5, then 30 at 3 (avg 3, p95 5, max 5).  The role: 15 ticks at 1 in the
-- second interval (avg 0.25, p95 1, max 1).  Load: 1 session for 30 ticks
-- in LWLock:WALWrite on statement 77, 2 sessions for 30 ticks on CPU.
INSERT INTO folio_perf_data.sample_interval
    (started_at, ended_at, cut, sample_interval_ms, n_ticks, tick_ms,
     tick_connections, tick_active, host_ncpu, host_busy_ms, host_total_ms,
     cpu_ticks, c_series, c_value, c_freq, l_series, l_value, l_freq, u_series, u_ms)
VALUES
    ('2001-01-01 00:00:01+00', '2001-01-01 00:00:30+00', 'timer', 1000, 30,
     ARRAY(SELECT g * 1000 FROM generate_series(0, 29) g),
     ARRAY(SELECT CASE WHEN g < 20 THEN 2 ELSE 5 END FROM generate_series(0, 29) g),
     ARRAY(SELECT 1 FROM generate_series(0, 29) g),
     2, 15000, 60000, 30,
     '{900001,900001}', '{2,5}', '{20,10}',
     '{900003,900004,900005}', '{1,1,1}', '{30,30,30}',
     '{900006,900007}', '{4000,1000}'),
    ('2001-01-01 00:00:31+00', '2001-01-01 00:01:00+00', 'snapshot', 1000, 30,
     ARRAY(SELECT g * 1000 FROM generate_series(0, 29) g),
     ARRAY(SELECT 3 FROM generate_series(0, 29) g),
     ARRAY(SELECT 2 FROM generate_series(0, 29) g),
     2, 15000, 60000, 30,
     '{900001,900002}', '{3,1}', '{30,15}',
     '{900003}', '{2}', '{30}',
     '{900006,900007}', '{2000,2000}'),
    -- only in the second window, which it covers for 30 s of 120 s
    ('2001-01-01 00:01:01+00', '2001-01-01 00:01:30+00', 'timer', 1000, 30,
     ARRAY(SELECT g * 1000 FROM generate_series(0, 29) g),
     ARRAY(SELECT 4 FROM generate_series(0, 29) g),
     ARRAY(SELECT 0 FROM generate_series(0, 29) g),
     NULL, NULL, NULL, 0,
     '{900001}', '{4}', '{30}', '{}', '{}', '{}', NULL, NULL);
INSERT INTO folio_perf_data.window (begin_snap, end_snap, label)
SELECT s0, s1, 'regress synthetic' FROM syn;
INSERT INTO folio_perf_data.window (begin_snap, end_snap, label)
SELECT s1, s2, 'regress partial' FROM syn;
CREATE TEMP TABLE synw AS
SELECT (SELECT window_id FROM folio_perf_data.window WHERE label = 'regress synthetic') AS full_w,
       (SELECT window_id FROM folio_perf_data.window WHERE label = 'regress partial') AS part_w;

SELECT dimension, key, tenant, module, attributed_by, avg, p95, max,
       pct_of_max_connections, samples
  FROM folio_perf_connections((SELECT full_w FROM synw));

SELECT dimension, key, tenant, module, attributed_by, queryid, aas, max,
       pct_of_load, query
  FROM folio_perf_db_load((SELECT full_w FROM synw));

SELECT * FROM folio_perf_cpu((SELECT full_w FROM synw));

SELECT * FROM folio_perf_timeseries((SELECT full_w FROM synw), 'connections', 4);
-- at most `buckets` buckets, each beginning inside the window, for every
-- kind of metric (per tick, per interval, CPU): the tick at the window's
-- very end is in the last bucket, not a fifth one
SELECT m AS metric, count(DISTINCT t.bucket) AS buckets, min(t.bucket) AS first, max(t.bucket) AS last,
       bool_and(t.bucket_start < '2001-01-01 00:01:00+00') AS begin_inside
  FROM unnest(ARRAY['connections', 'cpu', 'db_load_by_wait_event', 'connections_by_role']) m,
       folio_perf_timeseries((SELECT full_w FROM synw), m, 4) t
 GROUP BY m ORDER BY m;
SELECT bucket, series, value
  FROM folio_perf_timeseries((SELECT full_w FROM synw), 'db_load_by_wait_event');
SELECT bucket, series, value FROM folio_perf_timeseries((SELECT full_w FROM synw), 'cpu');
SELECT count(DISTINCT bucket) AS buckets, min(bucket_end - bucket_start) AS width
  FROM folio_perf_timeseries((SELECT full_w FROM synw));

-- The second window is only partly covered: the reports say so first.
SELECT dimension, key, avg, max, samples
  FROM folio_perf_connections((SELECT part_w FROM synw));
SELECT dimension, key FROM folio_perf_cpu((SELECT part_w FROM synw));

-- A window without samples: one line, not zeros.
INSERT INTO folio_perf_data.snapshot
    (taken_at, dbid, datname, server_version_num, server_start, preloaded, max_connections)
VALUES ('2000-01-01 00:00:00+00', 1, 'regress', 150000, '2000-01-01', true, 50),
       ('2000-01-01 01:00:00+00', 1, 'regress', 150000, '2000-01-01', true, 50);
INSERT INTO folio_perf_data.window (begin_snap, end_snap, label)
SELECT min(snap_id), max(snap_id), 'regress empty' FROM folio_perf_data.snapshot
 WHERE taken_at < '2000-01-02 00:00:00+00';
CREATE TEMP TABLE emptyw AS
SELECT window_id AS id FROM folio_perf_data.window WHERE label = 'regress empty';
SELECT * FROM folio_perf_connections((SELECT id FROM emptyw));
SELECT dimension, key FROM folio_perf_db_load((SELECT id FROM emptyw));
SELECT dimension, key FROM folio_perf_cpu((SELECT id FROM emptyw));
SELECT * FROM folio_perf_timeseries((SELECT id FROM emptyw), 'db_load');

-- Errors.
\set VERBOSITY terse
SELECT * FROM folio_perf_connections(-1);
SELECT * FROM folio_perf_timeseries((SELECT id FROM emptyw), 'no_such_metric');
SELECT * FROM folio_perf_timeseries((SELECT id FROM emptyw), 'connections', 0);
\set VERBOSITY default

-- Purge removes old intervals only.
SELECT folio_perf_sampler_purge(interval '100 years') AS purged;
SELECT count(*) AS left_2001 FROM folio_perf_data.sample_interval
 WHERE ended_at < '2002-01-01';
SELECT folio_perf_sampler_purge(interval '1 day') AS purged_synthetic;
SELECT count(*) AS left_2001 FROM folio_perf_data.sample_interval
 WHERE ended_at < '2002-01-01';
