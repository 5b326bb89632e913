/* sql/parts/050_capture.sql - capture(): one consistent snapshot into storage */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

/*
 * work_table_state(name): whether this session's temporary table <name>, a
 * work table of capture() or of window_cache(), may be used by the current
 * role: 'absent' (create it), 'ours' (created by the current role, nothing
 * attached to it) or 'foreign'.  capture() runs as the extension's owner in
 * the caller's session, and the caller can create temporary tables with any
 * name, with triggers, rules or policies that would run as the owner; a
 * table the current role did not create is never used, nor one with a
 * constraint of any kind, a column of a type that is not a built-in base
 * type (a domain's CHECK) or a generated column.  Only its owner can
 * attach anything to a table, so a table that is 'ours' now stays so for the
 * statements that follow in the same function (no caller code runs between).
 * The catalogs are read by oid and namespace, never by a name lookup in
 * pg_temp.
 */
CREATE FUNCTION folio_perf_data.work_table_state(p_name text)
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

/*
 * capture()'s work tables: true when temporary table <name> must be created,
 * false when it is there and may be used; an error when a table of that name
 * that capture() did not create is in the way.
 */
CREATE FUNCTION folio_perf_data.work_table_missing(p_name text)
RETURNS boolean
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    st text := folio_perf_data.work_table_state(p_name);
BEGIN
    IF st = 'foreign' THEN
        RAISE EXCEPTION 'temporary table "%" was not created by folio_perf', p_name
            USING ERRCODE = 'duplicate_table',
                  DETAIL = 'A snapshot keeps its work in temporary tables of its own and uses no other.',
                  HINT = format('Drop the temporary table %I, or run DISCARD TEMP.', p_name);
    END IF;
    RETURN st = 'absent';
END
$$;

/*
 * One consistent capture, of this server or (p_target) of a remote target.
 * Serialised per database (or target) by an advisory lock so that
 * concurrent callers each get a complete snapshot; everything happens in
 * the caller's transaction, so an error (a target that is down, slow or
 * drops the connection included) leaves nothing behind.
 */
