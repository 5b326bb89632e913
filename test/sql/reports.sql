-- folio_perf_report in four formats, folio_perf_compare, folio_perf_trend.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
DROP SCHEMA IF EXISTS fs05_mod_circulation_storage CASCADE;
RESET client_min_messages;
\set SHOW_CONTEXT never

CREATE SCHEMA fs05_mod_circulation_storage;
CREATE TABLE fs05_mod_circulation_storage.loan (id int PRIMARY KEY, jsonb jsonb);
CREATE TABLE fs05_mod_circulation_storage.check_in (id int PRIMARY KEY, jsonb jsonb);

-- the same workload at N = 3 and 2N = 6 check-ins
SELECT folio_perf_begin('CICO N', '{"release":"Poppy"}') AS w1 \gset
SELECT format('INSERT INTO fs05_mod_circulation_storage.check_in (id, jsonb) VALUES (%s, %L)', g, '{}'),
       format('UPDATE fs05_mod_circulation_storage.loan SET jsonb = %L WHERE id = %s', '{"status":"Closed"}', g)
FROM generate_series(1, 3) g \gexec
SELECT pg_stat_force_next_flush();
SELECT folio_perf_end() AS w1 \gset
SELECT folio_perf_begin('CICO 2N', '{"release":"Quesnelia"}') AS w2 \gset
SELECT format('INSERT INTO fs05_mod_circulation_storage.check_in (id, jsonb) VALUES (%s, %L)', g, '{}'),
       format('UPDATE fs05_mod_circulation_storage.loan SET jsonb = %L WHERE id = %s', '{"status":"Closed"}', g)
FROM generate_series(101, 106) g \gexec
SELECT folio_perf_snapshot('inside') IS NOT NULL AS inner_snapshot;
SELECT pg_stat_force_next_flush();
SELECT folio_perf_end() AS w2 \gset

-- compare: calls +100% for each statement of the workload
SELECT section, module, metric, base, new, delta, delta_pct, status, query
FROM folio_perf_compare_rows(:w1, :w2)
WHERE section = 'statement' AND metric = 'calls' AND module = 'mod_circulation_storage'
ORDER BY query COLLATE "C";
SELECT metric, base, new, delta_pct
FROM folio_perf_compare_rows(:w1, :w2)
WHERE section = 'module' AND module = 'mod_circulation_storage' AND metric IN ('inserts', 'statement_calls')
ORDER BY metric;

-- JSON parses, has the documented keys, and its numbers equal the
-- set-returning functions'
SELECT folio_perf_report(:w2, 'json')::jsonb ? 'top_statements' AS has_top,
       (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(folio_perf_report(:w2, 'json')::jsonb) k) AS keys;
