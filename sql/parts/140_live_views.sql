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
