-- bench/sql/setup.sql - helpers for bench/run.sh, loaded into every fixture
-- database the benchmark uses (schema "bench"; dropped and recreated by
-- every run).  Nothing here is part of the extension.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

DROP SCHEMA IF EXISTS bench CASCADE;
CREATE SCHEMA bench;

-- The naive copy's destination tables: plain tables, no indexes, one row
-- per view row per snapshot (as the goals suggest).  naive3 writes the first
-- three, naive4 all four.
CREATE TABLE bench.naive_stmt AS SELECT now() AS ts, * FROM pg_stat_statements WITH NO DATA;
CREATE TABLE bench.naive_tab  AS SELECT now() AS ts, * FROM pg_stat_user_tables WITH NO DATA;
CREATE TABLE bench.naive_io   AS SELECT now() AS ts, * FROM pg_statio_user_tables WITH NO DATA;
CREATE TABLE bench.naive_idx  AS SELECT now() AS ts, * FROM pg_stat_user_indexes WITH NO DATA;

-- The floors' functions (bench/floor/bench_floor.c, installed by bench/run.sh)
CREATE FUNCTION bench.floor_walk(with_lock boolean) RETURNS bigint
LANGUAGE c STRICT AS '$libdir/bench_floor', 'bench_floor_walk';
CREATE FUNCTION bench.floor_walk_hash(with_lock boolean) RETURNS bigint
LANGUAGE c STRICT AS '$libdir/bench_floor', 'bench_floor_walk_hash';

-- Bytes on disk of what a contender writes to (tables with their indexes,
-- TOAST, FSM and VM: pg_total_relation_size).
CREATE FUNCTION bench.bytes(contender text) RETURNS bigint
LANGUAGE sql STABLE AS $$
  SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind = 'r' AND CASE contender
     WHEN 'folio_perf' THEN n.nspname = 'folio_perf_data'
     WHEN 'naive3' THEN n.nspname = 'bench' AND c.relname IN ('naive_stmt', 'naive_tab', 'naive_io')
     WHEN 'naive4' THEN n.nspname = 'bench' AND c.relname LIKE 'naive\_%'
     WHEN 'powa' THEN n.nspname = 'public' AND c.relname LIKE 'powa\_%'
     ELSE false   -- the floors write nothing
  END
$$;

-- The user tables of the fixture (FOLIO tenant and module schemas).
CREATE VIEW bench.fixture_tables AS
  SELECT c.oid AS relid, n.nspname, c.relname
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind IN ('r', 'm') AND c.relpersistence = 'p'
    AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast',
                          'folio_perf_data', 'bench', 'public');

/*
 * Filler statements for pg_stat_statements: distinct statements over the
 * fixture's tables and columns, each shaped
 *   SELECT <expr(col)> FROM <schema>.<table> WHERE false AND col::text IN (k constants)
 * WHERE false plans to a one-time filter, so running them touches no
 * relation statistics; k varies the normalised text length (mean ~500
 * bytes, as application queries are).  The IN list's constants are separate
 * nodes in the jumble, and (table, column, form) is unique, so every
 * statement is its own pg_stat_statements entry.
 */
CREATE TABLE bench.filler (id int PRIMARY KEY, sql text NOT NULL);

CREATE FUNCTION bench.make_filler(n int) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    got int;
BEGIN
    TRUNCATE bench.filler;
    INSERT INTO bench.filler
    SELECT row_number() OVER (ORDER BY md5(p.nspname || p.relname || p.attname || f.form)),
           format('SELECT %s FROM %I.%I WHERE false AND %I::text IN (%s)',
                  replace(f.form, '@', quote_ident(p.attname)), p.nspname, p.relname, p.attname,
                  (SELECT string_agg(quote_literal('v' || g), ', ')
                   FROM generate_series(1, 5 + (hashtext(p.relname || p.attname || f.form) & 127)) g))
    FROM (SELECT t.nspname, t.relname, a.attname
          FROM bench.fixture_tables t
          JOIN pg_attribute a ON a.attrelid = t.relid AND a.attnum > 0 AND NOT a.attisdropped) p
    CROSS JOIN (VALUES ('@'), ('count(@)'), ('@ IS NULL'), ('@::text'), ('DISTINCT @::text')) f(form)
    ORDER BY md5(p.nspname || p.relname || p.attname || f.form)
    LIMIT n;
    GET DIAGNOSTICS got = ROW_COUNT;
    RETURN got;
