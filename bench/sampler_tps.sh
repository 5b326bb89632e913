#!/usr/bin/env bash
# bench/sampler_tps.sh - what the sampler costs the workload and itself, with
# 800 open connections, against no sampler and against pg_wait_sampling.
#
# Modes (each a restart of one private cluster with pg_stat_statements and
# folio_perf preloaded):
#   off    folio_perf.sample_interval = 0
#   fp1    folio_perf.sample_interval = 1s (the default)
#   fp10   folio_perf.sample_interval = 100ms
#   pgws   folio_perf off, pg_wait_sampling preloaded at its defaults
#          (history and profile every 10 ms)
# Every round runs the modes in turn (alternating, so drift of this noisy
# 2-core machine spreads over all of them); in each: 800 idle connections
# held by bench/hold_connections.c (pgbench clients in \sleep keep pgbench
# busy on a CPU, the very thing measured), then IDLE seconds with nothing else
# running (the sampler's own CPU with an idle pool), then pgbench -S and the
# TPC-B-like script, 8 clients, RUN seconds each.  Prints per mode the
# median TPS with min..max and the ratio to "off" (medians), and the
# sampling process's CPU (utime+stime from /proc/<pid>/stat) as % of one
# core, idle and under load.
#
# Usage (as root; installs postgresql-15-pg-wait-sampling for pgws if it can):
#     bash bench/sampler_tps.sh [ROUNDS] [RUN] [IDLE]     # default 5 20 30
# Port 55480, data in /tmp/fperf_sampler_tps.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail
ROUNDS=${1:-5}
RUN=${2:-20}
IDLE=${3:-30}
PORT=${PORT:-55480}
BIN=${BIN:-/usr/lib/postgresql/15/bin}
DATA=${DATA:-/tmp/fperf_sampler_tps}
CONNS=${CONNS:-800}
MODES=${MODES:-off fp1 fp10 pgws}
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }
as_pg() { su postgres -s /bin/bash -c "$*"; }
PSQL="$BIN/psql -X -At -h $DATA -p $PORT -d bench"
have_pgws=0
if [ ! -f "$($BIN/pg_config --pkglibdir)/pg_wait_sampling.so" ]; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15-pg-wait-sampling >/dev/null 2>&1 ||
		echo "pg_wait_sampling is not installed and could not be: mode pgws is skipped" >&2
fi
[ -f "$($BIN/pg_config --pkglibdir)/pg_wait_sampling.so" ] && have_pgws=1

rm -rf "$DATA"; mkdir -p "$DATA"; chown postgres:postgres "$DATA"
as_pg "$BIN/initdb -D $DATA/data -A trust >/dev/null"
cat >>"$DATA/data/postgresql.conf" <<EOF
port = $PORT
listen_addresses = ''
unix_socket_directories = '$DATA'
max_connections = $((CONNS + 50))
shared_buffers = 256MB
compute_query_id = on
folio_perf.database = 'bench'
folio_perf.sample_interval = 0
EOF
start() {	# start(preload, interval)
	cat >"$DATA/data/mode.conf" <<EOF
shared_preload_libraries = '$1'
folio_perf.sample_interval = $2
EOF
	grep -q "include_if_exists = 'mode.conf'" "$DATA/data/postgresql.conf" ||
		echo "include_if_exists = 'mode.conf'" >>"$DATA/data/postgresql.conf"
	as_pg "$BIN/pg_ctl -D $DATA/data -l $DATA/server.log -w start >/dev/null"
}
stop() { as_pg "$BIN/pg_ctl -D $DATA/data -m fast -w stop >/dev/null" 2>/dev/null || true; }
# the idle-connection holder (the process itself, not the su around it)
release() { pkill -f -- "$DATA/hold_connections" 2>/dev/null || true; wait 2>/dev/null || true; }
trap 'release; stop' EXIT

start 'pg_stat_statements,folio_perf' 0
as_pg "$BIN/createdb -h $DATA -p $PORT bench"
as_pg "$PSQL -c 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf'"
as_pg "$BIN/pgbench -h $DATA -p $PORT -i -q -s 10 bench" >/dev/null 2>&1
here=$(cd "$(dirname "$0")" && pwd)
cc -O2 -o "$DATA/hold_connections" "$here/hold_connections.c" \
	-I"$($BIN/pg_config --includedir)" -L"$($BIN/pg_config --libdir)" -lpq
chmod 755 "$DATA/hold_connections"
stop

