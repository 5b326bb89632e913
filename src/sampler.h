/*-------------------------------------------------------------------------
 *
 * sampler.h
 *		The sampler's shared memory (ring layout, shared state) and
 *		settings, owned by sampler.c.
 *
 * The sampler's files, each depending only on those before it:
 *	sampler.c	settings, shared memory, the ring, SQL-callable functions
 *	launcher.c	waits for folio_perf.database, keeps the sampler running
 *	probe.c		one sample of every process into the ring (no SQL)
 *	exitcpu.c	in every backend: its CPU time as it exits (no SQL)
 *	aggregate.c	observations -> interval histograms (no SQL)
 *	rsampler.c	remote targets' pg_stat_activity -> observations
 *	storage.c	every SPI statement of the worker
 *	worker.c	the background worker: loop, timers, transactions
 *
 * Ring layout.  The sampler's shared memory holds one ring of fixed-size
 * records (folio_perf.sample_buffer of them).  Every tick appends one tick
 * header followed by one record per process seen at that tick.  Positions
 * are 64-bit counters that only grow; record p lives in slot p % capacity.
 *
 *		oldest_pos <= flush_pos <= write_pos
 *		[oldest_pos, flush_pos)  flushed, kept for folio_perf_samples()
 *		[flush_pos, write_pos)   waiting to be flushed to storage
 *
 * oldest_pos and flush_pos always point at tick headers.  When a new tick
 * does not fit, whole ticks are dropped from the oldest end; dropping a
 * tick that was not flushed yet is counted in ticks_dropped.
 *
 * Locking rule.  Only the sampler worker writes the ring and the positions,
 * always under the sampler LWLock held exclusively, and only for a memcpy
 * and a few assignments.  The worker reads the ring without the lock (no
 * other process writes it).  Every other process takes the lock shared,
 * copies what it needs and releases it before building any tuple.  The
 * flush request counters are atomics and need no lock.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/sampler.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FOLIO_PERF_SAMPLER_H
#define FOLIO_PERF_SAMPLER_H

#include "folio_perf.h"

#include "datatype/timestamp.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/condition_variable.h"
#include "storage/latch.h"
#include "storage/spin.h"

/* ---- GUC variables (sampler.c) ---- */
extern int	fperf_sample_interval_ms;
extern int	fperf_flush_interval_s;
extern int	fperf_snapshot_interval_s;
extern int	fperf_retention_min;
extern int	fperf_sample_buffer;
extern char *fperf_database;

/* Longest wait of folio_perf_sampler_flush() for the worker, in ms. */
#define FPERF_FLUSH_WAIT_MS 10000

/* Flush early once this share (percent) of the ring waits to be flushed. */
#define FPERF_FLUSH_FILL_PCT 50

/* Most ticks in one stored interval (tick_ms etc. are int arrays). */
#define FPERF_MAX_TICKS_PER_INTERVAL 30000

/* Record kinds. */
#define FPERF_REC_TICK 1
#define FPERF_REC_PROC 2

/* A tick header: when, and what followed. */
typedef struct FPerfTickRec
{
	uint64		tick;			/* tick number since server start */
	TimestampTz ts;				/* when the sample was taken */
	int32		nproc;			/* process records that follow */
	int32		interval_ms;	/* folio_perf.sample_interval at the time */
	int32		host_ncpu;		/* 0: host CPU unavailable */
	int32		host_busy_ms;	/* host CPU busy since the previous tick */
	int32		host_total_ms;	/* host CPU capacity since previous tick */
	int32		probe_us;		/* how long taking this sample took */
} FPerfTickRec;

/* One process at one tick. */
typedef struct FPerfProcRec
{
	uint64		queryid;		/* top-level query id (0: none/unknown) */
	int32		pid;
	Oid			dbid;
	Oid			userid;
	uint32		wait_event_info;
	int32		blocker_pid;	/* waiting for a heavyweight lock: the first
								 * process it waits for (pg_blocking_pids),
								 * else 0 */
	int32		cpu_ms;			/* CPU used since previous tick, -1: unknown */
	uint8		state;			/* BackendState */
	uint8		backend_type;	/* BackendType */
	char		appname[NAMEDATALEN];
} FPerfProcRec;

typedef struct FPerfRecord
{
	uint8		kind;			/* FPERF_REC_* */
	union
	{
		FPerfTickRec tick;
		FPerfProcRec proc;
	}			u;
} FPerfRecord;

/*
 * A process record of a session that ended since the previous tick (its
 * state field): its CPU since it was last read, nothing else.  It is no
 * connection and no DB load, and not a row of folio_perf_samples.
 */
#define FPERF_PROC_ENDED 0xFF

