/* sql/folio_perf--1.0.0--1.1.0.sql - ALTER EXTENSION folio_perf UPDATE from 1.0.0 to 1.1.0 */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
--
-- How to add to it (doc/architecture.md, "Upgrade scripts"): this is the
-- hand-written part.  The installed script is built from it by the Makefile
-- (sql/upgrade_tail.pl), which appends every function and view of the 1.1.0
-- install script as CREATE OR REPLACE, and the privileges of
-- 150_privileges.sql, so that a changed or new function or view needs
-- nothing here.  What does:
--   - a function whose arguments, result type or OUT columns changed, or one
--     that is gone: DROP FUNCTION the 1.0.0 one here (and a view whose
--     columns changed: DROP VIEW);
--   - a new table, sequence or type: CREATE it here (the tail re-runs the
--     grants and the pg_extension_config_dump of 150_privileges.sql);
--   - a new column: ALTER TABLE ... ADD COLUMN; add it at the END of the
--     CREATE TABLE in sql/parts too (the test compares column order);
--   - new indexes, constraints, triggers; converted data; seeded rows
--     (folio_perf_data.operation's builtin ones): here.
-- Full copies of functions below (from before the tail existed) are
-- harmless: the tail replaces them with the current definition.
-- test/t/004_upgrade.pl compares an updated 1.0.0 with a fresh 1.1.0
-- install (every function's definition, view, table and column in order,
-- index, constraint, trigger, type, grant, comment, the pg_dump
-- configuration and the rows an install seeds) and prints what differs.
-- Keep each change in its own block under a comment naming its issue, in
-- the order of sql/parts; the script runs in one transaction as the
-- extension's owner, with search_path set to the extension's schema first.

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION folio_perf UPDATE TO '1.1.0'" to load this file. \quit

-- #26 security: the relation store evicts when full; its status has evicted
-- (010_c_functions.sql; the tail creates both again)
DROP VIEW IF EXISTS folio_perf_relations_status;
DROP FUNCTION IF EXISTS folio_perf_relations_status();

-- the CPU of sessions that end between two ticks: the sampler's status has
-- ended_sessions and ended_sessions_lost (110_sampler.sql; the tail creates
-- both again)
DROP VIEW IF EXISTS folio_perf_sampler_status;
DROP FUNCTION IF EXISTS folio_perf_sampler_status();

-- #26 security: nothing is recorded as folio_perf's while another's function
-- runs inside one of folio_perf's; the set of its query ids rotates
-- (own_status has rotations: 025_own.sql)
DROP FUNCTION IF EXISTS folio_perf_data.own_status();

-- #26 security: an operation definition belongs to the role that added it;
-- other writers cannot change or delete it (135_operations.sql).  The rows
-- there are now get the role that runs the update.
ALTER TABLE folio_perf_data.operation ADD COLUMN owner name NOT NULL DEFAULT CURRENT_USER;
CREATE OR REPLACE FUNCTION folio_perf_data.operation_guard()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    su boolean := (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname = CURRENT_USER);
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND NOT OLD.builtin AND OLD.owner <> CURRENT_USER
       AND NOT coalesce(su, false) THEN
        RAISE EXCEPTION 'operation "%" belongs to role "%"', OLD.operation, OLD.owner
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Only the role that added an operation changes or deletes it; add one of your own under another name.';
    END IF;
    IF TG_OP = 'INSERT' AND NOT coalesce(su, false) THEN
        NEW.owner := CURRENT_USER;
    ELSIF TG_OP = 'UPDATE' AND NOT coalesce(su, false) THEN
        NEW.owner := OLD.owner;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.builtin THEN
        RAISE EXCEPTION 'operation "%" is built in and cannot be changed or deleted', OLD.operation
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Add an operation of your own under another name.';
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.builtin THEN
        RAISE EXCEPTION 'only the extension defines built-in operations'
            USING ERRCODE = 'insufficient_privilege',
                  HINT = 'Insert the operation with builtin = false (the default).';
    END IF;
    RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
END
$$;

-- 150 privileges for 136
DO $$
DECLARE
    f record;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure::text AS obj
        FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass
             AND d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
        WHERE p.pronamespace = 'folio_perf_data'::regnamespace
          AND p.proname IN ('ln_gamma', 'inc_beta', 'welch', 'check_rules', 'significance',
                            'active_span', 'db_cpu_pct_between', 'window_headline')
    LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f.obj);
    END LOOP;
END
$$;

