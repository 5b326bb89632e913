/*-------------------------------------------------------------------------
 *
 * own.c
 *		Which statements folio_perf itself runs: a bounded shared set of
 *		their query ids.
 *
 * Everything folio_perf runs is housekeeping: its SQL functions' nested
 * statements (the capture, the reports, the visibility checks), the
 * statement that called one of its functions (SELECT folio_perf_begin(...)),
 * and whatever the sampler's background worker executes.  Reports leave
 * them out by default.  Query texts cannot tell them apart reliably (a
 * nested statement of a SQL function has no folio_perf_ word in it), so
 * the backend records the query ids as they run:
 *
 *	- an fmgr hook marks the functions of the folio_perf extension
 *	  (pg_depend, cached per backend) and counts how many of them are on
 *	  the stack; when the first one is entered, the top-level statement's
 *	  query id (the one pg_stat_activity shows) is recorded, if the
 *	  session's role may take windows (own_may_record_toplevel);
 *	- while one is the innermost function on the stack, in the sampler's
 *	  worker, or while the extension's install or update script runs,
 *	  every query id parsed (post_parse_analyze), planned and started
 *	  (ExecutorStart) or run as a utility statement (ProcessUtility) is
 *	  recorded.
 *
 * Innermost: while a folio_perf function is on the stack, every other
 * function that is not built in (a caller's CHECK constraint's, a
 * domain's, a cast's, another extension's) is hooked as well, and while
 * one of those runs nothing is recorded: a caller could otherwise get any
 * statement of its choice recorded as folio_perf's (and so hidden from
 * every report) by having folio_perf insert into a table of its own whose
 * constraint runs that statement.  Outside folio_perf's functions nothing
 * else is hooked, so the applications' functions pay nothing.
 *
 * The set is two generations of FPERF_OWN_SLOTS query ids each in shared
 * memory, open-addressing tables filled without locks (compare-and-swap
 * into empty slots).  A query id is added to the current generation (and
 * so refreshed when it was only in the older one); when the current one
 * is three quarters full, or a probe finds no room in it, the older one is
 * emptied and becomes the current one (a rotation).  So however many
 * query ids are recorded, folio_perf's own statements, which run again at
 * every snapshot and report, always find room, and a query id that is not
 * recorded again is gone after two rotations.  A query id that finds no
 * room even right after a rotation is counted as dropped.
 * folio_perf_data.own_queryid() asks both generations.  Without
 * preloading there is no set and nothing is recorded.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/own.c
 *
 *-------------------------------------------------------------------------
 */
#include "folio_perf.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/dependency.h"
#include "catalog/pg_proc.h"
#include "commands/extension.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/plannodes.h"
#include "parser/analyze.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "postmaster/bgworker.h"
#include "storage/shmem.h"
#include "tcop/utility.h"
#include "utils/backend_status.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/acl.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

PG_FUNCTION_INFO_V1(folio_perf_own_queryid);
PG_FUNCTION_INFO_V1(folio_perf_own_status);

/* Slots of a generation (a power of two), the longest probe, the fill that rotates. */
#define FPERF_OWN_SLOTS 16384
#define FPERF_OWN_PROBES 64
#define FPERF_OWN_ROTATE_AT (FPERF_OWN_SLOTS / 4 * 3)

typedef struct FPerfOwnShared
{
	pg_atomic_uint32 cur;		/* the current generation, 0 or 1 */
	pg_atomic_uint32 rotating;	/* 1 while a backend empties the older one */
	pg_atomic_uint64 rotations;
	pg_atomic_uint64 filled[2];	/* query ids added to each generation */
	pg_atomic_uint64 dropped;	/* query ids that found no room */
	pg_atomic_uint64 slot[2][FPERF_OWN_SLOTS];	/* 0 = empty */
} FPerfOwnShared;

static FPerfOwnShared *ownshared = NULL;

