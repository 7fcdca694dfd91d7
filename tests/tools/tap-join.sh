#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Runs several TAP test scripts as one suite: their cases renumbered in
# order, one plan, and one last line "N passed, N failed[, N skipped]",
# the form tests/vm/check.sh reads.  A script that ends without its own
# summary line counts as one failed case.
#
#   tap-join.sh "CMD ARGS" "CMD ARGS"...
set -u
out=$(mktemp /tmp/ks-tap-join.XXXXXX)
trap 'rm -f "$out"' EXIT
# n, pass, fail, skipped and tap_finish
. "$(dirname "$0")/../lib/host-tap.sh"
for cmd in "$@"; do
	# shellcheck disable=SC2086
	sh -c "$cmd" > "$out" 2>&1
	sum=$(tail -n 1 "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed\(, \([0-9]*\) skipped\)\?$/\1 \2 \4/p')
	while IFS= read -r l; do
		case $l in
		"ok "* | "not ok "*)
			n=$((n + 1))
			echo "$l" | sed "s/^\(not \)\?ok [0-9]*/\1ok $n/" ;;
		1..* | *" passed, "*" failed"*) ;;
		*) echo "$l" ;;
		esac
	done < "$out"
	if [ -z "$sum" ]; then
		n=$((n + 1)) fail=$((fail + 1))
		echo "not ok $n - $cmd reported no summary"
		continue
	fi
	read -r p f s <<EOS
$sum
EOS
	pass=$((pass + p)) fail=$((fail + f)) skipped=$((skipped + ${s:-0}))
done
tap_finish
