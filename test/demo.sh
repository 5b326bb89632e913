#!/usr/bin/env bash
# test/demo.sh - folio_perf end to end on a fresh Debian 12 machine.
#
# As root: installs PostgreSQL 15 and the build tools and builds and
# installs folio_perf (test/setup.sh), then, as the "postgres" OS user:
#   1. initdb a throwaway cluster in a temporary directory (unix socket
#      only, a free port) with shared_preload_libraries =
#      'pg_stat_statements,folio_perf', pg_stat_statements.track = all,
#      compute_query_id = on;
#   2. builds a 3-tenant FOLIO-like database (test/fixture/build_fixture.sh);
#   3. CREATE EXTENSION pg_stat_statements, folio_perf;
#   4. opens a window with folio_perf_begin() and runs a phased test of
#      about a minute (test/workload/run_workload.sh): PHASE seconds of data
#      import alone (MARC bib create, batches of RECORDS records on
#      fs09000000 and cs00000int_0001), PHASE seconds of data import with 8
#      check-in/check-out users on fs09000000 on top, and PHASE seconds of
#      quiet tail; closes it with folio_perf_end(); then the same again in
#      a second window (--runs 1: once), release tags "run 1" and "run 2";
#   5. prints folio_perf_top_statements, folio_perf_module_activity,
#      folio_perf_table_activity, folio_perf_connections,
#      folio_perf_db_load, folio_perf_data_import_jobs and
#      folio_perf_operations of the last window, writes its HTML report to
#      /tmp/folio_perf_demo_report.html (FOLIO_PERF_DEMO_HTML) and prints
#      the markdown one; with two runs also the data-import jobs and
#      operations of the first, and folio_perf_compare of the two in
#      markdown (Delta, % of the operations, statements, modules);
#   6. a step-load run: check-in/check-out at 1, 2, 4 and 8 users, STEP
#      seconds each (--step, default 10; 0 skips it), in one window with a
#      folio_perf_mark() at each step; prints folio_perf_series of its
#      steps and their folio_perf_series_report in markdown (the
#      saturation point, or none in its range) and writes the HTML one
#      with its line charts to /tmp/folio_perf_demo_series.html
#      (FOLIO_PERF_DEMO_SERIES_HTML);
#   7. stops and removes the cluster (unless --keep).
# With --target CONNINFO the demo cluster is the "repository" and the
# database, the workloads and the window are on that server instead (a
# server without folio_perf, such as Amazon RDS or a replica's primary):
# the fixture is built there (unless database "folio" exists there already),
# pg_stat_statements is created there, the server is added with
# folio_perf_target_add('demo_target', CONNINFO) and the window is taken
# with folio_perf_begin(..., 'demo_target'); the reports are the same.
# A report function the installed extension lacks is named in a clear error;
# the demo then exits non-zero after printing everything else.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail

