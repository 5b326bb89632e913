-- Privileges: nothing for PUBLIC, a reader and a writer level, query texts
-- as in pg_stat_statements, SECURITY DEFINER functions immune to a planted
-- search_path, labels and tags are data.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
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
        'SELECT length(folio_perf_report(' || :ws || ', ''html''))',
        'SELECT count(*) FROM folio_perf_plans_take()',
        'SELECT count(*) FROM folio_perf_plans_current()',
        'SELECT count(*) FROM folio_perf_relations_status',
        'SELECT folio_perf_sampler_purge(''-100 years'')']) q
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

-- a tenant module's role (it owns its schema, its enum types and so may
-- create casts from them) plants an implicit cast on a column of its
-- job_execution; folio_perf_data_import_jobs runs as the owner and must
-- not apply an operator or aggregate that would pick the cast
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_fp_dimod;
RESET client_min_messages;
CREATE ROLE regress_fp_dimod;
CREATE SCHEMA fs77000000_mod_source_record_manager AUTHORIZATION regress_fp_dimod;
SET ROLE regress_fp_dimod;
SET search_path = fs77000000_mod_source_record_manager;
CREATE TYPE ev AS ENUM ('1', '2');
CREATE FUNCTION ev_to_bigint(ev) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO regress_evil.called VALUES ('cast as ' || current_user);
  BEGIN
    EXECUTE 'ALTER ROLE regress_fp_dimod SUPERUSER';
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
  RETURN 1;
END $$;
CREATE CAST (ev AS bigint) WITH FUNCTION ev_to_bigint(ev) AS IMPLICIT;
CREATE TABLE job_execution (id uuid, hrid bigint, parent_job_id uuid,
  subordination_type text, file_name text, progress_current int, progress_total ev,
  status text, job_profile_name text, started_date timestamptz, completed_date timestamptz);
INSERT INTO job_execution VALUES
 ('00000000-0000-0000-0000-000000000001', 1, '00000000-0000-0000-0000-000000000001',
  'COMPOSITE_PARENT', 'f.mrc', 1, '1', 'COMMITTED', 'p', now() - interval '1 hour', now() + interval '1 day'),
 ('00000000-0000-0000-0000-000000000002', 2, '00000000-0000-0000-0000-000000000001',
  'COMPOSITE_CHILD', 'f.mrc', 1, '2', 'COMMITTED', 'p', now() - interval '1 hour', now() + interval '1 day');
-- control: the sum the query makes of the parts would call the cast
SELECT sum(progress_total) AS control_sum FROM job_execution WHERE subordination_type = 'COMPOSITE_CHILD';
RESET search_path;
RESET ROLE;
SELECT count(*) AS control_cast_calls FROM regress_evil.called WHERE what = 'cast as regress_fp_dimod';
DELETE FROM regress_evil.called;
SELECT folio_perf_begin('di jobs') AS diw \gset
SELECT folio_perf_end(:diw) = :diw AS ended;
SET ROLE regress_fp_reader;
SELECT count(*) AS jobs_read FROM folio_perf_data_import_jobs(:diw);
SELECT length(folio_perf_report(:diw, 'json')) > 0 AS reported;
RESET ROLE;
SELECT count(*) AS cast_calls FROM regress_evil.called;
SELECT rolsuper AS module_role_is_superuser FROM pg_roles WHERE rolname = 'regress_fp_dimod';
-- The type check stopped that one before the query ran.  Past the check
-- (progress_total an integer, the ids uuid), every other column the query
-- reads of a type the module owns, each with an implicit cast it planted
-- (to bigint for hrid and progress_current, to text for the text
-- columns): the query reads them through their output functions only, so
-- the jobs are read and no planted cast runs.
SET ROLE regress_fp_dimod;
SET search_path = fs77000000_mod_source_record_manager;
CREATE TYPE word AS ENUM ('COMPOSITE_PARENT', 'COMPOSITE_CHILD', 'COMMITTED', 'f.mrc', 'p');
CREATE FUNCTION word_to_text(word) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO regress_evil.called VALUES ('text cast as ' || current_user);
  BEGIN
    EXECUTE 'ALTER ROLE regress_fp_dimod SUPERUSER';
  EXCEPTION WHEN insufficient_privilege THEN NULL;
  END;
  RETURN 'COMPOSITE_PARENT';
