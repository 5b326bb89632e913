/*-------------------------------------------------------------------------
 *
 * worker.c
 *		The sampler background worker: its loop, timers and transactions.
 *
 * One worker per server, started by the launcher (launcher.c) once
 * folio_perf.database exists, connected to it.  Its loop:
 *
 *	- every folio_perf.sample_interval: take a sample of every process into
 *	  the ring (probe.c), and ask every remote target for its sessions
 *	  (rsampler.c, without waiting; answers are collected at each wake-up);
 *	- every folio_perf.flush_interval, when folio_perf_sampler_flush() asks,
 *	  when the ring is half full, and before a timed snapshot: in one
 *	  transaction, aggregate the ticks not yet flushed, local and remote,
 *	  into intervals (aggregate.c) and write them (storage.c);
 *	- every folio_perf.snapshot_interval: flush, then start the snapshot
 *	  worker (folio_perf_snapshot_main, a dynamic background worker in the
 *	  same database) that takes the timed snapshot, while the loop goes on
 *	  sampling: a snapshot of 40 tenants takes 0.3 to 3 s, and taken here
 *	  it left a hole in the samples exactly as long.  The snapshot's own
 *	  folio_perf_sampler_flush() is served by this loop like a session's.
 *	  One snapshot worker at a time: while one still runs, the timed
 *	  snapshot that falls due is not started (logged at DEBUG1) and the
 *	  next one is taken an interval later;
 *	- every 10 minutes when folio_perf.retention > 0: delete old intervals.
 *
 * An interval is cut at every flush, so a snapshot that flushes first
 * starts and ends windows on interval boundaries.
 *
 * Transactions.  Everything that needs one runs through run_in_xact():
 * errors are caught, logged (at most once a minute), counted in shared
 * memory and retried at the next flush; the samples stay in the ring until
 * a flush commits.  The flush position moves only after the commit
 * (apply_pending).  A crash of the worker (or of the server) loses what the
 * ring held, at most one flush interval.  On a hot standby nothing is
 * written; the ring keeps the newest samples.  A memory context is reset
 * every loop, another every flush.
 *
 * The worker's own statements are kept out of pg_stat_statements and the
 * relation store, and run with search_path = pg_catalog, pg_temp, as the
 * role that owns folio_perf in the database (SetUserIdAndSecContext, for
 * each transaction): the worker connects as the bootstrap superuser but
 * acts with no more rights than whoever installed the extension, and
 * follows that role if it is later made NOSUPERUSER.
 *
 * Signals.  SIGHUP reloads the settings, SIGTERM ends the loop after a last
 * flush.  Cancel requests (SIGINT, pg_cancel_backend) interrupt only what
 * runs in a transaction (that flush or snapshot fails and is retried);
 * outside transactions they are absorbed (absorb_cancel), so a cancel never
 * ends the worker.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "probe.h"
#include "storage.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

extern FPERF_BGW_MAIN void folio_perf_sampler_main(Datum main_arg);
extern FPERF_BGW_MAIN void folio_perf_snapshot_main(Datum main_arg);

/* Time between two retention runs. */
#define FPERF_PURGE_EVERY_MS (10 * 60 * 1000)

/* Longest sleep while a remote target's connection or answer is under way. */
#define FPERF_REMOTE_POLL_MS 5

/* Least time between two log lines about the same kind of failure. */
#define FPERF_LOG_EVERY_MS (60 * 1000)

/* Memory: WorkerContext lives as long as the worker, LoopContext one loop,
 * FlushContext one flush. */
static MemoryContext WorkerContext = NULL;
static MemoryContext LoopContext = NULL;
static MemoryContext FlushContext = NULL;

/* Flushed in the current transaction, applied to shared memory at commit. */
static bool pending_valid = false;
static uint64 pending_upto = 0;
static int64 pending_ticks = 0;
static int64 pending_intervals = 0;
static uint64 pending_dropped_seen = 0;
static uint64 dropped_seen = 0;
static bool pending_remote = false;	/* remote ticks taken in this xact */

