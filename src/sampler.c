/*-------------------------------------------------------------------------
 *
 * sampler.c
 *		The sampler's settings, shared memory ring and SQL-callable functions.
 *
 * The sampler is a background worker (worker.c) that, every
 * folio_perf.sample_interval, copies the state of every process (database,
 * role, application_name, state, wait event, query id, backend type and,
 * on Linux, CPU time) into a ring in shared memory, and every
 * folio_perf.flush_interval writes compact aggregates of the ring to
 * storage tables in folio_perf.database.  This file holds what the worker
 * and ordinary backends share:
 *
 *	- the GUCs (PGC_SIGHUP ones defined even without preloading, so that
 *	  SHOW works and reports can say why the sampler is off; the ring size
 *	  is PGC_POSTMASTER and exists only when preloaded);
 *	- shared memory sizing and initialisation, worker registration;
 *	- appending a tick to the ring (worker only);
 *	- folio_perf_sampler_status(), folio_perf_samples() and
 *	  folio_perf_sampler_flush().
 *
 * The ring layout and the locking rule are described in sampler.h.  Readers
 * copy under the lock held shared and build tuples after releasing it, so a
 * reader never holds the worker up for longer than a memcpy.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/sampler.c
 *
 *-------------------------------------------------------------------------
 */
#include "sampler.h"

#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/procarray.h"
#include "storage/shmem.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(folio_perf_sampler_status);
PG_FUNCTION_INFO_V1(folio_perf_samples);
PG_FUNCTION_INFO_V1(folio_perf_sampler_flush);

/* GUC variables */
int			fperf_sample_interval_ms = 1000;
int			fperf_flush_interval_s = 10;
int			fperf_snapshot_interval_s = 0;
int			fperf_retention_min = 0;
int			fperf_sample_buffer = 65536;
char	   *fperf_database = NULL;

/* Shared state; NULL unless preloaded. */
FPerfSamplerShared *fperf_sampler = NULL;
FPerfEndedShared *fperf_ended = NULL;

/* True in the sampler worker process. */
bool		fperf_in_sampler_worker = false;

/* Ticks the worker wrote in its current transaction. */
int64		fperf_worker_xact_ticks = 0;

/*
 * Define the sampler's settings that exist with or without preloading.
 * Called from _PG_init before the preload check.
 */