-- #31 snapshots: no single kept item can fail a snapshot (020_storage,
-- 045_capture_items, 050_capture, 070_windows, 090_report_tables,
-- 100_plans, as they are there)
ALTER TABLE folio_perf_data.snapshot ADD COLUMN skipped jsonb NOT NULL DEFAULT '[]';
ALTER TABLE folio_perf_data.plan ADD COLUMN json_invalid boolean NOT NULL DEFAULT false,
    ADD COLUMN plan_json_text text,
    ADD CHECK (json_invalid = (plan_json_text IS NOT NULL));

DROP FUNCTION IF EXISTS folio_perf_plans_take();
DROP FUNCTION IF EXISTS folio_perf_plans_current();
DROP VIEW IF EXISTS folio_perf_plans_status;
DROP FUNCTION IF EXISTS folio_perf_plans_status();
DROP FUNCTION IF EXISTS folio_perf_plans(bigint, boolean);

-- #27 the markdown report as one wiki page: folio_perf_report gained its
-- detail argument (the tail creates the new one)
DROP FUNCTION IF EXISTS folio_perf_report(bigint, text);

-- #25 findings, step 2 (135_operations, 137_operation_cost, 138_check):
-- the operations' results gained columns and the compare sections an
-- argument (the tail creates the new ones); operations_findings is gone
-- (the verdict is folio_perf_check's); an operation's flow is a new table
-- with FOLIO's rows and the definitions' guard
DROP FUNCTION IF EXISTS folio_perf_operations(bigint);
DROP FUNCTION IF EXISTS folio_perf_data.operations_of(bigint, jsonb, text);
DROP FUNCTION IF EXISTS folio_perf_data.operations_compare_sections(folio_perf_data.compare_row[], bigint, bigint);
DROP FUNCTION IF EXISTS folio_perf_data.operations_findings(folio_perf_data.compare_row[]);
CREATE TABLE folio_perf_data.operation_flow (
    operation   text NOT NULL REFERENCES folio_perf_data.operation ON UPDATE CASCADE ON DELETE CASCADE,
    module      text NOT NULL
                CHECK (module ~ '^[a-z][a-z0-9_]{0,62}$'),
    relation    text NOT NULL
                CHECK (relation ~ '^[a-z_][a-z0-9_$]{0,62}$'),
    action      text NOT NULL DEFAULT 'any'
                CHECK (action IN ('read', 'write', 'insert', 'update', 'delete', 'any')),
    builtin     boolean NOT NULL DEFAULT false,
    -- the role that added it (operation_guard: only it changes or deletes it)
    owner       name NOT NULL DEFAULT CURRENT_USER,
    PRIMARY KEY (operation, module, relation, action)
);

-- FOLIO's flows (conventions.md 5.2 and 5.3): what mod-circulation asks of
-- the storage modules for a check-out and a check-in, what a data-import
-- record writes in SRS, SRM and inventory.
INSERT INTO folio_perf_data.operation_flow (operation, module, relation, action, builtin)
VALUES
    ('check_out', 'mod_circulation_storage', 'loan', 'insert', true),
    ('check_out', 'mod_circulation_storage', 'patron_action_session', 'write', true),
    ('check_out', 'mod_circulation_storage', 'request', 'read', true),
    ('check_out', 'mod_inventory_storage', 'item', 'any', true),
    ('check_out', 'mod_users', 'users', 'read', true),
    ('check_in', 'mod_circulation_storage', 'check_in', 'write', true),
    ('check_in', 'mod_circulation_storage', 'loan', 'read', true),
    ('check_in', 'mod_circulation_storage', 'loan', 'update', true),
    ('check_in', 'mod_circulation_storage', 'request', 'read', true),
    ('check_in', 'mod_inventory_storage', 'item', 'any', true),
    ('request_created', 'mod_circulation_storage', 'request', 'write', true),
    ('request_created', 'mod_inventory_storage', 'item', 'read', true),
    ('request_created', 'mod_users', 'users', 'read', true),
    ('record_imported', 'mod_source_record_storage', 'records_lb', 'write', true),
    ('record_imported', 'mod_source_record_storage', 'raw_records_lb', 'write', true),
    ('record_imported', 'mod_source_record_storage', 'marc_records_lb', 'write', true),
    ('record_imported', 'mod_source_record_storage', 'records_lb', 'read', true),
    ('record_imported', 'mod_source_record_manager', 'events_processed', 'write', true),
    ('record_imported', 'mod_source_record_manager', 'journal_records', 'write', true),
    ('record_imported', 'mod_source_record_manager', 'job_execution', 'any', true),
    ('record_imported', 'mod_inventory_storage', 'instance', 'write', true),
    ('instance_created', 'mod_inventory_storage', 'instance', 'write', true),
    ('instance_updated', 'mod_inventory_storage', 'instance', 'write', true),
    ('holdings_created', 'mod_inventory_storage', 'holdings_record', 'write', true),
    ('item_created', 'mod_inventory_storage', 'item', 'write', true),
    ('user_created', 'mod_users', 'users', 'write', true),
    ('fee_fine_charged', 'mod_feesfines', 'accounts', 'write', true),
    ('order_line_created', 'mod_orders_storage', 'po_line', 'write', true),
    ('invoice_created', 'mod_invoice_storage', 'invoices', 'write', true);

-- the built-in rows and the owners as the definitions': operation_guard() (135)
CREATE TRIGGER operation_flow_guard BEFORE INSERT OR UPDATE OR DELETE ON folio_perf_data.operation_flow
    FOR EACH ROW EXECUTE FUNCTION folio_perf_data.operation_guard();
-- end of #25 findings, step 2

-- #28 series of windows: the steps of the windows folio_perf_mark() splits
-- (139_series.sql; its functions and grants come with the tail)
CREATE TABLE folio_perf_data.window_step (
    window_id   bigint NOT NULL REFERENCES folio_perf_data.window ON DELETE CASCADE,
    step        int NOT NULL CHECK (step >= 1),
    begin_snap  bigint NOT NULL REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    label       text,
    tags        jsonb NOT NULL DEFAULT '{}',
    step_window bigint REFERENCES folio_perf_data.window ON DELETE SET NULL,
    PRIMARY KEY (window_id, step)
);
CREATE INDEX ON folio_perf_data.window_step (step_window);
-- end of #28 series of windows

-- #31 parallel-safety labels: IMMUTABLE functions that compute only (no
-- subtransaction, no write, callees all PARALLEL SAFE) are PARALLEL SAFE
-- (040_sources, 080_window_arithmetic, 100_plans, 120_rendering, 135_operations,
-- and 139_series.sql's svg_series_chart, which the tail creates)
ALTER FUNCTION folio_perf_data.pgss_select_list(integer,boolean) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.check_n(integer) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.render_plans(text,jsonb,text,jsonb) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.sql_refs(jsonb[]) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.sql_appendix(text,jsonb,jsonb[]) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.render_section(text,jsonb,jsonb) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.check_format(text) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.nice_ticks(numeric,boolean) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.svg_bars(text,jsonb,text) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.kv_section(text,jsonb,text[]) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.html_head(text) PARALLEL SAFE;
ALTER FUNCTION folio_perf_data.operations_sections(jsonb) PARALLEL SAFE;

-- #23 window facts: a window's statement and relation differences stored
-- on first use (020_storage.sql; window_facts, stmt_delta, rel_delta and
-- folio_perf_purge come with the generated tail, the grants and the dump
-- configuration, which leaves these tables out, with 150_privileges.sql)
/*
 * Window facts: a window's statement and relation differences
 * (stmt_delta_compute, rel_delta_compute of its two snapshots), stored the
 * first time a report asks for them (window_facts, 080) and read by every
 * later report, compare and trend of that window instead of computed
 * again.  fact_pair says which (begin, end, kind) are stored; its rows in
 * fact_stmt and fact_rel are exactly what the compute functions return, in
 * the order they return them (ord: sums of floating-point columns over
 * them then come out the same to the last digit).
 * Differences between two snapshots change only when purge moves rows of a
 * snapshot between them: purge deletes those pairs (and a snapshot's
 * pairs go with it).  Not dumped: derived, computed again on first use.
 */
CREATE TABLE folio_perf_data.fact_pair (
    begin_snap  bigint NOT NULL REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    end_snap    bigint NOT NULL REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('stmt_delta', 'rel_delta', 'table_rows',
                                      'health_tables', 'index_rows', 'module_rels',
                                      'table_sums')),
    n_rows      bigint NOT NULL,
    compute_ms  double precision NOT NULL,
    computed_at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    PRIMARY KEY (begin_snap, end_snap, kind)
);
CREATE INDEX ON folio_perf_data.fact_pair (end_snap);

