/*-------------------------------------------------------------------------
 *
 * worker.c
 *		The sampler background worker: sample, aggregate, flush.
 *
 * One worker per server, registered by _PG_init when folio_perf is
 * preloaded, connected to folio_perf.database.  Its loop:
 *
 *	- every folio_perf.sample_interval: copy every process's state from the
 *	  backend status array (pgstat's local snapshot, which reads it with the
 *	  changecount protocol) and its wait event from its PGPROC, read its CPU
 *	  time from /proc/<pid>/stat and the host's from /proc/stat, and append
 *	  the tick to the shared ring (sampler.c).  No SQL, no catalog access,
 *	  no transaction on this path.
 *	- every folio_perf.flush_interval, when folio_perf_sampler_flush() asks,
 *	  when the ring is half full, and before a timed snapshot: aggregate the
 *	  ticks not yet flushed into one "interval" row (see below) and write it,
 *	  in a transaction, to folio_perf_data.sample_interval.
 *	- every folio_perf.snapshot_interval: flush, then call the snapshot
 *	  function in the same transaction.
 *	- every 10 minutes when folio_perf.retention > 0: delete old intervals.
 *	- remote targets (rsampler.c): at every tick, each enabled target's
 *	  pg_stat_activity is asked for over a kept connection, without
 *	  waiting; answers are buffered per target and written at each flush as
 *	  intervals of that target (fperf_worker_write_remote), aggregated like
 *	  the local ticks.  Their sessions are attributed by role name, else
 *	  application_name; CPU is not available.
 *
 * Storage format.  A flushed interval holds, besides per-tick totals, for
 * every "series" (a kind -- connections, load, cpu -- a dimension such as
 * role or wait_event, and a key) the histogram of its per-tick values:
 * parallel arrays (series, value, ticks), one entry per distinct non-zero
 * value.  Ticks where a series had no session count as 0.  Histograms of
 * consecutive intervals merge exactly, so a window's average, maximum and
 * 95th percentile per series are exact, and most series (idle connection
 * pools) take one entry per interval.  Series are named once in
 * folio_perf_data.sample_series; the worker caches their ids.
 *
 * An interval is cut at every flush, so a snapshot that flushes first
 * starts and ends windows on interval boundaries.
 *
 * Attribution.  While aggregating, a session's tenant and module come from
 * the relation schemas the parse hook recorded for its query id (looked up
 * once per flush through folio_perf_query_relations()), else from its role
 * name, else from its application_name.  The worker's own statements are
 * kept out of pg_stat_statements and the relation store.
 *
 * Robustness.  Errors while writing are caught, logged, counted in shared
 * memory and retried at the next flush; the samples stay in the ring until
 * a flush commits.  The flush position moves only after the commit.  A
 * crash of the worker (or of the server) loses what the ring held, at most
 * one flush interval.  On a hot standby nothing is written; the ring keeps
 * the newest samples.  A memory context is reset every loop.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/worker.c
 *
 *-------------------------------------------------------------------------
 */
#include "sampler.h"
#include "metrics.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

/* Read a uint32 in shared memory once, without a lock (as pgstatfuncs.c). */
#define FPERF_UINT32_ONCE(var) ((uint32) (*((volatile uint32 *) &(var))))

/* Series kinds and dimensions, as one-letter codes in hash keys. */
#define KIND_CONN	'c'
#define KIND_LOAD	'l'
#define KIND_CPU	'u'

#define DIM_TOTAL		't'
#define DIM_DATABASE	'd'
#define DIM_STATE		's'
#define DIM_ROLE		'r'
#define DIM_APPNAME		'a'
#define DIM_TENANT		'n'
#define DIM_MODULE		'm'
#define DIM_WAIT_TYPE	'w'
#define DIM_WAIT_EVENT	'e'
#define DIM_STATEMENT	'q'
#define DIM_BACKEND		'b'

typedef struct FPerfCodeName
{
	char		code;
	const char *name;
} FPerfCodeName;

static const FPerfCodeName kind_names[] = {
	{KIND_CONN, "connections"},
	{KIND_LOAD, "load"},
	{KIND_CPU, "cpu"},
	{0, NULL}
};

static const FPerfCodeName dim_names[] = {
	{DIM_TOTAL, "total"},
	{DIM_DATABASE, "database"},
	{DIM_STATE, "state"},
	{DIM_ROLE, "role"},
	{DIM_APPNAME, "application_name"},
	{DIM_TENANT, "tenant"},
	{DIM_MODULE, "module"},
	{DIM_WAIT_TYPE, "wait_event_type"},
	{DIM_WAIT_EVENT, "wait_event"},
	{DIM_STATEMENT, "statement"},
	{DIM_BACKEND, "backend_type"},
	{0, NULL}
};

/* Hash key of a series: kind code, dimension code, key text. */
#define FPERF_KEYLEN 160

/* Series ids cached by the worker, at most this many. */
#define FPERF_MAX_CACHED_SERIES 200000

/* Time between two retention runs. */
#define FPERF_PURGE_EVERY_MS (10 * 60 * 1000)

/* Longest sleep while a remote target's connection or answer is under way. */
#define FPERF_REMOTE_POLL_MS 5

/* Least time between two log lines about the same kind of failure. */
#define FPERF_LOG_EVERY_MS (60 * 1000)

/* Series being aggregated during one flush (FlushContext). */
typedef struct FPerfAgg
{
	char		key[FPERF_KEYLEN];	/* hash key, must be first */
	int32		series_id;		/* 0 until known */
	int32		cur;			/* sessions counted in tick cur_tick */
	uint64		cur_tick;
	int			nh;				/* histogram: distinct per-tick values */
	int			maxh;
	int32	   *hv;
	int32	   *hf;
	int64		cpu_ms;
	/* what describes a new series in sample_series */
	Oid			dbid;
	Oid			userid;
	int64		queryid;
	int32		target_id;		/* 0: this server */
	bool		has_ids;
	char	   *tenant;
	char	   *module;
	const char *attributed_by;
} FPerfAgg;

/* Cached series id (WorkerContext). */
typedef struct FPerfSeriesId
{
	char		key[FPERF_KEYLEN];
	int32		series_id;
} FPerfSeriesId;

/* CPU time of one process at the previous tick (WorkerContext). */
typedef struct FPerfCpuEntry
{
	int			pid;			/* hash key */
	TimestampTz proc_start;
	uint64		jiffies;
	uint64		seen_tick;
	bool		idle;			/* idle when jiffies were read ... */
	TimestampTz state_start;	/* ... since this st_state_start_timestamp */
} FPerfCpuEntry;

/* Role name and what it says about tenant and module (FlushContext). */
typedef struct FPerfRoleInfo
{
	Oid			userid;			/* hash key */
	char	   *rolname;
	char	   *tenant;
	char	   *module;
} FPerfRoleInfo;

typedef struct FPerfDbInfo
{
	Oid			dbid;			/* hash key */
	char	   *datname;
} FPerfDbInfo;

/* Tenant and module of a query id, from its relations' schemas (FlushContext). */
typedef struct FPerfQueryAttr
{
	uint64		queryid;		/* hash key */
	char	   *tenant;
	char	   *module;			/* NULL: the relations name no module */
} FPerfQueryAttr;

/* pid -> wait_event_info, from the PGPROC array. */
typedef struct FPerfPidWait
{
	int			pid;
	uint32		wait_event_info;
} FPerfPidWait;

