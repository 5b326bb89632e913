#!/usr/bin/env bash
# bench/pg_profile_side_by_side.sh - folio_perf's table health and
# pg_profile 4.x's schema object sections on the same window (#29).
#
#   bash bench/pg_profile_side_by_side.sh [-b BINDIR] [-o OUTDIR]
#
# BINDIR (default: pg_config's) is a PostgreSQL with folio_perf and
# pg_profile installed (pg_profile is not a Debian package: build it from
# its sources with `make USE_PGXS=1 install`; it needs dblink and
# pg_stat_statements, which Debian's server package has).  Run as a user
# that may run initdb.  It starts a scratch cluster, builds the scenario of
# test/sql/table_health.sql (a 100,000-row table read 50 times by a
# statement without an index, a duplicate index, a table updated 30,000
# times with autovacuum off and one vacuumed), brackets it with
# pg_profile's take_sample() and folio_perf_begin()/folio_perf_end(), and
# writes OUTDIR/pg_profile_report.html (pg_profile's report of the two
# samples), OUTDIR/folio_perf_health.txt (folio_perf_table_health and
# folio_perf_index_usage of the window) and OUTDIR/side_by_side.txt: the
# same table's figures as each reports them.  doc/pg_profile.md has what
# one run showed.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail
bindir=$(pg_config --bindir 2>/dev/null || true)
out=${TMPDIR:-/tmp}/pg_profile_side_by_side
while getopts b:o: opt; do
	case $opt in
	b) bindir=$OPTARG ;;
	o) out=$OPTARG ;;
	*) echo "usage: $0 [-b BINDIR] [-o OUTDIR]" >&2; exit 2 ;;
	esac
done
export PATH=$bindir:$PATH
if [ ! -f "$("$bindir/pg_config" --sharedir)/extension/pg_profile.control" ]; then
	echo "pg_profile is not installed in $("$bindir/pg_config" --sharedir)/extension (build it with make USE_PGXS=1 install)" >&2
	exit 1
