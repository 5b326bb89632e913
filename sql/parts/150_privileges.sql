/* sql/parts/150_privileges.sql - roles, privileges (default-deny) and pg_dump configuration */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

-- Collected data survives pg_dump / pg_restore; the targets' passwords
-- (target_secret), the running sampler's view of the targets
-- (target_status) and the windows' stored facts (fact_pair and the fact_
-- tables: derived, computed again on first use) are never in a dump.
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN
        SELECT c.oid::regclass::text FROM pg_catalog.pg_class c
        WHERE c.relnamespace = 'folio_perf_data'::regnamespace
          AND c.relkind IN ('r', 'S')
          AND c.relname NOT IN ('target_secret', 'target_status',
                                'fact_pair', 'fact_stmt', 'fact_rel', 'fact_table_rows',
                                'fact_health_tables', 'fact_index_rows',
                                'fact_module_rels', 'fact_table_sums')
    LOOP
        PERFORM pg_catalog.pg_extension_config_dump(t, '');
    END LOOP;
END
$$;

/*
 * Roles.  Two NOLOGIN roles, created if missing; like any role they are
 * cluster-wide and survive DROP EXTENSION (a second database's CREATE
 * EXTENSION uses the same ones).  Members of pg_read_all_stats (so also
 * pg_monitor) need neither: they get what folio_perf_reader gets, and see
 * every query text.  folio_perf_reader exists for a narrower reader that
 * sees the texts of its own statements only; folio_perf_writer for those who
 * may take snapshots, make windows, purge and add targets.  An existing role
 * of either name is used only if it cannot log in and has no attribute
 * beyond INHERIT: a role someone prepared with other powers is refused.
 */
DO $$
DECLARE
    r text;
BEGIN
    FOREACH r IN ARRAY ARRAY['folio_perf_reader', 'folio_perf_writer'] LOOP
        IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles x WHERE x.rolname = r) THEN
            EXECUTE format('CREATE ROLE %I NOLOGIN', r);
        ELSIF EXISTS (SELECT 1 FROM pg_catalog.pg_roles x
                      WHERE x.rolname = r
                        AND (x.rolcanlogin OR x.rolsuper OR x.rolcreaterole OR x.rolcreatedb
                             OR x.rolreplication OR x.rolbypassrls)) THEN
            RAISE EXCEPTION 'role "%" exists and has more than NOLOGIN', r
                USING ERRCODE = 'duplicate_object',
                      DETAIL = 'folio_perf grants its privileges to this role; it must be a plain NOLOGIN group role.',
                      HINT = format('ALTER ROLE %I NOLOGIN NOSUPERUSER NOCREATEROLE NOCREATEDB NOREPLICATION NOBYPASSRLS, or drop it.', r);
        END IF;
    END LOOP;
    IF NOT pg_catalog.pg_has_role('folio_perf_writer', 'folio_perf_reader', 'MEMBER') THEN
        GRANT folio_perf_reader TO folio_perf_writer;
    END IF;
END
$$;

/*
 * Default-deny.  Every function, table, view and sequence of the extension,
 * whichever part created it, loses PUBLIC's privileges here; what is granted
 * below is granted by name, part by part.  A function or view that is not
 * named below is the owner's only.  test/sql/privileges.sql lists every
 * object of the extension with who may use it against an expected table.
 */
DO $$
DECLARE
    f record;
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure::text AS obj, 'FUNCTION' AS kind
        FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass
             AND d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
        UNION ALL
        SELECT c.oid::regclass::text, 'TABLE'
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_class'::regclass
             AND d.objid = c.oid AND d.deptype = 'e'
        JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
    LOOP
        EXECUTE format('REVOKE ALL ON %s %s FROM PUBLIC', f.kind, f.obj);
    END LOOP;
END
$$;
REVOKE ALL ON SCHEMA folio_perf_data FROM PUBLIC;
GRANT USAGE ON SCHEMA folio_perf_data TO folio_perf_reader, pg_read_all_stats;

