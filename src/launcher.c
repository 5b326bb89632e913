/*-------------------------------------------------------------------------
 *
 * launcher.c
 *		The sampler's launcher: waits for folio_perf.database to exist and
 *		keeps one sampler worker running in it.
 *
 * A background worker cannot look a database up before it connects to one,
 * and connecting to a database that does not exist is FATAL.  So the worker
 * registered at server start (sampler.c) is this launcher: it connects to
 * no database (shared catalogs only), looks folio_perf.database up in
 * pg_database, and
 *
 *	- while the database does not exist: logs once what it waits for and
 *	  how to fix it, shows "waiting for database" in
 *	  folio_perf_sampler_status(), and looks again every second (a heap
 *	  scan of pg_database: the sampler starts at most about a second
 *	  after its database appears);
 *	- once it exists: starts the sampler (worker.c) as a dynamic background
 *	  worker connected to it by oid, and is told when it stops;
 *	- when the sampler stops: starts it again after 5 s, or at once when
 *	  folio_perf.database changed (the sampler exits by itself on that
 *	  change, after a last flush);
 *	- while a backend drops, renames or moves the sampler's database
 *	  (fperf_sampler_step_aside(), which stopped the sampler): starts
 *	  nothing, and when that backend is done (it wakes the launcher) looks
 *	  for the database as above: after DROP DATABASE or a RENAME it waits
 *	  for the database as for a missing one.
 *
 * It never exits with FATAL for a missing database, so the postmaster
 * never restarts it in a loop.  Cancel requests are ignored; a terminated
 * launcher is restarted by the postmaster after 5 s and finds the running
 * sampler (if any) in shared memory.
 *
 * Locking rule: the waiting flag and the database name in shared memory
 * are written under the sampler lock held exclusively (sampler.h).
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/launcher.c
 *
 *-------------------------------------------------------------------------
 */
#include "sampler.h"

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

extern FPERF_BGW_MAIN void folio_perf_launcher_main(Datum main_arg);

/*
 * Looking for a missing database: every second.  (It doubled up to 10 s,
 * which left up to 10 s without samples after the database was created,
 * as when pg_regress creates its database: 8.1 s in PostgreSQL's own
 * suite; a heap scan of pg_database a second costs nothing measurable.)
 */
#define FPERF_WAIT_DB_MIN_MS	1000
#define FPERF_WAIT_DB_MAX_MS	1000

/* How often to look while a backend keeps the sampler stepped aside. */
#define FPERF_ASIDE_POLL_MS		100

/* Delay before a stopped sampler is started again (as a static worker's). */
#define FPERF_RESTART_MS		5000

/* Longest sleep while the sampler runs (its start and stop wake us). */
#define FPERF_LAUNCHER_NAP_MS	10000

/* The database the launcher looks for: folio_perf.database. */
static const char *
wanted_database(void)
{
	return fperf_database && fperf_database[0] ? fperf_database : "postgres";
}

/*
 * The oid of a database, InvalidOid if there is none of that name.  Without
 * a database only the shared catalogs' heaps can be read (as the autovacuum
 * launcher does), not their indexes: a scan of pg_database.
 */
static Oid
lookup_database(const char *name)
{
	Oid			dboid = InvalidOid;
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tup;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while ((tup = heap_getnext(scan, ForwardScanDirection)) != NULL)
	{
		Form_pg_database db = (Form_pg_database) GETSTRUCT(tup);

		if (strcmp(NameStr(db->datname), name) == 0)
		{
			dboid = db->oid;
			break;
		}
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	return dboid;
}

/* Show in shared memory whether the launcher waits for a database. */
static void
publish_waiting(bool waiting, const char *name)
{
	FPerfSamplerShared *s = fperf_sampler;

	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	s->waiting_for_db = waiting;
	if (waiting)
		strlcpy(s->database, name, NAMEDATALEN);
	LWLockRelease(s->lock);
}

/* on_shmem_exit callback: nobody waits any more. */
static void
launcher_detach(int code, Datum arg)
{
	publish_waiting(false, NULL);
	LWLockAcquire(fperf_sampler->lock, LW_EXCLUSIVE);
	fperf_sampler->launcher_latch = NULL;
	LWLockRelease(fperf_sampler->lock);
}

/*
 * Start the sampler in database dboid (named name); NULL if no background
 * worker slot is free.
 */
static BackgroundWorkerHandle *
start_sampler(Oid dboid, const char *name)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS |
		BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strcpy(worker.bgw_library_name, "folio_perf");
	strcpy(worker.bgw_function_name, "folio_perf_sampler_main");
	strcpy(worker.bgw_name, "folio_perf sampler");
	strcpy(worker.bgw_type, "folio_perf sampler");
	worker.bgw_main_arg = ObjectIdGetDatum(dboid);
	strlcpy(worker.bgw_extra, name, BGW_EXTRALEN);
	worker.bgw_notify_pid = MyProcPid;

	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
	{
		ereport(LOG,
				(errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
				 errmsg("could not start the sampler: no background worker slot is free"),
				 errhint("Raise max_worker_processes.")));
		return NULL;
	}
	return handle;
}

