-- Table health over a window: sequential scans on a large table and the
-- statement behind them, the finding gone once an index serves them,
-- unused and duplicate indexes, dead rows without vacuum, settings stored
-- with the window and compared, the sections in every format.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
DROP SCHEMA IF EXISTS fs29_mod_users CASCADE;
ALTER SYSTEM RESET work_mem;
SELECT pg_reload_conf();
RESET client_min_messages;
\set SHOW_CONTEXT never

CREATE SCHEMA fs29_mod_users;
-- 100,000 users without an index on username; 1,000 groups (a control:
-- small, read as often)
CREATE TABLE fs29_mod_users.users (id int, username text, jsonb jsonb);
INSERT INTO fs29_mod_users.users SELECT g, 'user' || g, '{}' FROM generate_series(1, 100000) g;
CREATE INDEX users_id_idx ON fs29_mod_users.users (id);
CREATE INDEX users_id_copy_idx ON fs29_mod_users.users (id);
CREATE TABLE fs29_mod_users.groups (id int, name text);
INSERT INTO fs29_mod_users.groups SELECT g, 'group' || g FROM generate_series(1, 1000) g;
-- loans: updated heavily with autovacuum off; loans_vacuumed (the
-- control): the same updates, vacuumed inside the window
CREATE TABLE fs29_mod_users.loans (id int PRIMARY KEY, n int) WITH (autovacuum_enabled = off);
INSERT INTO fs29_mod_users.loans SELECT g, 0 FROM generate_series(1, 10000) g;
CREATE TABLE fs29_mod_users.loans_vacuumed (id int PRIMARY KEY, n int) WITH (autovacuum_enabled = off);
INSERT INTO fs29_mod_users.loans_vacuumed SELECT g, 0 FROM generate_series(1, 10000) g;
ANALYZE fs29_mod_users.users, fs29_mod_users.groups, fs29_mod_users.loans, fs29_mod_users.loans_vacuumed;
SELECT pg_stat_force_next_flush();
-- keep the plan of every statement
SET folio_perf.plan_min_duration = 0;

-- window 1: 50 lookups by username (a sequential scan each), 50 of the
-- small table, the updates
SELECT folio_perf_begin('health 1', '{"release":"Poppy"}') AS w1 \gset
\set ECHO none
\o /dev/null
SELECT format('SELECT count(*) FROM fs29_mod_users.users WHERE username = %L', 'user' || g) FROM generate_series(1, 50) g \gexec
SELECT format('SELECT count(*) FROM fs29_mod_users.groups WHERE name = %L', 'group' || g) FROM generate_series(1, 50) g \gexec
\o
\set ECHO all
UPDATE fs29_mod_users.loans SET n = n + 1;
UPDATE fs29_mod_users.loans SET n = n + 1;
UPDATE fs29_mod_users.loans SET n = n + 1;
UPDATE fs29_mod_users.loans_vacuumed SET n = n + 1;
UPDATE fs29_mod_users.loans_vacuumed SET n = n + 1;
UPDATE fs29_mod_users.loans_vacuumed SET n = n + 1;
-- the updates' counts reach the statistics before the vacuum's
SELECT pg_stat_force_next_flush();
VACUUM fs29_mod_users.loans_vacuumed;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_end() AS w1 \gset

-- the large table: the finding, with its module, the statement and the
-- plan that scans it; the small one read as often: none
SELECT tenant, module, relname, seq_scan, seq_tup_read, seq_read_pct, finding
FROM folio_perf_table_health(:w1) WHERE relname IN ('users', 'groups') ORDER BY relname;
SELECT evidence LIKE '50 sequential scans read 5,000,000 rows of fs29_mod_users.users (100,000 a scan%' AS says_scans,
       evidence LIKE '%Module mod_users, tenant fs29; its plan scans it sequentially in statement %' AS says_module_and_plan,
       evidence LIKE '%SELECT count(*) FROM fs29_mod_users.users WHERE username = $1' AS says_statement
FROM folio_perf_table_health(:w1) WHERE relname = 'users';
SELECT relname, finding, evidence, calls, query
FROM folio_perf_table_health_statements(:w1) ORDER BY relname, evidence;

-- dead rows: growing, and no vacuum although autovacuum would have
-- vacuumed the table; the vacuumed control has neither
SELECT relname, n_tup_upd, dead_tup_growth >= 29000 AS dead_grew, vacuum_count, autovacuum_count, finding
FROM folio_perf_table_health(:w1) WHERE relname LIKE 'loans%' ORDER BY relname;
SELECT evidence LIKE '30,000 rows updated or deleted and % dead rows at the end, past the % at which autovacuum vacuums fs29_mod_users.loans (50 + 0.2 x % rows), and no vacuum ran in the window%' AS says_trigger,
       evidence LIKE '%Dead rows of fs29_mod_users.loans grew from 0 to %' AS says_growth
FROM folio_perf_table_health(:w1) WHERE relname = 'loans';

