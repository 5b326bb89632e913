/* sql/parts/150_privileges.sql - privileges and pg_dump configuration */

-- Collected data survives pg_dump / pg_restore.
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN
        SELECT c.oid::regclass::text FROM pg_catalog.pg_class c
        WHERE c.relnamespace = 'folio_perf_data'::regnamespace
          AND c.relkind IN ('r', 'S')
    LOOP
        PERFORM pg_catalog.pg_extension_config_dump(t, '');
    END LOOP;
END
$$;

/*
 * Privileges: nothing for PUBLIC.  folio_perf_reader (and members of
 * pg_read_all_stats, hence pg_monitor) may read reports and views;
 * folio_perf_writer may also take snapshots, make windows and purge.
 * Both roles are created if missing and survive DROP EXTENSION, like any
 * role.  Query texts of other roles are shown only to members of
 * pg_read_all_stats, as in pg_stat_statements.
 */
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'folio_perf_reader') THEN
        CREATE ROLE folio_perf_reader NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'folio_perf_writer') THEN
        CREATE ROLE folio_perf_writer NOLOGIN;
    END IF;
    IF NOT pg_catalog.pg_has_role('folio_perf_writer', 'folio_perf_reader', 'MEMBER') THEN
        GRANT folio_perf_reader TO folio_perf_writer;
    END IF;
END
$$;

DO $$
DECLARE
    f record;
    writer_only text[] := ARRAY[
        'folio_perf_snapshot', 'folio_perf_snapshot_timed', 'folio_perf_begin',
        'folio_perf_end', 'folio_perf_window', 'folio_perf_purge',
        'folio_perf_relations_reset', 'capture', 'folio_perf_target_add',
        'folio_perf_target_drop', 'folio_perf_sampler_flush', 'folio_perf_sampler_purge',
        'folio_perf_plans_take', 'folio_perf_plans_reset', 'store_plans'];
    -- reach remote targets with the stored connection strings: only the
    -- extension's owner, through capture() and folio_perf_target_add()
    owner_only text[] := ARRAY[
        'remote_query', 'remote_version', 'remote_check', 'src_pgss', 'src_activity',
        'src_rel_changes', 'src_remote_sizes', 'src_catalog_bytes',
        'capture_header_local', 'capture_header_remote', 'di_jobs_read'];
BEGIN
    FOR f IN
        SELECT p.oid::regprocedure AS sig, p.proname
        FROM pg_catalog.pg_proc p
        JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::regclass
             AND d.objid = p.oid AND d.deptype = 'e'
        JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
    LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f.sig);
        IF f.proname = ANY (owner_only) THEN
            CONTINUE;
        ELSIF f.proname = ANY (writer_only) THEN
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO folio_perf_writer', f.sig);
        ELSE
            EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO folio_perf_reader, pg_read_all_stats', f.sig);
        END IF;
    END LOOP;
    FOR f IN
        SELECT c.oid::regclass AS sig, c.relkind
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_class'::regclass
             AND d.objid = c.oid AND d.deptype = 'e'
        JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'folio_perf'
    LOOP
        EXECUTE format('REVOKE ALL ON %s FROM PUBLIC', f.sig);
        IF f.relkind IN ('r', 'v') THEN
            EXECUTE format('GRANT SELECT ON %s TO folio_perf_reader, pg_read_all_stats', f.sig);
        END IF;
    END LOOP;
END
$$;
GRANT USAGE ON SCHEMA folio_perf_data TO folio_perf_reader, pg_read_all_stats;
-- texts of other roles' statements only through folio_perf_data.stmt_text
REVOKE SELECT ON folio_perf_data.query_text FROM folio_perf_reader;
-- connection strings (passwords) only for the extension's owner;
-- folio_perf_targets shows them without passwords
REVOKE ALL ON folio_perf_data.target FROM folio_perf_reader, pg_read_all_stats;
GRANT SELECT (target_id, name, enabled, created_at, dropped_at) ON folio_perf_data.target
    TO folio_perf_reader, pg_read_all_stats;
-- plans of other roles' statements only through folio_perf_data.stmt_plan_text
REVOKE SELECT ON folio_perf_data.plan FROM folio_perf_reader;

-- FOLIO operations (135_operations.sql): readers read the definitions,
-- writers add, change and delete their own (the trigger keeps the built-in
-- ones); pg_dump keeps only those, the extension makes the built-in ones.
GRANT INSERT, UPDATE, DELETE ON folio_perf_data.operation, folio_perf_operation_definitions
    TO folio_perf_writer;
GRANT USAGE ON SCHEMA folio_perf_data TO folio_perf_writer;
SELECT pg_catalog.pg_extension_config_dump('folio_perf_data.operation', 'WHERE NOT builtin');
