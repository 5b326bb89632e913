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

-- The relations part of a local snapshot in one call (src/relstats.c): the
-- same pass, compared with this database's rows of folio_perf_data.rel_last
-- (with the caller's SELECT privilege on it: read in C, or the database's
-- shared image of them when it is the state snapshot prev_snap left and the
-- caller holds the capture lock, src/relstate.c), returning what changed
-- with its previous state and its size (read from the files only where it
-- can have changed): the rows of capture()'s work table.
CREATE FUNCTION folio_perf_rel_capture(prev_snap bigint DEFAULT NULL,
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
    OUT sig bigint, OUT status "char", OUT table_relname name,
    OUT wsig bigint, OUT rel_key_id bigint, OUT last_relid oid,
    OUT last_relfilenode oid, OUT last_wsig bigint, OUT last_size bigint,
    OUT last_live bigint, OUT last_dead bigint, OUT size_bytes bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_rel_capture'
LANGUAGE C VOLATILE CALLED ON NULL INPUT PARALLEL RESTRICTED ROWS 100;

-- What the previous state that the last folio_perf_rel_capture() of this
-- transaction compared with held: its relations and their bytes, the base
-- capture() adds what changed to (no second scan of rel_last).
CREATE FUNCTION folio_perf_rel_capture_base(OUT n_relations bigint, OUT rel_bytes bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'folio_perf_rel_capture_base'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

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
    OUT dropped bigint, OUT shmem_bytes bigint, OUT evicted bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'folio_perf_relations_status'
LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE VIEW folio_perf_relations_status AS
    SELECT * FROM folio_perf_relations_status();

-- The previous snapshot's relation states kept in shared memory, one row
-- per database that has an image (src/relstate.c): the snapshot that left
-- it (NULL: not valid, the next snapshot reads rel_last), its relations and
-- their bytes, its memory, how many captures used it or read rel_last, how
-- many read only the pg_class blocks that changed, and pg_class's blocks and
-- those the last snapshot read.
CREATE FUNCTION folio_perf_rel_state(
    OUT datid oid, OUT datname name, OUT snap_id bigint, OUT relations bigint,
    OUT rel_bytes bigint, OUT memory_bytes bigint, OUT uses bigint,
    OUT reads bigint, OUT publishes bigint, OUT not_made bigint,
    OUT incremental bigint, OUT class_blocks bigint, OUT blocks_read bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'folio_perf_rel_state'
LANGUAGE C VOLATILE PARALLEL RESTRICTED ROWS 1;

CREATE VIEW folio_perf_rel_state AS
    SELECT * FROM folio_perf_rel_state();
