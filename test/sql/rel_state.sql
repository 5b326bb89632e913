-- The previous snapshot's relation states in shared memory (src/relstate.c).
-- After every snapshot the database's image must hold exactly the rows
-- capture() left in rel_last (compared both ways, under the capture lock),
-- through new, changed, dropped, truncated and rewritten relations, a
-- statistics reset, a rolled-back snapshot and one rolled back to a
-- savepoint; a snapshot uses the image of the snapshot before it and
-- reads rel_last otherwise; only a capture may publish an image.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
DROP SCHEMA IF EXISTS fs09_mod_state CASCADE;
RESET client_min_messages;
\set SHOW_CONTEXT never

-- the image against rel_last: rows of either that the other lacks
CREATE FUNCTION pg_temp.state_diff() RETURNS TABLE(side text, n bigint)
LANGUAGE plpgsql AS $$
BEGIN
    LOCK TABLE folio_perf_data.capture_lock IN EXCLUSIVE MODE;
    RETURN QUERY
    WITH img AS (SELECT * FROM folio_perf_data.rel_state_rows()),
         lst AS (SELECT l.relid, l.relfilenode, l.sig, l.rel_key_id, l.wsig,
                        l.size_bytes, l.live_tup, l.dead_tup
                 FROM folio_perf_data.rel_last l
                 WHERE l.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
                   AND l.target_id IS NULL)
    SELECT 'image only', count(*) FROM (SELECT * FROM img EXCEPT SELECT * FROM lst) x
    UNION ALL
    SELECT 'rel_last only', count(*) FROM (SELECT * FROM lst EXCEPT SELECT * FROM img) x;
END
$$;
-- uses and reads of rel_last so far, and the image's snapshot
CREATE FUNCTION pg_temp.state_counts(OUT uses bigint, OUT reads bigint, OUT snap_id bigint)
LANGUAGE sql AS $$
    SELECT s.uses, s.reads, s.snap_id FROM folio_perf_rel_state s
    WHERE s.datname = current_database()
$$;

-- the first snapshot reads rel_last (empty) and publishes
SELECT folio_perf_snapshot() AS s1 \gset
SELECT snap_id = :s1 AS image_of_s1, relations IS NOT NULL AS has_relations,
       memory_bytes > 0 AS has_memory, publishes > 0 AS published
FROM folio_perf_rel_state WHERE datname = current_database();
SELECT * FROM pg_temp.state_diff();
SELECT uses AS u0, reads AS r0 FROM pg_temp.state_counts() \gset

-- new tables, indexes and TOAST, written (autovacuum off for them: an
-- autoanalyze that a loaded machine delays into a comparison below would
-- be one more changed relation than the test counts)
CREATE SCHEMA fs09_mod_state;
CREATE TABLE fs09_mod_state.item (id int PRIMARY KEY, doc text)
    WITH (autovacuum_enabled = false, toast.autovacuum_enabled = false);
CREATE TABLE fs09_mod_state.holdings (id int PRIMARY KEY, doc text)
    WITH (autovacuum_enabled = false, toast.autovacuum_enabled = false);
CREATE INDEX ON fs09_mod_state.item (left(doc, 10));
INSERT INTO fs09_mod_state.item SELECT g, repeat(md5(g::text), 100) FROM generate_series(1, 500) g;
INSERT INTO fs09_mod_state.holdings SELECT g, md5(g::text) FROM generate_series(1, 200) g;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_snapshot() AS s2 \gset
SELECT * FROM pg_temp.state_diff();
SELECT uses - :u0 AS uses, reads - :r0 AS reads, snap_id = :s2 AS image_of_s2
FROM pg_temp.state_counts();

-- changed, dropped, truncated (new relfilenode), rewritten with its TOAST
UPDATE fs09_mod_state.holdings SET doc = doc || 'x' WHERE id <= 50;
CREATE TABLE fs09_mod_state.brief (id int) WITH (autovacuum_enabled = false);
SELECT folio_perf_snapshot() AS s3 \gset
DROP TABLE fs09_mod_state.brief;
TRUNCATE fs09_mod_state.holdings;
VACUUM FULL fs09_mod_state.item;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_snapshot() AS s4 \gset
SELECT * FROM pg_temp.state_diff();

-- a statistics reset
SELECT pg_stat_reset();
SELECT folio_perf_snapshot() AS s5 \gset
SELECT * FROM pg_temp.state_diff();
SELECT uses - :u0 AS uses, reads - :r0 AS reads FROM pg_temp.state_counts();

-- a snapshot rolled back: its image is not valid, the next snapshot reads
-- rel_last (as it was before the rolled-back one) and publishes again
INSERT INTO fs09_mod_state.holdings SELECT g, 'h' FROM generate_series(1, 30) g;
SELECT pg_stat_force_next_flush();
BEGIN;
SELECT folio_perf_snapshot() IS NOT NULL AS rolled_back_snapshot;
ROLLBACK;
SELECT snap_id IS NULL AS image_not_valid FROM pg_temp.state_counts();
SELECT folio_perf_snapshot() AS s6 \gset
SELECT * FROM pg_temp.state_diff();
SELECT uses - :u0 AS uses, reads - :r0 AS reads, snap_id = :s6 AS image_of_s6
FROM pg_temp.state_counts();

