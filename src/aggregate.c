/*-------------------------------------------------------------------------
 *
 * aggregate.c
 *		The sampler's aggregation: observations of sessions into the
 *		histograms of one interval.
 *
 * At every flush the worker turns what was sampled since the previous one
 * into intervals: the local ring's ticks (mapped here to observations, the
 * oids resolved to names through the catalog caches) and each remote
 * target's buffered ticks (observations already, rsampler.c).  Both go
 * through the same accumulator:
 *
 *	- every tick counts each session in its series: connections (client
 *	  backends) and load (active sessions) by database, state, role,
 *	  application_name, tenant, module, wait event, statement and backend
 *	  type, and CPU milliseconds by the same dimensions where the probe could
 *	  read them;
 *	- at the end of a tick, every series counted in it adds its count to its
 *	  histogram of per-tick values (value -> number of ticks); a tick where a
 *	  series had no session counts as 0 and is not stored.
 *
 * Histograms of consecutive intervals merge exactly, so a window's average,
 * maximum and 95th percentile per series are exact, and a series that does
 * not change (an idle connection pool) takes one entry per interval.
 *
 * Attribution.  A session's tenant and module follow the one rule of
 * attribution.c with what a session has: the schemas of its statement's
 * relations (local sessions whose query id the relation store knows, read
 * from shared memory directly), else its role name, else its
 * application_name (obs_attribute(), cached per flush).  Besides the tenant
 * and module series, connections are counted per (tenant, module,
 * evidence) in the "attribution" series.
 *
 * No SQL runs here; mapping ring records and attributing need a
 * transaction for the catalog lookups of role, database and schema names.  Everything is allocated in
 * the memory context of the flush (fperf_agg_begin_flush()) or the current
 * one, and freed when the worker resets it.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/aggregate.c
 *
 *-------------------------------------------------------------------------
 */
#include "aggregate.h"
#include "attribution.h"

#include "commands/dbcommands.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "utils/builtins.h"

/* Dimension codes of series keys. */
#define DIM_TOTAL		't'
#define DIM_DATABASE	'd'
#define DIM_STATE		's'
#define DIM_ROLE		'r'
#define DIM_APPNAME		'a'
#define DIM_TENANT		'n'
#define DIM_MODULE		'm'
#define DIM_TENANT_MODULE	'p'
#define DIM_WAIT_TYPE	'w'
#define DIM_WAIT_EVENT	'e'
#define DIM_STATEMENT	'q'
#define DIM_BACKEND		'b'
#define DIM_ATTRIBUTION	'x'
#define DIM_STMT_WAIT	'y'		/* statement x wait event */
#define DIM_LOCK_HOLDER	'h'		/* lock waiter x the module holding it */

typedef struct FPerfCodeName
{
	char		code;
	const char *name;
} FPerfCodeName;

static const FPerfCodeName kind_names[] = {
	{FPERF_KIND_CONN, "connections"},
	{FPERF_KIND_LOAD, "load"},
	{FPERF_KIND_CPU, "cpu"},
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
	{DIM_TENANT_MODULE, "tenant_module"},
	{DIM_WAIT_TYPE, "wait_event_type"},
	{DIM_WAIT_EVENT, "wait_event"},
	{DIM_STATEMENT, "statement"},
	{DIM_BACKEND, "backend_type"},
	{DIM_ATTRIBUTION, "attribution"},
	{DIM_STMT_WAIT, "statement_wait_event"},
	{DIM_LOCK_HOLDER, "lock_holder"},
	{0, NULL}
};

/* Role and database names by oid. */
typedef struct FPerfOidName
{
	Oid			oid;			/* hash key */
	char	   *name;
} FPerfOidName;

/* What a role name says about tenant and module. */
typedef struct FPerfNameSplit
{
	char		name[NAMEDATALEN];	/* hash key */
	char	   *tenant;
	char	   *module;
} FPerfNameSplit;

