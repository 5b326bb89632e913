/*-------------------------------------------------------------------------
 *
 * remote_conn.c
 *		The one libpq layer: every connection folio_perf makes to a remote
 *		target (the capture's remote queries in remote.c, the sampler's
 *		kept connections in rsampler.c, the check of folio_perf_target_add)
 *		is made here, with the same options, checks and set-up.
 *
 * Options.  The stored connection string is parsed with PQconninfoParse()
 * and handed to libpq as keyword/value arrays (never expanded again), with
 * the target's stored password and application_name set to folio_perf's
 * marker ("folio_perf" for snapshots, "folio_perf sampler" for the
 * sampler), so that folio_perf's sessions on a target are always
 * recognisable.
 *
 * Restricted targets.  A target added by a role that is not a superuser is
 * "restricted", and EVERY connection to it (not only the check when it was
 * added: DNS and multi-host strings can lead somewhere else later) follows
 * the rules of dblink and postgres_fdw, checked before anything is sent:
 *	- the password is in the connection string itself, so that libpq never
 *	  reads a .pgpass file or PGPASSWORD of the server's OS user;
 *	- only the keywords of allowed_keywords[] are accepted: no passfile,
 *	  service, ssl key/certificate/CRL files, options, Kerberos settings or
 *	  requirepeer (each of them reads files or credentials of the server);
 *	  GSS encryption is off;
 *	- after authentication the server must have asked for the password
 *	  (PQconnectionUsedPassword), so that the repository server's own trust,
 *	  peer or certificate authentication is never borrowed.
 * Why a connection failed (libpq's message: which hosts, ports and files
 * exist) is kept apart in detail[], for superusers and the server log only.
 *
 * Host names.  libpq resolves host names synchronously inside
 * PQconnectStartParams(); a slow DNS server would stop the sampler's
 * loop.  So names are resolved here first, by a short-lived thread that
 * calls getaddrinfo() and nothing else (all signals blocked, no PostgreSQL
 * function, malloc'd memory only), while the caller polls; the addresses
 * are then given to libpq as hostaddr, with host kept for TLS
 * verification.  Each address of a name becomes one entry of libpq's host
 * list, so that all of them are tried in order as libpq would.  A string
 * with hostaddr of its own, socket directories and numeric addresses need
 * no lookup.  A lookup that outlasts folio_perf.remote_timeout fails the
 * connection; its thread finishes on its own and frees what it used.
 *
 * Set-up.  Once connected, one statement sets statement_timeout to
 * folio_perf.remote_timeout (so that the target stops working on an
 * abandoned statement) and search_path to pg_catalog plus the schema of
 * pg_stat_statements.  Its answer is checked like every remote result.
 *
 * Results.  A target may be broken or malicious: fperf_result_shape()
 * checks the number, names and types of the columns (and the number of
 * rows) before anything reads a value.
 *
 * Copyright (c) 2026, folio_perf developers
 *
 * IDENTIFICATION
 *	  src/remote_conn.c
 *
 *-------------------------------------------------------------------------
 */
#include "remote.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "pgstat.h"
#include "port/atomics.h"
#include "storage/latch.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

/* GUC: time allowed to connect and for each statement, ms */
int			fperf_remote_timeout = 10000;

/* Most addresses of one host name that are tried. */
#define FPERF_MAX_ADDRS 8

/* Most entries in a connection string's host list. */
#define FPERF_MAX_HOSTS 16

/* How often a caller that waits looks at a host name lookup, ms. */
#define FPERF_RESOLVE_POLL_MS 10

/*
 * Keywords a restricted target's connection string may use.  Everything
 * else (passfile, service, sslcert, sslkey, sslrootcert, sslcrl,
 * sslcrldir, sslpassword, options, krbsrvname, gsslib, gssencmode,
 * requirepeer, replication, and keywords of newer libpq versions) reads
 * the server's files or credentials, or is not needed, and is refused.
 * application_name is accepted and replaced by folio_perf's marker.
 */
static const char *const allowed_keywords[] = {
	"host", "hostaddr", "port", "dbname", "user", "password",
	"connect_timeout", "client_encoding", "application_name",
	"keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count",
	"tcp_user_timeout", "sslmode", "sslcompression", "sslsni",
	"ssl_min_protocol_version", "ssl_max_protocol_version", "channel_binding",
	"target_session_attrs", "load_balance_hosts", "require_auth",
	"sslnegotiation",
	NULL
};

