/* sql/parts/136_findings.sql - findings: the significance rule of a change of mean time, the rules of folio_perf_check, a window's active span and headline */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

------------------------------------------------------------------------
--
-- A change of a statement's mean execution time between two windows is a
-- finding only if it is significant and if it matters:
--
--   significant  Welch's two-sided t-test on the two windows' exact calls,
--                mean and standard deviation (stmt_delta: the window's own
--                population standard deviation, made a sample one by
--                n / (n - 1)) gives p < alpha, where each mean's variance
--                also holds the run-to-run noise: (run_noise_pct of the
--                mean)^2 (two runs of one workload are two samples of the
--                machine's state, its caches, tables that grew and other
--                load, not only of the calls: the five same-workload pairs
--                of TAP 080 moved means of many-called statements by 30-50 %
--                at p < 1e-5 by the calls alone);
--   large        the mean changed by at least min_change_pct and by at
--                least min_change_ms a call (changes of a few microseconds
--                a call, 0.003 -> 0.015 ms, are the timer's and the
--                scheduler's, not the statement's);
--   matters      its impact, the change of mean times the new window's
--                calls (the DB time the change cost or saved), is at least
--                min_impact_pct of the base window's DB time and at least
--                min_impact_ms.
--
-- All three are settable (rules jsonb of folio_perf_check, defaults in
-- check_rules()).  Where many changes are tested together (every
-- statement of two windows) alpha is their family-wise level: each is
-- tested at alpha / family_size (Bonferroni), family_size the number of
-- them (folio_perf_check sets it), so that noise in one of many statements
-- is not called a regression.  folio_perf_check, the compare verdict and the colours
-- of the compare's statement cells use this one rule (significance());
-- the series of windows (#28) uses it too.
------------------------------------------------------------------------

-- ln(Gamma(x)) for x > 0 (Lanczos, g = 7, 9 terms; relative error below
-- 1e-13), which PostgreSQL 15 lacks.  This function and the three after
-- it are in C (src/stats.c): a compare runs the rule once per statement.
CREATE FUNCTION folio_perf_data.ln_gamma(x double precision)
RETURNS double precision
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'folio_perf_ln_gamma';

-- The regularized incomplete beta function I_x(a, b), a, b > 0, 0 <= x <= 1
-- (continued fraction by the modified Lentz method, as Numerical Recipes'
-- betai/betacf).
CREATE FUNCTION folio_perf_data.inc_beta(a double precision, b double precision, x double precision)
RETURNS double precision
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE
AS 'MODULE_PATHNAME', 'folio_perf_inc_beta';

/*
 * welch(n1, mean1, sd1, n2, mean2, sd2): Welch's unequal-variances t-test
 * of two samples given as counts, means and population standard
 * deviations (what pg_stat_statements and stmt_delta keep): t, the
 * Welch-Satterthwaite degrees of freedom and the two-sided p-value.  NULLs
 * where a sample has fewer than 2 values.  Two samples without spread
 * (both standard deviations 0) give p 0 if their means differ, else 1.
 */
CREATE FUNCTION folio_perf_data.welch(n1_ numeric, mean1_ numeric, sd1_ numeric,
    n2_ numeric, mean2_ numeric, sd2_ numeric,
    OUT t double precision, OUT df double precision, OUT p_value double precision)
LANGUAGE C IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'folio_perf_welch';

/*
 * check_rules(rules): the rules of folio_perf_check and the verdicts with
 * every key set (the defaults below for those not given).  Unknown keys
 * and values out of range are errors, so that a typo in a CI job's rules
 * does not pass silently.
 */
CREATE FUNCTION folio_perf_data.check_rules(rules jsonb)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    -- key: default, minimum, maximum
    d jsonb := '{
        "alpha":                      [0.01, 0, 1],
        "min_change_pct":             [30, 0, 100000],
        "min_impact_pct":             [1, 0, 100],
        "min_impact_ms":              [0, 0, 1e15],
        "min_change_ms":              [0.05, 0, 1e9],
        "run_noise_pct":              [10, 0, 1000],
        "top_n":                      [20, 1, 1000],
        "operation_pct":              [20, 0, 100000],
        "data_import_pct":            [20, 0, 100000],
        "db_cpu_points":              [10, 0, 100],
        "connections_pct":            [20, 0, 100000],
        "connections_min":            [5, 0, 1e9],
        "large_table_rows":           [10000, 0, 1e15],
        "seq_scans_per_call":         [0.5, 0, 1e9],
        "calls_per_operation":        [10, 0, 1e9],
        "temp_blocks_per_call":       [1, 0, 1e15],
        "lock_wait_aas":              [0.05, 0, 1e9],
        "max_findings":               [10, 1, 1000],
        "family_size":                [1, 1, 1e9]
    }';
    k text;
    v jsonb;
    out jsonb := '{}';
