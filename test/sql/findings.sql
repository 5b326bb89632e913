-- The significance rule of findings (136_findings.sql): Welch's t-test on
-- two windows' calls, means and standard deviations, checked against the
-- closed forms of Student's t distribution for 1 and 2 degrees of freedom
-- (p = 1 - 2/pi atan|t| and p = 1 - |t| / sqrt(2 + t^2)) and a tabled
-- quantile; then the verdicts of significance() against each of its three
-- conditions (p, relative change, impact floor), each with a control that
-- passes the other two, and the family-wise alpha; and the rules'
-- validation.
-- Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
SET client_min_messages = warning;
DROP EXTENSION IF EXISTS folio_perf CASCADE;
CREATE EXTENSION IF NOT EXISTS pg_stat_statements;
CREATE EXTENSION folio_perf;
RESET client_min_messages;

-- Gamma: Gamma(5) = 24, Gamma(1/2)^2 = pi, Gamma(0.1) = 9.5135...
SELECT round(exp(folio_perf_data.ln_gamma(5))::numeric, 10) AS gamma_5,
       round((exp(folio_perf_data.ln_gamma(0.5)) ^ 2)::numeric, 10) = round(pi()::numeric, 10) AS gamma_half_sq_is_pi,
       round(exp(folio_perf_data.ln_gamma(0.1))::numeric, 6) AS gamma_0_1;

-- two-sided p of Student's t through the incomplete beta function against
-- the closed forms (df 1 and 2) at several t, and the table (t 2.228, df 10: 0.05)
SELECT t, df,
       abs(folio_perf_data.inc_beta(df / 2, 0.5, df / (df + t ^ 2))
           - CASE df WHEN 1 THEN 1 - 2 / pi() * atan(abs(t)) ELSE 1 - abs(t) / sqrt(2 + t ^ 2) END) < 1e-12 AS matches_closed_form
FROM (VALUES (0.1::float8), (1), (2.5), (10), (300)) a(t), (VALUES (1::float8), (2)) b(df)
ORDER BY df, t;
SELECT round(folio_perf_data.inc_beta(5, 0.5, 10 / (10 + 2.228 ^ 2))::numeric, 4) AS p_t2228_df10;

-- Welch: equal spreads and counts give the pooled t; df by
-- Welch-Satterthwaite (20 for two samples of 11 with equal variance)
SELECT round(t::numeric, 6) AS t, round(df::numeric, 6) AS df, round(p_value::numeric, 6) AS p
FROM folio_perf_data.welch(11, 0, 1, 11, 1, 1);
-- unequal: n 10 sd 1 against n 40 sd 3 (the sample variances 10/9 and 360/39)
SELECT round(t::numeric, 4) AS t, round(df::numeric, 3) AS df
FROM folio_perf_data.welch(10, 5, 1, 40, 6, 3);
SELECT round(((6 - 5) / sqrt(10.0 / 9 / 10 + 360.0 / 39 / 40))::numeric, 4) AS t_by_hand,
       round(((10.0 / 9 / 10 + 360.0 / 39 / 40) ^ 2
              / ((10.0 / 9 / 10) ^ 2 / 9 + (360.0 / 39 / 40) ^ 2 / 39))::numeric, 3) AS df_by_hand;
-- no spread: equal means p 1, different p 0; fewer than 2 calls: untestable
SELECT (folio_perf_data.welch(5, 1, 0, 5, 1, 0)).p_value AS same_no_spread,
       (folio_perf_data.welch(5, 1, 0, 5, 2, 0)).p_value AS different_no_spread,
       (folio_perf_data.welch(1, 1, 0, 5, 2, 0)).p_value IS NULL AS one_call_untestable;

-- the verdicts.  Base DB time 10,000 ms; default rules: alpha 0.01,
-- run_noise_pct 10, min_change_pct 30, min_change_ms 0.05, min_impact_pct 1
-- (100 ms here), min_impact_ms 0.
SELECT c.case_name, s.verdict, s.significant, round(s.change_pct::numeric, 1) AS change_pct,
       round(s.impact_ms::numeric, 1) AS impact_ms, round(s.floor_ms::numeric, 1) AS floor_ms,
       s.p_value < 0.01 AS p_below_alpha
