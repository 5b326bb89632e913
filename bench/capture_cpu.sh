#!/usr/bin/env bash
# bench/capture_cpu.sh - the CPU time of the relations part of a local
# snapshot, folio_perf_rel_capture(), in one warm session, with every
# relation of the fixture changed: its rel_last rows' signatures moved in a
# transaction that is rolled back (nothing stored, the fixture unchanged).
#
#   bench/capture_cpu.sh [--written] [--runs N] [--port P] [--db DB]
#
#   --written   also move every write signature: every size is read again
#               (the path of a snapshot after every table was written)
#
# Runs against the private cluster of bench/run.sh (PGB_HOME, port 55450)
# with whatever folio_perf is installed there: to compare two builds,
# install each (make install DESTDIR=$PGB_HOME, restart) and run this in
# turn, alternating.  Prints per run the rows and the sum of their sizes
# (equal across builds: the same result), the backend's CPU (user + system,
# /proc) and the wall clock.  The first run of a session pays the catalog
# caches' loading.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail
H=${PGB_HOME:-/opt/pg_bench}
P=$H/usr/lib/postgresql/15/bin
port=${PGB_PORT:-55450} db=fx_t40_p884 runs=3 written=0
while [ $# -gt 0 ]; do
	case "$1" in
		--written) written=1; shift ;;
		--runs) runs=${2:?}; shift 2 ;;
		--port) port=${2:?}; shift 2 ;;
		--db) db=${2:?}; shift 2 ;;
		*) echo "usage: bench/capture_cpu.sh [--written] [--runs N] [--port P] [--db DB]" >&2; exit 2 ;;
	esac
done
set_sig="sig = sig + 1"
[ "$written" = 1 ] && set_sig="sig = sig + 1, wsig = wsig + 1"
coproc PS { "$P/psql" -X -h /tmp -p "$port" -U postgres -d "$db" -At 2>&1; }
echo "SELECT pg_backend_pid();" >&"${PS[1]}"
read -r -u "${PS[0]}" pid
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
tick=$(getconf CLK_TCK)
for i in $(seq "$runs"); do
	echo "BEGIN; UPDATE folio_perf_data.rel_last SET $set_sig; SELECT 'ready';" >&"${PS[1]}"
	while read -r -u "${PS[0]}" x; do [ "$x" = ready ] && break; done
	c0=$(cpu); t0=$(date +%s%N)
	echo "SELECT count(*) || ' rows, ' || coalesce(sum(size_bytes), 0) || ' bytes' FROM public.folio_perf_rel_capture();" >&"${PS[1]}"
	read -r -u "${PS[0]}" res
	c1=$(cpu); t1=$(date +%s%N)
	echo "ROLLBACK; SELECT 'done';" >&"${PS[1]}"
	while read -r -u "${PS[0]}" x; do [ "$x" = done ] && break; done
	echo "run $i: $res; CPU $(( (c1 - c0) * 1000 / tick )) ms; wall $(( (t1 - t0) / 1000000 )) ms"
done
echo '\q' >&"${PS[1]}"
