/*-------------------------------------------------------------------------
 *
 * relstore.c
 *		Per-queryid record of the schemas a statement's relations live in.
 *
 * Spring modules and mod-source-record-storage log in as one shared user and
 * send unqualified SQL with a per-connection search_path.  Their statements
 * get one pg_stat_statements entry per tenant (the jumble uses relation
 * OIDs) but the entries' text and userid are identical, so only the parser
 * knows which tenant an entry belongs to.  A post_parse_analyze hook, chained
 * after pg_stat_statements' (which sets Query->queryId), records for every
 * new (dbid, queryid) the schemas of the relations and functions in the range
 * table, the DML target first.
 *
 * From PostgreSQL 18 the jumble uses relation names instead of OIDs, so the
 * same unqualified statement of two tenants is one entry.  The hook then
 * sees one queryid with different relations: such an entry is marked
 * ambiguous and vouches for no schema (folio_perf_query_relations() shows
 * it with no schemas; attribution falls back to the role or the relation
 * names, as for a remote target).  Comparing the first relation's OID costs
 * no catalog lookup.
 *
 * Layout: a fixed-size shared hash table (folio_perf.max_queries entries)
 * protected by one LWLock.  The hot path, a statement this backend has
 * parsed before with the same first relation, is a lookup in a
 * backend-local hash (seen_hash) and touches no shared memory but one read
 * of the store's generation, which a reset bumps: the shared lookup under
 * the lock in shared mode, an atomic read-modify-write of a cache line
 * every backend hammers, cost a pgbench select-only statement more than its
 * instruction count says (bench/RESULTS.md).  The first parse of a queryid
 * in a backend takes the lock in shared mode; only the first parse of a
 * queryid anywhere does catalog lookups
 * (outside the lock) and takes the lock exclusively to insert.  The table
 * never holds more than folio_perf.max_queries entries (the count is
 * checked under the exclusive lock).  When it is full, a tenth of it is
 * evicted before the next insert: the entries least recently seen (entered,
 * found by a backend's shared lookup, or looked up by the sampler for a
 * running session) of the role that holds the most entries; an eviction
 * bumps the generation, as a reset does, so that no backend's list of
 * statements seen names an evicted entry.  So a login that floods the store with distinct
 * statements evicts its own, and a new tenant's statements are recorded
 * as soon as they are parsed; what could still not be inserted is counted
 * in "dropped".  folio_perf_relations_reset() empties it.
 * folio_perf_relations_status() shows the counters (evicted among them).
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/relstore.c
 *
 *-------------------------------------------------------------------------
 */
#include "folio_perf.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_namespace.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "parser/analyze.h"
#include "parser/parsetree.h"
#include "port/atomics.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(folio_perf_query_relations);
PG_FUNCTION_INFO_V1(folio_perf_relations_reset);
PG_FUNCTION_INFO_V1(folio_perf_relations_status);

typedef struct FPerfRelShared
{
	LWLock	   *lock;			/* protects the hash table */
	pg_atomic_uint64 dropped;	/* statements not recorded: table full */
	pg_atomic_uint64 recorded;	/* statements recorded since reset */
	pg_atomic_uint64 generation;	/* bumped by every reset and eviction */
	pg_atomic_uint64 evicted;	/* entries evicted to make room */
} FPerfRelShared;

static FPerfRelShared *relshared = NULL;
static HTAB *relhash = NULL;

static post_parse_analyze_hook_type prev_post_parse_analyze_hook = NULL;

/*
 * Backend-local: statements this backend saw recorded in the store (or
 * with no schema to record), with their first relation, valid while the
 * store's generation is seen_generation.  At most FPERF_SEEN_MAX entries;
 * then it starts again empty.
 */
typedef struct FPerfRelSeen
{
	FPerfRelKey key;			/* hash key, must be first */
	Oid			first_rel;
} FPerfRelSeen;

#define FPERF_SEEN_MAX 4096

static HTAB *seen_hash = NULL;
static uint64 seen_generation = 0;