/*
 * Per backend: the hooked functions on the stack, innermost last, each
 * with what own_function() said of it when it was entered (FHET_START) and
 * the subtransaction it was entered in.  Its end (FHET_END, FHET_ABORT)
 * undoes exactly what its start did: asking own_function() again there
 * could answer otherwise (the cache is emptied by any change of pg_proc,
 * and rebuilt from the catalogs), and a function counted as folio_perf's
 * at its start and not at its end left own_depth above 0 for the rest of
 * the session: from then on every function that is not built in was
 * hooked, and so never inlined by the planner (FmgrHookIsNeeded).  Starts
 * and ends nest (fmgr_security_definer); a start whose end never comes
 * (the hook chained after this one fails at FHET_START) is dropped when
 * its subtransaction aborts or its transaction ends.  The hook's `private`
 * datum is left alone: it is shared with any other fmgr hook of the chain.
 */
typedef struct FPerfOwnFrame
{
	bool		own;			/* folio_perf's (counted in own_depth) */
	SubTransactionId subid;		/* the subtransaction it started in */
} FPerfOwnFrame;

static FPerfOwnFrame *hook_frames = NULL;	/* in TopMemoryContext */
static int	hook_frames_size = 0;
static int	hook_depth = 0;		/* hooked functions on the stack */
static int	own_depth = 0;		/* of them folio_perf's */
static int	is_worker = -1;		/* -1: not known yet */
static HTAB *own_funcs = NULL;	/* function oid -> belongs to folio_perf */
static Oid	own_extoid = InvalidOid;

typedef struct FPerfOwnFunc
{
	Oid			funcid;			/* hash key */
	bool		own;
} FPerfOwnFunc;

static needs_fmgr_hook_type prev_needs_fmgr_hook = NULL;
static fmgr_hook_type prev_fmgr_hook = NULL;
static post_parse_analyze_hook_type prev_post_parse_analyze = NULL;
static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

Size
fperf_own_shmem_size(void)
{
	return MAXALIGN(sizeof(FPerfOwnShared));
}

void
fperf_own_shmem_init(void)
{
	bool		found;

	ownshared = ShmemInitStruct("folio_perf own statements",
								sizeof(FPerfOwnShared), &found);
	if (!found)
	{
		int			i;

		pg_atomic_init_u32(&ownshared->cur, 0);
		pg_atomic_init_u32(&ownshared->rotating, 0);
		pg_atomic_init_u64(&ownshared->rotations, 0);
		pg_atomic_init_u64(&ownshared->filled[0], 0);
		pg_atomic_init_u64(&ownshared->filled[1], 0);
		pg_atomic_init_u64(&ownshared->dropped, 0);
		for (i = 0; i < FPERF_OWN_SLOTS; i++)
		{
			pg_atomic_init_u64(&ownshared->slot[0][i], 0);
			pg_atomic_init_u64(&ownshared->slot[1][i], 0);
		}
	}
}

static inline uint32
own_hash(uint64 q)
{
	q ^= q >> 33;
	q *= UINT64CONST(0xff51afd7ed558ccd);
	q ^= q >> 33;
	return (uint32) q;
}

/*
 * Add a query id to generation g: 1 added, 0 there already, -1 no room.
 */
static int
own_insert(int g, uint64 queryid)
{
	uint32		h = own_hash(queryid);
	int			i;

	for (i = 0; i < FPERF_OWN_PROBES; i++)
	{
		pg_atomic_uint64 *s = &ownshared->slot[g][(h + i) & (FPERF_OWN_SLOTS - 1)];
		uint64		cur = pg_atomic_read_u64(s);

		if (cur == queryid)
			return 0;
		if (cur == 0)
		{
			uint64		expected = 0;

			if (pg_atomic_compare_exchange_u64(s, &expected, queryid))
			{
				pg_atomic_fetch_add_u64(&ownshared->filled[g], 1);
				return 1;
			}
			if (expected == queryid)
				return 0;
		}
	}
	return -1;
}

/*
 * Generation g is (nearly) full: empty the other one and make it the
 * current one.  One backend at a time; the others go on meanwhile (a
 * lookup in the generation being emptied may miss, an insert that finds
 * no room is dropped).
 */
static void
own_rotate(int g)
{
	uint32		expected = 0;
	int			old = 1 - g;
	int			i;

	if (!pg_atomic_compare_exchange_u32(&ownshared->rotating, &expected, 1))
		return;
	if ((int) pg_atomic_read_u32(&ownshared->cur) == g)
	{
		for (i = 0; i < FPERF_OWN_SLOTS; i++)
			pg_atomic_write_u64(&ownshared->slot[old][i], 0);
		pg_atomic_write_u64(&ownshared->filled[old], 0);
		pg_write_barrier();
		pg_atomic_write_u32(&ownshared->cur, (uint32) old);
		pg_atomic_fetch_add_u64(&ownshared->rotations, 1);
	}
	pg_atomic_write_u32(&ownshared->rotating, 0);
}

