/*-------------------------------------------------------------------------
 *
 * format.c
 *		The numbers of reports as text: fmt_num (thousands separators,
 *		rounded, no trailing zeros), fmt_sig (three significant digits) and
 *		fmt_bytes (B, kB, MB, GB, TB), sql/parts/120_rendering.sql.
 *
 * Every number a report, a finding or an evidence text shows goes through
 * these: a 24-hour report at 40 tenants calls them some 200,000 times
 * (folio_perf_index_usage alone four per index of 47,000), 10 us each in
 * PL/pgSQL.  The steps are the PL/pgSQL's, through the same built-in
 * functions (round, abs, numeric output, trunc, to_char with the same
 * pattern), so that every string is the same (the regression test
 * reports compares them with the PL/pgSQL kept in the test).
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/format.c
 *
 *-------------------------------------------------------------------------
 */
#include "folio_perf.h"
#include "format.h"

#include "fmgr.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/numeric.h"

PG_FUNCTION_INFO_V1(folio_perf_fmt_num);
PG_FUNCTION_INFO_V1(folio_perf_fmt_sig);
PG_FUNCTION_INFO_V1(folio_perf_fmt_bytes);

/* the integer part's pattern of fmt_num */
#define FMT_INT_PATTERN "FM999,999,999,999,999,999,990"

/*
 * fmt_num(n, digits): round(n, digits); '-' if that is below 0; to_char of
 * its absolute value truncated (FMT_INT_PATTERN); '.' and the decimals of
 * its absolute value's text without trailing zeros, if any are left.
 */
text *
fperf_fmt_num(Datum n, int32 digits)
{
	Datum		r = DirectFunctionCall2(numeric_round, n, Int32GetDatum(digits));
	Datum		a = DirectFunctionCall1(numeric_abs, r);
	char	   *s = DatumGetCString(DirectFunctionCall1(numeric_out, a));
	char	   *dot = strchr(s, '.');
	char	   *f = "";
	Datum		ip;
	StringInfoData out;

	if (dot != NULL)
	{
		/* split_part(text, '.', 2): up to a second '.', which there is not */
		char	   *end = dot + 1 + strlen(dot + 1);

		while (end > dot + 1 && end[-1] == '0')
			end--;
		*end = '\0';
		f = dot + 1;
	}
	ip = DirectFunctionCall2(numeric_to_char,
							 DirectFunctionCall2(numeric_trunc, a, Int32GetDatum(0)),
							 CStringGetTextDatum(FMT_INT_PATTERN));
	initStringInfo(&out);
	if (DatumGetBool(DirectFunctionCall2(numeric_lt, r, NumericGetDatum(int64_to_numeric(0)))))
		appendStringInfoChar(&out, '-');
	appendBinaryStringInfo(&out, VARDATA_ANY(DatumGetTextPP(ip)),
						   VARSIZE_ANY_EXHDR(DatumGetTextPP(ip)));
	if (*f != '\0')
	{
		appendStringInfoChar(&out, '.');
		appendStringInfoString(&out, f);
	}
	return cstring_to_text_with_len(out.data, out.len);
}

/* fmt_num(n numeric, digits int): '' for a NULL n, NULL for NULL digits */
Datum
folio_perf_fmt_num(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_TEXT_P(cstring_to_text(""));
	if (PG_ARGISNULL(1))
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(fperf_fmt_num(PG_GETARG_DATUM(0), PG_GETARG_INT32(1)));
}

/*
 * fmt_sig(n numeric): fmt_num with 0 decimals from 100 on, 1 from 10, 2
 * from 1, else 3 (of the absolute value).
 */
text *
fperf_fmt_sig(Datum n)
{
	Datum		a = DirectFunctionCall1(numeric_abs, n);
	int32		digits;

	if (DatumGetBool(DirectFunctionCall2(numeric_ge, a, NumericGetDatum(int64_to_numeric(100)))))
		digits = 0;
	else if (DatumGetBool(DirectFunctionCall2(numeric_ge, a, NumericGetDatum(int64_to_numeric(10)))))
		digits = 1;
	else if (DatumGetBool(DirectFunctionCall2(numeric_ge, a, NumericGetDatum(int64_to_numeric(1)))))
		digits = 2;
	else
		digits = 3;
	return fperf_fmt_num(n, digits);
}

Datum
folio_perf_fmt_sig(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_TEXT_P(cstring_to_text(""));
	PG_RETURN_TEXT_P(fperf_fmt_sig(PG_GETARG_DATUM(0)));
}

/*
 * fmt_bytes(n numeric): '' for NULL; below 1024 fmt_num(n, 0) || ' B';
 * else n / 1024^e (e: 1 below 1 MB, 2 below 1 GB, 3 below 1 TB, else 4),
 * one decimal where that is below 10 (of the absolute value), and the unit.
 */
text *
fperf_fmt_bytes(Datum n)
{
	static const char *const units[] = {"kB", "MB", "GB", "TB"};
	Datum		a;
	Datum		p;
	int			e;
	text	   *num;
	StringInfoData out;

	a = DirectFunctionCall1(numeric_abs, n);
	initStringInfo(&out);
	if (DatumGetBool(DirectFunctionCall2(numeric_lt, a, NumericGetDatum(int64_to_numeric(1024)))))
	{
		num = fperf_fmt_num(n, 0);
		appendBinaryStringInfo(&out, VARDATA_ANY(num), VARSIZE_ANY_EXHDR(num));
		appendStringInfoString(&out, " B");
		return cstring_to_text_with_len(out.data, out.len);
	}
	if (DatumGetBool(DirectFunctionCall2(numeric_lt, a, NumericGetDatum(int64_to_numeric(1048576)))))
		e = 1;
	else if (DatumGetBool(DirectFunctionCall2(numeric_lt, a, NumericGetDatum(int64_to_numeric(1073741824)))))
		e = 2;
	else if (DatumGetBool(DirectFunctionCall2(numeric_lt, a, NumericGetDatum(int64_to_numeric(INT64CONST(1099511627776))))))
		e = 3;
	else
		e = 4;
	/* 1024::numeric ^ e */
	p = DirectFunctionCall2(numeric_power, NumericGetDatum(int64_to_numeric(1024)),
							NumericGetDatum(int64_to_numeric(e)));
	num = fperf_fmt_num(DirectFunctionCall2(numeric_div, n, p),
						DatumGetBool(DirectFunctionCall2(numeric_lt,
														 DirectFunctionCall2(numeric_div, a, p),
														 NumericGetDatum(int64_to_numeric(10)))) ? 1 : 0);
	appendBinaryStringInfo(&out, VARDATA_ANY(num), VARSIZE_ANY_EXHDR(num));
	appendStringInfoChar(&out, ' ');
	appendStringInfoString(&out, units[e - 1]);
	return cstring_to_text_with_len(out.data, out.len);
}

Datum
folio_perf_fmt_bytes(PG_FUNCTION_ARGS)
{
	if (PG_ARGISNULL(0))
		PG_RETURN_TEXT_P(cstring_to_text(""));
	PG_RETURN_TEXT_P(fperf_fmt_bytes(PG_GETARG_DATUM(0)));
}
