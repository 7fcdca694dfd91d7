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
rc=0
while read -r series rel root; do
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
	GUEST_TIMEOUT=$((25 * S + 120)) "$TOP/tests/vm/run-guest.sh" \
		"$root/boot/vmlinuz-$rel" "$out/initrd.gz" "$out/run" test \
		$(guest_cmdline "$rel" "$root") KS_STRESS_SCALE="$S"
	"$TOP/tests/vm/judge.sh" "$out/run" "[$series stress]" || rc=1
done < <(test_kernels)
exit "$rc"
