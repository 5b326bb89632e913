/*-------------------------------------------------------------------------
 *
 * plans.c
 *		Plans of slow executions: per statement, the plan of its slowest
 *		execution since the last snapshot.
 *
 * Hooks.  ExecutorStart, ExecutorRun, ExecutorFinish, ExecutorEnd and
 * ProcessUtility, chained after pg_stat_statements'.  Run, Finish and
 * ProcessUtility (except EXECUTE, PREPARE and DEALLOCATE, as in
 * pg_stat_statements) only count the nesting level, restored in PG_FINALLY
 * so that an error never leaves it wrong; level 0 is "toplevel" as in
 * pg_stat_statements.  Start decides, once per top-level statement, whether
 * the statement is sampled for per-node instrumentation
 * (folio_perf.plan_analyze, folio_perf.plan_sample_rate; nested statements
 * follow their top-level statement) and makes sure queryDesc->totaltime
 * exists, so that End knows the duration.  End: if the execution took at
 * least folio_perf.plan_min_duration, compute the plan's shape fingerprint
 * and, only if the execution was slower than the one stored for the
 * statement, build the plan as EXPLAIN text and JSON (the only expensive
 * step) and store it.
 *
 * Fingerprint.  The plan's shape (plan_shape.c): node types, strategies,
 * scan directions, workers and relation names, no costs or OIDs.
 *
 * What is not captured.  Utility statements, statements without a query id,
 * EXPLAIN without ANALYZE (never executed), and executions that fail: they
 * never reach ExecutorEnd, and everything they allocated belongs to the
 * executor's memory or to plans_cxt, which is reset on every use.  Parallel
 * workers do nothing: the leader sees the whole plan and, in analyze mode,
 * the workers' instrumentation.
 *
 * Store.  A fixed-size shared hash table keyed like pg_stat_statements
 * (dbid, userid, queryid, toplevel) with folio_perf.max_plans entries, each
 * with a slot of folio_perf.plan_max_bytes for the text and the JSON,
 * compressed with pglz when they do not fit raw.  A plan that does not fit
 * even compressed keeps its text, cut at a line boundary, and loses its JSON
 * (counted as truncated).  The JSON is checked with PostgreSQL's own parser
 * when the plan is built: EXPLAIN can print invalid JSON (15's ANALYZE of a
 * MERGE into a partitioned table puts "Tuples Inserted" and its siblings
 * bare into the "Target Tables" array), and such a plan is handed out with
 * json_invalid set, so that a snapshot stores it as text instead of casting
 * it (counted as json_invalid).  When the table is full, a new statement evicts
 * the entry whose slowest execution is the fastest if it was slower than
 * that (counted as evicted); otherwise its execution is counted as dropped.
 *
 * Locking rule.  One LWLock.  The hot path (the stored plan is at least as
 * slow and this shape was seen) is a lookup and an atomic increment under
 * the lock held shared.  Plans are built with no lock held; the lock is
 * taken exclusively only to copy a built plan in, to add a shape, to evict
 * or to remove, never across anything that can fail.  Readers copy entries
 * under the lock held shared and decompress and build tuples afterwards.
 *
 * Snapshots.  folio_perf_plans_take() returns this database's entries and
 * remembers them; when the calling transaction commits (an XactCallback)
 * they are removed, unless they changed in the meantime.  A snapshot that
 * rolls back, or the subtransaction that took them, loses nothing, and a
 * second take in the same transaction does not return them again.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/plans.c
 *
 *-------------------------------------------------------------------------
 */
#include "folio_perf.h"
#include "plan_shape.h"

#include <limits.h>

#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "common/hashfn.h"
#include "common/pg_lzcompress.h"
#include "executor/executor.h"
#include "executor/instrument.h"
#include "miscadmin.h"
#include "nodes/plannodes.h"
#include "parser/parsetree.h"
#include "port/atomics.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "tcop/utility.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(folio_perf_plans_take);
PG_FUNCTION_INFO_V1(folio_perf_plans_current);
PG_FUNCTION_INFO_V1(folio_perf_plans_status);
PG_FUNCTION_INFO_V1(folio_perf_plans_reset);

/* Distinct plan shapes remembered per statement between two snapshots. */
#define FPERF_PLAN_SHAPES 8

/* Appended to a plan text cut to fit its slot. */
#define FPERF_PLAN_CUT_MARK "\n[plan cut: larger than folio_perf.plan_max_bytes]"

/* GUC variables */
int			fperf_plan_min_duration = 1;
bool		fperf_plan_analyze = false;
double		fperf_plan_sample_rate = 1.0;
int			fperf_max_plans = 1000;
int			fperf_plan_max_bytes = 8192;

/* Hash key: the key of a pg_stat_statements entry.  Padding is zeroed. */
typedef struct FPerfPlanKey
{
	Oid			dbid;
	Oid			userid;
	uint64		queryid;
	bool		toplevel;
} FPerfPlanKey;

