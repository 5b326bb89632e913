/*-------------------------------------------------------------------------
 *
 * compat.h
 *		Version shims for folio_perf: every #if PG_VERSION_NUM lives here.
 *
 * folio_perf's C extension supports PostgreSQL 15, 16, 17 and 18: it is
 * built with -Wall -Werror and tested on 15, 17 and 18 (test/run_tests.sh)
 * and was compiled and regression-tested on 16 (README.md).  Older servers
 * are refused at compile time; they can still be remote targets (SQL over
 * libpq, 13 and later).  Logic files include this header and use the
 * wrappers below instead of testing the server version themselves.  The
 * wrappers without a version test name the one API of every supported
 * version, so that callers read the same whatever changes next.
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

#if PG_VERSION_NUM < 150000
#error "folio_perf requires PostgreSQL 15 or later"
#endif

/* Materialize-mode set-returning functions (InitMaterializedSRF, 15.1 on). */
#define fperf_init_srf(fcinfo) InitMaterializedSRF((fcinfo), 0)

/* Reserve the folio_perf.* GUC prefix. */
#define fperf_reserve_guc_prefix(p) MarkGUCPrefixReserved(p)

/* Shared memory requests are made in shmem_request_hook. */
#define FPERF_HAVE_SHMEM_REQUEST_HOOK 1

/* post_parse_analyze_hook's arguments. */
#define FPERF_POST_PARSE_ARGS ParseState *pstate, Query *query, JumbleState *jstate
#define FPERF_POST_PARSE_CALL(hook) (hook) (pstate, query, jstate)

/* JumbleState moved from utils/queryjumble.h to nodes/queryjumble.h in 16. */
#if PG_VERSION_NUM >= 160000
#include "nodes/queryjumble.h"
#else
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

/* Fields of PgStat_StatTabEntry renamed in 16. */
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
 * pgstat_fetch_stat_local_beentry() in 15 and is
 * pgstat_get_local_beentry_by_index() from 16.
 */
#if PG_VERSION_NUM >= 160000
#define fperf_local_beentry(idx) pgstat_get_local_beentry_by_index(idx)
#else
#define fperf_local_beentry(idx) pgstat_fetch_stat_local_beentry(idx)
#endif

/* PgBackendStatus' query id. */
#define FPERF_BEENTRY_QUERYID(be) ((be)->st_query_id)

/* dynahash: string keys. */
#include "utils/hsearch.h"

/* One statistics lookup for a relation whose sharedness is known. */
#define fperf_fetch_tabentry(shared, relid) pgstat_fetch_stat_tabentry_ext((shared), (relid))

/*
 * A relation's file identity: RelFileNode in 15, RelFileLocator from 16.
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
/* an open relation's file number (pg_class's own: from the relation map) */
#define fperf_rel_filenumber(rel) ((Oid) (rel)->rd_locator.relNumber)
#else
#include "storage/relfilenode.h"
typedef RelFileNode FPerfRelFile;
#define FPERF_SET_RELFILE(r, spc, db, rel) \
	((r).spcNode = (spc), (r).dbNode = (db), (r).relNode = (rel))
#define fperf_rel_filenumber(rel) ((Oid) (rel)->rd_node.relNode)
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

/* ProcessUtility_hook's arguments. */
#define FPERF_PROCESS_UTILITY_ARGS PlannedStmt *pstmt, const char *queryString, \
	bool readOnlyTree, ProcessUtilityContext context, ParamListInfo params, \
	QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc
#define FPERF_PROCESS_UTILITY_CALL(hook) (hook) (pstmt, queryString, \
	readOnlyTree, context, params, queryEnv, dest, qc)

/* Whether roleid owns database dboid (16 made the check generic). */
#include "catalog/pg_database.h"
#include "utils/acl.h"
#if PG_VERSION_NUM >= 160000
#define fperf_database_ownercheck(dboid, roleid) \
	object_ownercheck(DatabaseRelationId, (dboid), (roleid))
#else
#define fperf_database_ownercheck(dboid, roleid) \
	pg_database_ownercheck((dboid), (roleid))
#endif

/* A uniformly distributed double in [0, 1). */
#include "common/pg_prng.h"
#define fperf_random_fraction() pg_prng_double(&pg_global_prng_state)

/* Instrumentation of a plan node (not in async mode). */
#define fperf_instr_alloc(n, options) InstrAlloc((n), (options), false)

/* A ModifyTable node's one subplan is in lefttree: no list of subplans. */
#define FPERF_MODIFYTABLE_SUBPLANS(mt) NIL

/* The wait_event_info of the sampler's sleep. */
#define FPERF_WAIT_EVENT_MAIN PG_WAIT_EXTENSION

/* PGDLLEXPORT on background worker entry points is required from 16. */
#define FPERF_BGW_MAIN PGDLLEXPORT

/*
 * Whether len bytes at json are valid JSON (PostgreSQL's own parser, no
 * semantic actions).  17 made the lexer a caller-supplied struct.
 */
#include "common/jsonapi.h"
#include "mb/pg_wchar.h"
static inline bool
fperf_json_valid(char *json, int len)
{
#if PG_VERSION_NUM >= 170000
	JsonLexContext lex;
	bool		ok;

	makeJsonLexContextCstringLen(&lex, json, len, GetDatabaseEncoding(), false);
	ok = (pg_parse_json(&lex, &nullSemAction) == JSON_SUCCESS);
	freeJsonLexContext(&lex);
	return ok;
#else
	JsonLexContext *lex = makeJsonLexContextCstringLen(json, len,
													   GetDatabaseEncoding(),
													   false);

	return pg_parse_json(lex, &nullSemAction) == JSON_SUCCESS;
#endif
}

/*
 * LockHeldByMe: 17 added "or a stronger mode"; the exact mode is asked
 * (relstate.c: the capture lock, EXCLUSIVE).
 */
#include "storage/lock.h"
#if PG_VERSION_NUM >= 170000
#define fperf_lock_held_by_me(tag, mode) LockHeldByMe((tag), (mode), false)
#else
#define fperf_lock_held_by_me(tag, mode) LockHeldByMe((tag), (mode))
#endif

#endif							/* FOLIO_PERF_COMPAT_H */
