/* sql/parts/132_wiki_page.sql - the markdown report as one wiki page (folio_perf_report's default markdown) */
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
--
-- What the seeds' reports show, in their order, from the report document
-- (report_doc): the window in one line, a summary of key figures, the
-- verdict (at most 10 findings), Top SQL (5 statements with tenant and
-- module, their whole SQL below), connections per module, DB CPU, DB load
-- by wait class and by module, FOLIO operations and data-import jobs
-- grouped by profile and file, record counts.  Every other section is in
-- folio_perf_report(w, 'markdown', detail => 'full').
--
-- Escaping: only what would otherwise change the rendering, so that a wiki
-- that does not honour backslash escapes shows the text as written (see
-- md_min).  Statements are never in table cells: a cell names them Q1,
-- Q2, ... and their text is in fenced code blocks, which need no escapes.

-- Markdown inline text with the least escaping that keeps it literal: one
-- line; "<" and an "&" that would start an entity as entities; "|" escaped
-- in table cells (in_cell); and each of the characters that mark emphasis,
-- code or strike-through escaped only when the text has two of them (one
-- alone can open nothing that closes), "[" and "]" only when both occur, a
-- backslash only before punctuation (elsewhere it shows as written).
CREATE FUNCTION folio_perf_data.md_min(s text, in_cell boolean DEFAULT true)
RETURNS text
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t text := folio_perf_data.fold(s);
    c text;
