/*-------------------------------------------------------------------------
 *
 * metrics.c
 *		Live metrics per tenant and module for scrapers (folio_perf_metrics).
 *
 * Prometheus exporters read the database every 15 s or so and want the
 * current value of a gauge (connections, active sessions) and monotonic
 * counters (CPU seconds, active-session seconds) from which rate() gives
 * the average over any range.  The sampler already sees every backend at
 * every tick; this file keeps, in shared memory of its own:
 *
 *	- a copy of the newest tick (its header and process records), so that a
 *	  reader needs neither the ring nor the storage tables;
 *	- counters per attribution key (database, role, the schemas of the
 *	  statement's relations as the parse hook recorded them, and
 *	  application_name): CPU milliseconds and active-session milliseconds,
 *	  added by the worker at every tick, and which connection states and
 *	  wait classes the key's sessions were seen in, so that its gauges read
 *	  0 while it is idle instead of vanishing (a Prometheus series that
 *	  disappears is not a zero).  When the table is full
 *	  (folio_perf.metrics_keys), a tenth of it is evicted: the keys whose
 *	  sessions were seen longest ago (a key seen at this tick never is);
 *	  their amounts move to one overflow key, attributed to nothing, so
 *	  that every total stays monotonic, and they are counted
 *	  (metrics_keys_evicted_total).  So a login that cycles
 *	  application_name or roles evicts keys of sessions that are gone, and
 *	  a new tenant's sessions get keys of their own at once; a tick's
 *	  amounts that still find no room go to the overflow key too, counted
 *	  (metrics_keys_overflowed_total).  Counters start at zero when the
 *	  server starts, as Prometheus expects of counters.
 *
 * Attribution happens when the metrics are read, in the reader's database
 * and transaction (schema and role names need the catalogs), by the rule
 * of every other folio_perf output for sessions (attribution.c): relations,
 * then role, then application_name.  Schemas of other databases cannot be named
 * from the reader's; their keys are attributed by role and application_name.
 *
 * Locking rule.  One LWLock (tranche "folio_perf_metrics") protects the
 * tick copy and the counter table.  Only the sampler worker writes, holding
 * it exclusively for a memcpy and the counter updates of one tick; the
 * relation store is consulted before the lock is taken.  Readers hold it
 * shared while they copy, and attribute and build tuples after releasing
 * it.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/metrics.c
 *
 *-------------------------------------------------------------------------
 */
#include "metrics.h"
#include "attribution.h"

#include "access/twophase.h"
#include "catalog/pg_authid.h"
#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "storage/lwlock.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(folio_perf_metrics_current);

/* Name of the LWLock tranche of this file. */
#define FPERF_METRICS_TRANCHE "folio_perf_metrics"

/* Schemas remembered per key: the DML target, then FPERF_MAX_NSP more. */
#define FPERF_METRICS_NSP (FPERF_MAX_NSP + 1)

int			fperf_metrics_keys = 8192;

/* What a counter is kept per. */
typedef struct FPerfMetricsKey
{
	Oid			dbid;
	Oid			userid;
	Oid			nsp[FPERF_METRICS_NSP]; /* InvalidOid-padded, target first */
	char		appname[NAMEDATALEN];
} FPerfMetricsKey;

typedef struct FPerfMetricsEntry
{
	FPerfMetricsKey key;		/* hash key, must be first */
	uint64		cpu_ms;			/* CPU time of the key's backends */
	uint64		active_ms;		/* time its backends spent active */
	uint32		states_seen;	/* bit s: a client connection in BackendState s */
	uint32		waits_seen;		/* bit 0: active on CPU; bit c: waiting on wait
								 * class c (wait_event_info >> 24) */
	uint64		last_tick;		/* the tick its sessions were last seen at */
} FPerfMetricsEntry;

typedef struct FPerfMetricsShared
{
	LWLock	   *lock;			/* see "Locking rule" above */
	FPerfTickRec tick;			/* the newest tick; tick.tick == 0: none */
	int32		nproc;			/* process records in procs[] */
	int32		maxproc;		/* room in procs[] */
	uint64		procs_truncated;	/* records of ticks that did not fit */
	uint64		keys_overflowed;	/* tick amounts that went to overflow */
	uint64		keys_evicted;	/* keys evicted to make room */
	FPerfMetricsEntry overflow; /* amounts of keys the table had no room for */
	FPerfProcRec procs[FLEXIBLE_ARRAY_MEMBER];
} FPerfMetricsShared;