/* What the worker knows about its surroundings. */
static bool is_standby = false;
static bool storage_missing = false;
static bool logged_standby = false;
static TimestampTz last_error_log = 0;

/* This process is the snapshot worker, not the sampler. */
static bool in_snapshot_worker = false;

/* The sampler's handle on the snapshot worker it started last. */
static BackgroundWorkerHandle *snapshot_handle = NULL;

static void worker_publish_settings(void);

/* ---------------------------------------------------------------------
 * Flushing: ticks -> intervals -> storage, inside a transaction
 * ---------------------------------------------------------------------
 */

/* Fills *tick with the next tick of a source; false when there is none. */
typedef bool (*fperf_tick_reader) (void *arg, FPerfObsTick *tick);

/* The local ring's ticks in [pos, end). */
typedef struct FPerfRingReader
{
	uint64		pos;
	uint64		end;
} FPerfRingReader;

static bool
ring_reader(void *arg, FPerfObsTick *tick)
{
	FPerfRingReader *r = (FPerfRingReader *) arg;

	if (r->pos >= r->end)
		return false;
	fperf_agg_ring_tick(&r->pos, tick);
	return true;
}

/* A remote target's buffered ticks. */
typedef struct FPerfArrayReader
{
	const FPerfObsTick *ticks;
	int			n;
	int			i;
} FPerfArrayReader;

static bool
array_reader(void *arg, FPerfObsTick *tick)
{
	FPerfArrayReader *r = (FPerfArrayReader *) arg;

	int			j;

	if (r->i >= r->n)
		return false;
	*tick = r->ticks[r->i++];

	/*
	 * The aggregation reads every name of an observation; a remote tick is
	 * input from another server, so make sure none is missing before it is
	 * read (a NULL here would take the whole server down with the worker).
	 */
	for (j = 0; j < tick->nobs; j++)
	{
		FPerfObs   *o = &tick->obs[j];

		if (o->datname == NULL)
			o->datname = "";
		if (o->rolname == NULL)
			o->rolname = "";
		if (o->appname == NULL)
			o->appname = "";
		if (o->state == NULL)
			o->state = "unknown";
		if (o->btype == NULL)
			o->btype = "";
	}
	return true;
}

/*
 * Aggregate every tick of a source, of this server (target_id 0) or of a
 * remote target, into intervals and write them.  `dropped` (ticks lost
 * before these) goes to the first interval.  Returns the number of ticks
 * written; *intervals counts the intervals.
 */
static int64
write_ticks(fperf_tick_reader next, void *arg, int32 target_id,
			const char *cut, int64 dropped, int64 *intervals)
{
	FPerfInterval *iv = NULL;
	FPerfObsTick tick;
	int64		written = 0;

	while (next(arg, &tick))
	{
		if (iv != NULL && !fperf_interval_add_tick(iv, &tick))
		{
			fperf_storage_write_interval(iv, cut);
			written += iv->nticks;
			(*intervals)++;
			iv = NULL;
		}
		if (iv == NULL)
		{
			iv = fperf_interval_begin(target_id);
			iv->ticks_dropped = dropped;
			dropped = 0;
			if (!fperf_interval_add_tick(iv, &tick))
				elog(ERROR, "sampler tick does not fit an empty interval");
		}
	}
	if (iv != NULL && iv->nticks > 0)
	{
		fperf_storage_write_interval(iv, cut);
		written += iv->nticks;
		(*intervals)++;
	}
	return written;
}

/* Whether storage is there; the state shown in shared memory follows. */
static bool
check_storage(void)
{
	bool		ready = fperf_storage_ready();

	if (ready == storage_missing)
	{
		storage_missing = !ready;
		worker_publish_settings();
	}
	return ready;
}

/*
 * Flush every tick not flushed yet (nor in this transaction), local and
 * remote, within the caller's transaction, and exchange the remote
 * targets' state and list.  Returns the number of ticks written.  The
 * flush position in shared memory moves when the transaction commits
 * (apply_pending).
 */
