-- bench/sql/check_capture.sql - invariants of the incremental capture,
-- checked against the catalog after a snapshot (bench/check_capture.sh
-- runs it after every step of a DDL/DML sequence).  Raises on a violation.
--   1. every rel_last size equals pg_table_size / pg_relation_size now
--   2. the newest schema_stat row of every schema equals the roll-up of
--      rel_last (relations, bytes, live and dead tuples)
--   3. the snapshot's n_relations and rel_bytes equal rel_last's count, sum
--   4. rel_last's live/dead tuples equal the newest rel row's
--   5. the snapshot's n_statements equals stmt_last's count
-- With the setting fp.target set to a target id, the state of a loopback
-- target (this database collected over libpq) is checked instead.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
\set ON_ERROR_STOP on
DO $$
DECLARE
    mydb oid := (SELECT oid FROM pg_database WHERE datname = current_database());
    tgt int := coalesce(nullif(current_setting('fp.target', true), ''), '0')::int;
    s folio_perf_data.snapshot;
    bad text;
BEGIN
    SELECT * INTO s FROM folio_perf_data.snapshot
    WHERE dbid = mydb AND coalesce(target_id, 0) = tgt ORDER BY snap_id DESC LIMIT 1;

    SELECT string_agg(format('%s.%s: stored %s, now %s', k.nspname, k.relname, l.size_bytes, z.now), '; ')
    INTO bad
    FROM folio_perf_data.rel_last l
    JOIN folio_perf_data.rel_key k USING (rel_key_id)
    CROSS JOIN LATERAL (SELECT CASE WHEN k.relkind = 'i' THEN pg_relation_size(l.relid)
                                    ELSE pg_table_size(l.relid) END AS now) z
    WHERE l.dbid = mydb AND coalesce(l.target_id, 0) = tgt AND l.size_bytes IS DISTINCT FROM z.now;
    IF bad IS NOT NULL THEN RAISE EXCEPTION 'sizes differ: %', bad; END IF;

    WITH agg AS (
        SELECT k.nspname,
               count(*) FILTER (WHERE k.relkind <> 'i') AS n_tables,
               count(*) FILTER (WHERE k.relkind = 'i') AS n_indexes,
               coalesce(sum(l.size_bytes) FILTER (WHERE k.relkind <> 'i'), 0) AS table_bytes,
               coalesce(sum(l.size_bytes) FILTER (WHERE k.relkind = 'i'), 0) AS index_bytes,
               coalesce(sum(l.live_tup), 0) AS live_tup, coalesce(sum(l.dead_tup), 0) AS dead_tup
        FROM folio_perf_data.rel_last l JOIN folio_perf_data.rel_key k USING (rel_key_id)
        WHERE l.dbid = mydb AND coalesce(l.target_id, 0) = tgt GROUP BY k.nspname
    ), latest AS (
        SELECT DISTINCT ON (x.nspname) x.*
        FROM folio_perf_data.schema_stat x WHERE x.dbid = mydb AND coalesce(x.target_id, 0) = tgt AND x.snap_id <= s.snap_id
        ORDER BY x.nspname, x.snap_id DESC
    )
    SELECT string_agg(format('%s: stored (%s,%s,%s,%s,%s,%s) roll-up (%s,%s,%s,%s,%s,%s)',
               coalesce(a.nspname, t.nspname), t.n_tables, t.n_indexes, t.table_bytes, t.index_bytes,
               t.live_tup, t.dead_tup, a.n_tables, a.n_indexes, a.table_bytes, a.index_bytes,
               a.live_tup, a.dead_tup), '; ')
    INTO bad
    FROM agg a FULL JOIN latest t ON t.nspname = a.nspname
    WHERE (coalesce(a.n_tables, 0), coalesce(a.n_indexes, 0), coalesce(a.table_bytes, 0),
           coalesce(a.index_bytes, 0), coalesce(a.live_tup, 0), coalesce(a.dead_tup, 0))
          IS DISTINCT FROM
          (coalesce(t.n_tables, 0), coalesce(t.n_indexes, 0), coalesce(t.table_bytes, 0),
           coalesce(t.index_bytes, 0), coalesce(t.live_tup, 0), coalesce(t.dead_tup, 0));
    IF bad IS NOT NULL THEN RAISE EXCEPTION 'schema roll-up differs: %', bad; END IF;

    IF (s.n_relations, s.rel_bytes) IS DISTINCT FROM
       (SELECT (count(*)::int, coalesce(sum(size_bytes), 0)::bigint)
        FROM folio_perf_data.rel_last WHERE dbid = mydb AND coalesce(target_id, 0) = tgt) THEN
        RAISE EXCEPTION 'snapshot %: n_relations %, rel_bytes % differ from rel_last (%)', s.snap_id,
            s.n_relations, s.rel_bytes,
            (SELECT count(*) || ', ' || sum(size_bytes) FROM folio_perf_data.rel_last WHERE dbid = mydb AND coalesce(target_id, 0) = tgt);
    END IF;

    SELECT string_agg(k.nspname || '.' || k.relname, ', ') INTO bad
    FROM folio_perf_data.rel_last l JOIN folio_perf_data.rel_key k USING (rel_key_id)
    JOIN folio_perf_data.rel_at(s.snap_id, ARRAY(
             SELECT x.rel_key_id FROM folio_perf_data.rel_last x
             WHERE x.dbid = mydb AND coalesce(x.target_id, 0) = tgt)) r ON r.rel_key_id = l.rel_key_id
    WHERE l.dbid = mydb AND coalesce(l.target_id, 0) = tgt AND (l.live_tup, l.dead_tup) IS DISTINCT FROM (r.n_live_tup, r.n_dead_tup);
    IF bad IS NOT NULL THEN RAISE EXCEPTION 'live/dead tuples differ: %', bad; END IF;

    IF s.n_statements IS DISTINCT FROM (SELECT count(*)::int FROM folio_perf_data.stmt_last WHERE dbid = mydb AND coalesce(target_id, 0) = tgt) THEN
        RAISE EXCEPTION 'snapshot %: n_statements % differs from stmt_last (%)', s.snap_id, s.n_statements,
            (SELECT count(*) FROM folio_perf_data.stmt_last WHERE dbid = mydb AND coalesce(target_id, 0) = tgt);
    END IF;
    RAISE NOTICE '%snapshot %: % relations (% stored), % statements (% stored): invariants hold',
        CASE WHEN tgt <> 0 THEN 'target ' || tgt || ' ' ELSE '' END,
        s.snap_id, s.n_relations, s.n_relations_stored, s.n_statements, s.n_statements_stored;
END
$$;
