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
 * closes it at once, so the next use reconnects.  Connections are made by
 * remote_conn.c, the layer the sampler uses too: the same options, the
 * rules for targets added by non-superusers, application_name and the
 * target's statement_timeout.
 *
 * Waiting.  libpq is used in non-blocking mode; every wait (resolving,
 * connecting, sending, waiting for the result) is bounded by
 * folio_perf.remote_timeout, so a target that is down, slow or silent fails
 * the call with a clear error after at most that long, and the backend
 * stays responsive to query cancel and termination meanwhile.
 *
 * Errors.  Failing to connect: ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQL-
 * CONNECTION (08001); a timeout or a connection lost during a query:
 * ERRCODE_CONNECTION_FAILURE (08006); an error raised by the target: its
 * own SQLSTATE; a connection string refused by the rules for non-
 * superusers: 2F003.  The target's name is in the message.  libpq's own
 * words (which say which hosts, ports and files exist) are in the detail
 * for superusers only; others get a generic detail, and the words go to
 * the server log.
 *
 * Secrets.  Connection strings are stored without their passwords
 * (folio_perf_data.target, in dumps) and the passwords apart
 * (folio_perf_data.target_secret, not in dumps); only the extension's owner
 * reads either, here through SPI; SQL callers pass a target id, never the
 * string.  A target is stored by target_store(), which is not SECURITY
 * DEFINER so that it knows who adds the target: one added by a non-
 * superuser is "restricted" (see remote_conn.c).
 *
 * Results.  Every result is checked before a value is read: the rows of
 * remote_query() must have exactly the caller's columns, by name, and are
 * converted by the types' input functions; remote_check()'s row must have
 * its columns, names and types.
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
PG_FUNCTION_INFO_V1(folio_perf_target_store);
PG_FUNCTION_INFO_V1(folio_perf_remote_explain);

/* One open connection of this transaction. */
typedef struct FPerfRemoteConn
{
	int32		target_id;
	FPerfConn	c;
	char	   *name;			/* in TopMemoryContext */
} FPerfRemoteConn;

#define FPERF_MAX_REMOTE_CONNS 16

static FPerfRemoteConn remote_conns[FPERF_MAX_REMOTE_CONNS];
static int	n_remote_conns = 0;
static bool xact_callback_registered = false;

/* ---- per-transaction connection cache (backends) ---- */

/*
 * Close one cached connection and forget it.
 */
static void
remote_forget(FPerfRemoteConn *rc)
{
	int			i = rc - remote_conns;

	fperf_conn_close(&rc->c);
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
 * Raise the error for a connection that failed (c->phase == FPC_FAILED).
 * libpq's words go to superusers, or else to the server log only.
 */
static void
conn_error(FPerfConn *c, const char *name, bool new_target)
{
	bool		show = superuser_arg(GetOuterUserId());
	const char *what = new_target ? "new remote target" : "remote target";

	switch (c->fail)
	{
		case FPF_INVALID:
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid connection string"),
					 errdetail_internal("%s", c->error),
					 errhint("Pass a libpq connection string such as 'host=db1 dbname=folio user=folio_perf_collector password=...'.")));
			break;
		case FPF_RULE:
			if (!show && c->detail[0] != '\0')
				ereport(LOG_SERVER_ONLY,
						(errmsg("refused the connection to %s \"%s\"", what, name),
						 errdetail_internal("%s", c->detail)));
			ereport(ERROR,
					(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
					 errmsg("%s", c->error),
					 errdetail("A target added by a non-superuser must have its password in the "
							   "connection string, ask for it, and use only host, port, dbname, user, "
							   "password, ssl and keepalive options."),
					 errhint("Put the password in the connection string, "
							 "or ask a superuser to add the target.")));
			break;
		default:
			if (!show && c->detail[0] != '\0')
				ereport(LOG_SERVER_ONLY,
						(errmsg("could not connect to %s \"%s\"", what, name),
						 errdetail_internal("%s", c->detail)));
			ereport(ERROR,
					(errcode(ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION),
					 errmsg("could not connect to %s \"%s\"", what, name),
					 errdetail_internal("%s", show && c->detail[0] != '\0' ? c->detail : c->error),
					 new_target ?
					 errhint("Check the connection string, and that the target is up and reachable from this server.") :
					 errhint("Check that the target is up and reachable from this server; "
							 "folio_perf_targets shows its connection string, "
							 "folio_perf.remote_timeout the time allowed.")));
			break;
	}
}