static int64
flush_in_xact(const char *cut)
{
	FPerfSamplerShared *s = fperf_sampler;
	uint64		start;
	uint64		end;
	int64		written = 0;
	int64		intervals = 0;
	int64		remote_intervals = 0;
	uint64		dropped_now;
	MemoryContext oldcxt;
	FPerfTargetStatus status[FPERF_REMOTE_MAX_TARGETS];
	FPerfTargetDef *defs;
	const FPerfObsTick *rticks;
	int32		target_id;
	int			nrticks;
	int			iter = 0;
	int			n;

	if (RecoveryInProgress() || !check_storage())
		return 0;

	start = pending_valid ? pending_upto : s->flush_pos;
	end = s->write_pos;			/* only this process moves it */
	if (start >= end && !fperf_rsampler_pending())
		return 0;
	dropped_now = s->ticks_dropped;

	MemoryContextReset(FlushContext);
	oldcxt = MemoryContextSwitchTo(FlushContext);
	fperf_storage_connect();
	fperf_agg_begin_flush(FlushContext);

	if (start < end)
	{
		FPerfRingReader ring = {start, end};

		written += write_ticks(ring_reader, &ring, 0, cut,
							   (int64) (dropped_now - (pending_valid ? pending_dropped_seen : dropped_seen)),
							   &intervals);
		pending_valid = true;
		pending_upto = end;
		pending_dropped_seen = dropped_now;
	}

	/* the remote targets' ticks, their state, and their list read again */
	pending_remote = true;
	while (fperf_rsampler_take_ticks(&iter, &target_id, &rticks, &nrticks))
	{
		FPerfArrayReader arr = {rticks, nrticks, 0};

		written += write_ticks(array_reader, &arr, target_id, cut, 0, &remote_intervals);
	}
	n = fperf_rsampler_status(status, FPERF_REMOTE_MAX_TARGETS);
	fperf_storage_write_target_status(status, n);
	n = fperf_storage_read_targets(&defs);
	fperf_rsampler_set_targets(defs, n);

	fperf_agg_end_flush();
	fperf_storage_disconnect();
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(FlushContext);

	pending_ticks += written;
	pending_intervals += intervals;
	fperf_worker_xact_ticks = pending_ticks;
	return written;
}

/* After a commit: move the flush position and the counters. */
static void
apply_pending(void)
{
	FPerfSamplerShared *s = fperf_sampler;

	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	if (pending_valid && pending_upto > s->flush_pos)
		s->flush_pos = pending_upto;
	s->ticks_flushed += pending_ticks;
	s->intervals += pending_intervals;
	s->last_flush_ticks = pending_ticks;
	if (pending_valid)
		s->last_flush_at = GetCurrentTimestamp();
	LWLockRelease(s->lock);

	if (pending_valid)
		dropped_seen = pending_dropped_seen;
	pending_valid = false;
	pending_ticks = 0;
	pending_intervals = 0;
	fperf_worker_xact_ticks = 0;
	if (pending_remote)
		fperf_rsampler_end_xact(true);
	pending_remote = false;
}

/* After an abort: the ticks stay in the ring for the next flush. */
static void
discard_pending(void)
{
	pending_valid = false;
	pending_ticks = 0;
	pending_intervals = 0;
	fperf_worker_xact_ticks = 0;
	fperf_agg_end_flush();
	if (pending_remote)
		fperf_rsampler_end_xact(false);
	pending_remote = false;
}

/* ---------------------------------------------------------------------
 * Transactions of the worker
 * ---------------------------------------------------------------------
 */

typedef void (*fperf_xact_fn) (void *arg);

/*
 * Run fn in a transaction of its own.  An error is caught, logged (at most
 * once a minute), remembered in shared memory and counted in *errors; the
 * worker carries on.  Returns true on commit.
 */
