-- Plans of slow executions: the hook keeps the plan of each
-- statement's slowest execution, snapshots store it, folio_perf_plans,
-- reports and compare show it.  plan_min_duration = 0 makes every
-- execution "slow", so nothing here depends on timing; the rows are
-- filtered on the test's own module, because the sampler works in this
-- database too.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
DROP SCHEMA IF EXISTS fs07_mod_inventory_storage CASCADE;
DROP ROLE IF EXISTS regress_fp_plan_reader;
DROP ROLE IF EXISTS regress_fp_plan_stats;
RESET client_min_messages;
\set SHOW_CONTEXT never

-- settings and the store
SHOW folio_perf.plan_min_duration;
SHOW folio_perf.plan_analyze;
SHOW folio_perf.plan_sample_rate;
SHOW folio_perf.max_plans;
SHOW folio_perf.plan_max_bytes;
SELECT preloaded, max_plans, plan_max_bytes, shmem_bytes > max_plans * plan_max_bytes AS sized
FROM folio_perf_plans_status;
SELECT folio_perf_plans_reset() >= 0 AS reset;

-- a fixture table without an index on hrid
CREATE SCHEMA fs07_mod_inventory_storage;
CREATE TABLE fs07_mod_inventory_storage.item (id int PRIMARY KEY, hrid text, jsonb jsonb);
INSERT INTO fs07_mod_inventory_storage.item
SELECT g, 'it' || lpad(g::text, 8, '0'), jsonb_build_object('barcode', g::text)
FROM generate_series(1, 20000) g;
ANALYZE fs07_mod_inventory_storage.item;

-- 1. the missing index: a Seq Scan, twice, one shape
SELECT folio_perf_begin('plans: no index') AS w1 \gset
SET folio_perf.plan_min_duration = 0;
SELECT id FROM fs07_mod_inventory_storage.item WHERE hrid = 'it00000042';
SELECT id FROM fs07_mod_inventory_storage.item WHERE hrid = 'it00000043';
RESET folio_perf.plan_min_duration;
SELECT folio_perf_end() AS w1 \gset
SELECT tenant, module, role = current_user AS mine, toplevel, slow_calls, plans_seen,
       plan_changed, analyzed, truncated, outline, query
FROM folio_perf_plans(:w1) WHERE module = 'mod_inventory_storage';
SELECT plan LIKE '%Seq Scan on item%' AND plan LIKE '%Filter: (hrid = %' AS text_plan,
       plan_json->'Plan'->>'Node Type' AS json_node,
       plan_json->'Plan'->>'Relation Name' AS json_relation,
       slowest_ms >= 0 AND captured_at <= clock_timestamp() AS timed
FROM folio_perf_plans(:w1) WHERE module = 'mod_inventory_storage';

-- 2. with the index: an Index Scan, and compare flags the change
CREATE INDEX item_hrid_idx ON fs07_mod_inventory_storage.item (hrid);
ANALYZE fs07_mod_inventory_storage.item;
SELECT folio_perf_begin('plans: index') AS w2 \gset
SET folio_perf.plan_min_duration = 0;
SELECT id FROM fs07_mod_inventory_storage.item WHERE hrid = 'it00000042';
RESET folio_perf.plan_min_duration;
SELECT folio_perf_end() AS w2 \gset
SELECT slow_calls, plans_seen, plan_changed, outline
FROM folio_perf_plans(:w2) WHERE module = 'mod_inventory_storage';
SELECT metric, status, plan_changed, base IS NOT NULL AND new IS NOT NULL AS both_timed
FROM folio_perf_compare_rows(:w1, :w2)
WHERE section = 'statement' AND module = 'mod_inventory_storage'
ORDER BY metric COLLATE "C";
SELECT position('Plan changes' IN c) > 0 AS has_section,
       c ~ 'Seq Scan on item \| Index Scan using item_hrid_idx on item' AS shows_both,
       c ~ '\| changed \| \[Q\d+\] SELECT id FROM' AS statement_flagged
FROM folio_perf_compare(:w1, :w2) c;
-- the same plan in both windows is "same", and a window without plans gives NULL
SELECT DISTINCT plan_changed FROM folio_perf_compare_rows(:w2, :w2)
WHERE section = 'statement' AND module = 'mod_inventory_storage';