prog=demo.sh
usage() {
	cat <<EOF
usage: bash test/demo.sh [--keep] [--no-setup] [--records N] [--cico-users N] [--port N]
                         [--phase SECONDS] [--runs N] [--step SECONDS] [--target CONNINFO]

  --keep          leave the demo cluster running and print how to connect
  --no-setup      do not run test/setup.sh (PostgreSQL 15 and folio_perf
                  already installed)
  --records N     data-import records per tenant and batch (default 500);
                  batches follow each other for two phases
  --cico-users N  concurrent check-in/check-out users (default 8; each runs
                  batches of 8 check-out/check-in cycles; at most 25)
  --phase SECONDS length of each of the three phases (default 20: a
                  window is about a minute, the whole demo about three)
  --runs N        1 or 2 (default 2): runs of the phased test, each in its
                  own window (release tags "run 1", "run 2"); with 2 the
                  demo ends with folio_perf_compare of the two (Delta, %)
  --step SECONDS  length of each step of the step-load run (default 10):
                  check-in/check-out at 1, 2, 4 and 8 users in one window
                  with a folio_perf_mark() per step, then the series report
                  of the steps with the saturation point; 0 skips it
  --port N        port of the demo cluster (default: the first free one in
                  55400-55499; the cluster listens on a unix socket only)
  --target CONNINFO
                  run the workload on this server and collect from it over
                  libpq (key=value pairs without quotes, e.g. "host=db.example
                  port=5432 user=postgres password=secret sslmode=require");
                  its user must be able to create a database and roles and
                  read all statistics, and pg_stat_statements must be in its
                  shared_preload_libraries
  --help          this text
EOF
}

keep=0 setup=1 records=500 cico_users=8 phase=20 runs=2 step=10 inner='' port='' target=''
while [ $# -gt 0 ]; do
	case "$1" in
		--keep) keep=1; shift ;;
		--no-setup) setup=0; shift ;;
		--records) records=${2:?}; shift 2 ;;
		--cico-users) cico_users=${2:?}; shift 2 ;;
		--port) port=${2:?}; shift 2 ;;
		--phase) phase=${2:?}; shift 2 ;;
		--runs) runs=${2:?}; shift 2 ;;
		--step) step=${2:?}; shift 2 ;;
		--target) target=${2:?}; shift 2 ;;
		--inner) inner=${2:?}; shift 2 ;;	# internal: run the demo in DIR
		--help) usage; exit 0 ;;
		*) usage >&2; exit 2 ;;
	esac
done
[[ "$records" =~ ^[1-9][0-9]*$ ]] || { echo "$prog: --records needs a positive number" >&2; exit 2; }
[[ "$cico_users" =~ ^[1-9][0-9]*$ && "$cico_users" -le 25 ]] ||
	{ echo "$prog: --cico-users needs 1..25" >&2; exit 2; }
[[ "$phase" =~ ^[1-9][0-9]*$ && "$phase" -le 600 ]] || { echo "$prog: --phase needs 1..600 seconds" >&2; exit 2; }
[[ "$runs" =~ ^[12]$ ]] || { echo "$prog: --runs needs 1 or 2" >&2; exit 2; }
[[ "$step" =~ ^[0-9]+$ && "$step" -le 600 ]] || { echo "$prog: --step needs 0..600 seconds" >&2; exit 2; }
[ -z "$port" ] || [[ "$port" =~ ^[1-9][0-9]{3,4}$ ]] || { echo "$prog: --port needs a port number" >&2; exit 2; }

# PG_BINDIR: a PostgreSQL 15 other than the system one (e.g. a private copy)
PGBIN=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
export PATH="$PGBIN:$PATH"

