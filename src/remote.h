/*-------------------------------------------------------------------------
 *
 * remote.h
 *		The one libpq layer (remote_conn.c): connections to remote targets
 *		for the capture's remote queries (remote.c) and for the sampler
 *		(rsampler.c), with the same options, checks and set-up for both.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/remote.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef FOLIO_PERF_REMOTE_H
#define FOLIO_PERF_REMOTE_H

#include "folio_perf.h"

#include "datatype/timestamp.h"
#include "libpq-fe.h"

/*
 * Every statement sent to a target starts with this comment, so that the
 * target's pg_stat_activity shows whose it is, and carries it again after
 * its first keyword: from PostgreSQL 18 the text pg_stat_statements keeps
 * starts at the statement's first token, without a leading comment, and
 * folio_perf's reports treat a statement naming folio_perf_ as
 * housekeeping.  FPERF_REMOTE_SELECT begins a marked SELECT;
 * fperf_remote_marked() marks any statement.
 */
#define FPERF_REMOTE_MARK "/* folio_perf_remote */ "
#define FPERF_REMOTE_SELECT FPERF_REMOTE_MARK "SELECT " FPERF_REMOTE_MARK

/* application_name of folio_perf's sessions on a target (always set). */
#define FPERF_REMOTE_APPNAME "folio_perf"
#define FPERF_SAMPLER_APPNAME "folio_perf sampler"

/*
 * The targets and what connecting to one needs (the capture appends
 * "AND t.target_id = $1", the sampler "AND t.enabled ORDER BY ...").
 * Columns: target_id, name, conninfo, restricted, password, sslpassword,
 * vcpus (read by name from the row: a 1.0.0 schema, not yet updated, has
 * no such column, and the library must work with it).
 */
#define FPERF_TARGET_SQL \
	"SELECT t.target_id, t.name, t.conninfo, t.restricted, s.password, s.sslpassword," \
	" (pg_catalog.to_jsonb(t) OPERATOR(pg_catalog.->>) 'vcpus')::pg_catalog.int4 AS vcpus" \
	" FROM folio_perf_data.target t" \
	" LEFT JOIN folio_perf_data.target_secret s ON s.target_id OPERATOR(pg_catalog.=) t.target_id" \
	" WHERE t.dropped_at IS NULL"

/* What connecting to a target needs. */
typedef struct FPerfTargetSpec
{
	const char *name;
	const char *conninfo;		/* libpq string or URI; may hold a password */
	const char *password;		/* overrides the string's; NULL: none */
	const char *sslpassword;
	bool		restricted;		/* added by a non-superuser: see remote_conn.c */
} FPerfTargetSpec;

typedef enum FPerfConnPhase
{
	FPC_CLOSED,
	FPC_RESOLVING,				/* host names being looked up off the loop */
	FPC_CONNECTING,
	FPC_SETUP,					/* the set-up statement in flight */
	FPC_READY,
	FPC_FAILED
} FPerfConnPhase;

typedef enum FPerfConnFail
{
	FPF_NONE,
	FPF_INVALID,				/* the connection string does not parse */
	FPF_RULE,					/* refused by the rules for restricted targets */
	FPF_CONNECT,				/* libpq could not connect */
	FPF_TIMEOUT,				/* no answer within the time allowed */
	FPF_SETUP					/* the set-up statement failed or looked wrong */
} FPerfConnFail;

typedef struct FPerfResolve FPerfResolve;

/* One connection to a target; zeroed = closed. */
typedef struct FPerfConn
{
	PGconn	   *conn;
	FPerfConnPhase phase;
	FPerfConnFail fail;
	bool		restricted;
	PostgresPollingStatusType poll;
	TimestampTz deadline;
	int			timeout_ms;
	MemoryContext cxt;			/* options kept until libpq has them */
	const char **keywords;
	const char **values;
	FPerfResolve *resolve;
	PGresult   *setup_res;		/* the set-up's answer, until complete */
	char		error[256];		/* why it failed, safe to show anyone */
	char		detail[512];	/* libpq's words: superusers and the log only */
} FPerfConn;

/*
 * Start connecting (never blocks: host names are resolved off the caller's
 * loop).  Returns false, with c->phase = FPC_FAILED, when the options are
 * refused.  parent: where the connection's own small context lives.
 */
extern bool fperf_conn_start(FPerfConn *c, const FPerfTargetSpec *spec,
							 const char *appname, int timeout_ms,
							 MemoryContext parent);

/* Advance as far as possible without waiting; the new phase. */
extern FPerfConnPhase fperf_conn_poll(FPerfConn *c);

/* Advance until ready or failed, waiting on the latch (interruptible). */
extern bool fperf_conn_wait(FPerfConn *c);

/* Close and forget everything (safe on a closed connection). */
extern void fperf_conn_close(FPerfConn *c);

/* The failure as one line for a status shown to readers. */
extern const char *fperf_conn_public_error(const FPerfConn *c);

/*
 * Check the options of a connection string for a target (restricted: the
 * rules for non-superusers).  NULL if fine, else why (palloc'd); *fail
 * says which kind.
 */
extern char *fperf_conn_check_options(const char *conninfo, const char *password,
									  bool restricted, FPerfConnFail *fail);

/* The connection string without its secrets, NULL if it does not parse. */
extern char *fperf_conninfo_without_secrets(const char *conninfo,
											char **password,
											char **sslpassword);

/*
 * Run one statement with text parameters, waiting at most timeout_ms; the
 * last result, or NULL with *err (and *timed_out) set.
 */
/* sql marked as folio_perf's (both places), palloc'd */
extern char *fperf_remote_marked(const char *sql);

extern PGresult *fperf_remote_exec(PGconn *conn, const char *sql, int nparams,
								   const char *const *params, int timeout_ms,
								   char **err, bool *timed_out);

/*
 * The same as a simple query (no parameters; several statements give
 * several results, *nresults of them, the last returned).
 */
extern PGresult *fperf_remote_exec_simple(PGconn *conn, const char *sql,
										  int timeout_ms, char **err,
										  bool *timed_out, int *nresults);

/* A column of a remote result: its name and type (InvalidOid: any). */
typedef struct FPerfColumn
{
	const char *name;
	Oid			type;
} FPerfColumn;

/*
 * Is res a row set of exactly these columns, with at most max_rows rows?
 * If not, false with the reason in err.  Nothing may read a value of a
 * remote result before this said yes.
 */
extern bool fperf_result_shape(const PGresult *res, const FPerfColumn *cols,
							   int ncols, int max_rows, char *err, size_t errlen);

#endif							/* FOLIO_PERF_REMOTE_H */
