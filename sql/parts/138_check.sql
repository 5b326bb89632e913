/* sql/parts/138_check.sql - the regression gate: folio_perf_check, folio_perf_check_junit, and the compare verdict built from the same checks */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

------------------------------------------------------------------------
--
-- check_rows(base, new, rules) runs every check once and is what
-- folio_perf_check, folio_perf_check_junit and folio_perf_compare's
-- verdict and colours read.  Checks (check_name):
--
--   statement_mean_time   per statement of both windows: significance()
--                         (136_findings.sql); rows for the top_n
--                         statements of either window and every
--                         significant one
--   plan_change           a top_n statement whose slowest plan has
--                         another shape: regression if its mean time rose
--                         significantly, else info; both plans in detail
--   new_top_statement     a statement among the new window's top_n that
--                         did not run in the base window: info
--   db_time_per_operation per tenant and operation of both windows, the
--                         DB time of its own flow per operation
--                         (137_operation_cost.sql): +-operation_pct
--   data_import_duration_per_job  per tenant, profile and file, the mean
--                         duration of a completed job: +-data_import_pct
--   db_cpu_pct            DB CPU % of the host over the active span:
--                         +-db_cpu_points percentage points
--   connections_max       the most connections: +connections_pct and
--                         +connections_min
--   seq_scan_per_call     a statement whose slowest plan scans a table of
--                         large_table_rows or more sequentially, with
--                         seq_scans_per_call or more of that table's
--                         sequential scans per call: regression where the
--                         base window's plan did not, else info
--   calls_per_operation   a statement of an operation's flow running
--                         calls_per_operation times or more per operation
--                         (N+1): regression where it did not in the base
--                         window, else info
--   temp_blocks_per_call  a statement writing temp_blocks_per_call temp
--                         blocks or more per call: regression where it did
--                         not in the base window, else info
--   lock_waits            a module with lock_wait_aas or more average
--                         sessions waiting on locks: regression where it
--                         had fewer in the base window, else info
--
-- impact_ms: the DB time a row's change cost (positive) or saved, where it
-- is DB time (statements, operations), else NULL.  Findings (the rows not
-- 'pass') are ordered regressions first, then by the size of the impact
-- (rows without one after those with), then by check and subject.
------------------------------------------------------------------------

/*
 * stmt_groups(window): the window's top-level statements (housekeeping
 * left out) grouped as folio_perf_compare matches them (normalised text,
 * tenant, module): calls, total and mean time, the pooled population
 * standard deviation of execution time, temp blocks written, rank by
 * total time, rows; query as the caller may see it (one of the group's
 * texts, or '<insufficient privilege>' if the caller may not see them
 * all).  folio_perf_compare_rows joins the two windows' groups.
 */
CREATE FUNCTION folio_perf_data.stmt_groups(p_window bigint)
RETURNS TABLE(h text, tenant text, module text, query text, calls bigint,
    total_ms double precision, mean_ms double precision, sd_ms double precision,
    temp_blks_written bigint, rank bigint, rows numeric)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record := folio_perf_data.window_bounds(p_window);
BEGIN
    -- once per transaction and user (window_cache): a compare asks ten times
    RETURN QUERY EXECUTE folio_perf_data.window_cache('stmt_groups', wb.begin_snap, wb.end_snap)
        USING wb.begin_snap, wb.end_snap;
END
$$;

-- stmt_groups() of the window from snapshot p_begin to p_end
CREATE FUNCTION folio_perf_data.stmt_groups_compute(p_begin bigint, p_end bigint)
RETURNS TABLE(h text, tenant text, module text, query text, calls bigint,
    total_ms double precision, mean_ms double precision, sd_ms double precision,
    temp_blks_written bigint, rank bigint, rows numeric)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN QUERY
    WITH s AS (
        SELECT coalesce(t.text_md5::text, k.queryid::text) AS h, k.tenant, k.module, t.query AS q,
               d.calls, d.total_exec_time AS tt, coalesce(d.stddev_exec_time, 0) AS sd,
               d.temp_blks_written AS tw, d.rows AS r
        FROM folio_perf_data.stmt_delta(p_begin, p_end) d
        JOIN folio_perf_data.stmt_key k ON k.key_id = d.key_id
        LEFT JOIN folio_perf_data.stmt_text t ON t.key_id = k.key_id
        WHERE d.calls > 0 AND NOT k.housekeeping AND k.toplevel
    ), g AS (
        SELECT s.h, s.tenant, s.module,
               CASE WHEN bool_and(s.q IS DISTINCT FROM '<insufficient privilege>') THEN min(s.q)
                    ELSE '<insufficient privilege>' END AS q,
               sum(s.calls)::bigint AS n, sum(s.tt) AS tt,
               -- pooled: E[x^2] - E[x]^2 over the entries' calls
               sum(s.calls * (s.sd ^ 2 + (s.tt / s.calls) ^ 2)) AS sq,
               sum(s.tw)::bigint AS tw, sum(s.r) AS r
        FROM s GROUP BY s.h, s.tenant, s.module
    )
    SELECT g.h, g.tenant, g.module, g.q, g.n, g.tt, g.tt / g.n,
           sqrt(greatest(g.sq / g.n - (g.tt / g.n) ^ 2, 0)), g.tw,
           row_number() OVER (ORDER BY g.tt DESC, g.h), g.r
    FROM g;
END
$$;