CREATE TABLE folio_perf_data.fact_stmt (
    begin_snap bigint NOT NULL,
    end_snap bigint NOT NULL,
    key_id bigint NOT NULL, status text NOT NULL, calls bigint,
    total_exec_time double precision, total_plan_time double precision,
    rows bigint, shared_blks_hit bigint, shared_blks_read bigint,
    shared_blks_dirtied bigint, shared_blks_written bigint,
    temp_blks_read bigint, temp_blks_written bigint,
    blk_read_time double precision, blk_write_time double precision,
    wal_bytes numeric, first_calls_mean double precision,
    stddev_exec_time double precision, wal_buffers_full bigint,
    parallel_workers_to_launch bigint, parallel_workers_launched bigint,
    ord bigint NOT NULL    -- the row's place in stmt_delta_compute's result
);
CREATE INDEX ON folio_perf_data.fact_stmt (begin_snap, end_snap, ord);

CREATE TABLE folio_perf_data.fact_rel (
    begin_snap bigint NOT NULL,
    end_snap bigint NOT NULL,
    rel_key_id bigint NOT NULL, status text NOT NULL,
    seq_scan bigint, seq_tup_read bigint, idx_scan bigint, idx_tup_fetch bigint,
    n_tup_ins bigint, n_tup_upd bigint, n_tup_del bigint, n_tup_hot_upd bigint,
    vacuum_count bigint, autovacuum_count bigint, analyze_count bigint,
    autoanalyze_count bigint, blks_read bigint, blks_hit bigint,
    toast_blks_read bigint, toast_blks_hit bigint,
    n_live_tup bigint, n_dead_tup bigint, size_begin bigint, size_end bigint,
    ord bigint NOT NULL    -- the row's place in rel_delta_compute's result
);
CREATE INDEX ON folio_perf_data.fact_rel (begin_snap, end_snap, ord);