SELECT (SELECT sum((t->>'calls')::bigint) FROM jsonb_array_elements(folio_perf_report(:w2, 'json')::jsonb->'top_statements') t)
     = (SELECT sum(calls) FROM folio_perf_top_statements(:w2, 20)) AS top_calls_equal,
       (SELECT sum((m->>'inserts')::bigint) FROM jsonb_array_elements(folio_perf_report(:w2, 'json')::jsonb->'modules') m)
     = (SELECT sum(inserts) FROM folio_perf_module_activity(:w2)) AS module_inserts_equal,
       (folio_perf_report(:w2, 'json')::jsonb #>> '{window,label}') AS label,
       (folio_perf_report(:w2, 'json')::jsonb #>> '{window,tags,release}') AS release;
SELECT jsonb_typeof(folio_perf_compare(:w1, :w2, 'json')::jsonb->'rows') AS compare_rows;

-- html: every entry of the contents leads to a section of the page (the
-- compare's FOLIO operations linked to "#")
SELECT d, count(*) AS contents, count(*) FILTER (WHERE position(format('id="%s"', a[1]) IN h) = 0) AS without_target
FROM (VALUES ('report', folio_perf_report(:w2, 'html')), ('compare', folio_perf_compare(:w1, :w2, 'html')),
             ('series', folio_perf_series_report(ARRAY[:w1, :w2]::bigint[], 'html'))) x(d, h)
CROSS JOIN LATERAL regexp_matches(substring(h FROM '<nav class="toc">.*?</nav>'), '<a href="#([^"]*)">', 'g') a
GROUP BY d ORDER BY d;

-- the compare's Modules table: one row per module, base and new side by
-- side (statement calls 6 and 12, +100 %; rows written 3 and 6: the
-- updates find no loan; times, scans and growth left out)
SELECT c[2:6] AS module_calls, c[10:11] AS rows_written
FROM (SELECT string_to_array(substring(folio_perf_compare(:w1, :w2, 'markdown')
                                       FROM E'### Modules\n\n[^\n]*\n[^\n]*\n([^\n]*)'), ' | ') AS c) x;

-- markdown: every table row has as many cells as its header (the number of
-- tables depends on whether the sampler caught this short window)
WITH md AS (SELECT folio_perf_report(:w2, 'markdown', detail => 'full') || folio_perf_compare(:w1, :w2, 'markdown') AS t),
lines AS (SELECT l, row_number() OVER () AS n FROM md, regexp_split_to_table(md.t, E'\n') l),
tbl AS (
  SELECT n, l, sum(CASE WHEN l NOT LIKE '|%' THEN 1 ELSE 0 END) OVER (ORDER BY n) AS grp
  FROM lines
)
SELECT count(DISTINCT grp) >= 10 AS tables,
       count(*) FILTER (WHERE cells <> header_cells) AS rows_with_wrong_cell_count
FROM (SELECT grp, l,
             length(regexp_replace(l, '\\.', '', 'g')) - length(replace(regexp_replace(l, '\\.', '', 'g'), '|', '')) AS cells,
             first_value(length(regexp_replace(l, '\\.', '', 'g')) - length(replace(regexp_replace(l, '\\.', '', 'g'), '|', '')))
               OVER (PARTITION BY grp ORDER BY n) AS header_cells
      FROM tbl WHERE l LIKE '|%') x;

-- text: headings present; the sampler's state in one summary line (on,
-- partial with its coverage, or off with why), not as zeros
SELECT position('Top statements by total time' IN folio_perf_report(:w2)) > 0 AS has_top,
       position('Verdict' IN folio_perf_report(:w2)) > 0 AS has_verdict,
       (SELECT count(*) FROM regexp_split_to_table(folio_perf_report(:w2), E'\n') l
        WHERE l ~ '^ Sampler +\| (on|partial: samples cover [0-9.]+% of the window .*|off: no samples in this window \(.+\)\. .*)$')
         AS sampler_lines;

-- html: one self-contained document, no external URLs, escaped text
SELECT left(folio_perf_report(:w2, 'html'), 15) AS starts,
       folio_perf_report(:w2, 'html') ~ '(src|href)\s*=\s*"?https?:' AS external_urls,
       folio_perf_report(:w2, 'html') LIKE '%</html>%' AS closed;
SELECT folio_perf_begin('<script>alert(1)</script>') AS w3 \gset
SELECT folio_perf_end() AS w3 \gset
SELECT position('<script>alert' IN folio_perf_report(:w3, 'html')) = 0 AS label_escaped;

-- hostile names in every format: a label with markup and a line break, a
-- release tag with a cell break, a table named like an HTML element, a
-- statement text with pipes, backslashes and a code fence
CREATE SCHEMA fs06_mod_inventory_storage;
CREATE TABLE fs06_mod_inventory_storage."<iframe src=javascript:alert(2)>" (id int, "a|b" text);
SELECT folio_perf_begin(E'<script>alert(3)</script>\r\n\n# Injected', '{"release": "<img src=x onerror=alert(4)>|x\\|y", "scenario": "a\nb"}') AS w4 \gset
INSERT INTO fs06_mod_inventory_storage."<iframe src=javascript:alert(2)>" SELECT g, E'\\|' || g FROM generate_series(1, 3) g;
SELECT count(*) AS "```</code></pre><script>alert(5)</script> \| | *x* _y_"
FROM fs06_mod_inventory_storage."<iframe src=javascript:alert(2)>" WHERE "a|b" <> 'x';
SELECT pg_stat_force_next_flush();
SELECT folio_perf_end() AS w4 \gset
-- the plants are real: the stored label has the markup and the line
-- break, the statement the fence and the pipes
SELECT label ~ E'\n# Injected' AND label LIKE '<script>%' AS label_planted,
       (SELECT count(*) FROM folio_perf_top_statements(:w4, 50) t WHERE t.query LIKE '%```%\|%') = 1 AS query_planted
FROM folio_perf_windows WHERE window_id = :w4;
CREATE TEMP TABLE hostile AS
SELECT f, CASE WHEN f LIKE 'compare %' THEN folio_perf_compare(:w3, :w4, substr(f, 9))
               ELSE folio_perf_report(:w4, f) END AS doc
FROM unnest(ARRAY['text', 'markdown', 'html', 'json', 'compare text', 'compare markdown', 'compare html', 'compare json']) f;
-- no raw markup from the data outside code blocks (the html's own
-- sorting script has no "alert"; text is plain text, json data), no line
-- the label started, no terminal control characters
SELECT f, CASE WHEN f ~ '(text|json)$' THEN NULL
               ELSE NOT EXISTS (
                   SELECT 1 FROM (SELECT l, count(*) FILTER (WHERE l ~ '^`{3,}') OVER (ORDER BY n) AS fences, l ~ '^`{3,}' AS fence
                                  FROM regexp_split_to_table(doc, E'\n') WITH ORDINALITY x(l, n)) y
                   WHERE y.fences % 2 = 0 AND NOT y.fence
                     AND y.l ~* '<(script|img|iframe)[^<]*(alert|onerror|javascript)') END AS no_raw_markup,
       doc !~ E'(^|\n)#+ *Injected' AS no_injected_heading,
       doc !~ E'[\\x01-\\x08\\x0b\\x0c\\x0e-\\x1f]' AS no_control_chars
FROM hostile ORDER BY f;
-- the check catches what it looks for: the same label unescaped would fail it
SELECT E'### ' || label !~ E'(^|\n)#+ *Injected' AS raw_label_passes,
       '| ' || label || ' |' !~* '<(script|img|iframe)[^<]*(alert|onerror|javascript)' AS raw_label_has_no_markup
FROM folio_perf_windows WHERE window_id = :w4;
-- markdown: the statement is given whole in a fence longer than its
-- backtick run; table rows keep their cell count (escaped backslashes
-- and pipes counted as the renderer reads them)
SELECT position(E'````sql\n' || (SELECT t.query FROM folio_perf_top_statements(:w4, 50) t WHERE t.query LIKE '%```%') || E'\n````'
                IN folio_perf_report(:w4, 'markdown', detail => 'full')) > 0 AS query_fenced_whole,
       (SELECT count(*) FROM regexp_split_to_table(folio_perf_report(:w4, 'markdown', detail => 'full'), E'\n') l
        WHERE l LIKE '| Tags |%'
          AND length(regexp_replace(l, '\\.', '', 'g')) - length(replace(regexp_replace(l, '\\.', '', 'g'), '|', '')) <> 3) AS broken_rows,
       position('&lt;img src=x onerror=alert(4)>\|x\\\|y' IN folio_perf_report(:w4, 'markdown', detail => 'full')) > 0 AS tag_escaped;
SELECT position('"<iframe src=javascript:alert(2)>"' IN (folio_perf_report(:w4, 'json')::jsonb)::text) > 0 AS json_keeps_names;

-- charts: at least four labelled time ticks however short the data is
-- (tenths of a second under 4 s), and the axis starts at the window's
-- begin when the first sample is later (its area starts there, not at 0)
WITH c AS (
    SELECT span, lead,
           folio_perf_data.svg_chart('c', (SELECT jsonb_agg(jsonb_build_object(
                   'bucket', b, 'series', 'total', 'value', 2,
                   'bucket_start', '2026-01-01 10:00:00+00'::timestamptz + (lead + b * span / 5) * interval '1 second',
                   'bucket_end', '2026-01-01 10:00:00+00'::timestamptz + (lead + (b + 1) * span / 5) * interval '1 second'))
               FROM generate_series(0, 4) b), true,
               jsonb_build_object('t0', '2026-01-01 10:00:00+00'::timestamptz)) AS svg
    FROM (VALUES (1.2, 0), (1.5, 0), (2.5, 0), (3.3, 0), (12, 0), (3700, 0), (2, 6)) v(span, lead))
SELECT span, lead,
       (SELECT count(*) FROM regexp_matches(svg, 'class="ax xt"[^>]*>[^<]+<', 'g')) >= 4 AS four_x_labels,
       substring(svg FROM '<polygon points="([0-9.]+),') AS first_x
FROM c ORDER BY lead, span;

-- time axis labels never touch: the centred round-tick labels keep clear
-- of the start- and end-anchored labels of the axis' ends (a label is at
-- most 0.64 em, the widest digit, per character at the axis' 12 px), for
-- spans whose last round tick falls just before the end (10.7 s: at 71 px)
WITH c AS (
    SELECT span, folio_perf_data.svg_chart('c', (SELECT jsonb_agg(jsonb_build_object(
                   'bucket', b, 'series', 'total', 'value', 2,
                   'bucket_start', '2026-01-01 10:00:00+00'::timestamptz + b * span / 5 * interval '1 second',
                   'bucket_end', '2026-01-01 10:00:00+00'::timestamptz + (b + 1) * span / 5 * interval '1 second'))
               FROM generate_series(0, 4) b), true) AS svg
    FROM (VALUES (2.35), (2.45), (10.7), (10.8), (11.3), (63), (130.5), (3590)) v(span)),
l AS (
    SELECT span, m[1]::numeric AS x, m[2] AS anchor, length(m[3]) * 0.64 * 12 AS w
    FROM c, regexp_matches(svg, '<text x="([0-9.]+)" y="[0-9.]+" class="ax xt" text-anchor="(start|middle|end)">([^<]+)<', 'g') m),
i AS (
    SELECT span, CASE anchor WHEN 'start' THEN x WHEN 'end' THEN x - w ELSE x - w / 2 END AS lo,
                 CASE anchor WHEN 'start' THEN x + w WHEN 'end' THEN x ELSE x + w / 2 END AS hi
    FROM l)
SELECT span, count(*) >= 4 AS four_x_labels, bool_and(next_lo IS NULL OR next_lo >= hi + 2) AS labels_apart
FROM (SELECT span, lo, hi, lead(lo) OVER (PARTITION BY span ORDER BY lo) AS next_lo FROM i) z
GROUP BY span ORDER BY span;

-- a stacked bar is labelled with its total, not the sum of its rounded
-- parts; the legend's names fit their columns (a wait event of 24
-- characters is not cut and not overlapped by the next)
WITH b AS (
    SELECT folio_perf_data.svg_bars('b', '[{"label": "Q1", "value": 0.474, "parts": [
               {"series": "IPC:ProcArrayGroupUpdate", "value": 0.386}, {"series": "LWLock:ProcArray", "value": 0.087},
               {"series": "IO:DataFileImmediateSync", "value": 0.0001}, {"series": "LWLock:BufferContent", "value": 0.0001}]}]',
           'Average active sessions') AS svg)
