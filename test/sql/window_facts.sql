-- A window's stored facts (fact_pair, fact_stmt, fact_rel and the derived
-- fact_table_rows, fact_health_tables, fact_index_rows, fact_module_rels,
-- fact_table_sums; window_facts) give every report function exactly the
-- rows of the computation they
-- replace (folio_perf.window_facts = off), for windows with new, dropped,
-- truncated and rewritten relations, a statistics reset and several
-- snapshots; purge deletes the facts it changes.  (A restart and a remote
-- window: test/t/004_upgrade.pl.)
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
DROP SCHEMA IF EXISTS fs07_mod_users, fs07_mod_inventory CASCADE;
RESET client_min_messages;
\set SHOW_CONTEXT never

CREATE SCHEMA fs07_mod_users;
CREATE SCHEMA fs07_mod_inventory;
CREATE TABLE fs07_mod_users.users (id int PRIMARY KEY, jsonb jsonb);
CREATE TABLE fs07_mod_inventory.item (id int PRIMARY KEY, jsonb jsonb);
CREATE TABLE fs07_mod_inventory.holdings (id int PRIMARY KEY, note text);
CREATE TABLE fs07_mod_inventory.gone (id int);
INSERT INTO fs07_mod_inventory.gone SELECT generate_series(1, 10);

-- 1. new and dropped relations, several snapshots inside
SELECT folio_perf_begin('facts 1', '{"release":"R1"}') AS w1 \gset
INSERT INTO fs07_mod_users.users SELECT g, '{}' FROM generate_series(1, 100) g;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_snapshot() IS NOT NULL AS inner1;
CREATE TABLE fs07_mod_users.tmp (id int, t text);
INSERT INTO fs07_mod_users.tmp SELECT g, repeat('x', 3000) FROM generate_series(1, 50) g;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_snapshot() IS NOT NULL AS inner2;
UPDATE fs07_mod_users.users SET jsonb = '{"a":1}' WHERE id < 30;
DROP TABLE fs07_mod_users.tmp;
DROP TABLE fs07_mod_inventory.gone;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_end() AS w1 \gset
-- 2. truncated and rewritten
SELECT folio_perf_begin('facts 2', '{"release":"R2"}') AS w2 \gset
INSERT INTO fs07_mod_inventory.item SELECT g, '{}' FROM generate_series(1, 200) g;
TRUNCATE fs07_mod_users.users;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_snapshot() IS NOT NULL AS inner3;
INSERT INTO fs07_mod_users.users SELECT g, '{}' FROM generate_series(1, 10) g;
DELETE FROM fs07_mod_inventory.item WHERE id > 100;
VACUUM FULL fs07_mod_inventory.item;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_end() AS w2 \gset
-- 3. a statistics reset inside
SELECT folio_perf_begin('facts 3', '{}') AS w3 \gset
INSERT INTO fs07_mod_inventory.holdings SELECT g, 'n' FROM generate_series(1, 40) g;
SELECT pg_stat_force_next_flush();
SELECT count(*) AS reset FROM (SELECT pg_stat_reset(), pg_stat_statements_reset()) r;
SELECT folio_perf_snapshot() IS NOT NULL AS inner4;
UPDATE fs07_mod_inventory.holdings SET note = 'm' WHERE id < 5;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_end() AS w3 \gset
-- every sampler interval that overlaps the windows stored
SELECT pg_sleep(0.3), folio_perf_sampler_flush() >= 0 AS flushed;

-- Everything the report functions return for window w (and the compare of
-- w with w1), as text; the generation time of the documents left out.
-- (the trend of a window without inner snapshots is an error: its message)
CREATE FUNCTION pg_temp.trend_rows(w bigint) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    RETURN (SELECT string_agg(r::text, E'\n' ORDER BY r::text) FROM folio_perf_trend(w) r);
EXCEPTION WHEN object_not_in_prerequisite_state THEN
    RETURN 'trend: ' || SQLERRM;
END
$$;
-- Numbers with a fraction rounded to 9 decimals: a sum of floating-point
-- values has last digits that depend on the order a plan adds them, and
-- plans change as autovacuum analyzes the tables (the same window gave
-- 88.205777 and 88.20577700000003).  Integers are compared as they are.
CREATE FUNCTION pg_temp.norm(t text) RETURNS text LANGUAGE sql AS $$
SELECT string_agg(p.part || coalesce(rtrim(rtrim(round(n.num[1]::numeric, 9)::text, '0'), '.'), ''), '' ORDER BY p.i)
FROM unnest(regexp_split_to_array(t, '-?\d+\.\d+')) WITH ORDINALITY p(part, i)
LEFT JOIN (SELECT m AS num, row_number() OVER () AS i
           FROM regexp_matches(t, '-?\d+\.\d+', 'g') m) n ON n.i = p.i
