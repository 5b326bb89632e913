-- bench/sql/store_layout.sql - the two layouts of the relation store side by
-- side on synthetic data of FOLIO's size (bench/store_layout.sh runs it in a
-- scratch database; nothing of folio_perf is used or changed).
--
--   rows:   today's folio_perf_data.rel (one row per changed relation and
--           snapshot, absolute counters, PRIMARY KEY (rel_key_id, snap_id),
--           BRIN on snap_id) and rel_last (one row per relation, updated in
--           place, fillfactor 45);
--   arrays: one row per snapshot and changed schema, a sorted key array and
--           one array per counter holding the increment since the
--           relation's previous stored value, the gauges (live and dead
--           tuples, size) absolute with the size's increment beside them.
--
-- Scale (psql variables): :schemas schemas of :per relations (1,200 x 88 =
-- 105,600: the relations of the 40-tenant fixture); a worst snapshot
-- changes every relation, a steady one :steady relations in random schemas;
-- :snaps steady snapshots make the 24-hour window.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS layout CASCADE;
CREATE SCHEMA layout;
SET search_path = layout, pg_catalog;

-- the relations: key, schema
CREATE TABLE relkey AS
SELECT g AS key, (g - 1) / :per + 1 AS nsp FROM generate_series(1, :schemas * :per) g;
CREATE INDEX ON relkey (nsp);

-- the capture's work table: what changed, current and previous counters
CREATE UNLOGGED TABLE work (key bigint, nsp int, flags int2,
    c bigint[], prev bigint[], live bigint, dead bigint, size bigint, prev_size bigint);

CREATE TABLE rel (
    snap_id bigint NOT NULL, rel_key_id bigint NOT NULL,
    gone boolean NOT NULL DEFAULT false, rewritten boolean NOT NULL DEFAULT false,
    c1 bigint, c2 bigint, c3 bigint, c4 bigint, c5 bigint, c6 bigint, c7 bigint, c8 bigint,
    live bigint, dead bigint, c9 bigint, c10 bigint, c11 bigint, c12 bigint,
    c13 bigint, c14 bigint, c15 bigint, c16 bigint, size_bytes bigint,
    PRIMARY KEY (rel_key_id, snap_id));
CREATE INDEX ON rel USING brin (snap_id);
CREATE TABLE rel_last (rel_key_id bigint PRIMARY KEY, relfilenode oid, sig bigint, wsig bigint,
    size_bytes bigint, live_tup bigint, dead_tup bigint, last_snap bigint) WITH (fillfactor = 45);

CREATE TABLE inc (
    snap_id bigint NOT NULL, nsp int NOT NULL, keys bigint[] NOT NULL, flags int2[] NOT NULL,
    c1 bigint[], c2 bigint[], c3 bigint[], c4 bigint[], c5 bigint[], c6 bigint[], c7 bigint[],
    c8 bigint[], c9 bigint[], c10 bigint[], c11 bigint[], c12 bigint[], c13 bigint[],
    c14 bigint[], c15 bigint[], c16 bigint[],
    live bigint[], dead bigint[], size bigint[], dsize bigint[],
    PRIMARY KEY (nsp, snap_id));
CREATE INDEX ON inc USING brin (snap_id);
-- the same arrays, one row per snapshot and chunk of up to 1,000 changed
-- relations in key order instead of one per schema
CREATE TABLE inc_chunk (LIKE inc);
ALTER TABLE inc_chunk ADD PRIMARY KEY (snap_id, nsp);

-- the relations' current counters (what the statistics would say)
CREATE UNLOGGED TABLE st (key bigint PRIMARY KEY, c bigint[], size bigint);
INSERT INTO st SELECT k.key, array_fill(0::bigint, ARRAY[16]), 0 FROM relkey k;

-- fill the work table: every relation (worst) or :steady random ones,
-- each counter moved on from its current value
CREATE FUNCTION fill(p_snap bigint, p_n int) RETURNS void LANGUAGE sql AS $$
    TRUNCATE work;
    INSERT INTO work
    SELECT k.key, k.nsp, 0,
           (SELECT array_agg(v + (p_snap + k.key + i) % 13 ORDER BY i) FROM unnest(s.c) WITH ORDINALITY u(v, i)),
           s.c, k.key % 5000, k.key % 300, s.size + 8192 * ((p_snap + k.key) % 3), s.size
    FROM relkey k JOIN st s ON s.key = k.key
    WHERE p_n IS NULL OR k.key IN (SELECT 1 + (abs(hashint8(p_snap * 100003 + g)) % (SELECT max(r.key) FROM relkey r))
                                   FROM generate_series(1, p_n) g);
    UPDATE st SET c = w.c, size = w.size FROM work w WHERE w.key = st.key;
$$;

