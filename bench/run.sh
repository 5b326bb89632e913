#!/usr/bin/env bash
# bench/run.sh - folio_perf benchmarks: snapshot time and bytes
# against a naive copy of the statistics views and PoWA, growth from 1 to 40
# tenants, report and compare times over 24-hour windows, and the cost of
# the attribution hook.  See bench/README.md.
#
#   bench/run.sh --quick       # < 10 minutes from scratch: 1 and 4 tenants
#   bench/run.sh --full        # 1, 5, 10, 20, 40 tenants (~48,000 tables)
#
# Everything runs on a private PostgreSQL 15 under $PGB_HOME (default
# /opt/pg_bench): the system's binaries copied there, folio_perf built from
# this worktree and installed with DESTDIR, PoWA copied in if the Debian
# package is (or can be) installed.  Servers run as the OS user postgres on
# ports $PGB_PORT.. $PGB_PORT+2 (default 55450), socket dir /tmp, and are
# stopped at the end unless --keep.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/.." && pwd)
prog=bench/run.sh

H=${PGB_HOME:-/opt/pg_bench}
PORT=${PGB_PORT:-55450}
BIN=$H/usr/lib/postgresql/15/bin
DATA=$H/data

mode=quick
tenant_list=
reps=
parts=884              # marc_indexers partitions per tenant: 1,200 tables per tenant
mschemas=0             # --module-schemas: module schemas per tenant (0: tables.tsv's 20)
mtables=0              # --module-tables: every module schema padded to this many tables
scenarios="idle steady worst worst_write churn"
keep=0
do_snap=1 do_report=1 do_hook=1
out=
against=               # --against REV: the same scenarios for REV, in the same repetitions
report_timeout=120     # seconds: a report call that takes longer is recorded as timed out
# Every kind of window facts the build stores (stmt_delta, rel_delta and
# whatever it derives from them: the kinds fact_pair's check allows), for
# every report window, in that order: what a window's first report does.
store_facts="SELECT folio_perf_data.window_facts(k.k, w.begin_snap, w.end_snap)
    FROM bench.report_windows w,
         (SELECT m[1] AS k, row_number() OVER () AS o
          FROM pg_catalog.pg_constraint c,
               regexp_matches(pg_catalog.pg_get_constraintdef(c.oid), '''([a-z_]+)''', 'g') m
          WHERE c.conrelid = 'folio_perf_data.fact_pair'::regclass AND c.contype = 'c') k
    ORDER BY w.begin_snap, w.end_snap, k.o"

usage() {
	cat <<EOF
usage: $prog [--quick | --full] [options]

  --quick          1 and 4 tenants, 5 repetitions, 10 x 2 pgbench runs of 5 s (< 10 min)
  --full           1, 5, 10, 20 and 40 tenants, 7 repetitions, 20 x 2 pgbench runs of 10 s
  --tenants "L"    tenant counts to measure instead (e.g. "1 10 40")
  --reps N         repetitions per scenario (>= 5)
  --parts P        marc_indexers partitions per tenant (default $parts; 0: none)
  --module-schemas S  module schemas per tenant: tables.tsv's 20, then synthetic
                   <tenant>_mod_synth_NN (build_fixture.sh -S; default: the 20)
  --module-tables M   every module schema padded with synthetic RMB-shape tables
                   to M tables (build_fixture.sh -M; default: no padding)
  --shape issue35  issue 35's catalog: --parts 0 --module-schemas 30
                   --module-tables 40 (40 tenants: 1,200 schemas, ~49,000
                   tables, ~244,000 relations with TOAST); fixture fx_t<T>_p0_s30x40
  --scenarios L    the snapshot scenarios to run after the first snapshot
                   (default "$scenarios"; comma- or space-separated)
  --only WHAT      run only: snapshot, report, hook (comma-separated)
  --against REV    also build REV (a commit) into a second private tree and cluster
                   (a copy of the fixtures) and run every snapshot and report
                   scenario for it in the same repetitions; the table gives
                   the ratio working tree / REV per scenario and names every
                   figure more than 20 % worse
  --report-timeout S  a report call taking longer than S seconds is cancelled
                   and recorded as ">= S s" (default $report_timeout)
  --keep           leave the servers running at the end
  --out DIR        where results go (default bench/out/<mode>-<timestamp>)
  -h, --help       this text

Environment: PGB_HOME (default /opt/pg_bench), PGB_PORT (default 55450).
Prints one table of figures (markdown) at the end; raw results in DIR.
EOF
}

while [ $# -gt 0 ]; do
	case "$1" in
		--quick) mode=quick; shift ;;
		--full) mode=full; shift ;;
		--tenants) tenant_list=${2:?}; shift 2 ;;
		--reps) reps=${2:?}; shift 2 ;;
		--parts) parts=${2:?}; shift 2 ;;
		--module-schemas) mschemas=${2:?}; shift 2 ;;
		--module-tables) mtables=${2:?}; shift 2 ;;
		--shape)
			case "${2:?}" in
				issue35) parts=0 mschemas=30 mtables=40 ;;
				*) echo "$prog: unknown --shape: $2 (known: issue35)" >&2; exit 2 ;;
			esac
			shift 2 ;;
		--scenarios)
			scenarios=${2:?}; scenarios=${scenarios//,/ }
			for x in $scenarios; do
				case "$x" in idle|steady|worst|worst_write|churn) ;;
					*) echo "$prog: unknown scenario: $x" >&2; exit 2 ;;
				esac
			done
			shift 2 ;;
		--only)
			do_snap=0 do_report=0 do_hook=0
			IFS=, read -r -a what <<<"${2:?}"
			for x in "${what[@]}"; do
				case "$x" in
					snapshot) do_snap=1 ;; report) do_report=1 ;; hook) do_hook=1 ;;
					*) echo "$prog: unknown --only part: $x" >&2; exit 2 ;;
				esac
			done
			shift 2 ;;
		--keep) keep=1; shift ;;
		--against) against=${2:?}; shift 2 ;;
		--report-timeout) report_timeout=${2:?}; shift 2 ;;
		--out) out=${2:?}; shift 2 ;;
		-h|--help) usage; exit 0 ;;
		*) usage >&2; exit 2 ;;
	esac
