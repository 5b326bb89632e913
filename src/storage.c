/*-------------------------------------------------------------------------
 *
 * storage.c
 *		The sampler's storage: every SQL statement the worker runs, through
 *		SPI, inside the worker's transactions.
 *
 * Storage format.  A flushed interval (folio_perf_data.sample_interval)
 * holds, besides per-tick totals, for every series (a kind -- connections,
 * load, cpu -- a dimension such as role or wait_event, and a key) the
 * histogram of its per-tick values (aggregate.c) as parallel arrays
 * (series, value, ticks), one entry per distinct non-zero value.  Series
 * are named once in folio_perf_data.sample_series; their ids are cached for
 * the worker's life (reset when the table is recreated or the cache grows
 * past FPERF_MAX_CACHED_SERIES).
 *
 * Also here: the remote targets' list (folio_perf_data.target) and state
 * (folio_perf_data.target_status), the relation evidence of query ids
 * (folio_perf_query_relations()), retention, and timed snapshots.  Every
 * statement names its schemas; the extension's own schema is looked up once
 * per call (extension_schema()).
 *
 * Callers are in a transaction (worker.c's run_in_xact) and, except for
 * fperf_storage_ready(), between fperf_storage_connect() and
 * fperf_storage_disconnect().  An error propagates to the caller, whose
 * transaction aborts; nothing here catches.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/storage.c
 *
 *-------------------------------------------------------------------------
 */
#include "storage.h"
#include "remote.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"

/* Series ids cached by the worker, at most this many. */
#define FPERF_MAX_CACHED_SERIES 200000

/* Cached series id. */
typedef struct FPerfSeriesId
{
	char		key[FPERF_KEYLEN];
	int32		series_id;
} FPerfSeriesId;

static MemoryContext StorageContext = NULL;
static HTAB *series_cache = NULL;
static Oid	series_cache_relid = InvalidOid;

static bool storage_missing = false;
static bool logged_no_storage = false;

/* ---- arrays for statement parameters ---- */

/*
 * A one-dimensional array of n Datums of type elemtype; nulls may be NULL
 * (no NULL elements).
 */
static Datum
make_array(Datum *vals, bool *nulls, int n, Oid elemtype)
{
	int			dims[1] = {n};
	int			lbs[1] = {1};
	int16		typlen;
	bool		typbyval;
	char		typalign;

	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	return PointerGetDatum(construct_md_array(vals, nulls, 1, dims, lbs,
											  elemtype, typlen, typbyval, typalign));
}

/* A text[] from C strings; NULL pointers become NULL elements. */
static Datum
text_array(char *const *vals, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(n, 1));
	int			i;

	for (i = 0; i < n; i++)
	{
		nulls[i] = (vals[i] == NULL);
		d[i] = nulls[i] ? (Datum) 0 : CStringGetTextDatum(vals[i]);
	}
	return make_array(d, nulls, n, TEXTOID);
}

/*
 * An int4[], int8[] or oid[] of n values (int32, int64 or Oid, as elemtype
 * says); isnull may be NULL.
 */
static Datum
scalar_array(const void *vals, bool *isnull, int n, Oid elemtype)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	int			i;

	for (i = 0; i < n; i++)
	{
		if (elemtype == INT4OID)
			d[i] = Int32GetDatum(((const int32 *) vals)[i]);
		else if (elemtype == INT8OID)
			d[i] = Int64GetDatum(((const int64 *) vals)[i]);
		else
			d[i] = ObjectIdGetDatum(((const Oid *) vals)[i]);
	}
	return make_array(d, isnull, n, elemtype);
}

#define int4_array(vals, isnull, n) scalar_array(vals, isnull, n, INT4OID)
#define int8_array(vals, isnull, n) scalar_array(vals, isnull, n, INT8OID)
#define oid_array(vals, isnull, n) scalar_array(vals, isnull, n, OIDOID)

/* A timestamptz[], 0 as NULL. */
static Datum
ts_array(const TimestampTz *vals, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(n, 1));
	int			i;

	for (i = 0; i < n; i++)
	{
		nulls[i] = (vals[i] == 0);
		d[i] = TimestampTzGetDatum(vals[i]);
	}
	return make_array(d, nulls, n, TIMESTAMPTZOID);
}