/*
 * Derived window facts, stored like fact_rel: the rows of table_rows_compute
 * (090: tables with their indexes folded in), health_tables_compute (138:
 * table health), index_rows_compute (138: each index of the touched tables
 * against the others of its table), module_rels_compute (090: the
 * relations' sums per module) and table_sums_compute (090: per table name,
 * for operations and check) of a window's two snapshots, in the order they
 * were computed.  A report reads each once instead of
 * joining the window's relation differences with rel_key again (a 24-hour
 * window at 40 tenants: 69,000 relation differences, 0.4-2 s a part).
 * They change only with what their pair's differences change with, and go
 * with the pair (fact_pair_on_delete).
 */
CREATE TABLE folio_perf_data.fact_table_rows (
    begin_snap bigint NOT NULL,
    end_snap bigint NOT NULL,
    rel_key_id bigint, tenant text, module text, schema name, relname name,
    relkind "char", status text, inserts bigint, updates bigint, hot_updates bigint,
    deletes bigint, seq_scan bigint, seq_tup_read bigint, idx_scan bigint,
    idx_tup_fetch bigint, blks_read bigint, blks_hit bigint, table_growth bigint,
    index_growth bigint, live_tup bigint, dead_tup bigint, vacuum_count bigint,
    autovacuum_count bigint, analyze_count bigint, autoanalyze_count bigint,
    dbid oid, tgt int,
    ord bigint NOT NULL
);
CREATE INDEX ON folio_perf_data.fact_table_rows (begin_snap, end_snap, ord);

CREATE TABLE folio_perf_data.fact_health_tables (
    begin_snap bigint NOT NULL,
    end_snap bigint NOT NULL,
    rel_key_id bigint, tenant text, module text, schema_name name, relname name,
    status text, seq_scan bigint, seq_tup_read bigint, idx_scan bigint,
    idx_tup_fetch bigint, seq_read_pct numeric, n_tup_ins bigint, n_tup_upd bigint,
    n_tup_del bigint, hot_update_pct numeric, live_tup bigint, dead_tup_begin bigint,
    dead_tup bigint, dead_tup_growth bigint, vacuum_count bigint,
    autovacuum_count bigint, analyze_count bigint, autoanalyze_count bigint,
    size_begin bigint, size_end bigint, growth bigint, findings text[],
    evidence text[], av_trigger numeric, impact numeric,
    ord bigint NOT NULL
);
CREATE INDEX ON folio_perf_data.fact_health_tables (begin_snap, end_snap, ord);
-- the tables with a finding (the verdict, the statements behind them)
CREATE INDEX fact_health_tables_flagged ON folio_perf_data.fact_health_tables (begin_snap, end_snap, ord)
    WHERE pg_catalog.cardinality(findings) > 0;

CREATE TABLE folio_perf_data.fact_index_rows (
    begin_snap bigint NOT NULL,
    end_snap bigint NOT NULL,
    rel_key_id bigint, tenant text, module text, schema_name name, table_name name,
    index_name name, idx_scan bigint, idx_tup_fetch bigint, size_end bigint,
    growth bigint, table_seq_scan bigint, table_idx_scan bigint, unused boolean,
    is_unique boolean, is_primary boolean, amname name, columns text[],
    duplicate_of text, covered_by text, rnk bigint,
    ord bigint NOT NULL
);
CREATE INDEX ON folio_perf_data.fact_index_rows (begin_snap, end_snap, ord);

CREATE TABLE folio_perf_data.fact_module_rels (
    begin_snap bigint NOT NULL,
    end_snap bigint NOT NULL,
    tenant text, module text, ins numeric, upd numeric, hot numeric, del numeric,
    ss numeric, str numeric, isc numeric, itf numeric, br numeric, bh numeric,
    vac numeric, ana numeric, fl text,
    ord bigint NOT NULL
);
CREATE INDEX ON folio_perf_data.fact_module_rels (begin_snap, end_snap, ord);

