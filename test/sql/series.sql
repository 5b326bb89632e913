-- Series of windows: bad input (a specific SQLSTATE, a message and a hint),
-- the steps folio_perf_mark() makes, and the shape of the series functions
-- and documents (no sampled figure is shown: they vary run to run).
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
RESET client_min_messages;

CREATE FUNCTION pg_temp.try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE st text; msg text; hint text;
BEGIN
  EXECUTE q;
  RETURN 'no error';
EXCEPTION WHEN OTHERS THEN
  GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, msg = MESSAGE_TEXT, hint = PG_EXCEPTION_HINT;
  RETURN st || ': ' || regexp_replace(msg, '[0-9]{2,}', 'N', 'g') || ' | HINT: ' || coalesce(hint, '(none)');
END $$;

-- no open window: a mark has nothing to split
SELECT pg_temp.try('SELECT folio_perf_mark(''x'')');

SELECT folio_perf_snapshot('a') AS a \gset
SELECT folio_perf_snapshot('b') AS b \gset
SELECT folio_perf_window(:a, :b) AS ended_w \gset
SELECT folio_perf_begin('ramp', '{"users": 1, "scenario": "ramp"}') AS ramp \gset

SELECT q, pg_temp.try(q) FROM (VALUES
  ('SELECT * FROM folio_perf_series(NULL::bigint[])'),
  ('SELECT * FROM folio_perf_series(''{}''::bigint[])'),
  ('SELECT * FROM folio_perf_series(ARRAY[' || :ended_w || ', ' || :ended_w || '])'),
  ('SELECT * FROM folio_perf_series(ARRAY[' || :ended_w || ', NULL])'),
  ('SELECT * FROM folio_perf_series(array_fill(' || :ended_w || '::bigint, ARRAY[101]))'),
  ('SELECT * FROM folio_perf_series(ARRAY[999999])'),
  ('SELECT * FROM folio_perf_series(ARRAY[' || :ramp || '])'),
  ('SELECT * FROM folio_perf_series(NULL::text)'),
  ('SELECT * FROM folio_perf_series('''', ''{}'')'),
  ('SELECT * FROM folio_perf_series(''users'', ''[1]'')'),
  ('SELECT * FROM folio_perf_series(''users'', NULL)'),
  ('SELECT folio_perf_series_report(ARRAY[' || :ended_w || '], ''pdf'')'),
  ('SELECT folio_perf_series_report(ARRAY[' || :ended_w || '], NULL)'),
  ('SELECT folio_perf_series_report(ARRAY[' || :ended_w || '], ''text'', 999999)'),
  ('SELECT folio_perf_series_report(ARRAY[' || :ended_w || '], ''text'', NULL, ''{"alpah": 0.05}'')'),
  ('SELECT * FROM folio_perf_series_saturation(ARRAY[' || :ended_w || '], ''{"min_change_pct": -1}'')'),
  ('SELECT * FROM folio_perf_series_saturation(ARRAY[' || :ended_w || '], ''[]'')'),
  ('SELECT folio_perf_steps(NULL)'),
  ('SELECT folio_perf_steps(999999)'),
  ('SELECT folio_perf_mark(''x'', ''[1]'')'),
  ('SELECT folio_perf_mark(''x'', NULL)'),
  ('SELECT folio_perf_mark(repeat(''x'', 1001))'),
  ('SELECT folio_perf_mark(''x'', jsonb_build_object(''k'', repeat(''x'', 100001)))')
) v(q);

-- a window split by two marks: three steps, each a window of its own,
-- the last once the window ends
SELECT folio_perf_steps(:ramp) = '{}' AS no_steps_before_a_mark;
SELECT folio_perf_mark('2 users', '{"users": 2}') > 0 AS marked;
SELECT cardinality(folio_perf_steps(:ramp)) AS steps_while_open;
SELECT folio_perf_mark('4 users', '{"users": 4}') > 0 AS marked;
SELECT folio_perf_end() = :ramp AS ended;
SELECT s.o AS step, w.label, w.tags, w.end_snap IS NOT NULL AS ended
FROM unnest(folio_perf_steps(:ramp)) WITH ORDINALITY s(id, o)
JOIN folio_perf_windows w ON w.window_id = s.id ORDER BY s.o;
-- the steps tile the window: the first begins at its begin, each ends where
-- the next begins, the last ends at its end
SELECT bool_and(CASE WHEN s.o = 1 THEN w.begin_snap = p.begin_snap ELSE w.begin_snap = prev_end END)
       AND max(w.end_snap) FILTER (WHERE s.o = 3) = max(p.end_snap) AS steps_tile_the_window
FROM (SELECT s.*, lag(w2.end_snap) OVER (ORDER BY s.o) AS prev_end
      FROM unnest(folio_perf_steps(:ramp)) WITH ORDINALITY s(id, o)
      JOIN folio_perf_data.window w2 ON w2.window_id = s.id) s
JOIN folio_perf_data.window w ON w.window_id = s.id
CROSS JOIN folio_perf_data.window p WHERE p.window_id = :ramp;
-- a mark does not reach a window that has ended
SELECT pg_temp.try('SELECT folio_perf_mark(''late'')');

-- the series of the steps: along users, each named by it
SELECT step, name, series_key, level, label, tags->>'scenario' AS scenario,
       duration_s > 0 AS has_duration, statements_per_s >= 0 AS has_rate,
       sampler IS NOT NULL AS has_sampler_note, headline IS NOT NULL AS has_headline
FROM folio_perf_series(folio_perf_steps(:ramp)) ORDER BY step;
-- the tag form takes the marked window, not its steps
SELECT count(*) AS windows, min(name) AS name FROM folio_perf_series('users', '{"scenario": "ramp"}');
SELECT count(*) AS windows FROM folio_perf_series('users', '{"scenario": "none such"}');
-- one window has no saturation point to assess; two unnamed windows neither
SELECT saturated, finding FROM folio_perf_series_saturation(ARRAY[:ramp]);
SELECT saturated, finding FROM folio_perf_series_saturation(ARRAY[:ended_w, :ramp]);
-- a tag that falls along the series is no step load
SELECT saturated, finding FROM folio_perf_series_saturation(
    (SELECT array_agg(x ORDER BY o DESC) FROM unnest(folio_perf_steps(:ramp)) WITH ORDINALITY u(x, o)));
SELECT saturated IS NOT NULL AS assessed, criteria IS NOT NULL AS has_criteria
FROM folio_perf_series_saturation(folio_perf_steps(:ramp));

-- the four formats
SELECT f, length(folio_perf_series_report(folio_perf_steps(:ramp), f)) > 500 AS rendered
FROM unnest(ARRAY['text', 'markdown', 'html', 'json']) f;
SELECT d ? 'windows' AND d ? 'top_statements' AND d ? 'saturation' AND d ? 'rules' AS json_keys,
       jsonb_array_length(d->'windows') AS windows, d->>'series_key' AS series_key,
       (d->>'baseline')::bigint = (folio_perf_steps(:ramp))[1] AS baseline_first,
       d#>>'{rules,min_change_pct}' AS min_change_pct, d#>>'{rules,min_impact_ms}' AS min_impact_ms
FROM (SELECT folio_perf_series_report(folio_perf_steps(:ramp), 'json')::jsonb AS d) x;
SELECT (folio_perf_series_report(folio_perf_steps(:ramp), 'json', NULL, '{"min_change_pct": 50}')::jsonb)#>>'{rules,min_change_pct}'
       AS rules_given;
SELECT regexp_replace(line, '[0-9]+', 'N', 'g') AS markdown_header
FROM regexp_split_to_table(folio_perf_series_report(folio_perf_steps(:ramp), 'markdown', (folio_perf_steps(:ramp))[2]), E'\n') line
WHERE line LIKE '| Metric |%';
