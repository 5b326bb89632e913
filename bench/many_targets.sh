#!/usr/bin/env bash
# bench/many_targets.sh - one repository samples ten remote targets at 1 Hz.
#
# Starts ten small clusters (the targets: pg_stat_statements, a collector
# role, each with 5 idle and 2 busy sessions) on ports PORT+1 .. PORT+10
# and a repository with folio_perf (folio_perf.sample_interval = 1000, the
# default) on PORT, adds the ten targets, then measures for DURATION
# seconds twice: the repository alone (no target enabled: the baseline of
# the same run), then with the ten targets.  Prints, per phase, the
# sampler worker's CPU (utime + stime of /proc/<pid>/stat) per minute and
# as a ratio to the baseline, and per target the ticks answered and missed
# and the lateness of its ticks: the gap between consecutive ticks stored
# (sample_interval.tick_ms) minus the 1000 ms interval (mean, p95, max).
#
# Usage (as root): BIN=/usr/lib/postgresql/15/bin bench/many_targets.sh [DURATION] [PORT]
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail
DURATION=${1:-120}
PORT=${2:-5650}
BIN=${BIN:-/usr/lib/postgresql/15/bin}
DATA=${DATA:-/tmp/fperf_many_targets}
N=10

as_pg() { su postgres -s /bin/bash -c "$*"; }
rpsql() { as_pg "$BIN/psql -X -q -At -h /tmp -p $PORT -d postgres -c \"$1\""; }

rm -rf "$DATA"
mkdir -p "$DATA"
chown postgres: "$DATA"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for d in "$DATA"/t* "$DATA"/repo; do
		[ -f "$d/postmaster.pid" ] && as_pg "$BIN/pg_ctl -D $d stop -m immediate >/dev/null" || true
	done
}
trap cleanup EXIT

start() {
	local dir=$1 port=$2 extra=$3
	as_pg "$BIN/initdb -D $dir -A trust >/dev/null"
	cat >> "$dir/postgresql.conf" <<EOF
port = $port
unix_socket_directories = '/tmp'
listen_addresses = ''
shared_buffers = 16MB
max_connections = 30
$extra
EOF
	as_pg "$BIN/pg_ctl -D $dir -l $dir/log start -w >/dev/null"
}

for i in $(seq 1 $N); do
	p=$((PORT + i))
	start "$DATA/t$i" "$p" "shared_preload_libraries = 'pg_stat_statements'"
	as_pg "$BIN/psql -X -q -h /tmp -p $p -d postgres -c \"CREATE EXTENSION pg_stat_statements; CREATE ROLE folio_perf_collector LOGIN IN ROLE pg_read_all_stats\""
	# 5 idle sessions and 2 that run a short query every 100 ms
	for k in 1 2 3 4 5; do
		as_pg "$BIN/psql -X -q -h /tmp -p $p -d postgres -c 'SELECT pg_sleep(100000)'" >/dev/null 2>&1 &
		pids+=($!)
	done
	for k in 1 2; do
		as_pg "while :; do echo 'SELECT count(*) FROM pg_class; SELECT pg_sleep(0.1);'; done | $BIN/psql -X -q -h /tmp -p $p -d postgres" >/dev/null 2>&1 &
		pids+=($!)
	done
done
start "$DATA/repo" "$PORT" "shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.database = 'postgres'
folio_perf.sample_interval = 1000"
rpsql "CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf"
for i in $(seq 1 $N); do
	rpsql "SELECT folio_perf_target_add('t$i', 'host=/tmp port=$((PORT + i)) dbname=postgres user=folio_perf_collector', 2)" >/dev/null
done

worker_pid() { pgrep -f "postgres: folio_perf sampler" | while read -r p; do
	if [ "$(readlink /proc/"$p"/cwd 2>/dev/null)" = "$DATA/repo" ]; then echo "$p"; fi; done | head -1; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

measure() {
	local label=$1 pid c0 c1 t0 t1
	pid=$(worker_pid)
	c0=$(cpu_ticks "$pid")
	t0=$(date +%s.%N)
	sleep "$DURATION"
	c1=$(cpu_ticks "$pid")
	t1=$(date +%s.%N)
	awk -v c=$((c1 - c0)) -v hz="$hz" -v s="$(echo "$t1 - $t0" | bc)" -v l="$label" \
		'BEGIN { printf "%s: worker CPU %.2f s in %.0f s = %.2f s per minute (%.2f%% of one CPU)\n", l, c / hz, s, 60 * c / hz / s, 100 * c / hz / s }'
}

# phase 1: no target enabled
rpsql "UPDATE folio_perf_data.target SET enabled = false" >/dev/null
sleep 12
measure "repository alone"
# phase 2: ten targets
rpsql "UPDATE folio_perf_data.target SET enabled = true" >/dev/null
sleep 12
t_from=$(rpsql "SELECT now()")
measure "ten targets at 1 Hz"
rpsql "SELECT folio_perf_sampler_flush()" >/dev/null
echo "per target over the measured ${DURATION} s (ticks answered, missed; lateness = tick gap - 1000 ms):"
rpsql "
WITH t AS (
    SELECT i.target_id, i.started_at + u.ms * interval '1 millisecond' AS at
    FROM folio_perf_data.sample_interval i, unnest(i.tick_ms) AS u(ms)
    WHERE i.target_id IS NOT NULL AND i.ended_at > '$t_from'::timestamptz),
g AS (
    SELECT target_id, 1000 * extract(epoch FROM at - lag(at) OVER (PARTITION BY target_id ORDER BY at)) - 1000 AS late
    FROM t)
SELECT format('%s: %s ticks stored, %s missed (since start); lateness mean %s ms, p95 %s ms, max %s ms',
              x.name, count(*) + 1, max(x.sampler_ticks_missed),
              round(avg(g.late)::numeric, 1),
              round((percentile_cont(0.95) WITHIN GROUP (ORDER BY g.late))::numeric, 1),
              round(max(g.late)::numeric, 1))
FROM g JOIN folio_perf_targets x USING (target_id)
WHERE g.late IS NOT NULL
GROUP BY x.name, x.target_id ORDER BY x.target_id"
echo "the repository's own ticks over the same time:"
rpsql "
WITH t AS (
    SELECT i.started_at + u.ms * interval '1 millisecond' AS at
    FROM folio_perf_data.sample_interval i, unnest(i.tick_ms) AS u(ms)
    WHERE i.target_id IS NULL AND i.ended_at > '$t_from'::timestamptz),
g AS (SELECT 1000 * extract(epoch FROM at - lag(at) OVER (ORDER BY at)) - 1000 AS late FROM t)
SELECT format('local: %s ticks; lateness mean %s ms, p95 %s ms, max %s ms', count(*) + 1,
              round(avg(late)::numeric, 1), round((percentile_cont(0.95) WITHIN GROUP (ORDER BY late))::numeric, 1),
              round(max(late)::numeric, 1))
FROM g WHERE late IS NOT NULL"
