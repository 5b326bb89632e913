-- Privileges: nothing for PUBLIC, a reader and a writer level, query texts
-- as in pg_stat_statements, SECURITY DEFINER functions immune to a planted
-- search_path, labels and tags are data.
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
DROP ROLE IF EXISTS regress_fp_nobody;
DROP ROLE IF EXISTS regress_fp_reader;
DROP ROLE IF EXISTS regress_fp_writer;
DROP ROLE IF EXISTS regress_fp_stats;
RESET client_min_messages;

CREATE ROLE regress_fp_nobody;
CREATE ROLE regress_fp_reader IN ROLE folio_perf_reader;
CREATE ROLE regress_fp_writer IN ROLE folio_perf_writer;
CREATE ROLE regress_fp_stats IN ROLE pg_read_all_stats;

-- nothing is granted to PUBLIC
SELECT count(*) AS public_executable
FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
WHERE has_function_privilege('regress_fp_nobody', p.oid, 'EXECUTE');
SELECT count(*) AS public_readable
FROM pg_class c JOIN pg_depend d ON d.objid = c.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
WHERE c.relkind IN ('r', 'v') AND has_table_privilege('regress_fp_nobody', c.oid, 'SELECT');

SELECT folio_perf_snapshot('s1') AS s1 \gset
SELECT 42 AS superuser_statement;
SELECT folio_perf_snapshot('s2') AS s2 \gset
SELECT folio_perf_window(:s1, :s2) AS w \gset
-- a window with samples in it (the regress instance samples every 100 ms)
SELECT folio_perf_snapshot('sampled 1') AS ss1 \gset
SELECT pg_sleep(0.5);
SELECT folio_perf_snapshot('sampled 2') AS ss2 \gset
SELECT folio_perf_window(:ss1, :ss2) AS ws \gset

CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text;
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
  RETURN st || ': ' || regexp_replace(msg, '\d+', 'N', 'g');
END $$;
GRANT EXECUTE ON FUNCTION pg_temp.try(text) TO PUBLIC;

-- each role against each kind of call
SELECT r AS role, q AS call, pg_temp.try(format('SET ROLE %I; %s', r, q)) AS result
FROM unnest(ARRAY['regress_fp_nobody', 'regress_fp_reader', 'regress_fp_stats', 'regress_fp_writer']) r,
     unnest(ARRAY[
        'SELECT folio_perf_snapshot()',
        'SELECT folio_perf_begin(''x'')',
        'SELECT folio_perf_purge(''100 years'')',
        'SELECT * FROM folio_perf_top_statements(' || :w || ')',
        'SELECT * FROM folio_perf_module_activity(' || :w || ')',
        'SELECT * FROM folio_perf_windows',
        'SELECT * FROM folio_perf_statements',
        'SELECT * FROM folio_perf_activity',
        'SELECT * FROM folio_perf_data.snapshot',
        'DELETE FROM folio_perf_data.snapshot',
        'SELECT folio_perf_parse_schema(''fs1_mod_users'')',
        'SELECT count(*) FROM folio_perf_db_load(' || :ws || ')',
        'SELECT count(*) FROM folio_perf_connections(' || :ws || ')',
        'SELECT length(folio_perf_report(' || :ws || ', ''html''))']) q
ORDER BY r, q;
RESET ROLE;
SELECT folio_perf_end() IS NOT NULL AS ended_open_window;

-- query texts: a plain reader sees its own only; pg_read_all_stats sees all
SET ROLE regress_fp_reader;
SELECT count(*) > 0 AS hidden_texts
FROM folio_perf_top_statements(:w, 100, include_housekeeping => true)
WHERE query = '<insufficient privilege>';
RESET ROLE;
SET ROLE regress_fp_stats;
SELECT count(*) AS hidden_texts
FROM folio_perf_top_statements(:w, 100, include_housekeeping => true)
WHERE query = '<insufficient privilege>';
RESET ROLE;

-- a planted function and operator earlier in the caller's search_path are
-- not used by the SECURITY DEFINER functions
CREATE SCHEMA regress_evil;
CREATE TABLE regress_evil.called (what text);
GRANT ALL ON SCHEMA regress_evil TO PUBLIC;
GRANT ALL ON regress_evil.called TO PUBLIC;
CREATE FUNCTION regress_evil.md5(text) RETURNS text LANGUAGE plpgsql AS
  $$ BEGIN INSERT INTO regress_evil.called VALUES ('md5'); RETURN pg_catalog.md5($1); END $$;
CREATE FUNCTION regress_evil.now() RETURNS timestamptz LANGUAGE plpgsql AS
  $$ BEGIN INSERT INTO regress_evil.called VALUES ('now'); RETURN pg_catalog.now(); END $$;
CREATE FUNCTION regress_evil.int8eq_evil(bigint, bigint) RETURNS boolean LANGUAGE plpgsql AS
  $$ BEGIN INSERT INTO regress_evil.called VALUES ('='); RETURN $1 OPERATOR(pg_catalog.=) $2; END $$;
CREATE OPERATOR regress_evil.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = regress_evil.int8eq_evil);
SET ROLE regress_fp_writer;
SET search_path = regress_evil, pg_catalog, public;
-- control: unpinned SQL under this path does call the planted objects
SELECT md5('x') IS NOT NULL AS control, 1::bigint = 1::bigint AS control_op;
SELECT count(*) AS control_calls FROM regress_evil.called;
DELETE FROM regress_evil.called;
SELECT folio_perf_snapshot('evil path') > 0 AS snapped;
SELECT folio_perf_purge('100 years') >= 0 AS purged;
SELECT count(*) > 0 AS reported FROM folio_perf_top_statements(:w);
RESET search_path;
RESET ROLE;
SELECT count(*) AS planted_objects_called FROM regress_evil.called;

-- labels and tags are data, never SQL
SELECT folio_perf_begin($$x'); DROP TABLE regress_evil.called; --$$,
                        '{"release":"\"); DROP TABLE regress_evil.called; --"}') AS iw \gset
SELECT folio_perf_end(:iw) = :iw AS ended;
SELECT label, tags->>'release' AS release FROM folio_perf_windows WHERE window_id = :iw;
SELECT to_regclass('regress_evil.called') IS NOT NULL AS table_still_there;

DROP SCHEMA regress_evil CASCADE;
DROP ROLE regress_fp_nobody;
DROP ROLE regress_fp_reader;
DROP ROLE regress_fp_writer;
DROP ROLE regress_fp_stats;
