/*-------------------------------------------------------------------------
 *
 * render.c
 *		One section of a report as text, markdown or HTML:
 *		folio_perf_data.render_section(fmt, sec, qmap),
 *		sql/parts/120_rendering.sql.
 *
 * A section is a jsonb object: title, columns (names), labels, rows (an
 * array of objects), and optionally note, id, right (columns aligned as
 * numbers), worse_up (columns whose values of 10 or more are worse),
 * fold (HTML: the table folded) and split (HTML: a long two-column table
 * in three side by side).  Every cell goes through the same steps as the
 * PL/pgSQL renderer this replaces (kept in the regression test reports,
 * which compares the two on every section of the fixture's reports and on
 * planted ones): fold to one line, the number formats of format.c chosen
 * by the column's name, HTML and markdown escaping.  A report at 40
 * tenants renders some 7,000 cells; in PL/pgSQL each cell cost four
 * function calls.
 *
 * Where the result depends on the database's locale (a regular
 * expression's classes over non-ASCII text) the step runs through the same
 * built-in function with the default collation, as the PL/pgSQL did; the
 * helpers that are called once per section or column (col_label, slug,
 * fmt_duration) are called as they are, by their qualified names.
 *
 * The input is the caller's: any jsonb.  Members of the wrong type are an
 * error (as the PL/pgSQL's jsonb functions raised), never a crash.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/render.c
 *
 *-------------------------------------------------------------------------
 */
#include "folio_perf.h"
#include "format.h"

#include "catalog/pg_collation.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "lib/stringinfo.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

PG_FUNCTION_INFO_V1(folio_perf_render_section);

/* the schema of the helpers called by name */
#define FPERF_DATA_SCHEMA "folio_perf_data"

typedef enum RenderFormat
{
	RF_TEXT,
	RF_MARKDOWN,
	RF_HTML
} RenderFormat;

/* col_kind(): how a column's values are formatted, by its name */
typedef enum ColKind
{
	CK_QUERY,
	CK_ID,
	CK_DURATION,
	CK_DELTA_PCT,
	CK_DELTA,
	CK_PCT,
	CK_BYTES_S,
	CK_BYTES,
	CK_TIME,
	CK_MS,
	CK_MEASURE,
	CK_COUNT
} ColKind;

/* one cell: the row's value (absent, or a JsonbValue) and its text */
typedef struct Cell
{
	bool		present;		/* the row has the key (not SQL NULL) */
	JsonbValue	v;
	char	   *c;				/* the cell's text (folded) */
	int			clen;
} Cell;

/* a section's columns and rows, as read from the jsonb */
typedef struct Section
{
	RenderFormat fmt;
	int			nc;
	char	  **cols;
	ColKind    *kinds;
	char	  **labels;			/* folded, col_label() where missing */
	bool	   *right;
	bool	   *worse;
	bool		has_query;
	JsonbContainer *rows;		/* an array, or NULL */
	int			nrows;
	FmgrInfo   *flinfo;			/* render_section's, for call_data_func */
} Section;

/* ---------------------------------------------------------------- */
/* strings */

static bool
is_ascii(const char *s, int len)
{
	for (int i = 0; i < len; i++)
		if ((unsigned char) s[i] >= 0x80)
			return false;
	return true;
}

static int
char_len(const char *s, int len)
{
	return pg_mbstrlen_with_len(s, len);
}

static bool
streq(const char *s, int len, const char *lit)
{
	return (int) strlen(lit) == len && memcmp(s, lit, len) == 0;
}

/* fold(s): runs of CR, LF and tabs one space, other control characters "?" */
static void
append_fold(StringInfo out, const char *s, int len)
{
	for (int i = 0; i < len; i++)
	{
		unsigned char ch = (unsigned char) s[i];

		if (ch == '\r' || ch == '\n' || ch == '\t')
		{
			while (i + 1 < len && (s[i + 1] == '\r' || s[i + 1] == '\n' || s[i + 1] == '\t'))
				i++;
			appendStringInfoChar(out, ' ');
		}
		else if ((ch >= 0x01 && ch <= 0x08) || ch == 0x0b || ch == 0x0c
				 || (ch >= 0x0e && ch <= 0x1f) || ch == 0x7f)
			appendStringInfoChar(out, '?');
		else
			appendStringInfoChar(out, (char) ch);
	}
}

static char *
fold(const char *s, int len, int *outlen)
{
	StringInfoData b;

	initStringInfo(&b);
	if (s != NULL)
		append_fold(&b, s, len);
	*outlen = b.len;
	return b.data;
}

/* html_escape(s): & < > " ' as entities */
static void
append_html_escape(StringInfo out, const char *s, int len)
{
	for (int i = 0; i < len; i++)
	{
		switch (s[i])
		{
			case '&':
				appendStringInfoString(out, "&amp;");
				break;
			case '<':
				appendStringInfoString(out, "&lt;");
				break;
			case '>':
				appendStringInfoString(out, "&gt;");
				break;
			case '"':
				appendStringInfoString(out, "&quot;");
				break;
			case '\'':
				appendStringInfoString(out, "&#39;");
				break;
			default:
				appendStringInfoChar(out, s[i]);
		}
	}
}

/*
 * html_wrap(s): html_escape(s) with "<wbr>" after every run of "_", ".",
 * ",", "(" and "/" (none of them is in an entity, so the run's end is the
 * same before and after escaping)
 */
static void
append_html_wrap(StringInfo out, const char *s, int len)
{
	bool		run = false;

	for (int i = 0; i < len; i++)
	{
		bool		brk = strchr("_.,(/", s[i]) != NULL && s[i] != '\0';

		if (run && !brk)
			appendStringInfoString(out, "<wbr>");
		run = brk;
		append_html_escape(out, s + i, 1);
	}
	if (run)
		appendStringInfoString(out, "<wbr>");
}

