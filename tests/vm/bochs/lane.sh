#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The Intel VMX lane of make check: Debian 6.12 booted under Bochs with VMX
# (tests/vm/run-guest-bochs.sh), kvm_intel and our module loaded, every
# guest test in one boot, judged like the QEMU lanes (same init, TAP, nonce,
# manifest and judge); then, in the same boot, the rig's self-test on this
# emulator: a guest that WARNs must be judged a failure, without
# panic_on_warn and with it (set by init, after the boot's own WARNs; the
# log is judged from init's marker on).
#
# usage: lane.sh OUTDIR
# Prints TAP lines on stdout and writes "PASSED FAILED SKIPPED" to
# OUTDIR/counts; exits 0 only if nothing failed.  Steps go to stderr.
# Needs the guests' programs built (build_userspace; check.sh does it).
# Under make check the module is make check's own build for this kernel
# (lib.sh check_module_of); alone, the lane builds it in a directory of its
# own, so that it never races a QEMU lane's build of the same kernel.
#
# Bochs is slow: ~50 s to init, ~20 s per kvm.ko load; one instance at a
# time, niced (BOCHS_NICE).  VMX_GATE_ONLY=1 (for developers) boots only
# the exit-cost gate, ~3 minutes: no other test, no rig self-test, no
# manifest.
set -uo pipefail
. "$(dirname "$0")/../lib.sh"

out=$1
SERIES=${VMX_SERIES:-6.12}
GATE_ONLY=${VMX_GATE_ONLY:-0}
LABEL="[$SERIES-vmx]"
lane_start "$out" "$LABEL"

k=$(SERIES="$SERIES" test_kernels | awk -v s="$SERIES" '$1 == s')
if [ -z "$k" ]; then
	lane_tap 0 "kernel of series $SERIES"
	lane_finish
fi
read -r _ rel root <<< "$k"
vmlinuz="$root/boot/vmlinuz-$rel"
rig="$BUILD/vmx/$rel/rig"
warn="$rig/warn_module" filler="$rig/filler_module"

mod=$(lane_module "$LABEL" "$rel" "$root" "$BUILD/vmx/$rel/module") ||
	{ lane_tap 0 "module builds against $rel"; lane_finish; }
# make check's build of the rig's modules for this kernel, beside its
# module, when there is one; alone, the lane builds its own.
if [ "$mod" = "$BUILD/$rel/module" ] &&
	[ -f "$BUILD/$rel/rig/warn_module/rig_warn.ko" ] &&
	[ -f "$BUILD/$rel/rig/filler_module/rig_filler.ko" ]; then
	rig="$BUILD/$rel/rig"
	warn="$rig/warn_module" filler="$rig/filler_module"
	step "$LABEL rig_warn.ko, rig_filler.ko: make check's, in $rig"
else
	step "$LABEL building rig_warn.ko and rig_filler.ko for $rel"
	if ! build_rig_modules "$rel" "$root" "$rig" warn_module filler_module; then
		lane_tap 0 "module builds against $rel"
		lane_finish
	fi
fi
# The exit-cost gate (tests/vm/exit-cost/lane.sh), with VMX's budgets:
# Bochs counts instructions exactly too.  Its probe driver and programs
# are the exit-cost lane's build under make check (exit_cost_builds).
if ! ec=$(exit_cost_builds "$LABEL" "$rel" "$root" "$BUILD/vmx/$rel/exit-cost"); then
	lane_tap 0 "exit-cost gate builds"
	lane_finish
fi
drv="$ec/probe-driver" gate="$BUILD/vmx/$rel/gate"
rm -rf "$gate"
mkdir -p "$gate/gate-vmx/etc/kvm-statsfd"
cp "$TOP/tests/bench/exit-cost-budget-vmx" \
	"$gate/gate-vmx/etc/kvm-statsfd/exit-cost-budget"
# On the host, from the binaries (tests/bench/dispatch-count): the driver
# dispatches kvm_exit and kvm_entry in as many instructions as this
# kernel's kvm-intel.ko and kvm-amd.ko, and the exit path has no fence or
# atomic read-modify-write (details in OUTDIR/dispatch-count.txt).
while IFS= read -r line; do
	case $line in
	"ok - "*) lane_tap 1 "${line#ok - }" ;;
	"not ok - "*) lane_tap 0 "${line#not ok - }" ;;
	*) echo "$line" >> "$out/dispatch-count.txt" ;;
	esac
