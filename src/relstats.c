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
 * table's TOAST block counters are folded into its row.
 *
 * Each fetched entry is a copy when stats_fetch_consistency = none (which the
 * capture function sets); rows are built in a per-row memory context that is
 * reset every row, so memory stays flat whatever the catalog size.
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
#include "pgstat.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(folio_perf_rel_stats);

#define REL_STATS_COLS 23

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

/*
 * folio_perf_rel_stats() RETURNS TABLE(relid oid, relfilenode oid,
 *	 relkind "char", nspname name, relname name, table_relid oid,
 *	 numscans, tuples_returned, tuples_fetched, tuples_inserted,
 *	 tuples_updated, tuples_deleted, tuples_hot_updated, live_tuples,
 *	 dead_tuples, vacuum_count, autovacuum_count, analyze_count,
 *	 autoanalyze_count, blocks_read, blocks_hit, toast_blocks_read,
 *	 toast_blocks_hit bigint ..., sig bigint)
 */
Datum
folio_perf_rel_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	Relation	classrel;
	SysScanDesc scan;
	HeapTuple	tup;
	HASHCTL		ctl;
	HTAB	   *nspcache;
	MemoryContext rowcxt;
	MemoryContext oldcxt;
	Oid			storage_nsp = get_namespace_oid("folio_perf_data", true);

	fperf_init_srf(fcinfo);
	if (rsinfo->setDesc->natts != REL_STATS_COLS + 1)
		elog(ERROR, "incorrect number of output arguments");

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(NspCacheEntry);
	ctl.hcxt = CurrentMemoryContext;
	nspcache = hash_create("folio_perf namespace cache", 1024, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	rowcxt = AllocSetContextCreate(CurrentMemoryContext,
								   "folio_perf rel_stats row",
								   ALLOCSET_SMALL_SIZES);

	classrel = table_open(RelationRelationId, AccessShareLock);
	scan = systable_beginscan(classrel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_class cls = (Form_pg_class) GETSTRUCT(tup);
		NspCacheEntry *nsp;
		PgStat_StatTabEntry *tab;
		PgStat_StatTabEntry *toast = NULL;
		Datum		values[REL_STATS_COLS + 1];
		bool		nulls[REL_STATS_COLS + 1];
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

		tab = pgstat_fetch_stat_tabentry(cls->oid);
		if (cls->relkind != RELKIND_INDEX && OidIsValid(cls->reltoastrelid))
			toast = pgstat_fetch_stat_tabentry(cls->reltoastrelid);
		if (cls->relkind == RELKIND_INDEX)
		{
			HeapTuple	itup = SearchSysCache1(INDEXRELID,
											   ObjectIdGetDatum(cls->oid));

			if (HeapTupleIsValid(itup))
			{
				table_relid = ((Form_pg_index) GETSTRUCT(itup))->indrelid;
				ReleaseSysCache(itup);
			}
		}

		memset(c, 0, sizeof(c));
		if (tab)
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
		if (toast)
		{
			c[15] = toast->blocks_fetched - toast->blocks_hit;
			c[16] = toast->blocks_hit;
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
		{
			values[6 + i] = Int64GetDatum(c[i]);
			/* live/dead tuples are gauges, not counters: keep them out */
			if (i != 7 && i != 8)
				sig = (int64) ((uint64) sig + (uint64) c[i]);
		}
		/* ... but a tuple count that moves without a counter must show */
		sig = (int64) ((uint64) sig + (uint64) c[7] * 3 + (uint64) c[8] * 7);
		values[REL_STATS_COLS] = Int64GetDatum(sig);

		MemoryContextSwitchTo(oldcxt);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		MemoryContextReset(rowcxt);
	}
	systable_endscan(scan);
	table_close(classrel, AccessShareLock);

	PG_RETURN_VOID();
}
