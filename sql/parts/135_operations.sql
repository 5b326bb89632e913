/* sql/parts/135_operations.sql - FOLIO operations: data-import jobs, business operations and their DB cost, their report and compare sections */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

------------------------------------------------------------------------
--
-- FOLIO keeps its business facts in its own tables: a check-out creates a
-- row of <tenant>_mod_circulation_storage.loan, a check-in one of
-- check_in, a data-import job is a row of
-- <tenant>_mod_source_record_manager.job_execution.  An operation is
-- counted from the window's own relation statistics (the inserts, updates
-- or deletes of one table of one module, per tenant), or, for imported
-- records, from the data-import jobs that completed in the window; the
-- tenant's DB time, statements, rows written and WAL of the window are
-- then divided by the count.
--
-- Definitions are declarative (module, relation, counter): nothing a
-- definition holds is ever run as SQL, so that a writer who adds one
-- cannot make the extension's owner run anything.  job_execution is the
-- only tenant table read, by a fixed query, after checking that it is an
-- ordinary table (a view or a foreign table of the same name could run
-- its owner's functions with the reader's rights), and every column goes
-- through its type's output function (format('%s')), never a cast that a
-- type's owner could have defined.
------------------------------------------------------------------------

CREATE TABLE folio_perf_data.operation (
    operation    text PRIMARY KEY
                 CHECK (operation ~ '^[a-z][a-z0-9_]{0,62}$'),
    module       text NOT NULL
                 CHECK (module ~ '^[a-z][a-z0-9_]{0,62}$'),
    relation     text NOT NULL
                 CHECK (relation ~ '^[a-z_][a-z0-9_$]{0,62}$'),
    counter      text NOT NULL DEFAULT 'inserts'
                 CHECK (counter IN ('inserts', 'updates', 'deletes', 'rows_written')),
    counted_from text NOT NULL DEFAULT 'relation'
                 CHECK (counted_from IN ('relation', 'data_import_jobs')),
    description  text,
    builtin      boolean NOT NULL DEFAULT false,
    -- who added it (operation_guard): only that role changes or deletes it
    owner        name NOT NULL DEFAULT CURRENT_USER
);

INSERT INTO folio_perf_data.operation
    (operation, module, relation, counter, counted_from, description, builtin)
VALUES
    ('check_out', 'mod_circulation_storage', 'loan', 'inserts', 'relation',
     'a check-out creates a loan', true),
    ('check_in', 'mod_circulation_storage', 'check_in', 'inserts', 'relation',
     'a check-in is logged in check_in', true),
    ('request_created', 'mod_circulation_storage', 'request', 'inserts', 'relation',
     'a request (hold, page, recall) placed', true),
    ('record_imported', 'mod_source_record_storage', 'records_lb', 'inserts', 'data_import_jobs',
     'records of the data-import jobs completed in the window; without one, records stored in SRS', true),
    ('instance_created', 'mod_inventory_storage', 'instance', 'inserts', 'relation',
     'an inventory instance created', true),
    ('instance_updated', 'mod_inventory_storage', 'instance', 'updates', 'relation',
     'an inventory instance updated (data-import update jobs)', true),
    ('holdings_created', 'mod_inventory_storage', 'holdings_record', 'inserts', 'relation',
     'a holdings record created', true),
    ('item_created', 'mod_inventory_storage', 'item', 'inserts', 'relation',
     'an item created', true),
    ('user_created', 'mod_users', 'users', 'inserts', 'relation',
     'a user created', true),
    ('fee_fine_charged', 'mod_feesfines', 'accounts', 'inserts', 'relation',
     'a fee/fine charged to a patron', true),
    ('order_line_created', 'mod_orders_storage', 'po_line', 'inserts', 'relation',
     'a purchase order line created', true),
    ('invoice_created', 'mod_invoice_storage', 'invoices', 'inserts', 'relation',
     'an invoice created', true);

