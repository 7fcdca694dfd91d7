#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make stress`: the race and hostile-input selftests with bigger numbers,
# on every test kernel, one after the other.  make check runs the same
# programs at scale 1.
#
#   STRESS_SCALE=N   how much longer and bigger (default 10: ~4 min a kernel)
set -euo pipefail
. "$(dirname "$0")/lib.sh"

S=${STRESS_SCALE:-10}
build_userspace
# The Debian kernels, then the debug kernel (built once, cached: about ten
# minutes the first time; STRESS_DEBUG=0 leaves it out).
kernels=$(test_kernels)
if [ "${STRESS_DEBUG:-1}" != 0 ]; then
	kernels+=$'\n'$("$TOP/tests/vm/debug-kernel/build.sh")
fi
rc=0
while read -r series rel root; do
	# KASAN, lockdep and kmemleak make the debug kernel several times
	# slower under TCG.
	slow=1 mem=${GUEST_MEM:-1024}
	[ "$series" = 6.12-debug ] && slow=4 mem=2048
	step "[$series] stress at scale $S"
	build_modules_for "$rel" "$root"
	out="$BUILD/stress/$rel"
	rm -rf "$out"
	mkdir -p "$out/tests"
	cp "$BUILD/selftests/stress_test" "$BUILD/selftests/hostile_input_test" \
		"$out/tests/"
	"$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$out/initrd.gz" \
		--module "$BUILD/$rel/module/kvm_statsfd.ko" --tests "$out/tests"
	# The kernel hands unknown NAME=value words to init's environment.
	# shellcheck disable=SC2046 # the command line is a list of words
	GUEST_TIMEOUT=$(((25 * S + 120) * slow)) GUEST_MEM=$mem \
		"$TOP/tests/vm/run-guest.sh" \
		"$root/boot/vmlinuz-$rel" "$out/initrd.gz" "$out/run" test \
		$(guest_cmdline "$rel" "$root") KS_STRESS_SCALE="$S"
	"$TOP/tests/vm/judge.sh" "$out/run" "[$series stress]" || rc=1
done <<< "$kernels"
exit "$rc"
