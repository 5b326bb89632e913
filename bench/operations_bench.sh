#!/usr/bin/env bash
# bench/operations_bench.sh - what the FOLIO operations cost a report.
#
# On a server with a fixture database (test/fixture/build_fixture.sh) and
# folio_perf created in it: one window with a data import of RECORDS records
# on every tenant of the fixture at once and 20 check-out/check-in cycles on
# the first, then REPS timings of folio_perf_data_import_jobs(w),
# folio_perf_operations(w), folio_perf_report(w, 'text'), and of the FOLIO
# operations part of a report alone (operations_doc after a report in the
# same transaction, so that the window's differences are already computed,
# as they are for the report's other sections).  Prints min / median / max
# in ms.
#
#   bash bench/operations_bench.sh -d folio -h /tmp -p 5432 [-n RECORDS] [-r REPS]
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
db='' conn=() records=50 reps=5
while [ $# -gt 0 ]; do
	case "$1" in
		-d) db=${2:?}; shift 2 ;;
		-h | -p | -U) conn+=("$1" "${2:?}"); shift 2 ;;
		-n) records=${2:?}; shift 2 ;;
		-r) reps=${2:?}; shift 2 ;;
		*) echo "usage: $0 -d DB [-h HOST] [-p PORT] [-U USER] [-n RECORDS] [-r REPS]" >&2; exit 2 ;;
	esac
done
[ -n "$db" ] || { echo "$0: -d DB is required" >&2; exit 2; }
psqlq() { psql "${conn[@]}" -X -q -v ON_ERROR_STOP=1 -d "$db" "$@"; }

tenants=$(psqlq -Atc "SELECT string_agg(t, ',' ORDER BY t) FROM jsonb_array_elements_text(
	(SELECT shobj_description(oid, 'pg_database')::jsonb->'tenants' FROM pg_database
	 WHERE datname = current_database())) t")
first=${tenants%%,*}
w=$(psqlq -Atc "SELECT folio_perf_begin('operations bench', '{\"release\":\"bench\"}')")
bash "$here/../test/workload/run_workload.sh" -d "$db" "${conn[@]}" -w di_create -n "$records" -t "$tenants" -q >/dev/null
bash "$here/../test/workload/run_workload.sh" -d "$db" "${conn[@]}" -w cico -n 20 -c 2 -t "$first" -q >/dev/null
psqlq -Atc "SELECT folio_perf_end($w)" >/dev/null
echo "window $w: $(psqlq -Atc "SELECT count(*) FROM folio_perf_data_import_jobs($w)") jobs," \
	"$(psqlq -Atc "SELECT count(*) FROM folio_perf_operations($w)") operation rows," \
	"tenants $tenants"

# the time in ms of statement PICK of the statements given (one session)
timed() {
	local pick=$1 a=() q
	shift
	for q in "$@"; do a+=(-c "$q"); done
	psqlq -At -c '\timing on' "${a[@]}" 2>&1 | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | sed -n "${pick}p"
}
stats() {	# label, pick, statements
	local l=$1 i t=()
	shift
	for i in $(seq 1 "$reps"); do t+=("$(timed "$@")"); done
	printf '%s\n' "${t[@]}" | sort -g | awk -v l="$l" '{ v[NR] = $1 } END {
		printf "%-46s min %8.1f  median %8.1f  max %8.1f ms\n", l, v[1], v[int((NR + 1) / 2)], v[NR] }'
}
stats "folio_perf_data_import_jobs(w)" 1 "SELECT count(*) FROM folio_perf_data_import_jobs($w)"
stats "folio_perf_operations(w)" 1 "SELECT count(*) FROM folio_perf_operations($w)"
stats "folio_perf_report(w, 'text')" 1 "SELECT length(folio_perf_report($w, 'text'))"
stats "FOLIO operations part of a report" 3 BEGIN "SELECT length(folio_perf_report($w, 'json'))" \
	"SELECT folio_perf_data.operations_doc($w) IS NOT NULL" COMMIT
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