static bool
run_in_xact(const char *what, fperf_xact_fn fn, void *arg, uint64 *errors)
{
	MemoryContext oldcxt = CurrentMemoryContext;
	volatile bool ok = true;
	Oid			save_userid;
	int			save_sec_context;
	Oid			owner;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);

	/*
	 * A cancel request stops the transaction's statements (and lock_timeout
	 * needs cancels to work); one that came before is not for them.
	 */
	QueryCancelPending = false;
	RESUME_CANCEL_INTERRUPTS();
	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PG_TRY();
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, what);
		/*
		 * Storage stays while we use it; with the rights of whoever
		 * installed folio_perf, not more.
		 */
		owner = fperf_storage_hold_extension();
		if (OidIsValid(owner))
			SetUserIdAndSecContext(owner, save_sec_context | SECURITY_LOCAL_USERID_CHANGE);
		fn(arg);
		SetUserIdAndSecContext(save_userid, save_sec_context);
		PopActiveSnapshot();
		CommitTransactionCommand();
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		TimestampTz now;

		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		SetUserIdAndSecContext(save_userid, save_sec_context);
		ok = false;

		LWLockAcquire(fperf_sampler->lock, LW_EXCLUSIVE);
		(*errors)++;
		LWLockRelease(fperf_sampler->lock);
		{
			char	   *msg = psprintf("%s: %s", what, edata->message);

			fperf_sampler_set_error(msg);
		}
		now = GetCurrentTimestamp();
		if (last_error_log == 0 ||
			TimestampDifferenceExceeds(last_error_log, now, FPERF_LOG_EVERY_MS))
		{
			ereport(WARNING,
					(errcode(edata->sqlerrcode),
					 errmsg("sampler could not complete \"%s\"", what),
					 errdetail_internal("%s", edata->message),
					 errhint("Samples not yet written stay in shared memory and are retried at the next flush; see folio_perf_sampler_status().")));
			last_error_log = now;
		}
		FreeErrorData(edata);
	}
	PG_END_TRY();
	/* an error reset the holdoff count; either way it is 0 here */
	HOLD_CANCEL_INTERRUPTS();

	MemoryContextSwitchTo(oldcxt);
	if (in_snapshot_worker)
		;						/* no samples of its own */
	else if (ok)
		apply_pending();
	else
		discard_pending();
	pgstat_report_stat(false);
	pgstat_report_activity(STATE_IDLE, NULL);
	return ok;
}

static void
flush_cb(void *arg)
{
	(void) flush_in_xact((const char *) arg);
}

static void
storage_check_cb(void *arg)
{
	(void) check_storage();
}

/* Tell every folio_perf_sampler_flush() waiting on request `req` it is done. */
static void
ack_flush_requests(uint64 req)
{
	if (pg_atomic_read_u64(&fperf_sampler->flush_done) < req)
		pg_atomic_write_u64(&fperf_sampler->flush_done, req);
	ConditionVariableBroadcast(&fperf_sampler->flush_cv);
}

/*
 * Flush everything in the ring, in a transaction of its own, and answer
 * the flush requests made so far.
 */
static void
worker_flush(const char *cut)
{
	FPerfSamplerShared *s = fperf_sampler;
	uint64		req = pg_atomic_read_u64(&s->flush_requested);

	if (!is_standby && (s->flush_pos < s->write_pos || fperf_rsampler_pending()))
		(void) run_in_xact("flush", flush_cb, (void *) cut, &s->flush_errors);
	else
	{
		LWLockAcquire(s->lock, LW_EXCLUSIVE);
		s->last_flush_ticks = 0;
		LWLockRelease(s->lock);
	}
	ack_flush_requests(req);
}

/*
 * The snapshot worker's transaction: the timed snapshot.  The capture's
 * folio_perf_sampler_flush() asks the sampler for its samples up to now.
 */
static void
snapshot_cb(void *arg)
{
	bool	   *taken = (bool *) arg;

	if (!fperf_storage_ready())
		return;
	fperf_storage_connect();
	fperf_storage_timed_snapshot();
	fperf_storage_disconnect();
	*taken = true;
}

/*
 * Start the timed snapshot in a worker of its own.  Returns false if it
 * could not be started (and should be retried soon); true when it was
 * started, or when the previous one still runs (the snapshot due now is
 * left out: the next one comes an interval later).
 */
