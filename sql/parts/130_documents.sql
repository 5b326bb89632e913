/* sql/parts/130_documents.sql - documents: folio_perf_report, folio_perf_compare, folio_perf_trend */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

/*
 * The host's CPU count as the sampler saw it, else NULL.
 */
CREATE FUNCTION folio_perf_data.host_cpus(t0 timestamptz, t1 timestamptz, p_target int DEFAULT NULL)
RETURNS int
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n int;
BEGIN
    IF pg_catalog.to_regclass('folio_perf_data.sample_interval') IS NULL THEN
        RETURN NULL;
    END IF;
    EXECUTE 'SELECT max(i.host_ncpu) FROM folio_perf_data.sample_interval i
             WHERE i.ended_at > $1 AND i.ended_at <= $2
               AND i.target_id IS NOT DISTINCT FROM $3' INTO n USING t0, t1, p_target;
    RETURN n;
END
$$;

/*
 * Statements, per module and per table activity per part of a window cut at
 * the snapshots nearest to equal time steps.
 */
-- folio_perf_trend's work; with_modules = false leaves out the per-module
-- rows, which need the relations' differences of every part (the report
-- uses only the statements).
CREATE FUNCTION folio_perf_data.trend(window_id bigint, parts int, with_modules boolean)
RETURNS TABLE(part int, part_begin timestamptz, part_end timestamptz,
    kind text, queryid bigint, tenant text, module text, calls bigint,
    total_exec_ms double precision, mean_exec_ms double precision,
    inserts bigint, updates bigint, deletes bigint, query text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
    b folio_perf_data.snapshot;
    cuts bigint[];
    n_inside int;
    i int;
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
    IF parts IS NULL OR parts < 2 OR parts > 100 THEN
        RAISE EXCEPTION 'parts must be between 2 and 100, not %', coalesce(parts::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'parts is the number of equal time slices, e.g. 2 for the two halves of a soak test.';
    END IF;
    SELECT * INTO b FROM folio_perf_data.snapshot s WHERE s.snap_id = wb.begin_snap;
    SELECT count(*) INTO n_inside FROM folio_perf_data.snapshot s
    WHERE s.dbid = b.dbid AND s.target_id IS NOT DISTINCT FROM b.target_id
      AND s.snap_id > wb.begin_snap AND s.snap_id < wb.end_snap;
    IF n_inside < parts - 1 THEN
        RAISE EXCEPTION 'window % has % snapshots inside it; % parts need at least %',
                        window_id, n_inside, parts, parts - 1
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Set folio_perf.snapshot_interval (timed snapshots) or call folio_perf_snapshot() during long tests.';
    END IF;
    -- cut points: for each inner step the snapshot nearest to it in time
    cuts := ARRAY[wb.begin_snap];
    FOR i IN 1..parts - 1 LOOP
        cuts := cuts || (
            SELECT s.snap_id FROM folio_perf_data.snapshot s
            WHERE s.dbid = b.dbid AND s.target_id IS NOT DISTINCT FROM b.target_id
              AND s.snap_id > cuts[i] AND s.snap_id < wb.end_snap
              -- leave at least one snapshot for each cut still to make
              AND (SELECT count(*) FROM folio_perf_data.snapshot s2
                   WHERE s2.dbid = b.dbid AND s2.target_id IS NOT DISTINCT FROM b.target_id
                     AND s2.snap_id > s.snap_id AND s2.snap_id < wb.end_snap) >= parts - 1 - i
            ORDER BY abs(extract(epoch FROM s.taken_at - (wb.begin_at + (wb.end_at - wb.begin_at) * i / parts))),
                     s.snap_id
            LIMIT 1);
        IF cuts[i + 1] IS NULL THEN
            RAISE EXCEPTION 'window % has too few snapshots inside it for % parts', window_id, parts
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Ask for fewer parts, or take more snapshots during the test.';
        END IF;
    END LOOP;
    cuts := cuts || wb.end_snap;

    FOR i IN 1..parts LOOP
        RETURN QUERY
        SELECT i, sb.taken_at, se.taken_at, 'statement'::text, k.queryid, k.tenant, k.module,
               d.calls, d.total_exec_time, d.total_exec_time / nullif(d.calls, 0),
               NULL::bigint, NULL::bigint, NULL::bigint,
               t.query
        FROM folio_perf_data.stmt_delta(cuts[i], cuts[i + 1]) d
        JOIN folio_perf_data.stmt_key k ON k.key_id = d.key_id
        LEFT JOIN folio_perf_data.stmt_text t ON t.key_id = k.key_id
        JOIN folio_perf_data.snapshot sb ON sb.snap_id = cuts[i]
        JOIN folio_perf_data.snapshot se ON se.snap_id = cuts[i + 1]
        WHERE d.calls > 0 AND k.toplevel AND NOT k.housekeeping;
        CONTINUE WHEN NOT with_modules;
        RETURN QUERY
        SELECT i, sb.taken_at, se.taken_at, 'module'::text, NULL::bigint, r.tenant, r.module,
               NULL::bigint, NULL::double precision, NULL::double precision,
               sum(r.inserts)::bigint, sum(r.updates)::bigint, sum(r.deletes)::bigint, NULL::text
        FROM folio_perf_data.table_rows(cuts[i], cuts[i + 1]) r
        JOIN folio_perf_data.snapshot sb ON sb.snap_id = cuts[i]
        JOIN folio_perf_data.snapshot se ON se.snap_id = cuts[i + 1]
        WHERE r.module IS NOT NULL
        GROUP BY sb.taken_at, se.taken_at, r.tenant, r.module;
    END LOOP;
END
$$;

CREATE FUNCTION folio_perf_trend(window_id bigint, parts int DEFAULT 2)
RETURNS TABLE(part int, part_begin timestamptz, part_end timestamptz,
    kind text, queryid bigint, tenant text, module text, calls bigint,
    total_exec_ms double precision, mean_exec_ms double precision,
    inserts bigint, updates bigint, deletes bigint, query text)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT * FROM folio_perf_data.trend(window_id, parts, true) $$;

/*
 * The whole window as one jsonb document (format_version 1).
 */
CREATE FUNCTION folio_perf_data.report_doc(p_window bigint)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
    w folio_perf_data.window;
    b folio_perf_data.snapshot;
    e folio_perf_data.snapshot;
    doc jsonb;
    summ jsonb;
    sampler_note text;
    conn jsonb := '[]';
    load jsonb := '[]';
    cpu jsonb := '[]';
    ts_conn jsonb := '[]';
    ts_load jsonb := '[]';
    ts_conn_mod jsonb := '[]';
    ts_cpu jsonb := '[]';
    ts_cpu_mod jsonb := '[]';
    stmt_waits jsonb := '[]';
    n_calls numeric;
    verdict jsonb := '[]';
    flags jsonb;
    ncpu int;
    tot_conn jsonb;
    tot_load jsonb;
    host_cpu jsonb;
    trend jsonb := '[]';
    trend_note text;
    trend_c1 numeric;
    trend_c2 numeric;
    top_cols text[] := ARRAY['rank', 'tenant', 'module', 'calls', 'total_exec_ms',
        'mean_exec_ms', 'rows', 'pct_of_total_time', 'shared_blks_read', 'status', 'query'];
BEGIN
    wb := folio_perf_data.window_bounds(p_window);
    SELECT * INTO w FROM folio_perf_data.window x WHERE x.window_id = p_window;
    SELECT * INTO b FROM folio_perf_data.snapshot s WHERE s.snap_id = wb.begin_snap;
    SELECT * INTO e FROM folio_perf_data.snapshot s WHERE s.snap_id = wb.end_snap;

    SELECT coalesce(jsonb_agg(to_jsonb(f)), '[]') INTO flags
    FROM @extschema@.folio_perf_window_flags(p_window) f;

    SELECT to_jsonb(s) INTO summ FROM @extschema@.folio_perf_db_summary(p_window) s;

    -- sampler sections
    EXECUTE 'SELECT coalesce(jsonb_agg(to_jsonb(c)), ''[]'') FROM @extschema@.folio_perf_connections($1) c'
        INTO conn USING p_window;
    EXECUTE 'SELECT coalesce(jsonb_agg(to_jsonb(c)), ''[]'') FROM @extschema@.folio_perf_db_load($1) c'
        INTO load USING p_window;
    EXECUTE 'SELECT coalesce(jsonb_agg(to_jsonb(c)), ''[]'') FROM @extschema@.folio_perf_cpu($1) c'
        INTO cpu USING p_window;
    SELECT r->>'key' INTO sampler_note FROM jsonb_array_elements(conn) r
    WHERE r->>'dimension' = 'sampler' LIMIT 1;
    IF sampler_note IS NULL OR sampler_note NOT LIKE 'off%' THEN
        EXECUTE 'SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY t.bucket, t.series), ''[]'')
                 FROM @extschema@.folio_perf_timeseries($1, ''connections'') t'
            INTO ts_conn USING p_window;
        EXECUTE 'SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY t.bucket, t.series), ''[]'')
                 FROM @extschema@.folio_perf_timeseries($1, ''db_load_by_wait_event_type'') t'
            INTO ts_load USING p_window;
        EXECUTE 'SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY t.bucket, t.series), ''[]'')
                 FROM @extschema@.folio_perf_timeseries($1, ''connections_by_module'') t'
            INTO ts_conn_mod USING p_window;
        EXECUTE 'SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY t.bucket, t.series), ''[]'')
                 FROM @extschema@.folio_perf_timeseries($1, ''cpu'') t WHERE t.bucket IS NOT NULL'
            INTO ts_cpu USING p_window;
        EXECUTE 'SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY t.bucket, t.series), ''[]'')
                 FROM @extschema@.folio_perf_timeseries($1, ''cpu_by_module'') t WHERE t.bucket IS NOT NULL'
            INTO ts_cpu_mod USING p_window;
    END IF;
    IF sampler_note LIKE 'off%(%' THEN
        -- the sampler said why; say what it is for and where to look
        sampler_note := sampler_note || '. Connections over time, DB load and DB CPU come from the sampler; '
            || 'folio_perf_sampler_status shows its state.';
    ELSIF sampler_note LIKE 'off%' THEN
        sampler_note := sampler_note || '. Connections over time, DB load and DB CPU need the sampler: '
            || 'add folio_perf to shared_preload_libraries, set folio_perf.sample_interval (ms) '
            || 'and folio_perf.database to this database, then restart.';
    END IF;
    SELECT r INTO tot_conn FROM jsonb_array_elements(conn) r WHERE r->>'dimension' = 'total' LIMIT 1;
    SELECT r INTO tot_load FROM jsonb_array_elements(load) r WHERE r->>'dimension' = 'total' LIMIT 1;
    SELECT r INTO host_cpu FROM jsonb_array_elements(cpu) r WHERE r->>'dimension' = 'host' LIMIT 1;
    ncpu := folio_perf_data.host_cpus(wb.begin_at, wb.end_at, b.target_id);

    SELECT coalesce(sum(d.calls), 0) INTO n_calls
    FROM folio_perf_data.stmt_delta(wb.begin_snap, wb.end_snap) d
    JOIN folio_perf_data.stmt_key k ON k.key_id = d.key_id
    WHERE k.toplevel AND NOT k.housekeeping;

    -- DB load of the statements with the most load, split by wait event
    SELECT coalesce(jsonb_agg(jsonb_build_object('queryid', x.queryid, 'tenant', x.tenant,
               'module', x.module, 'wait_event', x.wait_event, 'aas', x.aas,
               'pct_of_statement_load', round(100 * x.aas / nullif(x.stmt_aas, 0), 1),
               'statement_aas', x.stmt_aas, 'query', x.query)
               ORDER BY x.stmt_aas DESC, x.queryid, x.aas DESC, x.wait_event), '[]')
    INTO stmt_waits
    FROM (SELECT r->>'queryid' AS queryid, r->>'tenant' AS tenant, r->>'module' AS module,
                 r->>'key' AS wait_event, (r->>'aas')::numeric AS aas, r->>'query' AS query,
                 (SELECT (t->>'aas')::numeric FROM jsonb_array_elements(load) t
                  WHERE t->>'dimension' = 'statement' AND t->>'queryid' = r->>'queryid'
                    AND t->>'tenant' IS NOT DISTINCT FROM r->>'tenant' LIMIT 1) AS stmt_aas
          FROM jsonb_array_elements(load) r
          WHERE r->>'dimension' = 'statement_wait_event'
            AND r->>'queryid' IN (SELECT t->>'queryid' FROM jsonb_array_elements(load) t
                                  WHERE t->>'dimension' = 'statement' AND (t->>'aas')::numeric > 0
                                  ORDER BY (t->>'aas')::numeric DESC LIMIT 10)) x;

    summ := summ || jsonb_build_object(
        'statement_calls', n_calls,
        'statements_per_s', round(n_calls / nullif(wb.seconds::numeric, 0), 1),
        'duration_s', round(wb.seconds::numeric, 3),
        'connections_avg', tot_conn->'avg', 'connections_p95', tot_conn->'p95',
        'connections_max', tot_conn->'max',
        'db_load_avg', tot_load->'aas', 'db_load_max', tot_load->'max',
        'cpus', ncpu,
        'host_cpu_pct', host_cpu->'pct_of_host_capacity',
        'db_cpu_pct', (SELECT r->'pct_of_host_capacity' FROM jsonb_array_elements(cpu) r
                       WHERE r->>'dimension' = 'total' LIMIT 1));

    -- trend (two halves) when snapshots inside the window allow it
    -- (read once: the statements' halves, and the halves' statements a
    -- second for the saturation check below)
    BEGIN
        WITH t AS MATERIALIZED (
            SELECT * FROM folio_perf_data.trend(p_window, 2, false) t WHERE t.kind = 'statement'
        ), x AS (
            SELECT t.queryid, t.tenant, t.module, min(t.query) AS query,
                   sum(t.calls) FILTER (WHERE t.part = 1) AS c1,
                   sum(t.calls) FILTER (WHERE t.part = 2) AS c2,
                   sum(t.total_exec_ms) FILTER (WHERE t.part = 1)
                     / nullif(sum(t.calls) FILTER (WHERE t.part = 1), 0) AS m1,
                   sum(t.total_exec_ms) FILTER (WHERE t.part = 2)
                     / nullif(sum(t.calls) FILTER (WHERE t.part = 2), 0) AS m2
            FROM t
            GROUP BY t.queryid, t.tenant, t.module
        ), rate AS (
            SELECT t.part, sum(t.calls) / extract(epoch FROM max(t.part_end) - min(t.part_begin)) AS c
            FROM t GROUP BY t.part
        )
        SELECT (SELECT coalesce(jsonb_agg(jsonb_build_object('queryid', x.queryid, 'tenant', x.tenant,
                           'module', x.module, 'first_calls', x.c1, 'last_calls', x.c2,
                           'first_mean_ms', x.m1, 'last_mean_ms', x.m2,
                           'mean_change_pct', round((100 * (x.m2 - x.m1) / nullif(x.m1, 0))::numeric, 1),
                           'query', x.query) ORDER BY x.m2 / nullif(x.m1, 0) DESC NULLS LAST), '[]')
                FROM x WHERE x.c1 >= 10 AND x.c2 >= 10),
               (SELECT sum(rate.c) FILTER (WHERE rate.part = 1) FROM rate),
               (SELECT sum(rate.c) FILTER (WHERE rate.part = 2) FROM rate)
        INTO trend, trend_c1, trend_c2;
    EXCEPTION WHEN object_not_in_prerequisite_state THEN
        trend_note := 'No snapshots inside the window: the trend (first half against second half) '
            || 'needs folio_perf.snapshot_interval or snapshots taken during the test.';
    END;

    -- verdict
    IF ncpu IS NOT NULL AND (tot_load->>'aas')::numeric > ncpu THEN
        verdict := verdict || jsonb_build_object('check', 'db_load_above_cpus', 'severity', 'warning',
            'finding', format('DB load averaged %s active sessions on %s CPUs: sessions queued for CPU or I/O.',
                              folio_perf_data.fmt_sig((tot_load->>'aas')::numeric), ncpu));
    END IF;
    IF (tot_conn->>'max')::numeric >= 0.9 * e.max_connections THEN
        verdict := verdict || jsonb_build_object('check', 'connections_near_max', 'severity', 'warning',
            'finding', format('Connections peaked at %s of max_connections %s (%s%%).',
                              tot_conn->>'max', e.max_connections,
                              round(100 * (tot_conn->>'max')::numeric / e.max_connections)));
    END IF;
    verdict := verdict || coalesce((
        SELECT jsonb_agg(jsonb_build_object('check', 'pool_limit', 'severity', 'info',
            'finding', format('%s %s held a constant %s connections (avg %s, max %s): a connection pool at its limit?',
                              r->>'dimension', r->>'key', r->>'max', r->>'avg', r->>'max')))
        FROM jsonb_array_elements(conn) r
        WHERE r->>'dimension' IN ('module', 'role') AND (r->>'max')::int >= 4
          AND (r->>'avg')::numeric >= 0.97 * (r->>'max')::numeric), '[]');
    verdict := verdict || coalesce((
        SELECT jsonb_agg(jsonb_build_object('check', 'dominant_wait', 'severity', 'warning',
            'finding', format('Wait event %s accounts for %s%% of DB load.', r->>'key', r->>'pct_of_load')))
        FROM jsonb_array_elements(load) r
        WHERE r->>'dimension' = 'wait_event' AND r->>'key' IS NOT NULL
          AND (r->>'pct_of_load')::numeric >= 50 AND (tot_load->>'aas')::numeric >= 0.5), '[]');
    verdict := verdict || coalesce((
        SELECT jsonb_agg(jsonb_build_object('check', 'mean_time_rose', 'severity', 'warning',
            'finding', format('Mean time of %s statement %s rose %s%% from the first to the second half (%s ms -> %s ms).',
                              coalesce(r->>'module', 'an unattributed'), r->>'queryid', r->>'mean_change_pct',
                              folio_perf_data.fmt_sig((r->>'first_mean_ms')::numeric),
                              folio_perf_data.fmt_sig((r->>'last_mean_ms')::numeric))))
        FROM jsonb_array_elements(trend) r
        WHERE (r->>'mean_change_pct')::numeric >= 50
          -- and it matters: the rise cost min_impact_pct of the window's
          -- DB time (folio_perf_check's floor, 136_findings.sql)
          AND ((r->>'last_mean_ms')::numeric - (r->>'first_mean_ms')::numeric) * (r->>'last_calls')::numeric
              >= (folio_perf_data.check_rules('{}')->>'min_impact_pct')::numeric / 100
                 * coalesce((summ->>'statements_total_ms')::numeric, 0)), '[]');
    -- saturation: throughput flat while load climbs (needs snapshots inside
    -- the window and the sampler)
    IF trend_note IS NULL AND jsonb_array_length(ts_load) > 0 THEN
        DECLARE
            l1 numeric; l2 numeric; c1 numeric; c2 numeric; mid timestamptz;
        BEGIN
            mid := wb.begin_at + (wb.end_at - wb.begin_at) / 2;
            SELECT sum((r->>'value')::numeric) FILTER (WHERE (r->>'bucket_start')::timestamptz < mid)
                     / nullif(count(DISTINCT r->>'bucket') FILTER (WHERE (r->>'bucket_start')::timestamptz < mid), 0),
                   sum((r->>'value')::numeric) FILTER (WHERE (r->>'bucket_start')::timestamptz >= mid)
                     / nullif(count(DISTINCT r->>'bucket') FILTER (WHERE (r->>'bucket_start')::timestamptz >= mid), 0)
            INTO l1, l2 FROM jsonb_array_elements(ts_load) r;
            c1 := trend_c1;
            c2 := trend_c2;
            IF l1 > 0 AND l2 >= 1.3 * l1 AND c1 > 0 AND c2 <= 1.1 * c1 THEN
                verdict := verdict || jsonb_build_object('check', 'saturation', 'severity', 'warning',
                    'finding', format('Throughput %s (%s -> %s statements/s) while DB load climbed (%s -> %s): a saturation point.',
                                      CASE WHEN c2 < 0.9 * c1 THEN 'fell' ELSE 'stayed flat' END,
                                      folio_perf_data.fmt_sig(c1), folio_perf_data.fmt_sig(c2),
                                      folio_perf_data.fmt_sig(l1), folio_perf_data.fmt_sig(l2)));
            END IF;
        END;
    END IF;
    IF jsonb_array_length(flags) > 0 THEN
        verdict := verdict || jsonb_build_object('check', 'data_quality', 'severity', 'info',
            'finding', CASE WHEN EXISTS (SELECT 1 FROM jsonb_array_elements(flags) f
                                         WHERE f->>'flag' = 'sampler_gap')
                            THEN 'The sampler''s samples cover part of the window only'
                                 || CASE WHEN jsonb_array_length(flags) > 1
                                         THEN '; some numbers are lower bounds or restarted counting' ELSE '' END
                                 || ': see Data quality.'
                            ELSE 'Some numbers are lower bounds or restarted counting: see Data quality.' END);
    END IF;
    IF jsonb_array_length(verdict) = 0 THEN
        verdict := jsonb_build_array(jsonb_build_object('check', 'none', 'severity', 'info',
            'finding', CASE WHEN sampler_note LIKE 'off%'
                            THEN 'Nothing stands out in the statements and tables; load, connection and CPU checks need the sampler.'
                            ELSE 'Nothing stands out: load below the CPU count, connections well below max_connections, no dominant wait.' END));
    END IF;
    -- the checks that could not run, and why
    DECLARE
        skipped text[] := '{}';
    BEGIN
        IF trend_note IS NOT NULL THEN
            skipped := array_append(skipped, 'the trend and the saturation check (no snapshot inside the window: '
                || 'set folio_perf.snapshot_interval, or take snapshots during the test)');
        END IF;
        IF sampler_note LIKE 'off%' THEN
            skipped := array_append(skipped, 'DB load, connections and DB CPU (the sampler has no samples of the window)'::text);
        ELSIF summ->>'db_cpu_pct' IS NULL THEN
            skipped := array_append(skipped, 'DB CPU (' || CASE WHEN e.target_id IS NOT NULL THEN 'the backends of a remote target cannot be read'
                                                     ELSE 'the sampler could not read the host''s CPU' END || ')');
        END IF;
        IF cardinality(skipped) > 0 THEN
            verdict := verdict || jsonb_build_object('check', 'not_checked', 'severity', 'info',
                'finding', 'Not checked: ' || array_to_string(skipped, '; ') || '.');
        END IF;
    END;

    doc := jsonb_build_object(
        'format_version', 1,
        'generated_at', pg_catalog.clock_timestamp(),
        'window', jsonb_build_object(
            'window_id', w.window_id, 'label', w.label, 'tags', w.tags,
            'begin_snap', w.begin_snap, 'end_snap', w.end_snap,
            'begin_at', b.taken_at, 'end_at', e.taken_at,
            'duration_s', round(wb.seconds::numeric, 3),
            'database', e.datname, 'server_version_num', e.server_version_num,
            'max_connections', e.max_connections, 'preloaded', e.preloaded,
            'sampler', coalesce(sampler_note, 'on'))
            -- a remote target: its name, what is sampled or estimated
            -- there and how, the evidence it cannot give (105_remote_plans)
            || CASE WHEN e.target_id IS NULL THEN '{}'::jsonb
                    ELSE folio_perf_data.remote_basis(e.target_id, b.taken_at, e.taken_at, e.server_version_num) END
            -- statement counters the server's pg_stat_statements lacks (NULL
            -- in top_statements)
            || CASE WHEN e.server_version_num < 180000 THEN jsonb_build_object(
                'not_counted', jsonb_build_array(
                    'wal_buffers_full, parallel_workers_to_launch and parallel_workers_launched of statements: '
                    || 'pg_stat_statements counts them from PostgreSQL 18 on')) ELSE '{}'::jsonb END,
        'data_quality', flags,
        'summary', summ,
        'verdict', verdict,
        -- when the workload ran, rates over it (136_findings.sql)
        'active_span', folio_perf_data.active_span_doc(p_window, summ),
        'top_statements', (SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY t.rank), '[]')
                           FROM @extschema@.folio_perf_top_statements(p_window, 20, 'total_time') t),
        'top_by_calls', (SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY t.rank), '[]')
                         FROM @extschema@.folio_perf_top_statements(p_window, 10, 'calls') t),
        'top_by_mean_time', (SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY t.rank), '[]')
                             FROM @extschema@.folio_perf_top_statements(p_window, 10, 'mean_time') t),
        'top_by_io', (SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY t.rank), '[]')
                      FROM @extschema@.folio_perf_top_statements(p_window, 10, 'io') t),
        'modules', (SELECT coalesce(jsonb_agg(to_jsonb(m)), '[]')
                    FROM @extschema@.folio_perf_module_activity(p_window) m),
        'tables', (SELECT coalesce(jsonb_agg(to_jsonb(t) ORDER BY t.rank), '[]')
                   FROM @extschema@.folio_perf_table_activity(p_window, 20) t),
        'record_counts', (
            SELECT coalesce(jsonb_agg(jsonb_build_object('tenant', x.tenant, 'entity', x.entity,
                                                         'records', x.n) ORDER BY x.tenant, x.entity), '[]')
            FROM (SELECT k.tenant, CASE k.relname WHEN 'instance' THEN 'instances'
                                                  WHEN 'holdings_record' THEN 'holdings'
                                                  WHEN 'item' THEN 'items' END AS entity,
                         sum(r.n_live_tup) AS n
                  FROM folio_perf_data.rel_key k
                  JOIN folio_perf_data.rel_at(wb.end_snap, ARRAY(
                      SELECT k2.rel_key_id FROM folio_perf_data.rel_key k2
                      WHERE k2.dbid = e.dbid AND coalesce(k2.target_id, 0) = coalesce(e.target_id, 0)
                        AND k2.module = 'mod_inventory_storage'
                        AND k2.relname IN ('instance', 'holdings_record', 'item') AND k2.relkind = 'r'))
                    r ON r.rel_key_id = k.rel_key_id
                  WHERE NOT r.gone
                  GROUP BY 1, 2) x),
        'connections', conn,
        'db_load', load,
        'cpu', cpu,
        'db_load_by_statement_wait', stmt_waits,
        'timeseries', jsonb_build_object('connections', ts_conn, 'connections_by_module', ts_conn_mod,
                                         'db_load_by_wait_event_type', ts_load,
                                         'cpu', ts_cpu, 'cpu_by_module', ts_cpu_mod),
        'trend', jsonb_build_object('note', trend_note, 'statements', trend));
    -- data-import jobs and FOLIO operations (135_operations.sql)
    doc := doc || jsonb_build_object('folio_operations', folio_perf_data.operations_doc(p_window));
    -- plans of the top statements
    doc := folio_perf_data.report_plans(doc, p_window);
    -- table health, lock waits, checkpoints, settings (138_table_health.sql)
    doc := folio_perf_data.health_report(doc, p_window);
    RETURN doc;
