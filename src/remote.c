/*-------------------------------------------------------------------------
 *
 * remote.c
 *		Remote targets: run folio_perf's read-only capture queries on another
 *		PostgreSQL server over libpq.
 *
 * A target is a row of folio_perf_data.target (name, connection string).
 * The capture (sql/parts/040_sources.sql and 050_capture.sql) reads a target's
 * pg_stat_statements, statistics views and catalogs through
 * folio_perf_data.remote_query(target_id, sql, params), which returns the
 * rows of one query as SETOF record, columns matched by name to the caller's
 * column definition list and converted from libpq's text format by the
 * types' input functions.
 *
 * Connections.  A backend opens at most one connection per target and
 * transaction, on first use, and closes every connection at the end of the
 * transaction (commit or abort): a snapshot costs one connection setup, and
 * nothing stays open in sessions that take a snapshot now and then.  Any
 * error on a connection (refused, timed out, lost, or a failed query)
 * closes it at once, so the next use reconnects.
 *
 * Waiting.  libpq is used in non-blocking mode; every wait (connecting,
 * sending, waiting for the result) is a WaitLatchOrSocket() bounded by
 * folio_perf.remote_timeout, so a target that is down, slow or silent fails
 * the call with a clear error after at most that long, and the backend
 * stays responsive to query cancel and termination meanwhile.  The target
 * also gets statement_timeout = folio_perf.remote_timeout, so that it stops
 * working on an abandoned query.
 *
 * Errors.  Failing to connect: ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQL-
 * CONNECTION (08001); a timeout or a connection lost during a query:
 * ERRCODE_CONNECTION_FAILURE (08006); an error raised by the target: its
 * own SQLSTATE.  The target's name is in the message, libpq's or the
 * target's message in the detail.
 *
 * Secrets.  Connection strings are read here, through SPI, from a table that
 * only the extension's owner may read; SQL callers pass a target id, never
 * the string.  libpq reads .pgpass (PGPASSFILE or passfile=) and service
 * files (PGSERVICEFILE or service=) of the server's OS user as usual.  A
 * target added by a role that is not a superuser must authenticate with a
 * password (as dblink and postgres_fdw require), so that the repository
 * server's own trust or peer authentication cannot be borrowed.
 *
 * The sampler's connections to targets are not these: rsampler.c keeps one
 * per target across the worker's loops and never waits on it.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/remote.c
 *
 *-------------------------------------------------------------------------
 */
#include "remote.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

PG_FUNCTION_INFO_V1(folio_perf_remote_query);
PG_FUNCTION_INFO_V1(folio_perf_remote_version);
PG_FUNCTION_INFO_V1(folio_perf_remote_check);
PG_FUNCTION_INFO_V1(folio_perf_conninfo_redact);

/* GUC: time allowed to connect and for each query, ms */
int			fperf_remote_timeout = 10000;

/* Every query sent to a target starts with this comment, so that the
 * target's pg_stat_statements shows whose they are (and folio_perf's
 * reports treat them as housekeeping). */
#define FPERF_REMOTE_MARK "/* folio_perf_remote */ "

/* One open connection of this transaction. */
typedef struct FPerfRemoteConn
{
	int32		target_id;
	PGconn	   *conn;
	char	   *name;			/* in TopMemoryContext */
} FPerfRemoteConn;

#define FPERF_MAX_REMOTE_CONNS 16

static FPerfRemoteConn remote_conns[FPERF_MAX_REMOTE_CONNS];
static int	n_remote_conns = 0;
static bool xact_callback_registered = false;

/*
 * Define folio_perf.remote_timeout (called from _PG_init, preloaded or not).
 */
void
fperf_remote_define_gucs(void)
{
	DefineCustomIntVariable("folio_perf.remote_timeout",
							"Time allowed to connect to a remote target and for each query there.",
							"A target that does not answer within this time makes its "
							"snapshot fail; the sampler retries later. Also sent to the "
							"target as statement_timeout.",
							&fperf_remote_timeout,
							10000,
							100,
							3600 * 1000,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);
}

/*
 * Milliseconds left until deadline, at least 0.
 */
static long
ms_left(TimestampTz deadline)
{
	long		ms = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);

	return ms > 0 ? ms : 0;
}

/*
 * Wait until the connection's socket is ready for events (WL_SOCKET_*) or
 * the deadline passes, servicing interrupts (query cancel, termination)
 * whenever the latch is set.  Returns false on timeout.
 */
