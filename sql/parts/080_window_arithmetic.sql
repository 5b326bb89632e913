/* sql/parts/080_window_arithmetic.sql - window arithmetic: window bounds, statement and relation differences, text visibility */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

-- The two snapshots of a window, after checking it can be reported on.
CREATE FUNCTION folio_perf_data.window_bounds(p_window bigint,
    OUT begin_snap bigint, OUT end_snap bigint,
    OUT begin_at timestamptz, OUT end_at timestamptz, OUT seconds double precision)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w folio_perf_data.window;
BEGIN
    IF p_window IS NULL THEN
        RAISE EXCEPTION 'window id must not be null'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass a window id returned by folio_perf_end() or folio_perf_window(); see folio_perf_windows.';
    END IF;
    SELECT * INTO w FROM folio_perf_data.window x WHERE x.window_id = p_window;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'window % does not exist', p_window
            USING ERRCODE = 'undefined_object',
                  HINT = 'See folio_perf_windows for the windows that exist; folio_perf_window(from_snap, to_snap) makes one from two snapshots.';
    END IF;
    IF w.end_snap IS NULL THEN
        RAISE EXCEPTION 'window % has not ended', p_window
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = format('Call folio_perf_end(%s) first.', p_window);
    END IF;
    PERFORM folio_perf_data.check_snapshot(w.begin_snap, 'begin snapshot');
    begin_snap := w.begin_snap;
    end_snap := w.end_snap;
    SELECT s.taken_at INTO begin_at FROM folio_perf_data.snapshot s WHERE s.snap_id = w.begin_snap;
    SELECT s.taken_at INTO end_at FROM folio_perf_data.snapshot s WHERE s.snap_id = w.end_snap;
    seconds := greatest(extract(epoch FROM end_at - begin_at)::double precision, 0.001);
END
$$;

/*
 * The snapshots after p_begin up to p_end of the same database and target
 * as p_end: snapshots of other targets taken meanwhile are not part of a
 * window.
 */
CREATE FUNCTION folio_perf_data.snaps_between(p_begin bigint, p_end bigint)
RETURNS SETOF bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT s.snap_id
    FROM folio_perf_data.snapshot s, folio_perf_data.snapshot e
    WHERE e.snap_id = p_end AND s.snap_id > p_begin AND s.snap_id <= p_end
      AND s.dbid = e.dbid AND s.target_id IS NOT DISTINCT FROM e.target_id
$$;

/*
 * Per-statement differences across two snapshots.  status:
 *   ok          end minus begin, exact
 *   new         first seen inside the window: counts from zero, exact
 *   reentered   left pg_stat_statements and came back inside the window:
 *               counts since it came back (a lower bound)
 *   evicted     gone by the end: counts until it was last seen (lower bound)
 *   reset       counters went down (pg_stat_statements_reset, crash):
 *               counts since the reset (a lower bound)
 */
