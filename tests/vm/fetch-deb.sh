#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# fetch-deb.sh PACKAGE [SIZE]: the newest .deb of PACKAGE in $CACHE/debs,
# downloaded once from this host's apt sources; prints its path.  SIZE
# ("about 150 MB") goes into the note printed when it downloads.  Its
# users: the kernel sources (tests/vm/fetch-linux-source.sh, the debug
# kernel's tests/vm/debug-kernel/build.sh).
set -euo pipefail

CACHE=${CACHE:-$(cd "$(dirname "$0")/../.." && pwd)/.cache}
pkg=$1
newest() {
	find "$CACHE/debs" -maxdepth 1 -name "${pkg}_*.deb" | sort -V | tail -n 1
}

mkdir -p "$CACHE/debs"
# Two callers asking at once: one downloads, the other waits for it.
exec 6> "$CACHE/debs/.$pkg.lock"
flock 6
if [ -z "$(newest)" ]; then
	echo "  [$pkg] downloading${2:+ ($2, once)}" >&2
	# A failed download shows as no package below.
	(cd "$CACHE/debs" && apt-get download -q "$pkg" 2>&1) |
		{ grep -v -e '^Get:' -e 'unsandboxed' >&2 || :; }
fi
deb=$(newest)
[ -n "$deb" ] || { echo "download of $pkg failed" >&2; exit 1; }
echo "$deb"
