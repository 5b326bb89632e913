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
 * How a schema (or role) name splits into tenant and module is FOLIO's rule
 * (parse_core.c) unless folio_perf.schema_pattern holds a regular
 * expression whose first two capture groups are the tenant and the module;
 * every attribution in C and SQL goes through fperf_schema_split().
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/parse.c
 *
 *-------------------------------------------------------------------------
 */
#include "folio_perf.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "mb/pg_wchar.h"
#include "regex/regex.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/memutils.h"

PG_FUNCTION_INFO_V1(folio_perf_parse_schema);
PG_FUNCTION_INFO_V1(folio_perf_appname_module);
PG_FUNCTION_INFO_V1(folio_perf_query_schema);
PG_FUNCTION_INFO_V1(folio_perf_query_relnames);

/* Most unqualified names folio_perf_query_relnames returns. */
#define FPERF_MAX_RELNAMES 32

/* folio_perf.schema_pattern: empty for FOLIO's rule */
char	   *fperf_schema_pattern = NULL;

/* Longest name the pattern is tried on (schema and role names: 63 bytes). */
#define FPERF_PATTERN_MAX_NAME 255

/* The compiled folio_perf.schema_pattern and the text it was compiled from. */
static MemoryContext pattern_cxt = NULL;
static char *pattern_src = NULL;
static regex_t pattern_re;

/*
 * Compile src as an advanced regular expression.  On failure returns false
 * and, if errbuf is given, the regex library's message.
 */
static bool
pattern_compile(const char *src, regex_t *re, char *errbuf, size_t errlen)
{
	size_t		len = strlen(src);
	pg_wchar   *w = palloc((len + 1) * sizeof(pg_wchar));
	int			wlen = pg_mb2wchar_with_len(src, w, (int) len);
	int			rc = pg_regcomp(re, w, wlen, REG_ADVANCED, C_COLLATION_OID);

	pfree(w);
	if (rc != REG_OKAY)
	{
		if (errbuf)
			pg_regerror(rc, re, errbuf, errlen);
		return false;
	}
	return true;
}

/* GUC check hook: the pattern compiles and has two capture groups. */
static bool
check_schema_pattern(char **newval, void **extra, GucSource source)
{
	regex_t		re;
	char		errbuf[128];
	size_t		nsub;

	if (*newval == NULL || (*newval)[0] == '\0')
		return true;
	if (!pattern_compile(*newval, &re, errbuf, sizeof(errbuf)))
	{
		GUC_check_errdetail("Invalid regular expression: %s.", errbuf);
		return false;
	}
	nsub = re.re_nsub;
	pg_regfree(&re);
	if (nsub < 2)
	{
		GUC_check_errdetail("The pattern has %d capture group(s); it needs two.", (int) nsub);
		GUC_check_errhint("The first group is the tenant, the second the module, e.g. '^([a-z]+[0-9]+)_(mod_[a-z_]+)$'.");
		return false;
	}
	return true;
}

void
fperf_parse_define_gucs(void)
{
	DefineCustomStringVariable("folio_perf.schema_pattern",
							   "How schema and role names split into tenant and module.",
							   "Empty: FOLIO's rule (<tenant>_<module> with the known module "
							   "names, module-only schemas). Otherwise a regular expression "
							   "whose first capture group is the tenant (may be empty) and "
							   "whose second is the module; names it does not match belong "
							   "to no module.",
							   &fperf_schema_pattern,
							   "",
							   PGC_SUSET,
							   0,
							   check_schema_pattern, NULL, NULL);
}

/* Byte offset of character number nchars of name (of len bytes). */
static size_t
char_to_byte(const char *name, size_t len, int nchars)
{
	size_t		off = 0;

	while (nchars-- > 0 && off < len)
		off += pg_mblen(name + off);
	return Min(off, len);
}

/*
 * Split a schema or role name into tenant and module: by
 * folio_perf.schema_pattern when it is set, else by FOLIO's rule.  Same
 * contract as fperf_folio_schema_split(): true if a module was found, slices
 * into name; any input is accepted.
 */
