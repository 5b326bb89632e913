-- The spread of a statement's execution time over a window, derived from
-- two snapshots' cumulative calls, total and stddev of pg_stat_statements.
-- Each call's run time is measured around it (clock_timestamp), so the
-- window's own standard deviation is known independently; calls before
-- the window have another mean (1 ms against 200 ms), which the derivation
-- must take out exactly: without the mean-shift term of the combination
-- the result would be about 140 ms instead of 100 (checked: at least 20 %
-- off).  The sleeps are long
-- enough (100 and 300 ms) that the few microseconds between the clock and
-- the executor, even on a loaded machine, stay far below 1 %.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
RESET client_min_messages;

CREATE TEMP TABLE runs (inside boolean, ms float8);
CREATE FUNCTION pg_temp.run(inside boolean, secs float8[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    t timestamptz;
    d float8;
BEGIN
    FOREACH d IN ARRAY secs LOOP
        t := clock_timestamp();
        PERFORM pg_sleep(d);
        INSERT INTO runs VALUES (inside, extract(epoch FROM clock_timestamp() - t) * 1000);
    END LOOP;
END
$$;
SELECT pg_temp.run(false, '{0.001,0.001,0.001}');
SELECT folio_perf_begin('spread') AS w \gset
SELECT pg_temp.run(true, '{0.1,0.3,0.1,0.3,0.1,0.3,0.1,0.3}');
SELECT folio_perf_end() AS w \gset

SELECT t.calls, r.n,
       abs(t.mean_exec_ms - r.mean) / r.mean < 0.01 AS mean_within_1pct,
       abs(t.stddev_exec_ms - r.sd) / r.sd < 0.01 AS stddev_within_1pct,
       -- the sample (n - 1) form or the cumulative stddev would be off
       abs(t.stddev_exec_ms - r.sd_samp) / r.sd_samp >= 0.01 AS not_sample_stddev,
       abs(t.stddev_exec_ms - r.sd_all) / r.sd_all >= 0.01 AS not_cumulative,
       -- without the mean-shift term: the window's variance taken as the
       -- difference of the two snapshots' n * variance, about 140 ms
       -- (1.4 times the right one; 1.5 when the 1 ms calls before the
       -- window take longer on a loaded machine): at least 20 % off
       sqrt((r.n_all * r.sd_all ^ 2 - r.n_before * r.sd_before ^ 2) / r.n) / r.sd BETWEEN 1.2 AND 2
         AS without_mean_shift_20pct_off
FROM folio_perf_top_statements(:w, 50, only_toplevel => false) t,
     (SELECT count(*) FILTER (WHERE inside) AS n,
             avg(ms) FILTER (WHERE inside) AS mean,
             stddev_pop(ms) FILTER (WHERE inside) AS sd,
             stddev_samp(ms) FILTER (WHERE inside) AS sd_samp,
             stddev_pop(ms) AS sd_all,
             count(*) AS n_all,
             count(*) FILTER (WHERE NOT inside) AS n_before,
             stddev_pop(ms) FILTER (WHERE NOT inside) AS sd_before
      FROM runs) r
WHERE t.query = 'SELECT pg_sleep(d)';

-- a statement first seen inside the window: its whole stddev is the
-- window's (measured as above: 100 and 300 ms, a stddev of 100 ms; a
-- stddev of 0, as of equal calls, would fail)
-- (timed inside the statement: its first call plans it, which
-- pg_stat_statements does not count as execution)
CREATE FUNCTION pg_temp.run_new(secs float8[]) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    t timestamptz;
    t2 timestamptz;
    x text;
    d float8;
BEGIN
    FOREACH d IN ARRAY secs LOOP
        SELECT clock_timestamp(), pg_sleep(d)::text AS spread_probe, clock_timestamp() INTO t, x, t2;
        INSERT INTO runs VALUES (NULL, extract(epoch FROM t2 - t) * 1000);
    END LOOP;
END
$$;
SELECT folio_perf_begin('spread, new') AS w \gset
SELECT pg_temp.run_new('{0.1,0.3}');
SELECT folio_perf_end() AS w \gset
SELECT t.calls,
       abs(t.mean_exec_ms - r.mean) / r.mean < 0.01 AS mean_within_1pct,
       abs(t.stddev_exec_ms - r.sd) / r.sd < 0.01 AS stddev_within_1pct
FROM folio_perf_top_statements(:w, 50, only_toplevel => false) t,
     (SELECT avg(ms) AS mean, stddev_pop(ms) AS sd FROM runs WHERE inside IS NULL) r
WHERE t.query LIKE '%spread_probe%';