/*
 * What connecting to a target needs, read as the current user (the capture
 * runs as the extension's owner).  Errors if it does not exist or was
 * dropped.  The strings are palloc'd.
 */
static void
target_lookup(int32 target_id, FPerfTargetSpec *spec)
{
	Oid			argtypes[1] = {INT4OID};
	Datum		args[1];
	int			ret;
	MemoryContext cxt = CurrentMemoryContext;

	args[0] = Int32GetDatum(target_id);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	ret = SPI_execute_with_args(FPERF_TARGET_SQL " AND t.target_id OPERATOR(pg_catalog.=) $1",
								1, argtypes, args, NULL, true, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute_with_args failed: %d", ret);
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("remote target %d does not exist", target_id),
				 errhint("See folio_perf_targets for the targets that exist.")));
	{
		HeapTuple	tup = SPI_tuptable->vals[0];
		TupleDesc	desc = SPI_tuptable->tupdesc;
		MemoryContext old = MemoryContextSwitchTo(cxt);
		char	   *n = SPI_getvalue(tup, desc, 2);
		char	   *c = SPI_getvalue(tup, desc, 3);
		char	   *r = SPI_getvalue(tup, desc, 4);
		char	   *pw = SPI_getvalue(tup, desc, 5);
		char	   *sp = SPI_getvalue(tup, desc, 6);

		spec->name = pstrdup(n ? n : "");
		spec->conninfo = pstrdup(c ? c : "");
		spec->restricted = (r == NULL || r[0] != 'f');
		spec->password = pw ? pstrdup(pw) : NULL;
		spec->sslpassword = sp ? pstrdup(sp) : NULL;
		MemoryContextSwitchTo(old);
	}
	SPI_finish();
}

/* Overwrite and free a palloc'd secret. */
static void
forget_secret(const char *s)
{
	if (s)
	{
		memset((char *) s, 0, strlen(s));
		pfree((char *) s);
	}
}

/*
 * The connection of this transaction to a target, opened on first use.
 */