/* regexp_replace(s, pattern, replacement, 'g') in the default collation */
static char *
regex_replace_all(const char *s, int len, const char *pattern, const char *replacement,
				  int *outlen)
{
	text	   *r;

	r = DatumGetTextPP(DirectFunctionCall4Coll(textregexreplace, DEFAULT_COLLATION_OID,
											   PointerGetDatum(cstring_to_text_with_len(s, len)),
											   CStringGetTextDatum(pattern),
											   CStringGetTextDatum(replacement),
											   CStringGetTextDatum("g")));
	*outlen = VARSIZE_ANY_EXHDR(r);
	return pnstrdup(VARDATA_ANY(r), *outlen);
}

/*
 * md_escape(s): fold; "\", "&" and "<" escaped; an underscore between two
 * letters or digits kept, the markdown punctuation `*_[]#|~ escaped.
 */
static void
append_md_escape(StringInfo out, const char *s, int len)
{
	StringInfoData f;
	StringInfoData b;
	char	   *m;
	int			mlen;

	initStringInfo(&f);
	append_fold(&f, s, len);
	initStringInfo(&b);
	for (int i = 0; i < f.len; i++)
	{
		if (f.data[i] == '\\')
			appendStringInfoString(&b, "\\\\");
		else if (f.data[i] == '&')
			appendStringInfoString(&b, "&amp;");
		else if (f.data[i] == '<')
			appendStringInfoString(&b, "&lt;");
		else
			appendStringInfoChar(&b, f.data[i]);
	}
	/* an underscore inside a word marked (\x01: fold left none) */
	if (memchr(b.data, '_', b.len) == NULL)
	{
		m = b.data;
		mlen = b.len;
	}
	else if (is_ascii(b.data, b.len))
	{
		m = b.data;
		mlen = b.len;
		for (int i = 1; i + 1 < mlen; i++)
			if (m[i] == '_' && isalnum((unsigned char) m[i - 1]) && isalnum((unsigned char) m[i + 1]))
				m[i] = '\x01';
	}
	else
		m = regex_replace_all(b.data, b.len, "([[:alnum:]])_(?=[[:alnum:]])", "\\1\x01", &mlen);
	for (int i = 0; i < mlen; i++)
	{
		if (m[i] == '\x01')
			appendStringInfoChar(out, '_');
		else
		{
			if (strchr("`*_[]#|~", m[i]) != NULL && m[i] != '\0')
				appendStringInfoChar(out, '\\');
			appendStringInfoChar(out, m[i]);
		}
	}
}

/*
 * sql_start(q, n): q folded, white space runs one space, trimmed; longer
 * than n characters: its first n - 1, trimmed, and "..."
 */
static char *
sql_start(const char *q, int qlen, int n, int *outlen)
{
	int			flen;
	char	   *f = fold(q, qlen, &flen);
	char	   *g;
	int			glen;
	int			a;
	int			z;
	StringInfoData out;

	if (is_ascii(f, flen))
	{
		/* after fold the only ASCII white space left is the space */
		g = palloc(flen + 1);
		glen = 0;
		for (int i = 0; i < flen; i++)
		{
			if (f[i] == ' ' && glen > 0 && g[glen - 1] == ' ')
				continue;
			g[glen++] = f[i];
		}
		g[glen] = '\0';
	}
	else
		g = regex_replace_all(f, flen, "\\s+", " ", &glen);
	a = 0;
	z = glen;
	while (a < z && g[a] == ' ')
		a++;
	while (z > a && g[z - 1] == ' ')
		z--;
	initStringInfo(&out);
	if (char_len(g + a, z - a) > n)
	{
		/* left(s, n - 1): below 0, all but the last 1 - n characters */
		int			k = n - 1 >= 0 ? n - 1 : Max(0, char_len(g + a, z - a) + n - 1);
		int			keep = k > 0 ? pg_mbcharcliplen(g + a, z - a, k) : 0;

		while (keep > 0 && g[a + keep - 1] == ' ')
			keep--;
		appendBinaryStringInfo(&out, g + a, keep);
		appendStringInfoString(&out, "...");
	}
	else
		appendBinaryStringInfo(&out, g + a, z - a);
	*outlen = out.len;
	return out.data;
}

/* ---------------------------------------------------------------- */
/* jsonb */

/* v #>> '{}' (and ->>): NULL for a JSON null */
static char *
jv_text(JsonbValue *v, int *len)
{
	char	   *s;

	switch (v->type)
	{
		case jbvNull:
			return NULL;
		case jbvString:
			*len = v->val.string.len;
			return v->val.string.val;
		case jbvNumeric:
			s = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v->val.numeric)));
			*len = strlen(s);
			return s;
		case jbvBool:
			s = v->val.boolean ? "true" : "false";
			*len = strlen(s);
			return s;
		case jbvBinary:
			s = JsonbToCString(NULL, v->val.binary.data, v->val.binary.len);
			*len = strlen(s);
			return s;
		default:
			elog(ERROR, "unexpected jsonb value type %d", (int) v->type);
	}
	return NULL;				/* keep compiler quiet */
}

/* obj->key: false where obj is not an object or has no such key */
static bool
jb_get(JsonbContainer *obj, const char *key, int keylen, JsonbValue *out)
{
	JsonbValue *v;

	if (obj == NULL || !JsonContainerIsObject(obj))
		return false;
	v = getKeyJsonValueFromContainer(obj, key, keylen, out);
	return v != NULL;
}

/* obj->>key */
static char *
jb_get_text(JsonbContainer *obj, const char *key, int *len)
{
	JsonbValue	v;

	if (!jb_get(obj, key, strlen(key), &v))
		return NULL;
	return jv_text(&v, len);
}

