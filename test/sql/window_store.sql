-- The window store against a reference kept in this test.  At every
-- snapshot the test records, in the same transaction, every counter of
-- every relation of its schemas (folio_perf_rel_stats, sizes by
-- folio_perf_relation_size) in its own table; the reference is the
-- computation of a window's relation facts as folio_perf 1.1.0 defines it
-- (rel_delta_compute of 1.1.0's first store, kept below over the test's
-- rows, with one correction: a reset is a counter that went down from one
-- stored row to the next, not from the window's begin to its end, which
-- missed a reset where the begin's counters were lower than the end's and
-- called such a window's numbers exact).  For every pair of snapshots (windows with new, dropped,
-- truncated, rewritten relations, TOAST rewritten by VACUUM FULL, a table
-- created and dropped between two snapshots that one snapshot saw, a
-- statistics reset) the store's facts and point reads must give exactly
-- the reference's rows.  Then a purge of the inner snapshots: the facts of
-- every pair of snapshots left must not change (the purge folds a removed
-- snapshot into the next one).
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
DROP SCHEMA IF EXISTS fs08_mod_users, fs08_mod_inventory CASCADE;
RESET client_min_messages;
\set SHOW_CONTEXT never
SET stats_fetch_consistency = none;

CREATE SCHEMA fs08_mod_users;
CREATE SCHEMA fs08_mod_inventory;
CREATE TABLE fs08_mod_users.users (id int PRIMARY KEY, jsonb jsonb) WITH (autovacuum_enabled = off);
CREATE TABLE fs08_mod_inventory.item (id int PRIMARY KEY, doc text) WITH (autovacuum_enabled = off);
CREATE TABLE fs08_mod_inventory.holdings (id int PRIMARY KEY, note text) WITH (autovacuum_enabled = off);
CREATE TABLE fs08_mod_inventory.gone (id int) WITH (autovacuum_enabled = off);
CREATE TABLE fs08_mod_inventory.idle (id int) WITH (autovacuum_enabled = off);
INSERT INTO fs08_mod_inventory.gone SELECT generate_series(1, 10);
INSERT INTO fs08_mod_inventory.holdings SELECT g, 'h' FROM generate_series(1, 40) g;
INSERT INTO fs08_mod_inventory.idle SELECT generate_series(1, 5);
-- a document that stays in TOAST (random hex compresses little)
CREATE FUNCTION pg_temp.doc(g int) RETURNS text LANGUAGE sql AS
$$ SELECT string_agg(md5(g::text || '.' || i), '') FROM generate_series(1, 300) i $$;

-- What the test records at a snapshot: everything, for its own schemas.
CREATE TABLE pg_temp.ref_snap (snap_id bigint PRIMARY KEY, ord int NOT NULL);
CREATE TABLE pg_temp.ref_all AS
SELECT 0::bigint AS snap_id, s.*, 0::bigint AS size_bytes
FROM folio_perf_rel_stats() s WITH NO DATA;
CREATE FUNCTION pg_temp.rec(s bigint) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO pg_temp.ref_snap VALUES (s, (SELECT count(*) FROM pg_temp.ref_snap));
    INSERT INTO pg_temp.ref_all
    SELECT s, r.*, folio_perf_relation_size(r.relid)
    FROM folio_perf_rel_stats() r WHERE r.nspname::text LIKE 'fs08\_%';
    RETURN s;
END
$$;
CREATE FUNCTION pg_temp.snap() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    RETURN pg_temp.rec(folio_perf_snapshot()) IS NOT NULL;
END
$$;
CREATE FUNCTION pg_temp.wbegin(l text) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE w bigint := folio_perf_begin(l);
BEGIN
    PERFORM pg_temp.rec((SELECT begin_snap FROM folio_perf_data.window WHERE window_id = w));
    RETURN w;
END
$$;
CREATE FUNCTION pg_temp.wend() RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE w bigint := folio_perf_end();
BEGIN
    PERFORM pg_temp.rec((SELECT end_snap FROM folio_perf_data.window WHERE window_id = w));
    RETURN w;
END
$$;