/* The evidence a session offers: what its attribution is cached by. */
typedef struct FPerfAttrKey
{
	Oid			dbid;			/* this database's, else 0 (no relations) */
	int64		queryid;		/* 0: no relations evidence */
	char		rolname[NAMEDATALEN];
	char		appname[NAMEDATALEN];
} FPerfAttrKey;

typedef struct FPerfAttrEntry
{
	FPerfAttrKey key;			/* hash key, must be first */
	FPerfAttribution attr;
} FPerfAttrEntry;

/* The flush's memory context and name caches (NULL outside a flush). */
static MemoryContext agg_cxt = NULL;
static HTAB *role_hash = NULL;
static HTAB *db_hash = NULL;
static HTAB *split_hash = NULL;
static HTAB *attr_hash = NULL;

/* Observations of the ring tick being read, reused from tick to tick. */
static FPerfObs *ring_obs = NULL;
static int	ring_maxobs = 0;

static HTAB *
make_hash(const char *name, long n, Size keysize, Size entrysize, bool strings)
{
	HASHCTL		ctl;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = keysize;
	ctl.entrysize = entrysize;
	ctl.hcxt = agg_cxt;
	return hash_create(name, n, &ctl,
					   HASH_ELEM | HASH_CONTEXT | (strings ? HASH_STRINGS : HASH_BLOBS));
}

/*
 * Start a flush: the name caches live in cxt until fperf_agg_end_flush()
 * (the caller resets cxt after).
 */
void
fperf_agg_begin_flush(MemoryContext cxt)
{
	agg_cxt = cxt;
	role_hash = make_hash("folio_perf roles", 128, sizeof(Oid), sizeof(FPerfOidName), false);
	db_hash = make_hash("folio_perf databases", 16, sizeof(Oid), sizeof(FPerfOidName), false);
	split_hash = make_hash("folio_perf role attribution", 128, NAMEDATALEN,
						   sizeof(FPerfNameSplit), true);
	attr_hash = make_hash("folio_perf session attribution", 256, sizeof(FPerfAttrKey),
						  sizeof(FPerfAttrEntry), false);
	ring_obs = NULL;
	ring_maxobs = 0;
}

/* End a flush: forget what lived in its context. */
void
fperf_agg_end_flush(void)
{
	agg_cxt = NULL;
	role_hash = db_hash = split_hash = attr_hash = NULL;
	ring_obs = NULL;
	ring_maxobs = 0;
}

/* A role's name: "" for none, its oid when it is gone. */
static const char *
role_name(Oid userid)
{
	bool		found;
	FPerfOidName *r = hash_search(role_hash, &userid, HASH_ENTER, &found);

	if (!found)
	{
		char	   *name = OidIsValid(userid) ? GetUserNameFromId(userid, true) : NULL;

		if (name == NULL && OidIsValid(userid))
			name = psprintf("%u", userid);
		r->name = name ? MemoryContextStrdup(agg_cxt, name) : "";
	}
	return r->name;
}

/* A database's name: "" for none, its oid when it is gone. */
static const char *
db_name(Oid dbid)
{
	bool		found;
	FPerfOidName *d = hash_search(db_hash, &dbid, HASH_ENTER, &found);

	if (!found)
	{
		char	   *name = OidIsValid(dbid) ? get_database_name(dbid) : NULL;

		if (name == NULL && OidIsValid(dbid))
			name = psprintf("%u", dbid);
		d->name = name ? MemoryContextStrdup(agg_cxt, name) : "";
	}
	return d->name;
}

/* What a role name says about tenant and module (cached per flush). */
static const FPerfNameSplit *
role_split(const char *rolname)
{
	char		key[NAMEDATALEN];
	bool		found;
	FPerfNameSplit *r;

	memset(key, 0, sizeof(key));
	strlcpy(key, rolname, sizeof(key));
	r = hash_search(split_hash, key, HASH_ENTER, &found);
	if (!found)
	{
		MemoryContext old = MemoryContextSwitchTo(agg_cxt);

		r->tenant = r->module = NULL;
		if (rolname[0] != '\0')
			(void) fperf_schema_split_text(rolname, &r->tenant, &r->module);
		MemoryContextSwitchTo(old);
	}
	return r;
}