static FPerfMetricsShared *mshared = NULL;
static HTAB *mhash = NULL;

/* Room for one record per process the server can have. */
static int
metrics_maxproc(void)
{
	return MaxBackends + NUM_AUXILIARY_PROCS + max_prepared_xacts + 8;
}

/*
 * Define folio_perf.metrics_keys.  Called from _PG_init while preloading.
 */
void
fperf_metrics_define_postmaster_gucs(void)
{
	DefineCustomIntVariable("folio_perf.metrics_keys",
							"Number of attribution keys folio_perf_metrics keeps counters for.",
							"A key is a database, role, statement schemas and "
							"application_name. Amounts of keys beyond this are "
							"counted unattributed.",
							&fperf_metrics_keys,
							8192,
							64,
							1000000,
							PGC_POSTMASTER,
							0,
							NULL, NULL, NULL);
}

/*
 * Shared memory needed.  Valid in the shmem request hook (MaxBackends set).
 */
Size
fperf_metrics_shmem_size(void)
{
	Size		size;

	size = add_size(offsetof(FPerfMetricsShared, procs),
					mul_size(metrics_maxproc(), sizeof(FPerfProcRec)));
	size = MAXALIGN(size);
	size = add_size(size, hash_estimate_size(fperf_metrics_keys,
											 sizeof(FPerfMetricsEntry)));
	return size;
}

/*
 * Ask for the LWLock of this file.  Called from the shmem request hook.
 */
void
fperf_metrics_shmem_request(void)
{
	RequestNamedLWLockTranche(FPERF_METRICS_TRANCHE, 1);
}

/*
 * Create or attach.  Caller holds AddinShmemInitLock.
 */
void
fperf_metrics_shmem_init(void)
{
	bool		found;
	HASHCTL		info;
	int			maxproc = metrics_maxproc();

	mshared = ShmemInitStruct("folio_perf metrics",
							  add_size(offsetof(FPerfMetricsShared, procs),
									   mul_size(maxproc, sizeof(FPerfProcRec))),
							  &found);
	if (!found)
	{
		memset(mshared, 0, offsetof(FPerfMetricsShared, procs));
		mshared->lock = &(GetNamedLWLockTranche(FPERF_METRICS_TRANCHE))[0].lock;
		mshared->maxproc = maxproc;
	}

	memset(&info, 0, sizeof(info));
	info.keysize = sizeof(FPerfMetricsKey);
	info.entrysize = sizeof(FPerfMetricsEntry);
	mhash = ShmemInitHash("folio_perf metrics hash",
						  fperf_metrics_keys, fperf_metrics_keys,
						  &info, HASH_ELEM | HASH_BLOBS | HASH_FIXED_SIZE);
}

/* Is this record a client connection, and is it active? (as the sampler) */
static inline bool
rec_is_client(const FPerfProcRec *p, int worker_pid)
{
	return p->backend_type == B_BACKEND && p->pid != worker_pid &&
		p->state != FPERF_PROC_ENDED;
}

static inline bool
rec_is_active(const FPerfProcRec *p, int worker_pid)
{
	return p->pid != worker_pid &&
		(p->state == STATE_RUNNING || p->state == STATE_FASTPATH);
}

/*
 * The bit of waits_seen for an active session's wait_event_info: 0 when it
 * is not waiting (on CPU), else its wait class (the top byte, 1 to 31).
 */
static inline uint32
wait_bit(uint32 wait_event_info)
{
	uint32		cls = wait_event_info >> 24;

	return (cls == 0 || cls > 31) ? 1U : (1U << cls);
}

/* Fill a key from a process record, with its statement's schemas. */
static void
key_from_rec(FPerfMetricsKey *k, const FPerfProcRec *p)
{
	memset(k, 0, sizeof(*k));
	k->dbid = p->dbid;
	k->userid = p->userid;
	strlcpy(k->appname, p->appname, sizeof(k->appname));
	if (p->queryid != 0)
		fperf_relstore_lookup(p->dbid, p->queryid, k->nsp, FPERF_METRICS_NSP);
}

static int
uint64_cmp(const void *a, const void *b)
{
	uint64		x = *(const uint64 *) a;
	uint64		y = *(const uint64 *) b;

	return x < y ? -1 : (x > y ? 1 : 0);
}

/*
 * The key table is full: evict the tenth of it seen longest ago (never a
 * key seen at tick now), moving its amounts to the overflow key.  Under
 * the exclusive lock.
 */
