/*-------------------------------------------------------------------------
 *
 * attribution.c
 *		Which tenant and module a statement or a session belongs to: the one
 *		precedence of folio_perf's attribution.
 *
 * Evidence, strongest first (doc/reference.md, "Attribution"):
 *
 *	1. relations		the schemas of the relations and functions the
 *						statement uses, as the parse hook recorded them per
 *						query id (relstore.c): the DML target first, then in
 *						range-table order; the first that is a module schema.
 *	2. role				the role name is a module schema name (RMB logs in
 *						as, or SET ROLEs to, <tenant>_<module>).
 *	3. qualified		the first schema-qualified name in the text whose
 *						qualifier is a module schema.
 *	4. relation_name	the first unqualified relation or function name in
 *						the text that exists in exactly one module's schemas;
 *						the tenant only if in exactly one schema.
 *	5. application_name the module the session's application_name names.
 *
 * Each caller passes what it has: statements (the snapshot, the live
 * statements view) their query id, role and text; sessions (the live
 * activity view, the sampler) the query id of their current or last
 * statement, their role and their application_name, and no text (the
 * sampler does not copy it).  Evidence is consulted in that order and only
 * until one decides, so relation_name's catalog lookups are made only for
 * statements nothing stronger attributed.  Names split by
 * fperf_schema_split() (parse.c), i.e. by folio_perf.schema_pattern when
 * that is set.
 *
 * SQL:
 *	folio_perf_attribute(role, query, application_name, queryid)
 *		-> (tenant, module, attributed_by), this database's evidence
 *	folio_perf_data.attribute(queryids, roles, queries, remote,
 *							  catalog_names, catalog_schemas)
 *		-> (ord, tenant, module, attributed_by) for many statements, of this
 *		database or of a remote target whose catalog facts are given
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/attribution.c
 *
 *-------------------------------------------------------------------------
 */
#include "attribution.h"

#include "access/htup_details.h"
#include "catalog/pg_class.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(folio_perf_attribute);
PG_FUNCTION_INFO_V1(folio_perf_attribute_many);

/* Most distinct unqualified names of one text that relation_name tries. */
#define FPERF_ATTR_MAX_NAMES 32

const char *
fperf_attr_by_name(FPerfAttrBy by)
{
	switch (by)
	{
		case FPERF_BY_RELATIONS:
			return "relations";
		case FPERF_BY_ROLE:
			return "role";
		case FPERF_BY_QUALIFIED:
			return "qualified";
		case FPERF_BY_RELATION_NAME:
			return "relation_name";
		case FPERF_BY_APPLICATION_NAME:
			return "application_name";
		case FPERF_BY_NONE:
			break;
	}
	return NULL;
}

/* Copy a slice into a NAMEDATALEN buffer (slices of names are shorter). */
static void
copy_slice(char *dst, const FPerfSlice *s)
{
	size_t		n = Min(s->len, (size_t) NAMEDATALEN - 1);

	if (n > 0)
		memcpy(dst, s->ptr, n);
	dst[n] = '\0';
}

/* Decide by a schema-like name: true (and *out filled) if it splits. */
static bool
decide_by_name(const char *name, size_t len, FPerfAttrBy by,
			   FPerfAttribution *out)
{
	FPerfSlice	t,
				m;

	if (name == NULL || len == 0 || !fperf_schema_split(name, len, &t, &m))
		return false;
	copy_slice(out->tenant, &t);
	copy_slice(out->module, &m);
	out->by = by;
	return true;
}

/* qualified: the first qualifier that splits */
static bool
qualified_cb(const char *ident, size_t len, bool qualified, void *arg)
{
	FPerfAttribution *out = (FPerfAttribution *) arg;

	if (!qualified)
		return true;
	return !decide_by_name(ident, len, FPERF_BY_QUALIFIED, out);
}

typedef struct NamesState
{
	char	   *names[FPERF_ATTR_MAX_NAMES];
	int			n;
} NamesState;

/* relation_name: collect the distinct unqualified names, in order */
static bool
names_cb(const char *ident, size_t len, bool qualified, void *arg)
{
	NamesState *st = (NamesState *) arg;
	int			i;

	if (qualified || len == 0)
		return true;
	/* a name not valid in the database encoding names no object */
	if (!pg_verifymbstr(ident, (int) len, true))
		return true;
	for (i = 0; i < st->n; i++)
		if (strlen(st->names[i]) == len && memcmp(st->names[i], ident, len) == 0)
			return true;
	st->names[st->n++] = pnstrdup(ident, len);
	return st->n < FPERF_ATTR_MAX_NAMES;
}

/*
 * Does the object name (in the schemas given) belong to exactly one
 * module?  Then fill *out: the tenant only if exactly one schema has it.
 */
