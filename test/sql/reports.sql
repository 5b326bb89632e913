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
