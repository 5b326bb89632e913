/*
 * bench/hold_connections.c - open N connections and keep them idle until
 * terminated: an idle connection pool for the sampler benchmarks.
 *
 * pgbench cannot do this: its clients sleeping in \sleep keep it busy on a
 * CPU, which is the very thing being measured.  This process sleeps in
 * pause() and costs nothing while it holds the connections.
 *
 *	 cc -o hold_connections bench/hold_connections.c -I$(pg_config --includedir) \
 *		 -L$(pg_config --libdir) -lpq
 *	 ./hold_connections 'host=/tmp port=5432 dbname=bench' 800
 *
 * Prints the number of connections once they are all open; exits 1 if one
 *
 * Copyright (c) 2026, folio_perf developers
 * fails.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "libpq-fe.h"

static volatile sig_atomic_t done = 0;

static void
on_term(int sig)
{
	(void) sig;
	done = 1;
}

int
main(int argc, char **argv)
{
	PGconn	  **conns;
	int			n;
	int			i;

	if (argc != 3 || (n = atoi(argv[2])) <= 0)
	{
		fprintf(stderr, "usage: %s CONNINFO N\n", argv[0]);
		return 2;
	}
	conns = calloc(n, sizeof(PGconn *));
	if (conns == NULL)
		return 1;
	signal(SIGTERM, on_term);
	signal(SIGINT, on_term);
	for (i = 0; i < n && !done; i++)
	{
		conns[i] = PQconnectdb(argv[1]);
		if (PQstatus(conns[i]) != CONNECTION_OK)
		{
			fprintf(stderr, "connection %d: %s", i + 1, PQerrorMessage(conns[i]));
			return 1;
		}
	}
	printf("%d\n", i);
	fflush(stdout);
	while (!done)
		pause();
	for (i = 0; i < n; i++)
		if (conns[i])
			PQfinish(conns[i]);
	return 0;
}
