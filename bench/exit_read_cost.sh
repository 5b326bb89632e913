#!/usr/bin/env bash
# bench/exit_read_cost.sh - what the ended-session CPU reading adds to a
# session's end: the time of one read of /proc/self/stat (open, read,
# close, the parse to utime + stime, as src/probe.c's fperf_read_proc_cpu
# does it), the whole of what src/exitcpu.c's callback does besides a
# spinlock and a copy of about 100 bytes.  Prints microseconds per read
# (the median of 9 runs of N reads) and, with pgbench -C against a private
# cluster, what a connection costs here (start to end, one SELECT 1), so
# the share of the one in the other.
#
# Usage:  bash bench/exit_read_cost.sh [N]      # default 100000
#   BIN=... (PostgreSQL bin with pgbench and initdb; default 15's), as root
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail
N=${1:-100000}
BIN=${BIN:-/usr/lib/postgresql/15/bin}
W=$(mktemp -d /tmp/fperf_exit_read.XXXXXX)
trap 'su postgres -s /bin/bash -c "$BIN/pg_ctl -D $W/data -m fast stop" >/dev/null 2>&1 || true; rm -rf "$W"' EXIT
cat > "$W/r.c" <<'C'
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static int read_cpu(unsigned long long *j)
{
	char buf[1024], *p; int fd, field; ssize_t n; unsigned long long u = 0, s = 0;
	fd = open("/proc/self/stat", O_RDONLY, 0);
	if (fd < 0) return 0;
	n = read(fd, buf, sizeof(buf) - 1); close(fd);
	if (n <= 0) return 0;
	buf[n] = '\0';
	if ((p = strrchr(buf, ')')) == NULL) return 0;
	p++;
	for (field = 3; field <= 15; field++) {
		char *end;
		while (*p == ' ') p++;
		if (field == 14 || field == 15) {
			unsigned long long v = strtoull(p, &end, 10);
			if (field == 14) u = v; else s = v;
			p = end;
		} else while (*p != ' ' && *p) p++;
	}
	*j = u + s;
	return 1;
}
int main(int argc, char **argv)
{
	long n = atol(argv[1]), i; unsigned long long j = 0, sum = 0;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (i = 0; i < n; i++) { if (!read_cpu(&j)) return 1; sum += j; }
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.3f\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / 1e3 / n);
	return sum == 0 && j == 0 ? 0 : 0;
}
C
gcc -O2 -o "$W/r" "$W/r.c"
us=$(for i in $(seq 9); do "$W/r" "$N"; done | sort -n | sed -n 5p)
echo "one read of /proc/self/stat: $us us (median of 9 runs of $N)"

chown postgres "$W"
su postgres -s /bin/bash -c "$BIN/initdb -D $W/data -A trust >/dev/null && $BIN/pg_ctl -D $W/data -o \"-c listen_addresses='' -c unix_socket_directories=$W -c port=55499\" -l $W/log -w start >/dev/null"
echo 'SELECT 1;' > "$W/s.sql"; chmod a+r "$W/s.sql"
lat=$(for i in 1 2 3; do su postgres -s /bin/bash -c "$BIN/pgbench -n -C -c 1 -T 5 -f $W/s.sql -h $W -p 55499 postgres 2>/dev/null" |
	sed -n 's/^latency average = \([0-9.]*\) ms/\1/p'; done | sort -n | sed -n 2p)
echo "one connection with one SELECT 1 (pgbench -C, 1 client, median of 3 runs of 5 s): $lat ms"
awk -v us="$us" -v ms="$lat" 'BEGIN { printf "the reading at exit: %.3f %% of a connection\n", 100 * us / (ms * 1000) }'