CREATE FUNCTION store_rel(p_snap bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO rel (snap_id, rel_key_id, c1, c2, c3, c4, c5, c6, c7, c8, live, dead,
                     c9, c10, c11, c12, c13, c14, c15, c16, size_bytes)
    SELECT p_snap, w.key, w.c[1], w.c[2], w.c[3], w.c[4], w.c[5], w.c[6], w.c[7], w.c[8],
           w.live, w.dead, w.c[9], w.c[10], w.c[11], w.c[12], w.c[13], w.c[14], w.c[15],
           w.c[16], w.size
    FROM work w;
$$;
CREATE FUNCTION store_last(p_snap bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO rel_last AS l (rel_key_id, relfilenode, sig, wsig, size_bytes, live_tup, dead_tup, last_snap)
    SELECT w.key, 1, w.c[1] + w.c[2], w.c[5], w.size, w.live, w.dead, p_snap FROM work w
    ON CONFLICT (rel_key_id) DO UPDATE
    SET sig = excluded.sig, wsig = excluded.wsig, size_bytes = excluded.size_bytes,
        live_tup = excluded.live_tup, dead_tup = excluded.dead_tup, last_snap = excluded.last_snap;
$$;

CREATE FUNCTION store_arrays(p_snap bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO inc
    SELECT p_snap, w.nsp, array_agg(w.key ORDER BY w.key), array_agg(w.flags ORDER BY w.key),
           array_agg(w.c[1] - w.prev[1] ORDER BY w.key), array_agg(w.c[2] - w.prev[2] ORDER BY w.key),
           array_agg(w.c[3] - w.prev[3] ORDER BY w.key), array_agg(w.c[4] - w.prev[4] ORDER BY w.key),
           array_agg(w.c[5] - w.prev[5] ORDER BY w.key), array_agg(w.c[6] - w.prev[6] ORDER BY w.key),
           array_agg(w.c[7] - w.prev[7] ORDER BY w.key), array_agg(w.c[8] - w.prev[8] ORDER BY w.key),
           array_agg(w.c[9] - w.prev[9] ORDER BY w.key), array_agg(w.c[10] - w.prev[10] ORDER BY w.key),
           array_agg(w.c[11] - w.prev[11] ORDER BY w.key), array_agg(w.c[12] - w.prev[12] ORDER BY w.key),
           array_agg(w.c[13] - w.prev[13] ORDER BY w.key), array_agg(w.c[14] - w.prev[14] ORDER BY w.key),
           array_agg(w.c[15] - w.prev[15] ORDER BY w.key), array_agg(w.c[16] - w.prev[16] ORDER BY w.key),
           array_agg(w.live ORDER BY w.key), array_agg(w.dead ORDER BY w.key),
           array_agg(w.size ORDER BY w.key), array_agg(w.size - w.prev_size ORDER BY w.key)
    FROM work w GROUP BY w.nsp;
$$;

CREATE FUNCTION store_chunks(p_snap bigint) RETURNS void LANGUAGE sql AS $$
    INSERT INTO inc_chunk
    SELECT p_snap, w.chunk, array_agg(w.key), array_agg(w.flags),
           array_agg(w.c[1] - w.prev[1]), array_agg(w.c[2] - w.prev[2]),
           array_agg(w.c[3] - w.prev[3]), array_agg(w.c[4] - w.prev[4]),
           array_agg(w.c[5] - w.prev[5]), array_agg(w.c[6] - w.prev[6]),
           array_agg(w.c[7] - w.prev[7]), array_agg(w.c[8] - w.prev[8]),
           array_agg(w.c[9] - w.prev[9]), array_agg(w.c[10] - w.prev[10]),
           array_agg(w.c[11] - w.prev[11]), array_agg(w.c[12] - w.prev[12]),
           array_agg(w.c[13] - w.prev[13]), array_agg(w.c[14] - w.prev[14]),
           array_agg(w.c[15] - w.prev[15]), array_agg(w.c[16] - w.prev[16]),
           array_agg(w.live), array_agg(w.dead), array_agg(w.size), array_agg(w.size - w.prev_size)
    FROM (SELECT w.*, (row_number() OVER (ORDER BY w.key) - 1) / 1000 AS chunk
          FROM work w ORDER BY w.key) w
    GROUP BY w.chunk;
$$;

-- a window's facts: rows (the begin/end probes of rel_delta_compute) and
-- arrays (one sum over the window's rows)
CREATE FUNCTION window_rows(p_begin bigint, p_end bigint) RETURNS TABLE(key bigint, c1 bigint, c16 bigint, size_begin bigint, size_end bigint)
LANGUAGE sql STABLE AS $$
    WITH changed AS (SELECT DISTINCT x.rel_key_id FROM rel x WHERE x.snap_id > p_begin AND x.snap_id <= p_end)
    SELECT c.rel_key_id, e.c1 - coalesce(b.c1, 0), e.c16 - coalesce(b.c16, 0), coalesce(b.size_bytes, 0), e.size_bytes
    FROM changed c
    LEFT JOIN LATERAL (SELECT x.* FROM rel x WHERE x.rel_key_id = c.rel_key_id AND x.snap_id <= p_begin
                       ORDER BY x.snap_id DESC LIMIT 1) b ON true
    LEFT JOIN LATERAL (SELECT x.* FROM rel x WHERE x.rel_key_id = c.rel_key_id AND x.snap_id <= p_end
                       ORDER BY x.snap_id DESC LIMIT 1) e ON true
$$;
-- the same sum for either array table (inc: per schema; inc_chunk: chunks)
CREATE FUNCTION window_inc(p_table regclass, p_begin bigint, p_end bigint)
RETURNS TABLE(key bigint, c1 bigint, c16 bigint, size_begin bigint, size_end bigint)
LANGUAGE plpgsql STABLE AS $$
BEGIN
    RETURN QUERY EXECUTE format($q$
        SELECT u.k, sum(u.c1)::bigint, sum(u.c16)::bigint,
               (array_agg(u.sz ORDER BY i.snap_id DESC))[1] - sum(u.dsz)::bigint,
               (array_agg(u.sz ORDER BY i.snap_id DESC))[1]
        FROM %s i, unnest(i.keys, i.c1, i.c16, i.size, i.dsize) AS u(k, c1, c16, sz, dsz)
        WHERE i.snap_id > $1 AND i.snap_id <= $2
        GROUP BY u.k$q$, p_table) USING p_begin, p_end;
END
$$;
CREATE FUNCTION window_arrays(p_begin bigint, p_end bigint) RETURNS TABLE(key bigint, c1 bigint, c16 bigint, size_begin bigint, size_end bigint)
LANGUAGE sql STABLE AS $$ SELECT * FROM window_inc('layout.inc', p_begin, p_end) $$;
CREATE FUNCTION window_chunks(p_begin bigint, p_end bigint) RETURNS TABLE(key bigint, c1 bigint, c16 bigint, size_begin bigint, size_end bigint)
LANGUAGE sql STABLE AS $$ SELECT * FROM window_inc('layout.inc_chunk', p_begin, p_end) $$;

CREATE TABLE timing (what text, ms numeric, bytes bigint);
CREATE FUNCTION timed(p_what text, p_sql text, p_rel text DEFAULT NULL) RETURNS void LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; b0 bigint; b1 bigint;
BEGIN
    IF p_rel IS NOT NULL THEN
        b0 := (SELECT sum(pg_total_relation_size(r)) FROM unnest(string_to_array(p_rel, ',')) r);
    END IF;
    t0 := clock_timestamp();
    EXECUTE p_sql;
    INSERT INTO timing VALUES (p_what, round(extract(epoch FROM clock_timestamp() - t0)::numeric * 1000, 1), NULL);
    IF p_rel IS NOT NULL THEN
        b1 := (SELECT sum(pg_total_relation_size(r)) FROM unnest(string_to_array(p_rel, ',')) r);
        UPDATE timing SET bytes = b1 - b0 WHERE what = p_what;
    END IF;
END
$$;

-- steady snapshots: each filled once and stored in both layouts, each
-- layout's time summed
CREATE FUNCTION steady(p_from bigint, p_to bigint, p_n int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz; t_rel interval := '0'; t_arr interval := '0'; t_chk interval := '0'; b_rel bigint; b_arr bigint; b_chk bigint;
BEGIN
    b_rel := pg_total_relation_size('layout.rel');
    b_arr := pg_total_relation_size('layout.inc');
    b_chk := pg_total_relation_size('layout.inc_chunk');
    FOR s IN p_from .. p_to LOOP
        PERFORM fill(s, p_n);
        t0 := clock_timestamp();
        PERFORM store_rel(s);
        t_rel := t_rel + (clock_timestamp() - t0);
        t0 := clock_timestamp();
        PERFORM store_arrays(s);
        t_arr := t_arr + (clock_timestamp() - t0);
        t0 := clock_timestamp();
        PERFORM store_chunks(s);
        t_chk := t_chk + (clock_timestamp() - t0);
    END LOOP;
    INSERT INTO timing VALUES
        (format('steady x %s: rows (rel)', p_to - p_from + 1), round(extract(epoch FROM t_rel)::numeric * 1000, 1),
         pg_total_relation_size('layout.rel') - b_rel),
        (format('steady x %s: arrays', p_to - p_from + 1), round(extract(epoch FROM t_arr)::numeric * 1000, 1),
         pg_total_relation_size('layout.inc') - b_arr),
        (format('steady x %s: arrays in chunks', p_to - p_from + 1), round(extract(epoch FROM t_chk)::numeric * 1000, 1),
         pg_total_relation_size('layout.inc_chunk') - b_chk);
END
$$;