/* Map one process record of the local ring to an observation. */
static void
obs_from_proc(const FPerfProcRec *p, FPerfObs *o)
{
	bool		self = (p->pid == MyProcPid);
	bool		ended = (p->state == FPERF_PROC_ENDED);

	memset(o, 0, sizeof(*o));
	o->dbid = p->dbid;
	o->userid = p->userid;
	o->queryid = (int64) p->queryid;
	o->cpu_ms = p->cpu_ms;
	o->pid = p->pid;
	o->blocker_pid = p->blocker_pid;
	/* an ended session's record is its last CPU only */
	o->client = (p->backend_type == B_BACKEND) && !self && !ended;
	o->active = !self && (p->state == STATE_RUNNING || p->state == STATE_FASTPATH);
	o->datname = db_name(p->dbid);
	o->rolname = role_name(p->userid);
	o->appname = p->appname;
	o->state = fperf_state_name((BackendState) p->state);
	o->btype = GetBackendTypeDesc((BackendType) p->backend_type);
	if (o->active)
	{
		o->wait_type = pgstat_get_wait_event_type(p->wait_event_info);
		o->wait_event = p->wait_event_info == 0 ? NULL :
			pgstat_get_wait_event(p->wait_event_info);
	}
}

/*
 * Map the ring's tick at *pos to observations and move *pos past it.
 * Processes that count in no series (idle non-client processes that used
 * no CPU) are left out.
 */
void
fperf_agg_ring_tick(uint64 *pos, FPerfObsTick *tick)
{
	FPerfSamplerShared *s = fperf_sampler;
	uint64		cap = s->capacity;
	const FPerfRecord *hdrrec = &s->ring[*pos % cap];
	const FPerfTickRec *hdr = &hdrrec->u.tick;
	int			k;

	if (hdrrec->kind != FPERF_REC_TICK)
		elog(ERROR, "sampler ring is corrupt at position " UINT64_FORMAT, *pos);

	if (hdr->nproc > ring_maxobs)
	{
		ring_maxobs = Max(hdr->nproc, Max(64, ring_maxobs * 2));
		ring_obs = MemoryContextAlloc(agg_cxt, sizeof(FPerfObs) * ring_maxobs);
	}
	memset(tick, 0, sizeof(*tick));
	tick->ts = hdr->ts;
	tick->interval_ms = hdr->interval_ms;
	tick->host_ncpu = hdr->host_ncpu;
	tick->host_busy_ms = hdr->host_busy_ms;
	tick->host_total_ms = hdr->host_total_ms;
	tick->obs = ring_obs;
	for (k = 1; k <= hdr->nproc; k++)
	{
		const FPerfProcRec *p = &s->ring[(*pos + k) % cap].u.proc;
		bool		self = (p->pid == MyProcPid);

		/*
		 * The worker itself (this process) is folio_perf's own: not a
		 * connection, no DB load, and its CPU (the sampling, the flushes)
		 * is left out of the CPU series too; the host figures include it.
		 * So is its launcher (a background worker of this library).
		 */
		if (self || (p->backend_type == B_BG_WORKER &&
					 strcmp(p->appname, "folio_perf launcher") == 0))
			continue;
		if (!(p->backend_type == B_BACKEND && !self && p->state != FPERF_PROC_ENDED) &&
			!(!self && (p->state == STATE_RUNNING || p->state == STATE_FASTPATH)) &&
			!(hdr->host_ncpu > 0 && p->cpu_ms > 0))
			continue;
		obs_from_proc(p, &ring_obs[tick->nobs++]);
	}
	*pos += 1 + (uint64) hdr->nproc;
}

/*
 * A session's attribution by the one rule (fperf_attribute()), cached per
 * flush by its evidence: the relations of its statement (sessions of this
 * server in this database only: a remote target's oids name nothing here),
 * its role name and its application_name.
 */