/* Memory: WorkerContext lives as long as the worker, LoopContext one loop,
 * FlushContext one flush. */
static MemoryContext WorkerContext = NULL;
static MemoryContext LoopContext = NULL;
static MemoryContext FlushContext = NULL;

static HTAB *series_cache = NULL;
static Oid	series_cache_relid = InvalidOid;
static HTAB *cpu_hash = NULL;

/* Aggregation state of the current flush. */
static HTAB *agg_hash = NULL;
static FPerfAgg **touched = NULL;
static int	ntouched = 0;
static int	maxtouched = 0;
static HTAB *role_hash = NULL;
static HTAB *db_hash = NULL;
static HTAB *qattr_hash = NULL;

/* Flushed in the current transaction, applied to shared memory at commit. */
static bool pending_valid = false;
static uint64 pending_upto = 0;
static int64 pending_ticks = 0;
static int64 pending_intervals = 0;
static uint64 pending_dropped_seen = 0;
static uint64 dropped_seen = 0;
static bool pending_remote = false;	/* remote ticks written in this xact */

/* CPU bookkeeping. */
static long clk_tck = 0;
static uint64 tick_no = 0;
static TimestampTz first_tick_ts = 0;
static bool have_host_prev = false;
static uint64 host_prev_busy = 0;
static uint64 host_prev_total = 0;
static int	host_ncpu = 0;

/* What the worker knows about its surroundings. */
static bool is_standby = false;
static bool storage_missing = false;
static bool logged_standby = false;
static bool logged_no_storage = false;
static TimestampTz last_error_log = 0;

static void worker_detach(int code, Datum arg);
static void worker_publish_settings(void);

/* ---------------------------------------------------------------------
 * Probing: no SQL, no catalog, no transaction.
 * ---------------------------------------------------------------------
 */

/*
 * Read utime + stime of a process from /proc/<pid>/stat, in clock ticks.
 * Returns false if the process is gone or /proc is not there.
 */
static bool
read_proc_cpu(int pid, uint64 *jiffies)
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
 * Take one sample of every process and append it to the ring.  Allocates
 * in the current (loop) memory context only.
 */
