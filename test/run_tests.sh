#!/usr/bin/env bash
# test/run_tests.sh - the whole test suite on a fresh Debian 12 machine.
#
# As root: installs what is needed (test/setup.sh), builds and installs
# folio_perf, then, as the unprivileged "postgres" OS user, runs
#   1. pg_regress tests (test/sql, expected/) on a temporary instance that
#      preloads pg_stat_statements and folio_perf,
#   2. TAP tests (test/t) with PostgreSQL::Test::Cluster,
#   3. the libFuzzer harness of the parsers for a bounded time,
# and ends with one "N passed, N failed" line.  Exits non-zero on any failure.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
FUZZ_SECONDS=${FUZZ_SECONDS:-20}

PG_BINDIR=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
export PG_BINDIR
bash "$src/test/setup.sh" || exit 1

# The suites run as a non-root user in a copy of the tree it owns.
work=$(mktemp -d /tmp/folio_perf_test.XXXXXX)
cp -a "$src/." "$work/"
chown -R postgres:postgres "$work"
runas() { su postgres -s /bin/bash -c "cd '$work' && export PATH=$PG_BINDIR:\$PATH && $*"; }

passed=0
failed=0

echo "== pg_regress"
runas "make -s installcheck-regress-only" > "$work/regress.log" 2>&1
regress_rc=$?
cat "$work/regress.log"
n_ok=$(grep -cE '^(test|ok) .* ok ' "$work/regress.log" || true)
n_bad=$(grep -cE '^(test|not ok) .* FAILED' "$work/regress.log" || true)
passed=$((passed + n_ok))
failed=$((failed + n_bad))
if [ "$regress_rc" != 0 ]; then
	[ "$n_bad" -gt 0 ] || failed=$((failed + 1))
	[ -f "$work/regression.diffs" ] && head -300 "$work/regression.diffs"
fi

echo "== TAP"
if runas "make -s installcheck-tap-only" > "$work/tap.log" 2>&1; then tap_rc=0; else tap_rc=1; fi
cat "$work/tap.log"
t=$(grep -oE '^Files=[0-9]+, Tests=[0-9]+' "$work/tap.log" | grep -oE 'Tests=[0-9]+' | grep -oE '[0-9]+' || echo 0)
if [ "$tap_rc" = 0 ]; then
	passed=$((passed + t))
else
	tf=$(grep -oE 'Failed [0-9]+/[0-9]+ subtests' "$work/tap.log" | awk -F'[ /]' '{s+=$2} END {print s+0}')
	[ "$tf" -gt 0 ] || tf=1
	failed=$((failed + tf)); passed=$((passed + t - tf))
	for f in "$work"/tmp_check/log/regress_log_*; do
		[ -f "$f" ] && { echo "--- $f"; tail -60 "$f"; }
	done
fi

echo "== fuzzing the parsers, ${FUZZ_SECONDS}s per harness"
runas "make -s -C test/fuzz run FUZZ_SECONDS=$FUZZ_SECONDS" > "$work/fuzz.log" 2>&1
fuzz_rc=$?
cat "$work/fuzz.log"
n_h=$(grep -c '^== fuzz_' "$work/fuzz.log" || true)
n_f=$(grep -c 'FAILED$' "$work/fuzz.log" || true)
passed=$((passed + n_h - n_f))
failed=$((failed + n_f))
if [ "$fuzz_rc" != 0 ] && [ "$n_f" = 0 ]; then
	failed=$((failed + 1))
fi

echo
echo "${passed} passed, ${failed} failed"
[ "$failed" = 0 ]