SELECT position('>0.474<' IN svg) > 0 AS bar_total,
       position('>IPC:ProcArrayGroupUpdate<' IN svg) > 0 AS legend_whole,
       (SELECT min(x2 - x1) FROM (SELECT m[1]::numeric AS x1, lead(m[1]::numeric) OVER (ORDER BY m[1]::numeric) AS x2
                                  FROM regexp_matches(svg, '<text x="([0-9.]+)" y="[0-9.]+" class="lg">', 'g') m) z)
         >= 24 * 0.64 * 12.5 AS legend_apart
FROM b;

-- markdown: "<" and "&" as entities, markup escaped, ">" as written
SELECT folio_perf_data.md_escape('jsonb->>$1 <b>x</b> a&b | *y* > 0') AS md_arrows;
-- a row of a dimension without a module leaves the module empty; the
-- null keys of database and state rows say what they are, and so does a
-- statement of query id 0 (no text)
SELECT folio_perf_data.render_section('markdown', '{"title": "t", "columns": ["dimension", "key", "module", "aas", "query"], "rows": [
    {"dimension": "total", "key": "all", "module": null, "aas": 1.5},
    {"dimension": "wait_event", "key": "CPU", "module": null, "aas": 1},
    {"dimension": "module", "key": null, "module": null, "aas": 0.5},
    {"dimension": "statement", "key": "0", "queryid": 0, "module": "mod_users", "aas": 0.2, "query": null},
    {"dimension": "database", "key": null, "module": null, "aas": 0.1},
    {"dimension": "state", "key": null, "aas": 0}]}') AS rendered;

-- trend: two parts need a snapshot inside the window
SELECT part, kind, module, calls, inserts FROM folio_perf_trend(:w2, 2)
WHERE module = 'mod_circulation_storage' ORDER BY part, kind, calls;

-- errors
SELECT folio_perf_report(:w2, 'pdf');
SELECT folio_perf_compare(:w1, 999999);
SELECT * FROM folio_perf_trend(:w1, 2);
SELECT * FROM folio_perf_trend(:w2, 1);

-- fmt_num, fmt_sig and fmt_bytes are in C (src/format.c): the same strings as the
-- PL/pgSQL they replaced (kept here) for integers, fractions, negatives,
-- halves, large values, NaN, infinities, NULLs and negative digits.
\set QUIET on
CREATE FUNCTION pg_temp.plpgsql_fmt_num(n numeric, digits int)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    r numeric := pg_catalog.round(n, digits);
    f text;
BEGIN
    IF n IS NULL THEN
        RETURN '';
    END IF;
    f := pg_catalog.rtrim(pg_catalog.split_part(pg_catalog.abs(r)::text, '.', 2), '0');
    RETURN CASE WHEN r < 0 THEN '-' ELSE '' END
        || pg_catalog.to_char(pg_catalog.trunc(pg_catalog.abs(r)), 'FM999,999,999,999,999,999,990')
        || CASE WHEN f <> '' THEN '.' || f ELSE '' END;
END
$$;

CREATE FUNCTION pg_temp.plpgsql_fmt_sig(n numeric)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
BEGIN
    RETURN pg_temp.plpgsql_fmt_num(n, CASE WHEN pg_catalog.abs(n) >= 100 THEN 0 WHEN pg_catalog.abs(n) >= 10 THEN 1
                                           WHEN pg_catalog.abs(n) >= 1 THEN 2 ELSE 3 END);
END
$$;
CREATE FUNCTION pg_temp.plpgsql_fmt_bytes(n numeric)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    a numeric := pg_catalog.abs(n);
    e int;
BEGIN
    IF n IS NULL THEN
        RETURN '';
    ELSIF a < 1024 THEN
        RETURN pg_temp.plpgsql_fmt_num(n, 0) || ' B';
    END IF;
    e := CASE WHEN a < 1048576 THEN 1 WHEN a < 1073741824 THEN 2 WHEN a < 1099511627776 THEN 3 ELSE 4 END;
    RETURN pg_temp.plpgsql_fmt_num(n / 1024::numeric ^ e, CASE WHEN a / 1024::numeric ^ e < 10 THEN 1 ELSE 0 END)
        || ' ' || (ARRAY['kB', 'MB', 'GB', 'TB'])[e];
END
$$;
\set QUIET off
CREATE TEMP TABLE fmt_cases AS
SELECT v::numeric AS n
FROM unnest(ARRAY['0', '-0', '0.5', '-0.5', '1', '-1', '0.0004999', '0.0005', '0.00050', '9.995', '9.9949',
                  '99.95', '100', '999.5', '1234.5678', '-1234.5678', '1000000', '123456789.987654321',
                  '1e15', '-1e15', '1e20', '999999999999999999999.4', '1e21', '-1e22', '12345678901234567890123.45',
                  '0.1', '0.125', '-0.125', '2.5', '3.5', '1e-20', 'NaN', 'Infinity', '-Infinity', NULL]) v
UNION ALL SELECT g * 3.7 - 500 FROM generate_series(1, 300) g
UNION ALL SELECT (g * 12345.6789)::numeric FROM generate_series(-50, 50) g;
SELECT count(*) AS fmt_cases,
       count(*) FILTER (WHERE folio_perf_data.fmt_num(c.n, d) IS DISTINCT FROM pg_temp.plpgsql_fmt_num(c.n, d)) AS fmt_num_differ,
       count(*) FILTER (WHERE folio_perf_data.fmt_sig(c.n) IS DISTINCT FROM pg_temp.plpgsql_fmt_sig(c.n)) AS fmt_sig_differ
