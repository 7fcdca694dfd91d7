#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The arm64 lane of make check: Debian's arm64 kernel booted under
# qemu-system-aarch64 (TCG, at EL2 with VHE: its built-in KVM runs nested
# VMs) with the x86 lanes' rig: tests/vm/init.sh (its report on hvc0),
# the nonce, judge.sh against tests/vm/manifest's block for SERIES, and the
# WARN self-test in the same boot (ks.then=warn, as on the first
# run-guest.sh lane).  The guest runs the selftests that apply to arm64,
# the command's and the exporter's tests with the arm64 demo-vm, upstream's
# kvm_binary_stats_test with and without the module (tests/upstream), and
# the smoke test with its exact counts per exit class (arm64_smoke_test.sh,
# kvm_smoke.c).
#
# A script lane, not a run-guest.sh one, because make check builds x86
# programs and builds the module for its run-guest.sh lanes' kernels:
# this lane builds its module (in the bookworm-arm64 chroot, W=1 C=1) and
# cross-builds its programs itself (lib.sh build_userspace_arm64).
# QEMU's query-stats test (tests/qemu) runs Debian 12's arm64 QEMU in the
# guest: tests/qemu/fetch-qemu-arm64.sh unpacks it and its libraries from
# their packages, cached, and tests/qemu/Makefile bundles them with the
# test's arm64 ks-qmp and the VM's image.  It costs the lane about 35
# CPU-seconds: 33 s in the guest (two QEMU starts, mostly), and 18 MB
# more initramfs to compress (measured 2026-12-07 on a quiet 2-core
# machine: the whole lane, warm, 147 CPU-seconds and 211 s without it,
# 195 and 320 s with it, other programs varying by up to 20 s).
# The exporter's test (tests/exporter) runs with the exporter cross-built
# against Debian 12's arm64 libraries, unpacked from their packages into a
# cached sysroot, and bundled with them and their loader for the guest's
# /bin (tests/vm/arm64/build-exporter.sh); without its Prometheus part
# (tests/vm/manifest), whose scrape promtool checks here.  It costs the
# lane about 12 CPU-seconds: 8 to 12 in the guest, and 6 MB more initramfs
# (measured 2026-12-07 as this lane with only the exporter's test, 26 and
# 24 CPU-seconds, against it with no program, 13 and 13; whole lanes on
# that machine, shared then, varied by 25 CPU-seconds from run to run).
#
# usage: lane.sh OUTDIR [SERIES]        (default 6.12-arm64)
set -uo pipefail
# shellcheck disable=SC1091 # lib.sh, checked on its own
. "$(dirname "$0")/../lib.sh"

out=$1
SERIES=${2:-6.12-arm64}
lane_start "$out" "[$SERIES]"

# tail_log FILE: the end of a log, as TAP comments.
tail_log() { tail -n 20 "$1" | sed 's/^/#   /'; }

if ! read -r _ rel root < <(SERIES=$SERIES "$TOP/tests/vm/fetch-kernels.sh" \
	2> "$out/fetch.log"); then
	lane_tap 0 "kernel of series $SERIES fetched"
	tail_log "$out/fetch.log"
	lane_finish
fi

# The module and the rig's (the WARN module; the livepatch stand-in for
# module_load_test), W=1 and sparse: lint reads only the logs of the
# run-guest.sh lanes' builds, so this lane checks its own for warnings.
step "[$SERIES] building kvm_statsfd.ko and the rig's modules for $rel"
if build_module_once "$rel" "$root" > "$out/build.log" 2>&1 &&
	build_rig_modules "$rel" "$root" "$BUILD/$rel/rig" warn_module \
		livepatch_standin >> "$out/build.log" 2>&1; then
	lane_tap 1 "kvm_statsfd.ko and the rig's modules build for $rel"
else
	lane_tap 0 "kvm_statsfd.ko and the rig's modules build for $rel"
	tail_log "$out/build.log"
	lane_finish
fi
if grep -hE 'warning:|error:' "$BUILD/$rel/module/build.log" \
	"$BUILD/$rel/rig/build.log" > "$out/warnings"; then
	lane_tap 0 "no compiler or sparse warnings ($(wc -l < "$out/warnings") lines)"
	sed 's/^/#   /' "$out/warnings"
else
	lane_tap 1 "no compiler or sparse warnings"
fi

a64="$BUILD/arm64-userspace"
if ! build_userspace_arm64 "$root" "$a64" > "$out/userspace.log" 2>&1; then
	lane_tap 0 "the arm64 guest's programs build"
	tail_log "$out/userspace.log"
	lane_finish
