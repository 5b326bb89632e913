/*-------------------------------------------------------------------------
 *
 * stats.c
 *		The significance rule of findings in C: ln Gamma, the regularized
 *		incomplete beta function, Welch's t-test and significance()
 *		(sql/parts/136_findings.sql states the rule).
 *
 * A compare runs the rule once per statement of both windows (4,900 at 40
 * tenants), a series once per statement and pair of windows.  In PL/pgSQL
 * each call cost 0.26 ms (the continued fraction's loop, the rules checked
 * again per call); here the arithmetic is the same, operation for
 * operation, in the order the PL/pgSQL functions did it, so that the
 * results are the same doubles: float8 operations as PostgreSQL's float8
 * operators do them (pow, sqrt, log, exp, sin of the C library), the
 * numeric parts of significance() through PostgreSQL's numeric functions.
 * The regression test findings compares every output with the PL/pgSQL
 * functions kept in the test.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/stats.c
 *
 *-------------------------------------------------------------------------
 */
#include "folio_perf.h"

#include <math.h>

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/float.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

PG_FUNCTION_INFO_V1(folio_perf_ln_gamma);
PG_FUNCTION_INFO_V1(folio_perf_inc_beta);
PG_FUNCTION_INFO_V1(folio_perf_welch);
PG_FUNCTION_INFO_V1(folio_perf_significance);

/* ln(Gamma(x)), x > 0: Lanczos, g = 7, 9 terms */
static double
ln_gamma(double x)
{
	static const double c[9] = {0.99999999999980993, 676.5203681218851, -1259.1392167224028,
		771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012,
	9.9843695780195716e-6, 1.5056327351493116e-7};
	double		a;
	double		t;

	if (!(x > 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("ln_gamma is defined here for x > 0 only, not %s",
						float8out_internal(x))));
	if (x < 0.5)
		/* reflection */
		return log(M_PI / sin(M_PI * x)) - ln_gamma(1 - x);
	x = x - 1;
	a = c[0];
	for (int i = 1; i <= 8; i++)
		a = a + c[i] / (x + i);
	t = x + 7.5;
	return 0.5 * log(2 * M_PI) + (x + 0.5) * log(t) - t + log(a);
}

/*
 * The regularized incomplete beta function I_x(a, b): continued fraction
 * by the modified Lentz method (Numerical Recipes' betai/betacf).
 */
static double
inc_beta(double a, double b, double x)
{
	const double tiny = 1e-300;
	bool		swap = false;
	double		aa,
				c,
				d,
				h,
				del,
				lnbt,
				t;

	if (x <= 0)
		return 0;
	else if (x >= 1)
		return 1;
	if (x > (a + 1) / (a + b + 2))
	{
		/* the fraction converges fast on the other side */
		swap = true;
		t = a;
		a = b;
		b = t;
		x = 1 - x;
	}
	lnbt = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * log(x) + b * log(1 - x);
	c = 1;
	d = 1 - (a + b) * x / (a + 1);
	if (fabs(d) < tiny)
		d = tiny;
	d = 1 / d;
	h = d;
	for (int m = 1; m <= 500; m++)
	{
		int			m2 = 2 * m;

		aa = m * (b - m) * x / ((a - 1 + m2) * (a + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		h = h * d * c;
		aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + 1 + m2));
		d = 1 + aa * d;
		if (fabs(d) < tiny)
			d = tiny;
		c = 1 + aa / c;
		if (fabs(c) < tiny)
			c = tiny;
		d = 1 / d;
		del = d * c;
		h = h * del;
		if (fabs(del - 1) < 1e-14)
			break;
	}
	/* exp() of less than about -745 underflows (an error in PostgreSQL) */
	t = lnbt < -700 ? 0 : exp(lnbt) * h / a;
	return swap ? 1 - t : t;
}

/* A result that may be NULL. */
typedef struct NDouble
{
	bool		isnull;
	double		v;
} NDouble;

