/*-------------------------------------------------------------------------
 *
 * rsampler.c
 *		The sampler's remote targets: one kept libpq connection per enabled
 *		target, pg_stat_activity read at every tick, without ever blocking
 *		the worker's loop.
 *
 * A pure producer: it turns each target's pg_stat_activity into ticks of
 * observations (aggregate.h) and reports each target's state; it runs no
 * SQL locally and calls nothing of the worker.  The worker (worker.c)
 * calls, from its loop:
 *	- fperf_rsampler_tick() at every sample tick: each target whose
 *	  connection is idle gets the tick's query (pg_stat_activity without
 *	  folio_perf's own sessions: the sampler's, and those of snapshots,
 *	  whose statements carry the folio_perf_remote comment), stamped with
 *	  the tick's time;
 *	- fperf_rsampler_poll() at every wake-up: connections being made and
 *	  queries in flight advance as far as their sockets allow (poll() with
 *	  a zero timeout, non-blocking libpq); an answer becomes a buffered tick
 *	  of that target.  While anything is in flight the worker wakes every
 *	  few milliseconds;
 *	- inside its flush transaction: fperf_rsampler_take_ticks() for every
 *	  target's buffered ticks, which the worker aggregates and writes as
 *	  folio_perf_data.sample_interval rows with the target's id (the same
 *	  histograms as local samples), fperf_rsampler_status() for
 *	  folio_perf_data.target_status, and fperf_rsampler_set_targets() with
 *	  the list of enabled targets read again; fperf_rsampler_end_xact()
 *	  then frees what was written, or keeps it for the next flush after an
 *	  abort.  Ticks handed out once are not handed out again in the same
 *	  transaction, so a second flush in it (a timed snapshot) writes each
 *	  tick once.
 *
 * Connections are made by the libpq layer (remote_conn.c), as the
 * capture's: the same rules for targets added by non-superusers at every
 * reconnection, application_name "folio_perf sampler", the target's
 * statement_timeout, and host names resolved off the loop, so that nothing
 * here blocks.
 *
 * Failures.  A target that refuses the connection, does not finish
 * connecting or answering within folio_perf.remote_timeout, drops the
 * connection, or answers a tick with anything but the expected columns is
 * disconnected and retried after 1 s, then 2, 4, ... up to 60 s; the next
 * successful answer resets the delay.  A tick whose query is still in
 * flight at the next tick is not taken (the target is slow); ticks are
 * stamped with the time they were asked for.
 *
 * Memory.  Each target's buffered ticks live in its own context under the
 * worker's long-lived context; strings repeated across sessions and ticks
 * (role, application, wait event names) are stored once per target and
 * flush.  At most FPERF_REMOTE_MAX_TICKS ticks are kept per target when
 * flushes fail; older ones are dropped first.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/rsampler.c
 *
 *-------------------------------------------------------------------------
 */
#include "rsampler.h"
#include "remote.h"

#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/* Reconnection delays, ms. */
#define FPERF_REMOTE_BACKOFF_MIN	1000
#define FPERF_REMOTE_BACKOFF_MAX	60000

/* Most ticks buffered per target between successful flushes. */
#define FPERF_REMOTE_MAX_TICKS		36000

/* Most sessions taken from one answer (more: a broken target). */
#define FPERF_REMOTE_MAX_ROWS		100000

typedef enum FPerfRemoteState
{
	RS_DOWN,					/* not connected; next_attempt says when */
	RS_CONNECTING,
	RS_IDLE,					/* connected, no query in flight */
	RS_BUSY						/* the tick's query in flight */
} FPerfRemoteState;