/* the container of an array member of sec (NULL: absent or SQL NULL) */
static JsonbContainer *
jb_get_array(JsonbContainer *sec, const char *key)
{
	JsonbValue	v;

	if (!jb_get(sec, key, strlen(key), &v))
		return NULL;
	if (v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("section member \"%s\" is not an array", key),
				 errhint("A section's columns, labels, right, worse_up and rows are jsonb arrays.")));
	return v.val.binary.data;
}

/* the texts of an array's elements (NULL for a JSON null) */
static char **
jb_texts(JsonbContainer *arr, int *n)
{
	char	  **out;

	*n = arr == NULL ? 0 : JsonContainerSize(arr);
	out = palloc0(sizeof(char *) * (*n + 1));
	for (int i = 0; i < *n; i++)
	{
		JsonbValue *v = getIthJsonbValueFromContainer(arr, i);
		int			len;
		char	   *s = jv_text(v, &len);

		out[i] = s == NULL ? NULL : pnstrdup(s, len);
	}
	return out;
}

static bool
in_texts(char **list, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (list[i] != NULL && strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* ---------------------------------------------------------------- */
/* the helpers called by name */

/*
 * The SQL helpers render_section calls, looked up by their qualified names
 * (never through search_path) once per calling expression: kept in its
 * FmgrInfo's fn_extra, so that an SQL function's plan is made once per
 * report, not once per column.
 */
typedef enum DataFunc
{
	DF_COL_LABEL,
	DF_SLUG,
	DF_FMT_DURATION,
	DF_COUNT
} DataFunc;

static const struct
{
	const char *name;
	Oid			argtype;
	Oid			collation;
}			data_funcs[DF_COUNT] = {
	{"col_label", TEXTOID, DEFAULT_COLLATION_OID},
	{"slug", TEXTOID, DEFAULT_COLLATION_OID},
	{"fmt_duration", NUMERICOID, InvalidOid},
};

typedef struct RenderCache
{
	bool		known[DF_COUNT];
	FmgrInfo	fn[DF_COUNT];
} RenderCache;

static Datum
call_data_func(FmgrInfo *flinfo, DataFunc f, Datum arg)
{
	RenderCache *c = (RenderCache *) flinfo->fn_extra;

	if (c == NULL)
		flinfo->fn_extra = c = MemoryContextAllocZero(flinfo->fn_mcxt, sizeof(RenderCache));
	if (!c->known[f])
	{
		Oid			argtype = data_funcs[f].argtype;
		Oid			fn;

		fn = LookupFuncName(list_make2(makeString(FPERF_DATA_SCHEMA),
									   makeString(pstrdup(data_funcs[f].name))),
							1, &argtype, false);
		fmgr_info_cxt(fn, &c->fn[f], flinfo->fn_mcxt);
		c->known[f] = true;
	}
	return FunctionCall1Coll(&c->fn[f], data_funcs[f].collation, arg);
}

static char *
call_text_func(FmgrInfo *flinfo, DataFunc f, const char *s, int *len)
{
	text	   *r = DatumGetTextPP(call_data_func(flinfo, f, PointerGetDatum(cstring_to_text(s))));

	*len = VARSIZE_ANY_EXHDR(r);
	return pnstrdup(VARDATA_ANY(r), *len);
}

/* ---------------------------------------------------------------- */
/* cells */

static bool
ends_with(const char *s, const char *suf)
{
	size_t		n = strlen(s);
	size_t		m = strlen(suf);

	return n >= m && memcmp(s + n - m, suf, m) == 0;
}

static bool
starts_with(const char *s, const char *pre)
{
	return strncmp(s, pre, strlen(pre)) == 0;
}

/* col_kind(col): the CASE of sql/parts/120_rendering.sql, in its order */
static ColKind
col_kind(const char *c)
{
	if (c == NULL)
		return CK_COUNT;
	if (strcmp(c, "query") == 0)
		return CK_QUERY;
	if (strcmp(c, "rank") == 0 || strcmp(c, "queryid") == 0)
		return CK_ID;
	if (strcmp(c, "duration_s") == 0)
		return CK_DURATION;
	if (ends_with(c, "delta_pct") || strcmp(c, "mean_change_pct") == 0 || strcmp(c, "Delta, %") == 0)
		return CK_DELTA_PCT;
	if (ends_with(c, "delta_ms") || strcmp(c, "delta") == 0)
		return CK_DELTA;
	if (strstr(c, "pct") != NULL || strstr(c, "ratio") != NULL)
		return CK_PCT;
	if (strstr(c, "bytes_per_s") != NULL)
		return CK_BYTES_S;
	if (strstr(c, "bytes") != NULL || starts_with(c, "size") || starts_with(c, "growth")
		|| starts_with(c, "db_size"))
		return CK_BYTES;
	if (ends_with(c, "_at") || strcmp(c, "begin") == 0 || strcmp(c, "end") == 0)
		return CK_TIME;
	if (ends_with(c, "_ms") || strstr(c, "_ms_") != NULL || strcmp(c, "ms") == 0)
		return CK_MS;
	if (strcmp(c, "aas") == 0 || strcmp(c, "avg") == 0 || strcmp(c, "load") == 0
		|| strcmp(c, "db_load_avg") == 0 || strcmp(c, "connections_avg") == 0
		|| starts_with(c, "aas_") || starts_with(c, "avg_") || ends_with(c, "_avg")
		|| strstr(c, "per_s") != NULL || strstr(c, "seconds") != NULL)
		return CK_MEASURE;
	return CK_COUNT;
}

static bool
num_gt0(Datum n)
{
	return DatumGetBool(DirectFunctionCall2(numeric_gt, n, NumericGetDatum(int64_to_numeric(0))));
}

static void
append_text(StringInfo out, text *t)
{
	appendBinaryStringInfo(out, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
}

/* fmt_value(v, kind) */
static void
append_fmt_value(StringInfo out, JsonbValue *v, ColKind kind, FmgrInfo *flinfo)
{
	Datum		n;
	char	   *s;
	int			len;

	if (v == NULL || v->type == jbvNull)
		return;
	if (v->type == jbvString && kind == CK_TIME)
	{
		Datum		ts = DirectFunctionCall3(timestamptz_in,
											 CStringGetDatum(pnstrdup(v->val.string.val, v->val.string.len)),
											 ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1));

		append_text(out, DatumGetTextPP(DirectFunctionCall2Coll(timestamptz_to_char, DEFAULT_COLLATION_OID, ts,
																CStringGetTextDatum("YYYY-MM-DD HH24:MI:SS TZ"))));
		return;
	}
	if (v->type != jbvNumeric || kind == CK_ID)
	{
		s = jv_text(v, &len);
		appendBinaryStringInfo(out, s, len);
		return;
	}
	n = NumericGetDatum(v->val.numeric);
	switch (kind)
	{
		case CK_COUNT:
			if (DatumGetBool(DirectFunctionCall2(numeric_eq, n,
												 DirectFunctionCall2(numeric_trunc, n, Int32GetDatum(0)))))
				append_text(out, fperf_fmt_num(n, 0));
			else
				append_text(out, fperf_fmt_sig(n));
			break;
		case CK_DELTA_PCT:
			if (num_gt0(n))
				appendStringInfoChar(out, '+');
			append_text(out, fperf_fmt_num(n, 1));
			appendStringInfoChar(out, '%');
			break;
		case CK_PCT:
			append_text(out, fperf_fmt_num(n, 1));
			break;
		case CK_DELTA:
			if (num_gt0(n))
				appendStringInfoChar(out, '+');
			append_text(out, fperf_fmt_sig(n));
			break;
		case CK_BYTES:
			append_text(out, fperf_fmt_bytes(n));
			break;
		case CK_BYTES_S:
			append_text(out, fperf_fmt_bytes(n));
			appendStringInfoString(out, "/s");
			break;
		case CK_DURATION:
			append_text(out, DatumGetTextPP(call_data_func(flinfo, DF_FMT_DURATION, n)));
			break;
		default:
			append_text(out, fperf_fmt_sig(n));
	}
}

/* the dimensions whose rows could have a module (a key) and have none */
static const char *const module_dims[] = {"module", "role", "statement", "statement_wait_event",
"tenant_module", "application_name", "attribution", NULL};
static const char *const key_dims[] = {"tenant", "module", "tenant_module", "role",
"application_name", "attribution", NULL};

static bool
in_list(const char *s, int len, const char *const *list)
{
	if (s == NULL)
		return false;
	for (int i = 0; list[i] != NULL; i++)
		if (streq(s, len, list[i]))
			return true;
	return false;
}

/* r->>'queryid' = '0': a sampled session whose statement had no query id */
static bool
row_queryid_zero(JsonbContainer *row)
{
	int			len = 0;
	char	   *qid = jb_get_text(row, "queryid", &len);

	return qid != NULL && streq(qid, len, "0");
}

/*
 * Many columns times many (empty) rows of a small jsonb: the cells' count
 * in Size, never an int that can wrap, and within what can be allocated
 */
static void
check_cells(int nrows, int nc)
{
	if ((Size) nrows * (Size) nc > MaxAllocSize / sizeof(Cell))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("section has too many cells: %d rows of %d columns", nrows, nc),
				 errhint("A section is one table of a report: split its rows or its columns over several.")));
}