static bool
decide_by_schemas(List *schemas, FPerfAttribution *out)
{
	ListCell   *lc;
	const char *first_schema = NULL;
	bool		one_schema = true;
	FPerfSlice	mod = {NULL, 0};
	FPerfSlice	ten = {NULL, 0};

	foreach(lc, schemas)
	{
		const char *nsp = (const char *) lfirst(lc);
		FPerfSlice	t,
					m;

		if (!fperf_schema_split(nsp, strlen(nsp), &t, &m))
			continue;
		if (first_schema == NULL)
		{
			first_schema = nsp;
			mod = m;
			ten = t;
			continue;
		}
		if (m.len != mod.len || memcmp(m.ptr, mod.ptr, m.len) != 0)
			return false;		/* two modules: undecided */
		if (strcmp(first_schema, nsp) != 0)
			one_schema = false;
	}
	if (first_schema == NULL)
		return false;
	copy_slice(out->module, &mod);
	if (one_schema)
		copy_slice(out->tenant, &ten);
	else
		out->tenant[0] = '\0';
	out->by = FPERF_BY_RELATION_NAME;
	return true;
}

void
fperf_attribute(const FPerfAttrEvidence *ev, FPerfAttribution *out)
{
	int			i;

	out->by = FPERF_BY_NONE;
	out->tenant[0] = '\0';
	out->module[0] = '\0';

	/* 1. relations */
	for (i = 0; i < ev->nschemas && i < FPERF_ATTR_MAX_SCHEMAS; i++)
	{
		if (ev->schemas[i] != NULL &&
			decide_by_name(ev->schemas[i], strlen(ev->schemas[i]),
						   FPERF_BY_RELATIONS, out))
			return;
	}

	/* 2. role */
	if (ev->rolname != NULL &&
		decide_by_name(ev->rolname, strlen(ev->rolname), FPERF_BY_ROLE, out))
		return;

	if (ev->query != NULL)
	{
		/* 3. qualified */
		fperf_scan_query(ev->query, ev->query_len, qualified_cb, out,
						 fperf_mbclip);
		if (out->by != FPERF_BY_NONE)
			return;

		/* 4. relation_name */
		if (ev->name_schemas != NULL)
		{
			NamesState	st;

			st.n = 0;
			fperf_scan_query(ev->query, ev->query_len, names_cb, &st,
							 fperf_mbclip);
			for (i = 0; i < st.n; i++)
			{
				if (decide_by_schemas(ev->name_schemas(st.names[i],
													   ev->name_schemas_arg),
									  out))
					return;
			}
		}
	}

	/* 5. application_name */
	if (ev->appname != NULL)
	{
		size_t		n = fperf_appname_module(ev->appname, strlen(ev->appname),
											 out->module, sizeof(out->module));

		if (n > 0)
		{
			out->tenant[0] = '\0';
			out->by = FPERF_BY_APPLICATION_NAME;
			return;
		}
	}
	out->tenant[0] = '\0';
	out->module[0] = '\0';
}

int
fperf_attr_set_relations(FPerfAttrEvidence *ev, Oid dbid, uint64 queryid)
{
	Oid			nsp[FPERF_ATTR_MAX_SCHEMAS + 1];
	int			n;

	ev->nschemas = 0;
	if (dbid != MyDatabaseId || queryid == UINT64CONST(0))
		return 0;
	n = fperf_relstore_lookup(dbid, queryid, nsp, lengthof(nsp));
	return fperf_attr_set_schemas(ev, dbid, nsp, n);
}

int
fperf_attr_set_schemas(FPerfAttrEvidence *ev, Oid dbid, const Oid *nsp, int n)
{
	int			i,
				j;

	ev->nschemas = 0;
	if (dbid != MyDatabaseId)
		return 0;
	for (i = 0; i < n && ev->nschemas < FPERF_ATTR_MAX_SCHEMAS; i++)
	{
		char	   *name;
		bool		dup = false;

		if (!OidIsValid(nsp[i]))
			continue;
		for (j = 0; j < i; j++)
			dup |= (nsp[j] == nsp[i]);
		if (dup)
			continue;
		name = get_namespace_name(nsp[i]);
		if (name != NULL)
			ev->schemas[ev->nschemas++] = name;
	}
	return ev->nschemas;
}

/* Append the name of schema nsp to *schemas unless its oid was seen. */
static void
add_schema(List **schemas, List **seen, Oid nsp)
{
	char	   *name;

	if (list_member_oid(*seen, nsp))
		return;
	*seen = lappend_oid(*seen, nsp);
	name = get_namespace_name(nsp);
	if (name != NULL)
		*schemas = lappend(*schemas, name);
}