CREATE FUNCTION folio_perf_data.capture(p_label text, p_kind text, p_target int DEFAULT NULL)
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
    old_joins text[];
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
    prev_snap bigint;
    new_relid oid[];
    new_key bigint[];
    err_text text;
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
        -- one capture of this database at a time: a table lock, not an
        -- advisory one, which every listing of the server's advisory locks
        -- showed (PostgreSQL's own advisory_lock test among them)
        LOCK TABLE folio_perf_data.capture_lock IN EXCLUSIVE MODE;
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

    -- plans of the slowest executions since the previous snapshot (this
    -- server's executor hook); of a target, its generic plans now
    IF p_target IS NULL THEN
        PERFORM folio_perf_data.store_plans(snap);
    ELSE
        PERFORM folio_perf_data.store_remote_plans(snap, p_target);
    END IF;

    ------------------------------------------------------------------
    -- relations
    --
    -- One pass over pg_class and the statistics, compared with the state
    -- of the previous snapshot (rel_last): only new, changed and dropped
    -- relations come back, each with its previous state.  Sizes are read
    -- (the files stat'ed, as pg_table_size does, without opening the
    -- relation) only where they can have changed: a new relation or
    -- relfilenode, or rows inserted, updated, deleted or vacuumed in the
    -- table (for an index: in its table).  Otherwise the size of the
    -- previous snapshot carries over: reads do not change sizes.  Locally
    -- all of that is one C call (folio_perf_rel_capture, which reads
    -- rel_last itself); for a remote target the pass runs there
    -- (src_rel_changes) and the rest here.
    ------------------------------------------------------------------
    IF folio_perf_data.work_table_missing('fperf_cur_rel') THEN
        CREATE TEMP TABLE fperf_cur_rel ON COMMIT DELETE ROWS AS
        SELECT * FROM @extschema@.folio_perf_rel_capture(NULL) WITH NO DATA;
    ELSE
        DELETE FROM pg_temp.fperf_cur_rel;
    END IF;
    IF p_target IS NULL THEN
        -- the state the database's previous snapshot left: its shared image
        -- when that snapshot published it (src/relstate.c), else rel_last
        SELECT s.snap_id INTO prev_snap FROM folio_perf_data.snapshot s
        WHERE s.dbid = mydb AND s.target_id IS NULL AND s.snap_id < snap
        ORDER BY s.snap_id DESC LIMIT 1;
        INSERT INTO pg_temp.fperf_cur_rel
        SELECT * FROM @extschema@.folio_perf_rel_capture(prev_snap);
        GET DIAGNOSTICS n_cur = ROW_COUNT;
        -- the previous state's relations and bytes, as the call read them
        SELECT b.n_relations, b.rel_bytes INTO n_last_rel, last_rel_bytes
        FROM @extschema@.folio_perf_rel_capture_base() b;
    ELSE
        SELECT count(*), coalesce(sum(l.size_bytes), 0),
               array_agg(l.relid), array_agg(l.sig), array_agg(l.relfilenode)
        INTO n_last_rel, last_rel_bytes, last_relid, last_sig, last_rfn
        FROM folio_perf_data.rel_last l WHERE l.dbid = mydb AND coalesce(l.target_id, 0) = tgt;
        INSERT INTO pg_temp.fperf_cur_rel
        SELECT q.*,
               CASE WHEN q.status = 'd' THEN NULL
                    WHEN q.last_size IS NOT NULL AND q.last_relfilenode = q.relfilenode
                     AND NOT bool_or(q.relkind <> 'i' AND q.wsig IS DISTINCT FROM q.last_wsig)
                             OVER (PARTITION BY coalesce(q.table_relid, q.relid))
                    THEN q.last_size
               END AS size_bytes            -- NULL: read from the target below
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
    END IF;
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

        -- The snapshot's elements (rel_chunk): every counter as 1.1.0's
        -- rows had it (what an index does not have is NULL), its increment
        -- since the previous element (rel_last.counters), from zero where
        -- the relation is new or its counters went down (a reset: any of
        -- the scans, tuples read, fetched, written or blocks).  A gone
        -- relation's element has no increments (0; NULL where its kind has
        -- no such counter), the tuples and size last seen, and the size's
        -- increment down to 0.
        UPDATE pg_temp.fperf_cur_rel c SET relkind = k.relkind
        FROM folio_perf_data.rel_key k
        WHERE c.status = 'd' AND k.rel_key_id = c.rel_key_id;
        -- what the snapshot row and the shared image need of the work
        -- table, in one pass (it does not change below; 140,000 rows in
        -- a worst case, each pass 60-100 ms): the relations stored, the
        -- bytes now (the previous state's plus what changed), the new
        -- relations' keys for the publish
        SELECT count(*) FILTER (WHERE c.rel_key_id IS NOT NULL),
               last_rel_bytes + coalesce(sum(coalesce(c.size_bytes, 0) - coalesce(c.last_size, 0)), 0),
               array_agg(c.relid ORDER BY c.relid)
                   FILTER (WHERE p_target IS NULL AND c.status = 'n' AND c.rel_key_id IS NOT NULL),
               array_agg(c.rel_key_id ORDER BY c.relid)
                   FILTER (WHERE p_target IS NULL AND c.status = 'n' AND c.rel_key_id IS NOT NULL)
        INTO n_rel_s, cur_rel_bytes, new_relid, new_key
        FROM pg_temp.fperf_cur_rel c;
        -- (rel_last's counters: probed per relation when few changed,
        -- hashed when many did; the work table has no statistics)
        old_joins := ARRAY[pg_catalog.current_setting('enable_nestloop'),
                           pg_catalog.current_setting('enable_hashjoin'),
                           pg_catalog.current_setting('enable_mergejoin')];
        IF n_cur > 2000 THEN
            PERFORM pg_catalog.set_config('enable_nestloop', 'off', true);
        ELSE
            PERFORM pg_catalog.set_config('enable_hashjoin', 'off', true);
            PERFORM pg_catalog.set_config('enable_mergejoin', 'off', true);
        END IF;
        INSERT INTO folio_perf_data.rel_chunk
        WITH q AS (
            SELECT c.rel_key_id AS key, c.status, c.relkind, c.relfilenode, c.last_relfilenode,
                   c.live_tuples, c.dead_tuples, c.size_bytes, c.last_live, c.last_dead,
                   c.last_size, l.counters AS prev,
                   folio_perf_data.rel_counter_array(c.status, c.relkind, c.numscans,
                       c.tuples_returned, c.tuples_fetched, c.tuples_inserted, c.tuples_updated,
                       c.tuples_deleted, c.tuples_hot_updated, c.vacuum_count,
                       c.autovacuum_count, c.analyze_count, c.autoanalyze_count,
                       c.blocks_read, c.blocks_hit, c.toast_blocks_read, c.toast_blocks_hit) AS cur
            FROM pg_temp.fperf_cur_rel c
            LEFT JOIN folio_perf_data.rel_last l ON l.rel_key_id = c.rel_key_id AND c.status <> 'n'
            WHERE c.rel_key_id IS NOT NULL
        ), e AS (
            SELECT q.key,
                   (CASE WHEN q.status = 'n' THEN 1 ELSE 0 END
                    + CASE WHEN q.status = 'd' THEN 2 ELSE 0 END
                    + CASE WHEN q.status = 'c' AND q.last_relfilenode <> q.relfilenode THEN 4 ELSE 0 END
                    + CASE WHEN folio_perf_data.rel_reset(q.cur, q.prev) THEN 8 ELSE 0 END)::smallint AS flags,
                   folio_perf_data.rel_increments(q.cur, q.prev) AS inc,
                   CASE WHEN q.relkind = 'i' THEN NULL WHEN q.status = 'd' THEN q.last_live ELSE q.live_tuples END AS live,
                   CASE WHEN q.relkind = 'i' THEN NULL WHEN q.status = 'd' THEN q.last_dead ELSE q.dead_tuples END AS dead,
                   CASE WHEN q.status = 'd' THEN q.last_size ELSE q.size_bytes END AS size,
                   CASE WHEN q.status = 'd' THEN 0 ELSE q.size_bytes END - coalesce(q.last_size, 0) AS dsize,
                   ((row_number() OVER (ORDER BY q.key) - 1) / 1000)::int AS chunk
            FROM q
        )
        -- (the aggregates of one row see the same elements in the same
        -- order, so the arrays of a chunk stay parallel; the sorted input
        -- keeps them in key order, which nothing relies on)
        SELECT snap, e.chunk, array_agg(e.key), array_agg(e.flags),
               array_agg(e.inc[1]), array_agg(e.inc[2]), array_agg(e.inc[3]), array_agg(e.inc[4]),
               array_agg(e.inc[5]), array_agg(e.inc[6]), array_agg(e.inc[7]), array_agg(e.inc[8]),
               array_agg(e.inc[9]), array_agg(e.inc[10]), array_agg(e.inc[11]), array_agg(e.inc[12]),
               array_agg(e.inc[13]), array_agg(e.inc[14]), array_agg(e.inc[15]), array_agg(e.inc[16]),
               array_agg(e.live), array_agg(e.dead), array_agg(e.size), array_agg(e.dsize)
        FROM (SELECT * FROM e ORDER BY e.key) e
        GROUP BY e.chunk;
        PERFORM pg_catalog.set_config('enable_nestloop', old_joins[1], true),
                pg_catalog.set_config('enable_hashjoin', old_joins[2], true),
                pg_catalog.set_config('enable_mergejoin', old_joins[3], true);

        -- relations that were dropped
        WITH gone AS (
            DELETE FROM folio_perf_data.rel_last l
            USING pg_temp.fperf_cur_rel c
            WHERE c.status = 'd' AND l.rel_key_id = c.rel_key_id
            RETURNING l.rel_key_id
        )
        UPDATE folio_perf_data.rel_key k SET dropped_snap = snap
        FROM gone WHERE k.rel_key_id = gone.rel_key_id;
        GET DIAGNOSTICS n_dropped = ROW_COUNT;

        -- (many changed: rel_last hashed, not probed 140,000 times, as
        -- for the elements above; few: probed)
        IF n_cur > 2000 THEN
            PERFORM pg_catalog.set_config('enable_nestloop', 'off', true);
        END IF;
        UPDATE folio_perf_data.rel_last l
        SET relfilenode = c.relfilenode, sig = c.sig, wsig = c.wsig,
            size_bytes = c.size_bytes, live_tup = c.live_tuples,
            dead_tup = c.dead_tuples, last_snap = snap,
            counters = folio_perf_data.rel_counter_array(c.status, c.relkind, c.numscans,
                c.tuples_returned, c.tuples_fetched, c.tuples_inserted, c.tuples_updated,
                c.tuples_deleted, c.tuples_hot_updated, c.vacuum_count, c.autovacuum_count,
                c.analyze_count, c.autoanalyze_count, c.blocks_read, c.blocks_hit,
                c.toast_blocks_read, c.toast_blocks_hit)
        FROM pg_temp.fperf_cur_rel c
        WHERE c.status = 'c' AND l.rel_key_id = c.rel_key_id;
        PERFORM pg_catalog.set_config('enable_nestloop', old_joins[1], true);
        INSERT INTO folio_perf_data.rel_last (rel_key_id, dbid, target_id, relid, relfilenode, sig,
            wsig, size_bytes, live_tup, dead_tup, last_snap, counters)
        SELECT c.rel_key_id, mydb, p_target, c.relid, c.relfilenode, c.sig, c.wsig,
               c.size_bytes, c.live_tuples, c.dead_tuples, snap,
               folio_perf_data.rel_counter_array(c.status, c.relkind, c.numscans,
                   c.tuples_returned, c.tuples_fetched, c.tuples_inserted, c.tuples_updated,
                   c.tuples_deleted, c.tuples_hot_updated, c.vacuum_count, c.autovacuum_count,
                   c.analyze_count, c.autoanalyze_count, c.blocks_read, c.blocks_hit,
                   c.toast_blocks_read, c.toast_blocks_hit)
        FROM pg_temp.fperf_cur_rel c
        WHERE c.status = 'n' AND c.rel_key_id IS NOT NULL;
        GET DIAGNOSTICS n_added = ROW_COUNT;

        -- how many relations there are now (their bytes: above)
        n_rel := n_last_rel + n_added - n_dropped;

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

    -- rel_last as this snapshot left it, kept in shared memory for the
    -- next one (valid once this transaction commits); an image that cannot
    -- be made costs the next snapshot a read of rel_last, never this one
    -- (new_relid, new_key: from the pass above; NULL when nothing changed)
    IF p_target IS NULL THEN
        BEGIN
            PERFORM folio_perf_data.rel_state_publish(snap, new_relid, new_key);
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS err_text = MESSAGE_TEXT;
            RAISE WARNING 'could not keep the relation state in shared memory: %', err_text
                USING HINT = 'The next snapshot reads folio_perf_data.rel_last instead; see folio_perf_rel_state.';
        END;
    END IF;

    IF old_fetch IS NOT NULL THEN
        PERFORM pg_catalog.set_config('stats_fetch_consistency', old_fetch, true);
    END IF;
    IF old_work_mem IS NOT NULL THEN
        PERFORM pg_catalog.set_config('work_mem', old_work_mem, true);
    END IF;

    -- settings and new indexes' definitions (138_table_health.sql)
    PERFORM folio_perf_data.health_capture(snap, mydb, p_target);

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