/* Run a statement with parameters; error unless it returns `expect`. */
static void
run_sql(const char *sql, int nargs, Oid *argtypes, Datum *args,
		const char *nulls, bool read_only, int expect)
{
	int			ret;

	ret = SPI_execute_with_args(sql, nargs, argtypes, args, nulls, read_only, 0);
	if (ret != expect)
		elog(ERROR, "SPI_execute_with_args failed: error code %d", ret);
}

/* ---- the extension and its tables ---- */

/*
 * folio_perf's row in pg_extension: its oid, schema and owner (InvalidOid
 * all when it is not installed in this database).  Needs a transaction.
 */
static void
extension_row(Oid *extoid, Oid *nsp, Oid *owner)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;

	*extoid = *nsp = *owner = InvalidOid;
	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber,
				F_NAMEEQ, CStringGetDatum("folio_perf"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		*extoid = ((Form_pg_extension) GETSTRUCT(tup))->oid;
		*nsp = ((Form_pg_extension) GETSTRUCT(tup))->extnamespace;
		*owner = ((Form_pg_extension) GETSTRUCT(tup))->extowner;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
}

/*
 * The schema folio_perf is installed in, quoted for SQL; NULL when it is
 * not installed in this database.  Needs a transaction.
 */
static char *
extension_schema(void)
{
	Oid			extoid;
	Oid			nsp;
	Oid			owner;
	char	   *name;

	extension_row(&extoid, &nsp, &owner);
	if (!OidIsValid(nsp) || (name = get_namespace_name(nsp)) == NULL)
		return NULL;
	return pstrdup(quote_identifier(name));
}

/*
 * Hold folio_perf for the current transaction and return the role that owns
 * it in this database (who installed it); InvalidOid when it is not
 * installed.  The extension object is locked in AccessShareLock, which
 * DROP EXTENSION's AccessExclusiveLock waits for: storage cannot go away
 * in the middle of a flush or a snapshot, and a DROP that committed while
 * we waited is seen (the lock makes the catalogs current).  Needs a
 * transaction.
 */
Oid
fperf_storage_hold_extension(void)
{
	Oid			extoid;
	Oid			nsp;
	Oid			owner;
	int			tries;

	extension_row(&extoid, &nsp, &owner);
	for (tries = 0; OidIsValid(extoid) && tries < 3; tries++)
	{
		Oid			now_oid;

		LockDatabaseObject(ExtensionRelationId, extoid, 0, AccessShareLock);
		extension_row(&now_oid, &nsp, &owner);
		if (now_oid == extoid)
			return owner;
		/* dropped (and maybe created again) while we waited */
		extoid = now_oid;
	}
	return InvalidOid;
}