-- 3. a plan change inside one window
SELECT folio_perf_begin('plans: index dropped inside') AS w3 \gset
SET folio_perf.plan_min_duration = 0;
SELECT id FROM fs07_mod_inventory_storage.item WHERE hrid = 'it00000042';
DROP INDEX fs07_mod_inventory_storage.item_hrid_idx;
SELECT id FROM fs07_mod_inventory_storage.item WHERE hrid = 'it00000042';
RESET folio_perf.plan_min_duration;
SELECT folio_perf_end() AS w3 \gset
SELECT slow_calls, plans_seen, plan_changed FROM folio_perf_plans(:w3) WHERE module = 'mod_inventory_storage';

-- 4. plan_min_duration = -1 captures nothing
-- (off for the window's own begin and end too: on a loaded machine they
-- can take longer than the default threshold)
SET folio_perf.plan_min_duration = -1;
SELECT folio_perf_begin('plans: off') AS w4 \gset
SELECT id FROM fs07_mod_inventory_storage.item WHERE hrid = 'it00000042';
SELECT count(*) FROM fs07_mod_inventory_storage.item;
SELECT folio_perf_end() AS w4 \gset
RESET folio_perf.plan_min_duration;
SELECT count(*) AS plans_when_off FROM folio_perf_plans(:w4) WHERE module = 'mod_inventory_storage';
SELECT folio_perf_report(:w4, 'json')::jsonb #>> '{window,plans}' AS plans_note;

-- 5. nested statements, an error mid-execution, prepared statements,
--    EXPLAIN, a parallel query, analyze mode
CREATE FUNCTION fs07_mod_inventory_storage.by_barcode(b text) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    SELECT count(*) INTO n FROM fs07_mod_inventory_storage.item WHERE jsonb->>'barcode' = b;
    RETURN n;
END $$;
CREATE FUNCTION fs07_mod_inventory_storage.boom(b text, fail boolean) RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE n bigint;
BEGIN
    SELECT max(id) INTO n FROM fs07_mod_inventory_storage.item WHERE jsonb->>'barcode' <> b;
    IF fail THEN
        RAISE EXCEPTION 'boom after %', n;
    END IF;
    RETURN n;
END $$;
-- run once without capture, so that pg_stat_statements knows the statement
SET folio_perf.plan_min_duration = -1;
SELECT fs07_mod_inventory_storage.boom('42', false) AS known;
RESET folio_perf.plan_min_duration;
SELECT folio_perf_begin('plans: kinds of statements') AS w5 \gset
SET folio_perf.plan_min_duration = 0;
SELECT fs07_mod_inventory_storage.by_barcode('42');
SELECT fs07_mod_inventory_storage.boom('42', true) AS never_captured;
SELECT id FROM fs07_mod_inventory_storage.item WHERE id = 7;
PREPARE fp_by_hrid(text) AS SELECT id FROM fs07_mod_inventory_storage.item WHERE hrid = $1;
EXECUTE fp_by_hrid('it00000007');
EXECUTE fp_by_hrid('it00000008');
DEALLOCATE fp_by_hrid;
\o /dev/null
EXPLAIN (COSTS OFF) SELECT id FROM fs07_mod_inventory_storage.item WHERE id < 3;
\o
SET max_parallel_workers_per_gather = 2;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SELECT count(*) FROM fs07_mod_inventory_storage.item WHERE jsonb ? 'no such key';
RESET max_parallel_workers_per_gather;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
SET folio_perf.plan_analyze = on;
SELECT sum(id) FROM fs07_mod_inventory_storage.item WHERE id > 19990;
SET folio_perf.plan_sample_rate = 0;
SELECT min(id) FROM fs07_mod_inventory_storage.item WHERE id > 19990;
RESET folio_perf.plan_sample_rate;
RESET folio_perf.plan_analyze;
RESET folio_perf.plan_min_duration;
SELECT folio_perf_end() AS w5 \gset
SELECT toplevel, slow_calls, analyzed, plan LIKE '%actual time=%' AS actuals,
       outline LIKE '%Gather%' AS parallel, query
FROM folio_perf_plans(:w5) WHERE module = 'mod_inventory_storage'
ORDER BY query COLLATE "C", toplevel;
SELECT count(*) AS explain_only_captured FROM folio_perf_plans(:w5)
WHERE module = 'mod_inventory_storage' AND query LIKE '%id < $1%';
SELECT count(*) AS failed_captured FROM folio_perf_plans(:w5)
WHERE query LIKE 'SELECT fs07_mod_inventory_storage.boom(%';

