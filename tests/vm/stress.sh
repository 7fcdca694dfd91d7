#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make stress`: the race, hostile-input and scale selftests with bigger
# numbers, on every test kernel, one after the other.  make check runs the
# same programs at scale 1.
#
#   STRESS_SCALE=N   how much longer and bigger (default 10: ~6 min a kernel)
#
# At scale 10 scale_test holds 1,100 VMs live at once (~340 KiB each under
# TCG) and one VM of KVM_CAP_MAX_VCPUS vCPUs (4096 on 6.12 and 7.x: ~220
# KiB each once run, 0.9 GiB), hence 3 GiB guests by default (GUEST_MEM;
# the debug kernel's KASAN and kmemleak need more: 4 GiB).  A bigger
# STRESS_SCALE needs more: 110 x N VMs.
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
	slow=1 mem=${GUEST_MEM:-3072}
	[ "$series" = 6.12-debug ] && slow=4 mem=${GUEST_MEM:-4096}
	step "[$series] stress at scale $S"
	build_modules_for "$rel" "$root"
	out="$BUILD/stress/$rel"
	rm -rf "$out"
	mkdir -p "$out/tests"
	cp "$BUILD/selftests/stress_test" "$BUILD/selftests/hostile_input_test" \
		"$BUILD/selftests/scale_test" "$out/tests/"
	"$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$out/initrd.img" \
		--module "$BUILD/$rel/module/kvm_statsfd.ko" --tests "$out/tests"
	# The kernel hands unknown NAME=value words to init's environment.
	# shellcheck disable=SC2046 # the command line is a list of words
	GUEST_TIMEOUT=$(((40 * S + 120) * slow)) GUEST_MEM=$mem \
		"$TOP/tests/vm/run-guest.sh" \
		"$root/boot/vmlinuz-$rel" "$out/initrd.img" "$out/run" test \
		$(guest_cmdline "$rel" "$root") KS_STRESS_SCALE="$S"
	"$TOP/tests/vm/judge.sh" "$out/run" "[$series stress]" || rc=1
done <<< "$kernels"
exit "$rc"