static bool
worker_timed_snapshot(void)
{
	FPerfSamplerShared *s = fperf_sampler;
	BackgroundWorker worker;
	pid_t		pid;

	if (is_standby || storage_missing)
		return true;
	if (snapshot_handle != NULL)
	{
		if (GetBackgroundWorkerPid(snapshot_handle, &pid) != BGWH_STOPPED)
		{
			ereport(DEBUG1,
					(errmsg_internal("timed snapshot not started: the previous one (PID %d) still runs",
									 (int) pid)));
			return true;
		}
		pfree(snapshot_handle);
		snapshot_handle = NULL;
	}

	/* cut an interval here; the snapshot's own flush cuts the next */
	worker_flush("snapshot");

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strcpy(worker.bgw_library_name, "folio_perf");
	strcpy(worker.bgw_function_name, "folio_perf_snapshot_main");
	strcpy(worker.bgw_name, "folio_perf snapshot");
	strcpy(worker.bgw_type, "folio_perf snapshot");
	worker.bgw_main_arg = ObjectIdGetDatum(MyDatabaseId);
	worker.bgw_notify_pid = MyProcPid;

	MemoryContextSwitchTo(WorkerContext);
	if (!RegisterDynamicBackgroundWorker(&worker, &snapshot_handle))
	{
		snapshot_handle = NULL;
		LWLockAcquire(s->lock, LW_EXCLUSIVE);
		s->snapshot_errors++;
		LWLockRelease(s->lock);
		fperf_sampler_set_error("timed snapshot: no background worker slot is free");
		ereport(LOG,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("could not start the timed snapshot: no background worker slot is free"),
				 errhint("Raise max_worker_processes: folio_perf needs three (launcher, sampler, snapshot).")));
		MemoryContextSwitchTo(LoopContext);
		return false;
	}
	MemoryContextSwitchTo(LoopContext);
	return true;
}

/* on_shmem_exit callback of the snapshot worker. */
static void
snapshot_detach(int code, Datum arg)
{
	LWLockAcquire(fperf_sampler->lock, LW_EXCLUSIVE);
	if (fperf_sampler->snapshot_pid == MyProcPid)
		fperf_sampler->snapshot_pid = 0;
	LWLockRelease(fperf_sampler->lock);
}

/*
 * Entry point of the snapshot worker, started by the sampler with the oid
 * of its database: one timed snapshot, as the extension's owner, with the
 * sampler's settings for its own statements; then it exits.  An error is
 * counted (snapshot_errors) and shown in folio_perf_sampler_status().
 */
