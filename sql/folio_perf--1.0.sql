/* sql/folio_perf--1.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION folio_perf" to load this file. \quit

/*
 * Layout of this script
 *   1. parsing and attribution helpers (C)
 *   2. storage: schema folio_perf_data (snapshots, statements, relations)
 *   3. capture: folio_perf_snapshot() and windows
 *   4. reports over a window
 *   5. live views
 *   6. sampler storage and reports
 *   7. privileges
 * Every user-facing object is named folio_perf_* and lives in @extschema@;
 * storage lives in folio_perf_data.
 */

------------------------------------------------------------------------
-- 1. parsing and attribution helpers
------------------------------------------------------------------------

CREATE FUNCTION folio_perf_parse_schema(name text,
    OUT tenant text, OUT module text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_parse_schema'
LANGUAGE C IMMUTABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 1;

CREATE FUNCTION folio_perf_appname_module(application_name text)
RETURNS text
AS 'MODULE_PATHNAME', 'folio_perf_appname_module'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION folio_perf_query_schema(query text,
    OUT tenant text, OUT module text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_query_schema'
LANGUAGE C IMMUTABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 1;

CREATE FUNCTION folio_perf_query_relnames(query text)
RETURNS text[]
AS 'MODULE_PATHNAME', 'folio_perf_query_relnames'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION folio_perf_query_relations(
    OUT dbid oid, OUT queryid bigint, OUT target_nsp oid, OUT nsps oid[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_query_relations'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION folio_perf_rel_stats(
    OUT relid oid, OUT relfilenode oid, OUT relkind "char", OUT nspname name,
    OUT relname name, OUT table_relid oid,
    OUT numscans bigint, OUT tuples_returned bigint, OUT tuples_fetched bigint,
    OUT tuples_inserted bigint, OUT tuples_updated bigint,
    OUT tuples_deleted bigint, OUT tuples_hot_updated bigint,
    OUT live_tuples bigint, OUT dead_tuples bigint,
    OUT vacuum_count bigint, OUT autovacuum_count bigint,
    OUT analyze_count bigint, OUT autoanalyze_count bigint,
    OUT blocks_read bigint, OUT blocks_hit bigint,
    OUT toast_blocks_read bigint, OUT toast_blocks_hit bigint,
    OUT sig bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_rel_stats'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE FUNCTION folio_perf_relations_reset()
RETURNS bigint
AS 'MODULE_PATHNAME', 'folio_perf_relations_reset'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

------------------------------------------------------------------------
-- 2. storage
--
-- Snapshots store what changed since the previous snapshot of the same
-- database: a statement or relation gets a row in a snapshot only if its
-- counters moved (or it appeared or disappeared).  The value of a counter
-- "at" snapshot S is the newest row at or before S; a window's numbers are
-- end-value minus begin-value.  *_last tables hold the current state, so a
-- snapshot compares against one row per object instead of searching history.
------------------------------------------------------------------------

CREATE SCHEMA folio_perf_data;
REVOKE ALL ON SCHEMA folio_perf_data FROM PUBLIC;

CREATE TABLE folio_perf_data.snapshot (
    snap_id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    taken_at            timestamptz NOT NULL DEFAULT clock_timestamp(),
    label               text,
    kind                text NOT NULL DEFAULT 'manual'
                        CHECK (kind IN ('manual', 'begin', 'end', 'timed')),
    dbid                oid NOT NULL,
    datname             name NOT NULL,
    target_id           int,
    server_version_num  int NOT NULL,
    server_start        timestamptz NOT NULL,
    preloaded           boolean NOT NULL,
    max_connections     int NOT NULL,
    -- pg_stat_statements_info
    pgss_dealloc        bigint,
    pgss_stats_reset    timestamptz,
    pgss_max            int,
    -- pg_stat_database (this database)
    db_stats_reset      timestamptz,
    numbackends         int,
    xact_commit         bigint,
    xact_rollback       bigint,
    blks_read           bigint,
    blks_hit            bigint,
    tup_returned        bigint,
    tup_fetched         bigint,
    tup_inserted        bigint,
    tup_updated         bigint,
    tup_deleted         bigint,
    conflicts           bigint,
    temp_files          bigint,
    temp_bytes          bigint,
    deadlocks           bigint,
    blk_read_time       double precision,
    blk_write_time      double precision,
    db_size_bytes       bigint,
    -- checkpointer / bgwriter
    bgwriter_stats_reset timestamptz,
    checkpoints_timed   bigint,
    checkpoints_req     bigint,
    checkpoint_write_time double precision,
    checkpoint_sync_time double precision,
    buffers_checkpoint  bigint,
    buffers_clean       bigint,
    buffers_backend     bigint,
    buffers_alloc       bigint,
    -- WAL
    wal_stats_reset     timestamptz,
    wal_records         bigint,
    wal_fpi             bigint,
    wal_bytes           numeric,
    wal_buffers_full    bigint,
    -- what this snapshot stored
    n_statements        int,            -- entries in pg_stat_statements (this db)
    n_statements_stored int,            -- rows stored (changed, new, gone)
    n_relations         int,            -- user tables and indexes
    n_relations_stored  int,
    capture_ms          double precision
);
CREATE INDEX ON folio_perf_data.snapshot (dbid, snap_id);
CREATE INDEX ON folio_perf_data.snapshot (taken_at);

-- Connection counts at snapshot time (pg_stat_activity, all databases).
CREATE TABLE folio_perf_data.snapshot_activity (
    snap_id          bigint NOT NULL REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    datname          name,
    usename          name,
    application_name text,
    state            text,
    wait_event_type  text,
    backend_type     text,
    connections      int NOT NULL
);
CREATE INDEX ON folio_perf_data.snapshot_activity (snap_id);

-- Statement texts, each stored once.
CREATE TABLE folio_perf_data.query_text (
    text_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    text_md5  uuid NOT NULL UNIQUE,
    query     text NOT NULL
);

-- One row per pg_stat_statements entry ever seen, with its attribution.
CREATE TABLE folio_perf_data.stmt_key (
    key_id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dbid          oid NOT NULL,
    userid        oid NOT NULL,
    queryid       bigint NOT NULL,
    toplevel      boolean NOT NULL,
    target_id     int,
    text_id       bigint REFERENCES folio_perf_data.query_text,
    rolname       name,
    tenant        text,
    module        text,
    attributed_by text,
    housekeeping  boolean NOT NULL DEFAULT false,
    first_snap    bigint NOT NULL
);
CREATE UNIQUE INDEX stmt_key_ident ON folio_perf_data.stmt_key
    (dbid, userid, queryid, toplevel, coalesce(target_id, 0));

-- Counters of a statement at a snapshot where they changed.  gone = the
-- entry had disappeared from pg_stat_statements (evicted or reset).
CREATE TABLE folio_perf_data.stmt (
    snap_id             bigint NOT NULL REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    key_id              bigint NOT NULL REFERENCES folio_perf_data.stmt_key,
    gone                boolean NOT NULL DEFAULT false,
    calls               bigint,
    total_exec_time     double precision,
    total_plan_time     double precision,
    plans               bigint,
    rows                bigint,
    shared_blks_hit     bigint,
    shared_blks_read    bigint,
    shared_blks_dirtied bigint,
    shared_blks_written bigint,
    local_blks_hit      bigint,
    local_blks_read     bigint,
    temp_blks_read      bigint,
    temp_blks_written   bigint,
    blk_read_time       double precision,
    blk_write_time      double precision,
    wal_records         bigint,
    wal_fpi             bigint,
    wal_bytes           numeric,
    PRIMARY KEY (key_id, snap_id)
);
CREATE INDEX ON folio_perf_data.stmt (snap_id);

-- Current state of every statement (per database), for change detection.
CREATE TABLE folio_perf_data.stmt_last (
    key_id     bigint PRIMARY KEY REFERENCES folio_perf_data.stmt_key,
    dbid       oid NOT NULL,
    calls      bigint NOT NULL,
    total_exec_time double precision NOT NULL,
    rows       bigint NOT NULL,
    last_snap  bigint NOT NULL
);
CREATE INDEX ON folio_perf_data.stmt_last (dbid);

-- One row per user table or index ever seen.
CREATE TABLE folio_perf_data.rel_key (
    rel_key_id  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    dbid        oid NOT NULL,
    target_id   int,
    relid       oid NOT NULL,
    relkind     "char" NOT NULL,
    nspname     name NOT NULL,
    relname     name NOT NULL,
    table_relname name,             -- for an index: its table
    tenant      text,
    module      text,
    first_snap  bigint NOT NULL,
    dropped_snap bigint             -- first snapshot that no longer saw it
);
CREATE INDEX ON folio_perf_data.rel_key (dbid, relid);

-- Counters and size of a relation at a snapshot where they changed.
CREATE TABLE folio_perf_data.rel (
    snap_id          bigint NOT NULL REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    rel_key_id       bigint NOT NULL REFERENCES folio_perf_data.rel_key,
    gone             boolean NOT NULL DEFAULT false,
    rewritten        boolean NOT NULL DEFAULT false,  -- new relfilenode: TRUNCATE, VACUUM FULL, CLUSTER
    seq_scan         bigint,
    seq_tup_read     bigint,
    idx_scan         bigint,
    idx_tup_fetch    bigint,
    n_tup_ins        bigint,
    n_tup_upd        bigint,
    n_tup_del        bigint,
    n_tup_hot_upd    bigint,
    n_live_tup       bigint,
    n_dead_tup       bigint,
    vacuum_count     bigint,
    autovacuum_count bigint,
    analyze_count    bigint,
    autoanalyze_count bigint,
    blks_read        bigint,            -- heap (tables) or index blocks
    blks_hit         bigint,
    idx_blks_read    bigint,            -- tables: all their indexes
    idx_blks_hit     bigint,
    toast_blks_read  bigint,
    toast_blks_hit   bigint,
    size_bytes       bigint,            -- tables: heap + toast; indexes: the index
    PRIMARY KEY (rel_key_id, snap_id)
);
CREATE INDEX ON folio_perf_data.rel (snap_id);

CREATE TABLE folio_perf_data.rel_last (
    rel_key_id  bigint PRIMARY KEY REFERENCES folio_perf_data.rel_key,
    dbid        oid NOT NULL,
    relid       oid NOT NULL,
    relfilenode oid NOT NULL,
    sig         bigint NOT NULL,   -- sum of the counters: changes when any moves
    size_bytes  bigint,
    last_snap   bigint NOT NULL,
    UNIQUE (dbid, relid)
);

-- Per-schema roll-up (sizes, tuples, relation counts) at a snapshot where
-- any relation of the schema changed.
CREATE TABLE folio_perf_data.schema_stat (
    snap_id     bigint NOT NULL REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    dbid        oid NOT NULL,
    nspname     name NOT NULL,
    tenant      text,
    module      text,
    n_tables    int NOT NULL,
    n_indexes   int NOT NULL,
    table_bytes bigint NOT NULL,
    index_bytes bigint NOT NULL,
    live_tup    bigint NOT NULL,
    dead_tup    bigint NOT NULL,
    PRIMARY KEY (dbid, nspname, snap_id)
);
CREATE INDEX ON folio_perf_data.schema_stat (snap_id);

-- Labelled windows over two snapshots.
CREATE TABLE folio_perf_data.window (
    window_id   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    label       text,
    tags        jsonb NOT NULL DEFAULT '{}',
    begin_snap  bigint NOT NULL REFERENCES folio_perf_data.snapshot,
    end_snap    bigint REFERENCES folio_perf_data.snapshot,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK (end_snap IS NULL OR end_snap > begin_snap)
);
CREATE UNIQUE INDEX ON folio_perf_data.window (begin_snap, end_snap);
CREATE INDEX ON folio_perf_data.window (end_snap);


------------------------------------------------------------------------
-- 3. capture and windows                               (issue 3)
------------------------------------------------------------------------

-- Which statements are housekeeping (left out of top lists by default).
CREATE FUNCTION folio_perf_data.is_housekeeping(query text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT query ~* '^\s*(set|show|reset|begin|commit|rollback|abort|start\s+transaction|end|discard|deallocate|savepoint|release|listen|unlisten|prepare\s+transaction|commit\s+prepared|rollback\s+prepared|close|checkpoint)\M'
      OR query ~* '\mfolio_perf_'
$$;

/*
 * Attribution of statements (DESIGN.md, "Attribution"): for each
 * (queryid, userid, query) the tenant and module, and the evidence that
 * decided: relations > role > qualified > relation_name.
 */
CREATE FUNCTION folio_perf_data.attribute_statements(
    p_queryid bigint[], p_userid oid[], p_query text[])
RETURNS TABLE(ord bigint, tenant text, module text, attributed_by text,
              housekeeping boolean)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
WITH s AS (
    SELECT x.ord, x.q, x.u, x.t
    FROM unnest(p_queryid, p_userid, p_query) WITH ORDINALITY AS x(q, u, t, ord)
),
rel AS (
    SELECT r.queryid, r.target_nsp, r.nsps
    FROM @extschema@.folio_perf_query_relations() r
),
by_rel AS (
    SELECT DISTINCT ON (s.ord) s.ord, p.tenant, p.module
    FROM s
    JOIN rel ON rel.queryid = s.q
    CROSS JOIN LATERAL unnest(array_prepend(rel.target_nsp, rel.nsps))
         WITH ORDINALITY AS n(nspoid, o)
    JOIN pg_catalog.pg_namespace ns ON ns.oid = n.nspoid
    CROSS JOIN LATERAL @extschema@.folio_perf_parse_schema(ns.nspname::text) p
    WHERE p.module IS NOT NULL
    ORDER BY s.ord, n.o
),
own AS (
    SELECT DISTINCT s.ord
    FROM s JOIN rel ON rel.queryid = s.q
    JOIN pg_catalog.pg_namespace ns ON ns.oid = ANY (rel.nsps)
    WHERE ns.nspname = 'folio_perf_data'
),
by_role AS (
    SELECT s.ord, p.tenant, p.module
    FROM s
    JOIN pg_catalog.pg_roles r ON r.oid = s.u
    CROSS JOIN LATERAL @extschema@.folio_perf_parse_schema(r.rolname::text) p
    WHERE p.module IS NOT NULL
),
by_qual AS (
    SELECT s.ord, p.tenant, p.module
    FROM s CROSS JOIN LATERAL @extschema@.folio_perf_query_schema(s.t) p
    WHERE p.module IS NOT NULL
),
names AS (
    SELECT s.ord, n.name, n.o
    FROM s CROSS JOIN LATERAL unnest(@extschema@.folio_perf_query_relnames(s.t))
         WITH ORDINALITY AS n(name, o)
),
name_owner AS (
    SELECT names.ord, names.o, p.tenant, p.module, ns.nspname
    FROM names
    JOIN pg_catalog.pg_class c ON c.relname = names.name
         AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
    JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace
    CROSS JOIN LATERAL @extschema@.folio_perf_parse_schema(ns.nspname::text) p
    WHERE p.module IS NOT NULL
    UNION ALL
    SELECT names.ord, names.o, p.tenant, p.module, ns.nspname
    FROM names
    JOIN pg_catalog.pg_proc f ON f.proname = names.name
    JOIN pg_catalog.pg_namespace ns ON ns.oid = f.pronamespace
    CROSS JOIN LATERAL @extschema@.folio_perf_parse_schema(ns.nspname::text) p
    WHERE p.module IS NOT NULL
),
by_name AS (
    SELECT DISTINCT ON (ord) ord,
           CASE WHEN count(DISTINCT nspname) = 1 THEN min(tenant) END AS tenant,
           min(module) AS module
    FROM name_owner
    GROUP BY ord, o
    HAVING count(DISTINCT module) = 1
    ORDER BY ord, o
)
SELECT s.ord,
       CASE WHEN own.ord IS NOT NULL THEN NULL
            WHEN by_rel.module IS NOT NULL THEN by_rel.tenant
            WHEN by_role.module IS NOT NULL THEN by_role.tenant
            WHEN by_qual.module IS NOT NULL THEN by_qual.tenant
            ELSE by_name.tenant END,
       CASE WHEN own.ord IS NOT NULL THEN 'folio_perf'
            ELSE coalesce(by_rel.module, by_role.module, by_qual.module, by_name.module) END,
       CASE WHEN own.ord IS NOT NULL THEN 'relations'
            WHEN by_rel.module IS NOT NULL THEN 'relations'
            WHEN by_role.module IS NOT NULL THEN 'role'
            WHEN by_qual.module IS NOT NULL THEN 'qualified'
            WHEN by_name.module IS NOT NULL THEN 'relation_name' END,
       (own.ord IS NOT NULL OR folio_perf_data.is_housekeeping(s.t))
FROM s
LEFT JOIN own ON own.ord = s.ord
LEFT JOIN by_rel ON by_rel.ord = s.ord
LEFT JOIN by_role ON by_role.ord = s.ord
LEFT JOIN by_qual ON by_qual.ord = s.ord
LEFT JOIN by_name ON by_name.ord = s.ord
$$;

-- The current pg_stat_statements entries of this database, with the
-- columns folio_perf stores, whatever the server version.
CREATE FUNCTION folio_perf_data.pgss_current()
RETURNS TABLE(userid oid, dbid oid, queryid bigint, toplevel boolean,
    query text, calls bigint, total_exec_time double precision,
    total_plan_time double precision, plans bigint, rows bigint,
    shared_blks_hit bigint, shared_blks_read bigint,
    shared_blks_dirtied bigint, shared_blks_written bigint,
    local_blks_hit bigint, local_blks_read bigint,
    temp_blks_read bigint, temp_blks_written bigint,
    blk_read_time double precision, blk_write_time double precision,
    wal_records bigint, wal_fpi bigint, wal_bytes numeric)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v int := current_setting('server_version_num')::int;
    pgss regnamespace;
BEGIN
    SELECT e.extnamespace INTO pgss FROM pg_catalog.pg_extension e
    WHERE e.extname = 'pg_stat_statements';
    IF pgss IS NULL THEN
        RAISE EXCEPTION 'extension "pg_stat_statements" is not installed in this database'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'Run CREATE EXTENSION pg_stat_statements.';
    END IF;
    RETURN QUERY EXECUTE format(
        'SELECT s.userid, s.dbid, s.queryid, %s, s.query, s.calls,
                s.total_exec_time, s.total_plan_time, s.plans, s.rows,
                s.shared_blks_hit, s.shared_blks_read, s.shared_blks_dirtied,
                s.shared_blks_written, s.local_blks_hit, s.local_blks_read,
                s.temp_blks_read, s.temp_blks_written, %s, %s,
                s.wal_records, s.wal_fpi, s.wal_bytes
         FROM %I.pg_stat_statements(true) s
         WHERE s.dbid = (SELECT d.oid FROM pg_catalog.pg_database d
                         WHERE d.datname = pg_catalog.current_database())
           AND s.queryid IS NOT NULL',
        CASE WHEN v >= 140000 THEN 's.toplevel' ELSE 'true' END,
        CASE WHEN v >= 170000 THEN 's.shared_blk_read_time + s.local_blk_read_time' ELSE 's.blk_read_time' END,
        CASE WHEN v >= 170000 THEN 's.shared_blk_write_time + s.local_blk_write_time' ELSE 's.blk_write_time' END,
        pgss::name);
END
$$;

/*
 * One consistent capture.  Serialised per database by an advisory lock so
 * that concurrent callers each get a complete snapshot; everything happens in
 * the caller's transaction, so an error leaves nothing behind.
 */
CREATE FUNCTION folio_perf_data.capture(p_label text, p_kind text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v        int := current_setting('server_version_num')::int;
    t0       timestamptz := clock_timestamp();
    mydb     oid;
    snap     bigint;
    prev     bigint;
    n_stmt   int;
    n_stmt_s int;
    n_rel    int;
    n_rel_s  int;
    old_fetch text;
BEGIN
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

    PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_snapshot'), mydb::int);

    -- the sampler (if any) writes what it has, so windows see samples up to here
    IF pg_catalog.to_regprocedure('@extschema@.folio_perf_sampler_flush()') IS NOT NULL THEN
        EXECUTE 'SELECT @extschema@.folio_perf_sampler_flush()';
    END IF;

    IF v >= 150000 THEN
        old_fetch := current_setting('stats_fetch_consistency');
        PERFORM pg_catalog.set_config('stats_fetch_consistency', 'none', true);
    END IF;

    SELECT max(s.snap_id) INTO prev FROM folio_perf_data.snapshot s
    WHERE s.dbid = mydb AND s.target_id IS NULL;

    INSERT INTO folio_perf_data.snapshot (label, kind, dbid, datname,
        server_version_num, server_start, preloaded, max_connections,
        db_stats_reset, numbackends, xact_commit, xact_rollback, blks_read,
        blks_hit, tup_returned, tup_fetched, tup_inserted, tup_updated,
        tup_deleted, conflicts, temp_files, temp_bytes, deadlocks,
        blk_read_time, blk_write_time, db_size_bytes)
    SELECT p_label, p_kind, mydb, pg_catalog.current_database(), v,
           pg_catalog.pg_postmaster_start_time(),
           'folio_perf' = ANY (pg_catalog.string_to_array(
               pg_catalog.replace(pg_catalog.current_setting('shared_preload_libraries'), ' ', ''), ',')),
           pg_catalog.current_setting('max_connections')::int,
           d.stats_reset, d.numbackends, d.xact_commit, d.xact_rollback,
           d.blks_read, d.blks_hit, d.tup_returned, d.tup_fetched,
           d.tup_inserted, d.tup_updated, d.tup_deleted, d.conflicts,
           d.temp_files, d.temp_bytes, d.deadlocks, d.blk_read_time,
           d.blk_write_time, pg_catalog.pg_database_size(mydb)
    FROM pg_catalog.pg_stat_database d WHERE d.datid = mydb
    RETURNING snap_id INTO snap;

    -- server-wide counters whose views differ between versions
    IF v >= 170000 THEN
        EXECUTE 'UPDATE folio_perf_data.snapshot s SET
            bgwriter_stats_reset = b.stats_reset, checkpoints_timed = c.num_timed,
            checkpoints_req = c.num_requested, checkpoint_write_time = c.write_time,
            checkpoint_sync_time = c.sync_time, buffers_checkpoint = c.buffers_written,
            buffers_clean = b.buffers_clean, buffers_alloc = b.buffers_alloc
          FROM pg_catalog.pg_stat_bgwriter b, pg_catalog.pg_stat_checkpointer c
          WHERE s.snap_id = $1' USING snap;
    ELSE
        EXECUTE 'UPDATE folio_perf_data.snapshot s SET
            bgwriter_stats_reset = b.stats_reset, checkpoints_timed = b.checkpoints_timed,
            checkpoints_req = b.checkpoints_req, checkpoint_write_time = b.checkpoint_write_time,
            checkpoint_sync_time = b.checkpoint_sync_time, buffers_checkpoint = b.buffers_checkpoint,
            buffers_clean = b.buffers_clean, buffers_backend = b.buffers_backend,
            buffers_alloc = b.buffers_alloc
          FROM pg_catalog.pg_stat_bgwriter b WHERE s.snap_id = $1' USING snap;
    END IF;
    IF v >= 140000 THEN
        EXECUTE 'UPDATE folio_perf_data.snapshot s SET
            wal_stats_reset = w.stats_reset, wal_records = w.wal_records,
            wal_fpi = w.wal_fpi, wal_bytes = w.wal_bytes,
            wal_buffers_full = w.wal_buffers_full
          FROM pg_catalog.pg_stat_wal w WHERE s.snap_id = $1' USING snap;
        EXECUTE format('UPDATE folio_perf_data.snapshot s SET
            pgss_dealloc = i.dealloc, pgss_stats_reset = i.stats_reset,
            pgss_max = pg_catalog.current_setting(''pg_stat_statements.max'')::int
          FROM %I.pg_stat_statements_info i WHERE s.snap_id = $1',
          (SELECT e.extnamespace::regnamespace::name FROM pg_catalog.pg_extension e
           WHERE e.extname = 'pg_stat_statements')) USING snap;
    END IF;

    -- connections now, grouped
    INSERT INTO folio_perf_data.snapshot_activity
    SELECT snap, a.datname, a.usename, a.application_name, a.state,
           a.wait_event_type, a.backend_type, count(*)
    FROM pg_catalog.pg_stat_activity a
    GROUP BY 2, 3, 4, 5, 6, 7;

    ------------------------------------------------------------------
    -- statements
    ------------------------------------------------------------------
    IF pg_catalog.to_regclass('pg_temp.fperf_cur_stmt') IS NOT NULL THEN
        DROP TABLE pg_temp.fperf_cur_stmt;
    END IF;
    CREATE TEMP TABLE fperf_cur_stmt ON COMMIT DROP AS
    SELECT c.*, k.key_id
    FROM folio_perf_data.pgss_current() c
    LEFT JOIN folio_perf_data.stmt_key k
      ON k.dbid = c.dbid AND k.userid = c.userid AND k.queryid = c.queryid
     AND k.toplevel = c.toplevel AND coalesce(k.target_id, 0) = 0;
    GET DIAGNOSTICS n_stmt = ROW_COUNT;

    -- new statements: store the text once, attribute, create the key
    IF EXISTS (SELECT 1 FROM fperf_cur_stmt WHERE key_id IS NULL) THEN
        INSERT INTO folio_perf_data.query_text (text_md5, query)
        SELECT DISTINCT ON (pg_catalog.md5(c.query)::uuid) pg_catalog.md5(c.query)::uuid, c.query
        FROM fperf_cur_stmt c WHERE c.key_id IS NULL AND c.query IS NOT NULL
        ON CONFLICT (text_md5) DO NOTHING;

        WITH n AS (
            SELECT row_number() OVER () AS ord, c.*
            FROM fperf_cur_stmt c WHERE c.key_id IS NULL
        ), a AS (
            SELECT * FROM folio_perf_data.attribute_statements(
                (SELECT array_agg(n.queryid ORDER BY n.ord) FROM n),
                (SELECT array_agg(n.userid ORDER BY n.ord) FROM n),
                (SELECT array_agg(n.query ORDER BY n.ord) FROM n))
        ), ins AS (
            INSERT INTO folio_perf_data.stmt_key (dbid, userid, queryid, toplevel,
                text_id, rolname, tenant, module, attributed_by, housekeeping, first_snap)
            SELECT n.dbid, n.userid, n.queryid, n.toplevel, t.text_id, r.rolname,
                   a.tenant, a.module, a.attributed_by, coalesce(a.housekeeping, false), snap
            FROM n
            JOIN a ON a.ord = n.ord
            LEFT JOIN folio_perf_data.query_text t ON t.text_md5 = pg_catalog.md5(n.query)::uuid
            LEFT JOIN pg_catalog.pg_roles r ON r.oid = n.userid
            RETURNING key_id, dbid, userid, queryid, toplevel
        )
        UPDATE fperf_cur_stmt c SET key_id = ins.key_id
        FROM ins
        WHERE ins.dbid = c.dbid AND ins.userid = c.userid
          AND ins.queryid = c.queryid AND ins.toplevel = c.toplevel;
    END IF;

    -- counters of changed, new and re-entered statements
    INSERT INTO folio_perf_data.stmt (snap_id, key_id, calls, total_exec_time,
        total_plan_time, plans, rows, shared_blks_hit, shared_blks_read,
        shared_blks_dirtied, shared_blks_written, local_blks_hit, local_blks_read,
        temp_blks_read, temp_blks_written, blk_read_time, blk_write_time,
        wal_records, wal_fpi, wal_bytes)
    SELECT snap, c.key_id, c.calls, c.total_exec_time, c.total_plan_time,
           c.plans, c.rows, c.shared_blks_hit, c.shared_blks_read,
           c.shared_blks_dirtied, c.shared_blks_written, c.local_blks_hit,
           c.local_blks_read, c.temp_blks_read, c.temp_blks_written,
           c.blk_read_time, c.blk_write_time, c.wal_records, c.wal_fpi, c.wal_bytes
    FROM fperf_cur_stmt c
    LEFT JOIN folio_perf_data.stmt_last l ON l.key_id = c.key_id
    WHERE l.key_id IS NULL OR l.calls <> c.calls
       OR l.total_exec_time <> c.total_exec_time OR l.rows <> c.rows;
    GET DIAGNOSTICS n_stmt_s = ROW_COUNT;

    -- statements that left pg_stat_statements (eviction, reset)
    WITH gone AS (
        DELETE FROM folio_perf_data.stmt_last l
        WHERE l.dbid = mydb
          AND NOT EXISTS (SELECT 1 FROM fperf_cur_stmt c WHERE c.key_id = l.key_id)
        RETURNING l.key_id
    )
    INSERT INTO folio_perf_data.stmt (snap_id, key_id, gone)
    SELECT snap, gone.key_id, true FROM gone;

    INSERT INTO folio_perf_data.stmt_last AS l (key_id, dbid, calls, total_exec_time, rows, last_snap)
    SELECT c.key_id, c.dbid, c.calls, c.total_exec_time, c.rows, snap
    FROM fperf_cur_stmt c
    ON CONFLICT (key_id) DO UPDATE
       SET calls = EXCLUDED.calls, total_exec_time = EXCLUDED.total_exec_time,
           rows = EXCLUDED.rows, last_snap = EXCLUDED.last_snap
     WHERE l.calls <> EXCLUDED.calls OR l.total_exec_time <> EXCLUDED.total_exec_time
        OR l.rows <> EXCLUDED.rows;

    ------------------------------------------------------------------
    -- relations
    ------------------------------------------------------------------
    IF pg_catalog.to_regclass('pg_temp.fperf_cur_rel') IS NOT NULL THEN
        DROP TABLE pg_temp.fperf_cur_rel;
    END IF;
    CREATE TEMP TABLE fperf_cur_rel ON COMMIT DROP AS
    SELECT r.*, l.rel_key_id, l.sig AS last_sig, l.relfilenode AS last_relfilenode
    FROM @extschema@.folio_perf_rel_stats() r
    LEFT JOIN folio_perf_data.rel_last l ON l.dbid = mydb AND l.relid = r.relid
    WHERE l.rel_key_id IS NULL OR l.sig <> r.sig OR l.relfilenode <> r.relfilenode;
    SELECT count(*) INTO n_rel FROM pg_catalog.pg_class c
    WHERE c.relkind IN ('r', 'm', 'i') AND c.relpersistence <> 't'
      AND c.relnamespace NOT IN ('pg_catalog'::regnamespace, 'pg_toast'::regnamespace,
                                 'information_schema'::regnamespace,
                                 'folio_perf_data'::regnamespace);

    -- relations seen for the first time (or whose OID was reused)
    WITH nk AS (
        INSERT INTO folio_perf_data.rel_key (dbid, relid, relkind, nspname, relname,
            table_relname, tenant, module, first_snap)
        SELECT mydb, r.relid, r.relkind, r.nspname, r.relname, t.relname,
               p.tenant, p.module, snap
        FROM fperf_cur_rel r
        LEFT JOIN pg_catalog.pg_class t ON t.oid = r.table_relid
        CROSS JOIN LATERAL @extschema@.folio_perf_parse_schema(r.nspname::text) p
        WHERE r.rel_key_id IS NULL
        RETURNING rel_key_id, relid
    )
    UPDATE fperf_cur_rel r SET rel_key_id = nk.rel_key_id FROM nk WHERE nk.relid = r.relid;

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
           r.tuples_inserted, r.tuples_updated, r.tuples_deleted,
           r.tuples_hot_updated, r.live_tuples, r.dead_tuples, r.vacuum_count,
           r.autovacuum_count, r.analyze_count, r.autoanalyze_count,
           r.blocks_read, r.blocks_hit, r.toast_blocks_read, r.toast_blocks_hit,
           CASE WHEN r.relkind = 'i' THEN pg_catalog.pg_relation_size(r.relid)
                ELSE pg_catalog.pg_table_size(r.relid) END
    FROM fperf_cur_rel r;
    GET DIAGNOSTICS n_rel_s = ROW_COUNT;

    -- relations that were dropped
    WITH gone AS (
        DELETE FROM folio_perf_data.rel_last l
        WHERE l.dbid = mydb
          AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_class c
                          WHERE c.oid = l.relid AND c.relkind IN ('r', 'm', 'i'))
        RETURNING l.rel_key_id
    ), g AS (
        UPDATE folio_perf_data.rel_key k SET dropped_snap = snap
        FROM gone WHERE k.rel_key_id = gone.rel_key_id
        RETURNING k.rel_key_id
    )
    INSERT INTO folio_perf_data.rel (snap_id, rel_key_id, gone, size_bytes)
    SELECT snap, g.rel_key_id, true, 0 FROM g;

    INSERT INTO folio_perf_data.rel_last AS l (rel_key_id, dbid, relid, relfilenode, sig, size_bytes, last_snap)
    SELECT r.rel_key_id, mydb, r.relid, r.relfilenode, r.sig, x.size_bytes, snap
    FROM fperf_cur_rel r
    JOIN folio_perf_data.rel x ON x.snap_id = snap AND x.rel_key_id = r.rel_key_id
    ON CONFLICT (rel_key_id) DO UPDATE
       SET relfilenode = EXCLUDED.relfilenode, sig = EXCLUDED.sig,
           size_bytes = EXCLUDED.size_bytes, last_snap = EXCLUDED.last_snap;

    SELECT count(*) INTO n_rel_s FROM folio_perf_data.rel x WHERE x.snap_id = snap;

    -- per-schema roll-up of the schemas that changed
    INSERT INTO folio_perf_data.schema_stat (snap_id, dbid, nspname, tenant, module,
        n_tables, n_indexes, table_bytes, index_bytes, live_tup, dead_tup)
    SELECT snap, mydb, k.nspname, min(k.tenant), min(k.module),
           count(*) FILTER (WHERE k.relkind <> 'i'),
           count(*) FILTER (WHERE k.relkind = 'i'),
           coalesce(sum(l.size_bytes) FILTER (WHERE k.relkind <> 'i'), 0),
           coalesce(sum(l.size_bytes) FILTER (WHERE k.relkind = 'i'), 0),
           coalesce(sum(x.n_live_tup), 0), coalesce(sum(x.n_dead_tup), 0)
    FROM folio_perf_data.rel_last l
    JOIN folio_perf_data.rel_key k ON k.rel_key_id = l.rel_key_id
    LEFT JOIN LATERAL (
        SELECT r.n_live_tup, r.n_dead_tup FROM folio_perf_data.rel r
        WHERE r.rel_key_id = l.rel_key_id AND r.snap_id = l.last_snap
    ) x ON true
    WHERE l.dbid = mydb
      AND k.nspname IN (SELECT k2.nspname FROM folio_perf_data.rel x2
                        JOIN folio_perf_data.rel_key k2 ON k2.rel_key_id = x2.rel_key_id
                        WHERE x2.snap_id = snap)
    GROUP BY k.nspname;
    -- schemas whose last relation was dropped
    INSERT INTO folio_perf_data.schema_stat (snap_id, dbid, nspname, tenant, module,
        n_tables, n_indexes, table_bytes, index_bytes, live_tup, dead_tup)
    SELECT DISTINCT snap, mydb, k.nspname, k.tenant, k.module, 0, 0, 0, 0, 0, 0
    FROM folio_perf_data.rel x JOIN folio_perf_data.rel_key k ON k.rel_key_id = x.rel_key_id
    WHERE x.snap_id = snap AND x.gone
      AND NOT EXISTS (SELECT 1 FROM folio_perf_data.schema_stat s
                      WHERE s.snap_id = snap AND s.dbid = mydb AND s.nspname = k.nspname);

    IF old_fetch IS NOT NULL THEN
        PERFORM pg_catalog.set_config('stats_fetch_consistency', old_fetch, true);
    END IF;

    UPDATE folio_perf_data.snapshot s
    SET n_statements = n_stmt,
        n_statements_stored = (SELECT count(*) FROM folio_perf_data.stmt x WHERE x.snap_id = snap),
        n_relations = n_rel, n_relations_stored = n_rel_s,
        capture_ms = 1000 * extract(epoch FROM clock_timestamp() - t0)
    WHERE s.snap_id = snap;

    RETURN snap;
END
$$;

CREATE FUNCTION folio_perf_snapshot(label text DEFAULT NULL)
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT folio_perf_data.capture(label, 'manual') $$;

-- for the sampler's timed snapshots (folio_perf.snapshot_interval)
CREATE FUNCTION folio_perf_snapshot_timed()
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT folio_perf_data.capture(NULL, 'timed') $$;

-- Raise the standard errors for a snapshot id.
CREATE FUNCTION folio_perf_data.check_snapshot(p_snap bigint, p_what text)
RETURNS folio_perf_data.snapshot
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r folio_perf_data.snapshot;
BEGIN
    IF p_snap IS NULL THEN
        RAISE EXCEPTION '% must not be null', p_what
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass a snapshot id returned by folio_perf_snapshot(); see folio_perf_snapshots.';
    END IF;
    SELECT * INTO r FROM folio_perf_data.snapshot s WHERE s.snap_id = p_snap;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'snapshot % does not exist', p_snap
            USING ERRCODE = 'undefined_object',
                  HINT = 'See folio_perf_snapshots for the snapshots that exist.';
    END IF;
    RETURN r;
END
$$;

CREATE FUNCTION folio_perf_window(from_snap bigint, to_snap bigint, label text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    a folio_perf_data.snapshot;
    b folio_perf_data.snapshot;
    w bigint;
BEGIN
    a := folio_perf_data.check_snapshot(from_snap, 'from_snap');
    b := folio_perf_data.check_snapshot(to_snap, 'to_snap');
    IF from_snap >= to_snap THEN
        RAISE EXCEPTION 'window must begin before it ends (snapshots % and %)', from_snap, to_snap
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass the earlier snapshot first.';
    END IF;
    IF a.dbid <> b.dbid OR a.target_id IS DISTINCT FROM b.target_id THEN
        RAISE EXCEPTION 'snapshots % and % are of different databases or targets', from_snap, to_snap
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A window spans two snapshots of the same database.';
    END IF;
    IF label IS NOT NULL AND octet_length(label) > 1000 THEN
        RAISE EXCEPTION 'window label is too long (% bytes)', octet_length(label)
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'Labels are limited to 1000 bytes; put details into window tags.';
    END IF;
    PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_window'), 0);
    SELECT x.window_id INTO w FROM folio_perf_data.window x
    WHERE x.begin_snap = from_snap AND x.end_snap = to_snap;
    IF w IS NULL THEN
        INSERT INTO folio_perf_data.window (label, begin_snap, end_snap)
        VALUES (coalesce(label, a.label || ' .. ' || b.label), from_snap, to_snap)
        RETURNING window_id INTO w;
    END IF;
    RETURN w;
END
$$;

CREATE FUNCTION folio_perf_begin(label text, tags jsonb DEFAULT '{}')
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s bigint;
    w bigint;
BEGIN
    IF tags IS NULL OR pg_catalog.jsonb_typeof(tags) <> 'object' THEN
        RAISE EXCEPTION 'window tags must be a JSON object'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass tags like ''{"release":"Quesnelia","scenario":"DI MARC Bib Create"}''.';
    END IF;
    IF octet_length(tags::text) > 100000 THEN
        RAISE EXCEPTION 'window tags are too long (% bytes)', octet_length(tags::text)
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Tags are limited to 100 kB.';
    END IF;
    IF label IS NOT NULL AND octet_length(label) > 1000 THEN
        RAISE EXCEPTION 'window label is too long (% bytes)', octet_length(label)
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'Labels are limited to 1000 bytes; put details into window tags.';
    END IF;
    s := folio_perf_data.capture(label, 'begin');
    INSERT INTO folio_perf_data.window (label, tags, begin_snap)
    VALUES (label, tags, s) RETURNING window_id INTO w;
    RETURN w;
END
$$;

CREATE FUNCTION folio_perf_end(window_id bigint DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w folio_perf_data.window;
    s bigint;
    mydb oid := (SELECT d.oid FROM pg_catalog.pg_database d
                 WHERE d.datname = pg_catalog.current_database());
BEGIN
    IF window_id IS NULL THEN
        SELECT x.* INTO w FROM folio_perf_data.window x
        JOIN folio_perf_data.snapshot b ON b.snap_id = x.begin_snap
        WHERE x.end_snap IS NULL AND b.dbid = mydb AND b.target_id IS NULL
        ORDER BY x.window_id DESC LIMIT 1
        FOR UPDATE OF x;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'there is no open window in this database'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Start one with folio_perf_begin(label, tags).';
        END IF;
    ELSE
        SELECT x.* INTO w FROM folio_perf_data.window x
        WHERE x.window_id = folio_perf_end.window_id FOR UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'window % does not exist', window_id
                USING ERRCODE = 'undefined_object',
                      HINT = 'See folio_perf_windows for the windows that exist.';
        END IF;
        IF w.end_snap IS NOT NULL THEN
            RAISE EXCEPTION 'window % has already ended', window_id
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Start a new window with folio_perf_begin().';
        END IF;
        PERFORM folio_perf_data.check_snapshot(w.begin_snap, 'begin snapshot');
    END IF;
    s := folio_perf_data.capture(w.label, 'end');
    UPDATE folio_perf_data.window x SET end_snap = s WHERE x.window_id = w.window_id;
    RETURN w.window_id;
END
$$;

/*
 * Delete snapshots older than older_than that no window begins or ends at.
 * A deleted snapshot's changed rows move to the next snapshot of the same
 * database unless that one has its own, so every value "at" a kept
 * snapshot stays what it was.  The newest snapshot of each database is
 * always kept.  Returns the number of snapshots deleted.
 */
CREATE FUNCTION folio_perf_purge(older_than interval)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    n bigint := 0;
BEGIN
    IF older_than IS NULL THEN
        RAISE EXCEPTION 'older_than must not be null'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass an interval such as ''7 days''.';
    END IF;
    IF older_than < interval '0' THEN
        RAISE EXCEPTION 'older_than must not be negative'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass an interval such as ''7 days''.';
    END IF;
    -- one purge at a time, and no snapshot being taken meanwhile
    PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_purge'), 0);
    FOR r IN
        SELECT s.snap_id,
               (SELECT min(s2.snap_id) FROM folio_perf_data.snapshot s2
                WHERE s2.dbid = s.dbid AND s2.target_id IS NOT DISTINCT FROM s.target_id
                  AND s2.snap_id > s.snap_id) AS next_snap,
               s.dbid
        FROM folio_perf_data.snapshot s
        WHERE s.taken_at < pg_catalog.now() - older_than
          AND NOT EXISTS (SELECT 1 FROM folio_perf_data.window w
                          WHERE w.begin_snap = s.snap_id OR w.end_snap = s.snap_id)
        ORDER BY s.snap_id
        FOR UPDATE OF s
    LOOP
        CONTINUE WHEN r.next_snap IS NULL;
        PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_snapshot'), r.dbid::int);
        UPDATE folio_perf_data.stmt x SET snap_id = r.next_snap
        WHERE x.snap_id = r.snap_id
          AND NOT EXISTS (SELECT 1 FROM folio_perf_data.stmt y
                          WHERE y.key_id = x.key_id AND y.snap_id = r.next_snap);
        UPDATE folio_perf_data.rel x SET snap_id = r.next_snap
        WHERE x.snap_id = r.snap_id
          AND NOT EXISTS (SELECT 1 FROM folio_perf_data.rel y
                          WHERE y.rel_key_id = x.rel_key_id AND y.snap_id = r.next_snap);
        UPDATE folio_perf_data.schema_stat x SET snap_id = r.next_snap
        WHERE x.snap_id = r.snap_id
          AND NOT EXISTS (SELECT 1 FROM folio_perf_data.schema_stat y
                          WHERE y.dbid = x.dbid AND y.nspname = x.nspname
                            AND y.snap_id = r.next_snap);
        UPDATE folio_perf_data.stmt_key k SET first_snap = r.next_snap WHERE k.first_snap = r.snap_id;
        UPDATE folio_perf_data.rel_key k SET first_snap = r.next_snap WHERE k.first_snap = r.snap_id;
        UPDATE folio_perf_data.rel_key k SET dropped_snap = r.next_snap WHERE k.dropped_snap = r.snap_id;
        UPDATE folio_perf_data.stmt_last l SET last_snap = r.next_snap WHERE l.last_snap = r.snap_id;
        UPDATE folio_perf_data.rel_last l SET last_snap = r.next_snap WHERE l.last_snap = r.snap_id;
        DELETE FROM folio_perf_data.snapshot s WHERE s.snap_id = r.snap_id;
        n := n + 1;
    END LOOP;
    -- statements and relations no snapshot refers to any more
    DELETE FROM folio_perf_data.rel_key k
    WHERE NOT EXISTS (SELECT 1 FROM folio_perf_data.rel x WHERE x.rel_key_id = k.rel_key_id)
      AND NOT EXISTS (SELECT 1 FROM folio_perf_data.rel_last l WHERE l.rel_key_id = k.rel_key_id);
    DELETE FROM folio_perf_data.stmt_key k
    WHERE NOT EXISTS (SELECT 1 FROM folio_perf_data.stmt x WHERE x.key_id = k.key_id)
      AND NOT EXISTS (SELECT 1 FROM folio_perf_data.stmt_last l WHERE l.key_id = k.key_id);
    DELETE FROM folio_perf_data.query_text t
    WHERE NOT EXISTS (SELECT 1 FROM folio_perf_data.stmt_key k WHERE k.text_id = t.text_id);
    RETURN n;
END
$$;

CREATE VIEW folio_perf_snapshots AS
SELECT s.snap_id, s.taken_at, s.label, s.kind, s.datname, s.target_id,
       s.server_start, s.preloaded, s.n_statements, s.n_statements_stored,
       s.n_relations, s.n_relations_stored, s.capture_ms,
       s.pgss_dealloc, s.pgss_stats_reset, s.db_stats_reset, s.max_connections
FROM folio_perf_data.snapshot s;

CREATE VIEW folio_perf_windows AS
SELECT w.window_id, w.label, w.tags, w.begin_snap, w.end_snap,
       b.taken_at AS begin_at, e.taken_at AS end_at,
       e.taken_at - b.taken_at AS duration, b.datname, b.target_id
FROM folio_perf_data.window w
JOIN folio_perf_data.snapshot b ON b.snap_id = w.begin_snap
LEFT JOIN folio_perf_data.snapshot e ON e.snap_id = w.end_snap;



------------------------------------------------------------------------
-- 4. reports over a window                             (issue 3, 5)
------------------------------------------------------------------------

-- The two snapshots of a window, after checking it can be reported on.
CREATE FUNCTION folio_perf_data.window_bounds(p_window bigint,
    OUT begin_snap bigint, OUT end_snap bigint,
    OUT begin_at timestamptz, OUT end_at timestamptz, OUT seconds double precision)
LANGUAGE plpgsql STABLE
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
 * Per-statement differences across two snapshots.  status:
 *   ok          end minus begin, exact
 *   new         first seen inside the window: counts from zero, exact
 *   reentered   left pg_stat_statements and came back inside the window:
 *               counts since it came back (a lower bound)
 *   evicted     gone by the end: counts until it was last seen (lower bound)
 *   reset       counters went down (pg_stat_statements_reset, crash):
 *               counts since the reset (a lower bound)
 */
CREATE FUNCTION folio_perf_data.stmt_delta(p_begin bigint, p_end bigint)
RETURNS TABLE(key_id bigint, status text, calls bigint,
    total_exec_time double precision, total_plan_time double precision,
    rows bigint, shared_blks_hit bigint, shared_blks_read bigint,
    shared_blks_dirtied bigint, shared_blks_written bigint,
    temp_blks_read bigint, temp_blks_written bigint,
    blk_read_time double precision, blk_write_time double precision,
    wal_bytes numeric, first_calls_mean double precision)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
WITH changed AS (
    SELECT x.key_id, bool_or(x.gone) AS had_gone
    FROM folio_perf_data.stmt x
    WHERE x.snap_id > p_begin AND x.snap_id <= p_end
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
               x.wal_bytes AS b_wal
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
               x.wal_bytes AS e_wal
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
    CASE WHEN s.b_calls > 0 AND NOT s.b_gone THEN s.b_time / s.b_calls END
FROM s
WHERE s.e_calls IS NOT NULL
$$;

/*
 * Per-relation differences across two snapshots (tables, matviews and
 * indexes).  status: ok, created (first seen inside the window, counts from
 * zero), dropped (counts until last seen), rewritten (TRUNCATE, VACUUM FULL,
 * CLUSTER inside the window; counters continue), reset (counters went down:
 * statistics reset or crash; counts since the reset, a lower bound).
 */
CREATE FUNCTION folio_perf_data.rel_delta(p_begin bigint, p_end bigint)
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
WITH changed AS (
    SELECT x.rel_key_id, bool_or(x.gone) AS had_gone, bool_or(x.rewritten) AS rewritten
    FROM folio_perf_data.rel x
    WHERE x.snap_id > p_begin AND x.snap_id <= p_end
    GROUP BY x.rel_key_id
),
v AS (
    SELECT c.rel_key_id, c.had_gone, c.rewritten, b.*, e.*
    FROM changed c
    LEFT JOIN LATERAL (
        SELECT x.gone AS b_gone, x.seq_scan AS b1, x.seq_tup_read AS b2, x.idx_scan AS b3,
               x.idx_tup_fetch AS b4, x.n_tup_ins AS b5, x.n_tup_upd AS b6,
               x.n_tup_del AS b7, x.n_tup_hot_upd AS b8, x.vacuum_count AS b9,
               x.autovacuum_count AS b10, x.analyze_count AS b11,
               x.autoanalyze_count AS b12, x.blks_read AS b13, x.blks_hit AS b14,
               x.toast_blks_read AS b15, x.toast_blks_hit AS b16, x.size_bytes AS b_size
        FROM folio_perf_data.rel x
        WHERE x.rel_key_id = c.rel_key_id AND x.snap_id <= p_begin
        ORDER BY x.snap_id DESC LIMIT 1) b ON true
    LEFT JOIN LATERAL (
        SELECT x.seq_scan AS e1, x.seq_tup_read AS e2, x.idx_scan AS e3,
               x.idx_tup_fetch AS e4, x.n_tup_ins AS e5, x.n_tup_upd AS e6,
               x.n_tup_del AS e7, x.n_tup_hot_upd AS e8, x.vacuum_count AS e9,
               x.autovacuum_count AS e10, x.analyze_count AS e11,
               x.autoanalyze_count AS e12, x.blks_read AS e13, x.blks_hit AS e14,
               x.toast_blks_read AS e15, x.toast_blks_hit AS e16,
               x.n_live_tup AS e_live, x.n_dead_tup AS e_dead, x.size_bytes AS e_size
        FROM folio_perf_data.rel x
        WHERE x.rel_key_id = c.rel_key_id AND x.snap_id <= p_end AND NOT x.gone
        ORDER BY x.snap_id DESC LIMIT 1) e ON true
),
s AS (
    SELECT v.*,
        CASE
            WHEN v.b_gone IS NULL OR v.b_gone THEN 'created'
            WHEN v.e1 < v.b1 OR v.e2 < v.b2 OR v.e3 < v.b3 OR v.e4 < v.b4
              OR v.e5 < v.b5 OR v.e6 < v.b6 OR v.e7 < v.b7 OR v.e13 < v.b13
              OR v.e14 < v.b14 THEN 'reset'
            WHEN v.had_gone THEN 'dropped'
            WHEN v.rewritten THEN 'rewritten'
            ELSE 'ok'
        END AS st,
        (v.b_gone IS NOT NULL AND NOT v.b_gone) AS has_base
    FROM v
    WHERE v.e5 IS NOT NULL OR v.e1 IS NOT NULL OR v.e3 IS NOT NULL OR v.e13 IS NOT NULL
)
SELECT s.rel_key_id, s.st,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e1 - s.b1 ELSE s.e1 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e2 - s.b2 ELSE s.e2 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e3 - s.b3 ELSE s.e3 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e4 - s.b4 ELSE s.e4 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e5 - s.b5 ELSE s.e5 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e6 - s.b6 ELSE s.e6 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e7 - s.b7 ELSE s.e7 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e8 - s.b8 ELSE s.e8 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN greatest(s.e9 - s.b9, 0) ELSE s.e9 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN greatest(s.e10 - s.b10, 0) ELSE s.e10 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN greatest(s.e11 - s.b11, 0) ELSE s.e11 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN greatest(s.e12 - s.b12, 0) ELSE s.e12 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e13 - s.b13 ELSE s.e13 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN s.e14 - s.b14 ELSE s.e14 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN greatest(s.e15 - s.b15, 0) ELSE s.e15 END,
    CASE WHEN s.has_base AND s.st <> 'reset' THEN greatest(s.e16 - s.b16, 0) ELSE s.e16 END,
    CASE WHEN s.st = 'dropped' THEN 0 ELSE s.e_live END,
    CASE WHEN s.st = 'dropped' THEN 0 ELSE s.e_dead END,
    CASE WHEN s.has_base THEN s.b_size ELSE 0 END,
    CASE WHEN s.st = 'dropped' THEN 0 ELSE s.e_size END
FROM s
$$;

-- Can the current role see statement texts of role u (as in pg_stat_statements)?
CREATE FUNCTION folio_perf_data.may_see_text(u oid)
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT u = (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user)
      OR pg_catalog.pg_has_role(current_user, 'pg_read_all_stats', 'USAGE')
$$;

CREATE FUNCTION folio_perf_data.check_n(n int)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
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

CREATE FUNCTION folio_perf_top_statements(window_id bigint, n int DEFAULT 20,
    order_by text DEFAULT 'total_time', only_toplevel boolean DEFAULT true,
    include_housekeeping boolean DEFAULT false)
RETURNS TABLE(rank int, queryid bigint, tenant text, module text,
    attributed_by text, role name, toplevel boolean, calls bigint,
    total_exec_ms double precision, mean_exec_ms double precision,
    rows bigint, pct_of_total_time numeric, shared_blks_hit bigint,
    shared_blks_read bigint, temp_blks_written bigint, wal_bytes numeric,
    load numeric, status text, query text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
    PERFORM folio_perf_data.check_n(n);
    IF order_by IS NULL OR order_by NOT IN ('total_time', 'calls', 'mean_time', 'rows', 'io', 'wal', 'load') THEN
        RAISE EXCEPTION 'unknown order_by "%"', coalesce(order_by, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use one of total_time, calls, mean_time, rows, io, wal, load.';
    END IF;
    RETURN QUERY
    WITH d AS (
        SELECT k.*, x.status, x.calls, x.total_exec_time, x.rows,
               x.shared_blks_hit, x.shared_blks_read, x.temp_blks_written, x.wal_bytes
        FROM folio_perf_data.stmt_delta(wb.begin_snap, wb.end_snap) x
        JOIN folio_perf_data.stmt_key k ON k.key_id = x.key_id
        WHERE x.calls > 0
          AND (only_toplevel IS NULL OR k.toplevel = only_toplevel)
          AND (include_housekeeping OR NOT k.housekeeping)
    ), tot AS (
        SELECT sum(d.total_exec_time) AS t FROM d
    )
    SELECT (row_number() OVER (ORDER BY
                CASE order_by
                    WHEN 'calls' THEN d.calls::double precision
                    WHEN 'mean_time' THEN d.total_exec_time / d.calls
                    WHEN 'rows' THEN d.rows::double precision
                    WHEN 'io' THEN (d.shared_blks_read + d.temp_blks_written)::double precision
                    WHEN 'wal' THEN d.wal_bytes::double precision
                    ELSE d.total_exec_time END DESC,
                d.total_exec_time DESC, d.queryid))::int,
           d.queryid, d.tenant, d.module, d.attributed_by, d.rolname, d.toplevel,
           d.calls, d.total_exec_time, d.total_exec_time / d.calls, d.rows,
           CASE WHEN tot.t > 0 THEN round((100 * d.total_exec_time / tot.t)::numeric, 2) END,
           d.shared_blks_hit, d.shared_blks_read, d.temp_blks_written, d.wal_bytes,
           round((d.total_exec_time / 1000 / wb.seconds)::numeric, 3),
           d.status,
           CASE WHEN folio_perf_data.may_see_text(d.userid) THEN t.query
                ELSE '<insufficient privilege>' END
    FROM d CROSS JOIN tot
    LEFT JOIN folio_perf_data.query_text t ON t.text_id = d.text_id
    ORDER BY 1
    LIMIT n;
END
$$;

-- Table rows of a window with their indexes folded in.
CREATE FUNCTION folio_perf_data.table_rows(p_begin bigint, p_end bigint)
RETURNS TABLE(rel_key_id bigint, tenant text, module text, schema name,
    relname name, relkind "char", status text, inserts bigint, updates bigint,
    hot_updates bigint, deletes bigint, seq_scan bigint, seq_tup_read bigint,
    idx_scan bigint, idx_tup_fetch bigint, blks_read bigint, blks_hit bigint,
    table_bytes_begin bigint, table_bytes_end bigint,
    index_bytes_begin bigint, index_bytes_end bigint,
    live_tup bigint, dead_tup bigint, vacuum_count bigint,
    autovacuum_count bigint, analyze_count bigint, autoanalyze_count bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
WITH d AS (
    SELECT x.*, k.nspname, k.relname, k.relkind, k.table_relname, k.tenant, k.module, k.dbid
    FROM folio_perf_data.rel_delta(p_begin, p_end) x
    JOIN folio_perf_data.rel_key k ON k.rel_key_id = x.rel_key_id
),
t AS (SELECT * FROM d WHERE d.relkind <> 'i'),
i AS (
    SELECT d.dbid, d.nspname, d.table_relname,
           sum(d.idx_scan) AS idx_scan, sum(d.idx_tup_fetch) AS idx_tup_fetch,
           sum(d.blks_read) AS blks_read, sum(d.blks_hit) AS blks_hit,
           sum(d.size_begin) AS size_begin, sum(d.size_end) AS size_end,
           bool_or(d.status <> 'ok') AS odd
    FROM d WHERE d.relkind = 'i'
    GROUP BY 1, 2, 3
)
SELECT coalesce(t.rel_key_id, 0), coalesce(t.tenant, p.tenant), coalesce(t.module, p.module),
       coalesce(t.nspname, i.nspname), coalesce(t.relname, i.table_relname),
       coalesce(t.relkind, 'r'),
       coalesce(t.status, 'ok'),
       coalesce(t.n_tup_ins, 0), coalesce(t.n_tup_upd, 0), coalesce(t.n_tup_hot_upd, 0),
       coalesce(t.n_tup_del, 0), coalesce(t.seq_scan, 0), coalesce(t.seq_tup_read, 0),
       coalesce(i.idx_scan, 0)::bigint,
       (coalesce(i.idx_tup_fetch, 0) + coalesce(t.idx_tup_fetch, 0))::bigint,
       (coalesce(t.blks_read, 0) + coalesce(t.toast_blks_read, 0) + coalesce(i.blks_read, 0))::bigint,
       (coalesce(t.blks_hit, 0) + coalesce(t.toast_blks_hit, 0) + coalesce(i.blks_hit, 0))::bigint,
       t.size_begin, t.size_end,
       i.size_begin::bigint, i.size_end::bigint,
       t.n_live_tup, t.n_dead_tup,
       coalesce(t.vacuum_count, 0), coalesce(t.autovacuum_count, 0),
       coalesce(t.analyze_count, 0), coalesce(t.autoanalyze_count, 0)
FROM t
FULL JOIN i ON i.dbid = t.dbid AND i.nspname = t.nspname AND i.table_relname = t.relname
CROSS JOIN LATERAL @extschema@.folio_perf_parse_schema(coalesce(t.nspname, i.nspname)::text) p
-- leave out relations whose only change was a gauge (live/dead tuples)
WHERE coalesce(t.status, 'ok') <> 'ok' OR i.odd
   OR coalesce(t.n_tup_ins, 0) + coalesce(t.n_tup_upd, 0) + coalesce(t.n_tup_del, 0)
    + coalesce(t.seq_scan, 0) + coalesce(t.idx_tup_fetch, 0) + coalesce(t.blks_read, 0)
    + coalesce(t.blks_hit, 0) + coalesce(t.toast_blks_read, 0) + coalesce(t.toast_blks_hit, 0)
    + coalesce(t.vacuum_count, 0) + coalesce(t.autovacuum_count, 0)
    + coalesce(t.analyze_count, 0) + coalesce(t.autoanalyze_count, 0)
    + coalesce(i.idx_scan, 0) + coalesce(i.blks_read, 0) + coalesce(i.blks_hit, 0) > 0
   OR t.size_begin IS DISTINCT FROM t.size_end
   OR i.size_begin IS DISTINCT FROM i.size_end
$$;

CREATE FUNCTION folio_perf_table_activity(window_id bigint, n int DEFAULT 20,
    order_by text DEFAULT 'activity')
RETURNS TABLE(rank int, tenant text, module text, schema name, relname name,
    inserts bigint, updates bigint, hot_updates bigint, deletes bigint,
    seq_scan bigint, seq_tup_read bigint, idx_scan bigint, idx_tup_fetch bigint,
    blks_read bigint, blks_hit bigint, size_begin bigint, size_end bigint,
    growth bigint, index_size_end bigint, live_tup bigint, dead_tup bigint,
    vacuum_count bigint, autovacuum_count bigint, analyze_count bigint,
    autoanalyze_count bigint, status text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
    PERFORM folio_perf_data.check_n(n);
    IF order_by IS NULL OR order_by NOT IN ('activity', 'writes', 'reads', 'io', 'growth', 'seq_scan') THEN
        RAISE EXCEPTION 'unknown order_by "%"', coalesce(order_by, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use one of activity, writes, reads, io, growth, seq_scan.';
    END IF;
    RETURN QUERY
    SELECT (row_number() OVER (ORDER BY
                CASE order_by
                    WHEN 'writes' THEN (r.inserts + r.updates + r.deletes)::numeric
                    WHEN 'reads' THEN (r.seq_tup_read + r.idx_tup_fetch)::numeric
                    WHEN 'io' THEN r.blks_read::numeric
                    WHEN 'growth' THEN (coalesce(r.table_bytes_end, 0) - coalesce(r.table_bytes_begin, 0)
                                      + coalesce(r.index_bytes_end, 0) - coalesce(r.index_bytes_begin, 0))::numeric
                    WHEN 'seq_scan' THEN r.seq_scan::numeric
                    ELSE (r.inserts + r.updates + r.deletes + r.seq_scan + r.idx_scan)::numeric
                END DESC, r.schema, r.relname))::int,
           r.tenant, r.module, r.schema, r.relname, r.inserts, r.updates,
           r.hot_updates, r.deletes, r.seq_scan, r.seq_tup_read, r.idx_scan,
           r.idx_tup_fetch, r.blks_read, r.blks_hit,
           r.table_bytes_begin, r.table_bytes_end,
           coalesce(r.table_bytes_end, 0) - coalesce(r.table_bytes_begin, 0),
           r.index_bytes_end, r.live_tup, r.dead_tup, r.vacuum_count,
           r.autovacuum_count, r.analyze_count, r.autoanalyze_count, r.status
    FROM folio_perf_data.table_rows(wb.begin_snap, wb.end_snap) r
    ORDER BY 1
    LIMIT n;
END
$$;

-- Size of each schema at a snapshot (newest roll-up at or before it).
CREATE FUNCTION folio_perf_data.schema_sizes(p_snap bigint)
RETURNS TABLE(nspname name, tenant text, module text, bytes bigint,
              live_tup bigint, dead_tup bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT DISTINCT ON (s.nspname) s.nspname, s.tenant, s.module,
       s.table_bytes + s.index_bytes, s.live_tup, s.dead_tup
FROM folio_perf_data.schema_stat s
WHERE s.dbid = (SELECT x.dbid FROM folio_perf_data.snapshot x WHERE x.snap_id = p_snap)
  AND s.snap_id <= p_snap
ORDER BY s.nspname, s.snap_id DESC
$$;

CREATE FUNCTION folio_perf_module_activity(window_id bigint)
RETURNS TABLE(tenant text, module text, inserts bigint, updates bigint,
    hot_updates bigint, deletes bigint, seq_scan bigint, seq_tup_read bigint,
    idx_scan bigint, idx_tup_fetch bigint, blks_read bigint, blks_hit bigint,
    size_begin bigint, size_end bigint, growth bigint, live_tup bigint,
    dead_tup bigint, vacuum_count bigint, analyze_count bigint,
    statement_calls bigint, statement_time_ms double precision,
    connections_avg numeric, connections_max int, flags text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
    RETURN QUERY
    WITH r AS (
        SELECT t.tenant, t.module, sum(t.inserts) AS ins, sum(t.updates) AS upd,
               sum(t.hot_updates) AS hot, sum(t.deletes) AS del, sum(t.seq_scan) AS ss,
               sum(t.seq_tup_read) AS str, sum(t.idx_scan) AS isc,
               sum(t.idx_tup_fetch) AS itf, sum(t.blks_read) AS br, sum(t.blks_hit) AS bh,
               sum(t.vacuum_count + t.autovacuum_count) AS vac,
               sum(t.analyze_count + t.autoanalyze_count) AS ana,
               string_agg(DISTINCT t.status, ',') FILTER (WHERE t.status <> 'ok') AS fl
        FROM folio_perf_data.table_rows(wb.begin_snap, wb.end_snap) t
        WHERE t.module IS NOT NULL
        GROUP BY 1, 2
    ), st AS (
        SELECT k.tenant, k.module, sum(x.calls) AS calls, sum(x.total_exec_time) AS ms
        FROM folio_perf_data.stmt_delta(wb.begin_snap, wb.end_snap) x
        JOIN folio_perf_data.stmt_key k ON k.key_id = x.key_id
        WHERE k.toplevel AND NOT k.housekeeping AND k.module IS NOT NULL AND x.calls > 0
        GROUP BY 1, 2
    ), sb AS (
        SELECT z.tenant, z.module, sum(z.bytes) AS bytes
        FROM folio_perf_data.schema_sizes(wb.begin_snap) z GROUP BY 1, 2
    ), se AS (
        SELECT z.tenant, z.module, sum(z.bytes) AS bytes, sum(z.live_tup) AS live,
               sum(z.dead_tup) AS dead
        FROM folio_perf_data.schema_sizes(wb.end_snap) z GROUP BY 1, 2
    ), keys AS (
        SELECT r.tenant, r.module FROM r UNION SELECT st.tenant, st.module FROM st
    )
    SELECT keys.tenant, keys.module,
           coalesce(r.ins, 0)::bigint, coalesce(r.upd, 0)::bigint, coalesce(r.hot, 0)::bigint,
           coalesce(r.del, 0)::bigint, coalesce(r.ss, 0)::bigint, coalesce(r.str, 0)::bigint,
           coalesce(r.isc, 0)::bigint, coalesce(r.itf, 0)::bigint, coalesce(r.br, 0)::bigint,
           coalesce(r.bh, 0)::bigint,
           sb.bytes::bigint, se.bytes::bigint, (se.bytes - coalesce(sb.bytes, 0))::bigint,
           se.live::bigint, se.dead::bigint, coalesce(r.vac, 0)::bigint, coalesce(r.ana, 0)::bigint,
           coalesce(st.calls, 0)::bigint, coalesce(st.ms, 0),
           NULL::numeric, NULL::int, r.fl
    FROM keys
    LEFT JOIN r ON r.tenant IS NOT DISTINCT FROM keys.tenant AND r.module = keys.module
    LEFT JOIN st ON st.tenant IS NOT DISTINCT FROM keys.tenant AND st.module = keys.module
    LEFT JOIN sb ON sb.tenant IS NOT DISTINCT FROM keys.tenant AND sb.module = keys.module
    LEFT JOIN se ON se.tenant IS NOT DISTINCT FROM keys.tenant AND se.module = keys.module
    ORDER BY coalesce(st.ms, 0) DESC, coalesce(r.ins, 0) + coalesce(r.upd, 0) + coalesce(r.del, 0) DESC,
             keys.tenant COLLATE "C", keys.module COLLATE "C";
END
$$;

/*
 * What makes a window's numbers unreliable, one row per finding.
 */
CREATE FUNCTION folio_perf_window_flags(window_id bigint)
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

CREATE FUNCTION folio_perf_db_summary(window_id bigint)
RETURNS TABLE(label text, begin_at timestamptz, end_at timestamptz,
    duration interval, commits bigint, commits_per_s numeric, rollbacks bigint,
    cache_hit_ratio numeric, blks_read bigint, blks_hit bigint,
    tup_inserted bigint, tup_updated bigint, tup_deleted bigint,
    tup_returned bigint, tup_fetched bigint,
    temp_files bigint, temp_bytes bigint, deadlocks bigint, conflicts bigint,
    wal_records bigint, wal_bytes numeric, wal_bytes_per_s numeric,
    checkpoints_timed bigint, checkpoints_req bigint,
    buffers_checkpoint bigint, buffers_clean bigint, buffers_backend bigint,
    db_size_begin bigint, db_size_end bigint, max_connections int,
    statements_total_ms double precision, flags text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
    b folio_perf_data.snapshot;
    e folio_perf_data.snapshot;
    w folio_perf_data.window;
    fl text;
BEGIN
    wb := folio_perf_data.window_bounds(folio_perf_db_summary.window_id);
    SELECT * INTO b FROM folio_perf_data.snapshot s WHERE s.snap_id = wb.begin_snap;
    SELECT * INTO e FROM folio_perf_data.snapshot s WHERE s.snap_id = wb.end_snap;
    SELECT * INTO w FROM folio_perf_data.window x WHERE x.window_id = folio_perf_db_summary.window_id;
    SELECT string_agg(f.flag, ',' ORDER BY f.flag) INTO fl
    FROM @extschema@.folio_perf_window_flags(folio_perf_db_summary.window_id) f;
    RETURN QUERY SELECT
        w.label, b.taken_at, e.taken_at, e.taken_at - b.taken_at,
        e.xact_commit - b.xact_commit,
        round(((e.xact_commit - b.xact_commit) / wb.seconds)::numeric, 2),
        e.xact_rollback - b.xact_rollback,
        CASE WHEN (e.blks_hit - b.blks_hit) + (e.blks_read - b.blks_read) > 0
             THEN round(100.0 * (e.blks_hit - b.blks_hit)
                        / ((e.blks_hit - b.blks_hit) + (e.blks_read - b.blks_read)), 2) END,
        e.blks_read - b.blks_read, e.blks_hit - b.blks_hit,
        e.tup_inserted - b.tup_inserted, e.tup_updated - b.tup_updated,
        e.tup_deleted - b.tup_deleted, e.tup_returned - b.tup_returned,
        e.tup_fetched - b.tup_fetched,
        e.temp_files - b.temp_files, e.temp_bytes - b.temp_bytes,
        e.deadlocks - b.deadlocks, e.conflicts - b.conflicts,
        e.wal_records - b.wal_records, e.wal_bytes - b.wal_bytes,
        round(((e.wal_bytes - b.wal_bytes) / wb.seconds::numeric), 0),
        e.checkpoints_timed - b.checkpoints_timed, e.checkpoints_req - b.checkpoints_req,
        e.buffers_checkpoint - b.buffers_checkpoint, e.buffers_clean - b.buffers_clean,
        e.buffers_backend - b.buffers_backend,
        b.db_size_bytes, e.db_size_bytes, e.max_connections,
        (SELECT sum(x.total_exec_time)
         FROM folio_perf_data.stmt_delta(wb.begin_snap, wb.end_snap) x
         JOIN folio_perf_data.stmt_key k ON k.key_id = x.key_id
         WHERE k.toplevel AND NOT k.housekeeping),
        fl;
END
$$;



------------------------------------------------------------------------
-- 5. live views                                        (issue 3)
------------------------------------------------------------------------

-- pg_stat_statements of this database with tenant, module and evidence.
CREATE VIEW folio_perf_statements AS
WITH c AS (
    SELECT row_number() OVER () AS ord, s.*
    FROM folio_perf_data.pgss_current() s
), a AS (
    SELECT * FROM folio_perf_data.attribute_statements(
        (SELECT array_agg(c.queryid ORDER BY c.ord) FROM c),
        (SELECT array_agg(c.userid ORDER BY c.ord) FROM c),
        (SELECT array_agg(c.query ORDER BY c.ord) FROM c))
)
SELECT c.userid, r.rolname AS role, c.dbid, c.queryid, c.toplevel,
       a.tenant, a.module, a.attributed_by, a.housekeeping,
       c.calls, c.total_exec_time AS total_exec_ms,
       CASE WHEN c.calls > 0 THEN c.total_exec_time / c.calls END AS mean_exec_ms,
       c.rows, c.shared_blks_hit, c.shared_blks_read, c.temp_blks_written,
       c.wal_bytes,
       CASE WHEN folio_perf_data.may_see_text(c.userid) THEN c.query
            ELSE '<insufficient privilege>' END AS query
FROM c JOIN a ON a.ord = c.ord
LEFT JOIN pg_catalog.pg_roles r ON r.oid = c.userid;

-- Connections now, by tenant, module, role, application_name, state, wait.
CREATE VIEW folio_perf_activity AS
SELECT a.datname, a.usename AS role, a.application_name,
       coalesce(pr.tenant, pq.tenant) AS tenant,
       coalesce(pr.module, pq.module, folio_perf_appname_module(a.application_name)) AS module,
       CASE WHEN pr.module IS NOT NULL THEN 'role'
            WHEN pq.module IS NOT NULL THEN 'relations'
            WHEN folio_perf_appname_module(a.application_name) IS NOT NULL THEN 'application_name'
       END AS attributed_by,
       a.backend_type, a.state, a.wait_event_type, a.wait_event,
       count(*) AS connections,
       max(greatest(pg_catalog.now() - a.state_change, interval '0')) FILTER (WHERE a.state = 'active') AS longest_active,
       max(pg_catalog.now() - a.xact_start) AS longest_xact
FROM pg_catalog.pg_stat_activity a
LEFT JOIN LATERAL folio_perf_parse_schema(a.usename::text) pr ON true
LEFT JOIN LATERAL (
    SELECT p.tenant, p.module
    FROM folio_perf_query_relations() q
    JOIN pg_catalog.pg_namespace n ON n.oid = coalesce(q.target_nsp, q.nsps[1])
    CROSS JOIN LATERAL folio_perf_parse_schema(n.nspname::text) p
    WHERE q.queryid = a.query_id AND p.module IS NOT NULL
    LIMIT 1
) pq ON pr.module IS NULL AND a.query_id IS NOT NULL
GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9, 10;

-- Cumulative activity per tenant and module since the statistics were reset.
CREATE VIEW folio_perf_modules AS
SELECT p.tenant, p.module,
       count(*) FILTER (WHERE r.relkind <> 'i') AS tables,
       count(*) FILTER (WHERE r.relkind = 'i') AS indexes,
       sum(r.tuples_inserted) FILTER (WHERE r.relkind <> 'i') AS inserts,
       sum(r.tuples_updated) FILTER (WHERE r.relkind <> 'i') AS updates,
       sum(r.tuples_hot_updated) FILTER (WHERE r.relkind <> 'i') AS hot_updates,
       sum(r.tuples_deleted) FILTER (WHERE r.relkind <> 'i') AS deletes,
       sum(r.numscans) FILTER (WHERE r.relkind <> 'i') AS seq_scan,
       sum(r.tuples_returned) FILTER (WHERE r.relkind <> 'i') AS seq_tup_read,
       sum(r.numscans) FILTER (WHERE r.relkind = 'i') AS idx_scan,
       sum(r.tuples_fetched) AS idx_tup_fetch,
       sum(r.blocks_read + r.toast_blocks_read) AS blks_read,
       sum(r.blocks_hit + r.toast_blocks_hit) AS blks_hit,
       sum(r.live_tuples) FILTER (WHERE r.relkind <> 'i') AS live_tup,
       sum(r.dead_tuples) FILTER (WHERE r.relkind <> 'i') AS dead_tup,
       sum(r.vacuum_count + r.autovacuum_count) AS vacuum_count,
       sum(r.analyze_count + r.autoanalyze_count) AS analyze_count
FROM folio_perf_rel_stats() r
CROSS JOIN LATERAL folio_perf_parse_schema(r.nspname::text) p
WHERE p.module IS NOT NULL
GROUP BY p.tenant, p.module;



------------------------------------------------------------------------
-- 6. sampler storage and reports                       (issue 4)
------------------------------------------------------------------------



------------------------------------------------------------------------
-- 7. privileges and pg_dump                            (issue 7)
------------------------------------------------------------------------

