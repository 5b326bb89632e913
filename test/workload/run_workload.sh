#!/usr/bin/env bash
# test/workload/run_workload.sh - run a FOLIO-shaped workload with exactly
# known statement counts against a fixture built by
# test/fixture/build_fixture.sh.
#
# Each workload is a set of pgbench scripts, one per module connection pool,
# each run by its own pgbench under the login, application_name and
# search_path that module really uses (conventions.md section 2).  pgbench
# runs "-c CLIENTS -t COUNT/CLIENTS", so every SQL command of a script runs
# exactly COUNT times.  Scripts run in simple-query mode with the values
# written into the text; pg_stat_statements replaces those constants by $n,
# so the texts it shows are the modules' own ($1, $2, ...).  Before running,
# the driver prints every statement with the number of calls it will add to
# pg_stat_statements, in the form pg_stat_statements will show it.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=$(basename "$0")

# application_name as the frameworks set it (RMB >= 35.3: <module>-<version>;
# SRS's JDBC pool sets none, so the driver's default shows).
APP_INVENTORY=mod-inventory-storage-27.1.0
APP_CIRCULATION=mod-circulation-storage-17.2.0
APP_USERS=mod-users-19.3.0
APP_SRM=mod-source-record-manager-3.8.0
APP_SRS_REACTIVE=mod-source-record-storage-5.9.0
APP_SRS_JDBC='PostgreSQL JDBC Driver'
SHARED_LOGIN=folio_admin
SHARED_PASSWORD=folio_admin

usage() {
	cat <<EOF
usage: $prog -d DBNAME -w WORKLOAD -n COUNT -t TENANT[,TENANT...] [options]

Run a workload on a fixture database (test/fixture/build_fixture.sh).
Tenants given as a list run at the same time.

Workloads (COUNT = records, cycles or calls; every statement listed runs
exactly COUNT times per tenant unless the listing says otherwise):
  di_create  data import, MARC bib create: SRS (folio_admin, JDBC + reactive
             pools), SRM (events_processed, journal_records), inventory
             (instance insert)
  di_update  the same on the fixture's existing records, plus the instance
             UPDATE of the data-import reports
  cico       check-out + check-in cycles: inventory (item by barcode, item
             status), circulation (loan, patron action session, request
             queue, check-in, open loan, loan close), users (patron by barcode)
  rtac       select * from get_items_and_holdings_view(\$1,\$2), 5 instances

Options:
  -c CLIENTS  concurrent connections per module pool (default 1);
              COUNT must be a multiple of CLIENTS
  -s SEED     pgbench --random-seed (default 42)
  -R RUNID    8 hex digits used in the ids this run creates (default random)
  -F FILE     data import: the job's file name (default COUNT.mrc)
  -h HOST     server host or socket directory (default: \$PGHOST)
  -p PORT     server port (default: \$PGPORT or 5432)
  -U USER     login for the fixture lookup before the run (default: \$PGUSER)
  -q          print only the statement counts and the result
  --help      this text
EOF
}

die() { echo "$prog: $*" >&2; exit 1; }

db='' workload='' count='' tenant_arg='' clients=1 seed=42 runid='' quiet=0 job_file=''
conn=()
admin=()
while [ $# -gt 0 ]; do
	case "$1" in
		-d) db=${2:?}; shift 2 ;;
		-w) workload=${2:?}; shift 2 ;;
		-n) count=${2:?}; shift 2 ;;
		-t) tenant_arg=${2:?}; shift 2 ;;
		-c) clients=${2:?}; shift 2 ;;
		-s) seed=${2:?}; shift 2 ;;
		-R) runid=${2:?}; shift 2 ;;
		-F) job_file=${2:?}; shift 2 ;;
		-h) conn+=(-h "${2:?}"); shift 2 ;;
		-p) conn+=(-p "${2:?}"); shift 2 ;;
		-U) admin+=(-U "${2:?}"); shift 2 ;;
		-q) quiet=1; shift ;;
		--help) usage; exit 0 ;;
		*) usage >&2; exit 2 ;;
	esac
done
[ -n "$db" ] && [ -n "$workload" ] && [ -n "$count" ] && [ -n "$tenant_arg" ] ||
	{ usage >&2; exit 2; }
case "$workload" in
	di_create | di_update | cico | rtac) ;;
	*) die "unknown workload \"$workload\" (di_create, di_update, cico, rtac)" ;;