CREATE FUNCTION folio_perf_data.stmt_delta_compute(p_begin bigint, p_end bigint)
RETURNS TABLE(key_id bigint, status text, calls bigint,
    total_exec_time double precision, total_plan_time double precision,
    rows bigint, shared_blks_hit bigint, shared_blks_read bigint,
    shared_blks_dirtied bigint, shared_blks_written bigint,
    temp_blks_read bigint, temp_blks_written bigint,
    blk_read_time double precision, blk_write_time double precision,
    wal_bytes numeric, first_calls_mean double precision,
    stddev_exec_time double precision, wal_buffers_full bigint,
    parallel_workers_to_launch bigint, parallel_workers_launched bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
WITH changed AS (
    SELECT x.key_id, bool_or(x.gone) AS had_gone
    FROM folio_perf_data.stmt x
    WHERE x.snap_id > p_begin AND x.snap_id <= p_end
      -- snapshots of other targets (or this server) taken meanwhile
      AND x.snap_id IN (SELECT folio_perf_data.snaps_between(p_begin, p_end))
    GROUP BY x.key_id
),
reset AS (
    SELECT (b.pgss_stats_reset IS DISTINCT FROM e.pgss_stats_reset) AS pgss_reset
    FROM folio_perf_data.snapshot b, folio_perf_data.snapshot e
    WHERE b.snap_id = p_begin AND e.snap_id = p_end
),
v AS (
    SELECT c.key_id, c.had_gone, ev.*, bv.*, lp.*
    FROM changed c
    CROSS JOIN LATERAL (
        SELECT x.gone AS e_gone FROM folio_perf_data.stmt x
        WHERE x.key_id = c.key_id AND x.snap_id <= p_end
        ORDER BY x.snap_id DESC LIMIT 1) ev
    LEFT JOIN LATERAL (
        SELECT x.gone AS b_gone, x.calls AS b_calls, x.total_exec_time AS b_time,
               x.total_plan_time AS b_plan, x.rows AS b_rows,
               x.shared_blks_hit AS b_hit, x.shared_blks_read AS b_read,
               x.shared_blks_dirtied AS b_dirtied, x.shared_blks_written AS b_written,
               x.temp_blks_read AS b_tread, x.temp_blks_written AS b_twritten,
               x.blk_read_time AS b_rtime, x.blk_write_time AS b_wtime,
               x.wal_bytes AS b_wal, x.stddev_exec_time AS b_sd,
               x.wal_buffers_full AS b_wbf, x.parallel_workers_to_launch AS b_pwl,
               x.parallel_workers_launched AS b_pwd
        FROM folio_perf_data.stmt x
        WHERE x.key_id = c.key_id AND x.snap_id <= p_begin
        ORDER BY x.snap_id DESC LIMIT 1) bv ON true
    CROSS JOIN LATERAL (
        SELECT x.calls AS e_calls, x.total_exec_time AS e_time,
               x.total_plan_time AS e_plan, x.rows AS e_rows,
               x.shared_blks_hit AS e_hit, x.shared_blks_read AS e_read,
               x.shared_blks_dirtied AS e_dirtied, x.shared_blks_written AS e_written,
               x.temp_blks_read AS e_tread, x.temp_blks_written AS e_twritten,
               x.blk_read_time AS e_rtime, x.blk_write_time AS e_wtime,
               x.wal_bytes AS e_wal, x.stddev_exec_time AS e_sd,
               x.wal_buffers_full AS e_wbf, x.parallel_workers_to_launch AS e_pwl,
               x.parallel_workers_launched AS e_pwd
        FROM folio_perf_data.stmt x
        WHERE x.key_id = c.key_id AND x.snap_id <= p_end AND NOT x.gone
        ORDER BY x.snap_id DESC LIMIT 1) lp
),
s AS (
    SELECT v.*,
        CASE
            WHEN (SELECT pgss_reset FROM reset) AND v.b_calls IS NOT NULL AND NOT v.b_gone THEN 'reset'
            WHEN v.e_gone THEN 'evicted'
            WHEN v.had_gone THEN 'reentered'
            WHEN v.b_calls IS NULL OR v.b_gone THEN 'new'
            WHEN v.e_calls < v.b_calls OR v.e_time < v.b_time THEN 'reset'
            ELSE 'ok'
        END AS st
    FROM v
)
SELECT s.key_id, s.st,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN greatest(s.e_calls - s.b_calls, 0) ELSE s.e_calls END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN greatest(s.e_time - s.b_time, 0) ELSE s.e_time END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN greatest(s.e_plan - s.b_plan, 0) ELSE s.e_plan END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN greatest(s.e_rows - s.b_rows, 0) ELSE s.e_rows END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN greatest(s.e_hit - s.b_hit, 0) ELSE s.e_hit END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN greatest(s.e_read - s.b_read, 0) ELSE s.e_read END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN greatest(s.e_dirtied - s.b_dirtied, 0) ELSE s.e_dirtied END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN greatest(s.e_written - s.b_written, 0) ELSE s.e_written END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN greatest(s.e_tread - s.b_tread, 0) ELSE s.e_tread END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN greatest(s.e_twritten - s.b_twritten, 0) ELSE s.e_twritten END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN greatest(s.e_rtime - s.b_rtime, 0) ELSE s.e_rtime END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN greatest(s.e_wtime - s.b_wtime, 0) ELSE s.e_wtime END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN greatest(s.e_wal - s.b_wal, 0) ELSE s.e_wal END,
    CASE WHEN s.b_calls > 0 AND NOT s.b_gone THEN s.b_time / s.b_calls END,
    -- the window's own (population) standard deviation of execution time.
    -- pg_stat_statements keeps, per entry, n calls, their sum T and
    -- stddev sd, i.e. M2 = sd^2 * n, the sum of squared deviations from
    -- the mean.  Two snapshots are a split of the calls into "before"
    -- (n1, T1, M2_1) and "inside" (nw = n2 - n1, Tw = T2 - T1), and the
    -- parallel-variance combination M2_2 = M2_1 + M2_w
    -- + (Tw/nw - T1/n1)^2 * n1 * nw / n2 inverts to M2_w.  Counting from
    -- zero (new, reentered, reset) the end's stddev is the window's.
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true) THEN
        CASE WHEN s.e_calls - s.b_calls > 0 THEN
            sqrt(greatest(
                s.e_sd ^ 2 * s.e_calls - s.b_sd ^ 2 * s.b_calls
                - CASE WHEN s.b_calls > 0
                       THEN ((s.e_time - s.b_time) / (s.e_calls - s.b_calls) - s.b_time / s.b_calls) ^ 2
                            * s.b_calls * (s.e_calls - s.b_calls) / s.e_calls
                       ELSE 0 END,
                0) / (s.e_calls - s.b_calls)) END
         ELSE s.e_sd END,
    -- counted from PostgreSQL 18 only: NULL (not 0) where either end lacks them
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN CASE WHEN s.b_wbf IS NOT NULL THEN greatest(s.e_wbf - s.b_wbf, 0) END
         ELSE s.e_wbf END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN CASE WHEN s.b_pwl IS NOT NULL THEN greatest(s.e_pwl - s.b_pwl, 0) END
         ELSE s.e_pwl END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN CASE WHEN s.b_pwd IS NOT NULL THEN greatest(s.e_pwd - s.b_pwd, 0) END
         ELSE s.e_pwd END
