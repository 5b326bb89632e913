-- Attribution: one precedence (relations > role > qualified > relation_name
-- > application_name) for statements, sessions, snapshots and live views.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
DROP SCHEMA IF EXISTS t1_mod_users, t2_mod_users, t1_mod_inventory_storage,
    t2_mod_inventory_storage, библиотека__журнал_выдачи_книг_по_абонементу CASCADE;
RESET client_min_messages;

CREATE SCHEMA t1_mod_users;
CREATE SCHEMA t2_mod_users;
CREATE SCHEMA t1_mod_inventory_storage;
CREATE SCHEMA t2_mod_inventory_storage;
CREATE TABLE t1_mod_users.users (id int);
CREATE TABLE t2_mod_users.users (id int);
CREATE TABLE t1_mod_inventory_storage.item (id int);
CREATE TABLE t2_mod_inventory_storage.item (id int);
CREATE TABLE t1_mod_inventory_storage.hrid_settings (id int);
CREATE TABLE t1_mod_users.shared_name (id int);
CREATE TABLE t1_mod_inventory_storage.shared_name (id int);

-- each kind of evidence alone, then against the weaker ones
SELECT v.what, p.tenant, p.module, p.attributed_by
FROM (VALUES
  ('nothing',                  'postgres', 'select 1', 'psql'),
  ('all NULL',                 NULL, NULL, NULL),
  ('application_name',         'folio', NULL, 'mod-inventory-storage-27.1.0'),
  ('driver default',           'folio', NULL, 'vertx-pg-client'),
  ('role',                     't1_mod_users', NULL, NULL),
  ('role > application_name',  't1_mod_users', NULL, 'mod-search'),
  ('role > qualified',         't1_mod_users', 'select * from t2_mod_inventory_storage.item', NULL),
  ('qualified',                'folio', 'select * from t2_mod_inventory_storage.item', 'mod-search'),
  ('qualified, quoted',        'folio', 'UPDATE "t2_mod_users"."users" SET id = 1', NULL),
  ('alias is no qualifier',    'folio', 'select i.id from t2_mod_inventory_storage.item i', NULL),
  ('qualified > relation_name','folio', 'select * from hrid_settings join t2_mod_users.users on true', NULL),
  ('relation_name, one schema','folio', 'SELECT jsonb FROM hrid_settings', 'mod-search'),
  ('relation_name, two tenants','folio', 'select * from users', NULL),
  ('relation_name, two modules: next name', 'folio', 'select * from shared_name, hrid_settings', NULL),
  ('relation_name, two modules only', 'folio', 'select * from shared_name', 'mod-users-19.0.0'),
  ('unknown name',             'folio', 'select * from no_such_table', 'mod-users-19.0.0'),
  ('name in a literal',        'folio', 'select ''from users''', NULL)
) v(what, role, query, app),
LATERAL folio_perf_attribute(v.role, v.query, v.app) p;

-- relations: the schemas the parse hook recorded for the statement's query
-- id decide before everything else (the DML target first)
SET search_path = t2_mod_users;
SELECT count(*) FROM users u JOIN t1_mod_inventory_storage.item i ON i.id = u.id;
INSERT INTO users SELECT id FROM t1_mod_inventory_storage.item;
RESET search_path;
SELECT s.query, p.tenant, p.module, p.attributed_by
FROM pg_stat_statements s,
     LATERAL folio_perf_attribute('t1_mod_inventory_storage', s.query,
                                  'mod-search', s.queryid) p
WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND (s.query LIKE 'SELECT count(*) FROM users u%' OR s.query LIKE 'INSERT INTO users SELECT%')
ORDER BY s.query;
-- a query id the store does not know gives no relations evidence
SELECT p.* FROM folio_perf_attribute('folio', NULL, NULL, 12345) p;

