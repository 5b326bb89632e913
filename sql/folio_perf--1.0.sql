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