/*
 * Ended sessions.  A backend's CPU time since the sampler last read it
 * would be lost when it ends between two ticks (/proc/<pid> is gone by the
 * next one): short connections would show no CPU at all.  So every client
 * backend and parallel worker reads its own CPU time as it exits
 * (exitcpu.c) and leaves it here; the next tick takes them all (probe.c).
 * Bounded: when the buffer is full, an ending session is counted in lost
 * and its last CPU is not counted.  Locking rule: mutex, a spinlock, only
 * around the copy of one record in or of the whole buffer out.
 */
typedef struct FPerfEndedRec
{
	uint64		jiffies;		/* utime + stime at exit, clock ticks */
	uint64		queryid;
	TimestampTz proc_start;		/* st_proc_start_timestamp: the pid's life */
	int32		pid;
	Oid			dbid;
	Oid			userid;
	uint8		backend_type;
	char		appname[NAMEDATALEN];
} FPerfEndedRec;

typedef struct FPerfEndedShared
{
	slock_t		mutex;
	int32		capacity;
	int32		n;				/* records waiting for the next tick */
	uint64		recorded;		/* sessions that left their CPU here */
	uint64		lost;			/* ... that found the buffer full */
	FPerfEndedRec recs[FLEXIBLE_ARRAY_MEMBER];
} FPerfEndedShared;

/* What the worker is doing, for folio_perf_sampler_status(). */
typedef enum FPerfSamplerState
{
	FPERF_STATE_STOPPED = 0,	/* no worker */
	FPERF_STATE_STARTING,
	FPERF_STATE_SAMPLING,		/* sampling and flushing */
	FPERF_STATE_OFF,			/* folio_perf.sample_interval = 0 */
	FPERF_STATE_NO_STORAGE,		/* extension not installed in the database */
	FPERF_STATE_STANDBY,		/* hot standby: sampling, not writing */
	FPERF_STATE_WAITING_DB		/* no worker: folio_perf.database is missing */
} FPerfSamplerState;

typedef struct FPerfSamplerShared
{
	LWLock	   *lock;			/* see "Locking rule" above */

	/* the launcher (launcher.c) */
	bool		waiting_for_db; /* folio_perf.database does not exist */
	Latch	   *launcher_latch; /* to wake it; NULL when not running */

	/* the snapshot worker (worker.c): 0 when none runs */
	pid_t		snapshot_pid;

	/*
	 * A backend about to drop, rename or move the sampler's database: while
	 * it runs that command (and lives), the launcher starts no sampler.
	 */
	pid_t		step_aside_pid;

	/* the worker */
	pid_t		pid;			/* 0 when not running */
	Latch	   *latch;			/* its latch, to wake it for a flush */
	int			state;			/* FPerfSamplerState */
	int			starts;			/* times a worker started since startup */
	TimestampTz started_at;
	int			sample_interval_ms; /* effective settings of the worker */
	int			flush_interval_s;
	int			snapshot_interval_s;
	char		database[NAMEDATALEN];

	/* progress and trouble */
	TimestampTz last_sample_at;
	TimestampTz last_flush_at;
	TimestampTz last_snapshot_at;
	uint64		ticks;			/* ticks taken */
	uint64		ticks_flushed;	/* ticks written to storage */
	uint64		ticks_dropped;	/* ticks overwritten before being flushed */
	uint64		procs_truncated;	/* process records not kept: tick too big */
	uint64		intervals;		/* intervals written */
	uint64		flush_errors;
	uint64		snapshots;		/* timed snapshots taken */
	uint64		snapshot_errors;
	int64		last_flush_ticks;	/* ticks written by the latest flush */
	int32		last_probe_us;
	TimestampTz last_error_at;
	char		last_error[256];

	/* flush requests from folio_perf_sampler_flush() */
	pg_atomic_uint64 flush_requested;
	pg_atomic_uint64 flush_done;
	ConditionVariable flush_cv;

	/* the ring */
	uint64		capacity;		/* records */
	uint64		write_pos;
	uint64		oldest_pos;
	uint64		flush_pos;
	FPerfRecord ring[FLEXIBLE_ARRAY_MEMBER];
} FPerfSamplerShared;

/* ---- sampler.c ---- */
extern FPerfSamplerShared *fperf_sampler;
extern FPerfEndedShared *fperf_ended;
extern bool fperf_in_sampler_worker;

/*
 * Ticks the worker wrote in its current transaction (worker.c sets it):
 * what folio_perf_sampler_flush() returns when a timed snapshot of the
 * worker calls it, since the worker flushes before it takes one.
 */
extern int64 fperf_worker_xact_ticks;

extern void fperf_sampler_append_tick(const FPerfRecord *recs, int nrecs);
extern void fperf_sampler_set_error(const char *msg);
extern bool fperf_sampler_aside(void);
extern const char *fperf_state_name(BackendState state);

#endif							/* FOLIO_PERF_SAMPLER_H */