List *
fperf_attr_catalog_schemas(const char *name, void *arg)
{
	List	   *schemas = NIL;
	List	   *seen = NIL;
	CatCList   *cl;
	int			i;

	(void) arg;
	if (name == NULL || name[0] == '\0' || strlen(name) >= NAMEDATALEN)
		return NIL;

	cl = SearchSysCacheList1(RELNAMENSP, CStringGetDatum(name));
	for (i = 0; i < cl->n_members; i++)
	{
		Form_pg_class c = (Form_pg_class) GETSTRUCT(&cl->members[i]->tuple);

		if (c->relkind == RELKIND_RELATION || c->relkind == RELKIND_PARTITIONED_TABLE ||
			c->relkind == RELKIND_VIEW || c->relkind == RELKIND_MATVIEW ||
			c->relkind == RELKIND_FOREIGN_TABLE)
			add_schema(&schemas, &seen, c->relnamespace);
	}
	ReleaseSysCacheList(cl);

	cl = SearchSysCacheList1(PROCNAMEARGSNSP, CStringGetDatum(name));
	for (i = 0; i < cl->n_members; i++)
	{
		Form_pg_proc p = (Form_pg_proc) GETSTRUCT(&cl->members[i]->tuple);

		add_schema(&schemas, &seen, p->pronamespace);
	}
	ReleaseSysCacheList(cl);
	list_free(seen);
	return schemas;
}

/* --- SQL ---------------------------------------------------------------- */

/* Emit (tenant, module, attributed_by), with ord first when with_ord. */
static void
put_row(ReturnSetInfo *rsinfo, bool with_ord, int64 ord,
		const FPerfAttribution *a)
{
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};
	int			k = 0;
	const char *by = fperf_attr_by_name(a->by);

	if (with_ord)
		values[k++] = Int64GetDatum(ord);
	nulls[k] = (a->tenant[0] == '\0');
	values[k] = nulls[k] ? (Datum) 0 : CStringGetTextDatum(a->tenant);
	k++;
	nulls[k] = (a->module[0] == '\0');
	values[k] = nulls[k] ? (Datum) 0 : CStringGetTextDatum(a->module);
	k++;
	nulls[k] = (by == NULL);
	values[k] = nulls[k] ? (Datum) 0 : CStringGetTextDatum(by);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/* A text argument as a palloc'd C string (NULL for NULL). */
static char *
arg_cstring(FunctionCallInfo fcinfo, int n, size_t *len)
{
	text	   *t;

	if (PG_ARGISNULL(n))
		return NULL;
	t = PG_GETARG_TEXT_PP(n);
	if (len)
		*len = VARSIZE_ANY_EXHDR(t);
	return text_to_cstring(t);
}

/*
 * folio_perf_attribute(role text, query text, application_name text,
 *						queryid bigint) RETURNS TABLE(tenant, module,
 *						attributed_by)
 *
 * Always exactly one row.  queryid's relations come from this database's
 * entry in the relation store.
 */
Datum
folio_perf_attribute(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	FPerfAttrEvidence ev;
	FPerfAttribution a;

	fperf_init_srf(fcinfo);
	if (rsinfo->setDesc->natts != 3)
		elog(ERROR, "incorrect number of output arguments");

	memset(&ev, 0, sizeof(ev));
	ev.rolname = arg_cstring(fcinfo, 0, NULL);
	ev.query = arg_cstring(fcinfo, 1, &ev.query_len);
	ev.appname = arg_cstring(fcinfo, 2, NULL);
	if (!PG_ARGISNULL(3))
		(void) fperf_attr_set_relations(&ev, MyDatabaseId,
										(uint64) PG_GETARG_INT64(3));
	if (ev.query != NULL)
		ev.name_schemas = fperf_attr_catalog_schemas;
	fperf_attribute(&ev, &a);
	put_row(rsinfo, false, 0, &a);
	PG_RETURN_VOID();
}

/* A remote target's catalog facts: object name -> schema names. */
typedef struct RemoteName
{
	char		name[NAMEDATALEN];	/* hash key, zero-padded */
	List	   *schemas;
} RemoteName;

static List *
remote_schemas(const char *name, void *arg)
{
	HTAB	   *h = (HTAB *) arg;
	char		key[NAMEDATALEN];
	RemoteName *r;

	if (h == NULL || strlen(name) >= NAMEDATALEN)
		return NIL;
	memset(key, 0, sizeof(key));
	strlcpy(key, name, sizeof(key));
	r = hash_search(h, key, HASH_FIND, NULL);
	return r ? r->schemas : NIL;
}