done

if [ "$mode" = quick ]; then
	tenant_list=${tenant_list:-"1 4"}
	reps=${reps:-5}
	pgbench_secs=5
	pgbench_reps=10
	hook_loops="2000 4000"
else
	tenant_list=${tenant_list:-"1 5 10 20 40"}
	reps=${reps:-7}
	pgbench_secs=10
	pgbench_reps=20
	hook_loops="4000 8000"
fi
[ "$reps" -ge 1 ] || { echo "$prog: --reps must be positive" >&2; exit 2; }
out=${out:-$top/bench/out/$mode-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out"
res=$out/results.tsv
: >"$res"
log=$out/run.log
exec > >(tee -a "$log") 2>&1

t_start=$(date +%s)
say() { printf '[%4ds] %s\n' $(($(date +%s) - t_start)) "$*"; }
die() { say "ERROR: $*"; exit 1; }

# run a command as the postgres OS user (servers, initdb)
as_pg() {
	if [ "$(id -un)" = postgres ]; then "$@"; else su postgres -s /bin/bash -c "$(printf '%q ' "$@")"; fi
}

# ---------------------------------------------------------------- install
install_private() {
	if [ ! -x "$BIN/postgres" ]; then
		say "copying PostgreSQL 15 into $H"
		mkdir -p "$H/usr/lib" "$H/usr/share"
		cp -a /usr/lib/postgresql "$H/usr/lib/"
		cp -a /usr/share/postgresql "$H/usr/share/"
	fi
	say "building folio_perf ($(git -C "$top" rev-parse --short HEAD)$( [ -n "$(git -C "$top" status --porcelain -- src sql Makefile)" ] && echo ' with uncommitted changes')) and installing into $H"
	make -C "$top" -s PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config >"$out/make.log" 2>&1 ||
		{ cat "$out/make.log"; die "make failed"; }
	if grep -qi 'warning' "$out/make.log"; then say "make printed warnings (see $out/make.log)"; fi
	# the floors' functions (bench/floor), built apart from folio_perf
	rm -rf "$out/floor" && cp -a "$here/floor" "$out/floor"
	make -C "$out/floor" -s PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config >>"$out/make.log" 2>&1 ||
		die "make of bench/floor failed"
	make -C "$top" -s PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config install DESTDIR="$H" >>"$out/make.log" 2>&1 ||
		die "make install failed"
	install -m 755 "$out/floor/bench_floor.so" "$H/usr/lib/postgresql/15/lib/"
	# PoWA (Debian package postgresql-15-powa), for reference
	have_powa=0
	if [ ! -f /usr/lib/postgresql/15/lib/powa.so ] && [ "$(id -u)" = 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-15-powa >/dev/null 2>&1 || true
	fi
	if [ -f /usr/lib/postgresql/15/lib/powa.so ]; then
		cp -a /usr/lib/postgresql/15/lib/powa.so "$H/usr/lib/postgresql/15/lib/"
		cp -a /usr/share/postgresql/15/extension/powa* "$H/usr/share/postgresql/15/extension/"
		have_powa=1
	else
		say "PoWA is not installed and could not be installed: its column stays empty"
	fi
}

# The revision of --against: its sources (git archive, no work tree of its
# own), built and installed into a second private tree $HR, whose copied
# binaries find REV's folio_perf as $H's find the working tree's.
HR=$H/rev
BINR=$HR/usr/lib/postgresql/15/bin
RPORT=$((PORT + 3))
install_rev() {
	local src=$H/rev-src rev_id
	rev_id=$(git -C "$top" rev-parse --short "$against") || die "--against $against: not a commit"
	against_id=$rev_id
	if [ ! -x "$BINR/postgres" ]; then
		say "copying PostgreSQL 15 into $HR"
		mkdir -p "$HR/usr/lib" "$HR/usr/share"
		cp -a /usr/lib/postgresql "$HR/usr/lib/"
		cp -a /usr/share/postgresql "$HR/usr/share/"
	fi
	rm -rf "$src" && mkdir -p "$src"
	git -C "$top" archive "$rev_id" | tar -x -C "$src"
	say "building folio_perf $rev_id (--against) and installing into $HR"
	make -C "$src" -s PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config >"$out/make_rev.log" 2>&1 ||
		{ cat "$out/make_rev.log"; die "make of $rev_id failed"; }
	rm -f "$HR/usr/share/postgresql/15/extension"/folio_perf--*.sql
	make -C "$src" -s PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config install DESTDIR="$HR" >>"$out/make_rev.log" 2>&1 ||
		die "make install of $rev_id failed"
	install -m 755 "$out/floor/bench_floor.so" "$HR/usr/lib/postgresql/15/lib/"
	if [ "$have_powa" = 1 ]; then
		cp -a /usr/lib/postgresql/15/lib/powa.so "$HR/usr/lib/postgresql/15/lib/"
		cp -a /usr/share/postgresql/15/extension/powa* "$HR/usr/share/postgresql/15/extension/"
	fi
}

# ---------------------------------------------------------------- servers
conf_common() {
	cat <<EOF
listen_addresses = ''
unix_socket_directories = '/tmp'
compute_query_id = on
jit = off
autovacuum = off
checkpoint_timeout = 30min
max_wal_size = 8GB
EOF
}

main_up=0
start_main() {
	local d=$DATA/main
	if [ ! -f "$d/PG_VERSION" ]; then
		say "initdb $d"
		mkdir -p "$DATA"; chown postgres:postgres "$DATA" 2>/dev/null || true
		as_pg "$BIN/initdb" -D "$d" -U postgres -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
	fi
	# the benchmark's settings live in bench.conf, rewritten every run
	grep -q "^include_if_exists = 'bench.conf'" "$d/postgresql.conf" ||
		echo "include_if_exists = 'bench.conf'" >>"$d/postgresql.conf"
	{
		conf_common
		cat <<EOF
port = $PORT
shared_preload_libraries = 'pg_stat_statements,folio_perf'
pg_stat_statements.max = 5500
shared_buffers = 1GB
max_locks_per_transaction = 1024
max_connections = 100
# PoWA reads these with current_setting() even when powa.so is not loaded
powa.coalesce = 100
powa.retention = '1d'
EOF
	} >"$d/bench.conf"
	chown postgres:postgres "$d/bench.conf" 2>/dev/null || true
	if ! as_pg "$BIN/pg_ctl" -D "$d" status >/dev/null 2>&1; then
		as_pg "$BIN/pg_ctl" -D "$d" -l "$DATA/main.log" -w -t 120 start >/dev/null
	else
		# pick up a freshly installed folio_perf.so
		as_pg "$BIN/pg_ctl" -D "$d" -l "$DATA/main.log" -w -t 120 restart >/dev/null
	fi
	main_up=1
}

# REV's cluster: a copy of the main cluster's data directory (its fixtures),
# made again when the main cluster has fixtures it lacks; same settings but
# the port, binaries from $HR.
rev_up=0
start_rev() {
	local d=$DATA/rev want have=
	want=$(psqlm -d postgres -Atc "SELECT string_agg(datname, ' ' ORDER BY datname) FROM pg_database WHERE datname LIKE 'fx%'")
	if [ -f "$d/PG_VERSION" ]; then
		as_pg "$BINR/pg_ctl" -D "$d" status >/dev/null 2>&1 ||
			as_pg "$BINR/pg_ctl" -D "$d" -l "$DATA/rev.log" -w -t 120 start >/dev/null
		have=$(psqlr -d postgres -Atc "SELECT string_agg(datname, ' ' ORDER BY datname) FROM pg_database WHERE datname LIKE 'fx%'")
		as_pg "$BINR/pg_ctl" -D "$d" -w -m fast stop >/dev/null
	fi
	if [ "$want" != "$have" ]; then
		say "copying the main cluster (fixtures: $want) to $d for $against_id"
		as_pg "$BIN/pg_ctl" -D "$DATA/main" -w -m fast stop >/dev/null
		rm -rf "$d"
		as_pg cp -a "$DATA/main" "$d"
		rm -f "$d/postmaster.pid"
		as_pg "$BIN/pg_ctl" -D "$DATA/main" -l "$DATA/main.log" -w -t 120 start >/dev/null
	fi
	sed "s/^port = .*/port = $RPORT/" "$DATA/main/bench.conf" >"$d/bench.conf"
	chown postgres:postgres "$d/bench.conf" 2>/dev/null || true
	as_pg "$BINR/pg_ctl" -D "$d" -l "$DATA/rev.log" -w -t 120 start >/dev/null
	rev_up=1
}

hook_up=()
cleanup() {
	if [ "$keep" = 0 ]; then
		[ "$main_up" = 1 ] && as_pg "$BIN/pg_ctl" -D "$DATA/main" -w stop -m fast >/dev/null 2>&1 || true
		[ "$rev_up" = 1 ] && as_pg "$BINR/pg_ctl" -D "$DATA/rev" -w stop -m fast >/dev/null 2>&1 || true
		for d in "${hook_up[@]}"; do
			as_pg "$BIN/pg_ctl" -D "$d" -w stop -m fast >/dev/null 2>&1 || true
		done
	fi
}
trap cleanup EXIT

# CUR_PORT: the cluster a call goes to (the working tree's, or REV's on $RPORT)
psqlm() { "$BIN/psql" -X -q -h /tmp -p "${CUR_PORT:-$PORT}" -U postgres -v ON_ERROR_STOP=1 "$@"; }
psqlr() { CUR_PORT=$RPORT psqlm "$@"; }
# sessions that change statistics without leaving statements behind
notrack() { PGOPTIONS="-c pg_stat_statements.track=none -c folio_perf.track_relations=off" psqlm "$@"; }

# ---------------------------------------------------------------- fixtures
# the default shape's names stay fx_t<T>_p<P>; another shape has its own
fixture_db() {
	if [ "$mschemas" -gt 0 ] || [ "$mtables" -gt 0 ]; then
		echo "fx_t${1}_p${parts}_s${mschemas}x${mtables}"
	else
		echo "fx_t${1}_p${parts}"
	fi
}

ensure_fixture() {
	local t=$1 db
	db=$(fixture_db "$t")
	local ok
	ok=$(psqlm -d postgres -Atc "SELECT shobj_description(oid, 'pg_database') LIKE '%\"relations\"%'
		FROM pg_database WHERE datname = '$db'")
	if [ "$ok" != t ]; then
		say "building fixture $db ($t tenants, $parts marc_indexers partitions per tenant$( [ "$mschemas" -gt 0 ] && echo ", $mschemas module schemas")$( [ "$mtables" -gt 0 ] && echo " of at least $mtables tables"))"
		PATH=$BIN:$PATH bash "$top/test/fixture/build_fixture.sh" -d "$db" -t "$t" -P "$parts" \
			-S "$mschemas" -M "$mtables" \
			-j 2 -f -q -h /tmp -p "$PORT" -U postgres | sed 's/^/    /'
	fi
}

# Fresh extensions, bench schema, 5,000 filler statements in pg_stat_statements.
prepare_db() {
	local db=$1
	psqlm -d "$db" -c "SET client_min_messages = warning" \
		-c "DROP EXTENSION IF EXISTS powa CASCADE" \
		-c "DROP EXTENSION IF EXISTS folio_perf CASCADE" \
		-c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" \
		-c "CREATE EXTENSION folio_perf" \
		-c "CREATE EXTENSION IF NOT EXISTS pg_prewarm" >/dev/null
	if [ "$have_powa" = 1 ]; then
		psqlm -d "$db" -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS btree_gist" \
			-c "CREATE EXTENSION powa" >/dev/null
	fi
	psqlm -d "$db" -c "SET client_min_messages = warning" -f "$here/sql/setup.sql" >/dev/null
	local n
	n=$(psqlm -d "$db" -Atc "SELECT bench.make_filler(5000)")
	[ "$n" = 5000 ] || say "only $n filler statements could be generated in $db"
	psqlm -d "$db" -Atc "SELECT sql || ';' FROM bench.filler ORDER BY id" >"$out/filler_${db}_${CUR_PORT:-$PORT}.sql"
	# every relation gets a statistics entry, then pg_stat_statements is filled
	notrack -d "$db" -c "CALL bench.touch(NULL)" -c "SELECT pg_stat_force_next_flush()" >/dev/null
	psqlm -d "$db" -Atc "SELECT pg_stat_statements_reset()" >/dev/null
	psqlm -d "$db" -o /dev/null -f "$out/filler_${db}_${CUR_PORT:-$PORT}.sql"
}

# ---------------------------------------------------------------- contenders
contender_sql() {
	case "$1" in
		folio_perf) echo "SELECT folio_perf_snapshot();" ;;
		naive3) echo "INSERT INTO bench.naive_stmt SELECT now(), * FROM pg_stat_statements \\; INSERT INTO bench.naive_tab SELECT now(), * FROM pg_stat_user_tables \\; INSERT INTO bench.naive_io SELECT now(), * FROM pg_statio_user_tables;" ;;
		naive4) echo "INSERT INTO bench.naive_stmt SELECT now(), * FROM pg_stat_statements \\; INSERT INTO bench.naive_tab SELECT now(), * FROM pg_stat_user_tables \\; INSERT INTO bench.naive_io SELECT now(), * FROM pg_statio_user_tables \\; INSERT INTO bench.naive_idx SELECT now(), * FROM pg_stat_user_indexes;" ;;
		powa) echo "SELECT powa_take_snapshot();" ;;
		# the floor of finding what changed: one catalog scan, and one pass
		# over the shared statistics (PostgreSQL's own snapshot builder, then
		# local lookups) reading one counter of every relation
		floor_class) echo "SELECT count(*) FROM pg_class;" ;;
		floor_stats) echo "SET stats_fetch_consistency = snapshot; SELECT count(pg_stat_get_numscans(oid)) FROM pg_class;" ;;
		# the floors of the window store's two ways (bench/floor): one
		# sequential pass over the shared statistics hash reading every
		# relation entry once (no lookup, no local snapshot, no catalog);
		# and reading pg_stat_statements once without texts (the statement
		# capture's floor, and all a checked fast path reads when nothing
		# moved besides the database's own counters)
		floor_walk) echo "SELECT bench.floor_walk(true);" ;;
		floor_pgss) echo "SELECT count(*) FROM pg_stat_statements(false);" ;;
	esac
}