jiffies() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
sampler_pid() {
	case "$1" in
		fp1|fp10) as_pg "$PSQL -c \"SELECT pid FROM pg_stat_activity WHERE backend_type = 'folio_perf sampler'\"" ;;
		pgws) as_pg "$PSQL -c \"SELECT pid FROM pg_stat_activity WHERE backend_type = 'pg_wait_sampling collector'\"" ;;
		*) echo "" ;;
	esac
}
clk=$(getconf CLK_TCK)
res="$DATA/results.tsv"
: >"$res"
for round in $(seq 1 "$ROUNDS"); do
	for mode in $MODES; do
		case "$mode" in
			off)  start 'pg_stat_statements,folio_perf' 0 ;;
			fp1)  start 'pg_stat_statements,folio_perf' 1000 ;;
			fp10) start 'pg_stat_statements,folio_perf' 100 ;;
			pgws) [ "$have_pgws" = 1 ] || continue
			      start 'pg_stat_statements,folio_perf,pg_wait_sampling' 0 ;;
		esac
		as_pg "$DATA/hold_connections 'host=$DATA port=$PORT dbname=bench' $CONNS" >/dev/null 2>&1 &
		for _ in $(seq 1 60); do
			n=$(as_pg "$PSQL -c \"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'\"")
			[ "$n" -gt "$CONNS" ] && break
			sleep 1
		done
		pid=$(sampler_pid "$mode")
		sleep 3
		# the sampler with an idle pool
		j0=${pid:+$(jiffies "$pid")}; t0=$(date +%s.%N)
		sleep "$IDLE"
		j1=${pid:+$(jiffies "$pid")}; t1=$(date +%s.%N)
		idle_pct=$( [ -n "$pid" ] && awk -v a="$j0" -v b="$j1" -v s="$t0" -v e="$t1" -v c="$clk" \
			'BEGIN {printf "%.3f", 100 * (b - a) / c / (e - s)}' || echo "")
		for wl in select tpcb; do
			flag=$([ "$wl" = select ] && echo "-S" || echo "")
			j0=${pid:+$(jiffies "$pid")}; t0=$(date +%s.%N)
			tps=$(as_pg "$BIN/pgbench -h $DATA -p $PORT -n $flag -c 8 -j 2 -T $RUN -M prepared bench" 2>/dev/null |
				awk '/^tps/ {print $3; exit}')
			j1=${pid:+$(jiffies "$pid")}; t1=$(date +%s.%N)
			load_pct=$( [ -n "$pid" ] && awk -v a="$j0" -v b="$j1" -v s="$t0" -v e="$t1" -v c="$clk" \
				'BEGIN {printf "%.3f", 100 * (b - a) / c / (e - s)}' || echo "")
			printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$mode" "$wl" "$tps" "$idle_pct" "$load_pct" | tee -a "$res"
		done
		release
		stop
	done
done

echo
echo "median TPS [min..max] of $ROUNDS alternating runs of ${RUN}s, 8 clients, $CONNS idle connections open;"
echo "sampler CPU = the sampling process's utime+stime as % of one core"
printf '%-6s %-7s %24s %10s %14s %14s\n' mode script "TPS median [min..max]" "x off" "CPU idle %" "CPU load %"
python3 - "$res" <<'EOF'
import sys, statistics as st
rows = [l.rstrip('\n').split('\t') for l in open(sys.argv[1]) if l.strip()]
by = {}
for r, mode, wl, tps, idle, load in rows:
    d = by.setdefault((mode, wl), {'tps': [], 'idle': [], 'load': []})
    if tps: d['tps'].append(float(tps))
    if idle: d['idle'].append(float(idle))
    if load: d['load'].append(float(load))
order = [m for m in ['off', 'fp1', 'fp10', 'pgws'] if any(k[0] == m for k in by)]
for wl in ['select', 'tpcb']:
    base = st.median(by[('off', wl)]['tps']) if ('off', wl) in by and by[('off', wl)]['tps'] else None
    for m in order:
        d = by.get((m, wl))
        if not d or not d['tps']:
            continue
        med = st.median(d['tps'])
        ratio = '%.3f' % (med / base) if base else '-'
        idle = '%.3f' % st.median(d['idle']) if d['idle'] else '-'
        load = '%.3f' % st.median(d['load']) if d['load'] else '-'
        print('%-6s %-7s %24s %10s %14s %14s' % (m, wl, '%.0f [%.0f..%.0f]' % (med, min(d['tps']), max(d['tps'])), ratio, idle, load))
EOF
