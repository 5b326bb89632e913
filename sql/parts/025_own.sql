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
    OUT capacity int, OUT rotations bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'folio_perf_own_status'
LANGUAGE C VOLATILE PARALLEL SAFE;
