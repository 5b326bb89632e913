-- folio_perf_parse_schema: FOLIO's <tenant>_<module> rule
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
RESET client_min_messages;

SELECT n AS input, p.tenant, p.module
FROM (VALUES
  ('fs09000000_mod_source_record_manager'),
  ('fs09000000_mod_source_record_storage'),
  ('fs09000000_mod_inventory_storage'),
  ('cs00000int_mod_inventory_storage'),
  ('cs00000int_0001_mod_inventory_storage'),
  ('cs00000int_0005_mod_circulation_storage'),
  ('cs00000001_0002_mod_users'),
  ('diku_mod_users'),
  ('diku_mod_data_export'),
  ('diku_mod_data_export_worker'),
  ('diku_mod_inventory'),
  ('fs00001069_mod_search'),
  ('fs09000000_mod_brand_new_module'),
  ('tenant_with_mod_in_it_mod_users'),
  ('pubsub_config'),
  ('data_import_global'),
  ('mod_search__system'),
  ('mod_inventory_storage'),
  ('public'),
  ('pg_catalog'),
  ('information_schema'),
  (''),
  ('_mod_users'),
  ('fs09000000_'),
  ('fs09000000_mod_'),
  ('fs09000000_mod_users_'),
  ('FS09000000_mod_users'),
  ('fs09000000_MOD_USERS'),
  ('fs09000000__mod_users'),
  ('fs-09_mod_users'),
  ('mod_users'),
  ('mod_'),
  ('mod__x'),
  ('a_mod_b'),
  ('abcdefghijabcdefghijabcdefghij1_mod_source_record_storage_xxxxxx'),
  ('abcdefghijabcdefghijabcdefghij1_mod_source_record_manager_xxxxx'),
  ('tenant_mod_users' || repeat('x', 100)),
  (E'fs09000000_mod_users\n'),
  ('fs09000000 mod_users'),
  ('ünïcode_mod_users'),
  ('fs09000000_mod_users__system')
) AS v(n), LATERAL folio_perf_parse_schema(v.n) AS p
ORDER BY n COLLATE "C";

-- exactly one row, also for NULL
SELECT count(*), count(tenant), count(module) FROM folio_perf_parse_schema(NULL);
-- the 63-byte identifier limit
SELECT length(n), (folio_perf_parse_schema(n)).*
FROM (SELECT repeat('t', 63 - length('_mod_users')) || '_mod_users' AS n) s;
SELECT length(n), (folio_perf_parse_schema(n)).*
FROM (SELECT repeat('t', 64 - length('_mod_users')) || '_mod_users' AS n) s;
-- every single byte, and some nasty strings: no error, at most a module
SELECT count(*) AS rows, count(module) AS with_module, count(tenant) AS with_tenant
FROM generate_series(1, 1000) b,
     LATERAL (VALUES (chr(b)), (chr(b) || '_mod_users'), ('x' || chr(b) || 'y_mod_users'),
                     ('mod_users' || chr(b)), (repeat(chr(b), 70))) v(s),
     LATERAL folio_perf_parse_schema(v.s) p;
-- properties
SELECT provolatile, proparallel, proisstrict FROM pg_proc
WHERE proname = 'folio_perf_parse_schema';

-- application_name → module
SELECT a AS application_name, folio_perf_appname_module(a) AS module
FROM (VALUES ('mod-inventory-storage-27.1.0'), ('mod-search'), ('mod_authtoken'),
  ('mod-source-record-storage-5.9.0-SNAPSHOT.123'), ('vertx-pg-client'),
  ('PostgreSQL JDBC Driver'), ('psql'), (''), ('mod-'), ('MOD-USERS-1.0'),
  ('mod-users-bl-7.0.0'), ('mod-x--1'), ('pgbench')) v(a)
ORDER BY a COLLATE "C";

-- query text evidence
SELECT q.tenant, q.module FROM folio_perf_query_schema(
 'INSERT INTO fs09000000_mod_source_record_manager.journal_records (id) VALUES ($1)') q;
SELECT q.tenant, q.module FROM folio_perf_query_schema(
 'UPDATE "cs00000int_0001_mod_inventory_storage"."instance" SET jsonb = $1') q;
SELECT q.tenant, q.module FROM folio_perf_query_schema(
 'select ''fs01_mod_users.x'' from t') q;
SELECT q.tenant, q.module FROM folio_perf_query_schema(
 'select i.id from instance i where i.id = $1') q;
SELECT folio_perf_query_relnames(
 'insert into "marc_records_lb" ("id", "content") values (cast($1 as uuid), cast($2 as jsonb)) on conflict ("id") do update set "content" = cast($3 as jsonb)');
SELECT folio_perf_query_relnames('select * from get_items_and_holdings_view($1,$2)');
SELECT folio_perf_query_relnames('SELECT a FROM only item JOIN loan l ON true, holdings_record WHERE x IN (SELECT 1 FROM request)');
SELECT folio_perf_query_relnames($q$select 'from x' from /* from y */ z -- from w
 join "Quoted ""Name""" on true$q$);
SELECT folio_perf_query_relnames(repeat('from t ', 100000)) IS NOT NULL AS survives_long_input;
SELECT cardinality(folio_perf_query_relnames(string_agg('from t' || g, ' '))) FROM generate_series(1, 100) g;

-- folio_perf.schema_pattern: another naming rule, group 1 the tenant,
-- group 2 the module; names it does not match belong to no module
SET folio_perf.schema_pattern = '^(?:(t[0-9]+)__)?([a-z]+_svc)$';
SELECT left(v.s, 24) AS name, p.tenant, p.module
FROM (VALUES ('t01__orders_svc'), ('billing_svc'), ('t01__Orders_svc'),
             ('fs09000000_mod_users'), (''), (NULL), (repeat('t1__a_svc', 40))) v(s),
     LATERAL folio_perf_parse_schema(v.s) p;
SELECT q.tenant, q.module FROM folio_perf_query_schema(
 'update t07__loans_svc.loan set x = 1') q;
-- multibyte names: the groups are characters, not bytes
SET folio_perf.schema_pattern = '^(.+)__(.+)$';
SELECT p.tenant, p.module, octet_length(p.tenant) AS tenant_bytes
FROM folio_perf_parse_schema('bibliothèque__prêt') p;
-- a pattern that does not compile, or without two groups, is refused
SET folio_perf.schema_pattern = '^(t[0-9]+';
SET folio_perf.schema_pattern = '^(t[0-9]+)_mod_[a-z]+$';
SHOW folio_perf.schema_pattern;
-- attribution of a snapshot follows it
DROP EXTENSION IF EXISTS folio_perf;
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
RESET client_min_messages;
CREATE SCHEMA t02__billing_svc;
CREATE TABLE t02__billing_svc.invoice (id int);
SELECT folio_perf_begin('pattern') IS NOT NULL AS began;
INSERT INTO t02__billing_svc.invoice VALUES (1), (2);
SELECT pg_stat_force_next_flush();
SELECT folio_perf_end() AS w \gset
SELECT tenant, module, inserts FROM folio_perf_module_activity(:w)
WHERE module = 'billing_svc';
SELECT tenant, module FROM folio_perf_top_statements(:w, 10)
WHERE query LIKE 'INSERT INTO t02__billing_svc%';
DROP SCHEMA t02__billing_svc CASCADE;
RESET folio_perf.schema_pattern;
SELECT p.tenant, p.module FROM folio_perf_parse_schema('t01__orders_svc') p;
SELECT p.tenant, p.module FROM folio_perf_parse_schema('fs09000000_mod_users') p;