typedef struct FPerfTarget
{
	int32		target_id;
	char		name[NAMEDATALEN];
	char	   *conninfo;		/* in cxt_conn, as are the secrets */
	char	   *password;
	char	   *sslpassword;
	bool		restricted;		/* added by a non-superuser */
	int32		vcpus;			/* its vCPU count (target setting); 0: unknown */
	bool		listed;			/* still in the list of enabled targets */
	MemoryContext cxt_conn;		/* conninfo and secrets */
	MemoryContext cxt_ticks;	/* buffered ticks and their strings */

	FPerfConn	conn;
	FPerfRemoteState state;
	TimestampTz started;		/* query started */
	TimestampTz tick_ts;		/* time of the tick being asked for */
	int32		tick_interval_ms;
	int			server_version;
	TimestampTz next_attempt;
	int			backoff_ms;

	/* buffered ticks: [0, nflushing) handed out in this transaction */
	FPerfObsTick *ticks;
	int			nticks;
	int			maxticks;
	int			nflushing;
	HTAB	   *strings;		/* interned strings of the buffered ticks */

	/* shown in folio_perf_targets (through target_status) */
	int64		ticks_taken;
	int64		ticks_missed;	/* asked while the previous one was in flight */
	int64		ticks_dropped;	/* buffer full */
	int64		connects;
	int64		failures;
	TimestampTz last_sample_at;
	TimestampTz last_error_at;
	char		last_error[256];
} FPerfTarget;

static FPerfTarget *targets[FPERF_REMOTE_MAX_TARGETS];
static int	ntargets = 0;
static MemoryContext RemoteContext = NULL;
static bool list_loaded = false;

/*
 * Set up (once, in the worker) under the worker's long-lived context.
 */
void
fperf_rsampler_init(MemoryContext parent)
{
	RemoteContext = AllocSetContextCreate(parent, "folio_perf remote targets",
										  ALLOCSET_DEFAULT_SIZES);
}

