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
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
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
