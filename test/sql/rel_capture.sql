-- folio_perf_rel_capture(), the relations part of a local snapshot in one C
-- call, gives exactly the rows of the SQL it replaced in capture(): the
-- pass of folio_perf_rel_changes over rel_last's arrays, a probe of
-- rel_last per changed relation, the size rule as a window over the rows
-- and folio_perf_relation_size per relation whose size can have changed.
-- Then: sizes carried over where only reads happened, read again where
-- rows were written (for an index: in its table) or the relfilenode is
-- new; rel_last found by its schema, never through search_path or
-- pg_temp; read only with SELECT on it.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION IF NOT EXISTS folio_perf;
RESET client_min_messages;

CREATE SCHEMA fs02_mod_cap;
CREATE TABLE fs02_mod_cap.readonly (id int PRIMARY KEY, doc text) WITH (autovacuum_enabled = off);
CREATE TABLE fs02_mod_cap.written (id int PRIMARY KEY, doc text) WITH (autovacuum_enabled = off);
CREATE INDEX written_doc ON fs02_mod_cap.written (left(doc, 10));
CREATE TABLE fs02_mod_cap.gone (id int PRIMARY KEY) WITH (autovacuum_enabled = off);
CREATE TABLE fs02_mod_cap.trunc (id int PRIMARY KEY) WITH (autovacuum_enabled = off);
CREATE TABLE fs02_mod_cap.vacfull (id int, doc text) WITH (autovacuum_enabled = off);
CREATE TABLE fs02_mod_cap.idle (id int) WITH (autovacuum_enabled = off);
CREATE MATERIALIZED VIEW fs02_mod_cap.mv AS SELECT g AS id FROM generate_series(1, 10) g;
INSERT INTO fs02_mod_cap.readonly SELECT g, repeat(md5(g::text), 400) FROM generate_series(1, 50) g;
INSERT INTO fs02_mod_cap.written SELECT g, repeat(md5(g::text), 400) FROM generate_series(1, 50) g;
INSERT INTO fs02_mod_cap.gone SELECT generate_series(1, 5);
INSERT INTO fs02_mod_cap.trunc SELECT generate_series(1, 5);
INSERT INTO fs02_mod_cap.vacfull SELECT g, repeat('x', 3000) FROM generate_series(1, 5) g;
INSERT INTO fs02_mod_cap.idle SELECT generate_series(1, 5);
SELECT pg_stat_force_next_flush();
SELECT folio_perf_snapshot('rel_capture before') > 0 AS snapped;

-- between two snapshots: reads only, writes, a drop, a new table, a
-- truncation, a VACUUM FULL, a refresh
SET enable_seqscan = off;
SELECT count(*) FROM fs02_mod_cap.readonly WHERE id < 20 AND length(doc) > 0;
RESET enable_seqscan;
INSERT INTO fs02_mod_cap.written SELECT g, repeat(md5(g::text), 400) FROM generate_series(51, 400) g;
DROP TABLE fs02_mod_cap.gone;
CREATE TABLE fs02_mod_cap.born (id int PRIMARY KEY) WITH (autovacuum_enabled = off);
INSERT INTO fs02_mod_cap.born VALUES (1);
TRUNCATE fs02_mod_cap.trunc;
VACUUM FULL fs02_mod_cap.vacfull;
REFRESH MATERIALIZED VIEW fs02_mod_cap.mv;
SELECT pg_stat_force_next_flush();
SET stats_fetch_consistency = none;

-- the SQL the C call replaced, against the same rel_last
CREATE TEMP TABLE by_sql AS
WITH st AS (
    SELECT array_agg(l.relid) AS r, array_agg(l.sig) AS s, array_agg(l.relfilenode) AS f
    FROM folio_perf_data.rel_last l
    WHERE l.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND l.target_id IS NULL
)
SELECT q.*,
       CASE WHEN q.status = 'd' THEN NULL
            WHEN q.last_size IS NOT NULL AND q.last_relfilenode = q.relfilenode
             AND NOT bool_or(q.relkind <> 'i' AND q.wsig IS DISTINCT FROM q.last_wsig)
                     OVER (PARTITION BY coalesce(q.table_relid, q.relid))
            THEN q.last_size
            ELSE folio_perf_relation_size(q.relid)
       END AS size_bytes
