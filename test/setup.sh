#!/usr/bin/env bash
# test/setup.sh - install everything folio_perf needs on a fresh Debian 12
# machine, then build and install the extension.  Run as root.  Idempotent.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

if [ "$(id -u)" != 0 ]; then
	echo "test/setup.sh: run as root (it installs packages and the extension)" >&2
	exit 1
fi

# debootstrap makes the chroots of the version matrix (test/chroot.sh);
# dpkg-dev, debhelper and fakeroot build the Debian package.
# python3-junitparser and libxml2-utils read folio_perf_check_junit's XML
# (TAP 080_findings).
pkgs=(postgresql-15 postgresql-server-dev-15 libipc-run-perl clang-14 chromium
	prometheus-postgres-exporter prometheus cmark-gfm libclang-rt-14-dev make gcc
	python3-junitparser libxml2-utils)
[ "${FOLIO_PERF_MATRIX:-1}" = 0 ] ||
	pkgs+=(debootstrap dpkg-dev debhelper fakeroot postgresql-server-dev-all)
need=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
	echo "== installing: ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq "${need[@]}" >/dev/null
fi

# Debian's postgresql package starts a cluster of its own; we never use it.
# PG_BINDIR may name another installation (e.g. a private relocated copy of
# /usr/lib/postgresql/15, so that parallel checkouts do not install over
# each other); the default is Debian's.
PG_BINDIR=${PG_BINDIR:-/usr/lib/postgresql/15/bin}
export PATH="$PG_BINDIR:$PATH"

echo "== building folio_perf"
make -C "$here" -s PG_CONFIG="$PG_BINDIR/pg_config" COPT='-Wall -Werror'
# install scripts of versions this tree does not have (an older build's)
# would be offered by pg_available_extension_versions
rm -f "$("$PG_BINDIR/pg_config" --sharedir)"/extension/folio_perf--*.sql
make -C "$here" -s PG_CONFIG="$PG_BINDIR/pg_config" install >/dev/null