# timed DB CONTENDER -> "ms bytes info": one fresh connection per run, the
# time is psql's \timing of the one statement (one transaction), bytes the
# growth of pg_total_relation_size of what the contender writes to.
# The contender "rev" is folio_perf of --against REV, on REV's cluster.
timed() {
	local db=$1 c=$2 o ms b0 b1 info= port=$PORT
	if [ "$c" = rev ]; then c=folio_perf; port=$RPORT; fi
	o=$(CUR_PORT=$port psqlm -d "$db" -At <<EOF
SELECT 'B0 ' || bench.bytes('$c');
SELECT pg_backend_pid() AS bench_pid \\gset
\\setenv BENCH_PID :bench_pid
\\! awk '{print "CPU0", \$14 + \$15}' /proc/\$BENCH_PID/stat
\\timing on
$(contender_sql "$c")
\\timing off
\\! awk '{print "CPU1", \$14 + \$15}' /proc/\$BENCH_PID/stat
SELECT 'B1 ' || bench.bytes('$c');
SELECT 'INFO ' || coalesce((SELECT n_statements_stored || '/' || n_relations_stored
    FROM folio_perf_data.snapshot ORDER BY snap_id DESC LIMIT 1), '') WHERE '$c' = 'folio_perf';
EOF
)
	ms=$(awk '/^Time: /{s+=$2} END{print s}' <<<"$o")
	b0=$(awk '/^B0 /{print $2}' <<<"$o")
	b1=$(awk '/^B1 /{print $2}' <<<"$o")
	info=$(awk '/^INFO /{print $2}' <<<"$o")
	# the backend's CPU time (user + system, clock ticks) for the statement:
	# on a loaded machine a steadier judge than the wall clock
	cpu=$(awk -v hz="$(getconf CLK_TCK)" '/^CPU0 /{a=$2} /^CPU1 /{b=$2} END{if (a != "" && b != "") printf "%.0f", (b - a) * 1000 / hz}' <<<"$o")
	echo "$ms $((b1 - b0)) ${info:--} ${cpu:-}"
}

