#!/usr/bin/env bash
# test/chroot.sh - Debian chroots with other PostgreSQL versions for the test
# matrix.  Run as root.
#
#   test/chroot.sh ensure NAME    make the chroot NAME unless it is complete
#   test/chroot.sh path NAME      print its directory
#   test/chroot.sh mount NAME     mount /proc, /dev/shm and /dev/pts in it
#   test/chroot.sh umount NAME    undo "mount"
#   test/chroot.sh hostinst NAME  print an installation directory (bin/, lib/)
#                                 that runs the chroot's PostgreSQL on this
#                                 host without chroot (for remote targets)
#
# NAME is one of
#   pg17  Debian 13 (trixie) with postgresql-17 and postgresql-server-dev-17
#   pg18  Debian unstable (sid) with postgresql-18 and postgresql-server-dev-18
#   pg13  Debian 11 (bullseye) with postgresql-13 (remote targets only; no
#         longer used by test/run_tests.sh, whose 13 target comes from
#         test/embedded_pg.sh as 14's and 16's do)
#
# The chroots are made with debootstrap from the Debian mirror this machine's
# apt uses (no other; none configured: an error) and kept under $FOLIO_PERF_CHROOTS (default
# /var/cache/folio_perf/chroots) between runs; one whose ".complete" marker
# is missing or names another package list is made again from scratch.
# Copyright (c) 2026, folio_perf developers (the PostgreSQL License, see LICENSE)
set -euo pipefail

root=${FOLIO_PERF_CHROOTS:-/var/cache/folio_perf/chroots}

# The Debian mirror of this machine's own apt configuration: the first
# source whose Release file is labelled "Debian" (not Debian-Security), as
# apt itself reports its sources.  No host is written into this script: a
# machine without such a source (or whose lists were never fetched) makes
# no chroot, and says so.
mirror() {
	local m
	m=$(apt-get indextargets --format '$(LABEL) $(REPO_URI)' 'Identifier: Packages' 2>/dev/null |
		awk '$1 == "Debian" && $2 ~ /^(https?|file):/ { sub("/$", "", $2); print $2; exit }')
	if [ -z "$m" ]; then
		echo "test/chroot.sh: apt on this machine has no Debian source to make chroots from" >&2
		echo "  (apt-get indextargets lists no Packages index labelled \"Debian\";" >&2
		echo "  add the Debian mirror to /etc/apt/sources.list.d/ and run apt-get update)" >&2
		return 1
	fi
	echo "$m"
}

# suite and packages of each chroot
spec() {
	local build="build-essential perl libipc-run-perl dpkg-dev debhelper fakeroot postgresql-server-dev-all procps"
	# what TAP tests use: the HTML report and page layout tests, the
	# metrics exporter and dashboard tests, the JUnit reader of the
	# findings test
	local tests="chromium prometheus-postgres-exporter prometheus cmark-gfm python3-junitparser libxml2-utils"
	case "$1" in
	pg17) echo "trixie postgresql-17 postgresql-server-dev-17 $build $tests" ;;
	pg18) echo "sid postgresql-18 postgresql-server-dev-18 $build $tests" ;;
	pg13) echo "bullseye postgresql-13" ;;
	*) echo "test/chroot.sh: unknown chroot \"$1\" (pg17, pg18 or pg13)" >&2; return 1 ;;
	esac
}

dir_of() { echo "$root/$1"; }

# The mirror may serve a release whose Release file is past its Valid-Until
# (a snapshot of the archive, as this machine's apt uses): apt in the
# chroot takes it as debootstrap did.
no_valid_until() {
	mkdir -p "$1/etc/apt/apt.conf.d"
	echo 'Acquire::Check-Valid-Until "false";' > "$1/etc/apt/apt.conf.d/99folio-perf-snapshot"
}

