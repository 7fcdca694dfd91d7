#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The trees of tests/vm/fetch-arm64-closure.sh (the arm64 QEMU for the
# arm64 guest, the sysroot the arm64 exporter is built against), on the
# host, with a stand-in for its apt (tests/vm/fetch-kernels.sh apt) that
# serves packages made here: when a package's new version makes a new
# tree, the tree another run may be using (one asked for within the last
# day) must stay, and one nobody asked for since must go.  Two checkouts
# on one machine share the cache (a developer's tree and a CI clone); the
# debug kernel's cache had that defect until 2026-12-07
# (debug_kernel_cache_test.sh), and this one until the test below.
#
# usage: tests/vm/fetch_arm64_closure_cache_test.sh
# Prints TAP, then "N passed, N failed".
set -uo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/ks-closure-cache.XXXXXX")
trap 'rm -rf "$T"' EXIT
export CACHE=$T/cache
# ok, tap_finish
. "$TOP/tests/lib/host-tap.sh"

# A checkout with the script under test and the stand-in beside it.
mkdir -p "$T/top/tests/vm" "$T/pool" "$CACHE/apt-arm64/state/lists"
cp "$TOP/tests/vm/fetch-arm64-closure.sh" "$T/top/tests/vm/"
cat > "$T/top/tests/vm/fetch-kernels.sh" <<'SH'
#!/usr/bin/env bash
# Stand-in: "apt 6.12-arm64 apt-get --print-uris ... install P:arm64..."
# lists P at the version in $POOL/version; "apt-get download P:arm64=V..."
# builds those packages, each holding usr/share/P/version.
set -eu
shift 2
[ "$1" = apt-get ] || exit 1
v=$(cat "$POOL/version")
case " $* " in
*" --print-uris "*)
	for a; do
		case "$a" in
		*:arm64) echo "'http://deb.invalid/${a%:arm64}.deb' ${a%:arm64}_${v}_arm64.deb 1 SHA256:0" ;;
		esac
	done ;;
*" download "*)
	for a; do
		case "$a" in
		*:arm64=*)
			p=${a%%:*} pv=${a#*=}
			d=$(mktemp -d)
			mkdir -p "$d/DEBIAN" "$d/usr/share/$p"
			echo "$pv" > "$d/usr/share/$p/version"
			printf 'Package: %s\nVersion: %s\nArchitecture: arm64\nMaintainer: t <t@example.org>\nDescription: stand-in\n' \
				"$p" "$pv" > "$d/DEBIAN/control"
			dpkg-deb -b "$d" "${p}_${pv}_arm64.deb" > /dev/null
			rm -rf "$d" ;;
		esac
	done ;;
esac
SH
chmod +x "$T/top/tests/vm/fetch-kernels.sh"
export POOL=$T/pool

# fetch VERSION: the tree for package ks-stand-in at VERSION, or nothing.
fetch() {
	local tree
	echo "$1" > "$POOL/version"
	# Newer lists than the last resolution: ask the stand-in again.
	touch "$CACHE/apt-arm64/state/lists/.stamp"
	sleep 0.01
	tree=$("$T/top/tests/vm/fetch-arm64-closure.sh" kst ks-stand-in 2> "$T/log") &&
		[ "$(cat "$tree/usr/share/ks-stand-in/version" 2>/dev/null)" = "$1" ] &&
		echo "${tree%/root}"
}

t1=$(fetch 1.0)
[ -n "$t1" ]; ok $? "a first tree, of version 1.0" "$(cat "$T/log")"
t2=$(fetch 1.1)
[ -n "$t2" ] && [ "$t2" != "$t1" ]
ok $? "a new version: a new tree" "$(cat "$T/log")"
[ -n "$t1" ] && [ -f "$t1/.unpacked" ]
ok $? "the older tree stays, asked for a moment ago (another run may be using it)" \
	"$(cat "$T/log")"

# Nobody has asked for the 1.0 tree for two days: the next call removes it.
[ -n "$t1" ] && [ -d "$t1" ] && touch -d '2 days ago' "$t1"
t=$(fetch 1.1)
[ -n "$t1" ] && [ ! -e "$t1" ] && [ "$t" = "$t2" ]
ok $? "a tree nobody asked for in two days is removed" "$(cat "$T/log")"

# Asking for a tree marks it used, also when it comes from the cache.
[ -n "$t2" ] && touch -d '2 days ago' "$t2"
t=$(fetch 1.1)
[ -n "$t2" ] && [ "$t" = "$t2" ] && [ -n "$(find "$t2" -maxdepth 0 -mmin -5)" ]
ok $? "a cached tree asked for again is marked used" "$(cat "$T/log")"

tap_finish