/*
 * Define folio_perf.remote_timeout (called from _PG_init, preloaded or not).
 * Superuser only: a long timeout lets a slow target hold a snapshot's lock
 * and the caller's backend that long.
 */
void
fperf_remote_define_gucs(void)
{
	DefineCustomIntVariable("folio_perf.remote_timeout",
							"Time allowed to connect to a remote target and for each statement there.",
							"A target that does not answer within this time makes its "
							"snapshot fail; the sampler retries later. Also sent to the "
							"target as statement_timeout.",
							&fperf_remote_timeout,
							10000,
							100,
							600 * 1000,
							PGC_SUSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);
}

/* ---- host name lookups off the caller's loop ---- */

#define RESOLVE_RUNNING		0
#define RESOLVE_DONE		1
#define RESOLVE_ABANDONED	2

/*
 * One lookup of every name of a host list.  Shared by the caller and its
 * thread, malloc'd; whoever of the two finishes second frees it.
 */
struct FPerfResolve
{
	pg_atomic_uint32 state;
	int			nhosts;
	char	   *hosts[FPERF_MAX_HOSTS]; /* names; NULL: no lookup needed */
	int			naddrs[FPERF_MAX_HOSTS];
	char		addrs[FPERF_MAX_HOSTS][FPERF_MAX_ADDRS][INET6_ADDRSTRLEN];
	char		error[256];		/* the first name that failed */
};

static void
resolve_free(FPerfResolve *r)
{
	int			i;

	for (i = 0; i < r->nhosts; i++)
		free(r->hosts[i]);
	free(r);
}

/* The thread: getaddrinfo() for each name, nothing else. */
static void *
resolve_thread(void *arg)
{
	FPerfResolve *r = (FPerfResolve *) arg;
	uint32		expected = RESOLVE_RUNNING;
	int			i;

	for (i = 0; i < r->nhosts; i++)
	{
		struct addrinfo hints;
		struct addrinfo *res = NULL;
		struct addrinfo *a;
		int			rc;

		if (r->hosts[i] == NULL)
			continue;
		memset(&hints, 0, sizeof(hints));
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		rc = getaddrinfo(r->hosts[i], NULL, &hints, &res);
		if (rc != 0)
		{
			if (r->error[0] == '\0')
				snprintf(r->error, sizeof(r->error),
						 "could not translate host name \"%s\" to address: %s",
						 r->hosts[i], gai_strerror(rc));
			continue;
		}
		for (a = res; a != NULL && r->naddrs[i] < FPERF_MAX_ADDRS; a = a->ai_next)
		{
			char	   *buf = r->addrs[i][r->naddrs[i]];
			int			j;
			bool		dup = false;

			if ((a->ai_family != AF_INET && a->ai_family != AF_INET6) ||
				getnameinfo(a->ai_addr, a->ai_addrlen, buf, INET6_ADDRSTRLEN,
							NULL, 0, NI_NUMERICHOST) != 0)
				continue;
			for (j = 0; j < r->naddrs[i]; j++)
				if (strcmp(r->addrs[i][j], buf) == 0)
					dup = true;
			if (!dup)
				r->naddrs[i]++;
		}
		freeaddrinfo(res);
	}

	if (!pg_atomic_compare_exchange_u32(&r->state, &expected, RESOLVE_DONE))
		resolve_free(r);		/* the caller gave up on it */
	return NULL;
}

/* Give up a lookup: freed now if done, else by its thread. */
static void
resolve_abandon(FPerfResolve *r)
{
	uint32		expected = RESOLVE_RUNNING;

	if (!pg_atomic_compare_exchange_u32(&r->state, &expected, RESOLVE_ABANDONED))
		resolve_free(r);
}

/* Is this entry of a host list a socket directory or a numeric address? */
static bool
host_needs_lookup(const char *h)
{
	unsigned char buf[sizeof(struct in6_addr)];

	if (h[0] == '\0' || h[0] == '/' || h[0] == '@')
		return false;
	if (inet_pton(AF_INET, h, buf) == 1 || inet_pton(AF_INET6, h, buf) == 1)
		return false;
	return true;
}

