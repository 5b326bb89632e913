#!/usr/bin/env bash
# test/deb_test.sh - build the Debian package and test it installed.  As
# root, on Debian with postgresql-server-dev-all, debhelper and dpkg-dev:
#
#   1. dpkg-buildpackage builds postgresql-NN-folio-perf from a clean copy of
#      the tree (pg_buildext: one VPATH build per version in debian/pgversions
#      that is installed),
#   2. lists the .deb's files and installs it with dpkg -- on files only it
#      installed: the extension's files that `make install` (test/setup.sh)
#      put into the system directories of the package's PostgreSQL version
#      are moved aside first (and put back at the end), and after dpkg -i
#      the library, the control file and every install and upgrade script
#      of the tree must be there and belong to the package,
#   3. runs the package's autopkgtest (debian/tests/installcheck): on a new
#      throw-away cluster (pg_virtualenv) that preloads pg_stat_statements
#      and the installed folio_perf, CREATE EXTENSION and the pg_regress suite
#      (make installcheck) against that server,
#   4. removes the package again.
# Prints "deb: N passed, N failed" (pg_regress tests, plus one for the build,
# one per package for the exporter's query file it must ship, one for the
# install, and one per file the package must have installed); exits
# non-zero on any failure.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
[ "$(id -u)" = 0 ] || { echo "test/deb_test.sh: run as root" >&2; exit 1; }

# one package installation at a time on this machine
exec 9> /var/lock/folio_perf_deb.lock
flock 9