/* Forget cached series ids (storage was recreated, or the cache is big). */
static void
series_cache_reset(void)
{
	HASHCTL		ctl;

	if (series_cache)
		hash_destroy(series_cache);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = FPERF_KEYLEN;
	ctl.entrysize = sizeof(FPerfSeriesId);
	ctl.hcxt = StorageContext;
	series_cache = hash_create("folio_perf series ids", 1024, &ctl,
							   HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
}

/* Set up the series id cache in the worker's long-lived context. */
void
fperf_storage_init(MemoryContext parent)
{
	StorageContext = parent;
	series_cache_reset();
}

/*
 * True if folio_perf's storage tables exist in this database.  Logs once
 * when they are missing and once when they appear.  Needs a transaction.
 *
 * The extension is locked (shared) for the rest of the transaction, so that
 * a concurrent DROP EXTENSION, which locks the extension before it drops
 * anything, waits for this transaction instead of taking the tables away
 * under its statements; one that committed while we waited for the lock is
 * seen as missing storage.  (Locking the tables alone is not enough: DROP
 * could hold the lock of a table this flush writes later, such as
 * target_status, while it waits for ours: a deadlock.)  The two tables
 * checked are locked too.
 */
bool
fperf_storage_ready(void)
{
	Oid			relid = InvalidOid;
	Oid			extoid = get_extension_oid("folio_perf", true);

	if (OidIsValid(extoid))
	{
		/* the lock makes the syscaches accept what we waited for */
		LockDatabaseObject(ExtensionRelationId, extoid, 0, AccessShareLock);
		if (get_extension_oid("folio_perf", true) != extoid)
			extoid = InvalidOid;
	}
	if (OidIsValid(extoid))
	{
		relid = RangeVarGetRelid(makeRangeVar("folio_perf_data", "sample_interval", -1),
								 AccessShareLock, true);
		if (OidIsValid(relid) &&
			!OidIsValid(RangeVarGetRelid(makeRangeVar("folio_perf_data", "sample_series", -1),
										 AccessShareLock, true)))
			relid = InvalidOid;
	}

	if (!OidIsValid(relid))
	{
		storage_missing = true;
		if (!logged_no_storage)
		{
			ereport(LOG,
					(errmsg("folio_perf is not installed in database \"%s\", sampled data is not stored",
							get_database_name(MyDatabaseId)),
					 errdetail("Samples are kept in shared memory only, the oldest overwritten first."),
					 errhint("Run CREATE EXTENSION folio_perf in database \"%s\", or set folio_perf.database to the database where it is installed.",
							 get_database_name(MyDatabaseId))));
			logged_no_storage = true;
		}
		return false;
	}

	if (relid != series_cache_relid)
	{
		series_cache_reset();
		series_cache_relid = relid;
	}
	if (storage_missing)
	{
		ereport(LOG,
				(errmsg("folio_perf found in database \"%s\", sampled data is stored from now on",
						get_database_name(MyDatabaseId))));
		storage_missing = false;
		logged_no_storage = false;
	}
	return true;
}

/* Connect to SPI for the storage calls of one transaction. */
void
fperf_storage_connect(void)
{
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
}

void
fperf_storage_disconnect(void)
{
	SPI_finish();
}

/* ---- intervals ---- */

/*
 * Every function and operator below is schema-qualified (the worker's
 * search_path is pg_catalog, pg_temp as well): parallel arrays are read
 * with ROWS FROM (pg_catalog.unnest(...), ...), the qualified form of the
 * multi-argument unnest().
 */
#define SERIES_SQL \
	"WITH n(kind, dimension, key, dbid, userid, queryid, tenant, module, attributed_by," \
	"       target_id) AS (" \
	"  SELECT * FROM ROWS FROM (pg_catalog.unnest($1::text[]), pg_catalog.unnest($2::text[])," \
	"       pg_catalog.unnest($3::text[]), pg_catalog.unnest($4::oid[])," \
	"       pg_catalog.unnest($5::oid[]), pg_catalog.unnest($6::bigint[])," \
	"       pg_catalog.unnest($7::text[]), pg_catalog.unnest($8::text[])," \
	"       pg_catalog.unnest($9::text[]), pg_catalog.unnest($10::int[])))," \
	" ins AS (" \
	"  INSERT INTO folio_perf_data.sample_series AS s" \
	"    (kind, dimension, key, dbid, userid, queryid, tenant, module, attributed_by," \
	"     target_id)" \
	"  SELECT * FROM n ON CONFLICT (kind, dimension, key) DO NOTHING" \
	"  RETURNING s.series_id, s.kind, s.dimension, s.key)" \
	" SELECT series_id, kind, dimension, key FROM ins" \
	" UNION ALL" \
	" SELECT s.series_id, s.kind, s.dimension, s.key" \
	"   FROM folio_perf_data.sample_series s" \
	"   JOIN n ON s.kind OPERATOR(pg_catalog.=) n.kind" \
	"        AND s.dimension OPERATOR(pg_catalog.=) n.dimension" \
	"        AND s.key OPERATOR(pg_catalog.=) n.key"

/*
 * Give every series of the interval its id: from the cache, else from
 * sample_series (inserting the new ones).
 */
static void
resolve_series_ids(FPerfInterval *iv)
{
	HASH_SEQ_STATUS seq;
	FPerfSeries *a;
	int			nnew = 0;
	int			maxnew = (int) hash_get_num_entries(iv->series);
	char	  **kinds,
			  **dims,
			  **keys,
			  **tenants,
			  **modules,
			  **bys;
	Oid		   *dbids,
			   *userids;
	int64	   *queryids;
	int32	   *targetids;
	bool	   *idnull;
	bool	   *tgtnull;
	Datum		args[10];
	uint64		i;

	if (maxnew == 0)
		return;
	if (hash_get_num_entries(series_cache) > FPERF_MAX_CACHED_SERIES)
		series_cache_reset();

	kinds = palloc(sizeof(char *) * maxnew);
	dims = palloc(sizeof(char *) * maxnew);
	keys = palloc(sizeof(char *) * maxnew);
	tenants = palloc(sizeof(char *) * maxnew);
	modules = palloc(sizeof(char *) * maxnew);
	bys = palloc(sizeof(char *) * maxnew);
	dbids = palloc(sizeof(Oid) * maxnew);
	userids = palloc(sizeof(Oid) * maxnew);
	queryids = palloc(sizeof(int64) * maxnew);
	targetids = palloc(sizeof(int32) * maxnew);
	idnull = palloc(sizeof(bool) * maxnew);
	tgtnull = palloc(sizeof(bool) * maxnew);

	hash_seq_init(&seq, iv->series);
	while ((a = hash_seq_search(&seq)) != NULL)
	{
		FPerfSeriesId *c = hash_search(series_cache, a->key, HASH_FIND, NULL);

		if (c)
		{
			a->series_id = c->series_id;
			continue;
		}
		kinds[nnew] = (char *) fperf_series_kind_name(a->key[0]);
		dims[nnew] = (char *) fperf_series_dim_name(a->key[1]);
		keys[nnew] = a->key + 2;
		tenants[nnew] = a->tenant;
		modules[nnew] = a->module;
		bys[nnew] = (char *) a->attributed_by;
		dbids[nnew] = a->dbid;
		userids[nnew] = a->userid;
		queryids[nnew] = a->queryid;
		idnull[nnew] = !a->has_ids;
		targetids[nnew] = a->target_id;
		tgtnull[nnew] = (a->target_id == 0);
		nnew++;
	}
	if (nnew == 0)
		return;

	args[0] = text_array(kinds, nnew);
	args[1] = text_array(dims, nnew);
	args[2] = text_array(keys, nnew);
	args[3] = oid_array(dbids, idnull, nnew);
	args[4] = oid_array(userids, idnull, nnew);
	args[5] = int8_array(queryids, idnull, nnew);
	args[6] = text_array(tenants, nnew);
	args[7] = text_array(modules, nnew);
	args[8] = text_array(bys, nnew);
	args[9] = int4_array(targetids, tgtnull, nnew);
	run_sql(SERIES_SQL, 10,
			(Oid[]) {TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID, OIDARRAYOID,
				OIDARRAYOID, INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID,
			TEXTARRAYOID, INT4ARRAYOID},
			args, NULL, false, SPI_OK_SELECT);

	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		int32		id = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
		char	   *kind = SPI_getvalue(tup, desc, 2);
		char	   *dim = SPI_getvalue(tup, desc, 3);
		char	   *keytext = SPI_getvalue(tup, desc, 4);
		char		key[FPERF_KEYLEN];
		FPerfSeriesId *c;

		memset(key, 0, sizeof(key));
		key[0] = fperf_series_kind_code(kind);
		key[1] = fperf_series_dim_code(dim);
		if (key[0] == 0 || key[1] == 0)
			continue;
		strlcpy(key + 2, keytext ? keytext : "", FPERF_KEYLEN - 2);
		a = hash_search(iv->series, key, HASH_FIND, NULL);
		if (a)
			a->series_id = id;
		c = hash_search(series_cache, key, HASH_ENTER, NULL);
		c->series_id = id;
	}
}