/*
 * The cells of rows [from, to): their texts, the columns' widths and which
 * are numbers.  stripped: the rows as jsonb_strip_nulls left them (a key
 * whose value is null is absent).
 */
static Cell *
section_cells(Section *s, int from, int to, bool stripped, JsonbContainer *qmap,
			  int *w, bool *num)
{
	int			nc = s->nc;
	Cell	   *cells;
	bool	   *seen = palloc0(sizeof(bool) * nc);
	StringInfoData b;
	StringInfoData fv;			/* a value's text before fold, reused */

	check_cells(to - from, nc);
	initStringInfo(&fv);
	cells = palloc0(sizeof(Cell) * Max(1, (Size) (to - from) * (Size) nc));

	initStringInfo(&b);
	for (int i = 0; i < nc; i++)
	{
		w[i] = char_len(s->labels[i], strlen(s->labels[i]));
		num[i] = !(s->kinds[i] == CK_QUERY || s->kinds[i] == CK_TIME);
	}
	for (int r = from; r < to; r++)
	{
		JsonbValue *rv = getIthJsonbValueFromContainer(s->rows, r);
		JsonbContainer *row = (rv->type == jbvBinary && JsonContainerIsObject(rv->val.binary.data))
			? rv->val.binary.data : NULL;
		JsonbValue	dv;
		bool		has_dim = jb_get(row, "dimension", 9, &dv) && !(stripped && dv.type == jbvNull);
		int			dlen = 0;
		char	   *dim = has_dim ? jv_text(&dv, &dlen) : NULL;

		CHECK_FOR_INTERRUPTS();

		for (int i = 0; i < nc; i++)
		{
			Cell	   *cell = &cells[(r - from) * nc + i];
			bool		isnull;
			const char *col = s->cols[i];

			cell->present = jb_get(row, col, strlen(col), &cell->v);
			if (stripped && cell->present && cell->v.type == jbvNull)
				cell->present = false;
			isnull = !cell->present || cell->v.type == jbvNull;
			resetStringInfo(&b);
			if (s->kinds[i] == CK_QUERY && isnull && row_queryid_zero(row))
				appendStringInfoString(&b, "(no query id: a statement being parsed, or one without)");
			else if (s->kinds[i] == CK_QUERY)
			{
				int			tlen = 0;
				char	   *t = isnull ? NULL : jv_text(&cell->v, &tlen);
				int			qnlen = 0;
				char	   *qn = t == NULL ? NULL : jb_get_text(qmap, pnstrdup(t, tlen), &qnlen);
				int			slen;
				char	   *st;

				if (qn != NULL)
				{
					appendStringInfoString(&b, "[Q");
					appendBinaryStringInfo(&b, qn, qnlen);
					appendStringInfoString(&b, "] ");
				}
				st = sql_start(t, tlen, s->fmt == RF_HTML ? 160 : 60, &slen);
				appendBinaryStringInfo(&b, st, slen);
			}
			else if (isnull
					 && ((strcmp(col, "module") == 0 && (!has_dim || in_list(dim, dlen, module_dims)))
						 || (strcmp(col, "key") == 0 && in_list(dim, dlen, key_dims))))
				appendStringInfoString(&b, "(unattributed)");
			else if (isnull && strcmp(col, "key") == 0 && dim != NULL
					 && (streq(dim, dlen, "database") || streq(dim, dlen, "state")))
				appendStringInfoString(&b, streq(dim, dlen, "database") ? "(no database)" : "(connecting)");
			else
			{
				resetStringInfo(&fv);
				append_fmt_value(&fv, cell->present ? &cell->v : NULL, s->kinds[i], s->flinfo);
				append_fold(&b, fv.data, fv.len);
			}
			cell->c = pnstrdup(b.data, b.len);
			cell->clen = b.len;
			w[i] = Max(w[i], char_len(cell->c, cell->clen));
			if (cell->present && cell->v.type != jbvNumeric && cell->v.type != jbvNull && !s->right[i])
				num[i] = false;
			else if ((cell->present && cell->v.type == jbvNumeric) || s->right[i])
				seen[i] = true;
		}
	}
	for (int i = 0; i < nc; i++)
		num[i] = num[i] && seen[i];
	return cells;
}