/* Add a query id to the set (no-op if there or without shared memory). */
static void
own_record(uint64 queryid)
{
	int			g;
	int			r;

	if (ownshared == NULL || queryid == UINT64CONST(0))
		return;
	g = (int) pg_atomic_read_u32(&ownshared->cur);
	r = own_insert(g, queryid);
	if (r == 1 && pg_atomic_read_u64(&ownshared->filled[g]) >= FPERF_OWN_ROTATE_AT)
		own_rotate(g);
	else if (r < 0)
	{
		own_rotate(g);
		g = (int) pg_atomic_read_u32(&ownshared->cur);
		if (own_insert(g, queryid) < 0)
			pg_atomic_fetch_add_u64(&ownshared->dropped, 1);
	}
}

/* Is a query id in generation g? */
static bool
own_in(int g, uint64 queryid)
{
	uint32		h = own_hash(queryid);
	int			i;

	for (i = 0; i < FPERF_OWN_PROBES; i++)
	{
		uint64		cur = pg_atomic_read_u64(&ownshared->slot[g][(h + i) & (FPERF_OWN_SLOTS - 1)]);

		if (cur == queryid)
			return true;
		if (cur == 0)
			return false;
	}
	return false;
}

/* Is a query id in the set (either generation)? */
static bool
own_lookup(uint64 queryid)
{
	if (ownshared == NULL || queryid == UINT64CONST(0))
		return false;
	return own_in(0, queryid) || own_in(1, queryid);
}

/* Is this backend one of folio_perf's workers (sampler, timed snapshots, launcher)? */
static bool
own_is_worker(void)
{
	if (is_worker < 0)
		is_worker = (MyBackendType == B_BG_WORKER && MyBgworkerEntry != NULL &&
					 (strcmp(MyBgworkerEntry->bgw_type, "folio_perf sampler") == 0 ||
					  strcmp(MyBgworkerEntry->bgw_type, "folio_perf snapshot") == 0 ||
					  strcmp(MyBgworkerEntry->bgw_type, "folio_perf launcher") == 0)) ? 1 : 0;
	return is_worker == 1;
}

/* Is folio_perf's own install or update script running? */
static bool
own_in_script(void)
{
	char	   *name;

	if (!creating_extension || !OidIsValid(CurrentExtensionObject) ||
		!IsTransactionState())
		return false;
	name = get_extension_name(CurrentExtensionObject);
	if (name == NULL || strcmp(name, FPERF_NAME) != 0)
		return false;
	/* and CREATE / ALTER EXTENSION itself */
	own_record(pgstat_get_my_query_id());
	return true;
}

/*
 * Is folio_perf's code running in this backend now: one of its functions
 * the innermost hooked function on the stack (not a function of anybody
 * else's that it reached), the worker, or its script?
 */
bool
fperf_own_active(void)
{
	if (own_depth > 0 && hook_depth > 0 && hook_frames[hook_depth - 1].own)
		return true;
	return own_is_worker() || own_in_script();
}

/* A function was created, changed or dropped: forget what we knew. */
static void
own_inval_callback(Datum arg, int cacheid, uint32 hashvalue)
{
	if (own_funcs != NULL)
	{
		hash_destroy(own_funcs);
		own_funcs = NULL;
	}
	own_extoid = InvalidOid;
}