tmp=$(mktemp -d /tmp/folio_perf_deb.XXXXXX)
pkgs=()
# files of a `make install` moved aside (their paths under $tmp/aside)
aside=()
cleanup() {
	local f
	[ ${#pkgs[@]} -eq 0 ] || dpkg -r "${pkgs[@]}" > /dev/null 2>&1
	for f in "${aside[@]}"; do
		[ -e "$f" ] || cp -a "$tmp/aside$f" "$f"
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
passed=0
failed=0

# a clean copy: no build products of the working tree
mkdir "$tmp/folio-perf"
(cd "$src" && tar --exclude=./.git --exclude='*.o' --exclude='*.so' --exclude='*.bc' \
	--exclude=./tmp_check --exclude=./tmp_check_regress --exclude=./results \
	--exclude='./folio_perf--*.sql' --exclude='./build-*' --exclude=./log \
	--exclude='./*.log' --exclude=./regression.diffs --exclude=./regression.out -cf - .) |
	tar -xf - -C "$tmp/folio-perf"
chown -R root:root "$tmp/folio-perf"

echo "== dpkg-buildpackage"
# the control file follows the versions installed here (debian/pgversions)
(cd "$tmp/folio-perf" && pg_buildext updatecontrol)
# the tests run below, on the installed package
if (cd "$tmp/folio-perf" && DEB_BUILD_OPTIONS=nocheck dpkg-buildpackage -b -us -uc) > "$tmp/build.log" 2>&1; then
	passed=$((passed + 1))
	grep -E 'dpkg-deb: building package|warning' "$tmp/build.log"
else
	failed=$((failed + 1))
	tail -40 "$tmp/build.log"
	echo "deb: ${passed} passed, ${failed} failed"
	exit 1
fi

debs=("$tmp"/postgresql-*-folio-perf_*.deb)
for d in "${debs[@]}"; do
	echo "== $(basename "$d")"
	dpkg-deb -I "$d" | sed -n '/Package:/,/Description:/p'
	dpkg-deb -c "$d" | awk '{print $1, $3, $6}'
	pkgs+=("$(dpkg-deb -f "$d" Package)")
	# the exporter's query file where doc/reference.md points the exporter,
	# and the two dashboards, uncompressed and as in the tree
	for m in postgres_exporter.yaml grafana_folio_perf.json grafana_folio_perf_exporter.json; do
		q="./usr/share/doc/$(dpkg-deb -f "$d" Package)/examples/$m"
		if dpkg-deb --fsys-tarfile "$d" | tar -xOf - "$q" 2>/dev/null | cmp -s - "$src/monitoring/$m"; then
			passed=$((passed + 1))
			echo "ok: $q"
		else
			failed=$((failed + 1))
			echo "FAILED: $(basename "$d") lacks $q (monitoring/$m)"
		fi
	done
done

# the extension's files of each package's version: the library (and its
# JIT bitcode), the control file and the scripts
ext_files() {
	local v=$1
	ls -d /usr/lib/postgresql/"$v"/lib/folio_perf.so /usr/lib/postgresql/"$v"/lib/bitcode/folio_perf.index.bc \
		/usr/lib/postgresql/"$v"/lib/bitcode/folio_perf /usr/share/postgresql/"$v"/extension/folio_perf.control \
		/usr/share/postgresql/"$v"/extension/folio_perf--*.sql 2>/dev/null
}
# what a package must have installed: the library, the control file, the
# install script of the default version and every script of the tree
must_have() {
	local v=$1 f
	echo "/usr/lib/postgresql/$v/lib/folio_perf.so"
	echo "/usr/share/postgresql/$v/extension/folio_perf.control"
	echo "/usr/share/postgresql/$v/extension/folio_perf--$(sed -n "s/^default_version *= *'\(.*\)'/\1/p" "$src/folio_perf.control").sql"
	for f in "$src"/sql/folio_perf--*.sql; do
		[ -f "$f" ] && echo "/usr/share/postgresql/$v/extension/$(basename "$f")"
	done
}
pkg_version() { dpkg-deb -f "$1" Package | sed -E 's/^postgresql-([0-9]+)-folio-perf$/\1/'; }

echo "== moving aside the extension's files no package installed"
for d in "${debs[@]}"; do
	for f in $(ext_files "$(pkg_version "$d")"); do
		dpkg -S "$f" > /dev/null 2>&1 && continue	# a package's: dpkg -i replaces it
		mkdir -p "$tmp/aside$(dirname "$f")"
		mv "$f" "$tmp/aside$f" && aside+=("$f") && echo "$f"
	done
done

echo "== dpkg -i"
if dpkg -i "${debs[@]}" > "$tmp/install.log" 2>&1; then
	passed=$((passed + 1))
	for d in "${debs[@]}"; do
		p=$(dpkg-deb -f "$d" Package)
		for f in $(must_have "$(pkg_version "$d")" | sort -u); do
			owner=$(dpkg -S "$f" 2>/dev/null | cut -d: -f1)
			if [ -f "$f" ] && [ "$owner" = "$p" ]; then
				passed=$((passed + 1))
				echo "ok: $f ($p)"
			else
				failed=$((failed + 1))
				echo "FAILED: $f not installed by $p (present: $([ -f "$f" ] && echo yes || echo no), owner: ${owner:-none})"
			fi
		done
	done
else
	failed=$((failed + 1))
	cat "$tmp/install.log"
	pkgs=()
fi

if [ ${#pkgs[@]} -gt 0 ]; then
	echo "== autopkgtest debian/tests/installcheck (pg_virtualenv, installed package)"
	(cd "$tmp/folio-perf" && debian/tests/installcheck) > "$tmp/check.log" 2>&1
	rc=$?
	cat "$tmp/check.log"
	ok=$(grep -cE '^test .* \.\.\. ok |^ok [0-9]+ ' "$tmp/check.log" || true)
	bad=$(grep -cE '^test .* \.\.\. FAILED|^not ok [0-9]+ ' "$tmp/check.log" || true)
	if [ "$rc" != 0 ] && [ "$bad" = 0 ]; then bad=1; fi
	passed=$((passed + ok))
	failed=$((failed + bad))
fi

echo "deb: ${passed} passed, ${failed} failed"
[ "$failed" = 0 ]