ensure() {
	local name=$1 s suite pkgs dir tmp
	s=$(spec "$name")
	suite=${s%% *}
	pkgs=${s#* }
	dir=$(dir_of "$name")
	if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$s" ]; then
		return 0
	fi
	# the same release with other packages: install those it lacks
	if [ -f "$dir/.complete" ] && [ "$(cut -d' ' -f1 "$dir/.complete")" = "$suite" ]; then
		local p missing=""
		for p in $pkgs; do
			chroot "$dir" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
				missing="$missing $p"
		done
		if [ -z "$missing" ]; then
			echo "$s" > "$dir/.complete"
			return 0
		fi
		echo "== adding to the $name chroot:$missing"
		no_valid_until "$dir"
		mount_all "$dir"
		# shellcheck disable=SC2086
		if chroot "$dir" /usr/bin/env DEBIAN_FRONTEND=noninteractive sh -c \
			"apt-get update -q && apt-get install -y -q --no-install-recommends $missing && apt-get clean" \
			> "$root/$name.apt.log" 2>&1; then
			umount_all "$dir"
			echo "$s" > "$dir/.complete"
			return 0
		fi
		umount_all "$dir"
		tail -30 "$root/$name.apt.log" >&2
		echo "== making the $name chroot again" >&2
	fi
	command -v debootstrap >/dev/null || {
		echo "== installing debootstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
	}
	local m
	m=$(mirror) || return 1
	echo "== making the $name chroot: Debian $suite from $m with $pkgs"
	mkdir -p "$root"
	tmp="$dir.new"
	umount_all "$tmp"
	rm -rf "$tmp"
	debootstrap --variant=minbase "$suite" "$tmp" "$m" > "$root/$name.debootstrap.log" 2>&1 || {
		tail -30 "$root/$name.debootstrap.log" >&2
		return 1
	}
	no_valid_until "$tmp"
	# no services start inside, and Debian's postgresql makes no cluster
	printf '#!/bin/sh\nexit 101\n' > "$tmp/usr/sbin/policy-rc.d"
	chmod +x "$tmp/usr/sbin/policy-rc.d"
	mkdir -p "$tmp/etc/postgresql-common/createcluster.d"
	echo "create_main_cluster = false" > "$tmp/etc/postgresql-common/createcluster.d/no-main.conf"
	mount_all "$tmp"
	# shellcheck disable=SC2086
	if ! chroot "$tmp" /usr/bin/env DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends $pkgs > "$root/$name.apt.log" 2>&1; then
		umount_all "$tmp"
		tail -30 "$root/$name.apt.log" >&2
		return 1
	fi
	chroot "$tmp" apt-get clean
	umount_all "$tmp"
	echo "$s" > "$tmp/.complete"
	umount_all "$dir"
	rm -rf "$dir"
	mv "$tmp" "$dir"
	# the remote-target chroot runs on this host too (see hostlibs)
	if [ "$name" = pg13 ]; then hostlibs "$dir"; fi
}

# A view of the chroot's PostgreSQL that runs on this host as it is: .host/bin
# is its bindir (the programs find their share and lib directories relative
# to their own path) and .host/lib holds links to the chroot's shared
# libraries that this host lacks (for a Debian older than the host: the
# host's C library and libraries of the same soname are newer and
# compatible).  PostgreSQL::Test::Cluster's install_path puts $inst/lib on
# LD_LIBRARY_PATH and $inst/bin on PATH.
hostlibs() {
	local d=$1 bindir lib missing f name n prev=-1
	bindir=$(ls -d "$d"/usr/lib/postgresql/*/bin | sort -V | tail -1)
	rm -rf "$d/.host"
	mkdir -p "$d/.host/lib"
	ln -s "$bindir" "$d/.host/bin"
	lib="$d/.host/lib"
	# until no new soname is found missing
	while :; do
		n=$(find "$lib" -mindepth 1 | wc -l)
		[ "$n" = "$prev" ] && break
		prev=$n
		missing=$(for f in "$bindir"/* "$bindir"/../lib/*.so "$lib"/*; do
			[ -e "$f" ] || continue
			LD_LIBRARY_PATH="$lib" ldd "$f" 2>/dev/null | awk '/not found/ { print $1 }'
		done | sort -u)
		for name in $missing; do
			f=$(ls "$d"/usr/lib/x86_64-linux-gnu/"$name" "$d"/lib/x86_64-linux-gnu/"$name" 2>/dev/null | head -1)
			if [ -n "$f" ]; then
				ln -sf "$(readlink -f "$f" | sed "s#^$(readlink -f "$d")#$d#")" "$lib/$name"
			fi
		done
	done
}

mount_all() {
	local d=$1
	mountpoint -q "$d/proc" || mount -t proc proc "$d/proc"
	mkdir -p "$d/dev/shm" "$d/dev/pts"
	mountpoint -q "$d/dev/shm" || mount -t tmpfs -o mode=1777 shm "$d/dev/shm"
	mountpoint -q "$d/dev/pts" || mount -t devpts -o newinstance,ptmxmode=0666 devpts "$d/dev/pts" 2>/dev/null || true
}

umount_all() {
	local d=$1 m
	[ -d "$d" ] || return 0
	for m in dev/pts dev/shm proc; do
		if mountpoint -q "$d/$m" 2>/dev/null; then
			umount "$d/$m" 2>/dev/null || umount -l "$d/$m"
		fi
	done
}

[ "$(id -u)" = 0 ] || { echo "test/chroot.sh: run as root" >&2; exit 1; }
case "${1:-}" in
ensure) ensure "$2" ;;
path) spec "$2" >/dev/null && dir_of "$2" ;;
mount) mount_all "$(dir_of "$2")" ;;
umount) umount_all "$(dir_of "$2")" ;;
hostinst)
	d=$(dir_of "$2")
	[ -d "$d/.host/bin" ] || hostlibs "$d"
	echo "$d/.host"
	;;
*) echo "usage: test/chroot.sh ensure|path|mount|umount|hostinst pg17|pg18|pg13" >&2; exit 2 ;;
esac
