/*-------------------------------------------------------------------------
 *
 * remote.h
 *		libpq helpers of remote.c (remote queries of SQL callers, checks of
 *		new targets); rsampler.c, the sampler's connections to targets,
 *		includes it for libpq.
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

#include "libpq-fe.h"

/*
 * Start a connection and wait for it within timeout_ms (interruptible);
 * NULL with *err set on failure.  The connection is left non-blocking.
 */
extern PGconn *fperf_remote_connect_start(const char *conninfo, int timeout_ms,
										  char **err);

/*
 * Run one query with text parameters, waiting at most timeout_ms; the last
 * result, or NULL with *err (and *timed_out) set.
 */
extern PGresult *fperf_remote_exec(PGconn *conn, const char *sql, int nparams,
								   const char *const *params, int timeout_ms,
								   char **err, bool *timed_out);

/* The query that sets up a new connection ($1 = statement_timeout in ms). */
extern const char *fperf_remote_setup_sql(void);

#endif							/* FOLIO_PERF_REMOTE_H */
