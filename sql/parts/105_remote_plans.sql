/* sql/parts/105_remote_plans.sql - plans of remote windows: generic plans of a target's top statements at each of its snapshots */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

------------------------------------------------------------------------
--
-- A remote target runs no executor hook of folio_perf, so its plans are
-- asked for: at every snapshot of a target on PostgreSQL 16 or later,
-- store_remote_plans() takes the statements of the interval since the
-- target's previous snapshot that a report lists first (the 20 with the
-- most execution time, the 10 slowest on average and the 10 that read the
-- most blocks), and asks the target for the plan it would use now with
-- EXPLAIN (GENERIC_PLAN) of the statement's text ($n placeholders), in text
-- and JSON.  Never EXPLAIN ANALYZE: nothing of a statement runs on the
-- target.  The plans are stored as the executor hook's are (plan,
-- stmt_plan, marked generic, duration 0: they are no execution), with a
-- shape fingerprint computed from the JSON (plan_json_fingerprint), so a
-- window's plans and folio_perf_compare's "Plan changes" work for remote
-- windows as for local ones.  A statement the target could not plan is
-- kept in remote_plan_miss with the target's reason.
--
------------------------------------------------------------------------

-- The plan a target would use now for a statement text, by EXPLAIN
-- (GENERIC_PLAN) in text and JSON (src/remote.c); error says why not.
CREATE FUNCTION folio_perf_data.remote_explain(target_id int, query text, search_path text,
    role text, OUT plan_text text, OUT plan_json text, OUT error text)
RETURNS record
AS 'MODULE_PATHNAME', 'folio_perf_remote_explain'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

-- Statements of a target's snapshot that were not planned, and why.
CREATE TABLE folio_perf_data.remote_plan_miss (
    snap_id     bigint NOT NULL REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    key_id      bigint NOT NULL REFERENCES folio_perf_data.stmt_key,
    reason      text NOT NULL,
    PRIMARY KEY (snap_id, key_id)
);

/*
 * The shape fingerprint of an EXPLAIN (FORMAT JSON) plan, as plan_shape.c
 * computes one from a plan tree: node types, parent relationships, join,
 * aggregate and set-operation strategies, operations, scan directions,
 * planned workers, parallel awareness, subplan names and the names of the
 * relations and indexes scanned (never their schemas); no costs or row
 * estimates.  The numbers differ from plan_shape.c's (they are compared
 * only with plans of the same target, which come from here too).
 */
CREATE FUNCTION folio_perf_data.plan_json_fingerprint(plan jsonb)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
WITH RECURSIVE n(node, path) AS (
    SELECT plan->0->'Plan', '0'::text
    WHERE jsonb_typeof(plan->0->'Plan') = 'object'
    UNION ALL
    SELECT c.value, n.path || '.' || lpad(c.ord::text, 4, '0')
    FROM n CROSS JOIN LATERAL jsonb_array_elements(
        CASE WHEN jsonb_typeof(n.node->'Plans') = 'array' THEN n.node->'Plans' ELSE '[]' END)
        WITH ORDINALITY AS c(value, ord)
)
SELECT hashtextextended(string_agg(format('%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s|%s', n.path,
           n.node->>'Node Type', n.node->>'Parent Relationship', n.node->>'Join Type',
           n.node->>'Strategy', n.node->>'Partial Mode', n.node->>'Operation',
           n.node->>'Scan Direction', n.node->>'Workers Planned', n.node->>'Parallel Aware',
           n.node->>'Subplan Name', n.node->>'Relation Name', n.node->>'Index Name'),
           E'\n' ORDER BY n.path), 0)
FROM n
$$;

/*
 * The generic plans of snapshot p_snap of target p_target (called by
 * capture(), in its transaction, after the statements are stored): for the
 * top statements of the interval since the target's previous snapshot of
 * the same database.  Nothing before PostgreSQL 16 (the report says why).
 * The statement is planned with a search_path of its role's schema (what
 * "$user" gives that role; FOLIO's module roles own a schema of their
 * name), the schema of its tenant and module where both are known, and
 * public; as its role where the collector is a member of it, else as the
 * collector (EXPLAIN needs the privileges the statement needs: reads
 * pg_read_all_data, writes those of the statement's role).  Returns the
 * number of statements planned.
 */