/* One statement's slowest execution since it was last taken. */
typedef struct FPerfPlanEntry
{
	FPerfPlanKey key;			/* hash key, must be first */
	uint64		generation;		/* changes whenever the content changes */
	double		duration_ms;	/* the slowest execution */
	TimestampTz captured_at;	/* when it ended */
	uint64		fingerprint;	/* shape of its plan */
	pg_atomic_uint64 slow_calls;	/* executions at or above the threshold */
	int32		nshapes;		/* valid entries in shapes[] */
	uint64		shapes[FPERF_PLAN_SHAPES];	/* distinct shapes seen */
	bool		analyzed;		/* plan has actual rows (and timing) */
	bool		truncated;		/* JSON dropped and text maybe cut */
	bool		json_invalid;	/* the JSON EXPLAIN printed does not parse */
	bool		compressed;		/* data[] is pglz-compressed */
	int32		text_len;		/* bytes of text, uncompressed */
	int32		json_len;		/* bytes of JSON, uncompressed; 0: none */
	int32		stored_len;		/* bytes used in data[] */
	char		data[FLEXIBLE_ARRAY_MEMBER];	/* text then JSON */
} FPerfPlanEntry;

/* Shared state. */
typedef struct FPerfPlanShared
{
	LWLock	   *lock;			/* protects the hash table and the fields
								 * below up to the atomics */
	int			max_plans;		/* entries, fixed at startup */
	int			slot_bytes;		/* bytes of data[] per entry */
	uint64		next_generation;
	TimestampTz reset_at;
	pg_atomic_uint64 slow;		/* executions at or above the threshold */
	pg_atomic_uint64 stored;	/* plans written (new or slower) */
	pg_atomic_uint64 dropped;	/* executions that found no room */
	pg_atomic_uint64 evicted;	/* entries pushed out by slower ones */
	pg_atomic_uint64 truncated; /* plans that did not fit their slot */
	pg_atomic_uint64 json_invalid;	/* plans whose JSON does not parse */
	pg_atomic_uint64 analyzed;	/* executions run instrumented */
	pg_atomic_uint64 taken;		/* entries removed by snapshots */
} FPerfPlanShared;

/* What folio_perf_plans_take() handed out in this transaction. */
typedef struct FPerfPlanTaken
{
	FPerfPlanKey key;			/* hash key, must be first */
	uint64		generation;
	SubTransactionId subid;
} FPerfPlanTaken;

/* A copy of an entry, made under the lock. */
typedef struct FPerfPlanCopy
{
	FPerfPlanEntry *e;			/* header and data[0..stored_len) */
	int64		slow_calls;
} FPerfPlanCopy;

static FPerfPlanShared *planshared = NULL;
static HTAB *planhash = NULL;

/* Per backend */
static int	nesting_level = 0;
static bool current_analyze = false;
static MemoryContext plans_cxt = NULL;
static HTAB *taken_in_xact = NULL;	/* lives in TopTransactionContext */

static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static ExecutorRun_hook_type prev_ExecutorRun = NULL;
static ExecutorFinish_hook_type prev_ExecutorFinish = NULL;
static ExecutorEnd_hook_type prev_ExecutorEnd = NULL;
static ProcessUtility_hook_type prev_ProcessUtility = NULL;

#define plans_enabled() \
	(fperf_plan_min_duration >= 0 && planshared != NULL)

/* ----------------------------------------------------------------
 * Settings and shared memory
 * ----------------------------------------------------------------
 */

/*
 * Define the settings that exist with or without preloading.  Called from
 * _PG_init before the preload check.
 */