FROM s
WHERE s.e_calls IS NOT NULL
$$;

/*
 * window_cache(kind, p_begin, p_end): the query (parameters $1 = p_begin,
 * $2 = p_end) that returns <kind>_compute(p_begin, p_end) (kind:
 * stmt_delta, rel_delta, the derived kinds table_rows, health_tables,
 * index_rows, module_rels, table_sums; stmt_groups, plan_groups, which
 * depend on the statement texts and plans the user may see, and di_jobs,
 * the data-import jobs read from the tenants' tables: never stored).  The derived kinds of a window's pair
 * come from its stored facts (window_facts: fact_<kind>); otherwise from a
 * temporary table where it is
 * computed at most once per transaction and user for a pair of snapshots;
 * where temporary tables cannot be used (a standby, no TEMP privilege) the
 * query computes it.  A report asks for the same window's differences a dozen
 * times (flags, summary, four top lists, modules, tables, trend).  The
 * tables are dropped at commit: kept for the session (as capture()'s work
 * tables are), they would belong to whatever role the session had SET ROLE
 * to, and DROP ROLE would fail until the session ends.  A table of that
 * name that the current role did not create, or with a trigger, rule or
 * policy on it, is never used (work_table_state): the query then computes.
 */
CREATE FUNCTION folio_perf_data.window_cache(p_kind text, p_begin bigint, p_end bigint)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    cache text;
    done boolean;
    st text;
    st_done text;
BEGIN
    IF p_kind IS NULL OR p_kind NOT IN ('stmt_delta', 'rel_delta', 'table_rows', 'health_tables',
                                        'index_rows', 'module_rels', 'table_sums',
                                        'stmt_groups', 'plan_groups', 'di_jobs') THEN
        RAISE EXCEPTION 'unknown window cache "%"', p_kind
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF p_kind IN ('table_rows', 'health_tables', 'index_rows', 'module_rels', 'table_sums')
       AND folio_perf_data.window_facts(p_kind, p_begin, p_end) THEN
        -- stored with the window (fact_<kind>): its columns but the pair
        -- and ord, in the order they were computed
        RETURN pg_catalog.format(
            'SELECT %s FROM folio_perf_data.%I d WHERE d.begin_snap = $1 AND d.end_snap = $2 ORDER BY d.ord',
            (SELECT string_agg('d.' || pg_catalog.quote_ident(a.attname), ', ' ORDER BY a.attnum)
             FROM pg_catalog.pg_attribute a
             WHERE a.attrelid = pg_catalog.format('folio_perf_data.%I', 'fact_' || p_kind)::pg_catalog.regclass
               AND a.attnum > 2 AND a.attname <> 'ord' AND NOT a.attisdropped),
            'fact_' || p_kind);
    END IF;
    IF pg_catalog.pg_is_in_recovery()
       OR NOT pg_catalog.has_database_privilege(pg_catalog.current_database(), 'TEMP') THEN
        RETURN format('SELECT * FROM folio_perf_data.%I($1, $2)', p_kind || '_compute');
    END IF;
    cache := 'fperf_' || p_kind || '_' || (SELECT r.oid FROM pg_catalog.pg_roles r
                                            WHERE r.rolname = current_user);
    st := folio_perf_data.work_table_state(cache);
    st_done := folio_perf_data.work_table_state(cache || '_done');
    IF st = 'foreign' OR st_done = 'foreign' OR st <> st_done THEN
        -- a table of that name the current role did not create (planted by
        -- another role of this session, with a trigger or a rule that would
        -- run as this one): not used
        RETURN format('SELECT * FROM folio_perf_data.%I($1, $2)', p_kind || '_compute');
    END IF;
    IF st = 'absent' THEN
        EXECUTE format('CREATE TEMP TABLE %I ON COMMIT DROP AS
                        SELECT NULL::bigint AS b, NULL::bigint AS e, d.*
                        FROM folio_perf_data.%I(NULL, NULL) d WITH NO DATA',
                       cache, p_kind || '_compute');
        EXECUTE format('CREATE TEMP TABLE %I (b bigint, e bigint) ON COMMIT DROP',
                       cache || '_done');
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM pg_temp.%I x WHERE x.b = $1 AND x.e = $2)',
                   cache || '_done') INTO done USING p_begin, p_end;
    IF NOT done THEN
        EXECUTE format('INSERT INTO pg_temp.%I SELECT $1, $2, d.* FROM folio_perf_data.%I($1, $2) d',
                       cache, p_kind || '_compute') USING p_begin, p_end;
        EXECUTE format('INSERT INTO pg_temp.%I VALUES ($1, $2)', cache || '_done')
            USING p_begin, p_end;
    END IF;
    -- the cached columns but b and e, in the compute function's order
    RETURN format('SELECT %s FROM pg_temp.%I d WHERE d.b = $1 AND d.e = $2',
                  (SELECT string_agg(pg_catalog.quote_ident(a.attname), ', ' ORDER BY a.attnum)
                   FROM pg_catalog.pg_attribute a
                   JOIN pg_catalog.pg_class k ON k.oid = a.attrelid
                   WHERE k.relnamespace = pg_catalog.pg_my_temp_schema() AND k.relname = cache
                     AND a.attnum > 2 AND NOT a.attisdropped),
                  cache);