/* Depth limit for walking subqueries and CTEs. */
#define FPERF_MAX_WALK_DEPTH 8

/*
 * Shared memory needed for the relation store.
 */
Size
fperf_relstore_shmem_size(void)
{
	Size		size = MAXALIGN(sizeof(FPerfRelShared));

	size = add_size(size, hash_estimate_size(fperf_max_queries,
											 sizeof(FPerfRelEntry)));
	return size;
}

/*
 * Create or attach.  Caller holds AddinShmemInitLock.
 */
void
fperf_relstore_shmem_init(void)
{
	bool		found;
	HASHCTL		info;

	relshared = ShmemInitStruct("folio_perf relations",
								sizeof(FPerfRelShared), &found);
	if (!found)
	{
		relshared->lock = &(GetNamedLWLockTranche(FPERF_NAME))[FPERF_LOCK_RELSTORE].lock;
		pg_atomic_init_u64(&relshared->dropped, 0);
		pg_atomic_init_u64(&relshared->evicted, 0);
		pg_atomic_init_u64(&relshared->recorded, 0);
		pg_atomic_init_u64(&relshared->generation, 1);
	}

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(FPerfRelKey);
	info.entrysize = sizeof(FPerfRelEntry);
	relhash = ShmemInitHash("folio_perf relations hash",
							fperf_max_queries, fperf_max_queries,
							&info, HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);
}

/*
 * True if the store is attached in this backend.
 */
bool
fperf_relstore_attached(void)
{
	return relshared != NULL && relhash != NULL;
}

/* Add nsp to the entry unless already present or the entry is full. */
static void
entry_add_nsp(FPerfRelEntry *e, Oid nsp)
{
	int			i;

	if (!OidIsValid(nsp) || nsp == PG_CATALOG_NAMESPACE)
		return;
	for (i = 0; i < e->nnsp; i++)
		if (e->nsp[i] == nsp)
			return;
	if (e->nnsp < FPERF_MAX_NSP)
		e->nsp[e->nnsp++] = nsp;
}

/* Namespace of a function expression's function, if it is one. */
static void
collect_func_nsp(Node *expr, FPerfRelEntry *e)
{
	if (expr == NULL)
		return;
	if (IsA(expr, FuncExpr))
		entry_add_nsp(e, get_func_namespace(((FuncExpr *) expr)->funcid));
}

/*
 * Walk a Query's range table (and those of its subqueries and CTEs) and
 * collect schemas into e.
 */
static void
collect_query_nsps(Query *query, FPerfRelEntry *e, int depth)
{
	ListCell   *lc;

	if (query == NULL || depth > FPERF_MAX_WALK_DEPTH)
		return;

	if (depth == 0 && query->resultRelation > 0 &&
		query->resultRelation <= list_length(query->rtable))
	{
		RangeTblEntry *rte = rt_fetch(query->resultRelation, query->rtable);

		if (rte->rtekind == RTE_RELATION)
		{
			e->target_nsp = get_rel_namespace(rte->relid);
			entry_add_nsp(e, e->target_nsp);
		}
	}

	foreach(lc, query->rtable)
	{
		RangeTblEntry *rte = (RangeTblEntry *) lfirst(lc);

		switch (rte->rtekind)
		{
			case RTE_RELATION:
				entry_add_nsp(e, get_rel_namespace(rte->relid));
				break;
			case RTE_SUBQUERY:
				collect_query_nsps(rte->subquery, e, depth + 1);
				break;
			case RTE_FUNCTION:
				{
					ListCell   *fc;

					foreach(fc, rte->functions)
						collect_func_nsp(((RangeTblFunction *) lfirst(fc))->funcexpr, e);
				}
				break;
			default:
				break;
		}
		if (e->nnsp >= FPERF_MAX_NSP)
			return;
	}

	foreach(lc, query->cteList)
	{
		CommonTableExpr *cte = (CommonTableExpr *) lfirst(lc);

		if (cte->ctequery && IsA(cte->ctequery, Query))
			collect_query_nsps((Query *) cte->ctequery, e, depth + 1);
	}

	/* SELECT f(...) without FROM: the function in the target list. */
	if (depth == 0 && e->nnsp == 0 && query->rtable == NIL)
	{
		foreach(lc, query->targetList)
		{
			TargetEntry *te = (TargetEntry *) lfirst(lc);

			collect_func_nsp((Node *) te->expr, e);
		}
	}
}