static bool
wait_socket(PGconn *conn, int events, TimestampTz deadline)
{
	for (;;)
	{
		long		ms = ms_left(deadline);
		int			rc;

		if (ms <= 0)
			return false;
		rc = WaitLatchOrSocket(MyLatch,
							   WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | events,
							   PQsocket(conn), ms, PG_WAIT_EXTENSION);
		if (rc & WL_LATCH_SET)
		{
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
		if (rc & events)
			return true;
	}
}

/*
 * libpq's message without its trailing newline, palloc'd.
 */
static char *
conn_message(PGconn *conn)
{
	char	   *msg = pstrdup(conn ? PQerrorMessage(conn) : "out of memory");
	int			len = strlen(msg);

	while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
		msg[--len] = '\0';
	return msg;
}

/*
 * Open a connection to conninfo within timeout_ms, without blocking
 * interrupts.  On failure returns NULL and sets *err (palloc'd).  The caller
 * owns the connection.
 */
PGconn *
fperf_remote_connect_start(const char *conninfo, int timeout_ms, char **err)
{
	const char *keywords[] = {"fallback_application_name", "dbname", NULL};
	const char *values[] = {"folio_perf", conninfo, NULL};
	PGconn	   *conn;
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout_ms);

	*err = NULL;
	conn = PQconnectStartParams(keywords, values, 1);
	if (conn == NULL || PQstatus(conn) == CONNECTION_BAD)
	{
		*err = conn_message(conn);
		if (conn)
			PQfinish(conn);
		return NULL;
	}

	PG_TRY();
	{
		while (st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED)
		{
			int			ev = (st == PGRES_POLLING_READING) ?
				WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE;

			if (!wait_socket(conn, ev, deadline))
			{
				*err = psprintf("no answer within %d ms", timeout_ms);
				break;
			}
			st = PQconnectPoll(conn);
		}
	}
	PG_CATCH();
	{
		PQfinish(conn);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (*err == NULL && (st != PGRES_POLLING_OK || PQstatus(conn) != CONNECTION_OK))
		*err = conn_message(conn);
	if (*err != NULL)
	{
		PQfinish(conn);
		return NULL;
	}
	if (PQsetnonblocking(conn, 1) != 0)
	{
		*err = conn_message(conn);
		PQfinish(conn);
		return NULL;
	}
	return conn;
}

/*
 * Send a query (with text parameters) and wait for its result within
 * timeout_ms.  Returns the last result (the caller PQclear()s it), or NULL
 * with *err set and *timed_out telling whether the time ran out.
 */
PGresult *
fperf_remote_exec(PGconn *conn, const char *sql, int nparams,
				  const char *const *params, int timeout_ms,
				  char **err, bool *timed_out)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout_ms);
	PGresult   *volatile last = NULL;
	PGresult   *res;

	*err = NULL;
	*timed_out = false;
	if (!PQsendQueryParams(conn, sql, nparams, NULL, params, NULL, NULL, 0))
	{
		*err = conn_message(conn);
		return NULL;
	}

	PG_TRY();
	{
		int			f;

		/* push the query out (large parameter arrays take several writes) */
		while ((f = PQflush(conn)) == 1)
		{
			if (!wait_socket(conn, WL_SOCKET_WRITEABLE | WL_SOCKET_READABLE, deadline))
			{
				*timed_out = true;
				break;
			}
			/* the server may answer (an error) before it read everything */
			if (!PQconsumeInput(conn))
			{
				f = -1;
				break;
			}
		}
		if (f == -1)
			*err = conn_message(conn);

		while (*err == NULL && !*timed_out)
		{
			while (PQisBusy(conn))
			{
				if (!wait_socket(conn, WL_SOCKET_READABLE, deadline))
				{
					*timed_out = true;
					break;
				}
				if (!PQconsumeInput(conn))
				{
					*err = conn_message(conn);
					break;
				}
			}
			if (*err != NULL || *timed_out)
				break;
			res = PQgetResult(conn);
			if (res == NULL)
				break;
			if (last)
				PQclear(last);
			last = res;
		}
	}
	PG_CATCH();
	{
		if (last)
			PQclear(last);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (*timed_out && *err == NULL)
		*err = psprintf("no answer within %d ms", timeout_ms);
	if (*err != NULL)
	{
		if (last)
			PQclear(last);
		return NULL;
	}
	if (last == NULL)
		*err = pstrdup("no result");
	return last;
}

/*
 * The statements that set up a new connection: folio_perf's statements
 * time out on the target too, and find pg_stat_statements' objects in
 * whatever schema it was created in, after pg_catalog.
 */