END
$fn$;

/*
 * window_facts(kind, p_begin, p_end): are the differences of kind
 * (stmt_delta, rel_delta) between snapshots p_begin and p_end stored in
 * fact_stmt / fact_rel (020_storage), or the facts derived from them
 * (table_rows, health_tables, index_rows, module_rels, table_sums) in
 * fact_<kind>?  Stores them first, computed by
 * <kind>_compute, when (p_begin, p_end) are a window's two snapshots and
 * this transaction may write them; false where they are not stored and
 * cannot be (not a window's pair, a standby, a read-only or not READ
 * COMMITTED transaction, another session storing them right now) or
 * folio_perf.window_facts is off: the caller computes them then.  One
 * session stores a pair's kind (an advisory lock per pair and kind, tried,
 * never waited for), and never while a purge runs (purge
 * takes its lock exclusively and deletes the pairs whose snapshots it
 * moves rows between).  Runs as the owner: readers store only what the
 * compute functions return, for windows that exist.
 */
CREATE FUNCTION folio_perf_data.window_facts(p_kind text, p_begin bigint, p_end bigint)
RETURNS boolean
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    t0 timestamptz;
    n bigint;
BEGIN
    IF p_kind IS NULL OR p_kind NOT IN ('stmt_delta', 'rel_delta', 'table_rows',
                                        'health_tables', 'index_rows', 'module_rels',
                                        'table_sums') THEN
        RAISE EXCEPTION 'unknown window facts "%"', p_kind
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'The kinds are stmt_delta, rel_delta, table_rows, health_tables, index_rows, module_rels and table_sums.';
    END IF;
    IF p_begin IS NULL OR p_end IS NULL
       OR coalesce(pg_catalog.current_setting('folio_perf.window_facts', true), '') = 'off' THEN
        RETURN false;
    END IF;
    IF EXISTS (SELECT 1 FROM folio_perf_data.fact_pair f
               WHERE f.begin_snap = p_begin AND f.end_snap = p_end AND f.kind = p_kind) THEN
        RETURN true;
    END IF;
    IF pg_catalog.pg_is_in_recovery()
       OR pg_catalog.current_setting('transaction_read_only') = 'on'
       OR pg_catalog.current_setting('transaction_isolation') <> 'read committed'
       OR NOT EXISTS (SELECT 1 FROM folio_perf_data.window w
                      WHERE w.begin_snap = p_begin AND w.end_snap = p_end) THEN
        RETURN false;
    END IF;
    PERFORM pg_catalog.pg_advisory_xact_lock_shared(pg_catalog.hashtext('folio_perf_purge'), 0);
    -- one session stores a pair's kind; another that asks meanwhile computes
    -- it for itself rather than wait: a session storing one kind may ask for
    -- another (a derived kind reads rel_delta), and sessions waiting on each
    -- other's kinds would deadlock
    IF NOT pg_catalog.pg_try_advisory_xact_lock(pg_catalog.hashtext('folio_perf_window_facts'),
                                                pg_catalog.hashtext(p_kind || ':' || p_begin || ':' || p_end)) THEN
        RETURN false;
    END IF;
    -- another session may have stored the pair before (READ COMMITTED:
    -- this statement sees what it committed)
    IF EXISTS (SELECT 1 FROM folio_perf_data.fact_pair f
               WHERE f.begin_snap = p_begin AND f.end_snap = p_end AND f.kind = p_kind) THEN
        RETURN true;
    END IF;
    t0 := pg_catalog.clock_timestamp();
    IF p_kind = 'stmt_delta' THEN
        INSERT INTO folio_perf_data.fact_stmt
        SELECT p_begin, p_end, d.*
        FROM folio_perf_data.stmt_delta_compute(p_begin, p_end) WITH ORDINALITY d;
    ELSIF p_kind = 'rel_delta' THEN
        INSERT INTO folio_perf_data.fact_rel
        SELECT p_begin, p_end, d.*
        FROM folio_perf_data.rel_delta_compute(p_begin, p_end) WITH ORDINALITY d;
    ELSE
        -- derived facts (table_rows, health_tables, ...): their
        -- compute function reads the pair's relation differences, stored
        -- first by the nested call of rel_delta
        EXECUTE pg_catalog.format('INSERT INTO folio_perf_data.%I SELECT $1, $2, d.*
                                   FROM folio_perf_data.%I($1, $2) WITH ORDINALITY d',
                                  'fact_' || p_kind, p_kind || '_compute')
            USING p_begin, p_end;
    END IF;
    GET DIAGNOSTICS n = ROW_COUNT;
    INSERT INTO folio_perf_data.fact_pair (begin_snap, end_snap, kind, n_rows, compute_ms)
    VALUES (p_begin, p_end, p_kind, n,
            extract(epoch FROM pg_catalog.clock_timestamp() - t0) * 1000);
    RETURN true;