bool
fperf_schema_split(const char *name, size_t len, FPerfSlice *tenant, FPerfSlice *module)
{
	pg_wchar   *w;
	int			wlen;
	regmatch_t	pm[3];
	int			rc;
	size_t		ts,
				te,
				ms,
				me;

	if (fperf_schema_pattern == NULL || fperf_schema_pattern[0] == '\0')
		return fperf_folio_schema_split(name, len, tenant, module);

	tenant->ptr = module->ptr = NULL;
	tenant->len = module->len = 0;
	if (name == NULL || len == 0 || len > FPERF_PATTERN_MAX_NAME ||
		!pg_verifymbstr(name, (int) len, true))
		return false;

	/* (re)compile when the setting changed; kept for the session */
	if (pattern_src == NULL || strcmp(pattern_src, fperf_schema_pattern) != 0)
	{
		MemoryContext old;
		bool		ok;

		if (pattern_cxt == NULL)
			pattern_cxt = AllocSetContextCreate(TopMemoryContext,
												"folio_perf schema pattern",
												ALLOCSET_SMALL_SIZES);
		if (pattern_src != NULL)
		{
			pg_regfree(&pattern_re);
			pattern_src = NULL;
		}
		MemoryContextReset(pattern_cxt);
		old = MemoryContextSwitchTo(pattern_cxt);
		ok = pattern_compile(fperf_schema_pattern, &pattern_re, NULL, 0);
		if (ok)
			pattern_src = pstrdup(fperf_schema_pattern);
		MemoryContextSwitchTo(old);
		if (!ok)
			return false;		/* the check hook makes this unreachable */
	}

	w = palloc((len + 1) * sizeof(pg_wchar));
	wlen = pg_mb2wchar_with_len(name, w, (int) len);
	rc = pg_regexec(&pattern_re, w, wlen, 0, NULL, 3, pm, 0);
	pfree(w);
	if (rc != REG_OKAY || pattern_re.re_nsub < 2)
		return false;
	if (pm[2].rm_so < 0 || pm[2].rm_eo <= pm[2].rm_so)
		return false;			/* no module */
	ms = char_to_byte(name, len, (int) pm[2].rm_so);
	me = char_to_byte(name, len, (int) pm[2].rm_eo);
	if (me <= ms)
		return false;
	module->ptr = name + ms;
	module->len = me - ms;
	if (pm[1].rm_so >= 0 && pm[1].rm_eo > pm[1].rm_so)
	{
		ts = char_to_byte(name, len, (int) pm[1].rm_so);
		te = char_to_byte(name, len, (int) pm[1].rm_eo);
		if (te > ts)
		{
			tenant->ptr = name + ts;
			tenant->len = te - ts;
		}
	}
	return true;
}

/*
 * fperf_clip_fn for fperf_scan_query(): cut an over-long identifier where
 * the server's truncate_identifier() cuts it, on a character boundary of
 * the database encoding.
 */
size_t
fperf_mbclip(const char *buf, size_t len, size_t limit)
{
	return (size_t) pg_mbcliplen(buf, (int) len, (int) limit);
}

/*
 * Split name into palloc'd tenant and module strings (NULL when absent).
 * Returns true if a module was found.
 */
bool
fperf_schema_split_text(const char *name, char **tenant, char **module)
{
	FPerfSlice	t,
				m;

	*tenant = NULL;
	*module = NULL;
	if (name == NULL || !fperf_schema_split(name, strlen(name), &t, &m))
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

		if (!fperf_schema_split(VARDATA_ANY(arg), VARSIZE_ANY_EXHDR(arg), &t, &m))
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

	if (!qualified || !fperf_schema_split(ident, len, &t, &m))
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
						 query_schema_cb, &st, fperf_mbclip);
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
	fperf_scan_query(VARDATA_ANY(arg), VARSIZE_ANY_EXHDR(arg), relnames_cb, &st,
					 fperf_mbclip);
	PG_RETURN_ARRAYTYPE_P(construct_array(st.names, st.n, TEXTOID, -1, false,
										  TYPALIGN_INT));
}
