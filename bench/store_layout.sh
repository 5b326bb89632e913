#!/usr/bin/env bash
# bench/store_layout.sh - the relation store's two layouts side by side
# (bench/sql/store_layout.sql): a first and a worst snapshot (every
# relation), steady snapshots, a window's facts over them, and the bytes
# each writes, in a scratch database of a running server.
#
#   bench/store_layout.sh [--port P] [--host H] [--schemas N] [--per N]
#                         [--steady N] [--snaps N] [--reps N]
#
# Defaults: 1,200 schemas of 88 relations (the 40-tenant fixture's
# 105,600), 250 relations changed per steady snapshot, 288 of them (a
# 24-hour day at the default interval), 3 repetitions of the worst
# snapshot.  Prints one table (ms and bytes per operation).
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
port=5432 host=/tmp schemas=1200 per=88 steady=250 snaps=288 reps=3 db=store_layout
while [ $# -gt 0 ]; do
	case "$1" in
		--port) port=$2; shift 2 ;;
		--host) host=$2; shift 2 ;;
		--schemas) schemas=$2; shift 2 ;;
		--per) per=$2; shift 2 ;;
		--steady) steady=$2; shift 2 ;;
		--snaps) snaps=$2; shift 2 ;;
		--reps) reps=$2; shift 2 ;;
		*) sed -n '2,14p' "$0" >&2; exit 2 ;;
	esac
done
psql=(psql -X -q -h "$host" -p "$port" -v ON_ERROR_STOP=1)
"${psql[@]}" -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db"
run() { "${psql[@]}" -d "$db" -v schemas="$schemas" -v per="$per" -v steady="$steady" "$@"; }
run -f "$here/sql/store_layout.sql"
q() { run -c "SET search_path = layout, pg_catalog" -c "$1" >/dev/null; }
show() { run -c "SET search_path = layout, pg_catalog" -c "$1"; }
# the first snapshot: every relation new
q "SELECT fill(1, NULL)"
q "SELECT timed('first: rows (rel)', 'SELECT store_rel(1)', 'layout.rel')"
q "SELECT timed('first: rows (rel_last)', 'SELECT store_last(1)', 'layout.rel_last')"
q "SELECT timed('first: arrays', 'SELECT store_arrays(1)', 'layout.inc')"
q "SELECT timed('first: arrays in chunks', 'SELECT store_chunks(1)', 'layout.inc_chunk')"
snap=1
for r in $(seq "$reps"); do
	snap=$((snap + 1))
	q "SELECT fill($snap, NULL)"
	q "VACUUM layout.rel, layout.rel_last, layout.inc, layout.inc_chunk"
	q "SELECT timed('worst $r: rows (rel)', 'SELECT store_rel($snap)', 'layout.rel')"
	q "SELECT timed('worst $r: rows (rel_last)', 'SELECT store_last($snap)', 'layout.rel_last')"
	q "SELECT timed('worst $r: arrays', 'SELECT store_arrays($snap)', 'layout.inc')"
	q "SELECT timed('worst $r: arrays in chunks', 'SELECT store_chunks($snap)', 'layout.inc_chunk')"
done
w0=$snap
q "SELECT steady($((w0 + 1)), $((w0 + snaps)), $steady)"
q "VACUUM ANALYZE layout.rel, layout.inc, layout.inc_chunk"
for r in 1 2; do
	q "SELECT timed('window of $snaps, facts $r: rows', 'SELECT count(*), sum(c1), sum(size_end - size_begin) FROM window_rows($w0, $((w0 + snaps)))')"
	q "SELECT timed('window of $snaps, facts $r: arrays', 'SELECT count(*), sum(c1), sum(size_end - size_begin) FROM window_arrays($w0, $((w0 + snaps)))')"
	q "SELECT timed('window of $snaps, facts $r: arrays in chunks', 'SELECT count(*), sum(c1), sum(size_end - size_begin) FROM window_chunks($w0, $((w0 + snaps)))')"
done
show "SELECT (SELECT count(*) FROM window_rows($w0, $((w0 + snaps)))) AS rows_facts,
          (SELECT count(*) FROM window_arrays($w0, $((w0 + snaps)))) AS arrays_facts,
          (SELECT count(*) FROM (SELECT * FROM window_rows($w0, $((w0 + snaps))) EXCEPT SELECT * FROM window_chunks($w0, $((w0 + snaps)))) d) AS chunks_differ,
          (SELECT count(*) FROM (SELECT * FROM window_rows($w0, $((w0 + snaps))) EXCEPT SELECT * FROM window_arrays($w0, $((w0 + snaps)))) d) AS differ"
show "SELECT what, ms, pg_size_pretty(bytes) AS bytes FROM timing ORDER BY ctid"
