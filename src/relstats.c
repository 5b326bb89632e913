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
#include "relstate.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_attribute.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "lib/dshash.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "pgstat.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/dsa.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/pgstat_internal.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "storage/bufmgr.h"
#include "access/heapam.h"
#include "storage/bufpage.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(folio_perf_rel_stats);
PG_FUNCTION_INFO_V1(folio_perf_rel_changes);
PG_FUNCTION_INFO_V1(folio_perf_rel_capture);
PG_FUNCTION_INFO_V1(folio_perf_rel_capture_base);

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
	int64		wsig;			/* rows written + vacuums: see row_wsig */
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

/* folio_perf.rel_scan */
int			fperf_rel_scan = FPERF_REL_SCAN_INCREMENTAL;

static const struct config_enum_entry rel_scan_options[] = {
	{"incremental", FPERF_REL_SCAN_INCREMENTAL, false},
	{"full", FPERF_REL_SCAN_FULL, false},
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

	DefineCustomEnumVariable("folio_perf.rel_scan",
							 "Which blocks of pg_class a snapshot reads.",
							 "incremental: only those that changed since the previous "
							 "snapshot, when its state is in shared memory (default); "
							 "full: every block.",
							 &fperf_rel_scan,
							 FPERF_REL_SCAN_INCREMENTAL,
							 rel_scan_options,
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
 * What can change a relation's size: rows inserted, updated and deleted,
 * and vacuums (reads do not).  The capture reads a size again only when
 * this moved (or the relfilenode did), in the table or, for an index, in
 * its table.
 */
static int64
row_wsig(const int64 *c)
{
	return (int64) ((uint64) c[3] + (uint64) c[4] + (uint64) c[5] +
					(uint64) c[9] + (uint64) c[10]);
}

/*
 * One pass over the shared statistics: for every relation entry of this
 * database that is not dropped, its signature and TOAST contribution.
 * Returns NULL if the shared statistics are not attached (then the caller
 * reads entry by entry).
 */
static relsig_hash *
rel_sig_pass(MemoryContext cxt, uint32 nexpected)
{
	relsig_hash *h;
	dshash_seq_status hstat;
	PgStatShared_HashEntry *p;

	if (pgStatLocal.shared_hash == NULL || pgStatLocal.dsa == NULL)
		return NULL;

	h = relsig_create(cxt, nexpected, NULL);
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
		e->wsig = row_wsig(c);
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

/*
 * What the previous snapshot saw of a relation is an FPerfRelState of a
 * table (relstate.h): folio_perf_rel_changes() gets relid, signature and
 * relfilenode as arrays; folio_perf_rel_capture() uses the database's
 * shared image or reads the whole of rel_last's rows.  Which entries the
 * scan saw is kept beside the table (one flag per slot), so that a shared
 * image is only read.
 */
typedef FPerfRelState LastRelEntry;

/* Up to this many index rows, look their tables up one by one. */
#define INDEX_LOOKUPS_BEFORE_MAP 2000

/*
 * Up to this many sizes of tables with a TOAST table, find the TOAST
 * relations by catalog probes (three per table); past it, map them all
 * with one scan of pg_class and one of pg_index (relsize.c).
 */
#define TOAST_SIZES_BEFORE_MAP 2000

/* What a scan returns: its columns are those of the SQL function. */
typedef enum RelScanMode
{
	RELSCAN_ALL,				/* folio_perf_rel_stats: every relation */
	RELSCAN_CHANGES,			/* folio_perf_rel_changes: + status */
	RELSCAN_CAPTURE				/* folio_perf_rel_capture: + the capture's columns */
} RelScanMode;

/*
 * The columns of folio_perf_rel_capture after folio_perf_rel_changes' 24
 * + status: the work table of a snapshot's capture (050_capture.sql).
 */
enum
{
	CAP_STATUS = REL_STATS_COLS + 1,
	CAP_TABLE_RELNAME,
	CAP_WSIG,
	CAP_REL_KEY_ID,
	CAP_LAST_RELID,
	CAP_LAST_RELFILENODE,
	CAP_LAST_WSIG,
	CAP_LAST_SIZE,
	CAP_LAST_LIVE,
	CAP_LAST_DEAD,
	CAP_SIZE_BYTES,
	CAP_NCOLS
};

/* Names of tables seen by the capture's scan, for its index rows. */
typedef struct TableNameEntry
{
	Oid			relid;			/* key */
	char		status;			/* simplehash's */
	NameData	relname;
} TableNameEntry;

#define SH_PREFIX tabname
#define SH_ELEMENT_TYPE TableNameEntry
#define SH_KEY_TYPE Oid
#define SH_KEY relid
#define SH_HASH_KEY(tb, key) murmurhash32(key)
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* An index row of the capture whose table the scan had not reached yet. */
typedef struct PendingRow
{
	Datum		values[CAP_NCOLS];
	bool		nulls[CAP_NCOLS];
	NameData	relname;
	NameData	table_relname;
} PendingRow;

/* The state of one scan. */
typedef struct RelScan
{
	ReturnSetInfo *rsinfo;
	RelScanMode mode;
	FPerfRelStateTable *last;	/* previous state, or NULL (RELSCAN_ALL) */
	bool	   *seen;			/* per slot of last: seen by the scan */
	uint64		n_seen;			/* entries of last the scan saw */
	relsig_hash *sigs;			/* the one pass, or NULL (lookups) */
	HTAB	   *indtables;		/* index -> table, built when worth it */
	int			index_lookups;
	tabname_hash *tabnames;		/* RELSCAN_CAPTURE */
	FPerfToastMap *toastmap;	/* RELSCAN_CAPTURE, when worth it */
	int			toast_sizes;	/* sizes read of tables with TOAST */
	MemoryContext scancxt;		/* lives as long as the scan */
	List	   *pending;		/* RELSCAN_CAPTURE: PendingRow * */
	Relation	classrel;
	/* per row */
	HTAB	   *nspcache;
	NspCacheEntry *nsp;			/* the last row's schema */
	Oid			nsp_oid;
	Oid			storage_nsp;
	MemoryContext rowcxt;		/* reset every row */
	Datum		values[CAP_NCOLS];
	bool		nulls[CAP_NCOLS];
	/* the pass over pg_class's blocks (RELSCAN_CAPTURE) */
	bool		incremental;	/* only blocks that changed are read */
	FPerfRelBlock *blocks;		/* what the pass saw of every block */
	BlockNumber nblocks;
	bool	   *reread;			/* incremental: block read again */
	BlockNumber blocks_read;
	bool		tabnames_partial;	/* tables of unread blocks are not in tabnames */
} RelScan;

/* The table of an index (pg_index), InvalidOid if none is found. */
static Oid
index_table(RelScan *rs, Oid indexrelid, MemoryContext scancxt)
{
	if (rs->indtables == NULL && ++rs->index_lookups > INDEX_LOOKUPS_BEFORE_MAP)
	{
		/* the map outlives the row: build it in the scan's context */
		MemoryContext oldcxt = MemoryContextSwitchTo(scancxt);

		rs->indtables = index_table_map();
		MemoryContextSwitchTo(oldcxt);
	}
	if (rs->indtables)
	{
		IndexTableEntry *ie = hash_search(rs->indtables, &indexrelid,
										  HASH_FIND, NULL);

		return ie ? ie->indrelid : InvalidOid;
	}
	else
	{
		HeapTuple	itup = SearchSysCache1(INDEXRELID,
										   ObjectIdGetDatum(indexrelid));
		Oid			table_relid = InvalidOid;

		if (HeapTupleIsValid(itup))
		{
			table_relid = ((Form_pg_index) GETSTRUCT(itup))->indrelid;
			ReleaseSysCache(itup);
		}
		return table_relid;
	}
}

/*
 * Whether the table of a changed index can have changed size since the
 * previous snapshot: its rows written or vacuumed (row_wsig) moved, or it
 * is new.  From the one pass when there was one, else from its entry.
 * (The SQL rule this replaces asked the same of the table's row among the
 * changed ones; a table whose signature stayed while its row_wsig moved,
 * which only gauges moving against counters can make, now counts as
 * written: its indexes' sizes are read rather than carried over.)
 */
static bool
table_written(RelScan *rs, Oid table_relid)
{
	LastRelEntry *prev;
	int64		wsig;

	if (!OidIsValid(table_relid))
		return true;
	prev = fperf_relstate_lookup(rs->last, table_relid);
	if (prev == NULL || (prev->nulls & FPERF_RS_NULL_WSIG))
		return true;
	if (rs->sigs != NULL)
	{
		RelSigEntry *se = relsig_lookup(rs->sigs, table_relid);

		wsig = se ? se->wsig : 0;
	}
	else
	{
		PgStat_StatTabEntry *tab = fperf_fetch_tabentry(false, table_relid);
		int64		c[17];

		memset(c, 0, sizeof(c));
		if (tab)
			tab_counters(tab, c);
		wsig = row_wsig(c);
	}
	return wsig != prev->wsig;
}

/* The previous-state columns of a capture row, from its rel_last entry. */
static void
put_last_state(Datum *values, bool *nulls, const LastRelEntry *e)
{
	values[CAP_REL_KEY_ID] = Int64GetDatum(e->rel_key_id);
	values[CAP_LAST_RELID] = ObjectIdGetDatum(e->relid);
	values[CAP_LAST_RELFILENODE] = ObjectIdGetDatum(e->relfilenode);
	nulls[CAP_REL_KEY_ID] = nulls[CAP_LAST_RELID] = nulls[CAP_LAST_RELFILENODE] = false;
	values[CAP_LAST_WSIG] = Int64GetDatum(e->wsig);
	nulls[CAP_LAST_WSIG] = (e->nulls & FPERF_RS_NULL_WSIG) != 0;
	values[CAP_LAST_SIZE] = Int64GetDatum(e->size);
	nulls[CAP_LAST_SIZE] = (e->nulls & FPERF_RS_NULL_SIZE) != 0;
	values[CAP_LAST_LIVE] = Int64GetDatum(e->live);
	nulls[CAP_LAST_LIVE] = (e->nulls & FPERF_RS_NULL_LIVE) != 0;
	values[CAP_LAST_DEAD] = Int64GetDatum(e->dead);
	nulls[CAP_LAST_DEAD] = (e->nulls & FPERF_RS_NULL_DEAD) != 0;
}

/* The map of TOAST relations, made in the scan's memory context. */
static FPerfToastMap *
toast_map_in(RelScan *rs)
{
	MemoryContext oldcxt = MemoryContextSwitchTo(rs->scancxt);
	FPerfToastMap *map = fperf_toast_map_build(rs->classrel);

	MemoryContextSwitchTo(oldcxt);
	return map;
}

/*
 * Fill the capture's columns of a new or changed relation's row: the
 * previous state, and the size, read from the files only where it can
 * have changed (new, new relfilenode, rows written in the table) and
 * otherwise the previous snapshot's (reads do not change sizes).
 */
static void
capture_columns(RelScan *rs, Form_pg_class cls, LastRelEntry *prev,
				Oid table_relid, const int64 *c, Datum *values, bool *nulls)
{
	int64		wsig = row_wsig(c);
	bool		written;
	int64		size;

	values[CAP_WSIG] = Int64GetDatum(wsig);
	nulls[CAP_REL_KEY_ID] = nulls[CAP_LAST_RELID] = nulls[CAP_LAST_RELFILENODE] =
		nulls[CAP_LAST_WSIG] = nulls[CAP_LAST_SIZE] = nulls[CAP_LAST_LIVE] =
		nulls[CAP_LAST_DEAD] = (prev == NULL);
	if (prev)
		put_last_state(values, nulls, prev);

	if (cls->relkind == RELKIND_INDEX)
		written = table_written(rs, table_relid);
	else
		written = (prev == NULL || (prev->nulls & FPERF_RS_NULL_WSIG) ||
				   prev->wsig != wsig);

	if (prev && !(prev->nulls & FPERF_RS_NULL_SIZE) &&
		prev->relfilenode == cls->relfilenode && !written)
	{
		values[CAP_SIZE_BYTES] = Int64GetDatum(prev->size);
		nulls[CAP_SIZE_BYTES] = false;
	}
	else
	{
		/* past TOAST_SIZES_BEFORE_MAP tables with TOAST, map them at once */
		if (rs->toastmap == NULL && cls->relkind != RELKIND_INDEX &&
			OidIsValid(cls->reltoastrelid) &&
			++rs->toast_sizes > TOAST_SIZES_BEFORE_MAP)
			rs->toastmap = toast_map_in(rs);
		if (fperf_relation_size_of(rs->classrel, cls, rs->toastmap, &size))
		{
			values[CAP_SIZE_BYTES] = Int64GetDatum(size);
			nulls[CAP_SIZE_BYTES] = false;
		}
		else
			nulls[CAP_SIZE_BYTES] = true;
	}
}

/*
 * Tell relstate.c what rel_last gets for a new or changed relation's row
 * (capture() writes the same columns of the same row): its publish makes
 * the next snapshot's state of it.
 */
static void
record_change(const LastRelEntry *prev, const Datum *values, const bool *nulls,
			  BlockNumber blkno, Oid toastrelid)
{
	FPerfRelState v;

	memset(&v, 0, sizeof(v));
	v.relid = DatumGetObjectId(values[0]);
	v.relfilenode = DatumGetObjectId(values[1]);
	v.blkno = blkno;
	v.toastrelid = toastrelid;
	v.sig = DatumGetInt64(values[REL_STATS_COLS]);
	v.rel_key_id = prev ? prev->rel_key_id : 0;
	v.wsig = DatumGetInt64(values[CAP_WSIG]);
	if (nulls[CAP_SIZE_BYTES])
		v.nulls |= FPERF_RS_NULL_SIZE;
	else
		v.size = DatumGetInt64(values[CAP_SIZE_BYTES]);
	v.live = DatumGetInt64(values[6 + 7]);
	v.dead = DatumGetInt64(values[6 + 8]);
	fperf_relstate_record(prev ? 'c' : 'n', &v);
}

/* An unchanged relation whose pg_class row is elsewhere now. */
static void
record_moved(const LastRelEntry *prev, BlockNumber blkno, Oid toastrelid)
{
	FPerfRelState v = *prev;

	v.blkno = blkno;
	v.toastrelid = toastrelid;
	fperf_relstate_record('b', &v);
}

/*
 * Put out a capture row; an index row whose table's name the scan has not
 * seen yet waits until the end of the scan (put_pending_rows).
 */
static void
put_capture_row(RelScan *rs, Form_pg_class cls, Oid table_relid,
				Datum *values, bool *nulls, MemoryContext scancxt)
{
	TableNameEntry *te = NULL;

	nulls[CAP_TABLE_RELNAME] = true;
	if (OidIsValid(table_relid))
	{
		te = tabname_lookup(rs->tabnames, table_relid);
		if (te == NULL)
		{
			MemoryContext oldcxt = MemoryContextSwitchTo(scancxt);
			PendingRow *p = palloc(sizeof(PendingRow));

			memcpy(p->values, values, sizeof(p->values));
			memcpy(p->nulls, nulls, sizeof(p->nulls));
			p->relname = cls->relname;
			p->values[4] = NameGetDatum(&p->relname);
			rs->pending = lappend(rs->pending, p);
			MemoryContextSwitchTo(oldcxt);
			return;
		}
		values[CAP_TABLE_RELNAME] = NameGetDatum(&te->relname);
		nulls[CAP_TABLE_RELNAME] = false;
	}
	tuplestore_putvalues(rs->rsinfo->setResult, rs->rsinfo->setDesc, values, nulls);
}

/* The waiting index rows, with their tables' names (NULL if none). */
static void
put_pending_rows(RelScan *rs)
{
	ListCell   *lc;

	foreach(lc, rs->pending)
	{
		PendingRow *p = (PendingRow *) lfirst(lc);
		TableNameEntry *te;

		te = tabname_lookup(rs->tabnames, DatumGetObjectId(p->values[5]));
		if (te)
		{
			p->values[CAP_TABLE_RELNAME] = NameGetDatum(&te->relname);
			p->nulls[CAP_TABLE_RELNAME] = false;
		}
		else if (rs->tabnames_partial)
		{
			/* the table's block was not read: its row from the syscache */
			HeapTuple	tup = SearchSysCache1(RELOID, p->values[5]);

			if (HeapTupleIsValid(tup))
			{
				Form_pg_class tc = (Form_pg_class) GETSTRUCT(tup);

				if ((tc->relkind == RELKIND_RELATION || tc->relkind == RELKIND_MATVIEW) &&
					tc->relpersistence != RELPERSISTENCE_TEMP)
				{
					p->table_relname = tc->relname;
					p->values[CAP_TABLE_RELNAME] = NameGetDatum(&p->table_relname);
					p->nulls[CAP_TABLE_RELNAME] = false;
				}
				ReleaseSysCache(tup);
			}
		}
		tuplestore_putvalues(rs->rsinfo->setResult, rs->rsinfo->setDesc,
							 p->values, p->nulls);
	}
}

/* Relations of the previous state that the scan did not see: dropped. */
static void
put_dropped_rows(RelScan *rs)
{
	LastRelEntry *e;
	Datum		values[CAP_NCOLS];
	bool		nulls[CAP_NCOLS];
	uint32		k;

	/* the usual case: every relation is still there */
	if (rs->n_seen == rs->last->members)
		return;
	for (k = 0; k < rs->last->capacity; k++)
	{
		e = &rs->last->slots[k];
		if (e->relid == InvalidOid || rs->seen[k])
			continue;
		memset(nulls, true, sizeof(nulls));
		values[0] = ObjectIdGetDatum(e->relid);
		nulls[0] = false;
		values[CAP_STATUS] = CharGetDatum('d');
		nulls[CAP_STATUS] = false;
		if (rs->mode == RELSCAN_CAPTURE)
		{
			put_last_state(values, nulls, e);
			fperf_relstate_record('d', e);
		}
		tuplestore_putvalues(rs->rsinfo->setResult, rs->rsinfo->setDesc, values, nulls);
	}
}

/* Mark an entry of the previous state seen by the scan. */
static inline void
mark_seen(RelScan *rs, LastRelEntry *prev)
{
	uint32		k = prev - rs->last->slots;

	if (!rs->seen[k])
	{
		rs->seen[k] = true;
		rs->n_seen++;
	}
}

/*
 * Whether a relation is unchanged since the previous state, judged from
 * the one pass's signature (before any entry is read); marks it seen.
 */
static bool
unchanged_by_pass(RelScan *rs, Form_pg_class cls, LastRelEntry **prevp)
{
	RelSigEntry *se = relsig_lookup(rs->sigs, cls->oid);
	RelSigEntry *te = NULL;
	LastRelEntry *prev;
	int64		sig;

	if (cls->relkind != RELKIND_INDEX && OidIsValid(cls->reltoastrelid))
		te = relsig_lookup(rs->sigs, cls->reltoastrelid);
	sig = (int64) ((uint64) (se ? se->sig : 0) +
				   (uint64) (te ? te->toast_sig : 0));
	prev = fperf_relstate_lookup(rs->last, cls->oid);
	*prevp = prev;
	if (prev == NULL)
		return false;
	mark_seen(rs, prev);
	return prev->sig == sig && prev->relfilenode == cls->relfilenode;
}

/*
 * One row of pg_class (a heap tuple of a block, or of the syscache for a
 * relation the incremental pass did not read a block of): compared with
 * the previous state and returned if new or changed, with status 'n', 'c'
 * in the column after the signature; in a capture an unchanged relation
 * whose row moved is recorded for the publish.
 */
static void
scan_row(RelScan *rs, HeapTuple tup)
{
	Form_pg_class cls = (Form_pg_class) GETSTRUCT(tup);
	BlockNumber blkno = ItemPointerGetBlockNumber(&tup->t_self);
	PgStat_StatTabEntry *tab;
	PgStat_StatTabEntry *toast = NULL;
	LastRelEntry *prev = NULL;
	int64		c[17];
	int64		sig = 0;
	Oid			table_relid = InvalidOid;
	MemoryContext oldcxt;
	Datum	   *values = rs->values;
	bool	   *nulls = rs->nulls;
	int			i;

	if (cls->relkind != RELKIND_RELATION &&
		cls->relkind != RELKIND_MATVIEW &&
		cls->relkind != RELKIND_INDEX)
		return;
	if (cls->relpersistence == RELPERSISTENCE_TEMP)
		return;
	/* a schema's relations mostly come together: one entry cached */
	if (rs->nsp == NULL || cls->relnamespace != rs->nsp_oid)
	{
		rs->nsp = nsp_lookup(rs->nspcache, cls->relnamespace, rs->storage_nsp);
		rs->nsp_oid = cls->relnamespace;
	}
	if (rs->nsp->skip)
		return;

	if (rs->tabnames && cls->relkind != RELKIND_INDEX)
	{
		bool		found;
		TableNameEntry *te = tabname_insert(rs->tabnames, cls->oid, &found);

		te->relname = cls->relname;
	}

	/* the one pass's signature decides whether to read the entry */
	if (rs->sigs != NULL && unchanged_by_pass(rs, cls, &prev))
	{
		if (rs->mode == RELSCAN_CAPTURE &&
			(prev->blkno != blkno || prev->toastrelid != cls->reltoastrelid))
			record_moved(prev, blkno, cls->reltoastrelid);
		return;
	}

	oldcxt = MemoryContextSwitchTo(rs->rowcxt);

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

	if (rs->last && rs->sigs == NULL)
	{
		prev = fperf_relstate_lookup(rs->last, cls->oid);
		if (prev)
		{
			mark_seen(rs, prev);
			if (prev->sig == sig && prev->relfilenode == cls->relfilenode)
			{
				/* unchanged since the previous snapshot */
				if (rs->mode == RELSCAN_CAPTURE &&
					(prev->blkno != blkno || prev->toastrelid != cls->reltoastrelid))
					record_moved(prev, blkno, cls->reltoastrelid);
				MemoryContextSwitchTo(oldcxt);
				MemoryContextReset(rs->rowcxt);
				return;
			}
		}
	}

	if (cls->relkind == RELKIND_INDEX)
		table_relid = index_table(rs, cls->oid, rs->scancxt);

	memset(nulls, false, sizeof(bool) * CAP_NCOLS);
	values[0] = ObjectIdGetDatum(cls->oid);
	values[1] = ObjectIdGetDatum(cls->relfilenode);
	values[2] = CharGetDatum(cls->relkind);
	values[3] = NameGetDatum(&rs->nsp->nspname);
	values[4] = NameGetDatum(&cls->relname);
	values[5] = ObjectIdGetDatum(table_relid);
	nulls[5] = !OidIsValid(table_relid);
	for (i = 0; i < 17; i++)
		values[6 + i] = Int64GetDatum(c[i]);
	values[REL_STATS_COLS] = Int64GetDatum(sig);
	if (rs->last)
		values[REL_STATS_COLS + 1] = CharGetDatum(prev ? 'c' : 'n');

	if (rs->mode == RELSCAN_CAPTURE)
	{
		capture_columns(rs, cls, prev, table_relid, c, values, nulls);
		record_change(prev, values, nulls, blkno, cls->reltoastrelid);
		put_capture_row(rs, cls, table_relid, values, nulls, rs->scancxt);
	}
	else
		tuplestore_putvalues(rs->rsinfo->setResult, rs->rsinfo->setDesc, values, nulls);
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(rs->rowcxt);
}

/*
 * May a row of this tuple become visible or invisible later without its
 * block changing?  Yes if a transaction that inserted or deleted it could
 * still be running when snap was taken (not older than its xmin): it may
 * commit or abort after the pass.  Frozen, and aborted or committed before
 * every running transaction, is settled.
 */
static bool
tuple_uncertain(HeapTupleHeader t, Snapshot snap)
{
	if (!HeapTupleHeaderXminFrozen(t) && !(t->t_infomask & HEAP_XMIN_INVALID))
	{
		TransactionId xmin = HeapTupleHeaderGetRawXmin(t);

		if (TransactionIdIsNormal(xmin) && TransactionIdFollowsOrEquals(xmin, snap->xmin))
			return true;
	}
	if (!(t->t_infomask & HEAP_XMAX_INVALID) && !HEAP_XMAX_IS_LOCKED_ONLY(t->t_infomask))
	{
		TransactionId xmax;

		if (t->t_infomask & HEAP_XMAX_IS_MULTI)
			return true;
		xmax = HeapTupleHeaderGetRawXmax(t);
		if (TransactionIdIsNormal(xmax) && TransactionIdFollowsOrEquals(xmax, snap->xmin))
			return true;
	}
	return false;
}

/*
 * Read one block of pg_class (buf, pinned): its LSN and whether a row on it
 * is uncertain, under a share lock, then every row visible to snap, with
 * only the pin held (a pinned block's tuples do not move).
 */
static void
scan_block(RelScan *rs, Buffer buf, BlockNumber blkno, Snapshot snap,
		   FPerfRelBlock *out)
{
	Page		page;
	OffsetNumber vis[MaxHeapTuplesPerPage];
	int			nvis = 0;
	bool		uncertain = false;
	int			i;

	LockBuffer(buf, BUFFER_LOCK_SHARE);
	page = BufferGetPage(buf);
	out->lsn = PageGetLSN(page);
	if (!PageIsNew(page))
	{
		OffsetNumber maxoff = PageGetMaxOffsetNumber(page);
		OffsetNumber off;

		for (off = FirstOffsetNumber; off <= maxoff; off = OffsetNumberNext(off))
		{
			ItemId		lp = PageGetItemId(page, off);
			HeapTupleData tup;

			if (!ItemIdIsNormal(lp))
				continue;
			tup.t_data = (HeapTupleHeader) PageGetItem(page, lp);
			tup.t_len = ItemIdGetLength(lp);
			tup.t_tableOid = RelationRelationId;
			ItemPointerSet(&tup.t_self, blkno, off);
			if (!uncertain && tuple_uncertain(tup.t_data, snap))
				uncertain = true;
			if (HeapTupleSatisfiesVisibility(&tup, snap, buf))
				vis[nvis++] = off;
		}
	}
	LockBuffer(buf, BUFFER_LOCK_UNLOCK);
	out->uncertain = uncertain;
	rs->blocks_read++;

	for (i = 0; i < nvis; i++)
	{
		ItemId		lp = PageGetItemId(page, vis[i]);
		HeapTupleData tup;

		tup.t_data = (HeapTupleHeader) PageGetItem(page, lp);
		tup.t_len = ItemIdGetLength(lp);
		tup.t_tableOid = RelationRelationId;
		ItemPointerSet(&tup.t_self, blkno, vis[i]);
		scan_row(rs, &tup);
	}
}

/*
 * The incremental pass's other half: relations of the previous state whose
 * pg_class block was not read (their rows did not change).  Compared by
 * their statistics' signature alone; the blocks of those whose signature
 * moved are then read as changed blocks are (a block read costs less than
 * a catalog lookup per relation when many moved, and reads each row once).
 */
static void
scan_unread(RelScan *rs, Snapshot snap)
{
	FPerfRelStateTable *last = rs->last;
	bool	   *want = NULL;
	bool		any = false;
	BlockNumber blk;
	uint32		k;

	for (k = 0; k < last->capacity; k++)
	{
		LastRelEntry *e = &last->slots[k];
		RelSigEntry *se;
		RelSigEntry *te = NULL;
		int64		sig;

		if (e->relid == InvalidOid || rs->seen[k])
			continue;
		/* on a block read again (or gone): seen there, or dropped */
		if (e->blkno >= rs->nblocks || rs->reread[e->blkno])
			continue;
		se = relsig_lookup(rs->sigs, e->relid);
		if (OidIsValid(e->toastrelid))
			te = relsig_lookup(rs->sigs, e->toastrelid);
		sig = (int64) ((uint64) (se ? se->sig : 0) + (uint64) (te ? te->toast_sig : 0));
		if (sig == e->sig)
		{
			rs->seen[k] = true;
			rs->n_seen++;
			continue;
		}
		if (want == NULL)
			want = MemoryContextAllocExtended(rs->scancxt, Max(rs->nblocks, 1),
											  MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		want[e->blkno] = true;
		any = true;
	}
	if (!any)
		return;
	for (blk = 0; blk < rs->nblocks; blk++)
	{
		Buffer		buf;

		if (!want[blk])
			continue;
		CHECK_FOR_INTERRUPTS();
		buf = ReadBufferExtended(rs->classrel, MAIN_FORKNUM, blk, RBM_NORMAL, NULL);
		scan_block(rs, buf, blk, snap, &rs->blocks[blk]);
		ReleaseBuffer(buf);
	}
}

/*
 * The pass over pg_class's blocks.  Every block is read, unless this is a
 * capture whose previous state is a shared image that recorded pg_class's
 * blocks (and pg_class kept its storage): then only blocks whose LSN moved,
 * that were uncertain, or that are new are read, and the relations on the
 * others are compared by their signature (scan_unread).  Every change to a
 * pg_class row (insert, update, delete, in-place update, pruning) is WAL-
 * logged and moves its block's LSN; a row whose visibility can still change
 * without that (a transaction in progress) marks its block uncertain.
 */
static void
scan_class(RelScan *rs)
{
	Snapshot	snap;
	BlockNumber nblocks;
	BlockNumber blk;
	const FPerfRelBlock *old = NULL;
	BlockNumber old_n = 0;
	Oid			old_rfn = InvalidOid;
	Oid			class_rfn = fperf_rel_filenumber(rs->classrel);

	/* the snapshot first: a block written after it is read is not visible */
	snap = RegisterSnapshot(GetCatalogSnapshot(RelationRelationId));
	nblocks = RelationGetNumberOfBlocks(rs->classrel);

	if (rs->mode == RELSCAN_CAPTURE)
	{
		rs->blocks = MemoryContextAllocExtended(TopTransactionContext,
												Max(nblocks, 1) * sizeof(FPerfRelBlock),
												MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
		rs->nblocks = nblocks;
		if (rs->sigs != NULL && fperf_rel_scan == FPERF_REL_SCAN_INCREMENTAL)
			old = fperf_relstate_blocks(&old_n, &old_rfn);
		if (old != NULL && OidIsValid(class_rfn) && old_rfn == class_rfn)
		{
			rs->incremental = true;
			rs->reread = MemoryContextAllocExtended(rs->scancxt, Max(nblocks, 1),
													MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
			/* tables on unread blocks: their names come from the syscache */
			rs->tabnames_partial = true;
		}
	}

	for (blk = 0; blk < nblocks; blk++)
	{
		Buffer		buf;
		FPerfRelBlock dummy;

		CHECK_FOR_INTERRUPTS();
		buf = ReadBufferExtended(rs->classrel, MAIN_FORKNUM, blk, RBM_NORMAL, NULL);
		if (rs->incremental && blk < old_n && !old[blk].uncertain &&
			BufferGetLSNAtomic(buf) == old[blk].lsn)
		{
			rs->blocks[blk] = old[blk];
			ReleaseBuffer(buf);
			continue;
		}
		if (rs->incremental)
			rs->reread[blk] = true;
		scan_block(rs, buf, blk, snap, rs->blocks ? &rs->blocks[blk] : &dummy);
		ReleaseBuffer(buf);
	}
	if (rs->incremental)
		scan_unread(rs, snap);
	UnregisterSnapshot(snap);

	if (rs->mode == RELSCAN_CAPTURE)
	{
		fperf_relstate_record_blocks(rs->blocks, rs->nblocks, class_rfn);
		fperf_relstate_note_pass(rs->blocks_read, rs->incremental);
	}
}

/*
 * The scan behind folio_perf_rel_stats(), folio_perf_rel_changes() and
 * folio_perf_rel_capture().  With last == NULL every relation is returned;
 * otherwise only relations that are new, whose signature or relfilenode
 * differ from last, and (after the scan) those of last that were not seen,
 * with status 'n', 'c', 'd' in the column after the signature.
 */
static void
rel_stats_scan(ReturnSetInfo *rsinfo, FPerfRelStateTable *last, RelScanMode mode)
{
	RelScan		rs;
	HASHCTL		ctl;
	uint32		nrels;
	int			ncols;
	MemoryContext scancxt = CurrentMemoryContext;

	ncols = mode == RELSCAN_ALL ? REL_STATS_COLS + 1 :
		mode == RELSCAN_CHANGES ? REL_STATS_COLS + 2 : CAP_NCOLS;
	if (rsinfo->setDesc->natts != ncols)
		elog(ERROR, "incorrect number of output arguments");

	memset(&rs, 0, sizeof(rs));
	rs.scancxt = scancxt;
	rs.rsinfo = rsinfo;
	rs.mode = mode;
	rs.last = last;
	if (last)
		rs.seen = MemoryContextAllocExtended(scancxt, last->capacity,
											 MCXT_ALLOC_HUGE | MCXT_ALLOC_ZERO);
	rs.storage_nsp = get_namespace_oid("folio_perf_data", true);

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(NspCacheEntry);
	ctl.hcxt = CurrentMemoryContext;
	rs.nspcache = hash_create("folio_perf namespace cache", 1024, &ctl,
							  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	/*
	 * The hashes are made at the catalog's size (pg_class's own estimate),
	 * not grown to it: growing one rehashes and zeroes it again at every
	 * doubling.
	 */
	rs.classrel = table_open(RelationRelationId, AccessShareLock);
	nrels = (rs.classrel->rd_rel->reltuples > 1024 &&
			 rs.classrel->rd_rel->reltuples < 8e6) ?
		(uint32) rs.classrel->rd_rel->reltuples : 1024;

	/* every relation is returned: map all indexes to their tables at once */
	if (last == NULL)
		rs.indtables = index_table_map();
	if (mode == RELSCAN_CAPTURE)
		rs.tabnames = tabname_create(CurrentMemoryContext, Max(nrels / 4, 1024), NULL);

	rs.rowcxt = AllocSetContextCreate(CurrentMemoryContext,
									  "folio_perf rel_stats row",
									  ALLOCSET_SMALL_SIZES);

	/* compare against the previous state from one pass (see header) */
	if (last != NULL && fperf_rel_stats_read == FPERF_REL_STATS_PASS)
		rs.sigs = rel_sig_pass(CurrentMemoryContext, nrels);

	scan_class(&rs);
	table_close(rs.classrel, AccessShareLock);

	if (rs.pending)
		put_pending_rows(&rs);
	if (last)
		put_dropped_rows(&rs);
}

/* An empty table of previous states, for n of them. */
static FPerfRelStateTable *
last_state_hash(MemoryContext cxt, int n)
{
	return fperf_relstate_create(cxt, (uint32) Max(n, 0));
}

/* The attribute number of a column of rel_last, checked for its type. */
static AttrNumber
rel_last_attnum(Relation rel, const char *name, Oid type)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			i;

	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0)
		{
			if (att->atttypid != type)
				break;
			return att->attnum;
		}
	}
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("folio_perf_data.rel_last has no column \"%s\" of type %s",
					name, format_type_be(type)),
			 errhint("Update the folio_perf extension (ALTER EXTENSION folio_perf UPDATE).")));
	return InvalidAttrNumber;	/* keep the compiler quiet */
}

/*
 * How many relations the previous state that the last
 * folio_perf_rel_capture() of this transaction compared with held, and
 * their bytes: what the capture used to count and sum over rel_last in a
 * second scan (folio_perf_rel_capture_base).  Forgotten when the
 * transaction ends.
 */
static bool capture_base_valid = false;
static int64 capture_base_n = 0;
static int64 capture_base_bytes = 0;
static bool capture_base_callback = false;

static void
capture_base_xact_callback(XactEvent event, void *arg)
{
	/* any event: the transaction is ending (or about to) */
	capture_base_valid = false;
}

/*
 * folio_perf_data.rel_last, found in folio_perf_data by name (never through
 * search_path), locked, and checked for the caller's SELECT privilege.
 */
static Oid
rel_last_locked(void)
{
	Oid			nsp;
	Oid			relid;
	AclResult	aclresult;

	/*
	 * Looked up by its schema (never search_path), locked, found again, and
	 * only then its privilege checked: no drop and re-create between the
	 * check and the read.
	 */
	nsp = get_namespace_oid("folio_perf_data", true);
	relid = OidIsValid(nsp) ? get_relname_relid("rel_last", nsp) : InvalidOid;
	if (OidIsValid(relid))
	{
		LockRelationOid(relid, AccessShareLock);
		/* still that table once held (not dropped, renamed or moved) */
		if (get_rel_relkind(relid) != RELKIND_RELATION ||
			get_rel_namespace(relid) != nsp ||
			get_relname_relid("rel_last", nsp) != relid)
		{
			UnlockRelationOid(relid, AccessShareLock);
			relid = InvalidOid;
		}
	}
	if (!OidIsValid(relid))
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("relation \"folio_perf_data.rel_last\" does not exist"),
				 errhint("Install the folio_perf extension in this database.")));
	aclresult = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, OBJECT_TABLE, "rel_last");
	return relid;
}