-- the snapshot attributes its statements by the same function
SET client_min_messages = warning;
CREATE TABLE t1_mod_users.журнал_выдачи_книг_по_читательским_билетам (id int);
RESET client_min_messages;
SET client_min_messages = warning;
DROP ROLE IF EXISTS t1_mod_users;
DROP ROLE IF EXISTS regress_attr_shared;
RESET client_min_messages;
CREATE ROLE t1_mod_users;
CREATE ROLE regress_attr_shared;
GRANT USAGE ON SCHEMA t1_mod_users, t2_mod_users, t1_mod_inventory_storage TO t1_mod_users, regress_attr_shared;
GRANT SELECT ON ALL TABLES IN SCHEMA t1_mod_users, t2_mod_users, t1_mod_inventory_storage TO t1_mod_users, regress_attr_shared;
SELECT folio_perf_begin('attribution') IS NOT NULL AS began;
SET ROLE t1_mod_users;
SELECT 1 AS rmb_role_no_relations;
SELECT count(*) AS rmb_role_qualified FROM t1_mod_users.users;
RESET ROLE;
SET ROLE regress_attr_shared;
SET search_path = t2_mod_users;
SELECT count(*) AS spring_unqualified FROM users;
RESET search_path;
RESET ROLE;
SET folio_perf.track_relations = off;
SET ROLE regress_attr_shared;
SELECT count(*) AS text_qualified FROM t1_mod_inventory_storage.item;
SET search_path = t1_mod_inventory_storage;
SELECT count(*) AS text_relation_name FROM hrid_settings;
SET search_path = t1_mod_users;
SELECT count(*) AS text_long_name FROM журнал_выдачи_книг_по_читательским_билетам;
RESET search_path;
RESET ROLE;
RESET folio_perf.track_relations;
SELECT folio_perf_end() AS w \gset
-- Two statements are attributed differently from PostgreSQL 18 on, whose
-- pg_stat_statements jumbles relations by name (one entry for the same
-- text on two tenants' tables, which the parse hook cannot vouch for): the
-- output is the same on every version, those two compared with this
-- version's expected rows, listed here for both (a regression before 18 to
-- 18's weaker result fails)
SELECT current_setting('server_version_num')::int >= 180000 AS pg18 \gset
CREATE TEMP TABLE attr_expected (pg18 boolean, statement text, tenant text, module text, attributed_by text);
INSERT INTO attr_expected VALUES
  (false, 'rmb_role_qualified', 't1', 'mod_users', 'relations'),
  (false, 'spring_unqualified', 't2', 'mod_users', 'relations'),
  (true, 'rmb_role_qualified', 't1', 'mod_users', 'role'),
  (true, 'spring_unqualified', NULL, 'mod_users', 'relation_name');
CREATE TEMP VIEW attr_versioned AS
SELECT format('%s %s %s %s', statement, tenant, module, attributed_by) AS r
FROM attr_expected WHERE pg18 = :'pg18';
SELECT regexp_replace(t.query, '^SELECT (.*) AS ([a-z_]+).*$', '\2') AS statement,
       t.tenant, t.module, t.attributed_by
FROM folio_perf_top_statements(:w, 100) t
WHERE t.query ~ ' AS (rmb_role_no_relations|text_qualified|text_relation_name|text_long_name)'
ORDER BY 1;
SELECT (SELECT array_agg(r ORDER BY r)
          FROM (SELECT format('%s %s %s %s', regexp_replace(t.query, '^SELECT (.*) AS ([a-z_]+).*$', '\2'),
                              t.tenant, t.module, t.attributed_by) AS r
                  FROM folio_perf_top_statements(:w, 100) t
                 WHERE t.query ~ ' AS (rmb_role_qualified|spring_unqualified)') x)
     = (SELECT array_agg(r ORDER BY r) FROM attr_versioned) AS as_expected_on_this_version,
       (SELECT count(*) FROM attr_expected a JOIN attr_expected b USING (statement)
         WHERE a.pg18 AND NOT b.pg18
           AND (a.tenant, a.attributed_by) IS NOT DISTINCT FROM (b.tenant, b.attributed_by)) AS same_on_both;
-- ... and the live view of statements agrees with it
SELECT regexp_replace(s.query, '^SELECT (.*) AS ([a-z_]+).*$', '\2') AS statement,
       s.tenant, s.module, s.attributed_by
FROM folio_perf_statements s
WHERE s.query ~ ' AS (rmb_role_no_relations|text_qualified|text_relation_name|text_long_name)'
ORDER BY 1;
SELECT (SELECT array_agg(r ORDER BY r)
          FROM (SELECT format('%s %s %s %s', regexp_replace(s.query, '^SELECT (.*) AS ([a-z_]+).*$', '\2'),
                              s.tenant, s.module, s.attributed_by) AS r
                  FROM folio_perf_statements s
                 WHERE s.query ~ ' AS (rmb_role_qualified|spring_unqualified)') x)
     = (SELECT array_agg(r ORDER BY r) FROM attr_versioned) AS live_as_expected_on_this_version;

-- identifiers over 63 bytes are cut on a character boundary, as the server
-- cuts them, so a long non-ASCII name still names its table
SELECT relname, octet_length(relname) AS bytes FROM pg_class
WHERE relnamespace = 't1_mod_users'::regnamespace AND relname LIKE 'журнал%';
SELECT r.name = c.relname AS same_as_catalog, octet_length(r.name) AS bytes
FROM unnest(folio_perf_query_relnames(
       'select * from журнал_выдачи_книг_по_читательским_билетам')) r(name),
     pg_class c
WHERE c.relnamespace = 't1_mod_users'::regnamespace AND c.relname LIKE 'журнал%';
SELECT p.* FROM folio_perf_attribute('folio',
  'select * from "журнал_выдачи_книг_по_читательским_билетам" where id = $1') p;
-- a long non-ASCII schema as qualifier, under a naming rule that allows it
SET folio_perf.schema_pattern = '^(.+)__(.+)$';
SET client_min_messages = warning;
CREATE SCHEMA библиотека__журнал_выдачи_книг_по_абонементу;
RESET client_min_messages;
SELECT nspname, octet_length(nspname) AS bytes,
       (folio_perf_parse_schema(nspname)).module
FROM pg_namespace WHERE nspname LIKE 'библиотека%';
SELECT p.* FROM folio_perf_query_schema(
  'select * from библиотека__журнал_выдачи_книг_по_абонементу.loan') p;
SELECT p.* FROM folio_perf_attribute('folio',
  'select * from библиотека__журнал_выдачи_книг_по_абонементу.loan') p;
RESET folio_perf.schema_pattern;

-- the live view of sessions: this one by its application_name (its
-- statement uses no module's relations, its role is no module's)
SET application_name = 'mod-circulation-24.1.0';
SELECT role IS NOT NULL AS has_role, tenant, module, attributed_by
FROM folio_perf_activity WHERE application_name = 'mod-circulation-24.1.0';
RESET application_name;

-- properties
SELECT proname, provolatile, proparallel, proisstrict, proretset
FROM pg_proc WHERE proname IN ('folio_perf_attribute', 'attribute') ORDER BY 1;
-- bad input: arrays of different lengths
SELECT * FROM folio_perf_data.attribute(ARRAY[1, 2]::bigint[], ARRAY['x'], NULL, false, NULL, NULL);
SELECT * FROM folio_perf_data.attribute(ARRAY[1]::bigint[], NULL, NULL, true, ARRAY['a'], NULL);
-- a remote target's catalog facts decide relation_name; no relations evidence
SELECT * FROM folio_perf_data.attribute(
  ARRAY[1, 2, 3]::bigint[], ARRAY['folio', 't9_mod_users', NULL],
  ARRAY['select * from item', 'select 1', 'select * from loan'], true,
  ARRAY['item', 'item', 'loan'], ARRAY['t7_mod_inventory_storage', 'public', 't7_mod_circulation_storage']);

SET client_min_messages = warning;
DROP SCHEMA t1_mod_users, t2_mod_users, t1_mod_inventory_storage,
    t2_mod_inventory_storage, библиотека__журнал_выдачи_книг_по_абонементу CASCADE;
DROP ROLE t1_mod_users;
DROP ROLE regress_attr_shared;
RESET client_min_messages;