const char *
fperf_remote_setup_sql(void)
{
	return FPERF_REMOTE_MARK
		"SELECT pg_catalog.set_config('statement_timeout', $1, false),"
		" pg_catalog.set_config('search_path', 'pg_catalog' || coalesce(', ' ||"
		" (SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e"
		" JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace"
		" WHERE e.extname = 'pg_stat_statements'), ''), false)";
}

/* ---- per-transaction connection cache (backends) ---- */

/*
 * Close one cached connection and forget it.
 */
static void
remote_forget(FPerfRemoteConn *rc)
{
	int			i = rc - remote_conns;

	if (rc->conn)
		PQfinish(rc->conn);
	if (rc->name)
		pfree(rc->name);
	remote_conns[i] = remote_conns[n_remote_conns - 1];
	n_remote_conns--;
}

/*
 * Transaction callback: close every connection at the end of a transaction.
 */
static void
remote_xact_callback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_COMMIT:
		case XACT_EVENT_PARALLEL_COMMIT:
		case XACT_EVENT_ABORT:
		case XACT_EVENT_PARALLEL_ABORT:
		case XACT_EVENT_PREPARE:
			while (n_remote_conns > 0)
				remote_forget(&remote_conns[n_remote_conns - 1]);
			break;
		default:
			break;
	}
}

/*
 * The name and connection string of a target, read as the current user
 * (the capture runs as the extension's owner).  Errors if it does not
 * exist or was dropped.
 */
static void
target_lookup(int32 target_id, char **name, char **conninfo)
{
	Oid			argtypes[1] = {INT4OID};
	Datum		args[1];
	int			ret;
	MemoryContext cxt = CurrentMemoryContext;

	args[0] = Int32GetDatum(target_id);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute_with_args("SELECT t.name, t.conninfo FROM folio_perf_data.target t"
								" WHERE t.target_id OPERATOR(pg_catalog.=) $1 AND t.dropped_at IS NULL",
								1, argtypes, args, NULL, true, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_with_args failed: %d", ret);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("remote target %d does not exist", target_id),
				 errhint("See folio_perf_targets for the targets that exist.")));
	{
		MemoryContext old = MemoryContextSwitchTo(cxt);
		char	   *n = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
		char	   *c = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);

		*name = pstrdup(n ? n : "");
		*conninfo = pstrdup(c ? c : "");
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
}

/*
 * The connection of this transaction to a target, opened on first use.
 */
static FPerfRemoteConn *
remote_get(int32 target_id)
{
	FPerfRemoteConn *rc;
	char	   *name;
	char	   *conninfo;
	char	   *err;
	PGconn	   *conn;
	PGresult   *res;
	bool		timed_out;
	char		timeout[32];
	const char *params[1];
	int			i;

	for (i = 0; i < n_remote_conns; i++)
	{
		if (remote_conns[i].target_id == target_id)
		{
			if (PQstatus(remote_conns[i].conn) == CONNECTION_OK)
				return &remote_conns[i];
			remote_forget(&remote_conns[i]);
			break;
		}
	}
	if (n_remote_conns >= FPERF_MAX_REMOTE_CONNS)
		ereport(ERROR,
				(errcode(ERRCODE_TOO_MANY_CONNECTIONS),
				 errmsg("too many remote targets in one transaction"),
				 errdetail("At most %d targets can be read in one transaction.",
						   FPERF_MAX_REMOTE_CONNS)));
	if (!xact_callback_registered)
	{
		RegisterXactCallback(remote_xact_callback, NULL);
		xact_callback_registered = true;
	}

	target_lookup(target_id, &name, &conninfo);
	conn = fperf_remote_connect_start(conninfo, fperf_remote_timeout, &err);
	memset(conninfo, 0, strlen(conninfo));
	pfree(conninfo);
	if (conn == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("could not connect to remote target \"%s\"", name),
				 errdetail_internal("%s", err),
				 errhint("Check that the target is up and reachable from this server; "
						 "folio_perf_targets shows its connection string, "
						 "folio_perf.remote_timeout the time allowed.")));

	snprintf(timeout, sizeof(timeout), "%d", fperf_remote_timeout);
	params[0] = timeout;
	PG_TRY();
	{
		res = fperf_remote_exec(conn, fperf_remote_setup_sql(), 1, params,
								fperf_remote_timeout, &err, &timed_out);
	}
	PG_CATCH();
	{
		PQfinish(conn);
		PG_RE_THROW();
	}
	PG_END_TRY();
	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		char	   *msg = res ? pstrdup(PQresultErrorMessage(res)) : err;

		if (res)
			PQclear(res);
		PQfinish(conn);
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("could not set up the connection to remote target \"%s\"", name),
				 errdetail_internal("%s", msg)));
	}
	PQclear(res);

	rc = &remote_conns[n_remote_conns++];
	rc->target_id = target_id;
	rc->conn = conn;
	rc->name = MemoryContextStrdup(TopMemoryContext, name);
	return rc;
}