# change DB SCENARIO REP: make the statistics move as the scenario says
change() {
	local db=$1 s=$2 rep=$3 lo
	case "$s" in
		idle) ;;
		steady)
			# a few hundred tables (and their indexes) and 200 statements
			notrack -d "$db" -c "CALL bench.touch(300, $rep / 100.0)" -c "SELECT pg_stat_force_next_flush()" >/dev/null
			lo=$(((rep * 200) % 4800))
			psqlm -d "$db" -Atc "SELECT sql || ';' FROM bench.filler WHERE id > $lo AND id <= $lo + 200" |
				psqlm -d "$db" -o /dev/null
			;;
		worst)
			# every table and index, every statement
			notrack -d "$db" -c "CALL bench.touch(NULL)" -c "SELECT pg_stat_force_next_flush()" >/dev/null
			psqlm -d "$db" -o /dev/null -f "$out/filler_${db}_${CUR_PORT:-$PORT}.sql"
			;;
		churn)
			# pg_stat_statements reset and filled with 5,000 statements it
			# has not seen (the filler's with an IN list longer by rep+1
			# items: other query ids), no table touched: every statement
			# of the previous snapshot gone, 5,000 new ones to key, store
			# the texts of, redact and attribute
			notrack -d "$db" -c "SELECT pg_stat_statements_reset()" >/dev/null
			psqlm -d "$db" -Atc "SELECT regexp_replace(sql, '\)\$', repeat(', ''x''', $rep + 1) || ')') || ';'
				FROM bench.filler ORDER BY id" | psqlm -d "$db" -o /dev/null
			;;
		worst_write)
			# every table written (a row moved, or one inserted and deleted)
			# and read, every index read, every statement: every size read again
			# in ten sessions (see bench.touch_write)
			local part
			for part in 0 1 2 3 4 5 6 7 8 9; do
				notrack -d "$db" -c "SET client_min_messages = notice" -c "SET synchronous_commit = off" \
					-c "CALL bench.touch_write(NULL, 0.5, $part, 10)" 2>&1 >/dev/null | grep -o 'touch_write: .*' || true
			done | awk -v p="   $s #$rep ${CUR_PORT:-$PORT}: " '{m += $2; i += $8; k += $15}
				END {printf "%stouch_write: %d tables with a row moved, %d with a row inserted and deleted, %d skipped\n", p, m, i, k}' >&2
			notrack -d "$db" -c "SELECT pg_stat_force_next_flush()" >/dev/null
			psqlm -d "$db" -o /dev/null -f "$out/filler_${db}_${CUR_PORT:-$PORT}.sql"
			;;
	esac
}