/* Order series by kind and id, so that stored arrays are stable. */
static int
series_cmp(const void *a, const void *b)
{
	const FPerfSeries *x = *(FPerfSeries *const *) a;
	const FPerfSeries *y = *(FPerfSeries *const *) b;

	if (x->key[0] != y->key[0])
		return (x->key[0] > y->key[0]) - (x->key[0] < y->key[0]);
	return (x->series_id > y->series_id) - (x->series_id < y->series_id);
}

#define INTERVAL_SQL \
	"INSERT INTO folio_perf_data.sample_interval" \
	" (started_at, ended_at, cut, sample_interval_ms, n_ticks, ticks_dropped," \
	"  tick_ms, tick_connections, tick_active, host_ncpu, host_busy_ms, host_total_ms," \
	"  cpu_ticks, c_series, c_value, c_freq, l_series, l_value, l_freq, u_series, u_ms," \
	"  target_id)" \
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13," \
	"         $14, $15, $16, $17, $18, $19, $20, $21, $22)"

/*
 * Write one interval, of this server (target_id 0) or of a remote target,
 * naming its new series first.
 */
void
fperf_storage_write_interval(FPerfInterval *iv, const char *cut)
{
	HASH_SEQ_STATUS seq;
	FPerfSeries *a;
	FPerfSeries **all;
	int			nall = 0;
	int			nentries = (int) hash_get_num_entries(iv->series);
	int32	   *cs,
			   *cv,
			   *cf,
			   *ls,
			   *lv,
			   *lf,
			   *us,
			   *um;
	int			nc = 0,
				nl = 0,
				nu = 0,
				histlen = 0;
	int			i,
				j;
	Datum		args[22];
	char		nulls[23];

	resolve_series_ids(iv);

	all = palloc(sizeof(FPerfSeries *) * Max(nentries, 1));
	hash_seq_init(&seq, iv->series);
	while ((a = hash_seq_search(&seq)) != NULL)
	{
		if (a->series_id == 0)
			elog(ERROR, "sampler series \"%s\" has no id", a->key);
		all[nall++] = a;
		histlen += a->nh;
	}
	qsort(all, nall, sizeof(FPerfSeries *), series_cmp);

	cs = palloc(sizeof(int32) * Max(histlen, 1));
	cv = palloc(sizeof(int32) * Max(histlen, 1));
	cf = palloc(sizeof(int32) * Max(histlen, 1));
	ls = palloc(sizeof(int32) * Max(histlen, 1));
	lv = palloc(sizeof(int32) * Max(histlen, 1));
	lf = palloc(sizeof(int32) * Max(histlen, 1));
	us = palloc(sizeof(int32) * Max(nall, 1));
	um = palloc(sizeof(int32) * Max(nall, 1));

	for (i = 0; i < nall; i++)
	{
		a = all[i];
		if (a->key[0] == FPERF_KIND_CPU)
		{
			if (a->cpu_ms > 0)
			{
				us[nu] = a->series_id;
				um[nu] = (int32) Min(a->cpu_ms, PG_INT32_MAX);
				nu++;
			}
			continue;
		}
		for (j = 0; j < a->nh; j++)
		{
			if (a->key[0] == FPERF_KIND_CONN)
			{
				cs[nc] = a->series_id;
				cv[nc] = a->hv[j];
				cf[nc] = a->hf[j];
				nc++;
			}
			else
			{
				ls[nl] = a->series_id;
				lv[nl] = a->hv[j];
				lf[nl] = a->hf[j];
				nl++;
			}
		}
	}

	memset(nulls, ' ', sizeof(nulls));
	nulls[22] = '\0';
	args[0] = TimestampTzGetDatum(iv->started_at);
	args[1] = TimestampTzGetDatum(iv->ended_at);
	args[2] = CStringGetTextDatum(cut);
	args[3] = Int32GetDatum(iv->interval_ms);
	args[4] = Int32GetDatum(iv->nticks);
	args[5] = Int32GetDatum((int32) Min(iv->ticks_dropped, PG_INT32_MAX));
	args[6] = int4_array(iv->tick_ms, NULL, iv->nticks);
	args[7] = int4_array(iv->tick_conns, NULL, iv->nticks);
	args[8] = int4_array(iv->tick_active, NULL, iv->nticks);
	args[9] = Int32GetDatum(iv->host_ncpu);
	args[10] = Int64GetDatum(iv->host_busy_ms);
	args[11] = Int64GetDatum(iv->host_total_ms);
	args[12] = Int32GetDatum(iv->cpu_ticks);
	if (iv->cpu_ticks == 0)
		nulls[9] = nulls[10] = nulls[11] = 'n';
	args[13] = int4_array(cs, NULL, nc);
	args[14] = int4_array(cv, NULL, nc);
	args[15] = int4_array(cf, NULL, nc);
	args[16] = int4_array(ls, NULL, nl);
	args[17] = int4_array(lv, NULL, nl);
	args[18] = int4_array(lf, NULL, nl);
	args[19] = int4_array(us, NULL, nu);
	args[20] = int4_array(um, NULL, nu);
	if (iv->cpu_ticks == 0)
		nulls[19] = nulls[20] = 'n';
	args[21] = Int32GetDatum(iv->target_id);
	if (iv->target_id == 0)
		nulls[21] = 'n';

	run_sql(INTERVAL_SQL, 22,
			(Oid[]) {TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTOID, INT4OID,
				INT4OID, INT4OID, INT4ARRAYOID, INT4ARRAYOID, INT4ARRAYOID, INT4OID,
				INT8OID, INT8OID, INT4OID, INT4ARRAYOID, INT4ARRAYOID, INT4ARRAYOID,
			INT4ARRAYOID, INT4ARRAYOID, INT4ARRAYOID, INT4ARRAYOID, INT4ARRAYOID, INT4OID},
			args, nulls, false, SPI_OK_INSERT);
}

