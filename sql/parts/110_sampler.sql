/* sql/parts/110_sampler.sql - sampler storage functions and reports: status, connections, DB load, CPU, time series */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

CREATE FUNCTION folio_perf_sampler_status(
    OUT preloaded boolean, OUT state text, OUT pid int,
    OUT started_at timestamptz, OUT starts int, OUT database text,
    OUT sample_interval_ms int, OUT flush_interval_s int,
    OUT snapshot_interval_s int, OUT last_sample_at timestamptz,
    OUT last_flush_at timestamptz, OUT last_snapshot_at timestamptz,
    OUT ticks bigint, OUT ticks_flushed bigint, OUT ticks_dropped bigint,
    OUT procs_truncated bigint, OUT ended_sessions bigint,
    OUT ended_sessions_lost bigint, OUT intervals bigint,
    OUT buffer_size bigint, OUT buffer_used bigint, OUT buffer_unflushed bigint,
    OUT shmem_bytes bigint, OUT flush_errors bigint, OUT snapshots bigint,
    OUT snapshot_errors bigint, OUT last_probe_ms double precision,
    OUT last_error text, OUT last_error_at timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'folio_perf_sampler_status'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE VIEW folio_perf_sampler_status AS
    SELECT * FROM folio_perf_sampler_status();

CREATE FUNCTION folio_perf_samples(
    OUT sampled_at timestamptz, OUT pid int, OUT backend_type text,
    OUT dbid oid, OUT userid oid, OUT application_name text, OUT state text,
    OUT wait_event_type text, OUT wait_event text, OUT queryid bigint,
    OUT cpu_ms int, OUT flushed boolean)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_samples'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE VIEW folio_perf_samples AS
    SELECT * FROM folio_perf_samples();

CREATE FUNCTION folio_perf_sampler_flush()
RETURNS bigint
AS 'MODULE_PATHNAME', 'folio_perf_sampler_flush'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

CREATE FUNCTION folio_perf_sampler_purge(older_than interval)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n bigint;
BEGIN
    PERFORM folio_perf_data.check_older_than(older_than);
    DELETE FROM folio_perf_data.sample_interval i
    WHERE i.ended_at < pg_catalog.now() - older_than;
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END
$$;

/*
 * Time range of a window and what the reports need about it.  Coverage
 * comes from the ticks actually stored: the times between consecutive
 * ticks, and from the window's begin to the first tick and from the last
 * tick to its end, are its gaps.  A gap longer than one and a half sample
 * intervals (the interval of the tick that ends it, else of the one that
 * begins it) means at least half a sample is missing beyond scheduling
 * jitter: it is listed in gaps with its size, and note says "partial".
 * coverage_pct is the part of the window not in such gaps' excess over
 * one interval.
 */
CREATE FUNCTION folio_perf_data.sample_window(window_id bigint,
    OUT t0 timestamptz, OUT t1 timestamptz, OUT max_connections int,
    OUT n_ticks bigint, OUT covered_ms numeric, OUT cpu_ticks bigint,
    OUT note text, OUT target_id int, OUT target_name text,
    OUT coverage_pct numeric, OUT expected_ticks bigint, OUT gaps text,
    OUT n_gaps int, OUT gap_ms numeric)
RETURNS record
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    st record;
    window_ms numeric;
BEGIN
    IF sample_window.window_id IS NULL THEN
        RAISE EXCEPTION 'window id must not be null'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'folio_perf_end() and folio_perf_window() return window ids; folio_perf_windows lists them.';
    END IF;
    SELECT b.taken_at, coalesce(e.taken_at, pg_catalog.clock_timestamp()),
           coalesce(e.max_connections, b.max_connections), b.target_id, t.name
      INTO t0, t1, max_connections, target_id, target_name
      FROM folio_perf_data.window w
      JOIN folio_perf_data.snapshot b ON b.snap_id = w.begin_snap
      LEFT JOIN folio_perf_data.snapshot e ON e.snap_id = w.end_snap
      LEFT JOIN folio_perf_data.target t ON t.target_id = b.target_id
     WHERE w.window_id = sample_window.window_id;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'window % does not exist', window_id
            USING ERRCODE = 'undefined_object',
                  HINT = 'folio_perf_end() and folio_perf_window() return window ids; folio_perf_windows lists them.';
    END IF;

    SELECT coalesce(sum(i.n_ticks), 0),
           coalesce(sum(i.n_ticks::numeric * i.sample_interval_ms), 0),
           coalesce(sum(i.cpu_ticks), 0)
      INTO n_ticks, covered_ms, cpu_ticks
      FROM folio_perf_data.sample_interval i
     WHERE i.ended_at > t0 AND i.ended_at <= t1
       AND i.target_id IS NOT DISTINCT FROM sample_window.target_id;

    window_ms := extract(epoch FROM t1 - t0) * 1000;
    IF n_ticks = 0 THEN
        SELECT * INTO st FROM @extschema@.folio_perf_sampler_status();
        note := 'off: no samples in this window'
            || CASE
               WHEN sample_window.target_id IS NOT NULL THEN
                   pg_catalog.format(' (remote target %s: the sampler samples enabled targets '
                                     'while it runs, see folio_perf_targets)', target_name)
               WHEN NOT st.preloaded THEN
                   ' (folio_perf is not in shared_preload_libraries)'
               WHEN st.sample_interval_ms = 0 THEN
                   ' (folio_perf.sample_interval is 0)'
               WHEN st.database IS DISTINCT FROM pg_catalog.current_database() THEN
                   pg_catalog.format(' (the sampler stores its data in database %I, set by folio_perf.database)',
                                     st.database)
               WHEN st.state IS DISTINCT FROM 'sampling' THEN
                   pg_catalog.format(' (sampler state: %s)', st.state)
               -- it samples: say why this window has none
               WHEN t1 <= st.started_at THEN
                   ' (the sampler started after this window)'
               WHEN st.last_flush_at IS NULL OR t1 > st.last_flush_at THEN
                   pg_catalog.format(' (the sampler stores its samples every %s s: those of this window are not stored yet)',
                                     st.flush_interval_s)
               WHEN window_ms < st.sample_interval_ms THEN
                   pg_catalog.format(' (the window is shorter than the sample interval, %s ms)',
                                     st.sample_interval_ms)
               ELSE ''
               END;
        coverage_pct := 0;
        RETURN;
    END IF;

    -- the gaps between the ticks stored, and at both ends of the window
    -- This server's ticks are never closer than about one interval (the
    -- worker does not catch up after a stall), so an interval whose span
    -- exceeds its ticks' by less than 0.4 interval has no gap inside: only
    -- its first and last tick are looked at (a 24-hour window at 1 s has
    -- 86,400).
    WITH iv AS (
        SELECT i.interval_id AS iid, i.started_at, i.ended_at, i.tick_ms,
               i.sample_interval_ms AS iv,
               i.target_id IS NOT NULL   -- a target's answers may come late and bunch
               OR extract(epoch FROM i.ended_at - i.started_at) * 1000
                  > (i.n_ticks - 1 + 0.4) * i.sample_interval_ms AS suspect
          FROM folio_perf_data.sample_interval i
         WHERE i.ended_at > t0 AND i.ended_at <= t1
           AND i.target_id IS NOT DISTINCT FROM sample_window.target_id),
    -- o: the window's begin first and its end last among equal times
    tk AS (
        SELECT iv.iid, iv.suspect, iv.started_at + u.ms * interval '1 millisecond' AS at, iv.iv, 1 AS o
          FROM iv, unnest(iv.tick_ms) AS u(ms)
         WHERE iv.suspect
        UNION ALL
        SELECT iv.iid, false, x.at, iv.iv, 1
          FROM iv, LATERAL (VALUES (iv.started_at), (iv.ended_at)) AS x(at)
         WHERE NOT iv.suspect
        UNION ALL SELECT NULL, false, t0, NULL, 0
        -- the end: when the end snapshot's flush wrote the last interval
        -- (the worker does not tick while it flushes for a snapshot),
        -- else the end snapshot
        UNION ALL SELECT NULL, false,
               coalesce((SELECT least(l.flushed_at, t1) FROM iv
                         JOIN folio_perf_data.sample_interval l ON l.interval_id = iv.iid
                         WHERE l.cut IN ('request', 'snapshot')
                         ORDER BY iv.ended_at DESC LIMIT 1), t1), NULL, 2),
    g AS (
        SELECT lag(tk.at) OVER w AS g_from, tk.at AS g_to,
               coalesce(tk.iv, lag(tk.iv) OVER w) AS iv,
               extract(epoch FROM tk.at - lag(tk.at) OVER w) * 1000 AS ms,
               lag(tk.o) OVER w = 0 AS at_start, tk.o = 2 AS at_end,
               lag(tk.iid) OVER w = tk.iid AND NOT tk.suspect AS inside_quiet
          FROM tk
        WINDOW w AS (ORDER BY tk.at, tk.o, tk.iid)),
    big AS (
        SELECT g.*, row_number() OVER (ORDER BY g.ms DESC, g.g_to) AS rk
          FROM g WHERE g.ms > 1.5 * g.iv AND NOT coalesce(g.inside_quiet, false))
    -- the five longest gaps in time order, and how many more
    SELECT count(*), coalesce(sum(big.ms - big.iv), 0),
           string_agg(pg_catalog.format('%s s %s', round(big.ms / 1000, 1),
                          CASE WHEN big.at_start AND big.at_end THEN 'without samples'
                               WHEN big.at_start THEN 'at the start'
                               WHEN big.at_end THEN 'at the end'
                               ELSE pg_catalog.format('from %s to %s',
                                        pg_catalog.to_char(big.g_from, 'YYYY-MM-DD HH24:MI:SS.MS'),
                                        pg_catalog.to_char(big.g_to, 'HH24:MI:SS.MS')) END),
                      ', ' ORDER BY big.g_to) FILTER (WHERE big.rk <= 5)
           || CASE WHEN count(*) > 5
                   THEN pg_catalog.format(' and %s more gaps', count(*) - 5) ELSE '' END
      INTO n_gaps, gap_ms, gaps
      FROM big;
    SELECT round(window_ms / max(i.sample_interval_ms))
      INTO expected_ticks
      FROM folio_perf_data.sample_interval i
     WHERE i.ended_at > t0 AND i.ended_at <= t1
       AND i.target_id IS NOT DISTINCT FROM sample_window.target_id;
    coverage_pct := round(greatest(100 * (1 - gap_ms / greatest(window_ms, 1)), 0), 1);
    IF n_gaps > 0 THEN
        note := pg_catalog.format('partial: samples cover %s%% of the window (%s of ~%s samples); no samples for %s',
                                  coverage_pct, n_ticks, expected_ticks, gaps);
    END IF;
