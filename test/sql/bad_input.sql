-- Bad input: a specific SQLSTATE (never XX000), a message and a hint;
-- nothing is written.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
RESET client_min_messages;

CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text; hint text;
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
  RETURN st || ': ' || msg || ' | HINT: ' || coalesce(hint, '(none)');
END $$;

SELECT folio_perf_snapshot('a') AS a \gset
SELECT folio_perf_snapshot('b') AS b \gset
SELECT folio_perf_window(:a, :b) AS ended_w \gset
SELECT folio_perf_begin('still open') AS open_w \gset
SELECT count(*) AS snaps_before FROM folio_perf_snapshots \gset
SELECT count(*) AS windows_before FROM folio_perf_windows \gset

SELECT q, pg_temp.try(q) FROM (VALUES
  ('SELECT folio_perf_window(NULL, 1)'),
  ('SELECT folio_perf_window(1, NULL)'),
  ('SELECT folio_perf_window(999999, 1000000)'),
  ('SELECT folio_perf_window(' || :b || ', ' || :a || ')'),
  ('SELECT folio_perf_window(' || :a || ', ' || :a || ')'),
  ('SELECT folio_perf_window(' || :a || ', ' || :b || ', repeat(''x'', 1048576))'),
  ('SELECT * FROM folio_perf_top_statements(NULL)'),
  ('SELECT * FROM folio_perf_top_statements(-1)'),
  ('SELECT * FROM folio_perf_top_statements(999999)'),
  ('SELECT * FROM folio_perf_top_statements(' || :open_w || ')'),
  ('SELECT * FROM folio_perf_module_activity(' || :open_w || ')'),
  ('SELECT * FROM folio_perf_table_activity(' || :open_w || ')'),
  ('SELECT * FROM folio_perf_db_summary(' || :open_w || ')'),
  ('SELECT * FROM folio_perf_window_flags(999999)'),
  ('SELECT * FROM folio_perf_top_statements(folio_perf_window(' || :a || ', ' || :b || '), 0)'),
  ('SELECT * FROM folio_perf_top_statements(folio_perf_window(' || :a || ', ' || :b || '), -5)'),
  ('SELECT * FROM folio_perf_top_statements(folio_perf_window(' || :a || ', ' || :b || '), 2000000000)'),
  ('SELECT * FROM folio_perf_top_statements(folio_perf_window(' || :a || ', ' || :b || '), NULL)'),
  ('SELECT * FROM folio_perf_top_statements(folio_perf_window(' || :a || ', ' || :b || '), 10, ''bogus'')'),
  ('SELECT * FROM folio_perf_top_statements(folio_perf_window(' || :a || ', ' || :b || '), 10, ''total_time; DROP TABLE x'')'),
  ('SELECT * FROM folio_perf_table_activity(folio_perf_window(' || :a || ', ' || :b || '), 10, ''nope'')'),
  ('SELECT folio_perf_end(999999)'),
  ('SELECT folio_perf_end(' || (SELECT min(window_id) FROM folio_perf_windows WHERE end_snap IS NOT NULL) || ')'),
  ('SELECT folio_perf_begin(''x'', ''[1,2]'')'),
  ('SELECT folio_perf_begin(''x'', ''"text"'')'),
  ('SELECT folio_perf_begin(''x'', NULL)'),
  ('SELECT folio_perf_begin(''x'', ''{not json'')'),
  ('SELECT folio_perf_begin(repeat(''x'', 1048576))'),
  ('SELECT folio_perf_snapshot(repeat(''y'', 1048576))'),
  ('SELECT folio_perf_purge(NULL)'),
  ('SELECT folio_perf_purge(''-1 day'')')
) v(q)
WHERE q IS NOT NULL;

-- nothing was written by any of the failures
SELECT count(*) = :snaps_before AS no_new_snapshots FROM folio_perf_snapshots;
SELECT count(*) = :windows_before AS no_new_windows FROM folio_perf_windows;

-- a window cannot span snapshots of two databases (as after restoring
-- snapshots of another database into this one)
INSERT INTO folio_perf_data.snapshot (dbid, datname, server_version_num, server_start, preloaded, max_connections)
VALUES (1, 'template1', 150000, now(), false, 100) RETURNING snap_id AS other \gset
SELECT pg_temp.try('SELECT folio_perf_window(' || :a || ', ' || :other || ')');
DELETE FROM folio_perf_data.snapshot WHERE snap_id = :other;