BEGIN
    IF rules IS NULL THEN
        rules := '{}';
    END IF;
    IF jsonb_typeof(rules) <> 'object' THEN
        RAISE EXCEPTION 'rules must be a JSON object, not %', jsonb_typeof(rules)
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass for example ''{"alpha": 0.01, "min_impact_pct": 1}''; ''{}'' takes the defaults.';
    END IF;
    FOR k, v IN SELECT e.key, e.value FROM jsonb_each(rules) e LOOP
        IF NOT d ? k THEN
            RAISE EXCEPTION 'unknown rule "%"', k
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Rules: ' || (SELECT string_agg(x, ', ' ORDER BY x) FROM jsonb_object_keys(d) x) || '.';
        END IF;
        IF jsonb_typeof(v) <> 'number' OR (v)::numeric < (d->k->>1)::numeric
           OR (v)::numeric > (d->k->>2)::numeric THEN
            RAISE EXCEPTION 'rule "%" must be a number from % to %, not %', k, d->k->>1, d->k->>2, v
                USING ERRCODE = 'invalid_parameter_value';
        END IF;
    END LOOP;
    SELECT jsonb_object_agg(e.key, coalesce(rules->e.key, e.value->0)) INTO out FROM jsonb_each(d) e;
    RETURN out;
END
$$;

/*
 * significance(): the one rule that decides whether a statement's change
 * of mean execution time between a base and a new window is a regression,
 * an improvement or neither (verdict 'pass'; 'info' where it cannot be
 * tested: fewer than 2 calls in a window).  Inputs: each window's calls,
 * mean and population standard deviation of execution time (ms), the base
 * window's DB time (ms, the sum of its top-level statements' execution
 * time), and the rules (check_rules()).  impact_ms: (new mean - base mean)
 * * new calls; floor_ms: the impact it must reach.  Used by
 * folio_perf_check, the compare verdict and colours, and folio_perf_series.
 */
CREATE FUNCTION folio_perf_data.significance(b_calls bigint, b_mean_ numeric, b_sd numeric,
    n_calls bigint, n_mean_ numeric, n_sd numeric,
    base_db_time_ms numeric, rules jsonb DEFAULT '{}',
    OUT t double precision, OUT df double precision, OUT p_value double precision,
    OUT change_pct double precision, OUT impact_ms double precision, OUT floor_ms double precision,
    OUT significant boolean, OUT verdict text)
LANGUAGE C IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'folio_perf_significance';

/*
 * active_span(window): the part of a window when the workload ran, from
 * the sampler's ticks.  A tick is busy when its client connections are 2
 * or more above the window's fewest (the idle pool: a workload's pools
 * connect) or its active sessions reach max(2, a quarter of the window's
 * 90th percentile) (one active session alone, an autovacuum worker or a
 * psql call, is not load); busy ticks less than max(1 s, 3 ticks) apart
 * form a burst; the span runs from the first to the last burst of at least
 * max(1 s, 5 ticks).  The ticks while the window's own snapshots were
 * captured (capture_ms before and after each one's taken_at) are left out.
 * idle_*: the window outside the span; idle_connections_avg/max: the
 * connections held before the span began (the idle pool, a baseline to
 * subtract), else after it ended.  NULLs and a note where the sampler has
 * no ticks or nothing was busy.
 */
