#!/usr/bin/env bash
# bench/soak.sh - a soak run: the sampler at 100 ms, a timed snapshot every
# 10 s, a FOLIO-like workload running the whole time.  Prints, once a minute,
# the sampler worker's resident memory and the size of folio_perf's storage,
# so that "memory stays flat" and "storage grows as predicted" can be read
# off.  Run as root (it starts its cluster as the postgres OS user):
#
#     bash bench/soak.sh [MINUTES]        # default 30
#
# Uses the installed folio_perf (bash test/setup.sh first).  Port 55470.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail
minutes=${1:-30}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=/usr/lib/postgresql/15/bin
dir=/tmp/folio_perf_soak
port=55470
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }

rm -rf "$dir"; mkdir -p "$dir"; chown postgres:postgres "$dir"
cp -a "$here/test" "$dir/test"; chown -R postgres:postgres "$dir/test"
as_pg() { su postgres -s /bin/bash -c "$*"; }
as_pg "$bin/initdb -D $dir/data -A trust >/dev/null"
cat >>"$dir/data/postgresql.conf" <<CONF
port = $port
listen_addresses = ''
unix_socket_directories = '$dir'
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
max_connections = 200
folio_perf.sample_interval = 100
folio_perf.flush_interval = 10
folio_perf.snapshot_interval = 10
folio_perf.database = 'folio'
CONF
as_pg "$bin/pg_ctl -D $dir/data -l $dir/server.log -w start >/dev/null"
trap 'as_pg "$bin/pg_ctl -D $dir/data -m fast stop" >/dev/null 2>&1 || true' EXIT
psql_() { as_pg "$bin/psql -X -At -h $dir -p $port -d folio -c \"$1\""; }

as_pg "bash $dir/test/fixture/build_fixture.sh -q -d folio -t 3 -h $dir -p $port"
psql_ "CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf"

# the workload: data import and check-in/check-out, over and over
end=$(( $(date +%s) + minutes * 60 ))
(
	while [ "$(date +%s)" -lt "$end" ]; do
		as_pg "bash $dir/test/workload/run_workload.sh -d folio -h $dir -p $port -w di_create -n 200 -t fs09000000 -q" >/dev/null 2>&1 || true
		as_pg "bash $dir/test/workload/run_workload.sh -d folio -h $dir -p $port -w cico -n 16 -c 4 -t cs00000int -q" >/dev/null 2>&1 || true
	done
) &
wl=$!

sleep 30
pid=$(psql_ "SELECT pid FROM folio_perf_sampler_status()")
memtotal() {	# the worker's memory-context grand total, from the server log
	psql_ "SELECT pg_log_backend_memory_contexts($pid)" >/dev/null
	sleep 1
	grep "\[$pid\] LOG:  Grand total" "$dir/server.log" | tail -1 | sed 's/.*Grand total: \([0-9]*\) bytes.*/\1/'
}
contexts() {	# the last memory-context dump of the worker: "total name" per context name
	awk -v p="[$pid]" 'index($0, p) && /logging memory contexts of PID/ {delete t; next}
		index($0, p) && /level: [0-9]+; / {
			s = $0; sub(/.*level: [0-9]+; /, "", s)
			n = s; sub(/: [0-9]+ total in .*/, "", n)
			match(s, /[0-9]+ total in/); tot = substr(s, RSTART, RLENGTH - 9)
			t[n] += tot
		}
		END { for (n in t) print t[n], n }' "$dir/server.log"
}
printf '%6s %10s %10s %10s %10s %10s %14s\n' minute rss_kB anon_kB cpu_s intervals snapshots storage_bytes
t0=$(date +%s)
while :; do
	m=$(( ($(date +%s) - t0) / 60 ))
	rss=$(awk '/VmRSS/ {print $2}' /proc/"$pid"/status 2>/dev/null || echo gone)
	anon=$(awk '/RssAnon/ {print $2}' /proc/"$pid"/status 2>/dev/null || echo gone)
	[ "$m" = 0 ] && { mem0=$(memtotal); contexts >"$dir/contexts.start"; }
	cpu=$(awk '{printf "%.1f", ($14 + $15) / 100}' /proc/"$pid"/stat 2>/dev/null || echo gone)
	row=$(psql_ "SELECT (SELECT count(*) FROM folio_perf_data.sample_interval) || ' ' || (SELECT count(*) FROM folio_perf_data.snapshot) || ' ' || (SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c WHERE c.relnamespace = 'folio_perf_data'::regnamespace AND c.relkind = 'r')")
	printf '%6s %10s %10s %10s %10s %10s %14s\n' "$m" "$rss" "$anon" "$cpu" $row
	[ "$(date +%s)" -ge "$end" ] && break
	sleep 60
done
mem1=$(memtotal)
contexts >"$dir/contexts.end"
echo "worker memory contexts: $mem0 bytes after 30 s, $mem1 bytes at the end"
echo "contexts that grew (bytes at 30 s, at the end, name):"
join -1 2 -2 2 -a 2 -e 0 -o 1.1,2.1,0 -t "$(printf '\t')" \
	<(awk '{n=$0; sub(/^[0-9]+ /,"",n); print $1 "\t" n}' "$dir/contexts.start" | sort -t "$(printf '\t')" -k2,2) \
	<(awk '{n=$0; sub(/^[0-9]+ /,"",n); print $1 "\t" n}' "$dir/contexts.end" | sort -t "$(printf '\t')" -k2,2) |
	awk -F '\t' '$2 > $1 {printf "%12d %12d  %s\n", $1, $2, $3}' | sort -k2,2nr | head -20
echo "(VmRSS includes the shared ring's pages as they are first touched;"
echo " RssAnon is the worker's private memory: caches of the catalog and of"
echo " the relations the timed snapshots sized, plus temp buffers)"
wait "$wl" || true
echo "sampler pid $pid; storage by table:"
psql_ "SELECT c.relname || ' ' || pg_size_pretty(pg_total_relation_size(c.oid)) FROM pg_class c WHERE c.relnamespace = 'folio_perf_data'::regnamespace AND c.relkind = 'r' ORDER BY pg_total_relation_size(c.oid) DESC"
