/*-------------------------------------------------------------------------
 *
 * relsize.c
 *		Relation sizes without the relation cache.
 *
 * pg_relation_size() and pg_table_size() open the relation, which leaves a
 * relcache entry (several kB with its index information) behind for the
 * rest of the session.  A snapshot sizes every relation whose size may have
 * changed; over a 24-hour soak the sampler's timed snapshots would keep
 * growing its caches toward one entry per relation of a 100,000-relation
 * catalog.  folio_perf_relation_size() reads the pg_class row (and, for a
 * table's TOAST table, pg_index) with index scans that cache nothing, and
 * adds up the sizes of the files of every fork, as dbsize.c does.  A
 * capture that reads the sizes of thousands of tables with TOAST tables
 * (one after every table was written) asks for a map of the TOAST
 * relations first (fperf_toast_map_build: one scan of pg_class restricted
 * to pg_toast, one of pg_index) instead of three catalog probes per table.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/relsize.c
 *
 *-------------------------------------------------------------------------
 */
#include "folio_perf.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_tablespace.h"
#include "common/relpath.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "common/hashfn.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"

PG_FUNCTION_INFO_V1(folio_perf_relation_size);

/* What we need of a pg_class row. */
typedef struct RelFileInfo
{
	char		relkind;
	char		relpersistence;
	bool		relisshared;
	Oid			relfilenode;
	Oid			reltablespace;
	Oid			reltoastrelid;
} RelFileInfo;

/* What the size needs of a pg_class row. */
static void
fill_info(Form_pg_class cls, RelFileInfo *info)
{
	info->relkind = cls->relkind;
	info->relpersistence = cls->relpersistence;
	info->relisshared = cls->relisshared;
	info->relfilenode = cls->relfilenode;
	info->reltablespace = cls->reltablespace;
	info->reltoastrelid = cls->reltoastrelid;
}

/*
 * Read relid's pg_class row with an index scan (no syscache entry is
 * left behind).  Returns false if there is none.
 */
static bool
class_row(Relation classrel, Oid relid, RelFileInfo *info)
{
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	bool		found = false;

	ScanKeyInit(&key, Anum_pg_class_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(relid));
	scan = systable_beginscan(classrel, ClassOidIndexId, true, NULL, 1, &key);
	tup = systable_getnext(scan);
	if (HeapTupleIsValid(tup))
	{
		fill_info((Form_pg_class) GETSTRUCT(tup), info);
		found = true;
	}
	systable_endscan(scan);
	return found;
}

/*
 * Bytes in the files of every fork of one relation.  Segments that vanish
 * while we look (a concurrent DROP or TRUNCATE) end the count, as in
 * dbsize.c.
 *
 * Two kinds of stat() that can only fail are left out (a snapshot that
 * reads every size made about nine per relation, half of them failing):
 * - the next segment of a segment shorter than RELSEG_SIZE blocks: md.c
 *   only ever writes past a full segment, a segment left behind by a
 *   truncation is truncated to zero bytes (mdtruncate), and mdnblocks()
 *   itself ends the relation at the first short segment;
 * - the forks a relation of its kind cannot have: an init fork but of an
 *   unlogged relation, a visibility map of an index (only the heap
 *   access method keeps one, visibilitymap.c; no index access method
 *   of PostgreSQL does).
 */
static int64
files_size(const RelFileInfo *info)
{
	FPerfRelFile rfile;
	int64		total = 0;
	ForkNumber	fork;

	FPERF_SET_RELFILE(rfile,
					  OidIsValid(info->reltablespace) ? info->reltablespace :
					  (info->relisshared ? GLOBALTABLESPACE_OID : MyDatabaseTableSpace),
					  info->relisshared ? InvalidOid : MyDatabaseId,
					  info->relfilenode);

	for (fork = 0; fork <= MAX_FORKNUM; fork++)
	{
		char	   *path;
		char		segpath[MAXPGPATH];
		unsigned int seg;

		if (fork == INIT_FORKNUM && info->relpersistence != RELPERSISTENCE_UNLOGGED)
			continue;
		if (fork == VISIBILITYMAP_FORKNUM && info->relkind == RELKIND_INDEX)
			continue;
		path = fperf_relpath_perm(rfile, fork);

		for (seg = 0;; seg++)
		{
			struct stat st;

			CHECK_FOR_INTERRUPTS();
			if (seg == 0)
				snprintf(segpath, sizeof(segpath), "%s", path);
			else
				snprintf(segpath, sizeof(segpath), "%s.%u", path, seg);
			if (stat(segpath, &st) < 0)
			{
				if (errno == ENOENT)
					break;
				ereport(ERROR,
						(errcode_for_file_access(),
						 errmsg("could not stat file \"%s\": %m", segpath)));
			}
			total += st.st_size;
			if (st.st_size < (off_t) RELSEG_SIZE * BLCKSZ)
				break;
		}
		pfree(path);
	}
	return total;
}

