/* sql/parts/139_series.sql - series of windows: steps (folio_perf_mark), folio_perf_series, the saturation point, folio_perf_series_report */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

------------------------------------------------------------------------
--
-- A series is windows in an order: a step-load run (1, 2, 4, 8 users),
-- environment configurations, releases.  series_doc() works out one
-- object per window (series_window()), the statements with the most time
-- across the series and the saturation point (series_saturation());
-- folio_perf_series() returns the objects as rows, folio_perf_series_report()
-- renders the document as text, markdown, html or json.
--
-- Steps: folio_perf_mark() takes a snapshot inside the newest open window
-- and starts a step there; the step before it ends at it and becomes a
-- window of its own (window_step.step_window), the last one when the
-- window ends (folio_perf_end() calls steps_close()).  Step 1 runs from
-- the window's begin to the first mark with the window's label and tags;
-- step k > 1 has the mark's label and the window's tags with the mark's
-- on top.  folio_perf_steps() gives a window's step windows in order.
------------------------------------------------------------------------

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

/*
 * Close the open step of a window at snapshot p_end: it becomes a window
 * from its mark (or the window's begin) to p_end.  Nothing when the window
 * has no steps.  Called by folio_perf_mark() and folio_perf_end(), as the
 * owner.
 */
CREATE FUNCTION folio_perf_data.steps_close(p_window bigint, p_end bigint)
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    st folio_perf_data.window_step;
    parent folio_perf_data.window;
    sw bigint;
BEGIN
    SELECT * INTO st FROM folio_perf_data.window_step x
    WHERE x.window_id = p_window AND x.step_window IS NULL
    ORDER BY x.step DESC LIMIT 1 FOR UPDATE;
    IF NOT FOUND THEN
        RETURN;
    END IF;
    SELECT * INTO parent FROM folio_perf_data.window x WHERE x.window_id = p_window;
    INSERT INTO folio_perf_data.window (label, tags, begin_snap, end_snap)
    VALUES (st.label, parent.tags || st.tags, st.begin_snap, p_end)
    ON CONFLICT (begin_snap, end_snap) DO NOTHING
    RETURNING window_id INTO sw;
    IF sw IS NULL THEN
        SELECT x.window_id INTO sw FROM folio_perf_data.window x
        WHERE x.begin_snap = st.begin_snap AND x.end_snap = p_end;
    END IF;
    UPDATE folio_perf_data.window_step x SET step_window = sw
    WHERE x.window_id = st.window_id AND x.step = st.step;
END
$$;

/*
 * folio_perf_mark(label, tags): a step boundary in the newest open window
 * of this database (or of a remote target begun from it).  Returns the
 * snapshot id.
 */
CREATE FUNCTION folio_perf_mark(label text, tags jsonb DEFAULT '{}')
RETURNS bigint
LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w folio_perf_data.window;
    tgt int;
    s bigint;
    n int;
    mydb oid := (SELECT d.oid FROM pg_catalog.pg_database d
                 WHERE d.datname = pg_catalog.current_database());
BEGIN
    IF tags IS NULL OR pg_catalog.jsonb_typeof(tags) <> 'object' THEN
        RAISE EXCEPTION 'step tags must be a JSON object'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass tags like ''{"users": 20}''.';
    END IF;
    IF octet_length(tags::text) > 100000 THEN
        RAISE EXCEPTION 'step tags are too long (% bytes)', octet_length(tags::text)
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Tags are limited to 100 kB.';
    END IF;
    IF label IS NOT NULL AND octet_length(label) > 1000 THEN
        RAISE EXCEPTION 'step label is too long (% bytes)', octet_length(label)
            USING ERRCODE = 'string_data_right_truncation',
                  HINT = 'Labels are limited to 1000 bytes; put details into the step''s tags.';
    END IF;
    SELECT x.* INTO w FROM folio_perf_data.window x
    JOIN folio_perf_data.snapshot b ON b.snap_id = x.begin_snap
    WHERE x.end_snap IS NULL AND (b.target_id IS NOT NULL OR b.dbid = mydb)
    ORDER BY x.window_id DESC LIMIT 1
    FOR UPDATE OF x;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'there is no open window in this database'
            USING ERRCODE = 'object_not_in_prerequisite_state',
                  HINT = 'A mark splits an open window into steps: start one with folio_perf_begin(label, tags).';
    END IF;
    SELECT b.target_id INTO tgt FROM folio_perf_data.snapshot b WHERE b.snap_id = w.begin_snap;
    s := folio_perf_data.capture(label, 'manual', tgt);
    SELECT count(*) INTO n FROM folio_perf_data.window_step x WHERE x.window_id = w.window_id;
    IF n = 0 THEN
        INSERT INTO folio_perf_data.window_step (window_id, step, begin_snap, label, tags)
        VALUES (w.window_id, 1, w.begin_snap, w.label, '{}');
        n := 1;
    END IF;
    PERFORM folio_perf_data.steps_close(w.window_id, s);
    INSERT INTO folio_perf_data.window_step (window_id, step, begin_snap, label, tags)
    VALUES (w.window_id, n + 1, s, label, tags);
    RETURN s;
END
$$;

/*
 * folio_perf_steps(window_id): the windows of a window's steps in order
 * (empty when it has no marks); the last step is there once the window
 * has ended.
 */
