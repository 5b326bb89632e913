-- The pg_stat_statements column mapping: what each server version's
-- pg_stat_statements gives for each of folio_perf's columns, and the
-- counters of 18 in a window: present on 18 and later, NULL (and named in
-- the JSON report's window.not_counted) before.  The output is the same on
-- every version.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
RESET client_min_messages;

-- the mapping per version (expressions over pg_stat_statements as "s")
SELECT v,
       strpos(m, 'true AS toplevel') > 0 AS toplevel_constant,
       strpos(m, 's.shared_blk_read_time + s.local_blk_read_time AS blk_read_time') > 0 AS read_time_summed,
       strpos(m, 's.shared_blk_write_time + s.local_blk_write_time AS blk_write_time') > 0 AS write_time_summed,
       strpos(m, 'NULL::bigint AS wal_buffers_full') > 0 AS wal_buffers_full_null,
       strpos(m, 's.parallel_workers_launched AS parallel_workers_launched') > 0 AS workers_read
FROM (VALUES (130000), (140000), (160000), (170000), (180000)) x(v),
     LATERAL folio_perf_data.pgss_select_list(v) m
ORDER BY v;
-- one column each, in the row type's order
SELECT count(*) AS columns FROM folio_perf_data.pgss_row_columns();
-- a remote target's statements: the same mapping
SELECT folio_perf_data.pgss_select_list(180000, true) = folio_perf_data.pgss_select_list(180000) AS remote_same;
-- this server's mapping reads this server's entries: a statement run three
-- times has the counters pg_stat_statements gives it, and no text when
-- asked for none (a mapping that read nothing gives no row)
-- (the entries of the tests before are dropped first: a column alias is
-- not part of the query id, so an earlier SELECT 1 AS x of this database
-- would hold the calls and give the entry its text)
SELECT count(*) AS reset FROM (SELECT pg_stat_statements_reset()) r;
SELECT 1 AS versions_probe;
SELECT 1 AS versions_probe;
SELECT 1 AS versions_probe;
SELECT c.calls, c.rows, c.query IS NULL AS no_text,
       c.total_exec_time = s.total_exec_time AS same_exec_time,
       c.shared_blks_hit = s.shared_blks_hit AS same_blks_hit
FROM folio_perf_data.pgss_current(false) c
JOIN pg_stat_statements s ON s.queryid = c.queryid AND s.userid = c.userid AND s.dbid = c.dbid
  AND s.toplevel = c.toplevel
WHERE s.query = 'SELECT $1 AS versions_probe';

-- a window with a parallel query that writes nothing and an insert
CREATE TABLE versions_t (id int, pad text);
INSERT INTO versions_t SELECT g, repeat('x', 100) FROM generate_series(1, 20000) g;
ANALYZE versions_t;
SELECT folio_perf_begin('versions') AS w \gset
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT count(*) FROM versions_t WHERE pad LIKE 'x%';
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
INSERT INTO versions_t SELECT g, 'y' FROM generate_series(1, 100) g;
SELECT folio_perf_end() AS w \gset
SELECT current_setting('server_version_num')::int >= 180000 AS pg18 \gset
-- counted where the server counts them, NULL where it does not
SELECT bool_and((t.wal_buffers_full IS NOT NULL) = :'pg18'::boolean) AS wal_buffers_full_iff_18,
       bool_and((t.parallel_workers_to_launch IS NOT NULL) = :'pg18'::boolean) AS to_launch_iff_18,
       bool_and((t.parallel_workers_launched IS NOT NULL) = :'pg18'::boolean) AS launched_iff_18
FROM folio_perf_top_statements(:w, 100, include_housekeeping => true) t;
-- the parallel scan asked for workers (18 counts them)
SELECT coalesce(t.parallel_workers_to_launch > 0, NOT :'pg18'::boolean) AS workers_asked_or_not_counted,
       coalesce(t.parallel_workers_launched <= t.parallel_workers_to_launch, NOT :'pg18'::boolean) AS launched_at_most_asked
FROM folio_perf_top_statements(:w, 100) t
WHERE t.query LIKE 'SELECT count(*) FROM versions_t%';
-- the JSON report says why they are NULL, only where they are
SELECT (folio_perf_report(:w, 'json')::jsonb #> '{window,not_counted}' IS NOT NULL) = NOT :'pg18'::boolean
       AS not_counted_iff_before_18;
DROP TABLE versions_t;
