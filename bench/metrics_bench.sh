#!/usr/bin/env bash
# bench/metrics_bench.sh - cost of reading folio_perf_metrics (what a
# Prometheus exporter does every 15 s) with N connections open.
#
# Usage (as root): BIN=/usr/lib/postgresql/15/bin bash bench/metrics_bench.sh [CONNS] [SECONDS]
#
# A throwaway cluster (folio_perf installed in BIN's installation) with
# folio_perf preloaded and sampling at 1 Hz; CONNS idle connections held by
# bench/hold_connections.c, a third of them as roles of FOLIO module
# schemas so that attribution has work to do.  Then, alternating in 3
# rounds, one pgbench client for SECONDS each reads
#   baseline: SELECT 1
#   activity: SELECT count(*) FROM pg_stat_activity
#   metrics:  SELECT * FROM folio_perf_metrics
# and the average latency of each is printed (ms) with the metrics/activity
# ratio.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail
CONNS=${1:-800}
SECS=${2:-10}
BIN=${BIN:-/usr/lib/postgresql/15/bin}
here=$(cd "$(dirname "$0")" && pwd)
DATA=$(mktemp -d /tmp/folio_perf_metrics_bench.XXXXXX)
PORT=${PORT:-55499}
chown postgres "$DATA"
as_pg() { su postgres -s /bin/bash -c "$*"; }
cleanup() {
	pkill -f -- "$DATA/hold_connections" 2>/dev/null || true
	as_pg "$BIN/pg_ctl -D $DATA/pg -m immediate stop" >/dev/null 2>&1 || true
	rm -rf "$DATA"
}
trap cleanup EXIT

as_pg "$BIN/initdb -D $DATA/pg -A trust" >/dev/null
cat >> "$DATA/pg/postgresql.conf" <<CONF
shared_preload_libraries = 'pg_stat_statements,folio_perf'
compute_query_id = on
folio_perf.sample_interval = 1000
folio_perf.database = 'bench'
max_connections = $((CONNS + 20))
listen_addresses = ''
unix_socket_directories = '$DATA'
port = $PORT
CONF
as_pg "$BIN/pg_ctl -D $DATA/pg -l $DATA/log -w start" >/dev/null
psql_() { as_pg "$BIN/psql -h $DATA -p $PORT -X -q -v ON_ERROR_STOP=1 $*"; }
psql_ postgres -c "'CREATE DATABASE bench'"
psql_ bench <<'SQL'
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION folio_perf;
DO $$
BEGIN
  FOR t IN 1..10 LOOP
    FOR m IN 1..10 LOOP
      EXECUTE format('CREATE ROLE %I LOGIN', format('fs%s_mod_m%s', lpad(t::text, 8, '0'), m));
    END LOOP;
  END LOOP;
END $$;
SQL
cc -O2 -o "$DATA/hold_connections" "$here/hold_connections.c" \
	-I"$("$BIN/pg_config" --includedir)" -L"$("$BIN/pg_config" --libdir)" -lpq
chmod 755 "$DATA/hold_connections"
third=$((CONNS / 3))
per_role=$(( (third + 99) / 100 ))
as_pg "$DATA/hold_connections 'host=$DATA port=$PORT dbname=bench' $((CONNS - per_role * 100))" >/dev/null 2>&1 &
for t in $(seq 1 10); do for m in $(seq 1 10); do
	as_pg "$DATA/hold_connections 'host=$DATA port=$PORT dbname=bench user=fs$(printf %08d "$t")_mod_m$m application_name=mod-m$m-1.0.0' $per_role" >/dev/null 2>&1 &
done; done
for _ in $(seq 1 120); do
	n=$(psql_ bench -Atc "\"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'\"")
	[ "$n" -ge "$CONNS" ] && break
	sleep 0.5
done
sleep 2
echo "connections open: $n; metrics rows: $(psql_ bench -Atc "'SELECT count(*) FROM folio_perf_metrics'")"
echo 'SELECT 1;' > "$DATA/baseline.sql"
echo 'SELECT count(*) FROM pg_stat_activity;' > "$DATA/activity.sql"
echo 'SELECT * FROM folio_perf_metrics;' > "$DATA/metrics.sql"
chmod 644 "$DATA"/*.sql
declare -A lat
for round in 1 2 3; do
	for q in baseline activity metrics; do
		l=$(as_pg "$BIN/pgbench -n -h $DATA -p $PORT -c 1 -T $SECS -f $DATA/$q.sql bench" |
			awk '/latency average/ {print $4}')
		lat[$q]="${lat[$q]:-} $l"
	done
done
for q in baseline activity metrics; do echo "$q ms:${lat[$q]}"; done
python3 - "${lat[activity]}" "${lat[metrics]}" <<'PY'
import sys, statistics
a = [float(x) for x in sys.argv[1].split()]
m = [float(x) for x in sys.argv[2].split()]
print("metrics median %.3f ms; pg_stat_activity median %.3f ms; ratio %.2f"
      % (statistics.median(m), statistics.median(a), statistics.median(m) / statistics.median(a)))
PY