/* Count the state's relations and bytes for folio_perf_rel_capture_base. */
static void
capture_base_set(int64 n, int64 bytes)
{
	if (!capture_base_callback)
	{
		RegisterXactCallback(capture_base_xact_callback, NULL);
		capture_base_callback = true;
	}
	capture_base_n = n;
	capture_base_bytes = bytes;
	capture_base_valid = true;
}

/*
 * The previous state of this database's relations (local capture: target
 * NULL), read from folio_perf_data.rel_last (relid, locked and checked by
 * rel_last_locked) in one sequential scan into a table in cxt: what the SQL
 * of the capture did as array_agg over rel_last, then a lookup per changed
 * relation.
 */
static FPerfRelStateTable *
last_state_from_rel_last(Oid relid, MemoryContext cxt)
{
	enum
	{
		L_KEY, L_DBID, L_TARGET, L_RELID, L_RFN, L_SIG, L_WSIG, L_SIZE,
		L_LIVE, L_DEAD, L_NCOLS
	};
	static const char *const names[L_NCOLS] = {
		"rel_key_id", "dbid", "target_id", "relid", "relfilenode", "sig",
		"wsig", "size_bytes", "live_tup", "dead_tup"
	};
	static const Oid types[L_NCOLS] = {
		INT8OID, OIDOID, INT4OID, OIDOID, OIDOID, INT8OID,
		INT8OID, INT8OID, INT8OID, INT8OID
	};
	AttrNumber	att[L_NCOLS];
	Relation	rel;
	TableScanDesc scan;
	TupleTableSlot *slot;
	FPerfRelStateTable *last;
	int			i;

	rel = table_open(relid, NoLock);
	for (i = 0; i < L_NCOLS; i++)
		att[i] = rel_last_attnum(rel, names[i], types[i]);
	/* sized from the table's estimate (-1 before its first vacuum) */
	last = last_state_hash(cxt, rel->rd_rel->reltuples > 0 && rel->rd_rel->reltuples < 1e8 ?
						   (int) rel->rd_rel->reltuples : 0);

	slot = table_slot_create(rel, NULL);
	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		Datum	   *v;
		bool	   *isnull;
		LastRelEntry *e;
		Oid			r;
		bool		found;

		slot_getallattrs(slot);
		v = slot->tts_values;
		isnull = slot->tts_isnull;
#define COL(k) (att[k] - 1)
		if (isnull[COL(L_DBID)] || DatumGetObjectId(v[COL(L_DBID)]) != MyDatabaseId)
			continue;
		/* the capture's coalesce(target_id, 0) = 0 */
		if (!isnull[COL(L_TARGET)] && DatumGetInt32(v[COL(L_TARGET)]) != 0)
			continue;
		if (isnull[COL(L_KEY)] || isnull[COL(L_RELID)] || isnull[COL(L_RFN)] ||
			isnull[COL(L_SIG)])
			continue;
		r = DatumGetObjectId(v[COL(L_RELID)]);
		e = fperf_relstate_insert(last, r, &found);
		if (found)
			last->bytes -= e->size;
		e->rel_key_id = DatumGetInt64(v[COL(L_KEY)]);
		e->relfilenode = DatumGetObjectId(v[COL(L_RFN)]);
		e->sig = DatumGetInt64(v[COL(L_SIG)]);
		e->nulls = 0;
#define GET(k, flag, field) \
		do { \
			if (isnull[COL(k)]) { e->nulls |= (flag); e->field = 0; } \
			else e->field = DatumGetInt64(v[COL(k)]); \
		} while (0)
		GET(L_WSIG, FPERF_RS_NULL_WSIG, wsig);
		GET(L_SIZE, FPERF_RS_NULL_SIZE, size);
		GET(L_LIVE, FPERF_RS_NULL_LIVE, live);
		GET(L_DEAD, FPERF_RS_NULL_DEAD, dead);
#undef GET
#undef COL
		last->bytes += e->size;
	}
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	table_close(rel, AccessShareLock);
	return last;
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
	rel_stats_scan((ReturnSetInfo *) fcinfo->resultinfo, NULL, RELSCAN_ALL);
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
	FPerfRelStateTable *last;
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

	last = last_state_hash(CurrentMemoryContext, n);
	for (i = 0; i < n; i++)
	{
		LastRelEntry *e;
		Oid			relid;
		bool		found;

		if (relid_nulls[i] || sig_nulls[i] || rfn_nulls[i] ||
			DatumGetObjectId(relids[i]) == InvalidOid)
			continue;
		relid = DatumGetObjectId(relids[i]);
		e = fperf_relstate_insert(last, relid, &found);
		e->sig = DatumGetInt64(sigs[i]);
		e->relfilenode = DatumGetObjectId(rfns[i]);
	}

	rel_stats_scan((ReturnSetInfo *) fcinfo->resultinfo, last, RELSCAN_CHANGES);
	PG_RETURN_VOID();
}