-- a snapshot rolled back to a savepoint, the transaction committed
INSERT INTO fs09_mod_state.item VALUES (1000, 'x');
SELECT pg_stat_force_next_flush();
BEGIN;
SAVEPOINT a;
SELECT folio_perf_snapshot() IS NOT NULL AS snapshot_in_savepoint;
ROLLBACK TO a;
COMMIT;
SELECT snap_id IS NULL AS image_not_valid FROM pg_temp.state_counts();
SELECT folio_perf_snapshot() AS s7 \gset
SELECT * FROM pg_temp.state_diff();

-- two snapshots in one transaction: the second reads rel_last (the first's
-- image is not valid before commit), the image is the second's after it
BEGIN;
SELECT folio_perf_snapshot() AS s8 \gset
DELETE FROM fs09_mod_state.item WHERE id > 400;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_snapshot() AS s9 \gset
COMMIT;
SELECT snap_id = :s9 AS image_of_s9 FROM pg_temp.state_counts();
SELECT * FROM pg_temp.state_diff();
SELECT uses - :u0 AS uses, reads - :r0 AS reads FROM pg_temp.state_counts();

-- the capture's rows are the same from the image as from rel_last: with
-- changes pending, both ways in one transaction under the capture lock
UPDATE fs09_mod_state.holdings SET doc = 'y' WHERE id <= 10;
CREATE TABLE fs09_mod_state.fresh (id int PRIMARY KEY) WITH (autovacuum_enabled = false);
DROP INDEX fs09_mod_state.item_left_idx;
SELECT pg_stat_force_next_flush();
BEGIN;
LOCK TABLE folio_perf_data.capture_lock IN EXCLUSIVE MODE;
SET LOCAL stats_fetch_consistency = none;
SELECT uses AS u_before FROM pg_temp.state_counts() \gset
CREATE TEMP TABLE from_image AS SELECT * FROM folio_perf_rel_capture(:s9);
CREATE TEMP TABLE from_rel_last AS SELECT * FROM folio_perf_rel_capture(NULL);
SELECT uses - :u_before AS image_used FROM pg_temp.state_counts();
SELECT status, count(*) FROM from_image GROUP BY status ORDER BY status;
SELECT (SELECT count(*) FROM (SELECT * FROM from_image EXCEPT ALL SELECT * FROM from_rel_last) x) AS image_only,
       (SELECT count(*) FROM (SELECT * FROM from_rel_last EXCEPT ALL SELECT * FROM from_image) x) AS rel_last_only;
ROLLBACK;
SELECT folio_perf_snapshot() AS s9b \gset
SELECT * FROM pg_temp.state_diff();

-- The incremental pass (only the pg_class blocks whose LSN moved, or that
-- held a row of a transaction then in progress) against the full pass and
-- against the pass over rel_last, in one transaction, after each change
-- that moves a pg_class row without moving any statistics: a table and an
-- index never touched, a TRUNCATE of an untouched table (new relfilenode),
-- a rename, an in-place update (VACUUM ANALYZE), a drop, and nothing.
CREATE FUNCTION pg_temp.pass_diff(prev bigint)
RETURNS TABLE(rows_incremental bigint, incremental_only bigint, full_only bigint,
              rel_last_only bigint)
LANGUAGE plpgsql AS $$
BEGIN
    LOCK TABLE folio_perf_data.capture_lock IN EXCLUSIVE MODE;
    PERFORM set_config('stats_fetch_consistency', 'none', true);
    PERFORM set_config('folio_perf.rel_scan', 'incremental', true);
    CREATE TEMP TABLE p_inc ON COMMIT DROP AS SELECT * FROM folio_perf_rel_capture(prev);
    PERFORM set_config('folio_perf.rel_scan', 'full', true);
    CREATE TEMP TABLE p_full ON COMMIT DROP AS SELECT * FROM folio_perf_rel_capture(prev);
    CREATE TEMP TABLE p_last ON COMMIT DROP AS SELECT * FROM folio_perf_rel_capture(NULL);
    PERFORM set_config('folio_perf.rel_scan', 'incremental', true);
    RETURN QUERY SELECT
        (SELECT count(*) FROM p_inc),
        (SELECT count(*) FROM (SELECT * FROM p_inc EXCEPT ALL SELECT * FROM p_full) x),
        (SELECT count(*) FROM (SELECT * FROM p_full EXCEPT ALL SELECT * FROM p_inc) x),
        (SELECT count(*) FROM (SELECT * FROM p_last EXCEPT ALL SELECT * FROM p_inc) x)
      + (SELECT count(*) FROM (SELECT * FROM p_inc EXCEPT ALL SELECT * FROM p_last) x);
