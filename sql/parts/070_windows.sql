/* sql/parts/070_windows.sql - snapshots and windows: folio_perf_snapshot, _window, _begin, _end, _purge and their views */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

CREATE FUNCTION folio_perf_snapshot(label text DEFAULT NULL)
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT folio_perf_data.capture(label, 'manual') $$;

-- a snapshot of a remote target (NULL: this server)
CREATE FUNCTION folio_perf_snapshot(label text, target text)
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT folio_perf_data.capture(label, 'manual', folio_perf_data.target_id(target)) $$;

-- for the sampler's timed snapshots (folio_perf.snapshot_interval)
CREATE FUNCTION folio_perf_snapshot_timed()
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT folio_perf_data.capture(NULL, 'timed') $$;

-- Raise the standard errors for a snapshot id.
CREATE FUNCTION folio_perf_data.check_snapshot(p_snap bigint, p_what text)
RETURNS folio_perf_data.snapshot
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r folio_perf_data.snapshot;
BEGIN
    IF p_snap IS NULL THEN
        RAISE EXCEPTION '% must not be null', p_what
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass a snapshot id returned by folio_perf_snapshot(); see folio_perf_snapshots.';
    END IF;
    SELECT * INTO r FROM folio_perf_data.snapshot s WHERE s.snap_id = p_snap;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'snapshot % does not exist', p_snap
            USING ERRCODE = 'undefined_object',
                  HINT = 'See folio_perf_snapshots for the snapshots that exist.';
    END IF;
    RETURN r;
END
$$;