/*
 * Raise the error for a failed remote query; closes the connection first.
 */
static void
remote_query_error(FPerfRemoteConn *rc, PGresult *res, const char *err,
				   bool timed_out)
{
	char	   *name = pstrdup(rc->name);
	bool		lost = (PQstatus(rc->conn) != CONNECTION_OK);
	char	   *sqlstate = NULL;
	char	   *primary = NULL;
	char	   *detail = NULL;
	char	   *hint = NULL;

	if (res)
	{
		char	   *s;

		if ((s = PQresultErrorField(res, PG_DIAG_SQLSTATE)) != NULL)
			sqlstate = pstrdup(s);
		if ((s = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY)) != NULL)
			primary = pstrdup(s);
		if ((s = PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL)) != NULL)
			detail = pstrdup(s);
		if ((s = PQresultErrorField(res, PG_DIAG_MESSAGE_HINT)) != NULL)
			hint = pstrdup(s);
		if (primary == NULL)
			primary = pstrdup(PQresultErrorMessage(res));
		PQclear(res);
	}
	remote_forget(rc);

	if (timed_out || (sqlstate && strcmp(sqlstate, "57014") == 0))
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("remote target \"%s\" did not answer within %d ms",
						name, fperf_remote_timeout),
				 primary ? errdetail_internal("%s", primary) : 0,
				 errhint("Raise folio_perf.remote_timeout if the target is just slow.")));
	if (lost || sqlstate == NULL || strncmp(sqlstate, "08", 2) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("lost the connection to remote target \"%s\"", name),
				 errdetail_internal("%s", primary ? primary : (err ? err : "")),
				 errhint("Check that the target is up; nothing of this snapshot was stored.")));
	ereport(ERROR,
			(errcode(MAKE_SQLSTATE(sqlstate[0], sqlstate[1], sqlstate[2],
								   sqlstate[3], sqlstate[4])),
			 errmsg("remote target \"%s\": %s", name, primary),
			 detail ? errdetail_internal("%s", detail) : 0,
			 hint ? errhint("%s", hint) : 0));
}

/*
 * Convert a result's rows into the SRF's tuplestore, columns matched by
 * name.  Frees nothing: the caller PQclear()s res.
 */
static void
result_to_tuplestore(ReturnSetInfo *rsinfo, PGresult *res, const char *name)
{
	TupleDesc	tupdesc = rsinfo->setDesc;
	int			natts = tupdesc->natts;
	int			nrows = PQntuples(res);
	int		   *colmap = palloc(sizeof(int) * natts);
	FmgrInfo   *in = palloc(sizeof(FmgrInfo) * natts);
	Oid		   *ioparams = palloc(sizeof(Oid) * natts);
	Datum	   *values = palloc(sizeof(Datum) * natts);
	bool	   *nulls = palloc(sizeof(bool) * natts);
	MemoryContext rowcxt;
	MemoryContext oldcxt;
	int			i;
	int			r;

	for (i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		const char *attname = NameStr(att->attname);
		Oid			infunc;
		int			j;

		colmap[i] = -1;
		if (att->attisdropped)
			continue;
		for (j = 0; j < PQnfields(res); j++)
		{
			if (strcmp(PQfname(res, j), attname) == 0)
			{
				colmap[i] = j;
				break;
			}
		}
		if (colmap[i] < 0)
			ereport(ERROR,
					(errcode(ERRCODE_DATATYPE_MISMATCH),
					 errmsg("the result from remote target \"%s\" has no column \"%s\"",
							name, attname)));
		getTypeInputInfo(att->atttypid, &infunc, &ioparams[i]);
		fmgr_info(infunc, &in[i]);
	}

	rowcxt = AllocSetContextCreate(CurrentMemoryContext, "folio_perf remote row",
								   ALLOCSET_DEFAULT_SIZES);
	for (r = 0; r < nrows; r++)
	{
		oldcxt = MemoryContextSwitchTo(rowcxt);
		for (i = 0; i < natts; i++)
		{
			Form_pg_attribute att = TupleDescAttr(tupdesc, i);

			if (colmap[i] < 0 || PQgetisnull(res, r, colmap[i]))
			{
				values[i] = (Datum) 0;
				nulls[i] = true;
			}
			else
			{
				values[i] = InputFunctionCall(&in[i], PQgetvalue(res, r, colmap[i]),
											  ioparams[i], att->atttypmod);
				nulls[i] = false;
			}
		}
		MemoryContextSwitchTo(oldcxt);
		tuplestore_putvalues(rsinfo->setResult, tupdesc, values, nulls);
		MemoryContextReset(rowcxt);
	}
	MemoryContextDelete(rowcxt);
}

