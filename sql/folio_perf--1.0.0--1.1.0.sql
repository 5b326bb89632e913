/* sql/folio_perf--1.0.0--1.1.0.sql - ALTER EXTENSION folio_perf UPDATE from 1.0.0 to 1.1.0 */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
--
-- How to add to it (doc/architecture.md, "Upgrade scripts"): this is the
-- hand-written part.  The installed script is built from it by the Makefile
-- (sql/upgrade_tail.pl), which appends every function and view of the 1.1.0
-- install script as CREATE OR REPLACE, and the privileges of
-- 150_privileges.sql, so that a changed or new function or view needs
-- nothing here.  What does:
--   - a function whose arguments, result type or OUT columns changed, or one
--     that is gone: DROP FUNCTION the 1.0.0 one here (and a view whose
--     columns changed: DROP VIEW);
--   - a new table, sequence or type: CREATE it here (the tail re-runs the
--     grants and the pg_extension_config_dump of 150_privileges.sql);
--   - a new column: ALTER TABLE ... ADD COLUMN; add it at the END of the
--     CREATE TABLE in sql/parts too (the test compares column order);
--   - new indexes, constraints, triggers; converted data; seeded rows
--     (folio_perf_data.operation's builtin ones): here.
-- Full copies of functions below (from before the tail existed) are
-- harmless: the tail replaces them with the current definition.
-- test/t/004_upgrade.pl compares an updated 1.0.0 with a fresh 1.1.0
-- install (every function's definition, view, table and column in order,
-- index, constraint, trigger, type, grant, comment, the pg_dump
-- configuration and the rows an install seeds) and prints what differs.
-- Keep each change in its own block under a comment naming its issue, in
-- the order of sql/parts; the script runs in one transaction as the
-- extension's owner, with search_path set to the extension's schema first.

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION folio_perf UPDATE TO '1.1.0'" to load this file. \quit

-- #26 security: the relation store evicts when full; its status has evicted
-- (010_c_functions.sql; the tail creates both again)
DROP VIEW folio_perf_relations_status;
DROP FUNCTION folio_perf_relations_status();

-- #26 security: nothing is recorded as folio_perf's while another's function
-- runs inside one of folio_perf's; the set of its query ids rotates
-- (own_status has rotations: 025_own.sql)
DROP FUNCTION folio_perf_data.own_status();
CREATE FUNCTION folio_perf_data.own_status(OUT recorded bigint, OUT dropped bigint,
    OUT capacity int, OUT rotations bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'folio_perf_own_status'
LANGUAGE C VOLATILE PARALLEL SAFE;
REVOKE ALL ON FUNCTION folio_perf_data.own_status() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION folio_perf_data.own_status() TO folio_perf_reader, pg_read_all_stats;

-- #26 security: work tables with a constraint, a column of a type that is
-- not a built-in base type or a generated column are never used
-- (050_capture.sql)
CREATE OR REPLACE FUNCTION folio_perf_data.work_table_state(p_name text)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce((
        SELECT CASE
                 WHEN c.relkind OPERATOR(pg_catalog.=) 'r'
                  AND c.relpersistence OPERATOR(pg_catalog.=) 't'
                  AND c.relowner OPERATOR(pg_catalog.=)
                      (SELECT r.oid FROM pg_catalog.pg_roles r
                       WHERE r.rolname OPERATOR(pg_catalog.=) CURRENT_USER)
                  AND NOT c.relrowsecurity AND NOT c.relhasrules AND NOT c.relhassubclass
                  AND NOT c.relispartition
                  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t
                                  WHERE t.tgrelid OPERATOR(pg_catalog.=) c.oid)
                  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_rewrite w
                                  WHERE w.ev_class OPERATOR(pg_catalog.=) c.oid)
                  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_policy y
                                  WHERE y.polrelid OPERATOR(pg_catalog.=) c.oid)
                  -- two tests, each by its index (an OR scans the whole
                  -- catalog: 35,000 partitions at 40 tenants)
                  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_inherits i
                                  WHERE i.inhrelid OPERATOR(pg_catalog.=) c.oid)
                  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_inherits i
                                  WHERE i.inhparent OPERATOR(pg_catalog.=) c.oid)
                  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index x
                                  WHERE x.indrelid OPERATOR(pg_catalog.=) c.oid)
                  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attrdef a
                                  WHERE a.adrelid OPERATOR(pg_catalog.=) c.oid)
                  -- a constraint of any kind (a CHECK can call a function)
                  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_constraint k
                                  WHERE k.conrelid OPERATOR(pg_catalog.=) c.oid)
                  -- columns of built-in base types only (a domain's CHECK
                  -- runs at every insert), none generated
                  AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute a
                                  JOIN pg_catalog.pg_type y ON y.oid OPERATOR(pg_catalog.=) a.atttypid
                                  WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid
                                    AND a.attnum OPERATOR(pg_catalog.>) 0 AND NOT a.attisdropped
                                    AND (y.typtype OPERATOR(pg_catalog.<>) 'b'
                                         OR y.typnamespace OPERATOR(pg_catalog.<>) 'pg_catalog'::pg_catalog.regnamespace
                                         OR a.attgenerated OPERATOR(pg_catalog.<>) ''))
                 THEN 'ours' ELSE 'foreign' END
        FROM pg_catalog.pg_class c
        WHERE c.relnamespace OPERATOR(pg_catalog.=) pg_catalog.pg_my_temp_schema()
          AND c.relname OPERATOR(pg_catalog.=) p_name), 'absent')
$$;


