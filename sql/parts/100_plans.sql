/* sql/parts/100_plans.sql - plans of slow executions: taking them from shared memory, storing, reporting */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

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

CREATE FUNCTION folio_perf_plans_reset()
RETURNS bigint
AS 'MODULE_PATHNAME', 'folio_perf_plans_reset'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

-- The plan nodes of an EXPLAIN text on one line ("Hash Join > Seq Scan on
-- item > Hash > Index Scan using ... on holdings_record"), at most 12.
CREATE FUNCTION folio_perf_data.plan_outline(plan text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT string_agg(d, ' > ' ORDER BY n) FILTER (WHERE k <= 12)
         || CASE WHEN count(*) > 12 THEN ' > ...' ELSE '' END
  FROM (SELECT m[1] AS d, n, row_number() OVER (ORDER BY n) AS k
        FROM (SELECT regexp_match(l, '^\s*(?:->\s+)?(\S[^(]*?)\s+\((?:cost|actual|never)') AS m, n
              FROM regexp_split_to_table(plan, E'\n') WITH ORDINALITY AS x(l, n)) y
        WHERE m IS NOT NULL) z
$$;

/*
 * Plans as the current role may see them, one row per stmt_plan row: the
 * text and JSON of its own statements and, for members of
 * pg_read_all_stats, everyone's.  Readers get this view, not the plan table.
 */
CREATE VIEW folio_perf_data.stmt_plan_text WITH (security_barrier) AS
SELECT sp.snap_id, sp.dbid, sp.userid, sp.queryid, sp.toplevel, p.plan_id,
       p.fingerprint, p.analyzed, p.truncated, p.outline,
       CASE WHEN v.see_all OR sp.userid = v.me THEN p.plan_text
            ELSE '<insufficient privilege>' END AS plan_text,
       CASE WHEN v.see_all OR sp.userid = v.me THEN p.plan_json END AS plan_json,
       p.json_invalid,
       CASE WHEN v.see_all OR sp.userid = v.me THEN p.plan_json_text END AS plan_json_text,
       p.generic
FROM folio_perf_data.stmt_plan sp
JOIN folio_perf_data.plan p ON p.plan_id = sp.plan_id
-- may_see_text()'s rule, worked out once per query rather than per row
CROSS JOIN (SELECT pg_catalog.pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') AS see_all,
                   (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) AS me) v;

/*
 * Move the plans of the store into storage for snapshot p_snap (called by
 * capture(), in its transaction: the store forgets them only if it
 * commits).  Returns the number of statements with a plan.
 *
 * No single plan can fail the snapshot.  A plan whose JSON does not parse
 * (json_invalid, checked by the store when it was built) is stored with
 * its JSON as text, never cast.  If storing the plans fails all the same,
 * they are stored one at a time and those that fail are left out and
 * named in the snapshot's skipped items (folio_perf_data.skip_item).
 */
CREATE FUNCTION folio_perf_data.store_plans(p_snap bigint)
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
    -- the secrets of the executions' constants (plan_redact())
    UPDATE pg_temp.fperf_cur_plan c
       SET plan_text = folio_perf_data.plan_redact(c.plan_text, false),
           plan_json = folio_perf_data.plan_redact(c.plan_json, true)
     WHERE c.plan_text ~* '(password|://)' OR c.plan_json ~* '(password|://)';

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

/*
 * store_plans()'s insert of the plans in fperf_cur_plan, all of them
 * (p_md5 NULL) or the one plan p_md5.  A plan already stored is not
 * stored again.
 */
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

/*
 * folio_perf_purge() deletes snapshots inside windows; the plans of the
 * interval a deleted snapshot ended move to the next snapshot of the same
 * database (the slower plan wins, shapes and counts add up), so every
 * window keeps its plans.  Plans no statement refers to any more go.
 */
CREATE FUNCTION folio_perf_data.plans_on_snapshot_delete()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nxt bigint;
    ids bigint[];
BEGIN
    SELECT min(s.snap_id) INTO nxt FROM folio_perf_data.snapshot s
    WHERE s.dbid = OLD.dbid AND s.target_id IS NOT DISTINCT FROM OLD.target_id
      AND s.snap_id > OLD.snap_id;
    -- plans that may lose their last reference: the deleted snapshot's and
    -- those a slower one replaces in the next snapshot
    SELECT array_agg(DISTINCT x.plan_id) INTO ids FROM folio_perf_data.stmt_plan x
    WHERE x.snap_id = OLD.snap_id
       OR (x.snap_id = nxt AND EXISTS (
              SELECT 1 FROM folio_perf_data.stmt_plan o
              WHERE o.snap_id = OLD.snap_id AND o.dbid = x.dbid AND o.userid = x.userid
                AND o.queryid = x.queryid AND o.toplevel = x.toplevel));
    IF nxt IS NOT NULL THEN
        INSERT INTO folio_perf_data.stmt_plan AS x (snap_id, dbid, userid, queryid, toplevel,
            plan_id, fingerprint, duration_ms, captured_at, shapes, slow_calls)
        SELECT nxt, o.dbid, o.userid, o.queryid, o.toplevel, o.plan_id, o.fingerprint,
               o.duration_ms, o.captured_at, o.shapes, o.slow_calls
        FROM folio_perf_data.stmt_plan o WHERE o.snap_id = OLD.snap_id
        ON CONFLICT (snap_id, dbid, userid, queryid, toplevel) DO UPDATE SET
            plan_id = CASE WHEN EXCLUDED.duration_ms > x.duration_ms THEN EXCLUDED.plan_id ELSE x.plan_id END,
            fingerprint = CASE WHEN EXCLUDED.duration_ms > x.duration_ms THEN EXCLUDED.fingerprint ELSE x.fingerprint END,
            captured_at = CASE WHEN EXCLUDED.duration_ms > x.duration_ms THEN EXCLUDED.captured_at ELSE x.captured_at END,
            duration_ms = greatest(x.duration_ms, EXCLUDED.duration_ms),
            shapes = ARRAY(SELECT DISTINCT f FROM unnest(x.shapes || EXCLUDED.shapes) f ORDER BY f),
            slow_calls = x.slow_calls + EXCLUDED.slow_calls;
    END IF;
    DELETE FROM folio_perf_data.stmt_plan o WHERE o.snap_id = OLD.snap_id;
    IF ids IS NOT NULL THEN
        DELETE FROM folio_perf_data.plan p
        WHERE p.plan_id = ANY (ids)
          AND NOT EXISTS (SELECT 1 FROM folio_perf_data.stmt_plan x WHERE x.plan_id = p.plan_id);
    END IF;
    RETURN OLD;
END
$$;

CREATE TRIGGER plans_on_snapshot_delete BEFORE DELETE ON folio_perf_data.snapshot
    FOR EACH ROW EXECUTE FUNCTION folio_perf_data.plans_on_snapshot_delete();

/*
 * Per statement, the slowest plan between two snapshots of one database,
 * with the stmt_key it belongs to.  The statement is matched on (dbid,
 * userid, queryid) and, where pg_stat_statements counted it at the other
 * nesting level, on the other toplevel value.  best_snap and best_toplevel
 * locate the slowest row in stmt_plan.
 */
CREATE FUNCTION folio_perf_data.window_plans(p_begin bigint, p_end bigint)
RETURNS TABLE(key_id bigint, dbid oid, userid oid, queryid bigint, toplevel boolean,
    plan_id bigint, fingerprint bigint, slowest_ms double precision,
    captured_at timestamptz, slow_calls bigint, plans_seen int,
    best_snap bigint, best_toplevel boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
WITH r AS (
    SELECT sp.*, k.key_id, coalesce(k.toplevel, sp.toplevel) AS k_toplevel
    FROM folio_perf_data.snapshot e
    JOIN folio_perf_data.stmt_plan sp ON sp.dbid = e.dbid
         AND sp.snap_id > p_begin AND sp.snap_id <= p_end
    -- of the same server (a target's database may have a local one's oid)
    JOIN folio_perf_data.snapshot ss ON ss.snap_id = sp.snap_id
         AND ss.target_id IS NOT DISTINCT FROM e.target_id
    LEFT JOIN LATERAL (
        SELECT k.key_id, k.toplevel FROM folio_perf_data.stmt_key k
        WHERE k.dbid = sp.dbid AND k.userid = sp.userid AND k.queryid = sp.queryid
          AND k.target_id IS NOT DISTINCT FROM e.target_id
        ORDER BY (k.toplevel = sp.toplevel) DESC
        LIMIT 1) k ON true
    WHERE e.snap_id = p_end
),
best AS (
    SELECT DISTINCT ON (r.dbid, r.userid, r.queryid, r.k_toplevel) r.*
    FROM r
    ORDER BY r.dbid, r.userid, r.queryid, r.k_toplevel, r.duration_ms DESC, r.snap_id DESC
),
agg AS (
    SELECT r.dbid, r.userid, r.queryid, r.k_toplevel, sum(r.slow_calls)::bigint AS slow_calls
    FROM r GROUP BY 1, 2, 3, 4
),
shapes AS (
    SELECT r.dbid, r.userid, r.queryid, r.k_toplevel, count(DISTINCT f)::int AS n
    FROM r CROSS JOIN LATERAL unnest(r.shapes || r.fingerprint) f
    GROUP BY 1, 2, 3, 4
)
SELECT b.key_id, b.dbid, b.userid, b.queryid, b.k_toplevel, b.plan_id, b.fingerprint,
       b.duration_ms, b.captured_at, a.slow_calls, s.n,
       b.snap_id, b.toplevel
FROM best b
JOIN agg a USING (dbid, userid, queryid, k_toplevel)
JOIN shapes s USING (dbid, userid, queryid, k_toplevel)
$$;

/*
 * folio_perf_plans(window_id): per statement of the window that has a
 * plan, the plan of its slowest execution, how long it took and when it
 * ended, how many executions reached folio_perf.plan_min_duration, and
 * whether the plan changed inside the window (more than one shape seen).
 * Of a remote window: the generic plan at its last snapshot (generic; no
 * execution, so slowest_ms and slow_calls are NULL), changed when the
 * window's snapshots had plans of more than one shape.
 */
CREATE FUNCTION folio_perf_plans(window_id bigint, include_housekeeping boolean DEFAULT false)
RETURNS TABLE(queryid bigint, tenant text, module text, attributed_by text,
    role name, toplevel boolean, slowest_ms double precision,
    captured_at timestamptz, slow_calls bigint, plans_seen int,
    plan_changed boolean, analyzed boolean, truncated boolean, json_invalid boolean,
    plan_id bigint, outline text, plan text, plan_json jsonb, query text,
    generic boolean)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
    RETURN QUERY
    SELECT w.queryid, k.tenant, k.module, k.attributed_by,
           coalesce(k.rolname, r.rolname), w.toplevel,
           CASE WHEN NOT pt.generic THEN w.slowest_ms END, w.captured_at,
           CASE WHEN NOT pt.generic THEN w.slow_calls END,
           w.plans_seen, w.plans_seen > 1, pt.analyzed, pt.truncated,
           pt.json_invalid, w.plan_id, pt.outline, pt.plan_text, pt.plan_json, t.query, pt.generic
    FROM folio_perf_data.window_plans(wb.begin_snap, wb.end_snap) w
    -- the two (security barrier) views by their keys, one lookup per plan:
    -- as joins they were read whole, sorted or hashed, and once per plan
    -- where the planner took the window's plans for one row (1 s for 45
    -- plans at 40 tenants); OFFSET 0 keeps each subquery whole, so that
    -- its keys reach the view's indexes (leakproof equalities)
    JOIN LATERAL (
        SELECT x.* FROM folio_perf_data.stmt_plan_text x
        WHERE x.snap_id = w.best_snap AND x.dbid = w.dbid AND x.userid = w.userid
          AND x.queryid = w.queryid AND x.toplevel = w.best_toplevel
        OFFSET 0) pt ON true
    LEFT JOIN folio_perf_data.stmt_key k ON k.key_id = w.key_id
    LEFT JOIN pg_catalog.pg_roles r ON r.oid = w.userid
    LEFT JOIN LATERAL (
        SELECT x.query FROM folio_perf_data.stmt_text x WHERE x.key_id = w.key_id OFFSET 0) t ON true
    -- plans of statements folio_perf ran itself only when asked for
    WHERE include_housekeeping
       OR NOT (coalesce(k.housekeeping, false) OR folio_perf_data.own_queryid(w.queryid))
    ORDER BY w.slowest_ms DESC, w.queryid;
END
$$;

/*
 * Per statement group as folio_perf_compare_rows matches them (normalised
 * text, tenant, module, and here the nesting level; not housekeeping), the
 * slowest plan in a window.
 */
CREATE FUNCTION folio_perf_data.plan_groups(p_window bigint)
RETURNS TABLE(h text, tenant text, module text, toplevel boolean, fingerprint bigint,
    slowest_ms double precision, plan_id bigint, plans_seen int, outline text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record := folio_perf_data.window_bounds(p_window);
BEGIN
    -- once per transaction and user (window_cache): a compare asks eight times
    RETURN QUERY EXECUTE folio_perf_data.window_cache('plan_groups', wb.begin_snap, wb.end_snap)
        USING wb.begin_snap, wb.end_snap;
END
$$;

-- plan_groups() of the window from snapshot p_begin to p_end
CREATE FUNCTION folio_perf_data.plan_groups_compute(p_begin bigint, p_end bigint)
RETURNS TABLE(h text, tenant text, module text, toplevel boolean, fingerprint bigint,
    slowest_ms double precision, plan_id bigint, plans_seen int, outline text)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT coalesce(t.text_md5::text, w.queryid::text), k.tenant, k.module, k.toplevel,
       (array_agg(w.fingerprint ORDER BY w.slowest_ms DESC))[1],
       max(w.slowest_ms),
       (array_agg(w.plan_id ORDER BY w.slowest_ms DESC))[1],
       max(w.plans_seen),
       (array_agg(pt.outline ORDER BY w.slowest_ms DESC))[1]
FROM folio_perf_data.window_plans(p_begin, p_end) w
JOIN folio_perf_data.stmt_key k ON k.key_id = w.key_id
JOIN folio_perf_data.stmt_plan_text pt
  ON pt.snap_id = w.best_snap AND pt.dbid = w.dbid AND pt.userid = w.userid
 AND pt.queryid = w.queryid AND pt.toplevel = w.best_toplevel
LEFT JOIN folio_perf_data.stmt_text t ON t.key_id = k.key_id
WHERE NOT k.housekeeping
GROUP BY 1, 2, 3, 4
$$;

/*
 * The "Plan changes" section of folio_perf_compare: statements whose
 * slowest plan has another shape in the new window than in the base one.
 */
CREATE FUNCTION folio_perf_data.plan_changes_section(base_window bigint, new_window bigint)
RETURNS jsonb
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
WITH b AS (SELECT * FROM folio_perf_data.plan_groups(base_window)),
     n AS (SELECT * FROM folio_perf_data.plan_groups(new_window)),
     bn AS (SELECT b.h, b.tenant, b.module, b.toplevel, b.outline AS b_outline, n.outline AS n_outline,
                   b.slowest_ms AS b_ms, n.slowest_ms AS n_ms, b.fingerprint <> n.fingerprint AS changed
            FROM b JOIN n ON n.h = b.h AND n.toplevel = b.toplevel
                         AND n.tenant IS NOT DISTINCT FROM b.tenant
                         AND n.module IS NOT DISTINCT FROM b.module),
     q AS (SELECT x.h,
                  CASE WHEN bool_and(x.query IS DISTINCT FROM '<insufficient privilege>') THEN min(x.query)
                       ELSE '<insufficient privilege>' END AS query
           FROM (SELECT coalesce(t.text_md5::text, k.queryid::text) AS h, t.query
                 FROM folio_perf_data.stmt_key k
                 LEFT JOIN folio_perf_data.stmt_text t ON t.key_id = k.key_id) x
           WHERE x.h IN (SELECT bn.h FROM bn WHERE bn.changed)
           GROUP BY 1)
SELECT folio_perf_data.section('Plan changes',
    ARRAY['tenant', 'module', 'level', 'base_plan', 'new_plan', 'slowest_ms_base', 'slowest_ms_new', 'query'],
    (SELECT jsonb_agg(jsonb_build_object('tenant', bn.tenant, 'module', bn.module,
                'level', CASE WHEN bn.toplevel THEN 'top' ELSE 'nested' END,
                'base_plan', bn.b_outline, 'new_plan', bn.n_outline,
                'slowest_ms_base', round(bn.b_ms::numeric, 3),
                'slowest_ms_new', round(bn.n_ms::numeric, 3),
                'query', q.query) ORDER BY bn.n_ms DESC)
     FROM bn LEFT JOIN q ON q.h = bn.h
     WHERE bn.changed),
    CASE WHEN NOT EXISTS (SELECT 1 FROM bn)
         THEN 'No statement has a plan in both windows: '
              || CASE WHEN EXISTS (SELECT 1 FROM folio_perf_data.window w
                                   JOIN folio_perf_data.snapshot e ON e.snap_id = w.end_snap
                                   WHERE w.window_id IN (base_window, new_window) AND e.target_id IS NOT NULL)
                      THEN 'a remote window has the generic plans of its target''s top statements (PostgreSQL 16 and later).'
                      ELSE 'folio_perf.plan_min_duration (ms, -1 = off) decides which executions keep their plan.' END
         WHEN NOT EXISTS (SELECT 1 FROM bn WHERE bn.changed)
         THEN 'No statement with a plan in both windows changed its plan.' END)
$$;

/*
 * Add to a report document (report_doc) the plan of every top statement
 * that has one in the window ("plan" in the rows of the top lists), the
 * ten slowest plans of nested statements (nested_plans: the statements
 * inside functions and triggers, which the top lists leave out, such as
 * the query inside get_items_and_holdings_view()), and a note on plan
 * capture (window.plans).
 */
CREATE FUNCTION folio_perf_data.report_plans(doc jsonb, p_window bigint)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    pl jsonb;
    nested jsonb;
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
               || CASE WHEN p.json_invalid THEN '{"json_invalid": true}'::jsonb ELSE '{}'::jsonb END
               -- a remote target's generic plan says so (the key is absent otherwise)
               || CASE WHEN p.generic THEN '{"generic": true}'::jsonb ELSE '{}'::jsonb END), '{}'),
           count(*),
           -- the nested statements' plans, slowest first (read once, with the rest)
           jsonb_agg(jsonb_build_object('queryid', p.queryid, 'tenant', p.tenant, 'module', p.module,
                                        'role', p.role, 'toplevel', false, 'query', p.query,
                                        'k', p.queryid::text || '/' || coalesce(p.role::text, '') || '/false')
                     ORDER BY p.slowest_ms DESC, p.queryid) FILTER (WHERE NOT p.toplevel)
    INTO pl, n, nested
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
        SELECT coalesce(jsonb_agg((x.e - 'k') || jsonb_build_object('rank', x.o, 'plan', pl->(x.e->>'k'))
                                  ORDER BY x.o), '[]')
        FROM jsonb_array_elements(nested) WITH ORDINALITY AS x(e, o)
        WHERE x.o <= 10));

    note := CASE
        WHEN doc#>>'{window,target}' IS NOT NULL
            THEN folio_perf_data.remote_plans_note(p_window, n)
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

/*
 * The plans of a report's top list, in one format: under the table of the
 * list, one block per statement that has a plan, collapsed in html.
 * Statements whose plan an earlier list of the same report already showed
 * are left out.
 */
CREATE FUNCTION folio_perf_data.render_plans(fmt text, doc jsonb, lst text, qmap jsonb DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
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
        head := format(CASE WHEN (r->'plan'->>'generic')::boolean
                            THEN '#%1$s %2$s%3$s%4$s: generic plan (EXPLAIN (GENERIC_PLAN) on the target, no execution) at %6$s%8$s%9$s'
                            ELSE '#%s %s%s%s: slowest execution %s ms, ended %s; executions over plan_min_duration: %s%s%s' END,
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