/*
 * folio_perf_data.remote_query(target_id int, sql text, params text[]
 *	 DEFAULT NULL) RETURNS SETOF record: the rows of one query on a remote
 *	 target, with text parameters $1..$n.  The caller's column definition
 *	 list names the columns to take from the result.
 */
Datum
folio_perf_remote_query(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int32		target_id;
	char	   *sql;
	char	   *err;
	bool		timed_out;
	const char **params = NULL;
	int			nparams = 0;
	FPerfRemoteConn *rc;
	PGresult   *res;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("target_id and sql must not be null")));
	target_id = PG_GETARG_INT32(0);
	sql = psprintf("%s%s", FPERF_REMOTE_MARK, text_to_cstring(PG_GETARG_TEXT_PP(1)));
	if (!PG_ARGISNULL(2))
	{
		Datum	   *elems;
		bool	   *enulls;
		int			i;

		deconstruct_array(PG_GETARG_ARRAYTYPE_P(2), TEXTOID, -1, false,
						  TYPALIGN_INT, &elems, &enulls, &nparams);
		params = palloc(sizeof(char *) * Max(nparams, 1));
		for (i = 0; i < nparams; i++)
			params[i] = enulls[i] ? NULL : TextDatumGetCString(elems[i]);
	}

	fperf_init_srf(fcinfo);

	rc = remote_get(target_id);
	PG_TRY();
	{
		res = fperf_remote_exec(rc->conn, sql, nparams, params,
								fperf_remote_timeout, &err, &timed_out);
	}
	PG_CATCH();
	{
		/* interrupted: the connection is in an unknown state */
		remote_forget(rc);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (res == NULL || (PQresultStatus(res) != PGRES_TUPLES_OK &&
						PQresultStatus(res) != PGRES_COMMAND_OK))
		remote_query_error(rc, res, err, timed_out);

	PG_TRY();
	{
		if (PQresultStatus(res) == PGRES_TUPLES_OK)
			result_to_tuplestore(rsinfo, res, rc->name);
	}
	PG_FINALLY();
	{
		PQclear(res);
	}
	PG_END_TRY();

	PG_RETURN_VOID();
}

/*
 * folio_perf_data.remote_version(target_id int) RETURNS int: the target's
 * server_version_num (connecting if needed, no query).
 */
Datum
folio_perf_remote_version(PG_FUNCTION_ARGS)
{
	FPerfRemoteConn *rc = remote_get(PG_GETARG_INT32(0));

	PG_RETURN_INT32(PQserverVersion(rc->conn));
}

/*
 * folio_perf_data.remote_check(conninfo text, name text, OUT datname text, OUT rolname
 *	 text, OUT server_version_num int, OUT in_recovery boolean, OUT
 *	 pgss_schema text, OUT read_all_stats boolean): connect with a connection
 *	 string (not yet stored) and report what folio_perf_target_add() checks.
 *	 A caller that is not a superuser (the role outside SECURITY DEFINER
 *	 functions) must be asked for a password by the target.
 */