-- window A: new, created-and-dropped, dropped, truncated, VACUUM FULL of TOAST
SELECT pg_temp.wbegin('store A') AS wa \gset
INSERT INTO fs08_mod_users.users SELECT g, '{}' FROM generate_series(1, 100) g;
INSERT INTO fs08_mod_inventory.item SELECT g, pg_temp.doc(g) FROM generate_series(1, 30) g;
SELECT pg_stat_force_next_flush();
SELECT pg_temp.snap() AS a1;
CREATE TABLE fs08_mod_users.tmp (id int, t text) WITH (autovacuum_enabled = off);
INSERT INTO fs08_mod_users.tmp SELECT g, pg_temp.doc(g) FROM generate_series(1, 20) g;
UPDATE fs08_mod_users.users SET jsonb = '{"a":1}' WHERE id < 30;
CREATE INDEX item_doc ON fs08_mod_inventory.item (left(doc, 8));
SELECT count(*) FROM fs08_mod_inventory.item WHERE left(doc, 8) = 'x';
SELECT pg_stat_force_next_flush();
SELECT pg_temp.snap() AS a2;
DROP TABLE fs08_mod_users.tmp;
DROP TABLE fs08_mod_inventory.gone;
TRUNCATE fs08_mod_inventory.holdings;
INSERT INTO fs08_mod_inventory.holdings SELECT g, 'n' FROM generate_series(1, 7) g;
SELECT pg_stat_force_next_flush();
SELECT pg_temp.snap() AS a3;
-- holdings changes again after its rewrite: the purge of a3 folds the flag
INSERT INTO fs08_mod_inventory.holdings VALUES (50, 'a');
DELETE FROM fs08_mod_inventory.item WHERE id > 20;
VACUUM FULL fs08_mod_inventory.item;
SELECT sum(length(doc)) FROM fs08_mod_inventory.item;
SELECT pg_stat_force_next_flush();
SELECT pg_temp.wend() AS wa \gset
-- window B: a statistics reset inside, a table created and dropped that
-- only the inner snapshot b2 saw, a plain VACUUM
SELECT pg_temp.wbegin('store B') AS wb \gset
INSERT INTO fs08_mod_inventory.holdings SELECT g, 'b' FROM generate_series(100, 120) g;
SELECT pg_stat_force_next_flush();
SELECT pg_temp.snap() AS b1;
SELECT count(*) AS reset FROM (SELECT pg_stat_reset()) r;
UPDATE fs08_mod_users.users SET jsonb = '{"b":2}' WHERE id < 6;
DELETE FROM fs08_mod_inventory.item WHERE id > 15;
CREATE TABLE fs08_mod_inventory.brief (id int PRIMARY KEY, t text) WITH (autovacuum_enabled = off);
INSERT INTO fs08_mod_inventory.brief SELECT g, pg_temp.doc(g) FROM generate_series(1, 5) g;
SELECT pg_stat_force_next_flush();
SELECT pg_temp.snap() AS b2;
DROP TABLE fs08_mod_inventory.brief;
VACUUM fs08_mod_inventory.item;
SELECT pg_stat_force_next_flush();
SELECT pg_temp.wend() AS wb \gset
-- window C: no inner snapshot
SELECT pg_temp.wbegin('store C') AS wc \gset
INSERT INTO fs08_mod_users.users VALUES (1000, '{}');
SELECT pg_stat_force_next_flush();
SELECT pg_temp.wend() AS wc \gset
SELECT count(*) AS snapshots_recorded, count(DISTINCT s.dbid) AS databases
FROM pg_temp.ref_snap r JOIN folio_perf_data.snapshot s USING (snap_id);