static NDouble
nd(double v)
{
	NDouble		r = {false, v};

	return r;
}

static const NDouble nd_null = {true, 0};

/* numeric -> float8 as PostgreSQL's cast does it */
static double
num_f8(Datum n)
{
	return DatumGetFloat8(DirectFunctionCall1(numeric_float8, n));
}

/*
 * Welch's test of samples given as counts, means and population standard
 * deviations: t, df and the two-sided p (all NULL where a sample has fewer
 * than 2 values; df NULL and p 0 or 1 where neither has spread).
 */
static void
welch(NDouble n1, NDouble mean1, NDouble sd1, NDouble n2, NDouble mean2, NDouble sd2,
	  NDouble *t, NDouble *df, NDouble *p)
{
	double		v1,
				v2,
				se2,
				s1 = sd1.isnull ? 0 : sd1.v,
				s2 = sd2.isnull ? 0 : sd2.v;

	*t = *df = *p = nd_null;
	if (n1.isnull || n2.isnull || n1.v < 2 || n2.v < 2 || mean1.isnull || mean2.isnull)
		return;
	/* sample variances over n, from the population ones */
	v1 = pow(s1, 2) * n1.v / (n1.v - 1) / n1.v;
	v2 = pow(s2, 2) * n2.v / (n2.v - 1) / n2.v;
	se2 = v1 + v2;
	if (se2 <= 0)
	{
		*t = mean2.v == mean1.v ? nd(0) : nd_null;
		*p = nd(mean2.v == mean1.v ? 1 : 0);
		return;
	}
	*t = nd((mean2.v - mean1.v) / sqrt(se2));
	*df = nd(pow(se2, 2) / ((v1 > 0 ? pow(v1, 2) / (n1.v - 1) : 0)
							+ (v2 > 0 ? pow(v2, 2) / (n2.v - 1) : 0)));
	*p = nd(inc_beta(df->v / 2, 0.5, df->v / (df->v + pow(t->v, 2))));
}

static NDouble
arg_num(FunctionCallInfo fcinfo, int i)
{
	return PG_ARGISNULL(i) ? nd_null : nd(num_f8(PG_GETARG_DATUM(i)));
}

static Datum
nd_datum(NDouble x, bool *isnull)
{
	*isnull = x.isnull;
	return x.isnull ? (Datum) 0 : Float8GetDatum(x.v);
}

Datum
folio_perf_ln_gamma(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(ln_gamma(PG_GETARG_FLOAT8(0)));
}

Datum
folio_perf_inc_beta(PG_FUNCTION_ARGS)
{
	PG_RETURN_FLOAT8(inc_beta(PG_GETARG_FLOAT8(0), PG_GETARG_FLOAT8(1), PG_GETARG_FLOAT8(2)));
}

/* welch(n1, mean1, sd1, n2, mean2, sd2 numeric, OUT t, OUT df, OUT p_value) */
Datum
folio_perf_welch(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	NDouble		t,
				df,
				p;
	Datum		values[3];
	bool		nulls[3];

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	welch(arg_num(fcinfo, 0), arg_num(fcinfo, 1), arg_num(fcinfo, 2),
		  arg_num(fcinfo, 3), arg_num(fcinfo, 4), arg_num(fcinfo, 5), &t, &df, &p);
	values[0] = nd_datum(t, &nulls[0]);
	values[1] = nd_datum(df, &nulls[1]);
	values[2] = nd_datum(p, &nulls[2]);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}

/*
 * The rules significance() reads, from check_rules(rules) (which checks
 * them and fills in the defaults).  A query passes the same rules on every
 * row: the last rules and what they gave are kept in fn_extra.
 */