-- A statement as findings name it: tenant/module and the start of its text.
CREATE FUNCTION folio_perf_data.stmt_subject(tenant text, module text, query text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(tenant, '-') || '/' || coalesce(module, '(unattributed)') || ' '
           || coalesce(folio_perf_data.sql_start(query, 60), '(no text)')
$$;

/*
 * server_figures(window): what the server checks compare, the subset of
 * window_headline() they need (without its operations and top
 * statements): db_cpu_pct (the window), db_cpu_pct_active (its active
 * span), idle_db_cpu_pct, connections_max, idle_connections_avg.
 */
CREATE FUNCTION folio_perf_data.server_figures(p_window bigint)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sp record := folio_perf_data.active_span(p_window);
    cpu numeric;
    conn_max numeric;
    t0 timestamptz;
BEGIN
    SELECT c.pct_of_host_capacity INTO cpu FROM @extschema@.folio_perf_cpu(p_window) c
    WHERE c.dimension = 'total' LIMIT 1;
    SELECT c.max INTO conn_max FROM @extschema@.folio_perf_connections(p_window) c
    WHERE c.dimension = 'total' LIMIT 1;
    SELECT b.taken_at INTO t0 FROM folio_perf_data.window w
    JOIN folio_perf_data.snapshot b ON b.snap_id = w.begin_snap WHERE w.window_id = p_window;
    RETURN jsonb_build_object('db_cpu_pct', cpu,
        'db_cpu_pct_active', CASE WHEN sp.active_begin IS NOT NULL
                                  THEN folio_perf_data.db_cpu_pct_between(p_window, sp.active_begin, sp.active_end) END,
        'idle_db_cpu_pct', CASE WHEN sp.idle_before_s > 0.5
                                THEN folio_perf_data.db_cpu_pct_between(p_window, t0, sp.active_begin) END,
        'connections_max', conn_max,
        'idle_connections_avg', CASE WHEN sp.active_begin IS NOT NULL THEN sp.idle_connections_avg END);
END
$$;

/*
 * check_rows(base_window, new_window, rules): every check's rows (see the
 * top of this file), with what folio_perf_check shows and what the
 * verdicts and colours need: tenant, module, key (a statement's key as
 * folio_perf_compare_rows has it), impact_ms, finding (a sentence),
 * detail (jsonb: plans, figures).
 */
CREATE FUNCTION folio_perf_data.check_rows(base_window bigint, new_window bigint, rules jsonb DEFAULT '{}')
RETURNS TABLE(check_name text, subject text, base_value numeric, new_value numeric,
    change numeric, change_pct numeric, threshold text, verdict text,
    impact_ms numeric, finding text, tenant text, module text, key text, detail jsonb)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET work_mem = '64MB'
AS $$
DECLARE
    r jsonb := folio_perf_data.check_rules(rules);
    top_n int := (r->>'top_n')::int;
    b_db numeric;
    n_db numeric;
    hb jsonb;
    hn jsonb;
    bj record;
    nj record;
    bw record;
    nw record;
BEGIN
    bw := folio_perf_data.window_bounds(base_window);
    nw := folio_perf_data.window_bounds(new_window);
    -- ---------------- statements
    RETURN QUERY
    WITH b AS (SELECT * FROM folio_perf_data.stmt_groups(base_window)),
         n AS (SELECT * FROM folio_perf_data.stmt_groups(new_window)),
         tot AS (SELECT (SELECT coalesce(sum(b.total_ms), 0) FROM b) AS bdb,
                        (SELECT coalesce(sum(n.total_ms), 0) FROM n) AS ndb),
         j AS (SELECT b.h, coalesce(n.tenant, b.tenant) AS tenant, coalesce(n.module, b.module) AS module,
                      coalesce(n.query, b.query) AS query,
                      b.calls AS bc, b.mean_ms AS bm, b.sd_ms AS bs, b.rank AS brank,
                      n.calls AS nc, n.mean_ms AS nm, n.sd_ms AS ns, n.rank AS nrank
               FROM b JOIN n ON n.h = b.h AND n.tenant IS NOT DISTINCT FROM b.tenant
                            AND n.module IS NOT DISTINCT FROM b.module),
         fam AS (SELECT greatest(count(*), 1) AS m FROM j),
         sg AS (SELECT j.*, s.*, tot.bdb
                FROM j, tot, fam,
                LATERAL folio_perf_data.significance(j.bc, j.bm::numeric, j.bs::numeric, j.nc, j.nm::numeric,
                                                     j.ns::numeric, tot.bdb::numeric,
                                                     rules || jsonb_build_object('family_size', fam.m)) s)
    SELECT 'statement_mean_time'::text, folio_perf_data.stmt_subject(sg.tenant, sg.module, sg.query),
           round(sg.bm::numeric, 3), round(sg.nm::numeric, 3), round((sg.nm - sg.bm)::numeric, 3),
           round(sg.change_pct::numeric, 1),
           format('Welch p < %s / %s statements (run-to-run noise %s %%), change >= %s %% and >= %s ms a call, impact >= %s ms', r->>'alpha',
                  (SELECT fam.m FROM fam), r->>'run_noise_pct', r->>'min_change_pct', r->>'min_change_ms',
                  folio_perf_data.fmt_sig(sg.floor_ms::numeric)),
           -- fewer than 2 calls in a window: not tested, nothing to report
           CASE WHEN sg.verdict = 'info' THEN 'pass' ELSE sg.verdict END, round(sg.impact_ms::numeric, 3),
           CASE sg.verdict
               WHEN 'regression' THEN format('Statement %s is %sx slower: mean %s ms -> %s ms over %s calls (p = %s); %s ms more DB time, %s %% of the base window''s.',
                   folio_perf_data.stmt_subject(sg.tenant, sg.module, sg.query),
                   folio_perf_data.fmt_sig((sg.nm / nullif(sg.bm, 0))::numeric),
                   folio_perf_data.fmt_sig(sg.bm::numeric), folio_perf_data.fmt_sig(sg.nm::numeric), sg.nc,
                   folio_perf_data.fmt_p(sg.p_value), folio_perf_data.fmt_sig(sg.impact_ms::numeric),
                   folio_perf_data.fmt_sig((100 * sg.impact_ms / nullif(sg.bdb, 0))::numeric))
               WHEN 'improvement' THEN format('Statement %s is faster: mean %s ms -> %s ms over %s calls (p = %s); %s ms less DB time.',
                   folio_perf_data.stmt_subject(sg.tenant, sg.module, sg.query),
                   folio_perf_data.fmt_sig(sg.bm::numeric), folio_perf_data.fmt_sig(sg.nm::numeric), sg.nc,
                   folio_perf_data.fmt_p(sg.p_value), folio_perf_data.fmt_sig(-sg.impact_ms::numeric))
               ELSE format('Statement %s: mean %s ms -> %s ms%s.', folio_perf_data.stmt_subject(sg.tenant, sg.module, sg.query),
                   folio_perf_data.fmt_sig(sg.bm::numeric), folio_perf_data.fmt_sig(sg.nm::numeric),
                   CASE WHEN sg.verdict = 'info' THEN ' (fewer than 2 calls in a window: not tested)'
                        ELSE format(', p = %s, impact %s ms', folio_perf_data.fmt_p(sg.p_value),
                                    folio_perf_data.fmt_sig(sg.impact_ms::numeric)) END) END,
           sg.tenant, sg.module, left(sg.h, 12),
           jsonb_build_object('calls_base', sg.bc, 'calls_new', sg.nc, 'stddev_ms_base', round(sg.bs::numeric, 3),
                              'stddev_ms_new', round(sg.ns::numeric, 3), 't', round(sg.t::numeric, 3),
                              'df', round(sg.df::numeric, 1), 'p_value', sg.p_value, 'floor_ms', round(sg.floor_ms::numeric, 3),
                              'query', sg.query)
    FROM sg
    WHERE sg.brank <= top_n OR sg.nrank <= top_n OR sg.verdict IN ('regression', 'improvement');

    -- ---------------- statements new among the top
    RETURN QUERY
    WITH b AS (SELECT * FROM folio_perf_data.stmt_groups(base_window)),
         n AS (SELECT * FROM folio_perf_data.stmt_groups(new_window)),
         tot AS (SELECT coalesce(sum(n.total_ms), 0) AS ndb FROM n)
    SELECT 'new_top_statement'::text, folio_perf_data.stmt_subject(n.tenant, n.module, n.query),
           NULL::numeric, round(n.total_ms::numeric, 3), NULL::numeric, NULL::numeric,
           format('among the top %s by total time, not in the base window', top_n), 'info'::text,
           round(n.total_ms::numeric, 3),
           format('Statement %s is new among the top %s: %s ms in %s calls, %s %% of the DB time.',
                  folio_perf_data.stmt_subject(n.tenant, n.module, n.query), top_n,
                  folio_perf_data.fmt_sig(n.total_ms::numeric), n.calls,
                  folio_perf_data.fmt_sig((100 * n.total_ms / nullif(tot.ndb, 0))::numeric)),
           n.tenant, n.module, left(n.h, 12),
           jsonb_build_object('calls_new', n.calls, 'mean_ms_new', round(n.mean_ms::numeric, 3), 'query', n.query)
    FROM n, tot
    WHERE n.rank <= top_n
      AND NOT EXISTS (SELECT FROM b WHERE b.h = n.h AND b.tenant IS NOT DISTINCT FROM n.tenant
                                      AND b.module IS NOT DISTINCT FROM n.module);

    -- ---------------- plan changes of top statements, and sequential
    -- scans of large tables per call
    RETURN QUERY
    WITH b AS (SELECT * FROM folio_perf_data.stmt_groups(base_window)),
         n AS (SELECT * FROM folio_perf_data.stmt_groups(new_window)),
         tot AS (SELECT coalesce(sum(b.total_ms), 0) AS bdb FROM b),
         pb AS (SELECT * FROM folio_perf_data.plan_groups(base_window) x WHERE x.toplevel),
         pn AS (SELECT * FROM folio_perf_data.plan_groups(new_window) x WHERE x.toplevel),
         fam AS (SELECT greatest(count(*), 1) AS m FROM b JOIN n ON n.h = b.h AND n.tenant IS NOT DISTINCT FROM b.tenant
                                                            AND n.module IS NOT DISTINCT FROM b.module),
         j AS (SELECT n.*, pb.outline AS b_outline, pn.outline AS n_outline,
                      pb.fingerprint AS bf, pn.fingerprint AS nf, b.calls AS bc, b.mean_ms AS bm, b.sd_ms AS bs,
                      b.rank AS brank
               FROM n
               JOIN pn ON pn.h = n.h AND pn.tenant IS NOT DISTINCT FROM n.tenant AND pn.module IS NOT DISTINCT FROM n.module
               LEFT JOIN b ON b.h = n.h AND b.tenant IS NOT DISTINCT FROM n.tenant AND b.module IS NOT DISTINCT FROM n.module
               LEFT JOIN pb ON pb.h = n.h AND pb.tenant IS NOT DISTINCT FROM n.tenant AND pb.module IS NOT DISTINCT FROM n.module)
    SELECT 'plan_change'::text, folio_perf_data.stmt_subject(j.tenant, j.module, j.query),
           round(j.bm::numeric, 3), round(j.mean_ms::numeric, 3), round((j.mean_ms - j.bm)::numeric, 3),
           round((100 * (j.mean_ms - j.bm) / nullif(j.bm, 0))::numeric, 1),
           format('the slowest plan''s shape, for the top %s statements', top_n),
           CASE WHEN s.verdict = 'regression' THEN 'regression' ELSE 'info' END,
           round(s.impact_ms::numeric, 3),
           format('The plan of statement %s changed: %s -> %s; mean %s ms -> %s ms.',
                  folio_perf_data.stmt_subject(j.tenant, j.module, j.query), j.b_outline, j.n_outline,
                  folio_perf_data.fmt_sig(j.bm::numeric), folio_perf_data.fmt_sig(j.mean_ms::numeric)),
           j.tenant, j.module, left(j.h, 12),
           jsonb_build_object('base_plan', j.b_outline, 'new_plan', j.n_outline, 'query', j.query)
    FROM j, tot, fam,
    LATERAL folio_perf_data.significance(j.bc, j.bm::numeric, j.bs::numeric, j.calls, j.mean_ms::numeric,
                                         j.sd_ms::numeric, tot.bdb::numeric,
                                         rules || jsonb_build_object('family_size', fam.m)) s
    WHERE j.bf IS NOT NULL AND j.nf IS NOT NULL AND j.bf <> j.nf AND (j.rank <= top_n OR j.brank <= top_n);

    RETURN QUERY
    WITH n AS (SELECT * FROM folio_perf_data.stmt_groups(new_window)),
         pb AS (SELECT * FROM folio_perf_data.plan_groups(base_window) x WHERE x.toplevel),
         pn AS (SELECT * FROM folio_perf_data.plan_groups(new_window) x WHERE x.toplevel),
         -- the tables of the new window by tenant and name: rows at the
         -- end, sequential scans in the window
         rel AS (SELECT t.tenant, t.relname, sum(t.seq) AS seq, max(t.live) AS live
                 FROM folio_perf_data.table_sums(nw.begin_snap, nw.end_snap) t GROUP BY 1, 2),
         relb AS (SELECT t.tenant, t.relname, sum(t.seq) AS seq
                  FROM folio_perf_data.table_sums(bw.begin_snap, bw.end_snap) t GROUP BY 1, 2),
         sc AS (SELECT n.*, m[1] AS relname, pb.outline AS b_outline, pn.outline AS n_outline
                FROM n
                JOIN pn ON pn.h = n.h AND pn.tenant IS NOT DISTINCT FROM n.tenant AND pn.module IS NOT DISTINCT FROM n.module
                LEFT JOIN pb ON pb.h = n.h AND pb.tenant IS NOT DISTINCT FROM n.tenant AND pb.module IS NOT DISTINCT FROM n.module
                CROSS JOIN LATERAL (SELECT DISTINCT x.m FROM regexp_matches(pn.outline, 'Seq Scan on ([A-Za-z0-9_$"]+)', 'g') AS x(m)) y(m))
    SELECT 'seq_scan_per_call'::text, folio_perf_data.stmt_subject(sc.tenant, sc.module, sc.query) || ' on ' || sc.relname,
           round(relb.seq::numeric / nullif(sc.calls, 0), 2), round(rel.seq::numeric / sc.calls, 2), NULL::numeric, NULL::numeric,
           format('a sequential scan per call (>= %s) of a table of >= %s rows', r->>'seq_scans_per_call', r->>'large_table_rows'),
           CASE WHEN sc.b_outline IS NOT NULL AND sc.b_outline ~ ('Seq Scan on ' || sc.relname || '( |$)') THEN 'info'
                ELSE 'regression' END,
           round(sc.total_ms::numeric, 3),
           format('Statement %s scans %s.%s (%s rows) sequentially: %s sequential scans of it for %s calls, %s per call. A missing index?',
                  folio_perf_data.stmt_subject(sc.tenant, sc.module, sc.query), coalesce(sc.tenant, '-'), sc.relname, rel.live,
                  rel.seq, sc.calls, round(rel.seq::numeric / sc.calls, 2)),
           sc.tenant, sc.module, left(sc.h, 12),
           jsonb_build_object('relation', sc.relname, 'live_rows', rel.live, 'seq_scans', rel.seq, 'calls', sc.calls,
                              'plan', sc.n_outline, 'base_plan', sc.b_outline, 'query', sc.query)
    FROM sc
    JOIN rel ON rel.tenant IS NOT DISTINCT FROM sc.tenant AND rel.relname = sc.relname
    LEFT JOIN relb ON relb.tenant IS NOT DISTINCT FROM sc.tenant AND relb.relname = sc.relname
    WHERE rel.live >= (r->>'large_table_rows')::numeric
      AND rel.seq::numeric / sc.calls >= (r->>'seq_scans_per_call')::numeric;

    -- ---------------- temp blocks per call
    RETURN QUERY
    WITH b AS (SELECT * FROM folio_perf_data.stmt_groups(base_window)),
         n AS (SELECT * FROM folio_perf_data.stmt_groups(new_window))
    SELECT 'temp_blocks_per_call'::text, folio_perf_data.stmt_subject(n.tenant, n.module, n.query),
           round(b.temp_blks_written::numeric / nullif(b.calls, 0), 1), round(n.temp_blks_written::numeric / n.calls, 1),
           NULL::numeric, NULL::numeric, format('>= %s temp blocks written per call', r->>'temp_blocks_per_call'),
           CASE WHEN coalesce(b.temp_blks_written::numeric / nullif(b.calls, 0), 0) >= (r->>'temp_blocks_per_call')::numeric
                THEN 'info' ELSE 'regression' END,
           round(n.total_ms::numeric, 3),
           format('Statement %s writes %s temp blocks per call (%s calls): a sort or hash spilling to disk (work_mem).',
                  folio_perf_data.stmt_subject(n.tenant, n.module, n.query),
                  round(n.temp_blks_written::numeric / n.calls, 1), n.calls),
           n.tenant, n.module, left(n.h, 12), jsonb_build_object('query', n.query)
    FROM n LEFT JOIN b ON b.h = n.h AND b.tenant IS NOT DISTINCT FROM n.tenant AND b.module IS NOT DISTINCT FROM n.module
    WHERE n.temp_blks_written::numeric / n.calls >= (r->>'temp_blocks_per_call')::numeric
      AND n.temp_blks_written > 0;

    -- ---------------- operations
    bj := folio_perf_data.di_jobs_json(base_window);
    nj := folio_perf_data.di_jobs_json(new_window);
    RETURN QUERY
    WITH b AS (SELECT * FROM folio_perf_data.operations_of(base_window, bj.jobs, bj.err)),
         n AS (SELECT * FROM folio_perf_data.operations_of(new_window, nj.jobs, nj.err)),
         j AS (SELECT n.tenant, n.operation, b.db_time_per_op_ms AS bt, n.db_time_per_op_ms AS nt,
                      n.count AS nc, b.count AS bc, b.db_time_per_op_se_ms AS bse, n.db_time_per_op_se_ms AS nse
               FROM b JOIN n ON n.tenant = b.tenant AND n.operation = b.operation),
         tot AS (SELECT coalesce(sum(g.total_ms), 0) AS bdb FROM folio_perf_data.stmt_groups(base_window) g),
         -- the significance rule, with the standard error of DB time per
         -- operation as a sample's sd / sqrt(n) (welch(): sd^2 n / (n - 1) / n
         -- = se^2 for sd^2 = se^2 (n - 1)) and operation_pct as the change
         fam AS (SELECT greatest(count(*), 1) AS m FROM j),
         v AS (SELECT j.*, 100 * (j.nt - j.bt) / nullif(j.bt, 0) AS pct, s.verdict AS sv, s.p_value
               FROM j, tot, fam,
               LATERAL folio_perf_data.significance(j.bc, j.bt::numeric, (j.bse * sqrt(greatest(j.bc - 1, 0)))::numeric,
                   j.nc, j.nt::numeric, (j.nse * sqrt(greatest(j.nc - 1, 0)))::numeric, tot.bdb::numeric,
                   rules || jsonb_build_object('min_change_pct', r->'operation_pct', 'family_size', fam.m)) s)
    SELECT 'db_time_per_operation'::text, v.tenant || ' ' || v.operation,
           round(v.bt::numeric, 3), round(v.nt::numeric, 3), round((v.nt - v.bt)::numeric, 3), round(v.pct::numeric, 1),
           format('Welch p < %s (run-to-run noise %s %%), change >= %s %% and >= %s ms (DB time of its own flow per operation), impact >= %s %% of DB time',
                  r->>'alpha', r->>'run_noise_pct', r->>'operation_pct', r->>'min_change_ms', r->>'min_impact_pct'),
           CASE WHEN v.sv IN ('regression', 'improvement') THEN v.sv ELSE 'pass' END,
           round(((v.nt - v.bt) * v.nc)::numeric, 3),
           format('DB time per %s in tenant %s %s by %s %% (%s ms -> %s ms, its own statements; %s and %s operations; p = %s).',
                  v.operation, v.tenant, CASE WHEN v.nt >= v.bt THEN 'rose' ELSE 'fell' END, abs(round(v.pct::numeric)),
                  folio_perf_data.fmt_sig(v.bt::numeric), folio_perf_data.fmt_sig(v.nt::numeric), v.bc, v.nc,
                  coalesce(folio_perf_data.fmt_p(v.p_value), 'untestable')),
           v.tenant, v.operation, NULL::text,
           jsonb_build_object('count_base', v.bc, 'count_new', v.nc, 'se_ms_base', round(v.bse::numeric, 4),
                              'se_ms_new', round(v.nse::numeric, 4), 'p_value', v.p_value)
    FROM v;

    -- the calls of a flow's statement per operation (N+1)
    RETURN QUERY
    WITH n AS (SELECT * FROM folio_perf_data.operations_of(new_window, nj.jobs, nj.err)),
         b AS (SELECT * FROM folio_perf_data.operations_of(base_window, bj.jobs, bj.err)),
         sg AS MATERIALIZED (SELECT * FROM folio_perf_data.stmt_groups(new_window)),
         -- one text per statement group (its key) found by one hash join,
         -- and the flows of all of them matched in one call: not a search
         -- of every key for every statement (quadratic: 25 s for a 24-hour
         -- window of 5,000 statements)
         kh AS MATERIALIZED (
                SELECT DISTINCT ON (x.h) x.h, x.text_id
                FROM (SELECT coalesce(t.text_md5::text, k.queryid::text) AS h, k.text_id, k.key_id
                      FROM folio_perf_data.stmt_key k
                      JOIN folio_perf_data.stmt_text t ON t.key_id = k.key_id) x
                WHERE x.h IN (SELECT sg.h FROM sg)
                ORDER BY x.h, x.key_id),
         fm AS MATERIALIZED (
                SELECT * FROM folio_perf_data.flow_matches((SELECT array_agg(kh.text_id) FROM kh))),
         sn AS (SELECT s.*, m.operation, op.count AS opc
                FROM sg s
                JOIN kh ON kh.h = s.h
                JOIN fm m ON m.text_id = kh.text_id AND m.module IS NOT DISTINCT FROM s.module
                JOIN n op ON op.tenant = s.tenant AND op.operation = m.operation
                WHERE s.calls::numeric / op.count >= (r->>'calls_per_operation')::numeric),
         sb AS (SELECT s.* FROM folio_perf_data.stmt_groups(base_window) s)
    SELECT 'calls_per_operation'::text, sn.operation || ': ' || folio_perf_data.stmt_subject(sn.tenant, sn.module, sn.query),
           round(sb.calls::numeric / nullif(bo.count, 0), 1), round(sn.calls::numeric / sn.opc, 1), NULL::numeric, NULL::numeric,
           format('>= %s calls per operation (N+1)', r->>'calls_per_operation'),
           CASE WHEN sb.calls::numeric / nullif(bo.count, 0) >= (r->>'calls_per_operation')::numeric THEN 'info'
                ELSE 'regression' END,
           round(sn.total_ms::numeric, 3),
           format('Statement %s runs %s times per %s (%s calls for %s operations): N+1 calls?',
                  folio_perf_data.stmt_subject(sn.tenant, sn.module, sn.query), round(sn.calls::numeric / sn.opc, 1),
                  sn.operation, sn.calls, sn.opc),
           sn.tenant, sn.module, left(sn.h, 12), jsonb_build_object('operation', sn.operation, 'query', sn.query)
    FROM sn
    LEFT JOIN sb ON sb.h = sn.h AND sb.tenant IS NOT DISTINCT FROM sn.tenant AND sb.module IS NOT DISTINCT FROM sn.module
    LEFT JOIN b bo ON bo.tenant = sn.tenant AND bo.operation = sn.operation;

    -- data-import jobs: the mean duration of a job per tenant, profile and
    -- file; with 2 jobs or more in both windows Welch's test on the jobs'
    -- durations must agree (a duration is no DB time: no impact floor)
    RETURN QUERY
    WITH jb AS (SELECT * FROM folio_perf_data.di_job_groups(bj.jobs)),
         jn AS (SELECT * FROM folio_perf_data.di_job_groups(nj.jobs)),
         v AS (SELECT jn.*, jb.jobs AS bjobs, jb.duration_avg_s AS bavg, jb.duration_sd_s AS bsd,
                      100 * (jn.duration_avg_s - jb.duration_avg_s) / nullif(jb.duration_avg_s, 0) AS pct,
                      folio_perf_data.welch(jb.jobs, jb.duration_avg_s, jb.duration_sd_s,
                                            jn.jobs, jn.duration_avg_s, jn.duration_sd_s) AS w
               FROM jn JOIN jb ON jb.tenant = jn.tenant AND jb.job_profile IS NOT DISTINCT FROM jn.job_profile
                              AND jb.file_name IS NOT DISTINCT FROM jn.file_name)
    SELECT 'data_import_duration_per_job'::text,
           v.tenant || ' ' || coalesce(v.job_profile, '') || ' | ' || coalesce(v.file_name, ''),
           v.bavg, v.duration_avg_s, v.duration_avg_s - v.bavg, round(v.pct, 1),
           format('+-%s %% (mean duration of a job), and Welch p < %s with 2 jobs or more in both', r->>'data_import_pct', r->>'alpha'),
           CASE WHEN (v.w).p_value IS NOT NULL AND (v.w).p_value >= (r->>'alpha')::numeric THEN 'pass'
                WHEN v.pct >= (r->>'data_import_pct')::numeric THEN 'regression'
                WHEN v.pct <= -(r->>'data_import_pct')::numeric THEN 'improvement' ELSE 'pass' END,
           NULL::numeric,
           format('Data import %s | %s in tenant %s: %s s per job -> %s s (%s and %s jobs), %s%s %%.',
                  coalesce(v.job_profile, ''), coalesce(v.file_name, ''), v.tenant,
                  folio_perf_data.fmt_sig(v.bavg), folio_perf_data.fmt_sig(v.duration_avg_s),
                  v.bjobs, v.jobs, CASE WHEN v.pct > 0 THEN '+' ELSE '' END, round(v.pct, 1)),
           v.tenant, 'mod_source_record_manager'::text, NULL::text,
           jsonb_build_object('jobs_base', v.bjobs, 'jobs_new', v.jobs, 'records_new', v.records,
                              'p_value', (v.w).p_value)
    FROM v;

    -- ---------------- the server: DB CPU, connections, lock waits
    hb := folio_perf_data.server_figures(base_window);
    hn := folio_perf_data.server_figures(new_window);
    RETURN QUERY
    SELECT 'db_cpu_pct'::text, 'DB CPU % of the host'::text,
           coalesce((hb->>'db_cpu_pct_active')::numeric, (hb->>'db_cpu_pct')::numeric),
           coalesce((hn->>'db_cpu_pct_active')::numeric, (hn->>'db_cpu_pct')::numeric),
           coalesce((hn->>'db_cpu_pct_active')::numeric, (hn->>'db_cpu_pct')::numeric)
             - coalesce((hb->>'db_cpu_pct_active')::numeric, (hb->>'db_cpu_pct')::numeric),
           NULL::numeric,
           format('+-%s percentage points (over the active span)', r->>'db_cpu_points'),
           CASE WHEN x.d >= (r->>'db_cpu_points')::numeric THEN 'regression'
                WHEN x.d <= -(r->>'db_cpu_points')::numeric THEN 'improvement' ELSE 'pass' END,
           NULL::numeric,
           format('DB CPU %s %% -> %s %% of the host over the active span%s.',
                  coalesce((hb->>'db_cpu_pct_active')::numeric, (hb->>'db_cpu_pct')::numeric),
                  coalesce((hn->>'db_cpu_pct_active')::numeric, (hn->>'db_cpu_pct')::numeric),
                  CASE WHEN hb->>'idle_db_cpu_pct' IS NOT NULL AND hn->>'idle_db_cpu_pct' IS NOT NULL
                       THEN format(' (idle baseline %s %% -> %s %%)', hb->>'idle_db_cpu_pct', hn->>'idle_db_cpu_pct') ELSE '' END),
           NULL::text, NULL::text, NULL::text,
           jsonb_build_object('wall_base', hb->'db_cpu_pct', 'wall_new', hn->'db_cpu_pct')
    FROM (SELECT coalesce((hn->>'db_cpu_pct_active')::numeric, (hn->>'db_cpu_pct')::numeric)
                 - coalesce((hb->>'db_cpu_pct_active')::numeric, (hb->>'db_cpu_pct')::numeric) AS d) x
    WHERE x.d IS NOT NULL;
    RETURN QUERY
    SELECT 'connections_max'::text, 'connections, max'::text,
           (hb->>'connections_max')::numeric, (hn->>'connections_max')::numeric,
           (hn->>'connections_max')::numeric - (hb->>'connections_max')::numeric,
           round(100 * ((hn->>'connections_max')::numeric - (hb->>'connections_max')::numeric)
                 / nullif((hb->>'connections_max')::numeric, 0), 1),
           format('+%s %% and +%s connections', r->>'connections_pct', r->>'connections_min'),
           CASE WHEN (hn->>'connections_max')::numeric - (hb->>'connections_max')::numeric >= (r->>'connections_min')::numeric
                 AND (hn->>'connections_max')::numeric >= (1 + (r->>'connections_pct')::numeric / 100) * (hb->>'connections_max')::numeric
                THEN 'regression' ELSE 'pass' END,
           NULL::numeric,
           format('Connections max %s -> %s%s.', hb->>'connections_max', hn->>'connections_max',
                  CASE WHEN hb->>'idle_connections_avg' IS NOT NULL AND hn->>'idle_connections_avg' IS NOT NULL
                       THEN format(' against an idle baseline of %s -> %s', hb->>'idle_connections_avg', hn->>'idle_connections_avg')
                       ELSE '' END),
           NULL::text, NULL::text, NULL::text,
           jsonb_build_object('idle_base', hb->'idle_connections_avg', 'idle_new', hn->'idle_connections_avg')
    WHERE hb->>'connections_max' IS NOT NULL AND hn->>'connections_max' IS NOT NULL;
    RETURN QUERY EXECUTE $q$
    WITH lb AS (SELECT l.module, sum(l.aas) AS aas FROM @extschema@.folio_perf_db_load($1) l
                WHERE l.dimension = 'statement_wait_event' AND l.key LIKE 'Lock%' GROUP BY 1),
         ln AS (SELECT l.module, sum(l.aas) AS aas FROM @extschema@.folio_perf_db_load($2) l
                WHERE l.dimension = 'statement_wait_event' AND l.key LIKE 'Lock%' GROUP BY 1)
    SELECT 'lock_waits'::text, 'module ' || coalesce(ln.module, '(unattributed)'),
           coalesce(lb.aas, 0), ln.aas, ln.aas - coalesce(lb.aas, 0), NULL::numeric,
           format('>= %s average sessions waiting on locks', $3->>'lock_wait_aas'),
           CASE WHEN coalesce(lb.aas, 0) >= ($3->>'lock_wait_aas')::numeric THEN 'info' ELSE 'regression' END,
           NULL::numeric,
           format('Module %s waited on locks: %s average sessions (base %s).', coalesce(ln.module, '(unattributed)'),
                  ln.aas, coalesce(lb.aas, 0)),
           NULL::text, ln.module, NULL::text, '{}'::jsonb
    FROM ln LEFT JOIN lb ON lb.module IS NOT DISTINCT FROM ln.module
    WHERE ln.aas >= ($3->>'lock_wait_aas')::numeric
    $q$ USING base_window, new_window, r;
