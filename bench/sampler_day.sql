-- bench/sampler_day.sql - time the sampler reports over a 24-hour window.
-- Run with psql in folio_perf.database after bench/sampler_bench.sh (KEEP=1
-- leaves its cluster running): copies the bench's last 60 real intervals
-- 144 times (8,640 intervals, 86,400 ticks) into 2030-01-01, makes a window
-- over that day and times each report.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
\timing on
CREATE TEMP TABLE src AS
SELECT * FROM folio_perf_data.sample_interval ORDER BY interval_id DESC LIMIT 60;
INSERT INTO folio_perf_data.sample_interval
    (started_at, ended_at, cut, sample_interval_ms, n_ticks, ticks_dropped, tick_ms,
     tick_connections, tick_active, host_ncpu, host_busy_ms, host_total_ms, cpu_ticks,
     c_series, c_value, c_freq, l_series, l_value, l_freq, u_series, u_ms)
SELECT timestamptz '2030-01-01 00:00:00+00' + (k * 600 + r * 10) * interval '1 second',
       timestamptz '2030-01-01 00:00:09+00' + (k * 600 + r * 10) * interval '1 second',
       cut, sample_interval_ms, 10, 0, tick_ms[1:10], tick_connections[1:10],
       tick_active[1:10], host_ncpu, host_busy_ms, host_total_ms, cpu_ticks,
       c_series, c_value, c_freq, l_series, l_value, l_freq, u_series, u_ms
  FROM generate_series(0, 143) k,
       (SELECT row_number() OVER (ORDER BY interval_id) - 1 AS r, * FROM src) s;
INSERT INTO folio_perf_data.snapshot
    (taken_at, dbid, datname, server_version_num, server_start, preloaded, max_connections)
VALUES ('2030-01-01 00:00:00+00', 1, 'x', 150000, now(), true, 900),
       ('2030-01-02 00:00:00+00', 1, 'x', 150000, now(), true, 900);
INSERT INTO folio_perf_data.window (begin_snap, end_snap, label)
SELECT max(snap_id) - 1, max(snap_id), 'sampler bench day' FROM folio_perf_data.snapshot
RETURNING window_id AS w \gset
VACUUM ANALYZE folio_perf_data.sample_interval;
SELECT count(*), pg_size_pretty(pg_total_relation_size('folio_perf_data.sample_interval'))
  FROM folio_perf_data.sample_interval WHERE ended_at >= '2030-01-01';
SELECT count(*) FROM folio_perf_connections(:w);
SELECT count(*) FROM folio_perf_db_load(:w);
SELECT count(*) FROM folio_perf_cpu(:w);
SELECT count(*) FROM folio_perf_timeseries(:w);
SELECT count(*) FROM folio_perf_timeseries(:w, 'db_load');
SELECT count(*) FROM folio_perf_timeseries(:w, 'connections_by_module');
SELECT count(*) FROM folio_perf_timeseries(:w, 'cpu');