esac
[[ "$count" =~ ^[0-9]+$ && "$count" -ge 1 ]] || die "-n needs a positive number"
[[ "$clients" =~ ^[0-9]+$ && "$clients" -ge 1 ]] || die "-c needs a positive number"
[ $((count % clients)) = 0 ] || die "COUNT ($count) must be a multiple of CLIENTS ($clients)"
[[ "$seed" =~ ^[0-9]+$ ]] || die "-s needs a number"
if [ -z "$runid" ]; then
	runid=$(printf '%08x' $(( ((RANDOM << 16) ^ RANDOM ^ ($$ << 8) ^ $(date +%s)) & 0x0fffffff | 0x10000000 )))
fi
[[ "$runid" =~ ^[0-9a-f]{8}$ ]] || die "-R needs 8 lower-case hex digits"
job_file=${job_file:-$count.mrc}
[[ "$job_file" =~ ^[A-Za-z0-9][A-Za-z0-9\ ._-]{0,99}$ ]] || die "-F needs a file name of letters, digits, space, . _ -"
IFS=, read -r -a tenants <<<"$tenant_arg"

for tool in psql pgbench; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		for d in "$(pg_config --bindir 2>/dev/null || true)" /usr/lib/postgresql/15/bin; do
			[ -n "$d" ] && [ -x "$d/$tool" ] && { PATH="$d:$PATH"; break; }
		done
	fi
	command -v "$tool" >/dev/null 2>&1 || die "$tool not found (set PATH)"
done

# The fixture's size and the tenants' schemas (catalog only; the comment on
# the database is written by build_fixture.sh).
tenant_array="{$(IFS=,; echo "${tenants[*]}")}"
# A superuser lookup is kept out of pg_stat_statements; anyone else's shows
# there as one call.
lookup_sql="
	SELECT coalesce((SELECT c::jsonb->>'rows' FROM shobj_description(d.oid, 'pg_database') c
	                 WHERE c LIKE '{\"fixture\": \"folio_perf\"%'), '-'),
	       coalesce((SELECT string_agg(t, ',') FROM unnest('$tenant_array'::text[]) t
	                 WHERE to_regnamespace(t || '_mod_inventory_storage') IS NULL
	                    OR to_regnamespace(t || '_mod_source_record_storage') IS NULL), '-')
	FROM pg_database d WHERE d.datname = current_database()"
lookup() { psql "${conn[@]}" "${admin[@]}" -X -At -F ' ' -d "$db" -v ON_ERROR_STOP=1 -c "$lookup_sql"; }
info=$(PGOPTIONS='-c pg_stat_statements.track=none' lookup 2>/dev/null || PGOPTIONS='' lookup) ||
	die "cannot read the fixture in database \"$db\""
rows=${info%% *}
missing=${info#* }
[ "$rows" != - ] || die "database \"$db\" was not built by test/fixture/build_fixture.sh (no fixture comment)"
[ "$missing" = - ] || die "no such tenant in \"$db\": $missing"
users=$(( rows / 3 > 10 ? rows / 3 : 10 ))
per_client=$((count / clients))
stride=$((rows / clients))
if [ "$workload" = cico ] && [ "$stride" -lt 1 ]; then
	die "cico: $clients clients need at least $clients pool items; the fixture has $rows"
fi

# Connections of the workload: script|login|application_name|search_path|password
parts_for() {
	local t=$1
	case "$workload" in
		di_create | di_update)
			echo "di_srs_jdbc|$SHARED_LOGIN|$APP_SRS_JDBC|${t}_mod_source_record_storage|$SHARED_PASSWORD"
			echo "di_srs_reactive|$SHARED_LOGIN|$APP_SRS_REACTIVE|${t}_mod_source_record_storage|$SHARED_PASSWORD"
			echo "di_srm|${t}_mod_source_record_manager|$APP_SRM||$t"
			echo "di_inventory|${t}_mod_inventory_storage|$APP_INVENTORY||$t"
			;;
		cico)
			echo "cico_inventory|${t}_mod_inventory_storage|$APP_INVENTORY||$t"
			echo "cico_circulation|${t}_mod_circulation_storage|$APP_CIRCULATION||$t"
			echo "cico_users|${t}_mod_users|$APP_USERS||$t"
			;;
		rtac)
			echo "rtac|${t}_mod_inventory_storage|$APP_INVENTORY||$t"
			;;
	esac
}