void
folio_perf_snapshot_main(Datum main_arg)
{
	FPerfSamplerShared *s = fperf_sampler;
	bool		taken = false;
	bool		ok;
	uint64		errors = 0;

	in_snapshot_worker = true;
	BackgroundWorkerUnblockSignals();
	/* cancels only within its transaction (run_in_xact) */
	HOLD_CANCEL_INTERRUPTS();
	if (s == NULL)
		proc_exit(1);
	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	s->snapshot_pid = MyProcPid;
	LWLockRelease(s->lock);
	on_shmem_exit(snapshot_detach, (Datum) 0);
	/* the database is about to be dropped, renamed or moved: no snapshot */
	if (fperf_sampler_aside())
		proc_exit(0);
	BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(main_arg), InvalidOid, 0);
	pgstat_report_appname("folio_perf snapshot");
	SetConfigOption("pg_stat_statements.track", "none", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("folio_perf.track_relations", "off", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("temp_buffers", "1MB", PGC_USERSET, PGC_S_OVERRIDE);

	WorkerContext = AllocSetContextCreate(TopMemoryContext,
										  "folio_perf snapshot",
										  ALLOCSET_DEFAULT_SIZES);
	fperf_storage_init(WorkerContext);
	MemoryContextSwitchTo(WorkerContext);

	ok = run_in_xact("timed snapshot", snapshot_cb, &taken, &errors);
	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	s->snapshot_errors += errors;
	if (ok && taken)
	{
		s->snapshots++;
		s->last_snapshot_at = GetCurrentTimestamp();
	}
	LWLockRelease(s->lock);
	proc_exit(0);
}

static void
purge_cb(void *arg)
{
	uint64		n;

	if (!check_storage())
		return;
	fperf_storage_connect();
	n = fperf_storage_purge(fperf_retention_min);
	fperf_storage_disconnect();
	if (n > 0)
		ereport(DEBUG1,
				(errmsg_internal("sampler deleted " UINT64_FORMAT " intervals older than %d minutes",
								 n, fperf_retention_min)));
}

/* ---------------------------------------------------------------------
 * The worker
 * ---------------------------------------------------------------------
 */

/* Show the worker's effective settings and state in shared memory. */
static void
worker_publish_settings(void)
{
	FPerfSamplerShared *s = fperf_sampler;
	int			state;

	if (is_standby)
		state = FPERF_STATE_STANDBY;
	else if (storage_missing)
		state = FPERF_STATE_NO_STORAGE;
	else if (fperf_sample_interval_ms == 0)
		state = FPERF_STATE_OFF;
	else
		state = FPERF_STATE_SAMPLING;

	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	s->state = state;
	s->sample_interval_ms = fperf_sample_interval_ms;
	s->flush_interval_s = fperf_flush_interval_s;
	s->snapshot_interval_s = fperf_snapshot_interval_s;
	strlcpy(s->database, fperf_database ? fperf_database : "", NAMEDATALEN);
	LWLockRelease(s->lock);
}

/* on_shmem_exit callback: the worker is gone. */
static void
worker_detach(int code, Datum arg)
{
	FPerfSamplerShared *s = fperf_sampler;

	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	if (s->pid == MyProcPid)
	{
		s->pid = 0;
		s->latch = NULL;
		s->state = FPERF_STATE_STOPPED;
	}
	LWLockRelease(s->lock);
	ConditionVariableBroadcast(&s->flush_cv);
}

static inline TimestampTz
ts_min(TimestampTz a, TimestampTz b)
{
	return a < b ? a : b;
}

/* Far future, for timers that are off. */
#define FPERF_NEVER PG_INT64_MAX

/*
 * Outside its transactions the worker ignores cancel requests: a cancel
 * there would be a FATAL error, and a restart loses the ring.  Logs at most
 * once a minute that it did.
 */
static void
absorb_cancel(void)
{
	static TimestampTz last_log = 0;
	TimestampTz now;

	if (!QueryCancelPending)
		return;
	QueryCancelPending = false;
	now = GetCurrentTimestamp();
	if (last_log == 0 || TimestampDifferenceExceeds(last_log, now, FPERF_LOG_EVERY_MS))
	{
		ereport(LOG,
				(errmsg("sampler ignores cancel requests"),
				 errhint("To stop sampling set folio_perf.sample_interval to 0 and reload; pg_terminate_backend() restarts the sampler.")));
		last_log = now;
	}
}

/*
 * Entry point of the sampler worker, started by the launcher (launcher.c)
 * with the oid of folio_perf.database as its argument and the database's
 * name in bgw_extra.
 */
void
folio_perf_sampler_main(Datum main_arg)
{
	FPerfSamplerShared *s = fperf_sampler;
	TimestampTz now;
	TimestampTz next_sample,
				next_flush,
				next_snapshot,
				next_purge;
	char		database[NAMEDATALEN];

	fperf_in_sampler_worker = true;
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();
	/* cancels only within transactions (run_in_xact) */
	HOLD_CANCEL_INTERRUPTS();

	if (s == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("folio_perf sampler started without its shared memory"),
				 errhint("Add folio_perf to shared_preload_libraries and restart the server.")));

	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	if (s->pid != 0)
	{
		pid_t		other = s->pid;

		LWLockRelease(s->lock);
		ereport(LOG,
				(errmsg("sampler is already running under PID %d", (int) other)));
		proc_exit(0);
	}
	s->pid = MyProcPid;
	s->latch = MyLatch;
	s->state = FPERF_STATE_STARTING;
	s->starts++;
	s->started_at = GetCurrentTimestamp();
	LWLockRelease(s->lock);
	on_shmem_exit(worker_detach, (Datum) 0);

	strlcpy(database, MyBgworkerEntry->bgw_extra, NAMEDATALEN);
	BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(main_arg), InvalidOid, 0);
	pgstat_report_appname("folio_perf sampler");

	/*
	 * The sampler's own statements (its inserts, timed snapshots) are not
	 * part of the workload it observes: keep them out of pg_stat_statements
	 * and out of the relation store.
	 */
	SetConfigOption("pg_stat_statements.track", "none", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("folio_perf.track_relations", "off", PGC_SUSET, PGC_S_OVERRIDE);

	/* Nothing the worker runs resolves names in a schema others can write. */
	SetConfigOption("search_path", "pg_catalog, pg_temp", PGC_SUSET, PGC_S_OVERRIDE);

	/*
	 * Timed snapshots fill the capture's work tables (temporary, kept for
	 * the session): 1 MB of local buffers instead of temp_buffers' 8 MB
	 * keeps the worker's private memory small and flat; a capture of
	 * 100,000 changed relations spills to a temporary file.
	 */
	SetConfigOption("temp_buffers", "1MB", PGC_USERSET, PGC_S_OVERRIDE);

	WorkerContext = AllocSetContextCreate(TopMemoryContext,
										  "folio_perf sampler",
										  ALLOCSET_DEFAULT_SIZES);
	LoopContext = AllocSetContextCreate(WorkerContext,
										"folio_perf sampler loop",
										ALLOCSET_DEFAULT_SIZES);
	FlushContext = AllocSetContextCreate(WorkerContext,
										 "folio_perf sampler flush",
										 ALLOCSET_DEFAULT_SIZES);

	fperf_probe_init(WorkerContext);
	fperf_storage_init(WorkerContext);
	fperf_rsampler_init(WorkerContext);

	/* Samples left by a previous worker (not a crash) are flushed later. */
	dropped_seen = s->ticks_dropped;

	is_standby = RecoveryInProgress();
	worker_publish_settings();
	if (!is_standby)
	{
		uint64		dummy = 0;

		MemoryContextSwitchTo(LoopContext);
		(void) run_in_xact("storage check", storage_check_cb, NULL, &dummy);
		worker_publish_settings();
	}

	ereport(LOG,
			(errmsg("sampler started in database \"%s\", sampling every %d ms",
					database, fperf_sample_interval_ms)));

	now = GetCurrentTimestamp();
	next_sample = now;
	next_flush = TimestampTzPlusMilliseconds(now, fperf_flush_interval_s * 1000);
	next_snapshot = fperf_snapshot_interval_s > 0 ?
		TimestampTzPlusMilliseconds(now, (int64) fperf_snapshot_interval_s * 1000) : FPERF_NEVER;
	next_purge = TimestampTzPlusMilliseconds(now, 60 * 1000);

	while (!ShutdownRequestPending)
	{
		TimestampTz wake;
		long		timeout;
		bool		requested;
		bool		standby_now;

		MemoryContextSwitchTo(LoopContext);
		MemoryContextReset(LoopContext);
		absorb_cancel();
		CHECK_FOR_INTERRUPTS();

		if (ConfigReloadPending)
		{
			int			old_interval = fperf_sample_interval_ms;
			int			old_snapshot = fperf_snapshot_interval_s;
			int			old_flush = fperf_flush_interval_s;

			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			now = GetCurrentTimestamp();
			if (strcmp(database, fperf_database && fperf_database[0] ?
					   fperf_database : "postgres") != 0)
			{
				ereport(LOG,
						(errmsg("folio_perf.database changed from \"%s\" to \"%s\", restarting the sampler",
								database, fperf_database)));
				worker_flush("shutdown");
				fperf_rsampler_shutdown();
				/* the launcher starts a sampler in the new database */
				proc_exit(0);
			}
			if (old_interval != fperf_sample_interval_ms)
			{
				/* ticks of different lengths never share an interval */
				worker_flush("config");
				next_sample = now;
			}
			if (old_snapshot != fperf_snapshot_interval_s)
				next_snapshot = fperf_snapshot_interval_s > 0 ?
					TimestampTzPlusMilliseconds(now, (int64) fperf_snapshot_interval_s * 1000) : FPERF_NEVER;
			if (old_flush != fperf_flush_interval_s)
				next_flush = TimestampTzPlusMilliseconds(now, fperf_flush_interval_s * 1000);
			worker_publish_settings();
		}

		standby_now = RecoveryInProgress();
		if (standby_now != is_standby)
		{
			is_standby = standby_now;
			worker_publish_settings();
		}
		if (is_standby && !logged_standby)
		{
			ereport(LOG,
					(errmsg("sampler is running on a standby server, sampled data is not stored"),
					 errdetail("Samples are kept in shared memory only, the oldest overwritten first; timed snapshots are skipped. Writing starts after promotion.")));
			logged_standby = true;
		}
		else if (!is_standby && logged_standby)
		{
			ereport(LOG, (errmsg("sampler is no longer on a standby, storing sampled data")));
			logged_standby = false;
		}

		now = GetCurrentTimestamp();
		if (fperf_sample_interval_ms > 0 && now >= next_sample)
		{
			fperf_probe();
			/* remote targets: ask now, collect as answers come */
			if (!is_standby)
				fperf_rsampler_tick(now, fperf_sample_interval_ms);
			next_sample = TimestampTzPlusMilliseconds(next_sample, fperf_sample_interval_ms);
			if (next_sample <= now)
				next_sample = TimestampTzPlusMilliseconds(now, fperf_sample_interval_ms);
		}

		requested = pg_atomic_read_u64(&s->flush_requested) >
			pg_atomic_read_u64(&s->flush_done);
		now = GetCurrentTimestamp();
		if (requested)
			worker_flush("request");
		else if (now >= next_flush)
			worker_flush("timer");
		else if (!is_standby && !storage_missing &&
				 (s->write_pos - s->flush_pos) * 100 > s->capacity * FPERF_FLUSH_FILL_PCT)
			worker_flush("buffer");
		if (requested || now >= next_flush)
			next_flush = TimestampTzPlusMilliseconds(GetCurrentTimestamp(),
													 fperf_flush_interval_s * 1000);

		now = GetCurrentTimestamp();
		if (now >= next_snapshot)
		{
			/* a failed snapshot is retried after at most 5 s */
			int64		next_ms = (int64) fperf_snapshot_interval_s * 1000;

			if (!worker_timed_snapshot())
				next_ms = Min(next_ms, 5000);
			next_snapshot = TimestampTzPlusMilliseconds(now, next_ms);
		}

		if (now >= next_purge)
		{
			if (fperf_retention_min > 0 && !is_standby)
			{
				uint64		dummy = 0;

				(void) run_in_xact("retention", purge_cb, NULL, &dummy);
			}
			next_purge = TimestampTzPlusMilliseconds(now, FPERF_PURGE_EVERY_MS);
		}

		MemoryContextSwitchTo(LoopContext);
		wake = ts_min(next_flush, ts_min(next_snapshot, next_purge));
		if (fperf_sample_interval_ms > 0)
			wake = ts_min(wake, next_sample);
		now = GetCurrentTimestamp();
		timeout = wake > now ? TimestampDifferenceMilliseconds(now, wake) : 0;
		/* a remote connection or answer in progress: look again soon */
		if (fperf_rsampler_poll())
			timeout = Min(timeout, FPERF_REMOTE_POLL_MS);
		if (timeout > 0)
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 timeout, FPERF_WAIT_EVENT_MAIN);
		ResetLatch(MyLatch);
	}

	/* Shutdown: store what the ring holds, then exit (the launcher restarts us if the server goes on). */
	MemoryContextSwitchTo(LoopContext);
	worker_flush("shutdown");
	fperf_rsampler_shutdown();
	proc_exit(0);
}