END
$$;

/*
 * di_job_groups(jobs): completed data-import jobs (a jsonb array of
 * folio_perf_data_import_jobs rows) grouped per tenant, profile and file
 * as the seeds tabulate them: jobs, records, duration per job (mean, 95th
 * percentile, max, population standard deviation, in seconds) and
 * records per minute (all records over all the jobs' time).
 */
CREATE FUNCTION folio_perf_data.di_job_groups(jobs jsonb)
RETURNS TABLE(tenant text, job_profile text, file_name text, jobs bigint, records bigint,
    duration_avg_s numeric, duration_p95_s numeric, duration_max_s numeric, records_per_minute numeric,
    duration_sd_s numeric)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT x->>'tenant', x->>'job_profile', x->>'file_name', count(*),
           sum((x->>'records')::bigint)::bigint,
           round(avg(extract(epoch FROM (x->>'duration')::interval)), 3),
           round(percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM (x->>'duration')::interval))::numeric, 3),
           round(max(extract(epoch FROM (x->>'duration')::interval)), 3),
           round(sum((x->>'records')::numeric) / nullif(sum(extract(epoch FROM (x->>'duration')::interval)) / 60, 0), 1),
           round(stddev_pop(extract(epoch FROM (x->>'duration')::interval)), 3)
    FROM jsonb_array_elements(coalesce(jobs, '[]')) x
    WHERE x->>'duration' IS NOT NULL
    GROUP BY 1, 2, 3
    ORDER BY 1, 2, 3