# Fills in a script template for one tenant.
instance_update='UPDATE @TENANT@_mod_inventory_storage.instance SET jsonb = '\''{"id": "00000001-0000-4000-8000-:s12", "hrid": "in:s12", "source": "MARC", "title": "Title :s12 (updated)", "instanceTypeId": "00000011-0000-4000-8000-100000000001", "modeOfIssuanceId": "00000012-0000-4000-8000-100000000001", "discoverySuppress": false, "metadata": {"createdDate": "2024-05-01T00:00:00.000+00:00", "createdByUserId": "00000005-0000-4000-8000-100000000001", "updatedDate": "2024-05-03T10:00:00.000+00:00"}}'\''::jsonb WHERE id='\''00000001-0000-4000-8000-:s12'\'';'
# A data import is one job of mod-source-record-manager: the SRM role
# creates its job_execution row (PARSING_IN_PROGRESS, started now, total
# COUNT records) before the records flow and marks it COMMITTED (completed
# now, COUNT processed) when every pool has finished.
job_id="$runid-0008-4000-8000-100000000001"
if [ "$workload" = di_update ]; then job_profile='PTF - Updates Success - 1'; else job_profile='PTF - Create 2'; fi
job_start_sql() {
	echo "INSERT INTO ${1}_mod_source_record_manager.job_execution (id, hrid, parent_job_id, subordination_type, source_path, file_name, progress_current, progress_total, started_date, status, ui_status, job_user_first_name, job_user_last_name, user_id, job_profile_id, job_profile_name, job_profile_data_type, job_profile_hidden, is_deleted, job_part_number, total_job_parts, total_records_in_file) VALUES ('$job_id', nextval('${1}_mod_source_record_manager.job_execution_hr_id_sequence'), '$job_id', 'PARENT_SINGLE', 'folio_perf/$job_file', '$job_file', 0, $count, now(), 'PARSING_IN_PROGRESS', 'RUNNING', 'Fixture', 'Admin', '00000005-0000-4000-8000-100000000001', '0000001c-0000-4000-8000-100000000001', '$job_profile', 'MARC', false, false, 1, 1, $count);"
}
job_finish_sql() {
	echo "UPDATE ${1}_mod_source_record_manager.job_execution SET status = 'COMMITTED', ui_status = 'RUNNING_COMPLETE', progress_current = $count, completed_date = now() WHERE id = '$job_id';"
}
run_job_sql() {
	PGAPPNAME="$APP_SRM" PGPASSWORD="$2" PGOPTIONS= psql "${conn[@]}" -U "${2}_mod_source_record_manager" -X -q \
		-v ON_ERROR_STOP=1 -d "$db" -c "$3" >/dev/null
}

render() {
	local script=$1 t=$2 srsid instid idx title action update=
	if [ "$workload" = di_update ]; then
		srsid='00000004-0000-4000-8000-:s12' instid='00000001-0000-4000-8000-:s12'
		idx=':s12' title='Title :s12 (updated)' action=UPDATE update=$instance_update
	else
		srsid=':run-0004-4000-8000-:k12' instid=':run-0001-4000-8000-:k12'
		idx=':k12' title='Title :k12' action=CREATE
	fi
	sed -e "s|@UPDATE@|${update//&/\\&}|" \
	    -e "s|@SRSID@|$srsid|g" -e "s|@INSTID@|$instid|g" -e "s|@IDX@|$idx|g" \
	    -e "s|@TITLE@|$title|g" -e "s|@ACTION@|$action|g" \
	    -e "s|@HANDLER@|0000001e-0000-4000-8000-100000000001|g" -e "s|@JOBID@|$job_id|g" \
	    -e "s|@TENANT@|$t|g" "$here/$script.pgbench"
}