/* libpq's error message of a connection, one line. */
static void
target_fail(FPerfTarget *t, const char *what, const char *msg)
{
	TimestampTz now = GetCurrentTimestamp();
	char		buf[256];
	char	   *p;

	snprintf(buf, sizeof(buf), "%s: %s", what, msg ? msg : "");
	for (p = buf; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	while (p > buf && p[-1] == ' ')
		*--p = '\0';

	/* log once per outage, not once per retry */
	if (t->backoff_ms == 0)
		ereport(LOG,
				(errmsg("sampler lost remote target \"%s\", retrying with backoff", t->name),
				 errdetail_internal("%s", buf)));
	strlcpy(t->last_error, buf, sizeof(t->last_error));
	t->last_error_at = now;
	t->failures++;
	fperf_conn_close(&t->conn);
	t->state = RS_DOWN;
	t->backoff_ms = t->backoff_ms == 0 ? FPERF_REMOTE_BACKOFF_MIN :
		Min(t->backoff_ms * 2, FPERF_REMOTE_BACKOFF_MAX);
	t->next_attempt = TimestampTzPlusMilliseconds(now, t->backoff_ms);
}

/* Start connecting, without waiting. */
static void
target_connect_start(FPerfTarget *t)
{
	FPerfTargetSpec spec;

	spec.name = t->name;
	spec.conninfo = t->conninfo;
	spec.password = t->password;
	spec.sslpassword = t->sslpassword;
	spec.restricted = t->restricted;
	t->connects++;
	if (!fperf_conn_start(&t->conn, &spec, FPERF_SAMPLER_APPNAME, fperf_remote_timeout,
						  RemoteContext))
	{
		target_fail(t, "connect", fperf_conn_public_error(&t->conn));
		return;
	}
	t->state = RS_CONNECTING;
}

/*
 * The query of a tick: pg_stat_activity without folio_perf's own sessions
 * (this one, the sampler's and snapshots' of any repository), and the
 * columns its answer must have.  For sessions waiting on a heavyweight
 * lock (at most 16 a tick, as the local probe), the first process they
 * wait for: pg_blocking_pids() on the target.
 */
#define TICK_SQL(query_id) FPERF_REMOTE_SELECT \
	"a.datid, a.datname, a.usesysid, a.usename," \
	" a.application_name, a.state, a.wait_event_type, a.wait_event," \
	" a.backend_type, a.qid AS query_id, a.pid," \
	" CASE WHEN a.wait_event_type OPERATOR(pg_catalog.=) 'Lock'" \
	" AND a.lock_rank OPERATOR(pg_catalog.<=) 16" \
	" THEN (pg_catalog.pg_blocking_pids(a.pid))[1] END AS blocker_pid" \
	" FROM (SELECT a.*, " query_id " AS qid, pg_catalog.row_number() OVER" \
	" (PARTITION BY a.wait_event_type OPERATOR(pg_catalog.=) 'Lock' ORDER BY a.pid) AS lock_rank" \
	" FROM pg_catalog.pg_stat_activity a" \
	" WHERE a.pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid()" \
	" AND a.query NOT LIKE '" FPERF_REMOTE_MARK "%'" \
	" AND a.application_name <> ALL (ARRAY['" FPERF_REMOTE_APPNAME "', '" FPERF_SAMPLER_APPNAME "'])) a"

static const FPerfColumn tick_columns[] = {
	{"datid", OIDOID},
	{"datname", NAMEOID},
	{"usesysid", OIDOID},
	{"usename", NAMEOID},
	{"application_name", TEXTOID},
	{"state", TEXTOID},
	{"wait_event_type", TEXTOID},
	{"wait_event", TEXTOID},
	{"backend_type", TEXTOID},
	{"query_id", INT8OID},
	{"pid", INT4OID},
	{"blocker_pid", INT4OID}
};

static const char *
tick_sql(int server_version)
{
	if (server_version >= 140000)
		return TICK_SQL("a.query_id");
	return TICK_SQL("NULL::bigint");
}

/* A string kept once per target and flush. */
static const char *
intern(FPerfTarget *t, const char *s)
{
	char		key[NAMEDATALEN * 2];
	bool		found;
	char	  **e;

	if (s == NULL)
		return NULL;
	if (t->strings == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(key);
		ctl.entrysize = sizeof(key) + sizeof(char *);
		ctl.hcxt = t->cxt_ticks;
		t->strings = hash_create("folio_perf remote strings", 256, &ctl,
								 HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
	}
	memset(key, 0, sizeof(key));
	strlcpy(key, s, sizeof(key));
	e = (char **) ((char *) hash_search(t->strings, key, HASH_ENTER, &found) + sizeof(key));
	if (!found)
		*e = MemoryContextStrdup(t->cxt_ticks, key);
	return *e;
}

/* Turn the answer of a tick into a buffered tick. */
static void
target_take_result(FPerfTarget *t, PGresult *res)
{
	MemoryContext old = MemoryContextSwitchTo(t->cxt_ticks);
	FPerfObsTick *tick;
	int			n = PQntuples(res);
	int			i;

	if (t->nticks >= FPERF_REMOTE_MAX_TICKS && t->nticks > t->nflushing)
	{
		/* flushes keep failing: drop the oldest tick not being written */
		memmove(&t->ticks[t->nflushing], &t->ticks[t->nflushing + 1],
				sizeof(FPerfObsTick) * (t->nticks - t->nflushing - 1));
		t->nticks--;
		t->ticks_dropped++;
	}
	if (t->nticks == t->maxticks)
	{
		t->maxticks = Max(64, t->maxticks * 2);
		t->ticks = t->ticks ? repalloc(t->ticks, sizeof(FPerfObsTick) * t->maxticks) :
			palloc(sizeof(FPerfObsTick) * t->maxticks);
	}
	tick = &t->ticks[t->nticks++];
	memset(tick, 0, sizeof(*tick));
	tick->ts = t->tick_ts;
	tick->interval_ms = t->tick_interval_ms;
	/*
	 * DB CPU (sampled): where the target's vCPU count is known, a session
	 * active without a wait event (on a CPU or queued for one, what
	 * Performance Insights counts as CPU) is counted as on CPU for the whole
	 * tick, against vcpus CPUs; the host's own CPU use is not known (busy 0,
	 * which reports leave out for targets).
	 */
	if (t->vcpus > 0)
	{
		tick->host_ncpu = t->vcpus;
		tick->host_total_ms = t->vcpus * t->tick_interval_ms;
		tick->host_busy_ms = 0;
	}
	tick->nobs = n;
	tick->obs = palloc0(sizeof(FPerfObs) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		FPerfObs   *p = &tick->obs[i];
		const char *state = PQgetisnull(res, i, 5) ? NULL : PQgetvalue(res, i, 5);
		const char *btype = PQgetisnull(res, i, 8) ? "" : PQgetvalue(res, i, 8);

		p->dbid = PQgetisnull(res, i, 0) ? InvalidOid : (Oid) strtoul(PQgetvalue(res, i, 0), NULL, 10);
		p->datname = intern(t, PQgetisnull(res, i, 1) ? "" : PQgetvalue(res, i, 1));
		p->userid = PQgetisnull(res, i, 2) ? InvalidOid : (Oid) strtoul(PQgetvalue(res, i, 2), NULL, 10);
		p->rolname = intern(t, PQgetisnull(res, i, 3) ? "" : PQgetvalue(res, i, 3));
		p->appname = intern(t, PQgetisnull(res, i, 4) ? "" : PQgetvalue(res, i, 4));
		p->state = intern(t, state && state[0] ? state : "unknown");
		p->wait_type = PQgetisnull(res, i, 6) ? NULL : intern(t, PQgetvalue(res, i, 6));
		p->wait_event = PQgetisnull(res, i, 7) ? NULL : intern(t, PQgetvalue(res, i, 7));
		p->btype = intern(t, btype);
		p->queryid = PQgetisnull(res, i, 9) ? 0 : strtoll(PQgetvalue(res, i, 9), NULL, 10);
		/* int4 columns (checked): a pid is positive, anything else none */
		p->pid = PQgetisnull(res, i, 10) ? 0 : (int32) strtol(PQgetvalue(res, i, 10), NULL, 10);
		p->blocker_pid = PQgetisnull(res, i, 11) ? 0 : (int32) strtol(PQgetvalue(res, i, 11), NULL, 10);
		if (p->pid < 0)
			p->pid = 0;
		if (p->blocker_pid < 0 || p->pid == 0)
			p->blocker_pid = 0;
		p->client = (strcmp(btype, "client backend") == 0);
		p->active = state != NULL && (strcmp(state, "active") == 0 ||
									  strcmp(state, "fastpath function call") == 0);
		/* per-backend CPU is not readable remotely: sampled, see above */
		p->cpu_ms = t->vcpus <= 0 ? -1 :
			(p->active && p->wait_type == NULL) ? t->tick_interval_ms : 0;
	}
	MemoryContextSwitchTo(old);
	t->ticks_taken++;
	t->last_sample_at = t->tick_ts;
	if (t->backoff_ms != 0)
		ereport(LOG,
				(errmsg("sampler reaches remote target \"%s\" again", t->name)));
	t->backoff_ms = 0;
}

/*
 * Advance one target as far as its socket allows.
 */
static void
target_poll(FPerfTarget *t, TimestampTz now)
{
	if (t->state == RS_DOWN && t->conninfo != NULL && now >= t->next_attempt)
		target_connect_start(t);

	if (t->state == RS_CONNECTING)
	{
		FPerfConnPhase ph = fperf_conn_poll(&t->conn);

		if (ph == FPC_FAILED)
			target_fail(t, "connect", fperf_conn_public_error(&t->conn));
		else if (ph == FPC_READY)
		{
			t->state = RS_IDLE;
			t->server_version = PQserverVersion(t->conn.conn);
		}
	}

	if (t->state == RS_BUSY)
	{
		PGconn	   *conn = t->conn.conn;

		if (PQflush(conn) < 0)
		{
			target_fail(t, "query", PQerrorMessage(conn));
			return;
		}
		if (!PQconsumeInput(conn))
		{
			target_fail(t, "query", PQerrorMessage(conn));
			return;
		}
		if (!PQisBusy(conn))
		{
			PGresult   *res;
			bool		ok = true;
			char	   *err = NULL;

			while ((res = PQgetResult(conn)) != NULL)
			{
				char		why[256];

				if (!ok)
					;			/* drain the rest */
				else if (PQresultStatus(res) != PGRES_TUPLES_OK)
				{
					ok = false;
					err = pstrdup(PQresultErrorMessage(res));
				}
				else if (!fperf_result_shape(res, tick_columns, lengthof(tick_columns),
											 FPERF_REMOTE_MAX_ROWS, why, sizeof(why)))
				{
					/* a broken or hostile target: never read a value */
					ok = false;
					err = psprintf("unexpected answer: %s", why);
				}
				else
					target_take_result(t, res);
				PQclear(res);
				if (PQisBusy(conn))
				{
					if (!ok)
						target_fail(t, "query", err);
					return;		/* the rest comes later */
				}
			}
			if (!ok)
				target_fail(t, "query", err);
			else
				t->state = RS_IDLE;
		}
		else if (TimestampDifferenceExceeds(t->started, now, fperf_remote_timeout))
			target_fail(t, "query", psprintf("no answer within %d ms", fperf_remote_timeout));
	}
}

/*
 * Advance every target.  Returns true while something is in flight (the
 * worker then wakes up again soon).
 */
bool
fperf_rsampler_poll(void)
{
	TimestampTz now = GetCurrentTimestamp();
	bool		waiting = false;
	int			i;

	for (i = 0; i < ntargets; i++)
	{
		target_poll(targets[i], now);
		if (targets[i]->state == RS_CONNECTING || targets[i]->state == RS_BUSY)
			waiting = true;
	}
	return waiting;
}

/*
 * A sample tick at time ts: ask every connected target for its sessions.
 */
void
fperf_rsampler_tick(TimestampTz ts, int interval_ms)
{
	int			i;

	(void) fperf_rsampler_poll();
	for (i = 0; i < ntargets; i++)
	{
		FPerfTarget *t = targets[i];

		if (t->state == RS_BUSY)
		{
			t->ticks_missed++;
			continue;
		}
		if (t->state != RS_IDLE)
			continue;
		if (!PQsendQuery(t->conn.conn, tick_sql(t->server_version)))
		{
			target_fail(t, "query", PQerrorMessage(t->conn.conn));
			continue;
		}
		t->state = RS_BUSY;
		t->started = GetCurrentTimestamp();
		t->tick_ts = ts;
		t->tick_interval_ms = interval_ms;
	}
	(void) fperf_rsampler_poll();
}

/* True if some target has ticks not yet written, or the list is unread. */
bool
fperf_rsampler_pending(void)
{
	int			i;

	for (i = 0; i < ntargets; i++)
		if (targets[i]->nticks > targets[i]->nflushing)
			return true;
	return !list_loaded;
}

/* Forget a target: close its connection, free its memory. */
static void
target_free(FPerfTarget *t)
{
	fperf_conn_close(&t->conn);
	MemoryContextDelete(t->cxt_ticks);
	MemoryContextDelete(t->cxt_conn);
	pfree(t);
}

/* Are a and b both NULL or equal? */
static bool
same_string(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return a == b;
	return strcmp(a, b) == 0;
}

/*
 * Replace the list of enabled targets: new ones are added, changed
 * connection strings reconnect, gone ones are closed (their ticks were
 * written by the same flush).
 */
void
fperf_rsampler_set_targets(const FPerfTargetDef *defs, int n)
{
	int			r;
	int			i;

	for (i = 0; i < ntargets; i++)
		targets[i]->listed = false;
	for (r = 0; r < n; r++)
	{
		int32		id = defs[r].target_id;
		const char *name = defs[r].name;
		const char *conninfo = defs[r].conninfo;
		bool		restricted = defs[r].restricted;
		const char *password = defs[r].password;
		const char *sslpassword = defs[r].sslpassword;
		FPerfTarget *t = NULL;

		for (i = 0; i < ntargets; i++)
			if (targets[i]->target_id == id)
				t = targets[i];
		if (t == NULL)
		{
			if (ntargets >= FPERF_REMOTE_MAX_TARGETS)
				continue;
			t = MemoryContextAllocZero(RemoteContext, sizeof(FPerfTarget));
			t->target_id = id;
			t->cxt_conn = AllocSetContextCreate(RemoteContext, "folio_perf remote target",
												ALLOCSET_SMALL_SIZES);
			t->cxt_ticks = AllocSetContextCreate(RemoteContext, "folio_perf remote ticks",
												 ALLOCSET_DEFAULT_SIZES);
			t->state = RS_DOWN;
			targets[ntargets++] = t;
		}
		t->listed = true;
		t->vcpus = defs[r].vcpus;
		strlcpy(t->name, name ? name : "", sizeof(t->name));
		if (t->conninfo == NULL || conninfo == NULL || strcmp(t->conninfo, conninfo) != 0 ||
			!same_string(t->password, password) || !same_string(t->sslpassword, sslpassword) ||
			t->restricted != restricted)
		{
			fperf_conn_close(&t->conn);
			t->state = RS_DOWN;
			t->next_attempt = 0;
			t->backoff_ms = 0;
			MemoryContextReset(t->cxt_conn);
			t->conninfo = conninfo ? MemoryContextStrdup(t->cxt_conn, conninfo) : NULL;
			t->password = password ? MemoryContextStrdup(t->cxt_conn, password) : NULL;
			t->sslpassword = sslpassword ? MemoryContextStrdup(t->cxt_conn, sslpassword) : NULL;
			t->restricted = restricted;
		}
	}
	for (i = 0; i < ntargets;)
	{
		if (!targets[i]->listed)
		{
			target_free(targets[i]);
			targets[i] = targets[--ntargets];
		}
		else
			i++;
	}
	list_loaded = true;
}

/*
 * The state of every target, for folio_perf_data.target_status; strings
 * point into the targets.  Returns how many were filled.
 */
int
fperf_rsampler_status(FPerfTargetStatus *out, int max)
{
	int			i;

	for (i = 0; i < ntargets && i < max; i++)
	{
		FPerfTarget *t = targets[i];
		FPerfTargetStatus *st = &out[i];

		switch (t->state)
		{
			case RS_IDLE:
			case RS_BUSY:
				st->state = "sampling";
				break;
			case RS_CONNECTING:
				st->state = "connecting";
				break;
			default:
				st->state = t->conninfo ? "down" : "no connection string";
				break;
		}
		st->target_id = t->target_id;
		st->last_sample_at = t->last_sample_at;
		st->ticks = t->ticks_taken;
		st->ticks_missed = t->ticks_missed;
		st->ticks_dropped = t->ticks_dropped;
		st->connects = t->connects;
		st->failures = t->failures;
		st->last_error = t->last_error;
		st->last_error_at = t->last_error_at;
		st->next_attempt_at = t->state == RS_DOWN ? t->next_attempt : 0;
	}
	return i;
}

/*
 * The next target, from *iter on, with ticks not handed out yet in this
 * transaction.  They count as handed out until fperf_rsampler_end_xact().
 */
bool
fperf_rsampler_take_ticks(int *iter, int32 *target_id,
						  const FPerfObsTick **ticks, int *nticks)
{
	for (; *iter < ntargets; (*iter)++)
	{
		FPerfTarget *t = targets[*iter];

		if (t->nticks <= t->nflushing)
			continue;
		*target_id = t->target_id;
		*ticks = &t->ticks[t->nflushing];
		*nticks = t->nticks - t->nflushing;
		t->nflushing = t->nticks;
		(*iter)++;
		return true;
	}
	return false;
}

/*
 * After the flush transaction: on commit the written ticks are freed; on
 * abort they stay for the next flush.
 */
void
fperf_rsampler_end_xact(bool committed)
{
	int			i;

	for (i = 0; i < ntargets; i++)
	{
		FPerfTarget *t = targets[i];

		if (t->nflushing == 0)
			continue;
		if (committed)
		{
			int			rest = t->nticks - t->nflushing;

			if (rest == 0)
			{
				MemoryContextReset(t->cxt_ticks);
				t->ticks = NULL;
				t->maxticks = 0;
				t->strings = NULL;
			}
			else
				memmove(t->ticks, &t->ticks[t->nflushing], sizeof(FPerfObsTick) * rest);
			t->nticks = rest;
		}
		t->nflushing = 0;
	}
}

/* Close every connection (worker exit). */
void
fperf_rsampler_shutdown(void)
{
	int			i;

	for (i = 0; i < ntargets; i++)
	{
		fperf_conn_close(&targets[i]->conn);
		targets[i]->state = RS_DOWN;
	}
}