CREATE FUNCTION folio_perf_window(from_snap bigint, to_snap bigint, label text DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    a folio_perf_data.snapshot;
    b folio_perf_data.snapshot;
    w bigint;
BEGIN
    -- KEY SHARE first: a concurrent purge of either snapshot finishes, and
    -- then it is reported as missing rather than as a foreign-key error
    PERFORM 1 FROM folio_perf_data.snapshot s
    WHERE s.snap_id IN (from_snap, to_snap) FOR KEY SHARE;
    a := folio_perf_data.check_snapshot(from_snap, 'from_snap');
    b := folio_perf_data.check_snapshot(to_snap, 'to_snap');
    IF from_snap >= to_snap THEN
        RAISE EXCEPTION 'window must begin before it ends (snapshots % and %)', from_snap, to_snap
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass the earlier snapshot first.';
    END IF;
    IF a.dbid <> b.dbid OR a.target_id IS DISTINCT FROM b.target_id THEN
        RAISE EXCEPTION 'snapshots % and % are of different databases or targets', from_snap, to_snap
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'A window spans two snapshots of the same database.';
    END IF;
    IF label IS NOT NULL AND octet_length(label) > 1000 THEN
        RAISE EXCEPTION 'window label is too long (% bytes)', octet_length(label)
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'Labels are limited to 1000 bytes; put details into window tags.';
    END IF;
    PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_window'), 0);
    SELECT x.window_id INTO w FROM folio_perf_data.window x
    WHERE x.begin_snap = from_snap AND x.end_snap = to_snap;
    IF w IS NULL THEN
        INSERT INTO folio_perf_data.window (label, begin_snap, end_snap)
        VALUES (coalesce(label, a.label || ' .. ' || b.label), from_snap, to_snap)
        RETURNING window_id INTO w;
    END IF;
    RETURN w;
END
$$;

-- A window of this server, or of a remote target (target: its name).
CREATE FUNCTION folio_perf_begin(label text, tags jsonb, target text)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    s bigint;
    w bigint;
BEGIN
    IF tags IS NULL OR pg_catalog.jsonb_typeof(tags) <> 'object' THEN
        RAISE EXCEPTION 'window tags must be a JSON object'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass tags like ''{"release":"Quesnelia","scenario":"DI MARC Bib Create"}''.';
    END IF;
    IF octet_length(tags::text) > 100000 THEN
        RAISE EXCEPTION 'window tags are too long (% bytes)', octet_length(tags::text)
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Tags are limited to 100 kB.';
    END IF;
    IF label IS NOT NULL AND octet_length(label) > 1000 THEN
        RAISE EXCEPTION 'window label is too long (% bytes)', octet_length(label)
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'Labels are limited to 1000 bytes; put details into window tags.';
    END IF;
    s := folio_perf_data.capture(label, 'begin', folio_perf_data.target_id(target));
    INSERT INTO folio_perf_data.window (label, tags, begin_snap)
    VALUES (label, tags, s) RETURNING window_id INTO w;
    RETURN w;
END
$$;

CREATE FUNCTION folio_perf_begin(label text, tags jsonb DEFAULT '{}')
RETURNS bigint
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT @extschema@.folio_perf_begin(label, tags, NULL::text) $$;

CREATE FUNCTION folio_perf_end(window_id bigint DEFAULT NULL)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w folio_perf_data.window;
    s bigint;
    tgt int;
    mydb oid := (SELECT d.oid FROM pg_catalog.pg_database d
                 WHERE d.datname = pg_catalog.current_database());
BEGIN
    IF window_id IS NULL THEN
        SELECT x.* INTO w FROM folio_perf_data.window x
        JOIN folio_perf_data.snapshot b ON b.snap_id = x.begin_snap
        WHERE x.end_snap IS NULL AND (b.target_id IS NOT NULL OR b.dbid = mydb)
        ORDER BY x.window_id DESC LIMIT 1
        FOR UPDATE OF x;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'there is no open window in this database'
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Start one with folio_perf_begin(label, tags).';
        END IF;
    ELSE
        SELECT x.* INTO w FROM folio_perf_data.window x
        WHERE x.window_id = folio_perf_end.window_id FOR UPDATE;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'window % does not exist', window_id
                USING ERRCODE = 'undefined_object',
                      HINT = 'See folio_perf_windows for the windows that exist.';
        END IF;
        IF w.end_snap IS NOT NULL THEN
            RAISE EXCEPTION 'window % has already ended', window_id
                USING ERRCODE = 'object_not_in_prerequisite_state',
                      HINT = 'Start a new window with folio_perf_begin().';
        END IF;
    END IF;
    SELECT b.target_id INTO tgt FROM folio_perf_data.snapshot b WHERE b.snap_id = w.begin_snap;
    IF tgt IS NULL AND (SELECT b.dbid FROM folio_perf_data.snapshot b WHERE b.snap_id = w.begin_snap) <> mydb THEN
        RAISE EXCEPTION 'window % began in another database', w.window_id
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'End a window in the database it was begun in.';
    END IF;
    -- a window of a remote target ends with a snapshot of the same target
    s := folio_perf_data.capture(w.label, 'end', tgt);
    UPDATE folio_perf_data.window x SET end_snap = s WHERE x.window_id = w.window_id;
    -- the last step of a window folio_perf_mark() split (139_series.sql)
    PERFORM folio_perf_data.steps_close(w.window_id, s);
    RETURN w.window_id;
END
$$;

-- The age argument of the purge functions: not NULL, not negative, and
-- not reaching before the earliest timestamp.
CREATE FUNCTION folio_perf_data.check_older_than(older_than interval)
RETURNS void
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF older_than IS NULL THEN
        RAISE EXCEPTION 'older_than must not be null'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass an interval such as ''7 days''.';
    END IF;
    IF older_than < interval '0' THEN
        RAISE EXCEPTION 'older_than must not be negative'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass an interval such as ''7 days''.';
    END IF;
    BEGIN
        PERFORM pg_catalog.now() - older_than;
    EXCEPTION WHEN datetime_field_overflow THEN
        RAISE EXCEPTION 'older_than % reaches before the earliest timestamp', older_than
            USING ERRCODE = 'datetime_field_overflow',
                  HINT = 'Pass an interval such as ''7 days''; to remove everything, pass ''0''.';
    END;
END
$$;

/*
 * Delete snapshots older than older_than that no window begins or ends at.
 * A deleted snapshot's changed rows move to the next snapshot of the same
 * database unless that one has its own, so every value "at" a kept
 * snapshot stays what it was.  The newest snapshot of each database is
 * always kept.  Returns the number of snapshots deleted.
 */
CREATE FUNCTION folio_perf_purge(older_than interval)
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    n bigint := 0;
BEGIN
    PERFORM folio_perf_data.check_older_than(older_than);
    -- one purge at a time, and no snapshot being taken meanwhile
    PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_purge'), 0);
    FOR r IN
        SELECT s.snap_id,
               (SELECT min(s2.snap_id) FROM folio_perf_data.snapshot s2
                WHERE s2.dbid = s.dbid AND s2.target_id IS NOT DISTINCT FROM s.target_id
                  AND s2.snap_id > s.snap_id) AS next_snap,
               s.dbid, s.target_id
        FROM folio_perf_data.snapshot s
        WHERE s.taken_at < pg_catalog.now() - older_than
          AND NOT EXISTS (SELECT 1 FROM folio_perf_data.window w
                          WHERE w.begin_snap = s.snap_id OR w.end_snap = s.snap_id)
        ORDER BY s.snap_id
        FOR UPDATE OF s
    LOOP
        CONTINUE WHEN r.next_snap IS NULL;
        IF r.target_id IS NULL THEN
            LOCK TABLE folio_perf_data.capture_lock IN EXCLUSIVE MODE;
        ELSE
            PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_snapshot_target'), r.target_id);
        END IF;
        -- the stored facts of pairs this move changes (window_facts)
        DELETE FROM folio_perf_data.fact_pair f
        WHERE f.begin_snap < r.snap_id AND f.end_snap > r.snap_id;
        UPDATE folio_perf_data.stmt x SET snap_id = r.next_snap
        WHERE x.snap_id = r.snap_id
          AND NOT EXISTS (SELECT 1 FROM folio_perf_data.stmt y
                          WHERE y.key_id = x.key_id AND y.snap_id = r.next_snap);
        -- The removed snapshot's relation elements fold into the next
        -- one's: an element only it has moves; where both have one, the
        -- increments add up (the next one's alone where it counts from zero:
        -- new or reset), the flags combine, and tuples and size are the
        -- next one's.  So no window's relation facts change, and a table
        -- created and dropped between two snapshots left keeps its
        -- activity.  The next snapshot's chunks are written again.
        IF EXISTS (SELECT 1 FROM folio_perf_data.rel_chunk c WHERE c.snap_id = r.snap_id) THEN
            -- written beside the old chunks (numbers from 1,000,000), which
            -- then go
            INSERT INTO folio_perf_data.rel_chunk
            WITH m AS (
                SELECT c.snap_id, e.*,
                       bool_or(c.snap_id = r.next_snap AND e.fl & 9 <> 0) OVER (PARTITION BY e.k) AS restart
                FROM folio_perf_data.rel_chunk c,
                     unnest(c.keys, c.flags, c.seq_scan, c.seq_tup_read, c.idx_scan, c.idx_tup_fetch, c.n_tup_ins, c.n_tup_upd, c.n_tup_del, c.n_tup_hot_upd, c.vacuum_count, c.autovacuum_count, c.analyze_count, c.autoanalyze_count, c.blks_read, c.blks_hit, c.toast_blks_read, c.toast_blks_hit,
                            c.n_live_tup, c.n_dead_tup, c.size_bytes, c.size_delta)
                       AS e(k, fl, seq_scan, seq_tup_read, idx_scan, idx_tup_fetch, n_tup_ins, n_tup_upd, n_tup_del, n_tup_hot_upd, vacuum_count, autovacuum_count, analyze_count, autoanalyze_count, blks_read, blks_hit, toast_blks_read, toast_blks_hit, live, dead, sz, dsz)
                WHERE c.snap_id IN (r.snap_id, r.next_snap)
            ), fold AS (
            SELECT m.k, bit_or(m.fl)::smallint AS fl,
                   CASE WHEN m.restart THEN sum(m.seq_scan) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.seq_scan) END::bigint AS seq_scan,
                   CASE WHEN m.restart THEN sum(m.seq_tup_read) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.seq_tup_read) END::bigint AS seq_tup_read,
                   CASE WHEN m.restart THEN sum(m.idx_scan) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.idx_scan) END::bigint AS idx_scan,
                   CASE WHEN m.restart THEN sum(m.idx_tup_fetch) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.idx_tup_fetch) END::bigint AS idx_tup_fetch,
                   CASE WHEN m.restart THEN sum(m.n_tup_ins) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.n_tup_ins) END::bigint AS n_tup_ins,
                   CASE WHEN m.restart THEN sum(m.n_tup_upd) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.n_tup_upd) END::bigint AS n_tup_upd,
                   CASE WHEN m.restart THEN sum(m.n_tup_del) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.n_tup_del) END::bigint AS n_tup_del,
                   CASE WHEN m.restart THEN sum(m.n_tup_hot_upd) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.n_tup_hot_upd) END::bigint AS n_tup_hot_upd,
                   CASE WHEN m.restart THEN sum(m.vacuum_count) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.vacuum_count) END::bigint AS vacuum_count,
                   CASE WHEN m.restart THEN sum(m.autovacuum_count) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.autovacuum_count) END::bigint AS autovacuum_count,
                   CASE WHEN m.restart THEN sum(m.analyze_count) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.analyze_count) END::bigint AS analyze_count,
                   CASE WHEN m.restart THEN sum(m.autoanalyze_count) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.autoanalyze_count) END::bigint AS autoanalyze_count,
                   CASE WHEN m.restart THEN sum(m.blks_read) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.blks_read) END::bigint AS blks_read,
                   CASE WHEN m.restart THEN sum(m.blks_hit) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.blks_hit) END::bigint AS blks_hit,
                   CASE WHEN m.restart THEN sum(m.toast_blks_read) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.toast_blks_read) END::bigint AS toast_blks_read,
                   CASE WHEN m.restart THEN sum(m.toast_blks_hit) FILTER (WHERE m.snap_id = r.next_snap) ELSE sum(m.toast_blks_hit) END::bigint AS toast_blks_hit,
                   (array_agg(m.live ORDER BY m.snap_id DESC))[1] AS live,
                   (array_agg(m.dead ORDER BY m.snap_id DESC))[1] AS dead,
                   (array_agg(m.sz ORDER BY m.snap_id DESC))[1] AS sz,
                   sum(m.dsz)::bigint AS dsz
            FROM m GROUP BY m.k, m.restart
            )
            SELECT r.next_snap, 1000000 + f.chunk, array_agg(f.k), array_agg(f.fl),
                   array_agg(f.seq_scan), array_agg(f.seq_tup_read), array_agg(f.idx_scan), array_agg(f.idx_tup_fetch), array_agg(f.n_tup_ins), array_agg(f.n_tup_upd), array_agg(f.n_tup_del), array_agg(f.n_tup_hot_upd), array_agg(f.vacuum_count), array_agg(f.autovacuum_count), array_agg(f.analyze_count), array_agg(f.autoanalyze_count), array_agg(f.blks_read), array_agg(f.blks_hit), array_agg(f.toast_blks_read), array_agg(f.toast_blks_hit),
                   array_agg(f.live), array_agg(f.dead),
                   array_agg(f.sz), array_agg(f.dsz)
            FROM (SELECT x.*, ((row_number() OVER (ORDER BY x.k) - 1) / 1000)::int AS chunk
                  FROM fold x ORDER BY x.k) f
            GROUP BY f.chunk;
            DELETE FROM folio_perf_data.rel_chunk c
            WHERE c.snap_id IN (r.snap_id, r.next_snap) AND c.chunk < 1000000;
            UPDATE folio_perf_data.rel_chunk c SET chunk = c.chunk - 1000000
            WHERE c.snap_id = r.next_snap;
        END IF;
        UPDATE folio_perf_data.schema_stat x SET snap_id = r.next_snap
        WHERE x.snap_id = r.snap_id
          AND NOT EXISTS (SELECT 1 FROM folio_perf_data.schema_stat y
                          WHERE y.dbid = x.dbid AND y.nspname = x.nspname
                            AND y.snap_id = r.next_snap);
        UPDATE folio_perf_data.stmt_key k SET first_snap = r.next_snap WHERE k.first_snap = r.snap_id;
        UPDATE folio_perf_data.rel_key k SET first_snap = r.next_snap WHERE k.first_snap = r.snap_id;
        UPDATE folio_perf_data.rel_key k SET dropped_snap = r.next_snap WHERE k.dropped_snap = r.snap_id;
        UPDATE folio_perf_data.stmt_last l SET last_snap = r.next_snap WHERE l.last_snap = r.snap_id;
        UPDATE folio_perf_data.rel_last l SET last_snap = r.next_snap WHERE l.last_snap = r.snap_id;
        -- what did not move (the next snapshot has a newer row) goes with
        -- the snapshot (ON DELETE CASCADE; rel_on_snapshot_delete for rel)
        DELETE FROM folio_perf_data.snapshot s WHERE s.snap_id = r.snap_id;
        n := n + 1;
    END LOOP;
    -- statements and relations no snapshot refers to any more
    -- (relations no longer there and in no element: one pass over the
    -- elements' keys, hashed or sorted, not a search per relation)
    DELETE FROM folio_perf_data.rel_key k
    WHERE k.rel_key_id IN (
        SELECT k2.rel_key_id FROM folio_perf_data.rel_key k2
        WHERE NOT EXISTS (SELECT 1 FROM folio_perf_data.rel_last l WHERE l.rel_key_id = k2.rel_key_id)
        EXCEPT
        SELECT pg_catalog.unnest(c.keys) FROM folio_perf_data.rel_chunk c);
    DELETE FROM folio_perf_data.stmt_key k
    WHERE NOT EXISTS (SELECT 1 FROM folio_perf_data.stmt x WHERE x.key_id = k.key_id)
      AND NOT EXISTS (SELECT 1 FROM folio_perf_data.stmt_last l WHERE l.key_id = k.key_id);
    DELETE FROM folio_perf_data.query_text t
    WHERE NOT EXISTS (SELECT 1 FROM folio_perf_data.stmt_key k WHERE k.text_id = t.text_id);
    RETURN n;
END
$$;

CREATE VIEW folio_perf_snapshots AS
SELECT s.snap_id, s.taken_at, s.label, s.kind, s.datname, s.target_id,
       s.server_start, s.preloaded, s.n_statements, s.n_statements_stored,
       s.n_relations, s.n_relations_stored, s.capture_ms,
       s.pgss_dealloc, s.pgss_stats_reset, s.db_stats_reset, s.max_connections,
       pg_catalog.jsonb_array_length(s.skipped) AS n_skipped, s.skipped
FROM folio_perf_data.snapshot s;

CREATE VIEW folio_perf_windows AS
SELECT w.window_id, w.label, w.tags, w.begin_snap, w.end_snap,
       b.taken_at AS begin_at, e.taken_at AS end_at,
       e.taken_at - b.taken_at AS duration, b.datname, b.target_id
FROM folio_perf_data.window w
JOIN folio_perf_data.snapshot b ON b.snap_id = w.begin_snap
LEFT JOIN folio_perf_data.snapshot e ON e.snap_id = w.end_snap;