-- The reference's rows, as 1.1.0's first store defined them: a row where a
-- relation is new, any counter moved or its relfilenode changed, a gone row
-- where it is no longer seen; what an index does not have is NULL.
CREATE TABLE pg_temp.ref_rel AS
WITH o AS (
    SELECT a.*, r.ord FROM pg_temp.ref_all a JOIN pg_temp.ref_snap r USING (snap_id)
), keyed AS (
    SELECT o.*, lag(o.ord) OVER w AS prev_ord,
           lag(row(o.relfilenode, o.numscans, o.tuples_returned, o.tuples_fetched,
                   o.tuples_inserted, o.tuples_updated, o.tuples_deleted, o.tuples_hot_updated,
                   o.live_tuples, o.dead_tuples, o.vacuum_count, o.autovacuum_count,
                   o.analyze_count, o.autoanalyze_count, o.blocks_read, o.blocks_hit,
                   o.toast_blocks_read, o.toast_blocks_hit)::text) OVER w AS prev_v,
           lag(o.relfilenode) OVER w AS prev_rfn
    FROM o WINDOW w AS (PARTITION BY o.relid ORDER BY o.ord)
)
SELECT k.snap_id, k.relid, k.nspname, k.relname, k.relkind, false AS gone,
       k.prev_ord IS NOT NULL AND k.prev_rfn <> k.relfilenode AS rewritten,
       CASE WHEN k.relkind <> 'i' THEN k.numscans END AS seq_scan,
       CASE WHEN k.relkind <> 'i' THEN k.tuples_returned END AS seq_tup_read,
       CASE WHEN k.relkind = 'i' THEN k.numscans END AS idx_scan,
       k.tuples_fetched AS idx_tup_fetch,
       CASE WHEN k.relkind <> 'i' THEN k.tuples_inserted END AS n_tup_ins,
       CASE WHEN k.relkind <> 'i' THEN k.tuples_updated END AS n_tup_upd,
       CASE WHEN k.relkind <> 'i' THEN k.tuples_deleted END AS n_tup_del,
       CASE WHEN k.relkind <> 'i' THEN k.tuples_hot_updated END AS n_tup_hot_upd,
       CASE WHEN k.relkind <> 'i' THEN k.live_tuples END AS n_live_tup,
       CASE WHEN k.relkind <> 'i' THEN k.dead_tuples END AS n_dead_tup,
       CASE WHEN k.relkind <> 'i' THEN k.vacuum_count END AS vacuum_count,
       CASE WHEN k.relkind <> 'i' THEN k.autovacuum_count END AS autovacuum_count,
       CASE WHEN k.relkind <> 'i' THEN k.analyze_count END AS analyze_count,
       CASE WHEN k.relkind <> 'i' THEN k.autoanalyze_count END AS autoanalyze_count,
       k.blocks_read AS blks_read, k.blocks_hit AS blks_hit,
       CASE WHEN k.relkind <> 'i' THEN k.toast_blocks_read END AS toast_blks_read,
       CASE WHEN k.relkind <> 'i' THEN k.toast_blocks_hit END AS toast_blks_hit,
       k.size_bytes
FROM keyed k
WHERE k.prev_ord IS NULL OR k.prev_ord <> k.ord - 1
   OR k.prev_v IS DISTINCT FROM row(k.relfilenode, k.numscans, k.tuples_returned, k.tuples_fetched,
                   k.tuples_inserted, k.tuples_updated, k.tuples_deleted, k.tuples_hot_updated,
                   k.live_tuples, k.dead_tuples, k.vacuum_count, k.autovacuum_count,
                   k.analyze_count, k.autoanalyze_count, k.blocks_read, k.blocks_hit,
                   k.toast_blocks_read, k.toast_blocks_hit)::text
UNION ALL
-- gone: seen at one snapshot, not at the next
SELECT n.snap_id, a.relid, a.nspname, a.relname, a.relkind, true, false,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, 0
FROM pg_temp.ref_all a
JOIN pg_temp.ref_snap r ON r.snap_id = a.snap_id
JOIN pg_temp.ref_snap n ON n.ord = r.ord + 1
WHERE NOT EXISTS (SELECT 1 FROM pg_temp.ref_all b WHERE b.snap_id = n.snap_id AND b.relid = a.relid);

-- The reference computation: 1.1.0's first rel_delta_compute, over ref_rel,
-- with resets found step by step.
CREATE FUNCTION pg_temp.ref_delta(p_begin bigint, p_end bigint)
RETURNS TABLE(relid oid, status text,
    seq_scan bigint, seq_tup_read bigint, idx_scan bigint, idx_tup_fetch bigint,
    n_tup_ins bigint, n_tup_upd bigint, n_tup_del bigint, n_tup_hot_upd bigint,
    vacuum_count bigint, autovacuum_count bigint, analyze_count bigint,
    autoanalyze_count bigint, blks_read bigint, blks_hit bigint,
    toast_blks_read bigint, toast_blks_hit bigint,
    n_live_tup bigint, n_dead_tup bigint, size_begin bigint, size_end bigint)