/*
 * The TOAST relations of the database, for a capture that reads many
 * sizes: the files of a table's TOAST table and of its index(es) found
 * without three catalog probes per table (the TOAST table's pg_class row,
 * pg_index for its index, the index's pg_class row).  Built by one scan of
 * pg_class restricted to pg_toast and one of pg_index.
 */
typedef struct ToastEntry
{
	Oid			relid;			/* key: the TOAST table */
	char		status;			/* simplehash's */
	bool		have_table;		/* its pg_class row was seen */
	RelFileInfo table;
	List	   *indexes;		/* RelFileInfo * */
} ToastEntry;

#define SH_PREFIX toastmap
#define SH_ELEMENT_TYPE ToastEntry
#define SH_KEY_TYPE Oid
#define SH_KEY relid
#define SH_HASH_KEY(tb, key) murmurhash32(key)
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

/* A TOAST index's pg_class row, until pg_index names its table. */
typedef struct ToastIndexEntry
{
	Oid			relid;			/* key */
	char		status;			/* simplehash's */
	RelFileInfo info;
} ToastIndexEntry;

#define SH_PREFIX toastidx
#define SH_ELEMENT_TYPE ToastIndexEntry
#define SH_KEY_TYPE Oid
#define SH_KEY relid
#define SH_HASH_KEY(tb, key) murmurhash32(key)
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

struct FPerfToastMap
{
	toastmap_hash *tables;
};

/*
 * The map of every TOAST table of this database (in the current memory
 * context).  Entries are made for what the scans see; a table whose TOAST
 * table is not in it (created after the scan) is sized by the probes.
 */
FPerfToastMap *
fperf_toast_map_build(Relation classrel)
{
	FPerfToastMap *map = palloc(sizeof(FPerfToastMap));
	toastidx_hash *idx;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tup;
	Relation	indexrel;
	uint32		n;

	n = (classrel->rd_rel->reltuples > 1024 && classrel->rd_rel->reltuples < 8e6) ?
		(uint32) (classrel->rd_rel->reltuples / 4) : 1024;
	map->tables = toastmap_create(CurrentMemoryContext, n, NULL);
	idx = toastidx_create(CurrentMemoryContext, n, NULL);

	/* pg_toast's relations (no index on relnamespace: a filtered heap scan) */
	ScanKeyInit(&key, Anum_pg_class_relnamespace, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(PG_TOAST_NAMESPACE));
	scan = systable_beginscan(classrel, InvalidOid, false, NULL, 1, &key);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_class cls = (Form_pg_class) GETSTRUCT(tup);
		bool		found;

		CHECK_FOR_INTERRUPTS();
		if (cls->relkind == RELKIND_TOASTVALUE)
		{
			ToastEntry *e = toastmap_insert(map->tables, cls->oid, &found);

			if (!found)
				e->indexes = NIL;
			e->have_table = true;
			fill_info(cls, &e->table);
		}
		else if (cls->relkind == RELKIND_INDEX)
		{
			ToastIndexEntry *e = toastidx_insert(idx, cls->oid, &found);

			fill_info(cls, &e->info);
		}
	}
	systable_endscan(scan);

	/* which TOAST table each TOAST index belongs to */
	indexrel = table_open(IndexRelationId, AccessShareLock);
	scan = systable_beginscan(indexrel, InvalidOid, false, NULL, 0, NULL);
	while (HeapTupleIsValid(tup = systable_getnext(scan)))
	{
		Form_pg_index ind = (Form_pg_index) GETSTRUCT(tup);
		ToastIndexEntry *ie = toastidx_lookup(idx, ind->indexrelid);
		ToastEntry *te;
		RelFileInfo *copy;

		if (ie == NULL)
			continue;
		te = toastmap_lookup(map->tables, ind->indrelid);
		if (te == NULL)
			continue;
		copy = palloc(sizeof(RelFileInfo));
		*copy = ie->info;
		te->indexes = lappend(te->indexes, copy);
	}
	systable_endscan(scan);
	table_close(indexrel, AccessShareLock);
	toastidx_destroy(idx);
	return map;
}

