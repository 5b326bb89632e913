-- Anomalies inside a window never give negative or inflated numbers; they
-- are flagged on the window and on the rows they affect.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
RESET client_min_messages;

CREATE SCHEMA fs07_mod_users;
CREATE TABLE fs07_mod_users.users (id int PRIMARY KEY, jsonb jsonb);
CREATE TABLE fs07_mod_users.groups (id int PRIMARY KEY, jsonb jsonb);
CREATE TABLE fs07_mod_users.doomed (id int PRIMARY KEY);
INSERT INTO fs07_mod_users.users SELECT g, '{}' FROM generate_series(1, 100) g;
INSERT INTO fs07_mod_users.groups SELECT g, '{}' FROM generate_series(1, 10) g;
INSERT INTO fs07_mod_users.doomed SELECT g FROM generate_series(1, 10) g;
SELECT count(*) FROM fs07_mod_users.users WHERE id > 0;
SELECT count(*) FROM fs07_mod_users.users WHERE id > 0;
SELECT count(*) FROM fs07_mod_users.users WHERE id > 0;
SELECT pg_stat_force_next_flush();

-- 1. pg_stat_statements_reset() inside the window
SELECT folio_perf_begin('reset inside') AS w \gset
SELECT pg_stat_statements_reset() IS NOT NULL AS reset_done;
SELECT count(*) FROM fs07_mod_users.users WHERE id > 0;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_end() AS w \gset
SELECT flag FROM folio_perf_window_flags(:w) WHERE flag LIKE 'pgss%' OR flag LIKE 'statements%' ORDER BY 1;
SELECT calls, status FROM folio_perf_top_statements(:w, 100)
WHERE query LIKE 'SELECT count(*) FROM fs07_mod_users.users%';
SELECT count(*) FILTER (WHERE calls < 0 OR total_exec_ms < 0 OR rows < 0) AS negatives
FROM folio_perf_top_statements(:w, 1000, only_toplevel => NULL, include_housekeeping => true);

-- 2. a relation dropped, one truncated, one created inside the window
SELECT folio_perf_begin('ddl inside') AS w \gset
SELECT count(*) FROM fs07_mod_users.doomed;
DROP TABLE fs07_mod_users.doomed;
TRUNCATE fs07_mod_users.groups;
INSERT INTO fs07_mod_users.groups SELECT g, '{}' FROM generate_series(1, 3) g;
CREATE TABLE fs07_mod_users.newcomer (id int);
INSERT INTO fs07_mod_users.newcomer SELECT generate_series(1, 4);
SELECT pg_stat_force_next_flush();
SELECT folio_perf_end() AS w \gset
SELECT relname, inserts, size_end >= 0 AS size_ok, status
FROM folio_perf_table_activity(:w, 100) WHERE schema = 'fs07_mod_users'
ORDER BY relname COLLATE "C";
SELECT flag FROM folio_perf_window_flags(:w) WHERE flag LIKE 'relations%' ORDER BY 1;
SELECT inserts, deletes, flags FROM folio_perf_module_activity(:w) WHERE module = 'mod_users';

-- 3. a statistics reset of one table inside the window: counts since reset
SELECT count(*) FROM fs07_mod_users.users WHERE id > 0;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_begin('table stats reset') AS w \gset
SELECT pg_stat_reset_single_table_counters('fs07_mod_users.users'::regclass);
INSERT INTO fs07_mod_users.users VALUES (1001, '{}'), (1002, '{}');
SELECT pg_stat_force_next_flush();
SELECT folio_perf_end() AS w \gset
SELECT relname, inserts, seq_scan >= 0 AS no_negative_scans, status
FROM folio_perf_table_activity(:w, 100) WHERE relname = 'users';
SELECT flag FROM folio_perf_window_flags(:w) WHERE flag IN ('stats_reset', 'relations_reset') ORDER BY 1;

-- 4. purge keeps every snapshot a window needs and every value at them
SELECT folio_perf_snapshot('extra 1') AS x1 \gset
INSERT INTO fs07_mod_users.users VALUES (2001, '{}');
SELECT pg_stat_force_next_flush();
SELECT folio_perf_snapshot('extra 2') AS x2 \gset
INSERT INTO fs07_mod_users.users VALUES (2002, '{}');
SELECT pg_stat_force_next_flush();
SELECT folio_perf_snapshot('extra 3') AS x3 \gset
SELECT folio_perf_window(:x1, :x3) AS pw \gset
SELECT inserts AS before_purge FROM folio_perf_table_activity(:pw, 100) WHERE relname = 'users';
SELECT count(*) AS windows_before FROM folio_perf_windows \gset
SELECT folio_perf_purge('0 seconds') > 0 AS purged_some;
SELECT count(*) = :windows_before AS windows_kept FROM folio_perf_windows;
SELECT count(*) AS snapshot_x2_left FROM folio_perf_snapshots WHERE snap_id = :x2;
SELECT inserts AS after_purge FROM folio_perf_table_activity(:pw, 100) WHERE relname = 'users';
SELECT count(*) AS windows_missing_a_snapshot
FROM folio_perf_windows w
WHERE NOT EXISTS (SELECT 1 FROM folio_perf_snapshots s WHERE s.snap_id = w.begin_snap)
   OR (w.end_snap IS NOT NULL AND NOT EXISTS (SELECT 1 FROM folio_perf_snapshots s WHERE s.snap_id = w.end_snap));