LANGUAGE sql STABLE AS $$
WITH steps AS (
    -- a reset: a counter went down from one stored row to the next
    SELECT x.*, (x.seq_scan < p.seq_scan OR x.seq_tup_read < p.seq_tup_read
                 OR x.idx_scan < p.idx_scan OR x.idx_tup_fetch < p.idx_tup_fetch
                 OR x.n_tup_ins < p.n_tup_ins OR x.n_tup_upd < p.n_tup_upd
                 OR x.n_tup_del < p.n_tup_del OR x.blks_read < p.blks_read
                 OR x.blks_hit < p.blks_hit) AS went_down
    FROM pg_temp.ref_rel x
    LEFT JOIN LATERAL (SELECT y.* FROM pg_temp.ref_rel y
                       WHERE y.relid = x.relid AND y.snap_id < x.snap_id
                       ORDER BY y.snap_id DESC LIMIT 1) p ON true
),
changed AS (
    SELECT x.relid, bool_or(x.gone) AS had_gone, bool_or(x.rewritten) AS rewritten,
           coalesce(bool_or(x.went_down), false) AS had_reset
    FROM steps x
    WHERE x.snap_id > p_begin AND x.snap_id <= p_end
    GROUP BY x.relid
),
v AS (
    SELECT c.relid, c.had_gone, c.rewritten, c.had_reset, b.*, e.*
    FROM changed c
    LEFT JOIN LATERAL (
        SELECT x.gone AS b_gone, x.seq_scan AS b1, x.seq_tup_read AS b2, x.idx_scan AS b3,
               x.idx_tup_fetch AS b4, x.n_tup_ins AS b5, x.n_tup_upd AS b6,
               x.n_tup_del AS b7, x.n_tup_hot_upd AS b8, x.vacuum_count AS b9,
               x.autovacuum_count AS b10, x.analyze_count AS b11,
               x.autoanalyze_count AS b12, x.blks_read AS b13, x.blks_hit AS b14,
               x.toast_blks_read AS b15, x.toast_blks_hit AS b16, x.size_bytes AS b_size
        FROM pg_temp.ref_rel x
        WHERE x.relid = c.relid AND x.snap_id <= p_begin
        ORDER BY x.snap_id DESC LIMIT 1) b ON true
    LEFT JOIN LATERAL (
        SELECT x.seq_scan AS e1, x.seq_tup_read AS e2, x.idx_scan AS e3,
               x.idx_tup_fetch AS e4, x.n_tup_ins AS e5, x.n_tup_upd AS e6,
               x.n_tup_del AS e7, x.n_tup_hot_upd AS e8, x.vacuum_count AS e9,
               x.autovacuum_count AS e10, x.analyze_count AS e11,
               x.autoanalyze_count AS e12, x.blks_read AS e13, x.blks_hit AS e14,
               x.toast_blks_read AS e15, x.toast_blks_hit AS e16,
               x.n_live_tup AS e_live, x.n_dead_tup AS e_dead, x.size_bytes AS e_size
        FROM pg_temp.ref_rel x
        WHERE x.relid = c.relid AND x.snap_id <= p_end AND NOT x.gone
        ORDER BY x.snap_id DESC LIMIT 1) e ON true
),
s AS (
    SELECT v.*,
        CASE
            WHEN v.b_gone IS NULL OR v.b_gone THEN 'created'
            WHEN v.had_reset THEN 'reset'
            WHEN v.had_gone THEN 'dropped'
            WHEN v.rewritten THEN 'rewritten'
            ELSE 'ok'
        END AS st,
        (v.b_gone IS NOT NULL AND NOT v.b_gone) AS has_base
    FROM v
    WHERE v.e5 IS NOT NULL OR v.e1 IS NOT NULL OR v.e3 IS NOT NULL OR v.e13 IS NOT NULL
)
SELECT s.relid, s.st,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e1 - s.b1 ELSE s.e1 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e2 - s.b2 ELSE s.e2 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e3 - s.b3 ELSE s.e3 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e4 - s.b4 ELSE s.e4 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e5 - s.b5 ELSE s.e5 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e6 - s.b6 ELSE s.e6 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e7 - s.b7 ELSE s.e7 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e8 - s.b8 ELSE s.e8 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN greatest(s.e9 - s.b9, 0) ELSE s.e9 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN greatest(s.e10 - s.b10, 0) ELSE s.e10 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN greatest(s.e11 - s.b11, 0) ELSE s.e11 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN greatest(s.e12 - s.b12, 0) ELSE s.e12 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e13 - s.b13 ELSE s.e13 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e14 - s.b14 ELSE s.e14 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN greatest(s.e15 - s.b15, 0) ELSE s.e15 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN greatest(s.e16 - s.b16, 0) ELSE s.e16 END,
    CASE WHEN s.st = 'dropped' THEN 0 ELSE s.e_live END,
    CASE WHEN s.st = 'dropped' THEN 0 ELSE s.e_dead END,
    CASE WHEN s.has_base THEN s.b_size ELSE 0 END,
    CASE WHEN s.st = 'dropped' THEN 0 ELSE s.e_size END