END
$$;

-- Merged histograms of one kind of series over a window: avg, p95, max
-- per series, zeros included.
CREATE FUNCTION folio_perf_data.sample_stats(kind text, t0 timestamptz,
    t1 timestamptz, n_ticks bigint, p_target int,
    OUT series_id int, OUT avg numeric, OUT p95 int, OUT max int)
RETURNS SETOF record
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH h AS (
        SELECT u.s, u.v, sum(u.f)::bigint AS f
          FROM folio_perf_data.sample_interval i,
               unnest(CASE kind WHEN 'connections' THEN i.c_series ELSE i.l_series END,
                      CASE kind WHEN 'connections' THEN i.c_value ELSE i.l_value END,
                      CASE kind WHEN 'connections' THEN i.c_freq ELSE i.l_freq END) AS u(s, v, f)
         WHERE i.ended_at > t0 AND i.ended_at <= t1
           AND i.target_id IS NOT DISTINCT FROM p_target
         GROUP BY u.s, u.v),
    z AS (
        SELECT s, v, f FROM h
        UNION ALL
        SELECT s, 0, n_ticks - sum(f) FROM h GROUP BY s HAVING n_ticks - sum(f) > 0),
    c AS (
        SELECT s, v, f, sum(f) OVER (PARTITION BY s ORDER BY v ROWS UNBOUNDED PRECEDING) AS cum
          FROM z)
    SELECT s, sum(v::numeric * f) / n_ticks, min(v) FILTER (WHERE cum >= 0.95 * n_ticks), max(v)
      FROM c GROUP BY s