END
$$;


/*
 * folio_perf_report(window_id, format): the whole window as one document.
 */
CREATE FUNCTION folio_perf_report(window_id bigint, format text DEFAULT 'text', detail text DEFAULT NULL)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
-- sorts and hashes over the changes of tens of thousands of relations in
-- memory, not on disk at the default 4MB
SET work_mem = '64MB'
AS $$
DECLARE
    doc jsonb;
    secs jsonb[] := '{}';
    sec jsonb;
    out text[] := '{}';
    fmt text := folio_perf_report.format;
    title text;
    ww jsonb;
    summ jsonb;
    sampler_off boolean;
    qmap jsonb;
    nested jsonb;
    shown jsonb;
    rest jsonb;
    waits text[];
    conn_cols text[] := ARRAY['dimension', 'key', 'avg', 'p95', 'max', 'pct_of_max_connections'];
    load_cols text[] := ARRAY['dimension', 'key', 'module', 'aas', 'max', 'pct_of_load', 'query'];
    top_cols text[];
    lst text;
    ttl text;
    toc text[] := '{}';
    cards text[] := '{}';
    n_warn int;
    i int;
BEGIN
    PERFORM folio_perf_data.check_format(fmt);
    IF detail IS NOT NULL AND detail NOT IN ('summary', 'full') THEN
        RAISE EXCEPTION 'unknown report detail "%"', detail
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'detail => ''summary'' (the default of markdown: one wiki page) or ''full'' (every section).';
    ELSIF detail = 'summary' AND fmt <> 'markdown' THEN
        RAISE EXCEPTION 'detail => ''summary'' is a markdown page; format % has every section', fmt
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use format => ''markdown'' for the one-page summary, or leave detail out.';
    END IF;
    doc := folio_perf_data.report_doc(window_id);
    IF fmt = 'json' THEN
        RETURN jsonb_pretty(doc);
    ELSIF fmt = 'markdown' AND coalesce(detail, 'summary') = 'summary' THEN
        RETURN folio_perf_data.report_page_md(doc);
    END IF;
    ww := doc->'window';
    summ := doc->'summary';
    sampler_off := (ww->>'sampler') LIKE 'off%';
    title := 'folio_perf report: ' || coalesce(ww->>'label', 'window ' || (ww->>'window_id'));
    -- the exact window stddev is shown next to the mean when the top
    -- statements have it
    top_cols := ARRAY['rank', 'tenant', 'module', 'calls', 'total_exec_ms', 'mean_exec_ms']
        || CASE WHEN doc->'top_statements'->0 ? 'stddev_exec_ms' THEN ARRAY['stddev_exec_ms'] ELSE '{}' END
        || ARRAY['rows', 'pct_of_total_time', 'shared_blks_read', 'wal_bytes', 'status', 'query'];

    secs := secs || (folio_perf_data.section('Window', ARRAY['metric', 'value'], jsonb_build_array(
        jsonb_build_object('metric', 'Label', 'value', ww->'label'),
        jsonb_build_object('metric', 'Tags', 'value', (SELECT string_agg(t.key || ': ' || t.value, ', ' ORDER BY t.key)
                                                       FROM jsonb_each_text(coalesce(ww->'tags', '{}')) t)),
        jsonb_build_object('metric', 'Window', 'value', ww->>'window_id'),
        jsonb_build_object('metric', 'Begin', 'value', folio_perf_data.fmt_value(ww->'begin_at', 'time')),
        jsonb_build_object('metric', 'End', 'value', folio_perf_data.fmt_value(ww->'end_at', 'time')),
        jsonb_build_object('metric', 'Duration (hh:mm:ss)', 'value', folio_perf_data.fmt_duration((ww->>'duration_s')::numeric)),
        jsonb_build_object('metric', 'Database', 'value', ww->'database'),
        jsonb_build_object('metric', 'Server', 'value', 'PostgreSQL ' || ((ww->>'server_version_num')::int / 10000)
                                                         || '.' || ((ww->>'server_version_num')::int % 100)),
        jsonb_build_object('metric', 'max_connections', 'value', ww->>'max_connections'),
        jsonb_build_object('metric', 'Sampler', 'value', ww->'sampler'))
        || CASE WHEN ww ? 'target' THEN jsonb_build_array(
            jsonb_build_object('metric', 'Target', 'value', ww->'target'),
            jsonb_build_object('metric', 'Sampled or estimated',
                               'value', (SELECT string_agg(u, '; ') FROM jsonb_array_elements_text(ww->'sampled') u)),
            jsonb_build_object('metric', 'Unavailable',
                               'value', (SELECT string_agg(u, '; ') FROM jsonb_array_elements_text(ww->'unavailable') u)))
           ELSE '[]'::jsonb END) || '{"id": "window"}');
    secs := secs || folio_perf_data.section('Data quality', ARRAY['flag', 'detail'], doc->'data_quality',
        CASE WHEN jsonb_array_length(doc->'data_quality') = 0 THEN 'No resets, restarts, evictions or relation changes inside the window: every number is exact.' END);
    secs := secs || (folio_perf_data.section('Verdict', ARRAY['severity', 'check', 'finding'], doc->'verdict') || '{"id": "verdict"}');
    secs := secs || (folio_perf_data.kv_section('Summary', summ, ARRAY[
        'duration_s', 'statement_calls', 'statements_per_s', 'statements_total_ms',
        'commits', 'commits_per_s', 'rollbacks', 'cache_hit_ratio', 'blks_read',
        'tup_inserted', 'tup_updated', 'tup_deleted', 'temp_files', 'temp_bytes', 'deadlocks',
        'wal_bytes', 'wal_bytes_per_s', 'checkpoints_timed', 'checkpoints_req',
        'db_size_begin', 'db_size_end', 'cpus', 'host_cpu_pct', 'db_cpu_pct',
        'connections_avg', 'connections_p95', 'connections_max', 'max_connections',
        'db_load_avg', 'db_load_max']) || '{"id": "summary", "split": true}');
    IF NOT sampler_off THEN
        secs := secs || folio_perf_data.active_span_section(doc);
    END IF;
    secs := secs || folio_perf_data.operations_sections(doc);
    secs := secs || (folio_perf_data.section('Top statements by total time', top_cols, doc->'top_statements')
                     || '{"id": "top"}');
    -- the other top lists only with the statements the first one lacks
    shown := coalesce((SELECT jsonb_agg(t->'queryid') FROM jsonb_array_elements(doc->'top_statements') t), '[]');
    FOREACH lst IN ARRAY ARRAY['top_by_calls', 'top_by_mean_time', 'top_by_io'] LOOP
        ttl := CASE lst WHEN 'top_by_calls' THEN 'calls' WHEN 'top_by_mean_time' THEN 'mean time' ELSE 'I/O' END;
        SELECT jsonb_agg(t ORDER BY (t->>'rank')::int) INTO rest
        FROM jsonb_array_elements(doc->lst) t WHERE NOT shown @> jsonb_build_array(t->'queryid');
        IF rest IS NOT NULL THEN
            secs := secs || (folio_perf_data.section('Top statements by ' || ttl || ', not in the tables above',
                                                    top_cols, rest) || jsonb_build_object('id', replace(lst, '_', '-')));
            shown := shown || coalesce((SELECT jsonb_agg(t->'queryid') FROM jsonb_array_elements(rest) t), '[]');
        END IF;
    END LOOP;
    -- DB load by statement and wait event: one row per statement, one
    -- column per wait event (the five with the most load, then the rest)
    IF NOT sampler_off THEN
        waits := ARRAY(SELECT r->>'wait_event' FROM jsonb_array_elements(doc->'db_load_by_statement_wait') r
                       GROUP BY 1 ORDER BY sum((r->>'aas')::numeric) DESC, 1 LIMIT 5);
        secs := secs || (jsonb_build_object('title', 'DB load by statement and wait event (average active sessions)',
            'id', 'load-by-waits',
            'columns', to_jsonb(ARRAY['tenant', 'module', 'aas'] || ARRAY(SELECT 'w' || g.n FROM generate_subscripts(waits, 1) AS g(n))
                                || ARRAY['w_other', 'query']),
            'labels', to_jsonb(ARRAY['Tenant', 'Module', 'Load, AAS'] || waits || ARRAY['Other waits', 'Statement']),
            'rows', coalesce((
                SELECT jsonb_agg(x.o ORDER BY x.tot DESC, x.q)
                FROM (SELECT r->>'queryid' AS q, max((r->>'statement_aas')::numeric) AS tot,
                             jsonb_build_object('tenant', min(r->>'tenant'), 'module', min(r->>'module'),
                                 'aas', max((r->>'statement_aas')::numeric), 'query', min(r->>'query'),
                                 'w_other', sum((r->>'aas')::numeric) FILTER (WHERE NOT r->>'wait_event' = ANY (waits)))
                             || coalesce(jsonb_object_agg('w' || array_position(waits, r->>'wait_event'), (r->>'aas')::numeric)
                                         FILTER (WHERE r->>'wait_event' = ANY (waits)), '{}') AS o
                      FROM jsonb_array_elements(doc->'db_load_by_statement_wait') r
                      GROUP BY r->>'queryid', r->>'tenant') x), '[]'),
            'note', 'The ten statements with the most DB load; their load split by what their sessions were doing: '
                    || 'CPU (running or waiting for a CPU) or the wait event they waited on; empty: not seen on it.'));
    END IF;
    -- modules with nothing in the window (seen only by the sampler's
    -- connections, say) are left out: their row would be zeros
    secs := secs || folio_perf_data.section('Module activity (per tenant)',
        ARRAY['tenant', 'module', 'inserts', 'updates', 'deletes', 'seq_scan', 'idx_scan',
              'blks_read', 'size_end', 'growth', 'statement_calls', 'statement_time_ms', 'flags'],
        (SELECT jsonb_agg(m ORDER BY o) FROM jsonb_array_elements(doc->'modules') WITH ORDINALITY x(m, o)
         WHERE coalesce((m->>'inserts')::numeric, 0) + coalesce((m->>'updates')::numeric, 0)
               + coalesce((m->>'deletes')::numeric, 0) + coalesce((m->>'seq_scan')::numeric, 0)
               + coalesce((m->>'idx_scan')::numeric, 0) + coalesce((m->>'blks_read')::numeric, 0)
               + coalesce((m->>'statement_calls')::numeric, 0) + abs(coalesce((m->>'growth')::numeric, 0)) > 0
            OR m->>'flags' IS NOT NULL),
        CASE WHEN EXISTS (SELECT 1 FROM jsonb_array_elements(doc->'modules') m
                          WHERE coalesce((m->>'inserts')::numeric, 0) + coalesce((m->>'updates')::numeric, 0)
                                + coalesce((m->>'deletes')::numeric, 0) + coalesce((m->>'seq_scan')::numeric, 0)
                                + coalesce((m->>'idx_scan')::numeric, 0) + coalesce((m->>'blks_read')::numeric, 0)
                                + coalesce((m->>'statement_calls')::numeric, 0) + abs(coalesce((m->>'growth')::numeric, 0)) = 0
                            AND m->>'flags' IS NULL)
             THEN 'Modules with no rows written, scans, reads, growth or statements in the window are left out (folio_perf_module_activity has them).' END);
    secs := secs || folio_perf_data.section('Module activity (all tenants)',
        ARRAY['module', 'tenants', 'inserts', 'updates', 'deletes', 'seq_scan', 'idx_scan',
              'blks_read', 'size_end', 'growth', 'statement_calls', 'statement_time_ms'],
        (SELECT jsonb_agg(jsonb_build_object('module', x.module, 'tenants', x.tenants,
                    'inserts', x.ins, 'updates', x.upd, 'deletes', x.del, 'seq_scan', x.ss,
                    'idx_scan', x.isc, 'blks_read', x.br, 'size_end', x.se, 'growth', x.gr,
                    'statement_calls', x.sc, 'statement_time_ms', x.st) ORDER BY x.st DESC, x.module)
         FROM (SELECT m->>'module' AS module, count(DISTINCT m->>'tenant') AS tenants,
                      sum((m->>'inserts')::numeric) AS ins, sum((m->>'updates')::numeric) AS upd,
                      sum((m->>'deletes')::numeric) AS del, sum((m->>'seq_scan')::numeric) AS ss,
                      sum((m->>'idx_scan')::numeric) AS isc, sum((m->>'blks_read')::numeric) AS br,
                      sum((m->>'size_end')::numeric) AS se, sum((m->>'growth')::numeric) AS gr,
                      sum((m->>'statement_calls')::numeric) AS sc,
                      sum((m->>'statement_time_ms')::numeric) AS st
               FROM jsonb_array_elements(doc->'modules') m GROUP BY 1) x));
    secs := secs || folio_perf_data.section('Table activity',
        ARRAY['rank', 'tenant', 'module', 'relname', 'inserts', 'updates', 'deletes', 'seq_scan',
              'idx_scan', 'blks_read', 'size_end', 'growth', 'live_tup', 'dead_tup', 'status'],
        doc->'tables');
    secs := secs || folio_perf_data.health_sections(doc);
    secs := secs || folio_perf_data.section('Record counts (inventory)', ARRAY['tenant', 'entity', 'records'],
        doc->'record_counts', CASE WHEN jsonb_array_length(doc->'record_counts') = 0
                                   THEN 'No mod_inventory_storage instance, holdings_record or item tables.' END);
    IF sampler_off THEN
        secs := secs || folio_perf_data.section('Connections, DB load and CPU', ARRAY[]::text[], '[]', ww->>'sampler');
    ELSE
        secs := secs || folio_perf_data.section('Connections', conn_cols,
            (SELECT jsonb_agg(r) FROM jsonb_array_elements(doc->'connections') r WHERE r->>'dimension' <> 'sampler'),
            (SELECT r->>'key' FROM jsonb_array_elements(doc->'connections') r WHERE r->>'dimension' = 'sampler' LIMIT 1));
        secs := secs || folio_perf_data.section('DB load (average active sessions)', load_cols,
            (SELECT jsonb_agg(r) FROM jsonb_array_elements(doc->'db_load') r
             WHERE r->>'dimension' NOT IN ('sampler', 'statement_wait_event', 'lock_holder')));
        secs := secs || folio_perf_data.section(CASE WHEN ww ? 'target' THEN 'DB CPU (sampled)' ELSE 'CPU' END,
            ARRAY['dimension', 'key', 'cpu_seconds', 'pct_of_host_capacity', 'pct_of_db_cpu'],
            (SELECT jsonb_agg(r) FROM jsonb_array_elements(doc->'cpu') r WHERE r->>'dimension' <> 'sampler'));
    END IF;
    secs := secs || folio_perf_data.section('Trend: first half against second half',
        ARRAY['tenant', 'module', 'first_calls', 'last_calls', 'first_mean_ms', 'last_mean_ms', 'mean_change_pct', 'query'],
        doc#>'{trend,statements}', doc#>>'{trend,note}');

    -- every statement of the tables and plans gets a number
    nested := jsonb_build_object('columns', '["query"]'::jsonb,
                'rows', coalesce((SELECT jsonb_agg(n) FROM jsonb_array_elements(doc->'nested_plans') n), '[]'));
    qmap := folio_perf_data.sql_refs(secs || nested);
    -- findings name a statement by its number in the SQL appendix, not by
    -- its query id
    FOR i IN 1..array_length(secs, 1) LOOP
        CONTINUE WHEN secs[i]->>'id' IS DISTINCT FROM 'verdict';
        secs[i] := jsonb_set(secs[i], '{rows}', coalesce((
            SELECT jsonb_agg(CASE WHEN qn IS NULL THEN v
                                  ELSE jsonb_set(v, '{finding}', to_jsonb(replace(v->>'finding',
                                           'statement ' || qid, 'statement Q' || qn))) END ORDER BY o)
            FROM jsonb_array_elements(secs[i]->'rows') WITH ORDINALITY x(v, o)
            LEFT JOIN LATERAL (SELECT m[1] AS qid FROM regexp_match(v->>'finding', 'statement (-?[0-9]+)') m) y ON true
            LEFT JOIN LATERAL (
                SELECT qmap->>(t->>'query') AS qn
                FROM jsonb_array_elements(coalesce(doc#>'{trend,statements}', '[]') || (doc->'top_statements')) t
                WHERE t->>'queryid' = y.qid AND qmap ? (t->>'query') LIMIT 1) z ON true), '[]'));
    END LOOP;

    IF fmt = 'html' THEN
        n_warn := (SELECT count(*) FROM jsonb_array_elements(doc->'verdict') v WHERE v->>'severity' = 'warning');
        cards := ARRAY[
            format('<div class="card%s"><div class="k">DB load, average active sessions</div><div class="v">%s</div><div class="d">%s</div></div>',
                   CASE WHEN (summ->>'db_load_avg')::numeric > (summ->>'cpus')::numeric THEN ' warn' ELSE '' END,
                   coalesce(nullif(folio_perf_data.fmt_value(summ->'db_load_avg', 'measure'), ''), 'n/a'),
                   CASE WHEN summ->>'db_load_avg' IS NULL THEN 'needs the sampler'
                        WHEN summ->>'cpus' IS NOT NULL THEN 'on ' || (summ->>'cpus') || ' CPUs; max ' || coalesce(summ->>'db_load_max', '?') || ' sessions'
                        ELSE 'CPU count unknown' END),
            format('<div class="card"><div class="k">DB CPU</div><div class="v">%s</div><div class="d">%s</div></div>',
                   coalesce(nullif(folio_perf_data.fmt_value(summ->'db_cpu_pct', 'pct'), '') || ' %', 'n/a'),
                   coalesce('of the host; host busy ' || nullif(folio_perf_data.fmt_value(summ->'host_cpu_pct', 'pct'), '') || ' %',
                            CASE WHEN ww ? 'target' AND summ->>'db_cpu_pct' IS NOT NULL
                                 THEN 'sampled: active sessions without a wait event, of ' || (summ->>'cpus') || ' vCPUs' END,
                            'needs the sampler and /proc')),
            format('<div class="card%s"><div class="k">Connections avg / max</div><div class="v">%s / %s</div><div class="d">%sof max_connections %s</div></div>',
                   CASE WHEN (summ->>'connections_max')::numeric >= 0.9 * (ww->>'max_connections')::numeric THEN ' warn' ELSE '' END,
                   coalesce(nullif(folio_perf_data.fmt_value(summ->'connections_avg', 'measure'), ''), 'n/a'),
                   coalesce(nullif(folio_perf_data.fmt_value(summ->'connections_max', 'count'), ''), 'n/a'),
                   CASE WHEN summ->>'connections_avg' IS NULL THEN 'needs the sampler; ' ELSE '' END,
                   folio_perf_data.fmt_value(ww->'max_connections', 'count')),
            format('<div class="card"><div class="k">Statements/s</div><div class="v">%s</div><div class="d">%s calls, %s in statements</div></div>',
                   coalesce(nullif(folio_perf_data.fmt_value(summ->'statements_per_s', 'measure'), ''), 'n/a'),
                   coalesce(nullif(folio_perf_data.fmt_value(summ->'statement_calls', 'count'), ''), '0'),
                   folio_perf_data.fmt_duration((summ->>'statements_total_ms')::numeric / 1000)),
            format('<div class="card"><div class="k">WAL/s</div><div class="v">%s</div><div class="d">%s in the window</div></div>',
                   coalesce(nullif(folio_perf_data.fmt_value(summ->'wal_bytes_per_s', 'bytes_s'), ''), 'n/a'),
                   coalesce(nullif(folio_perf_data.fmt_value(summ->'wal_bytes', 'bytes'), ''), 'n/a')),
            format('<div class="card %s"><div class="k">Verdict</div><div class="v">%s</div><div class="d">%s</div></div>',
                   CASE WHEN n_warn > 0 THEN 'warn' ELSE 'ok' END,
                   CASE WHEN n_warn = 0 THEN 'OK' WHEN n_warn = 1 THEN '1 warning' ELSE n_warn || ' warnings' END,
                   folio_perf_data.html_escape(folio_perf_data.sql_start(
                       (SELECT v->>'finding' FROM jsonb_array_elements(doc->'verdict') WITH ORDINALITY x(v, o)
                        ORDER BY (v->>'severity' = 'warning') DESC, o LIMIT 1), 140)))];
        out := out || (folio_perf_data.html_head(title)
            || '<header><h1>' || folio_perf_data.html_escape(folio_perf_data.fold(title)) || '</h1>'
            || '<p class="sub">' || folio_perf_data.html_escape(folio_perf_data.fold(
                   coalesce((SELECT string_agg(t.key || ': ' || t.value, ' / ' ORDER BY t.key)
                             FROM jsonb_each_text(coalesce(ww->'tags', '{}')) t), 'no tags')))
            || '</p><dl class="meta">'
            || '<dt>Window</dt><dd>' || (ww->>'window_id') || ' (' || folio_perf_data.html_escape(folio_perf_data.fold(coalesce(ww->>'label', 'no label'))) || ')</dd>'
            || '<dt>Duration</dt><dd>' || folio_perf_data.fmt_duration((ww->>'duration_s')::numeric) || '</dd>'
            || '<dt>Begin</dt><dd>' || folio_perf_data.fmt_value(ww->'begin_at', 'time') || '</dd>'
            || '<dt>End</dt><dd>' || folio_perf_data.fmt_value(ww->'end_at', 'time') || '</dd>'
            || '<dt>Server</dt><dd>' || folio_perf_data.html_escape(folio_perf_data.fold(
                   coalesce('remote target ' || (ww->>'target'), 'this server') || ', database ' || (ww->>'database'))) || '</dd>'
            || '<dt>Version</dt><dd>PostgreSQL ' || ((ww->>'server_version_num')::int / 10000) || '.'
            || ((ww->>'server_version_num')::int % 100) || '</dd>'
            -- the folio_perf Grafana dashboard over this window's time range
            || CASE WHEN coalesce(current_setting('folio_perf.grafana_url', true), '') = '' THEN ''
               ELSE '<dt>Grafana</dt><dd><a href="' || folio_perf_data.html_escape(
                   rtrim(current_setting('folio_perf.grafana_url', true), '/')
                   || '/d/folio-perf/folio-perf?var-window=' || (ww->>'window_id')
                   || '&from=' || floor(extract(epoch FROM (ww->>'begin_at')::timestamptz) * 1000)
                   || '&to=' || ceil(extract(epoch FROM (ww->>'end_at')::timestamptz) * 1000))
                   || '">this window on the folio_perf dashboard</a></dd>' END
            || '</dl><div class="cards">' || array_to_string(cards, '') || '</div></header>');
        -- table of contents
        -- the header shows the window; the table of contents lists the rest
        secs := secs[2:];
        FOREACH sec IN ARRAY secs LOOP
            toc := toc || format('<li><a href="#%s">%s</a></li>', coalesce(sec->>'id', folio_perf_data.slug(sec->>'title')),
                                 folio_perf_data.html_escape(sec->>'title'));
            IF sec->>'title' = 'Summary' AND NOT sampler_off THEN
                toc := toc || '<li><a href="#charts">Charts</a></li>'::text;
            END IF;
        END LOOP;
        toc := toc || '<li><a href="#sql">SQL</a></li>'::text;
        out := out || ('<nav class="toc"><h2>Contents</h2><ol>' || array_to_string(toc, '') || E'</ol></nav>\n');
        FOREACH sec IN ARRAY secs LOOP
            -- long tables folded, so that the first screens are the
            -- summary, the verdict, the charts and the top statements
            out := out || folio_perf_data.render_section('html',
                CASE WHEN jsonb_array_length(coalesce(sec->'rows', '[]')) > 10
                          AND coalesce(sec->>'id', '') NOT IN ('verdict', 'summary', 'top')
                     THEN sec || '{"fold": true}' ELSE sec END, qmap);
            IF sec->>'title' = 'Summary' AND NOT sampler_off THEN
                out := out || ('<section id="charts"><h2>Charts</h2>'
                    || folio_perf_data.svg_chart('Connections per module (stacked)',
                           (SELECT jsonb_agg(p || jsonb_build_object('series', coalesce(nullif(p->>'series', '(none)'), '(unattributed)')))
                            FROM jsonb_array_elements(doc#>'{timeseries,connections_by_module}') p), true,
                           jsonb_build_object('ytitle', 'Connections', 'integral', true,
                                              't0', ww->'begin_at', 't1', ww->'end_at'))
                    || folio_perf_data.svg_chart('DB load by wait class (average active sessions, stacked)',
                           doc#>'{timeseries,db_load_by_wait_event_type}', true,
                           jsonb_build_object('ytitle', 'Average active sessions', 'hline', summ->'cpus',
                                              't0', ww->'begin_at', 't1', ww->'end_at',
                                              'hline_label', coalesce((summ->>'cpus') || ' CPUs', '')))
                    -- the seeds' "DB CPU Utilization": DB CPU and the host's
                    -- busy share, 100 % being every CPU of the host
                    || coalesce(nullif(folio_perf_data.svg_chart('DB CPU utilization (% of the host''s CPUs)',
                           (SELECT jsonb_agg(p || jsonb_build_object('series',
                                       CASE p->>'series' WHEN 'db_cpu_pct' THEN 'DB CPU, %'
                                                         ELSE 'Host busy (all processes), %' END))
                            FROM jsonb_array_elements(doc#>'{timeseries,cpu}') p), false,
                           jsonb_build_object('ytitle', 'CPU, % of ' || coalesce((summ->>'cpus') || ' CPUs', 'the host'),
                                              'hline', 100, 'hline_label', '100% = ' || coalesce((summ->>'cpus') || ' CPUs', 'every CPU'),
                                              't0', ww->'begin_at', 't1', ww->'end_at')), '')
                        || folio_perf_data.svg_chart('DB CPU per module (% of the host''s CPUs, stacked)',
                           (SELECT jsonb_agg(p || jsonb_build_object('series', coalesce(nullif(p->>'series', '(none)'), '(unattributed)')))
                            FROM jsonb_array_elements(doc#>'{timeseries,cpu_by_module}') p), true,
                           jsonb_build_object('ytitle', 'CPU, % of ' || coalesce((summ->>'cpus') || ' CPUs', 'the host'),
                                              't0', ww->'begin_at', 't1', ww->'end_at')),
                        '<p class="note">DB CPU over time is unavailable: '
                        || CASE WHEN ww ? 'target' THEN 'the backends of a remote target cannot be read.'
                                ELSE 'the sampler could not read /proc on this host.' END || '</p>')
                    || '</section>');
            END IF;
            IF sec->>'id' = 'top' THEN
                out := out || folio_perf_data.svg_bars('Total execution time of the top 10 statements',
                    (SELECT jsonb_agg(jsonb_build_object('label',
                                coalesce('Q' || (qmap->>(t->>'query')) || ' ', '') || coalesce(t->>'tenant', '-') || ' / '
                                || coalesce(t->>'module', '(unattributed)') || ' / '
                                || folio_perf_data.sql_start(replace(t->>'query', t->>'tenant' || '_' || (t->>'module') || '.', ''), 40),
                                'value', (t->>'total_exec_ms')::numeric) ORDER BY (t->>'rank')::int)
                     FROM jsonb_array_elements(doc->'top_statements') t WHERE (t->>'rank')::int <= 10), 'Total execution time, ms');
                out := out || folio_perf_data.render_plans('html', doc, 'top_statements', qmap);
            ELSIF sec->>'id' = 'top-by-mean-time' THEN
                out := out || folio_perf_data.render_plans('html', doc, 'top_by_mean_time', qmap);
            ELSIF sec->>'id' = 'load-by-waits' THEN
                out := out || folio_perf_data.svg_bars('DB load by statement and wait event',
                    (SELECT jsonb_agg(jsonb_build_object('label', x.label, 'parts', x.parts, 'value', x.tot) ORDER BY x.tot DESC)
                     FROM (SELECT max((r->>'statement_aas')::numeric) AS tot,
                                  coalesce('Q' || (qmap->>min(r->>'query')) || ' ', '') || coalesce(min(r->>'tenant'), '-') || ' / '
                                  || coalesce(min(r->>'module'), '(unattributed)') || ' / '
                                  || folio_perf_data.sql_start(replace(min(r->>'query'), min(r->>'tenant') || '_' || min(r->>'module') || '.', ''), 40) AS label,
                                  jsonb_agg(jsonb_build_object('series', r->>'wait_event', 'value', (r->>'aas')::numeric)) AS parts
                           FROM jsonb_array_elements(doc->'db_load_by_statement_wait') r
                           GROUP BY r->>'queryid', r->>'tenant') x), 'Average active sessions');
            END IF;
        END LOOP;
        out := out || folio_perf_data.sql_appendix('html', qmap, secs || nested) || folio_perf_data.html_foot();
        RETURN array_to_string(out, '');
    END IF;

    out := out || CASE fmt WHEN 'markdown' THEN '## ' || folio_perf_data.md_escape(title) || E'\n\n'
                           ELSE folio_perf_data.fold(title) || E'\n' || repeat('#', length(folio_perf_data.fold(title))) || E'\n\n' END;
    FOREACH sec IN ARRAY secs LOOP
        out := out || folio_perf_data.render_section(fmt, sec, qmap);
        -- plans under the top statements
        IF sec->>'id' = 'top' THEN
            out := out || folio_perf_data.render_plans(fmt, doc, 'top_statements', qmap);
        ELSIF sec->>'id' = 'top-by-mean-time' THEN
            out := out || folio_perf_data.render_plans(fmt, doc, 'top_by_mean_time', qmap);
        END IF;
    END LOOP;
    out := out || folio_perf_data.sql_appendix(fmt, qmap, secs || nested);
    out := out || (CASE fmt WHEN 'markdown' THEN '_Generated by folio_perf ' ELSE 'Generated by folio_perf ' END
        || coalesce((SELECT e.extversion FROM pg_catalog.pg_extension e WHERE e.extname = 'folio_perf'), '?')
        || ' at ' || to_char(pg_catalog.clock_timestamp(), 'YYYY-MM-DD HH24:MI:SS TZ')
        || CASE fmt WHEN 'markdown' THEN E'._\n' ELSE E'.\n' END);
    RETURN array_to_string(out, '');
END
$$;



/*
 * Run against run: statement by statement (matched by normalised text and
 * tenant, so that releases and databases whose queryids differ still
 * match), module by module, and the window summaries.  plan_changed: on
 * statement rows, whether the slowest plan's shape differs between
 * the windows (NULL unless both have a plan; metric slowest_plan_ms gives
 * their durations).
 */
-- A row of folio_perf_compare_rows(), for folio_perf_compare()'s array.
CREATE TYPE folio_perf_data.compare_row AS (section text, key text, tenant text,
    module text, metric text, base numeric, new numeric, delta numeric,
    delta_pct numeric, status text, query text, plan_changed boolean);

CREATE FUNCTION folio_perf_compare_rows(base_window bigint, new_window bigint)
RETURNS TABLE(section text, key text, tenant text, module text, metric text,
    base numeric, new numeric, delta numeric, delta_pct numeric,
    status text, query text, plan_changed boolean)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
-- sorts and hashes over the changes of tens of thousands of relations in
-- memory, not on disk at the default 4MB
SET work_mem = '64MB'
AS $$
DECLARE
    bw record;
    nw record;
BEGIN
    bw := folio_perf_data.window_bounds(base_window);
    nw := folio_perf_data.window_bounds(new_window);
    -- the two windows' statement groups (stmt_groups: computed once per
    -- transaction, as the verdict's checks read them too), matched by
    -- normalised text, tenant and module; a group's text is shown if the
    -- caller may see all its texts in both windows
    RETURN QUERY
    WITH b AS (SELECT * FROM folio_perf_data.stmt_groups(base_window)),
         n AS (SELECT * FROM folio_perf_data.stmt_groups(new_window)),
    g AS (
        SELECT coalesce(b.h, n.h) AS h, coalesce(b.tenant, n.tenant) AS tenant,
               coalesce(b.module, n.module) AS module, least(b.query, n.query) AS q,
               b.query IS DISTINCT FROM '<insufficient privilege>'
                 AND n.query IS DISTINCT FROM '<insufficient privilege>' AS visible,
               b.calls AS b_calls, n.calls AS n_calls, b.total_ms AS b_time, n.total_ms AS n_time,
               b.rows AS b_rows, n.rows AS n_rows
        FROM b FULL JOIN n ON n.h = b.h AND n.tenant IS NOT DISTINCT FROM b.tenant
                          AND n.module IS NOT DISTINCT FROM b.module
    ),
    -- slowest plans
    pb AS (SELECT * FROM folio_perf_data.plan_groups(base_window) x WHERE x.toplevel),
    pn AS (SELECT * FROM folio_perf_data.plan_groups(new_window) x WHERE x.toplevel)
    SELECT 'statement', left(g.h, 12), g.tenant, g.module, m.metric,
           round(m.b::numeric, 3), round(m.n::numeric, 3),
           round((m.n - m.b)::numeric, 3),
           CASE WHEN m.b <> 0 THEN round((100 * (m.n - m.b) / m.b)::numeric, 1) END,
           CASE WHEN g.b_calls IS NULL THEN 'new' WHEN g.n_calls IS NULL THEN 'gone' ELSE 'both' END,
           CASE WHEN g.visible THEN g.q ELSE '<insufficient privilege>' END,
           CASE WHEN pb.fingerprint IS NOT NULL AND pn.fingerprint IS NOT NULL
                THEN pb.fingerprint <> pn.fingerprint END
    FROM g
    LEFT JOIN pb ON pb.h = g.h AND pb.tenant IS NOT DISTINCT FROM g.tenant AND pb.module IS NOT DISTINCT FROM g.module
    LEFT JOIN pn ON pn.h = g.h AND pn.tenant IS NOT DISTINCT FROM g.tenant AND pn.module IS NOT DISTINCT FROM g.module
    CROSS JOIN LATERAL (VALUES
        ('calls', g.b_calls::double precision, g.n_calls::double precision),
        ('mean_exec_ms', g.b_time / nullif(g.b_calls, 0), g.n_time / nullif(g.n_calls, 0)),
        ('total_exec_ms', g.b_time, g.n_time),
        ('rows', g.b_rows::double precision, g.n_rows::double precision),
        ('slowest_plan_ms', pb.slowest_ms, pn.slowest_ms)) AS m(metric, b, n)
    WHERE m.metric <> 'slowest_plan_ms' OR m.b IS NOT NULL OR m.n IS NOT NULL;

    -- nested statements (functions, triggers) are not compared above, but
    -- their plans are
    RETURN QUERY
    WITH pb AS (SELECT * FROM folio_perf_data.plan_groups(base_window) x WHERE NOT x.toplevel),
         pn AS (SELECT * FROM folio_perf_data.plan_groups(new_window) x WHERE NOT x.toplevel),
         j AS (SELECT coalesce(pb.h, pn.h) AS h, coalesce(pb.tenant, pn.tenant) AS tenant,
                      coalesce(pb.module, pn.module) AS module, pb.slowest_ms AS b, pn.slowest_ms AS n,
                      pb.fingerprint AS bf, pn.fingerprint AS nf
               FROM pb FULL JOIN pn ON pn.h = pb.h AND pn.tenant IS NOT DISTINCT FROM pb.tenant
                                   AND pn.module IS NOT DISTINCT FROM pb.module)
    SELECT 'nested_plan', left(j.h, 12), j.tenant, j.module, 'slowest_plan_ms',
           round(j.b::numeric, 3), round(j.n::numeric, 3), round((j.n - j.b)::numeric, 3),
           CASE WHEN j.b <> 0 THEN round((100 * (j.n - j.b) / j.b)::numeric, 1) END,
           CASE WHEN j.b IS NULL THEN 'new' WHEN j.n IS NULL THEN 'gone' ELSE 'both' END,
           (SELECT CASE WHEN bool_and(t.query IS DISTINCT FROM '<insufficient privilege>') THEN min(t.query)
                        ELSE '<insufficient privilege>' END
            FROM folio_perf_data.stmt_text t WHERE t.text_md5::text = j.h),
           CASE WHEN j.bf IS NOT NULL AND j.nf IS NOT NULL THEN j.bf <> j.nf END
    FROM j;

    RETURN QUERY
    WITH b AS (SELECT * FROM @extschema@.folio_perf_module_activity(base_window)),
         n AS (SELECT * FROM @extschema@.folio_perf_module_activity(new_window)),
         j AS (SELECT coalesce(b.tenant, n.tenant) AS tenant, coalesce(b.module, n.module) AS module,
                      b.module IS NOT NULL AS in_b, n.module IS NOT NULL AS in_n,
                      b.inserts AS bi, n.inserts AS ni, b.updates AS bu, n.updates AS nu,
                      b.deletes AS bd, n.deletes AS nd, b.statement_time_ms AS bt, n.statement_time_ms AS nt,
                      b.statement_calls AS bc, n.statement_calls AS nc, b.growth AS bg, n.growth AS ng,
                      b.seq_scan AS bs, n.seq_scan AS ns
               FROM b FULL JOIN n ON b.tenant IS NOT DISTINCT FROM n.tenant AND b.module = n.module)
    SELECT 'module', coalesce(j.tenant || '_', '') || j.module, j.tenant, j.module, m.metric,
           m.b, m.n, m.n - m.b,
           CASE WHEN m.b <> 0 THEN round(100 * (m.n - m.b) / m.b, 1) END,
           CASE WHEN NOT j.in_b THEN 'new' WHEN NOT j.in_n THEN 'gone' ELSE 'both' END,
           NULL::text, NULL::boolean
    FROM j CROSS JOIN LATERAL (VALUES
        ('inserts', j.bi::numeric, j.ni::numeric), ('updates', j.bu::numeric, j.nu::numeric),
        ('deletes', j.bd::numeric, j.nd::numeric), ('seq_scan', j.bs::numeric, j.ns::numeric),
        ('statement_calls', j.bc::numeric, j.nc::numeric),
        ('statement_time_ms', round(j.bt::numeric, 3), round(j.nt::numeric, 3)),
        ('growth_bytes', j.bg::numeric, j.ng::numeric)) AS m(metric, b, n);

    RETURN QUERY
    WITH b AS (SELECT to_jsonb(x) AS j FROM @extschema@.folio_perf_db_summary(base_window) x),
         n AS (SELECT to_jsonb(x) AS j FROM @extschema@.folio_perf_db_summary(new_window) x)
    SELECT 'summary', m.k, NULL::text, NULL::text, m.k,
           (b.j->>m.k)::numeric, (n.j->>m.k)::numeric,
           (n.j->>m.k)::numeric - (b.j->>m.k)::numeric,
           CASE WHEN (b.j->>m.k)::numeric <> 0
                THEN round(100 * ((n.j->>m.k)::numeric - (b.j->>m.k)::numeric) / (b.j->>m.k)::numeric, 1) END,
           'both', NULL::text, NULL::boolean
    FROM b, n, unnest(ARRAY['commits', 'commits_per_s', 'rollbacks', 'cache_hit_ratio', 'blks_read',
                            'temp_bytes', 'deadlocks', 'wal_bytes', 'statements_total_ms']) AS m(k);

    RETURN QUERY EXECUTE $q$
    WITH bc AS (SELECT * FROM @extschema@.folio_perf_connections($1) WHERE dimension IN ('total', 'module')),
         nc AS (SELECT * FROM @extschema@.folio_perf_connections($2) WHERE dimension IN ('total', 'module')),
         bl AS (SELECT * FROM @extschema@.folio_perf_db_load($1) WHERE dimension IN ('total', 'module', 'wait_event_type')),
         nl AS (SELECT * FROM @extschema@.folio_perf_db_load($2) WHERE dimension IN ('total', 'module', 'wait_event_type')),
         bu AS (SELECT * FROM @extschema@.folio_perf_cpu($1) WHERE dimension IN ('total', 'module')),
         nu AS (SELECT * FROM @extschema@.folio_perf_cpu($2) WHERE dimension IN ('total', 'module'))
    SELECT 'connections', coalesce(bc.dimension, nc.dimension) || coalesce(':' || coalesce(bc.key, nc.key), ''),
           NULL::text, coalesce(bc.module, nc.module), m.metric, m.b, m.n, m.n - m.b,
           CASE WHEN m.b <> 0 THEN round(100 * (m.n - m.b) / m.b, 1) END,
           CASE WHEN bc.dimension IS NULL THEN 'new' WHEN nc.dimension IS NULL THEN 'gone' ELSE 'both' END,
           NULL::text, NULL::boolean
    FROM bc FULL JOIN nc ON bc.dimension = nc.dimension AND bc.key IS NOT DISTINCT FROM nc.key
    CROSS JOIN LATERAL (VALUES ('avg', bc.avg, nc.avg), ('max', bc.max::numeric, nc.max::numeric)) m(metric, b, n)
    WHERE coalesce(bc.dimension, nc.dimension) <> 'sampler'
    UNION ALL
    SELECT 'db_load', coalesce(bl.dimension, nl.dimension) || coalesce(':' || coalesce(bl.key, nl.key), ''),
           NULL::text, coalesce(bl.module, nl.module), 'aas', bl.aas, nl.aas, nl.aas - bl.aas,
           CASE WHEN bl.aas <> 0 THEN round(100 * (nl.aas - bl.aas) / bl.aas, 1) END,
           CASE WHEN bl.dimension IS NULL THEN 'new' WHEN nl.dimension IS NULL THEN 'gone' ELSE 'both' END,
           NULL::text, NULL::boolean
    FROM bl FULL JOIN nl ON bl.dimension = nl.dimension AND bl.key IS NOT DISTINCT FROM nl.key
    WHERE coalesce(bl.dimension, nl.dimension) <> 'sampler'
    UNION ALL
    -- DB CPU: measured (/proc) here, sampled on a remote target
    SELECT 'db_cpu', coalesce(bu.dimension, nu.dimension)
               || coalesce(':' || coalesce(bu.key, nu.key, CASE WHEN coalesce(bu.dimension, nu.dimension) = 'total' THEN 'all' END), ''),
           NULL::text, coalesce(bu.module, nu.module), m.metric, m.b, m.n, m.n - m.b,
           CASE WHEN m.b <> 0 THEN round(100 * (m.n - m.b) / m.b, 1) END,
           CASE WHEN bu.dimension IS NULL THEN 'new' WHEN nu.dimension IS NULL THEN 'gone' ELSE 'both' END,
           NULL::text, NULL::boolean
    FROM bu FULL JOIN nu ON bu.dimension = nu.dimension AND bu.key IS NOT DISTINCT FROM nu.key
    CROSS JOIN LATERAL (VALUES ('cpu_seconds', bu.cpu_seconds, nu.cpu_seconds),
                               ('pct_of_cpus', bu.pct_of_host_capacity, nu.pct_of_host_capacity)) m(metric, b, n)
    $q$ USING base_window, new_window;

    -- data-import jobs and FOLIO operations (135_operations.sql)
    RETURN QUERY SELECT * FROM folio_perf_data.operations_compare_rows(base_window, new_window);
END
$$;

CREATE FUNCTION folio_perf_compare(base_window bigint, new_window bigint, format text DEFAULT 'text')
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
-- sorts and hashes over the changes of tens of thousands of relations in
-- memory, not on disk at the default 4MB
SET work_mem = '64MB'
AS $$
DECLARE
    fmt text := folio_perf_compare.format;
    rows jsonb;
    cmp folio_perf_data.compare_row[];
    doc jsonb;
    secs jsonb[] := '{}';
    sec jsonb;
    out text[] := '{}';
    title text;
    bl text;
    nl text;
    bw jsonb;
    nw jsonb;
    bname text;
    nname text;
    qmap jsonb;
    n_stmt bigint;
    n_mod bigint;
    mod_rows jsonb;
    top_n int := 100;
    -- the checks of folio_perf_check (138_check.sql): the verdict, and
    -- which changes are coloured
    chk jsonb;
    rl jsonb := folio_perf_data.check_rules('{}');
    sig text[];
    sig_mod text[];
    health jsonb;
BEGIN
    PERFORM folio_perf_data.check_format(fmt);
    SELECT coalesce(jsonb_agg(to_jsonb(c)), '[]') INTO chk
    FROM folio_perf_data.check_rows(base_window, new_window, '{}') c;
    sig := ARRAY(SELECT concat_ws(':', c->>'key', c->>'tenant', c->>'module') FROM jsonb_array_elements(chk) c
                 WHERE c->>'check_name' = 'statement_mean_time' AND c->>'verdict' IN ('regression', 'improvement'));
    sig_mod := ARRAY(SELECT concat_ws(':', m.tenant, m.module)
                     FROM folio_perf_data.module_significance(base_window, new_window, '{}') m
                     WHERE m.verdict IN ('regression', 'improvement'));
    -- the rows once, as an array: the sections below read it (a jsonb array
    -- of 100,000 rows would be parsed again by every section); the json
    -- format is the array as jsonb
    SELECT coalesce(array_agg(ROW(r.*)::folio_perf_data.compare_row), '{}') INTO cmp
    FROM @extschema@.folio_perf_compare_rows(base_window, new_window) r;
    SELECT coalesce(w.label, 'window ' || w.window_id) INTO bl FROM @extschema@.folio_perf_windows w WHERE w.window_id = base_window;
    SELECT coalesce(w.label, 'window ' || w.window_id) INTO nl FROM @extschema@.folio_perf_windows w WHERE w.window_id = new_window;
    doc := jsonb_build_object('format_version', 1, 'generated_at', pg_catalog.clock_timestamp(),
        'base', (SELECT to_jsonb(w) FROM @extschema@.folio_perf_windows w WHERE w.window_id = base_window),
        'new', (SELECT to_jsonb(w) FROM @extschema@.folio_perf_windows w WHERE w.window_id = new_window),
        'rows', '[]'::jsonb,
        'verdict', folio_perf_data.check_verdict(chk, (rl->>'max_findings')::int, true));
    -- settings that differ, table health findings (138_table_health.sql)
    health := folio_perf_data.health_compare_doc(base_window, new_window);
    doc := jsonb_set(doc, '{verdict}', (doc->'verdict') || (health->'findings')) || jsonb_build_object('health', health);
    IF fmt = 'json' THEN
        SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]') INTO rows FROM unnest(cmp) r;
        doc := jsonb_set(doc, '{rows}', rows);
        RETURN jsonb_pretty(doc);
    END IF;
    bw := (SELECT to_jsonb(w) FROM @extschema@.folio_perf_windows w WHERE w.window_id = base_window);
    nw := (SELECT to_jsonb(w) FROM @extschema@.folio_perf_windows w WHERE w.window_id = new_window);
    -- the columns are named after the windows' releases, else their labels
    bname := bw#>>'{tags,release}';
    nname := nw#>>'{tags,release}';
    IF bname IS NULL OR nname IS NULL OR bname = nname THEN
        bname := bl;
        nname := nl;
    END IF;
    IF bname = nname THEN
        bname := bname || ' (base)';
        nname := nname || ' (new)';
    END IF;
    title := format('folio_perf comparison: %s vs %s', bname, nname);

    secs := secs || jsonb_build_object('title', 'Windows', 'id', 'windows',
        'columns', '["metric", "b", "n"]'::jsonb, 'labels', jsonb_build_array('', bname || ' (base)', nname || ' (new)'),
        'rows', jsonb_build_array(
            jsonb_build_object('metric', 'Window', 'b', bw->>'window_id', 'n', nw->>'window_id'),
            jsonb_build_object('metric', 'Label', 'b', bw->'label', 'n', nw->'label'),
            jsonb_build_object('metric', 'Tags',
                'b', (SELECT string_agg(t.key || ': ' || t.value, ', ' ORDER BY t.key) FROM jsonb_each_text(coalesce(bw->'tags', '{}')) t),
                'n', (SELECT string_agg(t.key || ': ' || t.value, ', ' ORDER BY t.key) FROM jsonb_each_text(coalesce(nw->'tags', '{}')) t)),
            jsonb_build_object('metric', 'Begin', 'b', folio_perf_data.fmt_value(bw->'begin_at', 'time'),
                               'n', folio_perf_data.fmt_value(nw->'begin_at', 'time')),
            jsonb_build_object('metric', 'End', 'b', folio_perf_data.fmt_value(bw->'end_at', 'time'),
                               'n', folio_perf_data.fmt_value(nw->'end_at', 'time')),
            jsonb_build_object('metric', 'Duration (hh:mm:ss)',
                'b', folio_perf_data.fmt_duration(extract(epoch FROM (bw->>'end_at')::timestamptz - (bw->>'begin_at')::timestamptz)),
                'n', folio_perf_data.fmt_duration(extract(epoch FROM (nw->>'end_at')::timestamptz - (nw->>'begin_at')::timestamptz))),
            jsonb_build_object('metric', 'Database', 'b', bw->'datname', 'n', nw->'datname')));
    -- the verdict (138_check.sql) and the FOLIO operations (135_operations.sql)
    secs := secs || (folio_perf_data.section('Verdict', ARRAY['severity', 'check', 'finding'],
        folio_perf_data.check_verdict(chk, (rl->>'max_findings')::int),
        CASE WHEN NOT EXISTS (SELECT FROM jsonb_array_elements(chk) c WHERE c->>'verdict' <> 'pass')
             THEN 'Nothing stands out: no significant change (folio_perf_check, default rules).'
             WHEN (SELECT count(*) FROM jsonb_array_elements(chk) c WHERE c->>'verdict' <> 'pass') > (rl->>'max_findings')::int
             THEN format('The %s findings with the most impact of %s; folio_perf_check and the json format have all.',
                         rl->>'max_findings', (SELECT count(*) FROM jsonb_array_elements(chk) c WHERE c->>'verdict' <> 'pass')) END)
        || '{"id": "verdict"}');
    secs := secs || folio_perf_data.operations_compare_sections(cmp, base_window, new_window, chk);
    secs := folio_perf_data.verdict_add(secs, health->'findings')
            || folio_perf_data.health_compare_sections(health, bname, nname);

    -- statements: one row per statement with the seeds' columns, the
    -- top_n by total time of both windows (a 24-hour soak has thousands;
    -- the json format and folio_perf_compare_rows() have them all)
    SELECT count(DISTINCT r.key) INTO n_stmt
    FROM unnest(cmp) r WHERE r.section = 'statement';
    secs := secs || (folio_perf_data.section('Statements',
        ARRAY['tenant', 'module', 'status', 'calls_base', 'calls_new', 'calls_delta_pct',
              'mean_ms_base', 'mean_ms_new', 'mean_delta_ms', 'mean_delta_pct', 'total_ms_base', 'total_ms_new',
              'total_delta_pct', 'plan', 'query'],
        -- the top_n statements chosen on typed aggregates, the objects
        -- built for them only (a 24-hour window has thousands)
        (SELECT jsonb_agg(jsonb_build_object('tenant', y.tenant, 'module', y.module, 'status', y.status,
                   'calls_base', y.calls_base, 'calls_new', y.calls_new, 'calls_delta_pct', y.calls_delta_pct,
                   'mean_ms_base', y.mean_ms_base, 'mean_ms_new', y.mean_ms_new, 'mean_delta_ms', y.mean_delta_ms,
                   -- a number (coloured in html) only where the change is
                   -- significant (folio_perf_check's rule), else as text
                   'mean_delta_pct', CASE WHEN y.sig THEN to_jsonb(y.mean_delta_pct)
                                          ELSE to_jsonb(folio_perf_data.fmt_value(to_jsonb(y.mean_delta_pct), 'delta_pct')) END,
                   'total_ms_base', y.total_ms_base, 'total_ms_new', y.total_ms_new,
                   'total_delta_pct', CASE WHEN y.sig THEN to_jsonb(y.total_delta_pct)
                                           ELSE to_jsonb(folio_perf_data.fmt_value(to_jsonb(y.total_delta_pct), 'delta_pct')) END,
                   'plan', y.plan, 'query', y.query) ORDER BY y.o DESC, y.tenant, y.module, y.query, y.key)
         FROM (SELECT r.key, r.tenant, r.module, min(r.status) AS status,
                      max(r.base) FILTER (WHERE r.metric = 'calls') AS calls_base,
                      max(r.new) FILTER (WHERE r.metric = 'calls') AS calls_new,
                      max(r.delta_pct) FILTER (WHERE r.metric = 'calls') AS calls_delta_pct,
                      max(r.base) FILTER (WHERE r.metric = 'mean_exec_ms') AS mean_ms_base,
                      max(r.new) FILTER (WHERE r.metric = 'mean_exec_ms') AS mean_ms_new,
                      max(r.delta) FILTER (WHERE r.metric = 'mean_exec_ms') AS mean_delta_ms,
                      max(r.delta_pct) FILTER (WHERE r.metric = 'mean_exec_ms') AS mean_delta_pct,
                      max(r.base) FILTER (WHERE r.metric = 'total_exec_ms') AS total_ms_base,
                      max(r.new) FILTER (WHERE r.metric = 'total_exec_ms') AS total_ms_new,
                      max(r.delta_pct) FILTER (WHERE r.metric = 'total_exec_ms') AS total_delta_pct,
                      concat_ws(':', r.key, r.tenant, r.module) = ANY (sig) AS sig,
                      CASE bool_or(r.plan_changed) WHEN true THEN 'changed' WHEN false THEN 'same' END AS plan,
                      min(r.query) AS query,
                      coalesce(max(r.new) FILTER (WHERE r.metric = 'total_exec_ms'), 0)
                        + coalesce(max(r.base) FILTER (WHERE r.metric = 'total_exec_ms'), 0) AS o
               FROM unnest(cmp) r WHERE r.section = 'statement'
               GROUP BY r.key, r.tenant, r.module
               -- ties (many statements of one call and 4 us) by name
               ORDER BY o DESC, r.tenant, r.module, query, r.key
               LIMIT top_n) y),
        CASE WHEN n_stmt > top_n THEN format('The %s of %s statements with the most time in the two windows; the json format and folio_perf_compare_rows() have all.', top_n, n_stmt) END)
        || jsonb_build_object('id', 'statements', 'worse_up', '["mean_delta_pct", "total_delta_pct"]'::jsonb,
            'right', '["mean_delta_pct", "total_delta_pct"]'::jsonb,
            'labels', jsonb_build_array('Tenant', 'Module', 'Status', 'Calls ' || bname, 'Calls ' || nname, 'Calls Delta, %',
                'Mean ' || bname || ', ms', 'Mean ' || nname || ', ms', 'Mean Delta, ms', 'Mean Delta, %',
                'Total ' || bname || ', ms', 'Total ' || nname || ', ms', 'Total Delta, %', 'Plan', 'Statement')));
    -- on a wiki page (markdown) the seeds' columns, not all fifteen: the
    -- status, the calls' and totals' deltas and the mean's in ms are in
    -- the other formats
    IF fmt = 'markdown' THEN
        secs[cardinality(secs)] := secs[cardinality(secs)] || jsonb_build_object(
            'columns', jsonb_build_array('tenant', 'module', 'calls_base', 'calls_new', 'mean_ms_base', 'mean_ms_new',
                                         'mean_delta_pct', 'total_delta_pct', 'plan', 'query'),
            'labels', jsonb_build_array('Tenant', 'Module', 'Calls ' || bname, 'Calls ' || nname,
                                        'Mean ' || bname || ', ms', 'Mean ' || nname || ', ms', 'Mean Delta, %',
                                        'Total Delta, %', 'Plan', 'Statement'));
    END IF;
    -- statements whose plan changed
    secs := secs || (folio_perf_data.plan_changes_section(base_window, new_window) || '{"id": "plan-changes"}');
    -- modules: one row per module with the seeds' paired columns, the top_n
    -- by statement time, then rows written, of both windows (40 tenants
    -- have 800 modules; folio_perf_compare_rows() has every metric of all)
    WITH m AS (
        SELECT jsonb_build_object('tenant', min(r.tenant), 'module', min(r.module),
                   'status', min(r.status),
                   'calls_base', max(r.base) FILTER (WHERE r.metric = 'statement_calls'),
                   'calls_new', max(r.new) FILTER (WHERE r.metric = 'statement_calls'),
                   'calls_delta_pct', max(r.delta_pct) FILTER (WHERE r.metric = 'statement_calls'),
                   'time_ms_base', max(r.base) FILTER (WHERE r.metric = 'statement_time_ms'),
                   'time_ms_new', max(r.new) FILTER (WHERE r.metric = 'statement_time_ms'),
                   -- coloured only where the change is significant
                   -- (folio_perf_check's rule on the module's total time)
                   'time_delta_pct', CASE WHEN concat_ws(':', min(r.tenant), min(r.module)) = ANY (sig_mod)
                                          THEN to_jsonb(max(r.delta_pct) FILTER (WHERE r.metric = 'statement_time_ms'))
                                          ELSE to_jsonb(folio_perf_data.fmt_value(to_jsonb(max(r.delta_pct) FILTER (WHERE r.metric = 'statement_time_ms')), 'delta_pct')) END,
                   'rows_written_base', sum(r.base) FILTER (WHERE r.metric IN ('inserts', 'updates', 'deletes')),
                   'rows_written_new', sum(r.new) FILTER (WHERE r.metric IN ('inserts', 'updates', 'deletes')),
                   'seq_scan_base', max(r.base) FILTER (WHERE r.metric = 'seq_scan'),
                   'seq_scan_new', max(r.new) FILTER (WHERE r.metric = 'seq_scan'),
                   'growth_base', max(r.base) FILTER (WHERE r.metric = 'growth_bytes'),
                   'growth_new', max(r.new) FILTER (WHERE r.metric = 'growth_bytes')) AS x,
               coalesce(sum(r.base) FILTER (WHERE r.metric = 'statement_time_ms'), 0)
                 + coalesce(sum(r.new) FILTER (WHERE r.metric = 'statement_time_ms'), 0) AS o1,
               coalesce(sum(coalesce(r.base, 0) + coalesce(r.new, 0))
                          FILTER (WHERE r.metric IN ('inserts', 'updates', 'deletes')), 0) AS o2,
               bool_or(coalesce(r.base, 0) <> 0 OR coalesce(r.new, 0) <> 0) AS moved
        FROM unnest(cmp) r WHERE r.section = 'module'
        GROUP BY r.key
    )
    SELECT count(*) FILTER (WHERE m.moved),
           (SELECT jsonb_agg(t.x ORDER BY t.o1 DESC, t.o2 DESC, t.x->>'tenant', t.x->>'module')
            FROM (SELECT * FROM m WHERE m.moved
                  ORDER BY m.o1 DESC, m.o2 DESC, m.x->>'tenant', m.x->>'module' LIMIT top_n) t)
    INTO n_mod, mod_rows FROM m;
    secs := secs || (folio_perf_data.section('Modules',
        ARRAY['tenant', 'module', 'status', 'calls_base', 'calls_new', 'calls_delta_pct',
              'time_ms_base', 'time_ms_new', 'time_delta_pct', 'rows_written_base', 'rows_written_new',
              'seq_scan_base', 'seq_scan_new', 'growth_base', 'growth_new'],
        mod_rows,
        CASE WHEN n_mod > top_n THEN format('The %s of %s modules with the most statement time, then rows written, in the two windows; the json format and folio_perf_compare_rows() have all.', top_n, n_mod) END)
        || jsonb_build_object('id', 'modules', 'worse_up', '["time_delta_pct"]'::jsonb, 'right', '["time_delta_pct"]'::jsonb,
            'labels', jsonb_build_array('Tenant', 'Module', 'Status', 'Calls ' || bname, 'Calls ' || nname, 'Calls Delta, %',
                'Time ' || bname || ', ms', 'Time ' || nname || ', ms', 'Time Delta, %',
                'Rows written ' || bname, 'Rows written ' || nname, 'Seq scans ' || bname, 'Seq scans ' || nname,
                'Growth ' || bname, 'Growth ' || nname)));
    -- database and sampler figures: each row in its metric's unit
    secs := secs || jsonb_build_object('title', 'Database', 'id', 'database',
        'columns', '["metric", "base", "new", "delta", "delta_pct"]'::jsonb,
        'labels', jsonb_build_array('Metric', bname, nname, 'Delta', 'Delta, %'),
        'right', '["base", "new", "delta"]'::jsonb, 'worse_up', '[]'::jsonb,
        'rows', coalesce((SELECT jsonb_agg(jsonb_build_object('metric', folio_perf_data.col_label(r.metric),
                    'base', folio_perf_data.fmt_value(to_jsonb(r.base), folio_perf_data.col_kind(r.metric)),
                    'new', folio_perf_data.fmt_value(to_jsonb(r.new), folio_perf_data.col_kind(r.metric)),
                    'delta', CASE WHEN r.delta > 0 THEN '+' ELSE '' END
                             || folio_perf_data.fmt_value(to_jsonb(r.delta), folio_perf_data.col_kind(r.metric)),
                    'delta_pct', r.delta_pct))
                 FROM unnest(cmp) r WHERE r.section = 'summary'), '[]'));
    secs := secs || (jsonb_build_object('title', 'Connections and DB load', 'id', 'connections',
        'columns', '["section", "key", "metric", "base", "new", "delta", "delta_pct", "status"]'::jsonb,
        'labels', jsonb_build_array('Section', 'Key', 'Metric', bname, nname, 'Delta', 'Delta, %', 'Status'),
        'rows', coalesce((SELECT jsonb_agg(jsonb_build_object('section', r.section,
                    -- a dimension without a key ("module") is the
                    -- sessions no module was found for
                    'key', CASE WHEN r.key LIKE '%:%' THEN regexp_replace(r.key, ':', ': ')
                                ELSE r.key || ': (unattributed)' END,
                    'metric', r.metric, 'base', r.base, 'new', r.new,
                    'delta', r.delta, 'delta_pct', r.delta_pct, 'status', r.status))
                 FROM unnest(cmp) r WHERE r.section IN ('connections', 'db_load', 'db_cpu')), '[]'))
        || CASE WHEN NOT EXISTS (SELECT 1 FROM unnest(cmp) r WHERE r.section IN ('connections', 'db_load'))
                THEN jsonb_build_object('note', 'No sampler data in these windows: connections and DB load need folio_perf preloaded with folio_perf.sample_interval > 0.')
                ELSE '{}'::jsonb END);

    qmap := folio_perf_data.sql_refs(secs);
    IF fmt = 'html' THEN
        out := out || (folio_perf_data.html_head(title)
            || '<header><h1>' || folio_perf_data.html_escape(folio_perf_data.fold(title)) || '</h1>'
            || '<p class="sub">' || folio_perf_data.html_escape(folio_perf_data.fold(format('%s (base, window %s) against %s (new, window %s)',
                   bl, base_window, nl, new_window)))
            || '. Red: slower, green: faster, by 10 % or more and significant by folio_perf_check''s rules; '
            || '&#9888;: the slowest plan changed its shape.</p></header>'
            || '<nav class="toc"><h2>Contents</h2><ol>'
            || (SELECT string_agg(format('<li><a href="#%s">%s</a></li>', coalesce(s->>'id', folio_perf_data.slug(s->>'title')), folio_perf_data.html_escape(s->>'title')), '')
                FROM unnest(secs) s)
            || E'<li><a href="#sql">SQL</a></li></ol></nav>\n');
        FOREACH sec IN ARRAY secs LOOP
            out := out || folio_perf_data.render_section('html', sec, qmap);
        END LOOP;
        out := out || folio_perf_data.sql_appendix('html', qmap, secs) || folio_perf_data.html_foot();
        RETURN array_to_string(out, '');
    END IF;
    out := out || CASE fmt WHEN 'markdown' THEN '## ' || folio_perf_data.md_escape(title) || E'\n\n'
                           ELSE folio_perf_data.fold(title) || E'\n' || repeat('#', length(folio_perf_data.fold(title))) || E'\n\n' END;
    FOREACH sec IN ARRAY secs LOOP
        out := out || folio_perf_data.render_section(fmt, sec, qmap);
    END LOOP;
    out := out || folio_perf_data.sql_appendix(fmt, qmap, secs);
    RETURN array_to_string(out, '');
END
$$;