-- The built-in definitions are part of the extension: they cannot be
-- changed or deleted, and pg_dump keeps only the others
-- (150_privileges.sql).  Define your own under another name.  A
-- definition belongs to the role that added it (owner, set here: a
-- superuser's value is kept, so that a restore keeps the owners), and only
-- that role or a superuser changes or deletes it; the owner never changes.
CREATE FUNCTION folio_perf_data.operation_guard()
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
CREATE TRIGGER operation_guard BEFORE INSERT OR UPDATE OR DELETE ON folio_perf_data.operation
    FOR EACH ROW EXECUTE FUNCTION folio_perf_data.operation_guard();

-- The operations a user can read and a writer can add to.
CREATE VIEW folio_perf_operation_definitions AS
SELECT o.operation, o.module, o.relation, o.counter, o.counted_from, o.description, o.builtin,
       o.owner
FROM folio_perf_data.operation o;

/*
 * di_jobs_query(schema, has_deleted): the scan of one tenant schema's
 * job_execution that di_jobs_read_local (this server, many schemas at
 * once) and di_jobs_read (one schema, here or on a remote target) run.
 *
 * The job_execution rows of one tenant schema that ran between t0 and t1
 * (started before t1, not finished before t0), read on this server
 * (p_target NULL) or over libpq on a remote target, every value as text.
 * No rows if the schema has no ordinary table job_execution with the
 * module's columns (timestamptz started_date and completed_date, uuid id
 * and parent_job_id, an integer or numeric progress_total), or if
 * the role reading it (a remote target's collector) may not read it.  Reads as the
 * extension's owner: owner only (150_privileges.sql).
 *
 * The table belongs to the module's role, who can change it at any time,
 * so on this server it is locked first and checked after (a change that
 * keeps the oid, ALTER COLUMN TYPE or a _RETURN rule that makes it a view,
 * could otherwise be committed between a check and the read): its kind is
 * taken from the catalog cache (pg_relation_filenode: NULL for a view, a
 * foreign or a partitioned table), which is what the read will use, not
 * from a catalog query, which in a repeatable read transaction sees the
 * catalogs as they were when it began.  And the read applies no operator,
 * function, aggregate or cast to any column: each column goes through its
 * type's output function (format('%s'), with DateStyle ISO and TimeZone
 * UTC) in the scan, and everything else (the window, the parts of a split
 * file, deleted jobs) is computed from that text with built-in types only.
 * So whatever a column's type is by then, none of its owner's casts or
 * operators is ever reached.
 */
CREATE FUNCTION folio_perf_data.di_jobs_query(p_schemas text[], p_has_deleted boolean[])
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $fn$
DECLARE
    cols text;
BEGIN
    -- the scan: every column through its type's output function, and only
    -- IS NULL besides; the rest works on that text with built-in types
    SELECT string_agg(format('CASE WHEN j.%1$I IS NULL THEN NULL ELSE pg_catalog.format(''%%s'', j.%1$I) END AS %2$I', c[1], c[2]), ', ')
    INTO cols
    FROM (VALUES (ARRAY['id', 'id']), (ARRAY['hrid', 'hrid']), (ARRAY['parent_job_id', 'parent_job_id']),
                 (ARRAY['subordination_type', 'subordination_type']), (ARRAY['file_name', 'file_name']),
                 (ARRAY['progress_current', 'progress_current']), (ARRAY['progress_total', 'progress_total']),
                 (ARRAY['status', 'status']), (ARRAY['job_profile_name', 'job_profile']),
                 (ARRAY['started_date', 's_txt']), (ARRAY['completed_date', 'c_txt'])) v(c);
    -- one scan per table, the rest once over all of them (a UNION ALL of
    -- whole per-table queries took 0.3 s to plan for 40 tenants)
    RETURN format($q$
        WITH t AS MATERIALIZED (
            %s
        ),
        v AS (
            SELECT t.*, t.s_txt::pg_catalog.timestamptz AS s_at, t.c_txt::pg_catalog.timestamptz AS c_at
            FROM t WHERE t.deleted IS DISTINCT FROM 't'
        ),
        -- a split file: the records of its parts, summed once per parent
        -- over every table's history (not a scan of it per parent)
        p AS (
            SELECT c.nspname, c.parent_job_id,
                   CASE WHEN pg_catalog.count(c.progress_total) OPERATOR(pg_catalog.>) 0
                        THEN pg_catalog.sum(c.progress_total::pg_catalog.numeric)::pg_catalog.text END AS total
            FROM v c
            WHERE c.subordination_type OPERATOR(pg_catalog.=) 'COMPOSITE_CHILD'
              AND c.id OPERATOR(pg_catalog.<>) c.parent_job_id
            GROUP BY c.nspname, c.parent_job_id
        )
        SELECT v.nspname, v.id, v.hrid, v.parent_job_id, v.subordination_type, v.file_name, v.progress_current,
               v.progress_total, v.status, v.job_profile,
               pg_catalog.to_char(v.s_at, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS started,
               pg_catalog.to_char(v.c_at, 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS completed,
               -- (its own total is a placeholder)
               CASE WHEN v.subordination_type OPERATOR(pg_catalog.=) 'COMPOSITE_PARENT' THEN p.total END AS parts_total
        FROM v
        LEFT JOIN p ON p.nspname OPERATOR(pg_catalog.=) v.nspname AND p.parent_job_id OPERATOR(pg_catalog.=) v.id
        WHERE v.s_at IS NOT NULL
          AND v.s_at OPERATOR(pg_catalog.<) $2::pg_catalog.timestamptz
          AND (v.c_at IS NULL OR v.c_at OPERATOR(pg_catalog.>=) $1::pg_catalog.timestamptz)$q$,
        (SELECT string_agg(format('SELECT %L::pg_catalog.text AS nspname, %s, %s AS deleted FROM ONLY %I.job_execution j',
                                  x.s, cols,
                                  CASE WHEN p_has_deleted[x.o] THEN 'pg_catalog.format(''%s'', j.is_deleted)'
                                       ELSE 'NULL::pg_catalog.text' END,
                                  x.s), ' UNION ALL ' ORDER BY x.o)
         FROM unnest(p_schemas) WITH ORDINALITY x(s, o)));
END
$fn$;

/*
 * di_jobs_read_local(schemas, t0, t1): di_jobs_read() of this server for
 * many tenant schemas at once (nspname: the schema of each row), with the
 * same protections: every table locked first (one LOCK statement), then
 * checked (one catalog query; the same oid by name and storage in the
 * catalog cache, as below), then read by one query, the UNION ALL of each
 * table's scan.  40 tenants one by one took ~3 ms each, a lock, a check
 * and a read planned each time, with two subtransactions.  If a table
 * cannot be held (locked for more than lock_timeout, gone, not a table) or
 * a value cannot be read (a date that is none, a policy), each schema is
 * read on its own, which skips that one with a notice as before; the rows
 * of a schema are all or none.
 */
CREATE FUNCTION folio_perf_data.di_jobs_read_local(p_schemas text[], t0 timestamptz, t1 timestamptz)
RETURNS TABLE(nspname text, id text, hrid text, parent_job_id text, subordination_type text,
    file_name text, progress_current text, progress_total text,
    started text, completed text, status text, job_profile text, parts_total text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
-- a table held by an ALTER or VACUUM FULL is skipped, not waited for
SET lock_timeout = '2s'
-- a policy's expression would run as the owner: a table with one is an
-- error (caught below), never read through it
SET row_security = off
-- the text of timestamps compares as the timestamps do
SET DateStyle = 'ISO, YMD'
SET TimeZone = 'UTC'
AS $fn$
DECLARE
    n int := coalesce(cardinality(p_schemas), 0);
    one_by_one boolean := false;
    chk record;
    ok text[] := '{}';
    dels boolean[] := '{}';
    got jsonb;
    i int;
BEGIN
    IF n = 0 THEN
        RETURN;
    END IF;
    -- hold the tables first: nothing can change them from here on
    BEGIN
        EXECUTE 'LOCK TABLE ONLY '
                || (SELECT string_agg(format('%I.job_execution', x.s), ', ' ORDER BY x.o)
                    FROM unnest(p_schemas) WITH ORDINALITY x(s, o))
                || ' IN ACCESS SHARE MODE';
    EXCEPTION
        WHEN lock_not_available THEN
            IF n = 1 THEN
                RAISE NOTICE 'data-import jobs of schema "%" skipped: job_execution is locked', p_schemas[1];
                RETURN;
            END IF;
            one_by_one := true;
        WHEN undefined_table OR invalid_schema_name OR wrong_object_type THEN
            IF n = 1 THEN
                RETURN;
            END IF;
            one_by_one := true;
    END;
    IF NOT one_by_one THEN
        -- checked after the lock: the kind as the catalog cache has it
        -- (pg_relation_filenode: NULL for a view, a foreign or a
        -- partitioned table), which is what the read will use
        FOR chk IN
            SELECT ns.nspname::text AS nsp, c.oid, c.relkind::text AS relkind,
                   (SELECT a.atttypid = 'pg_catalog.timestamptz'::pg_catalog.regtype
                    FROM pg_catalog.pg_attribute a
                    WHERE a.attrelid = c.oid AND a.attname = 'started_date' AND NOT a.attisdropped) AS started_tz,
                   (SELECT a.atttypid = 'pg_catalog.timestamptz'::pg_catalog.regtype
                    FROM pg_catalog.pg_attribute a
                    WHERE a.attrelid = c.oid AND a.attname = 'completed_date' AND NOT a.attisdropped) AS completed_tz,
                   (SELECT count(*) FROM pg_catalog.pg_attribute a
                    WHERE a.attrelid = c.oid AND NOT a.attisdropped
                      AND a.attname = ANY ('{id,hrid,parent_job_id,subordination_type,file_name,progress_current,progress_total,status,job_profile_name}'::name[])) AS ncols,
                   has_schema_privilege(ns.oid, 'USAGE') AND has_table_privilege(c.oid, 'SELECT') AS readable,
                   EXISTS (SELECT FROM pg_catalog.pg_attribute a
                           WHERE a.attrelid = c.oid AND a.attname = 'is_deleted'
                             AND a.atttypid = 'pg_catalog.bool'::pg_catalog.regtype AND NOT a.attisdropped) AS has_deleted,
                   (SELECT count(*) FROM pg_catalog.pg_attribute a
                    WHERE a.attrelid = c.oid AND NOT a.attisdropped
                      AND ((a.attname = ANY ('{id,parent_job_id}'::name[]) AND a.atttypid = 'pg_catalog.uuid'::pg_catalog.regtype)
                           OR (a.attname = 'progress_total'
                               AND a.atttypid = ANY (ARRAY['pg_catalog.int2'::pg_catalog.regtype, 'pg_catalog.int4'::pg_catalog.regtype,
                                                           'pg_catalog.int8'::pg_catalog.regtype,
                                                           'pg_catalog.numeric'::pg_catalog.regtype]::oid[])))) AS ntyped,
                   pg_relation_filenode(c.oid) IS NOT NULL AS has_storage
            FROM pg_catalog.pg_class c
            JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace
            WHERE ns.nspname = ANY (p_schemas::name[]) AND c.relname = 'job_execution'
            ORDER BY array_position(p_schemas, ns.nspname::text)
        LOOP
            IF to_regclass(format('%I.job_execution', chk.nsp)) IS DISTINCT FROM chk.oid OR NOT chk.has_storage
               OR chk.relkind IS DISTINCT FROM 'r' OR chk.ncols <> 9 OR NOT chk.readable
               OR NOT coalesce(chk.started_tz, false) OR NOT coalesce(chk.completed_tz, false) THEN
                CONTINUE;
            END IF;
            IF chk.ntyped <> 3 THEN
                RAISE NOTICE 'data-import jobs of schema "%" skipped: job_execution.id, parent_job_id or progress_total is not of the module''s type', chk.nsp
                    USING HINT = 'folio_perf reads job_execution only with id and parent_job_id of type uuid and progress_total an integer or numeric.';
                CONTINUE;
            END IF;
            ok := ok || chk.nsp;
            dels := dels || chk.has_deleted;
        END LOOP;
        IF cardinality(ok) = 0 THEN
            RETURN;
        END IF;
        -- the rows gathered first: a schema's rows are all or none
        BEGIN
            EXECUTE 'SELECT pg_catalog.jsonb_agg(pg_catalog.to_jsonb(r)) FROM ('
                    || folio_perf_data.di_jobs_query(ok, dels) || ') r'
                INTO got USING t0::text, t1::text;
        EXCEPTION
            -- a value that is not what its column's name promises (a date
            -- that is none, a total that is no number), or a policy on the
            -- table
            WHEN invalid_datetime_format OR datetime_field_overflow OR invalid_text_representation
                 OR numeric_value_out_of_range OR insufficient_privilege THEN
                IF cardinality(ok) = 1 THEN
                    RAISE NOTICE 'data-import jobs of schema "%" skipped: %', ok[1], SQLERRM;
                    RETURN;
                END IF;
                p_schemas := ok;
                n := cardinality(ok);
                one_by_one := true;
        END;
        IF NOT one_by_one THEN
            RETURN QUERY
            SELECT r.nspname, r.id, r.hrid, r.parent_job_id, r.subordination_type, r.file_name,
                   r.progress_current, r.progress_total, r.started, r.completed, r.status, r.job_profile,
                   r.parts_total
            FROM jsonb_to_recordset(coalesce(got, '[]')) AS r(nspname text, id text, hrid text, parent_job_id text,
                subordination_type text, file_name text, progress_current text, progress_total text,
                started text, completed text, status text, job_profile text, parts_total text);
            RETURN;
        END IF;
    END IF;
    -- one of them could not be held or read: each on its own (which says
    -- which one and why)
    FOR i IN 1..n LOOP
        RETURN QUERY SELECT * FROM folio_perf_data.di_jobs_read_local(ARRAY[p_schemas[i]], t0, t1);
    END LOOP;
END
$fn$;

/*
 * di_jobs_read(target, schema, t0, t1): the rows of one tenant schema's
 * job_execution, on this server (di_jobs_read_local) or over libpq on a
 * remote target: the same check and the same scan (di_jobs_query), sent
 * as text.
 */
CREATE FUNCTION folio_perf_data.di_jobs_read(p_target int, p_schema text,
    t0 timestamptz, t1 timestamptz)
RETURNS TABLE(id text, hrid text, parent_job_id text, subordination_type text,
    file_name text, progress_current text, progress_total text,
    started text, completed text, status text, job_profile text, parts_total text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET DateStyle = 'ISO, YMD'
SET TimeZone = 'UTC'
AS $fn$
DECLARE
    chk record;
    q text;
    check_sql text := $q$
        SELECT c.oid, c.relkind::text AS relkind,
               (SELECT a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.timestamptz'::pg_catalog.regtype
                FROM pg_catalog.pg_attribute a
                WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND a.attname OPERATOR(pg_catalog.=) 'started_date'
                  AND NOT a.attisdropped) AS started_tz,
               (SELECT a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.timestamptz'::pg_catalog.regtype
                FROM pg_catalog.pg_attribute a
                WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND a.attname OPERATOR(pg_catalog.=) 'completed_date'
                  AND NOT a.attisdropped) AS completed_tz,
               (SELECT pg_catalog.count(*) FROM pg_catalog.pg_attribute a
                WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND NOT a.attisdropped
                  AND a.attname OPERATOR(pg_catalog.=) ANY ('{id,hrid,parent_job_id,subordination_type,file_name,progress_current,progress_total,status,job_profile_name}'::pg_catalog.name[])) AS ncols,
               pg_catalog.has_schema_privilege(n.oid, 'USAGE')
                 AND pg_catalog.has_table_privilege(c.oid, 'SELECT') AS readable,
               EXISTS (SELECT FROM pg_catalog.pg_attribute a
                       WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND a.attname OPERATOR(pg_catalog.=) 'is_deleted'
                         AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.bool'::pg_catalog.regtype
                         AND NOT a.attisdropped) AS has_deleted,
               -- the module's types (the read does not depend on them)
               (SELECT pg_catalog.count(*) FROM pg_catalog.pg_attribute a
                WHERE a.attrelid OPERATOR(pg_catalog.=) c.oid AND NOT a.attisdropped
                  AND ((a.attname OPERATOR(pg_catalog.=) ANY ('{id,parent_job_id}'::pg_catalog.name[])
                        AND a.atttypid OPERATOR(pg_catalog.=) 'pg_catalog.uuid'::pg_catalog.regtype)
                       OR (a.attname OPERATOR(pg_catalog.=) 'progress_total'
                           AND a.atttypid OPERATOR(pg_catalog.=) ANY (ARRAY['pg_catalog.int2'::pg_catalog.regtype,
                               'pg_catalog.int4'::pg_catalog.regtype, 'pg_catalog.int8'::pg_catalog.regtype,
                               'pg_catalog.numeric'::pg_catalog.regtype]::pg_catalog.oid[])))) AS ntyped,
               -- the kind as the catalog cache has it (what a read uses)
               pg_catalog.pg_relation_filenode(c.oid) IS NOT NULL AS has_storage
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_namespace n ON n.oid OPERATOR(pg_catalog.=) c.relnamespace
        WHERE n.nspname OPERATOR(pg_catalog.=) $1 AND c.relname OPERATOR(pg_catalog.=) 'job_execution'$q$;
BEGIN
    IF p_schema IS NULL THEN
        RETURN;
    END IF;
    IF p_target IS NULL THEN
        RETURN QUERY
        SELECT r.id, r.hrid, r.parent_job_id, r.subordination_type, r.file_name, r.progress_current,
               r.progress_total, r.started, r.completed, r.status, r.job_profile, r.parts_total
        FROM folio_perf_data.di_jobs_read_local(ARRAY[p_schema], t0, t1) r;
        RETURN;
    END IF;
    SELECT * INTO chk FROM folio_perf_data.remote_query(p_target, check_sql, ARRAY[p_schema])
        AS r(oid oid, relkind text, started_tz boolean, completed_tz boolean, ncols bigint,
             readable boolean, has_deleted boolean, ntyped bigint, has_storage boolean);
    IF chk.oid IS NULL OR chk.relkind IS DISTINCT FROM 'r' OR chk.ncols <> 9 OR NOT chk.readable
       OR NOT coalesce(chk.started_tz, false) OR NOT coalesce(chk.completed_tz, false) THEN
        RETURN;
    END IF;
    IF chk.ntyped <> 3 THEN
        RAISE NOTICE 'data-import jobs of schema "%" skipped: job_execution.id, parent_job_id or progress_total is not of the module''s type', p_schema
            USING HINT = 'folio_perf reads job_execution only with id and parent_job_id of type uuid and progress_total an integer or numeric.';
        RETURN;
    END IF;
    q := folio_perf_data.di_jobs_query(ARRAY[p_schema], ARRAY[chk.has_deleted]);
    BEGIN
        -- the target's session writes timestamps as this one does
        PERFORM FROM folio_perf_data.remote_query(p_target,
            $q$SELECT pg_catalog.set_config('DateStyle', 'ISO, YMD', false) AS d,
                      pg_catalog.set_config('TimeZone', 'UTC', false) AS z$q$) AS r(d text, z text);
        RETURN QUERY
        SELECT r.id, r.hrid, r.parent_job_id, r.subordination_type, r.file_name,
               r.progress_current, r.progress_total, r.started, r.completed, r.status, r.job_profile,
               r.parts_total
        FROM folio_perf_data.remote_query(p_target, q, ARRAY[t0::text, t1::text])
            AS r(nspname text, id text, hrid text, parent_job_id text, subordination_type text, file_name text,
                 progress_current text, progress_total text, status text, job_profile text,
                 started text, completed text, parts_total text);
    EXCEPTION
        -- a value that is not what its column's name promises (a date that
        -- is none, a total that is no number), or a policy on the table
        WHEN invalid_datetime_format OR datetime_field_overflow OR invalid_text_representation
             OR numeric_value_out_of_range OR insufficient_privilege THEN
            RAISE NOTICE 'data-import jobs of schema "%" skipped: %', p_schema, SQLERRM;
            RETURN;
    END;
END
$fn$;

/*
 * folio_perf_data_import_jobs(window_id): the data-import jobs of every
 * tenant that ran during the window, read from each tenant's
 * mod_source_record_manager.job_execution (on the window's remote target
 * over libpq) when this is called.  A job is what the data-import log of
 * FOLIO lists: a single file (PARENT_SINGLE), one file of a multi-file
 * upload (CHILD), or a file split into parts (COMPOSITE_PARENT, whose
 * parts, COMPOSITE_CHILD, are left out); the container of a multi-file
 * upload (PARENT_MULTIPLE) and deleted jobs are left out too.  Runs as the
 * extension's owner so that readers see the jobs (not the tenants'
 * other data).
 */
CREATE FUNCTION folio_perf_data_import_jobs(window_id bigint)
RETURNS TABLE(tenant text, job_id uuid, hrid bigint, file_name text,
    job_profile text, status text, records int, started timestamptz,
    completed timestamptz, duration interval, records_per_minute numeric,
    overlap text)
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
    e folio_perf_data.snapshot;
    nsps text[];
    tenants text[];
    got jsonb;
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
    SELECT * INTO e FROM folio_perf_data.snapshot x WHERE x.snap_id = wb.end_snap;
    -- a local window of another database: its tables are not here
    IF e.target_id IS NULL AND e.dbid <> (SELECT d.oid FROM pg_catalog.pg_database d
                                          WHERE d.datname = pg_catalog.current_database()) THEN
        RETURN;
    END IF;
    IF e.target_id IS NOT NULL AND NOT EXISTS (
        SELECT FROM folio_perf_data.target t WHERE t.target_id = e.target_id AND t.dropped_at IS NULL) THEN
        RAISE EXCEPTION 'the remote target of window % has been dropped', window_id
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  DETAIL = 'Data-import jobs are read from the target''s job_execution tables when asked for.',
                  HINT = 'Add the target again with folio_perf_target_add(name, conninfo).';
    END IF;
    -- the tenants' job_execution tables the window's end snapshot saw: on
    -- this server read at once, on a remote target one by one
    SELECT array_agg(x.nspname ORDER BY x.tenant, x.nspname), array_agg(x.tenant ORDER BY x.tenant, x.nspname)
    INTO nsps, tenants
    FROM (SELECT DISTINCT k.nspname::text AS nspname, k.tenant
          FROM folio_perf_data.rel_key k
          WHERE k.dbid = e.dbid AND k.target_id IS NOT DISTINCT FROM e.target_id
            AND k.module = 'mod_source_record_manager' AND k.relname = 'job_execution'
            AND k.relkind = 'r' AND k.first_snap <= wb.end_snap
            AND (k.dropped_snap IS NULL OR k.dropped_snap > wb.end_snap)) x;
    IF nsps IS NULL THEN
        RETURN;
    END IF;
    IF e.target_id IS NULL THEN
        SELECT jsonb_agg(to_jsonb(l)) INTO got
        FROM folio_perf_data.di_jobs_read_local(nsps, wb.begin_at, wb.end_at) l;
    ELSE
        SELECT jsonb_agg(to_jsonb(d) || jsonb_build_object('nspname', x.s) ORDER BY x.o) INTO got
        FROM unnest(nsps) WITH ORDINALITY x(s, o)
        CROSS JOIN LATERAL folio_perf_data.di_jobs_read(e.target_id, x.s, wb.begin_at, wb.end_at) d;
    END IF;
    RETURN QUERY
    WITH r AS (
        SELECT * FROM jsonb_to_recordset(coalesce(got, '[]')) AS r(nspname text, id text, hrid text,
            parent_job_id text, subordination_type text, file_name text, progress_current text,
            progress_total text, started text, completed text, status text, job_profile text,
            parts_total text)
    ), j AS (
        SELECT t.tenant, t.o, r.id::uuid AS id, r.hrid::bigint AS hrid, r.subordination_type AS sub,
               r.file_name AS fname, r.job_profile AS prof, r.status AS st,
               coalesce(r.parts_total, r.progress_total)::bigint AS total,
               r.started::timestamptz AS t_s, r.completed::timestamptz AS t_c
        FROM r JOIN unnest(nsps, tenants) WITH ORDINALITY t(s, tenant, o) ON t.s = r.nspname
    )
    SELECT j.tenant, j.id, j.hrid, j.fname, j.prof, j.st, j.total::int, j.t_s, j.t_c,
           j.t_c - j.t_s,
           CASE WHEN j.t_c > j.t_s AND j.total IS NOT NULL
                THEN round(j.total / (extract(epoch FROM j.t_c - j.t_s) / 60), 1) END,
           CASE WHEN j.t_s >= wb.begin_at AND j.t_c <= wb.end_at THEN 'whole'
                WHEN j.t_s >= wb.begin_at THEN 'started'
                WHEN j.t_c <= wb.end_at THEN 'ended'
                ELSE 'spans' END
    FROM j
    WHERE j.sub IS DISTINCT FROM 'COMPOSITE_CHILD' AND j.sub IS DISTINCT FROM 'PARENT_MULTIPLE'
      -- finished without a completion date: only if it started inside
      AND (j.t_c IS NOT NULL OR j.st NOT IN ('COMMITTED', 'ERROR', 'CANCELLED', 'DISCARDED')
           OR j.t_s >= wb.begin_at)
    ORDER BY j.o, j.t_s, j.hrid;
END
$$;

/*
 * folio_perf_operations(window_id): per tenant and operation of
 * folio_perf_data.operation, the count in the window and the tenant's DB
 * cost per operation.  Operations that did not happen (count 0) and
 * tenants without the operation's table have no row.
 */
-- The data-import jobs of a window as a jsonb array of
-- folio_perf_data_import_jobs rows, read once per transaction and user for
-- a window's bounds (window_cache: a compare asked four times, 40 tenants'
-- job tables each); err: why they could not be read (a remote target down
-- or dropped), the jobs then [].
CREATE FUNCTION folio_perf_data.di_jobs_json(p_window bigint, OUT jobs jsonb, OUT err text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record := folio_perf_data.window_bounds(p_window);
BEGIN
    EXECUTE folio_perf_data.window_cache('di_jobs', wb.begin_snap, wb.end_snap)
        INTO jobs, err USING wb.begin_snap, wb.end_snap;
END
$$;

-- di_jobs_json() of the windows from snapshot p_begin to p_end (the jobs
-- depend on the bounds only: the first such window's)
CREATE FUNCTION folio_perf_data.di_jobs_compute(p_begin bigint, p_end bigint)
RETURNS TABLE(jobs jsonb, err text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w bigint := (SELECT x.window_id FROM folio_perf_data.window x
                 WHERE x.begin_snap = p_begin AND x.end_snap = p_end
                 ORDER BY x.window_id LIMIT 1);
BEGIN
    IF w IS NULL THEN
        RETURN;
    END IF;
    jobs := '[]';
    BEGIN
        SELECT coalesce(jsonb_agg(to_jsonb(j)), '[]') INTO jobs
        FROM @extschema@.folio_perf_data_import_jobs(w) j;
    EXCEPTION WHEN sqlclient_unable_to_establish_sqlconnection OR connection_failure
                   OR object_not_in_prerequisite_state THEN
        err := SQLERRM;
    END;
    RETURN NEXT;
END
$$;

CREATE FUNCTION folio_perf_operations(window_id bigint)
RETURNS TABLE(tenant text, operation text, count bigint, per_minute numeric,
    db_time_ms double precision, db_time_per_op_ms double precision,
    statements_per_op numeric, rows_written_per_op numeric,
    wal_bytes_per_op numeric, source text, per_minute_active numeric,
    tenant_db_time_per_op_ms double precision, shared_db_time_ms double precision,
    shared_with text, db_time_per_op_se_ms double precision)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    jobs jsonb := '[]';
    err text;
BEGIN
    PERFORM folio_perf_data.window_bounds(window_id);
    IF EXISTS (SELECT FROM folio_perf_data.operation o WHERE o.counted_from = 'data_import_jobs') THEN
        SELECT x.jobs, x.err INTO jobs, err FROM folio_perf_data.di_jobs_json(window_id) x;
    END IF;
    RETURN QUERY SELECT * FROM folio_perf_data.operations_of(window_id, jobs, err);
END
$$;

-- folio_perf_operations() given the window's jobs (di_jobs_json()).
CREATE FUNCTION folio_perf_data.operations_of(window_id bigint, jobs jsonb, jobs_err text)
RETURNS TABLE(tenant text, operation text, count bigint, per_minute numeric,
    db_time_ms double precision, db_time_per_op_ms double precision,
    statements_per_op numeric, rows_written_per_op numeric,
    wal_bytes_per_op numeric, source text, per_minute_active numeric,
    tenant_db_time_per_op_ms double precision, shared_db_time_ms double precision,
    shared_with text, db_time_per_op_se_ms double precision)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
    -- rates over the active span (136_findings.sql)
    active_s numeric := nullif((folio_perf_data.active_span(window_id)).active_s, 0);
BEGIN
    wb := folio_perf_data.window_bounds(window_id);
    RETURN QUERY
    WITH rel AS (
        SELECT t.tenant, t.module, t.relname, t.ins, t.upd, t.del
        FROM folio_perf_data.table_sums(wb.begin_snap, wb.end_snap) t
        WHERE t.tenant IS NOT NULL
    ), st AS (
        SELECT k.tenant, sum(x.total_exec_time) AS ms, sum(x.calls) AS calls,
               sum(x.wal_bytes) AS wal
        FROM folio_perf_data.stmt_delta(wb.begin_snap, wb.end_snap) x
        JOIN folio_perf_data.stmt_key k ON k.key_id = x.key_id
        WHERE k.toplevel AND NOT k.housekeeping AND k.tenant IS NOT NULL AND x.calls > 0
        GROUP BY 1
    ), dj AS (
        -- records of the jobs completed in the window, per tenant
        SELECT j->>'tenant' AS tenant, count(*) AS jobs,
               sum(coalesce((j->>'records')::bigint, 0)) AS records
        FROM jsonb_array_elements(jobs) j
        WHERE j->>'overlap' IN ('whole', 'ended')
        GROUP BY 1
    ), dj_open AS (
        SELECT j->>'tenant' AS tenant, count(*) AS jobs
        FROM jsonb_array_elements(jobs) j
        WHERE j->>'overlap' IN ('started', 'spans')
        GROUP BY 1
    ), counted AS (
        -- counted from the relation: the definition's counter
        SELECT rel.tenant, o.operation,
               CASE o.counter WHEN 'inserts' THEN rel.ins WHEN 'updates' THEN rel.upd
                              WHEN 'deletes' THEN rel.del ELSE rel.ins + rel.upd + rel.del END AS n,
               format('%s of %s.%s', replace(o.counter, '_', ' '), o.module, o.relation)
                 || CASE WHEN o.counted_from = 'data_import_jobs'
                         THEN CASE WHEN jobs_err IS NOT NULL
                                   THEN ' (data-import jobs unavailable: ' || jobs_err || ')'
                                   ELSE ' (no data-import job completed in the window'
                                        || CASE WHEN dj_open.jobs IS NOT NULL
                                                THEN format('; %s ran only partly in it', dj_open.jobs) ELSE '' END
                                        || ')' END
                         ELSE '' END AS src
        FROM folio_perf_data.operation o
        JOIN rel ON rel.module = o.module AND rel.relname = o.relation
        LEFT JOIN dj ON dj.tenant = rel.tenant
        LEFT JOIN dj_open ON dj_open.tenant = rel.tenant
        WHERE o.counted_from = 'relation' OR dj.tenant IS NULL
        UNION ALL
        -- counted from the data-import jobs
        SELECT dj.tenant, o.operation, dj.records,
               format('records of %s data-import job%s completed in the window (%s.job_execution)',
                      dj.jobs, CASE WHEN dj.jobs > 1 THEN 's' ELSE '' END, 'mod_source_record_manager')
                 || CASE WHEN dj_open.jobs IS NOT NULL
                         THEN format('; %s more ran only partly in it, not counted', dj_open.jobs) ELSE '' END
        FROM folio_perf_data.operation o
        JOIN dj ON true
        LEFT JOIN dj_open ON dj_open.tenant = dj.tenant
        WHERE o.counted_from = 'data_import_jobs'
    ), oc AS (
        -- the statements of each operation's own flow (137_operation_cost.sql)
        SELECT * FROM folio_perf_data.own_cost(wb.begin_snap, wb.end_snap,
            (SELECT jsonb_agg(jsonb_build_object('tenant', c.tenant, 'operation', c.operation, 'n', c.n))
             FROM counted c WHERE c.n > 0))
    )
    SELECT c.tenant, c.operation, c.n::bigint,
           round((c.n / (wb.seconds / 60))::numeric, 2),
           coalesce(oc.db_time_ms, 0),
           coalesce(oc.db_time_ms, 0) / c.n,
           round(coalesce(oc.calls, 0) / c.n, 2),
           round(coalesce(oc.rows_written, 0) / c.n, 2),
           round(coalesce(oc.wal_bytes, 0) / c.n, 1),
           c.src,
           round(c.n / (active_s / 60), 2),
           coalesce(st.ms, 0) / c.n,
           coalesce(oc.shared_ms, 0),
           oc.shared_with,
           sqrt(coalesce(oc.time_var, 0)) / c.n
    FROM counted c
    LEFT JOIN st ON st.tenant = c.tenant
    LEFT JOIN oc ON oc.tenant = c.tenant AND oc.operation = c.operation
    WHERE c.n > 0
    ORDER BY c.tenant COLLATE "C", c.operation COLLATE "C";
END
$$;

-- hh:mm:ss of an interval (hours may pass 24), as the seeds write durations.
CREATE FUNCTION folio_perf_data.hms(d interval)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN d IS NOT NULL THEN
        lpad((x.s / 3600)::text, 2, '0') || ':' || lpad((x.s / 60 % 60)::text, 2, '0') || ':'
        || lpad((x.s % 60)::text, 2, '0') END
    FROM (SELECT round(extract(epoch FROM d))::bigint AS s) x
$$;

/*
 * The "folio_operations" member of the report document: the window's
 * data-import jobs and operations (format_version 1 keys:
 * data_import_jobs, data_import_groups, operations, note).
 */
CREATE FUNCTION folio_perf_data.operations_doc(p_window bigint)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    jobs jsonb;
    err text;
    ops jsonb;
    note text;
BEGIN
    -- the jobs once, for both; a remote target that is down or dropped:
    -- operations from the relations, and the rest of the report stands
    SELECT x.jobs, x.err INTO jobs, err FROM folio_perf_data.di_jobs_json(p_window) x;
    note := 'Data-import jobs unavailable: ' || err;
    SELECT coalesce(jsonb_agg(to_jsonb(o)), '[]') INTO ops
    FROM folio_perf_data.operations_of(p_window, jobs, err) o;
    RETURN jsonb_build_object('data_import_jobs', jobs, 'operations', ops, 'note', note,
        -- per profile and file (138_check.sql)
        'data_import_groups', (SELECT coalesce(jsonb_agg(to_jsonb(g)), '[]') FROM folio_perf_data.di_job_groups(jobs) g));
END
$$;

/*
 * The report's "FOLIO operations" sections from the document's
 * folio_operations member: the data-import jobs with the seeds' columns,
 * then the operations with their DB cost.
 */
CREATE FUNCTION folio_perf_data.operations_sections(doc jsonb)
RETURNS jsonb[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT ARRAY[
        folio_perf_data.section('FOLIO operations: data-import jobs',
            ARRAY['Tenant', 'File', 'Profile', 'Records', 'Duration (hh:mm:ss)', 'Records/min',
                  'Status', 'In window'],
            (SELECT jsonb_agg(jsonb_build_object('Tenant', j->'tenant', 'File', j->'file_name',
                        'Profile', j->'job_profile', 'Records', j->'records',
                        'Duration (hh:mm:ss)', coalesce(folio_perf_data.hms((j->>'duration')::interval),
                                                        'running'),
                        'Records/min', j->'records_per_minute', 'Status', j->'status',
                        'In window', j->'overlap') ORDER BY j->>'started', j->>'tenant')
             FROM jsonb_array_elements(doc#>'{folio_operations,data_import_jobs}') j),
            coalesce(doc#>>'{folio_operations,note}',
                     CASE WHEN jsonb_array_length(coalesce(doc#>'{folio_operations,data_import_jobs}', '[]')) = 0
                          THEN 'No data-import job ran in the window (job_execution of mod_source_record_manager).'
                          ELSE 'In window: whole, started (still running at the end), ended (started before), spans.' END)),
        folio_perf_data.section('FOLIO operations: data-import jobs by profile and file',
            ARRAY['tenant', 'job_profile', 'file_name', 'jobs', 'records', 'duration_avg_s', 'duration_p95_s',
                  'duration_max_s', 'records_per_minute'],
            doc#>'{folio_operations,data_import_groups}',
            CASE WHEN jsonb_array_length(coalesce(doc#>'{folio_operations,data_import_groups}', '[]')) > 0
                 THEN 'The completed jobs above per tenant, profile and file: durations per job in seconds; records per minute over all their time.' END)
            || jsonb_build_object('id', 'data-import-groups', 'right', '["duration_avg_s", "duration_p95_s", "duration_max_s"]'::jsonb,
                   'labels', '["Tenant", "Profile", "File", "Jobs", "Records", "Duration avg, s", "Duration p95, s", "Duration max, s", "Records/min"]'::jsonb),
        folio_perf_data.section('FOLIO operations: DB cost per operation',
            ARRAY['tenant', 'operation', 'count', 'per_minute', 'per_minute_active', 'db_time_ms', 'db_time_per_op_ms',
                  'tenant_db_time_per_op_ms', 'statements_per_op', 'rows_written_per_op', 'wal_bytes_per_op', 'source'],
            doc#>'{folio_operations,operations}',
            CASE WHEN jsonb_array_length(coalesce(doc#>'{folio_operations,operations}', '[]')) = 0
                 THEN 'No operation of folio_perf_operation_definitions happened in the window.'
                 ELSE 'DB time, statements, rows written and WAL are those of the statements of the operation''s own flow '
                      || '(folio_perf_operation_flows), a statement of several operations'' flows split in proportion to their counts; '
                      || 'tenant DB time per operation: the tenant''s whole DB time divided by the count. '
                      || 'Per minute active: over the active span of the window (Summary).' END)
            || jsonb_build_object('labels', jsonb_build_array('Tenant', 'Operation', 'Count', 'Per minute',
                   'Per minute active', 'DB time, ms', 'DB time per operation, ms', 'Tenant DB time per operation, ms',
                   'Statements per operation', 'Rows written per operation', 'WAL per operation', 'Source'))]
$$;

/*
 * Operations of two windows side by side, as rows of
 * folio_perf_compare_rows() (section 'operation': key tenant:operation,
 * metrics count, per_minute, db_time_per_op_ms, statements_per_op,
 * rows_written_per_op, wal_bytes_per_op, per_minute_active; section
 * 'data_import': key tenant:profile:file, metrics jobs, records,
 * duration_per_job_s, duration_p95_s, duration_max_s, records_per_minute).
 */
CREATE FUNCTION folio_perf_data.operations_compare_rows(base_window bigint, new_window bigint)
RETURNS SETOF folio_perf_data.compare_row
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    bj record := folio_perf_data.di_jobs_json(base_window);
    nj record := folio_perf_data.di_jobs_json(new_window);
BEGIN
    RETURN QUERY
    WITH b AS (SELECT * FROM folio_perf_data.operations_of(base_window, bj.jobs, bj.err)),
         n AS (SELECT * FROM folio_perf_data.operations_of(new_window, nj.jobs, nj.err)),
         j AS (SELECT coalesce(b.tenant, n.tenant) AS tenant, coalesce(b.operation, n.operation) AS op,
                      b.operation IS NOT NULL AS in_b, n.operation IS NOT NULL AS in_n,
                      b.count AS bc, n.count AS nc, b.per_minute AS bp, n.per_minute AS np,
                      b.per_minute_active AS bpa, n.per_minute_active AS npa,
                      b.db_time_per_op_ms AS bt, n.db_time_per_op_ms AS nt,
                      b.statements_per_op AS bs, n.statements_per_op AS ns,
                      b.rows_written_per_op AS bw, n.rows_written_per_op AS nw,
                      b.wal_bytes_per_op AS bl, n.wal_bytes_per_op AS nl
               FROM b FULL JOIN n ON b.tenant = n.tenant AND b.operation = n.operation)
    SELECT 'operation'::text, j.tenant || ':' || j.op, j.tenant, j.op, m.metric, m.b, m.n, m.n - m.b,
           CASE WHEN m.b <> 0 THEN round(100 * (m.n - m.b) / m.b, 1) END,
           CASE WHEN NOT j.in_b THEN 'new' WHEN NOT j.in_n THEN 'gone' ELSE 'both' END,
           NULL::text, NULL::boolean
    FROM j CROSS JOIN LATERAL (VALUES
        ('count', j.bc::numeric, j.nc::numeric), ('per_minute', j.bp, j.np),
        ('per_minute_active', j.bpa, j.npa),
        ('db_time_per_op_ms', round(j.bt::numeric, 3), round(j.nt::numeric, 3)),
        ('statements_per_op', j.bs, j.ns), ('rows_written_per_op', j.bw, j.nw),
        ('wal_bytes_per_op', j.bl, j.nl)) AS m(metric, b, n);

    -- the completed jobs of both windows (none where a remote target is
    -- down or dropped), per tenant, profile and file: compared per job,
    -- not as sums over different numbers of jobs (138_check.sql)
    RETURN QUERY
    WITH b AS (SELECT * FROM folio_perf_data.di_job_groups(bj.jobs)),
         n AS (SELECT * FROM folio_perf_data.di_job_groups(nj.jobs)),
         j AS (SELECT coalesce(b.tenant, n.tenant) AS tenant, coalesce(b.job_profile, n.job_profile, '') AS prof,
                      coalesce(b.file_name, n.file_name, '') AS f, b.tenant IS NOT NULL AS in_b, n.tenant IS NOT NULL AS in_n,
                      b.jobs AS bjobs, n.jobs AS njobs, b.records AS br, n.records AS nr,
                      b.duration_avg_s AS bd, n.duration_avg_s AS nd, b.duration_p95_s AS bp, n.duration_p95_s AS np,
                      b.duration_max_s AS bm, n.duration_max_s AS nm,
                      b.records_per_minute AS brm, n.records_per_minute AS nrm
               FROM b FULL JOIN n ON b.tenant = n.tenant AND coalesce(b.job_profile, '') = coalesce(n.job_profile, '')
                                 AND coalesce(b.file_name, '') = coalesce(n.file_name, ''))
    SELECT 'data_import'::text, j.tenant || ':' || j.prof || ':' || j.f, j.tenant,
           'mod_source_record_manager'::text, m.metric, m.b, m.n, m.n - m.b,
           CASE WHEN m.b <> 0 THEN round(100 * (m.n - m.b) / m.b, 1) END,
           CASE WHEN NOT j.in_b THEN 'new' WHEN NOT j.in_n THEN 'gone' ELSE 'both' END,
           j.prof || ' | ' || j.f, NULL::boolean
    FROM j CROSS JOIN LATERAL (VALUES
        ('jobs', j.bjobs::numeric, j.njobs::numeric),
        ('records', j.br::numeric, j.nr::numeric),
        ('duration_per_job_s', j.bd, j.nd),
        ('duration_p95_s', j.bp, j.np),
        ('duration_max_s', j.bm, j.nm),
        ('records_per_minute', j.brm, j.nrm)) AS m(metric, b, n);
END
$$;

-- A window's name in a comparison: its release tag, else its label.
CREATE FUNCTION folio_perf_data.window_name(p_window bigint)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT coalesce(nullif(w.tags->>'release', ''), w.label, 'window ' || w.window_id)
    FROM folio_perf_data.window w WHERE w.window_id = p_window
$$;

/*
 * folio_perf_compare()'s "FOLIO operations" section (the verdict is
 * folio_perf_check's, 138_check.sql; chk: its rows, which decide the
 * colours of DB time per operation and duration per job) from the comparison
 * rows: data-import duration and DB time per record, check-outs per
 * minute and DB time per check-out, then every operation's count and DB
 * time per operation, with one column per window named after its release
 * tag and "Delta, %".
 */
CREATE FUNCTION folio_perf_data.operations_compare_sections(cmp folio_perf_data.compare_row[],
    base_window bigint, new_window bigint, chk jsonb DEFAULT '[]')
RETURNS jsonb[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    bn text := folio_perf_data.window_name(base_window);
    nn text := folio_perf_data.window_name(new_window);
    rows jsonb;
BEGIN
    IF bn = nn THEN
        bn := bn || ' (window ' || base_window || ')';
        nn := nn || ' (window ' || new_window || ')';
    END IF;
    WITH r AS (
        SELECT x.*,
               CASE WHEN x.metric = 'duration_per_job_s' THEN 'measure' ELSE folio_perf_data.col_kind(x.metric) END AS kind,
               CASE x.section WHEN 'data_import' THEN 1 ELSE 2 END AS o1,
               CASE x.module WHEN 'record_imported' THEN 1 WHEN 'check_out' THEN 2
                             WHEN 'check_in' THEN 3 ELSE 4 END AS o2
        FROM unnest(cmp) x
        WHERE (x.section = 'data_import' AND x.metric IN ('jobs', 'records', 'duration_per_job_s', 'records_per_minute'))
           OR (x.section = 'operation' AND x.metric IN ('count', 'per_minute', 'per_minute_active', 'db_time_per_op_ms'))
    )
    -- each value in its metric's unit (durations hh:mm:ss), the delta in
    -- the same unit with a sign, the change in percent with a sign and "%";
    -- the metric in words with its unit
    SELECT jsonb_agg(jsonb_build_object(
               'tenant', r.tenant,
               'what', CASE r.section WHEN 'data_import' THEN 'data import ' || r.query ELSE r.module END,
               'metric', CASE r.metric WHEN 'jobs' THEN 'Jobs' WHEN 'duration_per_job_s' THEN 'Duration per job, s'
                                       WHEN 'per_minute_active' THEN 'Per minute (active span)'
                                       ELSE folio_perf_data.col_label(r.metric) END,
               bn, folio_perf_data.fmt_value(to_jsonb(r.base), r.kind),
               nn, folio_perf_data.fmt_value(to_jsonb(r.new), r.kind),
               'Delta', CASE WHEN r.delta > 0 THEN '+' ELSE '' END
                        || folio_perf_data.fmt_value(to_jsonb(r.delta), r.kind),
               -- a number where a rise is a regression by folio_perf_check's
               -- rules (html colours it), else already text (the same
               -- text: the column's kind)
               'Delta, %', CASE WHEN EXISTS (
                                    SELECT FROM jsonb_array_elements(chk) c
                                    WHERE c->>'verdict' IN ('regression', 'improvement') AND c->>'tenant' = r.tenant
                                      AND ((r.metric = 'db_time_per_op_ms' AND c->>'check_name' = 'db_time_per_operation'
                                            AND c->>'module' = r.module)
                                           OR (r.metric = 'duration_per_job_s' AND c->>'check_name' = 'data_import_duration_per_job'
                                               AND c->>'subject' = r.tenant || ' ' || r.query)))
                                THEN to_jsonb(r.delta_pct)
                                ELSE to_jsonb(folio_perf_data.fmt_value(to_jsonb(r.delta_pct), 'delta_pct')) END)
           ORDER BY r.tenant COLLATE "C", r.o1, r.o2, r.module COLLATE "C", r.key COLLATE "C",
                    array_position(ARRAY['jobs', 'records', 'duration_per_job_s', 'records_per_minute', 'count',
                                         'per_minute', 'per_minute_active', 'db_time_per_op_ms'], r.metric))
    INTO rows FROM r;
    RETURN ARRAY[
        folio_perf_data.section('FOLIO operations',
        ARRAY['tenant', 'what', 'metric', bn, nn, 'Delta', 'Delta, %'], rows,
        CASE WHEN rows IS NULL THEN 'No data-import job and no operation of folio_perf_operation_definitions in either window.'
             ELSE 'Data-import jobs matched by tenant, profile and file and compared per job; operations by tenant and name. DB time per operation: the DB time of the statements of its own flow divided by the count.' END)
        -- the values (numbers and hh:mm:ss) and the signed deltas right-aligned
        || jsonb_build_object('right', jsonb_build_array(bn, nn, 'Delta', 'Delta, %'), 'worse_up', '["Delta, %"]'::jsonb,
                              -- the windows' names as they are ("run 1", not "Run 1")
                              'labels', jsonb_build_array('Tenant', 'What', 'Metric', bn, nn, 'Delta', 'Delta, %'))];
END
$$;