$$;

CREATE FUNCTION folio_perf_connections(window_id bigint)
RETURNS TABLE(dimension text, key text, tenant text, module text,
              attributed_by text, avg numeric, p95 int, max int,
              pct_of_max_connections numeric, samples bigint,
              coverage_pct numeric)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w record;
BEGIN
    SELECT * INTO w FROM folio_perf_data.sample_window(window_id);
    IF w.note IS NOT NULL THEN
        RETURN QUERY SELECT 'sampler'::text, w.note, NULL::text, NULL::text, NULL::text,
                            NULL::numeric, NULL::int, NULL::int, NULL::numeric, w.n_ticks,
                            w.coverage_pct;
        IF w.n_ticks = 0 THEN
            RETURN;
        END IF;
    END IF;
    RETURN QUERY
    SELECT ss.dimension, nullif(ss.key, ''), ss.tenant, ss.module, ss.attributed_by,
           round(st.avg, 2), st.p95, st.max,
           round(100.0 * st.max / nullif(w.max_connections, 0), 1),
           w.n_ticks, w.coverage_pct
      FROM folio_perf_data.sample_stats('connections', w.t0, w.t1, w.n_ticks, w.target_id) st
      JOIN folio_perf_data.sample_series ss ON ss.series_id = st.series_id
     ORDER BY array_position(ARRAY['total', 'database', 'state', 'tenant', 'module',
                                   'tenant_module', 'role', 'application_name',
                                   'attribution'], ss.dimension),
              st.avg DESC, ss.key COLLATE "C";
