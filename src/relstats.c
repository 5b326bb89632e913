/*-------------------------------------------------------------------------
 *
 * relstats.c
 *		One pass over pg_class and the cumulative statistics for a snapshot.
 *
 * pg_stat_user_tables, pg_statio_user_tables and pg_stat_user_indexes call
 * a dozen pg_stat_get_*() functions per relation, each a separate lookup of
 * the same statistics entry.  A FOLIO consortium database has 50,000 to
 * 150,000 relations, so folio_perf_rel_stats() scans pg_class once, fetches
 * each relation's entry once, and returns every counter the snapshot needs
 * together with a signature (the sum of the counters) that changes whenever
 * any counter moves, so that the caller can keep only what changed.
 *
 * Relations of pg_catalog, information_schema, pg_toast, temporary schemas
 * and folio_perf's own storage schema are skipped; tables, materialized views
 * and indexes are returned (partitioned parents have no statistics).  A
 * table's TOAST block counters are folded into its row.  An index's table
 * comes from one scan of pg_index made up front: a syscache lookup per index
 * costs a catalog index probe each in a new backend (a quarter of a second
 * for 60,000 indexes), the scan a few milliseconds.
 *
 * folio_perf_rel_changes() makes the same pass but compares each relation
 * with the previous snapshot's state (relid, signature, relfilenode, passed
 * as arrays) and returns only new, changed and dropped relations: the
 * snapshot of an idle database with 100,000 relations then materialises and
 * joins nothing, and an index's table is looked up only for returned rows.
 *
 * Reading the statistics.  A lookup of one relation's entry in the shared
 * statistics hash costs a partition lock, a reference and a copy (about a
 * microsecond); two per table (its TOAST table) make that the largest part
 * of an idle snapshot.  So by default (folio_perf.rel_stats_read = 'pass')
 * the statistics are read in ONE sequential pass over the shared hash, as
 * PostgreSQL's own snapshot builder does, keeping of each relation of this
 * database only what deciding "changed?" needs (the counters' signature and
 * the block counters a TOAST table adds to its table) in a local open-
 * addressing hash; the pg_class scan then looks up locally.  Only rows that
 * are returned (new or changed) fetch their full entry.  'lookup' keeps the
 * entry-by-entry reads, as a fallback and so that the regression suite can
 * prove that both give the same rows.  Either way an entry is a fresh copy
 * (stats_fetch_consistency = none, which the capture function sets); rows
 * are built in a per-row memory context that is reset every row, so memory
 * stays flat whatever the catalog size.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/relstats.c
 *
 *-------------------------------------------------------------------------
 */
#include "folio_perf.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "pgstat.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "common/hashfn.h"
#include "lib/dshash.h"
#include "utils/dsa.h"
#include "utils/pgstat_internal.h"

PG_FUNCTION_INFO_V1(folio_perf_rel_stats);
PG_FUNCTION_INFO_V1(folio_perf_rel_changes);

#define REL_STATS_COLS 23

/* folio_perf.rel_stats_read */
int			fperf_rel_stats_read = FPERF_REL_STATS_PASS;

/*
 * What the one pass keeps of a relation's statistics entry: the signature
 * of its own counters and the blocks it adds to its table when it is a
 * TOAST table.
 */
typedef struct RelSigEntry
{
	Oid			relid;			/* key */
	char		status;			/* simplehash's */
	int64		sig;
	int64		toast_sig;
} RelSigEntry;

#define SH_PREFIX relsig
#define SH_ELEMENT_TYPE RelSigEntry
#define SH_KEY_TYPE Oid
#define SH_KEY relid
#define SH_HASH_KEY(tb, key) murmurhash32(key)
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

static const struct config_enum_entry rel_stats_read_options[] = {
	{"pass", FPERF_REL_STATS_PASS, false},
	{"lookup", FPERF_REL_STATS_LOOKUP, false},
	{NULL, 0, false}
};

/* folio_perf.window_facts: read by the SQL of window_facts (080) only */
static bool fperf_window_facts = true;

/*
 * Define folio_perf.rel_stats_read and folio_perf.window_facts.  Called
 * from _PG_init, with or without preloading (snapshots work without it).
 */