CREATE TABLE folio_perf_data.fact_table_sums (
    begin_snap bigint NOT NULL,
    end_snap bigint NOT NULL,
    tenant text, module text, relname text, ins numeric, upd numeric, del numeric,
    seq numeric, live bigint,
    ord bigint NOT NULL
);
CREATE INDEX ON folio_perf_data.fact_table_sums (begin_snap, end_snap, ord);

-- the relations whose difference is not plain (window flags count them)
CREATE INDEX fact_rel_odd ON folio_perf_data.fact_rel (begin_snap, end_snap, status)
    WHERE status <> 'ok';

-- a pair's rows go with it (no foreign key checked per stored row)
CREATE FUNCTION folio_perf_data.fact_pair_on_delete()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    EXECUTE pg_catalog.format('DELETE FROM folio_perf_data.%I f WHERE f.begin_snap = $1 AND f.end_snap = $2',
                              CASE OLD.kind WHEN 'stmt_delta' THEN 'fact_stmt'
                                            WHEN 'rel_delta' THEN 'fact_rel'
                                            ELSE 'fact_' || OLD.kind END)
        USING OLD.begin_snap, OLD.end_snap;
    RETURN OLD;
END
$$;
CREATE TRIGGER fact_pair_on_delete AFTER DELETE ON folio_perf_data.fact_pair
    FOR EACH ROW EXECUTE FUNCTION folio_perf_data.fact_pair_on_delete();
-- #30 remote targets at parity: generic plans of remote windows
-- (105_remote_plans.sql: plan.generic, remote_plan_miss), DB CPU (sampled)
-- against a target's vCPU count (target.vcpus; folio_perf_target_add gained
-- its third argument vcpus, 060_targets.sql)
ALTER TABLE folio_perf_data.target
    ADD COLUMN vcpus int CHECK (vcpus BETWEEN 1 AND 100000);
ALTER TABLE folio_perf_data.plan
    ADD COLUMN generic boolean NOT NULL DEFAULT false;
DROP FUNCTION IF EXISTS folio_perf_target_add(text, text);
-- folio_perf_plans gained the column generic (the #31 block above made it
-- with json_invalid)
DROP FUNCTION IF EXISTS folio_perf_plans(bigint, boolean);
CREATE TABLE folio_perf_data.remote_plan_miss (
    snap_id     bigint NOT NULL REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    key_id      bigint NOT NULL REFERENCES folio_perf_data.stmt_key,
    reason      text NOT NULL,
    PRIMARY KEY (snap_id, key_id)
);
-- 1.0.0's remote snapshots took the repository's own plans (reported by
-- no window: a remote window's plans are its target's); gone
DELETE FROM folio_perf_data.stmt_plan sp
USING folio_perf_data.snapshot s
WHERE s.snap_id = sp.snap_id AND s.target_id IS NOT NULL;
DELETE FROM folio_perf_data.plan p
WHERE NOT EXISTS (SELECT 1 FROM folio_perf_data.stmt_plan x WHERE x.plan_id = p.plan_id);


-- #31 one capture of a database at a time by a lock on an empty table, not
-- an advisory lock (PostgreSQL's advisory_lock test listed it while a timed
-- snapshot ran); 020_storage, capture() and folio_perf_purge() come with the
-- tail
CREATE TABLE folio_perf_data.capture_lock ();
SELECT pg_catalog.pg_extension_config_dump('folio_perf_data.capture_lock', '');

-- #29 table health: the settings and index definitions snapshots store
-- (138_table_health.sql; its functions come with the tail)
CREATE TABLE folio_perf_data.setting_set (
    set_id   bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    set_md5  uuid NOT NULL UNIQUE
);

CREATE TABLE folio_perf_data.setting_value (
    set_id   bigint NOT NULL REFERENCES folio_perf_data.setting_set ON DELETE CASCADE,
    name     text NOT NULL,
    setting  text,
    unit     text,
    source   text NOT NULL,
    boot_val text,
    PRIMARY KEY (set_id, name)
);

CREATE TABLE folio_perf_data.snapshot_setting (
    snap_id  bigint PRIMARY KEY REFERENCES folio_perf_data.snapshot ON DELETE CASCADE,
    set_id   bigint NOT NULL REFERENCES folio_perf_data.setting_set
);

CREATE INDEX ON folio_perf_data.snapshot_setting (set_id);

CREATE TABLE folio_perf_data.index_def (
    rel_key_id  bigint PRIMARY KEY REFERENCES folio_perf_data.rel_key,
    amname      name NOT NULL,
    columns     text[] NOT NULL,
    is_unique   boolean NOT NULL,
    is_primary  boolean NOT NULL,
    partial     boolean NOT NULL
);