END
$$;

CREATE FUNCTION folio_perf_db_load(window_id bigint, include_housekeeping boolean DEFAULT false)
RETURNS TABLE(dimension text, key text, tenant text, module text,
              attributed_by text, queryid bigint, aas numeric, max int,
              pct_of_load numeric, query text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w record;
BEGIN
    SELECT * INTO w FROM folio_perf_data.sample_window(window_id);
    IF w.note IS NOT NULL THEN
        RETURN QUERY SELECT 'sampler'::text, w.note, NULL::text, NULL::text, NULL::text,
                            NULL::bigint, NULL::numeric, NULL::int, NULL::numeric, NULL::text;
        IF w.n_ticks = 0 THEN
            RETURN;
        END IF;
    END IF;
    RETURN QUERY
    WITH st AS (
        SELECT * FROM folio_perf_data.sample_stats('load', w.t0, w.t1, w.n_ticks, w.target_id)),
    tot AS (
        SELECT st.avg FROM st JOIN folio_perf_data.sample_series ss USING (series_id)
         WHERE ss.dimension = 'total')
    SELECT ss.dimension,
           CASE ss.dimension WHEN 'statement' THEN ss.queryid::text
                -- "<statement>|<wait event>": the wait event
                WHEN 'statement_wait_event' THEN split_part(ss.key, '|', 2)
                ELSE nullif(ss.key, '') END,
           -- a statement's attribution as the snapshot stored it when it
           -- has one (a text, relation_name ...), else the sessions' (which
           -- may know the application_name); never mixed
           CASE WHEN sk.module IS NOT NULL THEN sk.tenant ELSE ss.tenant END,
           CASE WHEN sk.module IS NOT NULL THEN sk.module ELSE ss.module END,
           CASE WHEN sk.module IS NOT NULL THEN sk.attributed_by ELSE ss.attributed_by END,
           ss.queryid,
           round(st.avg, 3), st.max,
           round(100 * st.avg / nullif((SELECT tot.avg FROM tot), 0), 1),
           qt.query
      FROM st
      JOIN folio_perf_data.sample_series ss ON ss.series_id = st.series_id
      LEFT JOIN folio_perf_data.stmt_key sk
             ON ss.dimension IN ('statement', 'statement_wait_event')
            AND sk.dbid = ss.dbid AND sk.userid = ss.userid
            AND sk.queryid = ss.queryid AND sk.toplevel
            AND sk.target_id IS NOT DISTINCT FROM ss.target_id
      LEFT JOIN folio_perf_data.stmt_text qt ON qt.key_id = sk.key_id
     -- statements folio_perf ran itself (housekeeping) only when asked for
     WHERE include_housekeeping OR ss.dimension NOT IN ('statement', 'statement_wait_event')
        OR NOT (coalesce(sk.housekeeping, false)
                OR (ss.target_id IS NULL AND folio_perf_data.own_queryid(ss.queryid)))
     ORDER BY array_position(ARRAY['total', 'wait_event_type', 'wait_event', 'tenant',
                                   'module', 'role', 'statement', 'statement_wait_event',
                                   'lock_holder', 'backend_type', 'database'], ss.dimension),
              st.avg DESC, ss.key COLLATE "C";