FROM (
    SELECT r.*, t.relname AS table_relname,
           r.tuples_inserted + r.tuples_updated + r.tuples_deleted
             + r.vacuum_count + r.autovacuum_count AS wsig,
           l.rel_key_id, l.relid AS last_relid,
           l.relfilenode AS last_relfilenode, l.wsig AS last_wsig,
           l.size_bytes AS last_size, l.live_tup AS last_live, l.dead_tup AS last_dead
    FROM st, folio_perf_rel_changes(st.r, st.s, st.f) r
    LEFT JOIN pg_class t ON t.oid = r.table_relid
    LEFT JOIN folio_perf_data.rel_last l
      ON l.relid = r.relid AND l.target_id IS NULL
     AND l.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
) q;
CREATE TEMP TABLE by_c AS SELECT * FROM folio_perf_rel_capture();

SELECT (SELECT count(*) FROM (TABLE by_sql EXCEPT ALL TABLE by_c) x) AS only_sql,
       (SELECT count(*) FROM (TABLE by_c EXCEPT ALL TABLE by_sql) x) AS only_c,
       (SELECT count(*) >= 10 FROM by_c) AS rows_compared;

-- what came back for the schema, each with its current size (the rule's
-- carrying over is shown by the control below)
SELECT c.status,
       coalesce(c.relname::text, k.relname::text) AS relname,
       c.relkind, c.table_relname,
       c.size_bytes IS NOT DISTINCT FROM
         (CASE WHEN c.status <> 'd' THEN folio_perf_relation_size(c.relid) END) AS size_is_current
FROM by_c c
LEFT JOIN folio_perf_data.rel_key k ON k.rel_key_id = c.rel_key_id
WHERE coalesce(c.nspname, k.nspname) = 'fs02_mod_cap'
ORDER BY 2, 1;

-- control: a previous size that is off is carried over for the table that
-- was only read, and replaced for the one that was written: the sizes
-- above come from the rule, not from reading every file
UPDATE folio_perf_data.rel_last l SET size_bytes = l.size_bytes + 8192
WHERE l.relid IN ('fs02_mod_cap.readonly'::regclass, 'fs02_mod_cap.written'::regclass);
SELECT c.relname, c.size_bytes - folio_perf_relation_size(c.relid) AS off_by
FROM folio_perf_rel_capture() c
WHERE c.relid IN ('fs02_mod_cap.readonly'::regclass, 'fs02_mod_cap.written'::regclass)
ORDER BY 1;
UPDATE folio_perf_data.rel_last l SET size_bytes = l.size_bytes - 8192
WHERE l.relid IN ('fs02_mod_cap.readonly'::regclass, 'fs02_mod_cap.written'::regclass);

-- attack: a rel_last of the caller's in search_path and in pg_temp, with a
-- row that would make "readonly" new and a bogus relation dropped, is not
-- read; folio_perf_data.rel_last is
CREATE SCHEMA regress_evil;
CREATE TABLE regress_evil.rel_last (LIKE folio_perf_data.rel_last);
INSERT INTO regress_evil.rel_last
SELECT 1, (SELECT oid FROM pg_database WHERE datname = current_database()), NULL,
       4000000000, 1, 1, 1, 1, 1, 1, 1;
CREATE TEMP TABLE rel_last (LIKE folio_perf_data.rel_last);
INSERT INTO pg_temp.rel_last SELECT * FROM regress_evil.rel_last;
SET search_path = regress_evil, pg_temp, public;
-- (the planted table itself is a new relation of the database: left out)
CREATE TEMP TABLE by_c_evil AS
SELECT * FROM public.folio_perf_rel_capture() WHERE nspname IS DISTINCT FROM 'regress_evil';
SET search_path = pg_temp, regress_evil, public;
INSERT INTO by_c_evil
SELECT * FROM public.folio_perf_rel_capture() WHERE nspname IS DISTINCT FROM 'regress_evil';
RESET search_path;
SELECT (SELECT count(*) FROM (TABLE by_c_evil EXCEPT ALL (TABLE by_c UNION ALL TABLE by_c)) x) AS only_evil,
       (SELECT count(*) FROM ((TABLE by_c UNION ALL TABLE by_c) EXCEPT ALL TABLE by_c_evil) x) AS only_c,
       (SELECT count(*) FROM by_c_evil WHERE relid = 4000000000) AS bogus_rows;
