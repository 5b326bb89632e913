/*-------------------------------------------------------------------------
 *
 * probe.c
 *		The sampler's probe: copy the state of every process into the ring.
 *
 * Every folio_perf.sample_interval the worker calls fperf_probe(), which
 * copies every process's state from the backend status array (pgstat's
 * local snapshot, which reads it with the changecount protocol) and its
 * wait event from its PGPROC, reads its CPU time from /proc/<pid>/stat and
 * the host's from /proc/stat, and appends the tick to the shared ring
 * (sampler.c).  No SQL, no catalog access, no transaction: a probe costs a
 * copy of the status array and, for processes that ran since the previous
 * tick, one read of /proc each; for the sessions that ended since the
 * previous tick, the CPU they used since they were last read (each left it
 * in shared memory as it exited: exitcpu.c); for sessions waiting for a heavyweight
 * lock (at most FPERF_MAX_BLOCKER_LOOKUPS a tick), a look at the lock table
 * for the process they wait for (pg_blocking_pids()).
 *
 * Locking rule.  PGPROC's wait_event_info is read once per process without
 * a lock, as pg_stat_activity does; the ring is written only through
 * fperf_sampler_append_tick(), which takes the sampler lock for the copy.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/probe.c
 *
 *-------------------------------------------------------------------------
 */
#include "probe.h"
#include "metrics.h"

#include <fcntl.h>
#include <unistd.h>

#include "miscadmin.h"
#include "pgstat.h"
#include "portability/instr_time.h"
#include "storage/proc.h"
#include "storage/spin.h"
#include "utils/array.h"
#include "utils/fmgrprotos.h"
#include "utils/hsearch.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

/*
 * At most this many sessions waiting for a heavyweight lock have their
 * blocker looked up in one tick: pg_blocking_pids() takes every lock
 * partition's LWLock, so a pile-up of hundreds of waiters must not make
 * every tick take them hundreds of times.  The others are sampled with no
 * blocker (their lock wait is counted all the same).
 */
#define FPERF_MAX_BLOCKER_LOOKUPS 16

/* Read a uint32 in shared memory once, without a lock (as pgstatfuncs.c). */
#define FPERF_UINT32_ONCE(var) ((uint32) (*((volatile uint32 *) &(var))))

/* CPU time of one process at the previous tick. */
typedef struct FPerfCpuEntry
{
	int			pid;			/* hash key */
	TimestampTz proc_start;
	uint64		jiffies;
	uint64		seen_tick;
	bool		idle;			/* idle when jiffies were read ... */
	TimestampTz state_start;	/* ... since this st_state_start_timestamp */
} FPerfCpuEntry;

/* pid -> wait_event_info, from the PGPROC array. */
typedef struct FPerfPidWait
{
	int			pid;
	uint32		wait_event_info;
} FPerfPidWait;

static HTAB *cpu_hash = NULL;

/* The ended sessions taken from shared memory at a tick. */
static FPerfEndedRec *ended = NULL;

/* CPU bookkeeping. */
static long clk_tck = 0;
static uint64 tick_no = 0;
static TimestampTz first_tick_ts = 0;
static bool have_host_prev = false;
static uint64 host_prev_busy = 0;
static uint64 host_prev_total = 0;
static int	host_ncpu = 0;

/*
 * Set up the probe: the per-process CPU table in the worker's long-lived
 * context, the clock tick length and the number of CPUs.
 */