FROM fmt_cases c, unnest(ARRAY[-2, 0, 1, 2, 3, 6, NULL]) d;
SELECT count(*) AS bytes_cases,
       count(*) FILTER (WHERE folio_perf_data.fmt_bytes(b) IS DISTINCT FROM pg_temp.plpgsql_fmt_bytes(b)) AS fmt_bytes_differ
FROM (SELECT c.n * m AS b FROM fmt_cases c, unnest(ARRAY[1, 1000, 1024, 1048576, 1e9, 1099511627776, 1e15]::numeric[]) m
      UNION ALL SELECT unnest(ARRAY[1023, 1024, 1048575, 1048576, 10239, 10240, 1073741823, 1073741824,
                                    1099511627775, 1099511627776, 10995116277759, -2048, -1]::numeric[])) x;
SELECT folio_perf_data.fmt_bytes(8192) AS kb, folio_perf_data.fmt_bytes(1536) AS kb_decimal,
       folio_perf_data.fmt_bytes(512) AS b, folio_perf_data.fmt_bytes(-3.5 * 1073741824) AS negative_gb,
       folio_perf_data.fmt_bytes(NULL) = '' AS null_empty;
SELECT folio_perf_data.fmt_num(-1234567.891, 2) AS negative, folio_perf_data.fmt_num(0.10, 3) AS trimmed,
       folio_perf_data.fmt_num(NULL, 1) = '' AS null_empty, folio_perf_data.fmt_num(1, NULL) IS NULL AS null_digits,
       folio_perf_data.fmt_sig(0.0123456) AS sig_small, folio_perf_data.fmt_sig(123456.7) AS sig_large;