/*
 * Entry point of the launcher, registered by sampler.c.
 */
void
folio_perf_launcher_main(Datum main_arg)
{
	FPerfSamplerShared *s = fperf_sampler;
	BackgroundWorkerHandle *handle = NULL;
	char		running_db[NAMEDATALEN] = "";
	char		waited_db[NAMEDATALEN] = "";
	TimestampTz next_attempt = 0;
	int			backoff_ms = FPERF_WAIT_DB_MIN_MS;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

	if (s == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("folio_perf sampler started without its shared memory"),
				 errhint("Add folio_perf to shared_preload_libraries and restart the server.")));

	/* shared catalogs only: pg_database can be read, no database is needed */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("folio_perf launcher");
	on_shmem_exit(launcher_detach, (Datum) 0);
	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	s->launcher_latch = MyLatch;
	LWLockRelease(s->lock);

	/* cancel requests are not for the launcher: it runs nothing to cancel */
	HOLD_CANCEL_INTERRUPTS();

	while (!ShutdownRequestPending)
	{
		TimestampTz now;
		long		timeout = FPERF_LAUNCHER_NAP_MS;
		const char *name;

		QueryCancelPending = false;
		CHECK_FOR_INTERRUPTS();

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			next_attempt = 0;
			backoff_ms = FPERF_WAIT_DB_MIN_MS;
		}
		name = wanted_database();
		now = GetCurrentTimestamp();

		if (handle != NULL)
		{
			pid_t		pid;

			if (GetBackgroundWorkerPid(handle, &pid) == BGWH_STOPPED)
			{
				pfree(handle);
				handle = NULL;
				/* at once after stepping aside (which wakes us when done) */
				next_attempt = strcmp(running_db, name) == 0 && !fperf_sampler_aside() ?
					TimestampTzPlusMilliseconds(now, FPERF_RESTART_MS) : 0;
			}
		}

		if (handle == NULL && now >= next_attempt)
		{
			Oid			dboid;

			if (s->pid != 0)
			{
				/* a sampler started by an earlier launcher still runs */
				next_attempt = TimestampTzPlusMilliseconds(now, FPERF_WAIT_DB_MIN_MS);
			}
			else if (fperf_sampler_aside())
			{
				/* its database is being dropped, renamed or moved */
				next_attempt = TimestampTzPlusMilliseconds(now, FPERF_ASIDE_POLL_MS);
			}
			else if (!OidIsValid(dboid = lookup_database(name)))
			{
				if (strcmp(waited_db, name) != 0)
				{
					ereport(LOG,
							(errmsg("sampler waits for database \"%s\" to exist", name),
							 errdetail("The sampler stores its data in the database named by folio_perf.database; it looks again after at most %d seconds.",
									   FPERF_WAIT_DB_MAX_MS / 1000),
							 errhint("Create database \"%s\" and run CREATE EXTENSION folio_perf in it, or set folio_perf.database to the database where folio_perf is installed and reload.",
									 name)));
					strlcpy(waited_db, name, sizeof(waited_db));
				}
				publish_waiting(true, name);
				next_attempt = TimestampTzPlusMilliseconds(now, backoff_ms);
				backoff_ms = Min(backoff_ms * 2, FPERF_WAIT_DB_MAX_MS);
			}
			else
			{
				if (waited_db[0] != '\0')
					ereport(LOG,
							(errmsg("database \"%s\" exists now, starting the sampler", name)));
				waited_db[0] = '\0';
				backoff_ms = FPERF_WAIT_DB_MIN_MS;
				publish_waiting(false, NULL);
				handle = start_sampler(dboid, name);
				strlcpy(running_db, name, sizeof(running_db));
				if (handle == NULL)
					next_attempt = TimestampTzPlusMilliseconds(now, FPERF_RESTART_MS);
			}
		}

		if (handle == NULL)
		{
			now = GetCurrentTimestamp();
			timeout = next_attempt > now ?
				TimestampDifferenceMilliseconds(now, next_attempt) : 0;
		}
		if (timeout > 0)
			(void) WaitLatch(MyLatch,
							 WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 timeout, FPERF_WAIT_EVENT_MAIN);
		ResetLatch(MyLatch);
	}

	/* the postmaster stops the sampler itself; restart unless shutting down */
	proc_exit(1);
}