END
$$;

CREATE FUNCTION folio_perf_cpu(window_id bigint)
RETURNS TABLE(dimension text, key text, tenant text, module text,
              attributed_by text, cpu_seconds numeric,
              pct_of_host_capacity numeric, pct_of_db_cpu numeric)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w record;
    host record;
    pg_ms numeric;
BEGIN
    SELECT * INTO w FROM folio_perf_data.sample_window(window_id);
    IF w.note IS NOT NULL THEN
        RETURN QUERY SELECT 'sampler'::text, w.note, NULL::text, NULL::text, NULL::text,
                            NULL::numeric, NULL::numeric, NULL::numeric;
        IF w.n_ticks = 0 THEN
            RETURN;
        END IF;
    END IF;
    IF w.cpu_ticks = 0 THEN
        RETURN QUERY SELECT 'cpu'::text,
            CASE WHEN w.target_id IS NOT NULL
                 -- (the report's window.sampled says how to get DB CPU (sampled))
                 THEN pg_catalog.format('unavailable: per-backend CPU is not readable on remote target %s', w.target_name)
                 ELSE 'unavailable: /proc is not readable on this server' END,
            NULL::text, NULL::text, NULL::text, NULL::numeric, NULL::numeric, NULL::numeric;
        RETURN;
    END IF;

    SELECT max(i.host_ncpu) AS ncpu, sum(i.host_busy_ms) AS busy, sum(i.host_total_ms) AS total
      INTO host
      FROM folio_perf_data.sample_interval i
     WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1
       AND i.target_id IS NOT DISTINCT FROM w.target_id AND i.cpu_ticks > 0;

    SELECT sum(u.ms) INTO pg_ms
      FROM folio_perf_data.sample_interval i,
           unnest(i.u_series, i.u_ms) AS u(s, ms)
      JOIN folio_perf_data.sample_series ss ON ss.series_id = u.s
     WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1
       AND i.target_id IS NOT DISTINCT FROM w.target_id AND ss.dimension = 'total';

    -- a remote target: DB CPU (sampled) by rsampler.c, sessions active
    -- without a wait event at each tick, against its vCPU count; its
    -- host's busy time is not known
    RETURN QUERY
    SELECT 'host'::text,
           CASE WHEN w.target_id IS NULL THEN pg_catalog.format('%s CPUs', host.ncpu)
                ELSE pg_catalog.format('%s vCPUs (target setting); DB CPU (sampled): sessions active without a wait event '
                                       'at each tick, as on CPU for the tick; host CPU not readable on remote target %s',
                                       host.ncpu, w.target_name) END,
           NULL::text, NULL::text, NULL::text,
           CASE WHEN w.target_id IS NULL THEN round(host.busy / 1000.0, 1) END,
           CASE WHEN w.target_id IS NULL THEN round(100.0 * host.busy / nullif(host.total, 0), 1) END,
           NULL::numeric;
    RETURN QUERY
    WITH c AS (
        SELECT u.s, sum(u.ms)::numeric AS ms
          FROM folio_perf_data.sample_interval i,
               unnest(i.u_series, i.u_ms) AS u(s, ms)
         WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1
           AND i.target_id IS NOT DISTINCT FROM w.target_id
         GROUP BY u.s)
    SELECT ss.dimension, nullif(ss.key, ''), ss.tenant, ss.module, ss.attributed_by,
           round(c.ms / 1000, 2),
           round(100 * c.ms / nullif(host.total, 0), 2),
           round(100 * c.ms / nullif(pg_ms, 0), 1)
      FROM c JOIN folio_perf_data.sample_series ss ON ss.series_id = c.s
     ORDER BY array_position(ARRAY['total', 'database', 'backend_type', 'tenant', 'module',
                                   'role', 'application_name'], ss.dimension),
              c.ms DESC, ss.key COLLATE "C";
END
$$;

CREATE FUNCTION folio_perf_timeseries(window_id bigint,
    metric text DEFAULT 'connections', buckets int DEFAULT NULL,
    include_housekeeping boolean DEFAULT false)
RETURNS TABLE(bucket int, bucket_start timestamptz, bucket_end timestamptz,
              series text, value numeric)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w record;
    v_kind text;
    v_dim text;
    target int := coalesce(buckets, 120);
    window_s numeric;
    min_s numeric;
    width_s numeric;
    nb int;
    ladder numeric[] := ARRAY[1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800,
                              3600, 7200, 10800, 21600, 43200, 86400, 604800];
BEGIN
    IF target IS NULL OR target < 1 OR target > 10000 THEN
        RAISE EXCEPTION 'buckets must be between 1 and 10000, not %', coalesce(target::text, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass the number of points wanted, or NULL for 120.';
    END IF;
    IF metric IN ('connections', 'active', 'cpu') THEN
        v_kind := metric;
    ELSIF metric = 'db_load' THEN
        v_kind := 'load';
        v_dim := 'wait_event_type';
    ELSIF metric LIKE 'db\_load\_by\_%' THEN
        v_kind := 'load';
        v_dim := substr(metric, 12);
        IF v_dim NOT IN ('wait_event_type', 'wait_event', 'tenant', 'module', 'role',
                       'statement', 'backend_type', 'database') THEN
            v_kind := NULL;
        END IF;
    ELSIF metric LIKE 'cpu\_by\_%' THEN
        v_kind := 'cpu';
        v_dim := substr(metric, 8);
        IF v_dim NOT IN ('tenant', 'module', 'role', 'application_name', 'backend_type', 'database') THEN
            v_kind := NULL;
        END IF;
    ELSIF metric LIKE 'connections\_by\_%' THEN
        v_kind := 'connections';
        v_dim := substr(metric, 16);
        IF v_dim NOT IN ('state', 'tenant', 'module', 'tenant_module', 'role',
                       'application_name', 'database', 'attribution') THEN
            v_kind := NULL;
        END IF;
    END IF;
    IF v_kind IS NULL THEN
        RAISE EXCEPTION 'unknown metric "%"', metric
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Metrics: connections, active, cpu, db_load, connections_by_<state|tenant|module|tenant_module|role|application_name|database|attribution>, db_load_by_<wait_event_type|wait_event|tenant|module|role|statement|backend_type|database>, cpu_by_<tenant|module|role|application_name|backend_type|database>.';
    END IF;

    SELECT * INTO w FROM folio_perf_data.sample_window(window_id);
    IF w.n_ticks = 0 THEN
        RETURN QUERY SELECT NULL::int, NULL::timestamptz, NULL::timestamptz,
                            w.note, NULL::numeric;
        RETURN;
    END IF;

    -- Bucket width: the smallest round width giving at most `target`
    -- buckets, and no finer than the data (ticks; flushed intervals for
    -- per-series metrics).
    window_s := greatest(extract(epoch FROM w.t1 - w.t0), 1);
    IF v_dim IS NULL AND v_kind <> 'cpu' THEN
        SELECT max(i.sample_interval_ms) / 1000.0 INTO min_s
          FROM folio_perf_data.sample_interval i
         WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1
           AND i.target_id IS NOT DISTINCT FROM w.target_id;
    ELSE
        SELECT avg(extract(epoch FROM i.ended_at - i.started_at) + i.sample_interval_ms / 1000.0)
          INTO min_s
          FROM folio_perf_data.sample_interval i
         WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1
           AND i.target_id IS NOT DISTINCT FROM w.target_id;
    END IF;
    SELECT min(l) INTO width_s FROM unnest(ladder) l
     WHERE l >= window_s / target AND l >= min_s;
    width_s := coalesce(width_s, ladder[array_length(ladder, 1)]);
    -- the buckets that cover the window: a sample at its very end is in the
    -- last one, a flushed interval that began before it in the first
    nb := greatest(ceil(window_s / width_s), 1)::int;

    IF v_kind IN ('connections', 'active') AND v_dim IS NULL THEN
        -- per tick
        RETURN QUERY
        WITH t AS (
            SELECT least(greatest(floor(extract(epoch FROM i.started_at + u.ms * interval '1 millisecond' - w.t0)
                         / width_s)::int, 0), nb - 1) AS b,
                   CASE WHEN v_kind = 'connections' THEN u.c ELSE u.a END AS v
              FROM folio_perf_data.sample_interval i,
                   unnest(i.tick_ms, i.tick_connections, i.tick_active) AS u(ms, c, a)
             WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1
               AND i.target_id IS NOT DISTINCT FROM w.target_id),
        g AS (
            SELECT t.b, round(avg(t.v), 2) AS a, max(t.v)::numeric AS m
              FROM t GROUP BY t.b)
        SELECT g.b, w.t0 + (g.b * width_s)::float8 * interval '1 second',
               w.t0 + ((g.b + 1) * width_s)::float8 * interval '1 second', s.name, s.val
          FROM g
          CROSS JOIN LATERAL (VALUES ('avg', g.a), ('max', g.m)) AS s(name, val)
         ORDER BY 1, 4;
    ELSIF v_kind = 'cpu' AND v_dim IS NOT NULL THEN
        -- CPU of each series of the dimension, % of the host's capacity
        -- in the bucket (the parts of db_cpu_pct)
        RETURN QUERY
        WITH iv AS (
            SELECT floor(extract(epoch FROM i.started_at + (i.ended_at - i.started_at) / 2 - w.t0)
                         / width_s)::int AS b, i.*
              FROM folio_perf_data.sample_interval i
             WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1
               AND i.target_id IS NOT DISTINCT FROM w.target_id AND i.cpu_ticks > 0),
        pg AS (
            SELECT iv.b, coalesce(nullif(ss.key, ''), '(none)') AS k, sum(u.ms) AS ms
              FROM iv, unnest(iv.u_series, iv.u_ms) AS u(s, ms)
              JOIN folio_perf_data.sample_series ss ON ss.series_id = u.s
             WHERE ss.kind = 'cpu' AND ss.dimension = v_dim
             GROUP BY 1, 2),
        host AS (
            SELECT iv.b, sum(iv.host_total_ms) AS total FROM iv GROUP BY iv.b)
        SELECT pg.b, w.t0 + (pg.b * width_s)::float8 * interval '1 second',
               w.t0 + ((pg.b + 1) * width_s)::float8 * interval '1 second', pg.k,
               round(100.0 * pg.ms / nullif(host.total, 0), 1)
          FROM pg JOIN host USING (b)
         ORDER BY 1, 4;
    ELSIF v_kind = 'cpu' THEN
        RETURN QUERY
        WITH iv AS (
            SELECT least(greatest(floor(extract(epoch FROM i.started_at + (i.ended_at - i.started_at) / 2 - w.t0)
                         / width_s)::int, 0), nb - 1) AS b, i.*
              FROM folio_perf_data.sample_interval i
             WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1
               AND i.target_id IS NOT DISTINCT FROM w.target_id AND i.cpu_ticks > 0),
        pg AS (
            SELECT iv.b, sum(u.ms) AS ms
              FROM iv, unnest(iv.u_series, iv.u_ms) AS u(s, ms)
              JOIN folio_perf_data.sample_series ss ON ss.series_id = u.s
             WHERE ss.dimension = 'total'
             GROUP BY iv.b),
        host AS (
            SELECT iv.b, sum(iv.host_busy_ms) AS busy, sum(iv.host_total_ms) AS total
              FROM iv GROUP BY iv.b)
        SELECT host.b, w.t0 + (host.b * width_s)::float8 * interval '1 second',
               w.t0 + ((host.b + 1) * width_s)::float8 * interval '1 second', s.name, s.val
          FROM host LEFT JOIN pg USING (b)
          CROSS JOIN LATERAL (VALUES
              ('host_busy_pct', round(100.0 * host.busy / nullif(host.total, 0), 1)),
              ('db_cpu_pct', round(100.0 * coalesce(pg.ms, 0) / nullif(host.total, 0), 1))) AS s(name, val)
         -- a remote target's host busy time is not known (its DB CPU is sampled)
         WHERE w.target_id IS NULL OR s.name <> 'host_busy_pct'
         ORDER BY 1, 4;
    ELSE
        -- per series, from flushed intervals (placed by their midpoint)
        RETURN QUERY
        WITH iv AS (
            SELECT least(greatest(floor(extract(epoch FROM i.started_at + (i.ended_at - i.started_at) / 2 - w.t0)
                         / width_s)::int, 0), nb - 1) AS b, i.*
              FROM folio_perf_data.sample_interval i
             WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1
               AND i.target_id IS NOT DISTINCT FROM w.target_id),
        bt AS (
            SELECT iv.b, sum(iv.n_ticks) AS n FROM iv GROUP BY iv.b),
        v AS (
            SELECT iv.b, u.s, sum(u.v::numeric * u.f) AS sv
              FROM iv,
                   unnest(CASE v_kind WHEN 'connections' THEN iv.c_series ELSE iv.l_series END,
                          CASE v_kind WHEN 'connections' THEN iv.c_value ELSE iv.l_value END,
                          CASE v_kind WHEN 'connections' THEN iv.c_freq ELSE iv.l_freq END) AS u(s, v, f)
             GROUP BY iv.b, u.s)
        SELECT v.b, w.t0 + (v.b * width_s)::float8 * interval '1 second',
               w.t0 + ((v.b + 1) * width_s)::float8 * interval '1 second',
               CASE WHEN ss.dimension = 'statement' THEN ss.queryid::text
                    ELSE coalesce(nullif(ss.key, ''), '(none)') END,
               round(v.sv / bt.n, 3)
          FROM v
          JOIN bt USING (b)
          JOIN folio_perf_data.sample_series ss ON ss.series_id = v.s
         WHERE ss.kind = v_kind AND ss.dimension = v_dim
           -- statements folio_perf ran itself only when asked for
           AND (include_housekeeping OR ss.dimension <> 'statement'
                OR NOT ((ss.target_id IS NULL AND folio_perf_data.own_queryid(ss.queryid))
                        OR EXISTS (SELECT 1 FROM folio_perf_data.stmt_key sk
                                   WHERE sk.dbid = ss.dbid AND sk.userid = ss.userid
                                     AND sk.queryid = ss.queryid AND sk.toplevel
                                     AND sk.target_id IS NOT DISTINCT FROM ss.target_id
                                     AND sk.housekeeping)))
         ORDER BY 1, 4;
    END IF;
END
$$;