CREATE FUNCTION folio_perf_data.active_span(p_window bigint,
    OUT wall_s numeric, OUT active_begin timestamptz, OUT active_end timestamptz,
    OUT active_s numeric, OUT idle_before_s numeric, OUT idle_after_s numeric,
    OUT busy_level numeric, OUT active_sessions_avg numeric,
    OUT connections_avg numeric, OUT connections_max int,
    OUT idle_connections_avg numeric, OUT idle_connections_max int, OUT note text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w record;
    skip_until timestamptz;
    skip_from timestamptz;
    tk jsonb;
    thr numeric;
    floor_c int;
    tick_s numeric;
BEGIN
    SELECT * INTO w FROM folio_perf_data.sample_window(p_window);
    wall_s := round(extract(epoch FROM w.t1 - w.t0)::numeric, 3);
    IF w.n_ticks = 0 THEN
        note := coalesce(w.note, 'off: no samples in this window');
        RETURN;
    END IF;
    SELECT b.taken_at + coalesce(b.capture_ms, 0) * interval '1 millisecond',
           e.taken_at - coalesce(e.capture_ms, 0) * interval '1 millisecond'
    INTO skip_until, skip_from
    FROM folio_perf_data.window x
    JOIN folio_perf_data.snapshot b ON b.snap_id = x.begin_snap
    JOIN folio_perf_data.snapshot e ON e.snap_id = x.end_snap
    WHERE x.window_id = p_window;
    -- the window's ticks once: [ts, connections, active, interval ms]
    SELECT coalesce(jsonb_agg(jsonb_build_array(x.ts, x.c, x.a, x.iv) ORDER BY x.ts), '[]') INTO tk
    FROM (SELECT i.started_at + u.ms * interval '1 millisecond' AS ts, u.c, u.a, i.sample_interval_ms AS iv
          FROM folio_perf_data.sample_interval i,
               unnest(i.tick_ms, i.tick_connections, i.tick_active) AS u(ms, c, a)
          WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1
            AND i.target_id IS NOT DISTINCT FROM w.target_id) x
    WHERE x.ts > skip_until AND x.ts < skip_from AND x.ts >= w.t0 AND x.ts <= w.t1;
    SELECT greatest(2, 0.25 * percentile_cont(0.9) WITHIN GROUP (ORDER BY (t->>2)::int))::numeric,
           max((t->>3)::int) / 1000.0, min((t->>1)::int)
    INTO thr, tick_s, floor_c
    FROM jsonb_array_elements(tk) t;
    busy_level := round(thr, 2);
    WITH busy AS (
        SELECT (t->>0)::timestamptz AS ts, (t->>3)::int AS iv_ms
        FROM jsonb_array_elements(tk) t
        WHERE (t->>2)::int >= thr OR (t->>1)::int >= floor_c + 2
    ), brk AS (
        SELECT busy.*, CASE WHEN busy.ts - lag(busy.ts) OVER (ORDER BY busy.ts)
                                 <= greatest(1, 3 * tick_s) * interval '1 second' THEN 0 ELSE 1 END AS b
        FROM busy
    ), bursts AS (
        SELECT sum(brk.b) OVER (ORDER BY brk.ts) AS g, brk.ts, brk.iv_ms FROM brk
    ), g AS (
        SELECT bursts.g, min(bursts.ts) AS s, max(bursts.ts + bursts.iv_ms * interval '1 millisecond') AS e,
               count(*) AS n
        FROM bursts GROUP BY bursts.g
    )
    SELECT min(g.s), max(g.e) INTO active_begin, active_end
    FROM g
    WHERE g.n >= 5 AND g.e - g.s >= greatest(1, 5 * tick_s) * interval '1 second';
    IF active_begin IS NULL THEN
        note := 'no workload found: no burst of active sessions of a second or more';
        SELECT round(avg((t->>1)::int), 1), max((t->>1)::int) INTO idle_connections_avg, idle_connections_max
        FROM jsonb_array_elements(tk) t;
        RETURN;
    END IF;
    active_end := least(active_end, w.t1);
    active_s := round(extract(epoch FROM active_end - active_begin)::numeric, 3);
    idle_before_s := round(extract(epoch FROM active_begin - w.t0)::numeric, 3);
    idle_after_s := round(extract(epoch FROM w.t1 - active_end)::numeric, 3);
    SELECT round(avg((t->>2)::int), 2), round(avg((t->>1)::int), 1), max((t->>1)::int)
    INTO active_sessions_avg, connections_avg, connections_max
    FROM jsonb_array_elements(tk) t
    WHERE (t->>0)::timestamptz >= active_begin AND (t->>0)::timestamptz < active_end;
    SELECT round(avg((t->>1)::int), 1), max((t->>1)::int) INTO idle_connections_avg, idle_connections_max
    FROM jsonb_array_elements(tk) t
    WHERE (t->>0)::timestamptz < active_begin;
    IF idle_connections_avg IS NULL THEN
        SELECT round(avg((t->>1)::int), 1), max((t->>1)::int) INTO idle_connections_avg, idle_connections_max
        FROM jsonb_array_elements(tk) t WHERE (t->>0)::timestamptz >= active_end;
    END IF;
END
$$;

/*
 * DB CPU % of the host (folio_perf_cpu's total row) over the sampler
 * intervals of a window whose midpoints lie in [p_from, p_to): the DB CPU
 * of the active span, or of the idle time before it.  NULL without CPU figures.
 */
CREATE FUNCTION folio_perf_data.db_cpu_pct_between(p_window bigint, p_from timestamptz, p_to timestamptz)
RETURNS numeric
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH w AS (SELECT * FROM folio_perf_data.sample_window(p_window)),
    iv AS (
        SELECT i.* FROM folio_perf_data.sample_interval i, w
        WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1
          AND i.target_id IS NOT DISTINCT FROM w.target_id AND i.cpu_ticks > 0
          AND i.started_at + (i.ended_at - i.started_at) / 2 >= p_from
          AND i.started_at + (i.ended_at - i.started_at) / 2 < p_to)
    SELECT round(100.0 * (SELECT sum(u.ms) FROM iv, unnest(iv.u_series, iv.u_ms) AS u(s, ms)
                          JOIN folio_perf_data.sample_series ss ON ss.series_id = u.s
                          WHERE ss.dimension = 'total')
                 / nullif((SELECT sum(iv.host_total_ms) FROM iv), 0), 1)
$$;

/*
 * window_headline(window, idle_window): a window's headline figures as
 * one jsonb object, for the verdicts, folio_perf_check and the series of
 * windows (#28).  Wall-clock figures (over the whole window) and, beside
 * them, the same over the active span (active_span(): *_active), so that
 * the idle time around a test does not move a rate.  The idle baseline of
 * connections and DB CPU: idle_window's figures when one is given (a
 * window tagged as a baseline, taken with nothing running), else the
 * connections held before the load began.  Keys:
 *   window_id, label, tags, wall_s, active_begin, active_end, active_s,
 *   idle_before_s, idle_after_s, span_note,
 *   db_time_ms, statement_calls, statements_per_s, statements_per_s_active,
 *   commits, commits_per_s, commits_per_s_active,
 *   db_load_avg, db_load_active, db_cpu_pct, db_cpu_pct_active,
 *   connections_avg, connections_max, connections_avg_active,
 *   idle_baseline ("window N", "before the load", "after the load" or
 *   NULL), idle_connections_avg, idle_connections_max,
 *   connections_max_over_idle, idle_db_cpu_pct, db_cpu_pct_over_idle,
 *   operations [{tenant, operation, count, per_minute, per_minute_active,
 *   db_time_per_op_ms}], top_statements (the 5 with the most time:
 *   queryid, tenant, module, calls, total_exec_ms, mean_exec_ms,
 *   pct_of_total_time, query).
 */
CREATE FUNCTION folio_perf_data.window_headline(p_window bigint, p_idle_window bigint DEFAULT NULL)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w record;
    sp record;
    summ record;
    conn record;
    cpu numeric;
    cpu_act numeric;
    load numeric;
    idle jsonb;
    ops jsonb;
    top jsonb;
    act_s numeric;
    idle_src text;
    idle_avg numeric;
    idle_max numeric;
    idle_cpu numeric;
    n_calls numeric;
BEGIN
    SELECT * INTO w FROM @extschema@.folio_perf_windows x WHERE x.window_id = p_window;
    IF NOT FOUND THEN
        PERFORM folio_perf_data.window_bounds(p_window);
    END IF;
    sp := folio_perf_data.active_span(p_window);
    SELECT * INTO summ FROM @extschema@.folio_perf_db_summary(p_window);
    SELECT c.avg, c.max INTO conn FROM @extschema@.folio_perf_connections(p_window) c
    WHERE c.dimension = 'total' LIMIT 1;
    SELECT c.pct_of_host_capacity INTO cpu FROM @extschema@.folio_perf_cpu(p_window) c
    WHERE c.dimension = 'total' LIMIT 1;
    SELECT l.aas INTO load FROM @extschema@.folio_perf_db_load(p_window) l
    WHERE l.dimension = 'total' LIMIT 1;
    IF sp.active_begin IS NOT NULL THEN
        cpu_act := folio_perf_data.db_cpu_pct_between(p_window, sp.active_begin, sp.active_end);
    END IF;
    act_s := nullif(sp.active_s, 0);
    SELECT coalesce(sum(d.calls), 0) INTO n_calls
    FROM folio_perf_data.window_bounds(p_window) wb
    CROSS JOIN LATERAL folio_perf_data.stmt_delta(wb.begin_snap, wb.end_snap) d
    JOIN folio_perf_data.stmt_key k ON k.key_id = d.key_id
    WHERE k.toplevel AND NOT k.housekeeping;
    SELECT coalesce(jsonb_agg(jsonb_build_object('tenant', o.tenant, 'operation', o.operation,
               'count', o.count, 'per_minute', o.per_minute,
               'per_minute_active', round(o.count / (act_s / 60), 2),
               'db_time_per_op_ms', round(o.db_time_per_op_ms::numeric, 3))
               ORDER BY o.tenant COLLATE "C", o.operation COLLATE "C"), '[]')
    INTO ops FROM @extschema@.folio_perf_operations(p_window) o;
    SELECT coalesce(jsonb_agg(jsonb_build_object('queryid', t.queryid, 'tenant', t.tenant, 'module', t.module,
               'calls', t.calls, 'total_exec_ms', t.total_exec_ms, 'mean_exec_ms', t.mean_exec_ms,
               'pct_of_total_time', t.pct_of_total_time, 'query', t.query) ORDER BY t.rank), '[]')
    INTO top FROM @extschema@.folio_perf_top_statements(p_window, 5) t;
    -- the idle baseline
    IF p_idle_window IS NOT NULL THEN
        idle := folio_perf_data.window_headline(p_idle_window);
        idle_src := 'window ' || p_idle_window;
        idle_avg := (idle->>'connections_avg')::numeric;
        idle_max := (idle->>'connections_max')::numeric;
        idle_cpu := (idle->>'db_cpu_pct')::numeric;
    ELSIF sp.idle_connections_avg IS NOT NULL AND sp.active_begin IS NOT NULL THEN
        idle_src := CASE WHEN sp.idle_before_s > 0.5 THEN 'before the load' ELSE 'after the load' END;
        idle_avg := sp.idle_connections_avg;
        idle_max := sp.idle_connections_max;
        IF sp.idle_before_s > 0.5 THEN
            idle_cpu := folio_perf_data.db_cpu_pct_between(p_window, w.begin_at, sp.active_begin);
        END IF;
    END IF;
    RETURN jsonb_build_object(
        'window_id', p_window, 'label', w.label, 'tags', w.tags,
        'wall_s', sp.wall_s, 'active_begin', sp.active_begin, 'active_end', sp.active_end,
        'active_s', sp.active_s, 'idle_before_s', sp.idle_before_s, 'idle_after_s', sp.idle_after_s,
        'span_note', sp.note,
        'db_time_ms', round(summ.statements_total_ms::numeric, 3),
        'statement_calls', n_calls,
        'statements_per_s', round(n_calls / nullif(sp.wall_s, 0), 1),
        'statements_per_s_active', round(n_calls / act_s, 1),
        'commits', summ.commits, 'commits_per_s', summ.commits_per_s,
        'commits_per_s_active', round(summ.commits / act_s, 2),
        'db_load_avg', load,
        -- the load of the whole window fell inside the span
        'db_load_active', round(load * sp.wall_s / act_s, 3),
        'db_cpu_pct', cpu, 'db_cpu_pct_active', cpu_act,
        'connections_avg', conn.avg, 'connections_max', conn.max,
        'connections_avg_active', sp.connections_avg,
        'idle_baseline', idle_src, 'idle_connections_avg', idle_avg, 'idle_connections_max', idle_max,
        'connections_max_over_idle', conn.max - idle_avg,
        'idle_db_cpu_pct', idle_cpu, 'db_cpu_pct_over_idle', coalesce(cpu_act, cpu) - idle_cpu,
        'operations', ops, 'top_statements', top);
END
$$;

/*
 * The report's "active_span" member: active_span() of the window and its
 * rates over the wall clock and over the active span side by side, from
 * the report's summary (summ: folio_perf_db_summary plus the sampler's
 * figures), with the idle baseline of connections and DB CPU (the time
 * before the load).
 */
CREATE FUNCTION folio_perf_data.active_span_doc(p_window bigint, summ jsonb)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sp record := folio_perf_data.active_span(p_window);
    a numeric := nullif(sp.active_s, 0);
    w numeric := nullif(sp.wall_s, 0);
    idle_cpu numeric;
    act_cpu numeric;
    rows jsonb;
BEGIN
    IF sp.active_begin IS NULL THEN
        RETURN jsonb_build_object('note', coalesce(sp.note, 'no workload found'), 'rows', '[]'::jsonb);
    END IF;
    act_cpu := folio_perf_data.db_cpu_pct_between(p_window, sp.active_begin, sp.active_end);
    IF sp.idle_before_s > 0.5 THEN
        idle_cpu := folio_perf_data.db_cpu_pct_between(p_window, sp.active_begin - sp.idle_before_s * interval '1 second',
                                                       sp.active_begin);
    END IF;
    rows := jsonb_build_array(
        jsonb_build_object('metric', 'Duration, s', 'wall', sp.wall_s, 'active', sp.active_s),
        jsonb_build_object('metric', 'Statements/s', 'wall', summ->'statements_per_s',
                           'active', round((summ->>'statement_calls')::numeric / a, 1)),
        jsonb_build_object('metric', 'Commits/s', 'wall', summ->'commits_per_s',
                           'active', round((summ->>'commits')::numeric / a, 2)),
        jsonb_build_object('metric', 'DB load avg, AAS', 'wall', summ->'db_load_avg',
                           'active', round((summ->>'db_load_avg')::numeric * w / a, 3)),
        jsonb_build_object('metric', 'DB CPU, %', 'wall', summ->'db_cpu_pct', 'active', act_cpu,
                           'idle', idle_cpu, 'over_idle', act_cpu - idle_cpu),
        jsonb_build_object('metric', 'Connections avg', 'wall', summ->'connections_avg', 'active', sp.connections_avg,
                           'idle', sp.idle_connections_avg, 'over_idle', sp.connections_avg - sp.idle_connections_avg),
        jsonb_build_object('metric', 'Connections max', 'wall', summ->'connections_max', 'active', sp.connections_max,
                           'idle', sp.idle_connections_max,
                           'over_idle', (summ->>'connections_max')::numeric - sp.idle_connections_avg));
    RETURN jsonb_build_object('active_begin', sp.active_begin, 'active_end', sp.active_end,
        'active_s', sp.active_s, 'idle_before_s', sp.idle_before_s, 'idle_after_s', sp.idle_after_s,
        'busy_level', sp.busy_level, 'rows', rows,
        'note', format('The workload ran from %s to %s (%s s of %s s: %s s idle before, %s s after; a tick is busy at %s or more active sessions or 2 connections above the idle pool). '
                       || 'Active: the rate over that span; idle: before the load (the idle baseline); over idle: active minus idle. '
                       || 'FOLIO operations show their per-minute rates over it too.',
                       to_char(sp.active_begin, 'HH24:MI:SS.MS'), to_char(sp.active_end, 'HH24:MI:SS.MS'),
                       sp.active_s, sp.wall_s, sp.idle_before_s, sp.idle_after_s, sp.busy_level));
END
$$;

-- The report's "Active span" section from the document's active_span member.
CREATE FUNCTION folio_perf_data.active_span_section(doc jsonb)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT folio_perf_data.section('Active span: rates over the workload',
               ARRAY['metric', 'wall', 'active', 'idle', 'over_idle'],
               doc#>'{active_span,rows}', doc#>>'{active_span,note}')
           || jsonb_build_object('id', 'active-span', 'right', '["wall", "active", "idle", "over_idle"]'::jsonb,
                                 'labels', '["Metric", "Wall clock", "Active span", "Idle (before the load)", "Over idle"]'::jsonb)
$$;

-- A p-value as findings quote it: 0.034, or 1.2e-07 below 0.001.
CREATE FUNCTION folio_perf_data.fmt_p(p double precision)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN p IS NULL THEN NULL
                WHEN p >= 0.001 THEN round(p::numeric, 3)::text
                WHEN p = 0 THEN '0'
                ELSE btrim(to_char(p, '9.9EEEE')) END
$$;