/* Does function funcid belong to the folio_perf extension? */
static bool
own_function(Oid funcid)
{
	FPerfOwnFunc *f;
	bool		own;
	Oid			extoid;

	/* built-in functions never are; catalogs need a transaction */
	if (funcid < FirstNormalObjectId || !IsTransactionState())
		return false;
	if (own_funcs != NULL)
	{
		f = hash_search(own_funcs, &funcid, HASH_FIND, NULL);
		if (f != NULL)
			return f->own;
	}

	/*
	 * Catalog lookups first: they may process invalidations, which empty
	 * the cache and forget the extension's oid (own_inval_callback).  So
	 * the oid is compared from a local copy: read again after
	 * getExtensionOfObject() it could be InvalidOid, the answer for a
	 * function of no extension, and any function looked up while another
	 * session's change of pg_proc came in was taken for folio_perf's (not
	 * inlined, hooked, its statements recorded as folio_perf's).
	 */
	if (!OidIsValid(own_extoid))
		own_extoid = get_extension_oid(FPERF_NAME, true);
	extoid = own_extoid;
	own = OidIsValid(extoid) &&
		getExtensionOfObject(ProcedureRelationId, funcid) == extoid;
	if (own_funcs == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(FPerfOwnFunc);
		ctl.hcxt = TopMemoryContext;
		own_funcs = hash_create("folio_perf own functions", 256, &ctl,
								HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	f = hash_search(own_funcs, &funcid, HASH_ENTER, NULL);
	f->own = own;
	return own;
}

/*
 * May the session's role (outside any SECURITY DEFINER function) add its
 * top-level statements to the set?  Only roles that may take windows
 * (members of folio_perf_writer, superusers): a plain reader could
 * otherwise fill the set with statements of its own, each calling a cheap
 * folio_perf function, and folio_perf's own statements would then find no
 * room.  A reader's statement that calls folio_perf is still housekeeping
 * by its text (it names a folio_perf_ function).
 */
static bool
own_may_record_toplevel(void)
{
	Oid			writer;

	if (!IsTransactionState())
		return false;
	if (superuser_arg(GetOuterUserId()))
		return true;
	writer = get_role_oid("folio_perf_writer", true);
	return OidIsValid(writer) && has_privs_of_role(GetOuterUserId(), writer);
}

/*
 * Hook folio_perf's functions always, and while one of them is on the
 * stack every function that is not built in (built-in ones never reach
 * the hook).
 */
static bool
own_needs_fmgr_hook(Oid fn_oid)
{
	if (prev_needs_fmgr_hook && prev_needs_fmgr_hook(fn_oid))
		return true;
	if (own_depth > 0 && fn_oid >= FirstNormalObjectId)
		return true;
	return own_function(fn_oid);
}

static void
own_fmgr_hook(FmgrHookEventType event, FmgrInfo *flinfo, Datum *private)
{
	if (event == FHET_START)
	{
		/* everything that can fail before the frame is pushed */
		bool		own = own_function(flinfo->fn_oid);

		if (hook_depth >= hook_frames_size)
		{
			int			n = hook_frames_size > 0 ? hook_frames_size * 2 : 64;

			hook_frames = hook_frames == NULL ?
				MemoryContextAlloc(TopMemoryContext, n * sizeof(FPerfOwnFrame)) :
				repalloc(hook_frames, n * sizeof(FPerfOwnFrame));
			hook_frames_size = n;
		}
		if (own && own_depth == 0 && own_may_record_toplevel())
			own_record(pgstat_get_my_query_id());
		hook_frames[hook_depth].own = own;
		hook_frames[hook_depth].subid = GetCurrentSubTransactionId();
		hook_depth++;
		if (own)
			own_depth++;
	}
	else if (hook_depth > 0)
	{
		/* FHET_END, FHET_ABORT: the innermost frame is this function's */
		hook_depth--;
		if (hook_frames[hook_depth].own && own_depth > 0)
			own_depth--;
	}
	if (prev_fmgr_hook)
		(*prev_fmgr_hook) (event, flinfo, private);
}

/*
 * A target list of constants only (SELECT 1, SELECT $1 AS x): its query id
 * is shared with applications' own health checks ("SELECT 1" of a
 * connection pool), so it is never recorded.
 */
static bool
own_constants_only(List *tlist)
{
	ListCell   *lc;

	foreach(lc, tlist)
	{
		TargetEntry *te = (TargetEntry *) lfirst(lc);

		if (!IsA(te->expr, Const) && !IsA(te->expr, Param))
			return false;
	}
	return true;
}

/* A range table without relations (the planner adds an RTE_RESULT). */
static bool
own_no_relations(List *rtable)
{
	ListCell   *lc;

	foreach(lc, rtable)
	{
		if (((RangeTblEntry *) lfirst(lc))->rtekind != RTE_RESULT)
			return false;
	}
	return true;
}

static void
own_post_parse_analyze(FPERF_POST_PARSE_ARGS)
{
	if (prev_post_parse_analyze)
		FPERF_POST_PARSE_CALL(prev_post_parse_analyze);
	if (fperf_own_active() &&
		!(query->commandType == CMD_SELECT && own_no_relations(query->rtable) &&
		  query->jointree != NULL && query->jointree->quals == NULL &&
		  own_constants_only(query->targetList)))
		own_record(query->queryId);
}

static void
own_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	PlannedStmt *ps = queryDesc->plannedstmt;

	if (fperf_own_active() &&
		!(ps->commandType == CMD_SELECT && own_no_relations(ps->rtable) &&
		  IsA(ps->planTree, Result) && ps->planTree->lefttree == NULL &&
		  ((Result *) ps->planTree)->resconstantqual == NULL &&
		  own_constants_only(ps->planTree->targetlist)))
		own_record(ps->queryId);
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

static void
own_ProcessUtility(FPERF_PROCESS_UTILITY_ARGS)
{
	if (fperf_own_active())
		own_record(pstmt->queryId);
	if (prev_ProcessUtility)
		FPERF_PROCESS_UTILITY_CALL(prev_ProcessUtility);
	else
		FPERF_PROCESS_UTILITY_CALL(standard_ProcessUtility);
}

/*
 * The transaction ended (committed, aborted or prepared): no hooked
 * function is on the stack any more.  (A procedure's COMMIT ends a
 * transaction while the procedure runs, but none of folio_perf's is a
 * procedure, and one called inside a folio_perf function is atomic.)
 */
static void
own_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			own_depth = hook_depth = 0;
			break;
		default:
			break;
	}
}