# ---------------------------------------------------------------------------
# The demo itself, run as the cluster's OS user inside directory $inner.
# ---------------------------------------------------------------------------
run_demo() {
	local dir=$1 port db=folio rc=0
	data="$1/data"	# global: the EXIT trap below still needs it
	port=$(cat "$dir/port")
	local src="$dir/src"
	local conn=(-h "$dir" -p "$port")
	local tenants_di=fs09000000,cs00000int_0001 tenant_cico=fs09000000
	# where the workload runs: this cluster, or the target (its connection
	# string as a service file, for psql and pgbench)
	local wconn=("${conn[@]}") wenv=() where='' target_arg=''
	if [ -n "$target" ]; then
		{ echo "[folio_perf_demo_target]"; for kv in $target; do echo "$kv"; done; } >"$dir/pg_service.conf"
		wconn=()
		wenv=(env PGSERVICEFILE="$dir/pg_service.conf" PGSERVICE=folio_perf_demo_target)
		where=" on the target"
		target_arg=", 'demo_target'"
	fi
	local cico_n=$((cico_users * 8))

	stop_cluster() {
		if [ "$keep" = 0 ] && [ -f "$data/postmaster.pid" ]; then
			pg_ctl -D "$data" -m fast -w stop >/dev/null 2>&1 || true
		fi
	}
	trap stop_cluster EXIT

	# Without the library the server would not start with it preloaded:
	# say so, and go on with pg_stat_statements alone.
	local preload='pg_stat_statements,folio_perf'
	if [ ! -f "$("$PGBIN/pg_config" --pkglibdir)/folio_perf.so" ]; then
		echo "$prog: ERROR: folio_perf is not installed (run bash test/setup.sh as root); preloading pg_stat_statements only" >&2
		preload=pg_stat_statements rc=1
	fi

	echo "== initdb $data (port $port, socket $dir)"
	initdb -D "$data" -A trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 ||
		{ cat "$dir/initdb.log"; return 1; }
	cat >>"$data/postgresql.conf" <<EOF

# folio_perf demo
port = $port
listen_addresses = ''
unix_socket_directories = '$dir'
shared_preload_libraries = '$preload'
pg_stat_statements.track = all
compute_query_id = on
max_connections = 100
# the sampler: 5 samples a second, stored in the demo database, and a timed
# snapshot every 5 s so that the report can compare the window's halves
folio_perf.sample_interval = 200
folio_perf.database = '$db'
folio_perf.snapshot_interval = 5
folio_perf.flush_interval = 1
# plans: the slowest execution of a statement over 5 ms keeps its plan, so
# that the report shows the plans of the statements slowed by the load
# (production uses 100 ms or more)
folio_perf.plan_min_duration = 5
EOF
	if ! pg_ctl -D "$data" -l "$dir/server.log" -w start >/dev/null; then
		echo "$prog: the server did not start; its log:" >&2
		tail -20 "$dir/server.log" >&2
		return 1
	fi

	psqlq() { psql "${conn[@]}" -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"; }
	has_fn() { [ "$(psqlq -Atc "SELECT count(*) FROM pg_proc WHERE proname = '$1'")" != 0 ]; }
	# The OUT columns of a report function we want, as a select list that
	# keeps the output narrow; * if the function's columns differ.
	select_list() {
		local fn=$1 want=$2 have list='' c n=0
		have=" $(psqlq -Atc "SELECT string_agg(a.n, ' ') FROM pg_proc p,
			unnest(p.proargnames, p.proargmodes) a(n, m)
			WHERE p.proname = '$fn' AND a.m IN ('o', 't')") "
		for c in $want; do
			case "$have" in *" $c "*) ;; *) continue ;; esac
			case "$c" in
				query) c="left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS query" ;;
				*_ms | pct_*) c="round($c::numeric, 2) AS $c" ;;
			esac
			list="${list:+$list, }$c"
			n=$((n + 1))
		done
		if [ "$n" -ge 3 ]; then echo "$list"; else echo '*'; fi
	}

	if [ -n "$target" ] &&
		[ "$("${wenv[@]}" psql -X -At -d postgres -c "SELECT count(*) FROM pg_database WHERE datname = '$db'")" = 1 ]; then
		echo "== database \"$db\" exists on the target: using it"
	else
		echo "== building a 3-tenant FOLIO-like database \"$db\"$where"
		"${wenv[@]}" bash "$src/fixture/build_fixture.sh" -d "$db" -t 3 "${wconn[@]}"
	fi
	if [ -n "$target" ]; then
		echo "== on the target: CREATE EXTENSION IF NOT EXISTS pg_stat_statements"
		"${wenv[@]}" psql -X -q -v ON_ERROR_STOP=1 -d "$db" -c 'CREATE EXTENSION IF NOT EXISTS pg_stat_statements'
		echo "== the repository's own database \"$db\" (the sampler stores there)"
		psql "${conn[@]}" -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $db"
	fi

	echo "== CREATE EXTENSION pg_stat_statements; CREATE EXTENSION folio_perf"
	psqlq -c 'CREATE EXTENSION pg_stat_statements'
	local have_ext=1
	if [ "$preload" = pg_stat_statements ]; then
		have_ext=0
	elif ! psqlq -c 'CREATE EXTENSION folio_perf'; then
		echo "$prog: ERROR: CREATE EXTENSION folio_perf failed (error above)" >&2
		have_ext=0 rc=1
	fi
	local missing=()
	for f in folio_perf_begin folio_perf_end folio_perf_top_statements \
		folio_perf_module_activity folio_perf_table_activity; do
		if ! has_fn "$f"; then missing+=("$f"); fi
	done
	if [ "$have_ext" = 1 ] && [ ${#missing[@]} -gt 0 ]; then
		echo "$prog: ERROR: the installed folio_perf lacks ${missing[*]} (see DESIGN.md); those parts are skipped" >&2
		rc=1
	fi

	if [ -n "$target" ]; then
		echo "== SELECT folio_perf_target_add('demo_target', '<CONNINFO> dbname=$db')"
		psqlq -Atc "SELECT folio_perf_target_add('demo_target', \$c\$$target dbname=$db\$c\$)" || return 1
		# the sampler picks new targets up at its next flush
		local i
		for i in $(seq 1 50); do
			[ "$(psqlq -Atc "SELECT sampler FROM folio_perf_targets WHERE name = 'demo_target'")" = sampling ] && break
			sleep 0.2
		done
		psqlq -P pager=off -c "SELECT name, conninfo, sampler, last_sample_at FROM folio_perf_targets"
	fi

	# the window begins once the sampler is sampling (it starts when the
	# database exists), so that it covers the whole window
	if [ "$preload" != pg_stat_statements ] && has_fn folio_perf_sampler_status; then
		local j ok=
		for j in $(seq 1 150); do
			ok=$(psqlq -Atc "SELECT state = 'sampling' AND last_sample_at > now() - interval '1 s'
				FROM folio_perf_sampler_status")
			[ "$ok" = t ] && break
			sleep 0.2
		done
		if [ "$ok" = t ]; then
			echo "== the sampler is sampling"
		else
			echo "$prog: the sampler is not sampling after 30 s; the window's connections and DB load will be partial" >&2
			psqlq -P pager=off -c "SELECT state, database, last_sample_at, last_error FROM folio_perf_sampler_status"
		fi
	fi

	local label="DI MARC Bib Create $records + CICO $cico_users"
	local w='' w_first='' run
	loop_until() {	# end time, log, workload arguments...
		local end=$1 log=$2 n=0
		shift 2
		while [ "$(date +%s)" -lt "$end" ]; do
			"${wenv[@]}" bash "$src/workload/run_workload.sh" -q -d "$db" "${wconn[@]}" "$@" >>"$log" 2>&1 || return 1
			n=$((n + 1))
		done
		echo "$n batches" >>"$log"
	}
	# One run: a window around three phases of $phase seconds each: data
	# import alone, data import with check-in/check-out on top, a quiet
	# tail.  Each workload runs batches back to back until its phase ends
	# (a batch is a few seconds).  Sets w to the window.
	one_run() {
		local run=$1 tags="{\"release\":\"run $1\",\"scenario\":\"DI+CICO\"}"
		local t0 di_end di_pid cico_pid wrc=0
		w=
		echo
		echo "== run $run of $runs"
		if has_fn folio_perf_begin && has_fn folio_perf_end; then
			echo "== SELECT folio_perf_begin('$label', '$tags'$target_arg)"
			psqlq -Atc "SELECT folio_perf_begin('$label', '$tags'$target_arg)"
		fi
		: >"$dir/di_create.out"
		: >"$dir/cico.out"
		t0=$(date +%s)
		di_end=$((t0 + 2 * phase))
		echo "== phase 1 (${phase} s): di_create, batches of $records records on $tenants_di$where"
		loop_until "$di_end" "$dir/di_create.out" -w di_create -n "$records" -t "$tenants_di" &
		di_pid=$!
		sleep "$phase"
		echo "== phase 2 (${phase} s): di_create and cico ($cico_users users, batches of 8 cycles each on $tenant_cico)$where"
		loop_until "$di_end" "$dir/cico.out" -w cico -n "$cico_n" -c "$cico_users" -t "$tenant_cico" &
		cico_pid=$!
		wait "$di_pid" || wrc=1
		wait "$cico_pid" || wrc=1
		echo "== phase 3 (${phase} s): quiet tail"
		sleep "$phase"
		# what the last batch of each workload ran (every batch prints the
		# same summary: one of each, not the tail of both logs)
		local wl
		for wl in di_create cico; do
			awk -v wl="$wl" 'index($0, "== " wl ": ") == 1 { n = 0 } /^[0-9]+ batches$/ { b = $0; next }
				{ last[n++] = $0 }
				END { print "== " wl ", the last of " (b == "" ? "its" : b) ":"; for (i = 0; i < n; i++) print last[i] }' \
				"$dir/$wl.out" | cut -c1-220
		done
		if [ "$wrc" != 0 ]; then
			echo "$prog: ERROR: a workload failed (output above)" >&2
			return 1
		fi
		if has_fn folio_perf_begin && has_fn folio_perf_end; then
			w=$(psqlq -Atc 'SELECT folio_perf_end()')
			echo "== SELECT folio_perf_end()  -> window $w"
		fi
	}
	for run in $(seq 1 "$runs"); do
		one_run "$run" || return 1
		[ -n "$w" ] || break
		[ -n "$w_first" ] || w_first=$w
	done
	if [ -z "$w" ]; then
		echo "== no folio_perf window; what pg_stat_statements saw instead:"
		psqlq -P pager=off -c "SELECT userid::regrole AS role, calls, round(total_exec_time::numeric, 1) AS total_ms,
			left(regexp_replace(query, '\\s+', ' ', 'g'), 100) AS query
			FROM pg_stat_statements WHERE toplevel ORDER BY total_exec_time DESC LIMIT 10"
		return 1
	fi

	report() {	# title, function, arguments, preferred columns
		local title=$1 fn=$2 args=$3 want=$4
		echo
		echo "== $title: SELECT * FROM $fn($args)"
		if ! has_fn "$fn"; then
			echo "$prog: ERROR: the installed folio_perf has no $fn()" >&2
			rc=1
			return 0
		fi
		psqlq -P pager=off -P null=- -c "SELECT $(select_list "$fn" "$want") FROM $fn($args)" || rc=1
	}
	report "Top statements" folio_perf_top_statements "$w, 10" \
		"rank tenant module attributed_by role toplevel calls total_exec_ms mean_exec_ms rows pct_of_total_time query"
	report "Module activity" folio_perf_module_activity "$w" \
		"tenant module inserts updates deletes seq_scan idx_scan blks_read blks_hit growth statement_calls statement_time_ms connections_avg connections_max"
	report "Table activity" folio_perf_table_activity "$w, 10" \
		"rank tenant module relname inserts updates hot_updates deletes seq_scan idx_scan blks_read blks_hit growth"
	report "Connections (sampler)" folio_perf_connections "$w" \
		"dimension key avg p95 max pct_of_max_connections"
	report "DB load (sampler)" folio_perf_db_load "$w" \
		"dimension key module aas max pct_of_load"
	report "Data-import jobs (FOLIO operations)" folio_perf_data_import_jobs "$w" \
		"tenant hrid file_name job_profile status records duration records_per_minute overlap"
	report "FOLIO operations and their DB cost" folio_perf_operations "$w" \
		"tenant operation count per_minute db_time_ms db_time_per_op_ms statements_per_op rows_written_per_op wal_bytes_per_op source"
	echo
	local html=${FOLIO_PERF_DEMO_HTML:-/tmp/folio_perf_demo_report.html}
	psqlq -At -c "SELECT folio_perf_report($w, 'html')" >"$html" || rc=1
	echo "== SELECT folio_perf_report($w, 'markdown')"
	psqlq -P pager=off -At -c "SELECT folio_perf_report($w, 'markdown')" || rc=1
	echo "== the HTML report (self-contained, with charts) is in $html"

	# the two runs side by side: the operations and data-import jobs of
	# each, and the comparison (Delta, %) named after their release tags
	if [ -n "$w_first" ] && [ "$w_first" != "$w" ]; then
		report "Data-import jobs of run 1 (FOLIO operations)" folio_perf_data_import_jobs "$w_first" \
			"tenant hrid file_name job_profile status records duration records_per_minute overlap"
		report "FOLIO operations and their DB cost, run 1" folio_perf_operations "$w_first" \
			"tenant operation count per_minute db_time_ms db_time_per_op_ms statements_per_op rows_written_per_op wal_bytes_per_op source"
		echo
		echo "== SELECT folio_perf_compare($w_first, $w, 'markdown')  -- run 1 against run $runs"
		if has_fn folio_perf_compare; then
			psqlq -P pager=off -At -c "SELECT folio_perf_compare($w_first, $w, 'markdown')" || rc=1
		else
			echo "$prog: ERROR: the installed folio_perf has no folio_perf_compare()" >&2
			rc=1
		fi
	fi

	# a step-load run: check-in/check-out at 1, 2, 4 and 8 users in one
	# window, a folio_perf_mark() at each step, and the series of its steps
	# with the saturation point (folio_perf_series_report)
	if [ "$step" -gt 0 ]; then
		echo
		echo "== step load: check-in/check-out at 1, 2, 4 and 8 users on $tenant_cico, $step s each, one window with a mark per step"
		if has_fn folio_perf_mark && has_fn folio_perf_series_report; then
			local u ws='' srows="step, name, round(duration_s) AS duration_s, statements_per_s,
				operations_per_minute->>'check_out' AS check_outs_per_minute, top_mean_ms, db_load_avg, cpus,
				db_cpu_pct_avg, connections_max, headline"
			for u in 1 2 4 8; do
				if [ "$u" = 1 ]; then
					ws=$(psqlq -Atc "SELECT folio_perf_begin('CICO step load', '{\"users\": 1, \"scenario\": \"CICO steps\"}'$target_arg)")
					echo "== SELECT folio_perf_begin('CICO step load', '{\"users\": 1, \"scenario\": \"CICO steps\"}')  -> window $ws"
				else
					psqlq -Atc "SELECT folio_perf_mark('$u users', '{\"users\": $u}')" >/dev/null
					echo "== SELECT folio_perf_mark('$u users', '{\"users\": $u}')"
				fi
				: >"$dir/steps.out"
				if ! loop_until $(($(date +%s) + step)) "$dir/steps.out" -w cico -n $((u * 8)) -c "$u" -t "$tenant_cico"; then
					echo "$prog: ERROR: the step-load workload failed:" >&2
					cat "$dir/steps.out" >&2
					rc=1
					break
				fi
			done
			psqlq -Atc "SELECT folio_perf_end($ws)" >/dev/null
			echo "== SELECT folio_perf_end($ws); SELECT ... FROM folio_perf_series(folio_perf_steps($ws))"
			psqlq -P pager=off -c "SELECT $srows FROM folio_perf_series(folio_perf_steps($ws))" || rc=1
			echo "== SELECT folio_perf_series_report(folio_perf_steps($ws), 'markdown')"
			psqlq -P pager=off -At -c "SELECT folio_perf_series_report(folio_perf_steps($ws), 'markdown')" || rc=1
			local shtml=${FOLIO_PERF_DEMO_SERIES_HTML:-/tmp/folio_perf_demo_series.html}
			psqlq -At -c "SELECT folio_perf_series_report(folio_perf_steps($ws), 'html')" >"$shtml" || rc=1
			echo "== the HTML series report (line charts, the saturation point marked) is in $shtml"
		else
			echo "$prog: ERROR: the installed folio_perf has no folio_perf_mark() or folio_perf_series_report()" >&2
			rc=1
		fi
	fi

	if [ "$keep" = 1 ]; then
		echo
		echo "== the cluster keeps running (--keep). Connect with:"
		echo "     psql -h $dir -p $port -d $db"
		echo "   as OS user $(id -un); stop and remove it with:"
		echo "     $PGBIN/pg_ctl -D $data stop && rm -rf $dir"
	fi
	return "$rc"
}

if [ -n "$inner" ]; then
	run_demo "$inner"
	exit $?
fi

# ---------------------------------------------------------------------------
# Outer part: setup as root, a directory the cluster's user owns, then the
# demo as that user.
# ---------------------------------------------------------------------------
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ "$(id -u)" = 0 ]; then
	if [ "$setup" = 1 ]; then
		bash "$here/setup.sh"
	fi
	runas=postgres
	id "$runas" >/dev/null 2>&1 || { echo "$prog: no \"postgres\" OS user (run test/setup.sh)" >&2; exit 1; }
else
	runas=$(id -un)
	[ "$setup" = 0 ] || echo "$prog: not root: skipping test/setup.sh (PostgreSQL 15 and folio_perf must be installed)"
fi
for b in initdb pg_ctl psql pgbench; do
	[ -x "$PGBIN/$b" ] || { echo "$prog: $PGBIN/$b not found (run as root, or install PostgreSQL 15)" >&2; exit 1; }
done

dir=$(mktemp -d /tmp/folio_perf_demo.XXXXXX)
cleanup() {
	if [ "$keep" = 0 ]; then
		if [ -f "$dir/data/postmaster.pid" ]; then
			if [ "$(id -u)" = 0 ]; then
				su "$runas" -s /bin/bash -c "$PGBIN/pg_ctl -D '$dir/data' -m fast -w stop" >/dev/null 2>&1 || true
			else
				"$PGBIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
			fi
		fi
		rm -rf "$dir"
	fi
}
trap cleanup EXIT

# A free port: nothing listening on TCP and no socket file in the usual places.
for p in ${port:-$(seq 55400 55499)}; do
	port=
	if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null &&
		[ ! -e "/tmp/.s.PGSQL.$p" ] && [ ! -e "/var/run/postgresql/.s.PGSQL.$p" ]; then
		port=$p
		break
	fi
done
[ -n "$port" ] || { echo "$prog: no free port (55400-55499, or the one given with --port)" >&2; exit 1; }
echo "$port" >"$dir/port"

# The cluster's user may not be able to read this checkout (e.g. under /root):
# it gets its own copy of the demo, the fixture and the workloads.
mkdir -p "$dir/src"
cp -r "$here/fixture" "$here/workload" "$dir/src/"
cp "$here/demo.sh" "$dir/src/demo.sh"
args=(--inner "$dir" --records "$records" --cico-users "$cico_users" --phase "$phase" --runs "$runs" --step "$step")
[ -z "$target" ] || args+=(--target "$target")
[ "$keep" = 0 ] || args+=(--keep)
status=0
if [ "$(id -u)" = 0 ]; then
	chown -R "$runas" "$dir"
	su "$runas" -s /bin/bash -c "cd $(printf '%q' "$dir") && PG_BINDIR=$(printf '%q' "$PGBIN") $(printf '%q ' bash "$dir/src/demo.sh" "${args[@]}")" || status=$?
else
	(cd "$dir" && bash "$dir/src/demo.sh" "${args[@]}") || status=$?
fi
if [ "$status" = 0 ]; then
	echo "== demo finished"
else
	echo "== demo finished with errors (exit $status)" >&2
fi
exit "$status"
