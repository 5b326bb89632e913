#!/usr/bin/env bash
# bench/check_capture.sh - exercise the incremental capture with DDL and DML
# on a small fixture and check its invariants (bench/sql/check_capture.sql)
# after every snapshot.  Needs a running server (bench/run.sh --keep leaves
# one): bench/check_capture.sh [-p PORT] [-h HOST] [--loopback]
# --loopback: the database is also added as a remote target of itself
# (folio_perf_target_add over the unix socket), every step takes a remote
# snapshot too, and the same invariants are checked for the target's state.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
H=${PGB_HOME:-/opt/pg_bench}
BIN=$H/usr/lib/postgresql/15/bin
port=${PGB_PORT:-55450} host=/tmp loopback=0
while [ $# -gt 0 ]; do
	case "$1" in -p) port=$2; shift 2 ;; -h) host=$2; shift 2 ;; --loopback) loopback=1; shift ;;
		*) echo "usage: $0 [-p PORT] [-h HOST] [--loopback]" >&2; exit 2 ;; esac
done
db=fx_check
q() { "$BIN/psql" -X -q -h "$host" -p "$port" -U postgres -v ON_ERROR_STOP=1 -d "$db" "$@"; }
PATH=$BIN:$PATH bash "$here/../test/fixture/build_fixture.sh" -d "$db" -t 2 -P 5 -r 50 -f -q -h "$host" -p "$port" -U postgres
q -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" -c "CREATE EXTENSION folio_perf"
tgt=''
if [ "$loopback" = 1 ]; then
	tgt=$(q -Atc "SELECT folio_perf_target_add('loopback', 'host=$host port=$port dbname=$db user=postgres')")
fi
step() {
	echo "-- $1"
	q -o /dev/null -c "$2"
	q -c "SELECT pg_stat_force_next_flush()" >/dev/null
	q -c "SELECT folio_perf_snapshot('$1')" >/dev/null
	q -f "$here/sql/check_capture.sql" 2>&1 | sed 's/^psql.*NOTICE:  /   /'
	if [ -n "$tgt" ]; then
		q -c "SELECT folio_perf_snapshot('$1', 'loopback')" >/dev/null
		PGOPTIONS="-c fp.target=$tgt" q -f "$here/sql/check_capture.sql" 2>&1 | sed 's/^psql.*NOTICE:  /   /'
	fi
}
s=fs09000000_mod_inventory_storage
step "first snapshot" "SELECT 1"
step "idle" "SELECT 1"
step "reads" "SELECT count(*) FROM $s.instance; SELECT * FROM $s.item WHERE id = gen_random_uuid()"
step "inserts" "INSERT INTO $s.instance (id, jsonb) SELECT gen_random_uuid(), jsonb_build_object('title', repeat('x', 3000) || g) FROM generate_series(1, 2000) g"
step "updates" "UPDATE $s.instance SET jsonb = jsonb || '{\"a\":1}' WHERE random() < 0.5"
step "deletes" "DELETE FROM $s.instance WHERE jsonb->>'title' LIKE 'xxx%' AND random() < 0.3"
step "vacuum" "VACUUM $s.instance"
step "analyze" "ANALYZE $s.item"
step "truncate" "TRUNCATE $s.holdings_record CASCADE"
step "create table and index" "CREATE TABLE $s.bench_new (id int PRIMARY KEY, v text); INSERT INTO $s.bench_new SELECT g, repeat('y', g % 100) FROM generate_series(1, 5000) g; CREATE INDEX ON $s.bench_new (v)"
step "create index on a written table" "CREATE INDEX ON $s.instance ((jsonb->>'title'))"
step "vacuum full" "VACUUM FULL $s.instance"
step "drop index" "DROP INDEX $s.bench_new_v_idx"
step "drop table" "DROP TABLE $s.bench_new"
step "new schema" "CREATE SCHEMA fs09000009_mod_x; CREATE TABLE fs09000009_mod_x.t (a int); INSERT INTO fs09000009_mod_x.t SELECT generate_series(1, 100)"
step "drop schema" "DROP SCHEMA fs09000009_mod_x CASCADE"
step "statements leave (reset)" "SELECT pg_stat_statements_reset()"
step "idle again" "SELECT 1"
echo "all invariants held"