$$;

/*
 * folio_perf_check(base_window, new_window, rules): the regression gate,
 * one row per check (check_rows()).
 */
CREATE FUNCTION folio_perf_check(base_window bigint, new_window bigint, rules jsonb DEFAULT '{}')
RETURNS TABLE(check_name text, subject text, base_value numeric, new_value numeric,
    change numeric, change_pct numeric, threshold text, verdict text, impact_ms numeric, finding text)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT c.check_name, c.subject, c.base_value, c.new_value, c.change, c.change_pct, c.threshold,
           c.verdict, c.impact_ms, c.finding
    FROM folio_perf_data.check_rows(base_window, new_window, rules) c
    ORDER BY (c.verdict = 'regression') DESC, (c.verdict = 'pass'), abs(c.impact_ms) DESC NULLS LAST,
             c.check_name, c.subject
$$;

-- Text as XML 1.0 character data or an attribute value: the five
-- special characters escaped, characters XML 1.0 does not allow dropped.
CREATE FUNCTION folio_perf_data.xml_text(s text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT replace(replace(replace(replace(replace(
               regexp_replace(s, '[\x01-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]', '', 'g'),
               '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&apos;')
$$;

/*
 * folio_perf_check_junit(base_window, new_window, rules): folio_perf_check
 * as a JUnit XML report for CI servers (Jenkins' junit step): one
 * <testsuite> with one <testcase> per check row (classname
 * folio_perf.<check>, name the subject), a <failure> per regression, the
 * finding of every other row as its <system-out>.
 */
CREATE FUNCTION folio_perf_check_junit(base_window bigint, new_window bigint, rules jsonb DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n int;
    f int;
    body text;
    suite text;
BEGIN
    SELECT count(*), count(*) FILTER (WHERE c.verdict = 'regression'),
           coalesce(string_agg(format(E'    <testcase classname="folio_perf.%s" name="%s" time="0">\n%s    </testcase>\n',
                   folio_perf_data.xml_text(c.check_name), folio_perf_data.xml_text(c.subject),
                   CASE WHEN c.verdict = 'regression'
                        THEN format(E'      <failure type="regression" message="%s">%s&#10;base %s, new %s, change %s%s; threshold: %s</failure>\n',
                                    folio_perf_data.xml_text(c.finding), folio_perf_data.xml_text(c.finding),
                                    coalesce(c.base_value::text, 'none'), coalesce(c.new_value::text, 'none'),
                                    coalesce(c.change::text, '-'), coalesce(' (' || c.change_pct || ' %)', ''),
                                    folio_perf_data.xml_text(c.threshold))
                        ELSE format(E'      <system-out>%s: %s</system-out>\n', c.verdict, folio_perf_data.xml_text(c.finding)) END),
                   '' ORDER BY c.ord), '')
    INTO n, f, body
    FROM (SELECT x.*, row_number() OVER () AS ord
          FROM @extschema@.folio_perf_check(base_window, new_window, rules) x) c;
    suite := format('folio_perf_check: %s vs %s', folio_perf_data.window_name(base_window),
                    folio_perf_data.window_name(new_window));
    RETURN E'<?xml version="1.0" encoding="UTF-8"?>\n'
        || format(E'<testsuites name="folio_perf" tests="%s" failures="%s" errors="0">\n', n, f)
        || format(E'  <testsuite name="%s" tests="%s" failures="%s" errors="0" skipped="0" time="0" timestamp="%s">\n',
                  folio_perf_data.xml_text(suite), n, f,
                  to_char(timezone('UTC', pg_catalog.clock_timestamp()), 'YYYY-MM-DD"T"HH24:MI:SS'))
        || format(E'    <properties>\n      <property name="base_window" value="%s"/>\n      <property name="new_window" value="%s"/>\n      <property name="rules" value="%s"/>\n    </properties>\n',
                  base_window, new_window, folio_perf_data.xml_text(folio_perf_data.check_rules(rules)::text))
        || body
        || E'  </testsuite>\n</testsuites>\n';
END
$$;

/*
 * The compare verdict from check rows (a jsonb array of check_rows()
 * rows): the findings (rows not 'pass') in folio_perf_check's order, at
 * most max_findings of them (all with every_finding), as verdict rows
 * {severity, check, finding, impact_ms}.
 */
CREATE FUNCTION folio_perf_data.check_verdict(chk jsonb, max_findings int, every_finding boolean DEFAULT false)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(jsonb_agg(jsonb_build_object('severity', x.c->>'verdict', 'check', x.c->>'check_name',
               'finding', x.c->>'finding', 'impact_ms', x.c->'impact_ms') ORDER BY x.o), '[]')
    FROM (SELECT c, row_number() OVER (ORDER BY (c->>'verdict' = 'regression') DESC,
                                               abs((c->>'impact_ms')::numeric) DESC NULLS LAST,
                                               c->>'check_name', c->>'subject') AS o
          FROM jsonb_array_elements(chk) c
          WHERE c->>'verdict' <> 'pass') x
    WHERE every_finding OR x.o <= max_findings
$$;

/*
 * module_significance(base_window, new_window, rules): per tenant and
 * module, whether its statement time changed significantly: the
 * significance rule on the module's total time, its variance the sum of
 * its statements' (calls times the window's variance of execution time;
 * calls taken as independent), the relative change and impact floors as
 * for statements.  What colours the compare's module cells.
 */
CREATE FUNCTION folio_perf_data.module_significance(base_window bigint, new_window bigint, rules jsonb DEFAULT '{}')
RETURNS TABLE(tenant text, module text, base_ms double precision, new_ms double precision,
    p_value double precision, verdict text)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    -- (tenant and module matched with NULLs equal, as IS NOT DISTINCT
    -- FROM would, but as equalities that hash: IS NOT DISTINCT FROM on both
    -- was a nested loop over every module)
    WITH b AS (SELECT g.tenant, g.module, g.tenant IS NULL AS tn, coalesce(g.tenant, '') AS tk,
                      g.module IS NULL AS mn, coalesce(g.module, '') AS mk, sum(g.total_ms) AS t,
                      sum(g.calls * g.sd_ms ^ 2) AS v, sum(g.calls) AS n
               FROM folio_perf_data.stmt_groups(base_window) g GROUP BY 1, 2),
         n AS (SELECT g.tenant, g.module, g.tenant IS NULL AS tn, coalesce(g.tenant, '') AS tk,
                      g.module IS NULL AS mn, coalesce(g.module, '') AS mk, sum(g.total_ms) AS t,
                      sum(g.calls * g.sd_ms ^ 2) AS v, sum(g.calls) AS n
               FROM folio_perf_data.stmt_groups(new_window) g GROUP BY 1, 2),
         -- once (inlined, the planner put the sum over every module
         -- inside the join's loop: quadratic in the modules, 0.4 s at 1,174)
         tot AS MATERIALIZED (SELECT coalesce(sum(b.t), 0) AS bdb,
                        (SELECT greatest(count(*), 1) FROM b JOIN n ON n.tn = b.tn AND n.tk = b.tk
                                                               AND n.mn = b.mn AND n.mk = b.mk) AS m FROM b)
    -- a total as a "mean of one sample" with standard error sqrt(v):
    -- welch() with n calls and sd sqrt(v (n - 1)) / n scaled by n
    SELECT b.tenant, b.module, b.t, n.t, s.p_value, s.verdict
    FROM b JOIN n ON n.tn = b.tn AND n.tk = b.tk AND n.mn = b.mn AND n.mk = b.mk, tot,
    LATERAL folio_perf_data.significance(least(b.n, n.n)::bigint, (b.t / least(b.n, n.n))::numeric,
        (sqrt(b.v * greatest(least(b.n, n.n) - 1, 0)) / least(b.n, n.n))::numeric,
        least(b.n, n.n)::bigint, (n.t / least(b.n, n.n))::numeric,
        (sqrt(n.v * greatest(least(b.n, n.n) - 1, 0)) / least(b.n, n.n))::numeric,
        tot.bdb::numeric, rules || jsonb_build_object('family_size', tot.m)) s
$$;