Datum
folio_perf_remote_check(PG_FUNCTION_ARGS)
{
	char	   *conninfo = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(1));
	PQconninfoOption *opts;
	char	   *err = NULL;
	PGconn	   *conn;
	PGresult   *volatile res = NULL;
	bool		timed_out;
	TupleDesc	tupdesc;
	Datum		values[6];
	bool		nulls[6];
	int			i;

	opts = PQconninfoParse(conninfo, &err);
	if (opts == NULL)
	{
		char	   *msg = err ? pstrdup(err) : "out of memory";

		if (err)
			PQfreemem(err);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid connection string"),
				 errdetail_internal("%s", msg)));
	}
	PQconninfoFree(opts);

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	conn = fperf_remote_connect_start(conninfo, fperf_remote_timeout, &err);
	if (conn == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
				 errmsg("could not connect to new remote target \"%s\"", name),
				 errdetail_internal("%s", err),
				 errhint("Check the connection string, and that the target is up and reachable from this server.")));

	PG_TRY();
	{
		if (!superuser_arg(GetOuterUserId()) && !PQconnectionUsedPassword(conn))
			ereport(ERROR,
					(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
					 errmsg("password is required"),
					 errdetail("Non-superusers may add only targets that ask for a password."),
					 errhint("Have the target authenticate this connection with a password "
							 "(in the connection string, .pgpass or a service file), "
							 "or ask a superuser to add it.")));

		res = fperf_remote_exec(conn,
								FPERF_REMOTE_MARK
								"SELECT pg_catalog.current_database() AS datname,"
								" current_user AS rolname,"
								" pg_catalog.current_setting('server_version_num')::int AS server_version_num,"
								" pg_catalog.pg_is_in_recovery() AS in_recovery,"
								" (SELECT n.nspname FROM pg_catalog.pg_extension e"
								"  JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace"
								"  WHERE e.extname = 'pg_stat_statements') AS pgss_schema,"
								" pg_catalog.pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') AS read_all_stats",
								0, NULL, fperf_remote_timeout, &err, &timed_out);
		if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("could not query new remote target \"%s\"", name),
					 errdetail_internal("%s", res ? PQresultErrorMessage(res) : err)));
		for (i = 0; i < 6; i++)
		{
			nulls[i] = PQgetisnull(res, 0, i);
			values[i] = (Datum) 0;
		}
		if (!nulls[0])
			values[0] = CStringGetTextDatum(PQgetvalue(res, 0, 0));
		if (!nulls[1])
			values[1] = CStringGetTextDatum(PQgetvalue(res, 0, 1));
		if (!nulls[2])
			values[2] = Int32GetDatum(atoi(PQgetvalue(res, 0, 2)));
		if (!nulls[3])
			values[3] = BoolGetDatum(PQgetvalue(res, 0, 3)[0] == 't');
		if (!nulls[4])
			values[4] = CStringGetTextDatum(PQgetvalue(res, 0, 4));
		if (!nulls[5])
			values[5] = BoolGetDatum(PQgetvalue(res, 0, 5)[0] == 't');
	}
	PG_FINALLY();
	{
		if (res)
			PQclear(res);
		PQfinish(conn);
	}
	PG_END_TRY();

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/*
 * Append a connection option value, quoted as libpq's parser expects.
 */
static void
append_conn_value(StringInfo buf, const char *val)
{
	const char *p;
	bool		plain = (*val != '\0');

	for (p = val; *p; p++)
		if (*p == ' ' || *p == '\'' || *p == '\\' || *p == '\t' || *p == '\n')
			plain = false;
	if (plain)
	{
		appendStringInfoString(buf, val);
		return;
	}
	appendStringInfoChar(buf, '\'');
	for (p = val; *p; p++)
	{
		if (*p == '\'' || *p == '\\')
			appendStringInfoChar(buf, '\\');
		appendStringInfoChar(buf, *p);
	}
	appendStringInfoChar(buf, '\'');
}

/*
 * folio_perf_data.conninfo_redact(conninfo text) RETURNS text: the
 * connection string as key=value pairs without its password (for the
 * folio_perf_targets view); NULL if it does not parse.  Every option libpq
 * marks as secret (dispchar "*": password, sslpassword) is left out.
 */
Datum
folio_perf_conninfo_redact(PG_FUNCTION_ARGS)
{
	char	   *conninfo = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *err = NULL;
	PQconninfoOption *opts = PQconninfoParse(conninfo, &err);
	PQconninfoOption *o;
	StringInfoData buf;

	if (opts == NULL)
	{
		if (err)
			PQfreemem(err);
		PG_RETURN_NULL();
	}
	initStringInfo(&buf);
	for (o = opts; o->keyword != NULL; o++)
	{
		/* secrets ("password", "sslpassword") are the options shown as '*' */
		if (o->val == NULL || (o->dispchar && o->dispchar[0] == '*'))
			continue;
		if (buf.len > 0)
			appendStringInfoChar(&buf, ' ');
		appendStringInfo(&buf, "%s=", o->keyword);
		append_conn_value(&buf, o->val);
	}
	PQconninfoFree(opts);
	PG_RETURN_TEXT_P(cstring_to_text(buf.data));
}