void
fperf_sampler_define_gucs(void)
{
	DefineCustomIntVariable("folio_perf.sample_interval",
							"Time between two samples of every backend's state.",
							"0 turns sampling off. Needs folio_perf in "
							"shared_preload_libraries.",
							&fperf_sample_interval_ms,
							1000,
							0,
							3600 * 1000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL, NULL, NULL);

	DefineCustomIntVariable("folio_perf.flush_interval",
							"Time between two writes of sampled data to storage.",
							"A crash of the server loses at most this much "
							"sampled data. Taking a snapshot also writes.",
							&fperf_flush_interval_s,
							10,
							1,
							3600,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomIntVariable("folio_perf.snapshot_interval",
							"Time between two snapshots taken by the sampler.",
							"0 (the default) takes none. Timed snapshots are "
							"meant for long soak tests.",
							&fperf_snapshot_interval_s,
							0,
							0,
							7 * 24 * 3600,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomIntVariable("folio_perf.retention",
							"Age after which the sampler deletes sampled data.",
							"0 (the default) keeps sampled data until "
							"folio_perf_sampler_purge() deletes it.",
							&fperf_retention_min,
							0,
							0,
							INT_MAX / 60,
							PGC_SIGHUP,
							GUC_UNIT_MIN,
							NULL, NULL, NULL);

	DefineCustomStringVariable("folio_perf.database",
							   "Database the sampler stores its data in.",
							   "The database where CREATE EXTENSION folio_perf "
							   "ran. Changing it restarts the sampler.",
							   &fperf_database,
							   "postgres",
							   PGC_SIGHUP,
							   0,
							   NULL, NULL, NULL);
}

/*
 * Define the sampler's PGC_POSTMASTER settings.  Called from _PG_init only
 * while preloading.
 */
void
fperf_sampler_define_postmaster_gucs(void)
{
	DefineCustomIntVariable("folio_perf.sample_buffer",
							"Number of process samples the sampler's shared memory ring holds.",
							"Each takes 104 bytes. When storage cannot keep "
							"up, the oldest samples are overwritten and counted.",
							&fperf_sample_buffer,
							65536,
							1024,
							16 * 1024 * 1024,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
}

/*
 * Shared memory needed by the sampler: 0 unless preloaded.
 */
/*
 * Room for the sessions that end between two ticks: twice max_connections,
 * at least 256 (a 100 ms tick would need 2,560 connections a second to
 * fill that).
 */
static int
ended_capacity(void)
{
	return Max(256, 2 * MaxConnections);
}

static Size
ended_shmem_size(void)
{
	return add_size(offsetof(FPerfEndedShared, recs),
					mul_size(ended_capacity(), sizeof(FPerfEndedRec)));
}

Size
fperf_sampler_shmem_size(void)
{
	if (!fperf_preloaded)
		return 0;
	return add_size(add_size(MAXALIGN(offsetof(FPerfSamplerShared, ring)),
							 mul_size(fperf_sample_buffer, sizeof(FPerfRecord))),
					MAXALIGN(ended_shmem_size()));
}

/*
 * Create or attach to the sampler's shared memory.  Caller holds
 * AddinShmemInitLock.
 */
void
fperf_sampler_shmem_init(void)
{
	bool		found;

	if (!fperf_preloaded)
		return;

	fperf_sampler = ShmemInitStruct("folio_perf sampler",
									fperf_sampler_shmem_size(), &found);
	if (!found)
	{
		memset(fperf_sampler, 0, offsetof(FPerfSamplerShared, ring));
		fperf_sampler->lock = &(GetNamedLWLockTranche(FPERF_NAME))[FPERF_LOCK_SAMPLER].lock;
		fperf_sampler->state = FPERF_STATE_STOPPED;
		pg_atomic_init_u64(&fperf_sampler->flush_requested, 0);
		pg_atomic_init_u64(&fperf_sampler->flush_done, 0);
		ConditionVariableInit(&fperf_sampler->flush_cv);
		fperf_sampler->capacity = (uint64) fperf_sample_buffer;
	}
	fperf_ended = ShmemInitStruct("folio_perf ended sessions",
								  ended_shmem_size(), &found);
	if (!found)
	{
		memset(fperf_ended, 0, offsetof(FPerfEndedShared, recs));
		SpinLockInit(&fperf_ended->mutex);
		fperf_ended->capacity = ended_capacity();
	}
}

/*
 * Register the sampler's launcher (launcher.c), which starts the sampler
 * worker once folio_perf.database exists.  Called last in _PG_init, only
 * while preloading.  It starts once the server is consistent, so that the
 * sampler also runs (without writing) on a hot standby.
 */
void
fperf_sampler_register(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = 5;
	strcpy(worker.bgw_library_name, "folio_perf");
	strcpy(worker.bgw_function_name, "folio_perf_launcher_main");
	strcpy(worker.bgw_name, "folio_perf launcher");
	strcpy(worker.bgw_type, "folio_perf launcher");
	worker.bgw_main_arg = (Datum) 0;
	worker.bgw_notify_pid = 0;
	RegisterBackgroundWorker(&worker);
}

/*
 * Append one tick (a tick header followed by its process records) to the
 * ring, dropping the oldest ticks if it does not fit.  Worker only.
 */
void
fperf_sampler_append_tick(const FPerfRecord *recs, int nrecs)
{
	FPerfSamplerShared *s = fperf_sampler;
	uint64		cap = s->capacity;
	uint64		first;
	uint64		n = (uint64) nrecs;
	uint64		truncated = 0;
	FPerfRecord header = recs[0];

	Assert(nrecs >= 1 && recs[0].kind == FPERF_REC_TICK);

	/* A tick larger than the whole ring keeps what fits. */
	if (n > cap)
	{
		truncated = n - cap;
		n = cap;
		header.u.tick.nproc = (int32) (n - 1);
	}

	LWLockAcquire(s->lock, LW_EXCLUSIVE);

	/* Make room by dropping whole ticks from the oldest end. */
	while (s->write_pos + n - s->oldest_pos > cap)
	{
		FPerfRecord *old = &s->ring[s->oldest_pos % cap];
		uint64		next = s->oldest_pos + 1 + (uint64) old->u.tick.nproc;

		Assert(old->kind == FPERF_REC_TICK);
		if (s->oldest_pos >= s->flush_pos)
		{
			/* not flushed yet: lost */
			s->ticks_dropped++;
			s->flush_pos = next;
		}
		s->oldest_pos = next;
	}

	/* Copy, in two pieces if the ring wraps. */
	first = s->write_pos % cap;
	s->ring[first] = header;
	if (n > 1)
	{
		uint64		start = (first + 1) % cap;
		uint64		len1 = Min(n - 1, cap - start);

		memcpy(&s->ring[start], &recs[1], len1 * sizeof(FPerfRecord));
		if (len1 < n - 1)
			memcpy(&s->ring[0], &recs[1 + len1],
				   (n - 1 - len1) * sizeof(FPerfRecord));
	}
	s->write_pos += n;
	s->ticks++;
	s->procs_truncated += truncated;
	s->last_sample_at = header.u.tick.ts;
	s->last_probe_us = header.u.tick.probe_us;

	LWLockRelease(s->lock);
}

/* ---------------------------------------------------------------------
 * Stepping aside for DROP DATABASE, ALTER DATABASE RENAME / SET TABLESPACE
 * ---------------------------------------------------------------------
 */

/* This backend made the sampler step aside (fperf_sampler_step_aside). */
static bool stepping_aside = false;

/* Longest wait for the sampler and the snapshot worker to exit. */
#define FPERF_STEP_ASIDE_WAIT_MS 10000

/*
 * The database a utility statement drops, renames or moves to another
 * tablespace; NULL for any other statement.
 */
static const char *
moved_database(Node *parsetree)
{
	if (IsA(parsetree, DropdbStmt))
		return ((DropdbStmt *) parsetree)->dbname;
	if (IsA(parsetree, RenameStmt) &&
		((RenameStmt *) parsetree)->renameType == OBJECT_DATABASE)
		return ((RenameStmt *) parsetree)->subname;
	if (IsA(parsetree, AlterDatabaseStmt))
	{
		ListCell   *lc;

		foreach(lc, ((AlterDatabaseStmt *) parsetree)->options)
		{
			DefElem    *d = lfirst_node(DefElem, lc);

			if (strcmp(d->defname, "tablespace") == 0)
				return ((AlterDatabaseStmt *) parsetree)->dbname;
		}
	}
	return NULL;
}

/*
 * ProcessUtility (plans.c), before a statement runs: if it drops, renames
 * or moves the sampler's database and the current role owns that database
 * (so that nobody else can stop the sampler by trying), stop the sampler
 * and its snapshot worker, which would otherwise make the command fail
 * ("database is being accessed by other users"), and keep the launcher
 * from starting them again until fperf_sampler_step_aside_end().  The
 * sampler flushes what it holds before it exits.  Waits at most
 * FPERF_STEP_ASIDE_WAIT_MS.  Returns true if the caller must call
 * fperf_sampler_step_aside_end() when the statement is done.
 */
bool
fperf_sampler_step_aside(Node *parsetree)
{
	FPerfSamplerShared *s = fperf_sampler;
	const char *name;
	const char *wanted;
	Oid			dboid;
	pid_t		sampler;
	pid_t		snapshot;
	TimestampTz deadline;

	if (s == NULL || stepping_aside || (name = moved_database(parsetree)) == NULL)
		return false;
	wanted = fperf_database && fperf_database[0] ? fperf_database : "postgres";
	LWLockAcquire(s->lock, LW_SHARED);
	if (strcmp(name, wanted) != 0 && strcmp(name, s->database) != 0)
	{
		LWLockRelease(s->lock);
		return false;
	}
	LWLockRelease(s->lock);
	dboid = get_database_oid(name, true);
	if (!OidIsValid(dboid) || !fperf_database_ownercheck(dboid, GetUserId()))
		return false;

	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	s->step_aside_pid = MyProcPid;
	sampler = s->pid;
	snapshot = s->snapshot_pid;
	LWLockRelease(s->lock);
	stepping_aside = true;

	ereport(LOG,
			(errmsg("sampler steps aside for a change of database \"%s\"", name),
			 errdetail("The sampler starts again when the statement has ended and the database named by folio_perf.database exists.")));
	if (sampler != 0)
		(void) kill(sampler, SIGTERM);
	if (snapshot != 0)
		(void) kill(snapshot, SIGTERM);

	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
										   FPERF_STEP_ASIDE_WAIT_MS);
	for (;;)
	{
		bool		gone;

		LWLockAcquire(s->lock, LW_SHARED);
		gone = (s->pid == 0 && s->snapshot_pid == 0);
		snapshot = s->snapshot_pid;
		LWLockRelease(s->lock);
		if (gone || GetCurrentTimestamp() >= deadline)
			break;
		/* a snapshot worker the sampler started just before it stopped */
		if (snapshot != 0)
			(void) kill(snapshot, SIGTERM);
		CHECK_FOR_INTERRUPTS();
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 20, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
	return true;
}

/*
 * After the statement that made the sampler step aside (committed or
 * not): let the launcher start it again, and wake it.
 */
void
fperf_sampler_step_aside_end(void)
{
	FPerfSamplerShared *s = fperf_sampler;
	Latch	   *latch;

	if (s == NULL || !stepping_aside)
		return;
	stepping_aside = false;
	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	if (s->step_aside_pid == MyProcPid)
		s->step_aside_pid = 0;
	latch = s->launcher_latch;
	LWLockRelease(s->lock);
	if (latch != NULL)
		SetLatch(latch);
}

/*
 * Whether a backend is stepping the sampler aside now (for the launcher).
 * One that ended without fperf_sampler_step_aside_end() (FATAL) is gone
 * from the process array and does not count.
 */
bool
fperf_sampler_aside(void)
{
	FPerfSamplerShared *s = fperf_sampler;
	pid_t		pid;

	LWLockAcquire(s->lock, LW_SHARED);
	pid = s->step_aside_pid;
	LWLockRelease(s->lock);
	return pid != 0 && BackendPidGetProc(pid) != NULL;
}

/*
 * Remember the latest error of the worker for folio_perf_sampler_status().
 */
void
fperf_sampler_set_error(const char *msg)
{
	LWLockAcquire(fperf_sampler->lock, LW_EXCLUSIVE);
	strlcpy(fperf_sampler->last_error, msg ? msg : "",
			sizeof(fperf_sampler->last_error));
	fperf_sampler->last_error_at = GetCurrentTimestamp();
	LWLockRelease(fperf_sampler->lock);
}

/*
 * pg_stat_activity's name of a backend state; "" for none.
 */
const char *
fperf_state_name(BackendState state)
{
	switch (state)
	{
		case STATE_IDLE:
			return "idle";
		case STATE_RUNNING:
			return "active";
		case STATE_IDLEINTRANSACTION:
			return "idle in transaction";
		case STATE_FASTPATH:
			return "fastpath function call";
		case STATE_IDLEINTRANSACTION_ABORTED:
			return "idle in transaction (aborted)";
		case STATE_DISABLED:
			return "disabled";
		default:
			return "";
	}
}

/* Name of a FPerfSamplerState. */
static const char *
sampler_state_name(int state)
{
	switch (state)
	{
		case FPERF_STATE_STARTING:
			return "starting";
		case FPERF_STATE_SAMPLING:
			return "sampling";
		case FPERF_STATE_OFF:
			return "off";
		case FPERF_STATE_NO_STORAGE:
			return "no storage";
		case FPERF_STATE_STANDBY:
			return "standby";
		case FPERF_STATE_WAITING_DB:
			return "waiting for database";
		default:
			return "stopped";
	}
}

#define FPERF_STATUS_COLS 29
/* 1.0.0's definition, until ALTER EXTENSION UPDATE: no ended_sessions* */
#define FPERF_STATUS_COLS_1_0 27

/* Timestamp datum, NULL when 0. */
static void
put_ts(Datum *values, bool *nulls, int i, TimestampTz ts)
{
	if (ts == 0)
		nulls[i] = true;
	else
		values[i] = TimestampTzGetDatum(ts);
}

/*
 * folio_perf_sampler_status() - one row describing the sampler.
 *
 * Works without preloading (preloaded = false, state 'not preloaded').
 */
Datum
folio_perf_sampler_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[FPERF_STATUS_COLS];
	bool		nulls[FPERF_STATUS_COLS];
	FPerfSamplerShared copy;
	int			i = 0;
	int			ncols;
	bool		with_ended;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	ncols = tupdesc->natts;
	if (ncols != FPERF_STATUS_COLS && ncols != FPERF_STATUS_COLS_1_0)
		elog(ERROR, "incorrect number of output columns in folio_perf_sampler_status");
	with_ended = (ncols == FPERF_STATUS_COLS);
	tupdesc = BlessTupleDesc(tupdesc);

	memset(values, 0, sizeof(values));
	memset(nulls, 0, sizeof(nulls));

	values[i++] = BoolGetDatum(fperf_sampler != NULL);
	if (fperf_sampler == NULL)
	{
		values[i++] = CStringGetTextDatum("not preloaded");
		for (; i < FPERF_STATUS_COLS; i++)
			nulls[i] = true;
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
	}

	/* Copy the fixed part under the lock; build the tuple after. */
	LWLockAcquire(fperf_sampler->lock, LW_SHARED);
	memcpy(&copy, fperf_sampler, offsetof(FPerfSamplerShared, ring));
	LWLockRelease(fperf_sampler->lock);

	values[i++] = CStringGetTextDatum(sampler_state_name(copy.pid != 0 ? copy.state :
														 copy.waiting_for_db ?
														 FPERF_STATE_WAITING_DB :
														 FPERF_STATE_STOPPED));
	if (copy.pid == 0)
		nulls[i++] = true;
	else
		values[i++] = Int32GetDatum(copy.pid);
	put_ts(values, nulls, i++, copy.started_at);
	values[i++] = Int32GetDatum(copy.starts);
	if (copy.database[0] == '\0')
		nulls[i++] = true;
	else
		values[i++] = CStringGetTextDatum(copy.database);
	values[i++] = Int32GetDatum(copy.sample_interval_ms);
	values[i++] = Int32GetDatum(copy.flush_interval_s);
	values[i++] = Int32GetDatum(copy.snapshot_interval_s);
	put_ts(values, nulls, i++, copy.last_sample_at);
	put_ts(values, nulls, i++, copy.last_flush_at);
	put_ts(values, nulls, i++, copy.last_snapshot_at);
	values[i++] = Int64GetDatum((int64) copy.ticks);
	values[i++] = Int64GetDatum((int64) copy.ticks_flushed);
	values[i++] = Int64GetDatum((int64) copy.ticks_dropped);
	values[i++] = Int64GetDatum((int64) copy.procs_truncated);
	if (with_ended)
	{
		uint64		recorded,
					lost;

		SpinLockAcquire(&fperf_ended->mutex);
		recorded = fperf_ended->recorded;
		lost = fperf_ended->lost;
		SpinLockRelease(&fperf_ended->mutex);
		values[i++] = Int64GetDatum((int64) recorded);
		values[i++] = Int64GetDatum((int64) lost);
	}
	values[i++] = Int64GetDatum((int64) copy.intervals);
	values[i++] = Int64GetDatum((int64) copy.capacity);
	values[i++] = Int64GetDatum((int64) (copy.write_pos - copy.oldest_pos));
	values[i++] = Int64GetDatum((int64) (copy.write_pos - copy.flush_pos));
	values[i++] = Int64GetDatum((int64) fperf_sampler_shmem_size());
	values[i++] = Int64GetDatum((int64) copy.flush_errors);
	values[i++] = Int64GetDatum((int64) copy.snapshots);
	values[i++] = Int64GetDatum((int64) copy.snapshot_errors);
	values[i++] = Float8GetDatum(copy.last_probe_us / 1000.0);
	if (copy.last_error[0] == '\0')
		nulls[i++] = true;
	else
		values[i++] = CStringGetTextDatum(copy.last_error);
	put_ts(values, nulls, i++, copy.last_error_at);
	Assert(i == ncols);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

#define FPERF_SAMPLES_COLS 12

/*
 * folio_perf_samples() - the process samples still in the ring, oldest
 * first.  Empty without preloading.  pg_stat_activity's visibility rule
 * applies: of a process of another role (unless the current role has the
 * privileges of pg_read_all_stats) only the time, pid, backend type,
 * database, role and application_name are shown; state, wait event,
 * queryid and CPU time are NULL.
 */
Datum
folio_perf_samples(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	FPerfRecord *copy;
	Oid			me = GetUserId();
	bool		all_stats = has_privs_of_role(me, ROLE_PG_READ_ALL_STATS);
	uint64		n,
				flushed,
				cap,
				start,
				i;
	TimestampTz ts = 0;

	fperf_init_srf(fcinfo);
	if (rsinfo->setDesc->natts != FPERF_SAMPLES_COLS)
		elog(ERROR, "incorrect number of output columns in folio_perf_samples");

	if (fperf_sampler == NULL)
		return (Datum) 0;

	/*
	 * Copy under the lock.  The ring may be large; allocate before taking
	 * the lock (capacity never changes) so the lock covers only memcpy.
	 */
	cap = fperf_sampler->capacity;
	copy = palloc_extended(cap * sizeof(FPerfRecord), MCXT_ALLOC_HUGE);

	LWLockAcquire(fperf_sampler->lock, LW_SHARED);
	start = fperf_sampler->oldest_pos;
	n = fperf_sampler->write_pos - start;
	flushed = fperf_sampler->flush_pos - start;
	if (n > 0)
	{
		uint64		first = start % cap;
		uint64		len1 = Min(n, cap - first);

		memcpy(copy, &fperf_sampler->ring[first], len1 * sizeof(FPerfRecord));
		if (len1 < n)
			memcpy(copy + len1, fperf_sampler->ring,
				   (n - len1) * sizeof(FPerfRecord));
	}
	LWLockRelease(fperf_sampler->lock);

	for (i = 0; i < n; i++)
	{
		FPerfRecord *r = &copy[i];
		FPerfProcRec *p = &r->u.proc;
		Datum		values[FPERF_SAMPLES_COLS];
		bool		nulls[FPERF_SAMPLES_COLS];
		const char *s;
		int			j = 0;
		bool		hidden;

		CHECK_FOR_INTERRUPTS();
		if (r->kind == FPERF_REC_TICK)
		{
			ts = r->u.tick.ts;
			continue;
		}
		/* an ended session's last CPU: no process at that tick */
		if (p->state == FPERF_PROC_ENDED)
			continue;
		hidden = !all_stats &&
			!(OidIsValid(p->userid) && has_privs_of_role(me, p->userid));
		memset(nulls, 0, sizeof(nulls));
		values[j++] = TimestampTzGetDatum(ts);
		values[j++] = Int32GetDatum(p->pid);
		values[j++] = CStringGetTextDatum(GetBackendTypeDesc((BackendType) p->backend_type));
		values[j] = ObjectIdGetDatum(p->dbid);
		nulls[j++] = !OidIsValid(p->dbid);
		values[j] = ObjectIdGetDatum(p->userid);
		nulls[j++] = !OidIsValid(p->userid);
		values[j++] = CStringGetTextDatum(p->appname);
		s = fperf_state_name((BackendState) p->state);
		values[j] = CStringGetTextDatum(s);
		nulls[j++] = (*s == '\0');
		s = pgstat_get_wait_event_type(p->wait_event_info);
		values[j] = s ? CStringGetTextDatum(s) : (Datum) 0;
		nulls[j++] = (s == NULL);
		s = pgstat_get_wait_event(p->wait_event_info);
		values[j] = s ? CStringGetTextDatum(s) : (Datum) 0;
		nulls[j++] = (s == NULL);
		values[j] = Int64GetDatum((int64) p->queryid);
		nulls[j++] = (p->queryid == 0);
		values[j] = Int32GetDatum(p->cpu_ms);
		nulls[j++] = (p->cpu_ms < 0);
		values[j++] = BoolGetDatum(i < flushed);
		if (hidden)
		{
			/* state, wait_event_type, wait_event, queryid, cpu_ms */
			for (j = 6; j <= 10; j++)
				nulls[j] = true;
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	pfree(copy);
	return (Datum) 0;
}

/*
 * folio_perf_sampler_flush() - make the worker write every sample taken so
 * far, and wait (at most FPERF_FLUSH_WAIT_MS) until it has.  Returns the
 * number of ticks that flush wrote; 0 when the sampler is not running, on a
 * standby, or when there was nothing to write.  Called by the snapshot
 * function so that a window's samples reach up to its end.
 *
 * Inside the sampler itself (it takes no snapshot any more, but its
 * transactions could reach this) it answers with what its current
 * transaction wrote.  The snapshot worker's timed snapshot asks the
 * sampler like any session.
 */
Datum
folio_perf_sampler_flush(PG_FUNCTION_ARGS)
{
	FPerfSamplerShared *s = fperf_sampler;
	pid_t		pid;
	Latch	   *latch;
	uint64		req;
	TimestampTz deadline;
	bool		done = false;
	int64		result;

	if (s == NULL)
		PG_RETURN_INT64(0);
	if (fperf_in_sampler_worker)
		PG_RETURN_INT64(fperf_worker_xact_ticks);
	if (RecoveryInProgress())
		PG_RETURN_INT64(0);

	LWLockAcquire(s->lock, LW_SHARED);
	pid = s->pid;
	latch = s->latch;
	LWLockRelease(s->lock);
	if (pid == 0 || latch == NULL)
		PG_RETURN_INT64(0);

	req = pg_atomic_add_fetch_u64(&s->flush_requested, 1);
	SetLatch(latch);

	deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
										   FPERF_FLUSH_WAIT_MS);
	ConditionVariablePrepareToSleep(&s->flush_cv);
	for (;;)
	{
		TimestampTz now;

		if (pg_atomic_read_u64(&s->flush_done) >= req)
		{
			done = true;
			break;
		}
		now = GetCurrentTimestamp();
		if (now >= deadline)
			break;
		/* wake up now and then to notice a worker that went away */
		(void) ConditionVariableTimedSleep(&s->flush_cv,
										   Min(100, TimestampDifferenceMilliseconds(now, deadline)),
										   PG_WAIT_EXTENSION);
		if (s->pid != pid)
			break;
	}
	ConditionVariableCancelSleep();

	if (!done)
	{
		ereport(WARNING,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("sampler did not flush within %d ms", FPERF_FLUSH_WAIT_MS),
				 errdetail("Samples taken since the last flush are written later; a window ending now may miss them."),
				 errhint("Check folio_perf_sampler_status() and the server log.")));
		PG_RETURN_INT64(0);
	}

	LWLockAcquire(s->lock, LW_SHARED);
	result = s->last_flush_ticks;
	LWLockRelease(s->lock);
	PG_RETURN_INT64(result);
}
