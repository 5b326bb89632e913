/*-------------------------------------------------------------------------
 *
 * compat.h
 *		Version shims for folio_perf: every #if PG_VERSION_NUM lives here.
 *
 * folio_perf supports PostgreSQL 15, 16, 17 and 18: it is built with
 * -Werror and tested on 15, 17 and 18 (test/run_tests.sh) and was compiled
 * and regression-tested on 16 (see README.md).  The branches for 13 and 14
 * below are kept from earlier work but are neither built nor tested; the
 * remote capture (SQL, over libpq) supports targets from 13 on.  Logic
 * files include this header and call the wrappers below instead of testing
 * the server version themselves.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/compat.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FOLIO_PERF_COMPAT_H
#define FOLIO_PERF_COMPAT_H

#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "utils/guc.h"

#if PG_VERSION_NUM < 130000
#error "folio_perf requires PostgreSQL 13 or later"
#endif

/*
 * Materialize-mode set-returning functions: InitMaterializedSRF() is the
 * PostgreSQL 15.x name; 15.0 called it SetSingleFuncCall(); 13 and 14 need
 * the long form.
 */
#if PG_VERSION_NUM >= 150000
#define fperf_init_srf(fcinfo) InitMaterializedSRF((fcinfo), 0)
#else
#include "miscadmin.h"
#include "utils/tuplestore.h"
static inline void
fperf_init_srf(FunctionCallInfo fcinfo)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TupleDesc	tupdesc;
	MemoryContext oldcxt;

	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) ||
		!(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("set-valued function called in context that cannot accept a set")));
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	oldcxt = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = tuplestore_begin_heap(true, false, work_mem);
	rsinfo->setDesc = CreateTupleDescCopy(tupdesc);
	MemoryContextSwitchTo(oldcxt);
}
#endif

/* MarkGUCPrefixReserved() replaced EmitWarningsOnPlaceholders() in 15. */
#if PG_VERSION_NUM >= 150000
#define fperf_reserve_guc_prefix(p) MarkGUCPrefixReserved(p)
#else
#define fperf_reserve_guc_prefix(p) EmitWarningsOnPlaceholders(p)
#endif

/*
 * Shared memory requests: from 15 on they must be made in shmem_request_hook;
 * before 15 in _PG_init itself.
 */
#if PG_VERSION_NUM >= 150000
#define FPERF_HAVE_SHMEM_REQUEST_HOOK 1
#endif

/* post_parse_analyze_hook gained a JumbleState argument in 14. */
#if PG_VERSION_NUM >= 140000
#define FPERF_POST_PARSE_ARGS ParseState *pstate, Query *query, JumbleState *jstate
#define FPERF_POST_PARSE_CALL(hook) (hook) (pstate, query, jstate)
#else
#define FPERF_POST_PARSE_ARGS ParseState *pstate, Query *query
#define FPERF_POST_PARSE_CALL(hook) (hook) (pstate, query)
#endif

/* JumbleState moved from utils/queryjumble.h to nodes/queryjumble.h in 16. */
#if PG_VERSION_NUM >= 160000
#include "nodes/queryjumble.h"
#elif PG_VERSION_NUM >= 140000
#include "utils/queryjumble.h"
#endif

/* ExecutorRun lost its execute_once argument in 18. */
#if PG_VERSION_NUM >= 180000
#define FPERF_EXECUTOR_RUN_ARGS QueryDesc *queryDesc, ScanDirection direction, \
	uint64 count
#define FPERF_EXECUTOR_RUN_CALL(hook) (hook) (queryDesc, direction, count)
#else
#define FPERF_EXECUTOR_RUN_ARGS QueryDesc *queryDesc, ScanDirection direction, \
	uint64 count, bool execute_once
#define FPERF_EXECUTOR_RUN_CALL(hook) (hook) (queryDesc, direction, count, execute_once)
#endif

/*
 * 18 split commands/explain.h: ExplainState and ExplainFormat are in
 * explain_state.h, ExplainBeginOutput() and ExplainEndOutput() in
 * explain_format.h.
 */
#include "commands/explain.h"
#if PG_VERSION_NUM >= 180000
#include "commands/explain_format.h"
#include "commands/explain_state.h"
#endif


/*
 * Fields of PgStat_StatTabEntry renamed in 16.
 */
#if PG_VERSION_NUM >= 160000
#define FPERF_TAB_LIVE(e)			((e)->live_tuples)
#define FPERF_TAB_DEAD(e)			((e)->dead_tuples)
#define FPERF_TAB_AUTOVACUUMS(e)	((e)->autovacuum_count)
#define FPERF_TAB_AUTOANALYZES(e)	((e)->autoanalyze_count)
#else
#define FPERF_TAB_LIVE(e)			((e)->n_live_tuples)
#define FPERF_TAB_DEAD(e)			((e)->n_dead_tuples)
#define FPERF_TAB_AUTOVACUUMS(e)	((e)->autovac_vacuum_count)
#define FPERF_TAB_AUTOANALYZES(e)	((e)->autovac_analyze_count)
#endif

/*
 * The object of a shared statistics hash key: objoid (an Oid) up to 17,
 * objid (64 bits) from 18.  Used by the one-pass read of the shared
 * statistics (relstats.c).
 */
#if PG_VERSION_NUM >= 180000
#define FPERF_PGSTAT_KEY_OBJ(k)	((Oid) (k).objid)
#else
#define FPERF_PGSTAT_KEY_OBJ(k)	((k).objoid)
#endif

