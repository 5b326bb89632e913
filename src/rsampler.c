/*-------------------------------------------------------------------------
 *
 * rsampler.c
 *		The sampler's remote targets: one kept libpq connection per enabled
 *		target, pg_stat_activity read at every tick, without ever blocking
 *		the worker's loop.
 *
 * The worker (worker.c) calls, from its loop:
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
 *	- fperf_rsampler_flush_in_xact() inside its flush transaction: every
 *	  target's buffered ticks are aggregated and written as
 *	  folio_perf_data.sample_interval rows with the target's id (worker.c,
 *	  the same histograms as local samples), each target's state goes to
 *	  folio_perf_data.target_status, and the list of enabled targets is read
 *	  again; fperf_rsampler_end_xact() then frees what was written, or keeps
 *	  it for the next flush after an abort.
 *
 * Failures.  A target that refuses the connection, does not finish
 * connecting or answering within folio_perf.remote_timeout, or drops the
 * connection is disconnected and retried after 1 s, then 2, 4, ... up to
 * 60 s; the next successful answer resets the delay.  A tick whose query
 * is still in flight at the next tick is not taken (the target is slow);
 * ticks are stamped with the time they were asked for.  The only libpq
 * call that can block is the host name lookup of PQconnectStartParams().
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
#include "sampler.h"
#include "remote.h"

#include <poll.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
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

/* Most targets sampled. */
#define FPERF_REMOTE_MAX_TARGETS	64

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
	char	   *conninfo;		/* in cxt_conn */
	bool		listed;			/* still in the list of enabled targets */
	MemoryContext cxt_conn;		/* conninfo */
	MemoryContext cxt_ticks;	/* buffered ticks and their strings */

	PGconn	   *conn;
	FPerfRemoteState state;
	PostgresPollingStatusType poll;
	TimestampTz started;		/* connection or query started */
	TimestampTz tick_ts;		/* time of the tick being asked for */
	int32		tick_interval_ms;
	int			server_version;
	TimestampTz next_attempt;
	int			backoff_ms;

	/* buffered ticks: [0, nflushing) are being written by this flush */
	FPerfRemoteTick *ticks;
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

/* Is the socket ready for reading (or writing), without waiting? */
static bool
socket_ready(PGconn *conn, bool for_write)
{
	struct pollfd pfd;

	pfd.fd = PQsocket(conn);
	if (pfd.fd < 0)
		return true;			/* let libpq report the problem */
	pfd.events = for_write ? POLLOUT : POLLIN;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) < 0)
		return false;
	return pfd.revents != 0;
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
	if (t->conn)
		PQfinish(t->conn);
	t->conn = NULL;
	t->state = RS_DOWN;
	t->backoff_ms = t->backoff_ms == 0 ? FPERF_REMOTE_BACKOFF_MIN :
		Min(t->backoff_ms * 2, FPERF_REMOTE_BACKOFF_MAX);
	t->next_attempt = TimestampTzPlusMilliseconds(now, t->backoff_ms);
}

/* Start connecting, without waiting. */
static void
target_connect_start(FPerfTarget *t)
{
	const char *keywords[] = {"fallback_application_name", "dbname", NULL};
	const char *values[] = {"folio_perf sampler", t->conninfo, NULL};

	t->conn = PQconnectStartParams(keywords, values, 1);
	t->started = GetCurrentTimestamp();
	t->connects++;
	if (t->conn == NULL)
	{
		target_fail(t, "connect", "out of memory");
		return;
	}
	if (PQstatus(t->conn) == CONNECTION_BAD)
	{
		target_fail(t, "connect", PQerrorMessage(t->conn));
		return;
	}
	t->state = RS_CONNECTING;
	t->poll = PGRES_POLLING_WRITING;
}