FROM (VALUES
    -- 3x slower, 1 % of the DB time before: a regression
    ('planted 3x', 1000::bigint, 0.1::numeric, 0.02::numeric, 1000::bigint, 0.3::numeric, 0.06::numeric, '{}'::jsonb),
    -- the same, faster: an improvement
    ('3x faster', 1000, 0.3, 0.06, 1000, 0.1, 0.02, '{}'),
    -- 3x slower, significant, but 0.01 % of the DB time (0.2 ms)
    ('below floor', 10, 0.01, 0.001, 10, 0.03, 0.003, '{}'),
    -- the same, with the floor lowered: a regression
    ('floor lowered', 10, 0.01, 0.001, 10, 0.03, 0.003, '{"min_impact_pct": 0, "min_change_ms": 0}'),
    -- ... but 0.02 ms a call: below min_change_ms (0.05)
    ('floor lowered, 0.02 ms', 10, 0.01, 0.001, 10, 0.03, 0.003, '{"min_impact_pct": 0}'),
    -- 0.003 -> 0.015 ms over 200 calls (TAP 080's same-workload pair): a
    -- few microseconds a call, significant by the calls alone
    ('microseconds', 200, 0.003, 0.001, 200, 0.015, 0.004, '{"min_impact_pct": 0}'),
    ('microseconds, no absolute floor', 200, 0.003, 0.001, 200, 0.015, 0.004, '{"min_impact_pct": 0, "min_change_ms": 0}'),
    -- +39 % over 512 calls (TAP 080's same-workload pair): within the
    -- run-to-run noise; Welch's test alone calls it significant
    ('same workload, +39 %', 512, 0.156, 0.05, 512, 0.217, 0.06, '{"min_impact_pct": 0.1}'),
    ('same workload, +39 %, no run noise', 512, 0.156, 0.05, 512, 0.217, 0.06, '{"min_impact_pct": 0.1, "run_noise_pct": 0}'),
    -- +10 %, significant, 10 % of the DB time: below min_change_pct
    ('small change', 100000, 0.1, 0.01, 100000, 0.11, 0.011, '{}'),
    -- ... and within the run-to-run noise
    ('small change, 5 % rule', 100000, 0.1, 0.01, 100000, 0.11, 0.011, '{"min_change_pct": 5}'),
    ('small change, 5 % rule, no run noise', 100000, 0.1, 0.01, 100000, 0.11, 0.011, '{"min_change_pct": 5, "run_noise_pct": 0, "min_change_ms": 0}'),
    -- 2x slower on average but noise: 20 calls with a spread of 15 ms
    ('noise', 20, 5, 15, 20, 10, 15, '{}'),
    ('noise, alpha 0.5', 20, 5, 15, 20, 10, 15, '{"alpha": 0.5}'),
    -- the same as one of 2 tests made together: alpha / 2 (Bonferroni)
    ('noise, alpha 0.5, 2 tests', 20, 5, 15, 20, 10, 15, '{"alpha": 0.5, "family_size": 2}'),
    ('one call', 1, 5, 0, 1, 50, 0, '{}')) c(case_name, bc, bm, bs, nc, nm, ns, rules)
CROSS JOIN LATERAL folio_perf_data.significance(c.bc, c.bm, c.bs, c.nc, c.nm, c.ns, 10000, c.rules) s
ORDER BY c.case_name;

-- rules: defaults filled in, given ones kept; typos and bad values refused
SELECT r->>'alpha' AS alpha, r->>'min_impact_pct' AS min_impact_pct, r->>'max_findings' AS max_findings
FROM folio_perf_data.check_rules('{"alpha": 0.05}') r;
SELECT folio_perf_data.check_rules('{"apha": 0.05}');
SELECT folio_perf_data.check_rules('{"alpha": "0.05"}');
SELECT folio_perf_data.check_rules('{"alpha": 2}');
SELECT folio_perf_data.check_rules('[1]');
