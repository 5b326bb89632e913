/* sql/parts/120_rendering.sql - rendering: escaping, number formats, sections as text/markdown/html, SVG charts */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)

------------------------------------------------------------------------
--
-- Every document is built as one jsonb value first (the "json" format,
-- whose keys are documented and stable); the text, markdown and html
-- formats render that value.  A section is an object
--   {"title": ..., "columns": [...], "rows": [{...}, ...], "note": ...,
--    "labels": [...], "right": [...], "worse_up": [...]}
-- so that one renderer serves every table.  "labels" are the headers
-- (else col_label() of each column), "right" columns holding numbers
-- already formatted as text (else a column is right-aligned when all its
-- values are numbers), "worse_up" delta columns where a rise is a
-- regression (html colours them).
--
-- One rule per kind of number (fmt_value): counts as integers with
-- thousands separators; times in ms and other measures to three
-- significant digits (at most three decimals); percentages to one
-- decimal; changes in percent with a sign and "%"; bytes in B, kB, MB,
-- GB, TB (binary multiples, one decimal below 10); durations as
-- hh:mm:ss; never trailing zeros.
--
-- Statement texts: tables show the start of the text and a reference
-- [Qn] to the numbered "SQL" appendix, which gives every text in full
-- once (qmap: text -> n, built by sql_refs()).
------------------------------------------------------------------------

-- The helpers below format one value each and are called for every cell:
-- fold, html_escape, html_wrap, md_escape, col_kind, fmt_value, sql_start
-- and render_section itself are C (src/render.c; fmt_num, fmt_sig and
-- fmt_bytes src/format.c), the steps of the PL/pgSQL they replaced, which
-- the regression test reports keeps and compares them with; a regular
-- expression whose classes depend on the locale (non-ASCII text) runs as
-- the PL/pgSQL's did, in the default collation.  A PL/pgSQL helper (with
-- its search_path pinned, as every function here) costs some microseconds
-- a call, and a report renders 7,000 cells.

-- Escape for HTML text and attribute values.
CREATE FUNCTION folio_perf_data.html_escape(s text)
RETURNS text
LANGUAGE C IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'folio_perf_html_escape';

-- One line of text: CR, LF and tabs become spaces, other control
-- characters (terminal escapes) "?".
CREATE FUNCTION folio_perf_data.fold(s text)
RETURNS text
LANGUAGE C IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'folio_perf_fold';

-- Markdown inline text (table cells, headings, notes): one line, the
-- backslash first, then the markdown punctuation that acts inside a line
-- (emphasis, code, links, cell breaks, strike-through, headings; an
-- underscore only at the start or end of a word) escaped
-- with a backslash, and "&" and "<" as entities, so that nothing in
-- a label, a table name or a statement becomes markup, a link, a heading
-- or a cell break.  ">" stays as it is: without a "<" it opens no tag and
-- no autolink, and inside a line it is no block quote (folding to one line
-- leaves no text at a line start, where list and block markers would act),
-- so "->" and "->>" read as written in every renderer, also those that
-- show entities literally.
CREATE FUNCTION folio_perf_data.md_escape(s text)
RETURNS text
LANGUAGE C IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'folio_perf_md_escape';

-- HTML-escaped text that may break after "_", ".", "," and "(" (long
-- identifiers and statements wrap in narrow table cells).
CREATE FUNCTION folio_perf_data.html_wrap(s text)
RETURNS text
LANGUAGE C IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'folio_perf_html_wrap';

-- A markdown fenced code block: the fence is longer than any run of
-- backticks in the text, so the text cannot close it.
CREATE FUNCTION folio_perf_data.md_code(s text, info text DEFAULT 'sql')
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT f || coalesce(info, '') || E'\n' || regexp_replace(coalesce(s, ''), '\r\n?', E'\n', 'g')
         || E'\n' || f || E'\n'
  FROM (SELECT repeat('`', greatest(3, coalesce((SELECT max(length(m[1]))
                                                  FROM regexp_matches(coalesce(s, ''), '(`+)', 'g') m), 0) + 1)) AS f) x
$$;

