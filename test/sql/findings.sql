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

-- The rule is in C (src/stats.c).  Every output of ln_gamma, inc_beta,
-- welch and significance, the same doubles as the PL/pgSQL functions they
-- replaced (kept here), over a grid of calls, means, spreads (NULL, 0,
-- small, large), DB times and rules; and the same errors.
\set QUIET on
SET client_min_messages = warning;
CREATE FUNCTION pg_temp.plpgsql_ln_gamma(x double precision)
RETURNS double precision
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
    c double precision[] := ARRAY[0.99999999999980993, 676.5203681218851, -1259.1392167224028,
        771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
        9.9843695780195716e-6, 1.5056327351493116e-7];
    a double precision;
    t double precision;
BEGIN
    IF x <= 0 THEN
        RAISE EXCEPTION 'ln_gamma is defined here for x > 0 only, not %', x
            USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF x < 0.5 THEN
        -- reflection
        RETURN ln(pi() / sin(pi() * x)) - pg_temp.plpgsql_ln_gamma(1 - x);
    END IF;
    x := x - 1;
    a := c[1];
    FOR i IN 1..8 LOOP
        a := a + c[i + 1] / (x + i);
    END LOOP;
    t := x + 7.5;
    RETURN 0.5 * ln(2 * pi()) + (x + 0.5) * ln(t) - t + ln(a);
END
$$;

CREATE FUNCTION pg_temp.plpgsql_inc_beta(a double precision, b double precision, x double precision)
RETURNS double precision
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
    swap boolean := false;
    aa double precision;
    c double precision;
    d double precision;
    h double precision;
    del double precision;
    m2 int;
    lnbt double precision;
    tiny constant double precision := 1e-300;
    t double precision;
BEGIN
    IF x <= 0 THEN
        RETURN 0;
    ELSIF x >= 1 THEN
        RETURN 1;
    END IF;
    IF x > (a + 1) / (a + b + 2) THEN
        -- the fraction converges fast on the other side
        swap := true;
        t := a; a := b; b := t;
        x := 1 - x;
    END IF;
    lnbt := pg_temp.plpgsql_ln_gamma(a + b) - pg_temp.plpgsql_ln_gamma(a) - pg_temp.plpgsql_ln_gamma(b)
            + a * ln(x) + b * ln(1 - x);
    c := 1;
    d := 1 - (a + b) * x / (a + 1);
    IF abs(d) < tiny THEN d := tiny; END IF;
    d := 1 / d;
    h := d;
    FOR m IN 1..500 LOOP
        m2 := 2 * m;
        aa := m * (b - m) * x / ((a - 1 + m2) * (a + m2));
        d := 1 + aa * d; IF abs(d) < tiny THEN d := tiny; END IF;
        c := 1 + aa / c; IF abs(c) < tiny THEN c := tiny; END IF;
        d := 1 / d;
        h := h * d * c;
        aa := -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
        d := 1 + aa * d; IF abs(d) < tiny THEN d := tiny; END IF;
        c := 1 + aa / c; IF abs(c) < tiny THEN c := tiny; END IF;
        d := 1 / d;
        del := d * c;
        h := h * del;
        EXIT WHEN abs(del - 1) < 1e-14;
    END LOOP;
    -- exp() of less than about -745 underflows (an error in PostgreSQL)
    t := CASE WHEN lnbt < -700 THEN 0 ELSE exp(lnbt) * h / a END;
    RETURN CASE WHEN swap THEN 1 - t ELSE t END;
END
$$;

CREATE FUNCTION pg_temp.plpgsql_welch(n1_ numeric, mean1_ numeric, sd1_ numeric,
    n2_ numeric, mean2_ numeric, sd2_ numeric,
    OUT t double precision, OUT df double precision, OUT p_value double precision)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    n1 double precision := n1_;
    mean1 double precision := mean1_;
    sd1 double precision := sd1_;
    n2 double precision := n2_;
    mean2 double precision := mean2_;
    sd2 double precision := sd2_;
    v1 double precision;
    v2 double precision;
    se2 double precision;