$$;
CREATE FUNCTION pg_temp.all_rows(w bigint, w1 bigint) RETURNS text LANGUAGE sql AS $$
SELECT pg_temp.norm(concat_ws(E'\n',
  (SELECT string_agg(r::text, E'\n' ORDER BY r::text) FROM folio_perf_top_statements(w, 1000, only_toplevel => NULL, include_housekeeping => true) r),
  (SELECT string_agg(r::text, E'\n' ORDER BY r::text) FROM folio_perf_table_activity(w, 1000) r),
  (SELECT string_agg(r::text, E'\n' ORDER BY r::text) FROM folio_perf_module_activity(w) r),
  (SELECT string_agg(r::text, E'\n' ORDER BY r::text) FROM folio_perf_db_summary(w) r),
  (SELECT string_agg(r::text, E'\n' ORDER BY r::text) FROM folio_perf_window_flags(w) r),
  (SELECT string_agg(r::text, E'\n' ORDER BY r::text) FROM folio_perf_operations(w) r),
  (SELECT string_agg(r::text, E'\n' ORDER BY r::text) FROM folio_perf_table_health(w) r),
  (SELECT string_agg(r::text, E'\n' ORDER BY r::text) FROM folio_perf_index_usage(w) r),
  pg_temp.trend_rows(w),
  (SELECT string_agg(r::text, E'\n' ORDER BY r::text) FROM folio_perf_compare_rows(w1, w) r),
  (folio_perf_report(w, 'json')::jsonb - 'generated_at')::text,
  regexp_replace(folio_perf_report(w, 'text'), ' at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [A-Z+0-9-]+', '', 'g'),
  regexp_replace(folio_perf_report(w, 'markdown'), ' at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [A-Z+0-9-]+', '', 'g'),
  regexp_replace(folio_perf_report(w, 'html'), ' at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [A-Z+0-9-]+', '', 'g'),
  regexp_replace(folio_perf_compare(w1, w, 'json'), '"generated_at": "[^"]*"', '', 'g')))
$$;
SELECT pg_temp.norm('a 88.20577700000003 b 88.205777 c -1.50 d 7 e 10.513551999999999') AS norm_control;

-- One transaction holds the sampler's intervals still (its flush waits),
-- so that the three readings below see the same sampled data.
BEGIN;
LOCK TABLE folio_perf_data.sample_interval IN SHARE MODE;
CREATE TEMP TABLE computed AS
SELECT w, pg_temp.all_rows(w, :w1) AS t FROM unnest(ARRAY[:w1, :w2, :w3]::bigint[]) w
WHERE set_config('folio_perf.window_facts', 'off', false) IS NOT NULL;
RESET folio_perf.window_facts;
SELECT count(*) AS pairs_before FROM folio_perf_data.fact_pair;
-- the first call stores the facts, the second reads them
CREATE TEMP TABLE stored1 AS SELECT w, pg_temp.all_rows(w, :w1) AS t FROM unnest(ARRAY[:w1, :w2, :w3]::bigint[]) w;
SELECT count(*) AS pairs, string_agg(DISTINCT kind, ',' ORDER BY kind) AS kinds,
       bool_and(n_rows > 0) AS with_rows
FROM folio_perf_data.fact_pair;
CREATE TEMP TABLE stored2 AS SELECT w, pg_temp.all_rows(w, :w1) AS t FROM unnest(ARRAY[:w1, :w2, :w3]::bigint[]) w;
SELECT c.w = :w1 AS w1, c.w = :w2 AS w2, c.t = s1.t AS same_storing, c.t = s2.t AS same_stored,
       length(c.t) > 10000 AS substantial,
       c.t ~ 'tmp' AS has_created_and_dropped
FROM computed c JOIN stored1 s1 USING (w) JOIN stored2 s2 USING (w) ORDER BY c.w;
-- the statuses the windows cover, read from the stored facts
SELECT string_agg(DISTINCT status, ',' ORDER BY status) AS rel_statuses FROM folio_perf_data.fact_rel;
SELECT string_agg(DISTINCT status, ',' ORDER BY status) AS stmt_statuses FROM folio_perf_data.fact_stmt;

-- each derived kind holds exactly what its computation returns, in its order
SELECT p.kind, count(*) AS pairs,
       bool_and(folio_perf_data.window_facts(p.kind, p.begin_snap, p.end_snap)) AS stored
FROM folio_perf_data.fact_pair p GROUP BY p.kind ORDER BY p.kind;
-- (the stored side: window_cache()'s query, which reads fact_<kind>;
-- index_rows_compute returns its rows in no order: compared as sets)
CREATE FUNCTION pg_temp.kind_diff(k text, b bigint, e bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    c text := format('SELECT * FROM folio_perf_data.%I($1, $2)', k || '_compute');
    st text := folio_perf_data.window_cache(k, b, e);
    o text := CASE WHEN k = 'index_rows' THEN '0' ELSE 'row_number() OVER ()' END;
    n bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM ((SELECT %1$s AS o, d.* FROM (%2$s) d EXCEPT ALL SELECT %1$s AS o, d.* FROM (%3$s) d)
                                         UNION ALL
                                         (SELECT %1$s AS o, d.* FROM (%3$s) d EXCEPT ALL SELECT %1$s AS o, d.* FROM (%2$s) d)) x',
                   o, c, st)
        INTO n USING b, e;
    RETURN n;