END
$fn$;

/*
 * stmt_delta(p_begin, p_end): stmt_delta_compute(): a window's stored facts
 * (window_facts, in the order the computation gave them), else computed
 * once per transaction and user for a pair of snapshots.  A report asks for the same
 * window's differences a dozen times (flags, summary, four top lists,
 * modules, tables, trend); they are kept in a temporary table until commit.
 * Differences between two existing snapshots do not change.
 */
CREATE FUNCTION folio_perf_data.stmt_delta(p_begin bigint, p_end bigint)
RETURNS TABLE(key_id bigint, status text, calls bigint,
    total_exec_time double precision, total_plan_time double precision,
    rows bigint, shared_blks_hit bigint, shared_blks_read bigint,
    shared_blks_dirtied bigint, shared_blks_written bigint,
    temp_blks_read bigint, temp_blks_written bigint,
    blk_read_time double precision, blk_write_time double precision,
    wal_bytes numeric, first_calls_mean double precision,
    stddev_exec_time double precision, wal_buffers_full bigint,
    parallel_workers_to_launch bigint, parallel_workers_launched bigint)
LANGUAGE plpgsql VOLATILE ROWS 10000
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF folio_perf_data.window_facts('stmt_delta', p_begin, p_end) THEN
        RETURN QUERY
        SELECT f.key_id, f.status, f.calls, f.total_exec_time, f.total_plan_time,
               f.rows, f.shared_blks_hit, f.shared_blks_read, f.shared_blks_dirtied,
               f.shared_blks_written, f.temp_blks_read, f.temp_blks_written,
               f.blk_read_time, f.blk_write_time, f.wal_bytes, f.first_calls_mean,
               f.stddev_exec_time, f.wal_buffers_full, f.parallel_workers_to_launch,
               f.parallel_workers_launched
        FROM folio_perf_data.fact_stmt f
        WHERE f.begin_snap = p_begin AND f.end_snap = p_end
        ORDER BY f.ord;
    ELSIF p_begin IS NOT NULL AND p_end IS NOT NULL THEN
        RETURN QUERY EXECUTE folio_perf_data.window_cache('stmt_delta', p_begin, p_end)
            USING p_begin, p_end;
    END IF;
END
$fn$;

/*
 * Per-relation differences across two snapshots (tables, matviews and
 * indexes).  status: ok, created (first seen inside the window, counts from
 * zero), dropped (counts until last seen), rewritten (TRUNCATE, VACUUM FULL,
 * CLUSTER inside the window; counters continue), reset (counters went down:
 * statistics reset or crash; counts since the reset, a lower bound).
 */
