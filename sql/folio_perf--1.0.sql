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
 *   5b. plans of slow executions
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

-- Remote targets (section 3b): servers collected from over libpq.  The
-- connection string may hold a password: only the extension's owner reads
-- this table (section 7); folio_perf_targets shows it without the password.
-- A dropped target keeps its row (its snapshots refer to it) without its
-- connection string.
CREATE TABLE folio_perf_data.target (
    target_id   int GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    name        text NOT NULL,
    conninfo    text,
    enabled     boolean NOT NULL DEFAULT true,   -- sampled by the sampler
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    dropped_at  timestamptz,
    CHECK ((conninfo IS NULL) = (dropped_at IS NOT NULL))
);
CREATE UNIQUE INDEX target_name ON folio_perf_data.target (name) WHERE dropped_at IS NULL;

-- The sampler's view of each enabled target, written at every flush
-- (src/rsampler.c).
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

/*
 * Attribution of statements (DESIGN.md, "Attribution"): for each
 * (queryid, userid, query) the tenant and module, and the evidence that
 * decided: relations > role > qualified > relation_name; also the role's
 * name.  For a remote target (p_target) the roles and the relations and
 * functions named in the texts are looked up in the target's catalogs, in
 * one round trip; attribution by relations needs the parse hook and is
 * unavailable there.
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
rel AS (
    SELECT r.queryid, r.target_nsp, r.nsps
    FROM @extschema@.folio_perf_query_relations() r
    WHERE p_target IS NULL
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
names AS (
    SELECT s.ord, n.name, n.o
    FROM s CROSS JOIN LATERAL unnest(@extschema@.folio_perf_query_relnames(s.t))
         WITH ORDINALITY AS n(name, o)
),
-- the target's catalogs: k = 'r' role (oid, name), k = 'n' schema of a
-- relation or function named in a text
remote AS MATERIALIZED (
    SELECT c.k, c.oid, c.name, c.nspname
    FROM folio_perf_data.remote_catalog(p_target,
        (SELECT array_agg(DISTINCT s.u) FROM s),
        (SELECT array_agg(DISTINCT names.name) FROM names)) c
    WHERE p_target IS NOT NULL
),
roles AS (
    SELECT r.oid AS userid, r.rolname
    FROM pg_catalog.pg_roles r
    WHERE p_target IS NULL AND r.oid IN (SELECT s.u FROM s)
    UNION ALL
    SELECT remote.oid, remote.name::name FROM remote WHERE remote.k = 'r'
),
by_role AS (
    SELECT s.ord, p.tenant, p.module
    FROM s
    JOIN roles r ON r.userid = s.u
    CROSS JOIN LATERAL @extschema@.folio_perf_parse_schema(r.rolname::text) p
    WHERE p.module IS NOT NULL
),
by_qual AS (
    SELECT s.ord, p.tenant, p.module
    FROM s CROSS JOIN LATERAL @extschema@.folio_perf_query_schema(s.t) p
    WHERE p.module IS NOT NULL
),
objs AS (
    SELECT names.ord, names.o, ns.nspname::text AS nspname
    FROM names
    JOIN pg_catalog.pg_class c ON c.relname = names.name
         AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
    JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace
    WHERE p_target IS NULL
    UNION ALL
    SELECT names.ord, names.o, ns.nspname::text
    FROM names
    JOIN pg_catalog.pg_proc f ON f.proname = names.name
    JOIN pg_catalog.pg_namespace ns ON ns.oid = f.pronamespace
    WHERE p_target IS NULL
    UNION ALL
    SELECT names.ord, names.o, remote.nspname
    FROM names JOIN remote ON remote.k = 'n' AND remote.name = names.name
),
name_owner AS (
    SELECT objs.ord, objs.o, p.tenant, p.module, objs.nspname
    FROM objs
    CROSS JOIN LATERAL @extschema@.folio_perf_parse_schema(objs.nspname) p
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
       (own.ord IS NOT NULL OR folio_perf_data.is_housekeeping(s.t)),
       rr.rolname
FROM s
LEFT JOIN roles rr ON rr.userid = s.u
LEFT JOIN own ON own.ord = s.ord
LEFT JOIN by_rel ON by_rel.ord = s.ord
LEFT JOIN by_role ON by_role.ord = s.ord
LEFT JOIN by_qual ON by_qual.ord = s.ord
LEFT JOIN by_name ON by_name.ord = s.ord
$$;

-- The current pg_stat_statements entries of this database, with the
-- columns folio_perf stores, whatever the server version.  showtext = false
-- leaves query NULL and does not read pg_stat_statements' text file (a few
-- MB for 5,000 entries): the capture reads texts only for new statements.
CREATE FUNCTION folio_perf_data.pgss_current(showtext boolean DEFAULT true)
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
         FROM %I.pg_stat_statements($1) s
         WHERE s.dbid = (SELECT d.oid FROM pg_catalog.pg_database d
                         WHERE d.datname = pg_catalog.current_database())
           AND s.queryid IS NOT NULL',
        CASE WHEN v >= 140000 THEN 's.toplevel' ELSE 'true' END,
        CASE WHEN v >= 170000 THEN 's.shared_blk_read_time + s.local_blk_read_time' ELSE 's.blk_read_time' END,
        CASE WHEN v >= 170000 THEN 's.shared_blk_write_time + s.local_blk_write_time' ELSE 's.blk_write_time' END,
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

-- Connect with a connection string and say what folio_perf_target_add checks.
CREATE FUNCTION folio_perf_data.remote_check(conninfo text, name text,
    OUT datname text, OUT rolname text, OUT server_version_num int,
    OUT in_recovery boolean, OUT pgss_schema text, OUT read_all_stats boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'folio_perf_remote_check'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

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
RETURNS TABLE(userid oid, dbid oid, queryid bigint, toplevel boolean,
    query text, calls bigint, total_exec_time double precision,
    total_plan_time double precision, plans bigint, rows bigint,
    shared_blks_hit bigint, shared_blks_read bigint,
    shared_blks_dirtied bigint, shared_blks_written bigint,
    local_blks_hit bigint, local_blks_read bigint,
    temp_blks_read bigint, temp_blks_written bigint,
    blk_read_time double precision, blk_write_time double precision,
    wal_records bigint, wal_fpi bigint, wal_bytes numeric)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    v int;
BEGIN
    IF p_target IS NULL THEN
        RETURN QUERY SELECT * FROM folio_perf_data.pgss_current(showtext);
        RETURN;
    END IF;
    v := folio_perf_data.remote_version(p_target);
    RETURN QUERY
    SELECT * FROM folio_perf_data.remote_query(p_target, format(
        'SELECT s.userid, s.dbid, s.queryid, %s AS toplevel,
                s.query, s.calls, s.total_exec_time, s.total_plan_time, s.plans, s.rows,
                s.shared_blks_hit, s.shared_blks_read, s.shared_blks_dirtied,
                s.shared_blks_written, s.local_blks_hit, s.local_blks_read,
                s.temp_blks_read, s.temp_blks_written, %s AS blk_read_time,
                %s AS blk_write_time, s.wal_records, s.wal_fpi, s.wal_bytes
         FROM pg_stat_statements($1::boolean) s
         WHERE s.dbid = (SELECT d.oid FROM pg_catalog.pg_database d
                         WHERE d.datname = pg_catalog.current_database())
           AND s.queryid IS NOT NULL
           AND ($2::bigint[] IS NULL OR s.queryid = ANY ($2::bigint[]))',
        CASE WHEN v >= 140000 THEN 's.toplevel' ELSE 'true' END,
        CASE WHEN v >= 170000 THEN 's.shared_blk_read_time + s.local_blk_read_time' ELSE 's.blk_read_time' END,
        CASE WHEN v >= 170000 THEN 's.shared_blk_write_time + s.local_blk_write_time' ELSE 's.blk_write_time' END),
        ARRAY[coalesce(showtext, true)::text, p_queryids::text])
    AS r(userid oid, dbid oid, queryid bigint, toplevel boolean,
         query text, calls bigint, total_exec_time double precision,
         total_plan_time double precision, plans bigint, rows bigint,
         shared_blks_hit bigint, shared_blks_read bigint,
         shared_blks_dirtied bigint, shared_blks_written bigint,
         local_blks_hit bigint, local_blks_read bigint,
         temp_blks_read bigint, temp_blks_written bigint,
         blk_read_time double precision, blk_write_time double precision,
         wal_records bigint, wal_fpi bigint, wal_bytes numeric);
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

    -- the sampler (if any) writes what it has, so windows see samples up to here
    IF pg_catalog.to_regprocedure('@extschema@.folio_perf_sampler_flush()') IS NOT NULL THEN
        EXECUTE 'SELECT @extschema@.folio_perf_sampler_flush()';
    END IF;

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
    -- queries that fill them, column for column.
    IF pg_catalog.to_regclass('pg_temp.fperf_cur_stmt') IS NULL THEN
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
        IF EXISTS (SELECT 1 FROM fperf_cur_stmt WHERE key_id IS NULL) THEN
            UPDATE fperf_cur_stmt c SET query = t.query
            FROM folio_perf_data.src_pgss(p_target, true,
                     (SELECT array_agg(DISTINCT x.queryid) FROM fperf_cur_stmt x
                      WHERE x.key_id IS NULL)) t
            WHERE c.key_id IS NULL AND t.userid = c.userid AND t.queryid = c.queryid
              AND t.toplevel = c.toplevel;

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
        WHERE c.queryid IS NOT NULL;

        -- statements that left pg_stat_statements (eviction, reset)
        WITH gone AS (
            DELETE FROM folio_perf_data.stmt_last l
            USING fperf_cur_stmt c
            WHERE c.queryid IS NULL AND l.key_id = c.key_id
            RETURNING l.key_id
        )
        INSERT INTO folio_perf_data.stmt (snap_id, key_id, gone)
        SELECT snap, gone.key_id, true FROM gone;
        GET DIAGNOSTICS n_gone = ROW_COUNT;

        UPDATE folio_perf_data.stmt_last l
        SET calls = c.calls, total_exec_time = c.total_exec_time, rows = c.rows,
            last_snap = snap
        FROM fperf_cur_stmt c
        WHERE c.last_key_id IS NOT NULL AND c.queryid IS NOT NULL
          AND l.key_id = c.last_key_id;
        INSERT INTO folio_perf_data.stmt_last (key_id, dbid, target_id, calls, total_exec_time, rows, last_snap)
        SELECT c.key_id, c.dbid, p_target, c.calls, c.total_exec_time, c.rows, snap
        FROM fperf_cur_stmt c
        WHERE c.last_key_id IS NULL;
        GET DIAGNOSTICS n_added = ROW_COUNT;
        n_stmt := n_last - n_gone + n_added;
    END IF;

    -- plans of the slowest executions since the previous snapshot (issue 9)
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

    IF pg_catalog.to_regclass('pg_temp.fperf_cur_rel') IS NULL THEN
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
        UPDATE fperf_cur_rel c SET size_bytes = z.size_bytes
        FROM folio_perf_data.src_remote_sizes(p_target,
                 (SELECT array_agg(x.relid) FROM fperf_cur_rel x
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
            FROM fperf_cur_rel r
            CROSS JOIN LATERAL @extschema@.folio_perf_parse_schema(r.nspname::text) p
            WHERE r.rel_key_id IS NULL AND r.status <> 'd'
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
        FROM fperf_cur_rel r
        WHERE r.status <> 'd';
        GET DIAGNOSTICS n_rel_s = ROW_COUNT;

        -- relations that were dropped
        WITH gone AS (
            DELETE FROM folio_perf_data.rel_last l
            USING fperf_cur_rel c
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
        FROM fperf_cur_rel c
        WHERE c.status = 'c' AND l.rel_key_id = c.rel_key_id;
        INSERT INTO folio_perf_data.rel_last (rel_key_id, dbid, target_id, relid, relfilenode, sig,
            wsig, size_bytes, live_tup, dead_tup, last_snap)
        SELECT c.rel_key_id, mydb, p_target, c.relid, c.relfilenode, c.sig, c.wsig,
               c.size_bytes, c.live_tuples, c.dead_tuples, snap
        FROM fperf_cur_rel c
        WHERE c.status = 'n';
        GET DIAGNOSTICS n_added = ROW_COUNT;

        -- how many relations there are now, and their bytes: the previous
        -- state plus what changed
        n_rel := n_last_rel + n_added - n_dropped;
        SELECT last_rel_bytes + coalesce(sum(coalesce(c.size_bytes, 0) - coalesce(c.last_size, 0)), 0)
        INTO cur_rel_bytes FROM fperf_cur_rel c;

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
            FROM fperf_cur_rel c
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

------------------------------------------------------------------------
-- 3b. remote targets
------------------------------------------------------------------------

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
 * connection string or URI; .pgpass and service files work).  Connects
 * once to check it.  Returns the target id.
 */
