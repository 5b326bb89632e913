/*-------------------------------------------------------------------------
 *
 * parse.c
 *		SQL-callable wrappers around parse_core.c.
 *
 *	folio_perf_parse_schema(name)	 -> (tenant, module)
 *	folio_perf_appname_module(name)  -> module
 *	folio_perf_query_schema(query)	 -> (tenant, module) of the first
 *										schema-qualified name that parses
 *	folio_perf_query_relnames(query) -> unqualified relation names
 *
 * All of them accept any input, including NULL, empty strings, invalid
 * encodings and multi-megabyte texts, and never raise an error for it.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/parse.c
 *
 *-------------------------------------------------------------------------
 */
#include "folio_perf.h"

#include "catalog/pg_type.h"
#include "utils/array.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"

PG_FUNCTION_INFO_V1(folio_perf_parse_schema);
PG_FUNCTION_INFO_V1(folio_perf_appname_module);
PG_FUNCTION_INFO_V1(folio_perf_query_schema);
PG_FUNCTION_INFO_V1(folio_perf_query_relnames);

/* Most unqualified names folio_perf_query_relnames returns. */
#define FPERF_MAX_RELNAMES 32

/*
 * Split name into palloc'd tenant and module strings (NULL when absent).
 * Returns true if a module was found.
 */
bool
fperf_text_split_schema(const char *name, char **tenant, char **module)
{
	FPerfSlice	t,
				m;

	*tenant = NULL;
	*module = NULL;
	if (name == NULL || !fperf_split_schema(name, strlen(name), &t, &m))
		return false;
	if (t.len > 0)
		*tenant = pnstrdup(t.ptr, t.len);
	*module = pnstrdup(m.ptr, m.len);
	return true;
}

/* Emit one (tenant, module) row; NULLs where absent. */
static void
put_split_row(FunctionCallInfo fcinfo, const FPerfSlice *t, const FPerfSlice *m)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[2];
	bool		nulls[2];

	nulls[0] = (t->len == 0);
	nulls[1] = (m->len == 0);
	values[0] = nulls[0] ? (Datum) 0 :
		PointerGetDatum(cstring_to_text_with_len(t->ptr, (int) t->len));
	values[1] = nulls[1] ? (Datum) 0 :
		PointerGetDatum(cstring_to_text_with_len(m->ptr, (int) m->len));
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * folio_perf_parse_schema(name text) RETURNS TABLE(tenant text, module text)
 *
 * Always exactly one row.
 */
Datum
folio_perf_parse_schema(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	FPerfSlice	t = {NULL, 0};
	FPerfSlice	m = {NULL, 0};

	fperf_init_srf(fcinfo);
	if (rsinfo->setDesc->natts != 2)
		elog(ERROR, "incorrect number of output arguments");

	if (!PG_ARGISNULL(0))
	{
		text	   *arg = PG_GETARG_TEXT_PP(0);

		if (!fperf_split_schema(VARDATA_ANY(arg), VARSIZE_ANY_EXHDR(arg), &t, &m))
		{
			t.len = 0;
			m.len = 0;
		}
	}
	put_split_row(fcinfo, &t, &m);
	PG_RETURN_VOID();
}

/*
 * folio_perf_appname_module(application_name text) RETURNS text
 */
Datum
folio_perf_appname_module(PG_FUNCTION_ARGS)
{
	text	   *arg;
	char		buf[FPERF_MAX_IDENT + 1];
	size_t		n;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	arg = PG_GETARG_TEXT_PP(0);
	n = fperf_appname_module(VARDATA_ANY(arg), VARSIZE_ANY_EXHDR(arg),
							 buf, sizeof(buf));
	if (n == 0)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text_with_len(buf, (int) n));
}

typedef struct QuerySchemaState
{
	FPerfSlice	tenant;
	FPerfSlice	module;
	char		tbuf[FPERF_MAX_IDENT + 1];
	char		mbuf[FPERF_MAX_IDENT + 1];
	bool		found;
} QuerySchemaState;

static bool
query_schema_cb(const char *ident, size_t len, bool qualified, void *arg)
{
	QuerySchemaState *st = (QuerySchemaState *) arg;
	FPerfSlice	t,
				m;

	if (!qualified || !fperf_split_schema(ident, len, &t, &m))
		return true;
	/* ident points into the scanner's buffer: copy out */
	memcpy(st->tbuf, t.ptr ? t.ptr : "", t.len);
	memcpy(st->mbuf, m.ptr, m.len);
	st->tenant.ptr = st->tbuf;
	st->tenant.len = t.len;
	st->module.ptr = st->mbuf;
	st->module.len = m.len;
	st->found = true;
	return false;
}

/*
 * folio_perf_query_schema(query text) RETURNS TABLE(tenant text, module text)
 *
 * Always exactly one row: the tenant and module of the first
 * schema-qualified name in the text that parses as a module schema.
 */
Datum
folio_perf_query_schema(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	QuerySchemaState st;

	fperf_init_srf(fcinfo);
	if (rsinfo->setDesc->natts != 2)
		elog(ERROR, "incorrect number of output arguments");

	memset(&st, 0, sizeof(st));
	if (!PG_ARGISNULL(0))
	{
		text	   *arg = PG_GETARG_TEXT_PP(0);

		fperf_scan_query(VARDATA_ANY(arg), VARSIZE_ANY_EXHDR(arg),
						 query_schema_cb, &st);
	}
	if (!st.found)
	{
		st.tenant.len = 0;
		st.module.len = 0;
	}
	put_split_row(fcinfo, &st.tenant, &st.module);
	PG_RETURN_VOID();
}

typedef struct RelnamesState
{
	Datum		names[FPERF_MAX_RELNAMES];
	int			n;
} RelnamesState;

static bool
relnames_cb(const char *ident, size_t len, bool qualified, void *arg)
{
	RelnamesState *st = (RelnamesState *) arg;
	int			i;
	text	   *t;

	if (qualified || len == 0)
		return true;
	/* never hand out bytes that are not valid in the database encoding */
	if (!pg_verifymbstr(ident, (int) len, true))
		return true;
	for (i = 0; i < st->n; i++)
	{
		text	   *old = DatumGetTextPP(st->names[i]);

		if (VARSIZE_ANY_EXHDR(old) == len &&
			memcmp(VARDATA_ANY(old), ident, len) == 0)
			return true;
	}
	t = cstring_to_text_with_len(ident, (int) len);
	st->names[st->n++] = PointerGetDatum(t);
	return st->n < FPERF_MAX_RELNAMES;
}

/*
 * folio_perf_query_relnames(query text) RETURNS text[]
 *
 * The distinct unqualified names that follow FROM, JOIN, INTO, UPDATE or
 * TABLE, in order of appearance, at most 32.  Empty array if none; NULL
 * for NULL.  Names that are not valid in the database encoding are skipped.
 */
Datum
folio_perf_query_relnames(PG_FUNCTION_ARGS)
{
	RelnamesState st;
	text	   *arg;

	if (PG_ARGISNULL(0))
		PG_RETURN_NULL();
	arg = PG_GETARG_TEXT_PP(0);
	st.n = 0;
	fperf_scan_query(VARDATA_ANY(arg), VARSIZE_ANY_EXHDR(arg), relnames_cb, &st);
	PG_RETURN_ARRAYTYPE_P(construct_array(st.names, st.n, TEXTOID, -1, false,
										  TYPALIGN_INT));
}