# What autovacuum (off here, so that it does not touch the fixture's
# statistics during measurements) would do for the contenders' own tables:
# run between scenarios, never inside a measured repetition.
housekeeping() {
	psqlm -d "$1" -o /dev/null <<'EOF'
SELECT format('VACUUM (ANALYZE) %s', string_agg(c.oid::regclass::text, ', '))
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND (n.nspname IN ('folio_perf_data', 'bench')
                           OR n.nspname = 'public' AND c.relname LIKE 'powa\_%')
\gexec
EOF
}

record() { printf '%s\n' "$(IFS=$'\t'; echo "$*")" >>"$res"; }

contenders=(folio_perf naive3 naive4 floor_class floor_stats floor_walk floor_pgss)

bench_snapshots() {
	local t db rels s rep i c r ms by info cpu
	for t in $tenant_list; do
		ensure_fixture "$t"
		db=$(fixture_db "$t")
		say "== $db: preparing (extensions, 5,000 statements)"
		prepare_db "$db"
		[ -n "$against" ] && CUR_PORT=$RPORT prepare_db "$db"
		rels=$(psqlm -d "$db" -Atc "SELECT count(*) FILTER (WHERE relkind IN ('r','p')) || ' tables, ' ||
			count(*) || ' relations' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
			WHERE n.nspname NOT IN ('pg_catalog','information_schema','pg_toast','bench','folio_perf_data','public')
			   OR c.relnamespace = 'pg_toast'::regnamespace AND c.oid >= 16384")
		record fixture "$t" "" "" "" "" "" "$rels"
		say "   $rels; pg_stat_statements: $(psqlm -d "$db" -Atc 'SELECT count(*) FROM pg_stat_statements') entries"
		# the first snapshot stores everything
		for c in "${contenders[@]}"; do
			read -r ms by info cpu < <(timed "$db" "$c")
			record snapshot "$t" first "$c" 1 "$ms" "$by" "${info#-}" "$cpu"
		done
		for s in $scenarios; do
			housekeeping "$db"
			[ -n "$against" ] && CUR_PORT=$RPORT housekeeping "$db"
			for rep in $(seq 1 "$reps"); do
				# rotate the order of the contenders every repetition
				local n=${#contenders[@]} line=""
				for i in $(seq 0 $((n - 1))); do
					c=${contenders[$(((i + rep) % n))]}
					if [ "$c" = folio_perf ] || [ "$c" = rev ]; then
						# folio_perf stores what changed since its previous
						# snapshot: take one, make the change, then measure
						local cp=$PORT
						[ "$c" = rev ] && cp=$RPORT
						CUR_PORT=$cp psqlm -d "$db" -Atc "SELECT folio_perf_snapshot()" >/dev/null
						CUR_PORT=$cp change "$db" "$s" "$rep"
					fi
					read -r ms by info cpu < <(timed "$db" "$c")
					record snapshot "$t" "$s" "$c" "$rep" "$ms" "$by" "${info#-}" "$cpu"
					line+=" $c=${ms}ms"
				done
				say "   $t tenants $s #$rep:$line"
			done
		done
	done
}

# ---------------------------------------------------------------- reports
# report_gen_sql: 577 timed snapshots, between two of them 300 statements
# run again and 100 tables touched
report_gen_sql() {
	echo "SELECT folio_perf_snapshot_timed();"
	for i in $(seq 1 576); do
		lo=$(((i * 300) % 4700))
		echo "SET pg_stat_statements.track = top;"
		echo "\\o /dev/null"
		echo "SELECT sql FROM bench.filler WHERE id > $lo AND id <= $lo + 300 \\gexec"
		echo "SET pg_stat_statements.track = none; SET folio_perf.track_relations = off;"
		echo "CALL bench.touch(100, $i / 1000.0);"
		echo "SELECT pg_stat_force_next_flush();"
		echo "SELECT folio_perf_snapshot_timed();"
	done
}

# timed_call PORT DB SQL [PRE] -> ms, or "T" when cancelled by the timeout
timed_call() {
	local o
	o=$(CUR_PORT=$1 psqlm -d "$2" -At -c "SET statement_timeout = '${report_timeout}s'" \
		-c "${4:-SELECT 1}" -c '\timing on' -c "$3" 2>&1) || {
		if grep -q 'canceling statement due to statement timeout' <<<"$o"; then echo T; return; fi
		say "   FAILED (port $1): $3: $(grep -m1 ERROR <<<"$o")"; echo F; return
	}
	awk '/^Time: /{t = $2} END {print t}' <<<"$o"
}

# win PORT KIND -> window id of bench.report_windows
win() { CUR_PORT=$1 psqlm -d "$db" -Atc "SELECT window_id FROM bench.report_windows WHERE kind = '$2'"; }

bench_reports() {
	local t
	t=$(tr ' ' '\n' <<<"$tenant_list" | sort -n | tail -1)
	ensure_fixture "$t"
	db=$(fixture_db "$t")
	local sides=("work:$PORT") side port name
	[ -n "$against" ] && sides+=("rev:$RPORT")
	local gen=$out/report_gen.sql
	report_gen_sql >"$gen"
	# the sides' data made at the same time (untimed; each cluster its own)
	local pids=() g0=$SECONDS
	for side in "${sides[@]}"; do
		name=${side%%:*} port=${side#*:}
		say "== reports ($name): 577 timed snapshots in $db"
		(
			CUR_PORT=$port prepare_db "$db"
			CUR_PORT=$port psqlm -d "$db" -o /dev/null -f "$gen"
			# spread them over two days, 5 minutes apart, with 800 connections each
			CUR_PORT=$port psqlm -d "$db" -f "$here/sql/report_data.sql" >"$out/report_data_$name.out"
			# every window's facts stored (what a first report does), untimed
			CUR_PORT=$port psqlm -d "$db" -At -o /dev/null -c "SET statement_timeout = 0" \
				-c "$store_facts"
		) &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || die "making the report data failed"; done
	say "   576 snapshots with changes and the windows' facts in $((SECONDS - g0)) s"
	for side in "${sides[@]}"; do sed 's/^/    /' "$out/report_data_${side%%:*}.out"; done
	local sampler_note="sampled data: only what the run stored (a full day: bench/sampler_day.sql)"

	# 1. the 24-hour window's report and compare, computed / first / stored
	local rep f k m pre ms calls modes=(computed first stored) w1 w2
	for rep in $(seq 1 "$reps"); do
		for side in "${sides[@]}"; do
			name=${side%%:*} port=${side#*:}
			w1=$(win "$port" day1) w2=$(win "$port" day2)
			calls=(
				"folio_perf_report(text)|SELECT length(folio_perf_report($w1, 'text'));"
				"folio_perf_compare(text)|SELECT length(folio_perf_compare($w1, $w2, 'text'));"
				"folio_perf_compare_rows|SELECT count(*) FROM folio_perf_compare_rows($w1, $w2);"
			)
			for f in "${calls[@]}"; do
				for k in 0 1 2; do
					m=${modes[$(((k + rep) % 3))]}
					pre="SELECT 1"
					case "$m" in
						computed) pre="SET folio_perf.window_facts = off" ;;
						first) CUR_PORT=$port psqlm -d "$db" -At -c "DELETE FROM folio_perf_data.fact_pair" >/dev/null ;;
					esac
					ms=$(timed_call "$port" "$db" "${f#*|}" "$pre")
					record report "$t" 24h "${f%%|*} $m" "$rep" "$ms" "" "$name"
				done
				# the facts back for what follows
				CUR_PORT=$port psqlm -d "$db" -At -o /dev/null -c "SET statement_timeout = 0" \
					-c "$store_facts"
			done
		done
		say "   report/compare repetition $rep done"
	done

	# 2. every function that reads a window, on windows of 2, 22 and 288
	# snapshots (the compares: of two such windows; the 24-hour one: its
	# halves), facts stored; a call cancelled by the timeout is not repeated
	local wk a b fn sql
	local readers=(
		"report(text)|SELECT length(folio_perf_report(\$A, 'text'))"
		"report(markdown)|SELECT length(folio_perf_report(\$A, 'markdown'))"
		"report(html)|SELECT length(folio_perf_report(\$A, 'html'))"
		"report(json)|SELECT length(folio_perf_report(\$A, 'json'))"
		"top_statements|SELECT count(*) FROM folio_perf_top_statements(\$A)"
		"table_activity|SELECT count(*) FROM folio_perf_table_activity(\$A)"
		"module_activity|SELECT count(*) FROM folio_perf_module_activity(\$A)"
		"db_summary|SELECT count(*) FROM folio_perf_db_summary(\$A)"
		"window_flags|SELECT count(*) FROM folio_perf_window_flags(\$A)"
		"connections|SELECT count(*) FROM folio_perf_connections(\$A)"
		"db_load|SELECT count(*) FROM folio_perf_db_load(\$A)"
		"cpu|SELECT count(*) FROM folio_perf_cpu(\$A)"
		"timeseries|SELECT count(*) FROM folio_perf_timeseries(\$A)"
		"plans|SELECT count(*) FROM folio_perf_plans(\$A)"
		"operations|SELECT count(*) FROM folio_perf_operations(\$A)"
		"table_health|SELECT count(*) FROM folio_perf_table_health(\$A)"
		"table_health_statements|SELECT count(*) FROM folio_perf_table_health_statements(\$A)"
		"index_usage|SELECT count(*) FROM folio_perf_index_usage(\$A)"
		"lock_waits|SELECT count(*) FROM folio_perf_lock_waits(\$A)"
		"lock_holders|SELECT count(*) FROM folio_perf_lock_holders(\$A)"
		"settings|SELECT count(*) FROM folio_perf_settings(\$A)"
		"steps|SELECT count(*) FROM folio_perf_steps(\$A)"
		"trend|SELECT count(*) FROM folio_perf_trend(\$A)"
		"compare(text)|SELECT length(folio_perf_compare(\$A, \$B, 'text'))"
		"compare(html)|SELECT length(folio_perf_compare(\$A, \$B, 'html'))"
		"compare_rows|SELECT count(*) FROM folio_perf_compare_rows(\$A, \$B)"
		"check|SELECT count(*) FROM folio_perf_check(\$A, \$B)"
		"check_junit|SELECT length(folio_perf_check_junit(\$A, \$B)::text)"
		"settings_diff|SELECT count(*) FROM folio_perf_settings_diff(\$A, \$B)"
		"series|SELECT count(*) FROM folio_perf_series(ARRAY[\$A, \$B])"
		"series_report|SELECT length(folio_perf_series_report(ARRAY[\$A, \$B]))"
		"series_saturation|SELECT count(*) FROM folio_perf_series_saturation(ARRAY[\$A, \$B])"
	)
	declare -A timed_out=()
	for rep in $(seq 1 "$reps"); do
		for wk in two w22 day; do
			for side in "${sides[@]}"; do
				name=${side%%:*} port=${side#*:}
				case "$wk" in
					two) a=$(win "$port" two_a) b=$(win "$port" two_b) ;;
					w22) a=$(win "$port" w22_a) b=$(win "$port" w22_b) ;;
					day) a=$(win "$port" day1) b=$(win "$port" day2) ;;
				esac
				for f in "${readers[@]}"; do
					fn=${f%%|*} sql=${f#*|}
					# a trend splits a window at its inner snapshots: a window of
					# two has none (an error by design)
					[ "$wk" = two ] && [ "$fn" = trend ] && continue
					# the 24-hour window compared with its halves
					[ "$wk" = day ] && [[ "$sql" == *'$B'* ]] &&
						a=$(win "$port" half1) b=$(win "$port" half2)
					[ "$wk" = day ] && [[ "$sql" != *'$B'* ]] && a=$(win "$port" day1)
					sql=${sql//\$A/$a}; sql=${sql//\$B/$b}
					if [ -n "${timed_out[$name/$wk/$fn]:-}" ]; then
						ms=T
					else
						ms=$(timed_call "$port" "$db" "$sql")
						[ "$ms" = T ] && timed_out[$name/$wk/$fn]=1
					fi
					record readers "$t" "$wk" "$fn" "$rep" "$ms" "" "$name"
					# the 24-hour window's halves are windows of their own here
					# (stored facts); a day's halves usually are not: the trend
					# of the second day computes its halves
					if [ "$wk" = day ] && [ "$fn" = trend ]; then
						ms=$(timed_call "$port" "$db" "SELECT count(*) FROM folio_perf_trend($(win "$port" day2))")
						record readers "$t" "$wk" "trend, halves computed" "$rep" "$ms" "" "$name"
					fi
				done
			done
		done
		say "   window readers repetition $rep done"
	done
	CUR_PORT=$PORT psqlm -d "$db" -At -F ' ' -c "SELECT kind, n_rows, round(compute_ms) FROM folio_perf_data.fact_pair ORDER BY 1, 2" \
		| sed 's/^/    stored facts: /' | tee -a "$out/report_data_work.out"
}

# ---------------------------------------------------------------- hook
bench_hook() {
	local base=$DATA/hook
	say "== attribution hook: callgrind (single-user) and pgbench -S"
	if [ ! -f "$base/PG_VERSION" ]; then
		mkdir -p "$DATA"
		as_pg "$BIN/initdb" -D "$base" -U postgres -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null
		{
			conf_common
			echo "port = $((PORT + 1))"
			echo "shared_buffers = 128MB"
			echo "max_connections = 20"
		} >>"$base/postgresql.conf"
		as_pg "$BIN/pg_ctl" -D "$base" -o "-c shared_preload_libraries=pg_stat_statements" -l "$DATA/hook.log" -w start >/dev/null
		"$BIN/pgbench" -h /tmp -p $((PORT + 1)) -U postgres -i -s 10 -q postgres >/dev/null 2>&1
		"$BIN/psql" -X -q -h /tmp -p $((PORT + 1)) -U postgres -d postgres -c "CREATE EXTENSION pg_stat_statements" \
			-c "VACUUM ANALYZE" >/dev/null
		as_pg "$BIN/pg_ctl" -D "$base" -w stop >/dev/null
	fi
	# callgrind: instructions of a single-user backend running N identical
	# statements (different constants, one queryid), for two N; the
	# difference divided by the difference of N is the cost per statement,
	# free of start-up and shutdown.
	local cfg libs n qf ir cg=$DATA/callgrind
	mkdir -p "$cg"; chown postgres:postgres "$cg" 2>/dev/null || true
	for cfg in pgss pgss+folio_perf; do
		libs=pg_stat_statements
		[ "$cfg" = pgss+folio_perf ] && libs=pg_stat_statements,folio_perf
		local irs=()
		for n in $hook_loops; do
			qf=$out/hook_$n.sql
			awk -v n="$n" 'BEGIN { for (i = 1; i <= n; i++) printf "SELECT abalance FROM pgbench_accounts WHERE aid = %d;\n", (i * 7919) % 1000000 + 1 }' >"$qf"
			chmod 644 "$qf"
			rm -f "$cg/callgrind.$cfg.$n"
			as_pg valgrind --tool=callgrind --callgrind-out-file="$cg/callgrind.$cfg.$n" \
				"$BIN/postgres" --single -D "$base" -c shared_preload_libraries="$libs" \
				-c pg_stat_statements.track=top postgres <"$qf" >/dev/null 2>"$out/callgrind.$cfg.$n.log"
			ir=$(awk '/^summary:/{print $2}' "$cg/callgrind.$cfg.$n")
			irs+=("$ir")
		done
		read -r n1 n2 <<<"$hook_loops"
		local per
		per=$(awk -v a="${irs[0]}" -v b="${irs[1]}" -v n1="$n1" -v n2="$n2" 'BEGIN { printf "%.1f", (b - a) / (n2 - n1) }')
		record hook 0 callgrind "$cfg" 1 "$per" "" "Ir($n1)=${irs[0]} Ir($n2)=${irs[1]}"
		say "   callgrind $cfg: $per instructions per statement"
	done
	# pgbench -S: two copies of the same cluster, one preloading folio_perf,
	# runs alternating A B B A ...
	local a=$DATA/hook_a b=$DATA/hook_b
	for d in "$a" "$b"; do
		if [ ! -f "$d/PG_VERSION" ]; then as_pg cp -a "$base" "$d"; fi
	done
	as_pg sed -i "/^port = /d; /^shared_preload_libraries/d" "$a/postgresql.conf" "$b/postgresql.conf"
	as_pg sh -c "echo 'port = $((PORT + 1))' >>'$a/postgresql.conf'; echo \"shared_preload_libraries = 'pg_stat_statements'\" >>'$a/postgresql.conf'"
	as_pg sh -c "echo 'port = $((PORT + 2))' >>'$b/postgresql.conf'; echo \"shared_preload_libraries = 'pg_stat_statements,folio_perf'\" >>'$b/postgresql.conf'"
	for d in "$a" "$b"; do
		as_pg "$BIN/pg_ctl" -D "$d" -l "$d.log" -w start >/dev/null
		hook_up+=("$d")
	done
	local rep order p tps
	# warm both servers up (not recorded)
	for p in $((PORT + 1)) $((PORT + 2)); do
		"$BIN/pgbench" -h /tmp -p "$p" -U postgres -S -c 2 -j 2 -T 3 -n postgres >/dev/null 2>&1 || true
	done
	for rep in $(seq 1 "$pgbench_reps"); do
		if [ $((rep % 2)) = 1 ]; then order="pgss pgss+folio_perf"; else order="pgss+folio_perf pgss"; fi
		for cfg in $order; do
			p=$((PORT + 1)); [ "$cfg" = pgss+folio_perf ] && p=$((PORT + 2))
			tps=$("$BIN/pgbench" -h /tmp -p "$p" -U postgres -S -c 2 -j 2 -T "$pgbench_secs" -n postgres 2>/dev/null |
				awk '/^tps = /{print $3; exit}')
			record hook 0 pgbench "$cfg" "$rep" "$tps" "" ""
		done
		say "   pgbench -S repetition $rep done"
	done
	for d in "$a" "$b"; do as_pg "$BIN/pg_ctl" -D "$d" -w stop -m fast >/dev/null; done
	hook_up=()
}

# ---------------------------------------------------------------- main
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "command: bench/run.sh --$mode$( [ -n "${tenant_list:-}" ] && echo " (tenants: $tenant_list)"), reps $reps, parts $parts$( [ "$mschemas" -gt 0 ] || [ "$mtables" -gt 0 ] && echo ", module schemas $mschemas, module tables $mtables")"
	echo "fixtures: $(for t in $tenant_list; do fixture_db "$t"; done | paste -sd' ')"
	echo "commit: $(git -C "$top" rev-parse --short HEAD) ($(git -C "$top" rev-parse --abbrev-ref HEAD))$( [ -n "$(git -C "$top" status --porcelain -- src sql Makefile)" ] && echo ', with uncommitted changes to src/sql')"
	echo "cpu: $(nproc) x $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo)"
	echo "memory: $(awk '/MemTotal/{printf "%.0f GB", $2/1048576}' /proc/meminfo); shared machine"
	echo "kernel: $(uname -r); $(. /etc/os-release; echo "$PRETTY_NAME")"
	echo "postgres: $(/usr/lib/postgresql/15/bin/postgres --version); shared_buffers 1GB, autovacuum off, jit off"
} >"$out/machine.txt"

install_private
say "machine: $(sed -n 's/^cpu: //p' "$out/machine.txt")"
if [ "$do_snap" = 1 ] || [ "$do_report" = 1 ]; then
	start_main
	[ "$have_powa" = 1 ] && contenders+=(powa)
	if [ -n "$against" ]; then
		install_rev
		# every fixture first, so that REV's cluster is one copy of them
		for t in $tenant_list; do ensure_fixture "$t"; done
		start_rev
		contenders+=(rev)
		echo "against: $against_id" >>"$out/machine.txt"
	fi
fi
[ "$do_snap" = 1 ] && bench_snapshots
[ "$do_report" = 1 ] && bench_reports
[ "$do_hook" = 1 ] && bench_hook

python3 "$here/lib/summarize.py" "$res" "$out/machine.txt" >"$out/summary.md"
echo
cat "$out/summary.md"
say "done; raw results in $res, table in $out/summary.md"