BEGIN
    IF n1 IS NULL OR n2 IS NULL OR n1 < 2 OR n2 < 2 OR mean1 IS NULL OR mean2 IS NULL THEN
        RETURN;
    END IF;
    -- sample variances over n, from the population ones
    v1 := coalesce(sd1, 0) ^ 2 * n1 / (n1 - 1) / n1;
    v2 := coalesce(sd2, 0) ^ 2 * n2 / (n2 - 1) / n2;
    se2 := v1 + v2;
    IF se2 <= 0 THEN
        t := CASE WHEN mean2 = mean1 THEN 0 END;
        p_value := CASE WHEN mean2 = mean1 THEN 1 ELSE 0 END;
        RETURN;
    END IF;
    t := (mean2 - mean1) / sqrt(se2);
    df := se2 ^ 2 / (CASE WHEN v1 > 0 THEN v1 ^ 2 / (n1 - 1) ELSE 0 END
                     + CASE WHEN v2 > 0 THEN v2 ^ 2 / (n2 - 1) ELSE 0 END);
    p_value := pg_temp.plpgsql_inc_beta(df / 2, 0.5, df / (df + t ^ 2));
END
$$;

CREATE FUNCTION pg_temp.plpgsql_significance(b_calls bigint, b_mean_ numeric, b_sd numeric,
    n_calls bigint, n_mean_ numeric, n_sd numeric,
    base_db_time_ms numeric, rules jsonb DEFAULT '{}',
    OUT t double precision, OUT df double precision, OUT p_value double precision,
    OUT change_pct double precision, OUT impact_ms double precision, OUT floor_ms double precision,
    OUT significant boolean, OUT verdict text)
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $$
DECLARE
    r jsonb := folio_perf_data.check_rules(rules);
    w record;
    b_mean double precision := b_mean_;
    n_mean double precision := n_mean_;
BEGIN
    w := pg_temp.plpgsql_welch(b_calls, b_mean_, b_sd, n_calls, n_mean_, n_sd);
    t := w.t;
    df := w.df;
    p_value := w.p_value;
    -- the run-to-run noise added to each mean's variance (t with Welch's df)
    IF p_value IS NOT NULL AND (r->>'run_noise_pct')::double precision > 0 THEN
        t := (n_mean - b_mean)
             / nullif(sqrt(coalesce(b_sd, 0) ^ 2 / greatest(b_calls - 1, 1)
                           + coalesce(n_sd, 0) ^ 2 / greatest(n_calls - 1, 1)
                           + ((r->>'run_noise_pct')::double precision / 100) ^ 2 * (b_mean ^ 2 + n_mean ^ 2)), 0);
        IF t IS NULL THEN
            t := 0;
        END IF;
        df := coalesce(df, b_calls + n_calls - 2);
        p_value := pg_temp.plpgsql_inc_beta(df / 2, 0.5, df / (df + t ^ 2));
    END IF;
    change_pct := CASE WHEN b_mean > 0 THEN 100 * (n_mean - b_mean) / b_mean END;
    impact_ms := (n_mean - b_mean) * n_calls;
    floor_ms := greatest((r->>'min_impact_ms')::double precision,
                         (r->>'min_impact_pct')::double precision / 100 * coalesce(base_db_time_ms, 0));
    IF p_value IS NULL THEN
        significant := NULL;
        verdict := 'info';
        RETURN;
    END IF;
    -- alpha is shared by the family_size tests made together (Bonferroni)
    significant := p_value < (r->>'alpha')::double precision / (r->>'family_size')::double precision
                   AND abs(coalesce(change_pct, 0)) >= (r->>'min_change_pct')::double precision
                   AND abs(n_mean - b_mean) >= (r->>'min_change_ms')::double precision
                   AND abs(impact_ms) >= floor_ms AND impact_ms <> 0;
    verdict := CASE WHEN NOT significant THEN 'pass'
                    WHEN n_mean > b_mean THEN 'regression' ELSE 'improvement' END;