fi

# What the manifest runs on SERIES, as guest_test_payload gives the x86
# lanes theirs: every program built here but those it says are not
# expected (none), and the cases it names.
payload=(--tests "$a64/selftests" --tests "$a64/tests"
	--bin "$a64/bin/demo-vm" --bin "$a64/bin/kvm_smoke"
	--bin "$a64/bin/ks-kvm-cap" --bin "$a64/tools/kvm-statsfd"
	--tests "$a64/upstream/tests"
	--bin "$a64/upstream/bin/kvm_binary_stats_test")
"$TOP/tests/vm/manifest.sh" absent "$SERIES" > "$out/absent"
while read -r p; do
	payload+=(--without "$p")
done < "$out/absent"
if ! grep -qx qemu_query_stats_test "$out/absent"; then
	step "[$SERIES] the arm64 QEMU and the query-stats test"
	if qroot=$("$TOP/tests/qemu/fetch-qemu-arm64.sh" 2> "$out/qemu.log") &&
		make -s -C "$TOP/tests/qemu" O="$a64/qemu" ARCH=arm64 \
			QEMU_SYSROOT="$qroot" \
			CC="${CC_ARM64:-clang --target=aarch64-linux-gnu}" \
			>> "$out/qemu.log" 2>&1; then
		payload+=(--tests "$a64/qemu/tests" --tree "$a64/qemu/root")
	else
		lane_tap 0 "the arm64 QEMU and the query-stats test's programs"
		tail_log "$out/qemu.log"
	fi
fi
if ! grep -qx kvm_statsfd_exporter_test "$out/absent"; then
	step "[$SERIES] the arm64 exporter and its test"
	if xopts=$("$TOP/tests/vm/arm64/build-exporter.sh" "$a64/exporter" \
		2> "$out/exporter.log"); then
		# shellcheck disable=SC2206 # options, of paths without spaces
		payload+=($xopts)
	else
		lane_tap 0 "the arm64 exporter and its test build"
		tail_log "$out/exporter.log"
	fi
fi
"$TOP/tests/vm/manifest.sh" cases "$SERIES" > "$out/cases"
[ ! -s "$out/cases" ] || payload+=(--cases "$out/cases")
# shellcheck disable=SC2046 # the rig's modules are a list of options
if ! "$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$out/initrd.img" \
	--module "$BUILD/$rel/module/kvm_statsfd.ko" $(rig_modules_of "$rel") \
	"${payload[@]}" > "$out/initramfs.log" 2>&1; then
	lane_tap 0 "the initramfs builds"
	tail_log "$out/initramfs.log"
	lane_finish
fi

step "[$SERIES] booting $rel under qemu-system-aarch64"
# A run of its own: split-segments.sh keeps an earlier run's whole report.
rm -rf "$out/tests" "$out/warn" "$out/warn-nopanic"
# shellcheck disable=SC2046 # the command line is a list of words
"$TOP/tests/vm/run-guest.sh" "$root/boot/vmlinuz-$rel" "$out/initrd.img" \
	"$out/tests" test $(guest_cmdline "$rel" "$root") ks.then=warn

# The tests' run, then the rig's self-test: each WARN run judged a failure.
if ! "$TOP/tests/vm/split-segments.sh" "$out/tests" \
	warn-nopanic="$out/warn-nopanic" warn="$out/warn" 2> "$out/split.err"; then
	lane_tap 0 "the boot's three runs cut apart (split-segments.sh)"
	sed 's/^/#   /' "$out/split.err"
fi
"$TOP/tests/vm/judge.sh" "$out/tests" "$LANE_LABEL" "$SERIES"
lane_judged "$out/tests/counts"
# The exporter's scrape in the guest, as Prometheus parses it (promtool on
# this host): the Prometheus part of its test is the x86 lanes'.
if grep -q '^@@ begin kvm_statsfd_exporter_test' "$out/tests/results.txt"; then
	if "$TOP/tests/exporter/promtool-guest.sh" --format-only \
		"$out/tests/results.txt" > "$out/promtool.log" 2>&1; then
		lane_tap 1 "exporter: guest /metrics passes promtool check metrics"
	else
		lane_tap 0 "exporter: guest /metrics passes promtool check metrics"
		tail_log "$out/promtool.log"
	fi
fi
for w in warn warn-nopanic; do
	verdict=$(rig_warn_verdict "$out/$w" "$LANE_LABEL")
	lane_tap $((! $?)) "rig self-test: $w $verdict"
done
lane_finish