CREATE FUNCTION folio_perf_steps(window_id bigint)
RETURNS bigint[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r bigint[];
BEGIN
    IF window_id IS NULL THEN
        RAISE EXCEPTION 'window id must not be null'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass the id of a window that folio_perf_mark() split into steps; see folio_perf_windows.';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM folio_perf_data.window x WHERE x.window_id = folio_perf_steps.window_id) THEN
        RAISE EXCEPTION 'window % does not exist', window_id
            USING ERRCODE = 'undefined_object',
                  HINT = 'See folio_perf_windows for the windows that exist.';
    END IF;
    SELECT coalesce(array_agg(x.step_window ORDER BY x.step), '{}') INTO r
    FROM folio_perf_data.window_step x
    WHERE x.window_id = folio_perf_steps.window_id AND x.step_window IS NOT NULL;
    RETURN r;
END
$$;

/*
 * The rules of the series' mean-time criterion: the findings'
 * significance rule (significance(), check_rules()) with the series'
 * defaults over folio_perf_check's: in a step-load series mean times rise
 * with the load by design, so a rise counts when the mean at least doubled
 * (min_change_pct 100) and cost 1 s of DB time or more in the window
 * (min_impact_ms 1000); rules given override them.
 */
CREATE FUNCTION folio_perf_data.series_rules(rules jsonb)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF rules IS NOT NULL AND jsonb_typeof(rules) <> 'object' THEN
        RETURN folio_perf_data.check_rules(rules);   -- its error
    END IF;
    RETURN folio_perf_data.check_rules('{"min_change_pct": 100, "min_impact_ms": 1000}'::jsonb || coalesce(rules, '{}'));
END
$$;

/*
 * The checked list of a series' windows: not null, 1 to 100 windows, each
 * once, each existing and ended.
 */
CREATE FUNCTION folio_perf_data.series_check(ids bigint[])
RETURNS void
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    w bigint;
BEGIN
    IF ids IS NULL OR coalesce(array_length(ids, 1), 0) = 0 THEN
        RAISE EXCEPTION 'a series needs at least one window'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass window ids in the order of the series, e.g. ARRAY[11, 12, 13], or folio_perf_steps(window_id).';
    END IF;
    IF array_length(ids, 1) > 100 THEN
        RAISE EXCEPTION 'a series has at most 100 windows, not %', array_length(ids, 1)
            USING ERRCODE = 'program_limit_exceeded',
                  HINT = 'Narrow the series down, e.g. with the tag filter of folio_perf_series(tag_key, tag_filter).';
    END IF;
    IF (SELECT count(DISTINCT u) FROM unnest(ids) u) < array_length(ids, 1)
       OR array_position(ids, NULL) IS NOT NULL THEN
        RAISE EXCEPTION 'the windows of a series must be distinct and not null'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass each window once.';
    END IF;
    FOREACH w IN ARRAY ids LOOP
        PERFORM folio_perf_data.window_bounds(w);
    END LOOP;
END
$$;

/*
 * The windows of a tag series: ended windows that have tag_key and whose
 * tags contain tag_filter, by the numeric value of tag_key (others after,
 * by begin), then by begin; the steps of marked windows are left out
 * (folio_perf_steps() gives them).
 */
CREATE FUNCTION folio_perf_data.series_by_tag(tag_key text, tag_filter jsonb)
RETURNS bigint[]
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r bigint[];
BEGIN
    IF tag_key IS NULL OR tag_key = '' THEN
        RAISE EXCEPTION 'tag_key must not be null or empty'
            USING ERRCODE = 'null_value_not_allowed',
                  HINT = 'Pass the tag the series runs along, e.g. ''users''.';
    END IF;
    IF tag_filter IS NULL OR pg_catalog.jsonb_typeof(tag_filter) <> 'object' THEN
        RAISE EXCEPTION 'tag_filter must be a JSON object'
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Pass tags the windows must have, e.g. ''{"scenario": "CICO"}'', or ''{}''.';
    END IF;
    SELECT coalesce(array_agg(x.window_id ORDER BY x.lv NULLS LAST, x.taken_at, x.window_id), '{}') INTO r
    FROM (SELECT w.window_id, b.taken_at,
                 CASE WHEN pg_catalog.jsonb_typeof(w.tags->tag_key) = 'number' THEN (w.tags->>tag_key)::numeric
                      WHEN (w.tags->>tag_key) ~ '^\s*-?[0-9]+(\.[0-9]+)?\s*$' THEN (w.tags->>tag_key)::numeric END AS lv
          FROM folio_perf_data.window w
          JOIN folio_perf_data.snapshot b ON b.snap_id = w.begin_snap
          WHERE w.end_snap IS NOT NULL AND w.tags ? tag_key AND w.tags @> tag_filter
            AND NOT EXISTS (SELECT 1 FROM folio_perf_data.window_step s WHERE s.step_window = w.window_id)
          ORDER BY 3 NULLS LAST, 2, 1
          LIMIT 100) x;
    RETURN r;
END
$$;

/*
 * The level of each window along the series' key: the tag `users` when
 * every window has it as a number, else the first tag (by name) that
 * every window has as a number rising along the series; key NULL when
 * none.  tag_key: the key asked for (the tag form).
 */
CREATE FUNCTION folio_perf_data.series_key(ids bigint[], tag_key text DEFAULT NULL)
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    WITH t AS (
        SELECT u.o, k.key, CASE WHEN jsonb_typeof(k.value) = 'number' THEN (k.value #>> '{}')::numeric
                                WHEN (k.value #>> '{}') ~ '^\s*-?[0-9]+(\.[0-9]+)?\s*$' THEN (k.value #>> '{}')::numeric END AS v
        FROM unnest(ids) WITH ORDINALITY u(id, o)
        JOIN folio_perf_data.window w ON w.window_id = u.id
        CROSS JOIN LATERAL jsonb_each(w.tags) k),
    c AS (
        SELECT t.key, count(t.v) AS n,
               bool_and(t.v > coalesce(prev, t.v - 1)) AS rising
        FROM (SELECT t.*, lag(t.v) OVER (PARTITION BY t.key ORDER BY t.o) AS prev FROM t) t
        GROUP BY t.key)
    SELECT coalesce(
        (SELECT c.key FROM c WHERE c.key = tag_key AND c.n = cardinality(ids)),
        (SELECT c.key FROM c WHERE tag_key IS NULL AND c.key = 'users' AND c.n = cardinality(ids)),
        (SELECT c.key FROM c WHERE tag_key IS NULL AND c.n = cardinality(ids) AND c.rising AND cardinality(ids) > 1
         ORDER BY c.key COLLATE "C" LIMIT 1))
$$;

/*
 * One window's figures in a series (an object; keys as the columns of
 * folio_perf_series()): the findings' headline figures of the window
 * (window_headline(), with its active span) and what a series adds: DB
 * load and DB CPU at their highest, the CPU count, WAL/s, the FOLIO
 * operations summed over tenants, the series key's value.
 */
CREATE FUNCTION folio_perf_data.series_window(p_window bigint, p_key text)
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wb record;
    w record;
    hl jsonb;
    summ record;
    load_max int;
    sampler_note text;
    cpu_max numeric;
    ops jsonb;
    per_op jsonb;
    ncpu int;
    lv numeric;
BEGIN
    wb := folio_perf_data.window_bounds(p_window);
    SELECT x.window_id, x.label, x.tags, b.taken_at AS begin_at, e.taken_at AS end_at, b.target_id,
           e.max_connections
    INTO w
    FROM folio_perf_data.window x
    JOIN folio_perf_data.snapshot b ON b.snap_id = x.begin_snap
    JOIN folio_perf_data.snapshot e ON e.snap_id = x.end_snap
    WHERE x.window_id = p_window;
    hl := folio_perf_data.window_headline(p_window);
    SELECT * INTO summ FROM @extschema@.folio_perf_db_summary(p_window);
    -- without samples the sampler's figures are NULL and sampler says why
    SELECT c.key INTO sampler_note FROM @extschema@.folio_perf_connections(p_window) c WHERE c.dimension = 'sampler';
    SELECT c.max INTO load_max FROM @extschema@.folio_perf_db_load(p_window) c WHERE c.dimension = 'total';
    IF hl->>'db_cpu_pct' IS NOT NULL THEN
        SELECT max(t.value) INTO cpu_max FROM @extschema@.folio_perf_timeseries(p_window, 'cpu') t
        WHERE t.series = 'db_cpu_pct';
    ELSIF sampler_note IS NULL THEN
        SELECT c.key INTO sampler_note FROM @extschema@.folio_perf_cpu(p_window) c WHERE c.dimension = 'cpu';
    END IF;
    ncpu := folio_perf_data.host_cpus(wb.begin_at, wb.end_at, w.target_id);

    -- FOLIO operations, over all tenants
    SELECT jsonb_object_agg(o.operation, o.per_minute ORDER BY o.operation),
           jsonb_object_agg(o.operation, o.per_op ORDER BY o.operation) FILTER (WHERE o.per_op IS NOT NULL)
    INTO ops, per_op
    FROM (SELECT x->>'operation' AS operation,
                 round(sum((x->>'count')::numeric) * 60 / wb.seconds::numeric, 2) AS per_minute,
                 round(sum((x->>'db_time_per_op_ms')::numeric * (x->>'count')::numeric)
                       / nullif(sum((x->>'count')::numeric) FILTER (WHERE x->>'db_time_per_op_ms' IS NOT NULL), 0), 3) AS per_op
          FROM jsonb_array_elements(hl->'operations') x
          WHERE (x->>'count')::numeric > 0
          GROUP BY 1) o;

    IF p_key IS NOT NULL THEN
        lv := CASE WHEN jsonb_typeof(w.tags->p_key) = 'number' THEN (w.tags->>p_key)::numeric
                   WHEN (w.tags->>p_key) ~ '^\s*-?[0-9]+(\.[0-9]+)?\s*$' THEN (w.tags->>p_key)::numeric END;
    END IF;

    RETURN jsonb_build_object(
        'window_id', w.window_id, 'label', w.label, 'tags', w.tags,
        'series_key', p_key, 'level', lv,
        'begin_at', w.begin_at, 'end_at', w.end_at,
        'duration_s', round(wb.seconds::numeric, 3),
        'active_s', hl->'active_s', 'active_begin', hl->'active_begin', 'active_end', hl->'active_end',
        'active_note', hl->'span_note',
        'statement_calls', hl->'statement_calls',
        'statements_per_s', round((hl->>'statement_calls')::numeric / wb.seconds::numeric, 2),
        'statements_total_ms', hl->'db_time_ms',
        'operations_per_minute', coalesce(ops, '{}'),
        'db_time_per_op_ms', coalesce(per_op, '{}'),
        'db_load_avg', hl->'db_load_avg', 'db_load_max', load_max,
        'cpus', ncpu,
        'db_cpu_pct_avg', hl->'db_cpu_pct', 'db_cpu_pct_max', cpu_max,
        'connections_avg', hl->'connections_avg', 'connections_max', hl->'connections_max',
        'max_connections', w.max_connections,
        'wal_bytes_per_s', summ.wal_bytes_per_s,
        'sampler', coalesce(sampler_note, 'on'));
END
$$;

/*
 * A window's headline in a series: the first of the report verdict's
 * checks that holds, from the series' own figures (DB load above the CPU
 * count, connections near max_connections, a dominant wait), else that
 * nothing stands out.
 */
CREATE FUNCTION folio_perf_data.series_headline(p_window bigint, fig jsonb)
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wt record;
BEGIN
    IF fig->>'sampler' LIKE 'off%' THEN
        RETURN 'No sampler data (' || (fig->>'sampler') || '): DB load, CPU and connection checks need the sampler.';
    END IF;
    IF (fig->>'cpus')::numeric > 0 AND (fig->>'db_load_avg')::numeric > (fig->>'cpus')::numeric THEN
        RETURN format('DB load %s on %s CPUs: sessions queued for CPU or I/O.',
                      folio_perf_data.fmt_sig((fig->>'db_load_avg')::numeric), fig->>'cpus');
    END IF;
    IF (fig->>'connections_max')::numeric >= 0.9 * (fig->>'max_connections')::numeric THEN
        RETURN format('Connections peaked at %s of max_connections %s.', fig->>'connections_max', fig->>'max_connections');
    END IF;
    SELECT l.key, l.pct_of_load INTO wt FROM @extschema@.folio_perf_db_load(p_window) l
    WHERE l.dimension = 'wait_event' AND l.key IS NOT NULL AND l.pct_of_load >= 50
    ORDER BY l.pct_of_load DESC LIMIT 1;
    IF FOUND AND (fig->>'db_load_avg')::numeric >= 0.5 THEN
        RETURN format('Wait event %s accounts for %s%% of DB load.', wt.key, wt.pct_of_load);
    END IF;
    RETURN format('Nothing stands out: DB load %s%s, connections at most %s.',
                  coalesce(folio_perf_data.fmt_sig((fig->>'db_load_avg')::numeric), '?'),
                  coalesce(' on ' || (fig->>'cpus') || ' CPUs', ''),
                  coalesce(fig->>'connections_max', '?'));
END
$$;

/*
 * The saturation point of a step-load series (rows: series_window()
 * objects with top_mean_ms, in order).  Step i (i > 1) saturates when
 *   throughput: statements/s grew by less than a quarter as much as the
 *     level (100 % more users, less than 25 % more statements/s: it
 *     flattened) while DB load rose by 10 % or more;
 *   db_load: DB load reached 1.2 times the CPU count or more;
 *   mean_time: the mean time of one of the top statements is
 *     significantly higher than at the first step (significance() with
 *     series_rules(rules): a regression).
 * The first such step is the saturation point.  Assessed only along a
 * rising numeric level (series_key()).
 */
CREATE FUNCTION folio_perf_data.series_saturation(rows jsonb, top jsonb, rules jsonb DEFAULT '{}')
RETURNS jsonb
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    n int := jsonb_array_length(rows);
    key text := rows->0->>'series_key';
    cpus numeric;
    steps jsonb := '[]';
    i int;
    a jsonb;
    b jsonb;
    t0 numeric; t1 numeric; l0 numeric; l1 numeric; x0 numeric; x1 numeric; m1 numeric; mf numeric;
    crit text[];
    parts text[];
    first_i int;
    first_crit text[];
    first_parts text[];
    unit text;
    r jsonb := folio_perf_data.series_rules(rules);
    base_ms numeric := (rows->0->>'statements_total_ms')::numeric;
    sg record;
BEGIN
    IF n < 2 THEN
        RETURN jsonb_build_object('assessed', false, 'saturated', NULL,
            'finding', 'Not assessed: a saturation point needs two windows or more.');
    END IF;
    IF key IS NULL OR EXISTS (SELECT 1 FROM jsonb_array_elements(rows) WITH ORDINALITY r(x, o)
                              WHERE x->>'level' IS NULL) THEN
        RETURN jsonb_build_object('assessed', false, 'saturated', NULL,
            'finding', 'Not assessed: a saturation point needs a numeric tag (such as users) that rises along the series.');
    END IF;
    IF EXISTS (SELECT 1 FROM (SELECT (x->>'level')::numeric AS v, lag((x->>'level')::numeric) OVER (ORDER BY o) AS p
                              FROM jsonb_array_elements(rows) WITH ORDINALITY r(x, o)) z WHERE z.v <= z.p) THEN
        RETURN jsonb_build_object('assessed', false, 'saturated', NULL,
            'finding', format('Not assessed: the tag %s does not rise along the series.', key));
    END IF;
    unit := CASE WHEN key IN ('users', 'clients', 'sessions', 'threads', 'workers', 'connections', 'tenants', 'jobs')
                 THEN ' ' || key ELSE '' END;
    SELECT max((x->>'cpus')::numeric) INTO cpus FROM jsonb_array_elements(rows) x;
    mf := (rows->0->>'top_mean_ms')::numeric;
    FOR i IN 1..n - 1 LOOP
        a := rows->(i - 1);
        b := rows->i;
        x0 := (a->>'level')::numeric; x1 := (b->>'level')::numeric;
        t0 := (a->>'statements_per_s')::numeric; t1 := (b->>'statements_per_s')::numeric;
        l0 := (a->>'db_load_avg')::numeric; l1 := (b->>'db_load_avg')::numeric;
        m1 := (b->>'top_mean_ms')::numeric;
        crit := '{}';
        parts := '{}';
        IF t0 > 0 AND x0 > 0 AND (t1 / t0 - 1) < 0.25 * (x1 / x0 - 1)
           AND (l0 IS NULL OR l1 IS NULL OR l1 >= 1.1 * l0) THEN
            crit := crit || 'throughput'::text;
            parts := parts || format('throughput stops scaling between %s and %s%s (%s -> %s statements/s, %s for %s%s; %s)',
                folio_perf_data.fmt_sig(x0), folio_perf_data.fmt_sig(x1), unit,
                folio_perf_data.fmt_sig(t0), folio_perf_data.fmt_sig(t1),
                folio_perf_data.fmt_value(to_jsonb(round(100 * (t1 / t0 - 1), 1)), 'delta_pct'),
                folio_perf_data.fmt_value(to_jsonb(round(100 * (x1 / x0 - 1), 1)), 'delta_pct'), unit,
                CASE WHEN l0 IS NULL OR l1 IS NULL THEN 'DB load unknown: no sampler data'
                     ELSE 'DB load ' || folio_perf_data.fmt_sig(l0) || ' -> ' || folio_perf_data.fmt_sig(l1) END);
        END IF;
        IF cpus > 0 AND l1 >= 1.2 * cpus THEN
            crit := crit || 'db_load'::text;
            parts := parts || format('DB load %s on %s CPUs at %s%s',
                folio_perf_data.fmt_sig(l1), cpus, folio_perf_data.fmt_sig(x1), unit);
        END IF;
        -- the top statement whose rise against the first window is the
        -- most significant regression
        SELECT e.v->>'n' AS n, e.v->>'queryid' AS queryid, pp.p0->>'mean_exec_ms' AS m0, pp.p1->>'mean_exec_ms' AS m1,
               z.change_pct, z.p_value
        INTO sg
        FROM jsonb_array_elements(top) e(v),
             LATERAL (SELECT e.v->'per_window'->0 AS p0, e.v->'per_window'->i AS p1) pp,
             LATERAL folio_perf_data.significance((pp.p0->>'calls')::bigint, (pp.p0->>'mean_exec_ms')::numeric,
                 (pp.p0->>'sd_exec_ms')::numeric, (pp.p1->>'calls')::bigint, (pp.p1->>'mean_exec_ms')::numeric,
                 (pp.p1->>'sd_exec_ms')::numeric, base_ms, r) z
        WHERE z.verdict = 'regression'
        ORDER BY z.impact_ms DESC LIMIT 1;
        IF FOUND THEN
            crit := crit || 'mean_time'::text;
            parts := parts || format('mean time of top statement %s (query id %s) %s ms at %s%s against %s ms at %s%s (%s, p %s)',
                sg.n, sg.queryid, folio_perf_data.fmt_sig(sg.m1::numeric), folio_perf_data.fmt_sig(x1), unit,
                folio_perf_data.fmt_sig(sg.m0::numeric), folio_perf_data.fmt_sig((rows->0->>'level')::numeric), unit,
                folio_perf_data.fmt_value(to_jsonb(round(sg.change_pct::numeric, 1)), 'delta_pct'),
                CASE WHEN sg.p_value < 0.001 THEN '< 0.001' ELSE '= ' || round(sg.p_value::numeric, 3) END);
        END IF;
        steps := steps || jsonb_build_object('step', i + 1, 'window_id', b->'window_id',
            'previous_level', x0, 'level', x1,
            'level_delta_pct', round(100 * (x1 / x0 - 1), 1),
            'statements_per_s', t1,
            'throughput_delta_pct', CASE WHEN t0 > 0 THEN round(100 * (t1 / t0 - 1), 1) END,
            'db_load_avg', l1, 'cpus', cpus, 'top_mean_ms', m1,
            'criteria', to_jsonb(crit));
        IF first_i IS NULL AND cardinality(crit) > 0 THEN
            first_i := i + 1;
            first_crit := crit;
            first_parts := parts;
        END IF;
    END LOOP;
    IF first_i IS NULL THEN
        RETURN jsonb_build_object('assessed', true, 'saturated', false, 'series_key', key, 'steps', steps,
            'finding', format('No saturation in its range (%s to %s%s): statements/s %s -> %s, DB load at most %s%s, the top statements'' mean time at most %s ms (%s ms at the first step).',
                folio_perf_data.fmt_sig((rows->0->>'level')::numeric), folio_perf_data.fmt_sig((rows->(n - 1)->>'level')::numeric), unit,
                folio_perf_data.fmt_sig((rows->0->>'statements_per_s')::numeric),
                folio_perf_data.fmt_sig((rows->(n - 1)->>'statements_per_s')::numeric),
                coalesce(folio_perf_data.fmt_sig((SELECT max((x->>'db_load_avg')::numeric) FROM jsonb_array_elements(rows) x)), '? (no sampler data)'),
                coalesce(' on ' || cpus || ' CPUs', ''),
                coalesce(folio_perf_data.fmt_sig((SELECT max((x->>'top_mean_ms')::numeric) FROM jsonb_array_elements(rows) x)), '?'),
                coalesce(folio_perf_data.fmt_sig(mf), '?')));
    END IF;
    RETURN jsonb_build_object('assessed', true, 'saturated', true, 'series_key', key, 'steps', steps,
        'step', first_i, 'window_id', rows->(first_i - 1)->'window_id',
        'previous_level', (rows->(first_i - 2)->>'level')::numeric,
        'level', (rows->(first_i - 1)->>'level')::numeric,
        'criteria', to_jsonb(first_crit),
        'finding', format('Saturation point between %s and %s%s: %s.',
            folio_perf_data.fmt_sig((rows->(first_i - 2)->>'level')::numeric),
            folio_perf_data.fmt_sig((rows->(first_i - 1)->>'level')::numeric), unit,
            array_to_string(first_parts, '; ')));
END
$$;

/*
 * The series as one jsonb document: the windows (series_window() with
 * top_mean_ms, headline and name), the statements with the most time in
 * the series with their mean per window, the saturation point.
 */
CREATE FUNCTION folio_perf_data.series_doc(ids bigint[], p_key text DEFAULT NULL, rules jsonb DEFAULT '{}')
RETURNS jsonb
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    key text;
    rows jsonb := '[]';
    fig jsonb;
    top jsonb;
    i int;
    names text[];
    nm text;
BEGIN
    PERFORM folio_perf_data.series_check(ids);
    PERFORM folio_perf_data.series_rules(rules);
    key := folio_perf_data.series_key(ids, p_key);
    FOR i IN 1..array_length(ids, 1) LOOP
        fig := folio_perf_data.series_window(ids[i], key);
        rows := rows || jsonb_build_array(fig || jsonb_build_object('step', i));
    END LOOP;

    -- the statements with the most time across the series (matched by
    -- normalised text and tenant, as folio_perf_compare matches them)
    WITH s AS (
        SELECT u.o, coalesce(t.text_md5::text, k.queryid::text) AS h, k.tenant, k.module, k.queryid,
               t.query, d.calls, d.total_exec_time,
               -- the sum of squares, to merge entries of several roles
               d.calls * (coalesce(d.stddev_exec_time, 0) ^ 2 + (d.total_exec_time / d.calls) ^ 2) AS sq
        FROM unnest(ids) WITH ORDINALITY u(id, o)
        CROSS JOIN LATERAL folio_perf_data.window_bounds(u.id) wb
        CROSS JOIN LATERAL folio_perf_data.stmt_delta(wb.begin_snap, wb.end_snap) d
        JOIN folio_perf_data.stmt_key k ON k.key_id = d.key_id
        LEFT JOIN folio_perf_data.stmt_text t ON t.key_id = k.key_id
        WHERE d.calls > 0 AND k.toplevel AND NOT k.housekeeping),
    g AS (
        SELECT s.h, s.tenant, min(s.module) AS module, min(s.queryid) AS queryid,
               CASE WHEN bool_and(s.query IS DISTINCT FROM '<insufficient privilege>') THEN min(s.query)
                    ELSE '<insufficient privilege>' END AS query,
               sum(s.total_exec_time) AS tot
        FROM s GROUP BY s.h, s.tenant
        ORDER BY sum(s.total_exec_time) DESC, s.h LIMIT 5)
    SELECT coalesce(jsonb_agg(jsonb_build_object('n', g.n, 'queryid', g.queryid, 'tenant', g.tenant, 'module', g.module,
               'query', g.query, 'total_exec_ms', round(g.tot::numeric, 3),
               'per_window', (SELECT jsonb_agg(jsonb_build_object('step', p.o,
                                  'calls', coalesce(x.calls, 0),
                                  'mean_exec_ms', round((x.tt / nullif(x.calls, 0))::numeric, 3),
                                  'sd_exec_ms', round(sqrt(greatest(x.sq / nullif(x.calls, 0) - (x.tt / nullif(x.calls, 0)) ^ 2, 0))::numeric, 3))
                                  ORDER BY p.o)
                              FROM generate_series(1, array_length(ids, 1)) p(o)
                              LEFT JOIN (SELECT s.o, sum(s.calls) AS calls, sum(s.total_exec_time) AS tt, sum(s.sq) AS sq
                                         FROM s WHERE s.h = g.h AND s.tenant IS NOT DISTINCT FROM g.tenant
                                         GROUP BY s.o) x ON x.o = p.o)) ORDER BY g.n), '[]')
    INTO top
    FROM (SELECT g.*, row_number() OVER (ORDER BY g.tot DESC, g.h) AS n FROM g) g;

    -- per window: the top statements' mean time (their time over their
    -- calls), the headline and the name the documents use
    names := ARRAY(
        SELECT CASE WHEN key IS NOT NULL THEN folio_perf_data.fmt_sig((r->>'level')::numeric)
                    || CASE WHEN key IN ('users', 'clients', 'sessions', 'threads', 'workers', 'connections', 'tenants', 'jobs')
                            THEN ' ' || key ELSE ' (' || key || ')' END
                    ELSE coalesce(nullif(r#>>'{tags,release}', ''), nullif(r->>'label', ''), 'window ' || (r->>'window_id')) END
        FROM jsonb_array_elements(rows) WITH ORDINALITY x(r, o) ORDER BY o);
    FOR i IN 1..array_length(ids, 1) LOOP
        nm := names[i];
        IF (SELECT count(*) FROM unnest(names) z WHERE z = names[i]) > 1 THEN
            nm := nm || ' (window ' || ids[i] || ')';
        END IF;
        fig := rows->(i - 1);
        fig := fig || jsonb_build_object('name', nm,
            'top_mean_ms', (SELECT round(sum((p->>'mean_exec_ms')::numeric * (p->>'calls')::numeric)
                                         / nullif(sum((p->>'calls')::numeric) FILTER (WHERE p->>'mean_exec_ms' IS NOT NULL), 0), 3)
                            FROM jsonb_array_elements(top) t, jsonb_array_elements(t->'per_window') p
                            WHERE (p->>'step')::int = i),
            'headline', folio_perf_data.series_headline(ids[i], fig));
        rows := jsonb_set(rows, ARRAY[(i - 1)::text], fig);
    END LOOP;

    RETURN jsonb_build_object('format_version', 1, 'generated_at', pg_catalog.clock_timestamp(),
        'series_key', key, 'windows', rows, 'top_statements', top,
        'rules', folio_perf_data.series_rules(rules),
        'saturation', folio_perf_data.series_saturation(rows, top, rules));
END
$$;

-- The rows of folio_perf_series() from series_doc()'s windows.
CREATE FUNCTION folio_perf_data.series_rows(doc jsonb)
RETURNS TABLE(step int, window_id bigint, name text, label text, tags jsonb,
    series_key text, level numeric, begin_at timestamptz, end_at timestamptz,
    duration_s numeric, active_s numeric, active_begin timestamptz, active_end timestamptz,
    statements_per_s numeric,
    operations_per_minute jsonb, db_time_per_op_ms jsonb, top_mean_ms numeric,
    db_load_avg numeric, db_load_max int, cpus int,
    db_cpu_pct_avg numeric, db_cpu_pct_max numeric,
    connections_avg numeric, connections_max int, wal_bytes_per_s numeric,
    active_note text, sampler text, headline text)
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT (r->>'step')::int, (r->>'window_id')::bigint, r->>'name', r->>'label', r->'tags',
           r->>'series_key', (r->>'level')::numeric, (r->>'begin_at')::timestamptz, (r->>'end_at')::timestamptz,
           (r->>'duration_s')::numeric, (r->>'active_s')::numeric,
           (r->>'active_begin')::timestamptz, (r->>'active_end')::timestamptz, (r->>'statements_per_s')::numeric,
           r->'operations_per_minute', r->'db_time_per_op_ms', (r->>'top_mean_ms')::numeric,
           (r->>'db_load_avg')::numeric, (r->>'db_load_max')::int, (r->>'cpus')::int,
           (r->>'db_cpu_pct_avg')::numeric, (r->>'db_cpu_pct_max')::numeric,
           (r->>'connections_avg')::numeric, (r->>'connections_max')::int, (r->>'wal_bytes_per_s')::numeric,
           r->>'active_note', r->>'sampler', r->>'headline'
    FROM jsonb_array_elements(doc->'windows') WITH ORDINALITY x(r, o)
    ORDER BY o
$$;

CREATE FUNCTION folio_perf_series(window_ids bigint[])
RETURNS TABLE(step int, window_id bigint, name text, label text, tags jsonb,
    series_key text, level numeric, begin_at timestamptz, end_at timestamptz,
    duration_s numeric, active_s numeric, active_begin timestamptz, active_end timestamptz,
    statements_per_s numeric,
    operations_per_minute jsonb, db_time_per_op_ms jsonb, top_mean_ms numeric,
    db_load_avg numeric, db_load_max int, cpus int,
    db_cpu_pct_avg numeric, db_cpu_pct_max numeric,
    connections_avg numeric, connections_max int, wal_bytes_per_s numeric,
    active_note text, sampler text, headline text)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
SET work_mem = '64MB'
AS $$ SELECT * FROM folio_perf_data.series_rows(folio_perf_data.series_doc(window_ids)) $$;

CREATE FUNCTION folio_perf_series(tag_key text, tag_filter jsonb DEFAULT '{}')
RETURNS TABLE(step int, window_id bigint, name text, label text, tags jsonb,
    series_key text, level numeric, begin_at timestamptz, end_at timestamptz,
    duration_s numeric, active_s numeric, active_begin timestamptz, active_end timestamptz,
    statements_per_s numeric,
    operations_per_minute jsonb, db_time_per_op_ms jsonb, top_mean_ms numeric,
    db_load_avg numeric, db_load_max int, cpus int,
    db_cpu_pct_avg numeric, db_cpu_pct_max numeric,
    connections_avg numeric, connections_max int, wal_bytes_per_s numeric,
    active_note text, sampler text, headline text)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET work_mem = '64MB'
AS $$
DECLARE
    ids bigint[] := folio_perf_data.series_by_tag(tag_key, tag_filter);
BEGIN
    IF cardinality(ids) = 0 THEN
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM folio_perf_data.series_rows(folio_perf_data.series_doc(ids, tag_key));
END
$$;

/*
 * folio_perf_series_saturation(window_ids): the saturation point of a
 * series in one row (saturated NULL: not assessed, finding says why).
 */
CREATE FUNCTION folio_perf_series_saturation(window_ids bigint[], rules jsonb DEFAULT '{}')
RETURNS TABLE(saturated boolean, step int, window_id bigint, previous_level numeric,
    level numeric, criteria text[], finding text)
LANGUAGE sql VOLATILE
SET search_path = pg_catalog, pg_temp
SET work_mem = '64MB'
AS $$
    SELECT (s->>'saturated')::boolean, (s->>'step')::int, (s->>'window_id')::bigint,
           (s->>'previous_level')::numeric, (s->>'level')::numeric,
           ARRAY(SELECT jsonb_array_elements_text(coalesce(s->'criteria', '[]'))), s->>'finding'
    FROM (SELECT folio_perf_data.series_doc(window_ids, NULL, rules)->'saturation' AS s) x
$$;

/*
 * A line chart across a series: one point per window at evenly spaced
 * places (names: their labels under the x axis), lines [{name, values}]
 * (NULL values left out), opts: {"ytitle", "xtitle", "integral": counts,
 * "hline": a value drawn as a dashed line (the CPU count), "hline_label",
 * "mark": the 1-based point where saturation was found (a dashed line
 * between it and the point before), "mark_label"}.
 */
CREATE FUNCTION folio_perf_data.svg_series_chart(title text, names text[], lines jsonb, opts jsonb DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wd int := 700;
    ml int := 64;
    mr int := 18;
    mt int := 40;
    ph int := 200;
    pw int := wd - ml - mr;
    n int := coalesce(array_length(names, 1), 0);
    palette text[] := ARRAY['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b',
                            '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#aec7e8'];
    hline numeric := (opts->>'hline')::numeric;
    mark int := (opts->>'mark')::int;
    titles text[] := coalesce(ARRAY(SELECT jsonb_array_elements_text(opts->'titles')), names);
    nl int := jsonb_array_length(coalesce(lines, '[]'));
    nleg int;
    ymax numeric;
    yt record;
    svg text[] := '{}';
    tk numeric;
    x numeric;
    y numeric;
    slot numeric;
    maxch int;
    ln record;
    pts text;
    dots text;
    li int := 0;
    i int;
    val numeric;
    legend_rows int;
    ht int;
BEGIN
    IF n = 0 OR nl = 0 OR NOT EXISTS (SELECT 1 FROM jsonb_array_elements(lines) l, jsonb_array_elements(l->'values') v
                                      WHERE jsonb_typeof(v) = 'number') THEN
        RETURN '';
    END IF;
    slot := pw::numeric / n;
    SELECT max((v #>> '{}')::numeric) INTO ymax
    FROM jsonb_array_elements(lines) l, jsonb_array_elements(l->'values') v WHERE jsonb_typeof(v) = 'number';
    ymax := greatest(coalesce(ymax, 0), coalesce(hline, 0));
    yt := folio_perf_data.nice_ticks(ymax, coalesce((opts->>'integral')::boolean, false));
    nleg := nl + CASE WHEN hline IS NOT NULL THEN 1 ELSE 0 END;
    legend_rows := ceil(nleg / 3.0);
    ht := mt + ph + 52 + 18 * legend_rows;
    svg := svg || format('<figure id="%s"><svg xmlns="http://www.w3.org/2000/svg" class="chart series" viewBox="0 0 %s %s" role="img" aria-label="%s">',
                         folio_perf_data.slug(title), wd, ht, folio_perf_data.html_escape(folio_perf_data.fold(title)))
        || format('<text x="4" y="18" class="ct">%s</text>', folio_perf_data.html_escape(folio_perf_data.fold(title)))
        || format('<rect x="%s" y="%s" width="%s" height="%s" class="pa"/>', ml, mt, pw, ph);
    -- y axis
    tk := 0;
    WHILE tk <= yt.top + yt.step / 1000 LOOP
        y := round(mt + ph - ph * tk / yt.top, 1);
        svg := svg || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="gl"/><text x="%s" y="%s" class="ax yt" text-anchor="end">%s</text>',
                             ml, y, ml + pw, y, ml - 6, y + 4, folio_perf_data.fmt_num(tk, 3));
        tk := tk + yt.step;
    END LOOP;
    svg := svg || format('<text transform="translate(14 %s) rotate(-90)" class="at" text-anchor="middle">%s</text>',
                         mt + ph / 2, folio_perf_data.html_escape(coalesce(opts->>'ytitle', '')));
    -- x axis: one label per window, cut to its slot
    maxch := greatest(floor(slot / 7.2)::int, 3);
    FOR i IN 1..n LOOP
        x := round(ml + slot * (i - 0.5), 1);
        svg := svg || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="gl"/><text x="%s" y="%s" class="ax xt" text-anchor="middle">%s<title>%s</title></text>',
                             x, mt, x, mt + ph + 4, x, mt + ph + 17,
                             folio_perf_data.html_escape(folio_perf_data.sql_start(names[i], maxch)),
                             folio_perf_data.html_escape(folio_perf_data.fold(coalesce(titles[i], names[i]))));
    END LOOP;
    svg := svg || format('<text x="%s" y="%s" class="at" text-anchor="middle">%s</text>',
                         ml + pw / 2, mt + ph + 35, folio_perf_data.html_escape(coalesce(opts->>'xtitle', '')));
    -- the saturation point: between the point before it and it
    IF mark IS NOT NULL AND mark BETWEEN 2 AND n THEN
        x := round(ml + slot * (mark - 1), 1);
        svg := svg || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="sat"/><text x="%s" y="%s" class="satl" text-anchor="middle">%s</text>',
                             x, mt - 4, x, mt + ph, x, mt - 7,
                             folio_perf_data.html_escape(coalesce(opts->>'mark_label', 'saturation')));
    END IF;
    IF hline IS NOT NULL THEN
        y := round(mt + ph - ph * hline / yt.top, 1);
        svg := svg || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="hl"/>', ml, y, ml + pw, y);
    END IF;
    FOR ln IN SELECT l, o FROM jsonb_array_elements(lines) WITH ORDINALITY t(l, o) LOOP
        li := ln.o;
        pts := '';
        dots := '';
        FOR i IN 1..n LOOP
            CONTINUE WHEN jsonb_typeof(ln.l->'values'->(i - 1)) IS DISTINCT FROM 'number';
            val := (ln.l->'values'->>(i - 1))::numeric;
            x := round(ml + slot * (i - 0.5), 1);
            y := round(mt + ph - ph * val / yt.top, 1);
            pts := pts || x || ',' || y || ' ';
            dots := dots || format('<circle cx="%s" cy="%s" r="3.5" fill="%s"><title>%s: %s</title></circle>',
                                   x, y, palette[(li - 1) % 10 + 1],
                                   folio_perf_data.html_escape(folio_perf_data.fold(coalesce(titles[i], names[i]) || ', ' || (ln.l->>'name'))),
                                   folio_perf_data.fmt_sig(val));
        END LOOP;
        svg := svg || format('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>', rtrim(pts), palette[(li - 1) % 10 + 1])
            || dots
            || format('<rect x="%s" y="%s" width="12" height="12" fill="%s"/><text x="%s" y="%s" class="lg">%s</text>',
                      ml + ((li - 1) % 3) * 205, mt + ph + 46 + ((li - 1) / 3) * 18, palette[(li - 1) % 10 + 1],
                      ml + ((li - 1) % 3) * 205 + 17, mt + ph + 56 + ((li - 1) / 3) * 18,
                      folio_perf_data.html_escape(folio_perf_data.sql_start(ln.l->>'name', 26)));
    END LOOP;
    IF hline IS NOT NULL THEN
        svg := svg || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="hl"/><text x="%s" y="%s" class="lg">%s</text>',
                             ml + (nl % 3) * 205, mt + ph + 52 + (nl / 3) * 18, ml + (nl % 3) * 205 + 12,
                             mt + ph + 52 + (nl / 3) * 18, ml + (nl % 3) * 205 + 17, mt + ph + 56 + (nl / 3) * 18,
                             folio_perf_data.html_escape(coalesce(opts->>'hline_label', '')));
    END IF;
    RETURN array_to_string(svg, '') || E'</svg></figure>\n';
END
$$;

/*
 * folio_perf_series_report(window_ids, format, baseline): the windows side
 * by side with Delta, % against the baseline (the first window unless
 * given), the top statements' mean time per window, each window's
 * headline and the saturation point; html adds line charts across the
 * series.
 */
CREATE FUNCTION folio_perf_series_report(window_ids bigint[], format text DEFAULT 'text', baseline bigint DEFAULT NULL,
    rules jsonb DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET work_mem = '64MB'
AS $$
DECLARE
    fmt text := folio_perf_series_report.format;
    doc jsonb;
    ws jsonb;
    n int;
    bi int;
    names text[];
    cols text[];
    labels text[];
    rcols text[];
    secs jsonb[] := '{}';
    sec jsonb;
    rows jsonb := '[]';
    out text[] := '{}';
    title text;
    sat jsonb;
    ops text[];
    op text;
    qmap jsonb;
    key text;
    i int;
    m record;
    mark int;
    cpus numeric;
    xt text;
    xl text[];
BEGIN
    PERFORM folio_perf_data.check_format(fmt);
    doc := folio_perf_data.series_doc(window_ids, NULL, rules);
    IF baseline IS NULL THEN
        bi := 1;
    ELSE
        bi := array_position(window_ids, baseline);
        IF bi IS NULL THEN
            RAISE EXCEPTION 'baseline window % is not in the series', baseline
                USING ERRCODE = 'invalid_parameter_value',
                      HINT = 'Pass one of the series'' window ids as baseline, or NULL for the first.';
        END IF;
    END IF;
    doc := doc || jsonb_build_object('baseline', window_ids[bi]);
    -- the settings that differ between the windows: name and each
    -- window's value (NULL: at its default, or no settings stored)
    doc := doc || jsonb_build_object('settings_differ', coalesce((
        WITH st AS MATERIALIZED (
            SELECT w.o, x.* FROM unnest(window_ids) WITH ORDINALITY w(id, o),
                 LATERAL folio_perf_data.settings_at((folio_perf_data.window_bounds(w.id)).end_snap) x),
        nm AS (SELECT st.name, max(st.boot_val) AS boot_val, max(st.unit) AS unit FROM st GROUP BY 1)
        SELECT jsonb_agg(jsonb_build_object('name', d.name, 'values', d.vals) ORDER BY d.name COLLATE "C")
        FROM (SELECT nm.name,
                     jsonb_agg(to_jsonb(coalesce(st.value, folio_perf_data.setting_text(nm.boot_val, nm.unit) || ' (default)'))
                               ORDER BY w.o) AS vals,
                     count(DISTINCT coalesce(st.value, '')) AS nv
              FROM unnest(window_ids) WITH ORDINALITY w(id, o)
              CROSS JOIN nm
              LEFT JOIN st ON st.o = w.o AND st.name = nm.name
              GROUP BY nm.name) d
        WHERE d.nv > 1), '[]'));
    IF fmt = 'json' THEN
        RETURN jsonb_pretty(doc);
    END IF;
    ws := doc->'windows';
    n := jsonb_array_length(ws);
    sat := doc->'saturation';
    key := doc->>'series_key';
    names := ARRAY(SELECT r->>'name' FROM jsonb_array_elements(ws) WITH ORDINALITY x(r, o) ORDER BY o);
    title := 'folio_perf series: ' || array_to_string(names, ', ');
    IF length(title) > 120 THEN
        title := folio_perf_data.sql_start(title, 120);
    END IF;
    ops := ARRAY(SELECT DISTINCT k FROM jsonb_array_elements(ws) r, jsonb_object_keys(r->'operations_per_minute') k ORDER BY 1);

    -- the windows side by side: one row per metric, a column per window
    -- and Delta, % after each window but the baseline
    cols := ARRAY['metric'];
    labels := ARRAY['Metric'];
    rcols := '{}';
    FOR i IN 1..n LOOP
        cols := cols || ('w' || i);
        labels := labels || (names[i] || CASE WHEN i = bi AND n > 1 THEN ' (baseline)' ELSE '' END);
        rcols := rcols || ('w' || i);
        IF i <> bi THEN
            cols := cols || ('d' || i);
            labels := labels || 'Delta, %'::text;
            rcols := rcols || ('d' || i);
        END IF;
    END LOOP;
    FOR m IN
        SELECT * FROM (VALUES
            (1, 'Window', 'window_id', 'id', NULL::text),
            (2, 'Begin (HH:MM:SS)', 'begin_at', 'clock', NULL),
            (3, 'Duration (hh:mm:ss)', 'duration_s', 'duration', NULL),
            (4, 'Active span, s', 'active_s', 'measure', NULL),
            (5, 'Statements/s', 'statements_per_s', 'measure', NULL),
            (6, NULL, NULL, 'measure', 'operations_per_minute'),
            (7, NULL, NULL, 'measure', 'db_time_per_op_ms'),
            (8, 'Mean time of the top statements, ms', 'top_mean_ms', 'measure', NULL),
            (9, 'DB load avg, AAS', 'db_load_avg', 'measure', NULL),
            (10, 'DB load max, sessions', 'db_load_max', 'count', NULL),
            (11, 'CPUs', 'cpus', 'count', NULL),
            (12, 'DB CPU avg, %', 'db_cpu_pct_avg', 'pct', NULL),
            (13, 'DB CPU max, %', 'db_cpu_pct_max', 'pct', NULL),
            (14, 'Connections avg', 'connections_avg', 'measure', NULL),
            (15, 'Connections max', 'connections_max', 'count', NULL),
            (16, 'WAL/s', 'wal_bytes_per_s', 'bytes_s', NULL)) v(o, lbl, k, kind, sub)
        ORDER BY o
    LOOP
        FOREACH op IN ARRAY CASE WHEN m.sub IS NULL THEN ARRAY[NULL::text] ELSE coalesce(ops, '{}') END LOOP
            DECLARE
                r jsonb;
                bv numeric;
                cv jsonb;
                path text[] := CASE WHEN m.sub IS NULL THEN ARRAY[m.k] ELSE ARRAY[m.sub, op] END;
            BEGIN
                r := jsonb_build_object('metric', coalesce(m.lbl, CASE m.sub
                        WHEN 'operations_per_minute' THEN op || ' per minute'
                        ELSE 'DB time per ' || op || ', ms' END));
                bv := CASE WHEN m.kind IN ('id', 'clock') THEN NULL ELSE (ws->(bi - 1) #>> path)::numeric END;
                FOR i IN 1..n LOOP
                    cv := ws->(i - 1) #> path;
                    IF m.sub IS NOT NULL AND cv IS NULL THEN
                        cv := CASE WHEN m.sub = 'operations_per_minute' THEN '0'::jsonb END;
                    ELSIF m.k = 'active_s' AND cv IS NULL THEN
                        -- no span: why, in a word (the note says more)
                        cv := to_jsonb(CASE WHEN ws->(i - 1)->>'active_note' LIKE 'no workload%' THEN 'none'
                                            ELSE 'n/a' END);
                    END IF;
                    r := r || jsonb_build_object('w' || i, CASE WHEN m.kind = 'clock' THEN to_char((cv #>> '{}')::timestamptz, 'HH24:MI:SS')
                                                                ELSE folio_perf_data.fmt_value(cv, m.kind) END);
                    IF i <> bi THEN
                        r := r || jsonb_build_object('d' || i,
                            CASE WHEN bv IS NOT NULL AND bv <> 0 AND jsonb_typeof(cv) = 'number'
                                 THEN folio_perf_data.fmt_value(to_jsonb(round(100 * ((cv #>> '{}')::numeric - bv) / bv, 1)), 'delta_pct')
                                 ELSE '' END);
                    END IF;
                END LOOP;
                rows := rows || r;
            END;
        END LOOP;
    END LOOP;
    secs := secs || jsonb_build_object('title', 'Saturation point', 'id', 'saturation',
        'columns', CASE WHEN (sat->>'assessed')::boolean THEN to_jsonb(ARRAY['previous_level', 'level', 'level_delta_pct',
                            'statements_per_s', 'throughput_delta_pct', 'db_load_avg', 'cpus', 'top_mean_ms', 'criteria'])
                        ELSE '[]'::jsonb END,
        'labels', to_jsonb(ARRAY['From ' || coalesce(key, ''), 'To ' || coalesce(key, ''),
                                 initcap(left(coalesce(key, 'level'), 1)) || substr(coalesce(key, 'level'), 2) || ' Delta, %',
                                 'Statements/s', 'Statements/s Delta, %', 'DB load avg, AAS', 'CPUs',
                                 'Mean time of the top statements, ms', 'Saturation criteria met']),
        'note', CASE WHEN (sat->>'assessed')::boolean
                     THEN 'Each window against the window before it; the first at which a criterion holds is the saturation point.'
                     ELSE sat->>'finding' END,
        'rows', coalesce((SELECT jsonb_agg(s || jsonb_build_object('criteria',
                              coalesce(nullif((SELECT string_agg(c, ', ') FROM jsonb_array_elements_text(s->'criteria') c), ''), 'none'))
                              ORDER BY (s->>'step')::int)
                          FROM jsonb_array_elements(sat->'steps') s), '[]'));
    secs := secs || jsonb_build_object('title', 'Windows side by side', 'id', 'windows',
        'columns', to_jsonb(cols), 'labels', to_jsonb(labels), 'right', to_jsonb(rcols), 'rows', rows,
        'note', format('Delta, %%: against %s%s.', names[bi], CASE WHEN baseline IS NULL THEN ', the first window' ELSE '' END)
                || CASE WHEN key IS NOT NULL THEN format(' The series runs along the tag %s.', key) ELSE '' END
                || ' Active span: the part of the window in which the workload ran (bursts of active sessions of a second or more); none: no such burst, n/a: no sampler data.');
    -- the settings that differ
    cols := ARRAY['name'];
    labels := ARRAY['Setting'];
    FOR i IN 1..n LOOP
        cols := cols || ('w' || i);
        labels := labels || names[i];
    END LOOP;
    secs := secs || jsonb_build_object('title', 'Settings that differ', 'id', 'settings',
        'columns', to_jsonb(cols), 'labels', to_jsonb(labels),
        'note', CASE WHEN jsonb_array_length(doc->'settings_differ') = 0
                     THEN 'Every window ran with the same server settings (non-default settings at each window''s end).'
                     ELSE 'The server''s non-default settings at each window''s end that are not the same in every window ((default): at PostgreSQL''s default in that window, or no settings were stored with it).' END,
        'rows', coalesce((SELECT jsonb_agg((SELECT jsonb_object_agg(k, v) FROM (
                              SELECT 'name' AS k, to_jsonb(d->>'name') AS v
                              UNION ALL
                              SELECT 'w' || o, CASE WHEN jsonb_typeof(x) = 'null' THEN to_jsonb(''::text) ELSE x END
                              FROM jsonb_array_elements(d->'values') WITH ORDINALITY e(x, o)) kv)
                              ORDER BY d->>'name' COLLATE "C")
                          FROM jsonb_array_elements(doc->'settings_differ') d), '[]'));
    -- the top statements' mean time per window
    cols := ARRAY['tenant', 'module'];
    labels := ARRAY['Tenant', 'Module'];
    FOR i IN 1..n LOOP
        cols := cols || ('m' || i);
        labels := labels || ('Mean ' || names[i] || ', ms');
        IF i <> bi THEN
            cols := cols || ('d' || i);
            labels := labels || 'Delta, %'::text;
        END IF;
    END LOOP;
    cols := cols || 'query'::text;
    labels := labels || 'Statement'::text;
    secs := secs || jsonb_build_object('title', 'Top statements across the series', 'id', 'top',
        'columns', to_jsonb(cols), 'labels', to_jsonb(labels),
        'right', (SELECT jsonb_agg(c) FROM unnest(cols) c WHERE c ~ '^[md][0-9]+$'),
        'note', 'The five statements with the most execution time in all windows together, matched by text and tenant; their mean execution time in each window (empty: not run in it).',
        'rows', coalesce((SELECT jsonb_agg(jsonb_build_object('tenant', t->'tenant', 'module', t->'module', 'query', t->'query')
                              || (SELECT jsonb_object_agg('m' || (p->>'step'), folio_perf_data.fmt_value(p->'mean_exec_ms', 'ms'))
                                  FROM jsonb_array_elements(t->'per_window') p)
                              || (SELECT coalesce(jsonb_object_agg('d' || (p->>'step'),
                                      CASE WHEN (b->>'mean_exec_ms')::numeric > 0 AND p->>'mean_exec_ms' IS NOT NULL
                                           THEN folio_perf_data.fmt_value(to_jsonb(round(100 * ((p->>'mean_exec_ms')::numeric - (b->>'mean_exec_ms')::numeric)
                                                                                         / (b->>'mean_exec_ms')::numeric, 1)), 'delta_pct')
                                           ELSE '' END), '{}')
                                  FROM jsonb_array_elements(t->'per_window') p, LATERAL (SELECT t->'per_window'->(bi - 1) AS b) z
                                  WHERE (p->>'step')::int <> bi)
                              ORDER BY (t->>'n')::int)
                          FROM jsonb_array_elements(doc->'top_statements') t), '[]'));
    secs := secs || jsonb_build_object('title', 'Verdict per window', 'id', 'verdicts',
        'columns', '["name", "window_id", "label", "tags", "begin_at", "finding"]'::jsonb,
        'labels', '["Window", "Id", "Label", "Tags", "Begin", "Headline"]'::jsonb,
        'rows', (SELECT jsonb_agg(jsonb_build_object('name', r->'name', 'window_id', r->'window_id', 'label', r->'label',
                     'begin_at', r->'begin_at',
                     'tags', (SELECT string_agg(t.key || ': ' || t.value, ', ' ORDER BY t.key) FROM jsonb_each_text(r->'tags') t),
                     'finding', r->'headline') ORDER BY o)
                 FROM jsonb_array_elements(ws) WITH ORDINALITY x(r, o)));

    qmap := folio_perf_data.sql_refs(secs);
    IF fmt = 'html' THEN
        mark := CASE WHEN (sat->>'saturated')::boolean THEN (sat->>'step')::int END;
        SELECT max((r->>'cpus')::numeric) INTO cpus FROM jsonb_array_elements(ws) r;
        xt := coalesce(key, 'Window');
        -- a step-load series' points are its levels (the axis title names
        -- the key), others' their names; each point's title its name
        xl := CASE WHEN key IS NOT NULL
                   THEN ARRAY(SELECT folio_perf_data.fmt_sig((r->>'level')::numeric) FROM jsonb_array_elements(ws) WITH ORDINALITY x(r, o) ORDER BY o)
                   ELSE names END;
        out := out || (replace(folio_perf_data.html_head(title), '</style>',
                   '.sgrid{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));gap:6px 22px}'
                   || '.sat{stroke:#6a1b9a;stroke-width:2;stroke-dasharray:5 3}.satl{font-size:12px;fill:#6a1b9a;font-weight:600}'
                   || '.finding{border:1px solid #d5dbe1;border-radius:6px;padding:8px 12px;margin:10px 0;background:#f8fafb;font-size:15px}'
                   || '.finding.warn{border-color:#e0a100;background:#fff8e1}</style>')
            || '<header><h1>' || folio_perf_data.html_escape(folio_perf_data.fold(title)) || '</h1>'
            || '<p class="sub">' || n || ' windows' || CASE WHEN key IS NOT NULL THEN ' along the tag ' || folio_perf_data.html_escape(key) ELSE '' END
            || '; Delta, % against ' || folio_perf_data.html_escape(folio_perf_data.fold(names[bi])) || '.</p>'
            || '<div class="finding' || CASE WHEN (sat->>'saturated')::boolean THEN ' warn' ELSE '' END || '">'
            || folio_perf_data.html_escape(folio_perf_data.fold(sat->>'finding')) || '</div></header>'
            || '<nav class="toc"><h2>Contents</h2><ol><li><a href="#charts">Charts</a></li>'
            || (SELECT string_agg(format('<li><a href="#%s">%s</a></li>', coalesce(s->>'id', folio_perf_data.slug(s->>'title')), folio_perf_data.html_escape(s->>'title')), '')
                FROM unnest(secs) s)
            || E'<li><a href="#sql">SQL</a></li></ol></nav>\n'
            || '<section id="charts"><h2>Charts</h2><div class="sgrid">'
            || folio_perf_data.svg_series_chart('Throughput', xl,
                   jsonb_build_array(jsonb_build_object('name', 'Statements/s',
                       'values', (SELECT jsonb_agg(r->'statements_per_s' ORDER BY o) FROM jsonb_array_elements(ws) WITH ORDINALITY x(r, o)))),
                   jsonb_build_object('titles', to_jsonb(names), 'ytitle', 'Statements/s', 'xtitle', xt, 'mark', mark))
            || folio_perf_data.svg_series_chart('DB load (average active sessions)', xl,
                   jsonb_build_array(
                       jsonb_build_object('name', 'DB load avg', 'values', (SELECT jsonb_agg(r->'db_load_avg' ORDER BY o) FROM jsonb_array_elements(ws) WITH ORDINALITY x(r, o))),
                       jsonb_build_object('name', 'DB load max', 'values', (SELECT jsonb_agg(r->'db_load_max' ORDER BY o) FROM jsonb_array_elements(ws) WITH ORDINALITY x(r, o)))),
                   jsonb_build_object('titles', to_jsonb(names), 'ytitle', 'Sessions', 'xtitle', xt, 'mark', mark, 'hline', cpus,
                                      'hline_label', coalesce(cpus || ' CPUs', '')))
            || folio_perf_data.svg_series_chart('DB CPU', xl,
                   jsonb_build_array(
                       jsonb_build_object('name', 'DB CPU avg', 'values', (SELECT jsonb_agg(r->'db_cpu_pct_avg' ORDER BY o) FROM jsonb_array_elements(ws) WITH ORDINALITY x(r, o))),
                       jsonb_build_object('name', 'DB CPU max', 'values', (SELECT jsonb_agg(r->'db_cpu_pct_max' ORDER BY o) FROM jsonb_array_elements(ws) WITH ORDINALITY x(r, o)))),
                   jsonb_build_object('titles', to_jsonb(names), 'ytitle', '% of the host', 'xtitle', xt, 'mark', mark))
            || folio_perf_data.svg_series_chart('Connections', xl,
                   jsonb_build_array(
                       jsonb_build_object('name', 'Connections max', 'values', (SELECT jsonb_agg(r->'connections_max' ORDER BY o) FROM jsonb_array_elements(ws) WITH ORDINALITY x(r, o))),
                       jsonb_build_object('name', 'Connections avg', 'values', (SELECT jsonb_agg(r->'connections_avg' ORDER BY o) FROM jsonb_array_elements(ws) WITH ORDINALITY x(r, o)))),
                   jsonb_build_object('titles', to_jsonb(names), 'ytitle', 'Connections', 'xtitle', xt, 'mark', mark, 'integral', true))
            || CASE WHEN cardinality(ops) > 0 THEN folio_perf_data.svg_series_chart('DB time per operation', xl,
                   (SELECT jsonb_agg(jsonb_build_object('name', o.op,
                        'values', (SELECT jsonb_agg(r#>ARRAY['db_time_per_op_ms', o.op] ORDER BY x) FROM jsonb_array_elements(ws) WITH ORDINALITY y(r, x))) ORDER BY o.op)
                    FROM unnest(ops) o(op)),
                   jsonb_build_object('titles', to_jsonb(names), 'ytitle', 'ms per operation', 'xtitle', xt, 'mark', mark)) ELSE '' END
            || folio_perf_data.svg_series_chart('Mean time of the top statements', xl,
                   jsonb_build_array(jsonb_build_object('name', 'Top statements, mean',
                       'values', (SELECT jsonb_agg(r->'top_mean_ms' ORDER BY o) FROM jsonb_array_elements(ws) WITH ORDINALITY x(r, o)))),
                   jsonb_build_object('titles', to_jsonb(names), 'ytitle', 'ms', 'xtitle', xt, 'mark', mark))
            || E'</div></section>\n');
        FOREACH sec IN ARRAY secs LOOP
            out := out || folio_perf_data.render_section('html', sec, qmap);
        END LOOP;
        out := out || folio_perf_data.sql_appendix('html', qmap, secs) || folio_perf_data.html_foot();
        RETURN array_to_string(out, '');
    END IF;
    -- the saturation point under the title (when not assessed, the
    -- section says why)
    out := out || CASE fmt WHEN 'markdown' THEN '## ' || folio_perf_data.md_escape(title) || E'\n\n'
                                                || CASE WHEN (sat->>'assessed')::boolean THEN folio_perf_data.md_escape(sat->>'finding') || E'\n\n' ELSE '' END
                           ELSE folio_perf_data.fold(title) || E'\n' || repeat('#', length(folio_perf_data.fold(title))) || E'\n'
                                || CASE WHEN (sat->>'assessed')::boolean THEN folio_perf_data.fold(sat->>'finding') || E'\n' ELSE '' END
                                || E'\n' END;
    FOREACH sec IN ARRAY secs LOOP
        out := out || folio_perf_data.render_section(fmt, sec, qmap);
    END LOOP;
    out := out || folio_perf_data.sql_appendix(fmt, qmap, secs);
    RETURN array_to_string(out, '');
END
$$;