FROM s
$$;

-- The store's facts of a pair, by relid, for the test's schemas.
CREATE FUNCTION pg_temp.store_delta(p_begin bigint, p_end bigint)
RETURNS SETOF record LANGUAGE sql AS $$
SELECT k.relid, d.status, d.seq_scan, d.seq_tup_read, d.idx_scan, d.idx_tup_fetch,
       d.n_tup_ins, d.n_tup_upd, d.n_tup_del, d.n_tup_hot_upd, d.vacuum_count,
       d.autovacuum_count, d.analyze_count, d.autoanalyze_count, d.blks_read,
       d.blks_hit, d.toast_blks_read, d.toast_blks_hit, d.n_live_tup, d.n_dead_tup,
       d.size_begin, d.size_end
FROM folio_perf_data.rel_delta_compute(p_begin, p_end) d
JOIN folio_perf_data.rel_key k ON k.rel_key_id = d.rel_key_id
WHERE k.nspname::text LIKE 'fs08\_%'
$$;
CREATE TYPE pg_temp.fact AS (relid oid, status text,
    seq_scan bigint, seq_tup_read bigint, idx_scan bigint, idx_tup_fetch bigint,
    n_tup_ins bigint, n_tup_upd bigint, n_tup_del bigint, n_tup_hot_upd bigint,
    vacuum_count bigint, autovacuum_count bigint, analyze_count bigint,
    autoanalyze_count bigint, blks_read bigint, blks_hit bigint,
    toast_blks_read bigint, toast_blks_hit bigint,
    n_live_tup bigint, n_dead_tup bigint, size_begin bigint, size_end bigint);
-- Rows of one side that the other does not have, for every pair of the
-- snapshots given (side 'store' or 'ref'), with the relation's name.
CREATE FUNCTION pg_temp.diff(snaps bigint[])
RETURNS TABLE(b int, e int, side text, rel text, status text, facts text)
LANGUAGE sql AS $$
WITH p AS (
    SELECT rb.ord AS bo, re.ord AS eo, rb.snap_id AS bs, re.snap_id AS es
    FROM pg_temp.ref_snap rb JOIN pg_temp.ref_snap re ON re.ord > rb.ord
    WHERE rb.snap_id = ANY (snaps) AND re.snap_id = ANY (snaps)
), st AS (
    SELECT p.bo, p.eo, f.* FROM p,
    LATERAL pg_temp.store_delta(p.bs, p.es) AS f(relid oid, status text,
        seq_scan bigint, seq_tup_read bigint, idx_scan bigint, idx_tup_fetch bigint,
        n_tup_ins bigint, n_tup_upd bigint, n_tup_del bigint, n_tup_hot_upd bigint,
        vacuum_count bigint, autovacuum_count bigint, analyze_count bigint,
        autoanalyze_count bigint, blks_read bigint, blks_hit bigint,
        toast_blks_read bigint, toast_blks_hit bigint,
        n_live_tup bigint, n_dead_tup bigint, size_begin bigint, size_end bigint)
), rf AS (
    SELECT p.bo, p.eo, f.* FROM p, LATERAL pg_temp.ref_delta(p.bs, p.es) f
), d AS (
    (SELECT 'store' AS side, * FROM st EXCEPT ALL SELECT 'store', * FROM rf)
    UNION ALL
    (SELECT 'ref', * FROM rf EXCEPT ALL SELECT 'ref', * FROM st)
)
SELECT d.bo, d.eo, d.side,
       (SELECT DISTINCT a.nspname || '.' || a.relname FROM pg_temp.ref_all a WHERE a.relid = d.relid),
       d.status,
       concat_ws(' ', d.seq_scan, d.seq_tup_read, d.idx_scan, d.idx_tup_fetch, d.n_tup_ins,
                 d.n_tup_upd, d.n_tup_del, d.n_tup_hot_upd, d.vacuum_count, d.autovacuum_count,
                 d.analyze_count, d.autoanalyze_count, d.blks_read, d.blks_hit,
                 d.toast_blks_read, d.toast_blks_hit, d.n_live_tup, d.n_dead_tup,
                 d.size_begin, d.size_end)