void
fperf_plans_define_gucs(void)
{
	DefineCustomIntVariable("folio_perf.plan_min_duration",
							"Minimum execution time of a statement whose plan is kept.",
							"Per statement, the plan of the slowest execution at or "
							"above this since the last snapshot is kept. -1 turns "
							"plan capture off; 0 considers every execution. Needs "
							"folio_perf in shared_preload_libraries.",
							&fperf_plan_min_duration,
							1,
							-1,
							INT_MAX,
							PGC_SUSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomBoolVariable("folio_perf.plan_analyze",
							 "Adds actual rows and timing per plan node to kept plans.",
							 "Instruments sampled executions as EXPLAIN ANALYZE does. "
							 "Every sampled execution pays for it, not only the slow "
							 "ones: see folio_perf.plan_sample_rate.",
							 &fperf_plan_analyze,
							 false,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);

	DefineCustomRealVariable("folio_perf.plan_sample_rate",
							 "Fraction of top-level statements instrumented when folio_perf.plan_analyze is on.",
							 "Nested statements are instrumented with their top-level "
							 "statement. Plans of executions not sampled are kept "
							 "without actual figures.",
							 &fperf_plan_sample_rate,
							 1.0,
							 0.0,
							 1.0,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
}

/*
 * Define the PGC_POSTMASTER settings that size the store.  Called from
 * _PG_init only while preloading.
 */
void
fperf_plans_define_postmaster_gucs(void)
{
	DefineCustomIntVariable("folio_perf.max_plans",
							"Maximum number of statements whose plan is kept between two snapshots.",
							"A further statement evicts the statement with the "
							"fastest slowest execution if it was slower; either way "
							"the loss is counted (folio_perf_plans_status).",
							&fperf_max_plans,
							1000,
							10,
							1000000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);

	DefineCustomIntVariable("folio_perf.plan_max_bytes",
							"Space for one statement's plan, text and JSON.",
							"Plans that do not fit are compressed; a plan that does "
							"not fit even then keeps its text, cut, and loses its "
							"JSON, and is counted as truncated.",
							&fperf_plan_max_bytes,
							8192,
							1024,
							1024 * 1024,
							PGC_POSTMASTER,
							GUC_UNIT_BYTE,
							NULL, NULL, NULL);
}

/* Size of one hash entry with its slot. */
static Size
plan_entry_size(void)
{
	return MAXALIGN(add_size(offsetof(FPerfPlanEntry, data),
							 (Size) fperf_plan_max_bytes));
}

/*
 * Shared memory needed by the plan store: 0 unless preloaded.
 */
Size
fperf_plans_shmem_size(void)
{
	if (!fperf_preloaded)
		return 0;
	return add_size(MAXALIGN(sizeof(FPerfPlanShared)),
					hash_estimate_size(fperf_max_plans, plan_entry_size()));
}

/*
 * Create or attach to the plan store.  Caller holds AddinShmemInitLock.
 */
void
fperf_plans_shmem_init(void)
{
	bool		found;
	HASHCTL		info;

	if (!fperf_preloaded)
		return;

	planshared = ShmemInitStruct("folio_perf plans",
								 sizeof(FPerfPlanShared), &found);
	if (!found)
	{
		planshared->lock = &(GetNamedLWLockTranche(FPERF_NAME))[FPERF_LOCK_PLANS].lock;
		planshared->max_plans = fperf_max_plans;
		planshared->slot_bytes = fperf_plan_max_bytes;
		planshared->next_generation = 1;
		planshared->reset_at = GetCurrentTimestamp();
		pg_atomic_init_u64(&planshared->slow, 0);
		pg_atomic_init_u64(&planshared->stored, 0);
		pg_atomic_init_u64(&planshared->dropped, 0);
		pg_atomic_init_u64(&planshared->evicted, 0);
		pg_atomic_init_u64(&planshared->truncated, 0);
		pg_atomic_init_u64(&planshared->json_invalid, 0);
		pg_atomic_init_u64(&planshared->analyzed, 0);
		pg_atomic_init_u64(&planshared->taken, 0);
	}

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(FPerfPlanKey);
	info.entrysize = plan_entry_size();
	planhash = ShmemInitHash("folio_perf plans hash",
							 fperf_max_plans, fperf_max_plans,
							 &info, HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);
}

/* ----------------------------------------------------------------
 * Building and packing a plan
 * ----------------------------------------------------------------
 */

/*
 * EXPLAIN of an executed query in one format, with costs, non-default
 * planner settings and, if the execution was instrumented, actual figures.
 * Allocates in CurrentMemoryContext.
 */
static StringInfo
explain_plan(QueryDesc *queryDesc, bool analyze, ExplainFormat format)
{
	ExplainState *es = NewExplainState();

	es->analyze = analyze;
	es->timing = analyze &&
		(queryDesc->instrument_options & INSTRUMENT_TIMER) != 0;
	es->costs = true;
	es->verbose = false;
	es->buffers = false;
	es->summary = false;
	es->settings = true;
	es->format = format;

	ExplainBeginOutput(es);
	ExplainPrintPlan(es, queryDesc);
	ExplainEndOutput(es);

	/* Remove the last line break */
	if (es->str->len > 0 && es->str->data[es->str->len - 1] == '\n')
		es->str->data[--es->str->len] = '\0';

	/* The members printed between [ and ] are those of one object */
	if (format == EXPLAIN_FORMAT_JSON && es->str->len >= 2)
	{
		es->str->data[0] = '{';
		es->str->data[es->str->len - 1] = '}';
	}
	return es->str;
}

/*
 * Pack a plan's text and JSON into slot (slot_bytes long): raw if they fit,
 * else compressed, else the text alone (raw or compressed), else the text
 * cut at a line boundary.  Sets e's length and flag fields.
 */
static void
pack_plan(FPerfPlanEntry *e, char *slot, int slot_bytes,
		  StringInfo text, StringInfo json)
{
	int32		tlen = text->len;
	int32		jlen = json->len;
	char	   *raw;
	char	   *comp;
	int32		clen;

	e->truncated = false;
	e->compressed = false;

	raw = palloc((Size) tlen + jlen);
	memcpy(raw, text->data, tlen);
	memcpy(raw + tlen, json->data, jlen);

	if (tlen + jlen <= slot_bytes)
	{
		memcpy(slot, raw, tlen + jlen);
		e->text_len = tlen;
		e->json_len = jlen;
		e->stored_len = tlen + jlen;
		return;
	}

	comp = palloc(PGLZ_MAX_OUTPUT(tlen + jlen));
	clen = pglz_compress(raw, tlen + jlen, comp, PGLZ_strategy_always);
	if (clen >= 0 && clen <= slot_bytes)
	{
		memcpy(slot, comp, clen);
		e->compressed = true;
		e->text_len = tlen;
		e->json_len = jlen;
		e->stored_len = clen;
		return;
	}

	/* The JSON has to go; keep as much of the text as fits. */
	e->truncated = true;
	e->json_len = 0;
	if (tlen <= slot_bytes)
	{
		memcpy(slot, text->data, tlen);
		e->text_len = e->stored_len = tlen;
		return;
	}
	clen = pglz_compress(text->data, tlen, comp, PGLZ_strategy_always);
	if (clen >= 0 && clen <= slot_bytes)
	{
		memcpy(slot, comp, clen);
		e->compressed = true;
		e->text_len = tlen;
		e->stored_len = clen;
		return;
	}
	else
	{
		int			mark = (int) strlen(FPERF_PLAN_CUT_MARK);
		int			keep = slot_bytes - mark;

		while (keep > 0 && text->data[keep] != '\n')
			keep--;
		if (keep <= 0)
			keep = slot_bytes - mark;
		memcpy(slot, text->data, keep);
		memcpy(slot + keep, FPERF_PLAN_CUT_MARK, mark);
		e->text_len = e->stored_len = keep + mark;
	}
}

/* ----------------------------------------------------------------
 * The store
 * ----------------------------------------------------------------
 */

/* True if fp is among e's shapes; adds it if there is room.  Exclusive. */
static bool
entry_add_shape(FPerfPlanEntry *e, uint64 fp)
{
	int			i;

	for (i = 0; i < e->nshapes; i++)
		if (e->shapes[i] == fp)
			return false;
	if (e->nshapes < FPERF_PLAN_SHAPES)
		e->shapes[e->nshapes++] = fp;
	return true;
}

/* True if fp is among e's shapes, or e has no room for more.  Shared. */
static bool
entry_knows_shape(FPerfPlanEntry *e, uint64 fp)
{
	int			i;

	if (e->nshapes >= FPERF_PLAN_SHAPES)
		return true;
	for (i = 0; i < e->nshapes; i++)
		if (e->shapes[i] == fp)
			return true;
	return false;
}

/*
 * The entry with the fastest slowest execution, for eviction.  Caller holds
 * the lock.  Linear, but only run when the table is full.
 */
static FPerfPlanEntry *
fastest_entry(void)
{
	HASH_SEQ_STATUS hstat;
	FPerfPlanEntry *e;
	FPerfPlanEntry *min = NULL;

	hash_seq_init(&hstat, planhash);
	while ((e = hash_seq_search(&hstat)) != NULL)
	{
		if (min == NULL || e->duration_ms < min->duration_ms)
			min = e;
	}
	return min;
}

/*
 * An execution at or above the threshold ended: count it, remember its
 * shape, and keep its plan if it is the statement's slowest.  Everything
 * allocated here goes into plans_cxt, reset at the start and the end.
 */
static void
plans_consider(QueryDesc *queryDesc, double msec)
{
	FPerfPlanKey key;
	FPerfPlanEntry *entry;
	FPerfPlanEntry *local;
	MemoryContext oldcxt;
	uint64		fp;
	bool		analyzed;
	bool		counted = false;
	bool		need_plan;
	bool		need_shape;
	bool		full = false;
	bool		found;
	StringInfo	text;
	StringInfo	json;

	if (plans_cxt == NULL)
		plans_cxt = AllocSetContextCreate(TopMemoryContext,
										  "folio_perf plans",
										  ALLOCSET_DEFAULT_SIZES);
	MemoryContextReset(plans_cxt);
	oldcxt = MemoryContextSwitchTo(plans_cxt);

	memset(&key, 0, sizeof(key));
	key.dbid = MyDatabaseId;
	key.userid = GetUserId();
	key.queryid = queryDesc->plannedstmt->queryId;
	key.toplevel = (nesting_level == 0);

	fp = fperf_plan_fingerprint(queryDesc->plannedstmt);
	analyzed = (queryDesc->instrument_options &
				(INSTRUMENT_TIMER | INSTRUMENT_ROWS)) != 0 &&
		queryDesc->planstate != NULL &&
		queryDesc->planstate->instrument != NULL;

	pg_atomic_fetch_add_u64(&planshared->slow, 1);

	/* Hot path: nothing new about this statement. */
	LWLockAcquire(planshared->lock, LW_SHARED);
	entry = (FPerfPlanEntry *) hash_search(planhash, &key, HASH_FIND, NULL);
	if (entry != NULL)
	{
		pg_atomic_fetch_add_u64(&entry->slow_calls, 1);
		counted = true;
		need_plan = msec > entry->duration_ms;
		need_shape = !entry_knows_shape(entry, fp);
	}
	else
	{
		need_plan = true;
		need_shape = false;
		full = hash_get_num_entries(planhash) >= planshared->max_plans;
	}
	LWLockRelease(planshared->lock);

	if (!need_plan)
	{
		if (need_shape)
		{
			LWLockAcquire(planshared->lock, LW_EXCLUSIVE);
			entry = (FPerfPlanEntry *) hash_search(planhash, &key, HASH_FIND, NULL);
			if (entry != NULL && entry_add_shape(entry, fp))
				entry->generation = planshared->next_generation++;
			LWLockRelease(planshared->lock);
		}
		goto done;
	}

	/* A new statement in a full store: worth building its plan? */
	if (full)
	{
		FPerfPlanEntry *victim;
		bool		room;

		LWLockAcquire(planshared->lock, LW_SHARED);
		room = hash_get_num_entries(planhash) < planshared->max_plans ||
			hash_search(planhash, &key, HASH_FIND, NULL) != NULL;
		if (!room)
		{
			victim = fastest_entry();
			room = (victim != NULL && msec > victim->duration_ms);
		}
		LWLockRelease(planshared->lock);
		if (!room)
		{
			pg_atomic_fetch_add_u64(&planshared->dropped, 1);
			goto done;
		}
	}

	/* Build the plan with no lock held. */
	text = explain_plan(queryDesc, analyzed, EXPLAIN_FORMAT_TEXT);
	json = explain_plan(queryDesc, analyzed, EXPLAIN_FORMAT_JSON);
	local = palloc0(plan_entry_size());
	pack_plan(local, local->data, planshared->slot_bytes, text, json);
	local->json_invalid = local->json_len > 0 &&
		!fperf_json_valid(json->data, json->len);

	LWLockAcquire(planshared->lock, LW_EXCLUSIVE);
	entry = (FPerfPlanEntry *) hash_search(planhash, &key, HASH_FIND, NULL);
	if (entry == NULL)
	{
		/*
		 * The store never grows past max_plans: what the checks above saw
		 * without this lock may have changed (another backend filled the
		 * last slot, or the fastest entry got slower).  If there is still no
		 * room and no faster entry to evict, the plan is dropped; an insert
		 * past the declared size would take the server's free shared memory,
		 * which a shared hash never gives back.
		 */
		if (hash_get_num_entries(planhash) >= planshared->max_plans)
		{
			FPerfPlanEntry *victim = fastest_entry();

			if (victim == NULL || msec <= victim->duration_ms)
			{
				LWLockRelease(planshared->lock);
				pg_atomic_fetch_add_u64(&planshared->dropped, 1);
				goto done;
			}
			hash_search(planhash, &victim->key, HASH_REMOVE, NULL);
			pg_atomic_fetch_add_u64(&planshared->evicted, 1);
		}
		entry = (FPerfPlanEntry *) hash_search(planhash, &key,
											   HASH_ENTER_NULL, &found);
		if (entry == NULL)
		{
			LWLockRelease(planshared->lock);
			pg_atomic_fetch_add_u64(&planshared->dropped, 1);
			goto done;
		}
		Assert(!found);
		entry->duration_ms = -1;
		entry->nshapes = 0;
		pg_atomic_init_u64(&entry->slow_calls, 0);
	}
	if (!counted)
		pg_atomic_fetch_add_u64(&entry->slow_calls, 1);
	entry_add_shape(entry, fp);
	if (msec > entry->duration_ms)
	{
		entry->duration_ms = msec;
		entry->captured_at = GetCurrentTimestamp();
		entry->fingerprint = fp;
		entry->analyzed = analyzed;
		entry->truncated = local->truncated;
		entry->json_invalid = local->json_invalid;
		entry->compressed = local->compressed;
		entry->text_len = local->text_len;
		entry->json_len = local->json_len;
		entry->stored_len = local->stored_len;
		memcpy(entry->data, local->data, local->stored_len);
		pg_atomic_fetch_add_u64(&planshared->stored, 1);
		if (local->truncated)
			pg_atomic_fetch_add_u64(&planshared->truncated, 1);
		if (local->json_invalid)
			pg_atomic_fetch_add_u64(&planshared->json_invalid, 1);
	}
	entry->generation = planshared->next_generation++;
	LWLockRelease(planshared->lock);

done:
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(plans_cxt);
}

/* ----------------------------------------------------------------
 * Hooks
 * ----------------------------------------------------------------
 */

/* True if this query's plan may be captured. */
static inline bool
plans_tracked(QueryDesc *queryDesc)
{
	return plans_enabled() &&
		!IsParallelWorker() &&
		IsTransactionState() &&
		queryDesc->plannedstmt->queryId != UINT64CONST(0) &&
		queryDesc->plannedstmt->commandType != CMD_UTILITY;
}

/* At a top-level statement: is it sampled for instrumentation? */
static inline void
plans_sample_toplevel(void)
{
	current_analyze = fperf_plan_analyze &&
		fperf_plan_sample_rate > 0 &&
		fperf_random_fraction() < fperf_plan_sample_rate;
}

/*
 * ExecutorStart hook: instrument sampled statements, make sure the total
 * time is measured.
 */
static void
fperf_plans_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	bool		tracked = plans_tracked(queryDesc);

	if (nesting_level == 0 && plans_enabled())
		plans_sample_toplevel();

	if (tracked && current_analyze && (eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0)
	{
		queryDesc->instrument_options |= INSTRUMENT_TIMER | INSTRUMENT_ROWS;
		pg_atomic_fetch_add_u64(&planshared->analyzed, 1);
	}

	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	/*
	 * pg_stat_statements (before us in the chain) usually allocated it.
	 * INSTRUMENT_ALL, as auto_explain does, in case another module relies on
	 * its buffer and WAL counters.
	 */
	if (tracked && queryDesc->totaltime == NULL)
	{
		MemoryContext oldcxt;

		oldcxt = MemoryContextSwitchTo(queryDesc->estate->es_query_cxt);
		queryDesc->totaltime = fperf_instr_alloc(1, INSTRUMENT_ALL);
		MemoryContextSwitchTo(oldcxt);
	}
}

/*
 * ExecutorRun hook: track the nesting level.
 */
static void
fperf_plans_ExecutorRun(FPERF_EXECUTOR_RUN_ARGS)
{
	nesting_level++;
	PG_TRY();
	{
		if (prev_ExecutorRun)
			FPERF_EXECUTOR_RUN_CALL(prev_ExecutorRun);
		else
			FPERF_EXECUTOR_RUN_CALL(standard_ExecutorRun);
	}
	PG_FINALLY();
	{
		nesting_level--;
	}
	PG_END_TRY();
}

/*
 * ExecutorFinish hook: track the nesting level.
 */
static void
fperf_plans_ExecutorFinish(QueryDesc *queryDesc)
{
	nesting_level++;
	PG_TRY();
	{
		if (prev_ExecutorFinish)
			prev_ExecutorFinish(queryDesc);
		else
			standard_ExecutorFinish(queryDesc);
	}
	PG_FINALLY();
	{
		nesting_level--;
	}
	PG_END_TRY();
}

/*
 * ExecutorEnd hook: consider the plan of an execution that took at least
 * folio_perf.plan_min_duration.
 */
static void
fperf_plans_ExecutorEnd(QueryDesc *queryDesc)
{
	if (queryDesc->totaltime != NULL && plans_tracked(queryDesc) &&
		(queryDesc->estate->es_top_eflags & EXEC_FLAG_EXPLAIN_ONLY) == 0)
	{
		double		msec;

		/* Several hooks may do this; it is idempotent. */
		InstrEndLoop(queryDesc->totaltime);
		msec = queryDesc->totaltime->total * 1000.0;
		if (msec >= fperf_plan_min_duration)
			plans_consider(queryDesc, msec);
	}

	if (prev_ExecutorEnd)
		prev_ExecutorEnd(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
}

/*
 * ProcessUtility hook: statements run inside a utility statement (CALL, DO,
 * CREATE TABLE AS, EXPLAIN ANALYZE, ...) are nested, as in
 * pg_stat_statements; EXECUTE, PREPARE and DEALLOCATE do not nest.
 */
static void
fperf_plans_ProcessUtility(FPERF_PROCESS_UTILITY_ARGS)
{
	Node	   *parsetree = pstmt->utilityStmt;
	bool		bump = !IsA(parsetree, ExecuteStmt) &&
		!IsA(parsetree, PrepareStmt) &&
		!IsA(parsetree, DeallocateStmt);
	bool		aside;

	if (bump && nesting_level == 0 && plans_enabled())
		plans_sample_toplevel();

	/* DROP DATABASE etc. of the sampler's database: the sampler steps aside */
	aside = fperf_sampler_step_aside(parsetree);

	if (bump)
		nesting_level++;
	PG_TRY();
	{
		if (prev_ProcessUtility)
			FPERF_PROCESS_UTILITY_CALL(prev_ProcessUtility);
		else
			FPERF_PROCESS_UTILITY_CALL(standard_ProcessUtility);
	}
	PG_FINALLY();
	{
		if (bump)
			nesting_level--;
		if (aside)
			fperf_sampler_step_aside_end();
	}
	PG_END_TRY();
}

/* ----------------------------------------------------------------
 * Removal of taken entries at commit
 * ----------------------------------------------------------------
 */

/*
 * Transaction callback: at commit, remove the entries this transaction
 * took, unless they changed since; at abort, forget them.  The list lives
 * in TopTransactionContext, still valid when these events fire.
 */
static void
plans_xact_callback(XactEvent event, void *arg)
{
	HASH_SEQ_STATUS hstat;
	FPerfPlanTaken *t;

	if (taken_in_xact == NULL)
		return;

	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_PREPARE:
			if (planshared != NULL)
			{
				LWLockAcquire(planshared->lock, LW_EXCLUSIVE);
				hash_seq_init(&hstat, taken_in_xact);
				while ((t = hash_seq_search(&hstat)) != NULL)
				{
					FPerfPlanEntry *e;

					e = hash_search(planhash, &t->key, HASH_FIND, NULL);
					if (e != NULL && e->generation == t->generation)
					{
						hash_search(planhash, &t->key, HASH_REMOVE, NULL);
						pg_atomic_fetch_add_u64(&planshared->taken, 1);
					}
				}
				LWLockRelease(planshared->lock);
			}
			taken_in_xact = NULL;
			break;
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
			taken_in_xact = NULL;
			break;
		default:
			break;
	}
}

/*
 * Subtransaction callback: entries taken in an aborted subtransaction (or
 * its children) are not removed at commit.
 */
static void
plans_subxact_callback(SubXactEvent event, SubTransactionId mySubid,
					   SubTransactionId parentSubid, void *arg)
{
	HASH_SEQ_STATUS hstat;
	FPerfPlanTaken *t;

	if (taken_in_xact == NULL || event != SUBXACT_EVENT_ABORT_SUB)
		return;
	hash_seq_init(&hstat, taken_in_xact);
	while ((t = hash_seq_search(&hstat)) != NULL)
	{
		if (t->subid >= mySubid)
			hash_search(taken_in_xact, &t->key, HASH_REMOVE, NULL);
	}
}

/*
 * Install the hooks and callbacks.  Called from _PG_init while preloading.
 */
void
fperf_plans_install_hooks(void)
{
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = fperf_plans_ExecutorStart;
	prev_ExecutorRun = ExecutorRun_hook;
	ExecutorRun_hook = fperf_plans_ExecutorRun;
	prev_ExecutorFinish = ExecutorFinish_hook;
	ExecutorFinish_hook = fperf_plans_ExecutorFinish;
	prev_ExecutorEnd = ExecutorEnd_hook;
	ExecutorEnd_hook = fperf_plans_ExecutorEnd;
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = fperf_plans_ProcessUtility;

	RegisterXactCallback(plans_xact_callback, NULL);
	RegisterSubXactCallback(plans_subxact_callback, NULL);
}

/* ----------------------------------------------------------------
 * SQL-callable functions
 * ----------------------------------------------------------------
 */

static void
plans_check_attached(void)
{
	if (planshared == NULL || planhash == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("folio_perf must be loaded via shared_preload_libraries"),
				 errhint("Add folio_perf to shared_preload_libraries and restart the server.")));
}

#define PLANS_READ_COLS 14

/*
 * Copy this database's entries under the lock held shared.  Returns the
 * number of copies in *copies (allocated in CurrentMemoryContext).
 */
static int
plans_copy(FPerfPlanCopy **copies)
{
	HASH_SEQ_STATUS hstat;
	FPerfPlanEntry *e;
	FPerfPlanCopy *c;
	int			n = 0;
	int			cap = planshared->max_plans;

	c = palloc(sizeof(FPerfPlanCopy) * cap);
	LWLockAcquire(planshared->lock, LW_SHARED);
	hash_seq_init(&hstat, planhash);
	while ((e = hash_seq_search(&hstat)) != NULL)
	{
		if (e->key.dbid != MyDatabaseId)
			continue;
		if (n >= cap)
		{
			hash_seq_term(&hstat);
			break;
		}
		c[n].e = palloc(offsetof(FPerfPlanEntry, data) + e->stored_len);
		memcpy(c[n].e, e, offsetof(FPerfPlanEntry, data) + e->stored_len);
		c[n].slow_calls = (int64) pg_atomic_read_u64(&e->slow_calls);
		n++;
	}
	LWLockRelease(planshared->lock);
	*copies = c;
	return n;
}

/*
 * Remember an entry handed out by folio_perf_plans_take() in this
 * transaction.  Returns false if it was already handed out unchanged.
 */
static bool
plans_remember_taken(FPerfPlanEntry *e)
{
	FPerfPlanTaken *t;
	bool		found;

	if (taken_in_xact == NULL)
	{
		HASHCTL		info;

		memset(&info, 0, sizeof(info));
		info.keysize = sizeof(FPerfPlanKey);
		info.entrysize = sizeof(FPerfPlanTaken);
		info.hcxt = TopTransactionContext;
		taken_in_xact = hash_create("folio_perf plans taken", 256, &info,
									HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	t = hash_search(taken_in_xact, &e->key, HASH_ENTER, &found);
	if (found && t->generation == e->generation)
		return false;
	t->generation = e->generation;
	t->subid = GetCurrentSubTransactionId();
	return true;
}

/*
 * Shared body of folio_perf_plans_take() and folio_perf_plans_current().
 */
static void
plans_read(FunctionCallInfo fcinfo, bool take)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	FPerfPlanCopy *copies;
	int			n;
	int			i;
	bool		see_all;
	bool		old_decl;

	fperf_init_srf(fcinfo);
	/* 1.0.0's declaration has no json_invalid (column 11) */
	old_decl = (rsinfo->setDesc->natts == PLANS_READ_COLS - 1);
	if (rsinfo->setDesc->natts != PLANS_READ_COLS && !old_decl)
		elog(ERROR, "incorrect number of output arguments");

	/* Without preloading there is nothing to read, which is not an error. */
	if (planshared == NULL || planhash == NULL)
		return;

	see_all = has_privs_of_role(GetUserId(), ROLE_PG_READ_ALL_STATS);
	n = plans_copy(&copies);

	for (i = 0; i < n; i++)
	{
		FPerfPlanEntry *e = copies[i].e;
		Datum		values[PLANS_READ_COLS];
		bool		nulls[PLANS_READ_COLS];
		Datum	   *shapes;
		char	   *raw;
		int			j;

		if (take && !plans_remember_taken(e))
			continue;

		memset(nulls, 0, sizeof(nulls));
		values[0] = ObjectIdGetDatum(e->key.dbid);
		values[1] = ObjectIdGetDatum(e->key.userid);
		values[2] = Int64GetDatum((int64) e->key.queryid);
		values[3] = BoolGetDatum(e->key.toplevel);
		values[4] = Float8GetDatum(e->duration_ms);
		values[5] = TimestampTzGetDatum(e->captured_at);
		values[6] = Int64GetDatum((int64) e->fingerprint);
		shapes = palloc(sizeof(Datum) * Max(e->nshapes, 1));
		for (j = 0; j < e->nshapes; j++)
			shapes[j] = Int64GetDatum((int64) e->shapes[j]);
		values[7] = PointerGetDatum(construct_array(shapes, e->nshapes, INT8OID,
													sizeof(int64), FLOAT8PASSBYVAL,
													TYPALIGN_DOUBLE));
		values[8] = Int64GetDatum(copies[i].slow_calls);
		values[9] = BoolGetDatum(e->analyzed);
		values[10] = BoolGetDatum(e->truncated);
		values[11] = BoolGetDatum(e->json_invalid);

		raw = e->data;
		if (e->compressed)
		{
			raw = palloc((Size) e->text_len + e->json_len);
			if (pglz_decompress(e->data, e->stored_len, raw,
								e->text_len + e->json_len, true) < 0)
				raw = NULL;
		}
		if (!take && !see_all && e->key.userid != GetUserId())
		{
			values[12] = CStringGetTextDatum("<insufficient privilege>");
			nulls[13] = true;
		}
		else if (raw == NULL)
		{
			/* cannot happen unless shared memory was overwritten */
			values[12] = CStringGetTextDatum("<plan unreadable>");
			nulls[13] = true;
		}
		else
		{
			values[12] = PointerGetDatum(cstring_to_text_with_len(raw, e->text_len));
			if (e->json_len > 0)
				values[13] = PointerGetDatum(cstring_to_text_with_len(raw + e->text_len,
																	  e->json_len));
			else
				nulls[13] = true;
		}
		if (old_decl)
		{
			/*
			 * 1.0.0's snapshot casts plan_json to jsonb: JSON that does not
			 * parse is not handed to it (its text plan is).
			 */
			if (e->json_invalid)
				nulls[13] = true;
			memmove(&values[11], &values[12], 2 * sizeof(Datum));
			memmove(&nulls[11], &nulls[12], 2 * sizeof(bool));
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
}

/*
 * folio_perf_plans_take(): this database's plans, removed from the store
 * when the calling transaction commits.  For snapshots; writer only.
 * Returns nothing when not preloaded.
 */
Datum
folio_perf_plans_take(PG_FUNCTION_ARGS)
{
	plans_read(fcinfo, true);
	PG_RETURN_VOID();
}

/*
 * folio_perf_plans_current(): this database's plans as they are now,
 * nothing removed.  Plans of other roles' statements are shown only to
 * members of pg_read_all_stats, as query texts in pg_stat_statements.
 */
Datum
folio_perf_plans_current(PG_FUNCTION_ARGS)
{
	plans_read(fcinfo, false);
	PG_RETURN_VOID();
}

#define PLANS_STATUS_COLS 18

/*
 * folio_perf_plans_status(): settings, fill and counters of the store.
 */
Datum
folio_perf_plans_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[PLANS_STATUS_COLS];
	bool		nulls[PLANS_STATUS_COLS];
	int64		entries = 0;
	int64		entries_db = 0;
	bool		old_decl;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	/* 1.0.0's declaration has no json_invalid (column 14) */
	old_decl = (tupdesc->natts == PLANS_STATUS_COLS - 1);
	if (tupdesc->natts != PLANS_STATUS_COLS && !old_decl)
		elog(ERROR, "incorrect number of output arguments");

	memset(nulls, 0, sizeof(nulls));
	values[0] = BoolGetDatum(planshared != NULL);
	values[1] = Int32GetDatum(fperf_plan_min_duration);
	values[2] = BoolGetDatum(fperf_plan_analyze);
	values[3] = Float8GetDatum(fperf_plan_sample_rate);

	if (planshared == NULL || planhash == NULL)
	{
		int			i;

		for (i = 4; i < PLANS_STATUS_COLS; i++)
			nulls[i] = true;
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
	}

	LWLockAcquire(planshared->lock, LW_SHARED);
	{
		HASH_SEQ_STATUS hstat;
		FPerfPlanEntry *e;

		hash_seq_init(&hstat, planhash);
		while ((e = hash_seq_search(&hstat)) != NULL)
		{
			entries++;
			if (e->key.dbid == MyDatabaseId)
				entries_db++;
		}
	}
	values[17] = TimestampTzGetDatum(planshared->reset_at);
	LWLockRelease(planshared->lock);

	values[4] = Int32GetDatum(planshared->max_plans);
	values[5] = Int32GetDatum(planshared->slot_bytes);
	values[6] = Int64GetDatum((int64) fperf_plans_shmem_size());
	values[7] = Int64GetDatum(entries);
	values[8] = Int64GetDatum(entries_db);
	values[9] = Int64GetDatum((int64) pg_atomic_read_u64(&planshared->slow));
	values[10] = Int64GetDatum((int64) pg_atomic_read_u64(&planshared->stored));
	values[11] = Int64GetDatum((int64) pg_atomic_read_u64(&planshared->dropped));
	values[12] = Int64GetDatum((int64) pg_atomic_read_u64(&planshared->evicted));
	values[13] = Int64GetDatum((int64) pg_atomic_read_u64(&planshared->truncated));
	values[14] = Int64GetDatum((int64) pg_atomic_read_u64(&planshared->json_invalid));
	values[15] = Int64GetDatum((int64) pg_atomic_read_u64(&planshared->analyzed));
	values[16] = Int64GetDatum((int64) pg_atomic_read_u64(&planshared->taken));
	if (old_decl)
	{
		memmove(&values[14], &values[15], 3 * sizeof(Datum));
		memmove(&nulls[14], &nulls[15], 3 * sizeof(bool));
	}

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * folio_perf_plans_reset(): empties the store (every database) and zeroes
 * the counters; returns the number of entries removed.
 */
Datum
folio_perf_plans_reset(PG_FUNCTION_ARGS)
{
	HASH_SEQ_STATUS hstat;
	FPerfPlanEntry *e;
	int64		n = 0;

	plans_check_attached();

	LWLockAcquire(planshared->lock, LW_EXCLUSIVE);
	hash_seq_init(&hstat, planhash);
	while ((e = hash_seq_search(&hstat)) != NULL)
	{
		hash_search(planhash, &e->key, HASH_REMOVE, NULL);
		n++;
	}
	planshared->reset_at = GetCurrentTimestamp();
	pg_atomic_write_u64(&planshared->slow, 0);
	pg_atomic_write_u64(&planshared->stored, 0);
	pg_atomic_write_u64(&planshared->dropped, 0);
	pg_atomic_write_u64(&planshared->evicted, 0);
	pg_atomic_write_u64(&planshared->truncated, 0);
	pg_atomic_write_u64(&planshared->json_invalid, 0);
	pg_atomic_write_u64(&planshared->analyzed, 0);
	pg_atomic_write_u64(&planshared->taken, 0);
	LWLockRelease(planshared->lock);

	PG_RETURN_INT64(n);
}