CREATE TABLE folio_perf_data.index_def_mark (
    dbid        oid NOT NULL,
    target_id   int NOT NULL,          -- 0: this server
    last_key_id bigint NOT NULL,
    PRIMARY KEY (dbid, target_id)
);
-- the trigger needs its function now (the tail replaces it with the same)
CREATE FUNCTION folio_perf_data.setting_set_cleanup()
RETURNS trigger
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    DELETE FROM folio_perf_data.setting_set x
    WHERE x.set_id IN (SELECT DISTINCT o.set_id FROM old_rows o)
      AND NOT EXISTS (SELECT 1 FROM folio_perf_data.snapshot_setting s WHERE s.set_id = x.set_id);
    RETURN NULL;
END
$$;
CREATE TRIGGER setting_set_cleanup AFTER DELETE ON folio_perf_data.snapshot_setting
    REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION folio_perf_data.setting_set_cleanup();
-- #29 table health (end)

-- #35 the window store: a snapshot's relation rows become one element per
-- changed relation in chunks of 1,000 (020_storage.sql), with increments
-- instead of the counters' values: each 1.0.0 row's increment since the
-- relation's previous row (from zero at its first row and where a counter
-- went down), the gone rows with the values last seen.  rel_last keeps the
-- counters last seen, which the next snapshot's increments are taken from.
CREATE TABLE folio_perf_data.rel_chunk (
    snap_id          bigint NOT NULL,   -- folio_perf_data.snapshot
    chunk            int NOT NULL,      -- 0, 1, ... in key order
    keys             bigint[] NOT NULL, -- folio_perf_data.rel_key, ascending
    flags            smallint[] NOT NULL,
    seq_scan         bigint[] NOT NULL,
    seq_tup_read     bigint[] NOT NULL,
    idx_scan         bigint[] NOT NULL,
    idx_tup_fetch    bigint[] NOT NULL,
    n_tup_ins        bigint[] NOT NULL,
    n_tup_upd        bigint[] NOT NULL,
    n_tup_del        bigint[] NOT NULL,
    n_tup_hot_upd    bigint[] NOT NULL,
    vacuum_count     bigint[] NOT NULL,
    autovacuum_count bigint[] NOT NULL,
    analyze_count    bigint[] NOT NULL,
    autoanalyze_count bigint[] NOT NULL,
    blks_read        bigint[] NOT NULL,   -- heap (tables) or index blocks
    blks_hit         bigint[] NOT NULL,
    toast_blks_read  bigint[] NOT NULL,
    toast_blks_hit   bigint[] NOT NULL,
    n_live_tup       bigint[] NOT NULL,   -- at the snapshot
    n_dead_tup       bigint[] NOT NULL,
    size_bytes       bigint[] NOT NULL,   -- at the snapshot; tables: heap + toast (gone: last seen)
    size_delta       bigint[] NOT NULL,   -- increment since the previous element (gone: down to 0)
    PRIMARY KEY (snap_id, chunk)
);
-- The arrays compressed with lz4 where the server has it: a worst-case
-- snapshot compresses some 2,300 arrays of 1,000 numbers, mostly small
-- increments and zeros (pglz takes several times as long for them).
DO $lz4$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_settings
               WHERE name = 'default_toast_compression' AND 'lz4' = ANY (enumvals)) THEN
        ALTER TABLE folio_perf_data.rel_chunk
            ALTER COLUMN keys SET COMPRESSION lz4,
            ALTER COLUMN flags SET COMPRESSION lz4,
            ALTER COLUMN seq_scan SET COMPRESSION lz4,
            ALTER COLUMN seq_tup_read SET COMPRESSION lz4,
            ALTER COLUMN idx_scan SET COMPRESSION lz4,
            ALTER COLUMN idx_tup_fetch SET COMPRESSION lz4,
            ALTER COLUMN n_tup_ins SET COMPRESSION lz4,
            ALTER COLUMN n_tup_upd SET COMPRESSION lz4,
            ALTER COLUMN n_tup_del SET COMPRESSION lz4,
            ALTER COLUMN n_tup_hot_upd SET COMPRESSION lz4,
            ALTER COLUMN vacuum_count SET COMPRESSION lz4,
            ALTER COLUMN autovacuum_count SET COMPRESSION lz4,
            ALTER COLUMN analyze_count SET COMPRESSION lz4,
            ALTER COLUMN autoanalyze_count SET COMPRESSION lz4,
            ALTER COLUMN blks_read SET COMPRESSION lz4,
            ALTER COLUMN blks_hit SET COMPRESSION lz4,
            ALTER COLUMN toast_blks_read SET COMPRESSION lz4,
            ALTER COLUMN toast_blks_hit SET COMPRESSION lz4,
            ALTER COLUMN n_live_tup SET COMPRESSION lz4,
            ALTER COLUMN n_dead_tup SET COMPRESSION lz4,
            ALTER COLUMN size_bytes SET COMPRESSION lz4,
            ALTER COLUMN size_delta SET COMPRESSION lz4;
    END IF;
