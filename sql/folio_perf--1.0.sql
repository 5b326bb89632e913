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
    u_ms               int[]
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
LANGUAGE sql VOLATILE STRICT
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
    OUT note text)
RETURNS record
LANGUAGE plpgsql STABLE
AS $$
DECLARE
    st record;
    window_ms numeric;
BEGIN
    SELECT b.taken_at, coalesce(e.taken_at, pg_catalog.clock_timestamp()),
           coalesce(e.max_connections, b.max_connections)
      INTO t0, t1, max_connections
      FROM folio_perf_data.window w
      JOIN folio_perf_data.snapshot b ON b.snap_id = w.begin_snap
      LEFT JOIN folio_perf_data.snapshot e ON e.snap_id = w.end_snap
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
     WHERE i.ended_at > t0 AND i.ended_at <= t1;

    window_ms := extract(epoch FROM t1 - t0) * 1000;
    IF n_ticks = 0 THEN
        SELECT * INTO st FROM @extschema@.folio_perf_sampler_status();
        note := 'off: no samples in this window'
            || CASE
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
    t1 timestamptz, n_ticks bigint,
    OUT series_id int, OUT avg numeric, OUT p95 int, OUT max int)
RETURNS SETOF record
LANGUAGE sql STABLE
AS $$
    WITH h AS (
        SELECT u.s, u.v, sum(u.f)::bigint AS f
          FROM folio_perf_data.sample_interval i,
               unnest(CASE kind WHEN 'connections' THEN i.c_series ELSE i.l_series END,
                      CASE kind WHEN 'connections' THEN i.c_value ELSE i.l_value END,
                      CASE kind WHEN 'connections' THEN i.c_freq ELSE i.l_freq END) AS u(s, v, f)
         WHERE i.ended_at > t0 AND i.ended_at <= t1
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
LANGUAGE plpgsql STABLE
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
      FROM folio_perf_data.sample_stats('connections', w.t0, w.t1, w.n_ticks) st
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
LANGUAGE plpgsql STABLE
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
        SELECT * FROM folio_perf_data.sample_stats('load', w.t0, w.t1, w.n_ticks)),
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
            AND sk.queryid = ss.queryid AND sk.toplevel AND sk.target_id IS NULL
      LEFT JOIN folio_perf_data.query_text qt ON qt.text_id = sk.text_id
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
LANGUAGE plpgsql STABLE
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
            'unavailable: /proc is not readable on this server'::text,
            NULL::text, NULL::text, NULL::text, NULL::numeric, NULL::numeric, NULL::numeric;
        RETURN;
    END IF;

    SELECT max(i.host_ncpu) AS ncpu, sum(i.host_busy_ms) AS busy, sum(i.host_total_ms) AS total
      INTO host
      FROM folio_perf_data.sample_interval i
     WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1 AND i.cpu_ticks > 0;

    SELECT sum(u.ms) INTO pg_ms
      FROM folio_perf_data.sample_interval i,
           unnest(i.u_series, i.u_ms) AS u(s, ms)
      JOIN folio_perf_data.sample_series ss ON ss.series_id = u.s
     WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1 AND ss.dimension = 'total';

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
LANGUAGE plpgsql STABLE
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
         WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1;
    ELSE
        SELECT avg(extract(epoch FROM i.ended_at - i.started_at) + i.sample_interval_ms / 1000.0)
          INTO min_s
          FROM folio_perf_data.sample_interval i
         WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1;
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
             WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1),
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
             WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1 AND i.cpu_ticks > 0),
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
             WHERE i.ended_at > w.t0 AND i.ended_at <= w.t1),
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