BEGIN
    t := pg_catalog.regexp_replace(t, '\\(?=[[:punct:]])', '\\\\', 'g');
    t := pg_catalog.regexp_replace(t, '&(?=#?[[:alnum:]]+;)', '&amp;', 'g');
    t := pg_catalog.replace(t, '<', '&lt;');
    FOREACH c IN ARRAY ARRAY['*', '`', '~'] LOOP
        IF pg_catalog.length(t) - pg_catalog.length(pg_catalog.replace(t, c, '')) >= 2 THEN
            t := pg_catalog.replace(t, c, '\' || c);
        END IF;
    END LOOP;
    -- underscores inside a word (mod_users) never mark emphasis
    IF (SELECT count(*) FROM pg_catalog.regexp_matches(t, '(^|[^[:alnum:]])_|_($|[^[:alnum:]])', 'g')) >= 2 THEN
        t := pg_catalog.regexp_replace(t, '(^|[^[:alnum:]\\])_', '\1\\_', 'g');
        t := pg_catalog.regexp_replace(t, '([^\\])_($|[^[:alnum:]])', '\1\\_\2', 'g');
    END IF;
    IF pg_catalog.strpos(t, '[') > 0 AND pg_catalog.strpos(t, ']') > 0 THEN
        t := pg_catalog.replace(pg_catalog.replace(t, '[', '\['), ']', '\]');
    END IF;
    IF in_cell THEN
        t := pg_catalog.replace(t, '|', '\|');
    END IF;
    RETURN t;
END
$$;

-- A markdown table: header labels, alignment per column ('l' or 'r'), and
-- rows as a jsonb array of arrays of cell texts (already formatted;
-- escaped here).  NULL cells are empty.  No rows: the note (why there
-- are none), or nothing.
CREATE FUNCTION folio_perf_data.md_table(labels text[], align text, rows jsonb, note text DEFAULT NULL)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN rows IS NULL OR jsonb_array_length(rows) = 0
                THEN coalesce('_' || folio_perf_data.md_min(note, false) || E'_\n\n', '')
                ELSE '| ' || array_to_string(ARRAY(SELECT folio_perf_data.md_min(l) FROM unnest(labels) l), ' | ') || E' |\n'
                  || '|' || array_to_string(ARRAY(SELECT CASE substr(align, g, 1) WHEN 'r' THEN '---:' ELSE '---' END
                                                  FROM generate_series(1, cardinality(labels)) g), '|') || E'|\n'
                  || (SELECT string_agg('| ' || (SELECT string_agg(coalesce(folio_perf_data.md_min(c #>> '{}'), ''), ' | ' ORDER BY o)
                                                  FROM jsonb_array_elements(r) WITH ORDINALITY x(c, o)) || ' |', E'\n' ORDER BY ro)
                      FROM jsonb_array_elements(rows) WITH ORDINALITY y(r, ro))
                  || E'\n\n' END
$$;

-- Milliseconds as the seeds write them: "870 ms", "1.2 s", "0.046 ms".
CREATE FUNCTION folio_perf_data.fmt_ms(ms numeric)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
    SELECT CASE WHEN ms IS NULL THEN NULL
                WHEN abs(ms) >= 60000 THEN folio_perf_data.fmt_duration(ms / 1000)
                WHEN abs(ms) >= 1000 THEN folio_perf_data.fmt_sig(ms / 1000) || ' s'
                ELSE folio_perf_data.fmt_sig(ms) || ' ms' END
$$;

/*
 * The wiki page of a report document.
 */
CREATE FUNCTION folio_perf_data.report_page_md(doc jsonb)
RETURNS text
LANGUAGE plpgsql STABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ww jsonb := doc->'window';
    summ jsonb := doc->'summary';
    sampler_off boolean := (doc#>>'{window,sampler}') LIKE 'off%';
    wid text := doc#>>'{window,window_id}';
    out text[] := '{}';
    top jsonb;
    rows jsonb;
    n_more int;
    cpu_max numeric;
    host_max numeric;
    ver text;
BEGIN
    -- the window in one line
    out := out || ('## ' || folio_perf_data.md_min('folio_perf report: '
                       || coalesce(ww->>'label', 'window ' || wid), false) || E'\n\n'
        || folio_perf_data.md_min(concat_ws(' · ',
               (SELECT string_agg(t.key || ': ' || t.value, ', ' ORDER BY t.key)
                FROM jsonb_each_text(coalesce(ww->'tags', '{}')) t),
               'window ' || wid,
               folio_perf_data.fmt_value(ww->'begin_at', 'time') || ' to '
                 || to_char((ww->>'end_at')::timestamptz, 'HH24:MI:SS')
                 || ' (' || folio_perf_data.fmt_duration((ww->>'duration_s')::numeric) || ')',
               coalesce('remote target ' || (ww->>'target') || ', ', '') || 'database ' || (ww->>'database')
                 || ', PostgreSQL ' || ((ww->>'server_version_num')::int / 10000) || '.'
                 || ((ww->>'server_version_num')::int % 100)), false) || E'\n\n');

    IF ww ? 'unavailable' THEN
        out := out || ('Unavailable for a remote target: '
            || folio_perf_data.md_min((SELECT string_agg(u, '; ') FROM jsonb_array_elements_text(ww->'unavailable') u), false)
            || E'.\n\n');
    END IF;

    -- summary: the seeds' one-line figures
    SELECT max(t.value) FILTER (WHERE t.series = 'db_cpu_pct'), max(t.value) FILTER (WHERE t.series = 'host_busy_pct')
      INTO cpu_max, host_max
      FROM jsonb_to_recordset(coalesce(doc#>'{timeseries,cpu}', '[]')) AS t(series text, value numeric);
    out := out || (E'### Summary\n\n' || folio_perf_data.md_table(ARRAY['Metric', 'Value'], 'll', jsonb_build_array(
        jsonb_build_array('Duration (hh:mm:ss)', folio_perf_data.fmt_duration((ww->>'duration_s')::numeric)),
        jsonb_build_array('Statements', folio_perf_data.fmt_num((summ->>'statement_calls')::numeric, 0) || ' calls, '
            || coalesce(folio_perf_data.fmt_sig((summ->>'statements_per_s')::numeric), '0') || '/s, '
            || coalesce(folio_perf_data.fmt_ms((summ->>'statements_total_ms')::numeric), '0 ms') || ' of DB time'),
        jsonb_build_array('DB CPU', CASE WHEN summ->>'db_cpu_pct' IS NULL
                                         THEN 'unavailable: ' || CASE WHEN ww ? 'target' THEN 'a remote target''s backends cannot be read'
                                                                      WHEN sampler_off THEN 'the sampler was off'
                                                                      ELSE 'the host''s /proc could not be read' END
                                         ELSE 'avg ' || folio_perf_data.fmt_num((summ->>'db_cpu_pct')::numeric, 1) || '%'
                                              || coalesce(', max ' || folio_perf_data.fmt_num(cpu_max, 1) || '%', '')
                                              || ' of ' || coalesce((summ->>'cpus') || ' CPUs', 'the host')
                                              || coalesce(' (host busy avg ' || folio_perf_data.fmt_num((summ->>'host_cpu_pct')::numeric, 1)
                                                          || '%' || coalesce(', max ' || folio_perf_data.fmt_num(host_max, 1) || '%', '') || ')', '') END),
        jsonb_build_array('DB load', CASE WHEN summ->>'db_load_avg' IS NULL THEN 'unavailable: the sampler was off'
                                          ELSE 'avg ' || folio_perf_data.fmt_sig((summ->>'db_load_avg')::numeric)
                                               || ', max ' || coalesce(summ->>'db_load_max', '?') || ' active sessions'
                                               || coalesce(' on ' || (summ->>'cpus') || ' CPUs', '') END),
        jsonb_build_array('Connections', CASE WHEN summ->>'connections_avg' IS NULL THEN 'unavailable: the sampler was off'
                                              ELSE 'avg ' || folio_perf_data.fmt_sig((summ->>'connections_avg')::numeric)
                                                   || ', max ' || (summ->>'connections_max')
                                                   || ' of max_connections ' || (ww->>'max_connections') END),
        jsonb_build_array('Commits', folio_perf_data.fmt_num((summ->>'commits')::numeric, 0)
            || ' (' || coalesce(folio_perf_data.fmt_sig((summ->>'commits_per_s')::numeric), '0') || '/s), '
            || folio_perf_data.fmt_num(coalesce((summ->>'rollbacks')::numeric, 0), 0) || ' rollbacks'),
        jsonb_build_array('WAL', coalesce(folio_perf_data.fmt_bytes((summ->>'wal_bytes')::numeric), '0 B')
            || coalesce(' (' || folio_perf_data.fmt_bytes((summ->>'wal_bytes_per_s')::numeric) || '/s)', '')),
        jsonb_build_array('Cache hit ratio', coalesce(folio_perf_data.fmt_num((summ->>'cache_hit_ratio')::numeric, 2) || '%', 'n/a')),
        jsonb_build_array('Database size', coalesce(folio_perf_data.fmt_bytes((summ->>'db_size_begin')::numeric), '?') || ' to '
            || coalesce(folio_perf_data.fmt_bytes((summ->>'db_size_end')::numeric), '?'))), NULL));

    -- verdict: at most 10, warnings first (the JSON report has them all);
    -- a statement named by its query id is named by its number in Top SQL,
    -- or by the start of its text
    SELECT coalesce(jsonb_agg(CASE WHEN y.qid IS NULL THEN x.f
                                   ELSE jsonb_set(x.f, '{finding}', to_jsonb(replace(x.f->>'finding', 'statement ' || y.qid,
                                            'statement ' || coalesce(z.label, y.qid)))) END ORDER BY x.o), '[]')
      INTO rows
      FROM jsonb_array_elements(coalesce(doc->'verdict', '[]')) WITH ORDINALITY x(f, o)
      LEFT JOIN LATERAL (SELECT m[1] AS qid FROM regexp_match(x.f->>'finding', 'statement (-?[0-9]+)') m) y ON true
      LEFT JOIN LATERAL (
          SELECT CASE WHEN (t->>'rank')::int <= 5 THEN 'Q' || (t->>'rank')
                      ELSE '"' || replace(folio_perf_data.sql_start(
                               replace(t->>'query', (t->>'tenant') || '_' || (t->>'module') || '.', ''), 50), '"', '''') || '"' END AS label
            FROM jsonb_array_elements(coalesce(doc#>'{trend,statements}', '[]') || (doc->'top_statements')) t
           WHERE t->>'queryid' = y.qid AND t->>'query' IS NOT NULL
           ORDER BY (t ? 'rank') DESC, (t->>'rank')::int LIMIT 1) z ON true;
    doc := jsonb_set(doc, '{verdict}', rows);
    n_more := greatest(jsonb_array_length(coalesce(doc->'verdict', '[]')) - 10, 0);
    out := out || (E'### Verdict\n\n' || coalesce((
        SELECT string_agg('- ' || CASE WHEN x.f->>'severity' = 'warning' THEN '**warning**: ' ELSE '' END
                          || folio_perf_data.md_min(x.f->>'finding', false), E'\n' ORDER BY x.w DESC, x.o)
        FROM (SELECT y.f, y.o, y.f->>'severity' = 'warning' AS w
              FROM jsonb_array_elements(doc->'verdict') WITH ORDINALITY y(f, o)
              ORDER BY (y.f->>'severity' = 'warning') DESC, y.o LIMIT 10) x), '- Nothing to report.')
        || CASE WHEN n_more > 0 THEN format(E'\n- %s more in folio_perf_report(%s, ''json'').', n_more, wid) ELSE '' END
        || E'\n\n');
    IF jsonb_array_length(coalesce(doc->'data_quality', '[]')) > 0 THEN
        out := out || (E'**Data quality:** ' || (SELECT string_agg(folio_perf_data.md_min(f->>'flag' || ': ' || (f->>'detail'), false), '; ')
                                                 FROM jsonb_array_elements(doc->'data_quality') f) || E'.\n\n');
    END IF;

    -- Top SQL: five statements, their SQL whole below
    SELECT coalesce(jsonb_agg(t ORDER BY (t->>'rank')::int), '[]') INTO top
      FROM jsonb_array_elements(doc->'top_statements') t WHERE (t->>'rank')::int <= 5;
    out := out || (E'### Top SQL\n\n' || folio_perf_data.md_table(
        ARRAY['#', 'Tenant', 'Module', 'Calls', 'Total', 'Mean', 'DB time, %', 'Statement'], 'rllrrrrl',
        (SELECT jsonb_agg(jsonb_build_array(t->>'rank', coalesce(t->>'tenant', '-'), coalesce(t->>'module', '(unattributed)'),
                    folio_perf_data.fmt_num((t->>'calls')::numeric, 0), folio_perf_data.fmt_ms((t->>'total_exec_ms')::numeric),
                    folio_perf_data.fmt_ms((t->>'mean_exec_ms')::numeric), folio_perf_data.fmt_num((t->>'pct_of_total_time')::numeric, 1),
                    'Q' || (t->>'rank') || ': ' || folio_perf_data.sql_start(
                        replace(t->>'query', (t->>'tenant') || '_' || (t->>'module') || '.', ''), 40)) ORDER BY o)
         FROM jsonb_array_elements(top) WITH ORDINALITY x(t, o)),
        'No statements in the window.')
        || coalesce((SELECT string_agg(format(E'**Q%s** (%s / %s)\n\n', t->>'rank', coalesce(t->>'tenant', '-'),
                                              coalesce(t->>'module', '(unattributed)'))
                                       || folio_perf_data.md_code(coalesce(t->>'query', '-- ' || coalesce(t->>'status', 'no text'))),
                                       E'\n' ORDER BY o)
                     FROM jsonb_array_elements(top) WITH ORDINALITY x(t, o)) || E'\n', ''));

    IF sampler_off THEN
        out := out || (E'### Connections, DB load and CPU\n\n' || folio_perf_data.md_min(ww->>'sampler', false) || E'\n\n');
    ELSE
        -- connections per tenant and module: the busiest 10, the rest summed
        SELECT jsonb_agg(jsonb_build_array(x.tenant, x.module, folio_perf_data.fmt_sig(x.avg), x.max) ORDER BY x.o)
          INTO rows
          FROM (SELECT coalesce(r->>'tenant', '-') AS tenant, coalesce(r->>'module', '(unattributed)') AS module,
                       (r->>'avg')::numeric AS avg, (r->>'max') AS max,
                       row_number() OVER (ORDER BY (r->>'avg')::numeric DESC, (r->>'max')::numeric DESC, r->>'key') AS o
                FROM jsonb_array_elements(doc->'connections') r
                WHERE r->>'dimension' = 'tenant_module' AND (r->>'max')::numeric > 0) x
         WHERE x.o <= 10;
        out := out || (E'### Connections per module\n\n' || folio_perf_data.md_table(
            ARRAY['Tenant', 'Module', 'Avg', 'Max'], 'llrr', rows, 'No client connections were sampled.')
            || coalesce((SELECT format(E'All connections: avg %s, p95 %s, max %s of max_connections %s.\n\n',
                                       folio_perf_data.fmt_sig((r->>'avg')::numeric), r->>'p95', r->>'max', ww->>'max_connections')
                         FROM jsonb_array_elements(doc->'connections') r WHERE r->>'dimension' = 'total' LIMIT 1), ''));
        -- DB CPU by module
        out := out || (E'### DB CPU by module\n\n' || folio_perf_data.md_table(
            ARRAY['Module', 'CPU, s', 'Of DB CPU, %'], 'lrr',
            (SELECT jsonb_agg(jsonb_build_array(x.m, folio_perf_data.fmt_sig(x.s), folio_perf_data.fmt_num(x.p, 1)) ORDER BY x.s DESC)
             FROM (SELECT coalesce(r->>'module', '(unattributed)') AS m,
                          (r->>'cpu_seconds')::numeric AS s, (r->>'pct_of_db_cpu')::numeric AS p
                   FROM jsonb_array_elements(doc->'cpu') r
                   WHERE r->>'dimension' = 'module' AND (r->>'cpu_seconds')::numeric > 0
                   ORDER BY (r->>'cpu_seconds')::numeric DESC LIMIT 5) x),
            CASE WHEN summ->>'db_cpu_pct' IS NULL THEN 'CPU per module is unavailable: '
                      || CASE WHEN ww ? 'target' THEN 'a remote target''s backends cannot be read.'
                              ELSE 'the host''s /proc could not be read.' END
                 ELSE 'No backend of a module used CPU.' END));
        -- DB load by wait class and by module
        out := out || (E'### DB load (average active sessions)\n\n' || folio_perf_data.md_table(
            ARRAY['Wait class', 'Load', 'Max', 'Of load, %'], 'lrrr',
            (SELECT jsonb_agg(jsonb_build_array(x.k, folio_perf_data.fmt_sig(x.a), x.mx, folio_perf_data.fmt_num(x.p, 1)) ORDER BY x.a DESC)
             FROM (SELECT r->>'key' AS k, (r->>'aas')::numeric AS a, r->>'max' AS mx, (r->>'pct_of_load')::numeric AS p
                   FROM jsonb_array_elements(doc->'db_load') r WHERE r->>'dimension' = 'wait_event_type'
                   ORDER BY (r->>'aas')::numeric DESC LIMIT 5) x), 'No active sessions were sampled.')
            || folio_perf_data.md_table(
            ARRAY['Module', 'Load', 'Max', 'Of load, %'], 'lrrr',
            (SELECT jsonb_agg(jsonb_build_array(x.k, folio_perf_data.fmt_sig(x.a), x.mx, folio_perf_data.fmt_num(x.p, 1)) ORDER BY x.a DESC)
             FROM (SELECT coalesce(r->>'module', '(unattributed)') AS k, (r->>'aas')::numeric AS a, r->>'max' AS mx,
                          (r->>'pct_of_load')::numeric AS p
                   FROM jsonb_array_elements(doc->'db_load') r WHERE r->>'dimension' = 'module'
                   ORDER BY (r->>'aas')::numeric DESC LIMIT 5) x), NULL));
    END IF;

    -- FOLIO operations and data-import jobs grouped by profile and file
    out := out || (E'### FOLIO operations\n\n' || folio_perf_data.md_table(
        ARRAY['Tenant', 'Operation', 'Count', 'Per minute', 'DB time per operation'], 'llrrr',
        (SELECT jsonb_agg(jsonb_build_array(o->>'tenant', o->>'operation', folio_perf_data.fmt_num((o->>'count')::numeric, 0),
                    folio_perf_data.fmt_sig((o->>'per_minute')::numeric), folio_perf_data.fmt_ms((o->>'db_time_per_op_ms')::numeric))
                    ORDER BY o->>'tenant', o->>'operation')
         FROM jsonb_array_elements(coalesce(doc#>'{folio_operations,operations}', '[]')) o),
        'No FOLIO operation happened in the window.')
        || folio_perf_data.md_table(
        ARRAY['Tenant', 'Job profile', 'File', 'Jobs', 'Records', 'Duration avg', 'p95', 'max', 'Records/min'], 'lllrrrrrr',
        (SELECT jsonb_agg(jsonb_build_array(g.tenant, g.profile, g.file, g.jobs, folio_perf_data.fmt_num(g.records, 0),
                    folio_perf_data.fmt_duration(g.d_avg), folio_perf_data.fmt_duration(g.d_p95),
                    folio_perf_data.fmt_duration(g.d_max), folio_perf_data.fmt_sig(g.rpm))
                    ORDER BY g.tenant, g.profile, g.file)
         FROM (SELECT j->>'tenant' AS tenant, coalesce(j->>'job_profile', '-') AS profile, coalesce(j->>'file_name', '-') AS file,
                      count(*) AS jobs, sum((j->>'records')::numeric) AS records,
                      avg(extract(epoch FROM (j->>'duration')::interval)) AS d_avg,
                      percentile_cont(0.95) WITHIN GROUP (ORDER BY extract(epoch FROM (j->>'duration')::interval))::numeric AS d_p95,
                      max(extract(epoch FROM (j->>'duration')::interval)) AS d_max,
                      60 * sum((j->>'records')::numeric) / nullif(sum(extract(epoch FROM (j->>'duration')::interval)), 0) AS rpm
               FROM jsonb_array_elements(coalesce(doc#>'{folio_operations,data_import_jobs}', '[]')) j
               WHERE j->>'duration' IS NOT NULL
               GROUP BY 1, 2, 3) g),
        coalesce(doc#>>'{folio_operations,note}', 'No data-import job completed in the window.')));

    -- record counts, one row per tenant
    out := out || (E'### Record counts\n\n' || folio_perf_data.md_table(
        ARRAY['Tenant', 'Instances', 'Holdings', 'Items'], 'lrrr',
        (SELECT jsonb_agg(jsonb_build_array(x.tenant, folio_perf_data.fmt_num(x.i, 0), folio_perf_data.fmt_num(x.h, 0),
                                            folio_perf_data.fmt_num(x.t, 0)) ORDER BY x.tenant)
         FROM (SELECT r->>'tenant' AS tenant,
                      sum((r->>'records')::numeric) FILTER (WHERE r->>'entity' = 'instances') AS i,
                      sum((r->>'records')::numeric) FILTER (WHERE r->>'entity' = 'holdings') AS h,
                      sum((r->>'records')::numeric) FILTER (WHERE r->>'entity' = 'items') AS t
               FROM jsonb_array_elements(coalesce(doc->'record_counts', '[]')) r GROUP BY 1) x),
        'No mod_inventory_storage instance, holdings_record or item tables.'));

    ver := coalesce((SELECT e.extversion FROM pg_catalog.pg_extension e WHERE e.extname = 'folio_perf'), '?');
    out := out || format(E'---\n\n_Every section, table and plan: `SELECT folio_perf_report(%s, ''markdown'', detail => ''full'')`. Generated by folio_perf %s at %s._\n',
                         wid, ver, to_char(pg_catalog.clock_timestamp(), 'YYYY-MM-DD HH24:MI:SS TZ'));
    RETURN array_to_string(out, '');
END
$$;