CREATE FUNCTION folio_perf_target_add(name text, conninfo text)
RETURNS int
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c record;
    t int;
BEGIN
    IF name IS NULL OR name !~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$' THEN
        RAISE EXCEPTION 'invalid target name "%"', coalesce(name, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use up to 63 letters, digits, "_", "." or "-", starting with a letter or digit.';
    END IF;
    IF conninfo IS NULL THEN
        RAISE EXCEPTION 'conninfo must not be null'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass a connection string such as ''host=db.example.org dbname=folio user=folio_perf_collector''.';
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
    INSERT INTO folio_perf_data.target (name, conninfo)
    VALUES (folio_perf_target_add.name, folio_perf_target_add.conninfo)
    RETURNING target_id INTO t;
    RETURN t;
END
$$;

/*
 * Drop a remote target: its connection string is forgotten; its snapshots
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
    RETURN t;
END
$$;

-- Targets, without passwords, with what the sampler last said about them.
CREATE VIEW folio_perf_targets AS
SELECT t.target_id, t.name, folio_perf_data.conninfo_redact(t.conninfo) AS conninfo,
       t.enabled, t.created_at, t.dropped_at,
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



------------------------------------------------------------------------
-- 4. reports over a window                             (issue 3, 5)
------------------------------------------------------------------------

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
    wal_bytes numeric, first_calls_mean double precision)
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
 * window_cache(kind, p_begin, p_end): the query (parameters $1 = p_begin,
 * $2 = p_end) that returns <kind>_compute(p_begin, p_end) (kind:
 * stmt_delta, rel_delta, table_rows) from a temporary table where it is
 * computed at most once per transaction and user for a pair of snapshots;
 * where temporary tables cannot be used (a standby, no TEMP privilege) the
 * query computes it.  A report asks for the same window's differences a dozen
 * times (flags, summary, four top lists, modules, tables, trend).  The
 * tables are dropped at commit: kept for the session (as capture()'s work
 * tables are), they would belong to whatever role the session had SET ROLE
 * to, and DROP ROLE would fail until the session ends.
 */
CREATE FUNCTION folio_perf_data.window_cache(p_kind text, p_begin bigint, p_end bigint)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    cache text;
    done boolean;
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
    IF pg_catalog.to_regclass('pg_temp.' || cache) IS NULL THEN
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
                   WHERE a.attrelid = pg_catalog.to_regclass('pg_temp.' || pg_catalog.quote_ident(cache))
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
    wal_bytes numeric, first_calls_mean double precision)
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
 * current_user inside a view is the querying role.
 */
