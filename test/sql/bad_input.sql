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
SELECT coalesce(pg_sequence_last_value('folio_perf_data.snapshot_snap_id_seq'), 0) AS snap_seq_before \gset

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
  ('SELECT folio_perf_begin(repeat(''x'', 1048576))'),
  ('SELECT folio_perf_snapshot(repeat(''y'', 1048576))'),
  ('SELECT folio_perf_purge(NULL)'),
  ('SELECT folio_perf_purge(''-1 day'')')
) v(q)
WHERE q IS NOT NULL;

-- nothing was written by any of the failures: a rolled-back write would
-- still have taken a snapshot id (sequences are not rolled back); window
-- ids were taken by the folio_perf_window() calls that succeeded inside
-- the failing ones
SELECT coalesce(pg_sequence_last_value('folio_perf_data.snapshot_snap_id_seq'), 0) = :snap_seq_before
       AS no_snapshot_begun;

-- tags that are not JSON are refused by PostgreSQL's jsonb input before
-- folio_perf_begin runs (so it cannot add a hint): the same error as the
-- cast alone
SELECT pg_temp.try('SELECT folio_perf_begin(''x'', ''{not json'')') = pg_temp.try('SELECT ''{not json''::jsonb')
       AS refused_by_the_jsonb_cast,
       pg_temp.try('SELECT ''{not json''::jsonb') LIKE '22P02: %' AS invalid_text;

-- a window cannot span snapshots of two databases (as after restoring
-- snapshots of another database into this one)
INSERT INTO folio_perf_data.snapshot (dbid, datname, server_version_num, server_start, preloaded, max_connections)
VALUES (1, 'template1', 150000, now(), false, 100) RETURNING snap_id AS other \gset
SELECT pg_temp.try('SELECT folio_perf_window(' || :a || ', ' || :other || ')');
DELETE FROM folio_perf_data.snapshot WHERE snap_id = :other;