typedef struct SigRules
{
	FmgrInfo	check_rules;
	bool		have;			/* last_* valid */
	bool		last_null;
	Size		last_size;
	char	   *last;			/* the rules as passed (detoasted) */
	double		alpha,
				family_size,
				min_change_pct,
				min_change_ms,
				min_impact_ms,
				min_impact_pct,
				run_noise_pct;
} SigRules;

/* (r->>key)::double precision of check_rules()'s result */
static double
rule_value(Jsonb *r, const char *key)
{
	JsonbValue *v = getKeyJsonValueFromContainer(&r->root, key, strlen(key), NULL);

	if (v == NULL || v->type != jbvNumeric)
		elog(ERROR, "check_rules() gave no number for \"%s\"", key);
	return num_f8(NumericGetDatum(v->val.numeric));
}

static SigRules *
sig_rules(FunctionCallInfo fcinfo, int argno)
{
	SigRules   *sr = (SigRules *) fcinfo->flinfo->fn_extra;
	bool		isnull = PG_ARGISNULL(argno);
	Jsonb	   *rules = isnull ? NULL : PG_GETARG_JSONB_P(argno);
	Size		size = isnull ? 0 : VARSIZE(rules);
	LOCAL_FCINFO(cf, 1);
	Datum		res;
	Jsonb	   *r;

	if (sr == NULL)
	{
		Oid			argtypes[1] = {JSONBOID};
		Oid			fn;

		sr = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(SigRules));
		/* schema-qualified: never found through the caller's search_path */
		fn = LookupFuncName(list_make2(makeString("folio_perf_data"), makeString("check_rules")),
							1, argtypes, false);
		fmgr_info_cxt(fn, &sr->check_rules, fcinfo->flinfo->fn_mcxt);
		fcinfo->flinfo->fn_extra = sr;
	}
	if (sr->have && sr->last_null == isnull && sr->last_size == size &&
		(isnull || memcmp(sr->last, rules, size) == 0))
		return sr;

	InitFunctionCallInfoData(*cf, &sr->check_rules, 1, InvalidOid, NULL, NULL);
	cf->args[0].value = isnull ? (Datum) 0 : JsonbPGetDatum(rules);
	cf->args[0].isnull = isnull;
	res = FunctionCallInvoke(cf);
	if (cf->isnull)
		elog(ERROR, "check_rules() returned NULL");
	r = DatumGetJsonbP(res);
	sr->alpha = rule_value(r, "alpha");
	sr->family_size = rule_value(r, "family_size");
	sr->min_change_pct = rule_value(r, "min_change_pct");
	sr->min_change_ms = rule_value(r, "min_change_ms");
	sr->min_impact_ms = rule_value(r, "min_impact_ms");
	sr->min_impact_pct = rule_value(r, "min_impact_pct");
	sr->run_noise_pct = rule_value(r, "run_noise_pct");

	if (sr->last)
		pfree(sr->last);
	sr->last = NULL;
	if (!isnull)
	{
		sr->last = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, size);
		memcpy(sr->last, rules, size);
	}
	sr->last_null = isnull;
	sr->last_size = size;
	sr->have = true;
	return sr;
}

/*
 * coalesce(sd, 0) ^ 2 / greatest(calls - 1, 1) in numeric, as the
 * PL/pgSQL rule computed it (sd numeric, calls bigint).
 */
static Datum
var_over_calls(FunctionCallInfo fcinfo, int sd_arg, int calls_arg)
{
	Datum		sd = PG_ARGISNULL(sd_arg) ? NumericGetDatum(int64_to_numeric(0)) : PG_GETARG_DATUM(sd_arg);
	int64		g = 1;

	if (!PG_ARGISNULL(calls_arg))
	{
		int64		c = PG_GETARG_INT64(calls_arg);

		if (c == PG_INT64_MIN)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("bigint out of range")));
		g = Max(c - 1, 1);
	}
	return DirectFunctionCall2(numeric_div,
							   DirectFunctionCall2(numeric_power, sd,
												   NumericGetDatum(int64_to_numeric(2))),
							   NumericGetDatum(int64_to_numeric(g)));
}