void
fperf_relstats_define_gucs(void)
{
	DefineCustomBoolVariable("folio_perf.window_facts",
							 "Store a window's statement and relation differences the first time they are asked for.",
							 "on: every later report, compare and trend of the window reads them; "
							 "off: they are computed at each call (as on a standby).",
							 &fperf_window_facts,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomEnumVariable("folio_perf.rel_stats_read",
							 "How snapshots read relation statistics to find what changed.",
							 "pass: one pass over the shared statistics (default); "
							 "lookup: one lookup per relation (slower; a fallback).",
							 &fperf_rel_stats_read,
							 FPERF_REL_STATS_PASS,
							 rel_stats_read_options,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
}

/*
 * The counters of a relation's row: c[0..14] from its own entry, c[15..16]
 * (TOAST blocks read and hit) from its TOAST table's.
 */
static void
tab_counters(const PgStat_StatTabEntry *tab, int64 *c)
{
	c[0] = tab->numscans;
	c[1] = tab->tuples_returned;
	c[2] = tab->tuples_fetched;
	c[3] = tab->tuples_inserted;
	c[4] = tab->tuples_updated;
	c[5] = tab->tuples_deleted;
	c[6] = tab->tuples_hot_updated;
	c[7] = FPERF_TAB_LIVE(tab);
	c[8] = FPERF_TAB_DEAD(tab);
	c[9] = tab->vacuum_count;
	c[10] = FPERF_TAB_AUTOVACUUMS(tab);
	c[11] = tab->analyze_count;
	c[12] = FPERF_TAB_AUTOANALYZES(tab);
	c[13] = tab->blocks_fetched - tab->blocks_hit;
	c[14] = tab->blocks_hit;
}

/*
 * The signature of c[0..16]: the sum of the counters, live and dead tuples
 * (gauges) weighted so that a tuple count that moves without a counter
 * still shows.  Linear, so that a table's part and its TOAST table's part
 * can be computed apart and added (the one pass does).
 */
static int64
counters_sig(const int64 *c, int from, int to)
{
	uint64		sig = 0;
	int			i;

	for (i = from; i < to; i++)
	{
		if (i == 7)
			sig += (uint64) c[i] * 3;
		else if (i == 8)
			sig += (uint64) c[i] * 7;
		else
			sig += (uint64) c[i];
	}
	return (int64) sig;
}

/*
 * One pass over the shared statistics: for every relation entry of this
 * database that is not dropped, its signature and TOAST contribution.
 * Returns NULL if the shared statistics are not attached (then the caller
 * reads entry by entry).
 */
static relsig_hash *
rel_sig_pass(MemoryContext cxt)
{
	relsig_hash *h;
	dshash_seq_status hstat;
	PgStatShared_HashEntry *p;

	if (pgStatLocal.shared_hash == NULL || pgStatLocal.dsa == NULL)
		return NULL;

	h = relsig_create(cxt, 16384, NULL);
	dshash_seq_init(&hstat, pgStatLocal.shared_hash, false);
	while ((p = dshash_seq_next(&hstat)) != NULL)
	{
		PgStatShared_Relation *shrel;
		PgStat_StatTabEntry tab;
		RelSigEntry *e;
		bool		found;
		int64		c[17];

		if (p->key.kind != PGSTAT_KIND_RELATION ||
			p->key.dboid != MyDatabaseId || p->dropped)
			continue;
		shrel = (PgStatShared_Relation *) dsa_get_address(pgStatLocal.dsa, p->body);
		LWLockAcquire(&shrel->header.lock, LW_SHARED);
		memcpy(&tab, &shrel->stats, sizeof(tab));
		LWLockRelease(&shrel->header.lock);

		tab_counters(&tab, c);
		e = relsig_insert(h, FPERF_PGSTAT_KEY_OBJ(p->key), &found);
		e->sig = counters_sig(c, 0, 15);
		/* as a TOAST table: blocks read + blocks hit = blocks fetched */
		e->toast_sig = (int64) ((uint64) c[13] + (uint64) c[14]);
	}
	dshash_seq_term(&hstat);
	return h;
}

/* Map from an index to its table, filled by one scan of pg_index. */
typedef struct IndexTableEntry
{
	Oid			indexrelid;		/* hash key */
	Oid			indrelid;
} IndexTableEntry;

static HTAB *
index_table_map(void)
{
	HASHCTL		ctl;
	HTAB	   *map;
	Relation	indrel;
	SysScanDesc scan;
	HeapTuple	tup;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(IndexTableEntry);
	ctl.hcxt = CurrentMemoryContext;
	map = hash_create("folio_perf index tables", 16384, &ctl,
					  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	indrel = table_open(IndexRelationId, AccessShareLock);
	scan = systable_beginscan(indrel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_index idx = (Form_pg_index) GETSTRUCT(tup);
		IndexTableEntry *e;

		e = hash_search(map, &idx->indexrelid, HASH_ENTER, NULL);
		e->indrelid = idx->indrelid;
	}
	systable_endscan(scan);
	table_close(indrel, AccessShareLock);
	return map;
}

/* Cache of schema names and whether the schema is skipped. */
typedef struct NspCacheEntry
{
	Oid			nspoid;			/* hash key */
	bool		skip;
	NameData	nspname;
} NspCacheEntry;

static NspCacheEntry *
nsp_lookup(HTAB *cache, Oid nspoid, Oid skip_storage_nsp)
{
	NspCacheEntry *e;
	bool		found;

	e = hash_search(cache, &nspoid, HASH_ENTER, &found);
	if (!found)
	{
		char	   *name = get_namespace_name(nspoid);

		e->skip = (name == NULL ||
				   nspoid == PG_CATALOG_NAMESPACE ||
				   nspoid == PG_TOAST_NAMESPACE ||
				   nspoid == skip_storage_nsp ||
				   isAnyTempNamespace(nspoid) ||
				   strcmp(name, "information_schema") == 0);
		namestrcpy(&e->nspname, name ? name : "");
	}
	return e;
}

/* What the previous snapshot saw of a relation (folio_perf_rel_changes). */
typedef struct LastRelEntry
{
	Oid			relid;			/* hash key */
	bool		seen;
	Oid			relfilenode;
	int64		sig;
} LastRelEntry;

/* Up to this many index rows, look their tables up one by one. */
#define INDEX_LOOKUPS_BEFORE_MAP 2000

/*
 * The scan behind folio_perf_rel_stats() and folio_perf_rel_changes().
 * With last == NULL every relation is returned; otherwise only relations
 * that are new, whose signature or relfilenode differ from last, and (after
 * the scan) those of last that were not seen, with status 'n', 'c', 'd' in
 * the extra last column.
 */
static void
rel_stats_scan(ReturnSetInfo *rsinfo, HTAB *last)
{
	Relation	classrel;
	SysScanDesc scan;
	HeapTuple	tup;
	HASHCTL		ctl;
	HTAB	   *nspcache;
	HTAB	   *indtables = NULL;
	int			index_lookups = 0;
	int			ncols = REL_STATS_COLS + 1 + (last ? 1 : 0);
	MemoryContext rowcxt;
	MemoryContext oldcxt;
	Oid			storage_nsp = get_namespace_oid("folio_perf_data", true);
	Datum		values[REL_STATS_COLS + 2];
	bool		nulls[REL_STATS_COLS + 2];
	relsig_hash *sigs = NULL;

	if (rsinfo->setDesc->natts != ncols)
		elog(ERROR, "incorrect number of output arguments");

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(NspCacheEntry);
	ctl.hcxt = CurrentMemoryContext;
	nspcache = hash_create("folio_perf namespace cache", 1024, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	/* every relation is returned: map all indexes to their tables at once */
	if (last == NULL)
		indtables = index_table_map();

	rowcxt = AllocSetContextCreate(CurrentMemoryContext,
								   "folio_perf rel_stats row",
								   ALLOCSET_SMALL_SIZES);

	/* compare against the previous state from one pass (see header) */
	if (last != NULL && fperf_rel_stats_read == FPERF_REL_STATS_PASS)
		sigs = rel_sig_pass(CurrentMemoryContext);

	classrel = table_open(RelationRelationId, AccessShareLock);
	scan = systable_beginscan(classrel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_class cls = (Form_pg_class) GETSTRUCT(tup);
		NspCacheEntry *nsp;
		PgStat_StatTabEntry *tab;
		PgStat_StatTabEntry *toast = NULL;
		LastRelEntry *prev = NULL;
		int64		c[17];
		int64		sig = 0;
		Oid			table_relid = InvalidOid;
		int			i;

		if (cls->relkind != RELKIND_RELATION &&
			cls->relkind != RELKIND_MATVIEW &&
			cls->relkind != RELKIND_INDEX)
			continue;
		if (cls->relpersistence == RELPERSISTENCE_TEMP)
			continue;
		nsp = nsp_lookup(nspcache, cls->relnamespace, storage_nsp);
		if (nsp->skip)
			continue;

		oldcxt = MemoryContextSwitchTo(rowcxt);

		if (sigs != NULL)
		{
			/* the one pass's signature decides whether to read the entry */
			RelSigEntry *se = relsig_lookup(sigs, cls->oid);
			RelSigEntry *te = NULL;

			if (cls->relkind != RELKIND_INDEX && OidIsValid(cls->reltoastrelid))
				te = relsig_lookup(sigs, cls->reltoastrelid);
			sig = (int64) ((uint64) (se ? se->sig : 0) +
						   (uint64) (te ? te->toast_sig : 0));
			prev = hash_search(last, &cls->oid, HASH_FIND, NULL);
			if (prev)
			{
				prev->seen = true;
				if (prev->sig == sig && prev->relfilenode == cls->relfilenode)
				{
					MemoryContextSwitchTo(oldcxt);
					MemoryContextReset(rowcxt);
					continue;
				}
			}
		}

		tab = fperf_fetch_tabentry(cls->relisshared, cls->oid);
		if (cls->relkind != RELKIND_INDEX && OidIsValid(cls->reltoastrelid))
			toast = fperf_fetch_tabentry(cls->relisshared, cls->reltoastrelid);

		memset(c, 0, sizeof(c));
		if (tab)
			tab_counters(tab, c);
		if (toast)
		{
			c[15] = toast->blocks_fetched - toast->blocks_hit;
			c[16] = toast->blocks_hit;
		}
		sig = counters_sig(c, 0, 17);

		if (last && sigs == NULL)
		{
			prev = hash_search(last, &cls->oid, HASH_FIND, NULL);
			if (prev)
			{
				prev->seen = true;
				if (prev->sig == sig && prev->relfilenode == cls->relfilenode)
				{
					/* unchanged since the previous snapshot */
					MemoryContextSwitchTo(oldcxt);
					MemoryContextReset(rowcxt);
					continue;
				}
			}
		}

		if (cls->relkind == RELKIND_INDEX)
		{
			if (indtables == NULL && ++index_lookups > INDEX_LOOKUPS_BEFORE_MAP)
			{
				/* the map outlives the row: build it in the scan's context */
				MemoryContextSwitchTo(oldcxt);
				indtables = index_table_map();
				MemoryContextSwitchTo(rowcxt);
			}
			if (indtables)
			{
				IndexTableEntry *ie = hash_search(indtables, &cls->oid,
												  HASH_FIND, NULL);

				if (ie)
					table_relid = ie->indrelid;
			}
			else
			{
				HeapTuple	itup = SearchSysCache1(INDEXRELID,
												   ObjectIdGetDatum(cls->oid));

				if (HeapTupleIsValid(itup))
				{
					table_relid = ((Form_pg_index) GETSTRUCT(itup))->indrelid;
					ReleaseSysCache(itup);
				}
			}
		}

		memset(nulls, false, sizeof(nulls));
		values[0] = ObjectIdGetDatum(cls->oid);
		values[1] = ObjectIdGetDatum(cls->relfilenode);
		values[2] = CharGetDatum(cls->relkind);
		values[3] = NameGetDatum(&nsp->nspname);
		values[4] = NameGetDatum(&cls->relname);
		values[5] = ObjectIdGetDatum(table_relid);
		nulls[5] = !OidIsValid(table_relid);
		for (i = 0; i < 17; i++)
			values[6 + i] = Int64GetDatum(c[i]);
		values[REL_STATS_COLS] = Int64GetDatum(sig);
		if (last)
			values[REL_STATS_COLS + 1] = CharGetDatum(prev ? 'c' : 'n');

		MemoryContextSwitchTo(oldcxt);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextReset(rowcxt);
	}
	systable_endscan(scan);
	table_close(classrel, AccessShareLock);

	/* relations of the previous snapshot that are gone */
	if (last)
	{
		HASH_SEQ_STATUS hstat;
		LastRelEntry *e;

		hash_seq_init(&hstat, last);
		while ((e = hash_seq_search(&hstat)) != NULL)
		{
			if (e->seen)
				continue;
			memset(nulls, true, sizeof(nulls));
			values[0] = ObjectIdGetDatum(e->relid);
			nulls[0] = false;
			values[REL_STATS_COLS + 1] = CharGetDatum('d');
			nulls[REL_STATS_COLS + 1] = false;
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
}

/*
 * folio_perf_rel_stats() RETURNS TABLE(relid oid, relfilenode oid,
 *	 relkind "char", nspname name, relname name, table_relid oid,
 *	 numscans, tuples_returned, tuples_fetched, tuples_inserted,
 *	 tuples_updated, tuples_deleted, tuples_hot_updated, live_tuples,
 *	 dead_tuples, vacuum_count, autovacuum_count, analyze_count,
 *	 autoanalyze_count, blocks_read, blocks_hit, toast_blocks_read,
 *	 toast_blocks_hit bigint ..., sig bigint): every relation.
 */
Datum
folio_perf_rel_stats(PG_FUNCTION_ARGS)
{
	fperf_init_srf(fcinfo);
	rel_stats_scan((ReturnSetInfo *) fcinfo->resultinfo, NULL);
	PG_RETURN_VOID();
}

/*
 * folio_perf_rel_changes(last_relid oid[], last_sig bigint[],
 *	 last_relfilenode oid[]) RETURNS TABLE(<the columns of
 *	 folio_perf_rel_stats>, status "char"): what changed since the state
 *	 given (the capture passes rel_last): status 'n' for a relation not in
 *	 it, 'c' for one whose signature or relfilenode differs, 'd' (only relid
 *	 set) for one in it that no longer exists.  Unchanged relations cost
 *	 their statistics lookups but no output row, so that the caller neither
 *	 materialises nor joins the whole catalog.  The arrays must have the
 *	 same length; NULL arrays mean an empty state.
 */
Datum
folio_perf_rel_changes(PG_FUNCTION_ARGS)
{
	HASHCTL		ctl;
	HTAB	   *last;
	Datum	   *relids = NULL;
	Datum	   *sigs = NULL;
	Datum	   *rfns = NULL;
	bool	   *relid_nulls = NULL;
	bool	   *sig_nulls = NULL;
	bool	   *rfn_nulls = NULL;
	int			n = 0;
	int			n_sig = 0;
	int			n_rfn = 0;
	int			i;

	fperf_init_srf(fcinfo);

	if (!PG_ARGISNULL(0))
		deconstruct_array(PG_GETARG_ARRAYTYPE_P(0), OIDOID, sizeof(Oid), true,
						  TYPALIGN_INT, &relids, &relid_nulls, &n);
	if (!PG_ARGISNULL(1))
		deconstruct_array(PG_GETARG_ARRAYTYPE_P(1), INT8OID, sizeof(int64),
						  FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &sigs, &sig_nulls, &n_sig);
	if (!PG_ARGISNULL(2))
		deconstruct_array(PG_GETARG_ARRAYTYPE_P(2), OIDOID, sizeof(Oid), true,
						  TYPALIGN_INT, &rfns, &rfn_nulls, &n_rfn);
	if (n != n_sig || n != n_rfn)
		ereport(ERROR,
				(errcode(ERRCODE_ARRAY_SUBSCRIPT_ERROR),
				 errmsg("last_relid, last_sig and last_relfilenode must have the same length"),
				 errhint("Pass the three arrays of one earlier call's result, or NULL for all three.")));

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(LastRelEntry);
	ctl.hcxt = CurrentMemoryContext;
	last = hash_create("folio_perf last relations", Max(n, 1024), &ctl,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	for (i = 0; i < n; i++)
	{
		LastRelEntry *e;
		Oid			relid;

		if (relid_nulls[i] || sig_nulls[i] || rfn_nulls[i])
			continue;
		relid = DatumGetObjectId(relids[i]);
		e = hash_search(last, &relid, HASH_ENTER, NULL);
		e->seen = false;
		e->sig = DatumGetInt64(sigs[i]);
		e->relfilenode = DatumGetObjectId(rfns[i]);
	}

	rel_stats_scan((ReturnSetInfo *) fcinfo->resultinfo, last);
	PG_RETURN_VOID();
}
