-- Snapshots, windows and the core reports: exact numbers over a window.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
RESET client_min_messages;
SET client_min_messages = warning;

-- A two-tenant FOLIO-like fixture: mod-source-record-storage logs in as a
-- shared user with unqualified SQL; mod-source-record-manager and
-- mod-inventory-storage as RMB roles with qualified SQL.
CREATE ROLE regress_folio_admin;
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['fs09000000', 'cs00000int_0001'] LOOP
    EXECUTE format('CREATE ROLE %I', t || '_mod_source_record_manager');
    EXECUTE format('CREATE ROLE %I', t || '_mod_inventory_storage');
    EXECUTE format('CREATE SCHEMA %I AUTHORIZATION regress_folio_admin', t || '_mod_source_record_storage');
    EXECUTE format('CREATE SCHEMA %1$I AUTHORIZATION %1$I', t || '_mod_source_record_manager');
    EXECUTE format('CREATE SCHEMA %1$I AUTHORIZATION %1$I', t || '_mod_inventory_storage');
    EXECUTE format('CREATE TABLE %I.marc_records_lb (id uuid PRIMARY KEY, content jsonb)', t || '_mod_source_record_storage');
    EXECUTE format('CREATE TABLE %I.events_processed (handler_id uuid, event_id uuid, PRIMARY KEY (handler_id, event_id))', t || '_mod_source_record_manager');
    EXECUTE format('CREATE TABLE %I.instance (id uuid PRIMARY KEY, jsonb jsonb NOT NULL)', t || '_mod_inventory_storage');
    EXECUTE format('GRANT ALL ON ALL TABLES IN SCHEMA %1$I TO %2$I', t || '_mod_source_record_storage', 'regress_folio_admin');
    EXECUTE format('GRANT ALL ON ALL TABLES IN SCHEMA %1$I TO %1$I', t || '_mod_source_record_manager');
    EXECUTE format('GRANT ALL ON ALL TABLES IN SCHEMA %1$I TO %1$I', t || '_mod_inventory_storage');
  END LOOP;
END $$;
RESET client_min_messages;

-- The workload runs top-level (psql \gexec); each generated statement
-- switches to the role the module uses, the generator runs as superuser.
SELECT folio_perf_snapshot('before') > 0 AS snapped;
-- statements run before the window must not count
SELECT 'SET ROLE regress_folio_admin', 'SET search_path = fs09000000_mod_source_record_storage',
       format($f$insert into "marc_records_lb" ("id", "content") values (cast(%L as uuid), cast('{}' as jsonb)) on conflict ("id") do update set "content" = cast('{}' as jsonb)$f$, md5('before' || g)::uuid),
       'RESET ROLE', 'RESET search_path'
FROM generate_series(1, 3) g \gexec
-- this session's table statistics reach shared memory at the next idle point
SELECT pg_stat_force_next_flush();

SELECT folio_perf_begin('DI MARC Bib Create', '{"release":"Quesnelia","load":"5+7"}') AS w \gset
SELECT :w > 0 AS window_started;