# One SQL command per line: its text as pg_stat_statements will show it
# (string, numeric and boolean constants and pgbench variables -> $n).
normalize() {
	awk '
	function norm(s,    out, i, j, n, c, w, L) {
		out = ""; n = 0; i = 1; L = length(s)
		while (i <= L) {
			c = substr(s, i, 1)
			if (c == "\047") {
				j = index(substr(s, i + 1), "\047"); out = out "$" (++n); i += j + 1
			} else if (c == "\"") {
				j = index(substr(s, i + 1), "\""); out = out substr(s, i, j + 1); i += j + 1
			} else if (c == ":" && substr(s, i + 1, 1) == ":") {
				out = out "::"; i += 2
			} else if (c == ":" && substr(s, i + 1, 1) ~ /[A-Za-z0-9_]/) {
				j = i + 1; while (j <= L && substr(s, j, 1) ~ /[A-Za-z0-9_]/) j++
				out = out "$" (++n); i = j
			} else if (c ~ /[A-Za-z_]/) {
				j = i; while (j <= L && substr(s, j, 1) ~ /[A-Za-z0-9_$]/) j++
				w = substr(s, i, j - i)
				if (tolower(w) ~ /^(true|false|null)$/) out = out "$" (++n); else out = out w
				i = j
			} else if (c ~ /[0-9]/) {
				j = i; while (j <= L && substr(s, j, 1) ~ /[0-9.]/) j++
				out = out "$" (++n); i = j
			} else {
				out = out c; i++
			}
		}
		sub(/[ \t]*;[ \t]*$/, "", out)
		return out
	}
	/^[ \t]*$/ || /^[ \t]*--/ || /^[ \t]*\\/ { next }
	{ q = norm($0); if (!(q in times)) order[++nq] = q; times[q]++ }
	END { for (i = 1; i <= nq; i++) printf "%d\t%s\n", times[order[i]], order[i] }'
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== $workload: $count per tenant on ${tenants[*]} (database $db, run $runid, seed $seed, $clients client(s) per pool, fixture rows $rows)"
printf '%-16s %-42s %-32s %-42s %7s  %s\n' tenant login application_name search_path calls "statement (pg_stat_statements.query)"
for t in "${tenants[@]}"; do
	while IFS='|' read -r script login app sp pw; do
		render "$script" "$t" >"$work/$t.$script.pgbench"
		normalize <"$work/$t.$script.pgbench" |
			while IFS=$'\t' read -r times text; do
				printf '%-16s %-42s %-32s %-42s %7d  %s\n' "$t" "$login" "$app" "${sp:-(role default)}" \
					$((times * count)) "$text"
			done
	done < <(parts_for "$t")
	if [ "$workload" = di_create ] || [ "$workload" = di_update ]; then
		{ job_start_sql "$t"; job_finish_sql "$t"; } | normalize |
			while IFS=$'\t' read -r times text; do
				printf '%-16s %-42s %-32s %-42s %7d  %s\n' "$t" "${t}_mod_source_record_manager" "$APP_SRM" \
					"(role default)" "$times" "$text"
			done
	fi
done

# The data-import jobs start.
if [ "$workload" = di_create ] || [ "$workload" = di_update ]; then
	for t in "${tenants[@]}"; do
		run_job_sql start "$t" "$(job_start_sql "$t")" || die "$t: cannot create the data-import job"
	done
	[ "$quiet" = 1 ] || echo "job     data-import job $job_id ($job_file, $job_profile) PARSING_IN_PROGRESS on ${tenants[*]}"
fi

# Run every connection of every tenant at once and wait for all.
pids=()
labels=()
outs=()
for t in "${tenants[@]}"; do
	while IFS='|' read -r script login app sp pw; do
		out="$work/$t.$script.out"
		(
			export PGAPPNAME="$app" PGPASSWORD="$pw"
			if [ -n "$sp" ]; then export PGOPTIONS="-c search_path=$sp"; else export PGOPTIONS=; fi
			exec pgbench "${conn[@]}" -U "$login" -n -M simple -c "$clients" -t "$per_client" \
				--random-seed="$seed" -D n=0 -D run="$runid" -D rows="$rows" \
				-D per_client="$per_client" -D pool_lo=$((rows + 1)) -D stride="$stride" \
				-D users="$users" -f "$work/$t.$script.pgbench" "$db"
		) >"$out" 2>&1 &
		pids+=($!)
		labels+=("$t $script ($login)")
		outs+=("$out")
	done < <(parts_for "$t")
done

failed=0
for i in "${!pids[@]}"; do
	out=${outs[$i]}
	if wait "${pids[$i]}"; then rc=0; else rc=$?; fi
	done_tx=$(sed -n 's/^number of transactions actually processed: \([0-9]*\)\/.*/\1/p' "$out")
	failed_tx=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out")
	if [ "$rc" = 0 ] && [ "$done_tx" = "$count" ] && [ "${failed_tx:-0}" = 0 ]; then
		[ "$quiet" = 1 ] || printf 'ok      %-60s %s/%s transactions, %s\n' "${labels[$i]}" "$done_tx" "$count" \
			"$(sed -n 's/^tps = \([0-9.]*\) .*/\1 tps/p' "$out")"
	else
		failed=1
		printf 'FAILED  %-60s exit %s, %s/%s transactions\n' "${labels[$i]}" "$rc" "${done_tx:-0}" "$count" >&2
		sed 's/^/        /' "$out" >&2
	fi
done
[ "$failed" = 0 ] || die "workload $workload failed"
if [ "$workload" = di_create ] || [ "$workload" = di_update ]; then
	for t in "${tenants[@]}"; do
		run_job_sql finish "$t" "$(job_finish_sql "$t")" || die "$t: cannot complete the data-import job"
	done
	[ "$quiet" = 1 ] || echo "job     data-import job $job_id COMMITTED: $count records per tenant"
fi
echo "== $workload done: run $runid"