static FPerfRemoteConn *
remote_get(int32 target_id)
{
	FPerfRemoteConn *rc;
	FPerfTargetSpec spec;
	FPerfConn	c;
	int			i;

	for (i = 0; i < n_remote_conns; i++)
	{
		if (remote_conns[i].target_id == target_id)
		{
			if (PQstatus(remote_conns[i].c.conn) == CONNECTION_OK)
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

	target_lookup(target_id, &spec);
	memset(&c, 0, sizeof(c));
	(void) fperf_conn_start(&c, &spec, FPERF_REMOTE_APPNAME, fperf_remote_timeout,
							TopMemoryContext);
	forget_secret(spec.password);
	forget_secret(spec.sslpassword);
	if (!fperf_conn_wait(&c))
	{
		FPerfConn	failed = c;

		fperf_conn_close(&c);
		conn_error(&failed, spec.name, false);
	}

	rc = &remote_conns[n_remote_conns++];
	rc->target_id = target_id;
	rc->c = c;
	rc->name = MemoryContextStrdup(TopMemoryContext, spec.name);
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
	bool		lost = (PQstatus(rc->c.conn) != CONNECTION_OK);
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
	int			nfields = PQnfields(res);
	int			nwanted = 0;
	int			i;
	int			r;

	/* exactly the caller's columns, each once */
	for (i = 0; i < natts; i++)
		if (!TupleDescAttr(tupdesc, i)->attisdropped)
			nwanted++;
	if (nfields != nwanted)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("the result from remote target \"%s\" has %d columns, expected %d",
						name, nfields, nwanted)));
	for (i = 0; i < natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(tupdesc, i);
		const char *attname = NameStr(att->attname);
		Oid			infunc;
		int			j;

		colmap[i] = -1;
		if (att->attisdropped)
			continue;
		for (j = 0; j < nfields; j++)
		{
			const char *f = PQfname(res, j);

			if (f != NULL && strcmp(f, attname) == 0)
			{
				if (colmap[i] >= 0)
					ereport(ERROR,
							(errcode(ERRCODE_DATATYPE_MISMATCH),
							 errmsg("the result from remote target \"%s\" has column \"%s\" twice",
									name, attname)));
				colmap[i] = j;
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
	sql = fperf_remote_marked(text_to_cstring(PG_GETARG_TEXT_PP(1)));
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
		res = fperf_remote_exec(rc->c.conn, sql, nparams, params,
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

	PG_RETURN_INT32(PQserverVersion(rc->c.conn));
}

/* The row remote_check() reads, in this order. */
static const FPerfColumn check_columns[] = {
	{"datname", NAMEOID},
	{"rolname", NAMEOID},
	{"server_version_num", INT4OID},
	{"in_recovery", BOOLOID},
	{"pgss_schema", NAMEOID},
	{"read_all_stats", BOOLOID}
};

/*
 * folio_perf_data.remote_check(conninfo text, name text, OUT datname text,
 *	 OUT rolname text, OUT server_version_num int, OUT in_recovery boolean,
 *	 OUT pgss_schema text, OUT read_all_stats boolean): connect with a
 *	 connection string (not yet stored) and report what
 *	 folio_perf_target_add() checks.  Not SECURITY DEFINER: a caller that
 *	 is not a superuser gets the rules of restricted targets.
 */
Datum
folio_perf_remote_check(PG_FUNCTION_ARGS)
{
	char	   *conninfo = text_to_cstring(PG_GETARG_TEXT_PP(0));
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(1));
	FPerfTargetSpec spec;
	FPerfConn	c;
	char	   *err = NULL;
	PGresult   *volatile res = NULL;
	bool		timed_out;
	TupleDesc	tupdesc;
	Datum		values[6];
	bool		nulls[6];
	int			i;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");

	memset(&spec, 0, sizeof(spec));
	spec.name = name;
	spec.conninfo = conninfo;
	spec.restricted = !superuser();
	memset(&c, 0, sizeof(c));
	if (!fperf_conn_start(&c, &spec, FPERF_REMOTE_APPNAME, fperf_remote_timeout,
						  CurrentMemoryContext) || !fperf_conn_wait(&c))
	{
		FPerfConn	failed = c;

		fperf_conn_close(&c);
		conn_error(&failed, name, true);
	}

	PG_TRY();
	{
		char		why[256];

		res = fperf_remote_exec(c.conn,
								FPERF_REMOTE_SELECT
								"pg_catalog.current_database() AS datname,"
								" current_user AS rolname,"
								" pg_catalog.current_setting('server_version_num')::int AS server_version_num,"
								" pg_catalog.pg_is_in_recovery() AS in_recovery,"
								" (SELECT n.nspname FROM pg_catalog.pg_extension e"
								"  JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace"
								"  WHERE e.extname = 'pg_stat_statements') AS pgss_schema,"
								" pg_catalog.pg_has_role(current_user, 'pg_read_all_stats', 'USAGE') AS read_all_stats",
								0, NULL, fperf_remote_timeout, &err, &timed_out);
		if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
			ereport(ERROR,
					(errcode(ERRCODE_CONNECTION_FAILURE),
					 errmsg("could not query new remote target \"%s\"", name),
					 errdetail_internal("%s", res ? PQresultErrorMessage(res) : err)));
		if (!fperf_result_shape(res, check_columns, lengthof(check_columns), 1,
								why, sizeof(why)) || PQntuples(res) != 1)
			ereport(ERROR,
					(errcode(ERRCODE_PROTOCOL_VIOLATION),
					 errmsg("unexpected answer from new remote target \"%s\"", name),
					 errdetail_internal("%s", PQntuples(res) != 1 &&
										PQnfields(res) == lengthof(check_columns) ?
										"not one row" : why)));
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
			values[2] = DirectFunctionCall1(int4in, CStringGetDatum(PQgetvalue(res, 0, 2)));
		if (!nulls[3])
			values[3] = DirectFunctionCall1(boolin, CStringGetDatum(PQgetvalue(res, 0, 3)));
		if (!nulls[4])
			values[4] = CStringGetTextDatum(PQgetvalue(res, 0, 4));
		if (!nulls[5])
			values[5] = DirectFunctionCall1(boolin, CStringGetDatum(PQgetvalue(res, 0, 5)));
	}
	PG_FINALLY();
	{
		if (res)
			PQclear(res);
		fperf_conn_close(&c);
	}
	PG_END_TRY();

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}

/*
 * folio_perf_data.target_store(name text, conninfo text) RETURNS int:
 *	 store a new target (folio_perf_target_add calls it after its checks).
 *	 Not SECURITY DEFINER, so that superuser() is the caller's: a target
 *	 stored by a non-superuser is restricted, and its connection string
 *	 must pass the rules of restricted targets.  The rows are written as
 *	 the owner of folio_perf_data.target (the extension's owner), in a
 *	 restricted security context; the password goes to target_secret.
 */
Datum
folio_perf_target_store(PG_FUNCTION_ARGS)
{
	char	   *name;
	char	   *conninfo;
	char	   *stripped;
	char	   *password;
	char	   *sslpassword;
	char	   *why;
	FPerfConnFail fail;
	bool		restricted = !superuser();
	Oid			owner;
	Oid			save_userid;
	int			save_sec;
	bool		isnull;
	volatile int32 id = 0;

	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("name and conninfo must not be null")));
	name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	conninfo = text_to_cstring(PG_GETARG_TEXT_PP(1));
	why = fperf_conn_check_options(conninfo, NULL, restricted, &fail);
	if (why != NULL && fail == FPF_INVALID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid connection string"),
				 errdetail_internal("%s", why),
				 errhint("Pass a libpq connection string such as 'host=db1 dbname=folio user=folio_perf_collector password=...'.")));
	if (why != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_S_R_E_PROHIBITED_SQL_STATEMENT_ATTEMPTED),
				 errmsg("%s", why),
				 errhint("Put the password in the connection string, "
						 "or ask a superuser to add the target.")));
	stripped = fperf_conninfo_without_secrets(conninfo, &password, &sslpassword);
	memset(conninfo, 0, strlen(conninfo));

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute("SELECT c.relowner FROM pg_catalog.pg_class c"
					" WHERE c.oid OPERATOR(pg_catalog.=) 'folio_perf_data.target'::pg_catalog.regclass",
					true, 1) != SPI_OK_SELECT || SPI_processed != 1)
		elog(ERROR, "folio_perf_data.target not found");
	owner = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));

	GetUserIdAndSecContext(&save_userid, &save_sec);
	SetUserIdAndSecContext(owner, save_sec | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	PG_TRY();
	{
		Datum		args[4];
		char		nulls[4] = {' ', ' ', ' ', ' '};
		Oid			types[4] = {TEXTOID, TEXTOID, BOOLOID, TEXTOID};
		int			ret;

		ret = SPI_execute("SELECT pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('folio_perf_target'), 0)",
						  false, 0);
		if (ret != SPI_OK_SELECT)
			elog(ERROR, "SPI_execute failed: %d", ret);
		args[0] = CStringGetTextDatum(name);
		ret = SPI_execute_with_args("SELECT 1 FROM folio_perf_data.target x"
									" WHERE x.name OPERATOR(pg_catalog.=) $1 AND x.dropped_at IS NULL",
									1, types, args, nulls, false, 1);
		if (ret != SPI_OK_SELECT)
			elog(ERROR, "SPI_execute_with_args failed: %d", ret);
		if (SPI_processed > 0)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_OBJECT),
					 errmsg("remote target \"%s\" already exists", name),
					 errhint("Drop it first with folio_perf_target_drop(name).")));
		args[1] = CStringGetTextDatum(stripped);
		args[2] = BoolGetDatum(restricted);
		ret = SPI_execute_with_args("INSERT INTO folio_perf_data.target (name, conninfo, restricted)"
									" VALUES ($1, $2, $3) RETURNING target_id",
									3, types, args, nulls, false, 1);
		if (ret != SPI_OK_INSERT_RETURNING || SPI_processed != 1)
			elog(ERROR, "SPI_execute_with_args failed: %d", ret);
		id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		if (password != NULL || sslpassword != NULL)
		{
			args[0] = Int32GetDatum(id);
			types[0] = INT4OID;
			args[1] = password ? CStringGetTextDatum(password) : (Datum) 0;
			nulls[1] = password ? ' ' : 'n';
			types[1] = TEXTOID;
			args[2] = sslpassword ? CStringGetTextDatum(sslpassword) : (Datum) 0;
			nulls[2] = sslpassword ? ' ' : 'n';
			types[2] = TEXTOID;
			ret = SPI_execute_with_args("INSERT INTO folio_perf_data.target_secret"
										" (target_id, password, sslpassword) VALUES ($1, $2, $3)",
										3, types, args, nulls, false, 0);
			if (ret != SPI_OK_INSERT)
				elog(ERROR, "SPI_execute_with_args failed: %d", ret);
		}
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_userid, save_sec);
	}
	PG_END_TRY();
	forget_secret(password);
	forget_secret(sslpassword);
	SPI_finish();
	PG_RETURN_INT32(id);
}

