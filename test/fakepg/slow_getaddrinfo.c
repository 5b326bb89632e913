/*
 * test/fakepg/slow_getaddrinfo.c - an LD_PRELOAD shim for the remote target
 * tests: getaddrinfo() of a name ending in ".slow.invalid" takes
 * SLOWDNS_SECONDS seconds (default 3) and then fails, as a DNS server that
 * does not answer would.  While such a lookup runs, the file SLOWDNS_MARK
 *
 * Copyright (c) 2026, folio_perf developers
 * (if set) exists.  Every other lookup goes to the C library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*gai_fn) (const char *, const char *, const struct addrinfo *,
					   struct addrinfo **);

int
getaddrinfo(const char *node, const char *service,
			const struct addrinfo *hints, struct addrinfo **res)
{
	static gai_fn real = NULL;
	size_t		n = node ? strlen(node) : 0;
	const char *suffix = ".slow.invalid";
	size_t		sn = strlen(suffix);

	if (n > sn && strcmp(node + n - sn, suffix) == 0)
	{
		const char *mark = getenv("SLOWDNS_MARK");
		const char *secs = getenv("SLOWDNS_SECONDS");
		int			fd = -1;

		if (mark)
			fd = open(mark, O_CREAT | O_WRONLY, 0644);
		if (fd >= 0)
			close(fd);
		sleep(secs ? (unsigned) atoi(secs) : 3);
		if (mark)
			unlink(mark);
		return EAI_NONAME;
	}
	if (real == NULL)
		real = (gai_fn) dlsym(RTLD_NEXT, "getaddrinfo");
	return real(node, service, hints, res);
}