/* btrim(s) (spaces) */
static void
append_btrim(StringInfo out, const char *s)
{
	int			a = 0;
	int			z = strlen(s);

	while (a < z && s[a] == ' ')
		a++;
	while (z > a && s[z - 1] == ' ')
		z--;
	appendBinaryStringInfo(out, s + a, z - a);
}

/*
 * The HTML table of rows [from, to), from "<div class="tw">" (or the fold's
 * "<details>") to "</tbody></table></div>" (and "</details>").
 */
static void
html_table(StringInfo out, Section *s, int from, int to, Cell *cells, bool *num,
		   JsonbContainer *qmap, bool foldit)
{
	int			nc = s->nc;

	if (foldit)
		appendStringInfo(out, "<details class=\"fold\"><summary>%d rows</summary>", s->nrows);
	appendStringInfoString(out, "<div class=\"tw\"><table");
	if (nc > 12)
		appendStringInfoString(out, " class=\"wide many\"");
	else if (s->has_query || nc > 8)
		appendStringInfoString(out, " class=\"wide\"");
	appendStringInfoString(out, "><thead><tr>");
	for (int i = 0; i < nc; i++)
	{
		appendStringInfoString(out, num[i] ? "<th class=\"n\">" : "<th>");
		append_html_escape(out, s->labels[i], strlen(s->labels[i]));
		appendStringInfoString(out, "</th>");
	}
	appendStringInfoString(out, "</tr></thead>\n<tbody>");
	for (int r = from; r < to; r++)
	{
		appendStringInfoString(out, "\n<tr>");
		for (int i = 0; i < nc; i++)
		{
			Cell	   *cell = &cells[(r - from) * nc + i];
			const char *col = s->cols[i];
			int			tlen = 0;
			char	   *t = NULL;

			/* r->>col, where it is shown as it is */
			if (cell->present && (s->kinds[i] == CK_QUERY || strcmp(col, "plan") == 0))
				t = jv_text(&cell->v, &tlen);
			if (s->kinds[i] == CK_QUERY && t != NULL)
			{
				int			qnlen = 0;
				char	   *qn = jb_get_text(qmap, pnstrdup(t, tlen), &qnlen);
				int			flen;
				char	   *f = fold(t, tlen, &flen);

				appendStringInfoString(out, "<td class=\"q\">");
				if (qn != NULL)
				{
					appendStringInfoString(out, "<a href=\"#q");
					appendBinaryStringInfo(out, qn, qnlen);
					appendStringInfoString(out, "\">Q");
					appendBinaryStringInfo(out, qn, qnlen);
					appendStringInfoString(out, "</a> ");
				}
				if (char_len(f, flen) > 160)
				{
					int			slen;
					char	   *st = sql_start(t, tlen, 160, &slen);

					appendStringInfoString(out, "<details><summary>");
					append_html_wrap(out, st, slen);
					appendStringInfoString(out, "</summary><code>");
					append_html_wrap(out, t, tlen);
					appendStringInfoString(out, "</code></details>");
				}
				else
				{
					appendStringInfoString(out, "<code>");
					append_html_wrap(out, f, flen);
					appendStringInfoString(out, "</code>");
				}
				appendStringInfoString(out, "</td>");
			}
			else if (strcmp(col, "plan") == 0 && streq(cell->c, cell->clen, "changed"))
				appendStringInfoString(out, "<td class=\"plan\" title=\"the slowest plan has another shape\">changed</td>");
			else if (strcmp(col, "plan") == 0 && char_len(cell->c, cell->clen) > 40)
			{
				appendStringInfoString(out, "<td><details><summary>plan</summary><pre>");
				if (t != NULL)
					append_html_escape(out, t, tlen);
				appendStringInfoString(out, "</pre></details></td>");
			}
			else
			{
				StringInfoData cls;

				initStringInfo(&cls);
				if (num[i])
					appendStringInfoChar(&cls, 'n');
				if (s->worse[i] && cell->present && cell->v.type == jbvNumeric)
				{
					Datum		n = NumericGetDatum(cell->v.val.numeric);

					if (DatumGetBool(DirectFunctionCall2(numeric_ge, n, NumericGetDatum(int64_to_numeric(10)))))
						appendStringInfoString(&cls, " worse");
					else if (DatumGetBool(DirectFunctionCall2(numeric_le, n, NumericGetDatum(int64_to_numeric(-10)))))
						appendStringInfoString(&cls, " better");
				}
				else if (strcmp(col, "severity") == 0)
				{
					appendStringInfoString(&cls, " sev-");
					appendBinaryStringInfo(&cls, cell->c, cell->clen);
				}
				else if (strcmp(col, "status") == 0
						 && (streq(cell->c, cell->clen, "new") || streq(cell->c, cell->clen, "gone")))
				{
					appendStringInfoString(&cls, " st-");
					appendBinaryStringInfo(&cls, cell->c, cell->clen);
				}
				{
					StringInfoData tc;

					initStringInfo(&tc);
					append_btrim(&tc, cls.data);
					if (tc.len > 0)
					{
						appendStringInfoString(out, "<td class=\"");
						appendBinaryStringInfo(out, tc.data, tc.len);
						appendStringInfoString(out, "\">");
					}
					else
						appendStringInfoString(out, "<td>");
				}
				if (num[i] || char_len(cell->c, cell->clen) <= 20)
					append_html_escape(out, cell->c, cell->clen);
				else
					append_html_wrap(out, cell->c, cell->clen);
				appendStringInfoString(out, "</td>");
			}
		}
		appendStringInfoString(out, "</tr>");
	}
	appendStringInfoString(out, "\n</tbody></table></div>");
	if (foldit)
		appendStringInfoString(out, "</details>");
}