void
fperf_probe_init(MemoryContext parent)
{
	HASHCTL		ctl;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(int);
	ctl.entrysize = sizeof(FPerfCpuEntry);
	ctl.hcxt = parent;
	cpu_hash = hash_create("folio_perf process CPU", 1024, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	ended = MemoryContextAlloc(parent, sizeof(FPerfEndedRec) * fperf_ended->capacity);

#ifdef _SC_CLK_TCK
	clk_tck = sysconf(_SC_CLK_TCK);
#endif
	if (clk_tck <= 0)
		clk_tck = 100;
#ifdef _SC_NPROCESSORS_ONLN
	host_ncpu = (int) sysconf(_SC_NPROCESSORS_ONLN);
#endif
	if (host_ncpu <= 0)
		host_ncpu = 1;
}

/*
 * Read utime + stime of a process from /proc/<pid>/stat, in clock ticks.
 * Returns false if the process is gone or /proc is not there.
 */
bool
fperf_read_proc_cpu(int pid, uint64 *jiffies)
{
#ifdef __linux__
	char		path[64];
	char		buf[1024];
	int			fd;
	ssize_t		n;
	char	   *p;
	int			field;
	uint64		utime = 0,
				stime = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY, 0);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';

	/* The command name may hold spaces and parentheses: skip to the last ')'. */
	p = strrchr(buf, ')');
	if (p == NULL)
		return false;
	p++;
	/* p is now just before field 3 (state); utime is 14, stime 15. */
	for (field = 3; field <= 15; field++)
	{
		char	   *end;
		uint64		v;

		while (*p == ' ')
			p++;
		if (*p == '\0')
			return false;
		if (field == 14 || field == 15)
		{
			v = (uint64) strtoull(p, &end, 10);
			if (end == p)
				return false;
			if (field == 14)
				utime = v;
			else
				stime = v;
			p = end;
		}
		else
		{
			while (*p != ' ' && *p != '\0')
				p++;
		}
	}
	*jiffies = utime + stime;
	return true;
#else
	return false;
#endif
}

/*
 * Read the host's busy and total CPU time (all CPUs, clock ticks) from the
 * first line of /proc/stat.
 */
static bool
read_host_cpu(uint64 *busy, uint64 *total)
{
#ifdef __linux__
	char		buf[512];
	int			fd;
	ssize_t		n;
	char	   *p;
	uint64		v[8];
	int			i;

	fd = open("/proc/stat", O_RDONLY, 0);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 4)
		return false;
	buf[n] = '\0';
	if (strncmp(buf, "cpu ", 4) != 0)
		return false;
	p = buf + 4;
	/* user nice system idle iowait irq softirq steal */
	for (i = 0; i < 8; i++)
	{
		char	   *end;

		v[i] = (uint64) strtoull(p, &end, 10);
		if (end == p)
			return false;
		p = end;
	}
	*total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	*busy = *total - v[3] - v[4];
	return true;
#else
	return false;
#endif
}

static inline int32
jiffies_to_ms(uint64 j)
{
	uint64		ms = j * 1000 / (uint64) clk_tck;

	return (int32) Min(ms, (uint64) PG_INT32_MAX);
}

static int
pidwait_cmp(const void *a, const void *b)
{
	int			pa = ((const FPerfPidWait *) a)->pid;
	int			pb = ((const FPerfPidWait *) b)->pid;

	return (pa > pb) - (pa < pb);
}

/*
 * The first process that blocks pid's heavyweight lock request, as
 * pg_blocking_pids() gives them (holders of a conflicting lock and
 * requests ahead of it in the wait queue), 0 when none is left (it was
 * granted meanwhile).  No catalog access: the lock table only.
 */
static int32
first_blocker(int pid)
{
	ArrayType  *a;
	int32		blocker = 0;

	a = DatumGetArrayTypeP(DirectFunctionCall1(pg_blocking_pids, Int32GetDatum(pid)));
	if (ARR_NDIM(a) == 1 && ArrayGetNItems(ARR_NDIM(a), ARR_DIMS(a)) > 0 && !ARR_HASNULL(a))
		blocker = ((int32 *) ARR_DATA_PTR(a))[0];
	pfree(a);
	return blocker;
}

/*
 * Take one sample of every process and append it to the ring.  Allocates
 * in the current (loop) memory context only.
 */