END $$;
CREATE CAST (word AS text) WITH FUNCTION word_to_text(word) AS IMPLICIT;
ALTER TABLE job_execution
  ALTER progress_total TYPE int USING 1,
  ALTER hrid TYPE ev USING hrid::text::ev,
  ALTER progress_current TYPE ev USING progress_current::text::ev,
  ALTER subordination_type TYPE word USING subordination_type::word,
  ALTER status TYPE word USING status::word,
  ALTER file_name TYPE word USING file_name::word,
  ALTER job_profile_name TYPE word USING job_profile_name::word;
-- control: the columns compared with a text, or summed, would call them
SELECT count(*) AS control_text_compare FROM job_execution WHERE subordination_type = 'COMPOSITE_PARENT'::text;
SELECT sum(hrid) AS control_hrid_sum FROM job_execution;
RESET search_path;
RESET ROLE;
SELECT what, count(*) AS control_calls FROM regress_evil.called GROUP BY what ORDER BY what;
DELETE FROM regress_evil.called;
SET ROLE regress_fp_reader;
SELECT hrid, file_name, job_profile, records, status FROM folio_perf_data_import_jobs(:diw);
SELECT length(folio_perf_report(:diw, 'json')) > 0 AS reported;
RESET ROLE;
SELECT count(*) AS planted_cast_calls FROM regress_evil.called;
SELECT rolsuper AS module_role_is_superuser FROM pg_roles WHERE rolname = 'regress_fp_dimod';
SET client_min_messages = warning;
DROP SCHEMA fs77000000_mod_source_record_manager CASCADE;
RESET client_min_messages;
DROP ROLE regress_fp_dimod;

-- a role's password in a utility statement, which pg_stat_statements keeps
-- verbatim, is never stored (and so never in a dump of the database)
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_fp_pw;
RESET client_min_messages;
SELECT folio_perf_snapshot('before password') > 0 AS snapped;
CREATE ROLE regress_fp_pw PASSWORD 'Hunter2Pw' LOGIN;
ALTER ROLE regress_fp_pw WITH PASSWORD 'Hunter3Pw' VALID UNTIL 'infinity';
ALTER USER regress_fp_pw PASSWORD 'Hunter4Pw';
SELECT folio_perf_snapshot('after password') > 0 AS snapped;
-- control: the statements reached pg_stat_statements (PostgreSQL 16 and
-- later may show $1 instead of the password)
SELECT count(*) >= 3 AS control_in_pgss
FROM pg_stat_statements WHERE query ~* 'regress_fp_pw' AND query ~* 'password';
SELECT count(*) AS stored_passwords FROM folio_perf_data.query_text WHERE query ~ 'Hunter';
SELECT query FROM folio_perf_data.query_text WHERE query ~* 'regress_fp_pw' ORDER BY query;
DROP ROLE regress_fp_pw;

-- a role that may create in the extension's schema plants, next to every
-- function of the extension there, one of the same name with another type
-- for one argument (text -> varchar, bigint -> integer, ...); folio_perf's
-- own calls pass the exact types, so none is ever called by a snapshot, a
-- window or a report (run here by a superuser); a caller's own call with
-- other literal types would pick one (control), see "Security model"
SET client_min_messages = warning;
DROP ROLE IF EXISTS regress_fp_planter;
RESET client_min_messages;
CREATE ROLE regress_fp_planter;
GRANT CREATE ON SCHEMA public TO regress_fp_planter;
SET ROLE regress_fp_planter;
DO $plant$
DECLARE
  f record;
  alt jsonb := '{"text": ["character varying", "name"], "bigint": ["integer", "numeric"],
                 "integer": ["bigint", "smallint"], "oid": ["regclass", "integer", "bigint"],
                 "jsonb": ["json", "text"], "interval": ["text"], "boolean": ["text"],
                 "oid[]": ["regclass[]", "integer[]"], "bigint[]": ["integer[]"],
                 "text[]": ["name[]", "character varying[]"]}';
  i int;
  a text;
  sig text[];
  n int := 0;