CREATE VIEW folio_perf_data.stmt_text WITH (security_barrier) AS
SELECT k.key_id, t.text_md5,
       CASE WHEN folio_perf_data.may_see_text(k.userid, k.target_id) THEN t.query
            ELSE '<insufficient privilege>' END AS query
FROM folio_perf_data.stmt_key k
JOIN folio_perf_data.query_text t ON t.text_id = k.text_id;

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
    connections_avg numeric, connections_max int, flags text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
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
        (SELECT sum(x.total_exec_time)
         FROM folio_perf_data.stmt_delta(wb.begin_snap, wb.end_snap) x
         JOIN folio_perf_data.stmt_key k ON k.key_id = x.key_id
         WHERE k.toplevel AND NOT k.housekeeping),
        fl;
END
$$;




------------------------------------------------------------------------
-- 4b. documents: folio_perf_report, folio_perf_compare, folio_perf_trend
--
-- Every document is built as one jsonb value first (the "json" format,
-- whose keys are documented and stable); the text, markdown and html
-- formats render that value.  A section is an object
--   {"title": ..., "columns": [...], "rows": [{...}, ...], "note": ...}
-- so that one renderer serves every table.
------------------------------------------------------------------------

-- Escape for HTML text and attribute values.
CREATE FUNCTION folio_perf_data.html_escape(s text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT replace(replace(replace(replace(replace(coalesce(s, ''),
         '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;')
$$;

-- One cell as text: numbers rounded for people, bytes made readable.
CREATE FUNCTION folio_perf_data.cell(v jsonb, col text, fmt text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE
    WHEN v IS NULL OR jsonb_typeof(v) = 'null' THEN ''
    WHEN jsonb_typeof(v) = 'number' AND (col LIKE '%bytes%' OR col LIKE 'size%' OR col = 'growth')
         AND abs(v::text::numeric) >= 10240
      THEN pg_size_pretty(v::text::numeric)
    WHEN jsonb_typeof(v) = 'number' AND col LIKE '%delta_pct'
      THEN CASE WHEN v::text::numeric > 0 THEN '+' ELSE '' END || round(v::text::numeric, 1)::text
    WHEN jsonb_typeof(v) = 'number' AND col LIKE '%pct%'
      THEN round(v::text::numeric, 1)::text
    WHEN jsonb_typeof(v) = 'number' AND v::text::numeric = trunc(v::text::numeric)
      THEN trunc(v::text::numeric)::text
    WHEN jsonb_typeof(v) = 'number' AND v::text ~ '[.eE]'
      THEN CASE WHEN abs(v::text::numeric) >= 100 THEN round(v::text::numeric, 0)::text
                WHEN abs(v::text::numeric) >= 1 THEN round(v::text::numeric, 2)::text
                ELSE round(v::text::numeric, 3)::text END
    WHEN jsonb_typeof(v) = 'string' AND fmt <> 'html' AND col = 'query'
      THEN CASE WHEN length(v #>> '{}') > 100
                THEN left(regexp_replace(v #>> '{}', '\s+', ' ', 'g'), 97) || '...'
                ELSE regexp_replace(v #>> '{}', '\s+', ' ', 'g') END
    WHEN jsonb_typeof(v) = 'string' THEN v #>> '{}'
    ELSE v::text
  END
$$;

/*
 * Render one section: a title, an optional note, and a table of the given
 * columns.  text: aligned for psql; markdown: a pipe table; html: a table.
 */
CREATE FUNCTION folio_perf_data.render_section(fmt text, sec jsonb)
RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
-- Cells are formatted once (cell() is called per cell) and lines collected
-- in an array joined at the end: appending to one growing text is
-- quadratic, and a comparison can have 5,000 statement rows.
DECLARE
    cols text[] := ARRAY(SELECT jsonb_array_elements_text(sec->'columns'));
    nc int := coalesce(array_length(cols, 1), 0);
    w int[];
    num boolean[];
    r jsonb;
    cells text[] := '{}';
    lines text[] := '{}';
    out text := '';
    line text;
    i int;
    k int;
    c text;
BEGIN
    IF fmt = 'markdown' THEN
        out := '### ' || (sec->>'title') || E'\n\n';
    ELSIF fmt = 'html' THEN
        out := '<h2>' || folio_perf_data.html_escape(sec->>'title') || E'</h2>\n';
    ELSE
        out := (sec->>'title') || E'\n' || repeat('=', length(sec->>'title')) || E'\n';
    END IF;
    IF sec->>'note' IS NOT NULL THEN
        out := out || CASE fmt WHEN 'html' THEN '<p class="note">' || folio_perf_data.html_escape(sec->>'note') || E'</p>\n'
                               WHEN 'markdown' THEN '_' || replace(sec->>'note', '_', '\_') || E'_\n\n'
                               ELSE '(' || (sec->>'note') || E')\n' END;
    END IF;
    IF nc = 0 OR jsonb_array_length(coalesce(sec->'rows', '[]')) = 0 THEN
        IF sec->>'note' IS NULL THEN
            out := out || CASE fmt WHEN 'html' THEN E'<p class="note">No rows.</p>\n' ELSE E'(no rows)\n' END;
        END IF;
        RETURN out || E'\n';
    END IF;

    -- cells, column widths and alignment
    w := array_fill(0, ARRAY[nc]);
    num := array_fill(true, ARRAY[nc]);
    FOR i IN 1..nc LOOP
        w[i] := length(cols[i]);
    END LOOP;
    FOR r IN SELECT * FROM jsonb_array_elements(sec->'rows') LOOP
        FOR i IN 1..nc LOOP
            c := folio_perf_data.cell(r->cols[i], cols[i], fmt);
            cells := cells || c;
            w[i] := greatest(w[i], length(c));
            IF jsonb_typeof(r->cols[i]) NOT IN ('number', 'null') THEN
                num[i] := false;
            END IF;
        END LOOP;
    END LOOP;

    IF fmt = 'html' THEN
        line := '<div class="tw"><table><thead><tr>';
        FOR i IN 1..nc LOOP
            line := line || '<th>' || folio_perf_data.html_escape(cols[i]) || '</th>';
        END LOOP;
        lines := lines || (line || E'</tr></thead>\n<tbody>');
        k := 0;
        FOR r IN SELECT * FROM jsonb_array_elements(sec->'rows') LOOP
            line := '<tr>';
            FOR i IN 1..nc LOOP
                k := k + 1;
                c := cells[k];
                IF cols[i] = 'query' AND length(c) > 120 THEN
                    line := line || '<td class="q"><details><summary>'
                        || folio_perf_data.html_escape(left(c, 117)) || '...</summary><code>'
                        || folio_perf_data.html_escape(c) || '</code></details></td>';
                ELSIF cols[i] = 'plan' AND c <> '' THEN
                    line := line || '<td><details><summary>plan</summary><pre>'
                        || folio_perf_data.html_escape(c) || '</pre></details></td>';
                ELSE
                    line := line || CASE WHEN num[i] THEN '<td class="n">' ELSE '<td>' END
                        || folio_perf_data.html_escape(c) || '</td>';
                END IF;
            END LOOP;
            lines := lines || (line || '</tr>');
        END LOOP;
        RETURN out || array_to_string(lines, E'\n') || E'\n</tbody></table></div>\n';
    END IF;

    IF fmt = 'markdown' THEN
        line := '|';
        FOR i IN 1..nc LOOP
            line := line || ' ' || cols[i] || ' |';
        END LOOP;
        lines := lines || line;
        line := '|';
        FOR i IN 1..nc LOOP
            line := line || CASE WHEN num[i] THEN ' ---: |' ELSE ' --- |' END;
        END LOOP;
        lines := lines || line;
        k := 0;
        FOR r IN SELECT * FROM jsonb_array_elements(sec->'rows') LOOP
            line := '|';
            FOR i IN 1..nc LOOP
                k := k + 1;
                c := replace(replace(cells[k], '|', '\|'), E'\n', ' ');
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
            || CASE WHEN num[i] THEN lpad(cols[i], w[i]) ELSE rpad(cols[i], w[i]) END;
    END LOOP;
    lines := lines || line;
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
    have_sampler boolean := pg_catalog.to_regprocedure('@extschema@.folio_perf_connections(bigint)') IS NOT NULL;
BEGIN
    wb := folio_perf_data.window_bounds(p_window);
    SELECT * INTO w FROM folio_perf_data.window x WHERE x.window_id = p_window;
    SELECT * INTO b FROM folio_perf_data.snapshot s WHERE s.snap_id = wb.begin_snap;
    SELECT * INTO e FROM folio_perf_data.snapshot s WHERE s.snap_id = wb.end_snap;

    SELECT coalesce(jsonb_agg(to_jsonb(f)), '[]') INTO flags
    FROM @extschema@.folio_perf_window_flags(p_window) f;

    SELECT to_jsonb(s) INTO summ FROM @extschema@.folio_perf_db_summary(p_window) s;

    -- sampler sections
    IF have_sampler THEN
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
        END IF;
    ELSE
        sampler_note := 'off: this folio_perf has no sampler';
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

    summ := summ || jsonb_build_object(
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
                              tot_load->>'aas', ncpu));
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
                              round((r->>'first_mean_ms')::numeric, 2), round((r->>'last_mean_ms')::numeric, 2))))
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
                    'finding', format('Throughput stayed flat (%s -> %s statements/s) while DB load climbed (%s -> %s): a saturation point.',
                                      round(c1, 1), round(c2, 1), round(l1, 2), round(l2, 2)));
            END IF;
        END;
    END IF;
    IF jsonb_array_length(flags) > 0 THEN
        verdict := verdict || jsonb_build_object('check', 'data_quality', 'severity', 'info',
            'finding', 'Some numbers are lower bounds or restarted counting: see Data quality.');
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
                    'per-backend CPU')) END,
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
        'timeseries', jsonb_build_object('connections', ts_conn, 'db_load_by_wait_event_type', ts_load),
        'trend', jsonb_build_object('note', trend_note, 'statements', trend));
    -- plans of the top statements (issue 9)
    doc := folio_perf_data.report_plans(doc, p_window);
    RETURN doc;
END
$$;

/*
 * An inline SVG chart of time-series rows {bucket, bucket_start, series,
 * value}: one line per series, or stacked areas.
 */
CREATE FUNCTION folio_perf_data.svg_chart(title text, pts jsonb, stacked boolean, unit text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wd int := 900;
    ht int := 260;
    ml int := 56;
    mr int := 170;
    mt int := 28;
    mb int := 34;
    pw int := wd - ml - mr;
    ph int := ht - mt - mb;
    palette text[] := ARRAY['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd',
                            '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
    b0 int;
    b1 int;
    ymax numeric;
    series text[];
    s text;
    si int := 0;
    svg text;
    pts_txt text;
    base_txt text;
    t0 text;
    t1 text;
BEGIN
    IF pts IS NULL OR jsonb_array_length(pts) = 0 THEN
        RETURN '';
    END IF;
    SELECT min((p->>'bucket')::int), max((p->>'bucket')::int),
           min(p->>'bucket_start'), max(p->>'bucket_end')
    INTO b0, b1, t0, t1 FROM jsonb_array_elements(pts) p;
    series := ARRAY(SELECT DISTINCT p->>'series' FROM jsonb_array_elements(pts) p ORDER BY 1);
    IF stacked THEN
        SELECT max(v) INTO ymax FROM (
            SELECT sum((p->>'value')::numeric) AS v FROM jsonb_array_elements(pts) p
            GROUP BY p->>'bucket') x;
    ELSE
        SELECT max((p->>'value')::numeric) INTO ymax FROM jsonb_array_elements(pts) p;
    END IF;
    ymax := greatest(coalesce(ymax, 0), 1e-9) * 1.1;
    -- every bucket is drawn as a step over [b, b + 1]
    b1 := b1 + 1;
    svg := format('<figure><svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">',
                  wd, ht, wd, ht, folio_perf_data.html_escape(title))
        || format('<text x="%s" y="16" class="ct">%s</text>', ml, folio_perf_data.html_escape(title))
        || format('<rect x="%s" y="%s" width="%s" height="%s" class="pa"/>', ml, mt, pw, ph)
        || format('<text x="%s" y="%s" class="ax" text-anchor="end">%s</text>', ml - 4, mt + 8,
                  round(ymax / 1.1, 2) || coalesce(' ' || unit, ''))
        || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="gl"/>', ml, round(mt + ph - ph / 1.1), ml + pw,
                  round(mt + ph - ph / 1.1))
        || format('<text x="%s" y="%s" class="ax" text-anchor="end">0</text>', ml - 4, mt + ph)
        || format('<text x="%s" y="%s" class="ax">%s</text>', ml, ht - 10,
                  folio_perf_data.html_escape(left(t0, 19)))
        || format('<text x="%s" y="%s" class="ax" text-anchor="end">%s</text>', ml + pw, ht - 10,
                  folio_perf_data.html_escape(left(t1, 19)));
    -- stacked areas draw cumulative sums, bottom series first
    FOREACH s IN ARRAY series LOOP
        si := si + 1;
        WITH v AS (
            SELECT (p->>'bucket')::int AS b, p->>'series' AS ser, (p->>'value')::numeric AS val
            FROM jsonb_array_elements(pts) p
        ), buckets AS (
            SELECT DISTINCT b FROM v
        ), cum AS (
            SELECT bk.b,
                   coalesce((SELECT sum(v.val) FROM v WHERE v.b = bk.b
                             AND (v.ser <= s AND stacked OR v.ser = s AND NOT stacked)), 0) AS top,
                   coalesce((SELECT sum(v.val) FROM v WHERE v.b = bk.b AND v.ser < s AND stacked), 0) AS bot
            FROM buckets bk
        )
        SELECT string_agg(format('%s,%s %s,%s',
                                 round(ml + pw * (cum.b - b0)::numeric / (b1 - b0), 1),
                                 round(mt + ph - ph * cum.top / ymax, 1),
                                 round(ml + pw * (cum.b + 1 - b0)::numeric / (b1 - b0), 1),
                                 round(mt + ph - ph * cum.top / ymax, 1)), ' ' ORDER BY cum.b),
               string_agg(format('%s,%s %s,%s',
                                 round(ml + pw * (cum.b + 1 - b0)::numeric / (b1 - b0), 1),
                                 round(mt + ph - ph * cum.bot / ymax, 1),
                                 round(ml + pw * (cum.b - b0)::numeric / (b1 - b0), 1),
                                 round(mt + ph - ph * cum.bot / ymax, 1)), ' ' ORDER BY cum.b DESC)
        INTO pts_txt, base_txt FROM cum;
        IF stacked THEN
            svg := svg || format('<polygon points="%s %s" fill="%s" fill-opacity="0.75" stroke="%s" stroke-width="0.5"/>',
                                 pts_txt, base_txt, palette[(si - 1) % 10 + 1], palette[(si - 1) % 10 + 1]);
        ELSE
            svg := svg || format('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>',
                                 pts_txt, palette[(si - 1) % 10 + 1]);
        END IF;
        IF si <= 12 THEN
            svg := svg || format('<rect x="%s" y="%s" width="10" height="10" fill="%s"/><text x="%s" y="%s" class="lg">%s</text>',
                                 ml + pw + 10, mt + (si - 1) * 16, palette[(si - 1) % 10 + 1],
                                 ml + pw + 24, mt + (si - 1) * 16 + 9,
                                 folio_perf_data.html_escape(left(s, 22)));
        END IF;
    END LOOP;
    RETURN svg || E'</svg></figure>\n';
END
$$;

-- A horizontal bar chart of label/value pairs.
CREATE FUNCTION folio_perf_data.svg_bars(title text, bars jsonb, unit text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wd int := 900;
    n int := jsonb_array_length(coalesce(bars, '[]'));
    ht int;
    vmax numeric;
    svg text;
    r record;
BEGIN
    IF n = 0 THEN
        RETURN '';
    END IF;
    ht := 30 + n * 20;
    SELECT max((x->>'value')::numeric) INTO vmax FROM jsonb_array_elements(bars) x;
    vmax := greatest(coalesce(vmax, 0), 1e-9);
    svg := format('<figure><svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">',
                  wd, ht, wd, ht, folio_perf_data.html_escape(title))
        || format('<text x="4" y="16" class="ct">%s</text>', folio_perf_data.html_escape(title));
    FOR r IN SELECT x->>'label' AS label, (x->>'value')::numeric AS value, o
             FROM jsonb_array_elements(bars) WITH ORDINALITY AS t(x, o) LOOP
        svg := svg || format('<text x="4" y="%s" class="lg">%s</text>', 26 + r.o * 20 - 6,
                             folio_perf_data.html_escape(left(r.label, 48)))
            || format('<rect x="330" y="%s" width="%s" height="14" fill="#1f77b4"/>', 26 + (r.o - 1) * 20 + 2,
                      round(440 * r.value / vmax, 1))
            || format('<text x="%s" y="%s" class="ax">%s</text>', 334 + round(440 * r.value / vmax), 26 + r.o * 20 - 6,
                      round(r.value, 1) || ' ' || unit);
    END LOOP;
    RETURN svg || E'</svg></figure>\n';
END
$$;

-- Key/value rows of an object, as a two-column section.
CREATE FUNCTION folio_perf_data.kv_section(title text, obj jsonb, keys text[])
RETURNS jsonb
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT folio_perf_data.section(title, ARRAY['metric', 'value'],
      (SELECT coalesce(jsonb_agg(jsonb_build_object('metric', k, 'value',
                 CASE WHEN obj->k IS NULL OR jsonb_typeof(obj->k) = 'null' THEN to_jsonb('unavailable'::text)
                      WHEN (k LIKE '%bytes%' OR k LIKE 'db_size%') AND jsonb_typeof(obj->k) = 'number'
                      THEN to_jsonb(pg_size_pretty((obj->>k)::numeric))
                      ELSE obj->k END) ORDER BY o), '[]')
       FROM unnest(keys) WITH ORDINALITY AS u(k, o)))
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
    out text := '';
    fmt text := folio_perf_report.format;
    title text;
    ww jsonb;
    sampler_off boolean;
    conn_cols text[] := ARRAY['dimension', 'key', 'avg', 'p95', 'max', 'pct_of_max_connections'];
    load_cols text[] := ARRAY['dimension', 'key', 'module', 'aas', 'max', 'pct_of_load', 'query'];
    top_cols text[] := ARRAY['rank', 'tenant', 'module', 'calls', 'total_exec_ms', 'mean_exec_ms',
                             'rows', 'pct_of_total_time', 'shared_blks_read', 'status', 'query'];
BEGIN
    PERFORM folio_perf_data.check_format(fmt);
    doc := folio_perf_data.report_doc(window_id);
    IF fmt = 'json' THEN
        RETURN jsonb_pretty(doc);
    END IF;
    ww := doc->'window';
    sampler_off := (ww->>'sampler') LIKE 'off%';
    title := 'folio_perf report: ' || coalesce(ww->>'label', 'window ' || (ww->>'window_id'));

    secs := secs || folio_perf_data.section('Window', ARRAY['metric', 'value'], jsonb_build_array(
        jsonb_build_object('metric', 'window', 'value', ww->'window_id'),
        jsonb_build_object('metric', 'label', 'value', ww->'label'),
        jsonb_build_object('metric', 'tags', 'value', (ww->'tags')::text),
        jsonb_build_object('metric', 'begin', 'value', ww->'begin_at'),
        jsonb_build_object('metric', 'end', 'value', ww->'end_at'),
        jsonb_build_object('metric', 'duration_s', 'value', ww->'duration_s'),
        jsonb_build_object('metric', 'database', 'value', ww->'database'),
        jsonb_build_object('metric', 'server_version_num', 'value', ww->'server_version_num'),
        jsonb_build_object('metric', 'max_connections', 'value', ww->'max_connections'),
        jsonb_build_object('metric', 'sampler', 'value', ww->'sampler'))
        || CASE WHEN ww ? 'target' THEN jsonb_build_array(
            jsonb_build_object('metric', 'target', 'value', ww->'target'),
            jsonb_build_object('metric', 'unavailable',
                               'value', (SELECT string_agg(u, '; ') FROM jsonb_array_elements_text(ww->'unavailable') u)))
           ELSE '[]'::jsonb END);
    secs := secs || folio_perf_data.section('Data quality', ARRAY['flag', 'detail'], doc->'data_quality',
        CASE WHEN jsonb_array_length(doc->'data_quality') = 0 THEN 'No resets, restarts, evictions or relation changes inside the window: every number is exact.' END);
    secs := secs || folio_perf_data.section('Verdict', ARRAY['severity', 'check', 'finding'], doc->'verdict');
    secs := secs || folio_perf_data.kv_section('Summary', doc->'summary', ARRAY[
        'duration_s', 'commits', 'commits_per_s', 'rollbacks', 'cache_hit_ratio', 'blks_read',
        'tup_inserted', 'tup_updated', 'tup_deleted', 'temp_files', 'temp_bytes', 'deadlocks',
        'wal_bytes', 'wal_bytes_per_s', 'checkpoints_timed', 'checkpoints_req',
        'db_size_begin', 'db_size_end', 'statements_total_ms', 'cpus', 'host_cpu_pct', 'db_cpu_pct',
        'connections_avg', 'connections_p95', 'connections_max', 'max_connections',
        'db_load_avg', 'db_load_max']);
    secs := secs || folio_perf_data.section('Top statements by total time', top_cols, doc->'top_statements');
    secs := secs || folio_perf_data.section('Top statements by calls', top_cols, doc->'top_by_calls');
    secs := secs || folio_perf_data.section('Top statements by mean time', top_cols, doc->'top_by_mean_time');
    secs := secs || folio_perf_data.section('Top statements by I/O', top_cols, doc->'top_by_io');
    secs := secs || folio_perf_data.section('Module activity (per tenant)',
        ARRAY['tenant', 'module', 'inserts', 'updates', 'deletes', 'seq_scan', 'idx_scan',
              'blks_read', 'size_end', 'growth', 'statement_calls', 'statement_time_ms', 'flags'],
        doc->'modules');
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
            (SELECT jsonb_agg(r) FROM jsonb_array_elements(doc->'db_load') r WHERE r->>'dimension' <> 'sampler'));
        secs := secs || folio_perf_data.section('CPU', ARRAY['dimension', 'key', 'cpu_seconds', 'pct_of_host_capacity', 'pct_of_db_cpu'],
            (SELECT jsonb_agg(r) FROM jsonb_array_elements(doc->'cpu') r WHERE r->>'dimension' <> 'sampler'));
    END IF;
    secs := secs || folio_perf_data.section('Trend: first half against second half',
        ARRAY['tenant', 'module', 'first_calls', 'last_calls', 'first_mean_ms', 'last_mean_ms', 'mean_change_pct', 'query'],
        doc#>'{trend,statements}', doc#>>'{trend,note}');

    IF fmt = 'html' THEN
        out := '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>'
            || folio_perf_data.html_escape(title) || '</title><style>'
            || 'body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}'
            || 'h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}'
            || 'table{border-collapse:collapse;margin:8px 0;font-size:12.5px}'
            || 'th,td{border:1px solid #ddd;padding:3px 6px;vertical-align:top}th{background:#f3f3f3;text-align:left}'
            || 'td.n{text-align:right;font-variant-numeric:tabular-nums}td.q{max-width:520px}'
            || 'code,pre{font-size:11.5px;white-space:pre-wrap}.note{color:#555;font-style:italic}'
            || '.chart{max-width:100%;height:auto}.ct{font-weight:600;font-size:13px}.ax,.lg{font-size:11px;fill:#444}'
            || '.pa{fill:#fafafa;stroke:#bbb}.gl{stroke:#ddd}.tw{overflow-x:auto}'
            || '@media print{body{margin:0}h2{break-after:avoid}table,figure{break-inside:avoid}}'
            || '</style></head><body><h1>' || folio_perf_data.html_escape(title) || E'</h1>\n';
        FOREACH sec IN ARRAY secs LOOP
            out := out || folio_perf_data.render_section('html', sec);
            IF sec->>'title' = 'Summary' AND NOT sampler_off THEN
                out := out || '<h2>Charts</h2>'
                    || folio_perf_data.svg_chart('Connections over time',
                           (SELECT jsonb_agg(p) FROM jsonb_array_elements(doc#>'{timeseries,connections}') p), false, NULL)
                    || folio_perf_data.svg_chart('DB load by wait class (average active sessions, stacked)',
                           doc#>'{timeseries,db_load_by_wait_event_type}', true, 'AAS');
            END IF;
            IF sec->>'title' = 'Top statements by total time' THEN
                out := out || folio_perf_data.svg_bars('Top statements by total time (ms)',
                    (SELECT jsonb_agg(jsonb_build_object('label',
                                coalesce(t->>'module', '?') || ' ' || left(regexp_replace(t->>'query', '\s+', ' ', 'g'), 36),
                                'value', (t->>'total_exec_ms')::numeric) ORDER BY (t->>'rank')::int)
                     FROM jsonb_array_elements(doc->'top_statements') t WHERE (t->>'rank')::int <= 10), 'ms');
            END IF;
            -- plans under the top statements (issue 9)
            IF sec->>'title' = 'Top statements by total time' THEN
                out := out || folio_perf_data.render_plans('html', doc, 'top_statements');
            ELSIF sec->>'title' = 'Top statements by mean time' THEN
                out := out || folio_perf_data.render_plans('html', doc, 'top_by_mean_time');
            END IF;
        END LOOP;
        RETURN out || E'</body></html>\n';
    END IF;

    out := CASE fmt WHEN 'markdown' THEN '## ' || title || E'\n\n'
                    ELSE title || E'\n' || repeat('#', length(title)) || E'\n\n' END;
    FOREACH sec IN ARRAY secs LOOP
        out := out || folio_perf_data.render_section(fmt, sec);
        -- plans under the top statements (issue 9)
        IF sec->>'title' = 'Top statements by total time' THEN
            out := out || folio_perf_data.render_plans(fmt, doc, 'top_statements');
        ELSIF sec->>'title' = 'Top statements by mean time' THEN
            out := out || folio_perf_data.render_plans(fmt, doc, 'top_by_mean_time');
        END IF;
    END LOOP;
    RETURN out;
END
$$;



/*
 * Run against run: statement by statement (matched by normalised text and
 * tenant, so that releases and databases whose queryids differ still
 * match), module by module, and the window summaries.  plan_changed (issue
 * 9): on statement rows, whether the slowest plan's shape differs between
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
    -- slowest plans (issue 9)
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
    -- their plans are (issue 9)
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

    IF pg_catalog.to_regprocedure('@extschema@.folio_perf_connections(bigint)') IS NOT NULL THEN
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
    END IF;
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
    out text;
    title text;
    bl text;
    nl text;
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
        'rows', '[]'::jsonb);
    IF fmt = 'json' THEN
        SELECT coalesce(jsonb_agg(to_jsonb(r)), '[]') INTO rows FROM unnest(cmp) r;
        doc := jsonb_set(doc, '{rows}', rows);
        RETURN jsonb_pretty(doc);
    END IF;
    title := format('folio_perf comparison: %s (base) vs %s (new)', bl, nl);

    -- statements: one row per statement with the seeds' columns, the
    -- top_n by total time of both windows (a 24-hour soak has thousands;
    -- the json format and folio_perf_compare_rows() have them all)
    SELECT count(DISTINCT r.key) INTO n_stmt
    FROM unnest(cmp) r WHERE r.section = 'statement';
    secs := secs || folio_perf_data.section('Statements',
        ARRAY['tenant', 'module', 'status', 'calls_base', 'calls_new', 'calls_delta_pct',
              'mean_ms_base', 'mean_ms_new', 'mean_delta_pct', 'total_ms_base', 'total_ms_new', 'plan', 'query'],
        (SELECT jsonb_agg(x ORDER BY coalesce((x->>'total_ms_new')::numeric, 0) + coalesce((x->>'total_ms_base')::numeric, 0) DESC)
         FROM (SELECT x FROM (SELECT jsonb_build_object('tenant', min(r.tenant), 'module', min(r.module),
                   'status', min(r.status),
                   'calls_base', max(r.base) FILTER (WHERE r.metric = 'calls'),
                   'calls_new', max(r.new) FILTER (WHERE r.metric = 'calls'),
                   'calls_delta_pct', max(r.delta_pct) FILTER (WHERE r.metric = 'calls'),
                   'mean_ms_base', max(r.base) FILTER (WHERE r.metric = 'mean_exec_ms'),
                   'mean_ms_new', max(r.new) FILTER (WHERE r.metric = 'mean_exec_ms'),
                   'mean_delta_pct', max(r.delta_pct) FILTER (WHERE r.metric = 'mean_exec_ms'),
                   'total_ms_base', max(r.base) FILTER (WHERE r.metric = 'total_exec_ms'),
                   'total_ms_new', max(r.new) FILTER (WHERE r.metric = 'total_exec_ms'),
                   'plan', CASE bool_or(r.plan_changed) WHEN true THEN 'changed' WHEN false THEN 'same' END,
                   'query', min(r.query)) AS x
               FROM unnest(cmp) r WHERE r.section = 'statement'
               GROUP BY r.key, r.tenant, r.module) y
               ORDER BY coalesce((x->>'total_ms_new')::numeric, 0) + coalesce((x->>'total_ms_base')::numeric, 0) DESC
               LIMIT top_n) z),
        CASE WHEN n_stmt > top_n THEN format('The %s of %s statements with the most time in the two windows; the json format and folio_perf_compare_rows() have all.', top_n, n_stmt) END);
    -- statements whose plan changed (issue 9)
    secs := secs || folio_perf_data.plan_changes_section(base_window, new_window);
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
    secs := secs || folio_perf_data.section('Modules',
        ARRAY['tenant', 'module', 'status', 'calls_base', 'calls_new', 'calls_delta_pct',
              'time_ms_base', 'time_ms_new', 'time_delta_pct', 'rows_written_base', 'rows_written_new',
              'seq_scan_base', 'seq_scan_new', 'growth_base', 'growth_new'],
        mod_rows,
        CASE WHEN n_mod > top_n THEN format('The %s of %s modules with the most statement time, then rows written, in the two windows; the json format and folio_perf_compare_rows() have all.', top_n, n_mod) END);
    secs := secs || folio_perf_data.section('Database',
        ARRAY['metric', 'base', 'new', 'delta', 'delta_pct'],
        (SELECT jsonb_agg(to_jsonb(r)) FROM unnest(cmp) r WHERE r.section = 'summary'));
    secs := secs || folio_perf_data.section('Connections and DB load',
        ARRAY['section', 'key', 'metric', 'base', 'new', 'delta', 'delta_pct', 'status'],
        (SELECT jsonb_agg(to_jsonb(r)) FROM unnest(cmp) r WHERE r.section IN ('connections', 'db_load')),
        CASE WHEN NOT EXISTS (SELECT 1 FROM unnest(cmp) r WHERE r.section IN ('connections', 'db_load'))
             THEN 'No sampler data in these windows: connections and DB load need folio_perf preloaded with folio_perf.sample_interval > 0.' END);

    IF fmt = 'html' THEN
        out := '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>'
            || folio_perf_data.html_escape(title) || '</title><style>'
            || 'body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}h1{font-size:22px}'
            || 'h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}'
            || 'table{border-collapse:collapse;font-size:12.5px}th,td{border:1px solid #ddd;padding:3px 6px}'
            || 'th{background:#f3f3f3}td.n{text-align:right}.note{color:#555;font-style:italic}'
            || '@media print{table{break-inside:avoid}}</style></head><body><h1>'
            || folio_perf_data.html_escape(title) || E'</h1>\n';
        FOREACH sec IN ARRAY secs LOOP
            out := out || folio_perf_data.render_section('html', sec);
        END LOOP;
        RETURN out || E'</body></html>\n';
    END IF;
    out := CASE fmt WHEN 'markdown' THEN '## ' || title || E'\n\n'
                    ELSE title || E'\n' || repeat('#', length(title)) || E'\n\n' END;
    FOREACH sec IN ARRAY secs LOOP
        out := out || folio_perf_data.render_section(fmt, sec);
    END LOOP;
    RETURN out;
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
-- 5b. plans (issue 9)
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
       CASE WHEN folio_perf_data.may_see_text(sp.userid) THEN p.plan_text
            ELSE '<insufficient privilege>' END AS plan_text,
       CASE WHEN folio_perf_data.may_see_text(sp.userid) THEN p.plan_json END AS plan_json
FROM folio_perf_data.stmt_plan sp
JOIN folio_perf_data.plan p ON p.plan_id = sp.plan_id;

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
    -- created once per session, emptied at commit (see capture())
    IF pg_catalog.to_regclass('pg_temp.fperf_cur_plan') IS NULL THEN
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
    FROM fperf_cur_plan c
    ORDER BY c.plan_md5
    ON CONFLICT (plan_md5) DO NOTHING;

    INSERT INTO folio_perf_data.stmt_plan (snap_id, dbid, userid, queryid, toplevel,
        plan_id, fingerprint, duration_ms, captured_at, shapes, slow_calls)
    SELECT p_snap, c.dbid, c.userid, c.queryid, c.toplevel, p.plan_id, c.fingerprint,
           c.duration_ms, c.captured_at, c.shapes, c.slow_calls
    FROM fperf_cur_plan c
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
CREATE FUNCTION folio_perf_plans(window_id bigint)
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
     q AS (SELECT t.text_md5::text AS h,
                  CASE WHEN bool_and(t.query IS DISTINCT FROM '<insufficient privilege>') THEN min(t.query)
                       ELSE '<insufficient privilege>' END AS query
           FROM folio_perf_data.stmt_text t
           WHERE t.text_md5::text IN (SELECT bn.h FROM bn WHERE bn.changed)
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
              WHERE NOT p.toplevel AND p.module IS DISTINCT FROM 'folio_perf'
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
CREATE FUNCTION folio_perf_data.render_plans(fmt text, doc jsonb, lst text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    title text := CASE lst WHEN 'top_statements' THEN 'Plans of the top statements'
                           WHEN 'nested_plans' THEN 'Plans of the slowest nested statements'
                           ELSE 'Plans of the top statements by ' || replace(replace(lst, 'top_by_', ''), '_', ' ') END;
    shown jsonb := '[]';
    r jsonb;
    head text;
    body text;
    fence text;
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
        head := format('#%s %s%s: slowest execution %s ms, ended %s; executions over plan_min_duration: %s%s%s',
            r->>'rank', coalesce(r->>'module', 'unattributed'),
            coalesce(' (' || (r->>'tenant') || ')', ''),
            r->'plan'->>'slowest_ms', left(replace(r->'plan'->>'captured_at', 'T', ' '), 19),
            r->'plan'->>'slow_calls',
            CASE WHEN (r->'plan'->>'plan_changed')::boolean
                 THEN format(', plan changed in the window (%s plans)', r->'plan'->>'plans_seen') ELSE '' END,
            CASE WHEN (r->'plan'->>'truncated')::boolean THEN ', plan truncated' ELSE '' END);
        body := r->'plan'->>'text';
        IF fmt = 'html' THEN
            out := out || '<details><summary>' || folio_perf_data.html_escape(head)
                || '</summary><p><code>' || folio_perf_data.html_escape(r->>'query')
                || '</code></p><pre>' || folio_perf_data.html_escape(body) || E'</pre></details>\n';
        ELSIF fmt = 'markdown' THEN
            fence := CASE WHEN position('```' IN body) > 0 OR position('```' IN coalesce(r->>'query', '')) > 0
                          THEN '~~~~~~' ELSE '```' END;
            out := out || '**' || replace(head, '_', '\_') || E'**\n\n' || fence || E'\n'
                || coalesce(r->>'query', '') || E'\n\n' || body || E'\n' || fence || E'\n\n';
        ELSE
            out := out || head || E'\n' || coalesce(folio_perf_data.cell(r->'query', 'query', 'text'), '') || E'\n'
                || regexp_replace(body, '^', '    ', 'gn') || E'\n\n';
        END IF;
    END LOOP;
    IF k = 0 AND lst <> 'top_statements' THEN
        RETURN '';
    END IF;
    IF k = 0 THEN
        out := CASE fmt WHEN 'html' THEN '<p class="note">' || folio_perf_data.html_escape('Plans: ' || coalesce(doc#>>'{window,plans}', 'none')) || E'</p>\n'
                        WHEN 'markdown' THEN '_Plans: ' || replace(coalesce(doc#>>'{window,plans}', 'none'), '_', '\_') || E'_\n\n'
                        ELSE '(Plans: ' || coalesce(doc#>>'{window,plans}', 'none') || E')\n\n' END;
    ELSE
        out := CASE fmt WHEN 'html' THEN '<h2>' || folio_perf_data.html_escape(title) || E'</h2>\n'
                        WHEN 'markdown' THEN '### ' || title || E'\n\n'
                        ELSE title || E'\n' || repeat('=', length(title)) || E'\n' END
            || out;
    END IF;
    -- the nested statements' plans follow those of the top statements
    IF lst = 'top_statements' THEN
        out := out || folio_perf_data.render_plans(fmt, doc, 'nested_plans');
    END IF;
    RETURN out;
END
$$;


------------------------------------------------------------------------
-- 6. sampler storage and reports                       (issue 4)
------------------------------------------------------------------------

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
LANGUAGE sql VOLATILE STRICT SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
    WITH d AS (
        DELETE FROM folio_perf_data.sample_interval
        WHERE ended_at < pg_catalog.now() - older_than
        RETURNING 1)
    SELECT pg_catalog.count(*) FROM d
$$;

-- Time range of a window and what the reports need about it.
CREATE FUNCTION folio_perf_data.sample_window(window_id bigint,
    OUT t0 timestamptz, OUT t1 timestamptz, OUT max_connections int,
    OUT n_ticks bigint, OUT covered_ms numeric, OUT cpu_ticks bigint,
    OUT note text, OUT target_id int, OUT target_name text)
RETURNS record
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    st record;
    window_ms numeric;
BEGIN
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
    ELSIF covered_ms < 0.9 * window_ms AND window_ms - covered_ms > 5000 THEN
        note := pg_catalog.format('partial: samples cover %s%% of the window',
                                  round(100 * covered_ms / window_ms));
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
              pct_of_max_connections numeric, samples bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w record;
BEGIN
    SELECT * INTO w FROM folio_perf_data.sample_window(window_id);
    IF w.note IS NOT NULL THEN
        RETURN QUERY SELECT 'sampler'::text, w.note, NULL::text, NULL::text, NULL::text,
                            NULL::numeric, NULL::int, NULL::int, NULL::numeric, w.n_ticks;
        IF w.n_ticks = 0 THEN
            RETURN;
        END IF;
    END IF;
    RETURN QUERY
    SELECT ss.dimension, nullif(ss.key, ''), ss.tenant, ss.module, ss.attributed_by,
           round(st.avg, 2), st.p95, st.max,
           round(100.0 * st.max / nullif(w.max_connections, 0), 1),
           w.n_ticks
      FROM folio_perf_data.sample_stats('connections', w.t0, w.t1, w.n_ticks, w.target_id) st
      JOIN folio_perf_data.sample_series ss ON ss.series_id = st.series_id
     ORDER BY array_position(ARRAY['total', 'database', 'state', 'tenant', 'module',
                                   'role', 'application_name'], ss.dimension),
              st.avg DESC, ss.key COLLATE "C";
END
$$;

CREATE FUNCTION folio_perf_db_load(window_id bigint)
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
           CASE WHEN ss.dimension = 'statement' THEN ss.queryid::text ELSE nullif(ss.key, '') END,
           coalesce(sk.tenant, ss.tenant), coalesce(sk.module, ss.module),
           coalesce(sk.attributed_by, ss.attributed_by),
           ss.queryid,
           round(st.avg, 3), st.max,
           round(100 * st.avg / nullif((SELECT tot.avg FROM tot), 0), 1),
           qt.query
      FROM st
      JOIN folio_perf_data.sample_series ss ON ss.series_id = st.series_id
      LEFT JOIN folio_perf_data.stmt_key sk
             ON ss.dimension = 'statement' AND sk.dbid = ss.dbid AND sk.userid = ss.userid
            AND sk.queryid = ss.queryid AND sk.toplevel
            AND sk.target_id IS NOT DISTINCT FROM ss.target_id
      LEFT JOIN folio_perf_data.stmt_text qt ON qt.key_id = sk.key_id
     ORDER BY array_position(ARRAY['total', 'wait_event_type', 'wait_event', 'tenant',
                                   'module', 'role', 'statement', 'backend_type',
                                   'database'], ss.dimension),
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
    metric text DEFAULT 'connections', buckets int DEFAULT NULL)
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
    IF target < 1 OR target > 10000 THEN
        RAISE EXCEPTION 'buckets must be between 1 and 10000'
            USING ERRCODE = 'invalid_parameter_value';
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
        IF v_dim NOT IN ('state', 'tenant', 'module', 'role', 'application_name',
                       'database') THEN
            v_kind := NULL;
        END IF;
    END IF;
    IF v_kind IS NULL THEN
        RAISE EXCEPTION 'unknown metric "%"', metric
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Metrics: connections, active, cpu, db_load, connections_by_<state|tenant|module|role|application_name|database>, db_load_by_<wait_event_type|wait_event|tenant|module|role|statement|backend_type|database>.';
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
         ORDER BY 1, 4;
    END IF;
END
$$;


------------------------------------------------------------------------
-- 7. privileges and pg_dump                            (issue 7)
------------------------------------------------------------------------


-- Collected data survives pg_dump / pg_restore.
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN
        SELECT c.oid::regclass::text FROM pg_catalog.pg_class c
        WHERE c.relnamespace = 'folio_perf_data'::regnamespace
          AND c.relkind IN ('r', 'S')
    LOOP
        PERFORM pg_catalog.pg_extension_config_dump(t, '');
    END LOOP;
END
$$;

/*
 * Privileges: nothing for PUBLIC.  folio_perf_reader (and members of
 * pg_read_all_stats, hence pg_monitor) may read reports and views;
 * folio_perf_writer may also take snapshots, make windows and purge.
 * Both roles are created if missing and survive DROP EXTENSION, like any
 * role.  Query texts of other roles are shown only to members of
 * pg_read_all_stats, as in pg_stat_statements.
 */
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'folio_perf_reader') THEN
        CREATE ROLE folio_perf_reader NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'folio_perf_writer') THEN
        CREATE ROLE folio_perf_writer NOLOGIN;
    END IF;
    IF NOT pg_catalog.pg_has_role('folio_perf_writer', 'folio_perf_reader', 'MEMBER') THEN
        GRANT folio_perf_reader TO folio_perf_writer;
    END IF;
END
$$;

DO $$
DECLARE
    f record;
    writer_only text[] := ARRAY[
        'folio_perf_snapshot', 'folio_perf_snapshot_timed', 'folio_perf_begin',
        'folio_perf_end', 'folio_perf_window', 'folio_perf_purge',
        'folio_perf_relations_reset', 'capture', 'folio_perf_target_add',
        'folio_perf_target_drop', 'folio_perf_sampler_flush', 'folio_perf_sampler_purge',
        'folio_perf_plans_take', 'folio_perf_plans_reset', 'store_plans'];
    -- reach remote targets with the stored connection strings: only the
    -- extension's owner, through capture() and folio_perf_target_add()
    owner_only text[] := ARRAY[
        'remote_query', 'remote_version', 'remote_check', 'src_pgss', 'src_activity',
        'src_rel_changes', 'src_remote_sizes', 'src_catalog_bytes',
        'capture_header_local', 'capture_header_remote'];
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure AS sig, p.proname
        FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass
             AND d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
    LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f.sig);
        IF f.proname = ANY (owner_only) THEN
            CONTINUE;
        ELSIF f.proname = ANY (writer_only) THEN
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO folio_perf_writer', f.sig);
        ELSE
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO folio_perf_reader, pg_read_all_stats', f.sig);
        END IF;
    END LOOP;
    FOR f IN
        SELECT c.oid::regclass AS sig, c.relkind
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_class'::regclass
             AND d.objid = c.oid AND d.deptype = 'e'
        JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
    LOOP
        EXECUTE format('REVOKE ALL ON %s FROM PUBLIC', f.sig);
        IF f.relkind IN ('r', 'v') THEN
            EXECUTE format('GRANT SELECT ON %s TO folio_perf_reader, pg_read_all_stats', f.sig);
        END IF;
    END LOOP;
END
$$;
GRANT USAGE ON SCHEMA folio_perf_data TO folio_perf_reader, pg_read_all_stats;
-- texts of other roles' statements only through folio_perf_data.stmt_text
REVOKE SELECT ON folio_perf_data.query_text FROM folio_perf_reader;
-- connection strings (passwords) only for the extension's owner;
-- folio_perf_targets shows them without passwords
REVOKE ALL ON folio_perf_data.target FROM folio_perf_reader, pg_read_all_stats;
GRANT SELECT (target_id, name, enabled, created_at, dropped_at) ON folio_perf_data.target
    TO folio_perf_reader, pg_read_all_stats;
-- plans of other roles' statements only through folio_perf_data.stmt_plan_text (issue 9)
REVOKE SELECT ON folio_perf_data.plan FROM folio_perf_reader;