/* Split a comma-separated libpq list (no quoting in host lists). */
static List *
split_list(const char *s)
{
	List	   *l = NIL;
	const char *p = s;

	for (;;)
	{
		const char *comma = strchr(p, ',');
		int			len = comma ? comma - p : strlen(p);

		l = lappend(l, pnstrdup(p, len));
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	return l;
}

/* The index of a keyword in the connection's arrays, or -1. */
static int
option_index(FPerfConn *c, const char *kw)
{
	int			i;

	for (i = 0; c->keywords[i] != NULL; i++)
		if (strcmp(c->keywords[i], kw) == 0)
			return i;
	return -1;
}

/* ---- options ---- */

static bool
keyword_allowed(const char *kw)
{
	int			i;

	for (i = 0; allowed_keywords[i] != NULL; i++)
		if (strcmp(allowed_keywords[i], kw) == 0)
			return true;
	return false;
}

/*
 * Check the options of a connection string (with password, if given,
 * replacing the string's).  NULL if fine, else why, palloc'd.
 */
char *
fperf_conn_check_options(const char *conninfo, const char *password,
						 bool restricted, FPerfConnFail *fail)
{
	char	   *perr = NULL;
	PQconninfoOption *opts = PQconninfoParse(conninfo, &perr);
	PQconninfoOption *o;
	bool		has_password = (password != NULL && password[0] != '\0');
	char	   *why = NULL;

	*fail = FPF_NONE;
	if (opts == NULL)
	{
		*fail = FPF_INVALID;
		why = pstrdup(perr ? perr : "out of memory");
		if (perr)
			PQfreemem(perr);
		/* one line */
		while (strlen(why) > 0 && why[strlen(why) - 1] == '\n')
			why[strlen(why) - 1] = '\0';
		return why;
	}
	for (o = opts; o->keyword != NULL; o++)
	{
		if (o->val == NULL || o->val[0] == '\0')
			continue;
		if (strcmp(o->keyword, "password") == 0)
			has_password = true;
		if (restricted && !keyword_allowed(o->keyword) && why == NULL)
		{
			*fail = FPF_RULE;
			why = psprintf("connection option \"%s\" is not allowed for a target added by a non-superuser",
						   o->keyword);
		}
	}
	PQconninfoFree(opts);
	if (why == NULL && restricted && !has_password)
	{
		*fail = FPF_RULE;
		why = pstrdup("password is required");
	}
	return why;
}

/*
 * The connection string as key=value pairs without its secrets (password,
 * sslpassword: the options libpq shows as '*'), which are returned apart
 * (palloc'd, NULL if absent).  NULL if it does not parse.
 */
char *
fperf_conninfo_without_secrets(const char *conninfo, char **password,
							   char **sslpassword)
{
	char	   *perr = NULL;
	PQconninfoOption *opts = PQconninfoParse(conninfo, &perr);
	PQconninfoOption *o;
	StringInfoData buf;

	if (password)
		*password = NULL;
	if (sslpassword)
		*sslpassword = NULL;
	if (opts == NULL)
	{
		if (perr)
			PQfreemem(perr);
		return NULL;
	}
	initStringInfo(&buf);
	for (o = opts; o->keyword != NULL; o++)
	{
		const char *p;
		bool		plain;

		if (o->val == NULL)
			continue;
		if (o->dispchar && o->dispchar[0] == '*')
		{
			if (strcmp(o->keyword, "password") == 0 && password)
				*password = pstrdup(o->val);
			else if (strcmp(o->keyword, "sslpassword") == 0 && sslpassword)
				*sslpassword = pstrdup(o->val);
			continue;
		}
		if (buf.len > 0)
			appendStringInfoChar(&buf, ' ');
		appendStringInfo(&buf, "%s=", o->keyword);
		/* quoted as libpq's parser expects */
		plain = (o->val[0] != '\0');
		for (p = o->val; *p; p++)
			if (*p == ' ' || *p == '\'' || *p == '\\' || *p == '\t' ||
				*p == '\n' || *p == '\r' || *p == '=')
				plain = false;
		if (plain)
			appendStringInfoString(&buf, o->val);
		else
		{
			appendStringInfoChar(&buf, '\'');
			for (p = o->val; *p; p++)
			{
				if (*p == '\'' || *p == '\\')
					appendStringInfoChar(&buf, '\\');
				appendStringInfoChar(&buf, *p);
			}
			appendStringInfoChar(&buf, '\'');
		}
	}
	PQconninfoFree(opts);
	return buf.data;
}

/* ---- the connection ---- */

static void
conn_fail(FPerfConn *c, FPerfConnFail fail, const char *error, const char *detail)
{
	char	   *p;

	c->phase = FPC_FAILED;
	c->fail = fail;
	strlcpy(c->error, error ? error : "", sizeof(c->error));
	strlcpy(c->detail, detail ? detail : "", sizeof(c->detail));
	for (p = c->detail + strlen(c->detail); p > c->detail && (p[-1] == '\n' || p[-1] == ' ');)
		*--p = '\0';
	for (p = c->detail; *p; p++)
		if (*p == '\n' || *p == '\r' || *p == '\t')
			*p = ' ';
	if (c->resolve)
		resolve_abandon(c->resolve);
	c->resolve = NULL;
	if (c->setup_res)
		PQclear(c->setup_res);
	c->setup_res = NULL;
	if (c->conn)
		PQfinish(c->conn);
	c->conn = NULL;
}

/* libpq's error for a failed connection attempt. */
static void
conn_fail_libpq(FPerfConn *c, FPerfConnFail fail)
{
	conn_fail(c, fail, c->restricted ? "the connection failed (the reason is in the server log)"
			  : "the connection failed",
			  c->conn ? PQerrorMessage(c->conn) : "out of memory");
}

static void
conn_timeout(FPerfConn *c, const char *what)
{
	char		msg[128];

	/* which step hung says something about the network: not to all */
	if (c->restricted)
		snprintf(msg, sizeof(msg), "no answer within %d ms", c->timeout_ms);
	else
		snprintf(msg, sizeof(msg), "no answer within %d ms while %s", c->timeout_ms, what);
	conn_fail(c, FPF_TIMEOUT, msg, NULL);
}

/*
 * Start connecting to a target; see remote.h.
 */
bool
fperf_conn_start(FPerfConn *c, const FPerfTargetSpec *spec, const char *appname,
				 int timeout_ms, MemoryContext parent)
{
	MemoryContext old;
	PQconninfoOption *opts;
	PQconninfoOption *o;
	char	   *why;
	int			n = 0;
	int			nopts = 0;
	int			ih;

	fperf_conn_close(c);
	c->restricted = spec->restricted;
	c->timeout_ms = timeout_ms;
	c->deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout_ms);
	c->cxt = AllocSetContextCreate(parent, "folio_perf remote connection",
								   ALLOCSET_SMALL_SIZES);
	old = MemoryContextSwitchTo(c->cxt);

	why = fperf_conn_check_options(spec->conninfo, spec->password, spec->restricted, &c->fail);
	if (why != NULL)
	{
		FPerfConnFail f = c->fail;

		MemoryContextSwitchTo(old);
		conn_fail(c, f, why, NULL);
		return false;
	}

	opts = PQconninfoParse(spec->conninfo, NULL);
	if (opts == NULL)
	{
		MemoryContextSwitchTo(old);
		conn_fail(c, FPF_INVALID, "out of memory", NULL);
		return false;
	}
	for (o = opts; o->keyword != NULL; o++)
		nopts++;
	c->keywords = palloc0(sizeof(char *) * (nopts + 6));
	c->values = palloc0(sizeof(char *) * (nopts + 6));
	for (o = opts; o->keyword != NULL; o++)
	{
		if (o->val == NULL || o->val[0] == '\0' ||
			strcmp(o->keyword, "application_name") == 0 ||
			strcmp(o->keyword, "fallback_application_name") == 0 ||
			(spec->password && strcmp(o->keyword, "password") == 0) ||
			(spec->sslpassword && strcmp(o->keyword, "sslpassword") == 0))
			continue;
		c->keywords[n] = pstrdup(o->keyword);
		c->values[n++] = pstrdup(o->val);
	}
	PQconninfoFree(opts);
	if (spec->password)
	{
		c->keywords[n] = "password";
		c->values[n++] = pstrdup(spec->password);
	}
	if (spec->sslpassword)
	{
		c->keywords[n] = "sslpassword";
		c->values[n++] = pstrdup(spec->sslpassword);
	}
	if (spec->restricted)
	{
		/* GSS would authenticate with the server's own credentials */
		c->keywords[n] = "gssencmode";
		c->values[n++] = "disable";
	}
	c->keywords[n] = "application_name";
	c->values[n++] = appname;
	c->keywords[n] = NULL;
	c->values[n] = NULL;

	/* host names to look up first (not when hostaddr is given) */
	ih = option_index(c, "host");
	if (ih >= 0 && option_index(c, "hostaddr") < 0)
	{
		List	   *hosts = split_list(c->values[ih]);
		ListCell   *lc;
		bool		any = false;

		if (list_length(hosts) > FPERF_MAX_HOSTS)
		{
			MemoryContextSwitchTo(old);
			conn_fail(c, FPF_INVALID, "too many hosts in the connection string", NULL);
			return false;
		}
		foreach(lc, hosts)
			if (host_needs_lookup((char *) lfirst(lc)))
				any = true;
		if (any)
		{
			FPerfResolve *r = calloc(1, sizeof(FPerfResolve));
			pthread_t	th;
			pthread_attr_t attr;
			sigset_t	all,
						saved;
			int			rc;
			int			i = 0;

			if (r == NULL)
			{
				MemoryContextSwitchTo(old);
				conn_fail(c, FPF_CONNECT, "out of memory", NULL);
				return false;
			}
			pg_atomic_init_u32(&r->state, RESOLVE_RUNNING);
			r->nhosts = list_length(hosts);
			foreach(lc, hosts)
			{
				char	   *h = (char *) lfirst(lc);

				r->hosts[i++] = host_needs_lookup(h) ? strdup(h) : NULL;
			}
			/* the thread must never take a signal meant for the backend */
			sigfillset(&all);
			pthread_sigmask(SIG_SETMASK, &all, &saved);
			pthread_attr_init(&attr);
			pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
			rc = pthread_create(&th, &attr, resolve_thread, r);
			pthread_attr_destroy(&attr);
			pthread_sigmask(SIG_SETMASK, &saved, NULL);
			if (rc != 0)
			{
				resolve_free(r);
				MemoryContextSwitchTo(old);
				conn_fail(c, FPF_CONNECT, "the connection failed",
						  "could not start a host name lookup");
				return false;
			}
			c->resolve = r;
			c->phase = FPC_RESOLVING;
			MemoryContextSwitchTo(old);
			return true;
		}
	}
	MemoryContextSwitchTo(old);
	c->phase = FPC_CONNECTING;
	return true;
}