BEGIN
  FOR f IN
    SELECT p.proname, pg_get_function_result(p.oid) AS res, p.proretset,
           array(SELECT format_type(t, NULL) FROM unnest(p.proargtypes::oid[]) t) AS types,
           (SELECT count(*) FROM unnest(p.proargmodes) m WHERE m IN ('o', 't')) AS nout
    FROM pg_proc p
    JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
    JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
    WHERE p.pronamespace = 'public'::regnamespace AND p.pronargs > 0 AND p.prokind = 'f'
  LOOP
    FOR i IN 1 .. cardinality(f.types) LOOP
      FOR a IN SELECT jsonb_array_elements_text(coalesce(alt -> f.types[i], '[]')) LOOP
        sig := f.types;
        sig[i] := a;
        BEGIN
          EXECUTE format('CREATE FUNCTION public.%I(%s) RETURNS %s LANGUAGE plpgsql AS %L',
            f.proname, array_to_string(sig, ', '), f.res,
            format('BEGIN INSERT INTO regress_evil.called VALUES (%L); RETURN%s; END',
                   f.proname || '(' || array_to_string(sig, ',') || ')',
                   CASE WHEN f.proretset OR f.nout > 0 THEN '' ELSE ' NULL' END));
          n := n + 1;
        EXCEPTION WHEN duplicate_function THEN NULL;
        END;
      END LOOP;
    END LOOP;
  END LOOP;
  RAISE NOTICE 'planted % functions', CASE WHEN n > 100 THEN 'over 100' ELSE n::text END;
END
$plant$;
RESET ROLE;
DELETE FROM regress_evil.called;
SELECT folio_perf_snapshot('planted'::text) > 0 AS snapped;
SELECT folio_perf_begin('planted'::text, '{}'::jsonb, NULL::text) AS pw \gset
SELECT count(*) > 0 AS work FROM pg_class;
SELECT folio_perf_end(NULL::bigint) = :pw AS ended;
SELECT f, length(folio_perf_report(:pw::bigint, f)) > 0 AS reported
FROM unnest(ARRAY['text', 'markdown', 'html', 'json']) f;
SELECT length(folio_perf_compare(:w::bigint, :pw::bigint, 'json'::text)) > 0 AS compared;
SELECT count(*) > 0 AS listed FROM folio_perf_top_statements(:pw::bigint, 10, 'calls'::text, true, false);
SELECT count(*) AS planted_functions_called FROM regress_evil.called;
-- control: a call with an integer literal for a bigint picks the plant
SELECT count(*) AS control_rows FROM folio_perf_window_flags(:pw);
SELECT what AS control_called FROM regress_evil.called;
DELETE FROM regress_evil.called;
SET client_min_messages = warning;
DROP OWNED BY regress_fp_planter;
RESET client_min_messages;
DROP ROLE regress_fp_planter;

-- folio_perf's own statements (src/own.c): a plain reader's statements
-- that call a folio_perf function are not added to the bounded set (it
-- could fill it); a writer's are (control)
SET ROLE regress_fp_reader;
SELECT folio_perf_parse_schema('fs1_mod_users') AS regress_probe_reader, 1, 2, 3, 4, 5, 6, 7, 8, 9;
RESET ROLE;
SET ROLE regress_fp_writer;
SELECT folio_perf_parse_schema('fs1_mod_users') AS regress_probe_writer, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10;
RESET ROLE;
SELECT p.probe, folio_perf_data.own_queryid(s.queryid) AS recorded
FROM pg_stat_statements s,
     LATERAL (SELECT (regexp_match(s.query, 'regress_probe_(reader|writer)'))[1] AS probe) p
