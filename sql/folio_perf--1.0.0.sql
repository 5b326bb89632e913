-- folio_perf install script.  The Makefile builds it from the files of
-- sql/parts in name order (000_header first, 150_privileges last): edit
-- those, not the built script.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION folio_perf" to load this file. \quit
/* sql/parts/010_c_functions.sql - declarations of the C functions: schema split, query parsing, relation statistics and sizes */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

CREATE FUNCTION folio_perf_parse_schema(name text,
    OUT tenant text, OUT module text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_parse_schema'
LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 1;

CREATE FUNCTION folio_perf_appname_module(application_name text)
RETURNS text
AS 'MODULE_PATHNAME', 'folio_perf_appname_module'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION folio_perf_query_schema(query text,
    OUT tenant text, OUT module text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_query_schema'
LANGUAGE C STABLE PARALLEL SAFE CALLED ON NULL INPUT ROWS 1;

CREATE FUNCTION folio_perf_query_relnames(query text)
RETURNS text[]
AS 'MODULE_PATHNAME', 'folio_perf_query_relnames'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

-- Tenant, module and the evidence that decided, by the one precedence
-- (relations > role > qualified > relation_name > application_name) of
-- src/attribution.c; queryid's relations from this database's store.
CREATE FUNCTION folio_perf_attribute(role text, query text DEFAULT NULL,
    application_name text DEFAULT NULL, queryid bigint DEFAULT NULL,
    OUT tenant text, OUT module text, OUT attributed_by text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_attribute'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT ROWS 1;

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

-- The same pass, returning only what changed since the state given (the
-- capture passes rel_last): status 'n' new, 'c' changed, 'd' dropped (only
-- relid set).  ROWS 100: usually a few hundred rows come back, which the
-- capture joins to rel_last by index rather than hashing all of rel_last.
CREATE FUNCTION folio_perf_rel_changes(
    last_relid oid[], last_sig bigint[], last_relfilenode oid[],
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
    OUT sig bigint, OUT status "char")
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_rel_changes'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL RESTRICTED ROWS 100;

-- pg_table_size (tables) or every fork of an index, without leaving a
-- relation cache entry behind (src/relsize.c)
CREATE FUNCTION folio_perf_relation_size(relid oid)
RETURNS bigint
AS 'MODULE_PATHNAME', 'folio_perf_relation_size'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION folio_perf_relations_reset()
RETURNS bigint
AS 'MODULE_PATHNAME', 'folio_perf_relations_reset'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

-- The relation store's size and counters (shared memory, fixed size).
CREATE FUNCTION folio_perf_relations_status(
    OUT preloaded boolean, OUT track_relations boolean, OUT max_queries int,
    OUT entries bigint, OUT entries_this_db bigint, OUT recorded bigint,
    OUT dropped bigint, OUT shmem_bytes bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'folio_perf_relations_status'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE VIEW folio_perf_relations_status AS
    SELECT * FROM folio_perf_relations_status();
/* sql/parts/020_storage.sql - storage: schema folio_perf_data and every table (snapshots, statements, relations, plans, samples, windows, targets) */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

------------------------------------------------------------------------
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

-- Remote targets (060_targets.sql): servers collected from over libpq.
-- conninfo is the connection string without its secrets (password,
-- sslpassword), which are in target_secret.  restricted: added by a role
-- that is not a superuser, so every connection follows the rules for
-- non-superusers (src/remote_conn.c).  Only the extension's owner reads
-- conninfo (150_privileges.sql); folio_perf_targets shows it.  A dropped
-- target keeps its row (its snapshots refer to it) without its
-- connection string.
CREATE TABLE folio_perf_data.target (
    target_id   int GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    name        text NOT NULL,
    conninfo    text,
    restricted  boolean NOT NULL DEFAULT true,
    enabled     boolean NOT NULL DEFAULT true,   -- sampled by the sampler
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    dropped_at  timestamptz,
    CHECK ((conninfo IS NULL) = (dropped_at IS NOT NULL))
);
CREATE UNIQUE INDEX target_name ON folio_perf_data.target (name) WHERE dropped_at IS NULL;

-- The targets' passwords: readable by the extension's owner only and, unlike
-- every other table here, not in pg_dump's output (150_privileges.sql).
CREATE TABLE folio_perf_data.target_secret (
    target_id   int PRIMARY KEY REFERENCES folio_perf_data.target ON DELETE CASCADE,
    password    text,
    sslpassword text
);

-- The sampler's view of each enabled target, written at every flush
-- (src/rsampler.c); the running worker's state, not in dumps.
CREATE TABLE folio_perf_data.target_status (
    target_id       int PRIMARY KEY REFERENCES folio_perf_data.target,
    state           text NOT NULL,      -- sampling, connecting, down
    last_sample_at  timestamptz,
    ticks           bigint NOT NULL,    -- answers taken since the worker started
    ticks_missed    bigint NOT NULL,    -- ticks skipped: the previous answer was late
    ticks_dropped   bigint NOT NULL,    -- answers lost: flushes kept failing
    connects        bigint NOT NULL,
    failures        bigint NOT NULL,
    last_error      text,
    last_error_at   timestamptz,
    next_attempt_at timestamptz,        -- when down: the next connection attempt
    updated_at      timestamptz NOT NULL
);

CREATE TABLE folio_perf_data.snapshot (
    snap_id             bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    taken_at            timestamptz NOT NULL DEFAULT clock_timestamp(),
    label               text,
    kind                text NOT NULL DEFAULT 'manual'
                        CHECK (kind IN ('manual', 'begin', 'end', 'timed')),
    dbid                oid NOT NULL,
    datname             name NOT NULL,
    target_id           int REFERENCES folio_perf_data.target,
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
    rel_bytes           bigint,         -- bytes of the user tables (with TOAST) and indexes
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
    text_id   bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    text_md5  uuid NOT NULL UNIQUE,
    query     text NOT NULL
);

-- One row per pg_stat_statements entry ever seen, with its attribution.
CREATE TABLE folio_perf_data.stmt_key (
    key_id        bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
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
    -- pg_stat_statements' stddev_exec_time: the population standard
    -- deviation of all calls so far (a window's own is derived from two
    -- snapshots, see stmt_delta_compute)
    stddev_exec_time    double precision,
    -- counted by pg_stat_statements from PostgreSQL 18; NULL before
    wal_buffers_full    bigint,
    parallel_workers_to_launch bigint,
    parallel_workers_launched  bigint,
    PRIMARY KEY (key_id, snap_id)
);
CREATE INDEX ON folio_perf_data.stmt (snap_id);

-- Current state of every statement (per database), for change detection;
-- fillfactor as rel_last's.
CREATE TABLE folio_perf_data.stmt_last (
    key_id     bigint PRIMARY KEY REFERENCES folio_perf_data.stmt_key,
    dbid       oid NOT NULL,
    target_id  int,
    calls      bigint NOT NULL,
    total_exec_time double precision NOT NULL,
    rows       bigint NOT NULL,
    last_snap  bigint NOT NULL
) WITH (fillfactor = 45);
CREATE INDEX ON folio_perf_data.stmt_last (dbid, coalesce(target_id, 0));

-- One row per user table or index ever seen.
CREATE TABLE folio_perf_data.rel_key (
    rel_key_id  bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
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
CREATE INDEX ON folio_perf_data.rel_key (dbid, nspname, relname);
CREATE INDEX ON folio_perf_data.rel_key (dbid, nspname, table_relname);

-- Counters and size of a relation at a snapshot where they changed: the
-- largest table (one row per changed relation; 100,000 in a snapshot in
-- which every relation of a 40-tenant FOLIO database changed).  Kept lean:
-- an index's row leaves the table-only counters NULL (24 bytes instead of
-- 120), snap_id has a BRIN index (rows arrive in snapshot order), and the
-- references to snapshot and rel_key are kept by capture() and
-- folio_perf_purge() rather than checked per row by foreign keys (a
-- third of the time of such a snapshot's INSERT).
CREATE TABLE folio_perf_data.rel (
    snap_id          bigint NOT NULL,   -- folio_perf_data.snapshot
    rel_key_id       bigint NOT NULL,   -- folio_perf_data.rel_key
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
CREATE INDEX ON folio_perf_data.rel USING brin (snap_id);

-- rel's rows go with their snapshot, as the other tables' by ON DELETE CASCADE
CREATE FUNCTION folio_perf_data.rel_on_snapshot_delete()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM folio_perf_data.rel x WHERE x.snap_id = OLD.snap_id;
    RETURN OLD;
END
$$;
CREATE TRIGGER rel_on_snapshot_delete BEFORE DELETE ON folio_perf_data.snapshot
    FOR EACH ROW EXECUTE FUNCTION folio_perf_data.rel_on_snapshot_delete();

-- Updated in place for every changed relation.  At fillfactor 45 a page has
-- room for a new version of every row on it, so that even a snapshot in
-- which every relation changed updates HOT (no new index entries, no new
-- pages); at 70 half the updates of such a snapshot went elsewhere (10
-- tenants: 7-13 MB written instead of 5.6 MB).
CREATE TABLE folio_perf_data.rel_last (
    rel_key_id  bigint PRIMARY KEY REFERENCES folio_perf_data.rel_key,
    dbid        oid NOT NULL,
    target_id   int,
    relid       oid NOT NULL,
    relfilenode oid NOT NULL,
    sig         bigint NOT NULL,   -- sum of the counters: changes when any moves
    wsig        bigint,            -- rows inserted+updated+deleted+vacuums: the size may have changed
    size_bytes  bigint,
    live_tup    bigint,
    dead_tup    bigint,
    last_snap   bigint NOT NULL
) WITH (fillfactor = 45);
CREATE UNIQUE INDEX rel_last_ident ON folio_perf_data.rel_last
    (dbid, relid, coalesce(target_id, 0));

-- Per-schema roll-up (sizes, tuples, relation counts) at a snapshot where
-- any relation of the schema changed.
CREATE TABLE folio_perf_data.schema_stat (
    snap_id     bigint NOT NULL REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    dbid        oid NOT NULL,
    target_id   int,
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
    window_id   bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
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
--
-- With folio_perf preloaded, an executor hook (src/plans.c) keeps in
-- shared memory, per statement (the pg_stat_statements key), the plan of
-- its slowest execution at or above folio_perf.plan_min_duration since the
-- last snapshot, with the shapes (fingerprints) of every plan seen.  Each
-- snapshot moves them into storage: plan holds every distinct plan once
-- (text, JSON and a one-line outline), stmt_plan says which statement ran
-- it in the interval that ends at the snapshot.  A window's plans are the
-- rows of the snapshots after its begin up to its end; a plan "changed"
-- when more than one shape was seen.  Plans show constants and parameter
-- values, so their text is shown like query texts: a role's own
-- statements, everyone's to members of pg_read_all_stats.
------------------------------------------------------------------------

CREATE TABLE folio_perf_data.plan (
    plan_id     bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    plan_md5    uuid NOT NULL UNIQUE,   -- of text and JSON: each plan stored once
    fingerprint bigint NOT NULL,        -- shape: node types, strategies, relation and index names
    analyzed    boolean NOT NULL,       -- has actual rows and timing
    truncated   boolean NOT NULL,       -- larger than folio_perf.plan_max_bytes: no JSON, text maybe cut
    outline     text,                   -- the plan nodes on one line
    plan_text   text NOT NULL,
    plan_json   jsonb
);
CREATE INDEX ON folio_perf_data.plan (fingerprint);

-- The slowest plan of a statement in the interval ending at snap_id.
CREATE TABLE folio_perf_data.stmt_plan (
    snap_id     bigint NOT NULL REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    dbid        oid NOT NULL,
    userid      oid NOT NULL,
    queryid     bigint NOT NULL,
    toplevel    boolean NOT NULL,
    plan_id     bigint NOT NULL REFERENCES folio_perf_data.plan,
    fingerprint bigint NOT NULL,
    duration_ms double precision NOT NULL,    -- of the slowest execution
    captured_at timestamptz NOT NULL,         -- when it ended
    shapes      bigint[] NOT NULL,            -- fingerprints of every plan seen (up to 8)
    slow_calls  bigint NOT NULL,              -- executions at or above plan_min_duration
    PRIMARY KEY (snap_id, dbid, userid, queryid, toplevel)
);
CREATE INDEX ON folio_perf_data.stmt_plan (dbid, queryid);
CREATE INDEX ON folio_perf_data.stmt_plan (plan_id);



-- The sampler (src/sampler.c, src/worker.c) keeps samples of every
-- backend's state in shared memory and, every folio_perf.flush_interval
-- and whenever a snapshot is taken, writes one row to sample_interval per
-- flush.  A row holds per-tick totals and, for every series (kind +
-- dimension + key, named once in sample_series), the histogram of the
-- series' per-tick values as parallel arrays: series id, value, number of
-- ticks with that value.  Ticks without an entry count as 0.  Merging the
-- histograms of the intervals inside a window gives exact averages, maxima
-- and percentiles.  An interval belongs to the window in which its last
-- tick (ended_at) falls; snapshots flush first, so intervals never straddle
-- a snapshot.

CREATE TABLE folio_perf_data.sample_series (
    series_id     int GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    kind          text NOT NULL CHECK (kind IN ('connections', 'load', 'cpu')),
    dimension     text NOT NULL,
    key           text NOT NULL,   -- '' = not attributed
    dbid          oid,             -- statement series: the statement's
    userid        oid,             --   pg_stat_statements key
    queryid       bigint,
    target_id     int,             --   (and remote target)
    tenant        text,
    module        text,
    attributed_by text,
    first_seen    timestamptz NOT NULL DEFAULT clock_timestamp(),
    UNIQUE (kind, dimension, key)
);

CREATE TABLE folio_perf_data.sample_interval (
    interval_id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    started_at         timestamptz NOT NULL,    -- first tick
    ended_at           timestamptz NOT NULL,    -- last tick
    flushed_at         timestamptz NOT NULL DEFAULT clock_timestamp(),
    cut                text NOT NULL,           -- timer, request, snapshot, buffer, config, shutdown
    sample_interval_ms int NOT NULL,
    n_ticks            int NOT NULL,
    ticks_dropped      int NOT NULL DEFAULT 0,  -- lost before this interval (ring overflow)
    tick_ms            int[] NOT NULL,          -- tick i at started_at + tick_ms[i] ms
    tick_connections   int[] NOT NULL,          -- client backends at tick i
    tick_active        int[] NOT NULL,          -- active sessions at tick i
    host_ncpu          int,                     -- NULL: CPU unavailable
    host_busy_ms       bigint,
    host_total_ms      bigint,
    cpu_ticks          int NOT NULL DEFAULT 0,  -- ticks with CPU figures
    c_series           int[] NOT NULL,          -- connections histograms
    c_value            int[] NOT NULL,
    c_freq             int[] NOT NULL,
    l_series           int[] NOT NULL,          -- load (active sessions) histograms
    l_value            int[] NOT NULL,
    l_freq             int[] NOT NULL,
    u_series           int[],                   -- CPU ms per series
    u_ms               int[],
    target_id          int                      -- remote target; NULL: this server
);
CREATE INDEX ON folio_perf_data.sample_interval (ended_at);
/* sql/parts/025_own.sql - what folio_perf itself runs: the query ids the backend recorded (src/own.c) */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

-- Did folio_perf itself run this query id (its functions' statements, the
-- statement that called one, the sampler's worker) since the server
-- started?  Needs the library preloaded (src/own.c); false otherwise.
CREATE FUNCTION folio_perf_data.own_queryid(queryid bigint)
RETURNS boolean
AS 'MODULE_PATHNAME', 'folio_perf_own_queryid'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

CREATE FUNCTION folio_perf_data.own_status(OUT recorded bigint, OUT dropped bigint,
    OUT capacity int)
RETURNS record
AS 'MODULE_PATHNAME', 'folio_perf_own_status'
LANGUAGE C VOLATILE PARALLEL SAFE;
/* sql/parts/030_attribution.sql - attribution helpers: housekeeping, a target's catalog, statement attribution */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

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
 * What attribution needs from a remote target's catalogs, in one round
 * trip: k = 'r' the names of roles (oid, name), k = 'n' the schemas of the
 * relations and functions of the names given (name, nspname).  No rows for
 * this server (p_target NULL).
 */
CREATE FUNCTION folio_perf_data.remote_catalog(p_target int, p_userids oid[], p_names text[])
RETURNS TABLE(k text, oid oid, name text, nspname text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_target IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    SELECT * FROM folio_perf_data.remote_query(p_target,
        'SELECT ''r''::text AS k, r.oid, r.rolname::text AS name, NULL::text AS nspname
         FROM pg_catalog.pg_roles r WHERE r.oid = ANY ($1::oid[])
         UNION ALL
         SELECT ''n'', NULL, c.relname::text, ns.nspname::text
         FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace
         WHERE c.relname = ANY ($2::name[]) AND c.relkind IN (''r'', ''p'', ''v'', ''m'', ''f'')
         UNION ALL
         SELECT ''n'', NULL, f.proname::text, ns.nspname::text
         FROM pg_catalog.pg_proc f JOIN pg_catalog.pg_namespace ns ON ns.oid = f.pronamespace
         WHERE f.proname = ANY ($2::name[])',
        ARRAY[coalesce(p_userids, '{}')::text, coalesce(p_names, '{}')::text])
    AS c(k text, oid oid, name text, nspname text);
END
$$;

-- The same for many statements: of this database (p_remote false), or of a
-- remote target (no relations evidence; where its objects of a name live
-- given as parallel arrays of name and schema).
CREATE FUNCTION folio_perf_data.attribute(p_queryid bigint[], p_rolname text[],
    p_query text[], p_remote boolean, p_catalog_names text[], p_catalog_schemas text[],
    OUT ord bigint, OUT tenant text, OUT module text, OUT attributed_by text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_attribute_many'
LANGUAGE C VOLATILE PARALLEL SAFE CALLED ON NULL INPUT;


/*
 * Attribution of statements: for each (queryid, userid, query) the tenant
 * and module and the evidence that decided, by folio_perf_data.attribute()
 * (the one precedence, in C: relations > role > qualified > relation_name);
 * also the role's name.  Statements that use folio_perf's storage schema
 * are folio_perf's own (module folio_perf, housekeeping).  For a remote
 * target (p_target) the roles and the schemas of the relations and
 * functions named in the texts come from the target's catalogs, in one
 * round trip; attribution by relations needs the parse hook and is not
 * available there.
 */
CREATE FUNCTION folio_perf_data.attribute_statements(
    p_queryid bigint[], p_userid oid[], p_query text[], p_target int DEFAULT NULL)
RETURNS TABLE(ord bigint, tenant text, module text, attributed_by text,
              housekeeping boolean, rolname name)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
WITH s AS (
    SELECT x.ord, x.q, x.u, x.t
    FROM unnest(p_queryid, p_userid, p_query) WITH ORDINALITY AS x(q, u, t, ord)
),
own AS (
    SELECT DISTINCT s.ord
    FROM s JOIN @extschema@.folio_perf_query_relations() rel ON rel.queryid = s.q
    JOIN pg_catalog.pg_namespace ns ON ns.oid = ANY (rel.nsps)
    WHERE p_target IS NULL AND ns.nspname = 'folio_perf_data'
),
-- the target's catalogs: k = 'r' role (oid, name), k = 'n' schema of a
-- relation or function named in a text
remote AS MATERIALIZED (
    SELECT c.k, c.oid, c.name, c.nspname
    FROM folio_perf_data.remote_catalog(p_target,
        CASE WHEN p_target IS NOT NULL
             THEN (SELECT pg_catalog.array_agg(DISTINCT s.u) FROM s) END,
        CASE WHEN p_target IS NOT NULL
             THEN (SELECT pg_catalog.array_agg(DISTINCT n.name)
                   FROM s, pg_catalog.unnest(@extschema@.folio_perf_query_relnames(s.t)) n(name))
        END) c
    WHERE p_target IS NOT NULL
),
cat AS (
    SELECT pg_catalog.array_agg(remote.name ORDER BY remote.name, remote.nspname) AS names,
           pg_catalog.array_agg(remote.nspname ORDER BY remote.name, remote.nspname) AS nsps
    FROM remote WHERE remote.k = 'n'
),
roles AS (
    SELECT r.oid AS userid, r.rolname
    FROM pg_catalog.pg_roles r
    WHERE p_target IS NULL AND r.oid IN (SELECT s.u FROM s)
    UNION ALL
    SELECT remote.oid, remote.name::name FROM remote WHERE remote.k = 'r'
),
a AS (
    SELECT * FROM folio_perf_data.attribute(
        (SELECT pg_catalog.array_agg(s.q ORDER BY s.ord) FROM s),
        (SELECT pg_catalog.array_agg(rr.rolname::text ORDER BY s.ord)
           FROM s LEFT JOIN roles rr ON rr.userid = s.u),
        (SELECT pg_catalog.array_agg(s.t ORDER BY s.ord) FROM s),
        p_target IS NOT NULL,
        (SELECT cat.names FROM cat),
        (SELECT cat.nsps FROM cat))
)
SELECT s.ord,
       CASE WHEN own.ord IS NULL THEN a.tenant END,
       CASE WHEN own.ord IS NOT NULL THEN 'folio_perf' ELSE a.module END,
       CASE WHEN own.ord IS NOT NULL THEN 'relations' ELSE a.attributed_by END,
       (own.ord IS NOT NULL OR folio_perf_data.is_housekeeping(s.t)
        -- run by folio_perf itself (src/own.c): on this server only
        OR (p_target IS NULL AND folio_perf_data.own_queryid(s.q))),
       rr.rolname
FROM s
JOIN a ON a.ord = s.ord
LEFT JOIN roles rr ON rr.userid = s.u
LEFT JOIN own ON own.ord = s.ord
$$;
/* sql/parts/040_sources.sql - sources of a capture: pg_stat_statements, activity, relation changes, this server or a remote target */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

-- pg_stat_statements' columns as folio_perf reads them, on every server
-- version: the one row type of the local and the remote source, and the
-- one mapping from a server version's pg_stat_statements to it
-- (pgss_select_list), so that each column means the same everywhere:
--   toplevel          13 has none (no nested statements told apart): true
--   blk_read_time,    the time reading (writing) data file blocks; 17 split
--   blk_write_time    them into shared_ and local_blk_*_time: their sum
--   wal_buffers_full, 18 and later; NULL before (pg_stat_statements does
--   parallel_workers_ not count them there)
--   to_launch, _launched
CREATE TYPE folio_perf_data.pgss_row AS (
    userid oid, dbid oid, queryid bigint, toplevel boolean,
    query text, calls bigint, total_exec_time double precision,
    total_plan_time double precision, plans bigint, rows bigint,
    shared_blks_hit bigint, shared_blks_read bigint,
    shared_blks_dirtied bigint, shared_blks_written bigint,
    local_blks_hit bigint, local_blks_read bigint,
    temp_blks_read bigint, temp_blks_written bigint,
    blk_read_time double precision, blk_write_time double precision,
    wal_records bigint, wal_fpi bigint, wal_bytes numeric,
    stddev_exec_time double precision,
    wal_buffers_full bigint, parallel_workers_to_launch bigint,
    parallel_workers_launched bigint);

-- The select list over pg_stat_statements (as "s") of a server with
-- server_version_num v, giving pgss_row's columns in order.  remote: the
-- statements of a remote target (the same mapping today).
CREATE FUNCTION folio_perf_data.pgss_select_list(v int, remote boolean DEFAULT false)
RETURNS text
LANGUAGE sql IMMUTABLE STRICT
SET search_path = pg_catalog, pg_temp
AS $$
SELECT pg_catalog.string_agg(pg_catalog.format('%s AS %I', m.expr, a.attname), ', '
                             ORDER BY a.attnum)
FROM pg_catalog.pg_attribute a
LEFT JOIN (VALUES
    ('toplevel', CASE WHEN v >= 140000 THEN 's.toplevel' ELSE 'true' END),
    ('blk_read_time', CASE WHEN v >= 170000
        THEN 's.shared_blk_read_time + s.local_blk_read_time' ELSE 's.blk_read_time' END),
    ('blk_write_time', CASE WHEN v >= 170000
        THEN 's.shared_blk_write_time + s.local_blk_write_time' ELSE 's.blk_write_time' END),
    ('wal_buffers_full', CASE WHEN v >= 180000 THEN 's.wal_buffers_full' ELSE 'NULL::bigint' END),
    ('parallel_workers_to_launch', CASE WHEN v >= 180000
        THEN 's.parallel_workers_to_launch' ELSE 'NULL::bigint' END),
    ('parallel_workers_launched', CASE WHEN v >= 180000
        THEN 's.parallel_workers_launched' ELSE 'NULL::bigint' END)
  ) AS x(col, e) ON x.col = a.attname
CROSS JOIN LATERAL (SELECT coalesce(x.e, 's.' || pg_catalog.quote_ident(a.attname)) AS expr) m
WHERE a.attrelid = 'folio_perf_data.pgss_row'::pg_catalog.regclass
  AND a.attnum > 0 AND NOT a.attisdropped
$$;

-- pgss_row's columns, in order.
CREATE FUNCTION folio_perf_data.pgss_row_columns()
RETURNS TABLE(attnum int, attname name, type text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT a.attnum::int, a.attname, pg_catalog.format_type(a.atttypid, a.atttypmod)
FROM pg_catalog.pg_attribute a
WHERE a.attrelid = 'folio_perf_data.pgss_row'::pg_catalog.regclass
  AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
$$;

-- pgss_row as a column definition list (for remote_query).
CREATE FUNCTION folio_perf_data.pgss_coldef()
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT pg_catalog.string_agg(pg_catalog.format('%I %s', a.attname,
                             pg_catalog.format_type(a.atttypid, a.atttypmod)), ', '
                             ORDER BY a.attnum)
FROM pg_catalog.pg_attribute a
WHERE a.attrelid = 'folio_perf_data.pgss_row'::pg_catalog.regclass
  AND a.attnum > 0 AND NOT a.attisdropped
$$;

-- The current pg_stat_statements entries of this database.  showtext =
-- false leaves query NULL and does not read pg_stat_statements' text file
-- (a few MB for 5,000 entries): the capture reads texts only for new
-- statements.
CREATE FUNCTION folio_perf_data.pgss_current(showtext boolean DEFAULT true)
RETURNS SETOF folio_perf_data.pgss_row
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
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
        'SELECT %s
         FROM %I.pg_stat_statements($1) s
         WHERE s.dbid = (SELECT d.oid FROM pg_catalog.pg_database d
                         WHERE d.datname = pg_catalog.current_database())
           AND s.queryid IS NOT NULL',
        folio_perf_data.pgss_select_list(current_setting('server_version_num')::int),
        pgss::name) USING coalesce(showtext, true);
END
$$;

------------------------------------------------------------------------
-- 3a. sources of a capture: this server, or a remote target over libpq
--
-- capture() reads every figure through the functions below; with
-- p_target NULL they read this server, otherwise they run read-only queries
-- on the target (folio_perf_data.remote_query, src/remote.c), all over the
-- one connection the transaction keeps to it.  What they return has the
-- same shape either way, so that comparing with the previous state and
-- storing is shared.
------------------------------------------------------------------------

-- Rows of one query on a remote target (text parameters $1..$n); columns
-- are taken by name from the caller's column definition list.
CREATE FUNCTION folio_perf_data.remote_query(target_id int, sql text, params text[] DEFAULT NULL)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_remote_query'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE;

-- The target's server_version_num (from the connection, no round trip).
CREATE FUNCTION folio_perf_data.remote_version(target_id int)
RETURNS int
AS 'MODULE_PATHNAME', 'folio_perf_remote_version'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

-- Connect with a connection string and say what folio_perf_target_add
-- checks.  Not SECURITY DEFINER: the caller's rules apply (a non-superuser
-- gets the rules for restricted targets).
CREATE FUNCTION folio_perf_data.remote_check(conninfo text, name text,
    OUT datname text, OUT rolname text, OUT server_version_num int,
    OUT in_recovery boolean, OUT pgss_schema text, OUT read_all_stats boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'folio_perf_remote_check'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

-- Store a new target, restricted unless the caller is a superuser; the
-- password apart in target_secret.  Not SECURITY DEFINER (it must know the
-- caller): it writes as the tables' owner itself.  Returns the id.
CREATE FUNCTION folio_perf_data.target_store(name text, conninfo text)
RETURNS int
AS 'MODULE_PATHNAME', 'folio_perf_target_store'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp;

-- A connection string without its password, NULL if it does not parse.
CREATE FUNCTION folio_perf_data.conninfo_redact(conninfo text)
RETURNS text
AS 'MODULE_PATHNAME', 'folio_perf_conninfo_redact'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

/*
 * pg_stat_statements entries of the database (pgss_current's columns).
 * Remote: only the entries of p_queryids when given (texts of new
 * statements), whatever the target's version (13 and later).
 */
CREATE FUNCTION folio_perf_data.src_pgss(p_target int, showtext boolean,
    p_queryids bigint[] DEFAULT NULL)
RETURNS SETOF folio_perf_data.pgss_row
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_target IS NULL THEN
        RETURN QUERY SELECT * FROM folio_perf_data.pgss_current(showtext);
        RETURN;
    END IF;
    RETURN QUERY EXECUTE format(
        'SELECT * FROM folio_perf_data.remote_query($1, $2, $3) AS r(%s)',
        folio_perf_data.pgss_coldef())
    USING p_target,
        format(
        'SELECT %s
         FROM pg_stat_statements($1::boolean) s
         WHERE s.dbid = (SELECT d.oid FROM pg_catalog.pg_database d
                         WHERE d.datname = pg_catalog.current_database())
           AND s.queryid IS NOT NULL
           AND ($2::bigint[] IS NULL OR s.queryid = ANY ($2::bigint[]))',
        folio_perf_data.pgss_select_list(folio_perf_data.remote_version(p_target), true)),
        ARRAY[coalesce(showtext, true)::text, p_queryids::text];
END
$$;

/*
 * Connections now, grouped (all databases).  A remote target's count
 * leaves out folio_perf's own connections (this one, the sampler's).
 */
CREATE FUNCTION folio_perf_data.src_activity(p_target int)
RETURNS TABLE(datname name, usename name, application_name text, state text,
    wait_event_type text, backend_type text, connections int)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_target IS NULL THEN
        RETURN QUERY
        SELECT a.datname, a.usename, a.application_name, a.state,
               a.wait_event_type, a.backend_type, count(*)::int
        FROM pg_catalog.pg_stat_activity a
        GROUP BY 1, 2, 3, 4, 5, 6;
        RETURN;
    END IF;
    RETURN QUERY
    SELECT * FROM folio_perf_data.remote_query(p_target,
        'SELECT a.datname, a.usename, a.application_name, a.state,
                a.wait_event_type, a.backend_type, count(*)::int AS connections
         FROM pg_catalog.pg_stat_activity a
         WHERE a.pid <> pg_catalog.pg_backend_pid()
           AND a.query NOT LIKE ''/* folio_perf_remote */%''
           AND a.application_name NOT IN (''folio_perf'', ''folio_perf sampler'')
         GROUP BY 1, 2, 3, 4, 5, 6')
    AS r(datname name, usename name, application_name text, state text,
         wait_event_type text, backend_type text, connections int);
END
$$;

/*
 * What changed among the relations since the state given (rel_last):
 * folio_perf_rel_changes() here, or the same computed on the target with
 * its pg_stat_get_*() functions, which give the same figures as
 * src/relstats.c (a table's TOAST blocks folded in, live and dead tuples
 * weighed into the signature).  Only new, changed and dropped relations
 * travel.  table_relname: an index's table.
 */
CREATE FUNCTION folio_perf_data.src_rel_changes(p_target int,
    last_relid oid[], last_sig bigint[], last_relfilenode oid[])
RETURNS TABLE(relid oid, relfilenode oid, relkind "char", nspname name,
    relname name, table_relid oid,
    numscans bigint, tuples_returned bigint, tuples_fetched bigint,
    tuples_inserted bigint, tuples_updated bigint,
    tuples_deleted bigint, tuples_hot_updated bigint,
    live_tuples bigint, dead_tuples bigint,
    vacuum_count bigint, autovacuum_count bigint,
    analyze_count bigint, autoanalyze_count bigint,
    blocks_read bigint, blocks_hit bigint,
    toast_blocks_read bigint, toast_blocks_hit bigint,
    sig bigint, status "char", table_relname name)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF p_target IS NULL THEN
        RETURN QUERY
        SELECT r.*, t.relname
        FROM @extschema@.folio_perf_rel_changes(last_relid, last_sig, last_relfilenode) r
        LEFT JOIN pg_catalog.pg_class t ON t.oid = r.table_relid;
        RETURN;
    END IF;
    RETURN QUERY
    SELECT * FROM folio_perf_data.remote_query(p_target, $q$
WITH last AS (
    SELECT * FROM unnest($1::oid[], $2::bigint[], $3::oid[]) AS l(relid, sig, rfn)
), cur AS (
    SELECT c.oid AS relid, c.relfilenode, c.relkind, n.nspname, c.relname,
           i.indrelid AS table_relid, t.relname AS table_relname,
           pg_stat_get_numscans(c.oid) AS c0,
           pg_stat_get_tuples_returned(c.oid) AS c1,
           pg_stat_get_tuples_fetched(c.oid) AS c2,
           pg_stat_get_tuples_inserted(c.oid) AS c3,
           pg_stat_get_tuples_updated(c.oid) AS c4,
           pg_stat_get_tuples_deleted(c.oid) AS c5,
           pg_stat_get_tuples_hot_updated(c.oid) AS c6,
           pg_stat_get_live_tuples(c.oid) AS c7,
           pg_stat_get_dead_tuples(c.oid) AS c8,
           pg_stat_get_vacuum_count(c.oid) AS c9,
           pg_stat_get_autovacuum_count(c.oid) AS c10,
           pg_stat_get_analyze_count(c.oid) AS c11,
           pg_stat_get_autoanalyze_count(c.oid) AS c12,
           pg_stat_get_blocks_fetched(c.oid) - pg_stat_get_blocks_hit(c.oid) AS c13,
           pg_stat_get_blocks_hit(c.oid) AS c14,
           CASE WHEN c.relkind <> 'i' AND c.reltoastrelid <> 0
                THEN pg_stat_get_blocks_fetched(c.reltoastrelid) - pg_stat_get_blocks_hit(c.reltoastrelid)
                ELSE 0 END AS c15,
           CASE WHEN c.relkind <> 'i' AND c.reltoastrelid <> 0
                THEN pg_stat_get_blocks_hit(c.reltoastrelid) ELSE 0 END AS c16
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    LEFT JOIN pg_index i ON c.relkind = 'i' AND i.indexrelid = c.oid
    LEFT JOIN pg_class t ON t.oid = i.indrelid
    WHERE c.relkind IN ('r', 'm', 'i') AND c.relpersistence <> 't'
      AND n.nspname NOT IN ('pg_catalog', 'pg_toast', 'information_schema', 'folio_perf_data')
      AND n.nspname !~ '^pg_(toast_)?temp_'
), s AS (
    SELECT cur.*,
           ((c0::numeric + c1 + c2 + c3 + c4 + c5 + c6 + c9 + c10 + c11 + c12
             + c13 + c14 + c15 + c16 + 3 * c7 + 7 * c8)
            % 9223372036854775807)::bigint AS sig
    FROM cur
)
SELECT s.relid, s.relfilenode, s.relkind, s.nspname, s.relname, s.table_relid,
       s.c0 AS numscans, s.c1 AS tuples_returned, s.c2 AS tuples_fetched,
       s.c3 AS tuples_inserted, s.c4 AS tuples_updated, s.c5 AS tuples_deleted,
       s.c6 AS tuples_hot_updated, s.c7 AS live_tuples, s.c8 AS dead_tuples,
       s.c9 AS vacuum_count, s.c10 AS autovacuum_count, s.c11 AS analyze_count,
       s.c12 AS autoanalyze_count, s.c13 AS blocks_read, s.c14 AS blocks_hit,
       s.c15 AS toast_blocks_read, s.c16 AS toast_blocks_hit, s.sig,
       CASE WHEN l.relid IS NULL THEN 'n' ELSE 'c' END AS status, s.table_relname
FROM s LEFT JOIN last l ON l.relid = s.relid
WHERE l.relid IS NULL OR l.sig <> s.sig OR l.rfn <> s.relfilenode
UNION ALL
SELECT l.relid, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'd', NULL
FROM last l WHERE NOT EXISTS (SELECT 1 FROM cur WHERE cur.relid = l.relid)
$q$, ARRAY[coalesce(last_relid, '{}')::text, coalesce(last_sig, '{}')::text,
           coalesce(last_relfilenode, '{}')::text])
    AS r(relid oid, relfilenode oid, relkind "char", nspname name,
         relname name, table_relid oid,
         numscans bigint, tuples_returned bigint, tuples_fetched bigint,
         tuples_inserted bigint, tuples_updated bigint,
         tuples_deleted bigint, tuples_hot_updated bigint,
         live_tuples bigint, dead_tuples bigint,
         vacuum_count bigint, autovacuum_count bigint,
         analyze_count bigint, autoanalyze_count bigint,
         blocks_read bigint, blocks_hit bigint,
         toast_blocks_read bigint, toast_blocks_hit bigint,
         sig bigint, status "char", table_relname name);
END
$$;

/*
 * Sizes of relations on a remote target (tables: heap and TOAST; indexes:
 * the index), in one round trip for the relations whose size can have
 * changed.  NULL for a relation dropped meanwhile.
 */
CREATE FUNCTION folio_perf_data.src_remote_sizes(p_target int, p_relids oid[])
RETURNS TABLE(relid oid, size_bytes bigint)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT * FROM folio_perf_data.remote_query(p_target,
        'SELECT x.relid, CASE WHEN c.relkind = ''i'' THEN pg_catalog.pg_relation_size(c.oid)
                              ELSE pg_catalog.pg_table_size(c.oid) END AS size_bytes
         FROM unnest($1::oid[]) AS x(relid)
         LEFT JOIN pg_catalog.pg_class c ON c.oid = x.relid',
        ARRAY[p_relids::text])
    AS r(relid oid, size_bytes bigint)
$$;

-- Bytes of the system catalogs of the database (part of its size).
CREATE FUNCTION folio_perf_data.src_catalog_bytes(p_target int)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    q text := 'SELECT coalesce(sum(pg_catalog.pg_total_relation_size(c.oid)), 0)::bigint AS b
               FROM pg_catalog.pg_class c
               WHERE c.oid < 16384 AND c.relkind = ''r'' AND NOT c.relisshared';
    b bigint;
BEGIN
    IF p_target IS NULL THEN
        EXECUTE q INTO b;
    ELSE
        SELECT r.b INTO b FROM folio_perf_data.remote_query(p_target, q) AS r(b bigint);
    END IF;
    RETURN b;
END
$$;

/*
 * The snapshot row of a capture of this server: database, server and
 * pg_stat_statements_info figures.  Returns the new snapshot id.
 */
CREATE FUNCTION folio_perf_data.capture_header_local(p_label text, p_kind text, mydb oid)
RETURNS bigint
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v    int := current_setting('server_version_num')::int;
    snap bigint;
BEGIN
    INSERT INTO folio_perf_data.snapshot (label, kind, dbid, datname,
        server_version_num, server_start, preloaded, max_connections,
        db_stats_reset, numbackends, xact_commit, xact_rollback, blks_read,
        blks_hit, tup_returned, tup_fetched, tup_inserted, tup_updated,
        tup_deleted, conflicts, temp_files, temp_bytes, deadlocks,
        blk_read_time, blk_write_time)
    SELECT p_label, p_kind, mydb, pg_catalog.current_database(), v,
           pg_catalog.pg_postmaster_start_time(),
           'folio_perf' = ANY (pg_catalog.string_to_array(
               pg_catalog.replace(pg_catalog.current_setting('shared_preload_libraries'), ' ', ''), ',')),
           pg_catalog.current_setting('max_connections')::int,
           d.stats_reset, d.numbackends, d.xact_commit, d.xact_rollback,
           d.blks_read, d.blks_hit, d.tup_returned, d.tup_fetched,
           d.tup_inserted, d.tup_updated, d.tup_deleted, d.conflicts,
           d.temp_files, d.temp_bytes, d.deadlocks, d.blk_read_time,
           d.blk_write_time
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
    RETURN snap;
END
$$;

/*
 * The snapshot row of a capture of a remote target, in one round trip
 * (the connection is made here).  Returns the snapshot id and the target
 * database's oid.
 */
CREATE FUNCTION folio_perf_data.capture_header_remote(p_label text, p_kind text,
    p_target int, OUT snap bigint, OUT dbid oid)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v int := folio_perf_data.remote_version(p_target);
BEGIN
    IF v < 130000 THEN
        RAISE EXCEPTION 'remote target % runs PostgreSQL %, folio_perf needs 13 or later',
                        p_target, v
            USING ERRCODE = 'feature_not_supported';
    END IF;
    INSERT INTO folio_perf_data.snapshot (label, kind, dbid, datname, target_id,
        server_version_num, server_start, preloaded, max_connections,
        db_stats_reset, numbackends, xact_commit, xact_rollback, blks_read,
        blks_hit, tup_returned, tup_fetched, tup_inserted, tup_updated,
        tup_deleted, conflicts, temp_files, temp_bytes, deadlocks,
        blk_read_time, blk_write_time,
        bgwriter_stats_reset, checkpoints_timed, checkpoints_req,
        checkpoint_write_time, checkpoint_sync_time, buffers_checkpoint,
        buffers_clean, buffers_backend, buffers_alloc,
        wal_stats_reset, wal_records, wal_fpi, wal_bytes, wal_buffers_full,
        pgss_dealloc, pgss_stats_reset, pgss_max)
    SELECT p_label, p_kind, r.dbid, r.datname, p_target, v, r.server_start,
           false, r.max_connections,
           r.db_stats_reset, r.numbackends, r.xact_commit, r.xact_rollback,
           r.blks_read, r.blks_hit, r.tup_returned, r.tup_fetched,
           r.tup_inserted, r.tup_updated, r.tup_deleted, r.conflicts,
           r.temp_files, r.temp_bytes, r.deadlocks, r.blk_read_time,
           r.blk_write_time,
           r.bgwriter_stats_reset, r.checkpoints_timed, r.checkpoints_req,
           r.checkpoint_write_time, r.checkpoint_sync_time, r.buffers_checkpoint,
           r.buffers_clean, r.buffers_backend, r.buffers_alloc,
           r.wal_stats_reset, r.wal_records, r.wal_fpi, r.wal_bytes, r.wal_buffers_full,
           r.pgss_dealloc, r.pgss_stats_reset, r.pgss_max
    FROM folio_perf_data.remote_query(p_target, format(
        'SELECT d.datid AS dbid, d.datname, pg_catalog.pg_postmaster_start_time() AS server_start,
                pg_catalog.current_setting(''max_connections'')::int AS max_connections,
                d.stats_reset AS db_stats_reset, d.numbackends, d.xact_commit, d.xact_rollback,
                d.blks_read, d.blks_hit, d.tup_returned, d.tup_fetched, d.tup_inserted,
                d.tup_updated, d.tup_deleted, d.conflicts, d.temp_files, d.temp_bytes,
                d.deadlocks, d.blk_read_time, d.blk_write_time,
                b.stats_reset AS bgwriter_stats_reset, %s,
                b.buffers_clean, %s AS buffers_backend, b.buffers_alloc,
                %s,
                i.dealloc AS pgss_dealloc, i.stats_reset AS pgss_stats_reset,
                pg_catalog.current_setting(''pg_stat_statements.max'', true)::int AS pgss_max
         FROM pg_catalog.pg_stat_database d
         CROSS JOIN pg_catalog.pg_stat_bgwriter b
         %s
         %s
         LEFT JOIN %s ON true
         WHERE d.datname = pg_catalog.current_database()',
        CASE WHEN v >= 170000
             THEN 'c.num_timed AS checkpoints_timed, c.num_requested AS checkpoints_req,
                   c.write_time AS checkpoint_write_time, c.sync_time AS checkpoint_sync_time,
                   c.buffers_written AS buffers_checkpoint'
             ELSE 'b.checkpoints_timed, b.checkpoints_req, b.checkpoint_write_time,
                   b.checkpoint_sync_time, b.buffers_checkpoint' END,
        CASE WHEN v >= 170000 THEN 'NULL::bigint' ELSE 'b.buffers_backend' END,
        CASE WHEN v >= 140000
             THEN 'w.stats_reset AS wal_stats_reset, w.wal_records, w.wal_fpi, w.wal_bytes, w.wal_buffers_full'
             ELSE 'NULL::timestamptz AS wal_stats_reset, NULL::bigint AS wal_records, NULL::bigint AS wal_fpi,
                   NULL::numeric AS wal_bytes, NULL::bigint AS wal_buffers_full' END,
        CASE WHEN v >= 170000 THEN 'CROSS JOIN pg_catalog.pg_stat_checkpointer c' ELSE '' END,
        CASE WHEN v >= 140000 THEN 'CROSS JOIN pg_catalog.pg_stat_wal w' ELSE '' END,
        CASE WHEN v >= 140000 THEN 'pg_stat_statements_info i'
             ELSE '(SELECT NULL::bigint AS dealloc, NULL::timestamptz AS stats_reset) i' END))
    AS r(dbid oid, datname name, server_start timestamptz, max_connections int,
         db_stats_reset timestamptz, numbackends int, xact_commit bigint,
         xact_rollback bigint, blks_read bigint, blks_hit bigint,
         tup_returned bigint, tup_fetched bigint, tup_inserted bigint,
         tup_updated bigint, tup_deleted bigint, conflicts bigint,
         temp_files bigint, temp_bytes bigint, deadlocks bigint,
         blk_read_time double precision, blk_write_time double precision,
         bgwriter_stats_reset timestamptz, checkpoints_timed bigint,
         checkpoints_req bigint, checkpoint_write_time double precision,
         checkpoint_sync_time double precision, buffers_checkpoint bigint,
         buffers_clean bigint, buffers_backend bigint, buffers_alloc bigint,
         wal_stats_reset timestamptz, wal_records bigint, wal_fpi bigint,
         wal_bytes numeric, wal_buffers_full bigint,
         pgss_dealloc bigint, pgss_stats_reset timestamptz, pgss_max int)
    RETURNING snapshot.snap_id, snapshot.dbid INTO snap, dbid;
END
$$;
/* sql/parts/050_capture.sql - capture(): one consistent snapshot into storage */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

/*
 * work_table_state(name): whether this session's temporary table <name>, a
 * work table of capture() or of window_cache(), may be used by the current
 * role: 'absent' (create it), 'ours' (created by the current role, nothing
 * attached to it) or 'foreign'.  capture() runs as the extension's owner in
 * the caller's session, and the caller can create temporary tables with any
 * name, with triggers, rules or policies that would run as the owner; a
 * table the current role did not create is never used.  Only its owner can
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
                       a.tenant, a.module, a.attributed_by, coalesce(a.housekeeping, false), snap
                FROM n
                JOIN a ON a.ord = n.ord
                LEFT JOIN folio_perf_data.query_text t ON t.text_md5 = pg_catalog.md5(n.query)::uuid
                RETURNING key_id, dbid, userid, queryid, toplevel
            )
            UPDATE pg_temp.fperf_cur_stmt c SET key_id = ins.key_id
            FROM ins
            WHERE ins.dbid = c.dbid AND ins.userid = c.userid
              AND ins.queryid = c.queryid AND ins.toplevel = c.toplevel;
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
        -- relations seen for the first time
        WITH nk AS (
            INSERT INTO folio_perf_data.rel_key (dbid, target_id, relid, relkind, nspname, relname,
                table_relname, tenant, module, first_snap)
            SELECT mydb, p_target, r.relid, r.relkind, r.nspname, r.relname, r.table_relname,
                   p.tenant, p.module, snap
            FROM pg_temp.fperf_cur_rel r
            CROSS JOIN LATERAL @extschema@.folio_perf_parse_schema(r.nspname::text) p
            WHERE r.rel_key_id IS NULL AND r.status <> 'd'
            RETURNING rel_key_id, relid
        )
        UPDATE pg_temp.fperf_cur_rel r SET rel_key_id = nk.rel_key_id FROM nk WHERE nk.relid = r.relid;

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
/* sql/parts/060_targets.sql - remote targets: folio_perf_target_add, _drop, folio_perf_targets */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

-- The id of a target by name (NULL name: this server, NULL).
CREATE FUNCTION folio_perf_data.target_id(p_name text)
RETURNS int
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t int;
BEGIN
    IF p_name IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT x.target_id INTO t FROM folio_perf_data.target x
    WHERE x.name = p_name AND x.dropped_at IS NULL;
    IF t IS NULL THEN
        RAISE EXCEPTION 'remote target "%" does not exist', p_name
            USING ERRCODE = 'undefined_object',
                  HINT = 'See folio_perf_targets; folio_perf_target_add(name, conninfo) adds one.';
    END IF;
    RETURN t;
END
$$;

/*
 * Add a remote target: a server (primary or hot standby, PostgreSQL 13 or
 * later) with pg_stat_statements, reached with conninfo (a libpq
 * connection string or URI).  Connects once to check it.  Returns the
 * target id.  Not SECURITY DEFINER: remote_check() and target_store() must
 * see the caller, since a target added by a non-superuser is restricted
 * (password in the string, no files of the server; see the reference).
 */
CREATE FUNCTION folio_perf_target_add(name text, conninfo text)
RETURNS int
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c record;
BEGIN
    IF name IS NULL OR name !~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$' THEN
        RAISE EXCEPTION 'invalid target name "%"', coalesce(name, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use up to 63 letters, digits, "_", "." or "-", starting with a letter or digit.';
    END IF;
    IF conninfo IS NULL THEN
        RAISE EXCEPTION 'conninfo must not be null'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass a connection string such as ''host=db.example.org dbname=folio user=folio_perf_collector password=...''.';
    END IF;
    PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_target'), 0);
    IF EXISTS (SELECT 1 FROM folio_perf_data.target x
               WHERE x.name = folio_perf_target_add.name AND x.dropped_at IS NULL) THEN
        RAISE EXCEPTION 'remote target "%" already exists', name
            USING ERRCODE = 'duplicate_object',
                  HINT = 'Drop it first with folio_perf_target_drop(name).';
    END IF;
    c := folio_perf_data.remote_check(conninfo, name);
    IF c.server_version_num < 130000 THEN
        RAISE EXCEPTION 'target "%" runs PostgreSQL %, folio_perf needs 13 or later', name, c.server_version_num
            USING ERRCODE = 'feature_not_supported';
    END IF;
    IF c.pgss_schema IS NULL THEN
        RAISE EXCEPTION 'extension "pg_stat_statements" is not installed in database "%" of target "%"',
                        c.datname, name
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'On the target, add pg_stat_statements to shared_preload_libraries (on RDS: in the parameter group) and run CREATE EXTENSION pg_stat_statements in that database.';
    END IF;
    IF NOT c.read_all_stats THEN
        RAISE EXCEPTION 'role "%" on target "%" cannot read all statistics', c.rolname, name
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Without pg_read_all_stats, pg_stat_statements hides other roles'' statements.',
                  HINT = format('On the target: GRANT pg_read_all_stats TO %I;', c.rolname);
    END IF;
    RETURN folio_perf_data.target_store(name, conninfo);
END
$$;

/*
 * Drop a remote target: its connection string and password are forgotten; its snapshots
 * and windows stay and report as before.  Returns its id.
 */
CREATE FUNCTION folio_perf_target_drop(name text)
RETURNS int
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t int;
BEGIN
    IF name IS NULL THEN
        RAISE EXCEPTION 'target name must not be null'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'See folio_perf_targets for the targets that exist.';
    END IF;
    PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_target'), 0);
    UPDATE folio_perf_data.target x SET conninfo = NULL, enabled = false,
           dropped_at = pg_catalog.clock_timestamp()
    WHERE x.name = folio_perf_target_drop.name AND x.dropped_at IS NULL
    RETURNING x.target_id INTO t;
    IF t IS NULL THEN
        RAISE EXCEPTION 'remote target "%" does not exist', name
            USING ERRCODE = 'undefined_object',
                  HINT = 'See folio_perf_targets for the targets that exist.';
    END IF;
    DELETE FROM folio_perf_data.target_secret s WHERE s.target_id = t;
    RETURN t;
END
$$;

-- Targets, without passwords, with what the sampler last said about them.
CREATE VIEW folio_perf_targets AS
SELECT t.target_id, t.name, folio_perf_data.conninfo_redact(t.conninfo) AS conninfo,
       t.restricted, t.enabled, t.created_at, t.dropped_at,
       l.snapshots, l.last_snapshot_at, l.server_version_num, l.datname,
       CASE WHEN t.dropped_at IS NOT NULL OR NOT t.enabled THEN 'off'
            ELSE coalesce(st.state, 'not sampled yet') END AS sampler,
       st.last_sample_at, st.ticks AS sampler_ticks, st.ticks_missed AS sampler_ticks_missed,
       st.failures AS sampler_failures, st.last_error AS sampler_last_error,
       st.last_error_at AS sampler_last_error_at, st.next_attempt_at AS sampler_next_attempt_at,
       st.updated_at AS sampler_updated_at
FROM folio_perf_data.target t
LEFT JOIN folio_perf_data.target_status st ON st.target_id = t.target_id
LEFT JOIN LATERAL (
    SELECT count(*) AS snapshots, max(s.taken_at) AS last_snapshot_at,
           (array_agg(s.server_version_num ORDER BY s.snap_id DESC))[1] AS server_version_num,
           (array_agg(s.datname ORDER BY s.snap_id DESC))[1] AS datname
    FROM folio_perf_data.snapshot s WHERE s.target_id = t.target_id
) l ON true;
/* sql/parts/070_windows.sql - snapshots and windows: folio_perf_snapshot, _window, _begin, _end, _purge and their views */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

CREATE FUNCTION folio_perf_snapshot(label text DEFAULT NULL)
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT folio_perf_data.capture(label, 'manual') $$;

-- a snapshot of a remote target (NULL: this server)
CREATE FUNCTION folio_perf_snapshot(label text, target text)
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT folio_perf_data.capture(label, 'manual', folio_perf_data.target_id(target)) $$;

-- for the sampler's timed snapshots (folio_perf.snapshot_interval)
CREATE FUNCTION folio_perf_snapshot_timed()
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT folio_perf_data.capture(NULL, 'timed') $$;

-- Raise the standard errors for a snapshot id.
CREATE FUNCTION folio_perf_data.check_snapshot(p_snap bigint, p_what text)
RETURNS folio_perf_data.snapshot
LANGUAGE plpgsql VOLATILE
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
    -- KEY SHARE first: a concurrent purge of either snapshot finishes, and
    -- then it is reported as missing rather than as a foreign-key error
    PERFORM 1 FROM folio_perf_data.snapshot s
    WHERE s.snap_id IN (from_snap, to_snap) FOR KEY SHARE;
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

-- A window of this server, or of a remote target (target: its name).
CREATE FUNCTION folio_perf_begin(label text, tags jsonb, target text)
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
    s := folio_perf_data.capture(label, 'begin', folio_perf_data.target_id(target));
    INSERT INTO folio_perf_data.window (label, tags, begin_snap)
    VALUES (label, tags, s) RETURNING window_id INTO w;
    RETURN w;
END
$$;

CREATE FUNCTION folio_perf_begin(label text, tags jsonb DEFAULT '{}')
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT @extschema@.folio_perf_begin(label, tags, NULL::text) $$;

CREATE FUNCTION folio_perf_end(window_id bigint DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w folio_perf_data.window;
    s bigint;
    tgt int;
    mydb oid := (SELECT d.oid FROM pg_catalog.pg_database d
                 WHERE d.datname = pg_catalog.current_database());
BEGIN
    IF window_id IS NULL THEN
        SELECT x.* INTO w FROM folio_perf_data.window x
        JOIN folio_perf_data.snapshot b ON b.snap_id = x.begin_snap
        WHERE x.end_snap IS NULL AND (b.target_id IS NOT NULL OR b.dbid = mydb)
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
    END IF;
    SELECT b.target_id INTO tgt FROM folio_perf_data.snapshot b WHERE b.snap_id = w.begin_snap;
    IF tgt IS NULL AND (SELECT b.dbid FROM folio_perf_data.snapshot b WHERE b.snap_id = w.begin_snap) <> mydb THEN
        RAISE EXCEPTION 'window % began in another database', w.window_id
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'End a window in the database it was begun in.';
    END IF;
    -- a window of a remote target ends with a snapshot of the same target
    s := folio_perf_data.capture(w.label, 'end', tgt);
    UPDATE folio_perf_data.window x SET end_snap = s WHERE x.window_id = w.window_id;
    RETURN w.window_id;
END
$$;

-- The age argument of the purge functions: not NULL, not negative, and
-- not reaching before the earliest timestamp.
CREATE FUNCTION folio_perf_data.check_older_than(older_than interval)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
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
    BEGIN
        PERFORM pg_catalog.now() - older_than;
    EXCEPTION WHEN datetime_field_overflow THEN
        RAISE EXCEPTION 'older_than % reaches before the earliest timestamp', older_than
            USING ERRCODE = 'datetime_field_overflow',
                  HINT = 'Pass an interval such as ''7 days''; to remove everything, pass ''0''.';
    END;
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
    PERFORM folio_perf_data.check_older_than(older_than);
    -- one purge at a time, and no snapshot being taken meanwhile
    PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_purge'), 0);
    FOR r IN
        SELECT s.snap_id,
               (SELECT min(s2.snap_id) FROM folio_perf_data.snapshot s2
                WHERE s2.dbid = s.dbid AND s2.target_id IS NOT DISTINCT FROM s.target_id
                  AND s2.snap_id > s.snap_id) AS next_snap,
               s.dbid, s.target_id
        FROM folio_perf_data.snapshot s
        WHERE s.taken_at < pg_catalog.now() - older_than
          AND NOT EXISTS (SELECT 1 FROM folio_perf_data.window w
                          WHERE w.begin_snap = s.snap_id OR w.end_snap = s.snap_id)
        ORDER BY s.snap_id
        FOR UPDATE OF s
    LOOP
        CONTINUE WHEN r.next_snap IS NULL;
        IF r.target_id IS NULL THEN
            PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_snapshot'), r.dbid::int);
        ELSE
            PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_snapshot_target'), r.target_id);
        END IF;
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
        -- what did not move (the next snapshot has a newer row) goes with
        -- the snapshot (ON DELETE CASCADE; rel_on_snapshot_delete for rel)
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
/* sql/parts/080_window_arithmetic.sql - window arithmetic: window bounds, statement and relation differences, text visibility */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

-- The two snapshots of a window, after checking it can be reported on.
CREATE FUNCTION folio_perf_data.window_bounds(p_window bigint,
    OUT begin_snap bigint, OUT end_snap bigint,
    OUT begin_at timestamptz, OUT end_at timestamptz, OUT seconds double precision)
LANGUAGE plpgsql VOLATILE
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
 * The snapshots after p_begin up to p_end of the same database and target
 * as p_end: snapshots of other targets taken meanwhile are not part of a
 * window.
 */
CREATE FUNCTION folio_perf_data.snaps_between(p_begin bigint, p_end bigint)
RETURNS SETOF bigint
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT s.snap_id
    FROM folio_perf_data.snapshot s, folio_perf_data.snapshot e
    WHERE e.snap_id = p_end AND s.snap_id > p_begin AND s.snap_id <= p_end
      AND s.dbid = e.dbid AND s.target_id IS NOT DISTINCT FROM e.target_id
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
CREATE FUNCTION folio_perf_data.stmt_delta_compute(p_begin bigint, p_end bigint)
RETURNS TABLE(key_id bigint, status text, calls bigint,
    total_exec_time double precision, total_plan_time double precision,
    rows bigint, shared_blks_hit bigint, shared_blks_read bigint,
    shared_blks_dirtied bigint, shared_blks_written bigint,
    temp_blks_read bigint, temp_blks_written bigint,
    blk_read_time double precision, blk_write_time double precision,
    wal_bytes numeric, first_calls_mean double precision,
    stddev_exec_time double precision, wal_buffers_full bigint,
    parallel_workers_to_launch bigint, parallel_workers_launched bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
WITH changed AS (
    SELECT x.key_id, bool_or(x.gone) AS had_gone
    FROM folio_perf_data.stmt x
    WHERE x.snap_id > p_begin AND x.snap_id <= p_end
      -- snapshots of other targets (or this server) taken meanwhile
      AND x.snap_id IN (SELECT folio_perf_data.snaps_between(p_begin, p_end))
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
               x.wal_bytes AS b_wal, x.stddev_exec_time AS b_sd,
               x.wal_buffers_full AS b_wbf, x.parallel_workers_to_launch AS b_pwl,
               x.parallel_workers_launched AS b_pwd
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
               x.wal_bytes AS e_wal, x.stddev_exec_time AS e_sd,
               x.wal_buffers_full AS e_wbf, x.parallel_workers_to_launch AS e_pwl,
               x.parallel_workers_launched AS e_pwd
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
    CASE WHEN s.b_calls > 0 AND NOT s.b_gone THEN s.b_time / s.b_calls END,
    -- the window's own (population) standard deviation of execution time.
    -- pg_stat_statements keeps, per entry, n calls, their sum T and
    -- stddev sd, i.e. M2 = sd^2 * n, the sum of squared deviations from
    -- the mean.  Two snapshots are a split of the calls into "before"
    -- (n1, T1, M2_1) and "inside" (nw = n2 - n1, Tw = T2 - T1), and the
    -- parallel-variance combination M2_2 = M2_1 + M2_w
    -- + (Tw/nw - T1/n1)^2 * n1 * nw / n2 inverts to M2_w.  Counting from
    -- zero (new, reentered, reset) the end's stddev is the window's.
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true) THEN
        CASE WHEN s.e_calls - s.b_calls > 0 THEN
            sqrt(greatest(
                s.e_sd ^ 2 * s.e_calls - s.b_sd ^ 2 * s.b_calls
                - CASE WHEN s.b_calls > 0
                       THEN ((s.e_time - s.b_time) / (s.e_calls - s.b_calls) - s.b_time / s.b_calls) ^ 2
                            * s.b_calls * (s.e_calls - s.b_calls) / s.e_calls
                       ELSE 0 END,
                0) / (s.e_calls - s.b_calls)) END
         ELSE s.e_sd END,
    -- counted from PostgreSQL 18 only: NULL (not 0) where either end lacks them
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN CASE WHEN s.b_wbf IS NOT NULL THEN greatest(s.e_wbf - s.b_wbf, 0) END
         ELSE s.e_wbf END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN CASE WHEN s.b_pwl IS NOT NULL THEN greatest(s.e_pwl - s.b_pwl, 0) END
         ELSE s.e_pwl END,
    CASE WHEN s.st IN ('ok', 'evicted') AND NOT coalesce(s.b_gone, true)
         THEN CASE WHEN s.b_pwd IS NOT NULL THEN greatest(s.e_pwd - s.b_pwd, 0) END
         ELSE s.e_pwd END
FROM s
WHERE s.e_calls IS NOT NULL
$$;

/*
 * window_cache(kind, p_begin, p_end): the query (parameters $1 = p_begin,
 * $2 = p_end) that returns <kind>_compute(p_begin, p_end) (kind:
 * stmt_delta, rel_delta, table_rows) from a temporary table where it is
 * computed at most once per transaction and user for a pair of snapshots;
 * where temporary tables cannot be used (a standby, no TEMP privilege) the
 * query computes it.  A report asks for the same window's differences a dozen
 * times (flags, summary, four top lists, modules, tables, trend).  The
 * tables are dropped at commit: kept for the session (as capture()'s work
 * tables are), they would belong to whatever role the session had SET ROLE
 * to, and DROP ROLE would fail until the session ends.  A table of that
 * name that the current role did not create, or with a trigger, rule or
 * policy on it, is never used (work_table_state): the query then computes.
 */
CREATE FUNCTION folio_perf_data.window_cache(p_kind text, p_begin bigint, p_end bigint)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    cache text;
    done boolean;
    st text;
    st_done text;
BEGIN
    IF p_kind NOT IN ('stmt_delta', 'rel_delta', 'table_rows') THEN
        RAISE EXCEPTION 'unknown window cache "%"', p_kind
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF pg_catalog.pg_is_in_recovery()
       OR NOT pg_catalog.has_database_privilege(pg_catalog.current_database(), 'TEMP') THEN
        RETURN format('SELECT * FROM folio_perf_data.%I($1, $2)', p_kind || '_compute');
    END IF;
    cache := 'fperf_' || p_kind || '_' || (SELECT r.oid FROM pg_catalog.pg_roles r
                                            WHERE r.rolname = current_user);
    st := folio_perf_data.work_table_state(cache);
    st_done := folio_perf_data.work_table_state(cache || '_done');
    IF st = 'foreign' OR st_done = 'foreign' OR st <> st_done THEN
        -- a table of that name the current role did not create (planted by
        -- another role of this session, with a trigger or a rule that would
        -- run as this one): not used
        RETURN format('SELECT * FROM folio_perf_data.%I($1, $2)', p_kind || '_compute');
    END IF;
    IF st = 'absent' THEN
        EXECUTE format('CREATE TEMP TABLE %I ON COMMIT DROP AS
                        SELECT NULL::bigint AS b, NULL::bigint AS e, d.*
                        FROM folio_perf_data.%I(NULL, NULL) d WITH NO DATA',
                       cache, p_kind || '_compute');
        EXECUTE format('CREATE TEMP TABLE %I (b bigint, e bigint) ON COMMIT DROP',
                       cache || '_done');
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM pg_temp.%I x WHERE x.b = $1 AND x.e = $2)',
                   cache || '_done') INTO done USING p_begin, p_end;
    IF NOT done THEN
        EXECUTE format('INSERT INTO pg_temp.%I SELECT $1, $2, d.* FROM folio_perf_data.%I($1, $2) d',
                       cache, p_kind || '_compute') USING p_begin, p_end;
        EXECUTE format('INSERT INTO pg_temp.%I VALUES ($1, $2)', cache || '_done')
            USING p_begin, p_end;
    END IF;
    -- the cached columns but b and e, in the compute function's order
    RETURN format('SELECT %s FROM pg_temp.%I d WHERE d.b = $1 AND d.e = $2',
                  (SELECT string_agg(pg_catalog.quote_ident(a.attname), ', ' ORDER BY a.attnum)
                   FROM pg_catalog.pg_attribute a
                   JOIN pg_catalog.pg_class k ON k.oid = a.attrelid
                   WHERE k.relnamespace = pg_catalog.pg_my_temp_schema() AND k.relname = cache
                     AND a.attnum > 2 AND NOT a.attisdropped),
                  cache);
END
$fn$;

/*
 * stmt_delta(p_begin, p_end): stmt_delta_compute(), computed once per
 * transaction and user for a pair of snapshots.  A report asks for the same
 * window's differences a dozen times (flags, summary, four top lists,
 * modules, tables, trend); they are kept in a temporary table until commit.
 * Differences between two existing snapshots do not change.
 */
CREATE FUNCTION folio_perf_data.stmt_delta(p_begin bigint, p_end bigint)
RETURNS TABLE(key_id bigint, status text, calls bigint,
    total_exec_time double precision, total_plan_time double precision,
    rows bigint, shared_blks_hit bigint, shared_blks_read bigint,
    shared_blks_dirtied bigint, shared_blks_written bigint,
    temp_blks_read bigint, temp_blks_written bigint,
    blk_read_time double precision, blk_write_time double precision,
    wal_bytes numeric, first_calls_mean double precision,
    stddev_exec_time double precision, wal_buffers_full bigint,
    parallel_workers_to_launch bigint, parallel_workers_launched bigint)
LANGUAGE plpgsql VOLATILE ROWS 10000
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF p_begin IS NOT NULL AND p_end IS NOT NULL THEN
        RETURN QUERY EXECUTE folio_perf_data.window_cache('stmt_delta', p_begin, p_end)
            USING p_begin, p_end;
    END IF;
END
$fn$;

/*
 * Per-relation differences across two snapshots (tables, matviews and
 * indexes).  status: ok, created (first seen inside the window, counts from
 * zero), dropped (counts until last seen), rewritten (TRUNCATE, VACUUM FULL,
 * CLUSTER inside the window; counters continue), reset (counters went down:
 * statistics reset or crash; counts since the reset, a lower bound).
 */
CREATE FUNCTION folio_perf_data.rel_delta_compute(p_begin bigint, p_end bigint)
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
      AND x.snap_id IN (SELECT folio_perf_data.snaps_between(p_begin, p_end))
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

/*
 * rel_delta(p_begin, p_end): rel_delta_compute(), computed once per
 * transaction and user for a pair of snapshots.  A report asks for the same
 * window's differences a dozen times (flags, summary, four top lists,
 * modules, tables, trend); they are kept in a temporary table until commit.
 * Differences between two existing snapshots do not change.
 */
CREATE FUNCTION folio_perf_data.rel_delta(p_begin bigint, p_end bigint)
RETURNS TABLE(rel_key_id bigint, status text,
    seq_scan bigint, seq_tup_read bigint, idx_scan bigint, idx_tup_fetch bigint,
    n_tup_ins bigint, n_tup_upd bigint, n_tup_del bigint, n_tup_hot_upd bigint,
    vacuum_count bigint, autovacuum_count bigint, analyze_count bigint,
    autoanalyze_count bigint, blks_read bigint, blks_hit bigint,
    toast_blks_read bigint, toast_blks_hit bigint,
    n_live_tup bigint, n_dead_tup bigint, size_begin bigint, size_end bigint)
LANGUAGE plpgsql VOLATILE ROWS 10000
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF p_begin IS NOT NULL AND p_end IS NOT NULL THEN
        RETURN QUERY EXECUTE folio_perf_data.window_cache('rel_delta', p_begin, p_end)
            USING p_begin, p_end;
    END IF;
END
$fn$;

-- Can the current role see statement texts of role u (as in
-- pg_stat_statements)?  Roles of a remote target (t) are not roles here:
-- their texts are for members of pg_read_all_stats.
CREATE FUNCTION folio_perf_data.may_see_text(u oid, t int DEFAULT NULL)
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT (t IS NULL AND u = (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user))
      OR pg_catalog.pg_has_role(current_user, 'pg_read_all_stats', 'USAGE')
$$;

/*
 * Statement texts as the current role may see them: its own statements'
 * and, for members of pg_read_all_stats, everyone's (as in
 * pg_stat_statements).  Readers get this view, not the query_text table;
 * current_user inside a view is the querying role.  text_md5 is NULL where
 * the text is hidden (reports then match statements by queryid).
 */
CREATE VIEW folio_perf_data.stmt_text WITH (security_barrier) AS
SELECT k.key_id,
       -- a hidden text's MD5 would confirm a guess of the text
       CASE WHEN v.see_all OR (k.target_id IS NULL AND k.userid = v.me) THEN t.text_md5 END AS text_md5,
       CASE WHEN v.see_all OR (k.target_id IS NULL AND k.userid = v.me) THEN t.query
            ELSE '<insufficient privilege>' END AS query
FROM folio_perf_data.stmt_key k
JOIN folio_perf_data.query_text t ON t.text_id = k.text_id
-- may_see_text()'s rule, worked out once per query rather than per row
CROSS JOIN (SELECT pg_catalog.pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') AS see_all,
                   (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) AS me) v;

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
/* sql/parts/090_report_tables.sql - report tables: top statements, table and module activity, window flags, DB summary */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

CREATE FUNCTION folio_perf_top_statements(window_id bigint, n int DEFAULT 20,
    order_by text DEFAULT 'total_time', only_toplevel boolean DEFAULT true,
    include_housekeeping boolean DEFAULT false)
RETURNS TABLE(rank int, queryid bigint, tenant text, module text,
    attributed_by text, role name, toplevel boolean, calls bigint,
    total_exec_ms double precision, mean_exec_ms double precision,
    stddev_exec_ms double precision,
    rows bigint, pct_of_total_time numeric, shared_blks_hit bigint,
    shared_blks_read bigint, temp_blks_written bigint, wal_bytes numeric,
    wal_buffers_full bigint, parallel_workers_to_launch bigint,
    parallel_workers_launched bigint,
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
               x.shared_blks_hit, x.shared_blks_read, x.temp_blks_written, x.wal_bytes,
               x.stddev_exec_time, x.wal_buffers_full, x.parallel_workers_to_launch,
               x.parallel_workers_launched
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
           d.calls, d.total_exec_time, d.total_exec_time / d.calls, d.stddev_exec_time, d.rows,
           CASE WHEN tot.t > 0 THEN round((100 * d.total_exec_time / tot.t)::numeric, 2) END,
           d.shared_blks_hit, d.shared_blks_read, d.temp_blks_written, d.wal_bytes,
           d.wal_buffers_full, d.parallel_workers_to_launch, d.parallel_workers_launched,
           round((d.total_exec_time / 1000 / wb.seconds)::numeric, 3),
           d.status,
           t.query
    FROM d CROSS JOIN tot
    LEFT JOIN folio_perf_data.stmt_text t ON t.key_id = d.key_id
    ORDER BY 1
    LIMIT n;
END
$$;

-- Table rows of a window with their indexes folded in.  Growth (table,
-- indexes) comes from the relations that changed: a relation that did not
-- change kept its size.  Absolute sizes and the tuple counts of tables that
-- did not change themselves (only an index did) are looked up by
-- table_size_at() for the rows a report shows, not for all of them (50,000
-- table rows in a 24-hour window of 40 tenants: 1.5 s of lookups).
CREATE FUNCTION folio_perf_data.table_rows_compute(p_begin bigint, p_end bigint)
RETURNS TABLE(rel_key_id bigint, tenant text, module text, schema name,
    relname name, relkind "char", status text, inserts bigint, updates bigint,
    hot_updates bigint, deletes bigint, seq_scan bigint, seq_tup_read bigint,
    idx_scan bigint, idx_tup_fetch bigint, blks_read bigint, blks_hit bigint,
    table_growth bigint, index_growth bigint,
    live_tup bigint, dead_tup bigint, vacuum_count bigint,
    autovacuum_count bigint, analyze_count bigint, autoanalyze_count bigint,
    dbid oid, tgt int)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
WITH d AS (
    SELECT x.*, k.nspname, k.relname, k.relkind, k.table_relname, k.tenant, k.module, k.dbid,
           coalesce(k.target_id, 0) AS tgt
    FROM folio_perf_data.rel_delta(p_begin, p_end) x
    JOIN folio_perf_data.rel_key k ON k.rel_key_id = x.rel_key_id
),
t AS (SELECT * FROM d WHERE d.relkind <> 'i'),
i AS (
    SELECT d.dbid, d.tgt, d.nspname, d.table_relname,
           sum(d.idx_scan) AS idx_scan, sum(d.idx_tup_fetch) AS idx_tup_fetch,
           sum(d.blks_read) AS blks_read, sum(d.blks_hit) AS blks_hit,
           sum(d.size_begin) AS size_begin, sum(d.size_end) AS size_end,
           bool_or(d.status <> 'ok') AS odd,
           min(d.tenant) AS tenant, min(d.module) AS module
    FROM d WHERE d.relkind = 'i'
    GROUP BY 1, 2, 3, 4
),
res AS (
-- tenant and module were parsed from the schema name when the relation was
-- first seen (rel_key), for a table and for its indexes alike
SELECT coalesce(t.rel_key_id, 0) AS rel_key_id, coalesce(t.tenant, i.tenant) AS tenant,
       coalesce(t.module, i.module) AS module,
       coalesce(t.nspname, i.nspname) AS nspname, coalesce(t.relname, i.table_relname) AS relname,
       coalesce(t.relkind, 'r') AS relkind,
       coalesce(t.status, 'ok') AS status,
       coalesce(t.n_tup_ins, 0) AS ins, coalesce(t.n_tup_upd, 0) AS upd, coalesce(t.n_tup_hot_upd, 0) AS hot,
       coalesce(t.n_tup_del, 0) AS del, coalesce(t.seq_scan, 0) AS ss, coalesce(t.seq_tup_read, 0) AS str,
       coalesce(i.idx_scan, 0)::bigint AS isc,
       (coalesce(i.idx_tup_fetch, 0) + coalesce(t.idx_tup_fetch, 0))::bigint AS itf,
       (coalesce(t.blks_read, 0) + coalesce(t.toast_blks_read, 0) + coalesce(i.blks_read, 0))::bigint AS br,
       (coalesce(t.blks_hit, 0) + coalesce(t.toast_blks_hit, 0) + coalesce(i.blks_hit, 0))::bigint AS bh,
       t.n_live_tup AS live, t.n_dead_tup AS dead,
       coalesce(t.vacuum_count, 0) AS vac, coalesce(t.autovacuum_count, 0) AS avac,
       coalesce(t.analyze_count, 0) AS ana, coalesce(t.autoanalyze_count, 0) AS aana,
       coalesce(t.dbid, i.dbid) AS dbid, coalesce(t.tgt, i.tgt) AS tgt,
       (coalesce(t.size_end, 0) - coalesce(t.size_begin, 0))::bigint AS tgrowth,
       (coalesce(i.size_end, 0) - coalesce(i.size_begin, 0))::bigint AS igrowth
FROM t
FULL JOIN i ON i.dbid = t.dbid AND i.tgt = t.tgt AND i.nspname = t.nspname
           AND i.table_relname = t.relname
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
)
SELECT res.rel_key_id, res.tenant, res.module, res.nspname, res.relname, res.relkind,
       res.status, res.ins, res.upd, res.hot, res.del, res.ss, res.str, res.isc, res.itf,
       res.br, res.bh, res.tgrowth, res.igrowth, res.live, res.dead,
       res.vac, res.avac, res.ana, res.aana, res.dbid, res.tgt::int
FROM res
$$;


/*
 * A table's size (heap and TOAST), the sum of its indexes' sizes and its
 * tuple counts at snapshot p_snap, of the table of that name that existed
 * at p_key_snap (the end of the window: a table dropped and created again
 * is the newer one).
 */
CREATE FUNCTION folio_perf_data.table_size_at(p_dbid oid, p_tgt int, p_nspname name,
    p_relname name, p_key_snap bigint, p_snap bigint,
    OUT table_bytes bigint, OUT index_bytes bigint, OUT live_tup bigint, OUT dead_tup bigint)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT tb.sz, ib.sz::bigint, tb.live, tb.dead
FROM (SELECT 1) one
LEFT JOIN LATERAL (
    SELECT k.rel_key_id FROM folio_perf_data.rel_key k
    WHERE k.dbid = p_dbid AND k.nspname = p_nspname AND k.relname = p_relname
      AND coalesce(k.target_id, 0) = p_tgt
      AND k.relkind <> 'i' AND k.first_snap <= p_key_snap
    ORDER BY k.first_snap DESC LIMIT 1) tk ON true
LEFT JOIN LATERAL (
    SELECT CASE WHEN x.gone THEN 0 ELSE x.size_bytes END AS sz,
           x.n_live_tup AS live, x.n_dead_tup AS dead FROM folio_perf_data.rel x
    WHERE x.rel_key_id = tk.rel_key_id AND x.snap_id <= p_snap
    ORDER BY x.snap_id DESC LIMIT 1) tb ON true
LEFT JOIN LATERAL (
    SELECT sum(z.sz) AS sz FROM folio_perf_data.rel_key k
    CROSS JOIN LATERAL (
        SELECT CASE WHEN x.gone THEN 0 ELSE x.size_bytes END AS sz FROM folio_perf_data.rel x
        WHERE x.rel_key_id = k.rel_key_id AND x.snap_id <= p_snap
        ORDER BY x.snap_id DESC LIMIT 1) z
    WHERE k.dbid = p_dbid AND k.nspname = p_nspname AND k.table_relname = p_relname
      AND coalesce(k.target_id, 0) = p_tgt
      AND k.relkind = 'i') ib ON true
$$;

-- table_rows(p_begin, p_end): table_rows_compute(), once per transaction
-- and user for a pair of snapshots (see stmt_delta).
CREATE FUNCTION folio_perf_data.table_rows(p_begin bigint, p_end bigint)
RETURNS TABLE(rel_key_id bigint, tenant text, module text, schema name,
    relname name, relkind "char", status text, inserts bigint, updates bigint,
    hot_updates bigint, deletes bigint, seq_scan bigint, seq_tup_read bigint,
    idx_scan bigint, idx_tup_fetch bigint, blks_read bigint, blks_hit bigint,
    table_growth bigint, index_growth bigint,
    live_tup bigint, dead_tup bigint, vacuum_count bigint,
    autovacuum_count bigint, analyze_count bigint, autoanalyze_count bigint,
    dbid oid, tgt int)
LANGUAGE plpgsql VOLATILE ROWS 10000
SET search_path = pg_catalog, pg_temp
AS $fn$
BEGIN
    IF p_begin IS NOT NULL AND p_end IS NOT NULL THEN
        RETURN QUERY EXECUTE folio_perf_data.window_cache('table_rows', p_begin, p_end)
            USING p_begin, p_end;
    END IF;
END
$fn$;

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
    WITH top AS (
        SELECT (row_number() OVER (ORDER BY
                    CASE order_by
                        WHEN 'writes' THEN (r.inserts + r.updates + r.deletes)::numeric
                        WHEN 'reads' THEN (r.seq_tup_read + r.idx_tup_fetch)::numeric
                        WHEN 'io' THEN r.blks_read::numeric
                        WHEN 'growth' THEN (r.table_growth + r.index_growth)::numeric
                        WHEN 'seq_scan' THEN r.seq_scan::numeric
                        ELSE (r.inserts + r.updates + r.deletes + r.seq_scan + r.idx_scan)::numeric
                    END DESC, r.schema, r.relname))::int AS rk, r.*
        FROM folio_perf_data.table_rows(wb.begin_snap, wb.end_snap) r
        ORDER BY 1
        LIMIT n
    )
    -- sizes at both ends, for the rows shown
    SELECT top.rk, top.tenant, top.module, top.schema, top.relname, top.inserts, top.updates,
           top.hot_updates, top.deletes, top.seq_scan, top.seq_tup_read, top.idx_scan,
           top.idx_tup_fetch, top.blks_read, top.blks_hit,
           sb.table_bytes, se.table_bytes,
           coalesce(se.table_bytes, 0) - coalesce(sb.table_bytes, 0),
           se.index_bytes, coalesce(top.live_tup, se.live_tup), coalesce(top.dead_tup, se.dead_tup),
           top.vacuum_count, top.autovacuum_count, top.analyze_count, top.autoanalyze_count, top.status
    FROM top
    LEFT JOIN LATERAL folio_perf_data.table_size_at(top.dbid, top.tgt, top.schema, top.relname,
                                                     wb.end_snap, wb.begin_snap) sb ON true
    LEFT JOIN LATERAL folio_perf_data.table_size_at(top.dbid, top.tgt, top.schema, top.relname,
                                                     wb.end_snap, wb.end_snap) se ON true
    ORDER BY 1;
END
$$;

-- Size of each schema at a snapshot (newest roll-up at or before it).  The
-- schemas are walked along schema_stat's primary key (a loose index scan:
-- one probe per schema) and each takes its newest row by the same index,
-- instead of sorting every roll-up row ever written (a 24-hour window of
-- 40 tenants: 63 ms -> a few ms).
CREATE FUNCTION folio_perf_data.schema_sizes(p_snap bigint)
RETURNS TABLE(nspname name, tenant text, module text, bytes bigint,
              live_tup bigint, dead_tup bigint)
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v_db oid;
    v_tgt int;
BEGIN
    SELECT s.dbid, coalesce(s.target_id, 0) INTO v_db, v_tgt
    FROM folio_perf_data.snapshot s WHERE s.snap_id = p_snap;
    IF v_db IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
    WITH RECURSIVE n AS (
        -- ORDER BY ... LIMIT 1, not min(): there is no min(name), and
        -- min(text) cannot walk the index
        SELECT (SELECT s.nspname FROM folio_perf_data.schema_stat s
                WHERE s.dbid = v_db ORDER BY s.dbid, s.nspname LIMIT 1) AS nsp
        UNION ALL
        SELECT (SELECT s.nspname FROM folio_perf_data.schema_stat s
                WHERE s.dbid = v_db AND s.nspname > n.nsp
                ORDER BY s.dbid, s.nspname LIMIT 1)
        FROM n WHERE n.nsp IS NOT NULL
    )
    SELECT l.nspname, l.tenant, l.module, l.table_bytes + l.index_bytes, l.live_tup, l.dead_tup
    FROM n
    CROSS JOIN LATERAL (
        SELECT s.nspname, s.tenant, s.module, s.table_bytes, s.index_bytes, s.live_tup, s.dead_tup
        FROM folio_perf_data.schema_stat s
        WHERE s.dbid = v_db AND s.nspname = n.nsp AND s.snap_id <= p_snap
          AND coalesce(s.target_id, 0) = v_tgt
        ORDER BY s.snap_id DESC LIMIT 1) l
    WHERE n.nsp IS NOT NULL;
END
$$;
CREATE FUNCTION folio_perf_module_activity(window_id bigint)
RETURNS TABLE(tenant text, module text, inserts bigint, updates bigint,
    hot_updates bigint, deletes bigint, seq_scan bigint, seq_tup_read bigint,
    idx_scan bigint, idx_tup_fetch bigint, blks_read bigint, blks_hit bigint,
    size_begin bigint, size_end bigint, growth bigint, live_tup bigint,
    dead_tup bigint, vacuum_count bigint, analyze_count bigint,
    statement_calls bigint, statement_time_ms double precision,
    connections_avg numeric, connections_max int, flags text,
    connections_note text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
    sw record;
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
    -- connections held, from the sampler's (tenant, module) series
    SELECT * INTO sw FROM folio_perf_data.sample_window(window_id);
    RETURN QUERY
    -- the sums of table_rows() per module, straight from the relations'
    -- differences: a module's total does not need each index matched to
    -- its table (and the flags are the tables' statuses, as there)
    WITH r AS (
        SELECT k.tenant, k.module,
               sum(coalesce(x.n_tup_ins, 0)) FILTER (WHERE k.relkind <> 'i') AS ins,
               sum(coalesce(x.n_tup_upd, 0)) FILTER (WHERE k.relkind <> 'i') AS upd,
               sum(coalesce(x.n_tup_hot_upd, 0)) FILTER (WHERE k.relkind <> 'i') AS hot,
               sum(coalesce(x.n_tup_del, 0)) FILTER (WHERE k.relkind <> 'i') AS del,
               sum(coalesce(x.seq_scan, 0)) FILTER (WHERE k.relkind <> 'i') AS ss,
               sum(coalesce(x.seq_tup_read, 0)) FILTER (WHERE k.relkind <> 'i') AS str,
               sum(coalesce(x.idx_scan, 0)) FILTER (WHERE k.relkind = 'i') AS isc,
               sum(coalesce(x.idx_tup_fetch, 0)) AS itf,
               sum(coalesce(x.blks_read, 0) + CASE WHEN k.relkind <> 'i' THEN coalesce(x.toast_blks_read, 0) ELSE 0 END) AS br,
               sum(coalesce(x.blks_hit, 0) + CASE WHEN k.relkind <> 'i' THEN coalesce(x.toast_blks_hit, 0) ELSE 0 END) AS bh,
               sum(coalesce(x.vacuum_count, 0) + coalesce(x.autovacuum_count, 0)) FILTER (WHERE k.relkind <> 'i') AS vac,
               sum(coalesce(x.analyze_count, 0) + coalesce(x.autoanalyze_count, 0)) FILTER (WHERE k.relkind <> 'i') AS ana,
               string_agg(DISTINCT x.status, ',') FILTER (WHERE k.relkind <> 'i' AND x.status <> 'ok') AS fl
        FROM folio_perf_data.rel_delta(wb.begin_snap, wb.end_snap) x
        JOIN folio_perf_data.rel_key k ON k.rel_key_id = x.rel_key_id
        WHERE k.module IS NOT NULL
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
    ), cn AS (
        SELECT ss.tenant, ss.module, c.avg, c.max
        FROM folio_perf_data.sample_stats('connections', sw.t0, sw.t1, sw.n_ticks, sw.target_id) c
        JOIN folio_perf_data.sample_series ss ON ss.series_id = c.series_id
        WHERE sw.n_ticks > 0 AND ss.dimension = 'tenant_module' AND ss.module IS NOT NULL
    ), keys AS (
        SELECT r.tenant, r.module FROM r UNION SELECT st.tenant, st.module FROM st
        UNION SELECT cn.tenant, cn.module FROM cn
    )
    SELECT keys.tenant, keys.module,
           coalesce(r.ins, 0)::bigint, coalesce(r.upd, 0)::bigint, coalesce(r.hot, 0)::bigint,
           coalesce(r.del, 0)::bigint, coalesce(r.ss, 0)::bigint, coalesce(r.str, 0)::bigint,
           coalesce(r.isc, 0)::bigint, coalesce(r.itf, 0)::bigint, coalesce(r.br, 0)::bigint,
           coalesce(r.bh, 0)::bigint,
           sb.bytes::bigint, se.bytes::bigint, (se.bytes - coalesce(sb.bytes, 0))::bigint,
           se.live::bigint, se.dead::bigint, coalesce(r.vac, 0)::bigint, coalesce(r.ana, 0)::bigint,
           coalesce(st.calls, 0)::bigint, coalesce(st.ms, 0),
           -- no samples: NULL, and the flags say why
           CASE WHEN sw.n_ticks > 0 THEN round(coalesce(cn.avg, 0), 2) END,
           CASE WHEN sw.n_ticks > 0 THEN coalesce(cn.max, 0) END,
           r.fl,
           CASE WHEN sw.n_ticks = 0 OR sw.n_gaps > 0 THEN sw.note END
    FROM keys
    LEFT JOIN r ON r.tenant IS NOT DISTINCT FROM keys.tenant AND r.module = keys.module
    LEFT JOIN st ON st.tenant IS NOT DISTINCT FROM keys.tenant AND st.module = keys.module
    LEFT JOIN sb ON sb.tenant IS NOT DISTINCT FROM keys.tenant AND sb.module = keys.module
    LEFT JOIN se ON se.tenant IS NOT DISTINCT FROM keys.tenant AND se.module = keys.module
    LEFT JOIN cn ON cn.tenant IS NOT DISTINCT FROM keys.tenant AND cn.module = keys.module
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
    -- gaps in the sampler's ticks (folio_perf_data.sample_window)
    RETURN QUERY
        SELECT 'sampler_gap', format('the sampler''s samples cover %s%% of the window (%s of ~%s samples): no samples for %s; connections, DB load and CPU figures are of the sampled part',
                                     sw.coverage_pct, sw.n_ticks, sw.expected_ticks, sw.gaps)
        FROM folio_perf_data.sample_window(window_id) sw
        WHERE sw.n_gaps > 0;
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

-- A counter's difference; after a reset (end below begin) the count since
-- the reset, which is a lower bound (flagged by folio_perf_window_flags).
CREATE FUNCTION folio_perf_data.cdiff(e numeric, b numeric)
RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT CASE WHEN e >= b THEN e - b ELSE e END $$;
CREATE FUNCTION folio_perf_data.cdiff(e bigint, b bigint)
RETURNS bigint
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT CASE WHEN e >= b THEN e - b ELSE e END $$;

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
        folio_perf_data.cdiff(e.xact_commit, b.xact_commit),
        round((folio_perf_data.cdiff(e.xact_commit, b.xact_commit) / wb.seconds)::numeric, 2),
        folio_perf_data.cdiff(e.xact_rollback, b.xact_rollback),
        CASE WHEN folio_perf_data.cdiff(e.blks_hit, b.blks_hit) + folio_perf_data.cdiff(e.blks_read, b.blks_read) > 0
             THEN round(100.0 * folio_perf_data.cdiff(e.blks_hit, b.blks_hit)
                        / (folio_perf_data.cdiff(e.blks_hit, b.blks_hit) + folio_perf_data.cdiff(e.blks_read, b.blks_read)), 2) END,
        folio_perf_data.cdiff(e.blks_read, b.blks_read), folio_perf_data.cdiff(e.blks_hit, b.blks_hit),
        folio_perf_data.cdiff(e.tup_inserted, b.tup_inserted), folio_perf_data.cdiff(e.tup_updated, b.tup_updated),
        folio_perf_data.cdiff(e.tup_deleted, b.tup_deleted), folio_perf_data.cdiff(e.tup_returned, b.tup_returned),
        folio_perf_data.cdiff(e.tup_fetched, b.tup_fetched),
        folio_perf_data.cdiff(e.temp_files, b.temp_files), folio_perf_data.cdiff(e.temp_bytes, b.temp_bytes),
        folio_perf_data.cdiff(e.deadlocks, b.deadlocks), folio_perf_data.cdiff(e.conflicts, b.conflicts),
        folio_perf_data.cdiff(e.wal_records, b.wal_records), folio_perf_data.cdiff(e.wal_bytes, b.wal_bytes),
        round((folio_perf_data.cdiff(e.wal_bytes, b.wal_bytes) / wb.seconds::numeric), 0),
        folio_perf_data.cdiff(e.checkpoints_timed, b.checkpoints_timed), folio_perf_data.cdiff(e.checkpoints_req, b.checkpoints_req),
        folio_perf_data.cdiff(e.buffers_checkpoint, b.buffers_checkpoint), folio_perf_data.cdiff(e.buffers_clean, b.buffers_clean),
        folio_perf_data.cdiff(e.buffers_backend, b.buffers_backend),
        b.db_size_bytes, e.db_size_bytes, e.max_connections,
        -- no statement in the window: 0 ms, exactly
        (SELECT coalesce(sum(x.total_exec_time), 0)
         FROM folio_perf_data.stmt_delta(wb.begin_snap, wb.end_snap) x
         JOIN folio_perf_data.stmt_key k ON k.key_id = x.key_id
         WHERE k.toplevel AND NOT k.housekeeping),
        fl;
END
$$;
/* sql/parts/100_plans.sql - plans of slow executions: taking them from shared memory, storing, reporting */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

CREATE FUNCTION folio_perf_plans_take(
    OUT dbid oid, OUT userid oid, OUT queryid bigint, OUT toplevel boolean,
    OUT duration_ms double precision, OUT captured_at timestamptz,
    OUT fingerprint bigint, OUT shapes bigint[], OUT slow_calls bigint,
    OUT analyzed boolean, OUT truncated boolean,
    OUT plan_text text, OUT plan_json text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_plans_take'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

CREATE FUNCTION folio_perf_plans_current(
    OUT dbid oid, OUT userid oid, OUT queryid bigint, OUT toplevel boolean,
    OUT duration_ms double precision, OUT captured_at timestamptz,
    OUT fingerprint bigint, OUT shapes bigint[], OUT slow_calls bigint,
    OUT analyzed boolean, OUT truncated boolean,
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
    OUT truncated bigint, OUT analyzed_executions bigint, OUT taken bigint,
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
       CASE WHEN v.see_all OR sp.userid = v.me THEN p.plan_json END AS plan_json
FROM folio_perf_data.stmt_plan sp
JOIN folio_perf_data.plan p ON p.plan_id = sp.plan_id
-- may_see_text()'s rule, worked out once per query rather than per row
CROSS JOIN (SELECT pg_catalog.pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') AS see_all,
                   (SELECT r.oid FROM pg_catalog.pg_roles r WHERE r.rolname = current_user) AS me) v;

/*
 * Move the plans of the store into storage for snapshot p_snap (called by
 * capture(), in its transaction: the store forgets them only if it
 * commits).  Returns the number of statements with a plan.
 */
CREATE FUNCTION folio_perf_data.store_plans(p_snap bigint)
RETURNS int
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n int;
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

    INSERT INTO folio_perf_data.plan (plan_md5, fingerprint, analyzed, truncated,
        outline, plan_text, plan_json)
    SELECT DISTINCT ON (c.plan_md5) c.plan_md5, c.fingerprint, c.analyzed, c.truncated,
           folio_perf_data.plan_outline(c.plan_text), c.plan_text, c.plan_json::jsonb
    FROM pg_temp.fperf_cur_plan c
    ORDER BY c.plan_md5
    ON CONFLICT (plan_md5) DO NOTHING;

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
    LEFT JOIN LATERAL (
        SELECT k.key_id, k.toplevel FROM folio_perf_data.stmt_key k
        WHERE k.dbid = sp.dbid AND k.userid = sp.userid AND k.queryid = sp.queryid
          AND k.target_id IS NULL
        ORDER BY (k.toplevel = sp.toplevel) DESC
        LIMIT 1) k ON true
    WHERE e.snap_id = p_end AND e.target_id IS NULL
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
 */
CREATE FUNCTION folio_perf_plans(window_id bigint, include_housekeeping boolean DEFAULT false)
RETURNS TABLE(queryid bigint, tenant text, module text, attributed_by text,
    role name, toplevel boolean, slowest_ms double precision,
    captured_at timestamptz, slow_calls bigint, plans_seen int,
    plan_changed boolean, analyzed boolean, truncated boolean,
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
           w.plan_id, pt.outline, pt.plan_text, pt.plan_json, t.query
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

/*
 * Per statement group as folio_perf_compare_rows matches them (normalised
 * text, tenant, module, and here the nesting level; not housekeeping), the
 * slowest plan in a window.
 */
CREATE FUNCTION folio_perf_data.plan_groups(p_window bigint)
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
FROM folio_perf_data.window_bounds(p_window) wb
CROSS JOIN LATERAL folio_perf_data.window_plans(wb.begin_snap, wb.end_snap) w
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
         THEN 'No statement has a plan in both windows: folio_perf.plan_min_duration (ms, -1 = off) decides which executions keep their plan.'
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
    lst text;
    n int;
    note text;
BEGIN
    SELECT coalesce(jsonb_object_agg(p.queryid::text || '/' || coalesce(p.role::text, '') || '/' || p.toplevel::text,
               jsonb_build_object('plan_id', p.plan_id, 'slowest_ms', round(p.slowest_ms::numeric, 3),
                   'captured_at', p.captured_at, 'slow_calls', p.slow_calls,
                   'plans_seen', p.plans_seen, 'plan_changed', p.plan_changed,
                   'analyzed', p.analyzed, 'truncated', p.truncated,
                   'outline', p.outline, 'text', p.plan)), '{}'),
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

/*
 * The plans of a report's top list, in one format: under the table of the
 * list, one block per statement that has a plan, collapsed in html.
 * Statements whose plan an earlier list of the same report already showed
 * are left out.
 */
CREATE FUNCTION folio_perf_data.render_plans(fmt text, doc jsonb, lst text, qmap jsonb DEFAULT '{}')
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
            CASE WHEN (r->'plan'->>'truncated')::boolean THEN ', plan truncated' ELSE '' END);
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
/* sql/parts/110_sampler.sql - sampler storage functions and reports: status, connections, DB load, CPU, time series */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

CREATE FUNCTION folio_perf_sampler_status(
    OUT preloaded boolean, OUT state text, OUT pid int,
    OUT started_at timestamptz, OUT starts int, OUT database text,
    OUT sample_interval_ms int, OUT flush_interval_s int,
    OUT snapshot_interval_s int, OUT last_sample_at timestamptz,
    OUT last_flush_at timestamptz, OUT last_snapshot_at timestamptz,
    OUT ticks bigint, OUT ticks_flushed bigint, OUT ticks_dropped bigint,
    OUT procs_truncated bigint, OUT intervals bigint,
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
                                   'backend_type', 'database'], ss.dimension),
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

    RETURN QUERY
    SELECT 'host'::text, pg_catalog.format('%s CPUs', host.ncpu), NULL::text, NULL::text, NULL::text,
           round(host.busy / 1000.0, 1),
           round(100.0 * host.busy / nullif(host.total, 0), 1), NULL::numeric;
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

    IF v_kind IN ('connections', 'active') AND v_dim IS NULL THEN
        -- per tick
        RETURN QUERY
        WITH t AS (
            SELECT floor(extract(epoch FROM i.started_at + u.ms * interval '1 millisecond' - w.t0)
                         / width_s)::int AS b,
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
            SELECT floor(extract(epoch FROM i.started_at + (i.ended_at - i.started_at) / 2 - w.t0)
                         / width_s)::int AS b, i.*
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
            SELECT floor(extract(epoch FROM i.started_at + (i.ended_at - i.started_at) / 2 - w.t0)
                         / width_s)::int AS b, i.*
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
/* sql/parts/120_rendering.sql - rendering: escaping, number formats, sections as text/markdown/html, SVG charts */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

------------------------------------------------------------------------
--
-- Every document is built as one jsonb value first (the "json" format,
-- whose keys are documented and stable); the text, markdown and html
-- formats render that value.  A section is an object
--   {"title": ..., "columns": [...], "rows": [{...}, ...], "note": ...,
--    "labels": [...], "right": [...], "worse_up": [...]}
-- so that one renderer serves every table.  "labels" are the headers
-- (else col_label() of each column), "right" columns holding numbers
-- already formatted as text (else a column is right-aligned when all its
-- values are numbers), "worse_up" delta columns where a rise is a
-- regression (html colours them).
--
-- One rule per kind of number (fmt_value): counts as integers with
-- thousands separators; times in ms and other measures to three
-- significant digits (at most three decimals); percentages to one
-- decimal; changes in percent with a sign and "%"; bytes in B, kB, MB,
-- GB, TB (binary multiples, one decimal below 10); durations as
-- hh:mm:ss; never trailing zeros.
--
-- Statement texts: tables show the start of the text and a reference
-- [Qn] to the numbered "SQL" appendix, which gives every text in full
-- once (qmap: text -> n, built by sql_refs()).
------------------------------------------------------------------------

-- The helpers below format one value each and are called for every cell:
-- they are plpgsql, whose simple expressions evaluate fast (a SQL function
-- that is not inlined, and one with a SET clause never is, starts an
-- executor per call), and like every function here they pin search_path.

-- Escape for HTML text and attribute values.
CREATE FUNCTION folio_perf_data.html_escape(s text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
         coalesce(s, ''), '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;');
END
$$;

-- One line of text: CR, LF and tabs become spaces, other control
-- characters (terminal escapes) "?".
CREATE FUNCTION folio_perf_data.fold(s text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN pg_catalog.regexp_replace(pg_catalog.regexp_replace(coalesce(s, ''), '[\r\n\t]+', ' ', 'g'),
                                   '[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]', '?', 'g');
END
$$;

-- Markdown inline text (table cells, headings, notes): one line, the
-- backslash first, then the markdown punctuation that acts inside a line
-- (emphasis, code, links, cell breaks, strike-through, headings; an
-- underscore only at the start or end of a word) escaped
-- with a backslash, and "&" and "<" as entities, so that nothing in
-- a label, a table name or a statement becomes markup, a link, a heading
-- or a cell break.  ">" stays as it is: without a "<" it opens no tag and
-- no autolink, and inside a line it is no block quote (folding to one line
-- leaves no text at a line start, where list and block markers would act),
-- so "->" and "->>" read as written in every renderer, also those that
-- show entities literally.
CREATE FUNCTION folio_perf_data.md_escape(s text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- an underscore inside a word (mod_users) cannot start or end
    -- emphasis and stays as it is: it is set aside (as a control
    -- character, which fold() has replaced in the text) while the others
    -- are escaped
    RETURN pg_catalog.replace(pg_catalog.regexp_replace(pg_catalog.regexp_replace(
           pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
               folio_perf_data.fold(s), '\', '\\'), '&', '&amp;'), '<', '&lt;'),
           '([[:alnum:]])_(?=[[:alnum:]])', E'\\1\x01', 'g'),
           '([`*_\[\]#|~])', '\\\1', 'g'), E'\x01', '_');
END
$$;

-- HTML-escaped text that may break after "_", ".", "," and "(" (long
-- identifiers and statements wrap in narrow table cells).
CREATE FUNCTION folio_perf_data.html_wrap(s text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN pg_catalog.regexp_replace(folio_perf_data.html_escape(s), '([_.,(/]+)', '\1<wbr>', 'g');
END
$$;

-- A markdown fenced code block: the fence is longer than any run of
-- backticks in the text, so the text cannot close it.
CREATE FUNCTION folio_perf_data.md_code(s text, info text DEFAULT 'sql')
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT f || coalesce(info, '') || E'\n' || regexp_replace(coalesce(s, ''), '\r\n?', E'\n', 'g')
         || E'\n' || f || E'\n'
  FROM (SELECT repeat('`', greatest(3, coalesce((SELECT max(length(m[1]))
                                                  FROM regexp_matches(coalesce(s, ''), '(`+)', 'g') m), 0) + 1)) AS f) x
$$;

-- A title in a format: markdown and html escaped, all one line.
CREATE FUNCTION folio_perf_data.esc(fmt text, s text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN CASE fmt WHEN 'markdown' THEN folio_perf_data.md_escape(s)
                  WHEN 'html' THEN folio_perf_data.html_escape(folio_perf_data.fold(s))
                  ELSE folio_perf_data.fold(s) END;
END
$$;

-- A number with thousands separators, rounded to digits decimals,
-- without trailing zeros.
CREATE FUNCTION folio_perf_data.fmt_num(n numeric, digits int)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r numeric := pg_catalog.round(n, digits);
    f text;
BEGIN
    IF n IS NULL THEN
        RETURN '';
    END IF;
    f := pg_catalog.rtrim(pg_catalog.split_part(pg_catalog.abs(r)::text, '.', 2), '0');
    RETURN CASE WHEN r < 0 THEN '-' ELSE '' END
        || pg_catalog.to_char(pg_catalog.trunc(pg_catalog.abs(r)), 'FM999,999,999,999,999,999,990')
        || CASE WHEN f <> '' THEN '.' || f ELSE '' END;
END
$$;

-- Three significant digits, at most three decimals.
CREATE FUNCTION folio_perf_data.fmt_sig(n numeric)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN folio_perf_data.fmt_num(n, CASE WHEN pg_catalog.abs(n) >= 100 THEN 0 WHEN pg_catalog.abs(n) >= 10 THEN 1
                                           WHEN pg_catalog.abs(n) >= 1 THEN 2 ELSE 3 END);
END
$$;

-- Bytes in B, kB, MB, GB, TB (multiples of 1024; one decimal below 10).
CREATE FUNCTION folio_perf_data.fmt_bytes(n numeric)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    a numeric := pg_catalog.abs(n);
    e int;
BEGIN
    IF n IS NULL THEN
        RETURN '';
    ELSIF a < 1024 THEN
        RETURN folio_perf_data.fmt_num(n, 0) || ' B';
    END IF;
    e := CASE WHEN a < 1048576 THEN 1 WHEN a < 1073741824 THEN 2 WHEN a < 1099511627776 THEN 3 ELSE 4 END;
    RETURN folio_perf_data.fmt_num(n / 1024::numeric ^ e, CASE WHEN a / 1024::numeric ^ e < 10 THEN 1 ELSE 0 END)
        || ' ' || (ARRAY['kB', 'MB', 'GB', 'TB'])[e];
END
$$;

-- Seconds as hh:mm:ss (hours may pass 24).
CREATE FUNCTION folio_perf_data.fmt_duration(s numeric)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t bigint := pg_catalog.round(pg_catalog.abs(s))::bigint;
BEGIN
    IF s IS NULL THEN
        RETURN '';
    END IF;
    RETURN CASE WHEN s < 0 THEN '-' ELSE '' END
        || pg_catalog.lpad((t / 3600)::text, 2, '0') || ':' || pg_catalog.lpad((t / 60 % 60)::text, 2, '0')
        || ':' || pg_catalog.lpad((t % 60)::text, 2, '0');
END
$$;

-- The kind of a column, by its name: how its numbers are formatted.
CREATE FUNCTION folio_perf_data.col_kind(col text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN CASE
    WHEN col = 'query' THEN 'query'
    WHEN col IN ('rank', 'queryid') THEN 'id'
    WHEN col = 'duration_s' THEN 'duration'
    WHEN col LIKE '%delta\_pct' OR col IN ('mean_change_pct', 'Delta, %') THEN 'delta_pct'
    WHEN col LIKE '%delta\_ms' OR col = 'delta' THEN 'delta'
    WHEN col LIKE '%pct%' OR col LIKE '%ratio%' THEN 'pct'
    WHEN col LIKE '%bytes\_per\_s%' THEN 'bytes_s'
    WHEN col LIKE '%bytes%' OR col LIKE 'size%' OR col LIKE 'growth%' OR col LIKE 'db\_size%'
      THEN 'bytes'
    WHEN col = 'duration_s' THEN 'duration'
    WHEN col LIKE '%\_at' OR col IN ('begin', 'end') THEN 'time'
    WHEN col LIKE '%\_ms' OR col LIKE '%\_ms\_%' OR col = 'ms' THEN 'ms'
    WHEN col IN ('aas', 'avg', 'load', 'db_load_avg', 'connections_avg') OR col LIKE 'aas\_%'
      OR col LIKE 'avg\_%' OR col LIKE '%\_avg' OR col LIKE '%per\_s%' OR col LIKE '%seconds%'
      THEN 'measure'
    ELSE 'count' END;
END
$$;

-- A column's header in words, with its unit.
CREATE FUNCTION folio_perf_data.col_label(col text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce((SELECT l FROM (VALUES
    ('rank', '#'), ('tenant', 'Tenant'), ('module', 'Module'), ('calls', 'Calls'),
    ('total_exec_ms', 'Total, ms'), ('mean_exec_ms', 'Mean, ms'), ('stddev_exec_ms', 'Stddev, ms'),
    ('rows', 'Rows'), ('pct_of_total_time', 'Time, %'), ('shared_blks_read', 'Blocks read'),
    ('shared_blks_hit', 'Blocks hit'), ('temp_blks_written', 'Temp blocks written'),
    ('wal_bytes', 'WAL'), ('wal_bytes_per_s', 'WAL/s'), ('load', 'Load, AAS'),
    ('status', 'Status'), ('query', 'Statement'), ('relname', 'Table'),
    ('inserts', 'Inserts'), ('updates', 'Updates'), ('deletes', 'Deletes'),
    ('seq_scan', 'Seq scans'), ('idx_scan', 'Index scans'), ('blks_read', 'Blocks read'),
    ('size_end', 'Size'), ('growth', 'Growth'), ('live_tup', 'Live rows'), ('dead_tup', 'Dead rows'),
    ('statement_calls', 'Calls'), ('statement_time_ms', 'Statement time, ms'), ('flags', 'Flags'),
    ('tenants', 'Tenants'), ('entity', 'Records of'), ('records', 'Records'),
    ('dimension', 'By'), ('key', 'Key'), ('avg', 'Avg'), ('p95', 'P95'), ('max', 'Max'),
    ('pct_of_max_connections', 'Max of max_connections, %'), ('aas', 'Load, AAS'),
    ('pct_of_load', 'Load, %'), ('cpu_seconds', 'CPU, s'), ('pct_of_host_capacity', 'Host capacity, %'),
    ('pct_of_db_cpu', 'DB CPU, %'), ('first_calls', 'Calls, 1st half'), ('last_calls', 'Calls, 2nd half'),
    ('first_mean_ms', 'Mean 1st half, ms'), ('last_mean_ms', 'Mean 2nd half, ms'),
    ('mean_change_pct', 'Change, %'), ('severity', 'Severity'), ('check', 'Check'),
    ('finding', 'Finding'), ('flag', 'Flag'), ('detail', 'Detail'), ('metric', 'Metric'),
    ('value', 'Value'), ('wait_event', 'Wait event'), ('level', 'Level'),
    ('base_plan', 'Base plan'), ('new_plan', 'New plan'), ('plan', 'Plan'),
    ('duration_s', 'Duration (hh:mm:ss)'), ('commits', 'Commits'), ('commits_per_s', 'Commits/s'),
    ('rollbacks', 'Rollbacks'), ('cache_hit_ratio', 'Cache hit ratio, %'),
    ('tup_inserted', 'Rows inserted'), ('tup_updated', 'Rows updated'), ('tup_deleted', 'Rows deleted'),
    ('temp_files', 'Temp files'), ('temp_bytes', 'Temp file bytes'), ('deadlocks', 'Deadlocks'),
    ('checkpoints_timed', 'Checkpoints (timed)'), ('checkpoints_req', 'Checkpoints (requested)'),
    ('db_size_begin', 'DB size at begin'), ('db_size_end', 'DB size at end'),
    ('statements_total_ms', 'Statement time, ms'), ('statements_per_s', 'Statements/s'),
    ('cpus', 'CPUs'), ('host_cpu_pct', 'Host CPU, %'), ('db_cpu_pct', 'DB CPU, %'),
    ('connections_avg', 'Connections avg'), ('connections_p95', 'Connections p95'),
    ('connections_max', 'Connections max'), ('max_connections', 'max_connections'),
    ('db_load_avg', 'DB load avg, AAS'), ('db_load_max', 'DB load max, sessions'),
    ('section', 'Section'), ('attributed_by', 'Attributed by'),
    ('operation', 'Operation'), ('count', 'Count'), ('per_minute', 'Per minute'),
    ('db_time_ms', 'DB time, ms'), ('db_time_per_op_ms', 'DB time per operation, ms'),
    ('statements_per_op', 'Statements per operation'), ('rows_written_per_op', 'Rows written per operation'),
    ('wal_bytes_per_op', 'WAL per operation'), ('source', 'Source'),
    ('records_per_minute', 'Records/min')) v(c, l) WHERE v.c = col),
    -- else the name itself, in words: "In window", "Db time per op ms"
    upper(left(replace(col, '_', ' '), 1)) || substr(replace(col, '_', ' '), 2))
$$;

-- One value as text by its kind (see the rules at the top).
CREATE FUNCTION folio_perf_data.fmt_value(v jsonb, kind text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t text := pg_catalog.jsonb_typeof(v);
    n numeric;
BEGIN
    IF v IS NULL OR t = 'null' THEN
        RETURN '';
    ELSIF t = 'string' AND kind = 'time' THEN
        RETURN pg_catalog.to_char((v #>> '{}')::timestamptz, 'YYYY-MM-DD HH24:MI:SS TZ');
    ELSIF t <> 'number' THEN
        RETURN v #>> '{}';
    ELSIF kind = 'id' THEN
        RETURN v::text;
    END IF;
    n := v::numeric;
    RETURN CASE
        WHEN kind = 'count' AND n = pg_catalog.trunc(n) THEN folio_perf_data.fmt_num(n, 0)
        WHEN kind = 'delta_pct' THEN CASE WHEN n > 0 THEN '+' ELSE '' END || folio_perf_data.fmt_num(n, 1) || '%'
        WHEN kind = 'pct' THEN folio_perf_data.fmt_num(n, 1)
        WHEN kind = 'delta' THEN CASE WHEN n > 0 THEN '+' ELSE '' END || folio_perf_data.fmt_sig(n)
        WHEN kind = 'bytes' THEN folio_perf_data.fmt_bytes(n)
        WHEN kind = 'bytes_s' THEN folio_perf_data.fmt_bytes(n) || '/s'
        WHEN kind = 'duration' THEN folio_perf_data.fmt_duration(n)
        ELSE folio_perf_data.fmt_sig(n) END;
END
$$;

-- Kept for callers outside the renderer: one cell as text.
CREATE FUNCTION folio_perf_data.cell(v jsonb, col text, fmt text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN CASE WHEN col = 'query' THEN folio_perf_data.fold(v #>> '{}')
              ELSE folio_perf_data.fold(folio_perf_data.fmt_value(v, folio_perf_data.col_kind(col))) END;
END
$$;

-- The start of a statement, one line, at most n characters.
CREATE FUNCTION folio_perf_data.sql_start(q text, n int)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN CASE WHEN pg_catalog.length(pg_catalog.btrim(pg_catalog.regexp_replace(folio_perf_data.fold(q), '\s+', ' ', 'g'))) > n
              THEN pg_catalog.rtrim(pg_catalog.left(pg_catalog.btrim(pg_catalog.regexp_replace(folio_perf_data.fold(q), '\s+', ' ', 'g')), n - 1)) || '...'
              ELSE pg_catalog.btrim(pg_catalog.regexp_replace(folio_perf_data.fold(q), '\s+', ' ', 'g')) END;
END
$$;

/*
 * The statement texts of sections, numbered in the order they first
 * appear: {"<text>": n}.  Hidden texts (<insufficient privilege>) get no
 * number.
 */
CREATE FUNCTION folio_perf_data.sql_refs(secs jsonb[])
RETURNS jsonb
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(jsonb_object_agg(q, n), '{}')
  FROM (SELECT q, row_number() OVER (ORDER BY first) AS n
        FROM (SELECT r->>'query' AS q, min(si * 100000 + ri) AS first
              FROM unnest(secs) WITH ORDINALITY AS s(sec, si),
                   jsonb_array_elements(coalesce(s.sec->'rows', '[]')) WITH ORDINALITY AS x(r, ri)
              WHERE s.sec->'columns' ? 'query' AND jsonb_typeof(r->'query') = 'string'
                AND r->>'query' <> '<insufficient privilege>' AND btrim(r->>'query') <> ''
              GROUP BY 1) y) z
$$;

/*
 * The "SQL" appendix: every numbered statement in full, once.  who:
 * {"<text>": "tenant / module"} from the rows that show it.
 */
CREATE FUNCTION folio_perf_data.sql_appendix(fmt text, qmap jsonb, secs jsonb[])
RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    out text[] := '{}';
BEGIN
    IF qmap IS NULL OR qmap = '{}'::jsonb THEN
        RETURN '';
    END IF;
    FOR r IN
        SELECT q.key AS q, q.value::int AS n,
               (SELECT string_agg(DISTINCT coalesce(x->>'tenant' || ' / ', '') || coalesce(x->>'module', '(unattributed)'), ', ')
                FROM unnest(secs) s, jsonb_array_elements(coalesce(s->'rows', '[]')) x
                WHERE x->>'query' = q.key) AS who
        FROM jsonb_each_text(qmap) q ORDER BY q.value::int
    LOOP
        IF fmt = 'html' THEN
            out := out || format('<div class="sql" id="q%s"><p><b>Q%s</b> %s</p><pre>%s</pre></div>',
                                 r.n, r.n, folio_perf_data.html_escape(folio_perf_data.fold(r.who)),
                                 folio_perf_data.html_escape(r.q));
        ELSIF fmt = 'markdown' THEN
            out := out || ('**Q' || r.n || '** ' || folio_perf_data.md_escape(r.who) || E'\n\n'
                           || folio_perf_data.md_code(r.q));
        ELSE
            out := out || ('[Q' || r.n || '] ' || folio_perf_data.fold(r.who) || E'\n'
                           || regexp_replace(regexp_replace(r.q, '[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]', '?', 'g'),
                                             '^', '    ', 'gn') || E'\n');
        END IF;
    END LOOP;
    RETURN CASE fmt WHEN 'html' THEN E'<section id="sql"><h2>SQL</h2>\n<p class="note">Every statement of the tables in full; the tables refer to them as Q1, Q2, ...</p>\n'
                                     || array_to_string(out, E'\n') || E'\n</section>\n'
                    WHEN 'markdown' THEN E'### SQL\n\nEvery statement of the tables in full; the tables refer to them as [Q1], [Q2], ...\n\n'
                                     || array_to_string(out, E'\n') || E'\n'
                    ELSE E'SQL\n===\n' || array_to_string(out, E'\n') || E'\n' END;
END
$$;

-- An anchor id from a title.
CREATE FUNCTION folio_perf_data.slug(s text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT 's-' || trim(BOTH '-' FROM regexp_replace(lower(coalesce(s, '')), '[^a-z0-9]+', '-', 'g'))
$$;

/*
 * Render one section: a title, an optional note, and a table of the given
 * columns.  text: aligned for psql; markdown: a pipe table; html: a table.
 */
CREATE FUNCTION folio_perf_data.render_section(fmt text, sec jsonb, qmap jsonb DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
-- Cells are formatted once and lines collected in an array joined at the
-- end: appending to one growing text is quadratic, and a comparison can
-- have 5,000 statement rows.
DECLARE
    cols text[] := ARRAY(SELECT jsonb_array_elements_text(sec->'columns'));
    labels text[] := ARRAY(SELECT jsonb_array_elements_text(sec->'labels'));
    -- read once: sec is large, and reading a member of it per cell would
    -- parse it again for every cell
    right_cols text[] := ARRAY(SELECT jsonb_array_elements_text(coalesce(sec->'right', '[]')));
    worse_cols text[] := ARRAY(SELECT jsonb_array_elements_text(coalesce(sec->'worse_up', '[]')));
    nc int := coalesce(array_length(cols, 1), 0);
    kinds text[];
    w int[];
    num boolean[];
    seen boolean[];
    r jsonb;
    cells text[] := '{}';
    lines text[] := '{}';
    out text := '';
    line text;
    i int;
    k int;
    c text;
    v jsonb;
    qn text;
    cls text;
    title text := coalesce(sec->>'title', '');
BEGIN
    IF fmt = 'markdown' THEN
        out := '### ' || folio_perf_data.md_escape(title) || E'\n\n';
    ELSIF fmt = 'html' THEN
        out := '<section id="' || coalesce(sec->>'id', folio_perf_data.slug(title)) || '"><h2>'
            || folio_perf_data.html_escape(folio_perf_data.fold(title)) || E'</h2>\n';
    ELSE
        out := folio_perf_data.fold(title) || E'\n' || repeat('=', length(folio_perf_data.fold(title))) || E'\n';
    END IF;
    IF sec->>'note' IS NOT NULL THEN
        out := out || CASE fmt WHEN 'html' THEN '<p class="note">' || folio_perf_data.html_escape(folio_perf_data.fold(sec->>'note')) || E'</p>\n'
                               WHEN 'markdown' THEN '_' || folio_perf_data.md_escape(sec->>'note') || E'_\n\n'
                               ELSE '(' || folio_perf_data.fold(sec->>'note') || E')\n' END;
    END IF;
    IF nc = 0 OR jsonb_array_length(coalesce(sec->'rows', '[]')) = 0 THEN
        IF sec->>'note' IS NULL THEN
            out := out || CASE fmt WHEN 'html' THEN E'<p class="note">No rows.</p>\n' ELSE E'(no rows)\n' END;
        END IF;
        RETURN out || CASE fmt WHEN 'html' THEN E'</section>\n' ELSE E'\n' END;
    END IF;

    -- cells, column widths and alignment: right-aligned are the columns
    -- of numbers (a column of NULLs only is text)
    kinds := ARRAY(SELECT folio_perf_data.col_kind(x) FROM unnest(cols) x);
    seen := array_fill(false, ARRAY[nc]);
    w := array_fill(0, ARRAY[nc]);
    num := array_fill(true, ARRAY[nc]);
    FOR i IN 1..nc LOOP
        labels[i] := folio_perf_data.fold(coalesce(labels[i], folio_perf_data.col_label(cols[i])));
        w[i] := length(labels[i]);
        IF kinds[i] IN ('query', 'time') THEN
            num[i] := false;
        END IF;
    END LOOP;
    FOR r IN SELECT * FROM jsonb_array_elements(sec->'rows') LOOP
        FOR i IN 1..nc LOOP
            v := r->cols[i];
            IF kinds[i] = 'query' AND (v IS NULL OR jsonb_typeof(v) = 'null') AND r->>'queryid' = '0' THEN
                -- sampled sessions whose statement had no query id (yet)
                c := '(no query id: a statement being parsed, or one without)';
            ELSIF kinds[i] = 'query' THEN
                qn := qmap->>(v #>> '{}');
                c := coalesce('[Q' || qn || '] ', '')
                     || folio_perf_data.sql_start(v #>> '{}', CASE fmt WHEN 'html' THEN 160 ELSE 60 END);
            ELSIF (v IS NULL OR jsonb_typeof(v) = 'null')
                  AND (cols[i] = 'module' AND (NOT r ? 'dimension'
                                               OR r->>'dimension' IN ('module', 'role', 'statement', 'statement_wait_event',
                                                                      'tenant_module', 'application_name', 'attribution'))
                       OR cols[i] = 'key' AND r->>'dimension' IN ('tenant', 'module', 'tenant_module', 'role', 'application_name', 'attribution')) THEN
                -- a row that could have a module (or this key) and has
                -- none; a total, wait event or tenant row has no module
                c := '(unattributed)';
            ELSIF (v IS NULL OR jsonb_typeof(v) = 'null') AND cols[i] = 'key' AND r->>'dimension' IN ('database', 'state') THEN
                -- processes of no database (background processes);
                -- backends not yet reporting a state (still connecting)
                c := CASE r->>'dimension' WHEN 'database' THEN '(no database)' ELSE '(connecting)' END;
            ELSE
                c := folio_perf_data.fold(folio_perf_data.fmt_value(v, kinds[i]));
            END IF;
            cells := cells || c;
            w[i] := greatest(w[i], length(c));
            IF v IS NOT NULL AND jsonb_typeof(v) NOT IN ('number', 'null')
               AND NOT cols[i] = ANY (right_cols) THEN
                num[i] := false;
            ELSIF jsonb_typeof(v) = 'number' OR cols[i] = ANY (right_cols) THEN
                seen[i] := true;
            END IF;
        END LOOP;
    END LOOP;

    FOR i IN 1..nc LOOP
        num[i] := num[i] AND seen[i];
    END LOOP;

    -- html: a long two-column table (the summary) in three side by side
    IF fmt = 'html' AND nc = 2 AND coalesce((sec->>'split')::boolean, false)
       AND jsonb_array_length(sec->'rows') > 12 THEN
        k := ceil(jsonb_array_length(sec->'rows') / 3.0);
        RETURN out || '<div class="kvs">'
            || (SELECT string_agg(regexp_replace(regexp_replace(
                    folio_perf_data.render_section('html', jsonb_strip_nulls(jsonb_build_object('columns', sec->'columns',
                        'labels', sec->'labels', 'right', sec->'right', 'title', '',
                        'rows', (SELECT jsonb_agg(x ORDER BY o) FROM jsonb_array_elements(sec->'rows') WITH ORDINALITY t(x, o)
                                 WHERE (o - 1) / k = g)))),
                    '^<section[^>]*><h2></h2>\n', ''), '</section>\n$', ''), '' ORDER BY g)
                FROM generate_series(0, 2) g)
            || E'</div>\n</section>\n';
    END IF;

    IF fmt = 'html' THEN
        line := '<div class="tw"><table' || CASE WHEN nc > 12 THEN ' class="wide many"'
                                                 WHEN 'query' = ANY (cols) OR nc > 8 THEN ' class="wide"' ELSE '' END
            || '><thead><tr>';
        FOR i IN 1..nc LOOP
            line := line || CASE WHEN num[i] THEN '<th class="n">' ELSE '<th>' END
                || folio_perf_data.html_escape(labels[i]) || '</th>';
        END LOOP;
        lines := lines || (line || E'</tr></thead>\n<tbody>');
        k := 0;
        FOR r IN SELECT * FROM jsonb_array_elements(sec->'rows') LOOP
            line := '<tr>';
            FOR i IN 1..nc LOOP
                k := k + 1;
                c := cells[k];
                IF kinds[i] = 'query' AND r->>cols[i] IS NOT NULL THEN
                    qn := qmap->>(r->>cols[i]);
                    line := line || '<td class="q">' || coalesce('<a href="#q' || qn || '">Q' || qn || '</a> ', '')
                        || CASE WHEN length(folio_perf_data.fold(r->>cols[i])) > 160
                                THEN '<details><summary>' || folio_perf_data.html_wrap(folio_perf_data.sql_start(r->>cols[i], 160))
                                     || '</summary><code>' || folio_perf_data.html_wrap(r->>cols[i]) || '</code></details>'
                                ELSE '<code>' || folio_perf_data.html_wrap(folio_perf_data.fold(r->>cols[i])) || '</code>' END
                        || '</td>';
                ELSIF cols[i] = 'plan' AND c = 'changed' THEN
                    line := line || '<td class="plan" title="the slowest plan has another shape">changed</td>';
                ELSIF cols[i] = 'plan' AND length(c) > 40 THEN
                    line := line || '<td><details><summary>plan</summary><pre>'
                        || folio_perf_data.html_escape(r->>cols[i]) || '</pre></details></td>';
                ELSE
                    cls := CASE WHEN num[i] THEN 'n' ELSE '' END;
                    IF cols[i] = ANY (worse_cols) AND jsonb_typeof(r->cols[i]) = 'number' THEN
                        cls := cls || CASE WHEN (r->>cols[i])::numeric >= 10 THEN ' worse'
                                           WHEN (r->>cols[i])::numeric <= -10 THEN ' better' ELSE '' END;
                    ELSIF cols[i] = 'severity' THEN
                        cls := cls || ' sev-' || c;
                    ELSIF cols[i] = 'status' AND c IN ('new', 'gone') THEN
                        cls := cls || ' st-' || c;
                    END IF;
                    line := line || CASE WHEN btrim(cls) <> '' THEN '<td class="' || btrim(cls) || '">' ELSE '<td>' END
                        || CASE WHEN num[i] OR length(c) <= 20 THEN folio_perf_data.html_escape(c)
                                ELSE folio_perf_data.html_wrap(c) END || '</td>';
                END IF;
            END LOOP;
            lines := lines || (line || '</tr>');
        END LOOP;
        RETURN out || array_to_string(lines, E'\n') || E'\n</tbody></table></div>\n</section>\n';
    END IF;

    IF fmt = 'markdown' THEN
        line := '|';
        FOR i IN 1..nc LOOP
            line := line || ' ' || folio_perf_data.md_escape(labels[i]) || ' |';
        END LOOP;
        lines := lines || line;
        line := '|';
        FOR i IN 1..nc LOOP
            line := line || CASE WHEN num[i] THEN ' ---: |' ELSE ' :--- |' END;
        END LOOP;
        lines := lines || line;
        k := 0;
        FOR r IN SELECT * FROM jsonb_array_elements(sec->'rows') LOOP
            line := '|';
            FOR i IN 1..nc LOOP
                k := k + 1;
                c := folio_perf_data.md_escape(cells[k]);
                IF cols[i] = 'plan' AND cells[k] = 'changed' THEN
                    c := '**changed**';
                END IF;
                line := line || ' ' || c || ' |';
            END LOOP;
            lines := lines || line;
        END LOOP;
        RETURN out || array_to_string(lines, E'\n') || E'\n\n';
    END IF;

    -- text
    line := '';
    FOR i IN 1..nc LOOP
        line := line || CASE WHEN i > 1 THEN ' | ' ELSE ' ' END
            || CASE WHEN num[i] THEN lpad(labels[i], w[i]) ELSE rpad(labels[i], w[i]) END;
    END LOOP;
    lines := lines || rtrim(line);
    line := '';
    FOR i IN 1..nc LOOP
        line := line || CASE WHEN i > 1 THEN '-+-' ELSE '-' END || repeat('-', w[i]);
    END LOOP;
    lines := lines || line;
    k := 0;
    FOR r IN SELECT * FROM jsonb_array_elements(sec->'rows') LOOP
        line := '';
        FOR i IN 1..nc LOOP
            k := k + 1;
            line := line || CASE WHEN i > 1 THEN ' | ' ELSE ' ' END
                || CASE WHEN num[i] THEN lpad(cells[k], w[i]) ELSE rpad(cells[k], w[i]) END;
        END LOOP;
        lines := lines || rtrim(line);
    END LOOP;
    RETURN out || array_to_string(lines, E'\n') || E'\n\n';
END
$$;

-- A section value from a query's rows (a jsonb array of objects).
CREATE FUNCTION folio_perf_data.section(title text, cols text[], rows jsonb, note text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT jsonb_strip_nulls(jsonb_build_object('title', title, 'columns', to_jsonb(cols),
                                              'note', note))
         || jsonb_build_object('rows', coalesce(rows, '[]'::jsonb))
$$;

CREATE FUNCTION folio_perf_data.check_format(fmt text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF fmt IS NULL OR fmt NOT IN ('text', 'markdown', 'json', 'html') THEN
        RAISE EXCEPTION 'unknown format "%"', coalesce(fmt, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use one of text, markdown, json, html.';
    END IF;
END
$$;

-- Round tick values for an axis from 0 to at least vmax: about 5 steps of
-- 1, 2, 2.5 or 5 times a power of ten, and never fewer than 4 labels.
CREATE FUNCTION folio_perf_data.nice_ticks(vmax numeric, integral boolean,
    OUT step numeric, OUT top numeric)
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    raw numeric := greatest(coalesce(vmax, 0), 1e-6) / 5;
    mag numeric := 10::numeric ^ floor(log(raw));
    m numeric;
BEGIN
    FOREACH m IN ARRAY ARRAY[1, 2, 2.5, 5, 10] LOOP
        step := m * mag;
        EXIT WHEN step >= raw;
    END LOOP;
    IF integral AND step < 1 THEN
        step := 1;
    END IF;
    top := greatest(ceil(greatest(coalesce(vmax, 0), 1e-6) / step), 3) * step;
END
$$;

/*
 * An inline SVG chart of time-series rows {bucket, bucket_start,
 * bucket_end, series, value}: one line per series, or stacked areas.
 * opts: {"ytitle": axis title with unit, "integral": true for counts,
 * "max_series": series beyond it summed as "other", "hline": a value
 * drawn as a dashed line (the CPU count), "hline_label": its legend,
 * "t0", "t1": the window, which the x axis spans even where no sample is}.
 * The x axis is in the session's time zone, which the axis title names.
 */
CREATE FUNCTION folio_perf_data.svg_chart(title text, pts jsonb, stacked boolean, opts jsonb DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wd int := 1200;
    ml int := 76;
    mr int := 40;
    mt int := 34;
    ph int := 250;
    pw int := wd - ml - mr;
    palette text[] := ARRAY['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd',
                            '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#aec7e8'];
    maxs int := coalesce((opts->>'max_series')::int, 10);
    integral boolean := coalesce((opts->>'integral')::boolean, false);
    hline numeric := (opts->>'hline')::numeric;
    t0 timestamptz;
    t1 timestamptz;
    b0 int;
    b1 int;
    bw numeric;
    span numeric;
    ymax numeric;
    yt record;
    series text[];
    nser int;
    s text;
    si int := 0;
    svg text[] := '{}';
    pts_txt text;
    base_txt text;
    r record;
    xstep numeric;
    tk numeric;
    x numeric;
    y numeric;
    lead numeric := 0;
    xfmt text := 'HH24:MI:SS';
    xlw numeric;
    ht int;
    legend_rows int;
    tz text := current_setting('TimeZone');
BEGIN
    IF pts IS NULL OR jsonb_array_length(pts) = 0 THEN
        RETURN '';
    END IF;
    SELECT min((p->>'bucket_start')::timestamptz), max((p->>'bucket_end')::timestamptz),
           min((p->>'bucket')::int), max((p->>'bucket')::int),
           max(extract(epoch FROM (p->>'bucket_end')::timestamptz - (p->>'bucket_start')::timestamptz))
    INTO t0, t1, b0, b1, bw FROM jsonb_array_elements(pts) p;
    -- the axis spans the window (opts t0, t1) when given; buckets without
    -- a value up to its end count 0 (an idle tail has no sessions)
    IF opts->>'t1' IS NOT NULL AND (opts->>'t1')::timestamptz > t1 AND bw > 0 THEN
        b1 := b1 + ceil(extract(epoch FROM (opts->>'t1')::timestamptz - t1) / bw)::int;
        t1 := least(t1 + (b1 - (SELECT max((p->>'bucket')::int) FROM jsonb_array_elements(pts) p)) * bw * interval '1 second',
                    (opts->>'t1')::timestamptz);
    END IF;
    -- and starts at the window's begin (opts t0): buckets before the first
    -- sample are left empty, not drawn as 0 (the sampler was not running)
    IF opts->>'t0' IS NOT NULL AND (opts->>'t0')::timestamptz < t0 THEN
        lead := extract(epoch FROM t0 - (opts->>'t0')::timestamptz);
        t0 := (opts->>'t0')::timestamptz;
    END IF;
    span := greatest(extract(epoch FROM t1 - t0), 1);
    -- series by their total, the largest first (and at the bottom of a
    -- stack); those beyond max_series are summed as "other"
    series := ARRAY(SELECT p->>'series' FROM jsonb_array_elements(pts) p
                    GROUP BY 1 ORDER BY sum((p->>'value')::numeric) DESC, 1);
    nser := least(coalesce(array_length(series, 1), 0), maxs);
    IF coalesce(array_length(series, 1), 0) > maxs THEN
        series := series[1:maxs - 1] || 'other'::text;
    END IF;
    WITH v AS (
        SELECT (p->>'bucket_start')::timestamptz AS b,
               CASE WHEN p->>'series' = ANY (series) THEN p->>'series' ELSE 'other' END AS ser,
               (p->>'value')::numeric AS val
        FROM jsonb_array_elements(pts) p)
    SELECT CASE WHEN stacked THEN (SELECT max(t) FROM (SELECT sum(val) AS t FROM v GROUP BY b) z)
                ELSE (SELECT max(t) FROM (SELECT sum(val) AS t FROM v GROUP BY b, ser) z) END
    INTO ymax;
    ymax := greatest(coalesce(ymax, 0), coalesce(hline, 0));
    yt := folio_perf_data.nice_ticks(ymax, integral);
    legend_rows := ceil((array_length(series, 1) + CASE WHEN hline IS NOT NULL THEN 1 ELSE 0 END) / 4.0);
    ht := mt + ph + 56 + 18 * legend_rows;

    svg := svg || format('<figure id="%s"><svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %s %s" role="img" aria-label="%s">',
                         folio_perf_data.slug(title), wd, ht, folio_perf_data.html_escape(folio_perf_data.fold(title)))
        || format('<text x="%s" y="18" class="ct">%s</text>', ml, folio_perf_data.html_escape(folio_perf_data.fold(title)))
        || format('<rect x="%s" y="%s" width="%s" height="%s" class="pa"/>', ml, mt, pw, ph);
    -- y axis: grid lines and labels at round values, the axis title
    tk := 0;
    WHILE tk <= yt.top + yt.step / 1000 LOOP
        y := round(mt + ph - ph * tk / yt.top, 1);
        svg := svg || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="gl"/><text x="%s" y="%s" class="ax yt" text-anchor="end">%s</text>',
                             ml, y, ml + pw, y, ml - 6, y + 4, folio_perf_data.fmt_num(tk, 3));
        tk := tk + yt.step;
    END LOOP;
    svg := svg || format('<text transform="translate(16 %s) rotate(-90)" class="at" text-anchor="middle">%s</text>',
                         mt + ph / 2, folio_perf_data.html_escape(coalesce(opts->>'ytitle', '')));
    -- x axis: ticks at round times (1 s ... 1 day apart), 4 to 10 of them
    -- with the axis' ends; under 3 s, tenths of a second
    SELECT m INTO xstep FROM unnest(ARRAY[0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
                                          7200, 10800, 21600, 43200, 86400]::numeric[]) m
    WHERE span / m <= 10 ORDER BY m LIMIT 1;
    xstep := coalesce(xstep, 86400);
    IF span >= 3 THEN
        xstep := greatest(xstep, 1);
    END IF;
    IF span / xstep < 4 AND xstep > 1 THEN
        xstep := greatest(1, floor(span / 4));
    END IF;
    IF xstep < 1 THEN
        xfmt := 'HH24:MI:SS.FF1';
    END IF;
    -- the axis' begin and end are labelled too; a round tick's label
    -- (centred) is left out where it would touch theirs (start- and
    -- end-anchored): it needs one and a half label widths and a gap
    -- (xlw: the width of an HH:MM:SS[.F] label at the axis' 12 px, with
    -- room to spare)
    xlw := 7.5 * length(to_char(t0, xfmt));
    svg := svg || format('<text x="%s" y="%s" class="ax xt" text-anchor="start">%s</text><text x="%s" y="%s" class="ax xt" text-anchor="end">%s</text>',
                         ml, mt + ph + 18, to_char(t0, xfmt), ml + pw, mt + ph + 18, to_char(t1, xfmt));
    tk := ceil(extract(epoch FROM t0) / xstep) * xstep;
    WHILE tk <= extract(epoch FROM t1) LOOP
        x := round(ml + pw * (tk - extract(epoch FROM t0)) / span, 1);
        svg := svg || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="gl"/>', x, mt, x, mt + ph + 4)
            || CASE WHEN x - ml >= 1.5 * xlw + 8 AND ml + pw - x >= 1.5 * xlw + 8
                    THEN format('<text x="%s" y="%s" class="ax xt" text-anchor="middle">%s</text>',
                                x, mt + ph + 18, to_char(to_timestamp(tk), xfmt)) ELSE '' END;
        tk := tk + xstep;
    END LOOP;
    svg := svg || format('<text x="%s" y="%s" class="at" text-anchor="middle">%s</text>',
                         ml + pw / 2, mt + ph + 38,
                         folio_perf_data.html_escape(format('Time (HH:MM:SS, %s), %s to %s', tz,
                             to_char(t0, 'YYYY-MM-DD HH24:MI:SS'), to_char(t1, 'YYYY-MM-DD HH24:MI:SS'))));
    -- the series, as steps over their buckets: one pass over the points
    -- (bucket x series grid, cumulated for stacks)
    FOR r IN
        WITH v AS (
            SELECT (p->>'bucket')::int AS g,
                   coalesce(array_position(series, p->>'series'), array_length(series, 1)) AS si,
                   (p->>'value')::numeric AS val
            FROM jsonb_array_elements(pts) p
        ), agg AS (
            SELECT gr.g, gs.si, coalesce(sum(v.val), 0) AS val
            FROM generate_series(b0, b1) AS gr(g) CROSS JOIN generate_series(1, array_length(series, 1)) AS gs(si)
            LEFT JOIN v ON v.g = gr.g AND v.si = gs.si
            GROUP BY gr.g, gs.si
        ), cum AS (
            SELECT agg.g, agg.si,
                   CASE WHEN stacked THEN sum(agg.val) OVER (PARTITION BY agg.g ORDER BY agg.si) ELSE agg.val END AS top,
                   CASE WHEN stacked THEN sum(agg.val) OVER (PARTITION BY agg.g ORDER BY agg.si) - agg.val ELSE 0 END AS bot
            FROM agg
        ), xy AS (
            SELECT cum.g, cum.si,
                   round(ml + pw * least(lead + (cum.g - b0) * bw, span) / span, 1) AS x0,
                   round(ml + pw * least(lead + (cum.g - b0 + 1) * bw, span) / span, 1) AS x1,
                   round(mt + ph - ph * cum.top / yt.top, 1) AS y_top,
                   round(mt + ph - ph * cum.bot / yt.top, 1) AS y_bot
            FROM cum)
        SELECT xy.si AS i,
               string_agg(format('%s,%s %s,%s', xy.x0, xy.y_top, xy.x1, xy.y_top), ' ' ORDER BY xy.g) AS top_pts,
               string_agg(format('%s,%s %s,%s', xy.x1, xy.y_bot, xy.x0, xy.y_bot), ' ' ORDER BY xy.g DESC) AS bot_pts
        FROM xy GROUP BY xy.si ORDER BY xy.si
    LOOP
        si := r.i;
        s := series[si];
        pts_txt := r.top_pts;
        base_txt := r.bot_pts;
        IF stacked THEN
            svg := svg || format('<polygon points="%s %s" fill="%s" fill-opacity="0.8" stroke="%s" stroke-width="0.5"><title>%s</title></polygon>',
                                 pts_txt, base_txt, palette[(si - 1) % 11 + 1], palette[(si - 1) % 11 + 1],
                                 folio_perf_data.html_escape(folio_perf_data.fold(s)));
        ELSE
            svg := svg || format('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.8"><title>%s</title></polyline>',
                                 pts_txt, palette[(si - 1) % 11 + 1], folio_perf_data.html_escape(folio_perf_data.fold(s)));
        END IF;
        svg := svg || format('<rect x="%s" y="%s" width="12" height="12" fill="%s"/><text x="%s" y="%s" class="lg">%s</text>',
                             ml + ((si - 1) % 4) * 270, mt + ph + 50 + ((si - 1) / 4) * 18, palette[(si - 1) % 11 + 1],
                             ml + ((si - 1) % 4) * 270 + 17, mt + ph + 60 + ((si - 1) / 4) * 18,
                             folio_perf_data.html_escape(folio_perf_data.sql_start(s, 32)));
    END LOOP;
    IF hline IS NOT NULL THEN
        y := round(mt + ph - ph * hline / yt.top, 1);
        svg := svg || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="hl"/>', ml, y, ml + pw, y)
            || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="hl"/><text x="%s" y="%s" class="lg">%s</text>',
                      ml + (si % 4) * 270, mt + ph + 56 + (si / 4) * 18, ml + (si % 4) * 270 + 12,
                      mt + ph + 56 + (si / 4) * 18, ml + (si % 4) * 270 + 17, mt + ph + 60 + (si / 4) * 18,
                      folio_perf_data.html_escape(coalesce(opts->>'hline_label', '')));
    END IF;
    RETURN array_to_string(svg, '') || E'</svg></figure>\n';
END
$$;

/*
 * A horizontal bar chart: bars [{label, value}] or stacked bars [{label,
 * parts: [{series, value}], value: the total, optional}], an x axis with round ticks and a title
 * (xtitle, with the unit), and a legend of the parts' series.
 */
CREATE FUNCTION folio_perf_data.svg_bars(title text, bars jsonb, xtitle text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wd int := 1200;
    lw int := 600;          -- labels
    pw int := wd - lw - 40;
    mt int := 34;
    n int := jsonb_array_length(coalesce(bars, '[]'));
    palette text[] := ARRAY['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd',
                            '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#aec7e8'];
    series text[];
    ph int;
    ht int;
    vmax numeric;
    xt record;
    svg text[] := '{}';
    r record;
    p record;
    x0 numeric;
    tk numeric;
    xx numeric;
    si int;
    legend_rows int;
BEGIN
    IF n = 0 THEN
        RETURN '';
    END IF;
    series := ARRAY(SELECT q->>'series' FROM jsonb_array_elements(bars) b, jsonb_array_elements(b->'parts') q
                    GROUP BY 1 ORDER BY sum((q->>'value')::numeric) DESC, 1);
    legend_rows := ceil(coalesce(array_length(series, 1), 0) / 4.0);
    ph := n * 22;
    ht := mt + ph + 48 + 18 * legend_rows;
    SELECT max(greatest((b->>'value')::numeric,
                        (SELECT sum((q->>'value')::numeric) FROM jsonb_array_elements(b->'parts') q)))
    INTO vmax FROM jsonb_array_elements(bars) b;
    xt := folio_perf_data.nice_ticks(vmax, false);
    svg := svg || format('<figure id="%s"><svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %s %s" role="img" aria-label="%s">',
                         folio_perf_data.slug(title), wd, ht, folio_perf_data.html_escape(folio_perf_data.fold(title)))
        || format('<text x="4" y="18" class="ct">%s</text>', folio_perf_data.html_escape(folio_perf_data.fold(title)))
        || format('<rect x="%s" y="%s" width="%s" height="%s" class="pa"/>', lw, mt, pw, ph);
    tk := 0;
    WHILE tk <= xt.top + xt.step / 1000 LOOP
        xx := round(lw + pw * tk / xt.top, 1);
        svg := svg || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="gl"/><text x="%s" y="%s" class="ax xt" text-anchor="middle">%s</text>',
                             xx, mt, xx, mt + ph + 4, xx, mt + ph + 17, folio_perf_data.fmt_num(tk, 3));
        tk := tk + xt.step;
    END LOOP;
    svg := svg || format('<text x="%s" y="%s" class="at" text-anchor="middle">%s</text>',
                         lw + pw / 2, mt + ph + 34, folio_perf_data.html_escape(coalesce(xtitle, '')));
    FOR r IN SELECT b, o FROM jsonb_array_elements(bars) WITH ORDINALITY AS t(b, o) LOOP
        svg := svg || format('<text x="%s" y="%s" class="lg yt" text-anchor="end">%s<title>%s</title></text>', lw - 6, mt + (r.o - 1) * 22 + 15,
                             folio_perf_data.html_escape(folio_perf_data.sql_start(r.b->>'label', 86)),
                             folio_perf_data.html_escape(folio_perf_data.fold(r.b->>'label')));
        IF r.b ? 'parts' THEN
            x0 := 0;
            FOR p IN SELECT q->>'series' AS s, (q->>'value')::numeric AS v
                     FROM jsonb_array_elements(r.b->'parts') q
                     ORDER BY array_position(series, q->>'series') LOOP
                si := array_position(series, p.s);
                svg := svg || format('<rect x="%s" y="%s" width="%s" height="16" fill="%s"><title>%s: %s</title></rect>',
                                     round(lw + pw * x0 / xt.top, 1), mt + (r.o - 1) * 22 + 3,
                                     round(pw * p.v / xt.top, 1), palette[(si - 1) % 11 + 1],
                                     folio_perf_data.html_escape(folio_perf_data.fold(p.s)), folio_perf_data.fmt_sig(p.v));
                x0 := x0 + p.v;
            END LOOP;
        ELSE
            x0 := (r.b->>'value')::numeric;
            svg := svg || format('<rect x="%s" y="%s" width="%s" height="16" fill="#1f77b4"/>',
                                 lw, mt + (r.o - 1) * 22 + 3, round(pw * x0 / xt.top, 1));
        END IF;
        -- a stacked bar is labelled with its total when given (the parts
        -- are rounded, their sum may differ from it in the last digit)
        svg := svg || format('<text x="%s" y="%s" class="ax">%s</text>', round(lw + pw * x0 / xt.top + 4, 1),
                             mt + (r.o - 1) * 22 + 15, folio_perf_data.fmt_sig(coalesce((r.b->>'value')::numeric, x0)));
    END LOOP;
    IF series IS NOT NULL THEN
        FOR si IN 1..coalesce(array_length(series, 1), 0) LOOP
            -- four to a row across the whole width, each name in its
            -- column (wait events run to 30 characters)
            svg := svg || format('<rect x="%s" y="%s" width="12" height="12" fill="%s"/><text x="%s" y="%s" class="lg">%s</text>',
                                 4 + ((si - 1) % 4) * 290, mt + ph + 42 + ((si - 1) / 4) * 18, palette[(si - 1) % 11 + 1],
                                 4 + ((si - 1) % 4) * 290 + 16, mt + ph + 52 + ((si - 1) / 4) * 18,
                                 folio_perf_data.html_escape(folio_perf_data.sql_start(series[si], 32)));
        END LOOP;
    END IF;
    RETURN array_to_string(svg, '') || E'</svg></figure>\n';
END
$$;

-- Key/value rows of an object, as a two-column section, each value
-- formatted by its key's kind.
CREATE FUNCTION folio_perf_data.kv_section(title text, obj jsonb, keys text[])
RETURNS jsonb
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT folio_perf_data.section(title, ARRAY['metric', 'value'],
      (SELECT coalesce(jsonb_agg(jsonb_build_object('metric', folio_perf_data.col_label(k), 'value',
                 CASE WHEN obj->k IS NULL OR jsonb_typeof(obj->k) = 'null' THEN to_jsonb('unavailable'::text)
                      ELSE to_jsonb(folio_perf_data.fmt_value(obj->k, folio_perf_data.col_kind(k))) END) ORDER BY o), '[]')
       FROM unnest(keys) WITH ORDINALITY AS u(k, o)))
    || '{"right": ["value"]}'
$$;

-- The document's style sheet (one for the report and the comparison).
CREATE FUNCTION folio_perf_data.html_head(title text)
RETURNS text
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
    || '<meta name="viewport" content="width=device-width, initial-scale=1"><title>'
    || folio_perf_data.html_escape(folio_perf_data.fold(title)) || '</title><style>'
    || 'body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;padding:20px 28px;color:#1d2228;max-width:1500px}'
    || 'h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:30px 0 8px;border-bottom:2px solid #d5dbe1;padding-bottom:3px}'
    || '.sub{color:#4a5560;margin:0 0 12px}'
    || 'dl.meta{display:grid;grid-template-columns:max-content 1fr max-content 1fr;gap:2px 14px;margin:8px 0 14px;font-size:13px}'
    || 'dl.meta dt{color:#5c6670}dl.meta dd{margin:0;overflow-wrap:anywhere}'
    || '.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(190px,1fr));gap:10px;margin:10px 0 6px}'
    || '.card{border:1px solid #d5dbe1;border-radius:6px;padding:8px 12px;background:#f8fafb}'
    || '.card .v{font-size:21px;font-weight:600}.card .k{font-size:12px;color:#5c6670}.card .d{font-size:12px;color:#4a5560}'
    || '.card.warn{border-color:#e0a100;background:#fff8e1}.card.ok{border-color:#7cb342;background:#f1f8e9}'
    || 'nav.toc ol{columns:3;font-size:13px;margin:4px 0;padding-left:22px}nav.toc a{color:#1a5fa8;text-decoration:none}'
    || 'table{border-collapse:collapse;margin:6px 0;font-size:12.5px;max-width:100%}'
    || 'th,td{border:1px solid #dde2e6;padding:3px 6px;vertical-align:top;overflow-wrap:break-word}'
    || 'th{background:#eef1f4;text-align:left;font-weight:600}th.n,td.n{text-align:right;font-variant-numeric:tabular-nums}td.n{white-space:nowrap}'
    || 'table.wide{width:100%}table.many{font-size:11.5px}table.many th,table.many td{padding:2px 4px}td.q code{white-space:pre-wrap;overflow-wrap:anywhere}'
    || 'code,pre{font:11.5px/1.35 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-word}'
    || 'pre{background:#f6f8fa;border:1px solid #e3e7eb;padding:6px 8px;margin:4px 0}'
    || '.kvs{display:flex;flex-wrap:wrap;gap:0 18px;align-items:flex-start}'
    || 'summary{cursor:pointer}.note{color:#4a5560;font-style:italic}'
    || 'td.worse{background:#fde2e1;color:#a4161a;font-weight:600}td.better{background:#e3f4e1;color:#22672a;font-weight:600}'
    || 'td.plan{background:#fff1c2;font-weight:600}td.plan::before{content:"\26A0  "}'
    || 'td.sev-warning{color:#a15c00;font-weight:600}td.st-new{color:#1a5fa8}td.st-gone{color:#777}'
    || 'figure{margin:10px 0}.chart{width:100%;height:auto;display:block}'
    || '.ct{font-weight:600;font-size:15px}.ax{font-size:12px;fill:#333}.at{font-size:12.5px;fill:#222}.lg{font-size:12.5px;fill:#222}.yt{font-size:12px}'
    || '.pa{fill:#fbfcfd;stroke:#9aa5b1}.gl{stroke:#e3e7eb}.hl{stroke:#c62828;stroke-width:2;stroke-dasharray:7 4}'
    || '.sql p{margin:10px 0 2px}footer{margin-top:34px;border-top:1px solid #d5dbe1;padding-top:6px;font-size:12px;color:#5c6670}'
    -- tables of many columns (a comparison's 15) keep clear of the page's
    -- edge at 1000 px with long release names in their headers and large
    -- changes in bold: on narrow pages smaller type and padding, and their
    -- headers may break inside a word
    || 'th[data-sort]{cursor:pointer}@media (max-width:1100px){body{padding:12px 12px}table.many{font-size:10.5px}'
    || 'table.many th,table.many td{padding:2px 3px}table.many th{overflow-wrap:anywhere}}'
    || '@media print{body{padding:0;max-width:none;font-size:11px}nav.toc{display:none}h2{break-after:avoid}'
    || 'figure,tr,.card,.sql{break-inside:avoid}details{display:block}details>summary{list-style:none}'
    || 'a{color:inherit;text-decoration:none}.cards{grid-template-columns:repeat(3,1fr)}}'
    || '</style></head><body>'
$$;

-- The footer and the optional sorting script (the page reads without it).
CREATE FUNCTION folio_perf_data.html_foot()
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT '<footer>Generated by folio_perf '
    || folio_perf_data.html_escape(coalesce((SELECT e.extversion FROM pg_catalog.pg_extension e
                                              WHERE e.extname = 'folio_perf'), '?'))
    || ' at ' || to_char(pg_catalog.clock_timestamp(), 'YYYY-MM-DD HH24:MI:SS TZ')
    || ' on PostgreSQL ' || folio_perf_data.html_escape(pg_catalog.current_setting('server_version'))
    || '.</footer>'
    || '<script>document.querySelectorAll("table").forEach(function(t){'
    || 't.querySelectorAll("th").forEach(function(h,i){h.dataset.sort="";h.title="sort";h.onclick=function(){'
    || 'var b=t.tBodies[0],r=Array.from(b.rows),d=h.dataset.sort==="a"?-1:1;h.dataset.sort=d>0?"a":"d";'
    || 'function v(x){var s=x.cells[i]?x.cells[i].textContent.trim():"";var m=s.replace(/[,%+]/g,"").match(/^-?[0-9.]+/);'
    || 'if(!m)return s.toLowerCase();var n=parseFloat(m[0]),u=s.match(/ (kB|MB|GB|TB)/);'
    || 'if(u)n*=Math.pow(1024,["kB","MB","GB","TB"].indexOf(u[1])+1);return n;}'
    || 'r.sort(function(x,y){var a=v(x),c=v(y);return (a>c?1:a<c?-1:0)*d;});r.forEach(function(x){b.appendChild(x);});};});});'
    || E'</script>\n</body></html>\n'
$$;
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
    BEGIN
        SELECT coalesce(jsonb_agg(jsonb_build_object('queryid', x.queryid, 'tenant', x.tenant,
                   'module', x.module, 'first_calls', x.c1, 'last_calls', x.c2,
                   'first_mean_ms', x.m1, 'last_mean_ms', x.m2,
                   'mean_change_pct', round((100 * (x.m2 - x.m1) / nullif(x.m1, 0))::numeric, 1),
                   'query', x.query) ORDER BY x.m2 / nullif(x.m1, 0) DESC NULLS LAST), '[]')
        INTO trend
        FROM (SELECT t.queryid, t.tenant, t.module, min(t.query) AS query,
                     sum(t.calls) FILTER (WHERE t.part = 1) AS c1,
                     sum(t.calls) FILTER (WHERE t.part = 2) AS c2,
                     sum(t.total_exec_ms) FILTER (WHERE t.part = 1)
                       / nullif(sum(t.calls) FILTER (WHERE t.part = 1), 0) AS m1,
                     sum(t.total_exec_ms) FILTER (WHERE t.part = 2)
                       / nullif(sum(t.calls) FILTER (WHERE t.part = 2), 0) AS m2
              FROM folio_perf_data.trend(p_window, 2, false) t
              WHERE t.kind = 'statement'
              GROUP BY t.queryid, t.tenant, t.module) x
        WHERE x.c1 >= 10 AND x.c2 >= 10;
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
        WHERE (r->>'mean_change_pct')::numeric >= 50), '[]');
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
            SELECT sum(x.c) FILTER (WHERE x.part = 1), sum(x.c) FILTER (WHERE x.part = 2) INTO c1, c2
            FROM (SELECT t.part, sum(t.calls) / extract(epoch FROM max(t.part_end) - min(t.part_begin)) AS c
                  FROM folio_perf_data.trend(p_window, 2, false) t WHERE t.kind = 'statement'
                  GROUP BY t.part) x;
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
            -- a remote target: its name, and the evidence it cannot give
            || CASE WHEN e.target_id IS NULL THEN '{}'::jsonb ELSE jsonb_build_object(
                'target', (SELECT t.name FROM folio_perf_data.target t WHERE t.target_id = e.target_id),
                'unavailable', jsonb_build_array(
                    'attribution by relations (needs folio_perf preloaded on the server itself)',
                    'per-backend CPU')) END
            -- statement counters the server's pg_stat_statements lacks (NULL
            -- in top_statements)
            || CASE WHEN e.server_version_num < 180000 THEN jsonb_build_object(
                'not_counted', jsonb_build_array(
                    'wal_buffers_full, parallel_workers_to_launch and parallel_workers_launched of statements: '
                    || 'pg_stat_statements counts them from PostgreSQL 18 on')) ELSE '{}'::jsonb END,
        'data_quality', flags,
        'summary', summ,
        'verdict', verdict,
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
                  CROSS JOIN LATERAL (
                      SELECT x.n_live_tup, x.gone FROM folio_perf_data.rel x
                      WHERE x.rel_key_id = k.rel_key_id AND x.snap_id <= wb.end_snap
                      ORDER BY x.snap_id DESC LIMIT 1) r
                  WHERE k.dbid = e.dbid AND coalesce(k.target_id, 0) = coalesce(e.target_id, 0)
                    AND k.module = 'mod_inventory_storage'
                    AND k.relname IN ('instance', 'holdings_record', 'item') AND k.relkind = 'r'
                    AND NOT r.gone
                  GROUP BY 1, 2) x),
        'connections', conn,
        'db_load', load,
        'cpu', cpu,
        'db_load_by_statement_wait', stmt_waits,
        'timeseries', jsonb_build_object('connections', ts_conn, 'connections_by_module', ts_conn_mod,
                                         'db_load_by_wait_event_type', ts_load),
        'trend', jsonb_build_object('note', trend_note, 'statements', trend));
    -- data-import jobs and FOLIO operations (135_operations.sql)
    doc := doc || jsonb_build_object('folio_operations', folio_perf_data.operations_doc(p_window));
    -- plans of the top statements
    doc := folio_perf_data.report_plans(doc, p_window);
    RETURN doc;
END
$$;


/*
 * folio_perf_report(window_id, format): the whole window as one document.
 */
CREATE FUNCTION folio_perf_report(window_id bigint, format text DEFAULT 'text')
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
    doc := folio_perf_data.report_doc(window_id);
    IF fmt = 'json' THEN
        RETURN jsonb_pretty(doc);
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
             WHERE r->>'dimension' NOT IN ('sampler', 'statement_wait_event')));
        secs := secs || folio_perf_data.section('CPU', ARRAY['dimension', 'key', 'cpu_seconds', 'pct_of_host_capacity', 'pct_of_db_cpu'],
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
                   coalesce('of the host; host busy ' || nullif(folio_perf_data.fmt_value(summ->'host_cpu_pct', 'pct'), '') || ' %', 'needs the sampler and /proc')),
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
            out := out || folio_perf_data.render_section('html', sec, qmap);
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
    RETURN QUERY
    WITH s AS (
        SELECT 'b'::text AS side, k.tenant, k.module, k.toplevel, k.text_id, k.userid,
               coalesce(t.text_md5::text, k.queryid::text) AS h, t.query AS q,
               d.calls, d.total_exec_time, d.rows
        FROM folio_perf_data.stmt_delta(bw.begin_snap, bw.end_snap) d
        JOIN folio_perf_data.stmt_key k ON k.key_id = d.key_id
        LEFT JOIN folio_perf_data.stmt_text t ON t.key_id = k.key_id
        WHERE d.calls > 0 AND NOT k.housekeeping AND k.toplevel
        UNION ALL
        SELECT 'n', k.tenant, k.module, k.toplevel, k.text_id, k.userid,
               coalesce(t.text_md5::text, k.queryid::text), t.query,
               d.calls, d.total_exec_time, d.rows
        FROM folio_perf_data.stmt_delta(nw.begin_snap, nw.end_snap) d
        JOIN folio_perf_data.stmt_key k ON k.key_id = d.key_id
        LEFT JOIN folio_perf_data.stmt_text t ON t.key_id = k.key_id
        WHERE d.calls > 0 AND NOT k.housekeeping AND k.toplevel
    ), g AS (
        SELECT s.h, s.tenant, s.module, min(s.q) AS q,
               bool_and(s.q IS DISTINCT FROM '<insufficient privilege>') AS visible,
               sum(s.calls) FILTER (WHERE side = 'b') AS b_calls,
               sum(s.calls) FILTER (WHERE side = 'n') AS n_calls,
               sum(s.total_exec_time) FILTER (WHERE side = 'b') AS b_time,
               sum(s.total_exec_time) FILTER (WHERE side = 'n') AS n_time,
               sum(s.rows) FILTER (WHERE side = 'b') AS b_rows,
               sum(s.rows) FILTER (WHERE side = 'n') AS n_rows
        FROM s GROUP BY s.h, s.tenant, s.module
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
         nl AS (SELECT * FROM @extschema@.folio_perf_db_load($2) WHERE dimension IN ('total', 'module', 'wait_event_type'))
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
BEGIN
    PERFORM folio_perf_data.check_format(fmt);
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
        'verdict', folio_perf_data.operations_findings(cmp));
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
    -- the verdict and the FOLIO operations (135_operations.sql)
    secs := secs || folio_perf_data.operations_compare_sections(cmp, base_window, new_window);

    -- statements: one row per statement with the seeds' columns, the
    -- top_n by total time of both windows (a 24-hour soak has thousands;
    -- the json format and folio_perf_compare_rows() have them all)
    SELECT count(DISTINCT r.key) INTO n_stmt
    FROM unnest(cmp) r WHERE r.section = 'statement';
    secs := secs || (folio_perf_data.section('Statements',
        ARRAY['tenant', 'module', 'status', 'calls_base', 'calls_new', 'calls_delta_pct',
              'mean_ms_base', 'mean_ms_new', 'mean_delta_ms', 'mean_delta_pct', 'total_ms_base', 'total_ms_new',
              'total_delta_pct', 'plan', 'query'],
        (SELECT jsonb_agg(x ORDER BY coalesce((x->>'total_ms_new')::numeric, 0) + coalesce((x->>'total_ms_base')::numeric, 0) DESC)
         FROM (SELECT x FROM (SELECT jsonb_build_object('tenant', min(r.tenant), 'module', min(r.module),
                   'status', min(r.status),
                   'calls_base', max(r.base) FILTER (WHERE r.metric = 'calls'),
                   'calls_new', max(r.new) FILTER (WHERE r.metric = 'calls'),
                   'calls_delta_pct', max(r.delta_pct) FILTER (WHERE r.metric = 'calls'),
                   'mean_ms_base', max(r.base) FILTER (WHERE r.metric = 'mean_exec_ms'),
                   'mean_ms_new', max(r.new) FILTER (WHERE r.metric = 'mean_exec_ms'),
                   'mean_delta_ms', max(r.delta) FILTER (WHERE r.metric = 'mean_exec_ms'),
                   'mean_delta_pct', max(r.delta_pct) FILTER (WHERE r.metric = 'mean_exec_ms'),
                   'total_ms_base', max(r.base) FILTER (WHERE r.metric = 'total_exec_ms'),
                   'total_ms_new', max(r.new) FILTER (WHERE r.metric = 'total_exec_ms'),
                   'total_delta_pct', max(r.delta_pct) FILTER (WHERE r.metric = 'total_exec_ms'),
                   'plan', CASE bool_or(r.plan_changed) WHEN true THEN 'changed' WHEN false THEN 'same' END,
                   'query', min(r.query)) AS x
               FROM unnest(cmp) r WHERE r.section = 'statement'
               GROUP BY r.key, r.tenant, r.module) y
               ORDER BY coalesce((x->>'total_ms_new')::numeric, 0) + coalesce((x->>'total_ms_base')::numeric, 0) DESC
               LIMIT top_n) z),
        CASE WHEN n_stmt > top_n THEN format('The %s of %s statements with the most time in the two windows; the json format and folio_perf_compare_rows() have all.', top_n, n_stmt) END)
        || jsonb_build_object('id', 'statements', 'worse_up', '["mean_delta_pct", "total_delta_pct"]'::jsonb,
            'labels', jsonb_build_array('Tenant', 'Module', 'Status', 'Calls ' || bname, 'Calls ' || nname, 'Calls Delta, %',
                'Mean ' || bname || ', ms', 'Mean ' || nname || ', ms', 'Mean Delta, ms', 'Mean Delta, %',
                'Total ' || bname || ', ms', 'Total ' || nname || ', ms', 'Total Delta, %', 'Plan', 'Statement')));
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
                   'time_delta_pct', max(r.delta_pct) FILTER (WHERE r.metric = 'statement_time_ms'),
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
        || jsonb_build_object('id', 'modules', 'worse_up', '["time_delta_pct"]'::jsonb,
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
                 FROM unnest(cmp) r WHERE r.section IN ('connections', 'db_load')), '[]'))
        || CASE WHEN NOT EXISTS (SELECT 1 FROM unnest(cmp) r WHERE r.section IN ('connections', 'db_load'))
                THEN jsonb_build_object('note', 'No sampler data in these windows: connections and DB load need folio_perf preloaded with folio_perf.sample_interval > 0.')
                ELSE '{}'::jsonb END);

    qmap := folio_perf_data.sql_refs(secs);
    IF fmt = 'html' THEN
        out := out || (folio_perf_data.html_head(title)
            || '<header><h1>' || folio_perf_data.html_escape(folio_perf_data.fold(title)) || '</h1>'
            || '<p class="sub">' || folio_perf_data.html_escape(folio_perf_data.fold(format('%s (base, window %s) against %s (new, window %s)',
                   bl, base_window, nl, new_window)))
            || '. Red: slower by 10 % or more; green: faster by 10 % or more; '
            || '&#9888;: the slowest plan changed its shape.</p></header>'
            || '<nav class="toc"><h2>Contents</h2><ol>'
            || (SELECT string_agg(format('<li><a href="#%s">%s</a></li>', s->>'id', folio_perf_data.html_escape(s->>'title')), '')
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
/* sql/parts/135_operations.sql - FOLIO operations: data-import jobs, business operations and their DB cost, their report and compare sections */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

------------------------------------------------------------------------
--
-- FOLIO keeps its business facts in its own tables: a check-out creates a
-- row of <tenant>_mod_circulation_storage.loan, a check-in one of
-- check_in, a data-import job is a row of
-- <tenant>_mod_source_record_manager.job_execution.  An operation is
-- counted from the window's own relation statistics (the inserts, updates
-- or deletes of one table of one module, per tenant), or, for imported
-- records, from the data-import jobs that completed in the window; the
-- tenant's DB time, statements, rows written and WAL of the window are
-- then divided by the count.
--
-- Definitions are declarative (module, relation, counter): nothing a
-- definition holds is ever run as SQL, so that a writer who adds one
-- cannot make the extension's owner run anything.  job_execution is the
-- only tenant table read, by a fixed query, after checking that it is an
-- ordinary table (a view or a foreign table of the same name could run
-- its owner's functions with the reader's rights), and every column goes
-- through its type's output function (format('%s')), never a cast that a
-- type's owner could have defined.
------------------------------------------------------------------------

CREATE TABLE folio_perf_data.operation (
    operation    text PRIMARY KEY
                 CHECK (operation ~ '^[a-z][a-z0-9_]{0,62}$'),
    module       text NOT NULL
                 CHECK (module ~ '^[a-z][a-z0-9_]{0,62}$'),
    relation     text NOT NULL
                 CHECK (relation ~ '^[a-z_][a-z0-9_$]{0,62}$'),
    counter      text NOT NULL DEFAULT 'inserts'
                 CHECK (counter IN ('inserts', 'updates', 'deletes', 'rows_written')),
    counted_from text NOT NULL DEFAULT 'relation'
                 CHECK (counted_from IN ('relation', 'data_import_jobs')),
    description  text,
    builtin      boolean NOT NULL DEFAULT false
);

INSERT INTO folio_perf_data.operation
    (operation, module, relation, counter, counted_from, description, builtin)
VALUES
    ('check_out', 'mod_circulation_storage', 'loan', 'inserts', 'relation',
     'a check-out creates a loan', true),
    ('check_in', 'mod_circulation_storage', 'check_in', 'inserts', 'relation',
     'a check-in is logged in check_in', true),
    ('request_created', 'mod_circulation_storage', 'request', 'inserts', 'relation',
     'a request (hold, page, recall) placed', true),
    ('record_imported', 'mod_source_record_storage', 'records_lb', 'inserts', 'data_import_jobs',
     'records of the data-import jobs completed in the window; without one, records stored in SRS', true),
    ('instance_created', 'mod_inventory_storage', 'instance', 'inserts', 'relation',
     'an inventory instance created', true),
    ('instance_updated', 'mod_inventory_storage', 'instance', 'updates', 'relation',
     'an inventory instance updated (data-import update jobs)', true),
    ('holdings_created', 'mod_inventory_storage', 'holdings_record', 'inserts', 'relation',
     'a holdings record created', true),
    ('item_created', 'mod_inventory_storage', 'item', 'inserts', 'relation',
     'an item created', true),
    ('user_created', 'mod_users', 'users', 'inserts', 'relation',
     'a user created', true),
    ('fee_fine_charged', 'mod_feesfines', 'accounts', 'inserts', 'relation',
     'a fee/fine charged to a patron', true),
    ('order_line_created', 'mod_orders_storage', 'po_line', 'inserts', 'relation',
     'a purchase order line created', true),
    ('invoice_created', 'mod_invoice_storage', 'invoices', 'inserts', 'relation',
     'an invoice created', true);

-- The built-in definitions are part of the extension: they cannot be
-- changed or deleted, and pg_dump keeps only the others
-- (150_privileges.sql).  Define your own under another name.
CREATE FUNCTION folio_perf_data.operation_guard()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
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
CREATE TRIGGER operation_guard BEFORE INSERT OR UPDATE OR DELETE ON folio_perf_data.operation
    FOR EACH ROW EXECUTE FUNCTION folio_perf_data.operation_guard();

-- The operations a user can read and a writer can add to.
CREATE VIEW folio_perf_operation_definitions AS
SELECT o.operation, o.module, o.relation, o.counter, o.counted_from, o.description, o.builtin
FROM folio_perf_data.operation o;

/*
 * The job_execution rows of one tenant schema that ran between t0 and t1
 * (started before t1, not finished before t0), read on this server
 * (p_target NULL) or over libpq on a remote target, every value as text.
 * No rows if the schema has no ordinary table job_execution with the
 * module's columns (timestamptz started_date and completed_date, uuid id
 * and parent_job_id, an integer or numeric progress_total), or if
 * the role reading it (a remote target's collector) may not read it.  Reads as the
 * extension's owner: owner only (150_privileges.sql).
 */
CREATE FUNCTION folio_perf_data.di_jobs_read(p_target int, p_schema text,
    t0 timestamptz, t1 timestamptz)
RETURNS TABLE(id text, hrid text, parent_job_id text, subordination_type text,
    file_name text, progress_current text, progress_total text,
    started text, completed text, status text, job_profile text, parts_total text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
-- a table held by an ALTER or VACUUM FULL is skipped, not waited for
SET lock_timeout = '2s'
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
               -- the columns compared or summed (parent_job_id = id, the
               -- sum of progress_total) must be of the built-in types: an
               -- operator or aggregate applied to a type the module's role
               -- owns could use an implicit cast it defined, run as the owner
               (SELECT pg_catalog.count(*) FROM pg_catalog.pg_attribute a
                WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND NOT a.attisdropped
                  AND ((a.attname OPERATOR(pg_catalog.=) ANY ('{id,parent_job_id}'::pg_catalog.name[])
                        AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.uuid'::pg_catalog.regtype)
                       OR (a.attname OPERATOR(pg_catalog.=) 'progress_total'
                           AND a.atttypid OPERATOR(pg_catalog.=) ANY (ARRAY['pg_catalog.int2'::pg_catalog.regtype,
                               'pg_catalog.int4'::pg_catalog.regtype, 'pg_catalog.int8'::pg_catalog.regtype,
                               'pg_catalog.numeric'::pg_catalog.regtype]::pg_catalog.oid[])))) AS ntyped
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
        WHERE n.nspname OPERATOR(pg_catalog.=) $1 AND c.relname OPERATOR(pg_catalog.=) 'job_execution'$q$;
BEGIN
    IF p_schema IS NULL THEN
        RETURN;
    END IF;
    IF p_target IS NULL THEN
        EXECUTE check_sql INTO chk USING p_schema;
    ELSE
        SELECT * INTO chk FROM folio_perf_data.remote_query(p_target, check_sql, ARRAY[p_schema])
            AS r(oid oid, relkind text, started_tz boolean, completed_tz boolean, ncols bigint,
                 readable boolean, has_deleted boolean, ntyped bigint);
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
    IF p_target IS NULL THEN
        -- hold the table: it cannot be dropped and replaced by a view now
        BEGIN
            EXECUTE format('LOCK TABLE ONLY %I.job_execution IN ACCESS SHARE MODE', p_schema);
        EXCEPTION WHEN lock_not_available THEN
            RAISE NOTICE 'data-import jobs of schema "%" skipped: job_execution is locked', p_schema;
            RETURN;
        END;
        oid1 := pg_catalog.to_regclass(format('%I.job_execution', p_schema));
        IF oid1 IS DISTINCT FROM chk.oid THEN
            RETURN;
        END IF;
    END IF;
    -- every value through its type's output function; timestamps in UTC,
    -- ISO 8601, whatever the server's DateStyle and TimeZone
    SELECT string_agg(format('CASE WHEN j.%1$I IS NULL THEN NULL ELSE pg_catalog.format(''%%s'', j.%1$I) END AS %2$I', c[1], c[2]), ', ')
    INTO cols
    FROM (VALUES (ARRAY['id', 'id']), (ARRAY['hrid', 'hrid']), (ARRAY['parent_job_id', 'parent_job_id']),
                 (ARRAY['subordination_type', 'subordination_type']), (ARRAY['file_name', 'file_name']),
                 (ARRAY['progress_current', 'progress_current']), (ARRAY['progress_total', 'progress_total']),
                 (ARRAY['status', 'status']), (ARRAY['job_profile_name', 'job_profile'])) v(c);
    q := format($q$
        SELECT %s,
               pg_catalog.to_char(pg_catalog.timezone('UTC', j.started_date), 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS started,
               pg_catalog.to_char(pg_catalog.timezone('UTC', j.completed_date), 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS completed,
               -- a split file: the records of its parts (its own total is a placeholder)
               CASE WHEN pg_catalog.format('%%s', j.subordination_type) OPERATOR(pg_catalog.=) 'COMPOSITE_PARENT'
                    THEN (SELECT pg_catalog.format('%%s', pg_catalog.sum(c.progress_total))
                          FROM ONLY %I.job_execution c
                          WHERE c.parent_job_id OPERATOR(pg_catalog.=) j.id AND c.id OPERATOR(pg_catalog.<>) j.id
                            AND pg_catalog.format('%%s', c.subordination_type) OPERATOR(pg_catalog.=) 'COMPOSITE_CHILD'
                            %s
                          HAVING pg_catalog.count(c.progress_total) OPERATOR(pg_catalog.>) 0) END AS parts_total
        FROM ONLY %I.job_execution j
        WHERE j.started_date IS NOT NULL
          AND j.started_date OPERATOR(pg_catalog.<) $2::pg_catalog.timestamptz
          AND (j.completed_date IS NULL OR j.completed_date OPERATOR(pg_catalog.>=) $1::pg_catalog.timestamptz)
          %s$q$,
        cols, p_schema,
        CASE WHEN chk.has_deleted THEN 'AND c.is_deleted IS NOT TRUE' ELSE '' END, p_schema,
        CASE WHEN chk.has_deleted THEN 'AND j.is_deleted IS NOT TRUE' ELSE '' END);
    IF p_target IS NULL THEN
        RETURN QUERY EXECUTE 'SELECT x.id, x.hrid, x.parent_job_id, x.subordination_type, x.file_name,
                                     x.progress_current, x.progress_total, x.started, x.completed,
                                     x.status, x.job_profile, x.parts_total FROM (' || q || ') x'
            USING t0::text, t1::text;
    ELSE
        RETURN QUERY
        SELECT r.id, r.hrid, r.parent_job_id, r.subordination_type, r.file_name,
               r.progress_current, r.progress_total, r.started, r.completed, r.status, r.job_profile,
               r.parts_total
        FROM folio_perf_data.remote_query(p_target, q,
                 ARRAY[to_char(timezone('UTC', t0), 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
                       to_char(timezone('UTC', t1), 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')])
            AS r(id text, hrid text, parent_job_id text, subordination_type text, file_name text,
                 progress_current text, progress_total text, status text, job_profile text,
                 started text, completed text, parts_total text);
    END IF;
END
$fn$;

/*
 * folio_perf_data_import_jobs(window_id): the data-import jobs of every
 * tenant that ran during the window, read from each tenant's
 * mod_source_record_manager.job_execution (on the window's remote target
 * over libpq) when this is called.  A job is what the data-import log of
 * FOLIO lists: a single file (PARENT_SINGLE), one file of a multi-file
 * upload (CHILD), or a file split into parts (COMPOSITE_PARENT, whose
 * parts, COMPOSITE_CHILD, are left out); the container of a multi-file
 * upload (PARENT_MULTIPLE) and deleted jobs are left out too.  Runs as the
 * extension's owner so that readers see the jobs (not the tenants'
 * other data).
 */
CREATE FUNCTION folio_perf_data_import_jobs(window_id bigint)
RETURNS TABLE(tenant text, job_id uuid, hrid bigint, file_name text,
    job_profile text, status text, records int, started timestamptz,
    completed timestamptz, duration interval, records_per_minute numeric,
    overlap text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
    e folio_perf_data.snapshot;
    s record;
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
    SELECT * INTO e FROM folio_perf_data.snapshot x WHERE x.snap_id = wb.end_snap;
    -- a local window of another database: its tables are not here
    IF e.target_id IS NULL AND e.dbid <> (SELECT d.oid FROM pg_catalog.pg_database d
                                          WHERE d.datname = pg_catalog.current_database()) THEN
        RETURN;
    END IF;
    IF e.target_id IS NOT NULL AND NOT EXISTS (
        SELECT FROM folio_perf_data.target t WHERE t.target_id = e.target_id AND t.dropped_at IS NULL) THEN
        RAISE EXCEPTION 'the remote target of window % has been dropped', window_id
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Data-import jobs are read from the target''s job_execution tables when asked for.',
                  HINT = 'Add the target again with folio_perf_target_add(name, conninfo).';
    END IF;
    -- the tenants' job_execution tables the window's end snapshot saw
    FOR s IN
        SELECT DISTINCT k.nspname::text AS nspname, k.tenant
        FROM folio_perf_data.rel_key k
        WHERE k.dbid = e.dbid AND k.target_id IS NOT DISTINCT FROM e.target_id
          AND k.module = 'mod_source_record_manager' AND k.relname = 'job_execution'
          AND k.relkind = 'r' AND k.first_snap <= wb.end_snap
          AND (k.dropped_snap IS NULL OR k.dropped_snap > wb.end_snap)
        ORDER BY 2, 1
    LOOP
        RETURN QUERY
        WITH j AS (
            SELECT r.id::uuid AS id, r.hrid::bigint AS hrid, r.subordination_type AS sub,
                   r.file_name AS fname, r.job_profile AS prof, r.status AS st,
                   coalesce(r.parts_total, r.progress_total)::bigint AS total,
                   r.started::timestamptz AS t_s, r.completed::timestamptz AS t_c
            FROM folio_perf_data.di_jobs_read(e.target_id, s.nspname, wb.begin_at, wb.end_at) r
        )
        SELECT s.tenant, j.id, j.hrid, j.fname, j.prof, j.st, j.total::int, j.t_s, j.t_c,
               j.t_c - j.t_s,
               CASE WHEN j.t_c > j.t_s AND j.total IS NOT NULL
                    THEN round(j.total / (extract(epoch FROM j.t_c - j.t_s) / 60), 1) END,
               CASE WHEN j.t_s >= wb.begin_at AND j.t_c <= wb.end_at THEN 'whole'
                    WHEN j.t_s >= wb.begin_at THEN 'started'
                    WHEN j.t_c <= wb.end_at THEN 'ended'
                    ELSE 'spans' END
        FROM j
        WHERE j.sub IS DISTINCT FROM 'COMPOSITE_CHILD' AND j.sub IS DISTINCT FROM 'PARENT_MULTIPLE'
          -- finished without a completion date: only if it started inside
          AND (j.t_c IS NOT NULL OR j.st NOT IN ('COMMITTED', 'ERROR', 'CANCELLED', 'DISCARDED')
               OR j.t_s >= wb.begin_at)
        ORDER BY j.t_s, j.hrid;
    END LOOP;
END
$$;

/*
 * folio_perf_operations(window_id): per tenant and operation of
 * folio_perf_data.operation, the count in the window and the tenant's DB
 * cost per operation.  Operations that did not happen (count 0) and
 * tenants without the operation's table have no row.
 */
-- The data-import jobs of a window as a jsonb array of
-- folio_perf_data_import_jobs rows, read once for a report or comparison;
-- err: why they could not be read (a remote target down or dropped), the
-- jobs then [].
CREATE FUNCTION folio_perf_data.di_jobs_json(p_window bigint, OUT jobs jsonb, OUT err text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    jobs := '[]';
    BEGIN
        SELECT coalesce(jsonb_agg(to_jsonb(j)), '[]') INTO jobs
        FROM @extschema@.folio_perf_data_import_jobs(p_window) j;
    EXCEPTION WHEN sqlclient_unable_to_establish_sqlconnection OR connection_failure
                   OR object_not_in_prerequisite_state THEN
        err := SQLERRM;
    END;
END
$$;

CREATE FUNCTION folio_perf_operations(window_id bigint)
RETURNS TABLE(tenant text, operation text, count bigint, per_minute numeric,
    db_time_ms double precision, db_time_per_op_ms double precision,
    statements_per_op numeric, rows_written_per_op numeric,
    wal_bytes_per_op numeric, source text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    jobs jsonb := '[]';
    err text;
BEGIN
    PERFORM folio_perf_data.window_bounds(window_id);
    IF EXISTS (SELECT FROM folio_perf_data.operation o WHERE o.counted_from = 'data_import_jobs') THEN
        SELECT x.jobs, x.err INTO jobs, err FROM folio_perf_data.di_jobs_json(window_id) x;
    END IF;
    RETURN QUERY SELECT * FROM folio_perf_data.operations_of(window_id, jobs, err);
END
$$;

-- folio_perf_operations() given the window's jobs (di_jobs_json()).
CREATE FUNCTION folio_perf_data.operations_of(window_id bigint, jobs jsonb, jobs_err text)
RETURNS TABLE(tenant text, operation text, count bigint, per_minute numeric,
    db_time_ms double precision, db_time_per_op_ms double precision,
    statements_per_op numeric, rows_written_per_op numeric,
    wal_bytes_per_op numeric, source text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
    RETURN QUERY
    WITH rel AS (
        SELECT k.tenant, k.module, k.relname::text AS relname,
               sum(coalesce(x.n_tup_ins, 0)) AS ins, sum(coalesce(x.n_tup_upd, 0)) AS upd,
               sum(coalesce(x.n_tup_del, 0)) AS del
        FROM folio_perf_data.rel_delta(wb.begin_snap, wb.end_snap) x
        JOIN folio_perf_data.rel_key k ON k.rel_key_id = x.rel_key_id
        WHERE k.relkind IN ('r', 'p') AND k.tenant IS NOT NULL
        GROUP BY 1, 2, 3
    ), written AS (
        SELECT rel.tenant, sum(rel.ins + rel.upd + rel.del) AS w FROM rel GROUP BY 1
    ), st AS (
        SELECT k.tenant, sum(x.total_exec_time) AS ms, sum(x.calls) AS calls,
               sum(x.wal_bytes) AS wal
        FROM folio_perf_data.stmt_delta(wb.begin_snap, wb.end_snap) x
        JOIN folio_perf_data.stmt_key k ON k.key_id = x.key_id
        WHERE k.toplevel AND NOT k.housekeeping AND k.tenant IS NOT NULL AND x.calls > 0
        GROUP BY 1
    ), dj AS (
        -- records of the jobs completed in the window, per tenant
        SELECT j->>'tenant' AS tenant, count(*) AS jobs,
               sum(coalesce((j->>'records')::bigint, 0)) AS records
        FROM jsonb_array_elements(jobs) j
        WHERE j->>'overlap' IN ('whole', 'ended')
        GROUP BY 1
    ), dj_open AS (
        SELECT j->>'tenant' AS tenant, count(*) AS jobs
        FROM jsonb_array_elements(jobs) j
        WHERE j->>'overlap' IN ('started', 'spans')
        GROUP BY 1
    ), counted AS (
        -- counted from the relation: the definition's counter
        SELECT rel.tenant, o.operation,
               CASE o.counter WHEN 'inserts' THEN rel.ins WHEN 'updates' THEN rel.upd
                              WHEN 'deletes' THEN rel.del ELSE rel.ins + rel.upd + rel.del END AS n,
               format('%s of %s.%s', replace(o.counter, '_', ' '), o.module, o.relation)
                 || CASE WHEN o.counted_from = 'data_import_jobs'
                         THEN CASE WHEN jobs_err IS NOT NULL
                                   THEN ' (data-import jobs unavailable: ' || jobs_err || ')'
                                   ELSE ' (no data-import job completed in the window'
                                        || CASE WHEN dj_open.jobs IS NOT NULL
                                                THEN format('; %s ran only partly in it', dj_open.jobs) ELSE '' END
                                        || ')' END
                         ELSE '' END AS src
        FROM folio_perf_data.operation o
        JOIN rel ON rel.module = o.module AND rel.relname = o.relation
        LEFT JOIN dj ON dj.tenant = rel.tenant
        LEFT JOIN dj_open ON dj_open.tenant = rel.tenant
        WHERE o.counted_from = 'relation' OR dj.tenant IS NULL
        UNION ALL
        -- counted from the data-import jobs
        SELECT dj.tenant, o.operation, dj.records,
               format('records of %s data-import job%s completed in the window (%s.job_execution)',
                      dj.jobs, CASE WHEN dj.jobs > 1 THEN 's' ELSE '' END, 'mod_source_record_manager')
                 || CASE WHEN dj_open.jobs IS NOT NULL
                         THEN format('; %s more ran only partly in it, not counted', dj_open.jobs) ELSE '' END
        FROM folio_perf_data.operation o
        JOIN dj ON true
        LEFT JOIN dj_open ON dj_open.tenant = dj.tenant
        WHERE o.counted_from = 'data_import_jobs'
    )
    SELECT c.tenant, c.operation, c.n::bigint,
           round((c.n / (wb.seconds / 60))::numeric, 2),
           coalesce(st.ms, 0),
           coalesce(st.ms, 0) / c.n,
           round(coalesce(st.calls, 0)::numeric / c.n, 2),
           round(coalesce(written.w, 0)::numeric / c.n, 2),
           round(coalesce(st.wal, 0) / c.n, 1),
           c.src
    FROM counted c
    LEFT JOIN st ON st.tenant = c.tenant
    LEFT JOIN written ON written.tenant = c.tenant
    WHERE c.n > 0
    ORDER BY c.tenant COLLATE "C", c.operation COLLATE "C";
END
$$;

-- hh:mm:ss of an interval (hours may pass 24), as the seeds write durations.
CREATE FUNCTION folio_perf_data.hms(d interval)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN d IS NOT NULL THEN
        lpad((x.s / 3600)::text, 2, '0') || ':' || lpad((x.s / 60 % 60)::text, 2, '0') || ':'
        || lpad((x.s % 60)::text, 2, '0') END
    FROM (SELECT round(extract(epoch FROM d))::bigint AS s) x
$$;

/*
 * The "folio_operations" member of the report document: the window's
 * data-import jobs and operations (format_version 1 keys:
 * data_import_jobs, operations, note).
 */
CREATE FUNCTION folio_perf_data.operations_doc(p_window bigint)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    jobs jsonb;
    err text;
    ops jsonb;
    note text;
BEGIN
    -- the jobs once, for both; a remote target that is down or dropped:
    -- operations from the relations, and the rest of the report stands
    SELECT x.jobs, x.err INTO jobs, err FROM folio_perf_data.di_jobs_json(p_window) x;
    note := 'Data-import jobs unavailable: ' || err;
    SELECT coalesce(jsonb_agg(to_jsonb(o)), '[]') INTO ops
    FROM folio_perf_data.operations_of(p_window, jobs, err) o;
    RETURN jsonb_build_object('data_import_jobs', jobs, 'operations', ops, 'note', note);
END
$$;

/*
 * The report's "FOLIO operations" sections from the document's
 * folio_operations member: the data-import jobs with the seeds' columns,
 * then the operations with their DB cost.
 */
CREATE FUNCTION folio_perf_data.operations_sections(doc jsonb)
RETURNS jsonb[]
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT ARRAY[
        folio_perf_data.section('FOLIO operations: data-import jobs',
            ARRAY['Tenant', 'File', 'Profile', 'Records', 'Duration (hh:mm:ss)', 'Records/min',
                  'Status', 'In window'],
            (SELECT jsonb_agg(jsonb_build_object('Tenant', j->'tenant', 'File', j->'file_name',
                        'Profile', j->'job_profile', 'Records', j->'records',
                        'Duration (hh:mm:ss)', coalesce(folio_perf_data.hms((j->>'duration')::interval),
                                                        'running'),
                        'Records/min', j->'records_per_minute', 'Status', j->'status',
                        'In window', j->'overlap') ORDER BY j->>'started', j->>'tenant')
             FROM jsonb_array_elements(doc#>'{folio_operations,data_import_jobs}') j),
            coalesce(doc#>>'{folio_operations,note}',
                     CASE WHEN jsonb_array_length(coalesce(doc#>'{folio_operations,data_import_jobs}', '[]')) = 0
                          THEN 'No data-import job ran in the window (job_execution of mod_source_record_manager).'
                          ELSE 'In window: whole, started (still running at the end), ended (started before), spans.' END)),
        folio_perf_data.section('FOLIO operations: DB cost per operation',
            ARRAY['tenant', 'operation', 'count', 'per_minute', 'db_time_ms', 'db_time_per_op_ms',
                  'statements_per_op', 'rows_written_per_op', 'wal_bytes_per_op', 'source'],
            doc#>'{folio_operations,operations}',
            CASE WHEN jsonb_array_length(coalesce(doc#>'{folio_operations,operations}', '[]')) = 0
                 THEN 'No operation of folio_perf_operation_definitions happened in the window.'
                 ELSE 'DB time, statements, rows written and WAL are the tenant''s whole in the window, divided by the count.' END)]
$$;

/*
 * Operations of two windows side by side, as rows of
 * folio_perf_compare_rows() (section 'operation': key tenant:operation,
 * metrics count, per_minute, db_time_per_op_ms, statements_per_op,
 * rows_written_per_op, wal_bytes_per_op; section 'data_import': key
 * tenant:profile:file, metrics records, duration_s, records_per_minute).
 */
CREATE FUNCTION folio_perf_data.operations_compare_rows(base_window bigint, new_window bigint)
RETURNS SETOF folio_perf_data.compare_row
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    bj record := folio_perf_data.di_jobs_json(base_window);
    nj record := folio_perf_data.di_jobs_json(new_window);
BEGIN
    RETURN QUERY
    WITH b AS (SELECT * FROM folio_perf_data.operations_of(base_window, bj.jobs, bj.err)),
         n AS (SELECT * FROM folio_perf_data.operations_of(new_window, nj.jobs, nj.err)),
         j AS (SELECT coalesce(b.tenant, n.tenant) AS tenant, coalesce(b.operation, n.operation) AS op,
                      b.operation IS NOT NULL AS in_b, n.operation IS NOT NULL AS in_n,
                      b.count AS bc, n.count AS nc, b.per_minute AS bp, n.per_minute AS np,
                      b.db_time_per_op_ms AS bt, n.db_time_per_op_ms AS nt,
                      b.statements_per_op AS bs, n.statements_per_op AS ns,
                      b.rows_written_per_op AS bw, n.rows_written_per_op AS nw,
                      b.wal_bytes_per_op AS bl, n.wal_bytes_per_op AS nl
               FROM b FULL JOIN n ON b.tenant = n.tenant AND b.operation = n.operation)
    SELECT 'operation'::text, j.tenant || ':' || j.op, j.tenant, j.op, m.metric, m.b, m.n, m.n - m.b,
           CASE WHEN m.b <> 0 THEN round(100 * (m.n - m.b) / m.b, 1) END,
           CASE WHEN NOT j.in_b THEN 'new' WHEN NOT j.in_n THEN 'gone' ELSE 'both' END,
           NULL::text, NULL::boolean
    FROM j CROSS JOIN LATERAL (VALUES
        ('count', j.bc::numeric, j.nc::numeric), ('per_minute', j.bp, j.np),
        ('db_time_per_op_ms', round(j.bt::numeric, 3), round(j.nt::numeric, 3)),
        ('statements_per_op', j.bs, j.ns), ('rows_written_per_op', j.bw, j.nw),
        ('wal_bytes_per_op', j.bl, j.nl)) AS m(metric, b, n);

    -- the completed jobs of both windows (none where a remote target is
    -- down or dropped)
    RETURN QUERY
    WITH b AS (SELECT x->>'tenant' AS tenant, coalesce(x->>'job_profile', '') AS prof,
                      coalesce(x->>'file_name', '') AS f, sum((x->>'records')::bigint) AS rec,
                      sum(extract(epoch FROM (x->>'duration')::interval)) AS dur
               FROM jsonb_array_elements(bj.jobs) x
               WHERE x->>'duration' IS NOT NULL GROUP BY 1, 2, 3),
         n AS (SELECT x->>'tenant' AS tenant, coalesce(x->>'job_profile', '') AS prof,
                      coalesce(x->>'file_name', '') AS f, sum((x->>'records')::bigint) AS rec,
                      sum(extract(epoch FROM (x->>'duration')::interval)) AS dur
               FROM jsonb_array_elements(nj.jobs) x
               WHERE x->>'duration' IS NOT NULL GROUP BY 1, 2, 3),
         j AS (SELECT coalesce(b.tenant, n.tenant) AS tenant, coalesce(b.prof, n.prof) AS prof,
                      coalesce(b.f, n.f) AS f, b.tenant IS NOT NULL AS in_b, n.tenant IS NOT NULL AS in_n,
                      b.rec AS br, n.rec AS nr, b.dur AS bd, n.dur AS nd
               FROM b FULL JOIN n ON b.tenant = n.tenant AND b.prof = n.prof AND b.f = n.f)
    SELECT 'data_import'::text, j.tenant || ':' || j.prof || ':' || j.f, j.tenant,
           'mod_source_record_manager'::text, m.metric, m.b, m.n, m.n - m.b,
           CASE WHEN m.b <> 0 THEN round(100 * (m.n - m.b) / m.b, 1) END,
           CASE WHEN NOT j.in_b THEN 'new' WHEN NOT j.in_n THEN 'gone' ELSE 'both' END,
           j.prof || ' | ' || j.f, NULL::boolean
    FROM j CROSS JOIN LATERAL (VALUES
        ('records', j.br::numeric, j.nr::numeric),
        ('duration_s', round(j.bd, 3), round(j.nd, 3)),
        ('records_per_minute', round(j.br / nullif(j.bd / 60, 0), 1), round(j.nr / nullif(j.nd / 60, 0), 1))) AS m(metric, b, n);
END
$$;

-- A window's name in a comparison: its release tag, else its label.
CREATE FUNCTION folio_perf_data.window_name(p_window bigint)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(nullif(w.tags->>'release', ''), w.label, 'window ' || w.window_id)
    FROM folio_perf_data.window w WHERE w.window_id = p_window
$$;

/*
 * folio_perf_compare()'s verdict (operations_findings()) and its "FOLIO
 * operations" section from the comparison
 * rows: data-import duration and DB time per record, check-outs per
 * minute and DB time per check-out, then every operation's count and DB
 * time per operation, with one column per window named after its release
 * tag and "Delta, %".
 */
CREATE FUNCTION folio_perf_data.operations_compare_sections(cmp folio_perf_data.compare_row[],
    base_window bigint, new_window bigint)
RETURNS jsonb[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    bn text := folio_perf_data.window_name(base_window);
    nn text := folio_perf_data.window_name(new_window);
    rows jsonb;
BEGIN
    IF bn = nn THEN
        bn := bn || ' (window ' || base_window || ')';
        nn := nn || ' (window ' || new_window || ')';
    END IF;
    WITH r AS (
        SELECT x.*,
               CASE x.section WHEN 'data_import' THEN 1 ELSE 2 END AS o1,
               CASE x.module WHEN 'record_imported' THEN 1 WHEN 'check_out' THEN 2
                             WHEN 'check_in' THEN 3 ELSE 4 END AS o2
        FROM unnest(cmp) x
        WHERE (x.section = 'data_import' AND x.metric IN ('records', 'duration_s', 'records_per_minute'))
           OR (x.section = 'operation' AND x.metric IN ('count', 'per_minute', 'db_time_per_op_ms'))
    )
    -- each value in its metric's unit (durations hh:mm:ss), the delta in
    -- the same unit with a sign, the change in percent with a sign and "%";
    -- the metric in words with its unit
    SELECT jsonb_agg(jsonb_build_object(
               'tenant', r.tenant,
               'what', CASE r.section WHEN 'data_import' THEN 'data import ' || r.query ELSE r.module END,
               'metric', folio_perf_data.col_label(r.metric),
               bn, folio_perf_data.fmt_value(to_jsonb(r.base), folio_perf_data.col_kind(r.metric)),
               nn, folio_perf_data.fmt_value(to_jsonb(r.new), folio_perf_data.col_kind(r.metric)),
               'Delta', CASE WHEN r.delta > 0 THEN '+' ELSE '' END
                        || folio_perf_data.fmt_value(to_jsonb(r.delta), folio_perf_data.col_kind(r.metric)),
               -- a number where a rise is a regression (html colours it),
               -- else already text (the same text: the column's kind)
               'Delta, %', CASE WHEN r.metric IN ('db_time_per_op_ms', 'duration_s') THEN to_jsonb(r.delta_pct)
                                ELSE to_jsonb(folio_perf_data.fmt_value(to_jsonb(r.delta_pct), 'delta_pct')) END)
           ORDER BY r.tenant COLLATE "C", r.o1, r.o2, r.module COLLATE "C", r.key COLLATE "C",
                    array_position(ARRAY['records', 'duration_s', 'records_per_minute', 'count',
                                         'per_minute', 'db_time_per_op_ms'], r.metric))
    INTO rows FROM r;
    RETURN ARRAY[folio_perf_data.section('Verdict', ARRAY['severity', 'check', 'finding'],
        folio_perf_data.operations_findings(cmp),
        CASE WHEN jsonb_array_length(folio_perf_data.operations_findings(cmp)) = 0
             THEN 'Nothing stands out: no operation''s DB time per operation rose by 10 % or more.' END),
        folio_perf_data.section('FOLIO operations',
        ARRAY['tenant', 'what', 'metric', bn, nn, 'Delta', 'Delta, %'], rows,
        CASE WHEN rows IS NULL THEN 'No data-import job and no operation of folio_perf_operation_definitions in either window.'
             ELSE 'Data-import jobs matched by tenant, profile and file; operations by tenant and name. DB time per operation: the tenant''s DB time in the window divided by the count.' END)
        -- the values (numbers and hh:mm:ss) and the signed deltas right-aligned
        || jsonb_build_object('right', jsonb_build_array(bn, nn, 'Delta', 'Delta, %'), 'worse_up', '["Delta, %"]'::jsonb,
                              -- the windows' names as they are ("run 1", not "Run 1")
                              'labels', jsonb_build_array('Tenant', 'What', 'Metric', bn, nn, 'Delta', 'Delta, %'))];
END
$$;

/*
 * Findings of a comparison about operations: "DB time per <operation>
 * rose by N %" where it rose by 10 % or more (both windows with the
 * operation), one per tenant and rise (operations whose DB time per
 * operation is the same, as they share the tenant's time and have the same
 * count, are named together), as verdict rows {check, severity, finding}.
 */
CREATE FUNCTION folio_perf_data.operations_findings(cmp folio_perf_data.compare_row[])
RETURNS jsonb
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    -- operations of a tenant share its DB time: those with the same counts
    -- rose alike and make one finding
    SELECT coalesce(jsonb_agg(jsonb_build_object('check', 'db_time_per_operation_rose',
               'severity', 'warning',
               'finding', format('DB time per %s rose by %s %% in tenant %s (%s ms -> %s ms).',
                                 g.ops, round(g.delta_pct), g.tenant,
                                 -- as the table shows them (three significant digits)
                                 folio_perf_data.fmt_sig(g.base), folio_perf_data.fmt_sig(g.new)))
               ORDER BY g.delta_pct DESC, g.tenant), '[]')
    FROM (SELECT x.tenant, x.base, x.new, x.delta_pct,
                 string_agg(x.module, ', ' ORDER BY CASE x.module WHEN 'record_imported' THEN 1
                                                    WHEN 'check_out' THEN 2 WHEN 'check_in' THEN 3 ELSE 4 END,
                                                x.module) AS ops
          FROM unnest(cmp) x
          WHERE x.section = 'operation' AND x.metric = 'db_time_per_op_ms' AND x.status = 'both'
            AND x.delta_pct >= 10
          GROUP BY x.tenant, x.base, x.new, x.delta_pct) g
$$;
/* sql/parts/140_live_views.sql - live views: folio_perf_statements, _activity, _modules */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

-- pg_stat_statements of this database with tenant, module and evidence;
-- own: a statement folio_perf ran itself (src/own.c, or its text calls a
-- folio_perf function, or it touches folio_perf_data).
CREATE VIEW folio_perf_data.statements_all AS
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
       CASE WHEN v.see_all OR c.userid = v.me THEN c.query
            ELSE '<insufficient privilege>' END AS query,
       (a.module IS NOT DISTINCT FROM 'folio_perf' OR folio_perf_data.own_queryid(c.queryid)
        OR c.query ~* '\mfolio_perf_') AS own
FROM c JOIN a ON a.ord = c.ord
LEFT JOIN pg_catalog.pg_roles r ON r.oid = c.userid
-- may_see_text()'s rule, worked out once per query rather than per row
CROSS JOIN (SELECT pg_catalog.pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') AS see_all,
                   (SELECT x.oid FROM pg_catalog.pg_roles x WHERE x.rolname = current_user) AS me) v;

-- The live view leaves out folio_perf's own statements (housekeeping);
-- folio_perf_statements(include_housekeeping => true) shows them too.
CREATE VIEW folio_perf_statements AS
SELECT x.userid, x.role, x.dbid, x.queryid, x.toplevel, x.tenant, x.module,
       x.attributed_by, x.housekeeping, x.calls, x.total_exec_ms, x.mean_exec_ms,
       x.rows, x.shared_blks_hit, x.shared_blks_read, x.temp_blks_written,
       x.wal_bytes, x.query
FROM folio_perf_data.statements_all x
WHERE NOT x.own;

CREATE FUNCTION folio_perf_statements(include_housekeeping boolean)
RETURNS SETOF folio_perf_statements
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
SELECT x.userid, x.role, x.dbid, x.queryid, x.toplevel, x.tenant, x.module,
       x.attributed_by, x.housekeeping, x.calls, x.total_exec_ms, x.mean_exec_ms,
       x.rows, x.shared_blks_hit, x.shared_blks_read, x.temp_blks_written,
       x.wal_bytes, x.query
FROM folio_perf_data.statements_all x
WHERE include_housekeeping OR NOT x.own
$$;

-- Connections now, by tenant, module, role, application_name, state, wait.
-- A session is attributed as the sampler attributes it: by the relations
-- of its current (or last) statement in this database, else its role,
-- else its application_name (folio_perf_attribute).
CREATE VIEW folio_perf_activity AS
SELECT a.datname, a.usename AS role, a.application_name,
       p.tenant, p.module, p.attributed_by,
       a.backend_type, a.state, a.wait_event_type, a.wait_event,
       count(*) AS connections,
       max(greatest(pg_catalog.now() - a.state_change, interval '0')) FILTER (WHERE a.state = 'active') AS longest_active,
       max(pg_catalog.now() - a.xact_start) AS longest_xact
FROM pg_catalog.pg_stat_activity a
CROSS JOIN LATERAL folio_perf_attribute(a.usename::text, NULL, a.application_name,
    CASE WHEN a.datname = pg_catalog.current_database() THEN a.query_id END) p
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
/* sql/parts/145_metrics.sql - live metrics for scrapers: folio_perf_metrics */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

-- The sampler's current view per tenant and module, from shared memory
-- (src/metrics.c): gauges of the newest tick, counters since the server
-- started, the sampler's health.  Reads no storage table.
CREATE FUNCTION folio_perf_metrics_current(
    OUT metric text, OUT kind text, OUT tenant text, OUT module text,
    OUT database text, OUT state text, OUT wait_event_type text,
    OUT value double precision)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_metrics_current'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 100;

CREATE VIEW folio_perf_metrics AS
SELECT m.metric, m.kind, m.tenant, m.module, m.database, m.state,
       m.wait_event_type, m.value
FROM @extschema@.folio_perf_metrics_current() m;
/* sql/parts/150_privileges.sql - roles, privileges (default-deny) and pg_dump configuration */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

-- Collected data survives pg_dump / pg_restore; the targets' passwords
-- (target_secret) and the running sampler's view of the targets
-- (target_status) are never in a dump.
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN
        SELECT c.oid::regclass::text FROM pg_catalog.pg_class c
        WHERE c.relnamespace = 'folio_perf_data'::regnamespace
          AND c.relkind IN ('r', 'S')
          AND c.relname NOT IN ('target_secret', 'target_status')
    LOOP
        PERFORM pg_catalog.pg_extension_config_dump(t, '');
    END LOOP;
END
$$;

/*
 * Roles.  Two NOLOGIN roles, created if missing; like any role they are
 * cluster-wide and survive DROP EXTENSION (a second database's CREATE
 * EXTENSION uses the same ones).  Members of pg_read_all_stats (so also
 * pg_monitor) need neither: they get what folio_perf_reader gets, and see
 * every query text.  folio_perf_reader exists for a narrower reader that
 * sees the texts of its own statements only; folio_perf_writer for those who
 * may take snapshots, make windows, purge and add targets.  An existing role
 * of either name is used only if it cannot log in and has no attribute
 * beyond INHERIT: a role someone prepared with other powers is refused.
 */
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['folio_perf_reader', 'folio_perf_writer'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles x WHERE x.rolname = r) THEN
            EXECUTE format('CREATE ROLE %I NOLOGIN', r);
        ELSIF EXISTS (SELECT 1 FROM pg_catalog.pg_roles x
                      WHERE x.rolname = r
                        AND (x.rolcanlogin OR x.rolsuper OR x.rolcreaterole OR x.rolcreatedb
                             OR x.rolreplication OR x.rolbypassrls)) THEN
            RAISE EXCEPTION 'role "%" exists and has more than NOLOGIN', r
                USING ERRCODE = 'duplicate_object',
                      DETAIL = 'folio_perf grants its privileges to this role; it must be a plain NOLOGIN group role.',
                      HINT = format('ALTER ROLE %I NOLOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOREPLICATION NOBYPASSRLS, or drop it.', r);
        END IF;
    END LOOP;
    IF NOT pg_catalog.pg_has_role('folio_perf_writer', 'folio_perf_reader', 'MEMBER') THEN
        GRANT folio_perf_reader TO folio_perf_writer;
    END IF;
END
$$;

/*
 * Default-deny.  Every function, table, view and sequence of the extension,
 * whichever part created it, loses PUBLIC's privileges here; what is granted
 * below is granted by name, part by part.  A function or view that is not
 * named below is the owner's only.  test/sql/privileges.sql lists every
 * object of the extension with who may use it against an expected table.
 */
DO $$
DECLARE
    f record;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure::text AS obj, 'FUNCTION' AS kind
        FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass
             AND d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
        UNION ALL
        SELECT c.oid::regclass::text, 'TABLE'
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_class'::regclass
             AND d.objid = c.oid AND d.deptype = 'e'
        JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
    LOOP
        EXECUTE format('REVOKE ALL ON %s %s FROM PUBLIC', f.kind, f.obj);
    END LOOP;
END
$$;
REVOKE ALL ON SCHEMA folio_perf_data FROM PUBLIC;
GRANT USAGE ON SCHEMA folio_perf_data TO folio_perf_reader, pg_read_all_stats;

-- 010 C functions: parsing helpers and live statistics
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_parse_schema(text),
    @extschema@.folio_perf_appname_module(text),
    @extschema@.folio_perf_query_schema(text),
    @extschema@.folio_perf_query_relnames(text),
    @extschema@.folio_perf_attribute(text, text, text, bigint),
    @extschema@.folio_perf_query_relations(),
    @extschema@.folio_perf_rel_stats(),
    @extschema@.folio_perf_rel_changes(oid[], bigint[], oid[]),
    @extschema@.folio_perf_relation_size(oid),
    @extschema@.folio_perf_relations_status()
    TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION @extschema@.folio_perf_relations_reset() TO folio_perf_writer;
GRANT SELECT ON @extschema@.folio_perf_relations_status TO folio_perf_reader, pg_read_all_stats;

-- 020 storage: readable tables.  Not query_text (texts of other roles'
-- statements, only through stmt_text), not plan (plans with literals, only
-- through stmt_plan_text), target only without its connection string
-- (passwords); folio_perf_targets shows targets without passwords.  Nobody
-- but the owner writes them.  The trigger functions are the owner's.
GRANT SELECT ON
    folio_perf_data.target_status, folio_perf_data.snapshot,
    folio_perf_data.snapshot_activity, folio_perf_data.stmt_key,
    folio_perf_data.stmt, folio_perf_data.stmt_last, folio_perf_data.rel_key,
    folio_perf_data.rel, folio_perf_data.rel_last, folio_perf_data.schema_stat,
    folio_perf_data.window, folio_perf_data.stmt_plan,
    folio_perf_data.sample_series, folio_perf_data.sample_interval
    TO folio_perf_reader, pg_read_all_stats;
GRANT SELECT ON folio_perf_data.query_text, folio_perf_data.plan TO pg_read_all_stats;
GRANT SELECT (target_id, name, restricted, enabled, created_at, dropped_at) ON folio_perf_data.target
    TO folio_perf_reader, pg_read_all_stats;
-- target_secret (the targets' passwords) is the owner's only.

-- 025 what folio_perf runs itself (reports and the live view ask)
GRANT EXECUTE ON FUNCTION
    folio_perf_data.own_queryid(bigint),
    folio_perf_data.own_status()
    TO folio_perf_reader, pg_read_all_stats;

-- 030 attribution (the live view folio_perf_statements attributes)
GRANT EXECUTE ON FUNCTION
    folio_perf_data.is_housekeeping(text),
    folio_perf_data.remote_catalog(integer, oid[], text[]),
    folio_perf_data.attribute(bigint[], text[], text[], boolean, text[], text[]),
    folio_perf_data.attribute_statements(bigint[], oid[], text[], integer)
    TO folio_perf_reader, pg_read_all_stats;

-- 040 sources: remote_query, remote_version, the src_* functions and the
-- capture headers reach remote targets with the stored connection strings
-- or write storage: the owner's only, through capture().  remote_check and
-- target_store run as their caller (folio_perf_target_add's), whose rules
-- they apply (a non-superuser's target is restricted).
GRANT EXECUTE ON FUNCTION
    folio_perf_data.pgss_current(boolean),
    folio_perf_data.pgss_select_list(integer, boolean),
    folio_perf_data.pgss_row_columns(),
    folio_perf_data.pgss_coldef(),
    folio_perf_data.conninfo_redact(text)
    TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION
    folio_perf_data.remote_check(text, text),
    folio_perf_data.target_store(text, text)
    TO folio_perf_writer;

-- 050 capture (work_table_missing and the work tables are the owner's)
GRANT EXECUTE ON FUNCTION folio_perf_data.work_table_state(text)
    TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION folio_perf_data.capture(text, text, integer) TO folio_perf_writer;

-- 060 targets
GRANT EXECUTE ON FUNCTION folio_perf_data.target_id(text) TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_target_add(text, text),
    @extschema@.folio_perf_target_drop(text)
    TO folio_perf_writer;
GRANT SELECT ON @extschema@.folio_perf_targets TO folio_perf_reader, pg_read_all_stats;

-- 070 windows
GRANT EXECUTE ON FUNCTION folio_perf_data.check_snapshot(bigint, text)
    TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_snapshot(text),
    @extschema@.folio_perf_snapshot(text, text),
    @extschema@.folio_perf_snapshot_timed(),
    @extschema@.folio_perf_window(bigint, bigint, text),
    @extschema@.folio_perf_begin(text, jsonb, text),
    @extschema@.folio_perf_begin(text, jsonb),
    @extschema@.folio_perf_end(bigint),
    @extschema@.folio_perf_purge(interval)
    TO folio_perf_writer;
GRANT SELECT ON @extschema@.folio_perf_snapshots, @extschema@.folio_perf_windows
    TO folio_perf_reader, pg_read_all_stats;

-- 080 window arithmetic
GRANT EXECUTE ON FUNCTION
    folio_perf_data.window_bounds(bigint),
    folio_perf_data.snaps_between(bigint, bigint),
    folio_perf_data.stmt_delta_compute(bigint, bigint),
    folio_perf_data.window_cache(text, bigint, bigint),
    folio_perf_data.stmt_delta(bigint, bigint),
    folio_perf_data.rel_delta_compute(bigint, bigint),
    folio_perf_data.rel_delta(bigint, bigint),
    folio_perf_data.may_see_text(oid, integer),
    folio_perf_data.check_n(integer)
    TO folio_perf_reader, pg_read_all_stats;
GRANT SELECT ON folio_perf_data.stmt_text TO folio_perf_reader, pg_read_all_stats;

-- 090 report tables
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_top_statements(bigint, integer, text, boolean, boolean),
    folio_perf_data.table_rows_compute(bigint, bigint),
    folio_perf_data.table_size_at(oid, integer, name, name, bigint, bigint),
    folio_perf_data.table_rows(bigint, bigint),
    @extschema@.folio_perf_table_activity(bigint, integer, text),
    folio_perf_data.schema_sizes(bigint),
    @extschema@.folio_perf_module_activity(bigint),
    @extschema@.folio_perf_window_flags(bigint),
    folio_perf_data.cdiff(numeric, numeric),
    folio_perf_data.cdiff(bigint, bigint),
    @extschema@.folio_perf_db_summary(bigint)
    TO folio_perf_reader, pg_read_all_stats;

-- 100 plans.  folio_perf_plans_take() hands out (and removes from the
-- store) every role's plans with their literals: the owner's only, called
-- by capture().  folio_perf_plans_current() shows a reader its own.
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_plans_current(),
    @extschema@.folio_perf_plans_status(),
    folio_perf_data.plan_outline(text),
    folio_perf_data.window_plans(bigint, bigint),
    @extschema@.folio_perf_plans(bigint, boolean),
    folio_perf_data.plan_groups(bigint),
    folio_perf_data.plan_changes_section(bigint, bigint),
    folio_perf_data.report_plans(jsonb, bigint),
    folio_perf_data.render_plans(text, jsonb, text, jsonb)
    TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION @extschema@.folio_perf_plans_reset() TO folio_perf_writer;
GRANT SELECT ON @extschema@.folio_perf_plans_status, folio_perf_data.stmt_plan_text
    TO folio_perf_reader, pg_read_all_stats;

-- 110 sampler
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_sampler_status(),
    @extschema@.folio_perf_samples(),
    folio_perf_data.sample_window(bigint),
    folio_perf_data.sample_stats(text, timestamptz, timestamptz, bigint, integer),
    @extschema@.folio_perf_connections(bigint),
    @extschema@.folio_perf_db_load(bigint, boolean),
    @extschema@.folio_perf_cpu(bigint),
    @extschema@.folio_perf_timeseries(bigint, text, integer, boolean)
    TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_sampler_flush(),
    @extschema@.folio_perf_sampler_purge(interval)
    TO folio_perf_writer;
GRANT SELECT ON @extschema@.folio_perf_sampler_status, @extschema@.folio_perf_samples
    TO folio_perf_reader, pg_read_all_stats;

-- 120 rendering
GRANT EXECUTE ON FUNCTION
    folio_perf_data.html_escape(text),
    folio_perf_data.fold(text),
    folio_perf_data.md_escape(text),
    folio_perf_data.html_wrap(text),
    folio_perf_data.md_code(text, text),
    folio_perf_data.esc(text, text),
    folio_perf_data.fmt_num(numeric, integer),
    folio_perf_data.fmt_sig(numeric),
    folio_perf_data.fmt_bytes(numeric),
    folio_perf_data.fmt_duration(numeric),
    folio_perf_data.col_kind(text),
    folio_perf_data.col_label(text),
    folio_perf_data.fmt_value(jsonb, text),
    folio_perf_data.cell(jsonb, text, text),
    folio_perf_data.sql_start(text, integer),
    folio_perf_data.sql_refs(jsonb[]),
    folio_perf_data.sql_appendix(text, jsonb, jsonb[]),
    folio_perf_data.slug(text),
    folio_perf_data.render_section(text, jsonb, jsonb),
    folio_perf_data.section(text, text[], jsonb, text),
    folio_perf_data.check_format(text),
    folio_perf_data.nice_ticks(numeric, boolean),
    folio_perf_data.svg_chart(text, jsonb, boolean, jsonb),
    folio_perf_data.svg_bars(text, jsonb, text),
    folio_perf_data.kv_section(text, jsonb, text[]),
    folio_perf_data.html_head(text),
    folio_perf_data.html_foot()
    TO folio_perf_reader, pg_read_all_stats;

-- 130 documents
GRANT EXECUTE ON FUNCTION
    folio_perf_data.host_cpus(timestamptz, timestamptz, integer),
    folio_perf_data.trend(bigint, integer, boolean),
    @extschema@.folio_perf_trend(bigint, integer),
    folio_perf_data.report_doc(bigint),
    @extschema@.folio_perf_report(bigint, text),
    @extschema@.folio_perf_compare_rows(bigint, bigint),
    @extschema@.folio_perf_compare(bigint, bigint, text)
    TO folio_perf_reader, pg_read_all_stats;

-- 135 FOLIO operations.  Readers read the definitions and run the
-- operations and data-import reports; writers add, change and delete their
-- own definitions (operation_guard keeps the built-in ones).  di_jobs_read
-- reads tenant tables as the owner: the owner's only, called by
-- folio_perf_data_import_jobs.  pg_dump keeps only the definitions that are
-- not built in: the extension makes those.
GRANT SELECT ON folio_perf_data.operation, @extschema@.folio_perf_operation_definitions
    TO folio_perf_reader, pg_read_all_stats;
GRANT INSERT, UPDATE, DELETE ON folio_perf_data.operation, @extschema@.folio_perf_operation_definitions
    TO folio_perf_writer;
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_data_import_jobs(bigint),
    @extschema@.folio_perf_operations(bigint),
    folio_perf_data.hms(interval),
    folio_perf_data.di_jobs_json(bigint),
    folio_perf_data.operations_of(bigint, jsonb, text),
    folio_perf_data.operations_doc(bigint),
    folio_perf_data.operations_sections(jsonb),
    folio_perf_data.operations_compare_rows(bigint, bigint),
    folio_perf_data.window_name(bigint),
    folio_perf_data.operations_compare_sections(folio_perf_data.compare_row[], bigint, bigint),
    folio_perf_data.operations_findings(folio_perf_data.compare_row[])
    TO folio_perf_reader, pg_read_all_stats;
SELECT pg_catalog.pg_extension_config_dump('folio_perf_data.operation', 'WHERE NOT builtin');

-- 140 live views
GRANT SELECT ON @extschema@.folio_perf_statements, @extschema@.folio_perf_activity,
    @extschema@.folio_perf_modules, folio_perf_data.statements_all
    TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION @extschema@.folio_perf_statements(boolean)
    TO folio_perf_reader, pg_read_all_stats;

-- 145 live metrics for scrapers
GRANT EXECUTE ON FUNCTION @extschema@.folio_perf_metrics_current()
    TO folio_perf_reader, pg_read_all_stats;
GRANT SELECT ON @extschema@.folio_perf_metrics TO folio_perf_reader, pg_read_all_stats;