/*
 * folio_perf_rel_capture() RETURNS TABLE(<the columns of
 *	 folio_perf_rel_changes>, table_relname name, wsig bigint,
 *	 rel_key_id bigint, last_relid oid, last_relfilenode oid,
 *	 last_wsig bigint, last_size bigint, last_live bigint,
 *	 last_dead bigint, size_bytes bigint): the relations part of a local
 *	 snapshot in one call; prev_snap (the argument, NULL for none) is the
 *	 database's snapshot before this one.  The previous state is this
 *	 database's shared image if it is prev_snap's (relstate.c), else its
 *	 rows of folio_perf_data.rel_last (read here, not passed in); what comes back
 *	 is every new, changed and dropped relation with its previous state
 *	 and its size, read from the files only where it can have changed:
 *	 the rows of the capture's work table (050_capture.sql), with no join
 *	 to rel_last, no window over the rows and no SQL call per row.
 */
Datum
folio_perf_rel_capture(PG_FUNCTION_ARGS)
{
	FPerfRelStateTable *last;
	int64		prev_snap = (PG_NARGS() > 0 && !PG_ARGISNULL(0)) ? PG_GETARG_INT64(0) : 0;
	Oid			rel_last;

	fperf_init_srf(fcinfo);
	rel_last = rel_last_locked();
	capture_base_valid = false;
	last = fperf_relstate_image(prev_snap, rel_last);
	if (last == NULL)
		last = last_state_from_rel_last(rel_last,
										fperf_relstate_enabled() ?
										TopTransactionContext : CurrentMemoryContext);
	capture_base_set(last->members, last->bytes);
	fperf_relstate_begin_capture(last);
	rel_stats_scan((ReturnSetInfo *) fcinfo->resultinfo, last, RELSCAN_CAPTURE);
	PG_RETURN_VOID();
}

/*
 * folio_perf_rel_capture_base(OUT n_relations bigint, OUT rel_bytes bigint):
 *	 the number of relations in the previous state that the last
 *	 folio_perf_rel_capture() of this transaction compared with (this
 *	 database's rows of rel_last), and the sum of their sizes: the base the
 *	 capture adds what changed to, with no second scan of rel_last.
 */
Datum
folio_perf_rel_capture_base(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[2];
	bool		nulls[2] = {false, false};

	if (!capture_base_valid)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("folio_perf_rel_capture() has not run in this transaction"),
				 errhint("Call folio_perf_rel_capture() first, in the same transaction.")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	values[0] = Int64GetDatum(capture_base_n);
	values[1] = Int64GetDatum(capture_base_bytes);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls)));
}