-- A title in a format: markdown and html escaped, all one line.
CREATE FUNCTION folio_perf_data.esc(fmt text, s text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN CASE fmt WHEN 'markdown' THEN folio_perf_data.md_escape(s)
                  WHEN 'html' THEN folio_perf_data.html_escape(folio_perf_data.fold(s))
                  ELSE folio_perf_data.fold(s) END;
END
$$;

-- A number with thousands separators, rounded to digits decimals,
-- without trailing zeros ('' for NULL).  In C (src/format.c), through the
-- same built-in functions as the PL/pgSQL it replaced: round, abs, the
-- numeric's text, trunc, to_char(..., 'FM999,999,999,999,999,999,990').
CREATE FUNCTION folio_perf_data.fmt_num(n numeric, digits int)
RETURNS text
LANGUAGE C IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'folio_perf_fmt_num';

-- Three significant digits, at most three decimals (fmt_num with 0
-- decimals from 100 on, 1 from 10, 2 from 1, else 3; C, src/format.c).
CREATE FUNCTION folio_perf_data.fmt_sig(n numeric)
RETURNS text
LANGUAGE C IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'folio_perf_fmt_sig';

-- Bytes in B, kB, MB, GB, TB (multiples of 1024; one decimal below 10;
-- C, src/format.c).
CREATE FUNCTION folio_perf_data.fmt_bytes(n numeric)
RETURNS text
LANGUAGE C IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'folio_perf_fmt_bytes';

-- Seconds as hh:mm:ss (hours may pass 24).
CREATE FUNCTION folio_perf_data.fmt_duration(s numeric)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t bigint := pg_catalog.round(pg_catalog.abs(s))::bigint;
BEGIN
    IF s IS NULL THEN
        RETURN '';
    END IF;
    RETURN CASE WHEN s < 0 THEN '-' ELSE '' END
        || pg_catalog.lpad((t / 3600)::text, 2, '0') || ':' || pg_catalog.lpad((t / 60 % 60)::text, 2, '0')
        || ':' || pg_catalog.lpad((t % 60)::text, 2, '0');
END
$$;

-- The kind of a column, by its name: how its numbers are formatted.
CREATE FUNCTION folio_perf_data.col_kind(col text)
RETURNS text
LANGUAGE C IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'folio_perf_col_kind';

-- A column's header in words, with its unit.
CREATE FUNCTION folio_perf_data.col_label(col text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce((SELECT l FROM (VALUES
    ('rank', '#'), ('tenant', 'Tenant'), ('module', 'Module'), ('calls', 'Calls'),
    ('total_exec_ms', 'Total, ms'), ('mean_exec_ms', 'Mean, ms'), ('stddev_exec_ms', 'Stddev, ms'),
    ('rows', 'Rows'), ('pct_of_total_time', 'Time, %'), ('shared_blks_read', 'Blocks read'),
    ('shared_blks_hit', 'Blocks hit'), ('temp_blks_written', 'Temp blocks written'),
    ('wal_bytes', 'WAL'), ('wal_bytes_per_s', 'WAL/s'), ('load', 'Load, AAS'),
    ('status', 'Status'), ('query', 'Statement'), ('relname', 'Table'),
    ('inserts', 'Inserts'), ('updates', 'Updates'), ('deletes', 'Deletes'),
    ('seq_scan', 'Seq scans'), ('idx_scan', 'Index scans'), ('blks_read', 'Blocks read'),
    ('size_end', 'Size'), ('growth', 'Growth'), ('live_tup', 'Live rows'), ('dead_tup', 'Dead rows'),
    ('statement_calls', 'Calls'), ('statement_time_ms', 'Statement time, ms'), ('flags', 'Flags'),
    ('tenants', 'Tenants'), ('entity', 'Records of'), ('records', 'Records'),
    ('dimension', 'By'), ('key', 'Key'), ('avg', 'Avg'), ('p95', 'P95'), ('max', 'Max'),
    ('pct_of_max_connections', 'Max of max_connections, %'), ('aas', 'Load, AAS'),
    ('pct_of_load', 'Load, %'), ('cpu_seconds', 'CPU, s'), ('pct_of_host_capacity', 'Host capacity, %'),
    ('pct_of_db_cpu', 'DB CPU, %'), ('first_calls', 'Calls, 1st half'), ('last_calls', 'Calls, 2nd half'),
    ('first_mean_ms', 'Mean 1st half, ms'), ('last_mean_ms', 'Mean 2nd half, ms'),
    ('mean_change_pct', 'Change, %'), ('severity', 'Severity'), ('check', 'Check'),
    ('finding', 'Finding'), ('flag', 'Flag'), ('detail', 'Detail'), ('metric', 'Metric'),
    ('value', 'Value'), ('wait_event', 'Wait event'), ('level', 'Level'),
    ('base_plan', 'Base plan'), ('new_plan', 'New plan'), ('plan', 'Plan'),
    ('duration_s', 'Duration (hh:mm:ss)'), ('commits', 'Commits'), ('commits_per_s', 'Commits/s'),
    ('rollbacks', 'Rollbacks'), ('cache_hit_ratio', 'Cache hit ratio, %'),
    ('tup_inserted', 'Rows inserted'), ('tup_updated', 'Rows updated'), ('tup_deleted', 'Rows deleted'),
    ('temp_files', 'Temp files'), ('temp_bytes', 'Temp file bytes'), ('deadlocks', 'Deadlocks'),
    ('checkpoints_timed', 'Checkpoints (timed)'), ('checkpoints_req', 'Checkpoints (requested)'),
    ('db_size_begin', 'DB size at begin'), ('db_size_end', 'DB size at end'),
    ('statements_total_ms', 'Statement time, ms'), ('statements_per_s', 'Statements/s'),
    ('cpus', 'CPUs'), ('host_cpu_pct', 'Host CPU, %'), ('db_cpu_pct', 'DB CPU, %'),
    ('connections_avg', 'Connections avg'), ('connections_p95', 'Connections p95'),
    ('connections_max', 'Connections max'), ('max_connections', 'max_connections'),
    ('db_load_avg', 'DB load avg, AAS'), ('db_load_max', 'DB load max, sessions'),
    ('section', 'Section'), ('attributed_by', 'Attributed by'),
    ('operation', 'Operation'), ('count', 'Count'), ('per_minute', 'Per minute'),
    ('db_time_ms', 'DB time, ms'), ('db_time_per_op_ms', 'DB time per operation, ms'),
    ('statements_per_op', 'Statements per operation'), ('rows_written_per_op', 'Rows written per operation'),
    ('wal_bytes_per_op', 'WAL per operation'), ('source', 'Source'),
    ('records_per_minute', 'Records/min')) v(c, l) WHERE v.c = col),
    -- else the name itself, in words: "In window", "Db time per op ms"
    upper(left(replace(col, '_', ' '), 1)) || substr(replace(col, '_', ' '), 2))
$$;

-- One value as text by its kind (see the rules at the top).
CREATE FUNCTION folio_perf_data.fmt_value(v jsonb, kind text)
RETURNS text
LANGUAGE C IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'folio_perf_fmt_value';

-- Kept for callers outside the renderer: one cell as text.
CREATE FUNCTION folio_perf_data.cell(v jsonb, col text, fmt text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN CASE WHEN col = 'query' THEN folio_perf_data.fold(v #>> '{}')
              ELSE folio_perf_data.fold(folio_perf_data.fmt_value(v, folio_perf_data.col_kind(col))) END;
END
$$;

-- The start of a statement, one line, at most n characters.
CREATE FUNCTION folio_perf_data.sql_start(q text, n int)
RETURNS text
LANGUAGE C IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'folio_perf_sql_start';

/*
 * The statement texts of sections, numbered in the order they first
 * appear: {"<text>": n}.  Hidden texts (<insufficient privilege>) get no
 * number.
 */
CREATE FUNCTION folio_perf_data.sql_refs(secs jsonb[])
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT coalesce(jsonb_object_agg(q, n), '{}')
  FROM (SELECT q, row_number() OVER (ORDER BY first) AS n
        FROM (SELECT r->>'query' AS q, min(si * 100000 + ri) AS first
              FROM unnest(secs) WITH ORDINALITY AS s(sec, si),
                   jsonb_array_elements(coalesce(s.sec->'rows', '[]')) WITH ORDINALITY AS x(r, ri)
              WHERE s.sec->'columns' ? 'query' AND jsonb_typeof(r->'query') = 'string'
                AND r->>'query' <> '<insufficient privilege>' AND btrim(r->>'query') <> ''
              GROUP BY 1) y) z
$$;

/*
 * The "SQL" appendix: every numbered statement in full, once.  who:
 * {"<text>": "tenant / module"} from the rows that show it.
 */
CREATE FUNCTION folio_perf_data.sql_appendix(fmt text, qmap jsonb, secs jsonb[])
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    r record;
    out text[] := '{}';
BEGIN
    IF qmap IS NULL OR qmap = '{}'::jsonb THEN
        RETURN '';
    END IF;
    FOR r IN
        -- who shows each text: one pass over the sections' rows (not one
        -- per text)
        WITH w AS (
            SELECT x->>'query' AS q,
                   string_agg(DISTINCT coalesce(x->>'tenant' || ' / ', '') || coalesce(x->>'module', '(unattributed)'), ', ') AS who
            FROM unnest(secs) s, jsonb_array_elements(coalesce(s->'rows', '[]')) x
            WHERE x->>'query' IS NOT NULL
            GROUP BY 1
        )
        SELECT q.key AS q, q.value::int AS n, w.who
        FROM jsonb_each_text(qmap) q LEFT JOIN w ON w.q = q.key
        ORDER BY q.value::int
    LOOP
        IF fmt = 'html' THEN
            out := out || format('<div class="sql" id="q%s"><p><b>Q%s</b> %s</p><pre>%s</pre></div>',
                                 r.n, r.n, folio_perf_data.html_escape(folio_perf_data.fold(r.who)),
                                 folio_perf_data.html_escape(r.q));
        ELSIF fmt = 'markdown' THEN
            out := out || ('**Q' || r.n || '** ' || folio_perf_data.md_escape(r.who) || E'\n\n'
                           || folio_perf_data.md_code(r.q));
        ELSE
            out := out || ('[Q' || r.n || '] ' || folio_perf_data.fold(r.who) || E'\n'
                           || regexp_replace(regexp_replace(r.q, '[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]', '?', 'g'),
                                             '^', '    ', 'gn') || E'\n');
        END IF;
    END LOOP;
    RETURN CASE fmt WHEN 'html' THEN E'<section id="sql"><h2>SQL</h2>\n<p class="note">Every statement of the tables in full; the tables refer to them as Q1, Q2, ...</p>\n'
                                     || array_to_string(out, E'\n') || E'\n</section>\n'
                    WHEN 'markdown' THEN E'### SQL\n\nEvery statement of the tables in full; the tables refer to them as [Q1], [Q2], ...\n\n'
                                     || array_to_string(out, E'\n') || E'\n'
                    ELSE E'SQL\n===\n' || array_to_string(out, E'\n') || E'\n' END;
END
$$;

-- An anchor id from a title.
CREATE FUNCTION folio_perf_data.slug(s text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT 's-' || trim(BOTH '-' FROM regexp_replace(lower(coalesce(s, '')), '[^a-z0-9]+', '-', 'g'))
$$;

/*
 * Render one section: a title, an optional note, and a table of the given
 * columns.  text: aligned for psql; markdown: a pipe table; html: a table.
 * In C (src/render.c): the steps of the PL/pgSQL it replaced (kept in the
 * regression test reports, which compares the two), cell by cell through
 * fold, fmt_value, html_escape, html_wrap, md_escape and sql_start as
 * above.
 */
CREATE FUNCTION folio_perf_data.render_section(fmt text, sec jsonb, qmap jsonb DEFAULT '{}')
RETURNS text
LANGUAGE C IMMUTABLE PARALLEL SAFE
AS 'MODULE_PATHNAME', 'folio_perf_render_section';

-- A section value from a query's rows (a jsonb array of objects).
CREATE FUNCTION folio_perf_data.section(title text, cols text[], rows jsonb, note text DEFAULT NULL)
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT jsonb_strip_nulls(jsonb_build_object('title', title, 'columns', to_jsonb(cols),
                                              'note', note))
         || jsonb_build_object('rows', coalesce(rows, '[]'::jsonb))
$$;

CREATE FUNCTION folio_perf_data.check_format(fmt text)
RETURNS void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF fmt IS NULL OR fmt NOT IN ('text', 'markdown', 'json', 'html') THEN
        RAISE EXCEPTION 'unknown format "%"', coalesce(fmt, 'NULL')
            USING ERRCODE = 'invalid_parameter_value',
                  HINT = 'Use one of text, markdown, json, html.';
    END IF;
END
$$;

-- Round tick values for an axis from 0 to at least vmax: about 5 steps of
-- 1, 2, 2.5 or 5 times a power of ten, and never fewer than 4 labels.
CREATE FUNCTION folio_perf_data.nice_ticks(vmax numeric, integral boolean,
    OUT step numeric, OUT top numeric)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    raw numeric := greatest(coalesce(vmax, 0), 1e-6) / 5;
    mag numeric := 10::numeric ^ floor(log(raw));
    m numeric;
BEGIN
    FOREACH m IN ARRAY ARRAY[1, 2, 2.5, 5, 10] LOOP
        step := m * mag;
        EXIT WHEN step >= raw;
    END LOOP;
    IF integral AND step < 1 THEN
        step := 1;
    END IF;
    top := greatest(ceil(greatest(coalesce(vmax, 0), 1e-6) / step), 3) * step;
END
$$;

/*
 * An inline SVG chart of time-series rows {bucket, bucket_start,
 * bucket_end, series, value}: one line per series, or stacked areas.
 * opts: {"ytitle": axis title with unit, "integral": true for counts,
 * "max_series": series beyond it summed as "other", "hline": a value
 * drawn as a dashed line (the CPU count), "hline_label": its legend,
 * "t0", "t1": the window, which the x axis spans even where no sample is}.
 * The x axis is in the session's time zone, which the axis title names.
 */
CREATE FUNCTION folio_perf_data.svg_chart(title text, pts jsonb, stacked boolean, opts jsonb DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wd int := 1200;
    ml int := 76;
    mr int := 40;
    mt int := 34;
    ph int := 250;
    pw int := wd - ml - mr;
    palette text[] := ARRAY['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd',
                            '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#aec7e8'];
    maxs int := coalesce((opts->>'max_series')::int, 10);
    integral boolean := coalesce((opts->>'integral')::boolean, false);
    hline numeric := (opts->>'hline')::numeric;
    t0 timestamptz;
    t1 timestamptz;
    b0 int;
    b1 int;
    bw numeric;
    span numeric;
    ymax numeric;
    yt record;
    series text[];
    nser int;
    s text;
    si int := 0;
    svg text[] := '{}';
    pts_txt text;
    base_txt text;
    r record;
    xstep numeric;
    tk numeric;
    x numeric;
    y numeric;
    lead numeric := 0;
    xfmt text := 'HH24:MI:SS';
    xlw numeric;
    ht int;
    legend_rows int;
    tz text := current_setting('TimeZone');
BEGIN
    IF pts IS NULL OR jsonb_array_length(pts) = 0 THEN
        RETURN '';
    END IF;
    SELECT min((p->>'bucket_start')::timestamptz), max((p->>'bucket_end')::timestamptz),
           min((p->>'bucket')::int), max((p->>'bucket')::int),
           max(extract(epoch FROM (p->>'bucket_end')::timestamptz - (p->>'bucket_start')::timestamptz))
    INTO t0, t1, b0, b1, bw FROM jsonb_array_elements(pts) p;
    -- the axis spans the window (opts t0, t1) when given; buckets without
    -- a value up to its end count 0 (an idle tail has no sessions)
    IF opts->>'t1' IS NOT NULL AND (opts->>'t1')::timestamptz > t1 AND bw > 0 THEN
        b1 := b1 + ceil(extract(epoch FROM (opts->>'t1')::timestamptz - t1) / bw)::int;
        t1 := least(t1 + (b1 - (SELECT max((p->>'bucket')::int) FROM jsonb_array_elements(pts) p)) * bw * interval '1 second',
                    (opts->>'t1')::timestamptz);
    END IF;
    -- and starts at the window's begin (opts t0): buckets before the first
    -- sample are left empty, not drawn as 0 (the sampler was not running)
    IF opts->>'t0' IS NOT NULL AND (opts->>'t0')::timestamptz < t0 THEN
        lead := extract(epoch FROM t0 - (opts->>'t0')::timestamptz);
        t0 := (opts->>'t0')::timestamptz;
    END IF;
    span := greatest(extract(epoch FROM t1 - t0), 1);
    -- series by their total, the largest first (and at the bottom of a
    -- stack); those beyond max_series are summed as "other"
    series := ARRAY(SELECT p->>'series' FROM jsonb_array_elements(pts) p
                    GROUP BY 1 ORDER BY sum((p->>'value')::numeric) DESC, 1);
    nser := least(coalesce(array_length(series, 1), 0), maxs);
    IF coalesce(array_length(series, 1), 0) > maxs THEN
        series := series[1:maxs - 1] || 'other'::text;
    END IF;
    WITH v AS (
        SELECT (p->>'bucket_start')::timestamptz AS b,
               CASE WHEN p->>'series' = ANY (series) THEN p->>'series' ELSE 'other' END AS ser,
               (p->>'value')::numeric AS val
        FROM jsonb_array_elements(pts) p)
    SELECT CASE WHEN stacked THEN (SELECT max(t) FROM (SELECT sum(val) AS t FROM v GROUP BY b) z)
                ELSE (SELECT max(t) FROM (SELECT sum(val) AS t FROM v GROUP BY b, ser) z) END
    INTO ymax;
    ymax := greatest(coalesce(ymax, 0), coalesce(hline, 0));
    yt := folio_perf_data.nice_ticks(ymax, integral);
    legend_rows := ceil((array_length(series, 1) + CASE WHEN hline IS NOT NULL THEN 1 ELSE 0 END) / 4.0);
    ht := mt + ph + 56 + 18 * legend_rows;

    svg := svg || format('<figure id="%s"><svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %s %s" role="img" aria-label="%s">',
                         folio_perf_data.slug(title), wd, ht, folio_perf_data.html_escape(folio_perf_data.fold(title)))
        || format('<text x="%s" y="18" class="ct">%s</text>', ml, folio_perf_data.html_escape(folio_perf_data.fold(title)))
        || format('<rect x="%s" y="%s" width="%s" height="%s" class="pa"/>', ml, mt, pw, ph);
    -- y axis: grid lines and labels at round values, the axis title
    tk := 0;
    WHILE tk <= yt.top + yt.step / 1000 LOOP
        y := round(mt + ph - ph * tk / yt.top, 1);
        svg := svg || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="gl"/><text x="%s" y="%s" class="ax yt" text-anchor="end">%s</text>',
                             ml, y, ml + pw, y, ml - 6, y + 4, folio_perf_data.fmt_num(tk, 3));
        tk := tk + yt.step;
    END LOOP;
    svg := svg || format('<text transform="translate(16 %s) rotate(-90)" class="at" text-anchor="middle">%s</text>',
                         mt + ph / 2, folio_perf_data.html_escape(coalesce(opts->>'ytitle', '')));
    -- x axis: ticks at round times (1 s ... 1 day apart), 4 to 10 of them
    -- with the axis' ends; under 3 s, tenths of a second
    SELECT m INTO xstep FROM unnest(ARRAY[0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600,
                                          7200, 10800, 21600, 43200, 86400]::numeric[]) m
    WHERE span / m <= 10 ORDER BY m LIMIT 1;
    xstep := coalesce(xstep, 86400);
    IF span >= 3 THEN
        xstep := greatest(xstep, 1);
    END IF;
    IF span / xstep < 4 AND xstep > 1 THEN
        xstep := greatest(1, floor(span / 4));
    END IF;
    IF xstep < 1 THEN
        xfmt := 'HH24:MI:SS.FF1';
    END IF;
    -- the axis' begin and end are labelled too; a round tick's label
    -- (centred) is left out where it would touch theirs (start- and
    -- end-anchored): it needs one and a half label widths and a gap
    -- (xlw: the width of an HH:MM:SS[.F] label at the axis' 12 px, with
    -- room to spare)
    xlw := 7.5 * length(to_char(t0, xfmt));
    svg := svg || format('<text x="%s" y="%s" class="ax xt" text-anchor="start">%s</text><text x="%s" y="%s" class="ax xt" text-anchor="end">%s</text>',
                         ml, mt + ph + 18, to_char(t0, xfmt), ml + pw, mt + ph + 18, to_char(t1, xfmt));
    tk := ceil(extract(epoch FROM t0) / xstep) * xstep;
    WHILE tk <= extract(epoch FROM t1) LOOP
        x := round(ml + pw * (tk - extract(epoch FROM t0)) / span, 1);
        svg := svg || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="gl"/>', x, mt, x, mt + ph + 4)
            || CASE WHEN x - ml >= 1.5 * xlw + 8 AND ml + pw - x >= 1.5 * xlw + 8
                    THEN format('<text x="%s" y="%s" class="ax xt" text-anchor="middle">%s</text>',
                                x, mt + ph + 18, to_char(to_timestamp(tk), xfmt)) ELSE '' END;
        tk := tk + xstep;
    END LOOP;
    svg := svg || format('<text x="%s" y="%s" class="at" text-anchor="middle">%s</text>',
                         ml + pw / 2, mt + ph + 38,
                         folio_perf_data.html_escape(format('Time (HH:MM:SS, %s), %s to %s', tz,
                             to_char(t0, 'YYYY-MM-DD HH24:MI:SS'), to_char(t1, 'YYYY-MM-DD HH24:MI:SS'))));
    -- the series, as steps over their buckets: one pass over the points
    -- (bucket x series grid, cumulated for stacks)
    FOR r IN
        WITH v AS (
            SELECT (p->>'bucket')::int AS g,
                   coalesce(array_position(series, p->>'series'), array_length(series, 1)) AS si,
                   (p->>'value')::numeric AS val
            FROM jsonb_array_elements(pts) p
        ), agg AS (
            SELECT gr.g, gs.si, coalesce(sum(v.val), 0) AS val
            FROM generate_series(b0, b1) AS gr(g) CROSS JOIN generate_series(1, array_length(series, 1)) AS gs(si)
            LEFT JOIN v ON v.g = gr.g AND v.si = gs.si
            GROUP BY gr.g, gs.si
        ), cum AS (
            SELECT agg.g, agg.si,
                   CASE WHEN stacked THEN sum(agg.val) OVER (PARTITION BY agg.g ORDER BY agg.si) ELSE agg.val END AS top,
                   CASE WHEN stacked THEN sum(agg.val) OVER (PARTITION BY agg.g ORDER BY agg.si) - agg.val ELSE 0 END AS bot
            FROM agg
        ), xy AS (
            SELECT cum.g, cum.si,
                   round(ml + pw * least(lead + (cum.g - b0) * bw, span) / span, 1) AS x0,
                   round(ml + pw * least(lead + (cum.g - b0 + 1) * bw, span) / span, 1) AS x1,
                   round(mt + ph - ph * cum.top / yt.top, 1) AS y_top,
                   round(mt + ph - ph * cum.bot / yt.top, 1) AS y_bot
            FROM cum)
        SELECT xy.si AS i,
               string_agg(format('%s,%s %s,%s', xy.x0, xy.y_top, xy.x1, xy.y_top), ' ' ORDER BY xy.g) AS top_pts,
               string_agg(format('%s,%s %s,%s', xy.x1, xy.y_bot, xy.x0, xy.y_bot), ' ' ORDER BY xy.g DESC) AS bot_pts
        FROM xy GROUP BY xy.si ORDER BY xy.si
    LOOP
        si := r.i;
        s := series[si];
        pts_txt := r.top_pts;
        base_txt := r.bot_pts;
        IF stacked THEN
            svg := svg || format('<polygon points="%s %s" fill="%s" fill-opacity="0.8" stroke="%s" stroke-width="0.5"><title>%s</title></polygon>',
                                 pts_txt, base_txt, palette[(si - 1) % 11 + 1], palette[(si - 1) % 11 + 1],
                                 folio_perf_data.html_escape(folio_perf_data.fold(s)));
        ELSE
            svg := svg || format('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.8"><title>%s</title></polyline>',
                                 pts_txt, palette[(si - 1) % 11 + 1], folio_perf_data.html_escape(folio_perf_data.fold(s)));
        END IF;
        svg := svg || format('<rect x="%s" y="%s" width="12" height="12" fill="%s"/><text x="%s" y="%s" class="lg">%s</text>',
                             ml + ((si - 1) % 4) * 270, mt + ph + 50 + ((si - 1) / 4) * 18, palette[(si - 1) % 11 + 1],
                             ml + ((si - 1) % 4) * 270 + 17, mt + ph + 60 + ((si - 1) / 4) * 18,
                             folio_perf_data.html_escape(folio_perf_data.sql_start(s, 32)));
    END LOOP;
    IF hline IS NOT NULL THEN
        y := round(mt + ph - ph * hline / yt.top, 1);
        svg := svg || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="hl"/>', ml, y, ml + pw, y)
            || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="hl"/><text x="%s" y="%s" class="lg">%s</text>',
                      ml + (si % 4) * 270, mt + ph + 56 + (si / 4) * 18, ml + (si % 4) * 270 + 12,
                      mt + ph + 56 + (si / 4) * 18, ml + (si % 4) * 270 + 17, mt + ph + 60 + (si / 4) * 18,
                      folio_perf_data.html_escape(coalesce(opts->>'hline_label', '')));
    END IF;
    RETURN array_to_string(svg, '') || E'</svg></figure>\n';
END
$$;

/*
 * A horizontal bar chart: bars [{label, value}] or stacked bars [{label,
 * parts: [{series, value}], value: the total, optional}], an x axis with round ticks and a title
 * (xtitle, with the unit), and a legend of the parts' series.
 */
CREATE FUNCTION folio_perf_data.svg_bars(title text, bars jsonb, xtitle text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wd int := 1200;
    lw int := 600;          -- labels
    pw int := wd - lw - 40;
    mt int := 34;
    n int := jsonb_array_length(coalesce(bars, '[]'));
    palette text[] := ARRAY['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd',
                            '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf', '#aec7e8'];
    series text[];
    ph int;
    ht int;
    vmax numeric;
    xt record;
    svg text[] := '{}';
    r record;
    p record;
    x0 numeric;
    tk numeric;
    xx numeric;
    si int;
    legend_rows int;
BEGIN
    IF n = 0 THEN
        RETURN '';
    END IF;
    series := ARRAY(SELECT q->>'series' FROM jsonb_array_elements(bars) b, jsonb_array_elements(b->'parts') q
                    GROUP BY 1 ORDER BY sum((q->>'value')::numeric) DESC, 1);
    legend_rows := ceil(coalesce(array_length(series, 1), 0) / 4.0);
    ph := n * 22;
    ht := mt + ph + 48 + 18 * legend_rows;
    SELECT max(greatest((b->>'value')::numeric,
                        (SELECT sum((q->>'value')::numeric) FROM jsonb_array_elements(b->'parts') q)))
    INTO vmax FROM jsonb_array_elements(bars) b;
    xt := folio_perf_data.nice_ticks(vmax, false);
    svg := svg || format('<figure id="%s"><svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %s %s" role="img" aria-label="%s">',
                         folio_perf_data.slug(title), wd, ht, folio_perf_data.html_escape(folio_perf_data.fold(title)))
        || format('<text x="4" y="18" class="ct">%s</text>', folio_perf_data.html_escape(folio_perf_data.fold(title)))
        || format('<rect x="%s" y="%s" width="%s" height="%s" class="pa"/>', lw, mt, pw, ph);
    tk := 0;
    WHILE tk <= xt.top + xt.step / 1000 LOOP
        xx := round(lw + pw * tk / xt.top, 1);
        svg := svg || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="gl"/><text x="%s" y="%s" class="ax xt" text-anchor="middle">%s</text>',
                             xx, mt, xx, mt + ph + 4, xx, mt + ph + 17, folio_perf_data.fmt_num(tk, 3));
        tk := tk + xt.step;
    END LOOP;
    svg := svg || format('<text x="%s" y="%s" class="at" text-anchor="middle">%s</text>',
                         lw + pw / 2, mt + ph + 34, folio_perf_data.html_escape(coalesce(xtitle, '')));
    FOR r IN SELECT b, o FROM jsonb_array_elements(bars) WITH ORDINALITY AS t(b, o) LOOP
        svg := svg || format('<text x="%s" y="%s" class="lg yt" text-anchor="end">%s<title>%s</title></text>', lw - 6, mt + (r.o - 1) * 22 + 15,
                             folio_perf_data.html_escape(folio_perf_data.sql_start(r.b->>'label', 86)),
                             folio_perf_data.html_escape(folio_perf_data.fold(r.b->>'label')));
        IF r.b ? 'parts' THEN
            x0 := 0;
            FOR p IN SELECT q->>'series' AS s, (q->>'value')::numeric AS v
                     FROM jsonb_array_elements(r.b->'parts') q
                     ORDER BY array_position(series, q->>'series') LOOP
                si := array_position(series, p.s);
                svg := svg || format('<rect x="%s" y="%s" width="%s" height="16" fill="%s"><title>%s: %s</title></rect>',
                                     round(lw + pw * x0 / xt.top, 1), mt + (r.o - 1) * 22 + 3,
                                     round(pw * p.v / xt.top, 1), palette[(si - 1) % 11 + 1],
                                     folio_perf_data.html_escape(folio_perf_data.fold(p.s)), folio_perf_data.fmt_sig(p.v));
                x0 := x0 + p.v;
            END LOOP;
        ELSE
            x0 := (r.b->>'value')::numeric;
            svg := svg || format('<rect x="%s" y="%s" width="%s" height="16" fill="#1f77b4"/>',
                                 lw, mt + (r.o - 1) * 22 + 3, round(pw * x0 / xt.top, 1));
        END IF;
        -- a stacked bar is labelled with its total when given (the parts
        -- are rounded, their sum may differ from it in the last digit)
        svg := svg || format('<text x="%s" y="%s" class="ax">%s</text>', round(lw + pw * x0 / xt.top + 4, 1),
                             mt + (r.o - 1) * 22 + 15, folio_perf_data.fmt_sig(coalesce((r.b->>'value')::numeric, x0)));
    END LOOP;
    IF series IS NOT NULL THEN
        FOR si IN 1..coalesce(array_length(series, 1), 0) LOOP
            -- four to a row across the whole width, each name in its
            -- column (wait events run to 30 characters)
            svg := svg || format('<rect x="%s" y="%s" width="12" height="12" fill="%s"/><text x="%s" y="%s" class="lg">%s</text>',
                                 4 + ((si - 1) % 4) * 290, mt + ph + 42 + ((si - 1) / 4) * 18, palette[(si - 1) % 11 + 1],
                                 4 + ((si - 1) % 4) * 290 + 16, mt + ph + 52 + ((si - 1) / 4) * 18,
                                 folio_perf_data.html_escape(folio_perf_data.sql_start(series[si], 32)));
        END LOOP;
    END IF;
    RETURN array_to_string(svg, '') || E'</svg></figure>\n';
END
$$;

-- Key/value rows of an object, as a two-column section, each value
-- formatted by its key's kind.
CREATE FUNCTION folio_perf_data.kv_section(title text, obj jsonb, keys text[])
RETURNS jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT folio_perf_data.section(title, ARRAY['metric', 'value'],
      (SELECT coalesce(jsonb_agg(jsonb_build_object('metric', folio_perf_data.col_label(k), 'value',
                 CASE WHEN obj->k IS NULL OR jsonb_typeof(obj->k) = 'null' THEN to_jsonb('unavailable'::text)
                      ELSE to_jsonb(folio_perf_data.fmt_value(obj->k, folio_perf_data.col_kind(k))) END) ORDER BY o), '[]')
       FROM unnest(keys) WITH ORDINALITY AS u(k, o)))
    || '{"right": ["value"]}'
$$;

-- The document's style sheet (one for the report and the comparison).
CREATE FUNCTION folio_perf_data.html_head(title text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
    || '<meta name="viewport" content="width=device-width, initial-scale=1"><title>'
    || folio_perf_data.html_escape(folio_perf_data.fold(title)) || '</title><style>'
    || 'body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0 auto;padding:20px 28px;color:#1d2228;max-width:1500px}'
    || 'h1{font-size:24px;margin:0 0 4px}h2{font-size:18px;margin:30px 0 8px;border-bottom:2px solid #d5dbe1;padding-bottom:3px}'
    || '.sub{color:#4a5560;margin:0 0 12px}'
    || 'dl.meta{display:grid;grid-template-columns:max-content 1fr max-content 1fr;gap:2px 14px;margin:8px 0 14px;font-size:13px}'
    || 'dl.meta dt{color:#5c6670}dl.meta dd{margin:0;overflow-wrap:anywhere}'
    || '.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(190px,1fr));gap:10px;margin:10px 0 6px}'
    || '.card{border:1px solid #d5dbe1;border-radius:6px;padding:8px 12px;background:#f8fafb}'
    || '.card .v{font-size:21px;font-weight:600}.card .k{font-size:12px;color:#5c6670}.card .d{font-size:12px;color:#4a5560}'
    || '.card.warn{border-color:#e0a100;background:#fff8e1}.card.ok{border-color:#7cb342;background:#f1f8e9}'
    || 'nav.toc ol{columns:3 250px;column-gap:28px;font-size:13px;margin:4px 0;padding-left:22px}nav.toc li{break-inside:avoid}nav.toc a{color:#1a5fa8;text-decoration:none}'
    || 'table{border-collapse:collapse;margin:6px 0;font-size:12.5px;max-width:100%}'
    -- words are never broken: a cell breaks at spaces and at the <wbr>
    -- after "_", ".", "," and "(" of long identifiers and statements; a
    -- table wider than the page scrolls in its own box
    || 'th,td{border:1px solid #dde2e6;padding:3px 6px;vertical-align:top;overflow-wrap:normal;word-break:normal;hyphens:manual}'
    || '.tw{overflow-x:auto;max-width:100%}details.fold>summary{color:#1a5fa8;font-size:13px;margin:2px 0 4px}'
    || 'th{background:#eef1f4;text-align:left;font-weight:600}th.n,td.n{text-align:right;font-variant-numeric:tabular-nums}td.n{white-space:nowrap}'
    || 'table.wide{width:100%}table.many{font-size:11.5px}table.many th,table.many td{padding:2px 4px}td.q code{white-space:pre-wrap;overflow-wrap:anywhere}'
    || 'code,pre{font:11.5px/1.35 ui-monospace,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-word}'
    || 'pre{background:#f6f8fa;border:1px solid #e3e7eb;padding:6px 8px;margin:4px 0}'
    || '.kvs{display:flex;flex-wrap:wrap;gap:0 18px;align-items:flex-start}'
    || 'summary{cursor:pointer}.note{color:#4a5560;font-style:italic}'
    || 'td.worse{background:#fde2e1;color:#a4161a;font-weight:600}td.better{background:#e3f4e1;color:#22672a;font-weight:600}'
    || 'td.plan{background:#fff1c2;font-weight:600}td.plan::before{content:"\26A0  "}'
    || 'td.sev-warning{color:#a15c00;font-weight:600}td.st-new{color:#1a5fa8}td.st-gone{color:#777}'
    || 'figure{margin:10px 0}.chart{width:100%;height:auto;display:block}'
    || '.ct{font-weight:600;font-size:15px}.ax{font-size:12px;fill:#333}.at{font-size:12.5px;fill:#222}.lg{font-size:12.5px;fill:#222}.yt{font-size:12px}'
    || '.pa{fill:#fbfcfd;stroke:#9aa5b1}.gl{stroke:#e3e7eb}.hl{stroke:#1d2228;stroke-width:2;stroke-dasharray:7 4}'
    || '.sql p{margin:10px 0 2px}footer{margin-top:34px;border-top:1px solid #d5dbe1;padding-top:6px;font-size:12px;color:#5c6670}'
    -- tables of many columns (a comparison's 15) keep clear of the page's
    -- edge at 1000 px with long release names in their headers and large
    -- changes in bold: on narrow pages smaller type and padding, and their
    -- headers may break inside a word
    || 'th[data-sort]{cursor:pointer}@media (max-width:1100px){body{padding:12px 12px}table.many{font-size:10.5px}'
    || 'table.many th,table.many td{padding:2px 3px}}'
    || '@media print{body{padding:0;max-width:none;font-size:11px}nav.toc{display:none}h2{break-after:avoid}'
    || 'figure,tr,.card,.sql{break-inside:avoid}details{display:block}details>summary{list-style:none}'
    || 'a{color:inherit;text-decoration:none}.cards{grid-template-columns:repeat(3,1fr)}}'
    || '</style></head><body>'
$$;

-- The footer and the optional sorting script (the page reads without it).
CREATE FUNCTION folio_perf_data.html_foot()
RETURNS text
LANGUAGE sql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT '<footer>Generated by folio_perf '
    || folio_perf_data.html_escape(coalesce((SELECT e.extversion FROM pg_catalog.pg_extension e
                                              WHERE e.extname = 'folio_perf'), '?'))
    || ' at ' || to_char(pg_catalog.clock_timestamp(), 'YYYY-MM-DD HH24:MI:SS TZ')
    || ' on PostgreSQL ' || folio_perf_data.html_escape(pg_catalog.current_setting('server_version'))
    || '.</footer>'
    || '<script>document.querySelectorAll("table").forEach(function(t){'
    || 't.querySelectorAll("th").forEach(function(h,i){h.dataset.sort="";h.title="sort";h.onclick=function(){'
    || 'var b=t.tBodies[0],r=Array.from(b.rows),d=h.dataset.sort==="a"?-1:1;h.dataset.sort=d>0?"a":"d";'
    || 'function v(x){var s=x.cells[i]?x.cells[i].textContent.trim():"";var m=s.replace(/[,%+]/g,"").match(/^-?[0-9.]+/);'
    || 'if(!m)return s.toLowerCase();var n=parseFloat(m[0]),u=s.match(/ (kB|MB|GB|TB)/);'
    || 'if(u)n*=Math.pow(1024,["kB","MB","GB","TB"].indexOf(u[1])+1);return n;}'
    || 'r.sort(function(x,y){var a=v(x),c=v(y);return (a>c?1:a<c?-1:0)*d;});r.forEach(function(x){b.appendChild(x);});};});});'
    || E'</script>\n</body></html>\n'
$$;