/*
 * folio_perf_data.conninfo_redact(conninfo text) RETURNS text: the
 * connection string as key=value pairs without its secrets (for the
 * folio_perf_targets view); NULL if it does not parse.  Every option libpq
 * marks as secret (dispchar "*": password, sslpassword) is left out.
 */
Datum
folio_perf_conninfo_redact(PG_FUNCTION_ARGS)
{
	char	   *s = fperf_conninfo_without_secrets(text_to_cstring(PG_GETARG_TEXT_PP(0)),
												  NULL, NULL);

	if (s == NULL)
		PG_RETURN_NULL();
	PG_RETURN_TEXT_P(cstring_to_text(s));
}

/*
 * Whether EXPLAIN can plan a statement text: it begins (after white space
 * and comments) with one of the keywords of a plannable statement, and has
 * no ';' (a text of pg_stat_statements is one statement; one with a ';' in
 * an identifier or comment is left alone rather than sent as a simple
 * query that could hold two).  NULL if it can, else why not.
 */
static const char *
explain_refusal(const char *q)
{
	static const char *const kw[] = {"select", "insert", "update", "delete",
	"with", "values", "table", "merge"};
	const char *p = q;
	int			len;
	int			i;

	for (;;)
	{
		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '(')
			p++;
		if (p[0] == '/' && p[1] == '*')
		{
			const char *e = strstr(p + 2, "*/");

			if (e == NULL)
				return "the statement text is cut inside a comment";
			p = e + 2;
		}
		else if (p[0] == '-' && p[1] == '-')
		{
			while (*p && *p != '\n')
				p++;
		}
		else
			break;
	}
	if (strchr(q, ';') != NULL)
		return "the statement text has a ';'";
	for (len = 0; (p[len] >= 'a' && p[len] <= 'z') || (p[len] >= 'A' && p[len] <= 'Z'); len++)
		;
	for (i = 0; i < lengthof(kw); i++)
		if (len == (int) strlen(kw[i]) && pg_strncasecmp(p, kw[i], len) == 0)
			return NULL;
	return "not a statement EXPLAIN plans (SELECT, INSERT, UPDATE, DELETE, MERGE, VALUES, TABLE or WITH)";
}