WHERE p.probe IS NOT NULL AND s.query !~ 'regexp_match'
ORDER BY 1;


------------------------------------------------------------------------
-- Who may use what: every function and view of the extension against an
-- expected table (a new object shows up here; default: the owner only).
------------------------------------------------------------------------
CREATE TEMP VIEW ext_objects AS
SELECT p.oid::regprocedure::text AS object, 'function' AS kind, p.prosecdef AS definer,
       has_function_privilege('regress_fp_nobody', p.oid, 'EXECUTE') AS public,
       has_function_privilege('regress_fp_reader', p.oid, 'EXECUTE') AS reader,
       has_function_privilege('regress_fp_stats', p.oid, 'EXECUTE') AS stats,
       has_function_privilege('regress_fp_writer', p.oid, 'EXECUTE') AS writer
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
UNION ALL
SELECT c.oid::regclass::text, CASE c.relkind WHEN 'v' THEN 'view' WHEN 'S' THEN 'sequence' ELSE 'table' END, NULL,
       has_table_privilege('regress_fp_nobody', c.oid, 'SELECT'),
       has_table_privilege('regress_fp_reader', c.oid, 'SELECT'),
       has_table_privilege('regress_fp_stats', c.oid, 'SELECT'),
       has_table_privilege('regress_fp_writer', c.oid, 'SELECT')
FROM pg_class c JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf';

SELECT kind, object,
       CASE WHEN public THEN 'PUBLIC'
            WHEN reader AND stats AND writer THEN 'reader, pg_read_all_stats, writer'
            WHEN stats AND NOT reader AND NOT writer THEN 'pg_read_all_stats'
            WHEN writer AND NOT reader AND NOT stats THEN 'writer'
            WHEN NOT (reader OR stats OR writer) THEN 'owner'
            ELSE format('reader %s, stats %s, writer %s', reader, stats, writer) END AS who,
       CASE WHEN definer THEN 'SECURITY DEFINER' ELSE '' END AS runs_as_owner
FROM ext_objects
ORDER BY kind, object;

-- what a role other than the owner can write: only writers, only the
-- operation definitions (the built-in ones are kept by a trigger)
SELECT c.oid::regclass AS writable, r AS by_role,
       has_table_privilege(r, c.oid, 'TRUNCATE, REFERENCES, TRIGGER') AS truncate_reference_trigger
