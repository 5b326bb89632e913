#!/usr/bin/env bash
# bench/plans_bench.sh - overhead of folio_perf's plan capture.
#
# Runs a private cluster as the "postgres" OS user with pgbench data (scale
# 10, 1M accounts) and measures, in rounds so that configurations alternate
# under the same machine noise, these configurations:
#   none      shared_preload_libraries = 'pg_stat_statements' only
#   off       folio_perf preloaded, plan_min_duration = -1
#   default   plan_min_duration = 100 ms (no execution reaches it here)
#   all       plan_min_duration = 0: every execution is fingerprinted and
#             looked up; a plan is built only when it is the slowest so far
#   analyze   plan_min_duration = 0, plan_analyze = on, sample_rate = 1
#   analyze10 the same with plan_sample_rate = 0.1
# on two statements:
#   L1/W1  a primary-key lookup (the per-execution cost on tiny statements)
#   L2/W2  a 10,000-row index range scan with an aggregate (where per-node
#          instrumentation, plan_analyze, costs most)
# 1. CPU time of the backend per execution (utime + stime from
#    /proc/self/stat around a PL/pgSQL loop running the statement): the
#    executor hooks' cost without client round trips, and insensitive to
#    other load on the machine.  The loop's statements are nested, and the
#    analyze sample is drawn once per top-level statement (the DO), so
#    analyze10 is meaningful in the pgbench figures only.
# 2. pgbench -M prepared throughput, 1 client (end to end; noisy on a
#    shared machine).
# Every configuration starts from a restart with the table and its index
# prewarmed into shared buffers.
# 3. The cost of building and storing a plan: N distinct statements, each
#    new to the store, with plan_min_duration -1 and 0.
#
# Usage (as root): BIN=/opt/pg_plans/usr/lib/postgresql/15/bin \
#                  bench/plans_bench.sh [PGBENCH_SECONDS] [ROUNDS] [PORT]
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail
SECS=${1:-10}
ROUNDS=${2:-5}
PORT=${3:-55461}
BIN=${BIN:-/usr/lib/postgresql/15/bin}
DATA=${DATA:-/tmp/fperf_plans_bench}
CLIENTS=${CLIENTS:-1}
L1=${L1:-300000}
L2=${L2:-3000}
HZ=$(getconf CLK_TCK)

as_pg() { su postgres -s /bin/bash -c "$*"; }
PSQL="$BIN/psql -X -q -h /tmp -p $PORT -d postgres"

rm -rf "$DATA"
as_pg "$BIN/initdb -D $DATA -A trust >/dev/null"
cat >> "$DATA/postgresql.conf" <<EOF
port = $PORT
unix_socket_directories = '/tmp'
listen_addresses = ''
shared_buffers = 256MB
max_parallel_workers_per_gather = 0
compute_query_id = on
folio_perf.sample_interval = 0
include_if_exists = 'preload.conf'
EOF
preload() {
	echo "shared_preload_libraries = '$1'" > "$DATA/preload.conf"
	chown postgres "$DATA/preload.conf"
	as_pg "$BIN/pg_ctl -D $DATA -l $DATA/log restart -w -m fast >/dev/null"
}
echo "shared_preload_libraries = 'pg_stat_statements,folio_perf'" > "$DATA/preload.conf"
chown postgres "$DATA/preload.conf"
as_pg "$BIN/pg_ctl -D $DATA -l $DATA/log start -w >/dev/null"
trap 'as_pg "$BIN/pg_ctl -D $DATA stop -m fast >/dev/null" || true' EXIT
as_pg "$PSQL -c 'CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf; CREATE EXTENSION pg_prewarm'"
as_pg "$BIN/pgbench -q -i -s 10 -h /tmp -p $PORT postgres >/dev/null 2>&1"
cat > "$DATA/w2.sql" <<'EOF'
\set a random(1, 990000)
SELECT sum(abalance) FROM pgbench_accounts WHERE aid BETWEEN :a AND :a + 9999;
EOF
chown postgres "$DATA/w2.sql"

declare -A opts=(
	[none]=""
	[off]="-c folio_perf.plan_min_duration=-1"
	[default]="-c folio_perf.plan_min_duration=100"
	[all]="-c folio_perf.plan_min_duration=0"
	[analyze]="-c folio_perf.plan_min_duration=0 -c folio_perf.plan_analyze=on"
	[analyze10]="-c folio_perf.plan_min_duration=0 -c folio_perf.plan_analyze=on -c folio_perf.plan_sample_rate=0.1"
)
configs="none off default all analyze analyze10"
declare -A res
declare -A base

tps() {
	# $1 config, $2 workload args
	as_pg "PGOPTIONS='${opts[$1]}' $BIN/pgbench -n -M prepared -c $CLIENTS -j $CLIENTS -T $SECS $2 -h /tmp -p $PORT postgres 2>/dev/null" |
		awk '/^tps/ { printf "%.0f", $3 }'
}

