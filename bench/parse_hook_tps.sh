#!/usr/bin/env bash
# bench/parse_hook_tps.sh - what folio_perf's per-statement hooks cost a
# trivial statement: pgbench select-only TPS against a server with
# folio_perf preloaded (defaults: relation recording on, plans at the
# default threshold, sampler at 1 Hz) and against one with
# pg_stat_statements alone, side by side.
#
# The private clusters run at the same time (idle but for the run); every
# round runs each, in an order that rotates from round to round, with the
# simple and the prepared protocol, 2 clients, RUN seconds each.  Prints
# per protocol the median TPS of each server with min..max and the ratio
# of the medians to pg_stat_statements alone.  The machine is shared and
# noisy: read the ratio of medians, not a single run.
#
# Usage (as root):  bash bench/parse_hook_tps.sh [ROUNDS] [RUN]   # default 7 10
#   BIN=... (PostgreSQL 15 bin with folio_perf installed), PORT=... (three
#   ports from it), DATA=...; BIN_OLD=... a second installation with another
#   build of folio_perf adds the mode "old" (e.g. the commit before a change);
#   CONNECT=1 opens a connection per transaction (pgbench -C): what a
#   session's start and end cost (the ended-session CPU reading at exit)
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail
ROUNDS=${1:-7}
RUN=${2:-10}
PORT=${PORT:-55490}
BIN=${BIN:-/usr/lib/postgresql/15/bin}
DATA=${DATA:-/tmp/fperf_parse_tps}
SCALE=${SCALE:-10}
[ "$(id -u)" = 0 ] || { echo "run as root" >&2; exit 1; }
as_pg() { su postgres -s /bin/bash -c "$*"; }

declare -A port=([fp]=$PORT [base]=$((PORT + 1)) [old]=$((PORT + 2)))
declare -A bin=([fp]=$BIN [base]=$BIN [old]=${BIN_OLD:-})
MODES="fp base"; [ -n "${BIN_OLD:-}" ] && MODES="fp old base"
rm -rf "$DATA"; mkdir -p "$DATA"; chown postgres:postgres "$DATA"
for m in $MODES; do
	B=${bin[$m]}
	as_pg "$B/initdb -D $DATA/$m -A trust >/dev/null"
	cat >>"$DATA/$m/postgresql.conf" <<EOC
port = ${port[$m]}
listen_addresses = ''
unix_socket_directories = '$DATA'
shared_buffers = 128MB
compute_query_id = on
EOC
	if [ $m != base ]; then
		cat >>"$DATA/$m/postgresql.conf" <<EOC
shared_preload_libraries = 'pg_stat_statements,folio_perf'
folio_perf.database = 'bench'
folio_perf.sample_interval = 1000
EOC
	else
		echo "shared_preload_libraries = 'pg_stat_statements'" >>"$DATA/$m/postgresql.conf"
	fi
	as_pg "$B/pg_ctl -D $DATA/$m -l $DATA/$m.log -w start >/dev/null"
	as_pg "$B/createdb -h $DATA -p ${port[$m]} bench"
	as_pg "$B/psql -X -q -h $DATA -p ${port[$m]} -d bench -c 'CREATE EXTENSION pg_stat_statements'"
	[ $m != base ] && as_pg "$B/psql -X -q -h $DATA -p ${port[$m]} -d bench -c 'CREATE EXTENSION folio_perf'"
	as_pg "$B/pgbench -q -i -s $SCALE -h $DATA -p ${port[$m]} bench >/dev/null 2>&1"
done
trap 'for m in $MODES; do as_pg "${bin[$m]}/pg_ctl -D $DATA/$m -m fast stop >/dev/null" || true; done' EXIT

run() {	# mode protocol -> TPS
	as_pg "${bin[$1]}/pgbench -n -S ${CONNECT:+-C} -M $2 -c 2 -j 2 -T $RUN -h $DATA -p ${port[$1]} bench 2>/dev/null" |
		sed -n 's/^tps = \([0-9.]*\).*/\1/p'
}
declare -A res
for r in $(seq 1 "$ROUNDS"); do
	# rotate the order: each mode runs first, middle and last in turn
	set -- $MODES; k=$(( (r - 1) % $# )); order=""
	for i in $(seq 0 $(($# - 1))); do j=$(( (i + k) % $# + 1 )); order="$order ${!j}"; done
	for proto in simple prepared; do
		for m in $order; do
			t=$(run $m $proto)
			res[$m.$proto]="${res[$m.$proto]:-} $t"
			echo "round $r $proto $m $t"
		done
	done
done
echo
echo "| protocol | mode | TPS median [min..max] | ratio of medians to pg_stat_statements alone |"
echo "| --- | --- | --- | --- |"
for proto in simple prepared; do
	for m in $MODES; do
		python3 - "$proto" "$m" "${res[$m.$proto]}" "${res[base.$proto]}" <<'PY'
import sys, statistics as st
p, m, a, b = sys.argv[1], sys.argv[2], [float(x) for x in sys.argv[3].split()], [float(x) for x in sys.argv[4].split()]
ma, mb = st.median(a), st.median(b)
print(f"| {p} | {m} | {ma:.0f} [{min(a):.0f}..{max(a):.0f}] | {ma/mb:.3f} |")
PY
	done
done