FROM pg_class c JOIN pg_depend d ON d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
CROSS JOIN unnest(ARRAY['regress_fp_nobody', 'regress_fp_reader', 'regress_fp_stats', 'regress_fp_writer']) r
WHERE c.relkind IN ('r', 'v', 'S')
  AND has_table_privilege(r, c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER')
ORDER BY 1, 2;

-- functions that run as the owner, or in SQL and PL/pgSQL, without
-- search_path pinned to pg_catalog, pg_temp
CREATE FUNCTION pg_temp.unpinned(fns regprocedure[]) RETURNS SETOF text LANGUAGE sql AS $$
  SELECT p.oid::regprocedure::text FROM pg_proc p
  JOIN pg_language l ON l.oid = p.prolang
  WHERE p.oid = ANY (fns)
    AND (p.prosecdef OR l.lanname IN ('sql', 'plpgsql'))
    AND NOT coalesce('search_path=pg_catalog, pg_temp' = ANY (p.proconfig), false)
  ORDER BY 1 $$;
SELECT pg_temp.unpinned(array_agg(p.oid)) AS unpinned
FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf';
-- control: a definer function without a pinned path is found
CREATE FUNCTION regress_evil.unsafe_definer() RETURNS int LANGUAGE sql SECURITY DEFINER AS $$ SELECT 1 $$;
SELECT pg_temp.unpinned(ARRAY['regress_evil.unsafe_definer()'::regprocedure]) AS control_unpinned;

------------------------------------------------------------------------
-- A writer plants temporary tables with capture()'s and store_plans()'
-- work-table names, with triggers that make it superuser when they run
-- as a superuser.  capture() refuses them; the writer stays what it was.
------------------------------------------------------------------------
CREATE TABLE regress_evil.fired (tab text, op text, who name);
GRANT ALL ON regress_evil.fired TO PUBLIC;
CREATE FUNCTION regress_evil.pwn() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO regress_evil.fired VALUES (TG_TABLE_NAME, TG_OP, current_user);
    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'ALTER ROLE regress_fp_writer SUPERUSER';
    END IF;
    RETURN NULL;
END $$;
GRANT EXECUTE ON FUNCTION regress_evil.pwn() TO PUBLIC;
-- the work tables this session made so far go (a planted table needs the name free)
DISCARD TEMP;
CREATE FUNCTION regress_evil.try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text;
BEGIN
  EXECUTE q;
  RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
  RETURN st || ': ' || regexp_replace(msg, '\d+', 'N', 'g');
END $$;
GRANT EXECUTE ON FUNCTION regress_evil.try(text) TO PUBLIC;

SET ROLE regress_fp_writer;
CREATE TEMP TABLE fperf_cur_stmt (userid oid, dbid oid, queryid bigint, toplevel bool, query text,
  calls bigint, total_exec_time float8, total_plan_time float8, plans bigint, rows bigint,
  shared_blks_hit bigint, shared_blks_read bigint, shared_blks_dirtied bigint, shared_blks_written bigint,
  local_blks_hit bigint, local_blks_read bigint, temp_blks_read bigint, temp_blks_written bigint,
  blk_read_time float8, blk_write_time float8, wal_records bigint, wal_fpi bigint, wal_bytes numeric,
  key_id bigint, last_key_id bigint);
CREATE TRIGGER t AFTER INSERT ON fperf_cur_stmt FOR EACH STATEMENT EXECUTE FUNCTION regress_evil.pwn();
-- control: the planted trigger fires (here as the writer itself)
INSERT INTO fperf_cur_stmt (queryid) VALUES (1);
SELECT * FROM regress_evil.fired;
DELETE FROM regress_evil.fired;
SELECT regress_evil.try('SELECT folio_perf_snapshot(''planted stmt'')') AS planted_stmt;
SELECT regress_evil.try('SELECT folio_perf_begin(''planted stmt'')') AS planted_stmt_begin;
DROP TABLE fperf_cur_stmt;

-- a BEFORE DELETE row trigger on a planted fperf_cur_plan with a row in it
CREATE TEMP TABLE fperf_cur_plan (dbid oid, userid oid, queryid bigint, toplevel boolean,
  duration_ms double precision, captured_at timestamptz, fingerprint bigint, shapes bigint[],
  slow_calls bigint, analyzed boolean, truncated boolean, plan_text text, plan_json text,
  plan_md5 uuid);
CREATE TRIGGER t BEFORE DELETE ON fperf_cur_plan FOR EACH ROW EXECUTE FUNCTION regress_evil.pwn();
INSERT INTO fperf_cur_plan (queryid) VALUES (1), (2);
-- control: it fires on DELETE
DELETE FROM fperf_cur_plan WHERE queryid = 2;
SELECT * FROM regress_evil.fired;
DELETE FROM regress_evil.fired;
SELECT regress_evil.try('SELECT folio_perf_snapshot(''planted plan'')') AS planted_plan;
DROP TABLE fperf_cur_plan;
-- a planted rule and a planted view are refused the same way
CREATE TEMP TABLE fperf_cur_rel (x int);
CREATE RULE r AS ON INSERT TO fperf_cur_rel DO INSTEAD NOTHING;
SELECT regress_evil.try('SELECT folio_perf_snapshot(''planted rel'')') AS planted_rel;
DROP TABLE fperf_cur_rel;
CREATE TEMP VIEW fperf_cur_rel AS SELECT 1 AS x;
SELECT regress_evil.try('SELECT folio_perf_snapshot(''planted view'')') AS planted_view;
DROP VIEW fperf_cur_rel;
-- nothing planted: the writer's snapshot works (twice in one session, the
-- work tables then belong to the extension's owner)
SELECT folio_perf_snapshot('writer 1') > 0 AS writer_snapshot;
SELECT folio_perf_snapshot('writer 2') > 0 AS writer_snapshot_again;
RESET ROLE;
SELECT count(*) AS triggers_fired_as_owner FROM regress_evil.fired;
SELECT rolsuper AS writer_is_superuser FROM pg_roles WHERE rolname = 'regress_fp_writer';
SELECT c.relname, pg_get_userbyid(c.relowner) = current_user AS owned_by_extension_owner
FROM pg_class c WHERE c.relnamespace = pg_my_temp_schema() AND c.relname LIKE 'fperf_cur_%'
ORDER BY 1;

-- window_cache(): a role of this session plants the superuser's cache
-- tables (named by the role's oid) before the superuser reports
DISCARD TEMP;
SELECT 'fperf_stmt_delta_' || oid AS cache, 'fperf_stmt_delta_' || oid || '_done' AS cache_done
FROM pg_roles WHERE rolname = current_user \gset
SET ROLE regress_fp_writer;
CREATE TEMP TABLE :"cache" (b bigint, e bigint, key_id bigint, status text, calls bigint,
    total_exec_time double precision, total_plan_time double precision,
    rows bigint, shared_blks_hit bigint, shared_blks_read bigint,
    shared_blks_dirtied bigint, shared_blks_written bigint,
    temp_blks_read bigint, temp_blks_written bigint,
    blk_read_time double precision, blk_write_time double precision,
    wal_bytes numeric, first_calls_mean double precision);
CREATE TEMP TABLE :"cache_done" (b bigint, e bigint);
CREATE TRIGGER t AFTER INSERT ON :"cache" FOR EACH STATEMENT EXECUTE FUNCTION regress_evil.pwn();
CREATE TRIGGER t AFTER INSERT ON :"cache_done" FOR EACH STATEMENT EXECUTE FUNCTION regress_evil.pwn();
-- control: the plant fires
INSERT INTO :"cache_done" VALUES (0, 0);
DELETE FROM :"cache_done";
SELECT tab LIKE 'fperf_stmt_delta_%' AS control_fired, who FROM regress_evil.fired;
DELETE FROM regress_evil.fired;
RESET ROLE;
-- (a window's stored facts would serve it without the cache tables)
SET folio_perf.window_facts = off;
SELECT count(*) > 0 AS report_rows FROM folio_perf_top_statements(:w);
SELECT count(*) AS triggers_fired_as_superuser FROM regress_evil.fired;
SELECT rolsuper AS writer_is_superuser FROM pg_roles WHERE rolname = 'regress_fp_writer';
-- the superuser's own cache still works when nothing is planted
DISCARD TEMP;
BEGIN;
SELECT count(*) > 0 AS report_rows FROM folio_perf_top_statements(:w);
SELECT count(*) AS cache_tables FROM pg_class c
WHERE c.relnamespace = pg_my_temp_schema() AND c.relname LIKE 'fperf_stmt_delta_%';
COMMIT;
RESET folio_perf.window_facts;

------------------------------------------------------------------------
-- Hidden texts leave no MD5 to confirm a guess with
------------------------------------------------------------------------
CREATE TABLE regress_evil.md5s AS
SELECT DISTINCT t.text_md5::text AS h FROM folio_perf_data.query_text t;
GRANT SELECT ON regress_evil.md5s TO PUBLIC;
SET ROLE regress_fp_reader;
SELECT count(*) FILTER (WHERE query = '<insufficient privilege>') > 0 AS some_hidden,
       count(*) FILTER (WHERE query = '<insufficient privilege>' AND text_md5 IS NOT NULL) AS hidden_with_md5
FROM folio_perf_data.stmt_text;
SELECT count(*) AS hidden_rows_keyed_by_md5
FROM folio_perf_compare_rows(:w, :ws) r
WHERE r.query = '<insufficient privilege>'
  AND EXISTS (SELECT 1 FROM regress_evil.md5s m WHERE left(m.h, 12) = r.key);
RESET ROLE;
-- control: for a role that sees the texts, rows are keyed by the MD5
SET ROLE regress_fp_stats;
SELECT count(*) > 0 AS rows_keyed_by_md5
FROM folio_perf_compare_rows(:w, :ws) r
WHERE r.section = 'statement'
  AND EXISTS (SELECT 1 FROM regress_evil.md5s m WHERE left(m.h, 12) = r.key);
SELECT count(*) FILTER (WHERE text_md5 IS NULL) AS stats_rows_without_md5 FROM folio_perf_data.stmt_text;
RESET ROLE;

------------------------------------------------------------------------
-- Sampled activity follows pg_stat_activity's rule: state, wait event,
-- queryid and CPU of other roles' processes are hidden from a plain reader
------------------------------------------------------------------------
SET ROLE regress_fp_reader;
SELECT count(*) > 0 AS other_roles_sampled,
       count(*) FILTER (WHERE state IS NOT NULL OR wait_event IS NOT NULL
                          OR wait_event_type IS NOT NULL OR queryid IS NOT NULL
                          OR cpu_ms IS NOT NULL) AS other_roles_detail_shown
FROM folio_perf_samples
WHERE userid IS DISTINCT FROM 'regress_fp_reader'::regrole;
-- and what pg_stat_activity itself shows this role of the same processes
SELECT count(*) FILTER (WHERE state IS NOT NULL) AS pg_stat_activity_shows_state
FROM pg_stat_activity WHERE usesysid IS DISTINCT FROM 'regress_fp_reader'::regrole
  AND backend_type = 'client backend';
RESET ROLE;
-- control: a member of pg_read_all_stats sees them
SET ROLE regress_fp_stats;
SELECT count(*) FILTER (WHERE state IS NOT NULL) > 0 AS stats_sees_state
FROM folio_perf_samples
WHERE userid IS DISTINCT FROM 'regress_fp_stats'::regrole;
RESET ROLE;

------------------------------------------------------------------------
-- folio_perf_sampler_purge() rejects a negative interval, as
-- folio_perf_purge() does (a negative one would delete everything)
------------------------------------------------------------------------
SELECT count(*) > 0 AS intervals_stored FROM folio_perf_data.sample_interval;
SELECT regress_evil.try('SELECT folio_perf_sampler_purge(''-100 years'')') AS negative;
SELECT regress_evil.try('SELECT folio_perf_sampler_purge(NULL)') AS null_interval;
SELECT count(*) > 0 AS intervals_still_stored FROM folio_perf_data.sample_interval;
\set SHOW_CONTEXT never
SELECT folio_perf_sampler_purge('-1 second');
\set SHOW_CONTEXT errors

DROP SCHEMA regress_evil CASCADE;
DROP ROLE regress_fp_nobody;
DROP ROLE regress_fp_reader;
DROP ROLE regress_fp_writer;
DROP ROLE regress_fp_stats;

------------------------------------------------------------------------
-- CREATE EXTENSION grants to folio_perf_reader and folio_perf_writer; a
-- role of that name someone prepared with more than NOLOGIN (here: it can
-- log in) is refused, not adopted
------------------------------------------------------------------------
SET client_min_messages = warning;
DROP EXTENSION folio_perf CASCADE;
RESET client_min_messages;
ALTER ROLE folio_perf_writer LOGIN;
\set SHOW_CONTEXT never
CREATE EXTENSION folio_perf;
\set SHOW_CONTEXT errors
SELECT count(*) AS extension_installed FROM pg_extension WHERE extname = 'folio_perf';
-- control: the same role as a plain group role is used
ALTER ROLE folio_perf_writer NOLOGIN;
CREATE EXTENSION folio_perf;
SELECT has_function_privilege('folio_perf_writer', 'folio_perf_snapshot(text)', 'EXECUTE') AS writer_granted;