-- #32 tests: a window without samples while the sampler samples says why
-- (sample_window); folio_perf_timeseries gives at most `buckets` buckets
-- (110_sampler.sql)
CREATE OR REPLACE FUNCTION folio_perf_data.sample_window(window_id bigint,
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

CREATE OR REPLACE FUNCTION folio_perf_timeseries(window_id bigint,
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
                  HINT = 'Metrics: connections, active, cpu, db_load, connections_by_<state|tenant|module|tenant_module|role|application_name|database|attribution>, db_load_by_<wait_event_type|wait_event|tenant|module|role|statement|backend_type|database>.';
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

-- #26 security: di_jobs_read locks job_execution before it checks it and
-- reads it by its columns' output functions only (135_operations.sql)
CREATE OR REPLACE FUNCTION folio_perf_data.di_jobs_read(p_target int, p_schema text,
    t0 timestamptz, t1 timestamptz)
RETURNS TABLE(id text, hrid text, parent_job_id text, subordination_type text,
    file_name text, progress_current text, progress_total text,
    started text, completed text, status text, job_profile text, parts_total text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
-- a table held by an ALTER or VACUUM FULL is skipped, not waited for
SET lock_timeout = '2s'
-- a policy's expression would run as the owner: a table with one is an
-- error (caught below), never read through it
SET row_security = off
-- the text of timestamps compares as the timestamps do
SET DateStyle = 'ISO, YMD'
SET TimeZone = 'UTC'
AS $fn$
DECLARE
    chk record;
    q text;
    oid1 oid;
    cols text;
    check_sql text := $q$
        SELECT c.oid, c.relkind::text AS relkind,
               (SELECT a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.timestamptz'::pg_catalog.regtype
                FROM pg_catalog.pg_attribute a
                WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND a.attname OPERATOR(pg_catalog.=) 'started_date'
                  AND NOT a.attisdropped) AS started_tz,
               (SELECT a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.timestamptz'::pg_catalog.regtype
                FROM pg_catalog.pg_attribute a
                WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND a.attname OPERATOR(pg_catalog.=) 'completed_date'
                  AND NOT a.attisdropped) AS completed_tz,
               (SELECT pg_catalog.count(*) FROM pg_catalog.pg_attribute a
                WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND NOT a.attisdropped
                  AND a.attname OPERATOR(pg_catalog.=) ANY ('{id,hrid,parent_job_id,subordination_type,file_name,progress_current,progress_total,status,job_profile_name}'::pg_catalog.name[])) AS ncols,
               pg_catalog.has_schema_privilege(n.oid, 'USAGE')
                 AND pg_catalog.has_table_privilege(c.oid, 'SELECT') AS readable,
               EXISTS (SELECT FROM pg_catalog.pg_attribute a
                       WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND a.attname OPERATOR(pg_catalog.=) 'is_deleted'
                         AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.bool'::pg_catalog.regtype
                         AND NOT a.attisdropped) AS has_deleted,
               -- the module's types (the read does not depend on them)
               (SELECT pg_catalog.count(*) FROM pg_catalog.pg_attribute a
                WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND NOT a.attisdropped
                  AND ((a.attname OPERATOR(pg_catalog.=) ANY ('{id,parent_job_id}'::pg_catalog.name[])
                        AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.uuid'::pg_catalog.regtype)
                       OR (a.attname OPERATOR(pg_catalog.=) 'progress_total'
                           AND a.atttypid OPERATOR(pg_catalog.=) ANY (ARRAY['pg_catalog.int2'::pg_catalog.regtype,
                               'pg_catalog.int4'::pg_catalog.regtype, 'pg_catalog.int8'::pg_catalog.regtype,
                               'pg_catalog.numeric'::pg_catalog.regtype]::pg_catalog.oid[])))) AS ntyped,
               -- the kind as the catalog cache has it (what a read uses)
               pg_catalog.pg_relation_filenode(c.oid) IS NOT NULL AS has_storage
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
        WHERE n.nspname OPERATOR(pg_catalog.=) $1 AND c.relname OPERATOR(pg_catalog.=) 'job_execution'$q$;
BEGIN
    IF p_schema IS NULL THEN
        RETURN;
    END IF;
    IF p_target IS NULL THEN
        -- hold the table first: nothing can change it from here on
        BEGIN
            EXECUTE format('LOCK TABLE ONLY %I.job_execution IN ACCESS SHARE MODE', p_schema);
        EXCEPTION
            WHEN lock_not_available THEN
                RAISE NOTICE 'data-import jobs of schema "%" skipped: job_execution is locked', p_schema;
                RETURN;
            WHEN undefined_table OR invalid_schema_name OR wrong_object_type THEN
                RETURN;
        END;
        EXECUTE check_sql INTO chk USING p_schema;
        oid1 := pg_catalog.to_regclass(format('%I.job_execution', p_schema));
        IF oid1 IS DISTINCT FROM chk.oid OR NOT chk.has_storage THEN
            RETURN;
        END IF;
    ELSE
        SELECT * INTO chk FROM folio_perf_data.remote_query(p_target, check_sql, ARRAY[p_schema])
            AS r(oid oid, relkind text, started_tz boolean, completed_tz boolean, ncols bigint,
                 readable boolean, has_deleted boolean, ntyped bigint, has_storage boolean);
    END IF;
    IF chk.oid IS NULL OR chk.relkind IS DISTINCT FROM 'r' OR chk.ncols <> 9 OR NOT chk.readable
       OR NOT coalesce(chk.started_tz, false) OR NOT coalesce(chk.completed_tz, false) THEN
        RETURN;
    END IF;
    IF chk.ntyped <> 3 THEN
        RAISE NOTICE 'data-import jobs of schema "%" skipped: job_execution.id, parent_job_id or progress_total is not of the module''s type', p_schema
            USING HINT = 'folio_perf reads job_execution only with id and parent_job_id of type uuid and progress_total an integer or numeric.';
        RETURN;
    END IF;
    -- the scan: every column through its type's output function, and only
    -- IS NULL besides; the rest works on that text with built-in types
    SELECT string_agg(format('CASE WHEN j.%1$I IS NULL THEN NULL ELSE pg_catalog.format(''%%s'', j.%1$I) END AS %2$I', c[1], c[2]), ', ')
    INTO cols
    FROM (VALUES (ARRAY['id', 'id']), (ARRAY['hrid', 'hrid']), (ARRAY['parent_job_id', 'parent_job_id']),
                 (ARRAY['subordination_type', 'subordination_type']), (ARRAY['file_name', 'file_name']),
                 (ARRAY['progress_current', 'progress_current']), (ARRAY['progress_total', 'progress_total']),
                 (ARRAY['status', 'status']), (ARRAY['job_profile_name', 'job_profile']),
                 (ARRAY['started_date', 's_txt']), (ARRAY['completed_date', 'c_txt'])) v(c);
    q := format($q$
        WITH t AS MATERIALIZED (
            SELECT %s, %s AS deleted FROM ONLY %I.job_execution j
        ),
        v AS (
            SELECT t.*, t.s_txt::pg_catalog.timestamptz AS s_at, t.c_txt::pg_catalog.timestamptz AS c_at
            FROM t WHERE t.deleted IS DISTINCT FROM 't'
        )
        SELECT v.id, v.hrid, v.parent_job_id, v.subordination_type, v.file_name, v.progress_current,
               v.progress_total, v.status, v.job_profile,
               pg_catalog.to_char(v.s_at, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS started,
               pg_catalog.to_char(v.c_at, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS completed,
               -- a split file: the records of its parts (its own total is a placeholder)
               CASE WHEN v.subordination_type OPERATOR(pg_catalog.=) 'COMPOSITE_PARENT'
                    THEN (SELECT pg_catalog.sum(c.progress_total::pg_catalog.numeric)::pg_catalog.text
                          FROM v c
                          WHERE c.parent_job_id OPERATOR(pg_catalog.=) v.id AND c.id OPERATOR(pg_catalog.<>) v.id
                            AND c.subordination_type OPERATOR(pg_catalog.=) 'COMPOSITE_CHILD'
                          HAVING pg_catalog.count(c.progress_total) OPERATOR(pg_catalog.>) 0) END AS parts_total
        FROM v
        WHERE v.s_at IS NOT NULL
          AND v.s_at OPERATOR(pg_catalog.<) $2::pg_catalog.timestamptz
          AND (v.c_at IS NULL OR v.c_at OPERATOR(pg_catalog.>=) $1::pg_catalog.timestamptz)$q$,
        cols,
        CASE WHEN chk.has_deleted THEN 'pg_catalog.format(''%s'', j.is_deleted)' ELSE 'NULL::pg_catalog.text' END,
        p_schema);
    BEGIN
        IF p_target IS NULL THEN
            RETURN QUERY EXECUTE 'SELECT x.id, x.hrid, x.parent_job_id, x.subordination_type, x.file_name,
                                         x.progress_current, x.progress_total, x.started, x.completed,
                                         x.status, x.job_profile, x.parts_total FROM (' || q || ') x'
                USING t0::text, t1::text;
        ELSE
            -- the target's session writes timestamps as this one does
            PERFORM FROM folio_perf_data.remote_query(p_target,
                $q$SELECT pg_catalog.set_config('DateStyle', 'ISO, YMD', false) AS d,
                          pg_catalog.set_config('TimeZone', 'UTC', false) AS z$q$) AS r(d text, z text);
            RETURN QUERY
            SELECT r.id, r.hrid, r.parent_job_id, r.subordination_type, r.file_name,
                   r.progress_current, r.progress_total, r.started, r.completed, r.status, r.job_profile,
                   r.parts_total
            FROM folio_perf_data.remote_query(p_target, q, ARRAY[t0::text, t1::text])
                AS r(id text, hrid text, parent_job_id text, subordination_type text, file_name text,
                     progress_current text, progress_total text, status text, job_profile text,
                     started text, completed text, parts_total text);
        END IF;
    EXCEPTION
        -- a value that is not what its column's name promises (a date that
        -- is none, a total that is no number), or a policy on the table
        WHEN invalid_datetime_format OR datetime_field_overflow OR invalid_text_representation
             OR numeric_value_out_of_range OR insufficient_privilege THEN
            RAISE NOTICE 'data-import jobs of schema "%" skipped: %', p_schema, SQLERRM;
            RETURN;
    END;
END
$fn$;

-- #26 security: an operation definition belongs to the role that added it;
-- other writers cannot change or delete it (135_operations.sql).  The rows
-- there are now get the role that runs the update.
ALTER TABLE folio_perf_data.operation ADD COLUMN owner name NOT NULL DEFAULT CURRENT_USER;
CREATE OR REPLACE FUNCTION folio_perf_data.operation_guard()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    su boolean := (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER);
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND NOT OLD.builtin AND OLD.owner <> CURRENT_USER
       AND NOT coalesce(su, false) THEN
        RAISE EXCEPTION 'operation "%" belongs to role "%"', OLD.operation, OLD.owner
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Only the role that added an operation changes or deletes it; add one of your own under another name.';
    END IF;
    IF TG_OP = 'INSERT' AND NOT coalesce(su, false) THEN
        NEW.owner := CURRENT_USER;
    ELSIF TG_OP = 'UPDATE' AND NOT coalesce(su, false) THEN
        NEW.owner := OLD.owner;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.builtin THEN
        RAISE EXCEPTION 'operation "%" is built in and cannot be changed or deleted', OLD.operation
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Add an operation of your own under another name.';
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.builtin THEN
        RAISE EXCEPTION 'only the extension defines built-in operations'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Insert the operation with builtin = false (the default).';
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END
$$;
CREATE OR REPLACE VIEW folio_perf_operation_definitions AS
SELECT o.operation, o.module, o.relation, o.counter, o.counted_from, o.description, o.builtin,
       o.owner
FROM folio_perf_data.operation o;

-- #25 findings: the significance rule, a window's active span and headline
-- (136_findings.sql, as it is there)
------------------------------------------------------------------------
--
-- A change of a statement's mean execution time between two windows is a
-- finding only if it is significant and if it matters:
--
--   significant  Welch's two-sided t-test on the two windows' exact calls,
--                mean and standard deviation (stmt_delta: the window's own
--                population standard deviation, made a sample one by
--                n / (n - 1)) gives p < alpha;
--   large        the mean changed by at least min_change_pct;
--   matters      its impact, the change of mean times the new window's
--                calls (the DB time the change cost or saved), is at least
--                min_impact_pct of the base window's DB time and at least
--                min_impact_ms.
--
-- All three are settable (rules jsonb of folio_perf_check, defaults in
-- check_rules()).  folio_perf_check, the compare verdict and the colours
-- of the compare's statement cells use this one rule (significance());
-- the series of windows (#28) uses it too.
------------------------------------------------------------------------

-- ln(Gamma(x)) for x > 0 (Lanczos, g = 7, 9 terms; relative error below
-- 1e-13), which PostgreSQL 15 lacks.
CREATE FUNCTION folio_perf_data.ln_gamma(x double precision)
RETURNS double precision
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c double precision[] := ARRAY[0.99999999999980993, 676.5203681218851, -1259.1392167224028,
        771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
        9.9843695780195716e-6, 1.5056327351493116e-7];
    a double precision;
    t double precision;
BEGIN
    IF x <= 0 THEN
        RAISE EXCEPTION 'ln_gamma is defined here for x > 0 only, not %', x
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF x < 0.5 THEN
        -- reflection
        RETURN ln(pi() / sin(pi() * x)) - folio_perf_data.ln_gamma(1 - x);
    END IF;
    x := x - 1;
    a := c[1];
    FOR i IN 1..8 LOOP
        a := a + c[i + 1] / (x + i);
    END LOOP;
    t := x + 7.5;
    RETURN 0.5 * ln(2 * pi()) + (x + 0.5) * ln(t) - t + ln(a);
END
$$;

-- The regularized incomplete beta function I_x(a, b), a, b > 0, 0 <= x <= 1
-- (continued fraction by the modified Lentz method, as Numerical Recipes'
-- betai/betacf).
CREATE FUNCTION folio_perf_data.inc_beta(a double precision, b double precision, x double precision)
RETURNS double precision
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    swap boolean := false;
    aa double precision;
    c double precision;
    d double precision;
    h double precision;
    del double precision;
    m2 int;
    lnbt double precision;
    tiny constant double precision := 1e-300;
    t double precision;
BEGIN
    IF x <= 0 THEN
        RETURN 0;
    ELSIF x >= 1 THEN
        RETURN 1;
    END IF;
    IF x > (a + 1) / (a + b + 2) THEN
        -- the fraction converges fast on the other side
        swap := true;
        t := a; a := b; b := t;
        x := 1 - x;
    END IF;
    lnbt := folio_perf_data.ln_gamma(a + b) - folio_perf_data.ln_gamma(a) - folio_perf_data.ln_gamma(b)
            + a * ln(x) + b * ln(1 - x);
    c := 1;
    d := 1 - (a + b) * x / (a + 1);
    IF abs(d) < tiny THEN d := tiny; END IF;
    d := 1 / d;
    h := d;
    FOR m IN 1..500 LOOP
        m2 := 2 * m;
        aa := m * (b - m) * x / ((a - 1 + m2) * (a + m2));
        d := 1 + aa * d; IF abs(d) < tiny THEN d := tiny; END IF;
        c := 1 + aa / c; IF abs(c) < tiny THEN c := tiny; END IF;
        d := 1 / d;
        h := h * d * c;
        aa := -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
        d := 1 + aa * d; IF abs(d) < tiny THEN d := tiny; END IF;
        c := 1 + aa / c; IF abs(c) < tiny THEN c := tiny; END IF;
        d := 1 / d;
        del := d * c;
        h := h * del;
        EXIT WHEN abs(del - 1) < 1e-14;
    END LOOP;
    -- exp() of less than about -745 underflows (an error in PostgreSQL)
    t := CASE WHEN lnbt < -700 THEN 0 ELSE exp(lnbt) * h / a END;
    RETURN CASE WHEN swap THEN 1 - t ELSE t END;
END
$$;

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
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n1 double precision := n1_;
    mean1 double precision := mean1_;
    sd1 double precision := sd1_;
    n2 double precision := n2_;
    mean2 double precision := mean2_;
    sd2 double precision := sd2_;
    v1 double precision;
    v2 double precision;
    se2 double precision;
BEGIN
    IF n1 IS NULL OR n2 IS NULL OR n1 < 2 OR n2 < 2 OR mean1 IS NULL OR mean2 IS NULL THEN
        RETURN;
    END IF;
    -- sample variances over n, from the population ones
    v1 := coalesce(sd1, 0) ^ 2 * n1 / (n1 - 1) / n1;
    v2 := coalesce(sd2, 0) ^ 2 * n2 / (n2 - 1) / n2;
    se2 := v1 + v2;
    IF se2 <= 0 THEN
        t := CASE WHEN mean2 = mean1 THEN 0 END;
        p_value := CASE WHEN mean2 = mean1 THEN 1 ELSE 0 END;
        RETURN;
    END IF;
    t := (mean2 - mean1) / sqrt(se2);
    df := se2 ^ 2 / (CASE WHEN v1 > 0 THEN v1 ^ 2 / (n1 - 1) ELSE 0 END
                     + CASE WHEN v2 > 0 THEN v2 ^ 2 / (n2 - 1) ELSE 0 END);
    p_value := folio_perf_data.inc_beta(df / 2, 0.5, df / (df + t ^ 2));
END
$$;

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
        "max_findings":               [10, 1, 1000]
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
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r jsonb := folio_perf_data.check_rules(rules);
    w record;
    b_mean double precision := b_mean_;
    n_mean double precision := n_mean_;
BEGIN
    w := folio_perf_data.welch(b_calls, b_mean_, b_sd, n_calls, n_mean_, n_sd);
    t := w.t;
    df := w.df;
    p_value := w.p_value;
    change_pct := CASE WHEN b_mean > 0 THEN 100 * (n_mean - b_mean) / b_mean END;
    impact_ms := (n_mean - b_mean) * n_calls;
    floor_ms := greatest((r->>'min_impact_ms')::double precision,
                         (r->>'min_impact_pct')::double precision / 100 * coalesce(base_db_time_ms, 0));
    IF p_value IS NULL THEN
        significant := NULL;
        verdict := 'info';
        RETURN;
    END IF;
    significant := p_value < (r->>'alpha')::double precision
                   AND abs(coalesce(change_pct, 0)) >= (r->>'min_change_pct')::double precision
                   AND abs(impact_ms) >= floor_ms AND impact_ms <> 0;
    verdict := CASE WHEN NOT significant THEN 'pass'
                    WHEN n_mean > b_mean THEN 'regression' ELSE 'improvement' END;
END
$$;

/*
 * active_span(window): the part of a window when the workload ran, from
 * the sampler's ticks: a tick is busy when its active sessions reach
 * max(1, a quarter of the window's 90th percentile); busy ticks less than
 * max(1 s, 3 ticks) apart form a burst; the span runs from the first to
 * the last burst of at least max(1 s, 5 ticks) (a snapshot's own capture,
 * a psql call, is shorter and is not load).  The ticks of the begin
 * snapshot's capture are left out.  idle_*: the window outside the span;
 * idle_connections_avg/max: the connections held before the span began
 * (the idle pool, a baseline to subtract), else after it ended.  NULLs
 * and a note where the sampler has no ticks or nothing was busy.
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
    tk jsonb;
    thr numeric;
    tick_s numeric;
BEGIN
    SELECT * INTO w FROM folio_perf_data.sample_window(p_window);
    wall_s := round(extract(epoch FROM w.t1 - w.t0)::numeric, 3);
    IF w.n_ticks = 0 THEN
        note := coalesce(w.note, 'off: no samples in this window');
        RETURN;
    END IF;
    SELECT b.taken_at + coalesce(b.capture_ms, 0) * interval '1 millisecond'
    INTO skip_until
    FROM folio_perf_data.window x JOIN folio_perf_data.snapshot b ON b.snap_id = x.begin_snap
    WHERE x.window_id = p_window;
    -- the window's ticks once: [ts, connections, active, interval ms]
    SELECT coalesce(jsonb_agg(jsonb_build_array(x.ts, x.c, x.a, x.iv) ORDER BY x.ts), '[]') INTO tk
    FROM (SELECT i.started_at + u.ms * interval '1 millisecond' AS ts, u.c, u.a, i.sample_interval_ms AS iv
          FROM folio_perf_data.sample_interval i,
               unnest(i.tick_ms, i.tick_connections, i.tick_active) AS u(ms, c, a)
          WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1
            AND i.target_id IS NOT DISTINCT FROM w.target_id) x
    WHERE x.ts >= w.t0 AND x.ts <= w.t1;
    SELECT greatest(1, 0.25 * percentile_cont(0.9) WITHIN GROUP (ORDER BY (t->>2)::int))::numeric,
           max((t->>3)::int) / 1000.0
    INTO thr, tick_s
    FROM jsonb_array_elements(tk) t WHERE (t->>0)::timestamptz > skip_until;
    busy_level := round(thr, 2);
    WITH busy AS (
        SELECT (t->>0)::timestamptz AS ts, (t->>3)::int AS iv_ms
        FROM jsonb_array_elements(tk) t
        WHERE (t->>0)::timestamptz > skip_until AND (t->>2)::int >= thr
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
    WHERE (t->>0)::timestamptz > skip_until AND (t->>0)::timestamptz < active_begin;
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

-- 150 privileges for 136
DO $$
DECLARE
    f record;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure::text AS obj
        FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass
             AND d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
        WHERE p.pronamespace = 'folio_perf_data'::regnamespace
          AND p.proname IN ('ln_gamma', 'inc_beta', 'welch', 'check_rules', 'significance',
                            'active_span', 'db_cpu_pct_between', 'window_headline')
    LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f.obj);
    END LOOP;
END
$$;
GRANT EXECUTE ON FUNCTION
    folio_perf_data.ln_gamma(double precision),
    folio_perf_data.inc_beta(double precision, double precision, double precision),
    folio_perf_data.welch(numeric, numeric, numeric, numeric, numeric, numeric),
    folio_perf_data.check_rules(jsonb),
    folio_perf_data.significance(bigint, numeric, numeric, bigint, numeric, numeric, numeric, jsonb),
    folio_perf_data.active_span(bigint),
    folio_perf_data.db_cpu_pct_between(bigint, timestamptz, timestamptz),
    folio_perf_data.window_headline(bigint, bigint)
    TO folio_perf_reader, pg_read_all_stats;

-- #31 snapshots: no single kept item can fail a snapshot (020_storage,
-- 045_capture_items, 050_capture, 070_windows, 090_report_tables,
-- 100_plans, as they are there)
ALTER TABLE folio_perf_data.snapshot ADD COLUMN skipped jsonb NOT NULL DEFAULT '[]';
ALTER TABLE folio_perf_data.plan ADD COLUMN json_invalid boolean NOT NULL DEFAULT false,
    ADD COLUMN plan_json_text text,
    ADD CHECK (json_invalid = (plan_json_text IS NOT NULL));

DROP FUNCTION folio_perf_plans_take();
DROP FUNCTION folio_perf_plans_current();
DROP VIEW folio_perf_plans_status;
DROP FUNCTION folio_perf_plans_status();
DROP FUNCTION folio_perf_plans(bigint, boolean);
CREATE FUNCTION folio_perf_plans_take(
    OUT dbid oid, OUT userid oid, OUT queryid bigint, OUT toplevel boolean,
    OUT duration_ms double precision, OUT captured_at timestamptz,
    OUT fingerprint bigint, OUT shapes bigint[], OUT slow_calls bigint,
    OUT analyzed boolean, OUT truncated boolean, OUT json_invalid boolean,
    OUT plan_text text, OUT plan_json text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_plans_take'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

CREATE FUNCTION folio_perf_plans_current(
    OUT dbid oid, OUT userid oid, OUT queryid bigint, OUT toplevel boolean,
    OUT duration_ms double precision, OUT captured_at timestamptz,
    OUT fingerprint bigint, OUT shapes bigint[], OUT slow_calls bigint,
    OUT analyzed boolean, OUT truncated boolean, OUT json_invalid boolean,
    OUT plan_text text, OUT plan_json text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_plans_current'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION folio_perf_plans_status(
    OUT preloaded boolean, OUT plan_min_duration_ms int, OUT plan_analyze boolean,
    OUT plan_sample_rate double precision, OUT max_plans int,
    OUT plan_max_bytes int, OUT shmem_bytes bigint, OUT entries bigint,
    OUT entries_this_db bigint, OUT slow_executions bigint,
    OUT plans_stored bigint, OUT dropped bigint, OUT evicted bigint,
    OUT truncated bigint, OUT json_invalid bigint, OUT analyzed_executions bigint, OUT taken bigint,
    OUT reset_at timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'folio_perf_plans_status'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE VIEW folio_perf_plans_status AS
    SELECT * FROM folio_perf_plans_status();

CREATE OR REPLACE VIEW folio_perf_data.stmt_plan_text WITH (security_barrier) AS
SELECT sp.snap_id, sp.dbid, sp.userid, sp.queryid, sp.toplevel, p.plan_id,
       p.fingerprint, p.analyzed, p.truncated, p.outline,
       CASE WHEN v.see_all OR sp.userid = v.me THEN p.plan_text
            ELSE '<insufficient privilege>' END AS plan_text,
       CASE WHEN v.see_all OR sp.userid = v.me THEN p.plan_json END AS plan_json,
       p.json_invalid,
       CASE WHEN v.see_all OR sp.userid = v.me THEN p.plan_json_text END AS plan_json_text
FROM folio_perf_data.stmt_plan sp
JOIN folio_perf_data.plan p ON p.plan_id = sp.plan_id
-- may_see_text()'s rule, worked out once per query rather than per row
CROSS JOIN (SELECT pg_catalog.pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') AS see_all,
                   (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) AS me) v;

CREATE OR REPLACE FUNCTION folio_perf_data.store_plans(p_snap bigint)
RETURNS int
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n int;
    r record;
    st text;
    msg text;
BEGIN
    -- created once per session, emptied at commit; a table of that name
    -- the current role did not make is refused (see capture())
    IF folio_perf_data.work_table_missing('fperf_cur_plan') THEN
        CREATE TEMP TABLE fperf_cur_plan ON COMMIT DELETE ROWS AS
        SELECT t.*, NULL::uuid AS plan_md5
        FROM @extschema@.folio_perf_plans_take() t WITH NO DATA;
    ELSE
        DELETE FROM pg_temp.fperf_cur_plan;
    END IF;
    INSERT INTO pg_temp.fperf_cur_plan
    SELECT t.*, pg_catalog.md5(t.plan_text || coalesce(t.plan_json, ''))::uuid AS plan_md5
    FROM @extschema@.folio_perf_plans_take() t;
    GET DIAGNOSTICS n = ROW_COUNT;
    IF n = 0 THEN
        RETURN 0;
    END IF;

    BEGIN
        PERFORM folio_perf_data.store_plan_rows(NULL);
    EXCEPTION WHEN OTHERS THEN
        FOR r IN SELECT DISTINCT ON (c.plan_md5) c.plan_md5, c.queryid, c.userid, c.toplevel
                 FROM pg_temp.fperf_cur_plan c ORDER BY c.plan_md5 LOOP
            BEGIN
                PERFORM folio_perf_data.store_plan_rows(r.plan_md5);
            EXCEPTION WHEN OTHERS THEN
                GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
                DELETE FROM pg_temp.fperf_cur_plan c WHERE c.plan_md5 = r.plan_md5;
                PERFORM folio_perf_data.skip_item(p_snap, 'plan',
                    format('of queryid %s (role oid %s, %s)', r.queryid, r.userid,
                           CASE WHEN r.toplevel THEN 'top level' ELSE 'nested' END), st, msg);
            END;
        END LOOP;
        SELECT count(*) INTO n FROM pg_temp.fperf_cur_plan;
    END;

    INSERT INTO folio_perf_data.stmt_plan (snap_id, dbid, userid, queryid, toplevel,
        plan_id, fingerprint, duration_ms, captured_at, shapes, slow_calls)
    SELECT p_snap, c.dbid, c.userid, c.queryid, c.toplevel, p.plan_id, c.fingerprint,
           c.duration_ms, c.captured_at, c.shapes, c.slow_calls
    FROM pg_temp.fperf_cur_plan c
    JOIN folio_perf_data.plan p ON p.plan_md5 = c.plan_md5;
    RETURN n;
END
$$;

CREATE FUNCTION folio_perf_data.store_plan_rows(p_md5 uuid)
RETURNS void
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    INSERT INTO folio_perf_data.plan (plan_md5, fingerprint, analyzed, truncated,
        outline, plan_text, plan_json, json_invalid, plan_json_text)
    SELECT DISTINCT ON (c.plan_md5) c.plan_md5, c.fingerprint, c.analyzed, c.truncated,
           folio_perf_data.plan_outline(c.plan_text), c.plan_text,
           CASE WHEN NOT c.json_invalid THEN c.plan_json::jsonb END,
           c.json_invalid, CASE WHEN c.json_invalid THEN c.plan_json END
    FROM pg_temp.fperf_cur_plan c
    WHERE p_md5 IS NULL OR c.plan_md5 OPERATOR(pg_catalog.=) p_md5
    ORDER BY c.plan_md5
    ON CONFLICT (plan_md5) DO NOTHING
$$;

CREATE FUNCTION folio_perf_plans(window_id bigint, include_housekeeping boolean DEFAULT false)
RETURNS TABLE(queryid bigint, tenant text, module text, attributed_by text,
    role name, toplevel boolean, slowest_ms double precision,
    captured_at timestamptz, slow_calls bigint, plans_seen int,
    plan_changed boolean, analyzed boolean, truncated boolean, json_invalid boolean,
    plan_id bigint, outline text, plan text, plan_json jsonb, query text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
    RETURN QUERY
    SELECT w.queryid, k.tenant, k.module, k.attributed_by,
           coalesce(k.rolname, r.rolname), w.toplevel, w.slowest_ms, w.captured_at,
           w.slow_calls, w.plans_seen, w.plans_seen > 1, pt.analyzed, pt.truncated,
           pt.json_invalid, w.plan_id, pt.outline, pt.plan_text, pt.plan_json, t.query
    FROM folio_perf_data.window_plans(wb.begin_snap, wb.end_snap) w
    JOIN folio_perf_data.stmt_plan_text pt
      ON pt.snap_id = w.best_snap AND pt.dbid = w.dbid AND pt.userid = w.userid
     AND pt.queryid = w.queryid AND pt.toplevel = w.best_toplevel
    LEFT JOIN folio_perf_data.stmt_key k ON k.key_id = w.key_id
    LEFT JOIN pg_catalog.pg_roles r ON r.oid = w.userid
    LEFT JOIN folio_perf_data.stmt_text t ON t.key_id = w.key_id
    -- plans of statements folio_perf ran itself only when asked for
    WHERE include_housekeeping
       OR NOT (coalesce(k.housekeeping, false) OR folio_perf_data.own_queryid(w.queryid))
    ORDER BY w.slowest_ms DESC, w.queryid;
END
$$;

CREATE OR REPLACE FUNCTION folio_perf_data.report_plans(doc jsonb, p_window bigint)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    pl jsonb;
    lst text;
    n int;
    note text;
BEGIN
    SELECT coalesce(jsonb_object_agg(p.queryid::text || '/' || coalesce(p.role::text, '') || '/' || p.toplevel::text,
               jsonb_build_object('plan_id', p.plan_id, 'slowest_ms', round(p.slowest_ms::numeric, 3),
                   'captured_at', p.captured_at, 'slow_calls', p.slow_calls,
                   'plans_seen', p.plans_seen, 'plan_changed', p.plan_changed,
                   'analyzed', p.analyzed, 'truncated', p.truncated,
                   'outline', p.outline, 'text', p.plan)
               -- only on a plan whose EXPLAIN JSON does not parse
               || CASE WHEN p.json_invalid THEN '{"json_invalid": true}'::jsonb ELSE '{}'::jsonb END), '{}'),
           count(*)
    INTO pl, n
    FROM @extschema@.folio_perf_plans(p_window) p;

    FOREACH lst IN ARRAY ARRAY['top_statements', 'top_by_calls', 'top_by_mean_time', 'top_by_io'] LOOP
        CONTINUE WHEN jsonb_typeof(doc->lst) IS DISTINCT FROM 'array';
        doc := jsonb_set(doc, ARRAY[lst], (
            SELECT coalesce(jsonb_agg(CASE WHEN pl ? ((t->>'queryid') || '/' || coalesce(t->>'role', '') || '/' || (t->>'toplevel'))
                                           THEN t || jsonb_build_object('plan', pl->((t->>'queryid') || '/' || coalesce(t->>'role', '') || '/' || (t->>'toplevel')))
                                           ELSE t END ORDER BY o), '[]')
            FROM jsonb_array_elements(doc->lst) WITH ORDINALITY AS x(t, o)));
    END LOOP;

    doc := doc || jsonb_build_object('nested_plans', (
        SELECT coalesce(jsonb_agg(jsonb_build_object('rank', x.rank, 'queryid', x.queryid,
                   'tenant', x.tenant, 'module', x.module, 'role', x.role, 'toplevel', false,
                   'query', x.query, 'plan', pl->(x.queryid::text || '/' || coalesce(x.role::text, '') || '/false'))
                   ORDER BY x.rank), '[]')
        FROM (SELECT row_number() OVER (ORDER BY p.slowest_ms DESC, p.queryid) AS rank, p.*
              FROM @extschema@.folio_perf_plans(p_window) p
              WHERE NOT p.toplevel
              ORDER BY p.slowest_ms DESC, p.queryid
              LIMIT 10) x));

    note := CASE
        WHEN n > 0 THEN format('%s statements with a plan', n)
        WHEN NOT coalesce((doc#>>'{window,preloaded}')::boolean, false)
            THEN 'off: plans need folio_perf in shared_preload_libraries'
        WHEN current_setting('folio_perf.plan_min_duration', true) = '-1'
            THEN 'off: folio_perf.plan_min_duration = -1'
        ELSE format('none: no execution in the window took folio_perf.plan_min_duration (now %s) or longer',
                    coalesce(current_setting('folio_perf.plan_min_duration', true), 'unset')) END;
    RETURN jsonb_set(doc, '{window,plans}', to_jsonb(note));
END
$$;

CREATE OR REPLACE FUNCTION folio_perf_data.render_plans(fmt text, doc jsonb, lst text, qmap jsonb DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
-- qmap: statement text -> its number in the report's SQL appendix; a
-- plan names its statement by that number (the text is there in full)
DECLARE
    title text := CASE lst WHEN 'top_statements' THEN 'Plans of the top statements'
                           WHEN 'nested_plans' THEN 'Plans of the slowest nested statements'
                           ELSE 'Plans of the top statements by ' || replace(replace(lst, 'top_by_', ''), '_', ' ') END;
    shown jsonb := '[]';
    r jsonb;
    head text;
    body text;
    qref text;
    out text := '';
    k int := 0;
BEGIN
    IF lst NOT IN ('top_statements', 'nested_plans') THEN
        SELECT coalesce(jsonb_agg(t->'plan'->'plan_id'), '[]') INTO shown
        FROM jsonb_array_elements(doc->'top_statements') t WHERE t ? 'plan';
    END IF;
    FOR r IN SELECT t FROM jsonb_array_elements(doc->lst) t
             WHERE jsonb_typeof(t->'plan') = 'object'
               AND NOT shown @> jsonb_build_array(t->'plan'->'plan_id') LOOP
        k := k + 1;
        -- the first five of a list; the rest are counted
        CONTINUE WHEN k > 5;
        qref := 'Q' || (coalesce(qmap, '{}')->>(r->>'query'));
        head := format('#%s %s%s%s: slowest execution %s ms, ended %s; executions over plan_min_duration: %s%s%s',
            r->>'rank', coalesce(qref || ' ', ''), coalesce(r->>'module', 'unattributed'),
            coalesce(' (' || (r->>'tenant') || ')', ''),
            folio_perf_data.fmt_sig((r->'plan'->>'slowest_ms')::numeric), left(replace(r->'plan'->>'captured_at', 'T', ' '), 19),
            r->'plan'->>'slow_calls',
            CASE WHEN (r->'plan'->>'plan_changed')::boolean
                 THEN format(', plan changed in the window (%s plans)', r->'plan'->>'plans_seen') ELSE '' END,
            CASE WHEN (r->'plan'->>'truncated')::boolean THEN ', plan truncated' ELSE '' END
            || CASE WHEN (r->'plan'->>'json_invalid')::boolean
                    THEN ', EXPLAIN printed invalid JSON (kept as text)' ELSE '' END);
        body := r->'plan'->>'text';
        IF fmt = 'html' THEN
            out := out || '<details><summary>' || folio_perf_data.html_escape(folio_perf_data.fold(head))
                || '</summary>'
                || CASE WHEN qref IS NOT NULL THEN '<p>Statement: <a href="#q' || substr(qref, 2) || '">' || qref || '</a></p>'
                        ELSE '<p><code>' || folio_perf_data.html_escape(r->>'query') || '</code></p>' END
                || '<pre>' || folio_perf_data.html_escape(body) || E'</pre></details>\n';
        ELSIF fmt = 'markdown' THEN
            out := out || '**' || folio_perf_data.md_escape(head) || E'**\n\n'
                || CASE WHEN qref IS NULL THEN folio_perf_data.md_code(r->>'query') || E'\n' ELSE '' END
                || folio_perf_data.md_code(body, '') || E'\n';
        ELSE
            out := out || folio_perf_data.fold(head) || E'\n'
                || coalesce(folio_perf_data.sql_start(r->>'query', 100), '') || E'\n'
                || regexp_replace(body, '^', '    ', 'gn') || E'\n\n';
        END IF;
    END LOOP;
    IF k = 0 AND lst <> 'top_statements' THEN
        RETURN '';
    END IF;
    IF k = 0 THEN
        out := CASE fmt WHEN 'html' THEN '<p class="note">' || folio_perf_data.html_escape('Plans: ' || coalesce(doc#>>'{window,plans}', 'none')) || E'</p>\n'
                        WHEN 'markdown' THEN '_Plans: ' || folio_perf_data.md_escape(coalesce(doc#>>'{window,plans}', 'none')) || E'_\n\n'
                        ELSE '(Plans: ' || coalesce(doc#>>'{window,plans}', 'none') || E')\n\n' END;
    ELSE
        out := CASE fmt WHEN 'html' THEN '<h3 id="' || folio_perf_data.slug(title) || '">' || folio_perf_data.html_escape(title) || E'</h3>\n'
                        WHEN 'markdown' THEN '### ' || title || E'\n\n'
                        ELSE title || E'\n' || repeat('=', length(title)) || E'\n' END
            || out;
    END IF;
    IF k > 5 THEN
        head := format('Plans of %s more statements: folio_perf_plans(%s) or the json format.', k - 5, doc#>>'{window,window_id}');
        out := out || CASE fmt WHEN 'html' THEN '<p class="note">' || folio_perf_data.html_escape(head) || E'</p>\n'
                               WHEN 'markdown' THEN '_' || folio_perf_data.md_escape(head) || E'_\n\n'
                               ELSE '(' || head || E')\n\n' END;
    END IF;
    -- the nested statements' plans follow those of the top statements
    IF lst = 'top_statements' THEN
        out := out || folio_perf_data.render_plans(fmt, doc, 'nested_plans', qmap);
    END IF;
    RETURN out;
END
$$;

CREATE FUNCTION folio_perf_data.skip_item(p_snap bigint, p_kind text, p_item text,
    p_sqlstate text, p_error text)
RETURNS void
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    UPDATE folio_perf_data.snapshot s
    SET skipped = s.skipped OPERATOR(pg_catalog.||) pg_catalog.jsonb_build_array(
        pg_catalog.jsonb_build_object('kind', p_kind, 'item', p_item,
                                      'sqlstate', p_sqlstate, 'error', p_error))
    WHERE s.snap_id OPERATOR(pg_catalog.=) p_snap
$$;

CREATE FUNCTION folio_perf_data.capture_new_statements(p_snap bigint, p_target int)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- pg_stat_statements keeps utility statements verbatim: a
    -- password given in CREATE/ALTER ROLE, USER, GROUP or USER
    -- MAPPING is cut off before anything is stored (or dumped)
    UPDATE pg_temp.fperf_cur_stmt c
       SET query = pg_catalog.regexp_replace(c.query, '(\mpassword\M).*$', '\1 <redacted>', 'i')
     WHERE c.key_id IS NULL
       AND c.query ~* '\m(create|alter)\s+(role|user|group)\M'
       AND c.query ~* '\mpassword\M';

    INSERT INTO folio_perf_data.query_text (text_md5, query)
    SELECT DISTINCT ON (pg_catalog.md5(c.query)::uuid) pg_catalog.md5(c.query)::uuid, c.query
    FROM pg_temp.fperf_cur_stmt c WHERE c.key_id IS NULL AND c.query IS NOT NULL
    ON CONFLICT (text_md5) DO NOTHING;

    WITH n AS (
        SELECT row_number() OVER () AS ord, c.*
        FROM pg_temp.fperf_cur_stmt c WHERE c.key_id IS NULL
    ), a AS (
        SELECT * FROM folio_perf_data.attribute_statements(
            (SELECT array_agg(n.queryid ORDER BY n.ord) FROM n),
            (SELECT array_agg(n.userid ORDER BY n.ord) FROM n),
            (SELECT array_agg(n.query ORDER BY n.ord) FROM n),
            p_target)
    ), ins AS (
        INSERT INTO folio_perf_data.stmt_key (dbid, userid, queryid, toplevel,
            target_id, text_id, rolname, tenant, module, attributed_by, housekeeping,
            first_snap)
        SELECT n.dbid, n.userid, n.queryid, n.toplevel, p_target, t.text_id, a.rolname,
               a.tenant, a.module, a.attributed_by, coalesce(a.housekeeping, false), p_snap
        FROM n
        JOIN a ON a.ord = n.ord
        LEFT JOIN folio_perf_data.query_text t ON t.text_md5 = pg_catalog.md5(n.query)::uuid
        RETURNING key_id, dbid, userid, queryid, toplevel
    )
    UPDATE pg_temp.fperf_cur_stmt c SET key_id = ins.key_id
    FROM ins
    WHERE ins.dbid = c.dbid AND ins.userid = c.userid
      AND ins.queryid = c.queryid AND ins.toplevel = c.toplevel;
END
$$;

CREATE FUNCTION folio_perf_data.capture_new_relations(p_snap bigint, p_dbid oid, p_target int)
RETURNS void
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH nk AS (
        INSERT INTO folio_perf_data.rel_key (dbid, target_id, relid, relkind, nspname, relname,
            table_relname, tenant, module, first_snap)
        SELECT p_dbid, p_target, r.relid, r.relkind, r.nspname, r.relname, r.table_relname,
               p.tenant, p.module, p_snap
        FROM pg_temp.fperf_cur_rel r
        CROSS JOIN LATERAL @extschema@.folio_perf_parse_schema(r.nspname::text) p
        WHERE r.rel_key_id IS NULL AND r.status <> 'd'
        RETURNING rel_key_id, relid
    )
    UPDATE pg_temp.fperf_cur_rel r SET rel_key_id = nk.rel_key_id FROM nk WHERE nk.relid = r.relid
$$;

CREATE FUNCTION folio_perf_data.capture_new_items(p_snap bigint, p_kind text,
    p_dbid oid, p_target int)
RETURNS int
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    st text;
    msg text;
    n int := 0;
BEGIN
    IF p_kind = 'statement' THEN
        BEGIN
            PERFORM folio_perf_data.capture_new_statements(p_snap, p_target);
            RETURN 0;
        EXCEPTION WHEN OTHERS THEN
            NULL;
        END;
        UPDATE pg_temp.fperf_cur_stmt c SET key_id = -1 WHERE c.key_id IS NULL;
        FOR r IN SELECT c.userid, c.queryid, c.toplevel FROM pg_temp.fperf_cur_stmt c
                 WHERE c.key_id = -1 LOOP
            BEGIN
                UPDATE pg_temp.fperf_cur_stmt c SET key_id = NULL
                WHERE c.key_id = -1 AND c.userid = r.userid AND c.queryid = r.queryid
                  AND c.toplevel = r.toplevel;
                PERFORM folio_perf_data.capture_new_statements(p_snap, p_target);
            EXCEPTION WHEN OTHERS THEN
                GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
                n := n + 1;
                PERFORM folio_perf_data.skip_item(p_snap, 'statement',
                    format('queryid %s (role oid %s, %s)', r.queryid, r.userid,
                           CASE WHEN r.toplevel THEN 'top level' ELSE 'nested' END), st, msg);
            END;
        END LOOP;
        DELETE FROM pg_temp.fperf_cur_stmt c WHERE c.key_id = -1;
    ELSIF p_kind = 'relation' THEN
        BEGIN
            PERFORM folio_perf_data.capture_new_relations(p_snap, p_dbid, p_target);
            RETURN 0;
        EXCEPTION WHEN OTHERS THEN
            NULL;
        END;
        UPDATE pg_temp.fperf_cur_rel c SET rel_key_id = -1
        WHERE c.rel_key_id IS NULL AND c.status <> 'd';
        FOR r IN SELECT c.relid, c.nspname, c.relname FROM pg_temp.fperf_cur_rel c
                 WHERE c.rel_key_id = -1 LOOP
            BEGIN
                UPDATE pg_temp.fperf_cur_rel c SET rel_key_id = NULL
                WHERE c.rel_key_id = -1 AND c.relid = r.relid;
                PERFORM folio_perf_data.capture_new_relations(p_snap, p_dbid, p_target);
            EXCEPTION WHEN OTHERS THEN
                GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
                n := n + 1;
                PERFORM folio_perf_data.skip_item(p_snap, 'relation',
                    format('%I.%I (oid %s)', r.nspname, r.relname, r.relid), st, msg);
            END;
        END LOOP;
        DELETE FROM pg_temp.fperf_cur_rel c WHERE c.rel_key_id = -1;
    ELSE
        RAISE EXCEPTION 'unknown item kind "%"', p_kind USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN n;
END
$$;

CREATE OR REPLACE FUNCTION folio_perf_data.capture(p_label text, p_kind text, p_target int DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
-- the work tables live as long as the session: every statement is planned
-- for what they hold now (one change or 100,000), never from a cached plan
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
    v        int := current_setting('server_version_num')::int;
    t0       timestamptz := clock_timestamp();
    tgt      int := coalesce(p_target, 0);
    mydb     oid;
    snap     bigint;
    n_stmt   int;
    n_stmt_s int;
    n_rel    int;
    n_rel_s  int;
    n_last   int;
    n_cur    int;
    n_gone   int;
    n_added  int;
    n_dropped int;
    n_last_rel int;
    last_rel_bytes bigint;
    cur_rel_bytes bigint;
    last_relid oid[];
    last_sig bigint[];
    last_rfn oid[];
    old_work_mem text;
    old_fetch text;
BEGIN
    IF p_kind IS NULL OR p_kind NOT IN ('manual', 'begin', 'end', 'timed') THEN
        RAISE EXCEPTION 'unknown snapshot kind "%"', coalesce(p_kind, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Take snapshots with folio_perf_snapshot(), folio_perf_begin() or folio_perf_end().';
    END IF;
    IF p_label IS NOT NULL AND octet_length(p_label) > 1000 THEN
        RAISE EXCEPTION 'snapshot label is too long (% bytes)', octet_length(p_label)
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'Labels are limited to 1000 bytes; put details into window tags.';
    END IF;
    IF pg_catalog.pg_is_in_recovery() THEN
        RAISE EXCEPTION 'cannot take a snapshot on a server in recovery'
            USING ERRCODE = 'read_only_sql_transaction',
                  HINT = 'Take snapshots on the primary, or collect from the standby as a remote target.';
    END IF;
    SELECT d.oid INTO mydb FROM pg_catalog.pg_database d
    WHERE d.datname = pg_catalog.current_database();

    IF p_target IS NULL THEN
        PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_snapshot'), mydb::int);
    ELSE
        -- a remote capture never waits for local ones, nor for other targets
        PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_snapshot_target'), p_target);
    END IF;

    -- the sampler (if running) writes what it has, so windows see samples up
    -- to here; without it this returns 0 at once
    PERFORM @extschema@.folio_perf_sampler_flush();

    IF v >= 150000 THEN
        old_fetch := current_setting('stats_fetch_consistency');
        PERFORM pg_catalog.set_config('stats_fetch_consistency', 'none', true);
    END IF;
    -- when every relation changed, the changes of 100,000 relations are
    -- sorted and kept in memory: not on disk at the default 4MB
    IF pg_catalog.pg_size_bytes(pg_catalog.current_setting('work_mem')) < 64 * 1024 * 1024 THEN
        old_work_mem := pg_catalog.current_setting('work_mem');
        PERFORM pg_catalog.set_config('work_mem', '64MB', true);
    END IF;

    -- the snapshot row (database, server, pg_stat_statements_info); for a
    -- target this connects, and mydb becomes the target database's oid
    IF p_target IS NULL THEN
        snap := folio_perf_data.capture_header_local(p_label, p_kind, mydb);
    ELSE
        SELECT h.snap, h.dbid INTO snap, mydb
        FROM folio_perf_data.capture_header_remote(p_label, p_kind, p_target) h;
    END IF;

    -- connections now, grouped
    INSERT INTO folio_perf_data.snapshot_activity
    SELECT snap, a.* FROM folio_perf_data.src_activity(p_target) a;

    ------------------------------------------------------------------
    -- statements
    --
    -- pg_stat_statements is read without texts and compared with
    -- stmt_last in one pass: a full join, so that entries that left come
    -- out too.  Only new, changed and gone entries are kept; texts are read
    -- only when there are new statements.
    ------------------------------------------------------------------
    SELECT count(*) INTO n_last FROM folio_perf_data.stmt_last l
    WHERE l.dbid = mydb AND coalesce(l.target_id, 0) = tgt;

    -- The work tables of a capture (fperf_cur_stmt, fperf_cur_rel,
    -- fperf_cur_plan) are created once per session and emptied at every
    -- commit.  Created and dropped by every snapshot, they left catalog
    -- cache entries behind for each new table (the planner's negative
    -- pg_statistic lookups, ~4.5 kB a snapshot), which grew a long-lived
    -- session such as the sampler's timed snapshots without bound; and they
    -- churned pg_class/pg_attribute/pg_type.  Their shape must follow the
    -- queries that fill them, column for column.  They belong to the
    -- extension's owner (this function's role); a temporary table of the
    -- same name that the caller made, with a trigger or a rule that would
    -- run as the owner, is refused (work_table_missing), never used.
    IF folio_perf_data.work_table_missing('fperf_cur_stmt') THEN
        CREATE TEMP TABLE fperf_cur_stmt ON COMMIT DELETE ROWS AS
        SELECT c.*, NULL::bigint AS key_id, NULL::bigint AS last_key_id
        FROM folio_perf_data.src_pgss(NULL, false) c WITH NO DATA;
    ELSE
        -- an earlier snapshot of this transaction
        DELETE FROM pg_temp.fperf_cur_stmt;
    END IF;
    INSERT INTO pg_temp.fperf_cur_stmt
    SELECT c.*, coalesce(k.key_id, l.key_id) AS key_id, l.key_id AS last_key_id
    FROM (folio_perf_data.src_pgss(p_target, false) c
          LEFT JOIN folio_perf_data.stmt_key k
            ON k.dbid = c.dbid AND k.userid = c.userid AND k.queryid = c.queryid
           AND k.toplevel = c.toplevel AND coalesce(k.target_id, 0) = tgt)
    FULL JOIN (SELECT x.key_id, x.calls, x.total_exec_time, x.rows
               FROM folio_perf_data.stmt_last x
               WHERE x.dbid = mydb AND coalesce(x.target_id, 0) = tgt) l
      ON l.key_id = k.key_id
    WHERE l.key_id IS NULL OR c.queryid IS NULL OR l.calls <> c.calls
       OR l.total_exec_time <> c.total_exec_time OR l.rows <> c.rows;
    GET DIAGNOSTICS n_cur = ROW_COUNT;
    n_stmt := n_last;

    -- nothing to store when nothing changed (the usual idle case)
    IF n_cur > 0 THEN
        -- new statements: read their texts, store each text once, attribute,
        -- create the key
        IF EXISTS (SELECT 1 FROM pg_temp.fperf_cur_stmt x WHERE x.key_id IS NULL) THEN
            UPDATE pg_temp.fperf_cur_stmt c SET query = t.query
            FROM folio_perf_data.src_pgss(p_target, true,
                     (SELECT array_agg(DISTINCT x.queryid) FROM pg_temp.fperf_cur_stmt x
                      WHERE x.key_id IS NULL)) t
            WHERE c.key_id IS NULL AND t.userid = c.userid AND t.queryid = c.queryid
              AND t.toplevel = c.toplevel;

            -- redaction, texts, attribution, keys; an item that cannot be
            -- stored is left out and named (045_capture_items)
            PERFORM folio_perf_data.capture_new_items(snap, 'statement', mydb, p_target);
        END IF;

        -- statements first seen before folio_perf recorded them as its own
        -- (src/own.c: the set starts empty at server start) become
        -- housekeeping when they run again
        IF p_target IS NULL THEN
            UPDATE folio_perf_data.stmt_key k SET housekeeping = true
            FROM fperf_cur_stmt c
            WHERE k.key_id = c.key_id AND c.queryid IS NOT NULL AND NOT k.housekeeping
              AND folio_perf_data.own_queryid(c.queryid);
        END IF;

        -- From PostgreSQL 18 one queryid can be the same statement on the
        -- relations of several tenants (the jumble uses relation names): the
        -- parse hook then vouches for no schema (an empty nsps), and keys it
        -- had attributed are attributed again without that evidence.
        IF p_target IS NULL AND EXISTS (
                SELECT 1 FROM pg_temp.fperf_cur_stmt c
                JOIN folio_perf_data.stmt_key k ON k.key_id = c.key_id
                WHERE k.attributed_by = 'relations') THEN
            WITH n AS (
                SELECT row_number() OVER () AS ord, k.key_id, k.queryid, k.userid, t.query
                FROM folio_perf_data.stmt_key k
                JOIN folio_perf_data.query_text t ON t.text_id = k.text_id
                WHERE k.attributed_by = 'relations'
                  AND k.key_id IN (SELECT c.key_id FROM pg_temp.fperf_cur_stmt c)
                  AND k.queryid IN (SELECT r.queryid FROM @extschema@.folio_perf_query_relations() r
                                    WHERE r.target_nsp IS NULL AND pg_catalog.cardinality(r.nsps) = 0)
            ), a AS (
                SELECT * FROM folio_perf_data.attribute_statements(
                    (SELECT array_agg(n.queryid ORDER BY n.ord) FROM n),
                    (SELECT array_agg(n.userid ORDER BY n.ord) FROM n),
                    (SELECT array_agg(n.query ORDER BY n.ord) FROM n))
            )
            UPDATE folio_perf_data.stmt_key k
            SET tenant = a.tenant, module = a.module, attributed_by = a.attributed_by,
                housekeeping = k.housekeeping OR coalesce(a.housekeeping, false)
            FROM n JOIN a ON a.ord = n.ord
            WHERE k.key_id = n.key_id;
        END IF;

        -- counters of changed, new and re-entered statements
        INSERT INTO folio_perf_data.stmt (snap_id, key_id, calls, total_exec_time,
            total_plan_time, plans, rows, shared_blks_hit, shared_blks_read,
            shared_blks_dirtied, shared_blks_written, local_blks_hit, local_blks_read,
            temp_blks_read, temp_blks_written, blk_read_time, blk_write_time,
            wal_records, wal_fpi, wal_bytes, stddev_exec_time, wal_buffers_full,
            parallel_workers_to_launch, parallel_workers_launched)
        SELECT snap, c.key_id, c.calls, c.total_exec_time, c.total_plan_time,
               c.plans, c.rows, c.shared_blks_hit, c.shared_blks_read,
               c.shared_blks_dirtied, c.shared_blks_written, c.local_blks_hit,
               c.local_blks_read, c.temp_blks_read, c.temp_blks_written,
               c.blk_read_time, c.blk_write_time, c.wal_records, c.wal_fpi, c.wal_bytes,
               c.stddev_exec_time, c.wal_buffers_full, c.parallel_workers_to_launch,
               c.parallel_workers_launched
        FROM pg_temp.fperf_cur_stmt c
        WHERE c.queryid IS NOT NULL;

        -- statements that left pg_stat_statements (eviction, reset)
        WITH gone AS (
            DELETE FROM folio_perf_data.stmt_last l
            USING pg_temp.fperf_cur_stmt c
            WHERE c.queryid IS NULL AND l.key_id = c.key_id
            RETURNING l.key_id
        )
        INSERT INTO folio_perf_data.stmt (snap_id, key_id, gone)
        SELECT snap, gone.key_id, true FROM gone;
        GET DIAGNOSTICS n_gone = ROW_COUNT;

        UPDATE folio_perf_data.stmt_last l
        SET calls = c.calls, total_exec_time = c.total_exec_time, rows = c.rows,
            last_snap = snap
        FROM pg_temp.fperf_cur_stmt c
        WHERE c.last_key_id IS NOT NULL AND c.queryid IS NOT NULL
          AND l.key_id = c.last_key_id;
        INSERT INTO folio_perf_data.stmt_last (key_id, dbid, target_id, calls, total_exec_time, rows, last_snap)
        SELECT c.key_id, c.dbid, p_target, c.calls, c.total_exec_time, c.rows, snap
        FROM pg_temp.fperf_cur_stmt c
        WHERE c.last_key_id IS NULL;
        GET DIAGNOSTICS n_added = ROW_COUNT;
        n_stmt := n_last - n_gone + n_added;
    END IF;

    -- plans of the slowest executions since the previous snapshot
    PERFORM folio_perf_data.store_plans(snap);

    ------------------------------------------------------------------
    -- relations
    --
    -- One pass over pg_class and the statistics, compared in C with the
    -- state of the previous snapshot (rel_last, passed as arrays): only
    -- new, changed and dropped relations come back (folio_perf_rel_changes).
    -- Sizes are read (folio_perf_relation_size stats the files, as
    -- pg_table_size does, without opening the relation)
    -- only where they can have changed: a new relation or relfilenode, or
    -- rows inserted, updated, deleted or vacuumed in the table (for an
    -- index: in its table, the other row of its partition).  Otherwise the
    -- size of the previous snapshot carries over: reads do not change sizes.
    ------------------------------------------------------------------
    SELECT array_agg(l.relid), array_agg(l.sig), array_agg(l.relfilenode),
           count(*), coalesce(sum(l.size_bytes), 0)
    INTO last_relid, last_sig, last_rfn, n_last_rel, last_rel_bytes
    FROM folio_perf_data.rel_last l WHERE l.dbid = mydb AND coalesce(l.target_id, 0) = tgt;

    IF folio_perf_data.work_table_missing('fperf_cur_rel') THEN
        CREATE TEMP TABLE fperf_cur_rel ON COMMIT DELETE ROWS AS
        SELECT r.*, NULL::bigint AS wsig, NULL::bigint AS rel_key_id,
               NULL::oid AS last_relid, NULL::oid AS last_relfilenode,
               NULL::bigint AS last_wsig, NULL::bigint AS last_size,
               NULL::bigint AS last_live, NULL::bigint AS last_dead,
               NULL::bigint AS size_bytes
        FROM folio_perf_data.src_rel_changes(NULL, NULL, NULL, NULL) r WITH NO DATA;
    ELSE
        DELETE FROM pg_temp.fperf_cur_rel;
    END IF;
    INSERT INTO pg_temp.fperf_cur_rel
    SELECT q.*,
           CASE WHEN q.status = 'd' THEN NULL
                WHEN q.last_size IS NOT NULL AND q.last_relfilenode = q.relfilenode
                 AND NOT bool_or(q.relkind <> 'i' AND q.wsig IS DISTINCT FROM q.last_wsig)
                         OVER (PARTITION BY coalesce(q.table_relid, q.relid))
                THEN q.last_size
                WHEN p_target IS NOT NULL THEN NULL     -- read from the target below
                ELSE @extschema@.folio_perf_relation_size(q.relid)
           END AS size_bytes
    FROM (
        SELECT r.*,
               r.tuples_inserted + r.tuples_updated + r.tuples_deleted
                 + r.vacuum_count + r.autovacuum_count AS wsig,
               l.rel_key_id, l.relid AS last_relid,
               l.relfilenode AS last_relfilenode, l.wsig AS last_wsig,
               l.size_bytes AS last_size, l.live_tup AS last_live, l.dead_tup AS last_dead
        FROM folio_perf_data.src_rel_changes(p_target, last_relid, last_sig, last_rfn) r
        -- by index, one probe per changed relation (not a hash of rel_last)
        LEFT JOIN LATERAL (
            SELECT x.* FROM folio_perf_data.rel_last x
            WHERE x.dbid = mydb AND x.relid = r.relid AND coalesce(x.target_id, 0) = tgt LIMIT 1
        ) l ON true
    ) q;
    GET DIAGNOSTICS n_cur = ROW_COUNT;
    IF p_target IS NOT NULL THEN
        UPDATE pg_temp.fperf_cur_rel c SET size_bytes = z.size_bytes
        FROM folio_perf_data.src_remote_sizes(p_target,
                 (SELECT array_agg(x.relid) FROM pg_temp.fperf_cur_rel x
                  WHERE x.status <> 'd' AND x.size_bytes IS NULL)) z
        WHERE z.relid = c.relid AND c.status <> 'd';
    END IF;
    n_rel := n_last_rel;
    n_rel_s := 0;
    cur_rel_bytes := last_rel_bytes;

    -- nothing to store when nothing changed (the usual idle case)
    IF n_cur > 0 THEN
        -- relations seen for the first time; one that cannot be stored is
        -- left out and named (045_capture_items)
        PERFORM folio_perf_data.capture_new_items(snap, 'relation', mydb, p_target);

        INSERT INTO folio_perf_data.rel (snap_id, rel_key_id, rewritten, seq_scan,
            seq_tup_read, idx_scan, idx_tup_fetch, n_tup_ins, n_tup_upd, n_tup_del,
            n_tup_hot_upd, n_live_tup, n_dead_tup, vacuum_count, autovacuum_count,
            analyze_count, autoanalyze_count, blks_read, blks_hit, toast_blks_read,
            toast_blks_hit, size_bytes)
        SELECT snap, r.rel_key_id,
               r.last_relfilenode IS NOT NULL AND r.last_relfilenode <> r.relfilenode,
               CASE WHEN r.relkind <> 'i' THEN r.numscans END,
               CASE WHEN r.relkind <> 'i' THEN r.tuples_returned END,
               CASE WHEN r.relkind = 'i' THEN r.numscans END,
               r.tuples_fetched,
               -- what an index does not have stays NULL
               CASE WHEN r.relkind <> 'i' THEN r.tuples_inserted END,
               CASE WHEN r.relkind <> 'i' THEN r.tuples_updated END,
               CASE WHEN r.relkind <> 'i' THEN r.tuples_deleted END,
               CASE WHEN r.relkind <> 'i' THEN r.tuples_hot_updated END,
               CASE WHEN r.relkind <> 'i' THEN r.live_tuples END,
               CASE WHEN r.relkind <> 'i' THEN r.dead_tuples END,
               CASE WHEN r.relkind <> 'i' THEN r.vacuum_count END,
               CASE WHEN r.relkind <> 'i' THEN r.autovacuum_count END,
               CASE WHEN r.relkind <> 'i' THEN r.analyze_count END,
               CASE WHEN r.relkind <> 'i' THEN r.autoanalyze_count END,
               r.blocks_read, r.blocks_hit,
               CASE WHEN r.relkind <> 'i' THEN r.toast_blocks_read END,
               CASE WHEN r.relkind <> 'i' THEN r.toast_blocks_hit END,
               r.size_bytes
        FROM pg_temp.fperf_cur_rel r
        WHERE r.status <> 'd';
        GET DIAGNOSTICS n_rel_s = ROW_COUNT;

        -- relations that were dropped
        WITH gone AS (
            DELETE FROM folio_perf_data.rel_last l
            USING pg_temp.fperf_cur_rel c
            WHERE c.status = 'd' AND l.rel_key_id = c.rel_key_id
            RETURNING l.rel_key_id
        ), g AS (
            UPDATE folio_perf_data.rel_key k SET dropped_snap = snap
            FROM gone WHERE k.rel_key_id = gone.rel_key_id
            RETURNING k.rel_key_id
        )
        INSERT INTO folio_perf_data.rel (snap_id, rel_key_id, gone, size_bytes)
        SELECT snap, g.rel_key_id, true, 0 FROM g;
        GET DIAGNOSTICS n_dropped = ROW_COUNT;
        n_rel_s := n_rel_s + n_dropped;

        UPDATE folio_perf_data.rel_last l
        SET relfilenode = c.relfilenode, sig = c.sig, wsig = c.wsig,
            size_bytes = c.size_bytes, live_tup = c.live_tuples,
            dead_tup = c.dead_tuples, last_snap = snap
        FROM pg_temp.fperf_cur_rel c
        WHERE c.status = 'c' AND l.rel_key_id = c.rel_key_id;
        INSERT INTO folio_perf_data.rel_last (rel_key_id, dbid, target_id, relid, relfilenode, sig,
            wsig, size_bytes, live_tup, dead_tup, last_snap)
        SELECT c.rel_key_id, mydb, p_target, c.relid, c.relfilenode, c.sig, c.wsig,
               c.size_bytes, c.live_tuples, c.dead_tuples, snap
        FROM pg_temp.fperf_cur_rel c
        WHERE c.status = 'n';
        GET DIAGNOSTICS n_added = ROW_COUNT;

        -- how many relations there are now, and their bytes: the previous
        -- state plus what changed
        n_rel := n_last_rel + n_added - n_dropped;
        SELECT last_rel_bytes + coalesce(sum(coalesce(c.size_bytes, 0) - coalesce(c.last_size, 0)), 0)
        INTO cur_rel_bytes FROM pg_temp.fperf_cur_rel c;

        -- per-schema roll-up of the schemas that changed: the schema's previous
        -- row plus what changed in it (sizes, tuples, relations added, dropped)
        WITH ch AS (
            SELECT coalesce(c.nspname,
                            (SELECT k.nspname FROM folio_perf_data.rel_key k
                             WHERE k.rel_key_id = c.rel_key_id)) AS nspname,
                   coalesce(c.relkind,
                            (SELECT k.relkind FROM folio_perf_data.rel_key k
                             WHERE k.rel_key_id = c.rel_key_id)) AS relkind,
                   CASE c.status WHEN 'd' THEN -1 WHEN 'n' THEN 1 ELSE 0 END AS dn,
                   coalesce(c.size_bytes, 0) - coalesce(c.last_size, 0) AS dbytes,
                   coalesce(c.live_tuples, 0) - coalesce(c.last_live, 0) AS dlive,
                   coalesce(c.dead_tuples, 0) - coalesce(c.last_dead, 0) AS ddead
            FROM pg_temp.fperf_cur_rel c
        ), d AS (
            SELECT ch.nspname,
                   sum(ch.dn) FILTER (WHERE ch.relkind <> 'i') AS dtables,
                   sum(ch.dn) FILTER (WHERE ch.relkind = 'i') AS dindexes,
                   sum(ch.dbytes) FILTER (WHERE ch.relkind <> 'i') AS dtable_bytes,
                   sum(ch.dbytes) FILTER (WHERE ch.relkind = 'i') AS dindex_bytes,
                   sum(ch.dlive) AS dlive, sum(ch.ddead) AS ddead
            FROM ch GROUP BY ch.nspname
        )
        INSERT INTO folio_perf_data.schema_stat (snap_id, dbid, target_id, nspname, tenant, module,
            n_tables, n_indexes, table_bytes, index_bytes, live_tup, dead_tup)
        SELECT snap, mydb, p_target, d.nspname,
               CASE WHEN p.nspname IS NOT NULL THEN p.tenant ELSE ps.tenant END,
               CASE WHEN p.nspname IS NOT NULL THEN p.module ELSE ps.module END,
               coalesce(p.n_tables, 0) + coalesce(d.dtables, 0),
               coalesce(p.n_indexes, 0) + coalesce(d.dindexes, 0),
               coalesce(p.table_bytes, 0) + coalesce(d.dtable_bytes, 0),
               coalesce(p.index_bytes, 0) + coalesce(d.dindex_bytes, 0),
               coalesce(p.live_tup, 0) + coalesce(d.dlive, 0),
               coalesce(p.dead_tup, 0) + coalesce(d.ddead, 0)
        FROM d
        LEFT JOIN LATERAL (
            SELECT s.* FROM folio_perf_data.schema_stat s
            WHERE s.dbid = mydb AND s.nspname = d.nspname AND s.snap_id < snap
              AND coalesce(s.target_id, 0) = tgt
            ORDER BY s.snap_id DESC LIMIT 1
        ) p ON true
        LEFT JOIN LATERAL @extschema@.folio_perf_parse_schema(d.nspname::text) ps ON true;
    END IF;

    IF old_fetch IS NOT NULL THEN
        PERFORM pg_catalog.set_config('stats_fetch_consistency', old_fetch, true);
    END IF;
    IF old_work_mem IS NOT NULL THEN
        PERFORM pg_catalog.set_config('work_mem', old_work_mem, true);
    END IF;

    -- database size: user relations (kept up to date above, without
    -- reading every file as pg_database_size does: 0.4 s for 200,000
    -- relations) plus the system catalogs of this database
    UPDATE folio_perf_data.snapshot s
    SET n_statements = n_stmt,
        n_statements_stored = (SELECT count(*) FROM folio_perf_data.stmt x WHERE x.snap_id = snap),
        n_relations = n_rel, n_relations_stored = n_rel_s,
        rel_bytes = cur_rel_bytes,
        db_size_bytes = cur_rel_bytes + folio_perf_data.src_catalog_bytes(p_target),
        capture_ms = 1000 * extract(epoch FROM clock_timestamp() - t0)
    WHERE s.snap_id = snap;

    RETURN snap;
END
$$;

CREATE OR REPLACE VIEW folio_perf_snapshots AS
SELECT s.snap_id, s.taken_at, s.label, s.kind, s.datname, s.target_id,
       s.server_start, s.preloaded, s.n_statements, s.n_statements_stored,
       s.n_relations, s.n_relations_stored, s.capture_ms,
       s.pgss_dealloc, s.pgss_stats_reset, s.db_stats_reset, s.max_connections,
       pg_catalog.jsonb_array_length(s.skipped) AS n_skipped, s.skipped
FROM folio_perf_data.snapshot s;

CREATE OR REPLACE FUNCTION folio_perf_window_flags(window_id bigint)
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
    FROM folio_perf_data.rel_delta(wb.begin_snap, wb.end_snap) x
    WHERE x.status <> 'ok'
    GROUP BY x.status;
END
$$;

-- 150 privileges for #31's new and re-created objects
REVOKE ALL ON FUNCTION folio_perf_plans_take(), folio_perf_plans_current(),
    folio_perf_plans_status(), folio_perf_plans(bigint, boolean),
    folio_perf_data.store_plan_rows(uuid),
    folio_perf_data.skip_item(bigint, text, text, text, text),
    folio_perf_data.capture_new_statements(bigint, integer),
    folio_perf_data.capture_new_relations(bigint, oid, integer),
    folio_perf_data.capture_new_items(bigint, text, oid, integer) FROM PUBLIC;
REVOKE ALL ON folio_perf_plans_status FROM PUBLIC;
GRANT EXECUTE ON FUNCTION folio_perf_plans_current(), folio_perf_plans_status(),
    folio_perf_plans(bigint, boolean)
    TO folio_perf_reader, pg_read_all_stats;
GRANT SELECT ON folio_perf_plans_status TO folio_perf_reader, pg_read_all_stats;

-- #27 the markdown report as one wiki page: folio_perf_report gained its
-- detail argument (the tail creates the new one)
DROP FUNCTION folio_perf_report(bigint, text);

-- #25 findings, step 2 (135_operations, 137_operation_cost, 138_check):
-- the operations' results gained columns and the compare sections an
-- argument (the tail creates the new ones); operations_findings is gone
-- (the verdict is folio_perf_check's); an operation's flow is a new table
-- with FOLIO's rows and the definitions' guard
DROP FUNCTION folio_perf_operations(bigint);
DROP FUNCTION folio_perf_data.operations_of(bigint, jsonb, text);
DROP FUNCTION folio_perf_data.operations_compare_sections(folio_perf_data.compare_row[], bigint, bigint);
DROP FUNCTION folio_perf_data.operations_findings(folio_perf_data.compare_row[]);
CREATE TABLE folio_perf_data.operation_flow (
    operation   text NOT NULL REFERENCES folio_perf_data.operation ON UPDATE CASCADE ON DELETE CASCADE,
    module      text NOT NULL
                CHECK (module ~ '^[a-z][a-z0-9_]{0,62}$'),
    relation    text NOT NULL
                CHECK (relation ~ '^[a-z_][a-z0-9_$]{0,62}$'),
    action      text NOT NULL DEFAULT 'any'
                CHECK (action IN ('read', 'write', 'insert', 'update', 'delete', 'any')),
    builtin     boolean NOT NULL DEFAULT false,
    -- the role that added it (operation_guard: only it changes or deletes it)
    owner       name NOT NULL DEFAULT CURRENT_USER,
    PRIMARY KEY (operation, module, relation, action)
);

-- FOLIO's flows (conventions.md 5.2 and 5.3): what mod-circulation asks of
-- the storage modules for a check-out and a check-in, what a data-import
-- record writes in SRS, SRM and inventory.
INSERT INTO folio_perf_data.operation_flow (operation, module, relation, action, builtin)
VALUES
    ('check_out', 'mod_circulation_storage', 'loan', 'insert', true),
    ('check_out', 'mod_circulation_storage', 'patron_action_session', 'write', true),
    ('check_out', 'mod_circulation_storage', 'request', 'read', true),
    ('check_out', 'mod_inventory_storage', 'item', 'any', true),
    ('check_out', 'mod_users', 'users', 'read', true),
    ('check_in', 'mod_circulation_storage', 'check_in', 'write', true),
    ('check_in', 'mod_circulation_storage', 'loan', 'read', true),
    ('check_in', 'mod_circulation_storage', 'loan', 'update', true),
    ('check_in', 'mod_circulation_storage', 'request', 'read', true),
    ('check_in', 'mod_inventory_storage', 'item', 'any', true),
    ('request_created', 'mod_circulation_storage', 'request', 'write', true),
    ('request_created', 'mod_inventory_storage', 'item', 'read', true),
    ('request_created', 'mod_users', 'users', 'read', true),
    ('record_imported', 'mod_source_record_storage', 'records_lb', 'write', true),
    ('record_imported', 'mod_source_record_storage', 'raw_records_lb', 'write', true),
    ('record_imported', 'mod_source_record_storage', 'marc_records_lb', 'write', true),
    ('record_imported', 'mod_source_record_storage', 'records_lb', 'read', true),
    ('record_imported', 'mod_source_record_manager', 'events_processed', 'write', true),
    ('record_imported', 'mod_source_record_manager', 'journal_records', 'write', true),
    ('record_imported', 'mod_source_record_manager', 'job_execution', 'any', true),
    ('record_imported', 'mod_inventory_storage', 'instance', 'write', true),
    ('instance_created', 'mod_inventory_storage', 'instance', 'write', true),
    ('instance_updated', 'mod_inventory_storage', 'instance', 'write', true),
    ('holdings_created', 'mod_inventory_storage', 'holdings_record', 'write', true),
    ('item_created', 'mod_inventory_storage', 'item', 'write', true),
    ('user_created', 'mod_users', 'users', 'write', true),
    ('fee_fine_charged', 'mod_feesfines', 'accounts', 'write', true),
    ('order_line_created', 'mod_orders_storage', 'po_line', 'write', true),
    ('invoice_created', 'mod_invoice_storage', 'invoices', 'write', true);

-- the built-in rows and the owners as the definitions': operation_guard() (135)
CREATE TRIGGER operation_flow_guard BEFORE INSERT OR UPDATE OR DELETE ON folio_perf_data.operation_flow
    FOR EACH ROW EXECUTE FUNCTION folio_perf_data.operation_guard();
-- end of #25 findings, step 2

-- #28 series of windows: the steps of the windows folio_perf_mark() splits
-- (139_series.sql; its functions and grants come with the tail)
CREATE TABLE folio_perf_data.window_step (
    window_id   bigint NOT NULL REFERENCES folio_perf_data.window ON DELETE CASCADE,
    step        int NOT NULL CHECK (step >= 1),
    begin_snap  bigint NOT NULL REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    label       text,
    tags        jsonb NOT NULL DEFAULT '{}',
    step_window bigint REFERENCES folio_perf_data.window ON DELETE SET NULL,
    PRIMARY KEY (window_id, step)
);
CREATE INDEX ON folio_perf_data.window_step (step_window);
-- end of #28 series of windows

-- #31 parallel-safety labels: IMMUTABLE functions that compute only (no
-- subtransaction, no write, callees all PARALLEL SAFE) are PARALLEL SAFE
-- (040_sources, 080_window_arithmetic, 100_plans, 120_rendering, 135_operations,
-- and 139_series.sql's svg_series_chart, which the tail creates)
ALTER FUNCTION folio_perf_data.pgss_select_list(integer,boolean) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.check_n(integer) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.render_plans(text,jsonb,text,jsonb) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.sql_refs(jsonb[]) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.sql_appendix(text,jsonb,jsonb[]) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.render_section(text,jsonb,jsonb) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.check_format(text) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.nice_ticks(numeric,boolean) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.svg_bars(text,jsonb,text) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.kv_section(text,jsonb,text[]) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.html_head(text) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.operations_sections(jsonb) PARALLEL SAFE;

-- #23 window facts: a window's statement and relation differences stored
-- on first use (020_storage.sql; window_facts, stmt_delta, rel_delta and
-- folio_perf_purge come with the generated tail, the grants and the dump
-- configuration, which leaves these tables out, with 150_privileges.sql)
/*
 * Window facts: a window's statement and relation differences
 * (stmt_delta_compute, rel_delta_compute of its two snapshots), stored the
 * first time a report asks for them (window_facts, 080) and read by every
 * later report, compare and trend of that window instead of computed
 * again.  fact_pair says which (begin, end, kind) are stored; its rows in
 * fact_stmt and fact_rel are exactly what the compute functions return, in
 * the order they return them (ord: sums of floating-point columns over
 * them then come out the same to the last digit).
 * Differences between two snapshots change only when purge moves rows of a
 * snapshot between them: purge deletes those pairs (and a snapshot's
 * pairs go with it).  Not dumped: derived, computed again on first use.
 */
CREATE TABLE folio_perf_data.fact_pair (
    begin_snap  bigint NOT NULL REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    end_snap    bigint NOT NULL REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('stmt_delta', 'rel_delta')),
    n_rows      bigint NOT NULL,
    compute_ms  double precision NOT NULL,
    computed_at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    PRIMARY KEY (begin_snap, end_snap, kind)
);
CREATE INDEX ON folio_perf_data.fact_pair (end_snap);

CREATE TABLE folio_perf_data.fact_stmt (
    begin_snap bigint NOT NULL,
    end_snap bigint NOT NULL,
    key_id bigint NOT NULL, status text NOT NULL, calls bigint,
    total_exec_time double precision, total_plan_time double precision,
    rows bigint, shared_blks_hit bigint, shared_blks_read bigint,
    shared_blks_dirtied bigint, shared_blks_written bigint,
    temp_blks_read bigint, temp_blks_written bigint,
    blk_read_time double precision, blk_write_time double precision,
    wal_bytes numeric, first_calls_mean double precision,
    stddev_exec_time double precision, wal_buffers_full bigint,
    parallel_workers_to_launch bigint, parallel_workers_launched bigint,
    ord bigint NOT NULL    -- the row's place in stmt_delta_compute's result
);
CREATE INDEX ON folio_perf_data.fact_stmt (begin_snap, end_snap, ord);

CREATE TABLE folio_perf_data.fact_rel (
    begin_snap bigint NOT NULL,
    end_snap bigint NOT NULL,
    rel_key_id bigint NOT NULL, status text NOT NULL,
    seq_scan bigint, seq_tup_read bigint, idx_scan bigint, idx_tup_fetch bigint,
    n_tup_ins bigint, n_tup_upd bigint, n_tup_del bigint, n_tup_hot_upd bigint,
    vacuum_count bigint, autovacuum_count bigint, analyze_count bigint,
    autoanalyze_count bigint, blks_read bigint, blks_hit bigint,
    toast_blks_read bigint, toast_blks_hit bigint,
    n_live_tup bigint, n_dead_tup bigint, size_begin bigint, size_end bigint,
    ord bigint NOT NULL    -- the row's place in rel_delta_compute's result
);
CREATE INDEX ON folio_perf_data.fact_rel (begin_snap, end_snap, ord);

-- a pair's rows go with it (no foreign key checked per stored row)
CREATE FUNCTION folio_perf_data.fact_pair_on_delete()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF OLD.kind = 'stmt_delta' THEN
        DELETE FROM folio_perf_data.fact_stmt f
        WHERE f.begin_snap = OLD.begin_snap AND f.end_snap = OLD.end_snap;
    ELSE
        DELETE FROM folio_perf_data.fact_rel f
        WHERE f.begin_snap = OLD.begin_snap AND f.end_snap = OLD.end_snap;
    END IF;
    RETURN OLD;
END
$$;
CREATE TRIGGER fact_pair_on_delete AFTER DELETE ON folio_perf_data.fact_pair
    FOR EACH ROW EXECUTE FUNCTION folio_perf_data.fact_pair_on_delete();
-- #30 remote targets at parity: generic plans of remote windows
-- (105_remote_plans.sql: plan.generic, remote_plan_miss), DB CPU (sampled)
-- against a target's vCPU count (target.vcpus; folio_perf_target_add gained
-- its third argument vcpus, 060_targets.sql)
ALTER TABLE folio_perf_data.target
    ADD COLUMN vcpus int CHECK (vcpus BETWEEN 1 AND 100000);
ALTER TABLE folio_perf_data.plan
    ADD COLUMN generic boolean NOT NULL DEFAULT false;
DROP FUNCTION folio_perf_target_add(text, text);
-- folio_perf_plans gained the column generic (the #31 block above made it
-- with json_invalid)
DROP FUNCTION folio_perf_plans(bigint, boolean);
CREATE TABLE folio_perf_data.remote_plan_miss (
    snap_id     bigint NOT NULL REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    key_id      bigint NOT NULL REFERENCES folio_perf_data.stmt_key,
    reason      text NOT NULL,
    PRIMARY KEY (snap_id, key_id)
);
-- 1.0.0's remote snapshots took the repository's own plans (reported by
-- no window: a remote window's plans are its target's); gone
DELETE FROM folio_perf_data.stmt_plan sp
USING folio_perf_data.snapshot s
WHERE s.snap_id = sp.snap_id AND s.target_id IS NOT NULL;
DELETE FROM folio_perf_data.plan p
WHERE NOT EXISTS (SELECT 1 FROM folio_perf_data.stmt_plan x WHERE x.plan_id = p.plan_id);


-- #31 one capture of a database at a time by a lock on an empty table, not
-- an advisory lock (PostgreSQL's advisory_lock test listed it while a timed
-- snapshot ran); 020_storage, capture() and folio_perf_purge() come with the
-- tail
CREATE TABLE folio_perf_data.capture_lock ();
SELECT pg_catalog.pg_extension_config_dump('folio_perf_data.capture_lock', '');

-- #29 table health: the settings and index definitions snapshots store
-- (138_table_health.sql; its functions come with the tail)
CREATE TABLE folio_perf_data.setting_set (
    set_id   bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    set_md5  uuid NOT NULL UNIQUE
);

CREATE TABLE folio_perf_data.setting_value (
    set_id   bigint NOT NULL REFERENCES folio_perf_data.setting_set ON DELETE CASCADE,
    name     text NOT NULL,
    setting  text,
    unit     text,
    source   text NOT NULL,
    boot_val text,
    PRIMARY KEY (set_id, name)
);

CREATE TABLE folio_perf_data.snapshot_setting (
    snap_id  bigint PRIMARY KEY REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    set_id   bigint NOT NULL REFERENCES folio_perf_data.setting_set
);

CREATE INDEX ON folio_perf_data.snapshot_setting (set_id);

CREATE TABLE folio_perf_data.index_def (
    rel_key_id  bigint PRIMARY KEY REFERENCES folio_perf_data.rel_key,
    amname      name NOT NULL,
    columns     text[] NOT NULL,
    is_unique   boolean NOT NULL,
    is_primary  boolean NOT NULL,
    partial     boolean NOT NULL,
    definition  text NOT NULL
);

CREATE TABLE folio_perf_data.index_def_mark (
    dbid        oid NOT NULL,
    target_id   int NOT NULL,          -- 0: this server
    last_key_id bigint NOT NULL,
    PRIMARY KEY (dbid, target_id)
);
-- the trigger needs its function now (the tail replaces it with the same)
CREATE FUNCTION folio_perf_data.setting_set_cleanup()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM folio_perf_data.setting_set x
    WHERE x.set_id IN (SELECT DISTINCT o.set_id FROM old_rows o)
      AND NOT EXISTS (SELECT 1 FROM folio_perf_data.snapshot_setting s WHERE s.set_id = x.set_id);
    RETURN NULL;
END
$$;
CREATE TRIGGER setting_set_cleanup AFTER DELETE ON folio_perf_data.snapshot_setting
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION folio_perf_data.setting_set_cleanup();
-- #29 table health (end)