static void
metrics_evict(uint64 now)
{
	HASH_SEQ_STATUS seq;
	FPerfMetricsEntry *e;
	uint64	   *ticks;
	long		n = 0;
	long		cap = hash_get_num_entries(mhash);
	long		quota = Max(1, fperf_metrics_keys / 10);
	long		removed = 0;
	uint64		cut;

	if (cap <= 0)
		return;
	ticks = palloc_extended(sizeof(uint64) * cap, MCXT_ALLOC_HUGE | MCXT_ALLOC_NO_OOM);
	if (ticks == NULL)
		return;
	hash_seq_init(&seq, mhash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (n >= cap)
		{
			hash_seq_term(&seq);
			break;
		}
		ticks[n++] = e->last_tick;
	}
	qsort(ticks, n, sizeof(uint64), uint64_cmp);
	cut = ticks[Min(quota, n) - 1];
	pfree(ticks);
	if (cut >= now)
		return;
	hash_seq_init(&seq, mhash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (e->last_tick > cut || removed >= quota)
			continue;
		mshared->overflow.cpu_ms += e->cpu_ms;
		mshared->overflow.active_ms += e->active_ms;
		hash_search(mhash, &e->key, HASH_REMOVE, NULL);
		removed++;
	}
	mshared->keys_evicted += (uint64) removed;
}

/*
 * Account one tick: keep a copy of it and add its process records' CPU and
 * active time to their keys' counters.  recs[0] is the tick header.  Called
 * by the sampler worker after it appended the tick to the ring; never
 * throws (a full table counts as overflow).
 */
void
fperf_metrics_tick(const FPerfRecord *recs, int nrecs)
{
	const FPerfTickRec *hdr;
	FPerfMetricsKey *keys;
	int32	   *cpu;
	int32	   *act;
	uint32	   *seen_states;
	uint32	   *seen_waits;
	int			nkeys = 0;
	int			nproc;
	int			nlive;
	int			i;

	if (mshared == NULL || nrecs < 1 || recs[0].kind != FPERF_REC_TICK)
		return;
	hdr = &recs[0].u.tick;

	/* Keys of the records that used CPU or were active, outside the lock. */
	keys = palloc(sizeof(FPerfMetricsKey) * nrecs);
	cpu = palloc(sizeof(int32) * nrecs);
	act = palloc(sizeof(int32) * nrecs);
	seen_states = palloc(sizeof(uint32) * nrecs);
	seen_waits = palloc(sizeof(uint32) * nrecs);
	for (i = 1; i < nrecs; i++)
	{
		const FPerfProcRec *p = &recs[i].u.proc;
		bool		client = rec_is_client(p, MyProcPid);
		bool		active = rec_is_active(p, MyProcPid);
		int32		c = (hdr->host_ncpu > 0 && p->cpu_ms > 0) ? p->cpu_ms : 0;
		int32		a = active ? hdr->interval_ms : 0;

		if (recs[i].kind != FPERF_REC_PROC || (c == 0 && !client && !active))
			continue;
		key_from_rec(&keys[nkeys], p);
		cpu[nkeys] = c;
		act[nkeys] = a;
		seen_states[nkeys] = (client && p->state < 32) ? (1U << p->state) : 0;
		seen_waits[nkeys] = active ? wait_bit(p->wait_event_info) : 0;
		nkeys++;
	}

	/* the live processes for the gauges (the ended sessions come last) */
	nlive = nrecs - 1;
	while (nlive > 0 && recs[nlive].u.proc.state == FPERF_PROC_ENDED)
		nlive--;
	nproc = Min(nlive, mshared->maxproc);

	LWLockAcquire(mshared->lock, LW_EXCLUSIVE);
	mshared->tick = *hdr;
	mshared->nproc = nproc;
	for (i = 0; i < nproc; i++)
		mshared->procs[i] = recs[i + 1].u.proc;
	mshared->procs_truncated += (uint64) (nlive - nproc);
	for (i = 0; i < nkeys; i++)
	{
		FPerfMetricsEntry *e;
		bool		found;

		e = hash_search(mhash, &keys[i], HASH_ENTER_NULL, &found);
		if (e == NULL)
		{
			metrics_evict(hdr->tick);
			e = hash_search(mhash, &keys[i], HASH_ENTER_NULL, &found);
		}
		if (e == NULL)
		{
			e = &mshared->overflow;
			mshared->keys_overflowed++;
		}
		else if (!found)
		{
			e->cpu_ms = 0;
			e->active_ms = 0;
			e->states_seen = 0;
			e->waits_seen = 0;
		}
		e->cpu_ms += (uint64) cpu[i];
		e->active_ms += (uint64) act[i];
		e->states_seen |= seen_states[i];
		e->waits_seen |= seen_waits[i];
		if (e != &mshared->overflow)
			e->last_tick = hdr->tick;
	}
	LWLockRelease(mshared->lock);

	pfree(keys);
	pfree(cpu);
	pfree(act);
	pfree(seen_states);
	pfree(seen_waits);
}

