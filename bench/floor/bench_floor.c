/*-------------------------------------------------------------------------
 *
 * bench_floor.c
 *		Floors of finding what changed, for bench/run.sh only (not part of
 *		folio_perf, never installed by its Makefile).
 *
 * bench_floor_walk(with_lock) makes one sequential pass over PostgreSQL's
 * shared cumulative statistics hash (pgStatLocal.shared_hash, 15 and
 * later) and reads every relation entry of this database once: the
 * least any capture that looks at every relation's counters must do, with
 * no lookup per relation, no local snapshot hash and no catalog scan.  It
 * folds each entry's counters into a fingerprint, as a comparison with the
 * previous state would, and returns the number of entries read.
 * with_lock takes each entry's lock shared while reading it, as an exact
 * reader must.
 *
 * bench_floor_walk_hash(with_lock) is the same pass, each entry's
 * fingerprint also entered into an open-addressing hash table
 * (simplehash) keyed by the relation's OID, made for the call: an upper
 * bound of what comparing every entry with a previous state kept in such a
 * table adds to the pass.
 *
 * Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "fmgr.h"
#include "lib/dshash.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/lwlock.h"
#include "utils/dsa.h"
#include "utils/memutils.h"
#include "utils/pgstat_internal.h"

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(bench_floor_walk);
PG_FUNCTION_INFO_V1(bench_floor_walk_hash);

typedef struct FloorEntry
{
	Oid			relid;
	char		status;			/* simplehash's */
	uint64		fp;
} FloorEntry;

#define SH_PREFIX floorh
#define SH_ELEMENT_TYPE FloorEntry
#define SH_KEY_TYPE Oid
#define SH_KEY relid
#define SH_HASH_KEY(tb, key) murmurhash32(key)
#define SH_EQUAL(tb, a, b) ((a) == (b))
#define SH_SCOPE static inline
#define SH_DECLARE
#define SH_DEFINE
#include "lib/simplehash.h"

static uint64
entry_fp(const PgStat_StatTabEntry *t)
{
	return (uint64) t->numscans + t->tuples_returned + t->tuples_fetched +
		t->tuples_inserted + t->tuples_updated + t->tuples_deleted +
		t->tuples_hot_updated + t->vacuum_count + t->analyze_count +
		t->blocks_fetched + t->blocks_hit;
}

static int64
walk(bool with_lock, floorh_hash *h)
{
	dshash_seq_status st;
	PgStatShared_HashEntry *p;
	int64		n = 0;

	if (pgStatLocal.shared_hash == NULL || pgStatLocal.dsa == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the shared statistics are not attached")));
	dshash_seq_init(&st, pgStatLocal.shared_hash, false);
	while ((p = dshash_seq_next(&st)) != NULL)
	{
		PgStatShared_Relation *r;
		uint64		fp;

		if (p->key.kind != PGSTAT_KIND_RELATION || p->key.dboid != MyDatabaseId ||
			p->dropped)
			continue;
		r = (PgStatShared_Relation *) dsa_get_address(pgStatLocal.dsa, p->body);
		if (with_lock)
			LWLockAcquire(&r->header.lock, LW_SHARED);
		fp = entry_fp(&r->stats);
		if (with_lock)
			LWLockRelease(&r->header.lock);
		if (h)
		{
			bool		found;
			FloorEntry *e = floorh_insert(h, (Oid) p->key.objoid, &found);

			e->fp = fp;
		}
		n++;
	}
	dshash_seq_term(&st);
	return n;
}

Datum
bench_floor_walk(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(walk(PG_GETARG_BOOL(0), NULL));
}

Datum
bench_floor_walk_hash(PG_FUNCTION_ARGS)
{
	floorh_hash *h = floorh_create(CurrentMemoryContext, 262144, NULL);
	int64		n = walk(PG_GETARG_BOOL(0), h);

	floorh_destroy(h);
	PG_RETURN_INT64(n);
}