-- 5b. a nested statement changes its plan: compare shows it too
SELECT folio_perf_begin('plans: nested, no index') AS w7 \gset
SET folio_perf.plan_min_duration = 0;
SELECT fs07_mod_inventory_storage.by_barcode('43');
RESET folio_perf.plan_min_duration;
SELECT folio_perf_end() AS w7 \gset
CREATE INDEX item_barcode_idx ON fs07_mod_inventory_storage.item ((jsonb->>'barcode'));
ANALYZE fs07_mod_inventory_storage.item;
SELECT folio_perf_begin('plans: nested, index') AS w8 \gset
SET folio_perf.plan_min_duration = 0;
SELECT fs07_mod_inventory_storage.by_barcode('43');
RESET folio_perf.plan_min_duration;
SELECT folio_perf_end() AS w8 \gset
SELECT section, metric, status, plan_changed, query
FROM folio_perf_compare_rows(:w7, :w8)
WHERE module = 'mod_inventory_storage' AND plan_changed IS NOT NULL
ORDER BY section, metric;
SELECT c ~ '\| nested \| Aggregate > Seq Scan on item +\| Aggregate > (Bitmap Heap Scan on item > Bitmap Index|Index Scan using) ' AS nested_change_shown
FROM folio_perf_compare(:w7, :w8) c;
SELECT n->>'module' AS module, n->'plan'->>'outline' LIKE '%item_barcode_idx%' AS uses_index, n->>'query' AS query
FROM jsonb_array_elements(folio_perf_report(:w8, 'json')::jsonb->'nested_plans') n
WHERE n->>'module' = 'mod_inventory_storage';
SELECT position('Plans of the slowest nested statements' IN folio_perf_report(:w8)) > 0 AS text_nested;

-- 6. reports show the plan under the top statement
SELECT t->'plan'->>'outline' AS report_plan_outline,
       (t->'plan'->>'plan_changed')::boolean AS changed,
       t->'plan' ? 'text' AS has_text
FROM jsonb_array_elements(folio_perf_report(:w2, 'json')::jsonb->'top_statements') t
WHERE t->>'module' = 'mod_inventory_storage';
SELECT position('Plans of the top statements' IN folio_perf_report(:w2)) > 0 AS text_has_plans,
       folio_perf_report(:w2) ~ E'\n    Index Scan using item_hrid_idx on item' AS text_plan_indented,
       folio_perf_report(:w2, 'markdown', detail => 'full') ~ E'```sql\nSELECT id FROM' AS markdown_fenced,
       folio_perf_report(:w2, 'html') ~ '<details><summary>#1 Q\d+ mod_inventory_storage \(fs07\)' AS html_collapsed;

-- 7. a snapshot that rolls back loses no plan; a second take in one
--    transaction returns nothing new
SET folio_perf.plan_min_duration = 0;
SELECT count(*) FROM fs07_mod_inventory_storage.item WHERE hrid > 'it00019990';
RESET folio_perf.plan_min_duration;
SELECT queryid AS qid FROM pg_stat_statements
WHERE query = 'SELECT count(*) FROM fs07_mod_inventory_storage.item WHERE hrid > $1' \gset
BEGIN;
SELECT folio_perf_snapshot('rolled back') IS NOT NULL AS taken;
ROLLBACK;
SELECT count(*) AS still_in_store FROM folio_perf_plans_current() WHERE queryid = :qid;
BEGIN;
SELECT folio_perf_snapshot('first') AS s1 \gset
SELECT folio_perf_snapshot('second') AS s2 \gset
SELECT (SELECT count(*) FROM folio_perf_data.stmt_plan WHERE snap_id = :s1 AND queryid = :qid) AS in_first,
       (SELECT count(*) FROM folio_perf_data.stmt_plan WHERE snap_id = :s2 AND queryid = :qid) AS in_second;
COMMIT;
SELECT count(*) AS left_in_store FROM folio_perf_plans_current() WHERE queryid = :qid;