-- data import: 5 records for fs09000000, 7 for cs00000int_0001; the same
-- unqualified text (the seed's) under one shared login
SELECT 'SET ROLE regress_folio_admin', format('SET search_path = %I', t || '_mod_source_record_storage'),
       format($f$insert into "marc_records_lb" ("id", "content") values (cast(%L as uuid), cast('{"leader":"x"}' as jsonb)) on conflict ("id") do update set "content" = cast('{"leader":"x"}' as jsonb)$f$, md5(t || g)::uuid),
       'RESET ROLE', 'RESET search_path'
FROM (VALUES ('fs09000000', 5), ('cs00000int_0001', 7)) v(t, n), generate_series(1, n) g \gexec
SELECT 'SET ROLE fs09000000_mod_source_record_manager',
       format('INSERT INTO fs09000000_mod_source_record_manager.events_processed (handler_id, event_id) VALUES (%L, %L)', md5('h' || g)::uuid, md5('e' || g)::uuid),
       'RESET ROLE'
FROM generate_series(1, 5) g \gexec
SELECT 'SET ROLE cs00000int_0001_mod_inventory_storage',
       format('INSERT INTO cs00000int_0001_mod_inventory_storage.instance (id, jsonb) VALUES (%L, %L)', md5('i' || g)::uuid, '{}'),
       'RESET ROLE'
FROM generate_series(1, 7) g \gexec
SET ROLE cs00000int_0001_mod_inventory_storage;
UPDATE cs00000int_0001_mod_inventory_storage.instance SET jsonb = '{"x":1}'::jsonb WHERE id IN
  (SELECT id FROM cs00000int_0001_mod_inventory_storage.instance ORDER BY id LIMIT 4);
RESET ROLE;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_end() = :w AS ended_the_same_window;

-- top statements: one row per tenant for the same unqualified text (up to
-- 17; from 18 pg_stat_statements jumbles relation names, keeps one entry for
-- both tenants and the parse hook cannot vouch for either: one row, tenant
-- unknown).  The output is the same on every version: the rows of that
-- statement are compared with this version's expected ones, listed here
-- for both (a regression before 18 to 18's weaker result fails)
SELECT current_setting('server_version_num')::int >= 180000 AS pg18 \gset
CREATE TEMP TABLE marc_expected (pg18 boolean, tenant text, attributed_by text, calls bigint, rows bigint, status text);
INSERT INTO marc_expected VALUES
  (false, 'cs00000int_0001', 'relations', 7, 7, 'new'),
  (false, 'fs09000000', 'relations', 5, 5, 'ok'),
  (true, NULL, 'relation_name', 12, 12, 'ok');
SELECT tenant, module, attributed_by, role, calls, rows, status, query
FROM folio_perf_top_statements(:w, 50)
WHERE module IS NOT NULL AND query NOT LIKE 'insert into "marc_records_lb"%'
ORDER BY query COLLATE "C", tenant COLLATE "C";
SELECT (SELECT array_agg(format('%s %s %s %s %s', tenant, attributed_by, calls, rows, status) ORDER BY tenant COLLATE "C")
          FROM folio_perf_top_statements(:w, 50)
         WHERE query LIKE 'insert into "marc_records_lb"%'
           AND module = 'mod_source_record_storage' AND role = 'regress_folio_admin')
     = (SELECT array_agg(format('%s %s %s %s %s', tenant, attributed_by, calls, rows, status) ORDER BY tenant COLLATE "C")
          FROM marc_expected WHERE pg18 = :'pg18') AS marc_records_lb_as_expected_on_this_version,
       (SELECT count(*) FROM marc_expected WHERE pg18) <> (SELECT count(*) FROM marc_expected WHERE NOT pg18)
         AS versions_differ;

-- no negative numbers, ranks are dense, percentages add up
SELECT count(*) FILTER (WHERE calls < 0 OR total_exec_ms < 0 OR rows < 0) AS negatives,
       max(rank) = count(*) AS dense_ranks,
       abs(sum(pct_of_total_time) - 100) < 1 AS pct_adds_up
FROM folio_perf_top_statements(:w, 1000);

-- housekeeping is left out unless asked for
SELECT count(*) > 0 AS has_set_statements
FROM folio_perf_top_statements(:w, 1000, include_housekeeping => true)
WHERE query ILIKE 'SET %';
SELECT count(*) AS set_statements_by_default
FROM folio_perf_top_statements(:w, 1000) WHERE query ILIKE 'SET %';

-- order_by variants agree on the set of statements (8 besides the rows of
-- the statement above)
SELECT o, count(*) - (SELECT count(*) FROM marc_expected WHERE pg18 = :'pg18') AS besides_marc_records_lb
FROM unnest(ARRAY['total_time','calls','mean_time','rows','io','wal','load']) o,
  LATERAL folio_perf_top_statements(:w, 1000, o) GROUP BY o ORDER BY o;

-- module activity: exactly the inserts and updates issued (the statement
-- calls of mod_source_record_storage are of the statement above: its rows
-- compared with this version's)
SELECT tenant, module, inserts, updates, deletes,
       CASE WHEN module <> 'mod_source_record_storage' THEN statement_calls END AS statement_calls,
       growth >= 0 AS grew
FROM folio_perf_module_activity(:w)
WHERE tenant IS NOT NULL
ORDER BY tenant COLLATE "C", module COLLATE "C";
SELECT (SELECT array_agg(format('%s %s', tenant, statement_calls) ORDER BY tenant COLLATE "C")
          FROM folio_perf_module_activity(:w) WHERE module = 'mod_source_record_storage')
     = (SELECT array_agg(format('%s %s', tenant, calls) ORDER BY tenant COLLATE "C")
          FROM (SELECT tenant, calls FROM marc_expected WHERE pg18 = :'pg18'
                UNION ALL
                -- 18: the tenants' rows have no statement of their own
                SELECT t, 0 FROM unnest(ARRAY['cs00000int_0001', 'fs09000000']) t WHERE :'pg18') e)
       AS srs_statement_calls_as_expected_on_this_version;

-- table activity: the right tables
SELECT tenant, module, schema, relname, inserts, updates, status
FROM folio_perf_table_activity(:w, 10)
ORDER BY schema COLLATE "C", relname COLLATE "C";

-- the database summary and flags of a clean window
SELECT label, commits > 0 AS commits, cache_hit_ratio BETWEEN 0 AND 100 AS ratio_ok,
       duration > '0'::interval AS has_duration,
       -- a sampler gap depends on the machine's timing (TAP tests it)
       nullif(array_to_string(array_remove(string_to_array(flags, ','), 'sampler_gap'), ','), '') AS flags
FROM folio_perf_db_summary(:w);
SELECT * FROM folio_perf_window_flags(:w) WHERE flag <> 'sampler_gap';
SELECT label, tags, end_snap > begin_snap AS ordered FROM folio_perf_windows WHERE window_id = :w;

-- folio_perf_window over the same two snapshots is the same window
SELECT folio_perf_window(begin_snap, end_snap) = :w AS same_window
FROM folio_perf_windows WHERE window_id = :w;

-- only changed objects are stored: an idle snapshot stores (almost) nothing
SELECT folio_perf_snapshot('idle 1') AS s1 \gset
SELECT folio_perf_snapshot('idle 2') AS s2 \gset
SELECT n_relations_stored = 0 AS no_relations_stored,
       n_statements_stored < n_statements AS fewer_statements_stored
FROM folio_perf_snapshots WHERE snap_id = :s2;

-- a table whose own statistics did not move (an index-only scan touched
-- only its index) still shows its sizes and tuples at both ends
CREATE TABLE fs09000000_mod_inventory_storage.ios (id int PRIMARY KEY, v int);
INSERT INTO fs09000000_mod_inventory_storage.ios SELECT g, g FROM generate_series(1, 1000) g;
VACUUM (ANALYZE) fs09000000_mod_inventory_storage.ios;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_snapshot('before ios') AS ios0 \gset
SET enable_seqscan = off;
SET enable_bitmapscan = off;
SELECT id FROM fs09000000_mod_inventory_storage.ios WHERE id = 5;
RESET enable_seqscan;
RESET enable_bitmapscan;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_window(:ios0, folio_perf_snapshot('after ios')) AS wios \gset
SELECT relname, idx_scan, inserts,
       live_tup = (SELECT n_live_tup FROM pg_stat_user_tables
                   WHERE relid = 'fs09000000_mod_inventory_storage.ios'::regclass) AS live_tup_ok,
       size_begin = pg_table_size('fs09000000_mod_inventory_storage.ios') AS size_begin_ok,
       size_end = pg_table_size('fs09000000_mod_inventory_storage.ios') AS size_end_ok, growth,
       index_size_end = pg_indexes_size('fs09000000_mod_inventory_storage.ios') AS index_size_ok
FROM folio_perf_table_activity(:wios, 10)
WHERE relname = 'ios';

-- the capture's work tables live as long as the session: a new session
-- whose first snapshot is rolled back (the tables with it), then two
-- snapshots in one transaction (the second empties the first's rows)
\c
BEGIN;
SAVEPOINT s1;
SELECT folio_perf_snapshot('rolled back') IS NOT NULL AS taken;
ROLLBACK TO SAVEPOINT s1;
SELECT folio_perf_snapshot('after rollback') IS NOT NULL AS taken;
SELECT folio_perf_snapshot('second in xact') IS NOT NULL AS taken;
COMMIT;
SELECT label, n_relations = (SELECT n_relations FROM folio_perf_snapshots
                             WHERE label = 'after rollback') AS same_relations
FROM folio_perf_snapshots
WHERE label IN ('rolled back', 'after rollback', 'second in xact')
ORDER BY snap_id;

-- a long-lived session (the sampler's timed snapshots) taking snapshot
-- after snapshot keeps its catalog caches flat: the capture's work tables
-- are made once per session, not created and dropped by every snapshot
-- (which left ~4.5 kB of cache entries behind each time, 450 kB per 100).
-- Two runs of 100 snapshots: a leak grows the caches in both, while
-- statistics that an ANALYZE elsewhere (of a catalog, on a loaded machine:
-- CI, beside a chroot being made) makes the capture load grow them once;
-- one flat run of the two passes.
\set ECHO none
\o /dev/null
-- (not while an ANALYZE of folio_perf's tables loads their new statistics
-- into the caches, 600 kB: autovacuum's, as the snapshots add rows, on a
-- loaded machine during the loop; their statistics are made first)
CREATE TEMP TABLE fp_tables AS
SELECT c.oid::regclass AS t FROM pg_class c
WHERE c.relnamespace = 'folio_perf_data'::regnamespace AND c.relkind = 'r';
SELECT format('ALTER TABLE %s SET (autovacuum_enabled = false)', t) FROM fp_tables \gexec
SELECT format('ANALYZE %s', t) FROM fp_tables \gexec
SELECT 'SELECT folio_perf_snapshot()' FROM generate_series(1, 5) \gexec
CREATE TEMP TABLE cache_before AS
SELECT used_bytes FROM pg_backend_memory_contexts WHERE name = 'CacheMemoryContext';
SELECT 'SELECT folio_perf_snapshot()' FROM generate_series(1, 100) \gexec
CREATE TEMP TABLE cache_after AS
SELECT used_bytes FROM pg_backend_memory_contexts WHERE name = 'CacheMemoryContext';
SELECT 'SELECT folio_perf_snapshot()' FROM generate_series(1, 100) \gexec
CREATE TEMP TABLE cache_after2 AS
SELECT used_bytes FROM pg_backend_memory_contexts WHERE name = 'CacheMemoryContext';
SELECT format('ALTER TABLE %s RESET (autovacuum_enabled)', t) FROM fp_tables \gexec
\o
\set ECHO all
SELECT c.used_bytes - b.used_bytes < 65536 OR c2.used_bytes - c.used_bytes < 65536
       AS cache_flat_over_100_snapshots
FROM cache_before b, cache_after c, cache_after2 c2;