/* OID of the DML target, else of the first relation in the range table. */
static Oid
first_relation(Query *query)
{
	ListCell   *lc;

	if (query->resultRelation > 0 &&
		query->resultRelation <= list_length(query->rtable))
	{
		RangeTblEntry *rte = rt_fetch(query->resultRelation, query->rtable);

		if (rte->rtekind == RTE_RELATION)
			return rte->relid;
	}
	foreach(lc, query->rtable)
	{
		RangeTblEntry *rte = (RangeTblEntry *) lfirst(lc);

		if (rte->rtekind == RTE_RELATION)
			return rte->relid;
	}
	return InvalidOid;
}

/* Mark an entry seen at now (at most once a second, to spare the cache line). */
static inline void
entry_seen(FPerfRelEntry *e, TimestampTz now)
{
	if (now - e->last_seen > USECS_PER_SEC)
		e->last_seen = now;
}

typedef struct RelVictim
{
	FPerfRelKey key;
	Oid			userid;
	int64		last_seen;
} RelVictim;

static int
victim_cmp(const void *a, const void *b)
{
	const RelVictim *x = (const RelVictim *) a;
	const RelVictim *y = (const RelVictim *) b;

	if (x->userid != y->userid)
		return x->userid < y->userid ? -1 : 1;
	if (x->last_seen != y->last_seen)
		return x->last_seen < y->last_seen ? -1 : 1;
	return 0;
}

/*
 * The store is full: remove a tenth of it (at least one entry), the least
 * recently seen entries of the role that holds the most.  Under the
 * exclusive lock.
 */
