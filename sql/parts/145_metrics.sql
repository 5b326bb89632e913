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