CREATE FUNCTION folio_perf_data.store_remote_plans(p_snap bigint, p_target int)
RETURNS int
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s folio_perf_data.snapshot;
    prev bigint;
    r record;
    x record;
    md uuid;
    fp bigint;
    pid bigint;
    n int := 0;
BEGIN
    SELECT * INTO s FROM folio_perf_data.snapshot sn WHERE sn.snap_id = p_snap;
    IF s.server_version_num < 160000 THEN
        RETURN 0;
    END IF;
    SELECT max(p.snap_id) INTO prev FROM folio_perf_data.snapshot p
    WHERE p.target_id = p_target AND p.dbid = s.dbid AND p.snap_id < p_snap;
    IF prev IS NULL THEN
        RETURN 0;
    END IF;
    FOR r IN
        WITH d AS (
            SELECT d.key_id, d.calls, d.total_exec_time,
                   coalesce(d.shared_blks_read, 0) + coalesce(d.temp_blks_read, 0) AS blks,
                   k.dbid, k.userid, k.queryid, k.toplevel, k.rolname, k.tenant, k.module, t.query
            FROM folio_perf_data.stmt_delta_compute(prev, p_snap) d
            JOIN folio_perf_data.stmt_key k ON k.key_id = d.key_id
            JOIN folio_perf_data.query_text t ON t.text_id = k.text_id
            WHERE d.calls > 0 AND NOT k.housekeeping AND k.queryid <> 0
        ), ranked AS (
            SELECT d.*,
                   row_number() OVER (ORDER BY d.total_exec_time DESC, d.key_id) AS by_time,
                   row_number() OVER (ORDER BY d.total_exec_time / d.calls DESC, d.key_id) AS by_mean,
                   row_number() OVER (ORDER BY d.blks DESC, d.key_id) AS by_io
            FROM d
        )
        SELECT * FROM ranked
        WHERE by_time <= 20 OR by_mean <= 10 OR (by_io <= 10 AND blks > 0)
        ORDER BY by_time
    LOOP
        x := folio_perf_data.remote_explain(p_target, r.query,
                 concat_ws(', ', pg_catalog.quote_ident(r.rolname),
                           CASE WHEN r.tenant IS NOT NULL AND r.module IS NOT NULL
                                THEN pg_catalog.quote_ident(r.tenant || '_' || r.module) END,
                           'public'), r.rolname);
        IF x.plan_json IS NULL OR x.plan_text IS NULL THEN
            INSERT INTO folio_perf_data.remote_plan_miss (snap_id, key_id, reason)
            VALUES (p_snap, r.key_id, coalesce(x.error, 'no plan'))
            ON CONFLICT DO NOTHING;
            CONTINUE;
        END IF;
        md := pg_catalog.md5(x.plan_text || x.plan_json)::uuid;
        fp := folio_perf_data.plan_json_fingerprint(x.plan_json::jsonb);
        INSERT INTO folio_perf_data.plan (plan_md5, fingerprint, analyzed, truncated, generic,
            outline, plan_text, plan_json)
        VALUES (md, fp, false, false, true, folio_perf_data.plan_outline(x.plan_text),
                x.plan_text, x.plan_json::jsonb)
        ON CONFLICT (plan_md5) DO NOTHING;
        SELECT p.plan_id INTO pid FROM folio_perf_data.plan p WHERE p.plan_md5 = md;
        INSERT INTO folio_perf_data.stmt_plan (snap_id, dbid, userid, queryid, toplevel,
            plan_id, fingerprint, duration_ms, captured_at, shapes, slow_calls)
        VALUES (p_snap, r.dbid, r.userid, r.queryid, r.toplevel, pid, fp, 0,
                pg_catalog.clock_timestamp(), ARRAY[fp], 0)
        ON CONFLICT DO NOTHING;
        n := n + 1;
    END LOOP;
    RETURN n;
END
$$;

/*
 * What a report says about the plans of a remote window (its note on plan
 * capture), or NULL for a local window.
 */
