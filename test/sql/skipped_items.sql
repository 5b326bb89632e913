-- No single kept item can fail a snapshot.  PostgreSQL 15's EXPLAIN
-- ANALYZE of a MERGE into a partitioned table prints invalid JSON: its plan
-- is stored with the JSON as text and flagged.  Then one planted invalid
-- item of each kind (a CHECK constraint on folio_perf's own tables that
-- one plan, one statement text and one relation break): the snapshot
-- succeeds, the items are left out, counted and named, the others stored;
-- without the planted constraints the next snapshot stores them.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
DROP SCHEMA IF EXISTS fs08_mod_orders CASCADE;
RESET client_min_messages;
\set SHOW_CONTEXT never
SELECT folio_perf_plans_reset() >= 0 AS reset;
-- an empty pg_stat_statements: after the rest of the suite it can be
-- full, and its deallocation would drop this test's one-call statements
-- before the snapshot reads them
SELECT count(*) AS pgss_reset FROM (SELECT pg_stat_statements_reset()) r;

CREATE SCHEMA fs08_mod_orders;
CREATE TABLE fs08_mod_orders.po_line (id int, fund text) PARTITION BY RANGE (id);
CREATE TABLE fs08_mod_orders.po_line_1 PARTITION OF fs08_mod_orders.po_line FOR VALUES FROM (0) TO (100);
CREATE TABLE fs08_mod_orders.po_line_2 PARTITION OF fs08_mod_orders.po_line FOR VALUES FROM (100) TO (200);
CREATE TABLE fs08_mod_orders.src (id int, fund text);
INSERT INTO fs08_mod_orders.src VALUES (5, 'a'), (150, 'b');

-- 1. EXPLAIN ANALYZE MERGE into a partitioned table (folio_perf's
-- plan_analyze is off: the session's own EXPLAIN instruments the statement)
SELECT folio_perf_begin('merge') AS w1 \gset
SET folio_perf.plan_min_duration = 0;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF, FORMAT JSON)
MERGE INTO fs08_mod_orders.po_line t USING fs08_mod_orders.src s ON t.id = s.id
WHEN MATCHED THEN UPDATE SET fund = s.fund
WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.fund) \g /dev/null
RESET folio_perf.plan_min_duration;
-- the store saw the JSON does not parse
SELECT json_invalid > 0 AS counted FROM folio_perf_plans_status;
SELECT folio_perf_end() AS w1 \gset
SELECT n_skipped FROM folio_perf_snapshots
WHERE snap_id = (SELECT end_snap FROM folio_perf_windows WHERE window_id = :w1);
SELECT toplevel, analyzed, json_invalid, plan_json IS NULL AS no_jsonb, outline, query
FROM folio_perf_plans(:w1) WHERE module = 'mod_orders' ORDER BY toplevel;
-- the JSON kept as text is the invalid one (control: casting it fails)
DO $$
DECLARE
    j text;
BEGIN
    SELECT DISTINCT pt.plan_json_text INTO STRICT j FROM folio_perf_data.stmt_plan_text pt
    WHERE pt.json_invalid AND pt.plan_json_text LIKE '%"po_line_2"%';
    RAISE WARNING 'kept as text: %, mentions Tuples Inserted: %', j IS NOT NULL, j LIKE '%"Tuples Inserted"%';
    PERFORM j::jsonb;
    RAISE WARNING 'the kept JSON parses';
EXCEPTION WHEN invalid_text_representation THEN
    RAISE WARNING 'the kept JSON does not parse: %', SQLERRM;
END
$$;
-- the report names it
SELECT folio_perf_report(:w1, 'text') LIKE '%EXPLAIN printed invalid JSON (kept as text)%' AS report_says;
-- plain snapshots go on working
SELECT folio_perf_snapshot('after merge') > 0 AS snapshot_ok;