/*
 * Walking the backend status snapshot by position: the accessor was
 * pgstat_fetch_stat_local_beentry() up to 15 and is
 * pgstat_get_local_beentry_by_index() from 16.
 */
#if PG_VERSION_NUM >= 160000
#define fperf_local_beentry(idx) pgstat_get_local_beentry_by_index(idx)
#else
#define fperf_local_beentry(idx) pgstat_fetch_stat_local_beentry(idx)
#endif

/* PgBackendStatus.st_query_id exists from 14; 13 has no query ids there. */
#if PG_VERSION_NUM >= 140000
#define FPERF_BEENTRY_QUERYID(be) ((be)->st_query_id)
#else
#define FPERF_BEENTRY_QUERYID(be) UINT64CONST(0)
#endif

/*
 * dynahash: string keys are named with HASH_STRINGS from 14; before that
 * they were the default when neither HASH_BLOBS nor HASH_FUNCTION is given.
 */
#include "utils/hsearch.h"
#ifndef HASH_STRINGS
#define HASH_STRINGS 0
#endif

/*
 * One statistics lookup for a relation whose sharedness is known: 15 added
 * pgstat_fetch_stat_tabentry_ext(); before, pgstat_fetch_stat_tabentry()
 * looked in this database and then, when not found, among shared relations.
 */
#if PG_VERSION_NUM >= 150000
#define fperf_fetch_tabentry(shared, relid) pgstat_fetch_stat_tabentry_ext((shared), (relid))
#else
#define fperf_fetch_tabentry(shared, relid) pgstat_fetch_stat_tabentry(relid)
#endif

/*
 * A relation's file identity: RelFileNode up to 15, RelFileLocator from 16.
 * fperf_relpath_perm(r, fork) is the palloc'd path of a permanent
 * relation's fork: the "no backend" argument is InvalidBackendId up to 16
 * and INVALID_PROC_NUMBER from 17, and from 18 relpathbackend() returns the
 * path by value (RelPathStr).
 */
#if PG_VERSION_NUM >= 160000
#include "storage/relfilelocator.h"
typedef RelFileLocator FPerfRelFile;
#define FPERF_SET_RELFILE(r, spc, db, rel) \
	((r).spcOid = (spc), (r).dbOid = (db), (r).relNumber = (rel))
#else
#include "storage/relfilenode.h"
typedef RelFileNode FPerfRelFile;
#define FPERF_SET_RELFILE(r, spc, db, rel) \
	((r).spcNode = (spc), (r).dbNode = (db), (r).relNode = (rel))
#endif
#include "common/relpath.h"
#if PG_VERSION_NUM >= 180000
#define fperf_relpath_perm(r, fork) \
	pstrdup(relpathbackend((r), INVALID_PROC_NUMBER, (fork)).str)
#elif PG_VERSION_NUM >= 170000
#define fperf_relpath_perm(r, fork) relpathbackend((r), INVALID_PROC_NUMBER, (fork))
#else
#define fperf_relpath_perm(r, fork) relpathbackend((r), InvalidBackendId, (fork))
#endif

/*
 * ProcessUtility_hook gained a readOnlyTree argument in 14.
 */
#if PG_VERSION_NUM >= 140000
#define FPERF_PROCESS_UTILITY_ARGS PlannedStmt *pstmt, const char *queryString, \
	bool readOnlyTree, ProcessUtilityContext context, ParamListInfo params, \
	QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc
#define FPERF_PROCESS_UTILITY_CALL(hook) (hook) (pstmt, queryString, \
	readOnlyTree, context, params, queryEnv, dest, qc)
#else
#define FPERF_PROCESS_UTILITY_ARGS PlannedStmt *pstmt, const char *queryString, \
	ProcessUtilityContext context, ParamListInfo params, \
	QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc
#define FPERF_PROCESS_UTILITY_CALL(hook) (hook) (pstmt, queryString, \
	context, params, queryEnv, dest, qc)
#endif

/*
 * A uniformly distributed double in [0, 1): pg_prng exists from 15; before
 * that random() is what auto_explain used.
 */
#if PG_VERSION_NUM >= 150000
#include "common/pg_prng.h"
#define fperf_random_fraction() pg_prng_double(&pg_global_prng_state)
#else
#define fperf_random_fraction() ((double) random() / ((double) PG_INT32_MAX + 1.0))
#endif

/*
 * InstrAlloc() gained an async_mode argument in 14.
 */
#if PG_VERSION_NUM >= 140000
#define fperf_instr_alloc(n, options) InstrAlloc((n), (options), false)
#else
#define fperf_instr_alloc(n, options) InstrAlloc((n), (options))
#endif

/*
 * Up to 13 a ModifyTable node had a list of subplans; from 14 on it has
 * one, in lefttree.
 */
#if PG_VERSION_NUM >= 140000
#define FPERF_MODIFYTABLE_SUBPLANS(mt) NIL
#else
#define FPERF_MODIFYTABLE_SUBPLANS(mt) ((mt)->plans)
#endif

/* The wait_event_info of the sampler's sleep. */
#define FPERF_WAIT_EVENT_MAIN PG_WAIT_EXTENSION

/* PGDLLEXPORT on background worker entry points is required from 16. */
#define FPERF_BGW_MAIN PGDLLEXPORT

#endif							/* FOLIO_PERF_COMPAT_H */