-- 010 C functions: parsing helpers and live statistics
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_parse_schema(text),
    @extschema@.folio_perf_appname_module(text),
    @extschema@.folio_perf_query_schema(text),
    @extschema@.folio_perf_query_relnames(text),
    @extschema@.folio_perf_attribute(text, text, text, bigint),
    @extschema@.folio_perf_query_relations(),
    @extschema@.folio_perf_rel_stats(),
    @extschema@.folio_perf_rel_changes(oid[], bigint[], oid[]),
    @extschema@.folio_perf_rel_capture(bigint),
    @extschema@.folio_perf_rel_capture_base(),
    @extschema@.folio_perf_relation_size(oid),
    @extschema@.folio_perf_relations_status()
    TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION @extschema@.folio_perf_relations_reset() TO folio_perf_writer;
GRANT SELECT ON @extschema@.folio_perf_relations_status TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION @extschema@.folio_perf_rel_state() TO folio_perf_reader, pg_read_all_stats;
GRANT SELECT ON @extschema@.folio_perf_rel_state TO folio_perf_reader, pg_read_all_stats;

-- 020 storage: readable tables.  Not query_text (texts of other roles'
-- statements, only through stmt_text), not plan (plans with literals, only
-- through stmt_plan_text), target only without its connection string
-- (passwords); folio_perf_targets shows targets without passwords.  Nobody
-- but the owner writes them.  The trigger functions are the owner's.
GRANT SELECT ON
    folio_perf_data.target_status, folio_perf_data.snapshot,
    folio_perf_data.snapshot_activity, folio_perf_data.stmt_key,
    folio_perf_data.stmt, folio_perf_data.stmt_last, folio_perf_data.rel_key,
    folio_perf_data.rel_chunk, folio_perf_data.rel_last, folio_perf_data.schema_stat,
    folio_perf_data.window, folio_perf_data.stmt_plan,
    folio_perf_data.sample_series, folio_perf_data.sample_interval,
    folio_perf_data.fact_pair, folio_perf_data.fact_stmt, folio_perf_data.fact_rel,
    folio_perf_data.fact_table_rows, folio_perf_data.fact_health_tables,
    folio_perf_data.fact_index_rows, folio_perf_data.fact_module_rels,
    folio_perf_data.fact_table_sums
    TO folio_perf_reader, pg_read_all_stats;
GRANT SELECT ON folio_perf_data.query_text, folio_perf_data.plan TO pg_read_all_stats;
GRANT SELECT (target_id, name, restricted, enabled, created_at, dropped_at, vcpus) ON folio_perf_data.target
    TO folio_perf_reader, pg_read_all_stats;