/*
 * One query on an explain connection whose failure (an error the target
 * raised, the connection still good) is a value, not an error: returns the
 * result, or NULL with *why set.  Raises for timeouts and lost
 * connections, as remote_query() does.
 */
static PGresult *
explain_exec(FPerfRemoteConn *rc, const char *sql, bool simple,
			 int nparams, const char *const *params, char **why)
{
	PGresult   *res;
	char	   *err;
	bool		timed_out;
	int			nresults = 1;

	*why = NULL;
	PG_TRY();
	{
		if (simple)
			res = fperf_remote_exec_simple(rc->c.conn, sql, fperf_remote_timeout,
										   &err, &timed_out, &nresults);
		else
			res = fperf_remote_exec(rc->c.conn, sql, nparams, params,
									fperf_remote_timeout, &err, &timed_out);
	}
	PG_CATCH();
	{
		remote_forget(rc);
		PG_RE_THROW();
	}
	PG_END_TRY();

	if (res != NULL && PQresultStatus(res) == PGRES_FATAL_ERROR && !timed_out &&
		PQstatus(rc->c.conn) == CONNECTION_OK)
	{
		const char *st = PQresultErrorField(res, PG_DIAG_SQLSTATE);
		const char *m = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);

		if (st && strncmp(st, "08", 2) != 0 && strcmp(st, "57014") != 0)
		{
			*why = psprintf("%s (SQLSTATE %s)", m ? m : "error", st);
			PQclear(res);
			return NULL;
		}
	}
	if (res == NULL || (PQresultStatus(res) != PGRES_TUPLES_OK &&
						PQresultStatus(res) != PGRES_COMMAND_OK))
		remote_query_error(rc, res, err, timed_out);
	if (nresults != 1)
	{
		PQclear(res);
		*why = psprintf("%d results where one was expected", nresults);
		return NULL;
	}
	return res;
}