CREATE FUNCTION folio_perf_data.rel_delta_compute(p_begin bigint, p_end bigint)
RETURNS TABLE(rel_key_id bigint, status text,
    seq_scan bigint, seq_tup_read bigint, idx_scan bigint, idx_tup_fetch bigint,
    n_tup_ins bigint, n_tup_upd bigint, n_tup_del bigint, n_tup_hot_upd bigint,
    vacuum_count bigint, autovacuum_count bigint, analyze_count bigint,
    autoanalyze_count bigint, blks_read bigint, blks_hit bigint,
    toast_blks_read bigint, toast_blks_hit bigint,
    n_live_tup bigint, n_dead_tup bigint, size_begin bigint, size_end bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
WITH u AS (
    -- every element of the window's snapshots (of its database or target)
    SELECT c.snap_id, e.*
    FROM folio_perf_data.rel_chunk c,
         unnest(c.keys, c.flags, c.seq_scan, c.seq_tup_read, c.idx_scan, c.idx_tup_fetch,
                c.n_tup_ins, c.n_tup_upd, c.n_tup_del, c.n_tup_hot_upd, c.vacuum_count,
                c.autovacuum_count, c.analyze_count, c.autoanalyze_count, c.blks_read,
                c.blks_hit, c.toast_blks_read, c.toast_blks_hit, c.n_live_tup, c.n_dead_tup,
                c.size_bytes, c.size_delta)
           AS e(k, f, i1, i2, i3, i4, i5, i6, i7, i8, i9, i10, i11, i12, i13, i14, i15, i16,
                live, dead, sz, dsz)
    WHERE c.snap_id > p_begin AND c.snap_id <= p_end
      AND c.snap_id IN (SELECT folio_perf_data.snaps_between(p_begin, p_end))
),
g AS (
    -- counting starts at the last element that counts from zero (new,
    -- reset); the last element has the values at the end
    SELECT u.k, bit_or(u.f) AS fl,
           coalesce(max(u.snap_id) FILTER (WHERE u.f & 9 <> 0), 0) AS from_snap,
           max(u.snap_id) AS last_snap
    FROM u GROUP BY u.k
),
s AS (
    SELECT u.k,
        CASE WHEN g.fl & 1 <> 0 THEN 'created' WHEN g.fl & 8 <> 0 THEN 'reset'
             WHEN g.fl & 2 <> 0 THEN 'dropped' WHEN g.fl & 4 <> 0 THEN 'rewritten'
             ELSE 'ok' END AS st,
        sum(u.i1) FILTER (WHERE u.snap_id >= g.from_snap) AS i1,
        sum(u.i2) FILTER (WHERE u.snap_id >= g.from_snap) AS i2,
        sum(u.i3) FILTER (WHERE u.snap_id >= g.from_snap) AS i3,
        sum(u.i4) FILTER (WHERE u.snap_id >= g.from_snap) AS i4,
        sum(u.i5) FILTER (WHERE u.snap_id >= g.from_snap) AS i5,
        sum(u.i6) FILTER (WHERE u.snap_id >= g.from_snap) AS i6,
        sum(u.i7) FILTER (WHERE u.snap_id >= g.from_snap) AS i7,
        sum(u.i8) FILTER (WHERE u.snap_id >= g.from_snap) AS i8,
        sum(u.i9) FILTER (WHERE u.snap_id >= g.from_snap) AS i9,
        sum(u.i10) FILTER (WHERE u.snap_id >= g.from_snap) AS i10,
        sum(u.i11) FILTER (WHERE u.snap_id >= g.from_snap) AS i11,
        sum(u.i12) FILTER (WHERE u.snap_id >= g.from_snap) AS i12,
        sum(u.i13) FILTER (WHERE u.snap_id >= g.from_snap) AS i13,
        sum(u.i14) FILTER (WHERE u.snap_id >= g.from_snap) AS i14,
        sum(u.i15) FILTER (WHERE u.snap_id >= g.from_snap) AS i15,
        sum(u.i16) FILTER (WHERE u.snap_id >= g.from_snap) AS i16,
        -- the last values seen (a gone element keeps those before it went)
        max(u.live) FILTER (WHERE u.snap_id = g.last_snap) AS live,
        max(u.dead) FILTER (WHERE u.snap_id = g.last_snap) AS dead,
        max(u.sz) FILTER (WHERE u.snap_id = g.last_snap) AS e_size,
        -- the size at the begin: the size at the end (0 when gone) minus
        -- the window's growth
        max(CASE WHEN u.f & 2 <> 0 THEN 0 ELSE u.sz END) FILTER (WHERE u.snap_id = g.last_snap)
          - sum(u.dsz) AS b_size
    FROM u JOIN g ON g.k = u.k
    GROUP BY u.k, g.fl
)
SELECT s.k, s.st,
    s.i1::bigint, s.i2::bigint, s.i3::bigint, s.i4::bigint, s.i5::bigint, s.i6::bigint,
    s.i7::bigint, s.i8::bigint,
    -- counters that also go down without a reset (a new TOAST table, ...)
    -- count at least zero where the window has a base
    CASE WHEN s.st IN ('created', 'reset') THEN s.i9 ELSE greatest(s.i9, 0) END::bigint,
    CASE WHEN s.st IN ('created', 'reset') THEN s.i10 ELSE greatest(s.i10, 0) END::bigint,
    CASE WHEN s.st IN ('created', 'reset') THEN s.i11 ELSE greatest(s.i11, 0) END::bigint,
    CASE WHEN s.st IN ('created', 'reset') THEN s.i12 ELSE greatest(s.i12, 0) END::bigint,
    s.i13::bigint, s.i14::bigint,
    CASE WHEN s.st IN ('created', 'reset') THEN s.i15 ELSE greatest(s.i15, 0) END::bigint,
    CASE WHEN s.st IN ('created', 'reset') THEN s.i16 ELSE greatest(s.i16, 0) END::bigint,
    CASE WHEN s.st = 'dropped' THEN 0 ELSE s.live END,
    CASE WHEN s.st = 'dropped' THEN 0 ELSE s.dead END,
    CASE WHEN s.st = 'created' THEN 0 ELSE s.b_size::bigint END,
    CASE WHEN s.st = 'dropped' THEN 0 ELSE s.e_size END
FROM s
$$;

/*
 * rel_at(p_snap, p_keys): what the store says of the relations p_keys at
 * snapshot p_snap: the newest element at or before it of each (a relation
 * never stored by then has no row).  gone: it was no longer seen; tuples
 * and size are then NULL and 0.
 *
 * Each chunk gives only the elements of p_keys (rel_chunk_pick, in C: the
 * chunk's keys looked up in p_keys, not unnested).  Few keys find their
 * chunks by the GIN index on keys (rel_chunk_keys); many keys read every
 * chunk of p_snap's database or target up to p_snap instead: the index
 * looks up each key's posting list, and 21,663 keys (the tables of a
 * 24-hour window at 40 tenants) took 1.6 s there, against some 0.1 s for
 * reading the chunks whole.  The two branches exclude each other by the
 * number of keys (one-time filters: only one runs).  Each chunk's call is
 * a nested loop: a caller's enable_nestloop = off (index_usage_rows) would
 * price it at 10^10 and have it compiled by JIT, 0.5 s a call; so neither
 * applies here.
 */
CREATE FUNCTION folio_perf_data.rel_at(p_snap bigint, p_keys bigint[])
RETURNS TABLE(rel_key_id bigint, gone boolean, n_live_tup bigint, n_dead_tup bigint,
    size_bytes bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
SET enable_nestloop = on
SET jit = off
-- few keys: their chunks by the GIN index, never by a scan that tests
-- every chunk's keys for an overlap (array && compares every element of
-- one with every element of the other: 1,000 keys a chunk x 150 keys,
-- 0.4 s for 590 chunks, where the planner prices it as one operator)
SET enable_seqscan = off
AS $$
SELECT DISTINCT ON (e.k) e.k, e.f & 2 <> 0,
       CASE WHEN e.f & 2 = 0 THEN e.live END, CASE WHEN e.f & 2 = 0 THEN e.dead END,
       CASE WHEN e.f & 2 = 0 THEN e.sz ELSE 0 END
FROM (
    SELECT c.snap_id, c.keys, c.flags, c.n_live_tup, c.n_dead_tup, c.size_bytes
    FROM folio_perf_data.rel_chunk c
    -- (a key is of one database or target: chunks of others do not have it)
    -- (snap_id + 0: not by the primary key either, whose range would
    -- leave the overlap to a filter again)
    WHERE pg_catalog.cardinality(p_keys) <= 256
      AND c.snap_id OPERATOR(pg_catalog.+) 0 <= p_snap AND c.keys OPERATOR(pg_catalog.&&) p_keys
    UNION ALL
    SELECT c.snap_id, c.keys, c.flags, c.n_live_tup, c.n_dead_tup, c.size_bytes
    FROM folio_perf_data.rel_chunk c
    JOIN folio_perf_data.snapshot s ON s.snap_id = c.snap_id
    JOIN folio_perf_data.snapshot p ON p.snap_id = p_snap
    -- the chunks of p_snap's database or target (the only ones with its keys)
    WHERE pg_catalog.cardinality(p_keys) > 256 AND c.snap_id <= p_snap
      AND s.dbid = p.dbid AND s.target_id IS NOT DISTINCT FROM p.target_id
) c,
     folio_perf_data.rel_chunk_pick(c.keys, c.flags, c.n_live_tup, c.n_dead_tup,
                                    c.size_bytes, p_keys) AS e
ORDER BY e.k, c.snap_id DESC
$$;

/*
 * rel_delta(p_begin, p_end): rel_delta_compute(): a window's stored facts
 * (window_facts), else computed once per transaction and user for a pair
 * of snapshots.  A report asks for the same
 * window's differences a dozen times (flags, summary, four top lists,
 * modules, tables, trend); they are kept in a temporary table until commit.
 * Differences between two existing snapshots do not change.
 */
CREATE FUNCTION folio_perf_data.rel_delta(p_begin bigint, p_end bigint)
RETURNS TABLE(rel_key_id bigint, status text,
    seq_scan bigint, seq_tup_read bigint, idx_scan bigint, idx_tup_fetch bigint,
    n_tup_ins bigint, n_tup_upd bigint, n_tup_del bigint, n_tup_hot_upd bigint,
    vacuum_count bigint, autovacuum_count bigint, analyze_count bigint,
    autoanalyze_count bigint, blks_read bigint, blks_hit bigint,
    toast_blks_read bigint, toast_blks_hit bigint,
    n_live_tup bigint, n_dead_tup bigint, size_begin bigint, size_end bigint)
LANGUAGE plpgsql VOLATILE ROWS 10000
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF folio_perf_data.window_facts('rel_delta', p_begin, p_end) THEN
        RETURN QUERY
        SELECT f.rel_key_id, f.status, f.seq_scan, f.seq_tup_read, f.idx_scan,
               f.idx_tup_fetch, f.n_tup_ins, f.n_tup_upd, f.n_tup_del, f.n_tup_hot_upd,
               f.vacuum_count, f.autovacuum_count, f.analyze_count, f.autoanalyze_count,
               f.blks_read, f.blks_hit, f.toast_blks_read, f.toast_blks_hit,
               f.n_live_tup, f.n_dead_tup, f.size_begin, f.size_end
        FROM folio_perf_data.fact_rel f
        WHERE f.begin_snap = p_begin AND f.end_snap = p_end
        ORDER BY f.ord;
    ELSIF p_begin IS NOT NULL AND p_end IS NOT NULL THEN
        RETURN QUERY EXECUTE folio_perf_data.window_cache('rel_delta', p_begin, p_end)
            USING p_begin, p_end;
    END IF;
END
$fn$;

/*
 * rel_statuses(p_begin, p_end): the status of each relation whose
 * difference between the two snapshots is not plain (created, dropped,
 * rewritten, reset): from the stored facts by their partial index
 * (fact_rel_odd) instead of every relation's row.  Declared like rel_delta
 * (ROWS 10000), so that a GROUP BY over it is planned, and its groups come
 * out, as over rel_delta.
 */
CREATE FUNCTION folio_perf_data.rel_statuses(p_begin bigint, p_end bigint)
RETURNS TABLE(status text)
LANGUAGE plpgsql VOLATILE ROWS 10000
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF folio_perf_data.window_facts('rel_delta', p_begin, p_end) THEN
        RETURN QUERY
        SELECT f.status FROM folio_perf_data.fact_rel f
        WHERE f.begin_snap = p_begin AND f.end_snap = p_end AND f.status <> 'ok';
    ELSE
        RETURN QUERY
        SELECT d.status FROM folio_perf_data.rel_delta(p_begin, p_end) d WHERE d.status <> 'ok';
    END IF;
END
$fn$;

-- Can the current role see statement texts of role u (as in
-- pg_stat_statements)?  Roles of a remote target (t) are not roles here:
-- their texts are for members of pg_read_all_stats.
CREATE FUNCTION folio_perf_data.may_see_text(u oid, t int DEFAULT NULL)
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT (t IS NULL AND u = (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user))
      OR pg_catalog.pg_has_role(current_user, 'pg_read_all_stats', 'USAGE')
$$;

/*
 * Statement texts as the current role may see them: its own statements'
 * and, for members of pg_read_all_stats, everyone's (as in
 * pg_stat_statements).  Readers get this view, not the query_text table;
 * current_user inside a view is the querying role.  text_md5 is NULL where
 * the text is hidden (reports then match statements by queryid).
 */
CREATE VIEW folio_perf_data.stmt_text WITH (security_barrier) AS
SELECT k.key_id,
       -- a hidden text's MD5 would confirm a guess of the text
       CASE WHEN v.see_all OR (k.target_id IS NULL AND k.userid = v.me) THEN t.text_md5 END AS text_md5,
       CASE WHEN v.see_all OR (k.target_id IS NULL AND k.userid = v.me) THEN t.query
            ELSE '<insufficient privilege>' END AS query
FROM folio_perf_data.stmt_key k
JOIN folio_perf_data.query_text t ON t.text_id = k.text_id
-- may_see_text()'s rule, worked out once per query rather than per row
CROSS JOIN (SELECT pg_catalog.pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') AS see_all,
                   (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) AS me) v;

CREATE FUNCTION folio_perf_data.check_n(n int)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF n IS NULL OR n < 1 OR n > 100000 THEN
        RAISE EXCEPTION 'n must be between 1 and 100000, not %', coalesce(n::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'n is the number of rows to return.';
    END IF;
END
$$;