-- Every function of the public surface that a writer may call, with each
-- argument in turn NULL, negative, zero, huge, empty, unknown or too long
-- (the others plausible): an error must have a specific SQLSTATE (no
-- internal error, no programming error such as an undefined function or
-- column) and a hint, and it must come before anything is written (a
-- snapshot or window id taken: the ids' sequences are not rolled back);
-- every call is rolled back.  Lists the offenders.
CREATE FUNCTION pg_temp.sweep_seqs() RETURNS bigint[] LANGUAGE sql AS $$
  SELECT ARRAY[coalesce(pg_sequence_last_value('folio_perf_data.snapshot_snap_id_seq'), 0),
               coalesce(pg_sequence_last_value('folio_perf_data.window_window_id_seq'), 0)]
$$;
CREATE FUNCTION pg_temp.sweep_try(q text, OUT st text, OUT msg text, OUT hint text, OUT wrote boolean)
LANGUAGE plpgsql AS $$
DECLARE seqs bigint[] := pg_temp.sweep_seqs();
BEGIN
  BEGIN
    EXECUTE q;
    RAISE EXCEPTION USING ERRCODE = 'FP999', MESSAGE = 'rolled back';
  EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
  END;
  wrote := pg_temp.sweep_seqs() <> seqs;
  IF st = 'FP999' THEN st := NULL; msg := NULL; hint := NULL; END IF;
END $$;
CREATE FUNCTION pg_temp.sweep_bad(st text, hint text) RETURNS boolean LANGUAGE sql AS $$
  SELECT st IS NOT NULL
     AND (left(st, 2) IN ('XX', '58') OR st IN ('42601', '42883', '42703', '42P01', '42804', '42725', '21000', '0A000')
          OR coalesce(hint, '') = '')
$$;
-- control: an error without a hint, and an internal one, are offenders
SELECT pg_temp.sweep_bad(t.st, t.hint) AS control_no_hint FROM pg_temp.sweep_try('SELECT 1/0') t;
SELECT pg_temp.sweep_bad(t.st, t.hint) AS control_undefined FROM pg_temp.sweep_try('SELECT no_such_function()') t;
SELECT pg_temp.sweep_bad(t.st, t.hint) AS control_with_hint
FROM pg_temp.sweep_try('SELECT * FROM folio_perf_top_statements(-1)') t;
-- control: a call that succeeds shows its write, one that fails after
-- writing is an offender
SELECT t.st IS NULL AND t.wrote AS control_wrote
FROM pg_temp.sweep_try('SELECT folio_perf_snapshot(''control'')') t;
SELECT t.st, t.wrote AS control_failed_after_writing
FROM pg_temp.sweep_try('SELECT folio_perf_snapshot(''control'') / 0') t;
CREATE TEMP TABLE sweep_values(typ text, val text, plausible boolean);
INSERT INTO sweep_values VALUES
  ('bigint', :'ended_w', true), ('bigint', 'NULL', false), ('bigint', '-1', false), ('bigint', '0', false),
  ('bigint', '9223372036854775807', false), ('bigint', :'open_w', false),
  ('integer', '5', true), ('integer', 'NULL', false), ('integer', '-1', false), ('integer', '0', false),
  ('integer', '2147483647', false),
  ('text', '''text''', true), ('text', 'NULL', false), ('text', '''''', false), ('text', '''zz''', false),
  ('text', 'repeat(''x'', 200000)', false), ('text', E'''\\''', false),
  ('jsonb', '''{}''', true), ('jsonb', 'NULL', false), ('jsonb', '''[]''', false), ('jsonb', '''"x"''', false),
  ('jsonb', '''null''', false),
  ('boolean', 'false', true), ('boolean', 'NULL', false),
  ('interval', '''1 day''', true), ('interval', 'NULL', false), ('interval', '''-1 day''', false),
  ('interval', '''1000000 years''', false),
  ('oid', '1259', true), ('oid', 'NULL', false), ('oid', '0', false),
  ('oid[]', '''{1259}''', true), ('oid[]', 'NULL', false), ('oid[]', '''{}''', false), ('oid[]', '''{NULL}''', false),
  ('oid[]', '''{1,2,3}''', false),
  ('bigint[]', '''{1}''', true), ('bigint[]', 'NULL', false), ('bigint[]', '''{NULL}''', false),
  ('bigint[]', '''{1,2,3}''', false);
CREATE TEMP TABLE sweep_calls AS
WITH f AS (
  SELECT p.oid, p.proname, p.proretset,
         array(SELECT format_type(t, NULL) FROM unnest(p.proargtypes::oid[]) t) AS types
  FROM pg_proc p
  JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
  JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
  WHERE p.pronamespace = 'public'::regnamespace AND p.pronargs > 0 AND p.prokind = 'f'
    AND has_function_privilege('folio_perf_writer', p.oid, 'EXECUTE')
), c AS (
  SELECT f.*, i, v.val
  FROM f, generate_subscripts(f.types, 1) i
  JOIN sweep_values v ON NOT v.plausible
  WHERE v.typ = f.types[i]
)
SELECT format('SELECT %s FROM %I(%s)', CASE WHEN c.proretset THEN 'count(*)' ELSE '1' END, c.proname,
              (SELECT string_agg(format('%s::%s', CASE WHEN j = c.i THEN c.val ELSE
                                   (SELECT g.val FROM sweep_values g WHERE g.typ = c.types[j] AND g.plausible) END,
                                   c.types[j]), ', ' ORDER BY j)
               FROM generate_subscripts(c.types, 1) j)) AS q
FROM c;
SELECT count(*) > 200 AS many_calls,
       count(*) FILTER (WHERE q IS NULL) AS calls_without_values
FROM sweep_calls;
-- as a writer (a superuser's folio_perf_target_add('x', '') would connect)
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_fp_sweeper;
RESET client_min_messages;
CREATE ROLE regress_fp_sweeper IN ROLE folio_perf_writer;
GRANT SELECT ON sweep_calls TO regress_fp_sweeper;
GRANT SELECT ON folio_perf_data.snapshot_snap_id_seq, folio_perf_data.window_window_id_seq TO regress_fp_sweeper;
SET ROLE regress_fp_sweeper;
CREATE TEMP TABLE sweep_results AS
SELECT s.q, t.* FROM sweep_calls s, pg_temp.sweep_try(s.q) t;
SELECT q, st, msg, hint, wrote
FROM sweep_results
WHERE pg_temp.sweep_bad(st, hint) OR (st IS NOT NULL AND wrote)
ORDER BY q;
-- how many failed, and how many that succeeded wrote (and were rolled back)
SELECT count(*) FILTER (WHERE st IS NOT NULL) > 100 AS many_failed,
       count(*) FILTER (WHERE st IS NULL AND wrote) > 0 AS some_wrote
FROM sweep_results;
RESET ROLE;
REVOKE SELECT ON folio_perf_data.snapshot_snap_id_seq, folio_perf_data.window_window_id_seq FROM regress_fp_sweeper;
DROP TABLE sweep_calls, sweep_results;
DROP ROLE regress_fp_sweeper;