void
fperf_probe(void)
{
	TimestampTz ts = GetCurrentTimestamp();
	instr_time	start,
				elapsed;
	int			nbe;
	int			i;
	int			n = 0;
	int			nwait = 0;
	int			nlookups = 0;
	int			nended;
	FPerfRecord *recs;
	FPerfPidWait *waits;
	FPerfTickRec *hdr;
	uint64		busy,
				total;
	bool		first_tick = (first_tick_ts == 0);

	INSTR_TIME_SET_CURRENT(start);
	tick_no++;

	/* Wait events live in PGPROC, not in the status array: map them by pid. */
	waits = palloc(sizeof(FPerfPidWait) * ProcGlobal->allProcCount);
	for (i = 0; i < (int) ProcGlobal->allProcCount; i++)
	{
		PGPROC	   *proc = &ProcGlobal->allProcs[i];
		int			pid = proc->pid;

		if (pid == 0)
			continue;
		waits[nwait].pid = pid;
		waits[nwait].wait_event_info = FPERF_UINT32_ONCE(proc->wait_event_info);
		nwait++;
	}
	qsort(waits, nwait, sizeof(FPerfPidWait), pidwait_cmp);

	nbe = pgstat_fetch_stat_numbackends();
	recs = palloc0(sizeof(FPerfRecord) * (nbe + 1));
	recs[n].kind = FPERF_REC_TICK;
	hdr = &recs[n].u.tick;
	n++;
	hdr->tick = tick_no;
	hdr->ts = ts;
	hdr->interval_ms = fperf_sample_interval_ms;

	if (read_host_cpu(&busy, &total))
	{
		if (have_host_prev && total >= host_prev_total && busy >= host_prev_busy)
		{
			hdr->host_ncpu = host_ncpu;
			hdr->host_busy_ms = jiffies_to_ms(busy - host_prev_busy);
			hdr->host_total_ms = jiffies_to_ms(total - host_prev_total);
		}
		have_host_prev = true;
		host_prev_busy = busy;
		host_prev_total = total;
	}

	for (i = 1; i <= nbe; i++)
	{
		LocalPgBackendStatus *local = fperf_local_beentry(i);
		PgBackendStatus *be;
		FPerfProcRec *p;
		FPerfPidWait key;
		FPerfPidWait *w;
		uint64		jiffies;

		if (local == NULL)
			continue;
		be = &local->backendStatus;
		if (be->st_procpid <= 0)
			continue;

		recs[n].kind = FPERF_REC_PROC;
		p = &recs[n].u.proc;
		n++;
		p->pid = be->st_procpid;
		p->dbid = be->st_databaseid;
		p->userid = be->st_userid;
		p->state = (uint8) be->st_state;
		p->backend_type = (uint8) be->st_backendType;
		p->queryid = FPERF_BEENTRY_QUERYID(be);
		if (be->st_appname)
			strlcpy(p->appname, be->st_appname, NAMEDATALEN);

		key.pid = p->pid;
		w = bsearch(&key, waits, nwait, sizeof(FPerfPidWait), pidwait_cmp);
		p->wait_event_info = w ? w->wait_event_info : 0;

		/* the first process it waits for, for a heavyweight lock */
		p->blocker_pid = 0;
		if ((p->wait_event_info & 0xFF000000) == PG_WAIT_LOCK &&
			nlookups < FPERF_MAX_BLOCKER_LOOKUPS)
		{
			p->blocker_pid = first_blocker(p->pid);
			nlookups++;
		}

		/*
		 * CPU used since the previous tick.  A client backend that was idle
		 * when its time was last read and is still idle since the same
		 * moment has run no statement in between, so its CPU time has not
		 * moved: /proc is not read again (a pool of 800 idle connections
		 * then costs no system calls at all).  Whatever an idle backend
		 * does spend (sinval catch-up) is counted at its next read.
		 */
		p->cpu_ms = -1;
		if (hdr->host_ncpu > 0 && be->st_state == STATE_IDLE)
		{
			FPerfCpuEntry *e = hash_search(cpu_hash, &p->pid, HASH_FIND, NULL);

			if (e != NULL && e->idle &&
				e->proc_start == be->st_proc_start_timestamp &&
				e->state_start == be->st_state_start_timestamp)
			{
				p->cpu_ms = 0;
				e->seen_tick = tick_no;
				continue;
			}
		}
		if (fperf_read_proc_cpu(p->pid, &jiffies))
		{
			bool		found;
			FPerfCpuEntry *e = hash_search(cpu_hash, &p->pid, HASH_ENTER, &found);

			/* without a host figure to compare with, CPU stays unknown */
			if (hdr->host_ncpu > 0 && found && e->proc_start == be->st_proc_start_timestamp &&
					 jiffies >= e->jiffies)
				p->cpu_ms = jiffies_to_ms(jiffies - e->jiffies);
			else if (hdr->host_ncpu > 0 && !first_tick &&
					 be->st_proc_start_timestamp >= first_tick_ts)
				p->cpu_ms = jiffies_to_ms(jiffies); /* started since: all of it */
			else if (hdr->host_ncpu > 0)
				p->cpu_ms = 0;	/* predates the sampler: baseline only */
			e->proc_start = be->st_proc_start_timestamp;
			e->jiffies = jiffies;
			e->seen_tick = tick_no;
			e->idle = (be->st_state == STATE_IDLE);
			e->state_start = be->st_state_start_timestamp;
		}
	}
	/*
	 * The sessions that ended since the previous tick, taken after the live
	 * processes were read: a session writes its record before it leaves the
	 * status array, so one that was not in it just now had been read at an
	 * earlier tick (or never), and its entry in cpu_hash is still there.
	 * Each gets a record of its own with the CPU it used since it was last
	 * read (a session still in the status array as it exits was read above;
	 * only the rest is added).
	 */
	SpinLockAcquire(&fperf_ended->mutex);
	nended = fperf_ended->n;
	memcpy(ended, fperf_ended->recs, sizeof(FPerfEndedRec) * nended);
	fperf_ended->n = 0;
	SpinLockRelease(&fperf_ended->mutex);
	if (nended > 0 && hdr->host_ncpu > 0)
	{
		recs = repalloc(recs, sizeof(FPerfRecord) * (n + nended));
		hdr = &recs[0].u.tick;
	}
	for (i = 0; i < nended && hdr->host_ncpu > 0; i++)
	{
		const FPerfEndedRec *x = &ended[i];
		FPerfCpuEntry *e;
		int32		cpu_ms;
		FPerfProcRec *p;

		e = hash_search(cpu_hash, &x->pid, HASH_FIND, NULL);
		if (e != NULL && e->proc_start == x->proc_start)
		{
			cpu_ms = x->jiffies > e->jiffies ? jiffies_to_ms(x->jiffies - e->jiffies) : 0;
			/* a later read of the same process adds only what follows */
			e->jiffies = Max(e->jiffies, x->jiffies);
			e->idle = false;
			e->seen_tick = tick_no;
		}
		else
		{
			/* never read: all of it, unless it predates the sampler */
			cpu_ms = (!first_tick && x->proc_start >= first_tick_ts) ?
				jiffies_to_ms(x->jiffies) : 0;
			if (e == NULL)
			{
				e = hash_search(cpu_hash, &x->pid, HASH_ENTER, NULL);
				e->proc_start = x->proc_start;
				e->jiffies = x->jiffies;
				e->idle = false;
				e->state_start = 0;
				e->seen_tick = tick_no;
			}
			/* else the pid is another process's now: its entry stays */
		}
		if (cpu_ms <= 0)
			continue;
		memset(&recs[n], 0, sizeof(FPerfRecord));
		recs[n].kind = FPERF_REC_PROC;
		p = &recs[n].u.proc;
		n++;
		p->pid = x->pid;
		p->dbid = x->dbid;
		p->userid = x->userid;
		p->queryid = x->queryid;
		p->state = FPERF_PROC_ENDED;
		p->backend_type = x->backend_type;
		p->cpu_ms = cpu_ms;
		strlcpy(p->appname, x->appname, NAMEDATALEN);
	}
	hdr->nproc = n - 1;

	/* Free pgstat's copy of the status array; the next tick reads afresh. */
	pgstat_clear_snapshot();

	/* Forget processes that are gone. */
	{
		HASH_SEQ_STATUS seq;
		FPerfCpuEntry *e;

		hash_seq_init(&seq, cpu_hash);
		while ((e = hash_seq_search(&seq)) != NULL)
		{
			if (e->seen_tick != tick_no)
				(void) hash_search(cpu_hash, &e->pid, HASH_REMOVE, NULL);
		}
	}

	if (first_tick)
		first_tick_ts = ts;

	INSTR_TIME_SET_CURRENT(elapsed);
	INSTR_TIME_SUBTRACT(elapsed, start);
	hdr->probe_us = (int32) Min(INSTR_TIME_GET_MICROSEC(elapsed), PG_INT32_MAX);

	fperf_sampler_append_tick(recs, n);
	fperf_metrics_tick(recs, n);
}