/* lpad/rpad to w characters with spaces (s is never longer) */
static void
append_pad(StringInfo out, const char *s, int len, int w, bool left)
{
	int			n = w - char_len(s, len);

	if (left)
		for (int i = 0; i < n; i++)
			appendStringInfoChar(out, ' ');
	appendBinaryStringInfo(out, s, len);
	if (!left)
		for (int i = 0; i < n; i++)
			appendStringInfoChar(out, ' ');
}

/* append line (from start) with its trailing spaces removed */
static void
rtrim_from(StringInfo out, int start)
{
	while (out->len > start && out->data[out->len - 1] == ' ')
		out->len--;
	out->data[out->len] = '\0';
}

/* the bool of a text as ::boolean reads it (NULL: false) */
static bool
text_bool(const char *s, int len)
{
	bool		b;

	if (s == NULL)
		return false;
	if (!parse_bool_with_len(s, len, &b))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
				 errmsg("invalid input syntax for type %s: \"%s\"", "boolean", pnstrdup(s, len))));
	return b;
}

/* the title and the note: text underlined, markdown "###", html <section><h2> */
static void
section_head(StringInfo out, Section *s, JsonbContainer *sec, const char *note, int nlen)
{
	int			tlen = 0;
	char	   *title = jb_get_text(sec, "title", &tlen);
	int			ftlen;
	char	   *ft;

	if (title == NULL)
		title = "";
	ft = fold(title, tlen, &ftlen);
	if (s->fmt == RF_MARKDOWN)
	{
		appendStringInfoString(out, "### ");
		append_md_escape(out, title, tlen);
		appendStringInfoString(out, "\n\n");
	}
	else if (s->fmt == RF_HTML)
	{
		int			len;
		char	   *id = jb_get_text(sec, "id", &len);

		if (id == NULL)
			id = call_text_func(s->flinfo, DF_SLUG, pnstrdup(title, tlen), &len);
		appendStringInfoString(out, "<section id=\"");
		appendBinaryStringInfo(out, id, len);
		appendStringInfoString(out, "\"><h2>");
		append_html_escape(out, ft, ftlen);
		appendStringInfoString(out, "</h2>\n");
	}
	else
	{
		appendBinaryStringInfo(out, ft, ftlen);
		appendStringInfoChar(out, '\n');
		for (int i = char_len(ft, ftlen); i > 0; i--)
			appendStringInfoChar(out, '=');
		appendStringInfoChar(out, '\n');
	}
	if (note != NULL)
	{
		int			fnlen;
		char	   *fn = fold(note, nlen, &fnlen);

		if (s->fmt == RF_HTML)
		{
			appendStringInfoString(out, "<p class=\"note\">");
			append_html_escape(out, fn, fnlen);
			appendStringInfoString(out, "</p>\n");
		}
		else if (s->fmt == RF_MARKDOWN)
		{
			appendStringInfoChar(out, '_');
			append_md_escape(out, note, nlen);
			appendStringInfoString(out, "_\n\n");
		}
		else
		{
			appendStringInfoChar(out, '(');
			appendBinaryStringInfo(out, fn, fnlen);
			appendStringInfoString(out, ")\n");
		}
	}
}

/* the columns: names, kinds, labels, alignment, worse_up */
static void
section_columns(Section *s, JsonbContainer *sec)
{
	int			nlabels;
	int			nright;
	int			nworse;
	char	  **labels = jb_texts(jb_get_array(sec, "labels"), &nlabels);
	char	  **right = jb_texts(jb_get_array(sec, "right"), &nright);
	char	  **worse = jb_texts(jb_get_array(sec, "worse_up"), &nworse);

	s->kinds = palloc(sizeof(ColKind) * s->nc);
	s->labels = palloc(sizeof(char *) * s->nc);
	s->right = palloc(sizeof(bool) * s->nc);
	s->worse = palloc(sizeof(bool) * s->nc);
	for (int i = 0; i < s->nc; i++)
	{
		const char *l = i < nlabels ? labels[i] : NULL;
		int			llen;

		/* (right and worse_up are searched per column) */
		CHECK_FOR_INTERRUPTS();
		s->kinds[i] = col_kind(s->cols[i]);
		if (l == NULL)
			l = call_text_func(s->flinfo, DF_COL_LABEL, s->cols[i], &llen);
		else
			llen = strlen(l);
		s->labels[i] = fold(l, llen, &llen);
		s->right[i] = in_texts(right, nright, s->cols[i]);
		s->worse[i] = in_texts(worse, nworse, s->cols[i]);
		if (strcmp(s->cols[i], "query") == 0)
			s->has_query = true;
	}
}