/*
 * significance(b_calls bigint, b_mean numeric, b_sd numeric, n_calls
 * bigint, n_mean numeric, n_sd numeric, base_db_time_ms numeric, rules
 * jsonb, OUT t, OUT df, OUT p_value, OUT change_pct, OUT impact_ms, OUT
 * floor_ms, OUT significant, OUT verdict): 136_findings.sql.
 */
Datum
folio_perf_significance(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	SigRules   *r;
	NDouble		b_calls = PG_ARGISNULL(0) ? nd_null : nd((double) PG_GETARG_INT64(0));
	NDouble		n_calls = PG_ARGISNULL(3) ? nd_null : nd((double) PG_GETARG_INT64(3));
	NDouble		b_mean = arg_num(fcinfo, 1);
	NDouble		n_mean = arg_num(fcinfo, 4);
	NDouble		t,
				df,
				p,
				change_pct,
				impact_ms;
	double		floor_ms;
	double		base = PG_ARGISNULL(6) ? 0 : num_f8(PG_GETARG_DATUM(6));
	Datum		values[8];
	bool		nulls[8];
	const char *verdict;
	bool		significant = false;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	r = sig_rules(fcinfo, 7);

	welch(b_calls, b_mean, arg_num(fcinfo, 2), n_calls, n_mean, arg_num(fcinfo, 5), &t, &df, &p);
	/* the run-to-run noise added to each mean's variance (t with Welch's df) */
	if (!p.isnull && r->run_noise_pct > 0)
	{
		double		s = num_f8(DirectFunctionCall2(numeric_add,
												   var_over_calls(fcinfo, 2, 0),
												   var_over_calls(fcinfo, 5, 3)));
		double		sq = sqrt(s + pow(r->run_noise_pct / 100, 2)
							  * (pow(b_mean.v, 2) + pow(n_mean.v, 2)));

		t = nd(sq == 0 ? 0 : (n_mean.v - b_mean.v) / sq);
		if (df.isnull)
			df = nd((double) (PG_GETARG_INT64(0) + PG_GETARG_INT64(3) - 2));
		p = nd(inc_beta(df.v / 2, 0.5, df.v / (df.v + pow(t.v, 2))));
	}
	change_pct = (!b_mean.isnull && !n_mean.isnull && b_mean.v > 0)
		? nd(100 * (n_mean.v - b_mean.v) / b_mean.v) : nd_null;
	impact_ms = (!b_mean.isnull && !n_mean.isnull && !n_calls.isnull)
		? nd((n_mean.v - b_mean.v) * n_calls.v) : nd_null;
	floor_ms = Max(r->min_impact_ms, r->min_impact_pct / 100 * base);
	if (p.isnull)
		verdict = "info";
	else
	{
		/* alpha is shared by the family_size tests made together (Bonferroni) */
		significant = p.v < r->alpha / r->family_size
			&& fabs(change_pct.isnull ? 0 : change_pct.v) >= r->min_change_pct
			&& fabs(n_mean.v - b_mean.v) >= r->min_change_ms
			&& fabs(impact_ms.v) >= floor_ms && impact_ms.v != 0;
		verdict = !significant ? "pass" : n_mean.v > b_mean.v ? "regression" : "improvement";
	}

	values[0] = nd_datum(t, &nulls[0]);
	values[1] = nd_datum(df, &nulls[1]);
	values[2] = nd_datum(p, &nulls[2]);
	values[3] = nd_datum(change_pct, &nulls[3]);
	values[4] = nd_datum(impact_ms, &nulls[4]);
	values[5] = Float8GetDatum(floor_ms);
	nulls[5] = false;
	values[6] = BoolGetDatum(significant);
	nulls[6] = p.isnull;
	values[7] = CStringGetTextDatum(verdict);
	nulls[7] = false;
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}
