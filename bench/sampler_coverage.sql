-- bench/sampler_coverage.sql - the cost of the sampler's coverage check
-- (folio_perf_data.sample_window: gaps between the ticks stored) over a
-- 24-hour window: 8,640 synthetic intervals of 10 ticks at 1 s (86,400
-- ticks) in 2031-01-01, without a gap, then with one interval in ten
-- "suspect" (its span longer than its ticks'), whose ticks are read one by
-- one.  Run with psql in a database with folio_perf; it cleans up after
-- itself (one transaction, rolled back).
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
\timing on
BEGIN;
INSERT INTO folio_perf_data.sample_interval
    (started_at, ended_at, cut, sample_interval_ms, n_ticks, tick_ms,
     tick_connections, tick_active, c_series, c_value, c_freq, l_series, l_value, l_freq)
SELECT timestamptz '2031-01-01 00:00:00+00' + (k * 10 + 1) * interval '1 second',
       timestamptz '2031-01-01 00:00:00+00' + (k * 10 + 10) * interval '1 second',
       'timer', 1000, 10, ARRAY(SELECT g * 1000 FROM generate_series(0, 9) g),
       ARRAY(SELECT 5 FROM generate_series(0, 9) g), ARRAY(SELECT 1 FROM generate_series(0, 9) g),
       '{}', '{}', '{}', '{}', '{}', '{}'
  FROM generate_series(0, 8639) k;
INSERT INTO folio_perf_data.snapshot
    (taken_at, dbid, datname, server_version_num, server_start, preloaded, max_connections)
VALUES ('2031-01-01 00:00:00+00', 1, 'x', 150000, now(), true, 900),
       ('2031-01-02 00:00:00+00', 1, 'x', 150000, now(), true, 900);
INSERT INTO folio_perf_data.window (begin_snap, end_snap, label)
SELECT max(snap_id) - 1, max(snap_id), 'coverage bench day' FROM folio_perf_data.snapshot
RETURNING window_id AS w \gset
ANALYZE folio_perf_data.sample_interval;
SELECT n_ticks, coverage_pct, n_gaps FROM folio_perf_data.sample_window(:w);
SELECT n_ticks, coverage_pct, n_gaps FROM folio_perf_data.sample_window(:w);
SELECT n_ticks, coverage_pct, n_gaps FROM folio_perf_data.sample_window(:w);
-- one interval in ten spans 12 s for its 10 ticks (a 3-second gap inside)
UPDATE folio_perf_data.sample_interval
   SET tick_ms = ARRAY[0, 1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000, 11000],
       ended_at = started_at + interval '11 seconds'
 WHERE started_at >= '2031-01-01' AND started_at < '2031-01-02'
   AND extract(epoch FROM started_at)::bigint % 100 = 1;
SELECT n_ticks, coverage_pct, n_gaps FROM folio_perf_data.sample_window(:w);
SELECT n_ticks, coverage_pct, n_gaps FROM folio_perf_data.sample_window(:w);
SELECT n_ticks, coverage_pct, n_gaps FROM folio_perf_data.sample_window(:w);
ROLLBACK;
