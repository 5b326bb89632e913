/*-------------------------------------------------------------------------
 *
 * exitcpu.c
 *		In every backend: its CPU time as it exits, for the sampler.
 *
 * The sampler reads each process's CPU time from /proc/<pid>/stat at every
 * tick and counts what it used since the tick before.  What a session uses
 * after the last tick that saw it is lost when it ends before the next
 * one: a short connection (a pool that opens one per request, pgbench -C,
 * a psql -c of a script) could show no CPU at all.  So every backend, at
 * the first statement it parses (post_parse_analyze: every statement,
 * utility ones too) or plans to run (ExecutorStart: a parallel worker),
 * registers a before_shmem_exit callback that reads its own
 * /proc/self/stat and leaves it, with what the sampler attributes it by
 * (database, role, application_name, query id), in the ended-session
 * buffer in shared memory (sampler.h).  The next tick adds the part the
 * sampler had not read yet (probe.c).
 *
 * before_shmem_exit callbacks run before the backend leaves the status
 * array (pgstat's on_shmem_exit hook), which the probe relies on.  Only
 * while the sampler is sampling: otherwise nothing would take the records.
 * The buffer is bounded; a session that finds it full is counted as lost.
 * No allocation, no error: this runs while the backend exits.
 *
 * Autovacuum workers and the server's own processes parse no statement
 * and are not covered (there is no hook every process passes through); the
 * probe counts their CPU up to the last tick that saw them.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/exitcpu.c
 *
 *-------------------------------------------------------------------------
 */
#include "exitcpu.h"
#include "probe.h"

#include "executor/executor.h"
#include "miscadmin.h"
#include "parser/analyze.h"
#include "storage/ipc.h"
#include "storage/spin.h"
#include "utils/backend_status.h"

static post_parse_analyze_hook_type prev_post_parse_analyze = NULL;
static ExecutorStart_hook_type prev_ExecutorStart = NULL;
static bool registered = false;

/* Leave this backend's CPU time in the ended-session buffer. */
static void
exitcpu_at_exit(int code, Datum arg)
{
	FPerfEndedShared *s = fperf_ended;
	PgBackendStatus *be = MyBEEntry;
	FPerfEndedRec r;
	uint64		jiffies;
	int			state;

	if (s == NULL || fperf_sampler == NULL || be == NULL)
		return;
	state = *((volatile int *) &fperf_sampler->state);
	if (fperf_sampler->pid == 0 ||
		(state != FPERF_STATE_SAMPLING && state != FPERF_STATE_STANDBY))
		return;
	if (!fperf_read_proc_cpu(MyProcPid, &jiffies))
		return;

	memset(&r, 0, sizeof(r));
	r.jiffies = jiffies;
	r.queryid = (uint64) FPERF_BEENTRY_QUERYID(be);
	r.proc_start = be->st_proc_start_timestamp;
	r.pid = MyProcPid;
	r.dbid = MyDatabaseId;
	r.userid = be->st_userid;
	r.backend_type = (uint8) MyBackendType;
	strlcpy(r.appname, be->st_appname, NAMEDATALEN);

	SpinLockAcquire(&s->mutex);
	if (s->n < s->capacity)
	{
		s->recs[s->n++] = r;
		s->recorded++;
	}
	else
		s->lost++;
	SpinLockRelease(&s->mutex);
}

static void
exitcpu_register(void)
{
	if (registered || fperf_ended == NULL || fperf_in_sampler_worker)
		return;
	before_shmem_exit(exitcpu_at_exit, (Datum) 0);
	registered = true;
}

static void
exitcpu_post_parse_analyze(FPERF_POST_PARSE_ARGS)
{
	if (!registered)
		exitcpu_register();
	if (prev_post_parse_analyze)
		FPERF_POST_PARSE_CALL(prev_post_parse_analyze);
}

static void
exitcpu_ExecutorStart(QueryDesc *queryDesc, int eflags)
{
	if (!registered)
		exitcpu_register();
	if (prev_ExecutorStart)
		prev_ExecutorStart(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);
}

/* Install the hooks.  Called from _PG_init while preloading. */
void
fperf_exitcpu_install_hooks(void)
{
	prev_post_parse_analyze = post_parse_analyze_hook;
	post_parse_analyze_hook = exitcpu_post_parse_analyze;
	prev_ExecutorStart = ExecutorStart_hook;
	ExecutorStart_hook = exitcpu_ExecutorStart;
}