/* Deconstruct a one-dimensional text[] (NULL array: nelems 0, elems NULL). */
static int
text_array(FunctionCallInfo fcinfo, int n, Datum **elems, bool **nulls)
{
	int			count = 0;

	*elems = NULL;
	*nulls = NULL;
	if (PG_ARGISNULL(n))
		return 0;
	deconstruct_array(PG_GETARG_ARRAYTYPE_P(n), TEXTOID, -1, false,
					  TYPALIGN_INT, elems, nulls, &count);
	return count;
}

/*
 * folio_perf_data.attribute(queryids bigint[], roles text[], queries text[],
 *		remote boolean, catalog_names text[], catalog_schemas text[])
 *		RETURNS TABLE(ord bigint, tenant text, module text, attributed_by text)
 *
 * One row per element of queryids (ord = its position, from 1).  roles and
 * queries are parallel to queryids (or NULL).  remote false: relations from
 * this database's relation store, names looked up in this database's
 * catalog.  remote true (a remote target's statements): no relations
 * evidence; an unqualified name exists in catalog_schemas[i] where
 * catalog_names[i] is that name.
 */
Datum
folio_perf_attribute_many(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	ArrayType  *qarr;
	Datum	   *qids;
	bool	   *qnulls;
	int			n;
	Datum	   *roles,
			   *texts,
			   *cnames,
			   *cnsps;
	bool	   *rnulls,
			   *tnulls,
			   *cnnulls,
			   *csnulls;
	int			nroles,
				ntexts,
				ncnames,
				ncnsps;
	bool		remote = !PG_ARGISNULL(3) && PG_GETARG_BOOL(3);
	HTAB	   *catalog = NULL;
	int			i;

	fperf_init_srf(fcinfo);
	if (rsinfo->setDesc->natts != 4)
		elog(ERROR, "incorrect number of output arguments");
	if (PG_ARGISNULL(0))
		PG_RETURN_VOID();

	qarr = PG_GETARG_ARRAYTYPE_P(0);
	deconstruct_array(qarr, INT8OID, sizeof(int64), FLOAT8PASSBYVAL,
					  TYPALIGN_DOUBLE, &qids, &qnulls, &n);
	nroles = text_array(fcinfo, 1, &roles, &rnulls);
	ntexts = text_array(fcinfo, 2, &texts, &tnulls);
	ncnames = text_array(fcinfo, 4, &cnames, &cnnulls);
	ncnsps = text_array(fcinfo, 5, &cnsps, &csnulls);
	if ((!PG_ARGISNULL(1) && nroles != n) || (!PG_ARGISNULL(2) && ntexts != n))
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("roles and queries must have as many elements as queryids"),
				 errdetail("%d query ids, %d roles, %d queries.", n, nroles, ntexts)));
	if (ncnames != ncnsps)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("catalog_names and catalog_schemas must have as many elements"),
				 errdetail("%d names, %d schemas.", ncnames, ncnsps)));

	if (remote)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = NAMEDATALEN;
		ctl.entrysize = sizeof(RemoteName);
		ctl.hcxt = CurrentMemoryContext;
		catalog = hash_create("folio_perf remote catalog", Max(ncnames, 16), &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		for (i = 0; i < ncnames; i++)
		{
			char		key[NAMEDATALEN];
			char	   *name;
			RemoteName *r;
			bool		found;

			if (cnnulls[i] || csnulls[i])
				continue;
			name = TextDatumGetCString(cnames[i]);
			if (strlen(name) >= NAMEDATALEN)
				continue;
			memset(key, 0, sizeof(key));
			strlcpy(key, name, sizeof(key));
			r = hash_search(catalog, key, HASH_ENTER, &found);
			if (!found)
				r->schemas = NIL;
			r->schemas = lappend(r->schemas, TextDatumGetCString(cnsps[i]));
		}
	}

	for (i = 0; i < n; i++)
	{
		FPerfAttrEvidence ev;
		FPerfAttribution a;

		CHECK_FOR_INTERRUPTS();
		memset(&ev, 0, sizeof(ev));
		if (!remote && !qnulls[i])
			(void) fperf_attr_set_relations(&ev, MyDatabaseId,
											(uint64) DatumGetInt64(qids[i]));
		if (nroles > 0 && !rnulls[i])
			ev.rolname = TextDatumGetCString(roles[i]);
		if (ntexts > 0 && !tnulls[i])
		{
			text	   *t = DatumGetTextPP(texts[i]);

			ev.query = VARDATA_ANY(t);
			ev.query_len = VARSIZE_ANY_EXHDR(t);
			ev.name_schemas = remote ? remote_schemas : fperf_attr_catalog_schemas;
			ev.name_schemas_arg = catalog;
		}
		fperf_attribute(&ev, &a);
		put_row(rsinfo, true, (int64) i + 1, &a);
	}
	PG_RETURN_VOID();
}
