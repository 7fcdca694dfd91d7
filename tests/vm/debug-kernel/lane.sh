#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The "6.12-debug" lane of make check: the debug kernel (build.sh, cached),
# our module built against it with W=1, one boot running every guest test,
# and the detector self-test: a boot where rig_detect commits one bug per
# detector, then calls BUG().  Each of those runs must be judged
# a failure, with the judge naming the detector that fired.
#
# usage: lane.sh OUTDIR
# Prints TAP lines on stdout and writes "PASSED FAILED SKIPPED" to
# OUTDIR/counts; exits 0 only if nothing failed.  Steps go to stderr.
#
# Under TCG the debug kernel is several times slower than Debian's
# (KASAN, lockdep, kmemleak), hence its own guest timeout and memory.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

out=$1
SERIES=6.12-debug
debug_guest_limits
lane_start "$out" "[$SERIES]"

step "[$SERIES] building the debug kernel (cached after the first time)"
if ! k=$("$TOP/tests/vm/debug-kernel/build.sh"); then
	lane_tap 0 "debug kernel build"
	lane_finish
fi
read -r _ rel root <<< "$k"
vmlinuz="$root/boot/vmlinuz-$rel"

step "[$SERIES] building kvm_statsfd.ko and the rig's modules (W=1) for $rel"
mirror_tree "$TOP" "$BUILD/$rel/module" Kbuild src include
if ! build_module "$rel" "$root" "$BUILD/$rel/module" W=1 ||
	! build_rig_modules "$rel" "$root" "$BUILD/$rel/rig" detector_module \
		livepatch_standin filler_module; then
	lane_tap 0 "module builds against $rel"
	lane_finish
fi
# W=1 warnings about our module count, as in make lint.
if grep -hE '(warning|error):' "$BUILD/$rel/module/build.log" \
	"$BUILD/$rel/rig/build.log" >&2; then
	lane_tap 0 "module builds against $rel with W=1 and no warning"
else
	lane_tap 1 "module builds against $rel with W=1 and no warning"
fi

# shellcheck disable=SC2046 # guest_test_payload is a list of options
if ! "$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$out/initrd.img" \
	--module "$BUILD/$rel/module/kvm_statsfd.ko" \
	$(rig_modules_of "$rel") \
	$(guest_test_payload 6.12-debug) ||
	! "$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$out/initrd-detect.img" \
	--module "$BUILD/$rel/rig/detector_module/rig_detect.ko"; then
	lane_tap 0 "initramfs for $rel"
	lane_finish
fi

step "[$SERIES] booting $rel: selftests (slow: KASAN and lockdep under TCG)"
cmdline=$(guest_cmdline "$rel" "$root")
t0=$(date +%s)
# shellcheck disable=SC2086 # the command line is a list of words
"$TOP/tests/vm/run-guest.sh" "$vmlinuz" "$out/initrd.img" "$out/tests" test \
	$cmdline
echo "$(( $(date +%s) - t0 ))" > "$out/tests/seconds"
step "[$SERIES] rig self-test: each detector must fail the run"
# Without panic_on_warn, so that every fault gets its turn and the guest
# still reports its kernel log and kmemleak's findings.  With the kernel's
# own KFENCE interval (100 ms): at guest_cmdline's 10 ms the pool was
# full of long-lived objects by the time the module asked for one.
# Their initramfs holds rig_detect.ko and nothing to test: under KASAN
# and TCG, unpacking the tests' took seconds of each boot.
# The BUG() that ends it is a segment of that boot (init.sh): a boot of
# its own cost about 30 s to init.
"$TOP/tests/vm/run-guest.sh" "$vmlinuz" "$out/initrd-detect.img" "$out/detect" \
	detect panic_on_warn=0
if ! "$TOP/tests/vm/split-segments.sh" "$out/detect" \
	detect-bug="$out/detect-bug" 2> "$out/split.err"; then
	lane_tap 0 "the detector boot's two runs cut apart (split-segments.sh)"
	sed 's/^/#   /' "$out/split.err"
fi
step "[$SERIES] guest runs finished"

# The manifest's programs, case counts and expected skips hold here too.
"$TOP/tests/vm/judge.sh" "$out/tests" "[$SERIES]" "$SERIES"
lane_judged "$out/tests/counts"
# selftest RUN DETECTOR...: the run must be judged a failure, and the judge
# must have named every one of these detectors.
selftest() {
	local run=$1 d
	shift
	if "$TOP/tests/vm/judge.sh" "$out/$run" "[$SERIES]" > "$out/$run/judge.tap"; then
		lane_tap 0 "rig self-test: $run run was judged a pass"
		return
	fi
	lane_tap 1 "rig self-test: $run run judged a failure"
	for d in "$@"; do
		if grep -qx "# detector fired: $d" "$out/$run/judge.tap"; then
			lane_tap 1 "rig self-test: $run: the judge names the $d report"
		else
			lane_tap 0 "rig self-test: $run: no $d report recognised"
			sed 's/^/#   /' "$out/$run/judge.tap" | tail -n 30
		fi
	done
}
selftest detect KASAN KFENCE lockdep kmemleak sleep-in-atomic UBSAN
# kmemleak's list must hold rig_detect's own objects (their hex dump
# starts with its marker), not only some other leak.  A stray copy of an
# address can hide one of the eight; all eight hidden fails.
n=$(tr -d '\r' < "$out/detect/results.log" | grep -c '  rig_detect delib$')
lane_tap "$((n > 0))" "rig self-test: kmemleak lists $n of rig_detect's 8 leaked objects"
selftest detect-bug BUG
lane_finish
