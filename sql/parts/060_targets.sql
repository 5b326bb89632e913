/* sql/parts/060_targets.sql - remote targets: folio_perf_target_add, _drop, folio_perf_targets */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

-- The id of a target by name (NULL name: this server, NULL).
CREATE FUNCTION folio_perf_data.target_id(p_name text)
RETURNS int
LANGUAGE plpgsql STABLE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t int;
BEGIN
    IF p_name IS NULL THEN
        RETURN NULL;
    END IF;
    SELECT x.target_id INTO t FROM folio_perf_data.target x
    WHERE x.name = p_name AND x.dropped_at IS NULL;
    IF t IS NULL THEN
        RAISE EXCEPTION 'remote target "%" does not exist', p_name
            USING ERRCODE = 'undefined_object',
                  HINT = 'See folio_perf_targets; folio_perf_target_add(name, conninfo) adds one.';
    END IF;
    RETURN t;
END
$$;

-- A target's vCPU count: NULL (unknown) or 1 to 100000.
CREATE FUNCTION folio_perf_data.check_vcpus(vcpus int)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF vcpus IS NOT NULL AND (vcpus < 1 OR vcpus > 100000) THEN
        RAISE EXCEPTION 'invalid vCPU count %', vcpus
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Give the number of vCPUs of the target''s instance class (db.r6g.xlarge: 4), or NULL when it is not known.';
    END IF;
END
$$;

/*
 * Add a remote target: a server (primary or hot standby, PostgreSQL 13 or
 * later) with pg_stat_statements, reached with conninfo (a libpq
 * connection string or URI), with vcpus CPUs (its instance class's vCPUs:
 * the basis of DB CPU (sampled); NULL: unknown).  Connects once to check
 * it.  Returns the target id.  Not SECURITY DEFINER: remote_check() and
 * target_store() must see the caller, since a target added by a
 * non-superuser is restricted (password in the string, no files of the
 * server; see the reference).
 */
CREATE FUNCTION folio_perf_target_add(name text, conninfo text, vcpus int DEFAULT NULL)
RETURNS int
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    c record;
    t int;