static void
fperf_probe(void)
{
	TimestampTz ts = GetCurrentTimestamp();
	instr_time	start,
				elapsed;
	int			nbe;
	int			i;
	int			n = 0;
	int			nwait = 0;
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
		if (read_proc_cpu(p->pid, &jiffies))
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

/* ---------------------------------------------------------------------
 * Aggregation: runs inside a transaction (catalog lookups for names).
 * ---------------------------------------------------------------------
 */

/* Look up or build the role's name and what it says. */
static FPerfRoleInfo *
role_info(Oid userid)
{
	bool		found;
	FPerfRoleInfo *r = hash_search(role_hash, &userid, HASH_ENTER, &found);

	if (!found)
	{
		char	   *name = OidIsValid(userid) ? GetUserNameFromId(userid, true) : NULL;

		r->tenant = NULL;
		r->module = NULL;
		if (name == NULL && OidIsValid(userid))
			name = psprintf("%u", userid);
		r->rolname = name ? name : "";
		if (name != NULL)
			(void) fperf_text_split_schema(name, &r->tenant, &r->module);
	}
	return r;
}

static const char *
db_name(Oid dbid)
{
	bool		found;
	FPerfDbInfo *d = hash_search(db_hash, &dbid, HASH_ENTER, &found);

	if (!found)
	{
		char	   *name = OidIsValid(dbid) ? get_database_name(dbid) : NULL;

		if (name == NULL && OidIsValid(dbid))
			name = psprintf("%u", dbid);
		d->datname = name ? name : "";
	}
	return d->datname;
}

/*
 * Count one session (or add CPU) in series (kind, dim, text) for tick
 * `tick`.  tenant/module/by describe a series seen for the first time.
 */
static FPerfAgg *
agg_touch(char kind, char dim, const char *text, uint64 tick,
		  const char *tenant, const char *module, const char *by)
{
	char		key[FPERF_KEYLEN];
	bool		found;
	FPerfAgg   *a;

	memset(key, 0, sizeof(key));
	key[0] = kind;
	key[1] = dim;
	strlcpy(key + 2, text, FPERF_KEYLEN - 2);
	a = hash_search(agg_hash, key, HASH_ENTER, &found);
	if (!found)
	{
		a->series_id = 0;
		a->cur = 0;
		a->cur_tick = 0;
		a->nh = 0;
		a->maxh = 0;
		a->hv = NULL;
		a->hf = NULL;
		a->cpu_ms = 0;
		a->dbid = InvalidOid;
		a->userid = InvalidOid;
		a->queryid = 0;
		a->target_id = 0;
		a->has_ids = false;
		a->tenant = tenant ? pstrdup(tenant) : NULL;
		a->module = module ? pstrdup(module) : NULL;
		a->attributed_by = by;
	}
	if (kind == KIND_CPU)
		return a;
	if (a->cur_tick != tick)
	{
		a->cur_tick = tick;
		a->cur = 0;
		if (ntouched == maxtouched)
		{
			maxtouched = Max(64, maxtouched * 2);
			touched = touched ? repalloc(touched, sizeof(FPerfAgg *) * maxtouched) :
				palloc(sizeof(FPerfAgg *) * maxtouched);
		}
		touched[ntouched++] = a;
	}
	a->cur++;
	return a;
}

/* Close a tick: add every touched series' count to its histogram. */
static void
agg_end_tick(void)
{
	int			i;

	for (i = 0; i < ntouched; i++)
	{
		FPerfAgg   *a = touched[i];
		int			j;

		for (j = 0; j < a->nh; j++)
		{
			if (a->hv[j] == a->cur)
				break;
		}
		if (j == a->nh)
		{
			if (a->nh == a->maxh)
			{
				a->maxh = Max(4, a->maxh * 2);
				a->hv = a->hv ? repalloc(a->hv, sizeof(int32) * a->maxh) :
					palloc(sizeof(int32) * a->maxh);
				a->hf = a->hf ? repalloc(a->hf, sizeof(int32) * a->maxh) :
					palloc(sizeof(int32) * a->maxh);
			}
			a->hv[j] = a->cur;
			a->hf[j] = 0;
			a->nh++;
		}
		a->hf[j]++;
	}
	ntouched = 0;
}

/* Per-interval totals gathered while aggregating. */
typedef struct FPerfIntervalAcc
{
	TimestampTz started_at;
	TimestampTz ended_at;
	int			interval_ms;
	int			nticks;
	int32	   *tick_ms;
	int32	   *tick_conns;
	int32	   *tick_active;
	int			host_ncpu;
	int64		host_busy_ms;
	int64		host_total_ms;
	int			cpu_ticks;
} FPerfIntervalAcc;

/* Account one process record of a tick. */
static void
agg_proc(const FPerfProcRec *p, uint64 tick, bool cpu_ok, int32 *conns,
		 int32 *active)
{
	bool		self = (p->pid == MyProcPid);
	bool		client = (p->backend_type == B_BACKEND) && !self;
	bool		is_active = !self && (p->state == STATE_RUNNING ||
									  p->state == STATE_FASTPATH);
	FPerfRoleInfo *role;
	char		appmod[NAMEDATALEN];
	size_t		appmodlen;
	const char *tenant;
	const char *module;
	const char *by;
	const char *datname;
	const char *btype;

	if (!client && !is_active && !(cpu_ok && p->cpu_ms > 0))
		return;

	role = role_info(p->userid);
	appmodlen = fperf_appname_module(p->appname, strlen(p->appname),
									 appmod, sizeof(appmod));
	tenant = role->tenant;
	if (role->module)
	{
		module = role->module;
		by = "role";
	}
	else if (appmodlen > 0)
	{
		module = appmod;
		by = "application_name";
	}
	else
	{
		module = NULL;
		by = NULL;
	}
	/* the schemas of the statement's relations decide first */
	if (qattr_hash != NULL && p->queryid != 0 && p->dbid == MyDatabaseId)
	{
		FPerfQueryAttr *q = hash_search(qattr_hash, &p->queryid, HASH_FIND, NULL);

		if (q != NULL && q->module != NULL)
		{
			tenant = q->tenant;
			module = q->module;
			by = "relations";
		}
	}
	datname = db_name(p->dbid);
	btype = GetBackendTypeDesc((BackendType) p->backend_type);

	if (client)
	{
		(*conns)++;
		agg_touch(KIND_CONN, DIM_TOTAL, "all", tick, NULL, NULL, NULL);
		agg_touch(KIND_CONN, DIM_DATABASE, datname, tick, NULL, NULL, NULL);
		agg_touch(KIND_CONN, DIM_STATE, fperf_state_name((BackendState) p->state),
				  tick, NULL, NULL, NULL);
		agg_touch(KIND_CONN, DIM_ROLE, role->rolname, tick,
				  role->tenant, role->module, role->module ? "role" : NULL);
		agg_touch(KIND_CONN, DIM_APPNAME, p->appname, tick, NULL,
				  appmodlen > 0 ? appmod : NULL,
				  appmodlen > 0 ? "application_name" : NULL);
		agg_touch(KIND_CONN, DIM_TENANT, tenant ? tenant : "", tick,
				  tenant, NULL, NULL);
		agg_touch(KIND_CONN, DIM_MODULE, module ? module : "", tick,
				  NULL, module, NULL);
	}

	if (is_active)
	{
		const char *wtype = pgstat_get_wait_event_type(p->wait_event_info);
		const char *wevent = pgstat_get_wait_event(p->wait_event_info);
		char		wbuf[FPERF_KEYLEN];
		char		qbuf[64];
		FPerfAgg   *a;

		(*active)++;
		if (wtype == NULL)
			wtype = "CPU";
		if (p->wait_event_info == 0 || wevent == NULL)
			strlcpy(wbuf, wtype, sizeof(wbuf));
		else
			snprintf(wbuf, sizeof(wbuf), "%s:%s", wtype, wevent);
		snprintf(qbuf, sizeof(qbuf), "%u:%u:" INT64_FORMAT,
				 p->dbid, p->userid, (int64) p->queryid);

		agg_touch(KIND_LOAD, DIM_TOTAL, "all", tick, NULL, NULL, NULL);
		agg_touch(KIND_LOAD, DIM_WAIT_TYPE, wtype, tick, NULL, NULL, NULL);
		agg_touch(KIND_LOAD, DIM_WAIT_EVENT, wbuf, tick, NULL, NULL, NULL);
		agg_touch(KIND_LOAD, DIM_DATABASE, datname, tick, NULL, NULL, NULL);
		agg_touch(KIND_LOAD, DIM_ROLE, role->rolname, tick,
				  role->tenant, role->module, role->module ? "role" : NULL);
		agg_touch(KIND_LOAD, DIM_TENANT, tenant ? tenant : "", tick,
				  tenant, NULL, NULL);
		agg_touch(KIND_LOAD, DIM_MODULE, module ? module : "", tick,
				  NULL, module, NULL);
		agg_touch(KIND_LOAD, DIM_BACKEND, btype, tick, NULL, NULL, NULL);
		a = agg_touch(KIND_LOAD, DIM_STATEMENT, qbuf, tick, tenant, module, by);
		if (!a->has_ids)
		{
			a->has_ids = true;
			a->dbid = p->dbid;
			a->userid = p->userid;
			a->queryid = (int64) p->queryid;
		}
	}

	if (cpu_ok && p->cpu_ms > 0)
	{
		FPerfAgg   *a;

		a = agg_touch(KIND_CPU, DIM_TOTAL, "all", tick, NULL, NULL, NULL);
		a->cpu_ms += p->cpu_ms;
		a = agg_touch(KIND_CPU, DIM_DATABASE, datname, tick, NULL, NULL, NULL);
		a->cpu_ms += p->cpu_ms;
		a = agg_touch(KIND_CPU, DIM_BACKEND, btype, tick, NULL, NULL, NULL);
		a->cpu_ms += p->cpu_ms;
		a = agg_touch(KIND_CPU, DIM_ROLE, role->rolname, tick,
					  role->tenant, role->module, role->module ? "role" : NULL);
		a->cpu_ms += p->cpu_ms;
		a = agg_touch(KIND_CPU, DIM_APPNAME, p->appname, tick, NULL,
					  appmodlen > 0 ? appmod : NULL,
					  appmodlen > 0 ? "application_name" : NULL);
		a->cpu_ms += p->cpu_ms;
		a = agg_touch(KIND_CPU, DIM_TENANT, tenant ? tenant : "", tick,
					  tenant, NULL, NULL);
		a->cpu_ms += p->cpu_ms;
		a = agg_touch(KIND_CPU, DIM_MODULE, module ? module : "", tick,
					  NULL, module, NULL);
		a->cpu_ms += p->cpu_ms;
	}
}

static const char *
code_name(const FPerfCodeName *tab, char code)
{
	for (; tab->name; tab++)
		if (tab->code == code)
			return tab->name;
	elog(ERROR, "unknown sampler code '%c'", code);
	return NULL;				/* keep compiler quiet */
}

static char
name_code(const FPerfCodeName *tab, const char *name)
{
	for (; tab->name; tab++)
		if (strcmp(tab->name, name) == 0)
			return tab->code;
	return 0;
}

/* A text[] from C strings; NULL pointers become NULL elements. */
static Datum
text_array(char **vals, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(n, 1));
	int			dims[1] = {n};
	int			lbs[1] = {1};
	int			i;

	for (i = 0; i < n; i++)
	{
		nulls[i] = (vals[i] == NULL);
		d[i] = nulls[i] ? (Datum) 0 : CStringGetTextDatum(vals[i]);
	}
	return PointerGetDatum(construct_md_array(d, nulls, 1, dims, lbs,
											  TEXTOID, -1, false, TYPALIGN_INT));
}

static Datum
int4_array(const int32 *vals, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	int			i;

	for (i = 0; i < n; i++)
		d[i] = Int32GetDatum(vals[i]);
	return PointerGetDatum(construct_array(d, n, INT4OID, 4, true, TYPALIGN_INT));
}

static Datum
oid_array(const Oid *vals, const bool *isnull, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(n, 1));
	int			dims[1] = {n};
	int			lbs[1] = {1};
	int			i;

	for (i = 0; i < n; i++)
	{
		d[i] = ObjectIdGetDatum(vals[i]);
		nulls[i] = isnull[i];
	}
	return PointerGetDatum(construct_md_array(d, nulls, 1, dims, lbs,
											  OIDOID, 4, true, TYPALIGN_INT));
}

