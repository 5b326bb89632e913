#!/usr/bin/env bash
# bench/sampler_bench.sh - storage per day and CPU of the folio_perf sampler
# with ~780 connections across 60 RMB-style roles (3 tenants x 20 modules).
#
# Runs a private cluster as the "postgres" OS user, opens 60 pgbench
# clients of 13 connections each (role <tenant>_<module>, application_name
# <module>-1.2.3, search_path = its schema), each connection idle 2 s then
# running one small query, and lets the sampler run at its defaults (1 s
# samples, 10 s flushes) for DURATION seconds.  Prints the storage written,
# extrapolated to 24 hours, and the worker's CPU from /proc/<pid>/stat.
#
# Usage (as root): BIN=/opt/pg_sampler/usr/lib/postgresql/15/bin \
#                  bench/sampler_bench.sh [DURATION] [PORT]
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail
DURATION=${1:-600}
PORT=${2:-55442}
BIN=${BIN:-/usr/lib/postgresql/15/bin}
DATA=${DATA:-/tmp/fperf_sampler_bench}
TENANTS="fs09000001 fs09000002 fs09000003"
MODULES="mod_inventory_storage mod_source_record_storage mod_source_record_manager
mod_users mod_circulation_storage mod_orders_storage mod_finance_storage
mod_data_import mod_search mod_permissions mod_login mod_configuration
mod_notes mod_tags mod_feesfines mod_invoice_storage mod_organizations_storage
mod_calendar mod_licenses mod_agreements"

as_pg() { su postgres -s /bin/bash -c "$*"; }
PSQL="$BIN/psql -X -q -h /tmp -p $PORT -d postgres"

rm -rf "$DATA"
as_pg "$BIN/initdb -D $DATA -A trust >/dev/null"
cat >> "$DATA/postgresql.conf" <<EOF
port = $PORT
unix_socket_directories = '/tmp'
listen_addresses = ''
max_connections = 900
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.database = 'postgres'
EOF
as_pg "$BIN/pg_ctl -D $DATA -l $DATA/log start -w >/dev/null"
# KEEP=1 leaves the cluster running for further measurements.
[ "${KEEP:-0}" = 1 ] || trap 'as_pg "$BIN/pg_ctl -D $DATA stop -m fast >/dev/null" || true' EXIT

as_pg "$PSQL -c 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf'"
for t in $TENANTS; do
	for m in $MODULES; do
		r="${t}_${m}"
		as_pg "$PSQL" <<EOF
CREATE ROLE $r LOGIN;
CREATE SCHEMA $r AUTHORIZATION $r;
CREATE TABLE $r.t (id int PRIMARY KEY, v text);
INSERT INTO $r.t SELECT g, md5(g::text) FROM generate_series(1, 1000) g;
ALTER TABLE $r.t OWNER TO $r;
ALTER ROLE $r SET search_path = $r;
EOF
	done
done
cat > "$DATA/client.sql" <<'EOF'
\set r random(1, 1000)
\sleep 2000 ms
SELECT count(*) FROM t WHERE id < :r;
EOF
chown postgres "$DATA/client.sql"

snap_size() {
	as_pg "$PSQL -At -c \"SELECT pg_total_relation_size('folio_perf_data.sample_interval') + pg_total_relation_size('folio_perf_data.sample_series')\""
}
worker_cpu() {
	local pid
	pid=$(as_pg "$PSQL -At -c 'SELECT pid FROM folio_perf_sampler_status()'")
	awk '{ print $14 + $15 }' "/proc/$pid/stat"
}

pids=()
for t in $TENANTS; do
	for m in $MODULES; do
		app="${m//_/-}-1.2.3"
		as_pg "PGAPPNAME=$app $BIN/pgbench -n -c 13 -j 1 -T $((DURATION + 60)) -f $DATA/client.sql -h /tmp -p $PORT -U ${t}_${m} postgres >/dev/null 2>&1" &
		pids+=($!)
	done
done
sleep 30	# let every client connect

as_pg "$PSQL -c 'SELECT folio_perf_sampler_flush()' >/dev/null"
size0=$(snap_size)
int0=$(as_pg "$PSQL -At -c 'SELECT count(*) FROM folio_perf_data.sample_interval'")
cpu0=$(worker_cpu)
t0=$(date +%s)
sleep "$DURATION"
as_pg "$PSQL -c 'SELECT folio_perf_sampler_flush()' >/dev/null"
as_pg "$PSQL -c 'VACUUM ANALYZE folio_perf_data.sample_interval' -c CHECKPOINT" >/dev/null
t1=$(date +%s)
cpu1=$(worker_cpu)
size1=$(snap_size)
int1=$(as_pg "$PSQL -At -c 'SELECT count(*) FROM folio_perf_data.sample_interval'")
clk=$(getconf CLK_TCK)

elapsed=$((t1 - t0))
echo "elapsed_s=$elapsed intervals=$((int1 - int0))"
as_pg "$PSQL -At -c \"SELECT 'connections_avg=' || round(avg(c), 1) FROM folio_perf_data.sample_interval, unnest(tick_connections) c WHERE interval_id > $int0\""
as_pg "$PSQL -At -c \"SELECT 'entries_per_interval=' || round(avg(cardinality(c_series) + cardinality(l_series) + coalesce(cardinality(u_series), 0)), 1), 'row_bytes_avg=' || round(avg(pg_column_size(i.*))) FROM folio_perf_data.sample_interval i WHERE interval_id > $int0\""
echo "storage_bytes=$((size1 - size0)) per_day_MB=$(echo "scale=1; ($size1 - $size0) * 86400 / $elapsed / 1048576" | bc)"
echo "worker_cpu_s=$(echo "scale=2; ($cpu1 - $cpu0) / $clk" | bc) worker_cpu_pct=$(echo "scale=3; ($cpu1 - $cpu0) * 100 / $clk / $elapsed" | bc)"
as_pg "$PSQL -At -c \"SELECT 'last_probe_ms=' || last_probe_ms, 'ticks=' || ticks, 'dropped=' || ticks_dropped, 'flush_errors=' || flush_errors FROM folio_perf_sampler_status()\""
kill "${pids[@]}" 2>/dev/null || true
wait 2>/dev/null || true
