-- The one-pass read of the shared statistics (folio_perf.rel_stats_read =
-- pass, the default) gives exactly the rows of the entry-by-entry read
-- (lookup), for every relation of the database: new, changed and dropped
-- relations, truncation and VACUUM FULL (new relfilenodes), TOAST blocks,
-- a reset of one table's counters, and a reset of the whole database's.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION IF NOT EXISTS folio_perf;
RESET client_min_messages;

CREATE SCHEMA fs01_mod_rsr;
CREATE TABLE fs01_mod_rsr.keep (id int PRIMARY KEY, doc text) WITH (autovacuum_enabled = off);
CREATE TABLE fs01_mod_rsr.grow (id int PRIMARY KEY, doc text) WITH (autovacuum_enabled = off);
CREATE TABLE fs01_mod_rsr.gone (id int) WITH (autovacuum_enabled = off);
CREATE TABLE fs01_mod_rsr.trunc (id int) WITH (autovacuum_enabled = off);
CREATE TABLE fs01_mod_rsr.full (id int, doc text) WITH (autovacuum_enabled = off);
CREATE TABLE fs01_mod_rsr.reset (id int) WITH (autovacuum_enabled = off);
CREATE TABLE fs01_mod_rsr.part (id int, k int) PARTITION BY RANGE (k);
CREATE TABLE fs01_mod_rsr.part_1 PARTITION OF fs01_mod_rsr.part FOR VALUES FROM (0) TO (10)
    WITH (autovacuum_enabled = off);
CREATE INDEX ON fs01_mod_rsr.part (k);
INSERT INTO fs01_mod_rsr.keep SELECT g, repeat(md5(g::text), 400) FROM generate_series(1, 20) g;
INSERT INTO fs01_mod_rsr.grow SELECT g, repeat(md5(g::text), 400) FROM generate_series(1, 20) g;
INSERT INTO fs01_mod_rsr.gone SELECT generate_series(1, 5);
INSERT INTO fs01_mod_rsr.trunc SELECT generate_series(1, 5);
INSERT INTO fs01_mod_rsr.full SELECT g, repeat('x', 3000) FROM generate_series(1, 5) g;
INSERT INTO fs01_mod_rsr.reset SELECT generate_series(1, 5);
INSERT INTO fs01_mod_rsr.part SELECT g, g % 10 FROM generate_series(1, 30) g;
SELECT count(*) FROM fs01_mod_rsr.keep WHERE length(doc) > 0;
SELECT pg_stat_force_next_flush();

-- the previous state: every relation with its signature
CREATE TEMP TABLE prev AS SELECT relid, sig, relfilenode FROM folio_perf_rel_stats();
SELECT count(*) AS relations_of_the_schema FROM prev p
JOIN pg_class c ON c.oid = p.relid WHERE c.relnamespace = 'fs01_mod_rsr'::regnamespace;

-- what happens between two snapshots
INSERT INTO fs01_mod_rsr.grow SELECT g, repeat(md5(g::text), 400) FROM generate_series(21, 30) g;
SELECT count(*) FROM fs01_mod_rsr.grow WHERE length(doc) > 0;   -- TOAST blocks read
DROP TABLE fs01_mod_rsr.gone;
CREATE TABLE fs01_mod_rsr.born (id int) WITH (autovacuum_enabled = off);
INSERT INTO fs01_mod_rsr.born VALUES (1);
TRUNCATE fs01_mod_rsr.trunc;
VACUUM FULL fs01_mod_rsr.full;
SELECT pg_stat_reset_single_table_counters('fs01_mod_rsr.reset'::regclass);
SELECT pg_stat_force_next_flush();

-- both reads, against the same previous state
CREATE TEMP TABLE st AS
SELECT array_agg(relid) AS r, array_agg(sig) AS s, array_agg(relfilenode) AS f FROM prev;
SET folio_perf.rel_stats_read = pass;
CREATE TEMP TABLE by_pass AS
SELECT c.* FROM st, folio_perf_rel_changes(st.r, st.s, st.f) c;
SET folio_perf.rel_stats_read = lookup;
CREATE TEMP TABLE by_lookup AS
SELECT c.* FROM st, folio_perf_rel_changes(st.r, st.s, st.f) c;
RESET folio_perf.rel_stats_read;

SELECT (SELECT count(*) FROM (TABLE by_pass EXCEPT ALL TABLE by_lookup) x) AS only_pass,
       (SELECT count(*) FROM (TABLE by_lookup EXCEPT ALL TABLE by_pass) x) AS only_lookup;
-- and they say what happened
SELECT b.status, coalesce(b.relname::text, '(dropped)') AS relname
FROM by_pass b
LEFT JOIN prev p ON p.relid = b.relid
WHERE b.nspname = 'fs01_mod_rsr' AND b.relkind IN ('r', 'p') OR b.status = 'd'
ORDER BY 2, 1;

-- control: a previous state whose signature of "keep" is off makes both
-- report it changed, so the comparison above would see a difference
UPDATE st SET s = (SELECT array_agg(CASE WHEN p.relid = 'fs01_mod_rsr.keep'::regclass
                                         THEN p.sig + 1 ELSE p.sig END ORDER BY p.ord)
                   FROM unnest(st.r, st.s) WITH ORDINALITY AS p(relid, sig, ord));
SET folio_perf.rel_stats_read = pass;
SELECT status FROM st, folio_perf_rel_changes(st.r, st.s, st.f) c
WHERE c.relid = 'fs01_mod_rsr.keep'::regclass;
SET folio_perf.rel_stats_read = lookup;
SELECT status FROM st, folio_perf_rel_changes(st.r, st.s, st.f) c
WHERE c.relid = 'fs01_mod_rsr.keep'::regclass;
RESET folio_perf.rel_stats_read;

-- a reset of the whole database's counters inside a window
SELECT pg_stat_reset();
SELECT pg_stat_force_next_flush();
SET folio_perf.rel_stats_read = pass;
CREATE TEMP TABLE reset_pass AS
SELECT c.* FROM st, folio_perf_rel_changes(st.r, st.s, st.f) c;
SET folio_perf.rel_stats_read = lookup;
CREATE TEMP TABLE reset_lookup AS
SELECT c.* FROM st, folio_perf_rel_changes(st.r, st.s, st.f) c;
RESET folio_perf.rel_stats_read;
SELECT (SELECT count(*) FROM (TABLE reset_pass EXCEPT ALL TABLE reset_lookup) x) AS only_pass,
       (SELECT count(*) FROM (TABLE reset_lookup EXCEPT ALL TABLE reset_pass) x) AS only_lookup,
       (SELECT count(*) > 5 FROM reset_pass WHERE status = 'c') AS reset_seen_as_change;

-- only a superuser picks the read
CREATE ROLE regress_rsr_user;
SET ROLE regress_rsr_user;
SET folio_perf.rel_stats_read = lookup;
RESET ROLE;
SHOW folio_perf.rel_stats_read;
DROP ROLE regress_rsr_user;
SET client_min_messages = warning;
DROP SCHEMA fs01_mod_rsr CASCADE;