-- indexes: never scanned while the table was read (unused), the same
-- columns twice (duplicate); the primary key of a table read only
-- sequentially is unused but no finding (it enforces uniqueness)
SELECT table_name, index_name, idx_scan, unused, columns, duplicate_of, finding
FROM folio_perf_index_usage(:w1) ORDER BY table_name, index_name;
SELECT evidence FROM folio_perf_index_usage(:w1) WHERE index_name = 'loans_pkey';

-- between the windows: an index on username, and work_mem raised
CREATE INDEX users_username_idx ON fs29_mod_users.users (username);
ALTER SYSTEM SET work_mem = '16MB';
SELECT pg_reload_conf();
-- this session takes the new value at its next statements (bounded wait)
\set ECHO none
\o /dev/null
SELECT 'SELECT pg_sleep(0.1) WHERE current_setting(''work_mem'') <> ''16MB''' FROM generate_series(1, 50) \gexec
\o
\set ECHO all
SHOW work_mem;
SELECT pg_stat_force_next_flush();

-- window 2: the same lookups, now by the index
SELECT folio_perf_begin('health 2', '{"release":"Quesnelia"}') AS w2 \gset
\set ECHO none
\o /dev/null
SELECT format('SELECT count(*) FROM fs29_mod_users.users WHERE username = %L', 'user' || g) FROM generate_series(1, 50) g \gexec
\o
\set ECHO all
SELECT pg_stat_force_next_flush();
SELECT folio_perf_end() AS w2 \gset

-- the finding is gone and the new index did the 50 lookups
SELECT relname, seq_scan, idx_scan, finding FROM folio_perf_table_health(:w2) WHERE relname = 'users';
SELECT index_name, idx_scan, unused, finding
FROM folio_perf_index_usage(:w2) WHERE table_name = 'users' ORDER BY index_name;
SELECT count(*) AS statements_behind FROM folio_perf_table_health_statements(:w2);

-- settings: stored with each window; the compare names what differs
SELECT name, setting, unit, value FROM folio_perf_settings(:w1) WHERE name IN ('work_mem', 'max_connections');
SELECT name, setting, unit, source, value FROM folio_perf_settings(:w2) WHERE name IN ('work_mem', 'max_connections');
SELECT * FROM folio_perf_settings_diff(:w1, :w2);
SELECT * FROM folio_perf_settings_diff(:w2, :w2);
SELECT folio_perf_compare(:w1, :w2, 'text') LIKE '%Settings differ: work_mem 4MB (default) -> 16MB.%' AS compare_verdict_names_it;
SELECT (folio_perf_compare(:w1, :w2, 'json')::jsonb)#>'{health,settings_changed}' AS json_settings;
-- ... as does the series report (the same settings in two windows: none differ)
SELECT (folio_perf_series_report(ARRAY[:w1, :w2]::bigint[], 'json')::jsonb)->'settings_differ' AS series_settings;
SELECT substring(folio_perf_series_report(ARRAY[:w1, :w2]::bigint[], 'markdown')
                 FROM '(?n)^### Settings that differ\n(?:.*\n){0,6}') AS series_settings_md;