FROM d ORDER BY 1, 2, 4, 3
$$;

-- 1. Every pair of the eleven snapshots: the store gives the reference's rows.
SELECT count(*) AS pairs,
       (SELECT count(*) FROM pg_temp.ref_snap a, pg_temp.ref_snap b, LATERAL pg_temp.ref_delta(a.snap_id, b.snap_id) f
        WHERE b.ord > a.ord) AS reference_rows
FROM pg_temp.ref_snap a, pg_temp.ref_snap b WHERE b.ord > a.ord;
SELECT * FROM pg_temp.diff((SELECT array_agg(snap_id) FROM pg_temp.ref_snap));
-- what the pairs cover
SELECT f.status, count(*) AS rows
FROM pg_temp.ref_snap a, pg_temp.ref_snap b, LATERAL pg_temp.ref_delta(a.snap_id, b.snap_id) f
WHERE b.ord > a.ord GROUP BY 1 ORDER BY 1;
SELECT count(*) FILTER (WHERE f.toast_blks_read + f.toast_blks_hit > 0) AS with_toast_reads,
       count(*) FILTER (WHERE f.size_end <> f.size_begin) AS with_growth,
       count(*) FILTER (WHERE f.relid = (SELECT relid FROM pg_temp.ref_all WHERE relname = 'brief' LIMIT 1)) AS brief_rows
FROM pg_temp.ref_snap a, pg_temp.ref_snap b, LATERAL pg_temp.ref_delta(a.snap_id, b.snap_id) f
WHERE b.ord > a.ord;

-- 2. Point reads: a table's size, its indexes' and its tuples at every
-- snapshot, of the table of that name at the end (table_size_at).
CREATE FUNCTION pg_temp.ref_size_at(p_nsp name, p_rel name, p_snap bigint,
    OUT table_bytes bigint, OUT index_bytes bigint, OUT live_tup bigint, OUT dead_tup bigint)
LANGUAGE sql AS $$
SELECT tb.sz, ib.sz::bigint, tb.live, tb.dead
FROM (SELECT 1) one
LEFT JOIN LATERAL (
    SELECT CASE WHEN x.gone THEN 0 ELSE x.size_bytes END AS sz, x.n_live_tup AS live, x.n_dead_tup AS dead
    FROM pg_temp.ref_rel x
    WHERE x.nspname = p_nsp AND x.relname = p_rel AND x.relkind <> 'i' AND x.snap_id <= p_snap
    ORDER BY x.snap_id DESC LIMIT 1) tb ON true
LEFT JOIN LATERAL (
    SELECT sum(z.sz) AS sz
    FROM (SELECT DISTINCT a.relid FROM pg_temp.ref_all a
          JOIN pg_temp.ref_all t ON t.snap_id = a.snap_id AND t.relid = a.table_relid
          WHERE a.nspname = p_nsp AND t.relname = p_rel AND a.relkind = 'i') i
    CROSS JOIN LATERAL (
        SELECT CASE WHEN x.gone THEN 0 ELSE x.size_bytes END AS sz FROM pg_temp.ref_rel x
        WHERE x.relid = i.relid AND x.snap_id <= p_snap
        ORDER BY x.snap_id DESC LIMIT 1) z) ib ON true