/* ---- reading ---- */

/* A key's attribution, cached per call. */
typedef struct MetricsAttr
{
	char	   *tenant;
	char	   *module;
	char	   *database;
} MetricsAttr;

/*
 * Attribute a key by the one rule (attribution.c) with what a session
 * has: its statement's schemas (named only in this database), its role,
 * its application_name.
 */
static void
attribute_key(const FPerfMetricsKey *k, MetricsAttr *out)
{
	FPerfAttrEvidence ev;
	FPerfAttribution a;

	out->tenant = NULL;
	out->module = NULL;
	out->database = OidIsValid(k->dbid) ? get_database_name(k->dbid) : NULL;

	memset(&ev, 0, sizeof(ev));
	(void) fperf_attr_set_schemas(&ev, k->dbid, k->nsp, FPERF_METRICS_NSP);
	ev.rolname = OidIsValid(k->userid) ? GetUserNameFromId(k->userid, true) : NULL;
	ev.appname = k->appname;
	fperf_attribute(&ev, &a);
	if (a.tenant[0] != '\0')
		out->tenant = pstrdup(a.tenant);
	if (a.module[0] != '\0')
		out->module = pstrdup(a.module);
}

typedef struct MetricsAttrEntry
{
	FPerfMetricsKey key;		/* hash key, must be first */
	MetricsAttr attr;
} MetricsAttrEntry;

/* Memoised attribute_key over one call. */
static MetricsAttr *
attr_cached(HTAB *cache, const FPerfMetricsKey *k)
{
	bool		found;
	MetricsAttrEntry *e;

	e = hash_search(cache, k, HASH_ENTER, &found);
	if (!found)
		attribute_key(k, &e->attr);
	return &e->attr;
}

/* One output row's aggregation slot. */
typedef struct MetricsRowKey
{
	char		metric[32];
	char		tenant[NAMEDATALEN];
	char		module[NAMEDATALEN];
	char		database[NAMEDATALEN];
	char		state[32];
	char		wait_event_type[32];
	bool		has_tenant,
				has_module,
				has_database,
				has_state,
				has_wait;
} MetricsRowKey;

typedef struct MetricsRowEntry
{
	MetricsRowKey key;
	double		value;
} MetricsRowEntry;

static void
row_add(HTAB *rows, const char *metric, const MetricsAttr *a,
		const char *state, const char *wait_type, double value)
{
	MetricsRowKey k;
	MetricsRowEntry *e;
	bool		found;

	memset(&k, 0, sizeof(k));
	strlcpy(k.metric, metric, sizeof(k.metric));
	if (a != NULL && a->tenant)
	{
		k.has_tenant = true;
		strlcpy(k.tenant, a->tenant, sizeof(k.tenant));
	}
	if (a != NULL && a->module)
	{
		k.has_module = true;
		strlcpy(k.module, a->module, sizeof(k.module));
	}
	if (a != NULL && a->database)
	{
		k.has_database = true;
		strlcpy(k.database, a->database, sizeof(k.database));
	}
	if (state)
	{
		k.has_state = true;
		strlcpy(k.state, state, sizeof(k.state));
	}
	if (wait_type)
	{
		k.has_wait = true;
		strlcpy(k.wait_event_type, wait_type, sizeof(k.wait_event_type));
	}
	e = hash_search(rows, &k, HASH_ENTER, &found);
	if (!found)
		e->value = 0;
	e->value += value;
}

/*
 * Zero gauges for every connection state and wait class a key's sessions
 * were seen in: added to the newest tick's figures (row_add sums), they
 * keep a series at 0 instead of letting it vanish.
 */
static void
gauges_seen(HTAB *rows, const MetricsAttr *a, const FPerfMetricsEntry *e)
{
	int			b;
	const char *wtype;

	for (b = 0; b < 32; b++)
	{
		if (e->states_seen & (1U << b))
			row_add(rows, "connections", a,
					fperf_state_name((BackendState) b), NULL, 0);
		if (e->waits_seen & (1U << b))
		{
			wtype = b == 0 ? NULL : pgstat_get_wait_event_type((uint32) b << 24);
			row_add(rows, "active_sessions", a, NULL, wtype ? wtype : "CPU", 0);
		}
	}
}