/*
 * The lookup is done: host, hostaddr and port lists with one entry per
 * address (names that did not resolve left out).  False if nothing is left.
 */
static bool
apply_addresses(FPerfConn *c)
{
	FPerfResolve *r = c->resolve;
	MemoryContext old = MemoryContextSwitchTo(c->cxt);
	int			ih = option_index(c, "host");
	int			ip = option_index(c, "port");
	List	   *hosts = split_list(c->values[ih]);
	List	   *ports = ip >= 0 ? split_list(c->values[ip]) : NIL;
	bool		port_list = (list_length(ports) > 1 && list_length(ports) == list_length(hosts));
	StringInfoData h,
				a,
				p;
	int			entries = 0;
	int			i;

	initStringInfo(&h);
	initStringInfo(&a);
	initStringInfo(&p);
	for (i = 0; i < r->nhosts; i++)
	{
		const char *name = (const char *) list_nth(hosts, i);
		const char *port = port_list ? (const char *) list_nth(ports, i) : NULL;
		int			k;
		int			n = (r->hosts[i] == NULL) ? 1 : r->naddrs[i];

		for (k = 0; k < n; k++)
		{
			if (entries > 0)
			{
				appendStringInfoChar(&h, ',');
				appendStringInfoChar(&a, ',');
				appendStringInfoChar(&p, ',');
			}
			appendStringInfoString(&h, name);
			/* sockets and numeric addresses: an empty hostaddr entry */
			if (r->hosts[i] != NULL)
				appendStringInfoString(&a, r->addrs[i][k]);
			if (port)
				appendStringInfoString(&p, port);
			entries++;
		}
	}
	MemoryContextSwitchTo(old);
	if (entries == 0)
		return false;
	c->values[ih] = h.data;
	if (port_list)
		c->values[ip] = p.data;
	/* hostaddr goes where application_name was, which moves to the end */
	for (i = 0; c->keywords[i] != NULL; i++)
		;
	c->keywords[i] = c->keywords[i - 1];
	c->values[i] = c->values[i - 1];
	c->keywords[i - 1] = "hostaddr";
	c->values[i - 1] = a.data;
	c->keywords[i + 1] = NULL;
	c->values[i + 1] = NULL;
	return true;
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

/* The set-up statement: $1 = statement_timeout in ms. */
#define SETUP_SQL FPERF_REMOTE_SELECT \
	"pg_catalog.set_config('statement_timeout', $1, false) AS statement_timeout," \
	" pg_catalog.set_config('search_path', 'pg_catalog' || coalesce(', ' ||" \
	" (SELECT pg_catalog.quote_ident(n.nspname) FROM pg_catalog.pg_extension e" \
	" JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace" \
	" WHERE e.extname = 'pg_stat_statements'), ''), false) AS search_path"

static const FPerfColumn setup_columns[] = {
	{"statement_timeout", TEXTOID},
	{"search_path", TEXTOID}
};

/*
 * Advance without waiting; see remote.h.
 */
FPerfConnPhase
fperf_conn_poll(FPerfConn *c)
{
	TimestampTz now = GetCurrentTimestamp();

	if (c->phase == FPC_RESOLVING)
	{
		FPerfResolve *r = c->resolve;

		if (pg_atomic_read_u32(&r->state) == RESOLVE_RUNNING)
		{
			if (now >= c->deadline)
				conn_timeout(c, "looking up the host name");
			return c->phase;
		}
		pg_read_barrier();
		if (!apply_addresses(c))
		{
			conn_fail(c, FPF_CONNECT, c->restricted ?
					  "the connection failed (the reason is in the server log)" :
					  "the connection failed", r->error);
			return c->phase;
		}
		resolve_free(r);
		c->resolve = NULL;
		c->phase = FPC_CONNECTING;
	}

	if (c->phase == FPC_CONNECTING && c->conn == NULL)
	{
		c->conn = PQconnectStartParams(c->keywords, c->values, 0);
		if (c->conn == NULL || PQstatus(c->conn) == CONNECTION_BAD)
		{
			conn_fail_libpq(c, FPF_CONNECT);
			return c->phase;
		}
		c->poll = PGRES_POLLING_WRITING;
	}

	if (c->phase == FPC_CONNECTING)
	{
		while (c->poll != PGRES_POLLING_OK && c->poll != PGRES_POLLING_FAILED &&
			   socket_ready(c->conn, c->poll == PGRES_POLLING_WRITING))
			c->poll = PQconnectPoll(c->conn);
		if (c->poll == PGRES_POLLING_FAILED || PQstatus(c->conn) == CONNECTION_BAD)
		{
			conn_fail_libpq(c, FPF_CONNECT);
			return c->phase;
		}
		if (c->poll != PGRES_POLLING_OK)
		{
			if (now >= c->deadline)
				conn_timeout(c, "connecting");
			return c->phase;
		}
		/* authenticated: a restricted target must have asked for the password */
		if (c->restricted && !PQconnectionUsedPassword(c->conn))
		{
			conn_fail(c, FPF_RULE, "password is required",
					  "the target did not ask for the password");
			return c->phase;
		}
		if (PQsetnonblocking(c->conn, 1) != 0)
		{
			conn_fail_libpq(c, FPF_CONNECT);
			return c->phase;
		}
		{
			char		timeout[32];
			const char *params[1];

			snprintf(timeout, sizeof(timeout), "%d", c->timeout_ms);
			params[0] = timeout;
			if (!PQsendQueryParams(c->conn, SETUP_SQL, 1, NULL, params, NULL, NULL, 0))
			{
				conn_fail(c, FPF_SETUP, "the set-up statement could not be sent",
						  PQerrorMessage(c->conn));
				return c->phase;
			}
		}
		c->phase = FPC_SETUP;
		/* the set-up statement gets its own time */
		c->deadline = TimestampTzPlusMilliseconds(now, c->timeout_ms);
	}

	if (c->phase == FPC_SETUP)
	{
		PGresult   *res;
		PGresult   *last;
		char		why[256];

		if (PQflush(c->conn) < 0 ||
			(socket_ready(c->conn, false) && !PQconsumeInput(c->conn)))
		{
			conn_fail(c, FPF_SETUP, "the connection was lost during set-up",
					  PQerrorMessage(c->conn));
			return c->phase;
		}
		for (;;)
		{
			if (PQisBusy(c->conn))
			{
				if (now >= c->deadline)
					conn_timeout(c, "setting up the connection");
				return c->phase;
			}
			res = PQgetResult(c->conn);
			if (res == NULL)
				break;
			if (c->setup_res)
				PQclear(c->setup_res);
			c->setup_res = res;
		}
		last = c->setup_res;
		c->setup_res = NULL;
		if (last == NULL || PQresultStatus(last) != PGRES_TUPLES_OK)
		{
			char		msg[256];

			snprintf(msg, sizeof(msg), "the set-up statement failed: %s",
					 last ? PQresultErrorMessage(last) : "no result");
			if (last)
				PQclear(last);
			conn_fail(c, FPF_SETUP, msg, NULL);
			return c->phase;
		}
		if (!fperf_result_shape(last, setup_columns, lengthof(setup_columns), 1,
								why, sizeof(why)) || PQntuples(last) != 1)
		{
			char		msg[300];

			snprintf(msg, sizeof(msg), "unexpected answer to the set-up statement: %s",
					 PQntuples(last) != 1 && PQnfields(last) == lengthof(setup_columns) ?
					 "not one row" : why);
			PQclear(last);
			conn_fail(c, FPF_SETUP, msg, NULL);
			return c->phase;
		}
		PQclear(last);
		c->phase = FPC_READY;
		if (c->cxt)
			MemoryContextDelete(c->cxt);
		c->cxt = NULL;
		c->keywords = c->values = NULL;
	}
	return c->phase;
}

/*
 * Advance until ready or failed, waiting on the latch; see remote.h.
 */
bool
fperf_conn_wait(FPerfConn *c)
{
	PG_TRY();
	{
		for (;;)
		{
			FPerfConnPhase ph = fperf_conn_poll(c);
			int			events;
			long		ms;
			int			rc;

			if (ph == FPC_READY || ph == FPC_FAILED || ph == FPC_CLOSED)
				break;
			ms = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), c->deadline);
			if (ph == FPC_RESOLVING)
			{
				events = 0;
				ms = Min(ms, FPERF_RESOLVE_POLL_MS);
			}
			else if (ph == FPC_CONNECTING)
				events = (c->poll == PGRES_POLLING_READING) ? WL_SOCKET_READABLE : WL_SOCKET_WRITEABLE;
			else
				events = WL_SOCKET_READABLE;
			if (events != 0 && (c->conn == NULL || PQsocket(c->conn) < 0))
			{
				/* no socket to wait on (between hosts): look again soon */
				events = 0;
				ms = Min(ms, FPERF_RESOLVE_POLL_MS);
			}
			if (ms < 1)
				ms = 1;
			rc = WaitLatchOrSocket(MyLatch,
								   WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH | events,
								   events ? PQsocket(c->conn) : PGINVALID_SOCKET,
								   ms, PG_WAIT_EXTENSION);
			if (rc & WL_LATCH_SET)
			{
				ResetLatch(MyLatch);
				CHECK_FOR_INTERRUPTS();
			}
		}
	}
	PG_CATCH();
	{
		fperf_conn_close(c);
		PG_RE_THROW();
	}
	PG_END_TRY();
	return c->phase == FPC_READY;
}

