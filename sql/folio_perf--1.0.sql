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
    first_snap    bigint NOT NULL,
    UNIQUE (dbid, userid, queryid, toplevel, target_id)
);

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



------------------------------------------------------------------------
-- 4. reports over a window                             (issue 3, 5)
------------------------------------------------------------------------



------------------------------------------------------------------------
-- 5. live views                                        (issue 3)
------------------------------------------------------------------------



------------------------------------------------------------------------
-- 6. sampler storage and reports                       (issue 4)
------------------------------------------------------------------------



------------------------------------------------------------------------
-- 7. privileges and pg_dump                            (issue 7)
------------------------------------------------------------------------

