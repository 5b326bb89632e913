-- bench/sql/render_sections.sql - time the renderer alone on the largest
-- table of a 40-tenant report: "Module activity (per tenant)", 800 rows of
-- 13 columns, in markdown, html and text.  Needs folio_perf installed in
-- the database; run with psql -X -f (it prints psql's \timing).
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
\timing on
CREATE TEMP TABLE bench_sec AS
SELECT folio_perf_data.section('Module activity (per tenant)',
    ARRAY['tenant', 'module', 'inserts', 'updates', 'deletes', 'seq_scan', 'idx_scan',
          'blks_read', 'size_end', 'growth', 'statement_calls', 'statement_time_ms', 'flags'],
    (SELECT jsonb_agg(jsonb_build_object('tenant', 'fs' || lpad((g % 40)::text, 8, '0'),
                'module', 'mod_module_' || (g / 40), 'inserts', g * 1234, 'updates', g, 'deletes', 0,
                'seq_scan', g, 'idx_scan', g * 7, 'blks_read', g * 3, 'size_end', g * 123456,
                'growth', g * 1000, 'statement_calls', g * 10, 'statement_time_ms', g * 1.2345,
                'flags', NULL))
     FROM generate_series(1, 800) g)) AS s;
SELECT length(folio_perf_data.render_section('markdown', s)) AS markdown_chars FROM bench_sec;
SELECT length(folio_perf_data.render_section('html', s)) AS html_chars FROM bench_sec;
SELECT length(folio_perf_data.render_section('text', s)) AS text_chars FROM bench_sec;
