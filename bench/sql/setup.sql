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
 * where rows were written), and read them as bench.touch does: one row of
 * a table with rows deleted and inserted again (the table keeps its
 * contents), a made-up row inserted into an empty one and deleted (most of
 * the fixture's tables are empty); either way n_tup_ins and n_tup_del
 * move.  The made-up row has a value of its type for each NOT NULL column
 * without a default; a table where that fails (a check, a foreign key, a
 * type with no value here) is counted as skipped, and only read.
 * (TRUNCATE would give an empty table a new relfilenode, but syncs each
 * rebuilt index to disk: minutes for 45,000 tables.)  p_part of p_parts:
 * only the tables whose oid is p_part modulo p_parts.  Run the parts in
 * separate sessions: on PostgreSQL 15 each write looks up the table's
 * publications in a catalog cache list that is searched linearly and
 * grows by one entry per table a session wrote to (a session writing all
 * 47,000 tables spends 2.5 minutes there, ten sessions 30 s).
 */
CREATE FUNCTION bench.sample_value(p_type oid)
RETURNS text
LANGUAGE sql IMMUTABLE AS $$
SELECT CASE
    WHEN p_type = 'uuid'::regtype THEN 'gen_random_uuid()'
    WHEN p_type IN ('json'::regtype, 'jsonb'::regtype) THEN '''{}'''
    WHEN p_type IN ('text'::regtype, 'varchar'::regtype, 'bpchar'::regtype, 'name'::regtype) THEN '''x'''
    WHEN p_type IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'numeric'::regtype,
                    'float4'::regtype, 'float8'::regtype) THEN '0'
    WHEN p_type = 'bool'::regtype THEN 'false'
    WHEN p_type IN ('timestamp'::regtype, 'timestamptz'::regtype, 'date'::regtype) THEN 'now()'
END
$$;

CREATE FUNCTION bench.write_one(p_rel regclass, p_has_rows boolean, p_insert text)
RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
    t tid;
BEGIN
    IF p_has_rows THEN
        EXECUTE format('WITH d AS (DELETE FROM %1$s WHERE ctid = (SELECT ctid FROM %1$s LIMIT 1) RETURNING *) '
                       'INSERT INTO %1$s SELECT * FROM d', p_rel);
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n > 0 THEN
            RETURN 'moved';
        END IF;
    END IF;
    IF p_insert IS NULL THEN
        RETURN 'skipped';
    END IF;
    EXECUTE p_insert INTO t;
    EXECUTE format('DELETE FROM %s WHERE ctid = $1', p_rel) USING t;
    RETURN 'inserted';
EXCEPTION WHEN OTHERS THEN
    RETURN 'skipped';
END
$$;

CREATE PROCEDURE bench.touch_write(p_tables int, p_seed float8 DEFAULT 0.5,
                                    p_part int DEFAULT 0, p_parts int DEFAULT 1)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    ix regclass;
    how text;
    moved int := 0;
    inserted int := 0;
    skipped int := 0;
    i int := 0;
BEGIN
    PERFORM setseed(p_seed);
    FOR r IN
        -- set-based: as correlated subqueries per table this took 2 minutes
        WITH part AS (
            SELECT h.inhrelid, h.inhparent, pt.partattrs[0] AS keyatt,
                   quote_literal(substring(pg_get_expr(pc.relpartbound, pc.oid)
                                           FROM $re$^FOR VALUES IN \('([^']*)'$re$)) AS lit
            FROM pg_inherits h
            JOIN pg_partitioned_table pt ON pt.partrelid = h.inhparent
            JOIN pg_class pc ON pc.oid = h.inhrelid
            WHERE pt.partstrat = 'l' AND pt.partnatts = 1
        ), att AS (
            SELECT a.attrelid, a.attname, a.attnum,
                   -- a list partition's key: the first value of its bound
                   CASE WHEN a.attnum = p.keyatt THEN p.lit ELSE bench.sample_value(a.atttypid) END AS val
            FROM pg_attribute a
            LEFT JOIN part p ON p.inhrelid = a.attrelid
            WHERE a.attrelid IN (SELECT f.relid FROM bench.fixture_tables f
                                 WHERE f.relid::bigint % p_parts = p_part)
              AND a.attnum > 0 AND NOT a.attisdropped
              AND a.attnotnull AND NOT a.atthasdef AND a.attgenerated = ''
        ), ins AS (
            -- a partition's row goes in through its parent (tuple routing: an
            -- insert into the partition itself checks its bound the slow way)
            SELECT att.attrelid,
                   CASE WHEN bool_and(att.val IS NOT NULL) THEN
                       format('INSERT INTO %s (%s) VALUES (%s) RETURNING ctid',
                              coalesce(min(p.inhparent::regclass::text), att.attrelid::regclass::text),
                              string_agg(quote_ident(att.attname), ', ' ORDER BY att.attnum),
                              string_agg(att.val, ', ' ORDER BY att.attnum))
                   END AS sql
            FROM att LEFT JOIN part p ON p.inhrelid = att.attrelid
            GROUP BY att.attrelid
        ), idx AS (
            SELECT x.indrelid, array_agg(x.indexrelid::regclass) AS idx
            FROM pg_index x GROUP BY x.indrelid
        )
        SELECT t.relid::regclass AS rel, c.reltuples > 0 AS has_rows,
               coalesce(idx.idx, '{}') AS idx, ins.sql AS ins
        FROM bench.fixture_tables t
        JOIN pg_class c ON c.oid = t.relid
        LEFT JOIN ins ON ins.attrelid = t.relid
        LEFT JOIN idx ON idx.indrelid = t.relid
        WHERE c.relkind = 'r' AND t.relid::bigint % p_parts = p_part
        ORDER BY CASE WHEN p_tables IS NULL THEN 0 ELSE random() END, t.relid
        LIMIT p_tables
    LOOP
        -- a table with no NOT NULL column left to fill: an empty column list
        how := bench.write_one(r.rel, r.has_rows,
                               coalesce(r.ins, format('INSERT INTO %s DEFAULT VALUES RETURNING ctid', r.rel)));
        CASE how WHEN 'moved' THEN moved := moved + 1;
                 WHEN 'inserted' THEN inserted := inserted + 1;
                 ELSE skipped := skipped + 1;
        END CASE;
        EXECUTE format('SELECT FROM %s LIMIT 1', r.rel);
        FOREACH ix IN ARRAY r.idx LOOP
            PERFORM pg_prewarm(ix, 'buffer');
        END LOOP;
        i := i + 1;
        IF i % 500 = 0 THEN
            COMMIT;
        END IF;
    END LOOP;
    RAISE NOTICE 'touch_write: % tables with a row moved, % with a row inserted and deleted, % skipped (only read)',
        moved, inserted, skipped;
END
$$;