BEGIN
    IF name IS NULL OR name !~ '^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$' THEN
        RAISE EXCEPTION 'invalid target name "%"', coalesce(name, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use up to 63 letters, digits, "_", "." or "-", starting with a letter or digit.';
    END IF;
    IF conninfo IS NULL THEN
        RAISE EXCEPTION 'conninfo must not be null'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass a connection string such as ''host=db.example.org dbname=folio user=folio_perf_collector password=...''.';
    END IF;
    PERFORM folio_perf_data.check_vcpus(vcpus);
    PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_target'), 0);
    IF EXISTS (SELECT 1 FROM folio_perf_data.target x
               WHERE x.name = folio_perf_target_add.name AND x.dropped_at IS NULL) THEN
        RAISE EXCEPTION 'remote target "%" already exists', name
            USING ERRCODE = 'duplicate_object',
                  HINT = 'Drop it first with folio_perf_target_drop(name).';
    END IF;
    c := folio_perf_data.remote_check(conninfo, name);
    IF c.server_version_num < 130000 THEN
        RAISE EXCEPTION 'target "%" runs PostgreSQL %, folio_perf needs 13 or later', name, c.server_version_num
            USING ERRCODE = 'feature_not_supported';
    END IF;
    IF c.pgss_schema IS NULL THEN
        RAISE EXCEPTION 'extension "pg_stat_statements" is not installed in database "%" of target "%"',
                        c.datname, name
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'On the target, add pg_stat_statements to shared_preload_libraries (on RDS: in the parameter group) and run CREATE EXTENSION pg_stat_statements in that database.';
    END IF;
    IF NOT c.read_all_stats THEN
        RAISE EXCEPTION 'role "%" on target "%" cannot read all statistics', c.rolname, name
            USING ERRCODE = 'insufficient_privilege',
                  DETAIL = 'Without pg_read_all_stats, pg_stat_statements hides other roles'' statements.',
                  HINT = format('On the target: GRANT pg_read_all_stats TO %I;', c.rolname);
    END IF;
    t := folio_perf_data.target_store(name, conninfo);
    IF vcpus IS NOT NULL THEN
        PERFORM @extschema@.folio_perf_target_set(name, vcpus);
    END IF;
    RETURN t;
END
$$;

/*
 * Set a target's vCPU count (NULL: unknown), the basis of its DB CPU
 * (sampled) from the sampler's next flush on.  Returns its id.
 */
CREATE FUNCTION folio_perf_target_set(name text, vcpus int)
RETURNS int
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t int;
BEGIN
    PERFORM folio_perf_data.check_vcpus(vcpus);
    UPDATE folio_perf_data.target x SET vcpus = folio_perf_target_set.vcpus
    WHERE x.name = folio_perf_target_set.name AND x.dropped_at IS NULL
    RETURNING x.target_id INTO t;
    IF t IS NULL THEN
        RAISE EXCEPTION 'remote target "%" does not exist', coalesce(name, 'NULL')
            USING ERRCODE = 'undefined_object',
                  HINT = 'See folio_perf_targets for the targets that exist.';
    END IF;
    RETURN t;
END
$$;

/*
 * Drop a remote target: its connection string and password are forgotten; its snapshots
 * and windows stay and report as before.  Returns its id.
 */
CREATE FUNCTION folio_perf_target_drop(name text)
RETURNS int
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t int;
BEGIN
    IF name IS NULL THEN
        RAISE EXCEPTION 'target name must not be null'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'See folio_perf_targets for the targets that exist.';
    END IF;
    PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_target'), 0);
    UPDATE folio_perf_data.target x SET conninfo = NULL, enabled = false,
           dropped_at = pg_catalog.clock_timestamp()
    WHERE x.name = folio_perf_target_drop.name AND x.dropped_at IS NULL
    RETURNING x.target_id INTO t;
    IF t IS NULL THEN
        RAISE EXCEPTION 'remote target "%" does not exist', name
            USING ERRCODE = 'undefined_object',
                  HINT = 'See folio_perf_targets for the targets that exist.';
    END IF;
    DELETE FROM folio_perf_data.target_secret s WHERE s.target_id = t;
    RETURN t;
END
$$;

-- Targets, without passwords, with what the sampler last said about them.
CREATE VIEW folio_perf_targets AS
SELECT t.target_id, t.name, folio_perf_data.conninfo_redact(t.conninfo) AS conninfo,
       t.restricted, t.enabled, t.created_at, t.dropped_at,
       l.snapshots, l.last_snapshot_at, l.server_version_num, l.datname,
       CASE WHEN t.dropped_at IS NOT NULL OR NOT t.enabled THEN 'off'
            ELSE coalesce(st.state, 'not sampled yet') END AS sampler,
       st.last_sample_at, st.ticks AS sampler_ticks, st.ticks_missed AS sampler_ticks_missed,
       st.failures AS sampler_failures, st.last_error AS sampler_last_error,
       st.last_error_at AS sampler_last_error_at, st.next_attempt_at AS sampler_next_attempt_at,
       st.updated_at AS sampler_updated_at, t.vcpus
FROM folio_perf_data.target t
LEFT JOIN folio_perf_data.target_status st ON st.target_id = t.target_id
LEFT JOIN LATERAL (
    SELECT count(*) AS snapshots, max(s.taken_at) AS last_snapshot_at,
           (array_agg(s.server_version_num ORDER BY s.snap_id DESC))[1] AS server_version_num,
           (array_agg(s.datname ORDER BY s.snap_id DESC))[1] AS datname
    FROM folio_perf_data.snapshot s WHERE s.target_id = t.target_id
) l ON true;
