#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian 12's arm64 packages and everything they depend on, unpacked into
# one tree, without installing anything and without running an arm64
# program:
#
#   fetch-arm64-closure.sh NAME PACKAGE...
#                            prints the tree: $CACHE/NAME/<key>/root,
#                            holding every arm64 package of the closure
#
# The closure is what bookworm's apt resolves for PACKAGE:arm64... from
# nothing installed (the arm64 6.12 kernel's private apt configuration,
# tests/vm/fetch-kernels.sh apt, which pins sid away), without
# recommends.  Only its arm64 packages are fetched and unpacked: the
# architecture-independent ones and the host ones apt adds for them hold
# no arm64 code.  The tree's key is the list of those packages' versions,
# so a security update of any of them makes a new tree.  A tree is marked
# used (its time) whenever it is asked for; the other trees of NAME go once
# nobody has asked for them for a day: another checkout's run, sharing the
# cache, may still be copying from one (tests/vm/fetch_arm64_closure_cache_
# test.sh).  A new tree's unpacking also removes the packages only older
# trees used.  A warm run asks apt only when its lists changed since (they
# are refreshed twice a day).
#
# Its users: Debian's arm64 QEMU for the arm64 guest
# (tests/qemu/fetch-qemu-arm64.sh) and the sysroot the arm64 exporter is
# built against (tests/vm/arm64/build-exporter.sh).
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${CACHE:-$TOP/.cache}
name=$1
shift
dir=$CACHE/$name
log() { echo "  [$name] $*" >&2; }

mkdir -p "$dir/debs"
apt_arm64() { "$TOP/tests/vm/fetch-kernels.sh" apt 6.12-arm64 "$@"; }

# use KEY: print tree KEY's root, marked used, after removing the trees
# nobody has asked for in a day (not KEY's, nor one being unpacked).
use() {
	touch "$dir/$1"
	find "$dir" -mindepth 1 -maxdepth 1 -type d ! -name debs ! -name "$1" \
		! -name '*.tmp' -mmin +1440 -exec rm -rf {} +
	echo "$dir/$1/root"
}

# The closure resolved after the lists' last refresh is still theirs, if
# it was resolved for these packages.
stamp=$CACHE/apt-arm64/state/lists/.stamp
if [ -f "$stamp" ] && [ "$dir/debs.list" -nt "$stamp" ] &&
	[ "$(cat "$dir/packages" 2>/dev/null)" = "$*" ]; then
	key=$(sha256sum < "$dir/debs.list" | cut -c1-16)
	if [ -f "$dir/$key/.unpacked" ]; then
		use "$key"
		exit 0
	fi
fi

# 'URI' NAME_VERSION_ARCH.deb SIZE HASH, one line per package of the
# closure; versions spell their epoch's colon %3a.
apt_arm64 apt-get --print-uris -qq -y --no-install-recommends \
	install "${@/%/:arm64}" > "$dir/uris"
awk '$2 ~ /_arm64\.deb$/ { print $2 }' "$dir/uris" | sort > "$dir/debs.list"
echo "$*" > "$dir/packages"
for p in "$@"; do
	grep -q "^${p}_" "$dir/debs.list" ||
		{ log "apt resolved no $p:arm64"; cat "$dir/uris" >&2; exit 1; }
done
key=$(sha256sum < "$dir/debs.list" | cut -c1-16)
tree=$dir/$key
if [ -f "$tree/.unpacked" ]; then
	use "$key"
	exit 0
fi

exec 7> "$dir/.lock"
flock 7
want=()
while read -r f; do
	[ -f "$dir/debs/$f" ] && continue
	n=${f%%_*} v=${f#*_}
	v=${v%_arm64.deb}
	want+=("$n:arm64=${v//%3a/:}")
done < "$dir/debs.list"
if [ ${#want[@]} -gt 0 ]; then
	log "downloading ${#want[@]} arm64 packages ($* and their dependencies)"
	# A failed download shows below: its package is missing.
	(cd "$dir/debs" && apt_arm64 apt-get download -q "${want[@]}") 2>&1 |
		{ grep -v -e '^Get:' -e 'unsandboxed' >&2 || :; }
fi
log "unpacking $(wc -l < "$dir/debs.list") packages into $tree"
rm -rf "$tree.tmp"
mkdir -p "$tree.tmp/root"
while read -r f; do
	[ -f "$dir/debs/$f" ] || { log "download of $f failed"; exit 1; }
	dpkg-deb -x "$dir/debs/$f" "$tree.tmp/root"
done < "$dir/debs.list"
# A tree to build against (clang --sysroot): the -dev packages' absolute
# symbolic links (libz.so -> /lib/aarch64-linux-gnu/libz.so.1.2.13) would
# lead out of it, and the linker, not finding libz.so, would take libz.a.
find "$tree.tmp/root" -type l -lname '/*' | while read -r l; do
	ln -sfn "$(realpath -ms --relative-to="${l%/*}" "$tree.tmp/root$(readlink "$l")")" "$l"
done
# The packages only older trees used go (their trees stay unpacked).
find "$dir/debs" -name '*.deb' | while read -r f; do
	grep -qxF "${f##*/}" "$dir/debs.list" || rm -f "$f"
done
touch "$tree.tmp/.unpacked"
mv "$tree.tmp" "$tree"
use "$key"