static void
relstore_evict(void)
{
	HASH_SEQ_STATUS hstat;
	FPerfRelEntry *entry;
	RelVictim  *v;
	long		n = 0;
	long		cap = hash_get_num_entries(relhash);
	long		i;
	long		best_start = 0;
	long		best_len = 0;
	long		quota;

	if (cap <= 0)
		return;
	v = palloc_extended(sizeof(RelVictim) * cap, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (v == NULL)
		return;
	hash_seq_init(&hstat, relhash);
	while ((entry = hash_seq_search(&hstat)) != NULL)
	{
		if (n >= cap)
		{
			hash_seq_term(&hstat);
			break;
		}
		v[n].key = entry->key;
		v[n].userid = entry->userid;
		v[n].last_seen = entry->last_seen;
		n++;
	}
	qsort(v, n, sizeof(RelVictim), victim_cmp);
	for (i = 0; i < n;)
	{
		long		j = i;

		while (j < n && v[j].userid == v[i].userid)
			j++;
		if (j - i > best_len)
		{
			best_start = i;
			best_len = j - i;
		}
		i = j;
	}
	quota = Max(1, Min(best_len, fperf_max_queries / 10));
	for (i = best_start; i < best_start + quota; i++)
		hash_search(relhash, &v[i].key, HASH_REMOVE, NULL);
	pg_atomic_fetch_add_u64(&relshared->evicted, (uint64) quota);
	/* every backend's list of statements seen may name an evicted one */
	pg_atomic_fetch_add_u64(&relshared->generation, 1);
	pfree(v);
}

/*
 * Remember in this backend that key is in the store (or has nothing to
 * record) with first relation first.
 */
static void
seen_remember(FPerfRelKey *key, Oid first, uint64 generation)
{
	FPerfRelSeen *s;

	if (seen_hash != NULL &&
		(seen_generation != generation || hash_get_num_entries(seen_hash) >= FPERF_SEEN_MAX))
	{
		hash_destroy(seen_hash);
		seen_hash = NULL;
	}
	if (seen_hash == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(FPerfRelKey);
		ctl.entrysize = sizeof(FPerfRelSeen);
		ctl.hcxt = TopMemoryContext;
		seen_hash = hash_create("folio_perf statements seen", 256, &ctl,
								HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
		seen_generation = generation;
	}
	s = (FPerfRelSeen *) hash_search(seen_hash, key, HASH_ENTER, NULL);
	s->first_rel = first;
}

/*
 * post_parse_analyze hook: remember the schemas of a new queryid.
 */
static void
fperf_post_parse_analyze(FPERF_POST_PARSE_ARGS)
{
	FPerfRelKey key;
	FPerfRelEntry local;
	FPerfRelEntry *entry;
	bool		found;
	bool		other;
	Oid			first;
	uint64		generation;
	TimestampTz now;

	if (prev_post_parse_analyze_hook)
		FPERF_POST_PARSE_CALL(prev_post_parse_analyze_hook);

	if (!fperf_track_relations || relhash == NULL || query->queryId == UINT64CONST(0) ||
		query->commandType == CMD_UTILITY || !IsTransactionState())
		return;

	memset(&key, 0, sizeof(key));
	key.dbid = MyDatabaseId;
	key.queryid = query->queryId;

	first = first_relation(query);

	/* Hot path: this backend saw the statement, with this first relation. */
	generation = pg_atomic_read_u64(&relshared->generation);
	if (seen_hash != NULL && seen_generation == generation)
	{
		FPerfRelSeen *s = (FPerfRelSeen *) hash_search(seen_hash, &key, HASH_FIND, NULL);

		if (s != NULL && s->first_rel == first)
			return;
	}

	now = GetCurrentStatementStartTimestamp();
	LWLockAcquire(relshared->lock, LW_SHARED);
	entry = (FPerfRelEntry *) hash_search(relhash, &key, HASH_FIND, NULL);
	found = (entry != NULL);
	other = found && !entry->ambiguous && entry->first_rel != first;
	if (found)
		entry_seen(entry, now);
	LWLockRelease(relshared->lock);
	if (other)
	{
		LWLockAcquire(relshared->lock, LW_EXCLUSIVE);
		entry = (FPerfRelEntry *) hash_search(relhash, &key, HASH_FIND, NULL);
		if (entry != NULL)
			entry->ambiguous = true;
		LWLockRelease(relshared->lock);
	}
	if (found)
	{
		seen_remember(&key, first, generation);
		return;
	}

	/* Catalog lookups outside the lock. */
	memset(&local, 0, sizeof(local));
	local.key = key;
	local.first_rel = first;
	collect_query_nsps(query, &local, 0);
	if (local.nnsp == 0)
	{
		seen_remember(&key, first, generation);
		return;
	}

	/*
	 * Insert only below the declared size, checked under the exclusive
	 * lock (and the table is HASH_FIXED_SIZE, so dynahash would refuse to
	 * allocate past it anyway).  A shared hash would otherwise grow into the
	 * server's free shared memory (which it never gives back) until other
	 * subsystems fail with "out of shared memory": any role can parse
	 * distinct statements.  A full store first evicts (relstore_evict).
	 */
	LWLockAcquire(relshared->lock, LW_EXCLUSIVE);
	entry = (FPerfRelEntry *) hash_search(relhash, &key, HASH_FIND, NULL);
	found = (entry != NULL);
	if (!found && hash_get_num_entries(relhash) >= fperf_max_queries)
		relstore_evict();
	if (!found && hash_get_num_entries(relhash) < fperf_max_queries)
		entry = (FPerfRelEntry *) hash_search(relhash, &key,
											  HASH_ENTER_NULL, &found);
	if (entry == NULL)
		pg_atomic_fetch_add_u64(&relshared->dropped, 1);
	else if (!found)
	{
		entry->target_nsp = local.target_nsp;
		entry->first_rel = local.first_rel;
		entry->ambiguous = false;
		entry->nnsp = local.nnsp;
		memcpy(entry->nsp, local.nsp, sizeof(local.nsp));
		entry->userid = GetUserId();
		entry->last_seen = now;
		pg_atomic_fetch_add_u64(&relshared->recorded, 1);
	}
	LWLockRelease(relshared->lock);
	/* not remembered when dropped: the next parse tries again */
	if (entry != NULL)
		seen_remember(&key, first, generation);
}

/*
 * Install the hook.  Called from _PG_init while preloading.
 */
void
fperf_relstore_install_hook(void)
{
	prev_post_parse_analyze_hook = post_parse_analyze_hook;
	post_parse_analyze_hook = fperf_post_parse_analyze;
}

static void
relstore_check_attached(void)
{
	if (!fperf_relstore_attached())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("folio_perf must be loaded via shared_preload_libraries"),
				 errhint("Add folio_perf to shared_preload_libraries and restart the server.")));
}