-- target_secret (the targets' passwords) is the owner's only.

-- 025 what folio_perf runs itself (reports and the live view ask)
GRANT EXECUTE ON FUNCTION
    folio_perf_data.own_queryid(bigint),
    folio_perf_data.own_status()
    TO folio_perf_reader, pg_read_all_stats;

-- 030 attribution (the live view folio_perf_statements attributes)
GRANT EXECUTE ON FUNCTION
    folio_perf_data.is_housekeeping(text),
    folio_perf_data.remote_catalog(integer, oid[], text[]),
    folio_perf_data.attribute(bigint[], text[], text[], boolean, text[], text[]),
    folio_perf_data.attribute_statements(bigint[], oid[], text[], integer)
    TO folio_perf_reader, pg_read_all_stats;

-- 040 sources: remote_query, remote_version, the src_* functions and the
-- capture headers reach remote targets with the stored connection strings
-- or write storage: the owner's only, through capture().  remote_check and
-- target_store run as their caller (folio_perf_target_add's), whose rules
-- they apply (a non-superuser's target is restricted).
GRANT EXECUTE ON FUNCTION
    folio_perf_data.pgss_current(boolean),
    folio_perf_data.pgss_select_list(integer, boolean),
    folio_perf_data.pgss_row_columns(),
    folio_perf_data.pgss_coldef(),
    folio_perf_data.conninfo_redact(text)
    TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION
    folio_perf_data.remote_check(text, text),
    folio_perf_data.target_store(text, text)
    TO folio_perf_writer;

-- 050 capture (work_table_missing and the work tables are the owner's)
GRANT EXECUTE ON FUNCTION folio_perf_data.work_table_state(text)
    TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION folio_perf_data.capture(text, text, integer) TO folio_perf_writer;

-- 060 targets
GRANT EXECUTE ON FUNCTION folio_perf_data.target_id(text) TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_target_add(text, text, integer),
    @extschema@.folio_perf_target_set(text, integer),
    @extschema@.folio_perf_target_drop(text),
    folio_perf_data.check_vcpus(integer)
    TO folio_perf_writer;
GRANT SELECT ON @extschema@.folio_perf_targets TO folio_perf_reader, pg_read_all_stats;

-- 070 windows
GRANT EXECUTE ON FUNCTION folio_perf_data.check_snapshot(bigint, text)
    TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_snapshot(text),
    @extschema@.folio_perf_snapshot(text, text),
    @extschema@.folio_perf_snapshot_timed(),
    @extschema@.folio_perf_window(bigint, bigint, text),
    @extschema@.folio_perf_begin(text, jsonb, text),
    @extschema@.folio_perf_begin(text, jsonb),
    @extschema@.folio_perf_end(bigint),
    @extschema@.folio_perf_purge(interval)
    TO folio_perf_writer;
GRANT SELECT ON @extschema@.folio_perf_snapshots, @extschema@.folio_perf_windows
    TO folio_perf_reader, pg_read_all_stats;

-- 080 window arithmetic
GRANT EXECUTE ON FUNCTION
    folio_perf_data.window_bounds(bigint),
    folio_perf_data.snaps_between(bigint, bigint),
    folio_perf_data.stmt_delta_compute(bigint, bigint),
    folio_perf_data.window_cache(text, bigint, bigint),
    folio_perf_data.stmt_delta(bigint, bigint),
    folio_perf_data.rel_delta_compute(bigint, bigint),
    folio_perf_data.rel_delta(bigint, bigint),
    folio_perf_data.rel_statuses(bigint, bigint),
    folio_perf_data.window_facts(text, bigint, bigint),
    folio_perf_data.may_see_text(oid, integer),
    folio_perf_data.check_n(integer)
    TO folio_perf_reader, pg_read_all_stats;
GRANT SELECT ON folio_perf_data.stmt_text TO folio_perf_reader, pg_read_all_stats;

-- 090 report tables
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_top_statements(bigint, integer, text, boolean, boolean),
    folio_perf_data.table_rows_compute(bigint, bigint),
    folio_perf_data.table_size_at(oid, integer, name, name, bigint, bigint),
    folio_perf_data.rel_at(bigint, bigint[]),
    folio_perf_data.rel_chunk_pick(bigint[], smallint[], bigint[], bigint[], bigint[], bigint[]),
    folio_perf_data.table_rows(bigint, bigint),
    folio_perf_data.module_rels_compute(bigint, bigint),
    folio_perf_data.module_rels(bigint, bigint),
    folio_perf_data.table_sums_compute(bigint, bigint),
    folio_perf_data.table_sums(bigint, bigint),
    @extschema@.folio_perf_table_activity(bigint, integer, text),
    folio_perf_data.schema_sizes(bigint),
    @extschema@.folio_perf_module_activity(bigint),
    @extschema@.folio_perf_window_flags(bigint),
    folio_perf_data.cdiff(numeric, numeric),
    folio_perf_data.cdiff(bigint, bigint),
    @extschema@.folio_perf_db_summary(bigint)
    TO folio_perf_reader, pg_read_all_stats;

-- 100 plans.  folio_perf_plans_take() hands out (and removes from the
-- store) every role's plans with their literals: the owner's only, called
-- by capture().  folio_perf_plans_current() shows a reader its own.
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_plans_current(),
    @extschema@.folio_perf_plans_status(),
    folio_perf_data.plan_outline(text),
    folio_perf_data.window_plans(bigint, bigint),
    @extschema@.folio_perf_plans(bigint, boolean),
    folio_perf_data.plan_groups(bigint),
    folio_perf_data.plan_groups_compute(bigint, bigint),
    folio_perf_data.plan_changes_section(bigint, bigint),
    folio_perf_data.report_plans(jsonb, bigint),
    folio_perf_data.render_plans(text, jsonb, text, jsonb)
    TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION @extschema@.folio_perf_plans_reset() TO folio_perf_writer;
GRANT SELECT ON @extschema@.folio_perf_plans_status, folio_perf_data.stmt_plan_text
    TO folio_perf_reader, pg_read_all_stats;
-- 105 remote plans: remote_explain and store_remote_plans reach targets and
-- write storage (the owner's, through capture()); what a report says of a
-- remote window is everyone's who reads reports
GRANT EXECUTE ON FUNCTION
    folio_perf_data.plan_json_fingerprint(jsonb),
    folio_perf_data.remote_plans_note(bigint, integer),
    folio_perf_data.remote_basis(integer, timestamptz, timestamptz, integer)
    TO folio_perf_reader, pg_read_all_stats;
GRANT SELECT ON folio_perf_data.remote_plan_miss TO folio_perf_reader, pg_read_all_stats;

-- 110 sampler
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_sampler_status(),
    @extschema@.folio_perf_samples(),
    folio_perf_data.sample_window(bigint),
    folio_perf_data.sample_stats(text, timestamptz, timestamptz, bigint, integer),
    @extschema@.folio_perf_connections(bigint),
    @extschema@.folio_perf_db_load(bigint, boolean),
    @extschema@.folio_perf_cpu(bigint),
    @extschema@.folio_perf_timeseries(bigint, text, integer, boolean)
    TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_sampler_flush(),
    @extschema@.folio_perf_sampler_purge(interval)
    TO folio_perf_writer;
GRANT SELECT ON @extschema@.folio_perf_sampler_status, @extschema@.folio_perf_samples
    TO folio_perf_reader, pg_read_all_stats;

-- 120 rendering
GRANT EXECUTE ON FUNCTION
    folio_perf_data.html_escape(text),
    folio_perf_data.fold(text),
    folio_perf_data.md_escape(text),
    folio_perf_data.html_wrap(text),
    folio_perf_data.md_code(text, text),
    folio_perf_data.esc(text, text),
    folio_perf_data.fmt_num(numeric, integer),
    folio_perf_data.fmt_sig(numeric),
    folio_perf_data.fmt_bytes(numeric),
    folio_perf_data.fmt_duration(numeric),
    folio_perf_data.col_kind(text),
    folio_perf_data.col_label(text),
    folio_perf_data.fmt_value(jsonb, text),
    folio_perf_data.cell(jsonb, text, text),
    folio_perf_data.sql_start(text, integer),
    folio_perf_data.sql_refs(jsonb[]),
    folio_perf_data.sql_appendix(text, jsonb, jsonb[]),
    folio_perf_data.slug(text),
    folio_perf_data.render_section(text, jsonb, jsonb),
    folio_perf_data.section(text, text[], jsonb, text),
    folio_perf_data.check_format(text),
    folio_perf_data.nice_ticks(numeric, boolean),
    folio_perf_data.svg_chart(text, jsonb, boolean, jsonb),
    folio_perf_data.svg_bars(text, jsonb, text),
    folio_perf_data.kv_section(text, jsonb, text[]),
    folio_perf_data.html_head(text),
    folio_perf_data.html_foot()
    TO folio_perf_reader, pg_read_all_stats;

-- 132 the markdown wiki page
GRANT EXECUTE ON FUNCTION
    folio_perf_data.md_min(text, boolean),
    folio_perf_data.md_table(text[], text, jsonb, text),
    folio_perf_data.fmt_ms(numeric),
    folio_perf_data.report_page_md(jsonb)
    TO folio_perf_reader, pg_read_all_stats;

-- 130 documents
GRANT EXECUTE ON FUNCTION
    folio_perf_data.host_cpus(timestamptz, timestamptz, integer),
    folio_perf_data.trend(bigint, integer, boolean),
    @extschema@.folio_perf_trend(bigint, integer),
    folio_perf_data.report_doc(bigint),
    @extschema@.folio_perf_report(bigint, text, text),
    @extschema@.folio_perf_compare_rows(bigint, bigint),
    @extschema@.folio_perf_compare(bigint, bigint, text)
    TO folio_perf_reader, pg_read_all_stats;

-- 135 FOLIO operations.  Readers read the definitions and run the
-- operations and data-import reports; writers add definitions, and change
-- and delete the ones they added (operation_guard checks the owner and
-- keeps the built-in ones).  di_jobs_read and di_jobs_read_local
-- read tenant tables as the owner: the owner's only, called by
-- folio_perf_data_import_jobs (and di_jobs_query, the scan they run).  pg_dump keeps only the definitions that are
-- not built in: the extension makes those.
GRANT SELECT ON folio_perf_data.operation, @extschema@.folio_perf_operation_definitions
    TO folio_perf_reader, pg_read_all_stats;
GRANT INSERT, UPDATE, DELETE ON folio_perf_data.operation, @extschema@.folio_perf_operation_definitions
    TO folio_perf_writer;
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_data_import_jobs(bigint),
    @extschema@.folio_perf_operations(bigint),
    folio_perf_data.hms(interval),
    folio_perf_data.di_jobs_json(bigint),
    folio_perf_data.di_jobs_compute(bigint, bigint),
    folio_perf_data.operations_of(bigint, jsonb, text),
    folio_perf_data.operations_doc(bigint),
    folio_perf_data.operations_sections(jsonb),
    folio_perf_data.operations_compare_rows(bigint, bigint),
    folio_perf_data.window_name(bigint),
    folio_perf_data.operations_compare_sections(folio_perf_data.compare_row[], bigint, bigint, jsonb)
    TO folio_perf_reader, pg_read_all_stats;
SELECT pg_catalog.pg_extension_config_dump('folio_perf_data.operation', 'WHERE NOT builtin');

-- 136 findings: the significance rule, a window's active span and headline
GRANT EXECUTE ON FUNCTION
    folio_perf_data.ln_gamma(double precision),
    folio_perf_data.inc_beta(double precision, double precision, double precision),
    folio_perf_data.welch(numeric, numeric, numeric, numeric, numeric, numeric),
    folio_perf_data.check_rules(jsonb),
    folio_perf_data.significance(bigint, numeric, numeric, bigint, numeric, numeric, numeric, jsonb),
    folio_perf_data.active_span(bigint),
    folio_perf_data.db_cpu_pct_between(bigint, timestamptz, timestamptz),
    folio_perf_data.window_headline(bigint, bigint),
    folio_perf_data.active_span_doc(bigint, jsonb),
    folio_perf_data.active_span_section(jsonb),
    folio_perf_data.fmt_p(double precision)
    TO folio_perf_reader, pg_read_all_stats;

-- 137 the cost of an operation from its own flow: the flows as the
-- definitions (readers read, writers add their own); flow_matches reads
-- statement texts as the owner and gives back only which statement is in
-- which flow.
GRANT SELECT ON folio_perf_data.operation_flow, @extschema@.folio_perf_operation_flows
    TO folio_perf_reader, pg_read_all_stats;
GRANT INSERT, UPDATE, DELETE ON folio_perf_data.operation_flow, @extschema@.folio_perf_operation_flows
    TO folio_perf_writer;
GRANT EXECUTE ON FUNCTION
    folio_perf_data.stmt_shape(text),
    folio_perf_data.flow_matches(bigint[]),
    folio_perf_data.own_cost(bigint, bigint, jsonb)
    TO folio_perf_reader, pg_read_all_stats;
SELECT pg_catalog.pg_extension_config_dump('folio_perf_data.operation_flow', 'WHERE NOT builtin');

-- 138 the regression gate
GRANT EXECUTE ON FUNCTION
    folio_perf_data.stmt_groups(bigint),
    folio_perf_data.stmt_groups_compute(bigint, bigint),
    folio_perf_data.stmt_subject(text, text, text),
    folio_perf_data.server_figures(bigint),
    folio_perf_data.check_rows(bigint, bigint, jsonb),
    folio_perf_data.di_job_groups(jsonb),
    @extschema@.folio_perf_check(bigint, bigint, jsonb),
    folio_perf_data.xml_text(text),
    @extschema@.folio_perf_check_junit(bigint, bigint, jsonb),
    folio_perf_data.check_verdict(jsonb, integer, boolean),
    folio_perf_data.module_significance(bigint, bigint, jsonb)
    TO folio_perf_reader, pg_read_all_stats;

-- 138 table health.  health_capture and the src_* functions read the
-- server or a target for capture() and write storage: the owner's only.
GRANT SELECT ON folio_perf_data.setting_set, folio_perf_data.setting_value,
    folio_perf_data.snapshot_setting, folio_perf_data.index_def, folio_perf_data.index_def_mark
    TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION
    folio_perf_data.setting_text(text, text),
    folio_perf_data.settings_at(bigint),
    @extschema@.folio_perf_settings(bigint),
    @extschema@.folio_perf_settings_diff(bigint, bigint),
    folio_perf_data.health_tables(bigint),
    folio_perf_data.health_tables_compute(bigint, bigint),
    folio_perf_data.health_flagged(bigint),
    @extschema@.folio_perf_table_health_statements(bigint),
    @extschema@.folio_perf_table_health(bigint),
    folio_perf_data.table_health_rows(bigint, integer, boolean),
    @extschema@.folio_perf_index_usage(bigint),
    folio_perf_data.index_usage_rows(bigint, integer),
    folio_perf_data.index_rows_compute(bigint, bigint),
    folio_perf_data.index_findings(bigint),
    @extschema@.folio_perf_lock_waits(bigint),
    @extschema@.folio_perf_lock_holders(bigint),
    folio_perf_data.health_server(bigint),
    folio_perf_data.health_doc(bigint, jsonb),
    folio_perf_data.health_verdict(jsonb, integer),
    folio_perf_data.health_sections(jsonb),
    folio_perf_data.health_compare_doc(bigint, bigint),
    folio_perf_data.health_compare_sections(jsonb, text, text),
    folio_perf_data.verdict_add(jsonb[], jsonb),
    folio_perf_data.health_report(jsonb, bigint)
    TO folio_perf_reader, pg_read_all_stats;

-- 139 series of windows: marks are taken by writers (steps_close() is
-- the owner's, called by folio_perf_mark() and folio_perf_end())
GRANT SELECT ON folio_perf_data.window_step TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION @extschema@.folio_perf_mark(text, jsonb) TO folio_perf_writer;
GRANT EXECUTE ON FUNCTION
    @extschema@.folio_perf_steps(bigint),
    folio_perf_data.series_rules(jsonb),
    folio_perf_data.series_check(bigint[]),
    folio_perf_data.series_by_tag(text, jsonb),
    folio_perf_data.series_key(bigint[], text),
    folio_perf_data.series_window(bigint, text),
    folio_perf_data.series_headline(bigint, jsonb),
    folio_perf_data.series_saturation(jsonb, jsonb, jsonb),
    folio_perf_data.series_doc(bigint[], text, jsonb),
    folio_perf_data.series_rows(jsonb),
    folio_perf_data.svg_series_chart(text, text[], jsonb, jsonb),
    @extschema@.folio_perf_series(bigint[]),
    @extschema@.folio_perf_series(text, jsonb),
    @extschema@.folio_perf_series_saturation(bigint[], jsonb),
    @extschema@.folio_perf_series_report(bigint[], text, bigint, jsonb)
    TO folio_perf_reader, pg_read_all_stats;

-- 140 live views
GRANT SELECT ON @extschema@.folio_perf_statements, @extschema@.folio_perf_activity,
    @extschema@.folio_perf_modules, folio_perf_data.statements_all
    TO folio_perf_reader, pg_read_all_stats;
GRANT EXECUTE ON FUNCTION @extschema@.folio_perf_statements(boolean)
    TO folio_perf_reader, pg_read_all_stats;

-- 145 live metrics for scrapers
GRANT EXECUTE ON FUNCTION @extschema@.folio_perf_metrics_current()
    TO folio_perf_reader, pg_read_all_stats;
GRANT SELECT ON @extschema@.folio_perf_metrics TO folio_perf_reader, pg_read_all_stats;