END
$$;
CREATE FUNCTION pg_temp.pass_of(OUT incremental_pass boolean, OUT read_fewer_blocks boolean)
LANGUAGE sql AS $$
    SELECT s.incremental > 0, s.blocks_read < s.class_blocks FROM folio_perf_rel_state s
    WHERE s.datname = current_database()
$$;
SELECT folio_perf_snapshot() AS p0 \gset
SELECT folio_perf_snapshot() AS p1 \gset
SELECT * FROM pg_temp.pass_of();
CREATE TABLE fs09_mod_state.untouched (id int, doc text)
    WITH (autovacuum_enabled = false, toast.autovacuum_enabled = false);
CREATE INDEX holdings_doc ON fs09_mod_state.holdings (doc);
SELECT pg_stat_force_next_flush();
SELECT * FROM pg_temp.pass_diff(:p1);
SELECT folio_perf_snapshot() AS p2 \gset
SELECT count(*) AS untouched_stored FROM folio_perf_data.rel_last
WHERE relid IN ('fs09_mod_state.untouched'::regclass, 'fs09_mod_state.holdings_doc'::regclass);
TRUNCATE fs09_mod_state.untouched;
ALTER TABLE fs09_mod_state.fresh RENAME TO fresh2;
VACUUM ANALYZE fs09_mod_state.holdings;
-- (this session's counts reach the statistics now, not at a later
-- transaction's end: the snapshot below sees them)
SELECT pg_stat_force_next_flush();
SELECT * FROM pg_temp.pass_diff(:p2);
SELECT folio_perf_snapshot() AS p3 \gset
DROP TABLE fs09_mod_state.untouched;
SELECT * FROM pg_temp.pass_diff(:p3);
SELECT folio_perf_snapshot() AS p4 \gset
SELECT * FROM pg_temp.pass_diff(:p4);
SELECT folio_perf_snapshot() AS p5 \gset
SELECT * FROM pg_temp.pass_of();
SELECT * FROM pg_temp.state_diff();

-- a tampered rel_last row shows in the comparison (the check can fail) ...
UPDATE folio_perf_data.rel_last SET size_bytes = size_bytes + 8192
WHERE relid = 'fs09_mod_state.item'::regclass;
SELECT * FROM pg_temp.state_diff();
-- ... and is what the next snapshot reads once the image is forgotten
BEGIN;
LOCK TABLE folio_perf_data.capture_lock IN EXCLUSIVE MODE;
SELECT folio_perf_data.rel_state_forget() AS forgotten;
COMMIT;
UPDATE folio_perf_data.rel_last SET size_bytes = size_bytes - 8192
WHERE relid = 'fs09_mod_state.item'::regclass;
SELECT snap_id IS NULL AS no_image FROM pg_temp.state_counts();
SELECT folio_perf_snapshot() AS s10 \gset
SELECT * FROM pg_temp.state_diff();

-- Attacks.  Only a capture publishes: a writer cannot call the function,
-- the owner cannot outside a capture (no capture lock, then no capture in
-- the transaction); the image's rows need the lock too; forget needs
-- UPDATE on rel_last and the lock.
CREATE ROLE regress_state_writer;
GRANT folio_perf_writer TO regress_state_writer;
SET ROLE regress_state_writer;
SELECT folio_perf_data.rel_state_publish(1, NULL, NULL);
SELECT folio_perf_data.rel_state_forget();
SELECT count(*) FROM folio_perf_data.rel_state_rows();
SELECT count(*) >= 0 AS writer_reads_status FROM folio_perf_rel_state;
RESET ROLE;
SELECT folio_perf_data.rel_state_publish(1, NULL, NULL);
BEGIN;
LOCK TABLE folio_perf_data.capture_lock IN EXCLUSIVE MODE;
SELECT folio_perf_data.rel_state_publish(1, NULL, NULL);
ROLLBACK;
SELECT count(*) FROM folio_perf_data.rel_state_rows();
BEGIN;
LOCK TABLE folio_perf_data.capture_lock IN EXCLUSIVE MODE;
SELECT folio_perf_data.rel_state_publish(1, '{1,2}', '{1}');
ROLLBACK;
-- a reader who calls the capture function itself (no capture lock) never
-- gets the image: it reads rel_last
SELECT reads AS r_before FROM pg_temp.state_counts() \gset
SELECT count(*) >= 0 AS direct_call FROM folio_perf_rel_capture(:s10);
SELECT reads - :r_before AS reads_by_direct_call FROM pg_temp.state_counts();
-- the image was not touched by any of that
SELECT snap_id = :s10 AS image_of_s10 FROM pg_temp.state_counts();
SELECT * FROM pg_temp.state_diff();
DROP ROLE regress_state_writer;

SET client_min_messages = warning;
DROP SCHEMA fs09_mod_state CASCADE;