/*
 * The size of the relation described by *info (see
 * folio_perf_relation_size); false if it has no files of its own.
 * classrel is pg_class, open; toastmap, if not NULL, the TOAST relations.
 */
static bool
info_size(Relation classrel, const RelFileInfo *info, FPerfToastMap *toastmap,
		  int64 *size)
{
	int64		total = 0;

	if (!OidIsValid(info->relfilenode) ||
		info->relpersistence == RELPERSISTENCE_TEMP ||
		!RELKIND_HAS_STORAGE(info->relkind))
		return false;
	total = files_size(info);
	if (OidIsValid(info->reltoastrelid) &&
		(info->relkind == RELKIND_RELATION || info->relkind == RELKIND_MATVIEW))
	{
		RelFileInfo toast;
		ToastEntry *te = toastmap ? toastmap_lookup(toastmap->tables, info->reltoastrelid) : NULL;

		if (te != NULL && te->have_table)
		{
			/* the same files as below, without the catalog probes */
			ListCell   *lc;

			if (OidIsValid(te->table.relfilenode))
			{
				total += files_size(&te->table);
				foreach(lc, te->indexes)
				{
					RelFileInfo *ix = (RelFileInfo *) lfirst(lc);

					if (OidIsValid(ix->relfilenode))
						total += files_size(ix);
				}
			}
		}
		else if (class_row(classrel, info->reltoastrelid, &toast) &&
			OidIsValid(toast.relfilenode))
		{
			Relation	indexrel;
			ScanKeyData key;
			SysScanDesc scan;
			HeapTuple	tup;

			total += files_size(&toast);

			/* the TOAST table's index(es) */
			indexrel = table_open(IndexRelationId, AccessShareLock);
			ScanKeyInit(&key, Anum_pg_index_indrelid, BTEqualStrategyNumber,
						F_OIDEQ, ObjectIdGetDatum(info->reltoastrelid));
			scan = systable_beginscan(indexrel, IndexIndrelidIndexId, true,
									  NULL, 1, &key);
			while (HeapTupleIsValid(tup = systable_getnext(scan)))
			{
				Oid			indexrelid = ((Form_pg_index) GETSTRUCT(tup))->indexrelid;
				RelFileInfo idx;

				if (class_row(classrel, indexrelid, &idx) &&
					OidIsValid(idx.relfilenode))
					total += files_size(&idx);
			}
			systable_endscan(scan);
			table_close(indexrel, AccessShareLock);
		}
	}
	*size = total;
	return true;
}

/*
 * The size folio_perf_relation_size() gives, of a pg_class row the caller
 * has in hand (the capture's scan of pg_class): no lookup of the row
 * itself.  classrel is pg_class, open.  False (no size) as the SQL
 * function's NULL.
 */
bool
fperf_relation_size_of(Relation classrel, Form_pg_class cls,
					   FPerfToastMap *toastmap, int64 *size)
{
	RelFileInfo info;

	fill_info(cls, &info);
	return info_size(classrel, &info, toastmap, size);
}

/*
 * folio_perf_relation_size(relid oid) RETURNS bigint
 *
 * An index: its size with every fork (as pg_indexes_size counts it; plain
 * pg_relation_size counts only the main fork).  A table or
 * materialized view: its heap plus its TOAST table and the TOAST table's
 * index (pg_table_size).  NULL for a relation that does not exist (any
 * more), has no files of its own (views, partitioned parents) or is a
 * mapped catalog or another session's temporary table.
 */
Datum
folio_perf_relation_size(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	Relation	classrel;
	RelFileInfo info;
	int64		total = 0;
	bool		valid;

	classrel = table_open(RelationRelationId, AccessShareLock);
	valid = class_row(classrel, relid, &info) &&
		info_size(classrel, &info, NULL, &total);
	table_close(classrel, AccessShareLock);

	if (!valid)
		PG_RETURN_NULL();
	PG_RETURN_INT64(total);
}