static const FPerfAttribution *
obs_attribute(const FPerfObs *o, int32 target_id)
{
	FPerfAttrKey key;
	FPerfAttrEntry *e;
	bool		found;

	memset(&key, 0, sizeof(key));
	if (target_id == 0 && o->dbid == MyDatabaseId && o->queryid != 0)
	{
		key.dbid = o->dbid;
		key.queryid = o->queryid;
	}
	strlcpy(key.rolname, o->rolname ? o->rolname : "", sizeof(key.rolname));
	strlcpy(key.appname, o->appname ? o->appname : "", sizeof(key.appname));
	e = hash_search(attr_hash, &key, HASH_ENTER, &found);
	if (!found)
	{
		MemoryContext old = MemoryContextSwitchTo(agg_cxt);
		FPerfAttrEvidence ev;

		memset(&ev, 0, sizeof(ev));
		if (key.queryid != 0)
			(void) fperf_attr_set_relations(&ev, key.dbid, (uint64) key.queryid);
		ev.rolname = key.rolname[0] != '\0' ? key.rolname : NULL;
		ev.appname = key.appname;
		fperf_attribute(&ev, &e->attr);
		MemoryContextSwitchTo(old);
	}
	return &e->attr;
}

/* Start accumulating an interval of a server (target_id 0: this one). */
FPerfInterval *
fperf_interval_begin(int32 target_id)
{
	FPerfInterval *iv = palloc0(sizeof(FPerfInterval));

	iv->target_id = target_id;
	iv->maxticks = 64;
	iv->tick_ms = palloc(sizeof(int32) * iv->maxticks);
	iv->tick_conns = palloc(sizeof(int32) * iv->maxticks);
	iv->tick_active = palloc(sizeof(int32) * iv->maxticks);
	iv->series = make_hash("folio_perf aggregation", 512, FPERF_KEYLEN,
						   sizeof(FPerfSeries), true);
	return iv;
}

/*
 * Count one session (or, for FPERF_KIND_CPU, find the series to add CPU to)
 * in series (kind, dim, text) for the current tick.  tenant/module/by
 * describe a series seen for the first time.
 */
static FPerfSeries *
series_touch(FPerfInterval *iv, char kind, char dim, const char *text,
			 const char *tenant, const char *module, const char *by)
{
	char		key[FPERF_KEYLEN];
	int			tick = iv->nticks + 1;
	bool		found;
	FPerfSeries *a;

	memset(key, 0, sizeof(key));
	key[0] = kind;
	key[1] = dim;
	strlcpy(key + 2, text, FPERF_KEYLEN - 2);
	a = hash_search(iv->series, key, HASH_ENTER, &found);
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
	if (kind == FPERF_KIND_CPU)
		return a;
	if (a->cur_tick != tick)
	{
		a->cur_tick = tick;
		a->cur = 0;
		if (iv->ntouched == iv->maxtouched)
		{
			iv->maxtouched = Max(64, iv->maxtouched * 2);
			iv->touched = iv->touched ?
				repalloc(iv->touched, sizeof(FPerfSeries *) * iv->maxtouched) :
				palloc(sizeof(FPerfSeries *) * iv->maxtouched);
		}
		iv->touched[iv->ntouched++] = a;
	}
	a->cur++;
	return a;
}