END
$$;
SELECT p.kind, sum(pg_temp.kind_diff(p.kind, p.begin_snap, p.end_snap)) AS rows_differing,
       bool_and(p.n_rows > 0) AS with_rows
FROM folio_perf_data.fact_pair p
WHERE p.kind NOT IN ('stmt_delta', 'rel_delta')
GROUP BY p.kind ORDER BY p.kind;

-- control: a changed stored fact of each kind shows in the reports
SELECT begin_snap AS b2 FROM folio_perf_data.window WHERE window_id = :w2 \gset
SAVEPOINT tamper;
UPDATE folio_perf_data.fact_rel SET status = CASE status WHEN 'reset' THEN 'rewritten' ELSE 'reset' END
WHERE begin_snap = :b2 AND ord = 1;
SELECT 'rel_delta' AS kind, c.t = pg_temp.all_rows(:w2, :w1) AS same_after_tampering FROM computed c WHERE c.w = :w2;
ROLLBACK TO tamper;
UPDATE folio_perf_data.fact_table_rows SET inserts = inserts + 1 WHERE begin_snap = :b2;
SELECT 'table_rows' AS kind, c.t = pg_temp.all_rows(:w2, :w1) AS same_after_tampering FROM computed c WHERE c.w = :w2;
ROLLBACK TO tamper;
UPDATE folio_perf_data.fact_health_tables SET seq_scan = seq_scan + 1 WHERE begin_snap = :b2;
SELECT 'health_tables' AS kind, c.t = pg_temp.all_rows(:w2, :w1) AS same_after_tampering FROM computed c WHERE c.w = :w2;
ROLLBACK TO tamper;
UPDATE folio_perf_data.fact_index_rows SET idx_tup_fetch = idx_tup_fetch + 1 WHERE begin_snap = :b2;
SELECT 'index_rows' AS kind, c.t = pg_temp.all_rows(:w2, :w1) AS same_after_tampering FROM computed c WHERE c.w = :w2;
ROLLBACK TO tamper;
UPDATE folio_perf_data.fact_module_rels SET ins = ins + 1 WHERE begin_snap = :b2;
SELECT 'module_rels' AS kind, c.t = pg_temp.all_rows(:w2, :w1) AS same_after_tampering FROM computed c WHERE c.w = :w2;
ROLLBACK TO tamper;
UPDATE folio_perf_data.fact_table_sums SET ins = ins + 1000 WHERE begin_snap = :b2;
SELECT 'table_sums' AS kind, c.t = pg_temp.all_rows(:w2, :w1) AS same_after_tampering FROM computed c WHERE c.w = :w2;
ROLLBACK TO tamper;
COMMIT;

-- not a window's pair, a read-only transaction: computed, nothing stored
SELECT folio_perf_data.window_facts('rel_delta', (SELECT begin_snap FROM folio_perf_data.window WHERE window_id = :w1),
                                    (SELECT end_snap FROM folio_perf_data.window WHERE window_id = :w2)) AS stored_for_no_window;
BEGIN READ ONLY;
SELECT folio_perf_data.window_facts('stmt_delta', (SELECT begin_snap FROM folio_perf_data.window WHERE window_id = :w1),
                                    (SELECT end_snap FROM folio_perf_data.window WHERE window_id = :w2)) AS stored_read_only;
ROLLBACK;
SELECT folio_perf_data.window_facts('bogus', 1, 2);

-- purge: the facts of windows whose inner snapshots it removes go, the
-- reports are then what a computation gives after the purge
BEGIN;
LOCK TABLE folio_perf_data.sample_interval IN SHARE MODE;
SELECT folio_perf_purge('0 seconds') AS purged;
SELECT count(*) AS pairs_after_purge FROM folio_perf_data.fact_pair;
SELECT count(*) AS rows_after_purge FROM folio_perf_data.fact_rel;
CREATE TEMP TABLE purged_stored AS SELECT w, pg_temp.all_rows(w, :w1) AS t FROM unnest(ARRAY[:w1, :w2, :w3]::bigint[]) w;
SET folio_perf.window_facts = off;
SELECT p.w = :w3 AS w3, p.t = pg_temp.all_rows(p.w, :w1) AS same_after_purge
FROM purged_stored p ORDER BY p.w;
RESET folio_perf.window_facts;
COMMIT;
-- a snapshot's facts go with it
SELECT begin_snap AS b3 FROM folio_perf_data.window WHERE window_id = :w3 \gset
SELECT count(*) AS pairs_of_w3 FROM folio_perf_data.fact_pair WHERE begin_snap = :b3;
DELETE FROM folio_perf_data.window WHERE window_id = :w3;
DELETE FROM folio_perf_data.snapshot WHERE snap_id = :b3;
SELECT count(*) AS pairs_left, (SELECT count(*) FROM folio_perf_data.fact_rel f
                                WHERE NOT EXISTS (SELECT 1 FROM folio_perf_data.fact_pair p
                                                  WHERE p.begin_snap = f.begin_snap AND p.end_snap = f.end_snap
                                                    AND p.kind = 'rel_delta')) AS orphan_rows
FROM folio_perf_data.fact_pair;

DROP SCHEMA fs07_mod_users, fs07_mod_inventory CASCADE;
