#!/usr/bin/env bash
# bench/connections_3000.sh - the sampler at N connections (default 3,000),
# mostly idle and some active, at 1 Hz: its CPU, tick lateness, storage per
# day, and how long a snapshot and a report take with that many sessions.
#
# One private cluster (max_connections = N + 100) with pg_stat_statements
# and folio_perf preloaded (sampler at 1 s, flush every 10 s); N - 8 idle
# connections held by bench/hold_connections.c, 8 active ones (pgbench -S,
# 8 clients).  Over RUN seconds: the sampler's CPU (utime+stime of its
# /proc/<pid>/stat) as % of one core, the ticks expected against taken
# (lateness: ticks missing), the probe's time per tick (last_probe_ms,
# sampled each second: median and max), and the bytes of sample_interval
# and sample_series stored per hour of samples, scaled to a day; then one
# folio_perf_snapshot() and folio_perf_report() of the run's window, timed.
#
# Usage (as root):  bash bench/connections_3000.sh [N] [RUN]   # default 3000 60
#   BIN=..., PORT=..., DATA=...
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail
N=${1:-3000}
RUN=${2:-60}
PORT=${PORT:-55495}
BIN=${BIN:-/usr/lib/postgresql/15/bin}
DATA=${DATA:-/tmp/fperf_conn3000}
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }
as_pg() { su postgres -s /bin/bash -c "$*"; }
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$DATA"; mkdir -p "$DATA"; chown postgres:postgres "$DATA"
cc -O2 -o "$DATA/hold_connections" "$here/hold_connections.c" -I"$($BIN/pg_config --includedir)" \
	-L"$($BIN/pg_config --libdir)" -lpq
as_pg "$BIN/initdb -D $DATA/data -A trust --no-sync >/dev/null"
cat >> "$DATA/data/postgresql.conf" <<EOC
port = $PORT
listen_addresses = ''
unix_socket_directories = '$DATA'
max_connections = $((N + 100))
shared_buffers = 256MB
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.database = 'bench'
folio_perf.sample_interval = 1000
folio_perf.flush_interval = 10
EOC
as_pg "ulimit -n 20000; $BIN/pg_ctl -D $DATA/data -l $DATA/log -w start >/dev/null"
trap 'kill $(jobs -p) 2>/dev/null; as_pg "$BIN/pg_ctl -D $DATA/data -m immediate stop >/dev/null" || true' EXIT
PSQL="$BIN/psql -X -At -h $DATA -p $PORT -d bench"
as_pg "$BIN/createdb -h $DATA -p $PORT bench"
as_pg "$PSQL -c 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf'" >/dev/null
as_pg "$BIN/pgbench -q -i -s 5 -h $DATA -p $PORT bench >/dev/null 2>&1"
t0=$(date +%s)
as_pg "ulimit -n 20000; $DATA/hold_connections 'host=$DATA port=$PORT dbname=bench' $((N - 8))" > "$DATA/hold.log" 2>&1 &
for _ in $(seq 1 600); do
	n=$(as_pg "$PSQL -c \"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'\"" 2>/dev/null || echo 0)
	[ "$n" -ge $((N - 8)) ] && break
	sleep 1
done
echo "$n client connections open after $(( $(date +%s) - t0 )) s"
as_pg "$BIN/pgbench -n -S -c 8 -j 2 -T $((RUN + 5)) -h $DATA -p $PORT bench" > "$DATA/pgbench.log" 2>&1 &
sleep 3
pid=$(as_pg "$PSQL -c 'SELECT pid FROM folio_perf_sampler_status()'")
w=$(as_pg "$PSQL -c \"SELECT folio_perf_begin('$N connections')\"")
cpu0=$(awk '{print $14 + $15}' /proc/$pid/stat)
ticks0=$(as_pg "$PSQL -c 'SELECT ticks FROM folio_perf_sampler_status()'")
as_pg "$PSQL -c 'SELECT folio_perf_sampler_flush()'" >/dev/null
iv0=$(as_pg "$PSQL -c 'SELECT coalesce(max(interval_id), 0) FROM folio_perf_data.sample_interval'")
w0=$(date +%s.%N)
probes=""
for _ in $(seq 1 "$RUN"); do
	probes="$probes $(as_pg "$PSQL -c 'SELECT last_probe_ms FROM folio_perf_sampler_status()'")"
	sleep 1
done
cpu1=$(awk '{print $14 + $15}' /proc/$pid/stat)
ticks1=$(as_pg "$PSQL -c 'SELECT ticks FROM folio_perf_sampler_status()'")
elapsed=$(echo "$(date +%s.%N) - $w0" | bc)
as_pg "$PSQL -c 'SELECT folio_perf_sampler_flush()'" >/dev/null
# bytes of the rows stored for those ticks (intervals and any new series)
read -r rowbytes rowticks < <(as_pg "$PSQL -F ' ' -c \"SELECT sum(pg_column_size(i.*)), sum(i.n_ticks) FROM folio_perf_data.sample_interval i WHERE i.interval_id > $iv0\"")
hz=$(getconf CLK_TCK)
t_end=$(date +%s.%N)
as_pg "$PSQL -c 'SELECT folio_perf_end()'" >/dev/null
t_snap=$(echo "$(date +%s.%N) - $t_end" | bc)
t_rep0=$(date +%s.%N)
len=$(as_pg "$PSQL -c \"SELECT length(folio_perf_report($w, 'text'))\"")
t_rep=$(echo "$(date +%s.%N) - $t_rep0" | bc)
sessions=$(as_pg "$PSQL -c \"SELECT sum(connections) FROM folio_perf_data.snapshot_activity WHERE snap_id = (SELECT end_snap FROM folio_perf_windows WHERE window_id = $w)\"")
conn=$(as_pg "$PSQL -c \"SELECT avg || ' / ' || max FROM folio_perf_connections($w) WHERE dimension = 'total'\"")
python3 - "$N" "$elapsed" "$cpu0" "$cpu1" "$hz" "$ticks0" "$ticks1" "$rowbytes" "$rowticks" "$t_snap" "$t_rep" "$len" "$sessions" "$conn" $probes <<'PY'
import sys, statistics as st
N, RUN, c0, c1, hz, k0, k1, rb, rt = (float(x) for x in sys.argv[1:10])
t_snap, t_rep, length, sessions, conn = sys.argv[10], sys.argv[11], sys.argv[12], sys.argv[13], sys.argv[14]
probes = [float(x) for x in sys.argv[15:] if x]
ticks = k1 - k0
print(f"| connections | {int(N)} held ({int(N) - 8} idle, 8 running pgbench -S); connections avg / max in the window: {conn}; sessions in the end snapshot: {sessions} |")
print(f"| sampler CPU | {100 * (c1 - c0) / hz / RUN:.2f} % of one core over {RUN:.1f} s |")
print(f"| ticks | {int(ticks)} taken in {RUN:.1f} s at 1 Hz ({RUN - ticks:.1f} s without a tick: lateness) |")
print(f"| probe per tick | median {st.median(probes):.1f} ms, max {max(probes):.1f} ms |")
print(f"| storage | {rb / 1024:.0f} kB of sample_interval rows for {int(rt)} ticks = {rb / max(rt, 1) * 86400 / 1024 / 1024:.0f} MB per day at 1 Hz (row sizes; series rows are written once) |")
print(f"| snapshot | folio_perf_end(): {float(t_snap):.2f} s |")
print(f"| report | folio_perf_report(w, 'text'): {float(t_rep):.2f} s, {length} characters |")
PY