-- 2. one planted invalid item of each kind
CREATE TABLE fs08_mod_orders.planted_bad_rel (id int);
CREATE TABLE fs08_mod_orders.good_rel (id int);
CREATE TABLE fs08_mod_orders.planted_bad_plan_t (id int);
-- (the marker is spelt in two halves wherever it must not plant itself)
ALTER TABLE folio_perf_data.query_text ADD CONSTRAINT planted CHECK (query NOT LIKE '%planted' || '_bad_text%');
ALTER TABLE folio_perf_data.rel_key ADD CONSTRAINT planted CHECK (relname <> 'planted_bad_rel');
ALTER TABLE folio_perf_data.plan ADD CONSTRAINT planted CHECK (plan_text NOT LIKE '%planted_bad_plan%');
-- control: the constraints refuse their items
DO $$
BEGIN
    INSERT INTO folio_perf_data.query_text (text_md5, query) VALUES (md5('x')::uuid, 'SELECT 1 AS planted' || '_bad_text');
EXCEPTION WHEN check_violation THEN
    RAISE WARNING 'query_text refuses the planted text: %', SQLERRM;
END
$$;
DO $$
BEGIN
    UPDATE folio_perf_data.rel_key SET relname = 'planted_bad_rel' WHERE relname = 'po_line_1';
    RAISE WARNING 'rel_key took the planted name';
EXCEPTION WHEN check_violation THEN
    RAISE WARNING 'rel_key refuses the planted name: %', SQLERRM;
END
$$;
SELECT folio_perf_begin('planted') AS w2 \gset
SET folio_perf.plan_min_duration = 0;
SELECT 1 AS planted_bad_text FROM fs08_mod_orders.src WHERE id < 0;
SELECT 2 AS good_text FROM fs08_mod_orders.po_line WHERE id < 0;
SELECT count(*) AS planted_plan FROM fs08_mod_orders.planted_bad_plan_t;
SELECT count(*) AS good_plan FROM fs08_mod_orders.good_rel;
RESET folio_perf.plan_min_duration;
SELECT folio_perf_end() AS w2 \gset
SELECT i->>'kind' AS kind, i->>'item' LIKE CASE i->>'kind' WHEN 'relation' THEN 'fs08_mod_orders.planted_bad_rel (oid %)'
                                                          ELSE '%queryid % (role oid %, top level)' END AS named,
       i->>'sqlstate' AS sqlstate, i->>'error' AS error
FROM folio_perf_snapshots s, jsonb_array_elements(s.skipped) i
WHERE s.snap_id = (SELECT end_snap FROM folio_perf_windows WHERE window_id = :w2)
ORDER BY kind COLLATE "C";
-- the others are stored: the good statement, relation and plan (the
-- statements read tables of this test: a query id of their own)
SELECT t.query FROM folio_perf_data.stmt_key k JOIN folio_perf_data.query_text t ON t.text_id = k.text_id
WHERE t.query LIKE 'SELECT % AS good_text FROM %' OR t.query LIKE 'SELECT % AS planted' || '_bad_text FROM %' ORDER BY t.query COLLATE "C";
SELECT relname FROM folio_perf_data.rel_key
WHERE nspname = 'fs08_mod_orders' AND relname IN ('good_rel', 'planted_bad_rel', 'planted_bad_plan_t')
ORDER BY relname COLLATE "C";
SELECT outline FROM folio_perf_plans(:w2) WHERE module = 'mod_orders' ORDER BY outline COLLATE "C";
-- named in the window's data quality
SELECT flag, detail ~ '^3 items could not be stored and are missing from the window: ' AS counted,
       detail LIKE '%relation fs08_mod_orders.planted_bad_rel (oid %' AS names_relation
FROM folio_perf_window_flags(:w2) WHERE flag = 'items_skipped';
SELECT folio_perf_report(:w2, 'text') ~ 'items_skipped +\| 3 items could not be stored' AS report_says;

-- 3. without the planted constraints the next snapshot stores them
ALTER TABLE folio_perf_data.query_text DROP CONSTRAINT planted;
ALTER TABLE folio_perf_data.rel_key DROP CONSTRAINT planted;
ALTER TABLE folio_perf_data.plan DROP CONSTRAINT planted;
SELECT folio_perf_snapshot('clean') AS s3 \gset
SELECT n_skipped FROM folio_perf_snapshots WHERE snap_id = :s3;
SELECT count(*) AS bad_rel_stored FROM folio_perf_data.rel_key WHERE relname = 'planted_bad_rel';
SELECT count(*) AS bad_text_stored FROM folio_perf_data.query_text WHERE query LIKE 'SELECT % AS planted' || '_bad_text FROM %';

DROP SCHEMA fs08_mod_orders CASCADE;