/* The query of a tick. */
static const char *
tick_sql(int server_version)
{
	if (server_version >= 140000)
		return "/* folio_perf_remote */ SELECT a.datid, a.datname, a.usesysid, a.usename,"
			" a.application_name, a.state, a.wait_event_type, a.wait_event,"
			" a.backend_type, a.query_id FROM pg_catalog.pg_stat_activity a"
			" WHERE a.pid <> pg_catalog.pg_backend_pid()"
			" AND a.query NOT LIKE '/* folio_perf_remote */%'"
			" AND a.application_name NOT IN ('folio_perf', 'folio_perf sampler')";
	return "/* folio_perf_remote */ SELECT a.datid, a.datname, a.usesysid, a.usename,"
		" a.application_name, a.state, a.wait_event_type, a.wait_event,"
		" a.backend_type, NULL::bigint AS query_id FROM pg_catalog.pg_stat_activity a"
		" WHERE a.pid <> pg_catalog.pg_backend_pid()"
		" AND a.query NOT LIKE '/* folio_perf_remote */%'"
		" AND a.application_name NOT IN ('folio_perf', 'folio_perf sampler')";
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
	FPerfRemoteTick *tick;
	int			n = PQntuples(res);
	int			i;

	if (t->nticks >= FPERF_REMOTE_MAX_TICKS && t->nticks > t->nflushing)
	{
		/* flushes keep failing: drop the oldest tick not being written */
		memmove(&t->ticks[t->nflushing], &t->ticks[t->nflushing + 1],
				sizeof(FPerfRemoteTick) * (t->nticks - t->nflushing - 1));
		t->nticks--;
		t->ticks_dropped++;
	}
	if (t->nticks == t->maxticks)
	{
		t->maxticks = Max(64, t->maxticks * 2);
		t->ticks = t->ticks ? repalloc(t->ticks, sizeof(FPerfRemoteTick) * t->maxticks) :
			palloc(sizeof(FPerfRemoteTick) * t->maxticks);
	}
	tick = &t->ticks[t->nticks++];
	tick->ts = t->tick_ts;
	tick->interval_ms = t->tick_interval_ms;
	tick->nproc = n;
	tick->procs = palloc(sizeof(FPerfRemoteProc) * Max(n, 1));
	for (i = 0; i < n; i++)
	{
		FPerfRemoteProc *p = &tick->procs[i];
		const char *state = PQgetisnull(res, i, 5) ? NULL : PQgetvalue(res, i, 5);
		const char *btype = PQgetvalue(res, i, 8);

		p->dbid = PQgetisnull(res, i, 0) ? InvalidOid : (Oid) strtoul(PQgetvalue(res, i, 0), NULL, 10);
		p->datname = intern(t, PQgetisnull(res, i, 1) ? "" : PQgetvalue(res, i, 1));
		p->userid = PQgetisnull(res, i, 2) ? InvalidOid : (Oid) strtoul(PQgetvalue(res, i, 2), NULL, 10);
		p->usename = intern(t, PQgetisnull(res, i, 3) ? "" : PQgetvalue(res, i, 3));
		p->appname = intern(t, PQgetisnull(res, i, 4) ? "" : PQgetvalue(res, i, 4));
		p->state = intern(t, state ? state : "");
		p->wait_type = PQgetisnull(res, i, 6) ? NULL : intern(t, PQgetvalue(res, i, 6));
		p->wait_event = PQgetisnull(res, i, 7) ? NULL : intern(t, PQgetvalue(res, i, 7));
		p->btype = intern(t, btype);
		p->queryid = PQgetisnull(res, i, 9) ? 0 : strtoll(PQgetvalue(res, i, 9), NULL, 10);
		p->client = (strcmp(btype, "client backend") == 0);
		p->active = state != NULL && (strcmp(state, "active") == 0 ||
									  strcmp(state, "fastpath function call") == 0);
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
		while (t->poll != PGRES_POLLING_OK && t->poll != PGRES_POLLING_FAILED &&
			   socket_ready(t->conn, t->poll == PGRES_POLLING_WRITING))
			t->poll = PQconnectPoll(t->conn);
		if (t->poll == PGRES_POLLING_FAILED || PQstatus(t->conn) == CONNECTION_BAD)
			target_fail(t, "connect", PQerrorMessage(t->conn));
		else if (t->poll == PGRES_POLLING_OK)
		{
			if (PQsetnonblocking(t->conn, 1) != 0)
				target_fail(t, "connect", PQerrorMessage(t->conn));
			else
			{
				t->state = RS_IDLE;
				t->server_version = PQserverVersion(t->conn);
			}
		}
		else if (TimestampDifferenceExceeds(t->started, now, fperf_remote_timeout))
			target_fail(t, "connect", psprintf("no answer within %d ms", fperf_remote_timeout));
	}

	if (t->state == RS_BUSY)
	{
		if (PQflush(t->conn) < 0)
		{
			target_fail(t, "query", PQerrorMessage(t->conn));
			return;
		}
		if (socket_ready(t->conn, false) && !PQconsumeInput(t->conn))
		{
			target_fail(t, "query", PQerrorMessage(t->conn));
			return;
		}
		if (!PQisBusy(t->conn))
		{
			PGresult   *res;
			bool		ok = true;
			char	   *err = NULL;

			while ((res = PQgetResult(t->conn)) != NULL)
			{
				if (PQresultStatus(res) == PGRES_TUPLES_OK)
					target_take_result(t, res);
				else
				{
					ok = false;
					err = pstrdup(PQresultErrorMessage(res));
				}
				PQclear(res);
				if (PQisBusy(t->conn))
					return;		/* the rest comes later */
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
		if (!PQsendQuery(t->conn, tick_sql(t->server_version)))
		{
			target_fail(t, "query", PQerrorMessage(t->conn));
			continue;
		}
		t->state = RS_BUSY;
		t->started = GetCurrentTimestamp();
		t->tick_ts = ts;
		t->tick_interval_ms = interval_ms;
	}
	(void) fperf_rsampler_poll();
}

/* True if some target has ticks to write. */
bool
fperf_rsampler_pending(void)
{
	int			i;

	for (i = 0; i < ntargets; i++)
		if (targets[i]->nticks > 0)
			return true;
	return !list_loaded;
}

/* Forget a target: close its connection, free its memory. */
static void
target_free(FPerfTarget *t)
{
	if (t->conn)
		PQfinish(t->conn);
	MemoryContextDelete(t->cxt_ticks);
	MemoryContextDelete(t->cxt_conn);
	pfree(t);
}

#define TARGETS_SQL \
	"SELECT t.target_id, t.name, t.conninfo FROM folio_perf_data.target t" \
	" WHERE t.enabled AND t.dropped_at IS NULL ORDER BY t.target_id"

/*
 * Read the list of enabled targets (caller is connected to SPI): new ones
 * are added, changed connection strings reconnect, gone ones are closed
 * (their ticks were written by the same flush).
 */
static void
load_targets(void)
{
	int			ret;
	uint64		r;
	int			i;

	ret = SPI_execute(TARGETS_SQL, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute failed: error code %d", ret);

	for (i = 0; i < ntargets; i++)
		targets[i]->listed = false;
	for (r = 0; r < SPI_processed; r++)
	{
		HeapTuple	tup = SPI_tuptable->vals[r];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		bool		isnull;
		int32		id = DatumGetInt32(SPI_getbinval(tup, desc, 1, &isnull));
		char	   *name = SPI_getvalue(tup, desc, 2);
		char	   *conninfo = SPI_getvalue(tup, desc, 3);
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
		strlcpy(t->name, name ? name : "", sizeof(t->name));
		if (t->conninfo == NULL || conninfo == NULL || strcmp(t->conninfo, conninfo) != 0)
		{
			if (t->conn)
				PQfinish(t->conn);
			t->conn = NULL;
			t->state = RS_DOWN;
			t->next_attempt = 0;
			t->backoff_ms = 0;
			MemoryContextReset(t->cxt_conn);
			t->conninfo = conninfo ? MemoryContextStrdup(t->cxt_conn, conninfo) : NULL;
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

#define STATUS_SQL \
	"INSERT INTO folio_perf_data.target_status (target_id, state, last_sample_at," \
	"  ticks, ticks_missed, ticks_dropped, connects, failures, last_error, last_error_at," \
	"  next_attempt_at, updated_at)" \
	" SELECT u.*, pg_catalog.clock_timestamp() FROM unnest($1::int[], $2::text[]," \
	"  $3::timestamptz[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[]," \
	"  $8::bigint[], $9::text[], $10::timestamptz[], $11::timestamptz[]) AS u" \
	" ON CONFLICT (target_id) DO UPDATE SET state = EXCLUDED.state," \
	"  last_sample_at = EXCLUDED.last_sample_at, ticks = EXCLUDED.ticks," \
	"  ticks_missed = EXCLUDED.ticks_missed, ticks_dropped = EXCLUDED.ticks_dropped," \
	"  connects = EXCLUDED.connects, failures = EXCLUDED.failures," \
	"  last_error = EXCLUDED.last_error, last_error_at = EXCLUDED.last_error_at," \
	"  next_attempt_at = EXCLUDED.next_attempt_at, updated_at = EXCLUDED.updated_at"

/* Build a one-dimensional array of n Datums of a type. */
static Datum
datum_array(Datum *vals, bool *nulls, int n, Oid type, int len, bool byval, char align)
{
	int			dims[1] = {n};
	int			lbs[1] = {1};

	return PointerGetDatum(construct_md_array(vals, nulls, 1, dims, lbs,
											  type, len, byval, align));
}

/* Arrays of int8 and timestamptz Datums (8 bytes, aligned as double). */
static Datum
int8_datums(Datum *vals, bool *nulls, int n)
{
	return datum_array(vals, nulls, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}

static Datum
ts_datums(Datum *vals, bool *nulls, int n)
{
	return datum_array(vals, nulls, n, TIMESTAMPTZOID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}

/* Write every target's state to target_status (caller is connected to SPI). */
static void
write_status(void)
{
	Datum		ids[FPERF_REMOTE_MAX_TARGETS],
				states[FPERF_REMOTE_MAX_TARGETS],
				last[FPERF_REMOTE_MAX_TARGETS],
				taken[FPERF_REMOTE_MAX_TARGETS],
				missed[FPERF_REMOTE_MAX_TARGETS],
				dropped[FPERF_REMOTE_MAX_TARGETS],
				connects[FPERF_REMOTE_MAX_TARGETS],
				failures[FPERF_REMOTE_MAX_TARGETS],
				errors[FPERF_REMOTE_MAX_TARGETS],
				errat[FPERF_REMOTE_MAX_TARGETS],
				nextat[FPERF_REMOTE_MAX_TARGETS];
	bool		lastn[FPERF_REMOTE_MAX_TARGETS],
				errn[FPERF_REMOTE_MAX_TARGETS],
				erratn[FPERF_REMOTE_MAX_TARGETS],
				nextn[FPERF_REMOTE_MAX_TARGETS];
	Datum		args[11];
	bool		argn[11];
	char		nulls[12];
	Oid			argtypes[11] = {INT4ARRAYOID, TEXTARRAYOID, TIMESTAMPTZARRAYOID,
		INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID, INT8ARRAYOID,
	TEXTARRAYOID, TIMESTAMPTZARRAYOID, TIMESTAMPTZARRAYOID};
	int			i;
	int			ret;

	if (ntargets == 0)
		return;
	for (i = 0; i < ntargets; i++)
	{
		FPerfTarget *t = targets[i];
		const char *st;

		switch (t->state)
		{
			case RS_IDLE:
			case RS_BUSY:
				st = "sampling";
				break;
			case RS_CONNECTING:
				st = "connecting";
				break;
			default:
				st = t->conninfo ? "down" : "no connection string";
				break;
		}
		ids[i] = Int32GetDatum(t->target_id);
		states[i] = CStringGetTextDatum(st);
		last[i] = TimestampTzGetDatum(t->last_sample_at);
		lastn[i] = (t->last_sample_at == 0);
		taken[i] = Int64GetDatum(t->ticks_taken);
		missed[i] = Int64GetDatum(t->ticks_missed);
		dropped[i] = Int64GetDatum(t->ticks_dropped);
		connects[i] = Int64GetDatum(t->connects);
		failures[i] = Int64GetDatum(t->failures);
		errors[i] = CStringGetTextDatum(t->last_error);
		errn[i] = (t->last_error[0] == '\0');
		errat[i] = TimestampTzGetDatum(t->last_error_at);
		erratn[i] = (t->last_error_at == 0);
		nextat[i] = TimestampTzGetDatum(t->next_attempt);
		nextn[i] = (t->state != RS_DOWN || t->next_attempt == 0);
	}
	memset(argn, false, sizeof(argn));
	args[0] = datum_array(ids, argn, ntargets, INT4OID, 4, true, TYPALIGN_INT);
	args[1] = datum_array(states, argn, ntargets, TEXTOID, -1, false, TYPALIGN_INT);
	args[2] = ts_datums(last, lastn, ntargets);
	args[3] = int8_datums(taken, argn, ntargets);
	args[4] = int8_datums(missed, argn, ntargets);
	args[5] = int8_datums(dropped, argn, ntargets);
	args[6] = int8_datums(connects, argn, ntargets);
	args[7] = int8_datums(failures, argn, ntargets);
	args[8] = datum_array(errors, errn, ntargets, TEXTOID, -1, false, TYPALIGN_INT);
	args[9] = ts_datums(errat, erratn, ntargets);
	args[10] = ts_datums(nextat, nextn, ntargets);
	memset(nulls, ' ', sizeof(nulls));
	nulls[11] = '\0';

	ret = SPI_execute_with_args(STATUS_SQL, 11, argtypes, args, nulls, false, 0);
	if (ret != SPI_OK_INSERT)
		elog(ERROR, "SPI_execute_with_args failed: error code %d", ret);
}

/*
 * Inside the worker's flush transaction (SPI connected by the caller):
 * write every target's buffered ticks, the targets' state, and read the
 * list of targets again.  Returns the number of ticks written.
 */
int64
fperf_rsampler_flush_in_xact(const char *cut)
{
	int64		written = 0;
	int			i;

	for (i = 0; i < ntargets; i++)
	{
		FPerfTarget *t = targets[i];

		if (t->nticks == 0)
			continue;
		t->nflushing = t->nticks;
		written += fperf_worker_write_remote(t->target_id, t->ticks, t->nticks, cut);
	}
	write_status();
	load_targets();
	return written;
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
				memmove(t->ticks, &t->ticks[t->nflushing], sizeof(FPerfRemoteTick) * rest);
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
		if (targets[i]->conn)
			PQfinish(targets[i]->conn);
		targets[i]->conn = NULL;
		targets[i]->state = RS_DOWN;
	}
}
