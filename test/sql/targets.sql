-- test/sql/targets.sql - remote targets without a second server: the
-- surface, its errors, and a loopback target (this instance collecting from
-- itself over libpq).  test/t/030_remote.pl covers real targets.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
\set VERBOSITY terse
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION IF NOT EXISTS folio_perf;
RESET client_min_messages;

-- connection strings are shown without their secrets
SELECT folio_perf_data.conninfo_redact('host=db.example.org port=5432 dbname=folio user=u password=secret sslpassword=x');
SELECT folio_perf_data.conninfo_redact('postgresql://u:secret@db.example.org:5433/folio?sslmode=require');
SELECT folio_perf_data.conninfo_redact('application_name=''a b'' password=''it\''s''');
SELECT folio_perf_data.conninfo_redact('host=''unterminated') IS NULL AS unparsable_is_null;

-- errors
SELECT folio_perf_target_add(NULL, 'host=x');
SELECT folio_perf_target_add('bad name', 'host=x');
SELECT folio_perf_target_add('t1', NULL);
SELECT folio_perf_target_add('t1', 'host=''unterminated');
SELECT folio_perf_target_drop('nosuch');
SELECT folio_perf_snapshot('x', 'nosuch');
SELECT folio_perf_begin('x', '{}', 'nosuch');

-- the target forms with NULL are this server
SELECT folio_perf_snapshot('local', NULL) > 0 AS local_snapshot;
SELECT folio_perf_begin('local window', '{}', NULL) AS lw \gset
SELECT folio_perf_end(:lw) = :lw AS local_window_ended;
SELECT target_id IS NULL AS local FROM folio_perf_windows WHERE window_id = :lw;

-- a loopback target
SELECT format('host=%s port=%s dbname=%s application_name=loopback',
              split_part(current_setting('unix_socket_directories'), ',', 1),
              current_setting('port'), current_database()) AS self \gset
SELECT folio_perf_target_add('self', :'self') AS self_id \gset
SELECT name, conninfo ~ 'application_name=loopback' AS conninfo_shown, enabled
FROM folio_perf_targets;
SELECT folio_perf_target_add('self', :'self');
-- a window of this server open over the same statements as the target's
SELECT folio_perf_begin('local, over the loopback window') AS lw2 \gset
SELECT folio_perf_begin('loopback', '{"via":"libpq"}', 'self') AS rw \gset
CREATE TABLE targets_probe (id int PRIMARY KEY, v text);
INSERT INTO targets_probe SELECT g, 'x' FROM generate_series(1, 5) g;
SELECT count(*) FROM targets_probe;
SELECT pg_stat_force_next_flush();   -- this session's table counters, now
SELECT folio_perf_end() = :rw AS remote_window_ended;
SELECT w.target_id = :self_id AS of_target, b.preloaded, b.target_id = e.target_id AS same_target
FROM folio_perf_windows w
JOIN folio_perf_snapshots b ON b.snap_id = w.begin_snap
JOIN folio_perf_snapshots e ON e.snap_id = w.end_snap
WHERE w.window_id = :rw;
SELECT calls, attributed_by IS DISTINCT FROM 'relations' AS not_by_relations
FROM folio_perf_top_statements(:rw, 100)
WHERE query LIKE 'INSERT INTO targets_probe%';
SELECT inserts FROM folio_perf_table_activity(:rw, 100) WHERE relname = 'targets_probe';
SELECT (folio_perf_report(:rw, 'json')::jsonb)->'window'->>'target' AS report_target;
-- the local window over the same statements counts them once, from this
-- server's snapshots: the target's rows mixed into it would count the
-- insert twice (the target is this server)
SELECT folio_perf_end(:lw2) = :lw2 AS local_window_ended;
SELECT b.target_id IS NULL AND e.target_id IS NULL AS local_snapshots
FROM folio_perf_windows w
JOIN folio_perf_snapshots b ON b.snap_id = w.begin_snap
JOIN folio_perf_snapshots e ON e.snap_id = w.end_snap
WHERE w.window_id = :lw2;
SELECT calls AS local_calls FROM folio_perf_top_statements(:lw2, 100)
WHERE query LIKE 'INSERT INTO targets_probe%';
SELECT inserts AS local_inserts FROM folio_perf_table_activity(:lw2, 100) WHERE relname = 'targets_probe';
-- folio_perf's own statements on the target are housekeeping
SELECT count(*) AS own_in_top FROM folio_perf_top_statements(:rw, 100)
WHERE query LIKE '%folio_perf_remote%';

-- dropping keeps the windows
SELECT folio_perf_target_drop('self') = :self_id AS dropped;
SELECT conninfo IS NULL AS forgotten, sampler FROM folio_perf_targets WHERE name = 'self';
SELECT folio_perf_snapshot('x', 'self');
SELECT count(*) > 0 AS still_reports FROM folio_perf_top_statements(:rw, 100);
DROP TABLE targets_probe;