#define FPERF_METRICS_COLS 8

/*
 * Is this the scraper itself?  This session, and every session of the same
 * role with the same application_name: an exporter keeps a few connections
 * of its own, and none of them is load of the application.
 */
static bool
is_scraper(int pid, Oid userid, const char *appname)
{
	if (pid == MyProcPid)
		return true;
	return userid == GetUserId() &&
		strcmp(appname, application_name ? application_name : "") == 0;
}

static void
put_row(ReturnSetInfo *rsinfo, const char *metric, const char *kind,
		const MetricsRowKey *k, double value)
{
	Datum		values[FPERF_METRICS_COLS];
	bool		nulls[FPERF_METRICS_COLS];

	memset(nulls, 0, sizeof(nulls));
	values[0] = CStringGetTextDatum(metric);
	values[1] = CStringGetTextDatum(kind);
	nulls[2] = !(k && k->has_tenant);
	values[2] = nulls[2] ? (Datum) 0 : CStringGetTextDatum(k->tenant);
	nulls[3] = !(k && k->has_module);
	values[3] = nulls[3] ? (Datum) 0 : CStringGetTextDatum(k->module);
	nulls[4] = !(k && k->has_database);
	values[4] = nulls[4] ? (Datum) 0 : CStringGetTextDatum(k->database);
	nulls[5] = !(k && k->has_state);
	values[5] = nulls[5] ? (Datum) 0 : CStringGetTextDatum(k->state);
	nulls[6] = !(k && k->has_wait);
	values[6] = nulls[6] ? (Datum) 0 : CStringGetTextDatum(k->wait_event_type);
	values[7] = Float8GetDatum(value);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * folio_perf_metrics_current() - the sampler's current view per tenant and
 * module: gauges of the newest tick, counters since server start, and the
 * sampler's health.  Rows (metric, kind, tenant, module, database, state,
 * wait_event_type, value).  The scraper's own sessions (see is_scraper) are
 * left out: they are not load of the application.
 */
