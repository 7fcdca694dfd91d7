#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Lanes of make check fetch at the same time: the two arm64 lanes both ask
# tests/vm/fetch-kernels.sh for 6.12-arm64, and tests/vm/fetch-arm64-closure.sh
# goes through its private apt configuration too, as does fetch-qemu.sh
# (bookworm-backports), which every arm64 boot calls.  Each call must succeed
# whatever another one is doing with that configuration (its sources list,
# its lists).  Rounds of two concurrent calls on each private
# configuration; with the lists fresh, each call takes a fraction of a
# second.
#
# usage: tests/vm/fetch_concurrency_test.sh
# Prints TAP, then "N passed, N failed".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/ks-fetch.XXXXXX")
trap 'rm -rf "$T"' EXIT
# ok, tap_finish
. "$here/../lib/host-tap.sh"
ROUNDS=${ROUNDS:-6}

for series in 6.12-arm64 5.10 bookworm-backports; do
	# Once alone: the lists may need a refresh (a cold cache).
	"$here/fetch-kernels.sh" apt "$series" true 2> "$T/first.err"
	bad=0
	for r in $(seq 1 "$ROUNDS"); do
		"$here/fetch-kernels.sh" apt "$series" true 2> "$T/a.$r" &
		a=$!
		"$here/fetch-kernels.sh" apt "$series" true 2> "$T/b.$r" &
		b=$!
		wait "$a" || { bad=$((bad + 1)); cp "$T/a.$r" "$T/bad"; }
		wait "$b" || { bad=$((bad + 1)); cp "$T/b.$r" "$T/bad"; }
	done
	[ "$bad" = 0 ]
	ok $? "$series: $((2 * ROUNDS)) calls in concurrent pairs on one apt configuration all succeed" \
		"$bad failed; the last one's error:" "$(tail -n 5 "$T/bad" 2>/dev/null)"
done
tap_finish
