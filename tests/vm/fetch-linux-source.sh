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

# extracted: exit, printing the tree, if it is extracted as FORMAT says.
extracted() {
	[ "$(cat "$out/.extracted" 2>/dev/null)" = "$FORMAT" ] || return 0
	echo "$out"
	exit 0
}

extracted
mkdir -p "$CACHE"
# Make check's builds ask at the same time: one extracts, the others wait.
exec 8> "$CACHE/linux-source.lock"
flock 8
extracted
deb=$("$(dirname "$0")/fetch-deb.sh" "$PKG" "about 140 MB")
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
