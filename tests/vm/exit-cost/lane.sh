#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The "exit-cost" lane of make check: the exit path's instructions per VM
# exit, counted exactly and held to tests/bench/exit-cost-budget.
#
# Debian's 6.12 boots under QEMU's -icount shift=0 (the guest TSC then
# advances once per guest instruction) with an invariant TSC, as hosts
# have, so that the module takes its TSC clock; the test-only probe driver
# (tests/bench/probe_driver) dispatches kvm_exit and kvm_entry as KVM does
# on a loaded vCPU, and probe_cost --budget (tests/bench/exit-cost-gate)
# prints one TAP case per stats= configuration and exit path (plain, I/O,
# MSR, HLT; the per-CPU vCPU cache hit and missed).  Before the boot, on
# the host: the driver's dispatch counts as many instructions as the
# shipped kvm-amd.ko's and kvm-intel.ko's, and the exit path has no fence
# or atomic (tests/bench/dispatch-count).  A nested VM makes no
# progress under -icount, and none is run: the count is the module's work
# per exit, not a timing.
#
# usage: lane.sh OUTDIR
# Prints TAP lines on stdout and writes "PASSED FAILED SKIPPED" to
# OUTDIR/counts; exits 0 only if nothing failed.  Steps go to stderr.
# Needs the guests' programs built (build_userspace; check.sh does it).
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

out=$1
LABEL="[exit-cost]"

# exit_path_binaries MODULE_KO DRIVER_KO: tests/bench/dispatch-count --gate
# against the vendor modules of $root, one lane case per line it judges.
exit_path_binaries() {
	local line kvm="$root/lib/modules/$rel/kernel/arch/x86/kvm"
	while IFS= read -r line; do
		case $line in
		"ok - "*) lane_tap 1 "${line#ok - }" ;;
		"not ok - "*) lane_tap 0 "${line#not ok - }" ;;
		*) echo "$line" >> "$out/dispatch-count.txt" ;;
		esac
	done < <("$TOP/tests/bench/dispatch-count" --gate "$kvm" "$1" "$2" 2>&1 ||
		echo "not ok - dispatch-count --gate failed")
}
lane_start "$out" "$LABEL"

k=$(SERIES=6.12 test_kernels | awk '$1 == "6.12"')
read -r _ rel root <<< "$k"
if [ -z "$rel" ]; then
	lane_tap 0 "kernel 6.12 fetched"
	lane_finish
fi

# The module: make check's build for this kernel (lib.sh lane_module);
# alone, a build in a directory of our own (a 6.12 lane may be building
# BUILD/REL/module meanwhile).
# The probe driver and probe_cost: one build for both exit-cost lanes
# under make check (lib.sh exit_cost_builds).
mod=$(lane_module "$LABEL" "$rel" "$root" "$BUILD/exit-cost/$rel/module") &&
	ec=$(exit_cost_builds "$LABEL" "$rel" "$root" "$BUILD/exit-cost/$rel/gate") ||
	{ lane_tap 0 "module, probe driver and probe_cost build for $rel"; lane_finish; }
drv="$ec/probe-driver"

# On the host, from the binaries: the driver dispatches kvm_exit and
# kvm_entry in as many instructions as the vendor modules of this kernel
# (tests/bench/dispatch-count), and the exit path holds no fence or atomic
# read-modify-write (details in OUTDIR/dispatch-count.txt).
exit_path_binaries "$mod/kvm_statsfd.ko" "$drv/ks_probe_driver.ko"

if ! "$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$out/initrd.img" \
	--module "$mod/kvm_statsfd.ko" --module "$drv/ks_probe_driver.ko" \
	--tree "$ec/bench/gate"; then
	lane_tap 0 "initramfs for $rel"
	lane_finish
fi

step "$LABEL booting $rel under -icount: instructions per exit"
# shellcheck disable=SC2046 # the command line is a list of words
GUEST_ICOUNT=1 GUEST_CPU=max,+invtsc,x-force-features=on GUEST_MEM=2048 \
	"$TOP/tests/vm/run-guest.sh" "$root/boot/vmlinuz-$rel" \
	"$out/initrd.img" "$out/tests" test $(guest_cmdline "$rel" "$root")

# The gate's cases, and the rig's: finished, kernel log clean, no taint.
"$TOP/tests/vm/judge.sh" "$out/tests" "$LABEL"
lane_judged "$out/tests/counts"
# The clock the counted probes used: the TSC, as on a host.
if grep -aq "kvm_statsfd: clock: tsc" "$out/tests/results.txt"; then
	lane_tap 1 "the module counted with its TSC clock"
else
	lane_tap 0 "the module counted with its TSC clock (its kernel log: $out/tests/results.txt)"
fi
lane_finish