Datum
folio_perf_metrics_current(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	FPerfTickRec tick;
	FPerfProcRec *procs;
	FPerfMetricsEntry *counters;
	FPerfMetricsEntry overflow;
	HASH_SEQ_STATUS seq;
	FPerfMetricsEntry *e;
	HASHCTL		ctl;
	HTAB	   *cache;
	HTAB	   *rows;
	MetricsRowEntry *r;
	int			nproc;
	long		ncounters = 0;
	long		maxcounters;
	uint64		procs_truncated;
	uint64		keys_overflowed;
	uint64		keys_evicted;
	int			worker_pid = 0;
	int			state = FPERF_STATE_STOPPED;
	uint64		ticks = 0,
				ticks_dropped = 0;
	TimestampTz last_sample_at = 0;
	int			i;
	long		l;

	fperf_init_srf(fcinfo);
	if (rsinfo->setDesc->natts != FPERF_METRICS_COLS)
		elog(ERROR, "incorrect number of output columns in folio_perf_metrics_current");

	/* Not preloaded: the one row that says so. */
	if (mshared == NULL || fperf_sampler == NULL)
	{
		put_row(rsinfo, "sampler_up", "gauge", NULL, 0);
		return (Datum) 0;
	}

	procs = palloc(sizeof(FPerfProcRec) * mshared->maxproc);
	maxcounters = fperf_metrics_keys;
	counters = palloc_extended(sizeof(FPerfMetricsEntry) * maxcounters,
							   MCXT_ALLOC_HUGE);

	LWLockAcquire(mshared->lock, LW_SHARED);
	tick = mshared->tick;
	nproc = mshared->nproc;
	memcpy(procs, mshared->procs, sizeof(FPerfProcRec) * nproc);
	hash_seq_init(&seq, mhash);
	while ((e = hash_seq_search(&seq)) != NULL)
	{
		if (ncounters >= maxcounters)
		{
			hash_seq_term(&seq);
			break;
		}
		counters[ncounters++] = *e;
	}
	overflow = mshared->overflow;
	procs_truncated = mshared->procs_truncated;
	keys_overflowed = mshared->keys_overflowed;
	keys_evicted = mshared->keys_evicted;
	LWLockRelease(mshared->lock);

	LWLockAcquire(fperf_sampler->lock, LW_SHARED);
	worker_pid = fperf_sampler->pid;
	state = fperf_sampler->state;
	ticks = fperf_sampler->ticks;
	ticks_dropped = fperf_sampler->ticks_dropped;
	last_sample_at = fperf_sampler->last_sample_at;
	LWLockRelease(fperf_sampler->lock);

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(FPerfMetricsKey);
	ctl.entrysize = sizeof(MetricsAttrEntry);
	ctl.hcxt = CurrentMemoryContext;
	cache = hash_create("folio_perf metrics attribution", 256, &ctl,
						HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(MetricsRowKey);
	ctl.entrysize = sizeof(MetricsRowEntry);
	ctl.hcxt = CurrentMemoryContext;
	rows = hash_create("folio_perf metrics rows", 256, &ctl,
					   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);

	/* Gauges of the newest tick, if the sampler has taken one. */
	if (tick.tick != 0)
	{
		for (i = 0; i < nproc; i++)
		{
			const FPerfProcRec *p = &procs[i];
			FPerfMetricsKey k;
			MetricsAttr *a;
			bool		client = rec_is_client(p, worker_pid);
			bool		active = rec_is_active(p, worker_pid);
			const char *wtype;

			CHECK_FOR_INTERRUPTS();
			if ((!client && !active) || is_scraper(p->pid, p->userid, p->appname))
				continue;
			key_from_rec(&k, p);
			a = attr_cached(cache, &k);
			if (client)
				row_add(rows, "connections", a,
						fperf_state_name((BackendState) p->state), NULL, 1);
			if (active)
			{
				wtype = pgstat_get_wait_event_type(p->wait_event_info);
				row_add(rows, "active_sessions", a, NULL,
						wtype ? wtype : "CPU", 1);
			}
		}
	}

	/* Counters since server start. */
	for (l = 0; l < ncounters; l++)
	{
		MetricsAttr *a;

		CHECK_FOR_INTERRUPTS();
		if (is_scraper(0, counters[l].key.userid, counters[l].key.appname))
			continue;
		a = attr_cached(cache, &counters[l].key);
		row_add(rows, "cpu_seconds_total", a, NULL, NULL,
				counters[l].cpu_ms / 1000.0);
		row_add(rows, "active_seconds_total", a, NULL, NULL,
				counters[l].active_ms / 1000.0);
		/* the gauges of what the key was seen in read 0 while it is idle */
		if (tick.tick != 0)
			gauges_seen(rows, a, &counters[l]);
	}
	if (overflow.cpu_ms > 0 || overflow.active_ms > 0)
	{
		row_add(rows, "cpu_seconds_total", NULL, NULL, NULL,
				overflow.cpu_ms / 1000.0);
		row_add(rows, "active_seconds_total", NULL, NULL, NULL,
				overflow.active_ms / 1000.0);
	}

	hash_seq_init(&seq, rows);
	while ((r = hash_seq_search(&seq)) != NULL)
		put_row(rsinfo, r->key.metric,
				strcmp(r->key.metric + strlen(r->key.metric) - 6, "_total") == 0
				? "counter" : "gauge",
				&r->key, r->value);

	/* The sampler's health. */
	put_row(rsinfo, "sampler_up", "gauge", NULL,
			(state == FPERF_STATE_SAMPLING || state == FPERF_STATE_STANDBY) ? 1 : 0);
	put_row(rsinfo, "sampler_ticks_total", "counter", NULL, (double) ticks);
	put_row(rsinfo, "sampler_ticks_dropped_total", "counter", NULL,
			(double) ticks_dropped);
	put_row(rsinfo, "metrics_keys_overflowed_total", "counter", NULL,
			(double) keys_overflowed);
	put_row(rsinfo, "metrics_keys_evicted_total", "counter", NULL,
			(double) keys_evicted);
	put_row(rsinfo, "metrics_procs_truncated_total", "counter", NULL,
			(double) procs_truncated);
	if (last_sample_at != 0)
		put_row(rsinfo, "sampler_last_tick_age_seconds", "gauge", NULL,
				(double) (GetCurrentTimestamp() - last_sample_at) / 1000000.0);
	if (tick.tick != 0)
	{
		put_row(rsinfo, "sampler_interval_seconds", "gauge", NULL,
				tick.interval_ms / 1000.0);
		if (tick.host_ncpu > 0)
			put_row(rsinfo, "host_cpus", "gauge", NULL, tick.host_ncpu);
	}
	put_row(rsinfo, "max_connections", "gauge", NULL, MaxConnections);
	return (Datum) 0;
}