$$;
CREATE FUNCTION pg_temp.points(snaps bigint[], OUT points bigint, OUT differ bigint, OUT which text)
LANGUAGE sql AS $$
WITH t AS (
    SELECT DISTINCT a.nspname, a.relname FROM pg_temp.ref_all a WHERE a.relkind = 'r'
), v AS (
    SELECT t.nspname, t.relname, r.ord,
           (folio_perf_data.table_size_at(s.dbid, 0, t.nspname, t.relname,
                                          (SELECT max(snap_id) FROM pg_temp.ref_snap), r.snap_id)).*,
           (pg_temp.ref_size_at(t.nspname, t.relname, r.snap_id)) AS ref
    FROM t CROSS JOIN pg_temp.ref_snap r JOIN folio_perf_data.snapshot s ON s.snap_id = r.snap_id
    WHERE r.snap_id = ANY (snaps)
)
SELECT count(*),
       count(*) FILTER (WHERE row(v.table_bytes, v.index_bytes, v.live_tup, v.dead_tup)::text
                              IS DISTINCT FROM v.ref::text),
       string_agg(v.relname || '@' || v.ord || ': ' || row(v.table_bytes, v.index_bytes, v.live_tup, v.dead_tup)::text
                  || ' vs ' || v.ref::text, '; ' ORDER BY v.relname, v.ord)
           FILTER (WHERE row(v.table_bytes, v.index_bytes, v.live_tup, v.dead_tup)::text
                         IS DISTINCT FROM v.ref::text)
FROM v
$$;
SELECT * FROM pg_temp.points((SELECT array_agg(snap_id) FROM pg_temp.ref_snap));

-- 2b. A value at a snapshot (rel_at) both ways: a few keys find their
-- chunks by the GIN index, more than 256 read every chunk of the database
-- (here the same keys, padded with 300 that exist nowhere and a NULL);
-- each chunk gives its wanted elements in C (rel_chunk_pick).  Both give
-- what unnesting every chunk gives, at every snapshot.
CREATE FUNCTION pg_temp.unnest_at(p_snap bigint, p_keys bigint[]) RETURNS text
LANGUAGE sql AS $$
SELECT string_agg(format('%s:%s:%s:%s:%s', x.k, x.gone, x.live, x.dead, x.sz), ' ' ORDER BY x.k)
FROM (SELECT DISTINCT ON (e.k) e.k, e.f & 2 <> 0 AS gone,
             CASE WHEN e.f & 2 = 0 THEN e.live END AS live,
             CASE WHEN e.f & 2 = 0 THEN e.dead END AS dead,
             CASE WHEN e.f & 2 = 0 THEN e.sz ELSE 0 END AS sz
      FROM folio_perf_data.rel_chunk c,
           unnest(c.keys, c.flags, c.n_live_tup, c.n_dead_tup, c.size_bytes) AS e(k, f, live, dead, sz)
      WHERE c.snap_id <= p_snap AND e.k = ANY (p_keys)
      ORDER BY e.k, c.snap_id DESC) x
$$;
CREATE FUNCTION pg_temp.rel_at_text(p_snap bigint, p_keys bigint[]) RETURNS text
LANGUAGE sql AS $$
SELECT string_agg(format('%s:%s:%s:%s:%s', a.rel_key_id, a.gone, a.n_live_tup, a.n_dead_tup, a.size_bytes),
                  ' ' ORDER BY a.rel_key_id)
FROM folio_perf_data.rel_at(p_snap, p_keys) a
$$;
SELECT count(*) AS snapshots, min(cardinality(k.keys)) > 0 AS with_keys,
       count(*) FILTER (WHERE pg_temp.rel_at_text(r.snap_id, k.keys)
                              IS DISTINCT FROM pg_temp.unnest_at(r.snap_id, k.keys)) AS few_differ,
       count(*) FILTER (WHERE pg_temp.rel_at_text(r.snap_id, k.keys
                                  || ARRAY(SELECT -g FROM generate_series(1, 300) g) || NULL::bigint)
                              IS DISTINCT FROM pg_temp.unnest_at(r.snap_id, k.keys)) AS many_differ
FROM pg_temp.ref_snap r,
     (SELECT ARRAY(SELECT x.rel_key_id FROM folio_perf_data.rel_key x
                   ORDER BY x.rel_key_id LIMIT 200) AS keys) k;
-- a chunk's arrays that are not parallel
SELECT * FROM folio_perf_data.rel_chunk_pick('{1,2}', '{0}', '{1,2}', '{1,2}', '{1,2}', '{1}');