cpu() {
	# $1 config; prints "L1 us/execution L2 us/execution"
	as_pg "PGOPTIONS='${opts[$1]}' $PSQL -At -F ' '" <<EOF | tail -1
SELECT pg_prewarm('pgbench_accounts') + pg_prewarm('pgbench_accounts_pkey') > 0 AS warm;
SELECT sum(x::bigint) AS t FROM unnest((string_to_array(pg_read_file('/proc/self/stat'), ' '))[14:15]) x \\gset c0_
DO \$\$ DECLARE s bigint; BEGIN FOR i IN 1..$L1 LOOP SELECT abalance INTO s FROM pgbench_accounts WHERE aid = 1 + (i::bigint * 7919) % 1000000; END LOOP; END \$\$;
SELECT sum(x::bigint) AS t FROM unnest((string_to_array(pg_read_file('/proc/self/stat'), ' '))[14:15]) x \\gset c1_
DO \$\$ DECLARE s bigint; BEGIN FOR i IN 1..$L2 LOOP SELECT sum(abalance) INTO s FROM pgbench_accounts WHERE aid BETWEEN 1 + (i * 7919) % 990000 AND 10000 + (i * 7919) % 990000; END LOOP; END \$\$;
SELECT sum(x::bigint) AS t FROM unnest((string_to_array(pg_read_file('/proc/self/stat'), ' '))[14:15]) x \\gset c2_
SELECT round((:c1_t - :c0_t) * 1e6 / $HZ / $L1, 2), round((:c2_t - :c1_t) * 1e6 / $HZ / $L2, 1);
EOF
}

for r in $(seq 1 "$ROUNDS"); do
	[ "${ONLY_BUILD:-0}" = 1 ] && break
	for c in $configs; do
		# every configuration starts from a restart and prewarmed buffers
		if [ "$c" = none ]; then
			preload pg_stat_statements
		else
			preload pg_stat_statements,folio_perf
		fi
		read -r u1 u2 <<<"$(cpu "$c")"
		res[$c,c1]="${res[$c,c1]:-} $u1"
		res[$c,c2]="${res[$c,c2]:-} $u2"
		w1=$(tps "$c" "-S")
		w2=$(tps "$c" "-f $DATA/w2.sql")
		res[$c,w1]="${res[$c,w1]:-} $w1"
		res[$c,w2]="${res[$c,w2]:-} $w2"
		echo "round $r $c: CPU L1 $u1 us, L2 $u2 us; pgbench W1 $w1 tps, W2 $w2 tps"
	done
done

median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
minimum() { tr ' ' '\n' | grep -v '^$' | sort -g | head -1; }
pct() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%+.1f%%", 100 * (a - b) / b }'; }
[ "${ONLY_BUILD:-0}" = 1 ] || {
echo
echo "medians of $ROUNDS rounds (CPU: also the minimum, the least disturbed round)"
echo "config     | L1 CPU us/exec median | vs none | min | vs none | L2 CPU us/exec median | vs none | min | vs none | W1 tps | vs none | W2 tps | vs none"
for k in c1 c2 w1 w2; do base[$k]=$(echo "${res[none,$k]}" | median); done
for k in c1 c2; do base[$k,min]=$(echo "${res[none,$k]}" | minimum); done
for c in $configs; do
	line=$(printf "%-10s" "$c")
	for k in c1 c2 w1 w2; do
		m=$(echo "${res[$c,$k]}" | median)
		line="$line | $m | $(pct "$m" "${base[$k]}")"
		if [ "$k" = c1 ] || [ "$k" = c2 ]; then
			n=$(echo "${res[$c,$k]}" | minimum)
			line="$line | $n | $(pct "$n" "${base[$k,min]}")"
		fi
	done
	echo "$line"
done
}

# Building plans: N distinct statements (a join of three tables; each with
# another subset of ten output columns, so that all cost the same to parse
# and plan), every one new to the store, so every one builds its plan (text
# and JSON) with plan_min_duration = 0.  Backend CPU with capture off and
# on; the difference is the cost of building and storing plans.
N=${N:-900}
gen() {
	local cols=(a.aid a.bid a.abalance a.filler b.bid b.bbalance b.filler t.tid t.bid t.tbalance)
	echo "SELECT sum(x::bigint) AS t FROM unnest((string_to_array(pg_read_file('/proc/self/stat'), ' '))[14:15]) x \\gset c0_"
	for i in $(seq 1 "$N"); do
		local list=''
		for j in $(seq 0 9); do
			if (( (i >> j) & 1 )); then list="$list${list:+, }${cols[$j]}"; fi
		done
		echo "SELECT $list FROM pgbench_accounts a JOIN pgbench_branches b ON b.bid = a.bid JOIN pgbench_tellers t ON t.bid = b.bid WHERE a.aid = $i ORDER BY t.tid LIMIT 5;"
	done
	echo "SELECT round((sum(x::bigint) - :c0_t) * 1000.0 / $HZ) FROM unnest((string_to_array(pg_read_file('/proc/self/stat'), ' '))[14:15]) x;"
}
gen > "$DATA/distinct.sql"
chown postgres "$DATA/distinct.sql"
build() {
	as_pg "$PSQL -c 'SELECT folio_perf_plans_reset()' >/dev/null"
	as_pg "PGOPTIONS='-c folio_perf.plan_min_duration=$1' $PSQL -At -f $DATA/distinct.sql" | tail -1
}
echo
for r in $(seq 1 "$ROUNDS"); do
	off=$(build -1)
	on=$(build 0)
	stored=$(as_pg "$PSQL -At -c 'SELECT plans_stored FROM folio_perf_plans_status'")
	# (some of the statements share a query id, so fewer plans are built)
	echo "$N distinct statements, backend CPU: capture off ${off} ms, on ${on} ms, $stored plans built: $(awk -v a="$on" -v b="$off" -v n="$stored" 'BEGIN { printf "%.0f", 1000 * (a - b) / n }') us per plan"
done
as_pg "$PSQL -c 'SELECT round(avg(length(plan_text))) AS text_bytes, round(avg(length(plan_json))) AS json_bytes, max(folio_perf_data.plan_outline(plan_text)) AS outline FROM folio_perf_plans_current() WHERE plan_text LIKE '\''Limit%'\'''"