/* Close a tick: add every touched series' count to its histogram. */
static void
series_end_tick(FPerfInterval *iv)
{
	int			i;

	for (i = 0; i < iv->ntouched; i++)
	{
		FPerfSeries *a = iv->touched[i];
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
	iv->ntouched = 0;
}

/* Count one observation of the current tick in its series. */
static void
obs_count(FPerfInterval *iv, const FPerfObs *o, bool cpu_ok, int32 *conns,
		  int32 *active)
{
	const FPerfNameSplit *role;
	char		appmod[NAMEDATALEN];
	const char *appmodp;
	const char *rtenant;
	const char *rmodule;
	const char *rby;
	const FPerfAttribution *attr;
	const char *tenant;
	const char *module;
	const char *by;
	bool		cpu = cpu_ok && o->cpu_ms > 0;

	if (!o->client && !o->active && !cpu)
		return;

	role = role_split(o->rolname);
	rtenant = role->tenant;
	rmodule = role->module;
	rby = rmodule ? "role" : NULL;
	appmodp = fperf_appname_module(o->appname, strlen(o->appname),
								   appmod, sizeof(appmod)) > 0 ? appmod : NULL;
	attr = obs_attribute(o, iv->target_id);
	tenant = attr->tenant[0] != '\0' ? attr->tenant : NULL;
	module = attr->module[0] != '\0' ? attr->module : NULL;
	by = fperf_attr_by_name(attr->by);

	if (o->client)
	{
		(*conns)++;
		series_touch(iv, FPERF_KIND_CONN, DIM_TOTAL, "all", NULL, NULL, NULL);
		series_touch(iv, FPERF_KIND_CONN, DIM_DATABASE, o->datname, NULL, NULL, NULL);
		series_touch(iv, FPERF_KIND_CONN, DIM_STATE, o->state, NULL, NULL, NULL);
		series_touch(iv, FPERF_KIND_CONN, DIM_ROLE, o->rolname, rtenant, rmodule, rby);
		series_touch(iv, FPERF_KIND_CONN, DIM_APPNAME, o->appname, NULL, appmodp,
					 appmodp ? "application_name" : NULL);
		series_touch(iv, FPERF_KIND_CONN, DIM_TENANT, tenant ? tenant : "",
					 tenant, NULL, NULL);
		series_touch(iv, FPERF_KIND_CONN, DIM_MODULE, module ? module : "",
					 NULL, module, NULL);
		/*
		 * the (tenant, module) pair: "tenant/module", "/module", ""; and
		 * with the evidence: "tenant/module by relations", ...
		 */
		if (module != NULL)
		{
			char		tm[FPERF_KEYLEN];

			snprintf(tm, sizeof(tm), "%s/%s", tenant ? tenant : "", module);
			series_touch(iv, FPERF_KIND_CONN, DIM_TENANT_MODULE, tm, tenant, module, NULL);
			snprintf(tm, sizeof(tm), "%s/%s by %s", tenant ? tenant : "", module, by);
			series_touch(iv, FPERF_KIND_CONN, DIM_ATTRIBUTION, tm, tenant, module, by);
		}
		else
		{
			series_touch(iv, FPERF_KIND_CONN, DIM_TENANT_MODULE, "", NULL, NULL, NULL);
			series_touch(iv, FPERF_KIND_CONN, DIM_ATTRIBUTION, "", NULL, NULL, NULL);
		}
	}

	if (o->active)
	{
		const char *wtype = o->wait_type ? o->wait_type : "CPU";
		char		wbuf[FPERF_KEYLEN];
		char		qbuf[64];
		char		swbuf[FPERF_KEYLEN];
		FPerfSeries *a;

		(*active)++;
		if (o->wait_type == NULL || o->wait_event == NULL)
			strlcpy(wbuf, wtype, sizeof(wbuf));
		else
			snprintf(wbuf, sizeof(wbuf), "%s:%s", wtype, o->wait_event);
		/* a remote target's oids: the key names the target */
		if (iv->target_id == 0)
			snprintf(qbuf, sizeof(qbuf), "%u:%u:" INT64_FORMAT,
					 o->dbid, o->userid, o->queryid);
		else
			snprintf(qbuf, sizeof(qbuf), "t%d:%u:%u:" INT64_FORMAT,
					 iv->target_id, o->dbid, o->userid, o->queryid);

		series_touch(iv, FPERF_KIND_LOAD, DIM_TOTAL, "all", NULL, NULL, NULL);
		series_touch(iv, FPERF_KIND_LOAD, DIM_WAIT_TYPE, wtype, NULL, NULL, NULL);
		series_touch(iv, FPERF_KIND_LOAD, DIM_WAIT_EVENT, wbuf, NULL, NULL, NULL);
		series_touch(iv, FPERF_KIND_LOAD, DIM_DATABASE, o->datname, NULL, NULL, NULL);
		series_touch(iv, FPERF_KIND_LOAD, DIM_ROLE, o->rolname, rtenant, rmodule, rby);
		series_touch(iv, FPERF_KIND_LOAD, DIM_TENANT, tenant ? tenant : "",
					 tenant, NULL, NULL);
		series_touch(iv, FPERF_KIND_LOAD, DIM_MODULE, module ? module : "",
					 NULL, module, NULL);
		series_touch(iv, FPERF_KIND_LOAD, DIM_BACKEND, o->btype, NULL, NULL, NULL);
		a = series_touch(iv, FPERF_KIND_LOAD, DIM_STATEMENT, qbuf, tenant, module, by);
		if (!a->has_ids)
		{
			a->has_ids = true;
			a->dbid = o->dbid;
			a->userid = o->userid;
			a->queryid = o->queryid;
			a->target_id = iv->target_id;
		}
		/* the statement's load by wait event: key "<statement>|<wait event>" */
		snprintf(swbuf, sizeof(swbuf), "%s|%s", qbuf, wbuf);
		a = series_touch(iv, FPERF_KIND_LOAD, DIM_STMT_WAIT, swbuf, tenant, module, by);
		if (!a->has_ids)
		{
			a->has_ids = true;
			a->dbid = o->dbid;
			a->userid = o->userid;
			a->queryid = o->queryid;
			a->target_id = iv->target_id;
		}
	}

	if (cpu)
	{
		series_touch(iv, FPERF_KIND_CPU, DIM_TOTAL, "all",
					 NULL, NULL, NULL)->cpu_ms += o->cpu_ms;
		series_touch(iv, FPERF_KIND_CPU, DIM_DATABASE, o->datname,
					 NULL, NULL, NULL)->cpu_ms += o->cpu_ms;
		series_touch(iv, FPERF_KIND_CPU, DIM_BACKEND, o->btype,
					 NULL, NULL, NULL)->cpu_ms += o->cpu_ms;
		series_touch(iv, FPERF_KIND_CPU, DIM_ROLE, o->rolname,
					 rtenant, rmodule, rby)->cpu_ms += o->cpu_ms;
		series_touch(iv, FPERF_KIND_CPU, DIM_APPNAME, o->appname, NULL, appmodp,
					 appmodp ? "application_name" : NULL)->cpu_ms += o->cpu_ms;
		series_touch(iv, FPERF_KIND_CPU, DIM_TENANT, tenant ? tenant : "",
					 tenant, NULL, NULL)->cpu_ms += o->cpu_ms;
		series_touch(iv, FPERF_KIND_CPU, DIM_MODULE, module ? module : "",
					 NULL, module, NULL)->cpu_ms += o->cpu_ms;
	}
}

/* "tenant/module" of an attribution ("" parts where unknown). */
static void
attr_tm(const FPerfAttribution *a, char *buf, size_t len)
{
	if (a->tenant[0] == '\0' && a->module[0] == '\0')
		buf[0] = '\0';
	else
		snprintf(buf, len, "%s/%s", a->tenant, a->module);
}

/*
 * A session waiting for a heavyweight lock (o->blocker_pid the process it
 * waits for): one session in the series "<waiter>|<holder>" of the
 * lock_holder dimension, each "tenant/module" of its attribution, the
 * holder "?" when it is not among the tick's observations (a process
 * that counts in no series, or one gone by the time the status array was
 * read).  The series carries the waiter's tenant and module.
 */
static void
lock_holder_count(FPerfInterval *iv, const FPerfObsTick *tick, const FPerfObs *o)
{
	const FPerfObs *h = NULL;
	char		waiter[FPERF_KEYLEN / 2 - 1];
	char		holder[FPERF_KEYLEN / 2 - 1];
	char		key[FPERF_KEYLEN];
	char		tenant[NAMEDATALEN];
	char		module[NAMEDATALEN];
	const FPerfAttribution *a;
	const char *by;
	int			j;

	for (j = 0; j < tick->nobs; j++)
		if (tick->obs[j].pid == o->blocker_pid)
		{
			h = &tick->obs[j];
			break;
		}
	a = obs_attribute(o, iv->target_id);
	strlcpy(tenant, a->tenant, sizeof(tenant));
	strlcpy(module, a->module, sizeof(module));
	by = fperf_attr_by_name(a->by);
	attr_tm(a, waiter, sizeof(waiter));
	if (h == NULL)
		strlcpy(holder, "?", sizeof(holder));
	else
		attr_tm(obs_attribute(h, iv->target_id), holder, sizeof(holder));
	snprintf(key, sizeof(key), "%s|%s", waiter, holder);
	series_touch(iv, FPERF_KIND_LOAD, DIM_LOCK_HOLDER, key,
				 tenant[0] ? tenant : NULL, module[0] ? module : NULL,
				 module[0] ? by : NULL);
}

/*
 * Count a tick into the interval; false (nothing counted) when it belongs
 * to the next one.
 */
bool
fperf_interval_add_tick(FPerfInterval *iv, const FPerfObsTick *tick)
{
	bool		cpu_ok = (tick->host_ncpu > 0);
	int32		conns = 0,
				active = 0;
	int64		off_ms;
	int			k;

	if (iv->nticks >= FPERF_MAX_TICKS_PER_INTERVAL)
		return false;
	if (iv->nticks == 0)
	{
		iv->started_at = tick->ts;
		iv->interval_ms = tick->interval_ms;
	}
	off_ms = (tick->ts - iv->started_at) / 1000;
	/* keep offsets in int4 range: start a new interval instead */
	if (off_ms > PG_INT32_MAX / 2)
		return false;
	/* ticks taken at another interval length go to a new interval */
	if (tick->interval_ms != iv->interval_ms)
		return false;

	if (iv->nticks == iv->maxticks)
	{
		iv->maxticks *= 2;
		iv->tick_ms = repalloc(iv->tick_ms, sizeof(int32) * iv->maxticks);
		iv->tick_conns = repalloc(iv->tick_conns, sizeof(int32) * iv->maxticks);
		iv->tick_active = repalloc(iv->tick_active, sizeof(int32) * iv->maxticks);
	}

	for (k = 0; k < tick->nobs; k++)
		obs_count(iv, &tick->obs[k], cpu_ok, &conns, &active);
	for (k = 0; k < tick->nobs; k++)
		if (tick->obs[k].active && tick->obs[k].blocker_pid != 0)
			lock_holder_count(iv, tick, &tick->obs[k]);
	series_end_tick(iv);

	iv->tick_ms[iv->nticks] = (int32) off_ms;
	iv->tick_conns[iv->nticks] = conns;
	iv->tick_active[iv->nticks] = active;
	iv->nticks++;
	iv->ended_at = tick->ts;
	if (cpu_ok)
	{
		iv->cpu_ticks++;
		iv->host_ncpu = Max(iv->host_ncpu, tick->host_ncpu);
		iv->host_busy_ms += tick->host_busy_ms;
		iv->host_total_ms += tick->host_total_ms;
	}
	return true;
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

/* The stored name of a series kind code (sample_series.kind). */
const char *
fperf_series_kind_name(char code)
{
	return code_name(kind_names, code);
}

/* The stored name of a series dimension code (sample_series.dimension). */
const char *
fperf_series_dim_name(char code)
{
	return code_name(dim_names, code);
}

/* The code of a stored kind name; 0 when unknown. */
char
fperf_series_kind_code(const char *name)
{
	return name_code(kind_names, name);
}

/* The code of a stored dimension name; 0 when unknown. */
char
fperf_series_dim_code(const char *name)
{
	return name_code(dim_names, name);
}