/* ---- remote targets ---- */

#define TARGETS_SQL FPERF_TARGET_SQL " AND t.enabled ORDER BY t.target_id"

/* The enabled remote targets, palloc'd in the caller's context. */
int
fperf_storage_read_targets(FPerfTargetDef **defs)
{
	MemoryContext cxt = CurrentMemoryContext;
	MemoryContext old;
	int			ret;
	uint64		r;
	int			n;

	ret = SPI_execute(TARGETS_SQL, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute failed: error code %d", ret);
	n = (int) Min(SPI_processed, (uint64) FPERF_REMOTE_MAX_TARGETS);
	old = MemoryContextSwitchTo(cxt);
	*defs = palloc0(sizeof(FPerfTargetDef) * Max(n, 1));
	for (r = 0; r < (uint64) n; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;

		(*defs)[r].target_id = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
		(*defs)[r].name = SPI_getvalue(tup, desc, 2);
		(*defs)[r].conninfo = SPI_getvalue(tup, desc, 3);
		(*defs)[r].restricted = DatumGetBool(SPI_getbinval(tup, desc, 4, &isnull));
		if (isnull)
			(*defs)[r].restricted = true;
		(*defs)[r].password = SPI_getvalue(tup, desc, 5);
		(*defs)[r].sslpassword = SPI_getvalue(tup, desc, 6);
		(*defs)[r].vcpus = DatumGetInt32(SPI_getbinval(tup, desc, 7, &isnull));
		if (isnull)
			(*defs)[r].vcpus = 0;
	}
	MemoryContextSwitchTo(old);
	return n;
}

#define STATUS_SQL \
	"INSERT INTO folio_perf_data.target_status (target_id, state, last_sample_at," \
	"  ticks, ticks_missed, ticks_dropped, connects, failures, last_error, last_error_at," \
	"  next_attempt_at, updated_at)" \
	" SELECT u.*, pg_catalog.clock_timestamp()" \
	"  FROM ROWS FROM (pg_catalog.unnest($1::int[]), pg_catalog.unnest($2::text[])," \
	"   pg_catalog.unnest($3::timestamptz[]), pg_catalog.unnest($4::bigint[])," \
	"   pg_catalog.unnest($5::bigint[]), pg_catalog.unnest($6::bigint[])," \
	"   pg_catalog.unnest($7::bigint[]), pg_catalog.unnest($8::bigint[])," \
	"   pg_catalog.unnest($9::text[]), pg_catalog.unnest($10::timestamptz[])," \
	"   pg_catalog.unnest($11::timestamptz[])) AS u" \
	" ON CONFLICT (target_id) DO UPDATE SET state = EXCLUDED.state," \
	"  last_sample_at = EXCLUDED.last_sample_at, ticks = EXCLUDED.ticks," \
	"  ticks_missed = EXCLUDED.ticks_missed, ticks_dropped = EXCLUDED.ticks_dropped," \
	"  connects = EXCLUDED.connects, failures = EXCLUDED.failures," \
	"  last_error = EXCLUDED.last_error, last_error_at = EXCLUDED.last_error_at," \
	"  next_attempt_at = EXCLUDED.next_attempt_at, updated_at = EXCLUDED.updated_at"

/* Write every target's state to target_status. */
void
fperf_storage_write_target_status(const FPerfTargetStatus *st, int n)
{
	int32	   *ids;
	char	  **states;
	char	  **errors;
	TimestampTz *last,
			   *errat,
			   *nextat;
	int64	   *counts[5];
	Datum		args[11];
	int			i,
				c;

	if (n <= 0)
		return;
	ids = palloc(sizeof(int32) * n);
	states = palloc(sizeof(char *) * n);
	errors = palloc(sizeof(char *) * n);
	last = palloc(sizeof(TimestampTz) * n);
	errat = palloc(sizeof(TimestampTz) * n);
	nextat = palloc(sizeof(TimestampTz) * n);
	for (c = 0; c < 5; c++)
		counts[c] = palloc(sizeof(int64) * n);
	for (i = 0; i < n; i++)
	{
		ids[i] = st[i].target_id;
		states[i] = (char *) st[i].state;
		last[i] = st[i].last_sample_at;
		counts[0][i] = st[i].ticks;
		counts[1][i] = st[i].ticks_missed;
		counts[2][i] = st[i].ticks_dropped;
		counts[3][i] = st[i].connects;
		counts[4][i] = st[i].failures;
		errors[i] = st[i].last_error && st[i].last_error[0] ? (char *) st[i].last_error : NULL;
		errat[i] = st[i].last_error_at;
		nextat[i] = st[i].next_attempt_at;
	}
	args[0] = int4_array(ids, NULL, n);
	args[1] = text_array(states, n);
	args[2] = ts_array(last, n);
	for (c = 0; c < 5; c++)
		args[3 + c] = int8_array(counts[c], NULL, n);
	args[8] = text_array(errors, n);
	args[9] = ts_array(errat, n);
	args[10] = ts_array(nextat, n);
	run_sql(STATUS_SQL, 11,
			(Oid[]) {INT4ARRAYOID, TEXTARRAYOID, TIMESTAMPTZARRAYOID,
				INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
			TEXTARRAYOID, TIMESTAMPTZARRAYOID, TIMESTAMPTZARRAYOID},
			args, NULL, false, SPI_OK_INSERT);
}

/* ---- retention and timed snapshots ---- */

/* Delete intervals that ended more than retention_min minutes ago. */
uint64
fperf_storage_purge(int retention_min)
{
	run_sql("DELETE FROM folio_perf_data.sample_interval"
			" WHERE ended_at OPERATOR(pg_catalog.<) (pg_catalog.now() OPERATOR(pg_catalog.-)"
			"       pg_catalog.make_interval(mins => $1))",
			1, (Oid[]) {INT4OID}, (Datum[]) {Int32GetDatum(retention_min)},
			NULL, false, SPI_OK_DELETE);
	return SPI_processed;
}

/*
 * Take a timed snapshot: folio_perf_snapshot_timed() of the installed
 * extension.  A session taking a snapshot may hold the snapshot's lock
 * while it waits for the worker to flush: the lock is not waited for long,
 * the snapshot is retried soon.
 */
void
fperf_storage_timed_snapshot(void)
{
	char	   *nsp = extension_schema();
	int			ret;

	if (nsp == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("extension \"folio_perf\" is not installed in database \"%s\"",
						get_database_name(MyDatabaseId))));
	ret = SPI_execute("SET LOCAL lock_timeout = '1s'", false, 0);
	if (ret != SPI_OK_UTILITY)
		elog(ERROR, "SPI_execute failed: error code %d", ret);
	ret = SPI_execute(psprintf("SELECT %s.folio_perf_snapshot_timed()", nsp), false, 0);
	if (ret < 0)
		elog(ERROR, "SPI_execute failed: error code %d", ret);
}