-- 3. The comparison can fail: one changed reference row shows.
BEGIN;
UPDATE pg_temp.ref_rel SET n_tup_upd = n_tup_upd + 1
WHERE relname = 'users' AND snap_id = (SELECT snap_id FROM pg_temp.ref_snap WHERE ord = 2);
SELECT count(*) AS rows_differing_after_tampering, count(DISTINCT (b, e)) AS pairs
FROM pg_temp.diff((SELECT array_agg(snap_id) FROM pg_temp.ref_snap));
ROLLBACK;

-- 4. A purge of the inner snapshots: the facts of every window left, and
-- every pair of snapshots left, are what they were.
SELECT begin_snap AS wa_b, end_snap AS wa_e FROM folio_perf_data.window WHERE window_id = :wa \gset
SELECT folio_perf_purge('0 seconds') AS purged;
SELECT count(*) AS snapshots_left FROM pg_temp.ref_snap r
WHERE EXISTS (SELECT 1 FROM folio_perf_data.snapshot s WHERE s.snap_id = r.snap_id);
SELECT d.rel, d.status, d.side, count(*) AS pairs
FROM pg_temp.diff((SELECT array_agg(r.snap_id) FROM pg_temp.ref_snap r
                   WHERE EXISTS (SELECT 1 FROM folio_perf_data.snapshot s WHERE s.snap_id = r.snap_id))) d
GROUP BY 1, 2, 3 ORDER BY 1, 2, 3;
SELECT count(*) AS pairs_left, count(*) FILTER (WHERE EXISTS (
           SELECT 1 FROM pg_temp.ref_delta(a.snap_id, b.snap_id) f
           WHERE f.relid IN (SELECT relid FROM pg_temp.ref_all WHERE relname IN ('tmp', 'brief')))) AS with_brief_tables
FROM pg_temp.ref_snap a, pg_temp.ref_snap b
WHERE b.ord > a.ord AND a.snap_id IN (SELECT snap_id FROM folio_perf_data.snapshot)
  AND b.snap_id IN (SELECT snap_id FROM folio_perf_data.snapshot);
SELECT * FROM pg_temp.points((SELECT array_agg(snap_id) FROM folio_perf_data.snapshot));
-- the rewrite of holdings at the purged a3, folded into a4's row
SELECT f.status AS holdings_in_window_a
FROM pg_temp.store_delta(:'wa_b', :'wa_e') AS f(relid oid, status text, c1 bigint, c2 bigint, c3 bigint,
    c4 bigint, c5 bigint, c6 bigint, c7 bigint, c8 bigint, c9 bigint, c10 bigint, c11 bigint,
    c12 bigint, c13 bigint, c14 bigint, c15 bigint, c16 bigint, c17 bigint, c18 bigint,
    c19 bigint, c20 bigint)
WHERE f.relid = (SELECT relid FROM pg_temp.ref_all WHERE relname = 'holdings' LIMIT 1);

-- 5. The increments from one element to the next (src/relinc.c): new,
-- gone (0 where the kind has the counter), reset (a scan count went
-- down: counts from zero), a vacuum count that went down alone (no reset:
-- the window clamps it), and a wrong array.
SELECT folio_perf_data.rel_increments(c, p) AS inc, folio_perf_data.rel_reset(c, p) AS reset
FROM (VALUES
    ('{5,50,NULL,7,10,2,1,1,0,0,1,0,30,300,4,40}'::bigint[], NULL::bigint[]),
    (NULL, '{5,50,NULL,7,10,2,1,1,0,0,1,0,30,300,4,40}'),
    ('{1,10,NULL,7,10,2,1,1,0,0,1,0,31,310,4,40}', '{5,50,NULL,7,10,2,1,1,0,0,1,0,30,300,4,40}'),
    ('{6,60,NULL,9,12,2,1,1,0,0,0,0,33,330,0,0}', '{5,50,NULL,7,10,2,1,1,1,0,1,0,30,300,4,40}')) v(c, p);
SELECT folio_perf_data.rel_increments('{1,2,3}', NULL);
SELECT folio_perf_data.rel_reset('{{1,2},{3,4}}', '{1,2}');

DROP SCHEMA fs08_mod_users, fs08_mod_inventory CASCADE;
