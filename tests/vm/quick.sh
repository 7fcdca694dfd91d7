#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Developer shortcut: build, boot one test kernel and run the selftests in
# it, without lint, unit tests or the rig self-test.
#
# usage: tests/vm/quick.sh [SERIES] [TEST...]
#   SERIES  6.1 (default), 6.12, 6.1-rt, 5.10, newest (tests/vm/lanes) or
#           6.12-debug (the debug kernel: tests/vm/debug-kernel/, built
#           once and cached, with its lane's guest timeout and memory)
#   TEST    selftest program names, kvm_statsfd_tool_test or
#           upstream_stats_test, to run
#           (default: every guest test, as make check runs them)
# Output and logs go to $BUILD/quick/<release>/ (BUILD defaults to build/).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

want=${1:-6.1}
shift || true
if [ "$want" = 6.12-debug ]; then
	k=$("$TOP/tests/vm/debug-kernel/build.sh")
	debug_guest_limits
else
	k=$(SERIES="$want" test_kernels | awk -v s="$want" '$1 == s')
fi
[ -n "$k" ] || { echo "no test kernel of series $want" >&2; exit 2; }
read -r series rel root <<< "$k"

build_userspace
build_modules_for "$rel" "$root"
build_fault_module "$series" "$rel" "$root"
out="$BUILD/quick/$rel"
rm -rf "$out"
mkdir -p "$out/tests"
if [ $# -gt 0 ]; then
	for t in "$@"; do
		# A selftest, the command's test (which needs demo-vm) or
		# upstream's (tests/upstream).
		for d in selftests tests-tools/tests tests-upstream/tests; do
			[ -e "$BUILD/$d/$t" ] && break
		done
		[ -e "$BUILD/$d/$t" ] ||
			{ echo "no guest test program $t" >&2; exit 2; }
		cp "$BUILD/$d/$t" "$out/tests/"
	done
	payload="--tests $out/tests --bin $BUILD/tools/kvm-statsfd"
	payload+=" --bin $BUILD/tests-tools/bin/demo-vm"
	payload+=" --bin $BUILD/tests-upstream/bin/kvm_binary_stats_test"
else
	payload=$(guest_test_payload "$series")
fi
# shellcheck disable=SC2046,SC2086 # the payload is a list of options
"$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$out/initrd.img" \
	--module "$BUILD/$rel/module/kvm_statsfd.ko" $(rig_modules_of "$rel") \
	$payload
step "[$series] booting $rel"
# shellcheck disable=SC2046 # the command line is a list of words
"$TOP/tests/vm/run-guest.sh" "$root/boot/vmlinuz-$rel" "$out/initrd.img" \
	"$out/run" test $(guest_cmdline "$rel" "$root")
# The manifest applies only to a full suite.
if [ $# -gt 0 ]; then
	"$TOP/tests/vm/judge.sh" "$out/run" "[$series]"
else
	"$TOP/tests/vm/judge.sh" "$out/run" "[$series]" "$series"
fi