END
$lz4$;

ALTER TABLE folio_perf_data.rel_last ADD COLUMN counters bigint[];
-- (a work table of the update, dropped at its end)
CREATE UNLOGGED TABLE folio_perf_data.rel_conv AS
SELECT q.snap_id, q.rel_key_id AS k,
       (CASE WHEN q.p_cur IS NULL THEN 1 ELSE 0 END
        + CASE WHEN q.gone THEN 2 ELSE 0 END
        + CASE WHEN q.rewritten THEN 4 ELSE 0 END
        + CASE WHEN NOT q.gone AND q.p_cur IS NOT NULL AND
                    (q.cur[1] < q.p_cur[1] OR q.cur[2] < q.p_cur[2] OR q.cur[3] < q.p_cur[3]
                     OR q.cur[4] < q.p_cur[4] OR q.cur[5] < q.p_cur[5] OR q.cur[6] < q.p_cur[6]
                     OR q.cur[7] < q.p_cur[7] OR q.cur[13] < q.p_cur[13] OR q.cur[14] < q.p_cur[14])
               THEN 8 ELSE 0 END)::smallint AS fl,
       CASE WHEN q.gone THEN ARRAY[CASE WHEN q.p_cur[1] IS NOT NULL THEN 0::bigint END, CASE WHEN q.p_cur[2] IS NOT NULL THEN 0::bigint END, CASE WHEN q.p_cur[3] IS NOT NULL THEN 0::bigint END, CASE WHEN q.p_cur[4] IS NOT NULL THEN 0::bigint END,
                  CASE WHEN q.p_cur[5] IS NOT NULL THEN 0::bigint END, CASE WHEN q.p_cur[6] IS NOT NULL THEN 0::bigint END, CASE WHEN q.p_cur[7] IS NOT NULL THEN 0::bigint END, CASE WHEN q.p_cur[8] IS NOT NULL THEN 0::bigint END,
                  CASE WHEN q.p_cur[9] IS NOT NULL THEN 0::bigint END, CASE WHEN q.p_cur[10] IS NOT NULL THEN 0::bigint END, CASE WHEN q.p_cur[11] IS NOT NULL THEN 0::bigint END, CASE WHEN q.p_cur[12] IS NOT NULL THEN 0::bigint END,
                  CASE WHEN q.p_cur[13] IS NOT NULL THEN 0::bigint END, CASE WHEN q.p_cur[14] IS NOT NULL THEN 0::bigint END, CASE WHEN q.p_cur[15] IS NOT NULL THEN 0::bigint END, CASE WHEN q.p_cur[16] IS NOT NULL THEN 0::bigint END]
            WHEN q.p_cur IS NULL OR q.cur[1] < q.p_cur[1] OR q.cur[2] < q.p_cur[2]
              OR q.cur[3] < q.p_cur[3] OR q.cur[4] < q.p_cur[4] OR q.cur[5] < q.p_cur[5]
              OR q.cur[6] < q.p_cur[6] OR q.cur[7] < q.p_cur[7] OR q.cur[13] < q.p_cur[13]
              OR q.cur[14] < q.p_cur[14] THEN q.cur
            ELSE ARRAY[q.cur[1] - q.p_cur[1], q.cur[2] - q.p_cur[2], q.cur[3] - q.p_cur[3], q.cur[4] - q.p_cur[4],
                  q.cur[5] - q.p_cur[5], q.cur[6] - q.p_cur[6], q.cur[7] - q.p_cur[7], q.cur[8] - q.p_cur[8],
                  q.cur[9] - q.p_cur[9], q.cur[10] - q.p_cur[10], q.cur[11] - q.p_cur[11], q.cur[12] - q.p_cur[12],
                  q.cur[13] - q.p_cur[13], q.cur[14] - q.p_cur[14], q.cur[15] - q.p_cur[15], q.cur[16] - q.p_cur[16]]
       END AS inc,
       q.cur,
       CASE WHEN q.gone THEN q.p_live ELSE q.n_live_tup END AS live,
       CASE WHEN q.gone THEN q.p_dead ELSE q.n_dead_tup END AS dead,
       CASE WHEN q.gone THEN q.p_size ELSE q.size_bytes END AS sz,
       CASE WHEN q.gone THEN 0 ELSE q.size_bytes END - coalesce(q.p_size, 0) AS dsz