/*
 * folio_perf_query_relations(OUT dbid oid, OUT queryid bigint,
 *							  OUT target_nsp oid, OUT nsps oid[])
 *
 * Copies the entries under the shared lock, builds tuples afterwards.
 * Returns nothing (rather than failing) when not preloaded, so that
 * snapshots work without the library.
 */
Datum
folio_perf_query_relations(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	HASH_SEQ_STATUS hstat;
	FPerfRelEntry *entry;
	FPerfRelEntry *copy;
	long		n = 0;
	long		cap;
	long		i;

	fperf_init_srf(fcinfo);
	if (rsinfo->setDesc->natts != 4)
		elog(ERROR, "incorrect number of output arguments");

	if (!fperf_relstore_attached())
		PG_RETURN_VOID();

	LWLockAcquire(relshared->lock, LW_SHARED);
	cap = hash_get_num_entries(relhash);
	copy = palloc_extended(sizeof(FPerfRelEntry) * Max(cap, 1),
						   MCXT_ALLOC_HUGE);
	hash_seq_init(&hstat, relhash);
	while ((entry = hash_seq_search(&hstat)) != NULL)
	{
		if (n >= cap)
		{
			hash_seq_term(&hstat);
			break;
		}
		copy[n++] = *entry;
	}
	LWLockRelease(relshared->lock);

	for (i = 0; i < n; i++)
	{
		Datum		values[4];
		bool		nulls[4] = {false, false, false, false};
		Datum	   *elems;
		int			j;

		if (copy[i].key.dbid != MyDatabaseId)
			continue;
		/* an ambiguous entry vouches for no schema */
		if (copy[i].ambiguous)
		{
			copy[i].target_nsp = InvalidOid;
			copy[i].nnsp = 0;
		}
		elems = palloc(sizeof(Datum) * FPERF_MAX_NSP);
		for (j = 0; j < copy[i].nnsp; j++)
			elems[j] = ObjectIdGetDatum(copy[i].nsp[j]);
		values[0] = ObjectIdGetDatum(copy[i].key.dbid);
		values[1] = Int64GetDatum((int64) copy[i].key.queryid);
		values[2] = ObjectIdGetDatum(copy[i].target_nsp);
		nulls[2] = !OidIsValid(copy[i].target_nsp);
		values[3] = PointerGetDatum(construct_array(elems, copy[i].nnsp, OIDOID,
													sizeof(Oid), true,
													TYPALIGN_INT));
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	PG_RETURN_VOID();
}

/*
 * folio_perf_relations_reset() RETURNS bigint: empties the store, returns
 * the number of entries removed.
 */
Datum
folio_perf_relations_reset(PG_FUNCTION_ARGS)
{
	HASH_SEQ_STATUS hstat;
	FPerfRelEntry *entry;
	int64		n = 0;

	relstore_check_attached();

	LWLockAcquire(relshared->lock, LW_EXCLUSIVE);
	hash_seq_init(&hstat, relhash);
	while ((entry = hash_seq_search(&hstat)) != NULL)
	{
		hash_search(relhash, &entry->key, HASH_REMOVE, NULL);
		n++;
	}
	pg_atomic_write_u64(&relshared->dropped, 0);
	pg_atomic_write_u64(&relshared->recorded, 0);
	pg_atomic_write_u64(&relshared->evicted, 0);
	/* every backend's list of statements seen is out of date */
	pg_atomic_fetch_add_u64(&relshared->generation, 1);
	LWLockRelease(relshared->lock);

	PG_RETURN_INT64(n);
}

/*
 * folio_perf_relations_status() - the store's size and counters:
 * preloaded, track_relations, max_queries, entries (all databases),
 * entries_this_db, recorded and dropped (since server start or the last
 * reset), shmem_bytes, evicted (since server start or the last reset).
 * Without preloading only the first two columns are known; the others are
 * NULL.
 */
#define RELSTORE_STATUS_COLS 9

Datum
folio_perf_relations_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[RELSTORE_STATUS_COLS];
	bool		nulls[RELSTORE_STATUS_COLS];
	HASH_SEQ_STATUS hstat;
	FPerfRelEntry *entry;
	int64		entries = 0;
	int64		entries_db = 0;
	int			i;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (tupdesc->natts != RELSTORE_STATUS_COLS)
		elog(ERROR, "incorrect number of output arguments");

	memset(nulls, 0, sizeof(nulls));
	values[0] = BoolGetDatum(fperf_relstore_attached());
	values[1] = BoolGetDatum(fperf_track_relations);
	if (!fperf_relstore_attached())
	{
		for (i = 2; i < RELSTORE_STATUS_COLS; i++)
			nulls[i] = true;
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
	}

	LWLockAcquire(relshared->lock, LW_SHARED);
	hash_seq_init(&hstat, relhash);
	while ((entry = hash_seq_search(&hstat)) != NULL)
	{
		entries++;
		if (entry->key.dbid == MyDatabaseId)
			entries_db++;
	}
	LWLockRelease(relshared->lock);

	values[2] = Int32GetDatum(fperf_max_queries);
	values[3] = Int64GetDatum(entries);
	values[4] = Int64GetDatum(entries_db);
	values[5] = Int64GetDatum((int64) pg_atomic_read_u64(&relshared->recorded));
	values[6] = Int64GetDatum((int64) pg_atomic_read_u64(&relshared->dropped));
	values[7] = Int64GetDatum((int64) fperf_relstore_shmem_size());
	values[8] = Int64GetDatum((int64) pg_atomic_read_u64(&relshared->evicted));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * The schemas recorded for a statement, the DML target first (if any), at
 * most max of them, into nsp[] padded with InvalidOid.  Returns the number
 * filled; 0 when the statement is unknown, ambiguous (parsed with other
 * relations under the same queryid) or the store is not attached.
 * Takes the store's lock shared; no catalog access, so it may be called
 * outside a transaction (the sampler worker does).
 */
int
fperf_relstore_lookup(Oid dbid, uint64 queryid, Oid *nsp, int max)
{
	FPerfRelKey key;
	FPerfRelEntry *e;
	int			n = 0;
	int			i;

	for (i = 0; i < max; i++)
		nsp[i] = InvalidOid;
	if (!fperf_relstore_attached() || max <= 0)
		return 0;

	memset(&key, 0, sizeof(key));
	key.dbid = dbid;
	key.queryid = queryid;
	LWLockAcquire(relshared->lock, LW_SHARED);
	e = hash_search(relhash, &key, HASH_FIND, NULL);
	if (e != NULL)
		entry_seen(e, GetCurrentTimestamp());
	if (e != NULL && !e->ambiguous)
	{
		if (OidIsValid(e->target_nsp))
			nsp[n++] = e->target_nsp;
		for (i = 0; i < e->nnsp && n < max; i++)
			nsp[n++] = e->nsp[i];
	}
	LWLockRelease(relshared->lock);
	return n;
}
