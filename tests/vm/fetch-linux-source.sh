#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Extract the few files the project takes from Debian's linux-source-6.1
# package at build time: the kselftest harness headers, checkpatch.pl with
# its data files, and upstream's KVM selftests with the tools/ tree they
# build from (tests/upstream: kvm_binary_stats_test, run with and without
# the module).  Nothing of it is copied into the repository.  Prints the
# directory that holds the extracted tree.
set -euo pipefail

CACHE=${CACHE:-$(cd "$(dirname "$0")/../.." && pwd)/.cache}
PKG=linux-source-6.1
out="$CACHE/linux-source"
# What .extracted holds: bumped when the list of files below changes.
FORMAT=2

if [ "$(cat "$out/.extracted" 2>/dev/null)" = "$FORMAT" ]; then
	echo "$out"
	exit 0
fi
mkdir -p "$CACHE/debs"
# Make check's builds ask at the same time: one extracts, the others wait.
exec 8> "$CACHE/linux-source.lock"
flock 8
if [ "$(cat "$out/.extracted" 2>/dev/null)" = "$FORMAT" ]; then
	echo "$out"
	exit 0
fi
deb() { find "$CACHE/debs" -maxdepth 1 -name "${PKG}_*.deb" | sort -V | tail -n 1; }
if [ -z "$(deb)" ]; then
	echo "  [source] downloading $PKG (about 140 MB, once)" >&2
	# A failed download shows as no package below.
	(cd "$CACHE/debs" && apt-get download -q "$PKG" 2>&1) |
		{ grep -v -e '^Get:' -e 'unsandboxed' >&2 || :; }
fi
deb=$(deb)
[ -n "$deb" ] || { echo "download of $PKG failed" >&2; exit 1; }
echo "  [source] extracting tools/ and checkpatch from $(basename "$deb")" >&2
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
dpkg-deb --fsys-tarfile "$deb" |
	tar -xO --wildcards './usr/src/linux-source-*.tar.xz' |
	tar -xJ -C "$out.tmp" --strip-components=1 --wildcards \
		'*/tools/*' \
		'*/scripts/subarch.include' \
		'*/scripts/checkpatch.pl' \
		'*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
echo "$FORMAT" > "$out.tmp/.extracted"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$out"