/* Close; see remote.h. */
void
fperf_conn_close(FPerfConn *c)
{
	if (c->resolve)
		resolve_abandon(c->resolve);
	if (c->setup_res)
		PQclear(c->setup_res);
	if (c->conn)
		PQfinish(c->conn);
	if (c->cxt)
		MemoryContextDelete(c->cxt);
	memset(c, 0, sizeof(FPerfConn));
}

/* The failure in one line for readers; see remote.h. */
const char *
fperf_conn_public_error(const FPerfConn *c)
{
	if (!c->restricted && c->detail[0] != '\0' &&
		(c->fail == FPF_CONNECT || c->fail == FPF_RULE))
		return c->detail;
	return c->error;
}

/* ---- statements and results ---- */

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
		long		ms = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), deadline);
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

/* libpq's message without its trailing newline, palloc'd. */
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
 * sql marked as folio_perf's: the mark before it and again after its
 * first keyword (see remote.h).  A statement that does not begin with a
 * keyword is marked before it only.
 */
char *
fperf_remote_marked(const char *sql)
{
	const char *p = sql;
	const char *w;

	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
	w = p;
	while ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z'))
		p++;
	if (p == w)
		return psprintf("%s%s", FPERF_REMOTE_MARK, sql);
	return psprintf("%s%.*s %s%s", FPERF_REMOTE_MARK, (int) (p - sql), sql,
					FPERF_REMOTE_MARK, p);
}