DROP SCHEMA regress_evil CASCADE;
DROP TABLE pg_temp.rel_last;

-- a role that may run the function but not read rel_last gets nothing
CREATE ROLE regress_cap_nosel;
GRANT EXECUTE ON FUNCTION folio_perf_rel_capture(bigint) TO regress_cap_nosel;
SET ROLE regress_cap_nosel;
SELECT count(*) FROM folio_perf_rel_capture();
RESET ROLE;
REVOKE EXECUTE ON FUNCTION folio_perf_rel_capture(bigint) FROM regress_cap_nosel;
DROP ROLE regress_cap_nosel;

-- the base the capture adds what changed to: the previous state's
-- relations and bytes as the C call read them, equal to a count and sum
-- over rel_last; only after a call in the same transaction
BEGIN;
SELECT count(*) > 0 AS rows_read FROM folio_perf_rel_capture();
SELECT b.n_relations = l.n AS same_count, b.rel_bytes = l.bytes AS same_bytes, b.n_relations > 0 AS some
FROM folio_perf_rel_capture_base() b,
     (SELECT count(*) AS n, coalesce(sum(size_bytes), 0) AS bytes FROM folio_perf_data.rel_last
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND target_id IS NULL) l;
COMMIT;
SELECT * FROM folio_perf_rel_capture_base();

-- the next snapshot stores what the C call found: its relations match a
-- full read of the catalog, its totals rel_last's
SELECT folio_perf_snapshot('rel_capture after') AS s2 \gset
SELECT s.n_relations = l.n AS n_relations_ok, s.rel_bytes = l.bytes AS rel_bytes_ok
FROM folio_perf_data.snapshot s,
     (SELECT count(*) AS n, coalesce(sum(size_bytes), 0) AS bytes FROM folio_perf_data.rel_last
      WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND target_id IS NULL) l
WHERE s.snap_id = :s2;
SELECT count(*) AS mismatched_sizes
FROM folio_perf_data.rel_last l
JOIN pg_class c ON c.oid = l.relid
WHERE l.target_id IS NULL AND c.relnamespace = 'fs02_mod_cap'::regnamespace
  AND l.size_bytes IS DISTINCT FROM folio_perf_relation_size(l.relid);
SELECT count(*) AS rel_last_rows_of_dropped
FROM folio_perf_data.rel_last l
WHERE l.target_id IS NULL AND NOT EXISTS (SELECT 1 FROM pg_class c WHERE c.oid = l.relid);

SET client_min_messages = warning;
DROP SCHEMA fs02_mod_cap CASCADE;

-- folio_perf_relation_size is what pg_table_size counts (tables, with
-- TOAST) and every fork of an index, for permanent and unlogged relations
-- (only these have an init fork, the one fork not looked for otherwise)
CREATE SCHEMA regress_sizes;
CREATE TABLE regress_sizes.perm (id int PRIMARY KEY, doc text);
CREATE UNLOGGED TABLE regress_sizes.unlog (id int PRIMARY KEY, doc text);
INSERT INTO regress_sizes.perm SELECT g, repeat(md5(g::text), 400) FROM generate_series(1, 300) g;
INSERT INTO regress_sizes.unlog SELECT g, repeat(md5(g::text), 400) FROM generate_series(1, 300) g;
VACUUM regress_sizes.perm, regress_sizes.unlog;
SELECT c.relname, c.relpersistence,
       pg_relation_size(c.oid, 'init') AS init_fork_bytes,
       folio_perf_relation_size(c.oid) = CASE WHEN c.relkind = 'i'
           THEN pg_relation_size(c.oid, 'main') + pg_relation_size(c.oid, 'fsm')
              + pg_relation_size(c.oid, 'vm') + pg_relation_size(c.oid, 'init')
           ELSE pg_table_size(c.oid) END AS size_ok
FROM pg_class c
WHERE c.relnamespace = 'regress_sizes'::regnamespace
ORDER BY c.relname;