/* The rows of a one-column result joined by newlines. */
static char *
result_lines(PGresult *res)
{
	StringInfoData s;
	int			r;

	initStringInfo(&s);
	for (r = 0; r < PQntuples(res); r++)
	{
		if (r > 0)
			appendStringInfoChar(&s, '\n');
		appendStringInfoString(&s, PQgetvalue(res, r, 0));
	}
	return s.data;
}

/*
 * folio_perf_data.remote_explain(target_id int, query text, search_path
 *	 text, role text, OUT plan_text text, OUT plan_json text, OUT error
 *	 text): the plan a target would use now for a statement text of its
 *	 pg_stat_statements ($n placeholders), by EXPLAIN (GENERIC_PLAN) in text
 *	 and in JSON, with search_path set for it (NULL: the collector's) and,
 *	 where the collector is a member of role (the statement's), as that
 *	 role (EXPLAIN checks the privileges the statement needs); both set
 *	 back after.
 *	 Never ANALYZE: nothing of the statement runs.  A statement the target
 *	 cannot plan (a relation of another search_path, a type that cannot be
 *	 inferred, a target before 16) gives NULL plans and the reason in
 *	 error; a target that is down or silent raises as remote_query() does.
 */
Datum
folio_perf_remote_explain(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc;
	Datum		values[3];
	bool		nulls[3] = {true, true, true};
	char	   *query;
	const char *refusal;
	char	   *why = NULL;
	char	   *old_path = NULL;
	bool		as_role = false;
	FPerfRemoteConn *rc = NULL;
	PGresult   *res;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("target_id and query must not be null")));
	query = text_to_cstring(PG_GETARG_TEXT_PP(1));

	refusal = explain_refusal(query);
	if (refusal == NULL)
	{
		rc = remote_get(PG_GETARG_INT32(0));
		if (PQserverVersion(rc->c.conn) < 160000)
			refusal = psprintf("PostgreSQL %d has no EXPLAIN (GENERIC_PLAN) (16 and later)",
							   PQserverVersion(rc->c.conn) / 10000);
	}
	if (refusal != NULL)
	{
		values[2] = CStringGetTextDatum(refusal);
		nulls[2] = false;
		PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
														  values, nulls)));
	}

	/* the statement's role where the collector is a member of it */
	{
		const char *p[2];

		p[0] = PG_ARGISNULL(2) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(2));
		p[1] = PG_ARGISNULL(3) ? NULL : text_to_cstring(PG_GETARG_TEXT_PP(3));
		res = explain_exec(rc, FPERF_REMOTE_SELECT
						   "pg_catalog.current_setting('search_path') AS old,"
						   " pg_catalog.set_config('search_path', coalesce($1::pg_catalog.text,"
						   " pg_catalog.current_setting('search_path')), false) AS path,"
						   " CASE WHEN $2::pg_catalog.text IS NOT NULL"
						   " AND $2::pg_catalog.text OPERATOR(pg_catalog.<>) current_user::pg_catalog.text"
						   " AND EXISTS (SELECT FROM pg_catalog.pg_roles r"
						   "  WHERE r.rolname::pg_catalog.text OPERATOR(pg_catalog.=) $2::pg_catalog.text)"
						   " AND pg_catalog.pg_has_role($2::pg_catalog.name, 'MEMBER')"
						   " THEN pg_catalog.set_config('role', $2::pg_catalog.text, false) END AS role",
						   false, 2, p, &why);
		if (res != NULL)
		{
			if (PQntuples(res) == 1 && PQnfields(res) == 3)
			{
				old_path = pstrdup(PQgetvalue(res, 0, 0));
				as_role = !PQgetisnull(res, 0, 2);
			}
			else
				why = pstrdup("unexpected answer to setting search_path");
			PQclear(res);
		}
	}

	if (why == NULL)
	{
		res = explain_exec(rc, fperf_remote_marked(psprintf("EXPLAIN (GENERIC_PLAN, FORMAT JSON) %s", query)),
						   true, 0, NULL, &why);
		if (res != NULL)
		{
			if (PQnfields(res) == 1 && PQntuples(res) >= 1)
			{
				values[1] = CStringGetTextDatum(result_lines(res));
				nulls[1] = false;
			}
			else
				why = pstrdup("unexpected answer to EXPLAIN");
			PQclear(res);
		}
	}
	if (why == NULL)
	{
		res = explain_exec(rc, fperf_remote_marked(psprintf("EXPLAIN (GENERIC_PLAN) %s", query)),
						   true, 0, NULL, &why);
		if (res != NULL)
		{
			if (PQnfields(res) == 1 && PQntuples(res) >= 1)
			{
				values[0] = CStringGetTextDatum(result_lines(res));
				nulls[0] = false;
			}
			else
				why = pstrdup("unexpected answer to EXPLAIN");
			PQclear(res);
		}
	}

	if (old_path != NULL)
	{
		const char *p[1];
		char	   *why2;

		p[0] = old_path;
		res = explain_exec(rc, as_role ?
						   FPERF_REMOTE_SELECT
						   "pg_catalog.set_config('role', 'none', false) AS role,"
						   " pg_catalog.set_config('search_path', $1::pg_catalog.text, false) AS search_path" :
						   FPERF_REMOTE_SELECT
						   "pg_catalog.set_config('search_path', $1::pg_catalog.text, false) AS search_path",
						   false, 1, p, &why2);
		if (res == NULL)
		{
			/* the connection's role or search_path is unknown now: drop it */
			remote_forget(rc);
		}
		else
			PQclear(res);
	}

	if (why != NULL)
	{
		values[0] = values[1] = (Datum) 0;
		nulls[0] = nulls[1] = true;
		values[2] = CStringGetTextDatum(why);
		nulls[2] = false;
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc),
													  values, nulls)));
}