/*
 * A subtransaction aborted: the functions entered in it (or in one of its
 * children) are gone.  Their FHET_ABORT came first and popped them; this
 * drops any start whose end never came.
 */
static void
own_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					 SubTransactionId parentSubid, void *arg)
{
	if (event != SUBXACT_EVENT_ABORT_SUB)
		return;
	while (hook_depth > 0 && hook_frames[hook_depth - 1].subid >= mySubid)
	{
		hook_depth--;
		if (hook_frames[hook_depth].own && own_depth > 0)
			own_depth--;
	}
}

/*
 * Install the hooks.  Called from _PG_init while preloading.
 */
void
fperf_own_install_hooks(void)
{
	prev_needs_fmgr_hook = needs_fmgr_hook;
	needs_fmgr_hook = own_needs_fmgr_hook;
	prev_fmgr_hook = fmgr_hook;
	fmgr_hook = own_fmgr_hook;
	prev_post_parse_analyze = post_parse_analyze_hook;
	post_parse_analyze_hook = own_post_parse_analyze;
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = own_ExecutorStart;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = own_ProcessUtility;
	CacheRegisterSyscacheCallback(PROCOID, own_inval_callback, (Datum) 0);
	RegisterXactCallback(own_xact_callback, NULL);
	RegisterSubXactCallback(own_subxact_callback, NULL);
}

/*
 * folio_perf_data.own_queryid(queryid bigint) RETURNS boolean: did
 * folio_perf run this query id (since the server started)?  false without
 * preloading.
 */
Datum
folio_perf_own_queryid(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(own_lookup((uint64) PG_GETARG_INT64(0)));
}

/*
 * folio_perf_data.own_status(OUT recorded bigint, OUT dropped bigint,
 * OUT capacity int, OUT rotations bigint): the set's fill (query ids in
 * both generations, a query id in both counted twice), the query ids
 * that found no room, the slots of both generations, and how many times
 * the older generation was emptied.
 */
Datum
folio_perf_own_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);
	if (ownshared == NULL)
	{
		nulls[0] = nulls[1] = nulls[3] = true;
		values[2] = Int32GetDatum(0);
	}
	else
	{
		values[0] = Int64GetDatum((int64) (pg_atomic_read_u64(&ownshared->filled[0]) +
										   pg_atomic_read_u64(&ownshared->filled[1])));
		values[1] = Int64GetDatum((int64) pg_atomic_read_u64(&ownshared->dropped));
		values[2] = Int32GetDatum(2 * FPERF_OWN_SLOTS);
		values[3] = Int64GetDatum((int64) pg_atomic_read_u64(&ownshared->rotations));
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}