-- Segments: the next segment file is looked for only past a full one
-- (segment_size).  A main fork made a full segment (a sparse file) with a
-- second segment of 16 kB: both counted, as pg_table_size counts them; a
-- short first segment with a stray second one planted beside it (md.c never
-- leaves one that holds data): not looked for, so 8 kB fewer than
-- pg_table_size, which stats until a file is missing.
CREATE TABLE regress_sizes.full_seg (id int);
CREATE TABLE regress_sizes.short_seg (id int);
INSERT INTO regress_sizes.full_seg VALUES (1);
INSERT INTO regress_sizes.short_seg VALUES (1);
CHECKPOINT;
DO $$
DECLARE
    f text := current_setting('data_directory') || '/' || pg_relation_filepath('regress_sizes.full_seg');
    s text := current_setting('data_directory') || '/' || pg_relation_filepath('regress_sizes.short_seg');
    seg bigint := pg_size_bytes(current_setting('segment_size'));
BEGIN
    EXECUTE format('COPY (SELECT 1) TO PROGRAM %L',
                   format('truncate -s %s %s && truncate -s 16384 %s.1 && truncate -s 8192 %s.1',
                          seg, f, f, s));
END
$$;
SELECT c.relname, pg_size_bytes(current_setting('segment_size')) AS segment_bytes,
       folio_perf_relation_size(c.oid) AS folio_perf_bytes, pg_table_size(c.oid) AS pg_table_size
FROM pg_class c
WHERE c.relnamespace = 'regress_sizes'::regnamespace AND c.relname IN ('full_seg', 'short_seg')
ORDER BY c.relname;
DROP SCHEMA regress_sizes CASCADE;

-- A snapshot that reads the sizes of more than 2,000 tables with a TOAST
-- table maps the TOAST relations with one scan of pg_class and one of
-- pg_index instead of three catalog probes per table: the sizes it stores
-- are the probes' (folio_perf_relation_size), for new tables and for
-- written ones, TOAST table and TOAST index included (an empty TOAST
-- table's index is one 8 kB page: a map without the indexes is off)
SET client_min_messages = warning;
CREATE SCHEMA fs03_mod_toastmap;
-- (committing every 500 tables: one transaction would need more locks
-- than the test server has)
DO $$
BEGIN
    FOR i IN 1..2100 LOOP
        EXECUTE format('CREATE TABLE fs03_mod_toastmap.t%s (id int, doc text)', i);
        -- stored out of line, uncompressed: TOAST data for every long value
        EXECUTE format('ALTER TABLE fs03_mod_toastmap.t%s ALTER doc SET STORAGE EXTERNAL', i);
        IF i % 500 = 0 THEN
            COMMIT;
        END IF;
    END LOOP;
    FOR i IN 1..2100 BY 7 LOOP
        EXECUTE format('INSERT INTO fs03_mod_toastmap.t%s SELECT g, repeat(''x'', 9000) FROM generate_series(1, 3) g', i);
    END LOOP;
END
$$;
RESET client_min_messages;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_snapshot('toast map: new') IS NOT NULL AS taken;
SELECT count(*) AS tables, count(*) FILTER (WHERE l.size_bytes > 16384) AS with_toast_data,
       count(*) FILTER (WHERE l.size_bytes IS DISTINCT FROM folio_perf_relation_size(l.relid)) AS mismatched
FROM folio_perf_data.rel_last l
JOIN pg_class c ON c.oid = l.relid
WHERE l.target_id IS NULL AND c.relnamespace = 'fs03_mod_toastmap'::regnamespace AND c.relkind = 'r';
DO $$
BEGIN
    FOR i IN 1..2100 LOOP
        EXECUTE format('INSERT INTO fs03_mod_toastmap.t%s VALUES (0, repeat(''x'', 9000))', i);
        IF i % 500 = 0 THEN
            COMMIT;
        END IF;
    END LOOP;
END
$$;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_snapshot('toast map: written') IS NOT NULL AS taken;
SELECT count(*) AS tables,
       count(*) FILTER (WHERE l.size_bytes IS DISTINCT FROM folio_perf_relation_size(l.relid)) AS mismatched
FROM folio_perf_data.rel_last l
JOIN pg_class c ON c.oid = l.relid
WHERE l.target_id IS NULL AND c.relnamespace = 'fs03_mod_toastmap'::regnamespace AND c.relkind = 'r';
DO $$
BEGIN
    FOR i IN 1..2100 LOOP
        EXECUTE format('DROP TABLE fs03_mod_toastmap.t%s', i);
        IF i % 500 = 0 THEN
            COMMIT;
        END IF;
    END LOOP;
END
$$;
DROP SCHEMA fs03_mod_toastmap;
