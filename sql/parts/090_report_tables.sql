/* sql/parts/090_report_tables.sql - report tables: top statements, table and module activity, window flags, DB summary */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

CREATE FUNCTION folio_perf_top_statements(window_id bigint, n int DEFAULT 20,
    order_by text DEFAULT 'total_time', only_toplevel boolean DEFAULT true,
    include_housekeeping boolean DEFAULT false)
RETURNS TABLE(rank int, queryid bigint, tenant text, module text,
    attributed_by text, role name, toplevel boolean, calls bigint,
    total_exec_ms double precision, mean_exec_ms double precision,
    stddev_exec_ms double precision,
    rows bigint, pct_of_total_time numeric, shared_blks_hit bigint,
    shared_blks_read bigint, temp_blks_written bigint, wal_bytes numeric,
    wal_buffers_full bigint, parallel_workers_to_launch bigint,
    parallel_workers_launched bigint,
    load numeric, status text, query text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
    PERFORM folio_perf_data.check_n(n);
    IF order_by IS NULL OR order_by NOT IN ('total_time', 'calls', 'mean_time', 'rows', 'io', 'wal', 'load') THEN
        RAISE EXCEPTION 'unknown order_by "%"', coalesce(order_by, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use one of total_time, calls, mean_time, rows, io, wal, load.';
    END IF;
    RETURN QUERY
    WITH d AS (
        SELECT k.*, x.status, x.calls, x.total_exec_time, x.rows,
               x.shared_blks_hit, x.shared_blks_read, x.temp_blks_written, x.wal_bytes,
               x.stddev_exec_time, x.wal_buffers_full, x.parallel_workers_to_launch,
               x.parallel_workers_launched
        FROM folio_perf_data.stmt_delta(wb.begin_snap, wb.end_snap) x
        JOIN folio_perf_data.stmt_key k ON k.key_id = x.key_id
        WHERE x.calls > 0
          AND (only_toplevel IS NULL OR k.toplevel = only_toplevel)
          AND (include_housekeeping OR NOT k.housekeeping)
    ), tot AS (
        SELECT sum(d.total_exec_time) AS t FROM d
    ), c AS (
        -- cut before the texts are looked up (stmt_text checks each row's
        -- visibility): the first n by a bounded sort, not all ranked
        SELECT CASE order_by
                   WHEN 'calls' THEN d.calls::double precision
                   WHEN 'mean_time' THEN d.total_exec_time / d.calls
                   WHEN 'rows' THEN d.rows::double precision
                   WHEN 'io' THEN (d.shared_blks_read + d.temp_blks_written)::double precision
                   WHEN 'wal' THEN d.wal_bytes::double precision
                   ELSE d.total_exec_time END AS o,
               d.*
        FROM d
        ORDER BY 1 DESC, d.total_exec_time DESC, d.queryid, d.key_id
        LIMIT n
    ), r AS (
        SELECT (row_number() OVER (ORDER BY c.o DESC, c.total_exec_time DESC, c.queryid, c.key_id))::int AS rnk,
               c.*
        FROM c
    )
    SELECT r.rnk, r.queryid, r.tenant, r.module, r.attributed_by, r.rolname, r.toplevel,
           r.calls, r.total_exec_time, r.total_exec_time / r.calls, r.stddev_exec_time, r.rows,
           CASE WHEN tot.t > 0 THEN round((100 * r.total_exec_time / tot.t)::numeric, 2) END,
           r.shared_blks_hit, r.shared_blks_read, r.temp_blks_written, r.wal_bytes,
           r.wal_buffers_full, r.parallel_workers_to_launch, r.parallel_workers_launched,
           round((r.total_exec_time / 1000 / wb.seconds)::numeric, 3),
           r.status,
           -- looked up for the n rows (a join would hash every text)
           (SELECT t.query FROM folio_perf_data.stmt_text t WHERE t.key_id = r.key_id)
    FROM r CROSS JOIN tot
    ORDER BY 1;
END
$$;

-- Table rows of a window with their indexes folded in.  Growth (table,
-- indexes) comes from the relations that changed: a relation that did not
-- change kept its size.  Absolute sizes and the tuple counts of tables that
-- did not change themselves (only an index did) are looked up by
-- table_size_at() for the rows a report shows, not for all of them (50,000
-- table rows in a 24-hour window of 40 tenants: 1.5 s of lookups).
CREATE FUNCTION folio_perf_data.table_rows_compute(p_begin bigint, p_end bigint)
RETURNS TABLE(rel_key_id bigint, tenant text, module text, schema name,
    relname name, relkind "char", status text, inserts bigint, updates bigint,
    hot_updates bigint, deletes bigint, seq_scan bigint, seq_tup_read bigint,
    idx_scan bigint, idx_tup_fetch bigint, blks_read bigint, blks_hit bigint,
    table_growth bigint, index_growth bigint,
    live_tup bigint, dead_tup bigint, vacuum_count bigint,
    autovacuum_count bigint, analyze_count bigint, autoanalyze_count bigint,
    dbid oid, tgt int)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
WITH d AS (
    SELECT x.*, k.nspname, k.relname, k.relkind, k.table_relname, k.tenant, k.module, k.dbid,
           coalesce(k.target_id, 0) AS tgt
    FROM folio_perf_data.rel_delta(p_begin, p_end) x
    JOIN folio_perf_data.rel_key k ON k.rel_key_id = x.rel_key_id
),
t AS (SELECT * FROM d WHERE d.relkind <> 'i'),
i AS (
    SELECT d.dbid, d.tgt, d.nspname, d.table_relname,
           sum(d.idx_scan) AS idx_scan, sum(d.idx_tup_fetch) AS idx_tup_fetch,
           sum(d.blks_read) AS blks_read, sum(d.blks_hit) AS blks_hit,
           sum(d.size_begin) AS size_begin, sum(d.size_end) AS size_end,
           bool_or(d.status <> 'ok') AS odd,
           min(d.tenant) AS tenant, min(d.module) AS module
    FROM d WHERE d.relkind = 'i'
    GROUP BY 1, 2, 3, 4
),
res AS (
-- tenant and module were parsed from the schema name when the relation was
-- first seen (rel_key), for a table and for its indexes alike
SELECT coalesce(t.rel_key_id, 0) AS rel_key_id, coalesce(t.tenant, i.tenant) AS tenant,
       coalesce(t.module, i.module) AS module,
       coalesce(t.nspname, i.nspname) AS nspname, coalesce(t.relname, i.table_relname) AS relname,
       coalesce(t.relkind, 'r') AS relkind,
       coalesce(t.status, 'ok') AS status,
       coalesce(t.n_tup_ins, 0) AS ins, coalesce(t.n_tup_upd, 0) AS upd, coalesce(t.n_tup_hot_upd, 0) AS hot,
       coalesce(t.n_tup_del, 0) AS del, coalesce(t.seq_scan, 0) AS ss, coalesce(t.seq_tup_read, 0) AS str,
       coalesce(i.idx_scan, 0)::bigint AS isc,
       (coalesce(i.idx_tup_fetch, 0) + coalesce(t.idx_tup_fetch, 0))::bigint AS itf,
       (coalesce(t.blks_read, 0) + coalesce(t.toast_blks_read, 0) + coalesce(i.blks_read, 0))::bigint AS br,
       (coalesce(t.blks_hit, 0) + coalesce(t.toast_blks_hit, 0) + coalesce(i.blks_hit, 0))::bigint AS bh,
       t.n_live_tup AS live, t.n_dead_tup AS dead,
       coalesce(t.vacuum_count, 0) AS vac, coalesce(t.autovacuum_count, 0) AS avac,
       coalesce(t.analyze_count, 0) AS ana, coalesce(t.autoanalyze_count, 0) AS aana,
       coalesce(t.dbid, i.dbid) AS dbid, coalesce(t.tgt, i.tgt) AS tgt,
       (coalesce(t.size_end, 0) - coalesce(t.size_begin, 0))::bigint AS tgrowth,
       (coalesce(i.size_end, 0) - coalesce(i.size_begin, 0))::bigint AS igrowth
FROM t
FULL JOIN i ON i.dbid = t.dbid AND i.tgt = t.tgt AND i.nspname = t.nspname
           AND i.table_relname = t.relname
-- leave out relations whose only change was a gauge (live/dead tuples)
WHERE coalesce(t.status, 'ok') <> 'ok' OR i.odd
   OR coalesce(t.n_tup_ins, 0) + coalesce(t.n_tup_upd, 0) + coalesce(t.n_tup_del, 0)
    + coalesce(t.seq_scan, 0) + coalesce(t.idx_tup_fetch, 0) + coalesce(t.blks_read, 0)
    + coalesce(t.blks_hit, 0) + coalesce(t.toast_blks_read, 0) + coalesce(t.toast_blks_hit, 0)
    + coalesce(t.vacuum_count, 0) + coalesce(t.autovacuum_count, 0)
    + coalesce(t.analyze_count, 0) + coalesce(t.autoanalyze_count, 0)
    + coalesce(i.idx_scan, 0) + coalesce(i.blks_read, 0) + coalesce(i.blks_hit, 0) > 0
   OR t.size_begin IS DISTINCT FROM t.size_end
   OR i.size_begin IS DISTINCT FROM i.size_end
)
SELECT res.rel_key_id, res.tenant, res.module, res.nspname, res.relname, res.relkind,
       res.status, res.ins, res.upd, res.hot, res.del, res.ss, res.str, res.isc, res.itf,
       res.br, res.bh, res.tgrowth, res.igrowth, res.live, res.dead,
       res.vac, res.avac, res.ana, res.aana, res.dbid, res.tgt::int
FROM res
-- in folio_perf_table_activity's default order (activity), so that the
-- rows stored with a window (fact_table_rows.ord) are that ranking and its
-- top rows are read by the index, not sorted from all of them
ORDER BY (res.ins + res.upd + res.del + res.ss + res.isc)::numeric DESC,
         res.nspname, res.relname, res.rel_key_id
$$;


/*
 * A table's size (heap and TOAST), the sum of its indexes' sizes and its
 * tuple counts at snapshot p_snap, of the table of that name that existed
 * at p_key_snap (the end of the window: a table dropped and created again
 * is the newer one).
 */
CREATE FUNCTION folio_perf_data.table_size_at(p_dbid oid, p_tgt int, p_nspname name,
    p_relname name, p_key_snap bigint, p_snap bigint,
    OUT table_bytes bigint, OUT index_bytes bigint, OUT live_tup bigint, OUT dead_tup bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
WITH tk AS (
    SELECT k.rel_key_id FROM folio_perf_data.rel_key k
    WHERE k.dbid = p_dbid AND k.nspname = p_nspname AND k.relname = p_relname
      AND coalesce(k.target_id, 0) = p_tgt
      AND k.relkind <> 'i' AND k.first_snap <= p_key_snap
    ORDER BY k.first_snap DESC LIMIT 1
), ik AS (
    SELECT k.rel_key_id FROM folio_perf_data.rel_key k
    WHERE k.dbid = p_dbid AND k.nspname = p_nspname AND k.table_relname = p_relname
      AND coalesce(k.target_id, 0) = p_tgt AND k.relkind = 'i'
), v AS (
    SELECT a.* FROM folio_perf_data.rel_at(p_snap,
        ARRAY(SELECT tk.rel_key_id FROM tk UNION ALL SELECT ik.rel_key_id FROM ik)) a
)
SELECT (SELECT v.size_bytes FROM v WHERE v.rel_key_id = (SELECT tk.rel_key_id FROM tk)),
       (SELECT sum(v.size_bytes)::bigint FROM v WHERE v.rel_key_id IN (SELECT ik.rel_key_id FROM ik)),
       (SELECT v.n_live_tup FROM v WHERE v.rel_key_id = (SELECT tk.rel_key_id FROM tk)),
       (SELECT v.n_dead_tup FROM v WHERE v.rel_key_id = (SELECT tk.rel_key_id FROM tk))
$$;

-- table_rows(p_begin, p_end): table_rows_compute(), once per transaction
-- and user for a pair of snapshots (see stmt_delta).
CREATE FUNCTION folio_perf_data.table_rows(p_begin bigint, p_end bigint)
RETURNS TABLE(rel_key_id bigint, tenant text, module text, schema name,
    relname name, relkind "char", status text, inserts bigint, updates bigint,
    hot_updates bigint, deletes bigint, seq_scan bigint, seq_tup_read bigint,
    idx_scan bigint, idx_tup_fetch bigint, blks_read bigint, blks_hit bigint,
    table_growth bigint, index_growth bigint,
    live_tup bigint, dead_tup bigint, vacuum_count bigint,
    autovacuum_count bigint, analyze_count bigint, autoanalyze_count bigint,
    dbid oid, tgt int)
LANGUAGE plpgsql VOLATILE ROWS 10000
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF p_begin IS NOT NULL AND p_end IS NOT NULL THEN
        RETURN QUERY EXECUTE folio_perf_data.window_cache('table_rows', p_begin, p_end)
            USING p_begin, p_end;
    END IF;
END
$fn$;

/*
 * module_rels_compute(p_begin, p_end): the relations' differences summed
 * per tenant and module (folio_perf_module_activity): a module's total does
 * not need each index matched to its table, so this is not table_rows()
 * summed; fl: the tables' statuses other than ok, as there.
 * table_sums_compute(p_begin, p_end): the tables' (and partitioned
 * tables') differences per tenant, module and name: rows written
 * (operations), sequential scans and the most rows at the end (check).
 * window_cache keeps both, window_facts stores them with the window.
 */
CREATE FUNCTION folio_perf_data.module_rels_compute(p_begin bigint, p_end bigint)
RETURNS TABLE(tenant text, module text, ins numeric, upd numeric, hot numeric, del numeric,
    ss numeric, str numeric, isc numeric, itf numeric, br numeric, bh numeric,
    vac numeric, ana numeric, fl text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT k.tenant, k.module,
       sum(coalesce(x.n_tup_ins, 0)) FILTER (WHERE k.relkind <> 'i'),
       sum(coalesce(x.n_tup_upd, 0)) FILTER (WHERE k.relkind <> 'i'),
       sum(coalesce(x.n_tup_hot_upd, 0)) FILTER (WHERE k.relkind <> 'i'),
       sum(coalesce(x.n_tup_del, 0)) FILTER (WHERE k.relkind <> 'i'),
       sum(coalesce(x.seq_scan, 0)) FILTER (WHERE k.relkind <> 'i'),
       sum(coalesce(x.seq_tup_read, 0)) FILTER (WHERE k.relkind <> 'i'),
       sum(coalesce(x.idx_scan, 0)) FILTER (WHERE k.relkind = 'i'),
       sum(coalesce(x.idx_tup_fetch, 0)),
       sum(coalesce(x.blks_read, 0) + CASE WHEN k.relkind <> 'i' THEN coalesce(x.toast_blks_read, 0) ELSE 0 END),
       sum(coalesce(x.blks_hit, 0) + CASE WHEN k.relkind <> 'i' THEN coalesce(x.toast_blks_hit, 0) ELSE 0 END),
       sum(coalesce(x.vacuum_count, 0) + coalesce(x.autovacuum_count, 0)) FILTER (WHERE k.relkind <> 'i'),
       sum(coalesce(x.analyze_count, 0) + coalesce(x.autoanalyze_count, 0)) FILTER (WHERE k.relkind <> 'i'),
       string_agg(DISTINCT x.status, ',') FILTER (WHERE k.relkind <> 'i' AND x.status <> 'ok')
FROM folio_perf_data.rel_delta(p_begin, p_end) x
JOIN folio_perf_data.rel_key k ON k.rel_key_id = x.rel_key_id
WHERE k.module IS NOT NULL
GROUP BY 1, 2
$$;

CREATE FUNCTION folio_perf_data.module_rels(p_begin bigint, p_end bigint)
RETURNS TABLE(tenant text, module text, ins numeric, upd numeric, hot numeric, del numeric,
    ss numeric, str numeric, isc numeric, itf numeric, br numeric, bh numeric,
    vac numeric, ana numeric, fl text)
LANGUAGE plpgsql VOLATILE ROWS 1000
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF p_begin IS NOT NULL AND p_end IS NOT NULL THEN
        RETURN QUERY EXECUTE folio_perf_data.window_cache('module_rels', p_begin, p_end)
            USING p_begin, p_end;
    END IF;
END
$fn$;

CREATE FUNCTION folio_perf_data.table_sums_compute(p_begin bigint, p_end bigint)
RETURNS TABLE(tenant text, module text, relname text, ins numeric, upd numeric, del numeric,
    seq numeric, live bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT k.tenant, k.module, k.relname::text,
       sum(coalesce(x.n_tup_ins, 0)), sum(coalesce(x.n_tup_upd, 0)), sum(coalesce(x.n_tup_del, 0)),
       sum(coalesce(x.seq_scan, 0)), max(coalesce(x.n_live_tup, 0))
FROM folio_perf_data.rel_delta(p_begin, p_end) x
JOIN folio_perf_data.rel_key k ON k.rel_key_id = x.rel_key_id
WHERE k.relkind IN ('r', 'p')
GROUP BY 1, 2, 3
$$;

CREATE FUNCTION folio_perf_data.table_sums(p_begin bigint, p_end bigint)
RETURNS TABLE(tenant text, module text, relname text, ins numeric, upd numeric, del numeric,
    seq numeric, live bigint)
LANGUAGE plpgsql VOLATILE ROWS 10000
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF p_begin IS NOT NULL AND p_end IS NOT NULL THEN
        RETURN QUERY EXECUTE folio_perf_data.window_cache('table_sums', p_begin, p_end)
            USING p_begin, p_end;
    END IF;
END
$fn$;

CREATE FUNCTION folio_perf_table_activity(window_id bigint, n int DEFAULT 20,
    order_by text DEFAULT 'activity')
RETURNS TABLE(rank int, tenant text, module text, schema name, relname name,
    inserts bigint, updates bigint, hot_updates bigint, deletes bigint,
    seq_scan bigint, seq_tup_read bigint, idx_scan bigint, idx_tup_fetch bigint,
    blks_read bigint, blks_hit bigint, size_begin bigint, size_end bigint,
    growth bigint, index_size_end bigint, live_tup bigint, dead_tup bigint,
    vacuum_count bigint, autovacuum_count bigint, analyze_count bigint,
    autoanalyze_count bigint, status text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
    stored boolean;
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
    PERFORM folio_perf_data.check_n(n);
    IF order_by IS NULL OR order_by NOT IN ('activity', 'writes', 'reads', 'io', 'growth', 'seq_scan') THEN
        RAISE EXCEPTION 'unknown order_by "%"', coalesce(order_by, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use one of activity, writes, reads, io, growth, seq_scan.';
    END IF;
    stored := order_by = 'activity'
              AND folio_perf_data.window_facts('table_rows', wb.begin_snap, wb.end_snap);
    RETURN QUERY
    WITH top AS (
        -- the default order of a window's stored rows: their order (see
        -- table_rows_compute), the first n read by the index
        (SELECT f.ord::int AS rk, f.rel_key_id, f.tenant, f.module, f.schema, f.relname,
                f.relkind, f.status, f.inserts, f.updates, f.hot_updates, f.deletes,
                f.seq_scan, f.seq_tup_read, f.idx_scan, f.idx_tup_fetch, f.blks_read,
                f.blks_hit, f.table_growth, f.index_growth, f.live_tup, f.dead_tup,
                f.vacuum_count, f.autovacuum_count, f.analyze_count, f.autoanalyze_count,
                f.dbid, f.tgt
         FROM folio_perf_data.fact_table_rows f
         WHERE stored AND f.begin_snap = wb.begin_snap AND f.end_snap = wb.end_snap
         ORDER BY f.ord
         LIMIT n)
        UNION ALL
        -- otherwise the first n of all rows (a bounded sort), then ranked
        SELECT (row_number() OVER (ORDER BY s.k DESC, s.schema, s.relname, s.rel_key_id))::int,
               s.rel_key_id, s.tenant, s.module, s.schema, s.relname, s.relkind, s.status,
               s.inserts, s.updates, s.hot_updates, s.deletes, s.seq_scan, s.seq_tup_read,
               s.idx_scan, s.idx_tup_fetch, s.blks_read, s.blks_hit, s.table_growth,
               s.index_growth, s.live_tup, s.dead_tup, s.vacuum_count, s.autovacuum_count,
               s.analyze_count, s.autoanalyze_count, s.dbid, s.tgt
        FROM (
            SELECT CASE order_by
                       WHEN 'writes' THEN (r.inserts + r.updates + r.deletes)::numeric
                       WHEN 'reads' THEN (r.seq_tup_read + r.idx_tup_fetch)::numeric
                       WHEN 'io' THEN r.blks_read::numeric
                       WHEN 'growth' THEN (r.table_growth + r.index_growth)::numeric
                       WHEN 'seq_scan' THEN r.seq_scan::numeric
                       ELSE (r.inserts + r.updates + r.deletes + r.seq_scan + r.idx_scan)::numeric
                   END AS k, r.*
            FROM folio_perf_data.table_rows(wb.begin_snap, wb.end_snap) r
            WHERE NOT stored
            ORDER BY 1 DESC, r.schema, r.relname, r.rel_key_id
            LIMIT n) s
    -- sizes at both ends, for the rows shown: of the table of that name
    -- that existed at the end (table_size_at's rule), and its indexes, from
    -- one read of the store per end
    ), tk AS (
        SELECT top.rk, k.rel_key_id, k.relkind = 'i' AS is_index
        FROM top
        CROSS JOIN LATERAL (
            (SELECT k.rel_key_id, k.relkind FROM folio_perf_data.rel_key k
             WHERE k.dbid = top.dbid AND coalesce(k.target_id, 0) = top.tgt
               AND k.nspname = top.schema AND k.relname = top.relname
               AND k.relkind <> 'i' AND k.first_snap <= wb.end_snap
             ORDER BY k.first_snap DESC LIMIT 1)
            UNION ALL
            SELECT k.rel_key_id, k.relkind FROM folio_perf_data.rel_key k
            WHERE k.dbid = top.dbid AND coalesce(k.target_id, 0) = top.tgt
              AND k.nspname = top.schema AND k.table_relname = top.relname AND k.relkind = 'i') k
    ), ab AS (
        SELECT * FROM folio_perf_data.rel_at(wb.begin_snap, ARRAY(SELECT tk.rel_key_id FROM tk))
    ), ae AS (
        SELECT * FROM folio_perf_data.rel_at(wb.end_snap, ARRAY(SELECT tk.rel_key_id FROM tk))
    ), sz AS (
        SELECT tk.rk,
               max(ab.size_bytes) FILTER (WHERE NOT tk.is_index) AS tb_begin,
               max(ae.size_bytes) FILTER (WHERE NOT tk.is_index) AS tb_end,
               sum(ae.size_bytes) FILTER (WHERE tk.is_index)::bigint AS ib_end,
               max(ae.n_live_tup) FILTER (WHERE NOT tk.is_index) AS live_end,
               max(ae.n_dead_tup) FILTER (WHERE NOT tk.is_index) AS dead_end
        FROM tk
        LEFT JOIN ab ON ab.rel_key_id = tk.rel_key_id
        LEFT JOIN ae ON ae.rel_key_id = tk.rel_key_id
        GROUP BY tk.rk
    )
    SELECT top.rk, top.tenant, top.module, top.schema, top.relname, top.inserts, top.updates,
           top.hot_updates, top.deletes, top.seq_scan, top.seq_tup_read, top.idx_scan,
           top.idx_tup_fetch, top.blks_read, top.blks_hit,
           sz.tb_begin, sz.tb_end,
           coalesce(sz.tb_end, 0) - coalesce(sz.tb_begin, 0),
           sz.ib_end, coalesce(top.live_tup, sz.live_end), coalesce(top.dead_tup, sz.dead_end),
           top.vacuum_count, top.autovacuum_count, top.analyze_count, top.autoanalyze_count, top.status
    FROM top
    LEFT JOIN sz ON sz.rk = top.rk
    ORDER BY 1;
END
$$;

-- Size of each schema at a snapshot (newest roll-up at or before it).  The
-- schemas are walked along schema_stat's primary key (a loose index scan:
-- one probe per schema) and each takes its newest row by the same index,
-- instead of sorting every roll-up row ever written (a 24-hour window of
-- 40 tenants: 63 ms -> a few ms).
CREATE FUNCTION folio_perf_data.schema_sizes(p_snap bigint)
RETURNS TABLE(nspname name, tenant text, module text, bytes bigint,
              live_tup bigint, dead_tup bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_db oid;
    v_tgt int;
BEGIN
    SELECT s.dbid, coalesce(s.target_id, 0) INTO v_db, v_tgt
    FROM folio_perf_data.snapshot s WHERE s.snap_id = p_snap;
    IF v_db IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH RECURSIVE n AS (
        -- ORDER BY ... LIMIT 1, not min(): there is no min(name), and
        -- min(text) cannot walk the index
        SELECT (SELECT s.nspname FROM folio_perf_data.schema_stat s
                WHERE s.dbid = v_db ORDER BY s.dbid, s.nspname LIMIT 1) AS nsp
        UNION ALL
        SELECT (SELECT s.nspname FROM folio_perf_data.schema_stat s
                WHERE s.dbid = v_db AND s.nspname > n.nsp
                ORDER BY s.dbid, s.nspname LIMIT 1)
        FROM n WHERE n.nsp IS NOT NULL
    )
    SELECT l.nspname, l.tenant, l.module, l.table_bytes + l.index_bytes, l.live_tup, l.dead_tup
    FROM n
    CROSS JOIN LATERAL (
        SELECT s.nspname, s.tenant, s.module, s.table_bytes, s.index_bytes, s.live_tup, s.dead_tup
        FROM folio_perf_data.schema_stat s
        WHERE s.dbid = v_db AND s.nspname = n.nsp AND s.snap_id <= p_snap
          AND coalesce(s.target_id, 0) = v_tgt
        ORDER BY s.snap_id DESC LIMIT 1) l
    WHERE n.nsp IS NOT NULL;
END
$$;
CREATE FUNCTION folio_perf_module_activity(window_id bigint)
RETURNS TABLE(tenant text, module text, inserts bigint, updates bigint,
    hot_updates bigint, deletes bigint, seq_scan bigint, seq_tup_read bigint,
    idx_scan bigint, idx_tup_fetch bigint, blks_read bigint, blks_hit bigint,
    size_begin bigint, size_end bigint, growth bigint, live_tup bigint,
    dead_tup bigint, vacuum_count bigint, analyze_count bigint,
    statement_calls bigint, statement_time_ms double precision,
    connections_avg numeric, connections_max int, flags text,
    connections_note text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
    sw record;
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
    -- connections held, from the sampler's (tenant, module) series
    SELECT * INTO sw FROM folio_perf_data.sample_window(window_id);
    RETURN QUERY
    -- the relations' sums per module (module_rels_compute)
    WITH r AS (
        SELECT * FROM folio_perf_data.module_rels(wb.begin_snap, wb.end_snap)
    ), st AS (
        SELECT k.tenant, k.module, sum(x.calls) AS calls, sum(x.total_exec_time) AS ms
        FROM folio_perf_data.stmt_delta(wb.begin_snap, wb.end_snap) x
        JOIN folio_perf_data.stmt_key k ON k.key_id = x.key_id
        WHERE k.toplevel AND NOT k.housekeeping AND k.module IS NOT NULL AND x.calls > 0
        GROUP BY 1, 2
    ), sb AS (
        SELECT z.tenant, z.module, sum(z.bytes) AS bytes
        FROM folio_perf_data.schema_sizes(wb.begin_snap) z GROUP BY 1, 2
    ), se AS (
        SELECT z.tenant, z.module, sum(z.bytes) AS bytes, sum(z.live_tup) AS live,
               sum(z.dead_tup) AS dead
        FROM folio_perf_data.schema_sizes(wb.end_snap) z GROUP BY 1, 2
    ), cn AS (
        SELECT ss.tenant, ss.module, c.avg, c.max
        FROM folio_perf_data.sample_stats('connections', sw.t0, sw.t1, sw.n_ticks, sw.target_id) c
        JOIN folio_perf_data.sample_series ss ON ss.series_id = c.series_id
        WHERE sw.n_ticks > 0 AND ss.dimension = 'tenant_module' AND ss.module IS NOT NULL
    ), keys AS (
        SELECT r.tenant, r.module FROM r UNION SELECT st.tenant, st.module FROM st
        UNION SELECT cn.tenant, cn.module FROM cn
    )
    SELECT keys.tenant, keys.module,
           coalesce(r.ins, 0)::bigint, coalesce(r.upd, 0)::bigint, coalesce(r.hot, 0)::bigint,
           coalesce(r.del, 0)::bigint, coalesce(r.ss, 0)::bigint, coalesce(r.str, 0)::bigint,
           coalesce(r.isc, 0)::bigint, coalesce(r.itf, 0)::bigint, coalesce(r.br, 0)::bigint,
           coalesce(r.bh, 0)::bigint,
           sb.bytes::bigint, se.bytes::bigint, (se.bytes - coalesce(sb.bytes, 0))::bigint,
           se.live::bigint, se.dead::bigint, coalesce(r.vac, 0)::bigint, coalesce(r.ana, 0)::bigint,
           coalesce(st.calls, 0)::bigint, coalesce(st.ms, 0),
           -- no samples: NULL, and the flags say why
           CASE WHEN sw.n_ticks > 0 THEN round(coalesce(cn.avg, 0), 2) END,
           CASE WHEN sw.n_ticks > 0 THEN coalesce(cn.max, 0) END,
           r.fl,
           CASE WHEN sw.n_ticks = 0 OR sw.n_gaps > 0 THEN sw.note END
    -- (tenant IS NOT DISTINCT FROM written as two equalities, which hash:
    -- as it was, each join was a nested loop over every module, 1,200 x
    -- 1,200 five times at 40 tenants)
    FROM keys
    LEFT JOIN r ON (r.tenant IS NULL) = (keys.tenant IS NULL)
               AND coalesce(r.tenant, '') = coalesce(keys.tenant, '') AND r.module = keys.module
    LEFT JOIN st ON (st.tenant IS NULL) = (keys.tenant IS NULL)
                AND coalesce(st.tenant, '') = coalesce(keys.tenant, '') AND st.module = keys.module
    LEFT JOIN sb ON (sb.tenant IS NULL) = (keys.tenant IS NULL)
                AND coalesce(sb.tenant, '') = coalesce(keys.tenant, '') AND sb.module = keys.module
    LEFT JOIN se ON (se.tenant IS NULL) = (keys.tenant IS NULL)
                AND coalesce(se.tenant, '') = coalesce(keys.tenant, '') AND se.module = keys.module
    LEFT JOIN cn ON (cn.tenant IS NULL) = (keys.tenant IS NULL)
                AND coalesce(cn.tenant, '') = coalesce(keys.tenant, '') AND cn.module = keys.module
    ORDER BY coalesce(st.ms, 0) DESC, coalesce(r.ins, 0) + coalesce(r.upd, 0) + coalesce(r.del, 0) DESC,
             keys.tenant COLLATE "C", keys.module COLLATE "C";
END
$$;

/*
 * What makes a window's numbers unreliable, one row per finding.
 */
CREATE FUNCTION folio_perf_window_flags(window_id bigint)
RETURNS TABLE(flag text, detail text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
    b folio_perf_data.snapshot;
    e folio_perf_data.snapshot;
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
    SELECT * INTO b FROM folio_perf_data.snapshot s WHERE s.snap_id = wb.begin_snap;
    SELECT * INTO e FROM folio_perf_data.snapshot s WHERE s.snap_id = wb.end_snap;
    IF b.server_start IS DISTINCT FROM e.server_start THEN
        RETURN QUERY SELECT 'server_restart', format('the server restarted at %s', e.server_start);
    END IF;
    IF b.pgss_stats_reset IS DISTINCT FROM e.pgss_stats_reset THEN
        RETURN QUERY SELECT 'pgss_reset', format('pg_stat_statements was reset at %s; statement figures count from then', e.pgss_stats_reset);
    END IF;
    IF e.pgss_dealloc > b.pgss_dealloc THEN
        RETURN QUERY SELECT 'pgss_evictions', format('%s pg_stat_statements entries were evicted (pg_stat_statements.max = %s); statements marked evicted or reentered are lower bounds',
                                                     e.pgss_dealloc - b.pgss_dealloc, e.pgss_max);
    END IF;
    IF b.db_stats_reset IS DISTINCT FROM e.db_stats_reset THEN
        RETURN QUERY SELECT 'stats_reset', format('database statistics were reset at %s', e.db_stats_reset);
    END IF;
    IF b.bgwriter_stats_reset IS DISTINCT FROM e.bgwriter_stats_reset THEN
        RETURN QUERY SELECT 'bgwriter_reset', 'checkpointer/bgwriter statistics were reset';
    END IF;
    IF b.wal_stats_reset IS DISTINCT FROM e.wal_stats_reset THEN
        RETURN QUERY SELECT 'wal_reset', 'WAL statistics were reset';
    END IF;
    -- gaps in the sampler's ticks (folio_perf_data.sample_window)
    RETURN QUERY
        SELECT 'sampler_gap', format('the sampler''s samples cover %s%% of the window (%s of ~%s samples): no samples for %s; connections, DB load and CPU figures are of the sampled part',
                                     sw.coverage_pct, sw.n_ticks, sw.expected_ticks, sw.gaps)
        FROM folio_perf_data.sample_window(window_id) sw
        WHERE sw.n_gaps > 0;
    -- kept items a snapshot of the window could not store (capture())
    RETURN QUERY
    SELECT 'items_skipped',
           format('%s items could not be stored and are missing from the window: %s',
                  count(*), string_agg(format('%s %s (%s: %s)', i->>'kind', i->>'item',
                                              i->>'sqlstate', i->>'error'), '; ' ORDER BY s.snap_id, o))
    FROM folio_perf_data.snapshot s
    CROSS JOIN LATERAL pg_catalog.jsonb_array_elements(s.skipped) WITH ORDINALITY AS x(i, o)
    WHERE s.snap_id > wb.begin_snap AND s.snap_id <= wb.end_snap
      AND s.dbid = e.dbid AND s.target_id IS NOT DISTINCT FROM e.target_id
    HAVING count(*) > 0;
    RETURN QUERY
    SELECT 'statements_' || x.status, format('%s statements', count(*))
    FROM folio_perf_data.stmt_delta(wb.begin_snap, wb.end_snap) x
    WHERE x.status NOT IN ('ok', 'new')
    GROUP BY x.status;
    RETURN QUERY
    SELECT 'relations_' || x.status, format('%s relations', count(*))
    FROM folio_perf_data.rel_statuses(wb.begin_snap, wb.end_snap) x
    WHERE x.status <> 'ok'
    GROUP BY x.status;
END
$$;

-- A counter's difference; after a reset (end below begin) the count since
-- the reset, which is a lower bound (flagged by folio_perf_window_flags).
CREATE FUNCTION folio_perf_data.cdiff(e numeric, b numeric)
RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT CASE WHEN e >= b THEN e - b ELSE e END $$;
CREATE FUNCTION folio_perf_data.cdiff(e bigint, b bigint)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT CASE WHEN e >= b THEN e - b ELSE e END $$;

CREATE FUNCTION folio_perf_db_summary(window_id bigint)
RETURNS TABLE(label text, begin_at timestamptz, end_at timestamptz,
    duration interval, commits bigint, commits_per_s numeric, rollbacks bigint,
    cache_hit_ratio numeric, blks_read bigint, blks_hit bigint,
    tup_inserted bigint, tup_updated bigint, tup_deleted bigint,
    tup_returned bigint, tup_fetched bigint,
    temp_files bigint, temp_bytes bigint, deadlocks bigint, conflicts bigint,
    wal_records bigint, wal_bytes numeric, wal_bytes_per_s numeric,
    checkpoints_timed bigint, checkpoints_req bigint,
    buffers_checkpoint bigint, buffers_clean bigint, buffers_backend bigint,
    db_size_begin bigint, db_size_end bigint, max_connections int,
    statements_total_ms double precision, flags text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
    b folio_perf_data.snapshot;
    e folio_perf_data.snapshot;
    w folio_perf_data.window;
    fl text;
BEGIN
    wb := folio_perf_data.window_bounds(folio_perf_db_summary.window_id);
    SELECT * INTO b FROM folio_perf_data.snapshot s WHERE s.snap_id = wb.begin_snap;
    SELECT * INTO e FROM folio_perf_data.snapshot s WHERE s.snap_id = wb.end_snap;
    SELECT * INTO w FROM folio_perf_data.window x WHERE x.window_id = folio_perf_db_summary.window_id;
    SELECT string_agg(f.flag, ',' ORDER BY f.flag) INTO fl
    FROM @extschema@.folio_perf_window_flags(folio_perf_db_summary.window_id) f;
    RETURN QUERY SELECT
        w.label, b.taken_at, e.taken_at, e.taken_at - b.taken_at,
        folio_perf_data.cdiff(e.xact_commit, b.xact_commit),
        round((folio_perf_data.cdiff(e.xact_commit, b.xact_commit) / wb.seconds)::numeric, 2),
        folio_perf_data.cdiff(e.xact_rollback, b.xact_rollback),
        CASE WHEN folio_perf_data.cdiff(e.blks_hit, b.blks_hit) + folio_perf_data.cdiff(e.blks_read, b.blks_read) > 0
             THEN round(100.0 * folio_perf_data.cdiff(e.blks_hit, b.blks_hit)
                        / (folio_perf_data.cdiff(e.blks_hit, b.blks_hit) + folio_perf_data.cdiff(e.blks_read, b.blks_read)), 2) END,
        folio_perf_data.cdiff(e.blks_read, b.blks_read), folio_perf_data.cdiff(e.blks_hit, b.blks_hit),
        folio_perf_data.cdiff(e.tup_inserted, b.tup_inserted), folio_perf_data.cdiff(e.tup_updated, b.tup_updated),
        folio_perf_data.cdiff(e.tup_deleted, b.tup_deleted), folio_perf_data.cdiff(e.tup_returned, b.tup_returned),
        folio_perf_data.cdiff(e.tup_fetched, b.tup_fetched),
        folio_perf_data.cdiff(e.temp_files, b.temp_files), folio_perf_data.cdiff(e.temp_bytes, b.temp_bytes),
        folio_perf_data.cdiff(e.deadlocks, b.deadlocks), folio_perf_data.cdiff(e.conflicts, b.conflicts),
        folio_perf_data.cdiff(e.wal_records, b.wal_records), folio_perf_data.cdiff(e.wal_bytes, b.wal_bytes),
        round((folio_perf_data.cdiff(e.wal_bytes, b.wal_bytes) / wb.seconds::numeric), 0),
        folio_perf_data.cdiff(e.checkpoints_timed, b.checkpoints_timed), folio_perf_data.cdiff(e.checkpoints_req, b.checkpoints_req),
        folio_perf_data.cdiff(e.buffers_checkpoint, b.buffers_checkpoint), folio_perf_data.cdiff(e.buffers_clean, b.buffers_clean),
        folio_perf_data.cdiff(e.buffers_backend, b.buffers_backend),
        b.db_size_bytes, e.db_size_bytes, e.max_connections,
        -- no statement in the window: 0 ms, exactly
        (SELECT coalesce(sum(x.total_exec_time), 0)
         FROM folio_perf_data.stmt_delta(wb.begin_snap, wb.end_snap) x
         JOIN folio_perf_data.stmt_key k ON k.key_id = x.key_id
         WHERE k.toplevel AND NOT k.housekeeping),
        fl;
END
$$;