/*
 * Send a statement and wait for its results within timeout_ms: with text
 * parameters over the extended protocol, or (simple) as a simple query,
 * which is what EXPLAIN (GENERIC_PLAN) needs for its $n placeholders.
 * Returns the last result (the caller PQclear()s it), or NULL with *err
 * set and *timed_out telling whether the time ran out; *nresults counts
 * the results (a simple query of several statements has several).
 */
static PGresult *
remote_exec(PGconn *conn, const char *sql, bool simple, int nparams,
			const char *const *params, int timeout_ms,
			char **err, bool *timed_out, int *nresults)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout_ms);
	PGresult   *volatile last = NULL;
	PGresult   *res;

	*err = NULL;
	*timed_out = false;
	*nresults = 0;
	if (simple ? !PQsendQuery(conn, sql) :
		!PQsendQueryParams(conn, sql, nparams, NULL, params, NULL, NULL, 0))
	{
		*err = conn_message(conn);
		return NULL;
	}

	PG_TRY();
	{
		int			f;

		/* push the statement out (large parameter arrays take several writes) */
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
			(*nresults)++;
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
 * Run one statement with text parameters; see remote.h.
 */
PGresult *
fperf_remote_exec(PGconn *conn, const char *sql, int nparams,
				  const char *const *params, int timeout_ms,
				  char **err, bool *timed_out)
{
	int			nresults;

	return remote_exec(conn, sql, false, nparams, params, timeout_ms,
					   err, timed_out, &nresults);
}

/*
 * Run sql as a simple query; see remote.h.
 */
PGresult *
fperf_remote_exec_simple(PGconn *conn, const char *sql, int timeout_ms,
						 char **err, bool *timed_out, int *nresults)
{
	return remote_exec(conn, sql, true, 0, NULL, timeout_ms,
					   err, timed_out, nresults);
}

/*
 * Check the shape of a remote result; see remote.h.
 */
bool
fperf_result_shape(const PGresult *res, const FPerfColumn *cols, int ncols,
				   int max_rows, char *err, size_t errlen)
{
	int			nf;
	int			i;

	if (res == NULL || PQresultStatus(res) != PGRES_TUPLES_OK)
	{
		snprintf(err, errlen, "no rows");
		return false;
	}
	nf = PQnfields(res);
	if (nf != ncols)
	{
		snprintf(err, errlen, "%d columns, expected %d", nf, ncols);
		return false;
	}
	for (i = 0; i < ncols; i++)
	{
		const char *fname = PQfname(res, i);

		if (fname == NULL || strcmp(fname, cols[i].name) != 0)
		{
			snprintf(err, errlen, "column %d is \"%.64s\", expected \"%s\"",
					 i + 1, fname ? fname : "", cols[i].name);
			return false;
		}
		if (cols[i].type != InvalidOid && PQftype(res, i) != cols[i].type)
		{
			snprintf(err, errlen, "column \"%s\" has type %u, expected %u",
					 cols[i].name, PQftype(res, i), cols[i].type);
			return false;
		}
	}
	if (max_rows >= 0 && PQntuples(res) > max_rows)
	{
		snprintf(err, errlen, "%d rows, at most %d expected", PQntuples(res), max_rows);
		return false;
	}
	return true;
}