/*
 * html: a long two-column table (the summary) in three side by side, each
 * third rendered as a section of its own (its rows without their null
 * keys, no worse_up, no statement numbers)
 */
static void
html_split(StringInfo out, Section *s)
{
	int			k = (s->nrows + 2) / 3;

	for (int i = 0; i < s->nc; i++)
		s->worse[i] = false;
	appendStringInfoString(out, "<div class=\"kvs\">");
	for (int g = 0; g < 3; g++)
	{
		int			from = g * k;
		int			to = Min(s->nrows, (g + 1) * k);
		int		   *gw = palloc(sizeof(int) * s->nc);
		bool	   *gnum = palloc(sizeof(bool) * s->nc);
		Cell	   *gcells;

		if (from >= to)
			continue;
		gcells = section_cells(s, from, to, true, NULL, gw, gnum);
		html_table(out, s, from, to, gcells, gnum, NULL, false);
		appendStringInfoChar(out, '\n');
	}
	appendStringInfoString(out, "</div>\n</section>\n");
}

/* markdown: a pipe table */
static void
markdown_table(StringInfo out, Section *s, Cell *cells, bool *num)
{
	appendStringInfoChar(out, '|');
	for (int i = 0; i < s->nc; i++)
	{
		appendStringInfoChar(out, ' ');
		append_md_escape(out, s->labels[i], strlen(s->labels[i]));
		appendStringInfoString(out, " |");
	}
	appendStringInfoString(out, "\n|");
	for (int i = 0; i < s->nc; i++)
		appendStringInfoString(out, num[i] ? " ---: |" : " :--- |");
	for (int r = 0; r < s->nrows; r++)
	{
		appendStringInfoString(out, "\n|");
		for (int i = 0; i < s->nc; i++)
		{
			Cell	   *cell = &cells[r * s->nc + i];

			appendStringInfoChar(out, ' ');
			if (strcmp(s->cols[i], "plan") == 0 && streq(cell->c, cell->clen, "changed"))
				appendStringInfoString(out, "**changed**");
			else
				append_md_escape(out, cell->c, cell->clen);
			appendStringInfoString(out, " |");
		}
	}
	appendStringInfoString(out, "\n\n");
}

/* text: aligned columns, as psql prints them */
static void
text_table(StringInfo out, Section *s, Cell *cells, int *w, bool *num)
{
	int			start = out->len;

	for (int i = 0; i < s->nc; i++)
	{
		appendStringInfoString(out, i > 0 ? " | " : " ");
		append_pad(out, s->labels[i], strlen(s->labels[i]), w[i], num[i]);
	}
	rtrim_from(out, start);
	appendStringInfoChar(out, '\n');
	for (int i = 0; i < s->nc; i++)
	{
		appendStringInfoString(out, i > 0 ? "-+-" : "-");
		for (int j = 0; j < w[i]; j++)
			appendStringInfoChar(out, '-');
	}
	for (int r = 0; r < s->nrows; r++)
	{
		appendStringInfoChar(out, '\n');
		start = out->len;
		for (int i = 0; i < s->nc; i++)
		{
			Cell	   *cell = &cells[r * s->nc + i];

			appendStringInfoString(out, i > 0 ? " | " : " ");
			append_pad(out, cell->c, cell->clen, w[i], num[i]);
		}
		rtrim_from(out, start);
	}
	appendStringInfoString(out, "\n\n");
}

/* render_section(fmt, sec, qmap) */
Datum
folio_perf_render_section(PG_FUNCTION_ARGS)
{
	Jsonb	   *secj = PG_ARGISNULL(1) ? NULL : PG_GETARG_JSONB_P(1);
	Jsonb	   *qmapj = PG_ARGISNULL(2) ? NULL : PG_GETARG_JSONB_P(2);
	JsonbContainer *sec = secj == NULL ? NULL : &secj->root;
	JsonbContainer *qmap = qmapj == NULL ? NULL : &qmapj->root;
	Section		s;
	StringInfoData out;
	char	   *note;
	int			nlen = 0;
	int		   *w;
	bool	   *num;
	Cell	   *cells;
	int			len;
	char	   *str;

	memset(&s, 0, sizeof(s));
	s.flinfo = fcinfo->flinfo;
	s.fmt = RF_TEXT;
	if (!PG_ARGISNULL(0))
	{
		text	   *f = PG_GETARG_TEXT_PP(0);

		if (streq(VARDATA_ANY(f), VARSIZE_ANY_EXHDR(f), "markdown"))
			s.fmt = RF_MARKDOWN;
		else if (streq(VARDATA_ANY(f), VARSIZE_ANY_EXHDR(f), "html"))
			s.fmt = RF_HTML;
	}
	s.cols = jb_texts(jb_get_array(sec, "columns"), &s.nc);
	for (int i = 0; i < s.nc; i++)
		if (s.cols[i] == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("section column %d has no name", i + 1),
					 errhint("A section's columns are an array of column names.")));
	note = jb_get_text(sec, "note", &nlen);

	initStringInfo(&out);
	section_head(&out, &s, sec, note, nlen);
	s.rows = jb_get_array(sec, "rows");
	s.nrows = s.rows == NULL ? 0 : JsonContainerSize(s.rows);
	if (s.nc == 0 || s.nrows == 0)
	{
		if (note == NULL)
			appendStringInfoString(&out, s.fmt == RF_HTML ? "<p class=\"note\">No rows.</p>\n" : "(no rows)\n");
		appendStringInfoString(&out, s.fmt == RF_HTML ? "</section>\n" : "\n");
		PG_RETURN_TEXT_P(cstring_to_text_with_len(out.data, out.len));
	}
	check_cells(s.nrows, s.nc);
	section_columns(&s, sec);
	w = palloc(sizeof(int) * s.nc);
	num = palloc(sizeof(bool) * s.nc);
	cells = section_cells(&s, 0, s.nrows, false, qmap, w, num);

	if (s.fmt == RF_HTML)
	{
		str = jb_get_text(sec, "split", &len);
		if (s.nc == 2 && text_bool(str, len) && s.nrows > 12)
			html_split(&out, &s);
		else
		{
			str = jb_get_text(sec, "fold", &len);
			html_table(&out, &s, 0, s.nrows, cells, num, qmap, text_bool(str, len));
			appendStringInfoString(&out, "\n</section>\n");
		}
	}
	else if (s.fmt == RF_MARKDOWN)
		markdown_table(&out, &s, cells, num);
	else
		text_table(&out, &s, cells, w, num);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(out.data, out.len));
}