END
$$;

/*
 * Touch tables so that their statistics change: a seq scan start (numscans)
 * on each table and a read of every block of each of its indexes
 * (pg_prewarm counts buffer hits for the index).  p_tables NULL = every
 * table of the fixture; otherwise p_tables tables chosen by p_seed.
 * Commits every 500 tables so that no transaction holds too many locks.
 * Run with pg_stat_statements.track = none and folio_perf.track_relations
 * = off (bench/run.sh does) so that the touching itself leaves no
 * statements behind.
 */
CREATE PROCEDURE bench.touch(p_tables int, p_seed float8 DEFAULT 0.5)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    ix regclass;
    i int := 0;
BEGIN
    PERFORM setseed(p_seed);
    FOR r IN
        SELECT t.relid::regclass AS rel,
               array(SELECT x.indexrelid::regclass FROM pg_index x WHERE x.indrelid = t.relid) AS idx
        FROM bench.fixture_tables t
        ORDER BY CASE WHEN p_tables IS NULL THEN 0 ELSE random() END, t.relid
        LIMIT p_tables
    LOOP
        EXECUTE format('SELECT FROM %s LIMIT 1', r.rel);
        FOREACH ix IN ARRAY r.idx LOOP
            PERFORM pg_prewarm(ix, 'buffer');
        END LOOP;
        i := i + 1;
        IF i % 500 = 0 THEN
            COMMIT;
        END IF;
    END LOOP;
END
$$;

/*
 * Write to tables so that their sizes can have changed and a snapshot must
 * read them again (the worst case of a capture that re-reads sizes only
 * where rows were written): one row of each table deleted and inserted
 * again (n_tup_del and n_tup_ins move; the table keeps its contents), and
 * an empty table truncated (a new relfilenode).  Then the read of
 * bench.touch, so that every index moves too.  p_tables as in bench.touch.
 * Returns how many tables were written each way (a table whose row cannot
 * be moved, say by a trigger or a generated column, is counted as
 * skipped).
 */
CREATE FUNCTION bench.touch_write_one(p_rel regclass)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
BEGIN
    EXECUTE format('WITH d AS (DELETE FROM %1$s WHERE ctid = (SELECT ctid FROM %1$s LIMIT 1) RETURNING *) '
                   'INSERT INTO %1$s SELECT * FROM d', p_rel);
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n > 0 THEN
        RETURN 'moved';
    END IF;
    EXECUTE format('TRUNCATE %s', p_rel);
    RETURN 'truncated';
EXCEPTION WHEN OTHERS THEN
    RETURN 'skipped';
END
$$;

CREATE PROCEDURE bench.touch_write(p_tables int, p_seed float8 DEFAULT 0.5)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    how text;
    moved int := 0;
    truncated int := 0;
    skipped int := 0;
    i int := 0;
BEGIN
    PERFORM setseed(p_seed);
    FOR r IN
        SELECT t.relid::regclass AS rel
        FROM bench.fixture_tables t
        ORDER BY CASE WHEN p_tables IS NULL THEN 0 ELSE random() END, t.relid
        LIMIT p_tables
    LOOP
        how := bench.touch_write_one(r.rel);
        CASE how WHEN 'moved' THEN moved := moved + 1;
                 WHEN 'truncated' THEN truncated := truncated + 1;
                 ELSE skipped := skipped + 1;
        END CASE;
        i := i + 1;
        IF i % 500 = 0 THEN
            COMMIT;
        END IF;
    END LOOP;
    COMMIT;
    RAISE NOTICE 'touch_write: % tables with a row moved, % empty ones truncated, % skipped',
        moved, truncated, skipped;
    CALL bench.touch(p_tables, p_seed);
END
$$;