-- 8. purge keeps the plans of the windows (a snapshot inside w6 goes)
SELECT folio_perf_begin('plans: purge') AS w6 \gset
SET folio_perf.plan_min_duration = 0;
SELECT id FROM fs07_mod_inventory_storage.item WHERE id = 11;
RESET folio_perf.plan_min_duration;
SELECT folio_perf_snapshot('inside w6') AS inside \gset
SET folio_perf.plan_min_duration = 0;
SELECT id FROM fs07_mod_inventory_storage.item WHERE id = 12;
SELECT max(id) FROM fs07_mod_inventory_storage.item WHERE id < 12;
RESET folio_perf.plan_min_duration;
SELECT folio_perf_end() AS w6 \gset
SELECT count(*) AS plans_before, sum(slow_calls) AS calls_before FROM folio_perf_plans(:w6) WHERE module = 'mod_inventory_storage';
SELECT folio_perf_purge('0') > 0 AS purged;
SELECT count(*) AS inside_gone FROM folio_perf_data.snapshot WHERE snap_id = :inside;
SELECT count(*) AS plans_after, sum(slow_calls) AS calls_after FROM folio_perf_plans(:w6) WHERE module = 'mod_inventory_storage';
SELECT count(*) AS orphan_plans FROM folio_perf_data.plan p
WHERE NOT EXISTS (SELECT 1 FROM folio_perf_data.stmt_plan x WHERE x.plan_id = p.plan_id);

-- 8b. secrets in the constants of a kept plan (a password key of a JSON
-- column, a connection URI) are redacted when the plan is stored; the JSON
-- stays valid
SELECT folio_perf_begin('plans: secrets') AS w8 \gset
SET folio_perf.plan_min_duration = 0;
SELECT count(*) FROM fs07_mod_inventory_storage.item WHERE jsonb->>'password' = 'sekret77';
SELECT count(*) FROM fs07_mod_inventory_storage.item WHERE hrid = 'postgresql://u:sekret78@h/db';
SET folio_perf.plan_min_duration = -1;
SELECT folio_perf_end() AS w8 \gset
SELECT count(*) AS secret_plans,
       count(*) FILTER (WHERE plan LIKE '%<redacted>%' AND plan_json::text LIKE '%<redacted>%') AS redacted_both,
       count(*) FILTER (WHERE plan ~ 'sekret7' OR plan_json::text ~ 'sekret7') AS with_secret,
       bool_and(jsonb_typeof(plan_json) = 'object') AS json_valid
FROM folio_perf_plans(:w8) WHERE query ~ 'FROM fs07_mod_inventory_storage.item WHERE (jsonb->>|hrid)';
SELECT count(*) AS stored_with_secret FROM folio_perf_data.plan
WHERE plan_text ~ 'sekret7' OR plan_json::text ~ 'sekret7' OR plan_json_text ~ 'sekret7';
SELECT folio_perf_data.plan_redact('{"Filter": "((jsonb ->> ''password''::text) = ''x\"y''::text)", "Node Type": "Seq Scan"}', true)::jsonb AS json_redacted,
       folio_perf_data.plan_redact(E'Seq Scan on t\n  Filter: (password = ''x''::text)\n  Rows: 1', false) AS text_redacted,
       folio_perf_data.plan_redact('{"Filter": "(uri = ''postgres://u:pw@h/db''::text)"}', true) AS uri_redacted;

-- 9. privileges: plans are shown like query texts
CREATE ROLE regress_fp_plan_reader IN ROLE folio_perf_reader;
CREATE ROLE regress_fp_plan_stats IN ROLE pg_read_all_stats;
SET ROLE regress_fp_plan_reader;
SELECT count(*) > 0 AS rows_visible, bool_and(plan = '<insufficient privilege>') AS texts_hidden,
       bool_and(plan_json IS NULL) AS json_hidden, bool_and(outline IS NOT NULL) AS outlines_shown
FROM folio_perf_plans(:w1) WHERE module = 'mod_inventory_storage';
-- (the reader's own statements may be slow enough to be kept: those it sees)
SELECT count(*) AS current_hidden FROM folio_perf_plans_current()
WHERE plan_text <> '<insufficient privilege>' AND userid <> 'regress_fp_plan_reader'::regrole;
SELECT * FROM folio_perf_data.plan;
SELECT * FROM folio_perf_plans_take();
SELECT folio_perf_plans_reset();
SET folio_perf.plan_min_duration = -1;
RESET ROLE;
SET ROLE regress_fp_plan_stats;
SELECT bool_and(plan LIKE '%Scan%') AS texts_shown FROM folio_perf_plans(:w1) WHERE module = 'mod_inventory_storage';
RESET ROLE;

-- 10. errors
SELECT * FROM folio_perf_plans(NULL);
SELECT * FROM folio_perf_plans(999999);
SET folio_perf.plan_sample_rate = 2;

DROP FUNCTION fs07_mod_inventory_storage.by_barcode(text);
DROP FUNCTION fs07_mod_inventory_storage.boom(text, boolean);
DROP SCHEMA fs07_mod_inventory_storage CASCADE;
DROP ROLE regress_fp_plan_reader;
DROP ROLE regress_fp_plan_stats;
