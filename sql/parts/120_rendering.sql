/* sql/parts/120_rendering.sql - rendering: escaping, cells, sections as text/markdown/html, SVG charts */

------------------------------------------------------------------------
--
-- Every document is built as one jsonb value first (the "json" format,
-- whose keys are documented and stable); the text, markdown and html
-- formats render that value.  A section is an object
--   {"title": ..., "columns": [...], "rows": [{...}, ...], "note": ...}
-- so that one renderer serves every table.
------------------------------------------------------------------------

-- Escape for HTML text and attribute values.
CREATE FUNCTION folio_perf_data.html_escape(s text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT replace(replace(replace(replace(replace(coalesce(s, ''),
         '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;')
$$;

-- One cell as text: numbers rounded for people, bytes made readable.
CREATE FUNCTION folio_perf_data.cell(v jsonb, col text, fmt text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT CASE
    WHEN v IS NULL OR jsonb_typeof(v) = 'null' THEN ''
    WHEN jsonb_typeof(v) = 'number' AND (col LIKE '%bytes%' OR col LIKE 'size%' OR col = 'growth')
         AND abs(v::text::numeric) >= 10240
      THEN pg_size_pretty(v::text::numeric)
    WHEN jsonb_typeof(v) = 'number' AND col LIKE '%delta_pct'
      THEN CASE WHEN v::text::numeric > 0 THEN '+' ELSE '' END || round(v::text::numeric, 1)::text
    WHEN jsonb_typeof(v) = 'number' AND col LIKE '%pct%'
      THEN round(v::text::numeric, 1)::text
    WHEN jsonb_typeof(v) = 'number' AND v::text::numeric = trunc(v::text::numeric)
      THEN trunc(v::text::numeric)::text
    WHEN jsonb_typeof(v) = 'number' AND v::text ~ '[.eE]'
      THEN CASE WHEN abs(v::text::numeric) >= 100 THEN round(v::text::numeric, 0)::text
                WHEN abs(v::text::numeric) >= 1 THEN round(v::text::numeric, 2)::text
                ELSE round(v::text::numeric, 3)::text END
    WHEN jsonb_typeof(v) = 'string' AND fmt <> 'html' AND col = 'query'
      THEN CASE WHEN length(v #>> '{}') > 100
                THEN left(regexp_replace(v #>> '{}', '\s+', ' ', 'g'), 97) || '...'
                ELSE regexp_replace(v #>> '{}', '\s+', ' ', 'g') END
    WHEN jsonb_typeof(v) = 'string' THEN v #>> '{}'
    ELSE v::text
  END
$$;

/*
 * Render one section: a title, an optional note, and a table of the given
 * columns.  text: aligned for psql; markdown: a pipe table; html: a table.
 */
CREATE FUNCTION folio_perf_data.render_section(fmt text, sec jsonb)
RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
-- Cells are formatted once (cell() is called per cell) and lines collected
-- in an array joined at the end: appending to one growing text is
-- quadratic, and a comparison can have 5,000 statement rows.
DECLARE
    cols text[] := ARRAY(SELECT jsonb_array_elements_text(sec->'columns'));
    nc int := coalesce(array_length(cols, 1), 0);
    w int[];
    num boolean[];
    r jsonb;
    cells text[] := '{}';
    lines text[] := '{}';
    out text := '';
    line text;
    i int;
    k int;
    c text;
BEGIN
    IF fmt = 'markdown' THEN
        out := '### ' || (sec->>'title') || E'\n\n';
    ELSIF fmt = 'html' THEN
        out := '<h2>' || folio_perf_data.html_escape(sec->>'title') || E'</h2>\n';
    ELSE
        out := (sec->>'title') || E'\n' || repeat('=', length(sec->>'title')) || E'\n';
    END IF;
    IF sec->>'note' IS NOT NULL THEN
        out := out || CASE fmt WHEN 'html' THEN '<p class="note">' || folio_perf_data.html_escape(sec->>'note') || E'</p>\n'
                               WHEN 'markdown' THEN '_' || replace(sec->>'note', '_', '\_') || E'_\n\n'
                               ELSE '(' || (sec->>'note') || E')\n' END;
    END IF;
    IF nc = 0 OR jsonb_array_length(coalesce(sec->'rows', '[]')) = 0 THEN
        IF sec->>'note' IS NULL THEN
            out := out || CASE fmt WHEN 'html' THEN E'<p class="note">No rows.</p>\n' ELSE E'(no rows)\n' END;
        END IF;
        RETURN out || E'\n';
    END IF;

    -- cells, column widths and alignment
    w := array_fill(0, ARRAY[nc]);
    num := array_fill(true, ARRAY[nc]);
    FOR i IN 1..nc LOOP
        w[i] := length(cols[i]);
    END LOOP;
    FOR r IN SELECT * FROM jsonb_array_elements(sec->'rows') LOOP
        FOR i IN 1..nc LOOP
            c := folio_perf_data.cell(r->cols[i], cols[i], fmt);
            cells := cells || c;
            w[i] := greatest(w[i], length(c));
            IF jsonb_typeof(r->cols[i]) NOT IN ('number', 'null') THEN
                num[i] := false;
            END IF;
        END LOOP;
    END LOOP;

    IF fmt = 'html' THEN
        line := '<div class="tw"><table><thead><tr>';
        FOR i IN 1..nc LOOP
            line := line || '<th>' || folio_perf_data.html_escape(cols[i]) || '</th>';
        END LOOP;
        lines := lines || (line || E'</tr></thead>\n<tbody>');
        k := 0;
        FOR r IN SELECT * FROM jsonb_array_elements(sec->'rows') LOOP
            line := '<tr>';
            FOR i IN 1..nc LOOP
                k := k + 1;
                c := cells[k];
                IF cols[i] = 'query' AND length(c) > 120 THEN
                    line := line || '<td class="q"><details><summary>'
                        || folio_perf_data.html_escape(left(c, 117)) || '...</summary><code>'
                        || folio_perf_data.html_escape(c) || '</code></details></td>';
                ELSIF cols[i] = 'plan' AND c <> '' THEN
                    line := line || '<td><details><summary>plan</summary><pre>'
                        || folio_perf_data.html_escape(c) || '</pre></details></td>';
                ELSE
                    line := line || CASE WHEN num[i] THEN '<td class="n">' ELSE '<td>' END
                        || folio_perf_data.html_escape(c) || '</td>';
                END IF;
            END LOOP;
            lines := lines || (line || '</tr>');
        END LOOP;
        RETURN out || array_to_string(lines, E'\n') || E'\n</tbody></table></div>\n';
    END IF;

    IF fmt = 'markdown' THEN
        line := '|';
        FOR i IN 1..nc LOOP
            line := line || ' ' || cols[i] || ' |';
        END LOOP;
        lines := lines || line;
        line := '|';
        FOR i IN 1..nc LOOP
            line := line || CASE WHEN num[i] THEN ' ---: |' ELSE ' --- |' END;
        END LOOP;
        lines := lines || line;
        k := 0;
        FOR r IN SELECT * FROM jsonb_array_elements(sec->'rows') LOOP
            line := '|';
            FOR i IN 1..nc LOOP
                k := k + 1;
                c := replace(replace(cells[k], '|', '\|'), E'\n', ' ');
                line := line || ' ' || c || ' |';
            END LOOP;
            lines := lines || line;
        END LOOP;
        RETURN out || array_to_string(lines, E'\n') || E'\n\n';
    END IF;

    -- text
    line := '';
    FOR i IN 1..nc LOOP
        line := line || CASE WHEN i > 1 THEN ' | ' ELSE ' ' END
            || CASE WHEN num[i] THEN lpad(cols[i], w[i]) ELSE rpad(cols[i], w[i]) END;
    END LOOP;
    lines := lines || line;
    line := '';
    FOR i IN 1..nc LOOP
        line := line || CASE WHEN i > 1 THEN '-+-' ELSE '-' END || repeat('-', w[i]);
    END LOOP;
    lines := lines || line;
    k := 0;
    FOR r IN SELECT * FROM jsonb_array_elements(sec->'rows') LOOP
        line := '';
        FOR i IN 1..nc LOOP
            k := k + 1;
            line := line || CASE WHEN i > 1 THEN ' | ' ELSE ' ' END
                || CASE WHEN num[i] THEN lpad(cells[k], w[i]) ELSE rpad(cells[k], w[i]) END;
        END LOOP;
        lines := lines || rtrim(line);
    END LOOP;
    RETURN out || array_to_string(lines, E'\n') || E'\n\n';
END
$$;

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
LANGUAGE plpgsql IMMUTABLE
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


/*
 * An inline SVG chart of time-series rows {bucket, bucket_start, series,
 * value}: one line per series, or stacked areas.
 */
CREATE FUNCTION folio_perf_data.svg_chart(title text, pts jsonb, stacked boolean, unit text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wd int := 900;
    ht int := 260;
    ml int := 56;
    mr int := 170;
    mt int := 28;
    mb int := 34;
    pw int := wd - ml - mr;
    ph int := ht - mt - mb;
    palette text[] := ARRAY['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd',
                            '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
    b0 int;
    b1 int;
    ymax numeric;
    series text[];
    s text;
    si int := 0;
    svg text;
    pts_txt text;
    base_txt text;
    t0 text;
    t1 text;
BEGIN
    IF pts IS NULL OR jsonb_array_length(pts) = 0 THEN
        RETURN '';
    END IF;
    SELECT min((p->>'bucket')::int), max((p->>'bucket')::int),
           min(p->>'bucket_start'), max(p->>'bucket_end')
    INTO b0, b1, t0, t1 FROM jsonb_array_elements(pts) p;
    series := ARRAY(SELECT DISTINCT p->>'series' FROM jsonb_array_elements(pts) p ORDER BY 1);
    IF stacked THEN
        SELECT max(v) INTO ymax FROM (
            SELECT sum((p->>'value')::numeric) AS v FROM jsonb_array_elements(pts) p
            GROUP BY p->>'bucket') x;
    ELSE
        SELECT max((p->>'value')::numeric) INTO ymax FROM jsonb_array_elements(pts) p;
    END IF;
    ymax := greatest(coalesce(ymax, 0), 1e-9) * 1.1;
    -- every bucket is drawn as a step over [b, b + 1]
    b1 := b1 + 1;
    svg := format('<figure><svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">',
                  wd, ht, wd, ht, folio_perf_data.html_escape(title))
        || format('<text x="%s" y="16" class="ct">%s</text>', ml, folio_perf_data.html_escape(title))
        || format('<rect x="%s" y="%s" width="%s" height="%s" class="pa"/>', ml, mt, pw, ph)
        || format('<text x="%s" y="%s" class="ax" text-anchor="end">%s</text>', ml - 4, mt + 8,
                  round(ymax / 1.1, 2) || coalesce(' ' || unit, ''))
        || format('<line x1="%s" y1="%s" x2="%s" y2="%s" class="gl"/>', ml, round(mt + ph - ph / 1.1), ml + pw,
                  round(mt + ph - ph / 1.1))
        || format('<text x="%s" y="%s" class="ax" text-anchor="end">0</text>', ml - 4, mt + ph)
        || format('<text x="%s" y="%s" class="ax">%s</text>', ml, ht - 10,
                  folio_perf_data.html_escape(left(t0, 19)))
        || format('<text x="%s" y="%s" class="ax" text-anchor="end">%s</text>', ml + pw, ht - 10,
                  folio_perf_data.html_escape(left(t1, 19)));
    -- stacked areas draw cumulative sums, bottom series first
    FOREACH s IN ARRAY series LOOP
        si := si + 1;
        WITH v AS (
            SELECT (p->>'bucket')::int AS b, p->>'series' AS ser, (p->>'value')::numeric AS val
            FROM jsonb_array_elements(pts) p
        ), buckets AS (
            SELECT DISTINCT b FROM v
        ), cum AS (
            SELECT bk.b,
                   coalesce((SELECT sum(v.val) FROM v WHERE v.b = bk.b
                             AND (v.ser <= s AND stacked OR v.ser = s AND NOT stacked)), 0) AS top,
                   coalesce((SELECT sum(v.val) FROM v WHERE v.b = bk.b AND v.ser < s AND stacked), 0) AS bot
            FROM buckets bk
        )
        SELECT string_agg(format('%s,%s %s,%s',
                                 round(ml + pw * (cum.b - b0)::numeric / (b1 - b0), 1),
                                 round(mt + ph - ph * cum.top / ymax, 1),
                                 round(ml + pw * (cum.b + 1 - b0)::numeric / (b1 - b0), 1),
                                 round(mt + ph - ph * cum.top / ymax, 1)), ' ' ORDER BY cum.b),
               string_agg(format('%s,%s %s,%s',
                                 round(ml + pw * (cum.b + 1 - b0)::numeric / (b1 - b0), 1),
                                 round(mt + ph - ph * cum.bot / ymax, 1),
                                 round(ml + pw * (cum.b - b0)::numeric / (b1 - b0), 1),
                                 round(mt + ph - ph * cum.bot / ymax, 1)), ' ' ORDER BY cum.b DESC)
        INTO pts_txt, base_txt FROM cum;
        IF stacked THEN
            svg := svg || format('<polygon points="%s %s" fill="%s" fill-opacity="0.75" stroke="%s" stroke-width="0.5"/>',
                                 pts_txt, base_txt, palette[(si - 1) % 10 + 1], palette[(si - 1) % 10 + 1]);
        ELSE
            svg := svg || format('<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>',
                                 pts_txt, palette[(si - 1) % 10 + 1]);
        END IF;
        IF si <= 12 THEN
            svg := svg || format('<rect x="%s" y="%s" width="10" height="10" fill="%s"/><text x="%s" y="%s" class="lg">%s</text>',
                                 ml + pw + 10, mt + (si - 1) * 16, palette[(si - 1) % 10 + 1],
                                 ml + pw + 24, mt + (si - 1) * 16 + 9,
                                 folio_perf_data.html_escape(left(s, 22)));
        END IF;
    END LOOP;
    RETURN svg || E'</svg></figure>\n';
END
$$;

-- A horizontal bar chart of label/value pairs.
CREATE FUNCTION folio_perf_data.svg_bars(title text, bars jsonb, unit text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wd int := 900;
    n int := jsonb_array_length(coalesce(bars, '[]'));
    ht int;
    vmax numeric;
    svg text;
    r record;
BEGIN
    IF n = 0 THEN
        RETURN '';
    END IF;
    ht := 30 + n * 20;
    SELECT max((x->>'value')::numeric) INTO vmax FROM jsonb_array_elements(bars) x;
    vmax := greatest(coalesce(vmax, 0), 1e-9);
    svg := format('<figure><svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %s %s" width="%s" height="%s" role="img" aria-label="%s">',
                  wd, ht, wd, ht, folio_perf_data.html_escape(title))
        || format('<text x="4" y="16" class="ct">%s</text>', folio_perf_data.html_escape(title));
    FOR r IN SELECT x->>'label' AS label, (x->>'value')::numeric AS value, o
             FROM jsonb_array_elements(bars) WITH ORDINALITY AS t(x, o) LOOP
        svg := svg || format('<text x="4" y="%s" class="lg">%s</text>', 26 + r.o * 20 - 6,
                             folio_perf_data.html_escape(left(r.label, 48)))
            || format('<rect x="330" y="%s" width="%s" height="14" fill="#1f77b4"/>', 26 + (r.o - 1) * 20 + 2,
                      round(440 * r.value / vmax, 1))
            || format('<text x="%s" y="%s" class="ax">%s</text>', 334 + round(440 * r.value / vmax), 26 + r.o * 20 - 6,
                      round(r.value, 1) || ' ' || unit);
    END LOOP;
    RETURN svg || E'</svg></figure>\n';
END
$$;

-- Key/value rows of an object, as a two-column section.
CREATE FUNCTION folio_perf_data.kv_section(title text, obj jsonb, keys text[])
RETURNS jsonb
LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
  SELECT folio_perf_data.section(title, ARRAY['metric', 'value'],
      (SELECT coalesce(jsonb_agg(jsonb_build_object('metric', k, 'value',
                 CASE WHEN obj->k IS NULL OR jsonb_typeof(obj->k) = 'null' THEN to_jsonb('unavailable'::text)
                      WHEN (k LIKE '%bytes%' OR k LIKE 'db_size%') AND jsonb_typeof(obj->k) = 'number'
                      THEN to_jsonb(pg_size_pretty((obj->>k)::numeric))
                      ELSE obj->k END) ORDER BY o), '[]')
       FROM unnest(keys) WITH ORDINALITY AS u(k, o)))
$$;
