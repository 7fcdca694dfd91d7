#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Extract the few files the project takes from Debian's linux-source-6.1
# package at build time: the kselftest harness headers and checkpatch.pl with
# its data files.  Nothing of it is copied into the repository.  Prints the
# directory that holds the extracted tree.
set -euo pipefail

CACHE=${CACHE:-$(cd "$(dirname "$0")/../.." && pwd)/.cache}
PKG=linux-source-6.1
out="$CACHE/linux-source"

if [ -f "$out/.extracted" ]; then
	echo "$out"
	exit 0
fi
mkdir -p "$CACHE/debs"
if ! ls "$CACHE/debs/${PKG}_"*.deb >/dev/null 2>&1; then
	echo "  [source] downloading $PKG (about 140 MB, once)" >&2
	(cd "$CACHE/debs" && apt-get download -q "$PKG" 2>&1 |
		grep -v -e '^Get:' -e 'unsandboxed' >&2 || true)
fi
deb=$(ls "$CACHE/debs/${PKG}_"*.deb | sort -V | tail -n 1)
echo "  [source] extracting harness headers and checkpatch from $(basename "$deb")" >&2
rm -rf "$out.tmp"
mkdir -p "$out.tmp"
dpkg-deb --fsys-tarfile "$deb" |
	tar -xO --wildcards './usr/src/linux-source-*.tar.xz' |
	tar -xJ -C "$out.tmp" --strip-components=1 --wildcards \
		'*/tools/testing/selftests/kselftest_harness.h' \
		'*/tools/testing/selftests/kselftest.h' \
		'*/scripts/checkpatch.pl' \
		'*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
touch "$out.tmp/.extracted"
rm -rf "$out"
mv "$out.tmp" "$out"
echo "$out"