SELECT f->>'finding' AS compared
FROM jsonb_array_elements((folio_perf_compare(:w1, :w2, 'json')::jsonb)#>'{health,findings_compared}') f
WHERE f->>'relation' = 'fs29_mod_users.users';

-- the report: the verdict leads with the table's finding; every format
-- has the sections
SELECT v->>'check' AS verdict_check, substring(v->>'finding' FROM ' on ([^ ]+ \(module [^)]+\))') AS relation,
       v->>'finding' LIKE '%its plan scans it sequentially in statement %: SELECT count(*) FROM fs29_mod_users.users WHERE username = $1' AS names_statement
FROM jsonb_array_elements((folio_perf_report(:w1, 'json')::jsonb)->'verdict') WITH ORDINALITY x(v, o)
WHERE v->>'check' LIKE 'seq%' OR v->>'check' LIKE '%vacuum%' OR v->>'check' LIKE 'dead%'
ORDER BY o;
SELECT folio_perf_report(:w1, 'text') ~ 'seq_scans_on_large_table on fs29_mod_users.users \(module mod_users\): .* its plan scans it sequentially in statement Q[0-9]+ ' AS text_verdict_names_statement;
SELECT (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys((folio_perf_report(:w1, 'json')::jsonb)->'health') k) AS health_keys;
SELECT f AS format,
       r LIKE '%Table health%' AS table_health,
       r LIKE '%Index usage%' AS index_usage,
       r LIKE '%Lock waits%' AS lock_waits,
       r LIKE '%Checkpoints, background writer and WAL%' AS checkpoints,
       r LIKE '%WAL by module%' AS wal_by_module,
       r LIKE '%Settings (non-default%' AS settings,
       folio_perf_compare(:w1, :w2, f) LIKE '%Settings that differ%' AS compare_settings,
       folio_perf_compare(:w1, :w2, f) LIKE '%Table health findings%' AS compare_findings
FROM unnest(ARRAY['text', 'markdown', 'html']) f
CROSS JOIN LATERAL (SELECT folio_perf_report(:w1, f, CASE WHEN f = 'markdown' THEN 'full' END) AS r OFFSET 0) x;
-- the markdown page (the default detail) has the finding in its verdict
SELECT folio_perf_report(:w1, 'markdown') LIKE '%seq\_scans\_on\_large\_table on fs29\_mod\_users.users (module mod\_users)%'
    OR folio_perf_report(:w1, 'markdown') LIKE '%seq_scans_on_large_table on fs29_mod_users.users (module mod_users)%' AS page_verdict;
-- markdown: every row of the health tables has as many cells as its header
SELECT count(*) FILTER (WHERE n <> hdr) AS bad_rows, count(*) > 5 AS some_rows
FROM (SELECT t, n, first_value(n) OVER (PARTITION BY t ORDER BY o) AS hdr
      FROM (SELECT sec[1] AS t, o, array_length(string_to_array(line, ' | '), 1) AS n
            FROM regexp_matches(folio_perf_report(:w1, 'markdown', 'full'),
                                E'### (Table health|Index usage|Statements behind the table findings)\n\n(?:_[^\n]*_\n\n)?((?:\\|[^\n]*\n)+)', 'g') AS sec
            CROSS JOIN LATERAL regexp_split_to_table(rtrim(sec[2], E'\n'), E'\n') WITH ORDINALITY AS l(line, o)
            WHERE line NOT LIKE '| -%' AND line NOT LIKE '| :%') x) y;

-- a reader sees the health figures but not other roles' plans or texts
CREATE ROLE regress_health_reader;
GRANT folio_perf_reader TO regress_health_reader;
SET ROLE regress_health_reader;
SELECT relname, finding FROM folio_perf_table_health(:w1) WHERE relname = 'users';
SELECT count(*) AS statements_seen FROM folio_perf_table_health_statements(:w1);
SELECT count(*) > 0 AS settings_seen FROM folio_perf_settings(:w1);
RESET ROLE;
DROP ROLE regress_health_reader;

-- bad input
SELECT * FROM folio_perf_table_health(NULL);
SELECT * FROM folio_perf_index_usage(-1);
SELECT * FROM folio_perf_settings_diff(:w1, NULL);

ALTER SYSTEM RESET work_mem;
SELECT pg_reload_conf();
-- control: a window with window 1's settings: none differ in the series
SELECT pg_sleep(0.2);
SELECT folio_perf_begin('health 3') IS NOT NULL AS w3_begun;
SELECT folio_perf_end() AS w3 \gset
SELECT (folio_perf_series_report(ARRAY[:w1, :w3]::bigint[], 'json')::jsonb)->'settings_differ' AS series_same_settings;
SELECT folio_perf_series_report(ARRAY[:w1, :w3]::bigint[], 'text') LIKE '%Every window ran with the same server settings%' AS says_same;

-- a compare lists at most 100 findings, with their count and a count per
-- finding and status (a 24-hour window at 40 tenants has 20,000); the
-- control, windows 1 and 2, has fewer: all listed, no note
SELECT jsonb_array_length(j#>'{health,findings_compared}') = (j#>>'{health,findings_compared_count}')::int AS all_listed,
       folio_perf_compare(:w1, :w2, 'text') NOT LIKE '%The first % findings.%' AS no_note
FROM (SELECT folio_perf_compare(:w1, :w2, 'json')::jsonb AS j) c;
CREATE TABLE fs29_mod_users.notes (id int, v int);
INSERT INTO fs29_mod_users.notes SELECT g, g FROM generate_series(1, 1000) g;
\set ECHO none
\o /dev/null
SELECT format('CREATE INDEX notes_v%s_idx ON fs29_mod_users.notes ((v + %s))', g, g) FROM generate_series(1, 110) g \gexec
\o
\set ECHO all
ANALYZE fs29_mod_users.notes;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_begin('health 4') IS NOT NULL AS w4_begun;
SELECT count(*) FROM fs29_mod_users.notes;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_end() AS w4 \gset
SELECT count(*) AS unused_indexes FROM folio_perf_index_usage(:w4) WHERE table_name = 'notes' AND finding = 'unused_index';
SELECT jsonb_array_length(j#>'{health,findings_compared}') AS listed, j#>'{health,findings_compared_count}' AS compared,
       j#>'{health,findings_compared_by_finding}' AS by_finding,
       (SELECT count(*) FROM jsonb_array_elements(j#>'{health,findings_compared}') f
        WHERE f->>'relation' LIKE 'fs29_mod_users.notes_v%' AND f->>'status' = 'appeared') AS listed_notes_appeared
FROM (SELECT folio_perf_compare(:w3, :w4, 'json')::jsonb AS j) c;
SELECT substring(folio_perf_compare(:w3, :w4, 'text') FROM '\(The first [^\n]*') AS text_note;
SELECT substring(folio_perf_compare(:w3, :w4, 'markdown') FROM '_The first [^\n]*') AS markdown_note;
DROP SCHEMA fs29_mod_users CASCADE;
