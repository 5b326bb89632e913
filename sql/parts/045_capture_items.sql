/* sql/parts/045_capture_items.sql - capture(): storing the kept items one by one when they fail together */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

/*
 * No single kept item can fail a snapshot.  capture() stores the new
 * statements (text, attribution, key), the new relations (key, schema
 * split) and store_plans() the plans, each kind in one set-based step.  If
 * that step fails, it is rolled back and done again one item at a time,
 * each in a subtransaction: the items that fail alone are left out of the
 * snapshot, named in snapshot.skipped (kind, item, SQLSTATE, message;
 * folio_perf_snapshots.n_skipped counts them) and in the window flag
 * items_skipped.  A statement or relation left out is new again at the
 * next snapshot, which tries it again; a plan left out is gone (its
 * execution was counted in pg_stat_statements all the same).
 */

/* Name an item that snapshot p_snap could not store. */
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

/*
 * The new statements of capture()'s work table fperf_cur_stmt (key_id
 * NULL, texts already read): redact passwords, store each text once,
 * attribute, create the keys.  p_target as capture()'s.
 */
CREATE FUNCTION folio_perf_data.capture_new_statements(p_snap bigint, p_target int)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- pg_stat_statements keeps utility statements and comments verbatim:
    -- passwords are cut off before anything is stored (or dumped)
    -- (046_redact.sql)
    UPDATE pg_temp.fperf_cur_stmt c
       SET query = folio_perf_data.text_redact(c.query)
     WHERE c.key_id IS NULL
       AND c.query ~* 'password|://';

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

/*
 * The relations seen for the first time in capture()'s work table
 * fperf_cur_rel (rel_key_id NULL, not dropped): split their schema names,
 * create their keys.
 */
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

/*
 * capture()'s new statements, then its new relations, so that none of them
 * can fail the snapshot: each kind at once, and if that fails one at a
 * time (the work table rows still waiting are marked with key -1), the
 * failing ones deleted from the work table and named with skip_item().
 */
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