static Datum
int8_array(const int64 *vals, const bool *isnull, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	bool	   *nulls = palloc(sizeof(bool) * Max(n, 1));
	int			dims[1] = {n};
	int			lbs[1] = {1};
	int			i;

	for (i = 0; i < n; i++)
	{
		d[i] = Int64GetDatum(vals[i]);
		nulls[i] = isnull[i];
	}
	return PointerGetDatum(construct_md_array(d, nulls, 1, dims, lbs,
											  INT8OID, 8, FLOAT8PASSBYVAL,
											  TYPALIGN_DOUBLE));
}

static Datum
int4_array_nulls(const int32 *vals, const bool *isnull, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	int			dims[1] = {n};
	int			lbs[1] = {1};
	int			i;

	for (i = 0; i < n; i++)
		d[i] = Int32GetDatum(vals[i]);
	return PointerGetDatum(construct_md_array(d, (bool *) isnull, 1, dims, lbs,
											  INT4OID, sizeof(int32), true,
											  TYPALIGN_INT));
}

/* Forget cached series ids (storage was recreated, or the cache is big). */
static void
series_cache_reset(void)
{
	HASHCTL		ctl;

	if (series_cache)
		hash_destroy(series_cache);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = FPERF_KEYLEN;
	ctl.entrysize = sizeof(FPerfSeriesId);
	ctl.hcxt = WorkerContext;
	series_cache = hash_create("folio_perf series ids", 1024, &ctl,
							   HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
}

#define SERIES_SQL \
	"WITH n(kind, dimension, key, dbid, userid, queryid, tenant, module, attributed_by," \
	"       target_id) AS (" \
	"  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::oid[], $5::oid[]," \
	"                       $6::bigint[], $7::text[], $8::text[], $9::text[], $10::int[]))," \
	" ins AS (" \
	"  INSERT INTO folio_perf_data.sample_series AS s" \
	"    (kind, dimension, key, dbid, userid, queryid, tenant, module, attributed_by," \
	"     target_id)" \
	"  SELECT * FROM n ON CONFLICT (kind, dimension, key) DO NOTHING" \
	"  RETURNING s.series_id, s.kind, s.dimension, s.key)" \
	" SELECT series_id, kind, dimension, key FROM ins" \
	" UNION ALL" \
	" SELECT s.series_id, s.kind, s.dimension, s.key" \
	"   FROM folio_perf_data.sample_series s JOIN n USING (kind, dimension, key)"

/*
 * Give every aggregated series its id: from the cache, else from
 * sample_series (inserting the new ones).  Caller is connected to SPI.
 */
static void
resolve_series_ids(void)
{
	HASH_SEQ_STATUS seq;
	FPerfAgg   *a;
	int			nnew = 0;
	int			maxnew = (int) hash_get_num_entries(agg_hash);
	char	  **kinds,
			  **dims,
			  **keys,
			  **tenants,
			  **modules,
			  **bys;
	Oid		   *dbids,
			   *userids;
	int64	   *queryids;
	int32	   *targetids;
	bool	   *idnull;
	bool	   *tgtnull;
	Oid			argtypes[10] = {TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID,
		OIDARRAYOID, OIDARRAYOID, INT8ARRAYOID, TEXTARRAYOID, TEXTARRAYOID,
	TEXTARRAYOID, INT4ARRAYOID};
	Datum		args[10];
	int			ret;
	uint64		i;

	if (maxnew == 0)
		return;
	if (hash_get_num_entries(series_cache) > FPERF_MAX_CACHED_SERIES)
		series_cache_reset();

	kinds = palloc(sizeof(char *) * maxnew);
	dims = palloc(sizeof(char *) * maxnew);
	keys = palloc(sizeof(char *) * maxnew);
	tenants = palloc(sizeof(char *) * maxnew);
	modules = palloc(sizeof(char *) * maxnew);
	bys = palloc(sizeof(char *) * maxnew);
	dbids = palloc(sizeof(Oid) * maxnew);
	userids = palloc(sizeof(Oid) * maxnew);
	queryids = palloc(sizeof(int64) * maxnew);
	targetids = palloc(sizeof(int32) * maxnew);
	idnull = palloc(sizeof(bool) * maxnew);
	tgtnull = palloc(sizeof(bool) * maxnew);

	hash_seq_init(&seq, agg_hash);
	while ((a = hash_seq_search(&seq)) != NULL)
	{
		FPerfSeriesId *c = hash_search(series_cache, a->key, HASH_FIND, NULL);

		if (c)
		{
			a->series_id = c->series_id;
			continue;
		}
		kinds[nnew] = (char *) code_name(kind_names, a->key[0]);
		dims[nnew] = (char *) code_name(dim_names, a->key[1]);
		keys[nnew] = a->key + 2;
		tenants[nnew] = a->tenant;
		modules[nnew] = a->module;
		bys[nnew] = (char *) a->attributed_by;
		dbids[nnew] = a->dbid;
		userids[nnew] = a->userid;
		queryids[nnew] = a->queryid;
		idnull[nnew] = !a->has_ids;
		targetids[nnew] = a->target_id;
		tgtnull[nnew] = (a->target_id == 0);
		nnew++;
	}
	if (nnew == 0)
		return;

	args[0] = text_array(kinds, nnew);
	args[1] = text_array(dims, nnew);
	args[2] = text_array(keys, nnew);
	args[3] = oid_array(dbids, idnull, nnew);
	args[4] = oid_array(userids, idnull, nnew);
	args[5] = int8_array(queryids, idnull, nnew);
	args[6] = text_array(tenants, nnew);
	args[7] = text_array(modules, nnew);
	args[8] = text_array(bys, nnew);
	args[9] = int4_array_nulls(targetids, tgtnull, nnew);

	ret = SPI_execute_with_args(SERIES_SQL, 10, argtypes, args, NULL, false, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_with_args failed: error code %d", ret);

	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		int32		id = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
		char	   *kind = SPI_getvalue(tup, desc, 2);
		char	   *dim = SPI_getvalue(tup, desc, 3);
		char	   *keytext = SPI_getvalue(tup, desc, 4);
		char		key[FPERF_KEYLEN];
		FPerfSeriesId *c;

		memset(key, 0, sizeof(key));
		key[0] = name_code(kind_names, kind);
		key[1] = name_code(dim_names, dim);
		if (key[0] == 0 || key[1] == 0)
			continue;
		strlcpy(key + 2, keytext ? keytext : "", FPERF_KEYLEN - 2);
		a = hash_search(agg_hash, key, HASH_FIND, NULL);
		if (a)
			a->series_id = id;
		c = hash_search(series_cache, key, HASH_ENTER, NULL);
		c->series_id = id;
	}
}

/* Order entries by kind and series id, so that stored arrays are stable. */
static int
agg_cmp(const void *a, const void *b)
{
	const FPerfAgg *x = *(FPerfAgg *const *) a;
	const FPerfAgg *y = *(FPerfAgg *const *) b;

	if (x->key[0] != y->key[0])
		return (x->key[0] > y->key[0]) - (x->key[0] < y->key[0]);
	return (x->series_id > y->series_id) - (x->series_id < y->series_id);
}

#define INTERVAL_SQL \
	"INSERT INTO folio_perf_data.sample_interval" \
	" (started_at, ended_at, cut, sample_interval_ms, n_ticks, ticks_dropped," \
	"  tick_ms, tick_connections, tick_active, host_ncpu, host_busy_ms, host_total_ms," \
	"  cpu_ticks, c_series, c_value, c_freq, l_series, l_value, l_freq, u_series, u_ms," \
	"  target_id)" \
	" VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13," \
	"         $14, $15, $16, $17, $18, $19, $20, $21, $22)"

/*
 * Write one aggregated interval, of this server (target_id 0) or of a
 * remote target.  Caller is connected to SPI.
 */
static void
write_interval(FPerfIntervalAcc *acc, const char *cut, int64 dropped, int32 target_id)
{
	HASH_SEQ_STATUS seq;
	FPerfAgg   *a;
	FPerfAgg  **all;
	int			nall = 0;
	int			nentries = (int) hash_get_num_entries(agg_hash);
	int32	   *cs,
			   *cv,
			   *cf,
			   *ls,
			   *lv,
			   *lf,
			   *us,
			   *um;
	int			nc = 0,
				nl = 0,
				nu = 0,
				histlen = 0;
	int			i,
				j;
	Oid			argtypes[22] = {TIMESTAMPTZOID, TIMESTAMPTZOID, TEXTOID, INT4OID,
		INT4OID, INT4OID, INT4ARRAYOID, INT4ARRAYOID, INT4ARRAYOID, INT4OID,
		INT8OID, INT8OID, INT4OID, INT4ARRAYOID, INT4ARRAYOID, INT4ARRAYOID,
	INT4ARRAYOID, INT4ARRAYOID, INT4ARRAYOID, INT4ARRAYOID, INT4ARRAYOID, INT4OID};
	Datum		args[22];
	char		nulls[23];
	int			ret;

	resolve_series_ids();

	all = palloc(sizeof(FPerfAgg *) * Max(nentries, 1));
	hash_seq_init(&seq, agg_hash);
	while ((a = hash_seq_search(&seq)) != NULL)
	{
		if (a->series_id == 0)
			elog(ERROR, "sampler series \"%s\" has no id", a->key);
		all[nall++] = a;
		histlen += a->nh;
	}
	qsort(all, nall, sizeof(FPerfAgg *), agg_cmp);

	cs = palloc(sizeof(int32) * Max(histlen, 1));
	cv = palloc(sizeof(int32) * Max(histlen, 1));
	cf = palloc(sizeof(int32) * Max(histlen, 1));
	ls = palloc(sizeof(int32) * Max(histlen, 1));
	lv = palloc(sizeof(int32) * Max(histlen, 1));
	lf = palloc(sizeof(int32) * Max(histlen, 1));
	us = palloc(sizeof(int32) * Max(nall, 1));
	um = palloc(sizeof(int32) * Max(nall, 1));

	for (i = 0; i < nall; i++)
	{
		a = all[i];
		if (a->key[0] == KIND_CPU)
		{
			if (a->cpu_ms > 0)
			{
				us[nu] = a->series_id;
				um[nu] = (int32) Min(a->cpu_ms, PG_INT32_MAX);
				nu++;
			}
			continue;
		}
		for (j = 0; j < a->nh; j++)
		{
			if (a->key[0] == KIND_CONN)
			{
				cs[nc] = a->series_id;
				cv[nc] = a->hv[j];
				cf[nc] = a->hf[j];
				nc++;
			}
			else
			{
				ls[nl] = a->series_id;
				lv[nl] = a->hv[j];
				lf[nl] = a->hf[j];
				nl++;
			}
		}
	}

	memset(nulls, ' ', sizeof(nulls));
	nulls[22] = '\0';
	args[0] = TimestampTzGetDatum(acc->started_at);
	args[1] = TimestampTzGetDatum(acc->ended_at);
	args[2] = CStringGetTextDatum(cut);
	args[3] = Int32GetDatum(acc->interval_ms);
	args[4] = Int32GetDatum(acc->nticks);
	args[5] = Int32GetDatum((int32) Min(dropped, PG_INT32_MAX));
	args[6] = int4_array(acc->tick_ms, acc->nticks);
	args[7] = int4_array(acc->tick_conns, acc->nticks);
	args[8] = int4_array(acc->tick_active, acc->nticks);
	args[9] = Int32GetDatum(acc->host_ncpu);
	args[10] = Int64GetDatum(acc->host_busy_ms);
	args[11] = Int64GetDatum(acc->host_total_ms);
	args[12] = Int32GetDatum(acc->cpu_ticks);
	if (acc->cpu_ticks == 0)
		nulls[9] = nulls[10] = nulls[11] = 'n';
	args[13] = int4_array(cs, nc);
	args[14] = int4_array(cv, nc);
	args[15] = int4_array(cf, nc);
	args[16] = int4_array(ls, nl);
	args[17] = int4_array(lv, nl);
	args[18] = int4_array(lf, nl);
	args[19] = int4_array(us, nu);
	args[20] = int4_array(um, nu);
	if (acc->cpu_ticks == 0)
		nulls[19] = nulls[20] = 'n';
	args[21] = Int32GetDatum(target_id);
	if (target_id == 0)
		nulls[21] = 'n';

	ret = SPI_execute_with_args(INTERVAL_SQL, 22, argtypes, args, nulls, false, 0);
	if (ret != SPI_OK_INSERT)
		elog(ERROR, "SPI_execute_with_args failed: error code %d", ret);
}

/* Create the hash tables of one aggregation in FlushContext. */
static void
agg_begin(void)
{
	HASHCTL		ctl;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = FPERF_KEYLEN;
	ctl.entrysize = sizeof(FPerfAgg);
	ctl.hcxt = FlushContext;
	agg_hash = hash_create("folio_perf aggregation", 512, &ctl,
						   HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(FPerfRoleInfo);
	ctl.hcxt = FlushContext;
	role_hash = hash_create("folio_perf roles", 128, &ctl,
							HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(FPerfDbInfo);
	ctl.hcxt = FlushContext;
	db_hash = hash_create("folio_perf databases", 16, &ctl,
						  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	touched = NULL;
	ntouched = 0;
	maxtouched = 0;
}

/*
 * Aggregate the ticks in [start, end) -- at most
 * FPERF_MAX_TICKS_PER_INTERVAL of them -- into one interval and write it.
 * Returns the position after the last tick used; *nticks gets their count.
 */
static uint64
aggregate_and_write(uint64 start, uint64 end, const char *cut, int *nticks,
					int64 dropped)
{
	FPerfSamplerShared *s = fperf_sampler;
	uint64		cap = s->capacity;
	uint64		pos = start;
	FPerfIntervalAcc acc;
	int			maxticks;

	agg_begin();
	memset(&acc, 0, sizeof(acc));
	maxticks = 64;
	acc.tick_ms = palloc(sizeof(int32) * maxticks);
	acc.tick_conns = palloc(sizeof(int32) * maxticks);
	acc.tick_active = palloc(sizeof(int32) * maxticks);

	while (pos < end && acc.nticks < FPERF_MAX_TICKS_PER_INTERVAL)
	{
		const FPerfRecord *hdrrec = &s->ring[pos % cap];
		const FPerfTickRec *hdr = &hdrrec->u.tick;
		bool		cpu_ok = (hdr->host_ncpu > 0);
		int32		conns = 0,
					active = 0;
		int			k;
		int64		off_ms;

		if (hdrrec->kind != FPERF_REC_TICK)
			elog(ERROR, "sampler ring is corrupt at position " UINT64_FORMAT, pos);

		if (acc.nticks == 0)
		{
			acc.started_at = hdr->ts;
			acc.interval_ms = hdr->interval_ms;
		}
		off_ms = (hdr->ts - acc.started_at) / 1000;
		/* keep offsets in int4 range: start a new interval instead */
		if (off_ms > PG_INT32_MAX / 2)
			break;
		/* ticks taken at another interval length go to a new interval */
		if (hdr->interval_ms != acc.interval_ms)
			break;

		if (acc.nticks == maxticks)
		{
			maxticks *= 2;
			acc.tick_ms = repalloc(acc.tick_ms, sizeof(int32) * maxticks);
			acc.tick_conns = repalloc(acc.tick_conns, sizeof(int32) * maxticks);
			acc.tick_active = repalloc(acc.tick_active, sizeof(int32) * maxticks);
		}

		for (k = 1; k <= hdr->nproc; k++)
		{
			const FPerfRecord *r = &s->ring[(pos + k) % cap];

			agg_proc(&r->u.proc, hdr->tick, cpu_ok, &conns, &active);
		}
		agg_end_tick();

		acc.tick_ms[acc.nticks] = (int32) off_ms;
		acc.tick_conns[acc.nticks] = conns;
		acc.tick_active[acc.nticks] = active;
		acc.nticks++;
		acc.ended_at = hdr->ts;
		if (cpu_ok)
		{
			acc.cpu_ticks++;
			acc.host_ncpu = Max(acc.host_ncpu, hdr->host_ncpu);
			acc.host_busy_ms += hdr->host_busy_ms;
			acc.host_total_ms += hdr->host_total_ms;
		}
		pos += 1 + (uint64) hdr->nproc;
	}

	if (acc.nticks > 0)
		write_interval(&acc, cut, dropped, 0);
	*nticks = acc.nticks;
	return pos;
}

/*
 * Account one session of a remote target's tick: the same series as
 * agg_proc(), attributed by role name, else application_name (the parse
 * hook's evidence and CPU are not available remotely).
 */
static void
agg_remote_proc(int32 target_id, const FPerfRemoteProc *p, uint64 tick,
				int32 *conns, int32 *active)
{
	char	   *rtenant = NULL;
	char	   *rmodule = NULL;
	char		appmod[NAMEDATALEN];
	size_t		appmodlen;
	const char *tenant;
	const char *module;
	const char *by;

	if (!p->client && !p->active)
		return;
	if (p->usename[0] != '\0')
		(void) fperf_text_split_schema(p->usename, &rtenant, &rmodule);
	appmodlen = fperf_appname_module(p->appname, strlen(p->appname),
									 appmod, sizeof(appmod));
	tenant = rtenant;
	if (rmodule)
	{
		module = rmodule;
		by = "role";
	}
	else if (appmodlen > 0)
	{
		module = appmod;
		by = "application_name";
	}
	else
	{
		module = NULL;
		by = NULL;
	}

	if (p->client)
	{
		(*conns)++;
		agg_touch(KIND_CONN, DIM_TOTAL, "all", tick, NULL, NULL, NULL);
		agg_touch(KIND_CONN, DIM_DATABASE, p->datname, tick, NULL, NULL, NULL);
		agg_touch(KIND_CONN, DIM_STATE, p->state[0] ? p->state : "unknown",
				  tick, NULL, NULL, NULL);
		agg_touch(KIND_CONN, DIM_ROLE, p->usename, tick,
				  rtenant, rmodule, rmodule ? "role" : NULL);
		agg_touch(KIND_CONN, DIM_APPNAME, p->appname, tick, NULL,
				  appmodlen > 0 ? appmod : NULL,
				  appmodlen > 0 ? "application_name" : NULL);
		agg_touch(KIND_CONN, DIM_TENANT, tenant ? tenant : "", tick,
				  tenant, NULL, NULL);
		agg_touch(KIND_CONN, DIM_MODULE, module ? module : "", tick,
				  NULL, module, NULL);
	}

	if (p->active)
	{
		const char *wtype = p->wait_type ? p->wait_type : "CPU";
		char		wbuf[FPERF_KEYLEN];
		char		qbuf[64];
		FPerfAgg   *a;

		(*active)++;
		if (p->wait_type == NULL || p->wait_event == NULL)
			strlcpy(wbuf, wtype, sizeof(wbuf));
		else
			snprintf(wbuf, sizeof(wbuf), "%s:%s", wtype, p->wait_event);
		/* the target's oids: the key names the target */
		snprintf(qbuf, sizeof(qbuf), "t%d:%u:%u:" INT64_FORMAT,
				 target_id, p->dbid, p->userid, p->queryid);

		agg_touch(KIND_LOAD, DIM_TOTAL, "all", tick, NULL, NULL, NULL);
		agg_touch(KIND_LOAD, DIM_WAIT_TYPE, wtype, tick, NULL, NULL, NULL);
		agg_touch(KIND_LOAD, DIM_WAIT_EVENT, wbuf, tick, NULL, NULL, NULL);
		agg_touch(KIND_LOAD, DIM_DATABASE, p->datname, tick, NULL, NULL, NULL);
		agg_touch(KIND_LOAD, DIM_ROLE, p->usename, tick,
				  rtenant, rmodule, rmodule ? "role" : NULL);
		agg_touch(KIND_LOAD, DIM_TENANT, tenant ? tenant : "", tick,
				  tenant, NULL, NULL);
		agg_touch(KIND_LOAD, DIM_MODULE, module ? module : "", tick,
				  NULL, module, NULL);
		agg_touch(KIND_LOAD, DIM_BACKEND, p->btype, tick, NULL, NULL, NULL);
		a = agg_touch(KIND_LOAD, DIM_STATEMENT, qbuf, tick, tenant, module, by);
		if (!a->has_ids)
		{
			a->has_ids = true;
			a->dbid = p->dbid;
			a->userid = p->userid;
			a->queryid = p->queryid;
			a->target_id = target_id;
		}
	}
}

/*
 * Aggregate a remote target's buffered ticks into intervals of that target
 * and write them (caller is connected to SPI, in the flush transaction).
 * Returns the number of ticks written.
 */
int64
fperf_worker_write_remote(int32 target_id, const FPerfRemoteTick *ticks,
						  int nticks, const char *cut)
{
	int			i = 0;
	int64		written = 0;

	while (i < nticks)
	{
		FPerfIntervalAcc acc;
		int			maxticks = 64;

		agg_begin();
		memset(&acc, 0, sizeof(acc));
		acc.tick_ms = palloc(sizeof(int32) * maxticks);
		acc.tick_conns = palloc(sizeof(int32) * maxticks);
		acc.tick_active = palloc(sizeof(int32) * maxticks);
		for (; i < nticks && acc.nticks < FPERF_MAX_TICKS_PER_INTERVAL; i++)
		{
			const FPerfRemoteTick *t = &ticks[i];
			int32		conns = 0,
						active = 0;
			int64		off_ms;
			int			k;

			if (acc.nticks == 0)
			{
				acc.started_at = t->ts;
				acc.interval_ms = t->interval_ms;
			}
			off_ms = (t->ts - acc.started_at) / 1000;
			if (off_ms > PG_INT32_MAX / 2 || t->interval_ms != acc.interval_ms)
				break;
			if (acc.nticks == maxticks)
			{
				maxticks *= 2;
				acc.tick_ms = repalloc(acc.tick_ms, sizeof(int32) * maxticks);
				acc.tick_conns = repalloc(acc.tick_conns, sizeof(int32) * maxticks);
				acc.tick_active = repalloc(acc.tick_active, sizeof(int32) * maxticks);
			}
			for (k = 0; k < t->nproc; k++)
				agg_remote_proc(target_id, &t->procs[k], (uint64) i + 1, &conns, &active);
			agg_end_tick();
			acc.tick_ms[acc.nticks] = (int32) off_ms;
			acc.tick_conns[acc.nticks] = conns;
			acc.tick_active[acc.nticks] = active;
			acc.nticks++;
			acc.ended_at = t->ts;
		}
		if (acc.nticks == 0)
			break;
		write_interval(&acc, cut, 0, target_id);
		written += acc.nticks;
	}
	return written;
}

/*
 * True if folio_perf's storage tables exist in this database.  Logs once
 * when they are missing and once when they appear.  Needs a transaction.
 */
static bool
storage_ready(void)
{
	Oid			relid = InvalidOid;

	if (OidIsValid(get_extension_oid("folio_perf", true)))
	{
		relid = RangeVarGetRelid(makeRangeVar("folio_perf_data", "sample_interval", -1),
								 NoLock, true);
		if (OidIsValid(relid) &&
			!OidIsValid(RangeVarGetRelid(makeRangeVar("folio_perf_data", "sample_series", -1),
										 NoLock, true)))
			relid = InvalidOid;
	}

	if (!OidIsValid(relid))
	{
		storage_missing = true;
		if (!logged_no_storage)
		{
			ereport(LOG,
					(errmsg("folio_perf is not installed in database \"%s\", sampled data is not stored",
							get_database_name(MyDatabaseId)),
					 errdetail("Samples are kept in shared memory only, the oldest overwritten first."),
					 errhint("Run CREATE EXTENSION folio_perf in database \"%s\", or set folio_perf.database to the database where it is installed.",
							 get_database_name(MyDatabaseId))));
			logged_no_storage = true;
		}
		worker_publish_settings();
		return false;
	}

	if (relid != series_cache_relid)
	{
		series_cache_reset();
		series_cache_relid = relid;
	}
	if (storage_missing)
	{
		ereport(LOG,
				(errmsg("folio_perf found in database \"%s\", sampled data is stored from now on",
						get_database_name(MyDatabaseId))));
		storage_missing = false;
		logged_no_storage = false;
		worker_publish_settings();
	}
	return true;
}

#define QUERY_ATTR_SQL \
	"SELECT DISTINCT ON (r.queryid) r.queryid, p.tenant, p.module" \
	"  FROM %s.folio_perf_query_relations() r" \
	"  CROSS JOIN LATERAL unnest(array_prepend(r.target_nsp, r.nsps))" \
	"       WITH ORDINALITY AS u(nsp, ord)" \
	"  JOIN pg_catalog.pg_namespace n ON n.oid = u.nsp" \
	"  CROSS JOIN LATERAL %s.folio_perf_parse_schema(n.nspname::text) p" \
	" WHERE r.queryid = ANY ($1) AND p.module IS NOT NULL" \
	" ORDER BY r.queryid, u.ord"

/*
 * Look up, for the query ids of this database's sessions in [start, end),
 * the tenant and module of the schemas their relations live in, as the
 * parse-analysis hook recorded them (relstore.c): the DML target first,
 * else the first relation in a module schema.  Fills qattr_hash.  Caller is
 * connected to SPI.
 */
static void
load_query_attribution(uint64 start, uint64 end)
{
	FPerfSamplerShared *s = fperf_sampler;
	uint64		cap = s->capacity;
	uint64		pos;
	HASHCTL		ctl;
	HASH_SEQ_STATUS seq;
	FPerfQueryAttr *q;
	int64	   *ids;
	bool	   *nonull;
	int			n = 0;
	const char *nsp;
	int			ret;
	uint64		i;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(uint64);
	ctl.entrysize = sizeof(FPerfQueryAttr);
	ctl.hcxt = FlushContext;
	qattr_hash = hash_create("folio_perf query attribution", 256, &ctl,
							 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	for (pos = start; pos < end; pos++)
	{
		const FPerfRecord *r = &s->ring[pos % cap];
		bool		found;

		if (r->kind != FPERF_REC_PROC || r->u.proc.queryid == 0 ||
			r->u.proc.dbid != MyDatabaseId)
			continue;
		q = hash_search(qattr_hash, &r->u.proc.queryid, HASH_ENTER, &found);
		if (!found)
		{
			q->tenant = NULL;
			q->module = NULL;
			n++;
		}
	}
	if (n == 0)
		return;

	ret = SPI_execute("SELECT n.nspname::text FROM pg_catalog.pg_extension e"
					  " JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace"
					  " WHERE e.extname = 'folio_perf'", true, 1);
	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		return;
	nsp = quote_identifier(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1));

	ids = palloc(sizeof(int64) * n);
	nonull = palloc0(sizeof(bool) * n);
	n = 0;
	hash_seq_init(&seq, qattr_hash);
	while ((q = hash_seq_search(&seq)) != NULL)
		ids[n++] = (int64) q->queryid;

	ret = SPI_execute_with_args(psprintf(QUERY_ATTR_SQL, nsp, nsp), 1,
								(Oid[]) {INT8ARRAYOID},
								(Datum[]) {int8_array(ids, nonull, n)},
								NULL, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_with_args failed: error code %d", ret);
	for (i = 0; i < SPI_processed; i++)
	{
		HeapTuple	tup = SPI_tuptable->vals[i];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		uint64		queryid = (uint64) DatumGetInt64(SPI_getbinval(tup, desc, 1, &isnull));

		q = hash_search(qattr_hash, &queryid, HASH_FIND, NULL);
		if (q == NULL)
			continue;
		q->tenant = SPI_getvalue(tup, desc, 2);
		q->module = SPI_getvalue(tup, desc, 3);
	}
}

/*
 * Flush every tick not flushed yet (nor in this transaction) to storage,
 * within the caller's transaction.  Returns the number of ticks written.
 * The flush position in shared memory moves when the transaction commits
 * (apply_pending).  Used by the worker's own flushes, and by
 * folio_perf_sampler_flush() when the worker itself calls it (timed
 * snapshots).
 */
int64
fperf_worker_flush_in_xact(const char *cut)
{
	FPerfSamplerShared *s = fperf_sampler;
	uint64		start;
	uint64		end;
	int64		written = 0;
	int64		remote_written;
	int64		intervals = 0;
	uint64		dropped_now;
	MemoryContext oldcxt;

	if (!fperf_in_sampler_worker)
		elog(ERROR, "fperf_worker_flush_in_xact called outside the sampler");
	if (RecoveryInProgress())
		return 0;
	if (!storage_ready())
		return 0;

	start = pending_valid ? pending_upto : s->flush_pos;
	end = s->write_pos;			/* only this process moves it */
	if (start >= end && !fperf_rsampler_pending())
		return 0;
	dropped_now = s->ticks_dropped;

	MemoryContextReset(FlushContext);
	oldcxt = MemoryContextSwitchTo(FlushContext);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (start < end)
		load_query_attribution(start, end);

	while (start < end)
	{
		int			nticks = 0;
		int64		dropped = (int64) (dropped_now - (pending_valid ? pending_dropped_seen : dropped_seen));

		start = aggregate_and_write(start, end, cut, &nticks, dropped);
		if (nticks == 0)
			break;
		written += nticks;
		intervals++;
		pending_valid = true;
		pending_upto = start;
		pending_dropped_seen = dropped_now;
	}

	/* the remote targets' ticks, and their state */
	remote_written = fperf_rsampler_flush_in_xact(cut);
	written += remote_written;
	pending_remote = true;

	SPI_finish();
	MemoryContextSwitchTo(oldcxt);
	MemoryContextReset(FlushContext);
	agg_hash = role_hash = db_hash = qattr_hash = NULL;

	pending_ticks += written;
	pending_intervals += intervals;
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
	agg_hash = role_hash = db_hash = qattr_hash = NULL;
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

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	PG_TRY();
	{
		PushActiveSnapshot(GetTransactionSnapshot());
		pgstat_report_activity(STATE_RUNNING, what);
		fn(arg);
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

	MemoryContextSwitchTo(oldcxt);
	if (ok)
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
	(void) fperf_worker_flush_in_xact((const char *) arg);
}

static void
storage_check_cb(void *arg)
{
	(void) storage_ready();
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

/* Quote a schema-qualified function call. */
static char *
qualified_call(const char *nsp, const char *fn, const char *args)
{
	return psprintf("%s.%s(%s)", quote_identifier(nsp), fn, args);
}

/*
 * Timed snapshot: flush (so the snapshot cuts an interval), then call
 * folio_perf_snapshot_timed() if the extension has it, else
 * folio_perf_snapshot('timed'), in one transaction.
 */
static void
snapshot_cb(void *arg)
{
	bool	   *taken = (bool *) arg;
	char	   *nsp;
	char	   *sql = NULL;
	int			ret;
	bool		isnull;
	static bool logged_missing = false;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute("SELECT n.nspname::text FROM pg_catalog.pg_extension e"
					  " JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace"
					  " WHERE e.extname = 'folio_perf'", true, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute failed: error code %d", ret);
	if (SPI_processed == 0)
	{
		SPI_finish();
		(void) storage_ready();	/* logs once */
		return;
	}
	nsp = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

	/* cut the current interval at the snapshot */
	(void) fperf_worker_flush_in_xact("snapshot");

	ret = SPI_execute_with_args("SELECT pg_catalog.to_regprocedure($1) IS NOT NULL,"
								" pg_catalog.to_regprocedure($2) IS NOT NULL",
								2, (Oid[]) {TEXTOID, TEXTOID},
								(Datum[]) {CStringGetTextDatum(qualified_call(nsp, "folio_perf_snapshot_timed", "")),
								CStringGetTextDatum(qualified_call(nsp, "folio_perf_snapshot", "text"))},
								NULL, true, 1);
	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "SPI_execute_with_args failed: error code %d", ret);
	if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull)))
		sql = psprintf("SELECT %s", qualified_call(nsp, "folio_perf_snapshot_timed", ""));
	else if (DatumGetBool(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull)))
		sql = psprintf("SELECT %s", qualified_call(nsp, "folio_perf_snapshot", "'timed'"));

	if (sql == NULL)
	{
		if (!logged_missing)
			ereport(LOG,
					(errmsg("function folio_perf_snapshot(text) does not exist in schema \"%s\", timed snapshots are skipped", nsp),
					 errhint("Update the extension with ALTER EXTENSION folio_perf UPDATE, or set folio_perf.snapshot_interval to 0.")));
		logged_missing = true;
		SPI_finish();
		return;
	}
	logged_missing = false;

	/*
	 * A session taking a snapshot may hold the snapshot function's lock
	 * while it waits for this worker to flush: do not wait long for it, the
	 * snapshot is retried soon.
	 */
	ret = SPI_execute("SET LOCAL lock_timeout = '1s'", false, 0);
	if (ret != SPI_OK_UTILITY)
		elog(ERROR, "SPI_execute failed: error code %d", ret);
	ret = SPI_execute(sql, false, 0);
	if (ret < 0)
		elog(ERROR, "SPI_execute failed: error code %d", ret);
	SPI_finish();
	*taken = true;
}

/*
 * Take a timed snapshot.  Returns false if it failed (and should be
 * retried soon).
 */
static bool
worker_timed_snapshot(void)
{
	FPerfSamplerShared *s = fperf_sampler;
	bool		taken = false;
	bool		ok;
	uint64		req = pg_atomic_read_u64(&s->flush_requested);

	if (is_standby)
		return true;
	ok = run_in_xact("timed snapshot", snapshot_cb, &taken, &s->snapshot_errors);
	if (ok && taken)
	{
		LWLockAcquire(s->lock, LW_EXCLUSIVE);
		s->snapshots++;
		s->last_snapshot_at = GetCurrentTimestamp();
		LWLockRelease(s->lock);
	}
	/* requests made before the snapshot were served by its flush */
	if (ok)
		ack_flush_requests(req);
	return ok;
}

static void
purge_cb(void *arg)
{
	int			ret;

	if (!storage_ready())
		return;
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute_with_args("DELETE FROM folio_perf_data.sample_interval"
								" WHERE ended_at < pg_catalog.now() - $1 * interval '1 minute'",
								1, (Oid[]) {INT4OID},
								(Datum[]) {Int32GetDatum(fperf_retention_min)},
								NULL, false, 0);
	if (ret != SPI_OK_DELETE)
		elog(ERROR, "SPI_execute_with_args failed: error code %d", ret);
	if (SPI_processed > 0)
		ereport(DEBUG1,
				(errmsg_internal("sampler deleted " UINT64_FORMAT " intervals older than %d minutes",
								 (uint64) SPI_processed, fperf_retention_min)));
	SPI_finish();
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
 * Entry point of the sampler worker.
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
	HASHCTL		ctl;
	char		database[NAMEDATALEN];

	fperf_in_sampler_worker = true;
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, SignalHandlerForShutdownRequest);
	BackgroundWorkerUnblockSignals();

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

	strlcpy(database, fperf_database ? fperf_database : "postgres", NAMEDATALEN);
	BackgroundWorkerInitializeConnection(database, NULL, 0);
	pgstat_report_appname("folio_perf sampler");

	/*
	 * The sampler's own statements (its inserts, timed snapshots) are not
	 * part of the workload it observes: keep them out of pg_stat_statements
	 * and out of the relation store.
	 */
	SetConfigOption("pg_stat_statements.track", "none", PGC_SUSET, PGC_S_OVERRIDE);
	SetConfigOption("folio_perf.track_relations", "off", PGC_SUSET, PGC_S_OVERRIDE);

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

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(int);
	ctl.entrysize = sizeof(FPerfCpuEntry);
	ctl.hcxt = WorkerContext;
	cpu_hash = hash_create("folio_perf process CPU", 1024, &ctl,
						   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	series_cache_reset();
	fperf_rsampler_init(WorkerContext);

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
		CHECK_FOR_INTERRUPTS();

		if (ConfigReloadPending)
		{
			int			old_interval = fperf_sample_interval_ms;
			int			old_snapshot = fperf_snapshot_interval_s;
			int			old_flush = fperf_flush_interval_s;

			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			now = GetCurrentTimestamp();
			if (strcmp(database, fperf_database ? fperf_database : "") != 0)
			{
				ereport(LOG,
						(errmsg("folio_perf.database changed from \"%s\" to \"%s\", restarting the sampler",
								database, fperf_database)));
				worker_flush("shutdown");
				proc_exit(1);
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

	/* Shutdown: store what the ring holds, then exit (restart if not shutting down). */
	MemoryContextSwitchTo(LoopContext);
	worker_flush("shutdown");
	fperf_rsampler_shutdown();
	proc_exit(1);
}