FROM (
    SELECT x.snap_id, x.rel_key_id, x.gone, x.rewritten, x.n_live_tup, x.n_dead_tup, x.size_bytes,
           ARRAY[x.seq_scan, x.seq_tup_read, x.idx_scan, x.idx_tup_fetch, x.n_tup_ins, x.n_tup_upd, x.n_tup_del, x.n_tup_hot_upd, x.vacuum_count, x.autovacuum_count, x.analyze_count, x.autoanalyze_count, x.blks_read, x.blks_hit, x.toast_blks_read, x.toast_blks_hit] AS cur,
           lag(ARRAY[x.seq_scan, x.seq_tup_read, x.idx_scan, x.idx_tup_fetch, x.n_tup_ins, x.n_tup_upd, x.n_tup_del, x.n_tup_hot_upd, x.vacuum_count, x.autovacuum_count, x.analyze_count, x.autoanalyze_count, x.blks_read, x.blks_hit, x.toast_blks_read, x.toast_blks_hit]) OVER w AS p_cur,
           lag(x.n_live_tup) OVER w AS p_live, lag(x.n_dead_tup) OVER w AS p_dead,
           lag(x.size_bytes) OVER w AS p_size
    FROM folio_perf_data.rel x
    WINDOW w AS (PARTITION BY x.rel_key_id ORDER BY x.snap_id)
) q
-- a gone row with nothing before it (1.0.0's purge lost the rest): no facts
WHERE NOT (q.gone AND q.p_cur IS NULL);
INSERT INTO folio_perf_data.rel_chunk
SELECT e.snap_id, e.chunk, array_agg(e.k), array_agg(e.fl),
       array_agg(e.inc[1]),
       array_agg(e.inc[2]),
       array_agg(e.inc[3]),
       array_agg(e.inc[4]),
       array_agg(e.inc[5]),
       array_agg(e.inc[6]),
       array_agg(e.inc[7]),
       array_agg(e.inc[8]),
       array_agg(e.inc[9]),
       array_agg(e.inc[10]),
       array_agg(e.inc[11]),
       array_agg(e.inc[12]),
       array_agg(e.inc[13]),
       array_agg(e.inc[14]),
       array_agg(e.inc[15]),
       array_agg(e.inc[16]),
       array_agg(e.live), array_agg(e.dead),
       array_agg(e.sz), array_agg(e.dsz)
FROM (SELECT c.*, ((row_number() OVER (PARTITION BY c.snap_id ORDER BY c.k) - 1) / 1000)::int AS chunk
      FROM folio_perf_data.rel_conv c ORDER BY c.snap_id, c.k) e
GROUP BY e.snap_id, e.chunk;
UPDATE folio_perf_data.rel_last l SET counters = c.cur
FROM (SELECT DISTINCT ON (c.k) c.k, c.cur FROM folio_perf_data.rel_conv c
      WHERE c.fl & 2 = 0 ORDER BY c.k, c.snap_id DESC) c
WHERE c.k = l.rel_key_id;
DROP TABLE folio_perf_data.rel_conv;
CREATE INDEX rel_chunk_keys ON folio_perf_data.rel_chunk USING gin (keys);
-- out of the extension first, so that pg_dump's list of its tables loses it
ALTER EXTENSION folio_perf DROP TABLE folio_perf_data.rel;
DROP TABLE folio_perf_data.rel;
-- #35 the window store (end)

-- Statement texts keep their shape (stmt_shape(), defined here as the
-- install script defines it, before the columns that use it; the rest of
-- the update replaces it with the same definition): computed for the
-- texts stored before as the columns are added.
CREATE FUNCTION folio_perf_data.stmt_shape(query text, OUT verb text, OUT rels text[])
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT lower(substring(query FROM '^\s*(?:/\*.*?\*/\s*)*([A-Za-z]+)')),
           coalesce((SELECT array_agg(CASE WHEN m[1] LIKE '"%' THEN replace(substr(m[1], 2, length(m[1]) - 2), '""', '"')
                                           ELSE lower(m[1]) END ORDER BY o)
                     FROM regexp_matches(query,
                          '\m(?:from|join|into|update|table)\s+(?:only\s+)?(?:(?:"(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)\s*\.\s*)?("(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)',
                          'gi') WITH ORDINALITY AS x(m, o)), '{}')
$$;
ALTER TABLE folio_perf_data.query_text
    ADD COLUMN verb text GENERATED ALWAYS AS ((folio_perf_data.stmt_shape(query)).verb) STORED,
    ADD COLUMN rels text[] GENERATED ALWAYS AS ((folio_perf_data.stmt_shape(query)).rels) STORED;