fi
mkdir -p "$out"
data=$(mktemp -d "${TMPDIR:-/tmp}/pgprof.XXXXXX")
port=$((20000 + RANDOM % 20000))
trap 'pg_ctl -D "$data/d" -m immediate stop > /dev/null 2>&1 || true; rm -rf "$data"' EXIT
initdb -D "$data/d" > /dev/null
cat >> "$data/d/postgresql.conf" <<EOF
shared_preload_libraries = 'pg_stat_statements,folio_perf'
port = $port
unix_socket_directories = '$data'
listen_addresses = ''
compute_query_id = on
pg_stat_statements.track = all
track_io_timing = on
folio_perf.database = 'postgres'
folio_perf.sample_interval = 100
EOF
pg_ctl -D "$data/d" -l "$data/log" -w start > /dev/null
psql_() { psql -X -q -h "$data" -p "$port" -d postgres -v ON_ERROR_STOP=1 "$@"; }
psql_ -o /dev/null <<'EOF'
CREATE EXTENSION pg_stat_statements;
CREATE EXTENSION dblink;
CREATE EXTENSION pg_profile;
CREATE EXTENSION folio_perf;
CREATE SCHEMA fs29_mod_users;
CREATE TABLE fs29_mod_users.users (id int, username text, jsonb jsonb);
INSERT INTO fs29_mod_users.users SELECT g, 'user' || g, '{}' FROM generate_series(1, 100000) g;
CREATE INDEX users_id_idx ON fs29_mod_users.users (id);
CREATE INDEX users_id_copy_idx ON fs29_mod_users.users (id);
CREATE TABLE fs29_mod_users.groups (id int, name text);
INSERT INTO fs29_mod_users.groups SELECT g, 'group' || g FROM generate_series(1, 1000) g;
CREATE TABLE fs29_mod_users.loans (id int PRIMARY KEY, n int) WITH (autovacuum_enabled = off);
INSERT INTO fs29_mod_users.loans SELECT g, 0 FROM generate_series(1, 10000) g;
CREATE TABLE fs29_mod_users.loans_vacuumed (id int PRIMARY KEY, n int) WITH (autovacuum_enabled = off);
INSERT INTO fs29_mod_users.loans_vacuumed SELECT g, 0 FROM generate_series(1, 10000) g;
ANALYZE;
SELECT pg_stat_force_next_flush();
EOF
# the window: a pg_profile sample and folio_perf_begin at each end
psql_ -At -c "SELECT count(*) FROM take_sample('local', false)" > /dev/null
w=$(psql_ -At -c "SELECT folio_perf_begin('side by side')")
psql_ -o /dev/null <<'EOF'
SELECT format('SELECT count(*) FROM fs29_mod_users.users WHERE username = %L', 'user' || g) FROM generate_series(1, 50) g \gexec
SELECT format('SELECT count(*) FROM fs29_mod_users.groups WHERE name = %L', 'group' || g) FROM generate_series(1, 50) g \gexec
UPDATE fs29_mod_users.loans SET n = n + 1;
UPDATE fs29_mod_users.loans SET n = n + 1;
UPDATE fs29_mod_users.loans SET n = n + 1;
UPDATE fs29_mod_users.loans_vacuumed SET n = n + 1;
UPDATE fs29_mod_users.loans_vacuumed SET n = n + 1;
UPDATE fs29_mod_users.loans_vacuumed SET n = n + 1;
SELECT pg_stat_force_next_flush();
VACUUM fs29_mod_users.loans_vacuumed;
SELECT pg_stat_force_next_flush();
EOF
psql_ -At -c "SELECT folio_perf_end($w)" > /dev/null
psql_ -At -c "SELECT count(*) FROM take_sample('local', false)" > /dev/null
read -r s1 s2 <<< "$(psql_ -At -F ' ' -c "SELECT min(sample), max(sample) FROM show_samples()")"
psql_ -At -c "SELECT get_report($s1, $s2)" > "$out/pg_profile_report.html"
{
	echo "folio_perf_table_health($w)"
	psql_ -c "SELECT schema_name, relname, seq_scan, seq_tup_read, idx_scan, n_tup_upd, n_tup_hot_upd_pct, dead_tup, vacuum_count, finding
		FROM (SELECT h.*, h.hot_update_pct AS n_tup_hot_upd_pct FROM folio_perf_table_health($w) h) x
		WHERE schema_name = 'fs29_mod_users' ORDER BY relname"
	echo "folio_perf_index_usage($w)"
	psql_ -c "SELECT table_name, index_name, idx_scan, unused, finding FROM folio_perf_index_usage($w)
		WHERE schema_name = 'fs29_mod_users' ORDER BY table_name, index_name"
	echo "folio_perf_table_health_statements($w)"
	psql_ -c "SELECT relname, evidence, calls, left(query, 70) AS query FROM folio_perf_table_health_statements($w)"
} > "$out/folio_perf_health.txt"
# pg_profile's own tables for the same samples: its report's "Top tables
# by estimated sequential scan volume" and "Top tables by n_dead_tup"
# come from these
{
	echo "== the same table in both (samples $s1-$s2, window $w)"
	psql_ -c "SELECT 'pg_profile' AS tool, sum(seq_scan) AS seq_scan, sum(seq_tup_read) AS seq_tup_read,
		sum(idx_scan) AS idx_scan, sum(n_tup_upd) AS n_tup_upd
		FROM sample_stat_tables t JOIN tables_list l USING (server_id, datid, relid)
		WHERE l.relname = 'users' AND l.schemaname = 'fs29_mod_users' AND t.sample_id = $s2
		UNION ALL
		SELECT 'folio_perf', seq_scan, seq_tup_read, idx_scan, n_tup_upd FROM folio_perf_table_health($w)
		WHERE schema_name = 'fs29_mod_users' AND relname = 'users'"
	echo "== pg_profile's report: its sections"
	grep -oE '<h3[^>]*>[^<]+</h3>' "$out/pg_profile_report.html" | sed -E 's/<[^>]+>//g'
} > "$out/side_by_side.txt" 2>&1
cat "$out/side_by_side.txt"
echo "written: $out/pg_profile_report.html $out/folio_perf_health.txt $out/side_by_side.txt"