/* ---------------------------------------------------------------- */
/* the helpers as SQL functions (sql/parts/120_rendering.sql) */

PG_FUNCTION_INFO_V1(folio_perf_fold);
PG_FUNCTION_INFO_V1(folio_perf_html_escape);
PG_FUNCTION_INFO_V1(folio_perf_html_wrap);
PG_FUNCTION_INFO_V1(folio_perf_md_escape);
PG_FUNCTION_INFO_V1(folio_perf_sql_start);
PG_FUNCTION_INFO_V1(folio_perf_col_kind);
PG_FUNCTION_INFO_V1(folio_perf_fmt_value);

typedef void (*TextStep) (StringInfo out, const char *s, int len);

/* one text step of a possibly NULL argument (NULL: as '') */
static Datum
text_step(FunctionCallInfo fcinfo, TextStep step)
{
	StringInfoData out;

	initStringInfo(&out);
	if (!PG_ARGISNULL(0))
	{
		text	   *t = PG_GETARG_TEXT_PP(0);

		step(&out, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
	}
	PG_RETURN_TEXT_P(cstring_to_text_with_len(out.data, out.len));
}

/* fold(s): one line ('' for NULL) */
Datum
folio_perf_fold(PG_FUNCTION_ARGS)
{
	return text_step(fcinfo, append_fold);
}

/* html_escape(s) ('' for NULL) */
Datum
folio_perf_html_escape(PG_FUNCTION_ARGS)
{
	return text_step(fcinfo, append_html_escape);
}

/* html_wrap(s) ('' for NULL) */
Datum
folio_perf_html_wrap(PG_FUNCTION_ARGS)
{
	return text_step(fcinfo, append_html_wrap);
}

/* md_escape(s) ('' for NULL) */
Datum
folio_perf_md_escape(PG_FUNCTION_ARGS)
{
	return text_step(fcinfo, append_md_escape);
}

/* sql_start(q, n) ('' for a NULL q; a NULL n cuts nothing) */
Datum
folio_perf_sql_start(PG_FUNCTION_ARGS)
{
	text	   *q = PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0);
	int			len;
	char	   *r;

	r = sql_start(q == NULL ? NULL : VARDATA_ANY(q), q == NULL ? 0 : VARSIZE_ANY_EXHDR(q),
				  PG_ARGISNULL(1) ? INT_MAX : PG_GETARG_INT32(1), &len);
	PG_RETURN_TEXT_P(cstring_to_text_with_len(r, len));
}

static const char *const kind_names[] = {
	[CK_QUERY] = "query",
	[CK_ID] = "id",
	[CK_DURATION] = "duration",
	[CK_DELTA_PCT] = "delta_pct",
	[CK_DELTA] = "delta",
	[CK_PCT] = "pct",
	[CK_BYTES_S] = "bytes_s",
	[CK_BYTES] = "bytes",
	[CK_TIME] = "time",
	[CK_MS] = "ms",
	[CK_MEASURE] = "measure",
	[CK_COUNT] = "count",
};

/* col_kind(col): the kind's name ('count' for NULL) */
Datum
folio_perf_col_kind(PG_FUNCTION_ARGS)
{
	ColKind		k = PG_ARGISNULL(0) ? CK_COUNT : col_kind(text_to_cstring(PG_GETARG_TEXT_PP(0)));

	PG_RETURN_TEXT_P(cstring_to_text(kind_names[k]));
}

/*
 * fmt_value(v, kind): '' for NULL; a kind that is no kind's name (or
 * NULL) formats numbers as measures (three significant digits)
 */
Datum
folio_perf_fmt_value(PG_FUNCTION_ARGS)
{
	ColKind		k = CK_MEASURE;
	StringInfoData out;

	if (!PG_ARGISNULL(1))
	{
		char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(1));

		for (int i = 0; i < lengthof(kind_names); i++)
			if (strcmp(kind_names[i], name) == 0)
				k = (ColKind) i;
	}
	initStringInfo(&out);
	if (!PG_ARGISNULL(0))
	{
		Jsonb	   *j = PG_GETARG_JSONB_P(0);
		JsonbValue	v;

		if (JB_ROOT_IS_SCALAR(j))
		{
			if (!JsonbExtractScalar(&j->root, &v))
				elog(ERROR, "could not read a jsonb scalar");
		}
		else
		{
			v.type = jbvBinary;
			v.val.binary.data = &j->root;
			v.val.binary.len = VARSIZE(j) - VARHDRSZ;
		}
		append_fmt_value(&out, &v, k, fcinfo->flinfo);
	}
	PG_RETURN_TEXT_P(cstring_to_text_with_len(out.data, out.len));
}