------------------------------------------------------------------------
-- The renderer and its per-cell helpers are C (src/render.c): fold,
-- html_escape, html_wrap, md_escape, sql_start, col_kind, fmt_value and
-- render_section.  Their PL/pgSQL, kept here as pg_temp.ref_*, gives the
-- same strings: on planted values (control characters, markup, non-ASCII
-- letters and spaces, where a regular expression's classes follow the
-- locale), on planted sections (split, folded, worse_up, statements with
-- and without numbers, missing keys), and on every report, compare and
-- series of this fixture, rendered once with the PL/pgSQL put in place of
-- the C functions (in a transaction rolled back) and once without.
-- (The PL/pgSQL is not echoed: it is the 1.1.0 development's
-- sql/parts/120_rendering.sql before src/render.c, renamed.)
------------------------------------------------------------------------
\set ECHO none
\set QUIET on
CREATE FUNCTION pg_temp.ref_html_escape(s text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
         coalesce(s, ''), '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '"', '&quot;'), '''', '&#39;');
END
$$;

CREATE FUNCTION pg_temp.ref_fold(s text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN pg_catalog.regexp_replace(pg_catalog.regexp_replace(coalesce(s, ''), '[\r\n\t]+', ' ', 'g'),
                                   '[\x01-\x08\x0b\x0c\x0e-\x1f\x7f]', '?', 'g');
END
$$;

CREATE FUNCTION pg_temp.ref_md_escape(s text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- an underscore inside a word (mod_users) cannot start or end
    -- emphasis and stays as it is: it is set aside (as a control
    -- character, which fold() has replaced in the text) while the others
    -- are escaped
    RETURN pg_catalog.replace(pg_catalog.regexp_replace(pg_catalog.regexp_replace(
           pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(
               pg_temp.ref_fold(s), '\', '\\'), '&', '&amp;'), '<', '&lt;'),
           '([[:alnum:]])_(?=[[:alnum:]])', E'\\1\x01', 'g'),
           '([`*_\[\]#|~])', '\\\1', 'g'), E'\x01', '_');
END
$$;

CREATE FUNCTION pg_temp.ref_html_wrap(s text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN pg_catalog.regexp_replace(pg_temp.ref_html_escape(s), '([_.,(/]+)', '\1<wbr>', 'g');
END
$$;

CREATE FUNCTION pg_temp.ref_col_kind(col text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN CASE
    WHEN col = 'query' THEN 'query'
    WHEN col IN ('rank', 'queryid') THEN 'id'
    WHEN col = 'duration_s' THEN 'duration'
    WHEN col LIKE '%delta\_pct' OR col IN ('mean_change_pct', 'Delta, %') THEN 'delta_pct'
    WHEN col LIKE '%delta\_ms' OR col = 'delta' THEN 'delta'
    WHEN col LIKE '%pct%' OR col LIKE '%ratio%' THEN 'pct'
    WHEN col LIKE '%bytes\_per\_s%' THEN 'bytes_s'
    WHEN col LIKE '%bytes%' OR col LIKE 'size%' OR col LIKE 'growth%' OR col LIKE 'db\_size%'
      THEN 'bytes'
    WHEN col = 'duration_s' THEN 'duration'
    WHEN col LIKE '%\_at' OR col IN ('begin', 'end') THEN 'time'
    WHEN col LIKE '%\_ms' OR col LIKE '%\_ms\_%' OR col = 'ms' THEN 'ms'
    WHEN col IN ('aas', 'avg', 'load', 'db_load_avg', 'connections_avg') OR col LIKE 'aas\_%'
      OR col LIKE 'avg\_%' OR col LIKE '%\_avg' OR col LIKE '%per\_s%' OR col LIKE '%seconds%'
      THEN 'measure'
    ELSE 'count' END;
END
$$;

CREATE FUNCTION pg_temp.ref_fmt_value(v jsonb, kind text)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t text := pg_catalog.jsonb_typeof(v);
    n numeric;
BEGIN
    IF v IS NULL OR t = 'null' THEN
        RETURN '';
    ELSIF t = 'string' AND kind = 'time' THEN
        RETURN pg_catalog.to_char((v #>> '{}')::timestamptz, 'YYYY-MM-DD HH24:MI:SS TZ');
    ELSIF t <> 'number' THEN
        RETURN v #>> '{}';
    ELSIF kind = 'id' THEN
        RETURN v::text;
    END IF;
    n := v::numeric;
    RETURN CASE
        WHEN kind = 'count' AND n = pg_catalog.trunc(n) THEN folio_perf_data.fmt_num(n, 0)
        WHEN kind = 'delta_pct' THEN CASE WHEN n > 0 THEN '+' ELSE '' END || folio_perf_data.fmt_num(n, 1) || '%'
        WHEN kind = 'pct' THEN folio_perf_data.fmt_num(n, 1)
        WHEN kind = 'delta' THEN CASE WHEN n > 0 THEN '+' ELSE '' END || folio_perf_data.fmt_sig(n)
        WHEN kind = 'bytes' THEN folio_perf_data.fmt_bytes(n)
        WHEN kind = 'bytes_s' THEN folio_perf_data.fmt_bytes(n) || '/s'
        WHEN kind = 'duration' THEN folio_perf_data.fmt_duration(n)
        ELSE folio_perf_data.fmt_sig(n) END;
END
$$;

CREATE FUNCTION pg_temp.ref_sql_start(q text, n int)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN CASE WHEN pg_catalog.length(pg_catalog.btrim(pg_catalog.regexp_replace(pg_temp.ref_fold(q), '\s+', ' ', 'g'))) > n
              THEN pg_catalog.rtrim(pg_catalog.left(pg_catalog.btrim(pg_catalog.regexp_replace(pg_temp.ref_fold(q), '\s+', ' ', 'g')), n - 1)) || '...'
              ELSE pg_catalog.btrim(pg_catalog.regexp_replace(pg_temp.ref_fold(q), '\s+', ' ', 'g')) END;
END
$$;

CREATE FUNCTION pg_temp.ref_render_section(fmt text, sec jsonb, qmap jsonb DEFAULT '{}')
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
-- Cells are formatted once and lines collected in an array joined at the
-- end: appending to one growing text is quadratic, and a comparison can
-- have 5,000 statement rows.
DECLARE
    cols text[] := ARRAY(SELECT jsonb_array_elements_text(sec->'columns'));
    labels text[] := ARRAY(SELECT jsonb_array_elements_text(sec->'labels'));
    -- read once: sec is large, and reading a member of it per cell would
    -- parse it again for every cell
    right_cols text[] := ARRAY(SELECT jsonb_array_elements_text(coalesce(sec->'right', '[]')));
    worse_cols text[] := ARRAY(SELECT jsonb_array_elements_text(coalesce(sec->'worse_up', '[]')));
    nc int := coalesce(array_length(cols, 1), 0);
    kinds text[];
    w int[];
    num boolean[];
    seen boolean[];
    r jsonb;
    cells text[] := '{}';
    lines text[] := '{}';
    out text := '';
    line text;
    i int;
    k int;
    c text;
    v jsonb;
    qn text;
    cls text;
    title text := coalesce(sec->>'title', '');
BEGIN
    IF fmt = 'markdown' THEN
        out := '### ' || pg_temp.ref_md_escape(title) || E'\n\n';
    ELSIF fmt = 'html' THEN
        out := '<section id="' || coalesce(sec->>'id', folio_perf_data.slug(title)) || '"><h2>'
            || pg_temp.ref_html_escape(pg_temp.ref_fold(title)) || E'</h2>\n';
    ELSE
        out := pg_temp.ref_fold(title) || E'\n' || repeat('=', length(pg_temp.ref_fold(title))) || E'\n';
    END IF;
    IF sec->>'note' IS NOT NULL THEN
        out := out || CASE fmt WHEN 'html' THEN '<p class="note">' || pg_temp.ref_html_escape(pg_temp.ref_fold(sec->>'note')) || E'</p>\n'
                               WHEN 'markdown' THEN '_' || pg_temp.ref_md_escape(sec->>'note') || E'_\n\n'
                               ELSE '(' || pg_temp.ref_fold(sec->>'note') || E')\n' END;
    END IF;
    IF nc = 0 OR jsonb_array_length(coalesce(sec->'rows', '[]')) = 0 THEN
        IF sec->>'note' IS NULL THEN
            out := out || CASE fmt WHEN 'html' THEN E'<p class="note">No rows.</p>\n' ELSE E'(no rows)\n' END;
        END IF;
        RETURN out || CASE fmt WHEN 'html' THEN E'</section>\n' ELSE E'\n' END;
    END IF;

    -- cells, column widths and alignment: right-aligned are the columns
    -- of numbers (a column of NULLs only is text)
    kinds := ARRAY(SELECT pg_temp.ref_col_kind(x) FROM unnest(cols) x);
    seen := array_fill(false, ARRAY[nc]);
    w := array_fill(0, ARRAY[nc]);
    num := array_fill(true, ARRAY[nc]);
    FOR i IN 1..nc LOOP
        labels[i] := pg_temp.ref_fold(coalesce(labels[i], folio_perf_data.col_label(cols[i])));
        w[i] := length(labels[i]);
        IF kinds[i] IN ('query', 'time') THEN
            num[i] := false;
        END IF;
    END LOOP;
    FOR r IN SELECT * FROM jsonb_array_elements(sec->'rows') LOOP
        FOR i IN 1..nc LOOP
            v := r->cols[i];
            IF kinds[i] = 'query' AND (v IS NULL OR jsonb_typeof(v) = 'null') AND r->>'queryid' = '0' THEN
                -- sampled sessions whose statement had no query id (yet)
                c := '(no query id: a statement being parsed, or one without)';
            ELSIF kinds[i] = 'query' THEN
                qn := qmap->>(v #>> '{}');
                c := coalesce('[Q' || qn || '] ', '')
                     || pg_temp.ref_sql_start(v #>> '{}', CASE fmt WHEN 'html' THEN 160 ELSE 60 END);
            ELSIF (v IS NULL OR jsonb_typeof(v) = 'null')
                  AND (cols[i] = 'module' AND (NOT r ? 'dimension'
                                               OR r->>'dimension' IN ('module', 'role', 'statement', 'statement_wait_event',
                                                                      'tenant_module', 'application_name', 'attribution'))
                       OR cols[i] = 'key' AND r->>'dimension' IN ('tenant', 'module', 'tenant_module', 'role', 'application_name', 'attribution')) THEN
                -- a row that could have a module (or this key) and has
                -- none; a total, wait event or tenant row has no module
                c := '(unattributed)';
            ELSIF (v IS NULL OR jsonb_typeof(v) = 'null') AND cols[i] = 'key' AND r->>'dimension' IN ('database', 'state') THEN
                -- processes of no database (background processes);
                -- backends not yet reporting a state (still connecting)
                c := CASE r->>'dimension' WHEN 'database' THEN '(no database)' ELSE '(connecting)' END;
            ELSE
                c := pg_temp.ref_fold(pg_temp.ref_fmt_value(v, kinds[i]));
            END IF;
            cells := cells || c;
            w[i] := greatest(w[i], length(c));
            IF v IS NOT NULL AND jsonb_typeof(v) NOT IN ('number', 'null')
               AND NOT cols[i] = ANY (right_cols) THEN
                num[i] := false;
            ELSIF jsonb_typeof(v) = 'number' OR cols[i] = ANY (right_cols) THEN
                seen[i] := true;
            END IF;
        END LOOP;
    END LOOP;

    FOR i IN 1..nc LOOP
        num[i] := num[i] AND seen[i];
    END LOOP;

    -- html: a long two-column table (the summary) in three side by side
    IF fmt = 'html' AND nc = 2 AND coalesce((sec->>'split')::boolean, false)
       AND jsonb_array_length(sec->'rows') > 12 THEN
        k := ceil(jsonb_array_length(sec->'rows') / 3.0);
        RETURN out || '<div class="kvs">'
            || (SELECT string_agg(regexp_replace(regexp_replace(
                    pg_temp.ref_render_section('html', jsonb_strip_nulls(jsonb_build_object('columns', sec->'columns',
                        'labels', sec->'labels', 'right', sec->'right', 'title', '',
                        'rows', (SELECT jsonb_agg(x ORDER BY o) FROM jsonb_array_elements(sec->'rows') WITH ORDINALITY t(x, o)
                                 WHERE (o - 1) / k = g)))),
                    '^<section[^>]*><h2></h2>\n', ''), '</section>\n$', ''), '' ORDER BY g)
                FROM generate_series(0, 2) g)
            || E'</div>\n</section>\n';
    END IF;

    IF fmt = 'html' THEN
        line := CASE WHEN coalesce((sec->>'fold')::boolean, false)
                     THEN format('<details class="fold"><summary>%s rows</summary>', jsonb_array_length(sec->'rows'))
                     ELSE '' END
            || '<div class="tw"><table' || CASE WHEN nc > 12 THEN ' class="wide many"'
                                                 WHEN 'query' = ANY (cols) OR nc > 8 THEN ' class="wide"' ELSE '' END
            || '><thead><tr>';
        FOR i IN 1..nc LOOP
            line := line || CASE WHEN num[i] THEN '<th class="n">' ELSE '<th>' END
                || pg_temp.ref_html_escape(labels[i]) || '</th>';
        END LOOP;
        lines := lines || (line || E'</tr></thead>\n<tbody>');
        k := 0;
        FOR r IN SELECT * FROM jsonb_array_elements(sec->'rows') LOOP
            line := '<tr>';
            FOR i IN 1..nc LOOP
                k := k + 1;
                c := cells[k];
                IF kinds[i] = 'query' AND r->>cols[i] IS NOT NULL THEN
                    qn := qmap->>(r->>cols[i]);
                    line := line || '<td class="q">' || coalesce('<a href="#q' || qn || '">Q' || qn || '</a> ', '')
                        || CASE WHEN length(pg_temp.ref_fold(r->>cols[i])) > 160
                                THEN '<details><summary>' || pg_temp.ref_html_wrap(pg_temp.ref_sql_start(r->>cols[i], 160))
                                     || '</summary><code>' || pg_temp.ref_html_wrap(r->>cols[i]) || '</code></details>'
                                ELSE '<code>' || pg_temp.ref_html_wrap(pg_temp.ref_fold(r->>cols[i])) || '</code>' END
                        || '</td>';
                ELSIF cols[i] = 'plan' AND c = 'changed' THEN
                    line := line || '<td class="plan" title="the slowest plan has another shape">changed</td>';
                ELSIF cols[i] = 'plan' AND length(c) > 40 THEN
                    line := line || '<td><details><summary>plan</summary><pre>'
                        || pg_temp.ref_html_escape(r->>cols[i]) || '</pre></details></td>';
                ELSE
                    cls := CASE WHEN num[i] THEN 'n' ELSE '' END;
                    IF cols[i] = ANY (worse_cols) AND jsonb_typeof(r->cols[i]) = 'number' THEN
                        cls := cls || CASE WHEN (r->>cols[i])::numeric >= 10 THEN ' worse'
                                           WHEN (r->>cols[i])::numeric <= -10 THEN ' better' ELSE '' END;
                    ELSIF cols[i] = 'severity' THEN
                        cls := cls || ' sev-' || c;
                    ELSIF cols[i] = 'status' AND c IN ('new', 'gone') THEN
                        cls := cls || ' st-' || c;
                    END IF;
                    line := line || CASE WHEN btrim(cls) <> '' THEN '<td class="' || btrim(cls) || '">' ELSE '<td>' END
                        || CASE WHEN num[i] OR length(c) <= 20 THEN pg_temp.ref_html_escape(c)
                                ELSE pg_temp.ref_html_wrap(c) END || '</td>';
                END IF;
            END LOOP;
            lines := lines || (line || '</tr>');
        END LOOP;
        RETURN out || array_to_string(lines, E'\n') || E'\n</tbody></table></div>'
            || CASE WHEN coalesce((sec->>'fold')::boolean, false) THEN '</details>' ELSE '' END
            || E'\n</section>\n';
    END IF;

    IF fmt = 'markdown' THEN
        line := '|';
        FOR i IN 1..nc LOOP
            line := line || ' ' || pg_temp.ref_md_escape(labels[i]) || ' |';
        END LOOP;
        lines := lines || line;
        line := '|';
        FOR i IN 1..nc LOOP
            line := line || CASE WHEN num[i] THEN ' ---: |' ELSE ' :--- |' END;
        END LOOP;
        lines := lines || line;
        k := 0;
        FOR r IN SELECT * FROM jsonb_array_elements(sec->'rows') LOOP
            line := '|';
            FOR i IN 1..nc LOOP
                k := k + 1;
                c := pg_temp.ref_md_escape(cells[k]);
                IF cols[i] = 'plan' AND cells[k] = 'changed' THEN
                    c := '**changed**';
                END IF;
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
            || CASE WHEN num[i] THEN lpad(labels[i], w[i]) ELSE rpad(labels[i], w[i]) END;
    END LOOP;
    lines := lines || rtrim(line);
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


\set QUIET off
\set ECHO all
CREATE TEMP TABLE render_strings AS
SELECT s FROM unnest(ARRAY[
    NULL, '', ' ', 'plain', E'a\r\n\tb', E'\n\nlead and trail\t\t', E'ctl\x01\x02\x07\x0b\x0c\x1b[31mred\x7f',
    '<b>&"it''s"</b>', 'jsonb->>$1 <b>x</b> a&b | *y* > 0', 'mod_users.user_id', '_lead trail_ a__b a_ _b',
    'x_1_y_2 `code` [link](u) #h ~s~ \ back\slash', 'fs09000000_mod_source_record_manager.job_execution',
    'ä_b é_ü mod_ümlaut x_日本 日本_語 ß_s', E'SELECT\u3000*  FROM\u00a0t\u2003WHERE   x = 1', 'a.b,c(d/e__f..g',
    repeat('SELECT jsonb FROM mod_inventory_storage.instance WHERE id = $1 ', 5),
    repeat('é', 70) || ' tail', repeat('日本語 ', 30), E'\u00a0\u00a0lead', 'Delta, %']) s;
SELECT count(*) AS strings,
       count(*) FILTER (WHERE folio_perf_data.fold(s) IS DISTINCT FROM pg_temp.ref_fold(s)) AS fold_differ,
       count(*) FILTER (WHERE folio_perf_data.html_escape(s) IS DISTINCT FROM pg_temp.ref_html_escape(s)) AS html_escape_differ,
       count(*) FILTER (WHERE folio_perf_data.html_wrap(s) IS DISTINCT FROM pg_temp.ref_html_wrap(s)) AS html_wrap_differ,
       count(*) FILTER (WHERE folio_perf_data.md_escape(s) IS DISTINCT FROM pg_temp.ref_md_escape(s)) AS md_escape_differ,
       count(*) FILTER (WHERE folio_perf_data.col_kind(s) IS DISTINCT FROM pg_temp.ref_col_kind(s)) AS col_kind_differ
FROM render_strings;
SELECT count(*) AS cuts,
       count(*) FILTER (WHERE folio_perf_data.sql_start(s, n) IS DISTINCT FROM pg_temp.ref_sql_start(s, n)) AS sql_start_differ
FROM render_strings, unnest(ARRAY[-3, 0, 1, 2, 10, 40, 60, 160, NULL]) n;
-- every column name a report can have, and names built to hit each rule
SELECT count(*) AS columns,
       count(*) FILTER (WHERE folio_perf_data.col_kind(c) IS DISTINCT FROM pg_temp.ref_col_kind(c)) AS col_kind_differ
FROM (SELECT unnest(regexp_matches(pg_get_functiondef('folio_perf_data.col_label(text)'::regprocedure),
                                   '\(''([^'']+)'',', 'g')) AS c
      UNION ALL SELECT unnest(ARRAY['query', 'rank', 'queryid', 'duration_s', 'x_delta_pct', 'mean_change_pct',
          'x_delta_ms', 'delta', 'x_pct_y', 'hit_ratio', 'wal_bytes_per_s', 'size_end', 'growth_x', 'db_size_x',
          'ended_at', 'begin', 'end', 'total_ms', 'a_ms_b', 'ms', 'aas', 'aas_x', 'avg_x', 'x_avg', 'x_per_s_y',
          'cpu_seconds', 'calls', 'deltapct', 'x_ms2', 'Delta, %', 'delta_pct_x'])) x;
SELECT count(*) AS values_kinds,
       count(*) FILTER (WHERE folio_perf_data.fmt_value(v, k) IS DISTINCT FROM pg_temp.ref_fmt_value(v, k)) AS fmt_value_differ
FROM unnest(ARRAY['0', '-0.5', '1', '12', '12.5', '-12.5', '1234567', '1234567.891', '-1e15', '0.000123', '86399.5',
                  '360000', '1048576', '-2048', '"text"', '"2026-12-07 10:00:00+00"', 'true', 'null', '{"a": 1}', '[1, 2]',
                  '"multi\nline"', NULL]::jsonb[]) v,
     unnest(ARRAY['count', 'delta_pct', 'pct', 'delta', 'bytes', 'bytes_s', 'duration', 'id', 'ms', 'measure',
                  'query', 'no such kind', NULL]) k
UNION ALL
SELECT 0, count(*) FILTER (WHERE folio_perf_data.fmt_value(v, 'time') IS DISTINCT FROM pg_temp.ref_fmt_value(v, 'time'))
FROM unnest(ARRAY['"2026-12-07 10:00:00+00"', '"2026-01-01T00:00:00.5Z"', '12.5', 'null', NULL]::jsonb[]) v;
-- planted sections, in the three formats (and a format no renderer knows:
-- text)
CREATE TEMP TABLE render_sections AS
SELECT * FROM (VALUES
  ('kvs', jsonb_build_object('title', 'Summary', 'id', 'summary', 'split', true, 'columns', '["metric", "value"]'::jsonb,
       'right', '["value"]'::jsonb,
       'rows', (SELECT jsonb_agg(jsonb_build_object('metric', 'm_' || g, 'value',
                    CASE WHEN g % 5 = 0 THEN NULL WHEN g % 3 = 0 THEN to_jsonb(g * 1.5) ELSE to_jsonb('v ' || g) END)
                    || CASE WHEN g = 4 THEN '{"dimension": null}' ELSE '{}' END)
                FROM generate_series(1, 14) g))),
  ('kvs_module', jsonb_build_object('title', 'By module', 'split', true, 'columns', '["module", "aas"]'::jsonb,
       'rows', (SELECT jsonb_agg(jsonb_build_object('module', CASE WHEN g % 4 = 0 THEN NULL ELSE 'mod_' || g END, 'aas', g)
                    || CASE WHEN g % 2 = 0 THEN '{"dimension": null}' WHEN g % 3 = 0 THEN '{"dimension": "role"}' ELSE '{}' END)
                FROM generate_series(1, 13) g))),
  ('folded', jsonb_build_object('title', E'Top <statements>\n& more', 'fold', true, 'note', E'a note_with *markup*\t<x>',
       'columns', '["rank", "tenant", "module", "query", "calls", "total_exec_ms", "time_delta_pct", "severity", "status", "plan", "size_end", "wal_bytes_per_s", "duration_s", "ended_at"]'::jsonb,
       'worse_up', '["time_delta_pct"]'::jsonb,
       'rows', jsonb_build_array(
           jsonb_build_object('rank', 1, 'tenant', 'fs09000000', 'module', 'mod_users', 'query', 'SELECT jsonb FROM mod_users.users WHERE id = $1',
                              'calls', 12345, 'total_exec_ms', 1234.5678, 'time_delta_pct', 12.3, 'severity', 'warning',
                              'status', 'new', 'plan', 'changed', 'size_end', 123456789, 'wal_bytes_per_s', 2048.5,
                              'duration_s', 3725, 'ended_at', '2026-12-07 10:00:00+00'),
           jsonb_build_object('rank', 2, 'tenant', 'fs09000000', 'module', null, 'query', repeat('UPDATE mod_inventory_storage.item SET jsonb = $1 WHERE id = $2; ', 4),
                              'calls', 0.5, 'total_exec_ms', -3, 'time_delta_pct', -15, 'severity', 'critical',
                              'status', 'gone', 'plan', repeat('Seq Scan on item ', 4), 'size_end', null,
                              'wal_bytes_per_s', null, 'duration_s', null, 'ended_at', null),
           jsonb_build_object('rank', 3, 'queryid', 0, 'query', null, 'calls', 'n/a', 'severity', 'info', 'status', 'same',
                              'plan', 'short'),
           '"not an object"'::jsonb,
           jsonb_build_object('rank', 4, 'tenant', 'ä_b', 'module', 'mod_ümlaut', 'query', E'SELECT\u3000x\n FROM t',
                              'calls', 1e20, 'total_exec_ms', 0.000123, 'time_delta_pct', 9.99, 'severity', '',
                              'status', 'new', 'plan', E'a\nb', 'size_end', 1023, 'duration_s', 86400 * 5 + 1)))),
  ('dims', jsonb_build_object('title', 't', 'columns', '["dimension", "key", "module", "aas", "query"]'::jsonb,
       'labels', '["By", null, "Mod_ule"]'::jsonb,
       'rows', '[{"dimension": "total", "key": "all", "module": null, "aas": 1.5},
                 {"dimension": "wait_event", "key": "CPU", "module": null, "aas": 1},
                 {"dimension": "module", "key": null, "module": null, "aas": 0.5},
                 {"dimension": "statement", "key": "0", "queryid": 0, "module": "mod_users", "aas": 0.2, "query": null},
                 {"dimension": "database", "key": null, "module": null, "aas": 0.1},
                 {"dimension": "state", "key": null, "aas": 0},
                 {"key": null, "aas": 2}]'::jsonb)),
  ('empty', '{"title": "Nothing", "columns": ["a"], "rows": []}'::jsonb),
  ('empty_note', '{"title": "Nothing", "note": "none seen", "columns": ["a"], "rows": []}'::jsonb),
  ('no_columns', '{"title": "No columns", "rows": [{"a": 1}]}'::jsonb),
  ('not_object', '[1, 2]'::jsonb),
  ('null', NULL::jsonb)) v(name, sec);
SELECT name, f,
       folio_perf_data.render_section(f, sec, q) IS NOT DISTINCT FROM pg_temp.ref_render_section(f, sec, q) AS same,
       length(folio_perf_data.render_section(f, sec, q)) AS length
FROM render_sections,
     unnest(ARRAY['text', 'markdown', 'html', 'pdf', NULL]) f,
     unnest(ARRAY['{"SELECT jsonb FROM mod_users.users WHERE id = $1": 1}'::jsonb, '{}'::jsonb, NULL]) q
WHERE q IS NOT DISTINCT FROM '{"SELECT jsonb FROM mod_users.users WHERE id = $1": 1}'::jsonb OR name = 'folded'
ORDER BY name, f NULLS LAST, q::text NULLS LAST;
-- wrong shapes are errors, not crashes
SELECT folio_perf_data.render_section('text', '{"columns": 5, "rows": []}');
SELECT folio_perf_data.render_section('text', '{"columns": ["a"], "rows": {"a": 1}}');
SELECT folio_perf_data.render_section('text', '{"columns": ["a", null], "rows": [{"a": 1}]}');
SELECT folio_perf_data.render_section('html', '{"columns": ["a", "b"], "split": "maybe", "rows": [{"a": 1}]}');
-- 70,000 columns of 40,000 empty rows (a jsonb of 1 MB): 2.8 billion
-- cells, more than an int counts
SELECT folio_perf_data.render_section('text', jsonb_build_object(
    'columns', (SELECT jsonb_agg('c' || g) FROM generate_series(1, 70000) g),
    'labels', (SELECT jsonb_agg('C' || g) FROM generate_series(1, 70000) g),
    'rows', (SELECT jsonb_agg('{}'::jsonb) FROM generate_series(1, 40000) g)));
-- every document of this fixture, rendered by the PL/pgSQL and by the C
CREATE FUNCTION pg_temp.documents(w1 bigint, w2 bigint) RETURNS TABLE(doc text, md5 text)
LANGUAGE sql AS $$
  SELECT d || ' ' || f, md5(regexp_replace(x, '(enerated by folio_perf|generated at)[^\n<]*', '', 'g'))
  FROM unnest(ARRAY['text', 'markdown', 'html']) f,
       LATERAL (VALUES ('report 1', folio_perf_report(w1, f)), ('report 2', folio_perf_report(w2, f)),
                       ('compare', folio_perf_compare(w1, w2, f)),
                       ('series', folio_perf_series_report(ARRAY[w1, w2], f))) v(d, x)
$$;
BEGIN;
CREATE OR REPLACE FUNCTION folio_perf_data.fold(s text) RETURNS text LANGUAGE sql IMMUTABLE
  SET search_path = pg_catalog, pg_temp AS $$ SELECT pg_temp.ref_fold(s) $$;
CREATE OR REPLACE FUNCTION folio_perf_data.html_escape(s text) RETURNS text LANGUAGE sql IMMUTABLE
  SET search_path = pg_catalog, pg_temp AS $$ SELECT pg_temp.ref_html_escape(s) $$;
CREATE OR REPLACE FUNCTION folio_perf_data.html_wrap(s text) RETURNS text LANGUAGE sql IMMUTABLE
  SET search_path = pg_catalog, pg_temp AS $$ SELECT pg_temp.ref_html_wrap(s) $$;
CREATE OR REPLACE FUNCTION folio_perf_data.md_escape(s text) RETURNS text LANGUAGE sql IMMUTABLE
  SET search_path = pg_catalog, pg_temp AS $$ SELECT pg_temp.ref_md_escape(s) $$;
CREATE OR REPLACE FUNCTION folio_perf_data.sql_start(q text, n int) RETURNS text LANGUAGE sql IMMUTABLE
  SET search_path = pg_catalog, pg_temp AS $$ SELECT pg_temp.ref_sql_start(q, n) $$;
CREATE OR REPLACE FUNCTION folio_perf_data.col_kind(col text) RETURNS text LANGUAGE sql IMMUTABLE
  SET search_path = pg_catalog, pg_temp AS $$ SELECT pg_temp.ref_col_kind(col) $$;
CREATE OR REPLACE FUNCTION folio_perf_data.fmt_value(v jsonb, kind text) RETURNS text LANGUAGE sql IMMUTABLE
  SET search_path = pg_catalog, pg_temp AS $$ SELECT pg_temp.ref_fmt_value(v, kind) $$;
CREATE OR REPLACE FUNCTION folio_perf_data.render_section(fmt text, sec jsonb, qmap jsonb DEFAULT '{}') RETURNS text
  LANGUAGE sql IMMUTABLE SET search_path = pg_catalog, pg_temp AS $$ SELECT pg_temp.ref_render_section(fmt, sec, qmap) $$;
SELECT (SELECT count(*) FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
        WHERE p.pronamespace = 'folio_perf_data'::regnamespace AND l.lanname = 'c'
          AND p.proname IN ('fold', 'html_escape', 'html_wrap', 'md_escape', 'sql_start', 'col_kind', 'fmt_value',
                            'render_section')) AS c_functions_left,
       string_agg(doc || '=' || md5, ',' ORDER BY doc) AS by_plpgsql
FROM pg_temp.documents(:w1, :w2) \gset
ROLLBACK;
SELECT :c_functions_left AS c_functions_while_plpgsql,
       (SELECT count(*) FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
        WHERE p.pronamespace = 'folio_perf_data'::regnamespace AND l.lanname = 'c'
          AND p.proname IN ('fold', 'html_escape', 'html_wrap', 'md_escape', 'sql_start', 'col_kind', 'fmt_value',
                            'render_section')) AS c_functions,
       count(*) AS documents,
       string_agg(doc || '=' || md5, ',' ORDER BY doc) = :'by_plpgsql' AS same_as_plpgsql
FROM pg_temp.documents(:w1, :w2);