CREATE FUNCTION folio_perf_data.remote_plans_note(p_window bigint, p_planned int)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT CASE
    WHEN e.server_version_num < 160000
        THEN format('none: target %s runs PostgreSQL %s; plans of a remote target are its generic plans '
                    '(EXPLAIN (GENERIC_PLAN), PostgreSQL 16 and later; folio_perf never runs EXPLAIN ANALYZE on a target)',
                    t.name, e.server_version_num / 10000)
    ELSE concat_ws('; ',
        CASE WHEN p_planned > 0
             THEN format('%s statements with a generic plan: EXPLAIN (GENERIC_PLAN) on target %s at the snapshots of the window '
                         '(the top statements by time, mean time and blocks read; never EXPLAIN ANALYZE, so no actual times)',
                         p_planned, t.name)
             ELSE format('none: no statement of the window was planned on target %s (EXPLAIN (GENERIC_PLAN) of the top statements at the window''s snapshots)',
                         t.name) END,
        (SELECT format('%s not planned (%s)', count(DISTINCT m.key_id),
                       (array_agg(m.reason ORDER BY m.snap_id DESC, m.key_id))[1]
                       || CASE WHEN count(DISTINCT m.reason) > 1 THEN ', ...' ELSE '' END)
         FROM folio_perf_data.remote_plan_miss m
         WHERE m.snap_id IN (SELECT folio_perf_data.snaps_between(w.begin_snap, w.end_snap))
         HAVING count(*) > 0)) END
FROM folio_perf_data.window w
JOIN folio_perf_data.snapshot e ON e.snap_id = w.end_snap
JOIN folio_perf_data.target t ON t.target_id = e.target_id
WHERE w.window_id = p_window
$$;

/*
 * What the report of a remote window rests on (report_doc's window for a
 * target): the target's name, what is sampled or estimated on it and how,
 * and what cannot be had from it at all.  The sampler's interval and the
 * vCPU count are those of the window's samples.
 */
CREATE FUNCTION folio_perf_data.remote_basis(p_target int, p_t0 timestamptz, p_t1 timestamptz,
    p_version int)
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
WITH t AS (SELECT x.name FROM folio_perf_data.target x WHERE x.target_id = p_target),
     s AS (SELECT sum(i.n_ticks) AS ticks, max(i.sample_interval_ms) AS iv,
                  max(i.host_ncpu) FILTER (WHERE i.cpu_ticks > 0) AS vcpus
           FROM folio_perf_data.sample_interval i
           WHERE i.ended_at > p_t0 AND i.ended_at <= p_t1 AND i.target_id = p_target)
SELECT jsonb_build_object(
    'target', t.name,
    'sampled', jsonb_build_array(
        'statements, tables, modules and the database: the target''s pg_stat_statements and statistics views '
            || 'read at the window''s snapshots over libpq (exact, as on this server)',
        CASE WHEN s.ticks > 0
             THEN format('connections and DB load: the target''s pg_stat_activity read every %s ms over one kept connection (%s samples)',
                         s.iv, s.ticks)
             ELSE 'connections and DB load: no samples of the target in the window (the sampler samples enabled targets while it runs)' END,
        CASE WHEN s.vcpus IS NOT NULL
             THEN format('DB CPU (sampled): sessions active without a wait event at each sample, each counted as on CPU for the sample''s '
                         || 'interval, against %s vCPUs (the target''s setting); what Amazon Performance Insights calls CPU, an estimate '
                         || 'that counts sessions waiting for a CPU too (the host''s own CPU use is not readable)', s.vcpus)
             ELSE format('DB CPU: not estimated, the target''s vCPU count is not set (folio_perf_target_set(%L, vcpus))', t.name) END,
        CASE WHEN p_version >= 160000
             THEN 'plans: the generic plans of the top statements, EXPLAIN (GENERIC_PLAN) on the target at each snapshot '
                  || '(no execution, no actual times: the executor hook runs on the server itself only)'
             ELSE format('plans: none, PostgreSQL %s has no EXPLAIN (GENERIC_PLAN) (16 and later), and folio_perf never runs EXPLAIN ANALYZE on a target',
                         p_version / 10000) END),
    -- as 1.0.0 said it: what DB CPU (sampled) and generic plans replace is
    -- still unavailable
    'unavailable', jsonb_build_array(
        'attribution by relations (needs folio_perf preloaded on the server itself)',
        'per-backend CPU'))
FROM t, s
$$;
