#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The arm64 lane of make check: tests/vm/arm64/smoke.sh on Debian's arm64
# 6.12 (the module built W=1 C=1 in the bookworm-arm64 chroot, the
# kernel booted under qemu-system-aarch64 at EL2, a nested VM with known
# work, its stats fds with and without the module), each of its TAP lines
# a lane case.  It must report at least ARM64_SMOKE_CASES cases: a smoke
# test that lost cases fails the lane.
#
# Not yet the x86 lanes' rig (init, nonce, judge, WARN self-test) nor
# their selftests: issue 24's next phase.
#
# usage: lane.sh OUTDIR
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

out=$1
SERIES=6.12-arm64
MIN_CASES=${ARM64_SMOKE_CASES:-99}
lane_start "$out" "[$SERIES]"
"$TOP/tests/vm/arm64/smoke.sh" "$SERIES" > "$out/smoke.tap" 2> "$out/smoke.log"
rc=$?
cases=0
while IFS= read -r line; do
	case "$line" in
	"ok "*) lane_tap 1 "${line#ok * - }"; cases=$((cases + 1)) ;;
	"not ok "*) lane_tap 0 "${line#not ok * - }"; cases=$((cases + 1)) ;;
	"# "*) echo "$line" ;;
	esac
done < "$out/smoke.tap"
[ "$cases" -ge "$MIN_CASES" ] && [ "$rc" = 0 ]
lane_tap $((1 - $?)) "smoke.sh finished, status $rc, $cases cases (at least $MIN_CASES)"
[ "$rc" = 0 ] || tail -n 20 "$out/smoke.log" | sed 's/^/#   /'
lane_finish