END
$$;
RESET client_min_messages;
\set QUIET off
SELECT count(*) AS ln_gamma_cases,
       count(*) FILTER (WHERE folio_perf_data.ln_gamma(x) IS DISTINCT FROM pg_temp.plpgsql_ln_gamma(x)) AS differ
FROM (SELECT g / 7.0::float8 AS x FROM generate_series(1, 400) g
      UNION ALL SELECT unnest(ARRAY[1e-9, 0.25, 0.5, 1, 2, 1e6]::float8[])) v;
SELECT count(*) AS inc_beta_cases,
       count(*) FILTER (WHERE folio_perf_data.inc_beta(a, b, x) IS DISTINCT FROM pg_temp.plpgsql_inc_beta(a, b, x)) AS differ
FROM unnest(ARRAY[0.5, 1, 2.5, 7, 40, 300, 5000]::float8[]) a,
     unnest(ARRAY[0.5, 1, 3]::float8[]) b,
     unnest(ARRAY[0, 1e-12, 0.01, 0.2, 0.5, 0.77, 0.99, 1 - 1e-12, 1]::float8[]) x;
CREATE TEMP TABLE sig_grid AS
SELECT bc, bm, bs, nc, nm, ns, db, rules
FROM unnest(ARRAY[NULL, 1, 2, 1000, 250000]::bigint[]) bc,
     unnest(ARRAY[NULL, 0, 0.003, 1.25, 40]::numeric[]) bm,
     unnest(ARRAY[NULL, 0, 0.7, 55.5]::numeric[]) bs,
     unnest(ARRAY[2, 90000]::bigint[]) nc,
     unnest(ARRAY[0.003, 1.31, 41]::numeric[]) nm,
     unnest(ARRAY[0, 0.5, 60]::numeric[]) ns,
     unnest(ARRAY[NULL, 1e7]::numeric[]) db,
     unnest(ARRAY['{}', '{"run_noise_pct": 0}', '{"family_size": 400, "min_impact_ms": 5, "alpha": 0.05}']::jsonb[]) rules;
SELECT count(*) AS significance_cases,
       count(*) FILTER (WHERE row(c.*) IS DISTINCT FROM row(p.*)) AS differ,
       count(DISTINCT c.verdict) AS verdicts
FROM sig_grid g,
     LATERAL folio_perf_data.significance(g.bc, g.bm, g.bs, g.nc, g.nm, g.ns, g.db, g.rules) c,
     LATERAL pg_temp.plpgsql_significance(g.bc, g.bm, g.bs, g.nc, g.nm, g.ns, g.db, g.rules) p;
SELECT count(*) AS welch_cases,
       count(*) FILTER (WHERE row(c.*) IS DISTINCT FROM row(p.*)) AS differ
FROM sig_grid g,
     LATERAL folio_perf_data.welch(g.bc, g.bm, g.bs, g.nc, g.nm, g.ns) c,
     LATERAL pg_temp.plpgsql_welch(g.bc, g.bm, g.bs, g.nc, g.nm, g.ns) p;
-- (a control: one changed input differs)
SELECT row(folio_perf_data.significance(10, 1, 0.5, 10, 1.3, 0.5, 100, '{}'))
       IS DISTINCT FROM row(pg_temp.plpgsql_significance(10, 1, 0.5, 10, 1.3000001, 0.5, 100, '{}')) AS control_differs;
SELECT folio_perf_data.ln_gamma(0);
SELECT folio_perf_data.significance(10, 1, 0.5, 10, 2, 0.5, 100, '{"alpha": 7}');
SELECT folio_perf_data.significance(10, 1, 0.5, 10, 2, 0.5, 100, '[]');
SELECT (folio_perf_data.significance(10, 1, 0.5, 10, 2, 0.5, 100, NULL)).verdict AS null_rules_defaults;