done < <("$TOP/tests/bench/dispatch-count" --gate \
	"$root/lib/modules/$rel/kernel/arch/x86/kvm" "$mod/kvm_statsfd.ko" \
	"$drv/ks_probe_driver.ko" 2>&1 || echo "not ok - dispatch-count --gate failed")

# The tests are those tests/vm/manifest runs on "6.12-vmx": what the
# vendor changes.  The WARN module is for the rig's self-test, which
# follows them in the same boot (init.sh, ks.then=warn): a boot of its
# own would cost about 50 s of Bochs.
payload=()
[ "$GATE_ONLY" = 1 ] || read -ra payload <<< "$(guest_test_payload "$SERIES-vmx" | tr '\n' ' ')"
if ! "$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$out/initrd.img" \
	--module "$mod/kvm_statsfd.ko" --module "$drv/ks_probe_driver.ko" \
	--module "$filler/rig_filler.ko" --module "$warn/rig_warn.ko" \
	"${payload[@]}" --tree "$ec/bench/gate" --tree "$gate/gate-vmx"; then
	lane_tap 0 "initramfs for $rel"
	lane_finish
fi

# boot INITRD MODE OUTDIR -> run-guest-bochs.sh VMLINUZ INITRD OUTDIR MODE
boot() {
	local initrd=$1 mode=$2 dir=$3 t
	shift 3
	t=$(date +%s)
	step "$LABEL booting $rel under Bochs: $mode"
	"$TOP/tests/vm/run-guest-bochs.sh" "$vmlinuz" "$initrd" "$dir" "$mode" "$@"
	echo "$(($(date +%s) - t))" > "$dir/seconds"
	step "$LABEL $mode run finished in $(cat "$dir/seconds") s"
}
then_warn=ks.then=warn
[ "$GATE_ONLY" = 1 ] && then_warn=
# shellcheck disable=SC2046 # the command line is a list of words
boot "$out/initrd.img" test "$out/tests" $(guest_cmdline "$rel" "$root") $then_warn
# The clock the gate's probes used: the TSC, as on hosts (run-guest-bochs.sh
# says why Bochs's TSC qualifies).
tsc_clock() {
	if grep -aq "kvm_statsfd: clock: tsc" "$out/tests/results.txt"; then
		lane_tap 1 "the module counted with its TSC clock"
	else
		lane_tap 0 "the module counted with its TSC clock (its kernel log: $out/tests/results.txt)"
	fi
}
if [ "$GATE_ONLY" = 1 ]; then
	"$TOP/tests/vm/judge.sh" "$out/tests" "$LABEL"
	lane_judged "$out/tests/counts"
	tsc_clock
	lane_finish
fi
# A segment that is not cut apart must fail the lane: the WARN self-test
# below expects failed runs, and a missing one would pass it.
if ! "$TOP/tests/vm/split-segments.sh" "$out/tests" \
	warn-nopanic="$out/warn-nopanic" warn="$out/warn" 2> "$out/split.err"; then
	lane_tap 0 "the boot's test and WARN runs cut apart (split-segments.sh)"
	sed 's/^/#   /' "$out/split.err"
fi
"$TOP/tests/vm/judge.sh" "$out/tests" "$LABEL" "$SERIES-vmx"
lane_judged "$out/tests/counts"
tsc_clock
if grep -q '^@@ begin kvm_statsfd_exporter_test' "$out/tests/results.txt"; then
	if "$TOP/tests/exporter/promtool-guest.sh" "$out/tests/results.txt" \
		> "$out/promtool.log" 2>&1; then
		lane_tap 1 "exporter: guest /metrics passes promtool"
	else
		lane_tap 0 "exporter: guest /metrics passes promtool"
		sed 's/^/#   /' "$out/promtool.log" | tail -n 20
	fi
fi

# The rig's self-test: both WARN runs are failures, and for that reason.
for w in warn warn-nopanic; do
	if "$TOP/tests/vm/judge.sh" "$out/$w" "$LABEL" > "$out/$w/judge.tap"; then
		lane_tap 0 "rig self-test: $w run was judged a pass"
	elif grep -q 'rig_warn' "$out/$w/judge.tap" "$out/$w/console.txt"; then
		lane_tap 1 "rig self-test: $w run judged a failure"
	else
		lane_tap 0 "rig self-test: $w run failed for another reason"
		sed 's/^/#   /' "$out/$w/judge.tap"
	fi
done
lane_finish
