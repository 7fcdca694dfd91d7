#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The "exit-cost-arm64" lane of make check: the exit path's instructions
# per VM exit on arm64, counted exactly and held to
# tests/bench/exit-cost-budget-arm64, as tests/vm/exit-cost/lane.sh does
# on x86.
#
# Debian's arm64 6.12 boots under qemu-system-aarch64 (TCG, EL2 with VHE,
# so KVM is up) with -icount shift=0, one vCPU.  The test-only probe
# driver (tests/bench/probe_driver/ks_probe_driver_arm64.c) dispatches
# kvm_exit, kvm_entry (and kvm_mmio on an MMIO exit) as KVM's run loop
# does on a loaded vCPU, interrupts off, and counts with the PMU's cycle
# counter, which under -icount shift=0 advances once per instruction (the
# driver checks it on 1000 NOPs; the lane fails otherwise).  The gate
# (tests/bench/exit-cost-gate-arm64) prints one TAP case per stats=
# configuration and exit path: irq, mmio, sysreg, hvc, wfx, and the per-CPU
# vCPU cache missed on irq and mmio.
#
# After the boot, on the host, from the binaries
# (tests/bench/dispatch-count-arm64): the driver's tracepoint sites count
# within two instructions of those of the shipped vmlinux (read from the
# kernel image at the addresses the guest printed), and each figure is
# judged against its budget here with the difference added, so that it
# counts vmlinux's dispatch; the module's exit-path probes hold no fence,
# barrier or atomic, and those of the vmlinux functions they call are held
# to the budget file's "fences" line.
#
# usage: lane.sh OUTDIR
# Prints TAP lines on stdout and writes "PASSED FAILED SKIPPED" to
# OUTDIR/counts; exits 0 only if nothing failed.  Steps go to stderr.
# Needs what scripts/install-deps.sh installs for arm64 (qemu-system-arm,
# clang, libc6-dev-arm64-cross, the bookworm-arm64 chroot's tools).
set -uo pipefail
# shellcheck source=../lib.sh
. "$(dirname "$0")/../lib.sh"

out=$1
LABEL="[exit-cost-arm64]"
SERIES=6.12-arm64
CC_ARM64=${CC_ARM64:-clang --target=aarch64-linux-gnu}
lane_start "$out" "$LABEL"

read -r _ rel root < <(SERIES=$SERIES "$TOP/tests/vm/fetch-kernels.sh")
if [ -z "${rel:-}" ]; then
	lane_tap 0 "kernel $SERIES fetched"
	lane_finish
fi

# The module: built as tests/vm/arm64/smoke.sh builds it (W=1 C=1, in the
# bookworm-arm64 chroot), so that the build cache (lib.sh build_module)
# gives both lanes one build and they load the very same kvm_statsfd.ko.
# The driver: linked with KVM's symbols undefined (modpost warns; the
# guest resolves them at load).
mod="$BUILD/exit-cost-arm64/$rel/module"
drv="$BUILD/exit-cost-arm64/$rel/probe-driver"
initrd="$out/initrd"
rm -rf "$mod" "$drv" "$initrd"
mkdir -p "$initrd/bin"
step "$LABEL building kvm_statsfd.ko and the probe driver for $rel"
if ! mirror_tree "$TOP" "$mod" Kbuild src include ||
	! build_module "$rel" "$root" "$mod" W=1 C=1 >&2 ||
	! mirror_tree "$TOP/tests/bench/probe_driver" "$drv" . ||
	! build_module "$rel" "$root" "$drv" W=1 KBUILD_MODPOST_WARN=1 >&2; then
	lane_tap 0 "module and probe driver build for $rel"
	lane_finish
fi
# W=1 clean, but for modpost's warnings of the symbols resolved at load.
if grep -E 'warning:|error:' "$drv/build.log" | sed 's/^/# /' | grep .; then
	lane_tap 0 "probe driver builds without warnings"
else
	lane_tap 1 "probe driver builds without warnings"
fi
# shellcheck disable=SC2086 # CC_ARM64 is a command with arguments
if ! $CC_ARM64 -O2 -Wall -Wextra -Werror -static \
	-o "$initrd/cost_arm64" "$TOP/tests/bench/cost_arm64.c"; then
	lane_tap 0 "cost_arm64 builds"
	lane_finish
fi
cp "$mod/kvm_statsfd.ko" "$drv/ks_probe_driver.ko" \
	"$TOP/tests/bench/exit-cost-gate-arm64" \
	"$TOP/tests/bench/exit-cost-budget-arm64" "$initrd/"
cp "$root/userland/bin/busybox" "$initrd/bin/"
install -m 0755 "$TOP/tests/vm/exit-cost-arm64/init.sh" "$initrd/init"
(cd "$initrd" && find . | cpio -o -H newc --quiet | lz4 -1 -l -q) > "$out/initrd.img"

step "$LABEL booting $rel under -icount: instructions per exit"
rc=0
t0=$(date +%s.%N)
c0=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)
# One vCPU: under -icount every CPU's instructions advance the one
# virtual clock the counter follows.  nokaslr: Debian's arm64 kernels put
# modules anywhere in a random 2 GiB region (RANDOMIZE_MODULE_REGION_FULL),
# and a call from a module to vmlinux more than 128 MiB away goes through
# a PLT veneer, 3 instructions more a call: with KASLR the counts changed
# from boot to boot (2026-11-28: 313 or 301 per exit with every group).
# Without it modules sit within direct branch range of the kernel: the
# count is the same on every boot, the best case of a host; the budget
# file says what the veneers add.
timeout -k 5 "${EXIT_COST_ARM64_TIMEOUT:-600}" qemu-system-aarch64 \
	-M virt,virtualization=on,gic-version=3 -cpu max,pauth-impdef=on \
	-icount shift=0 -smp 1 -m 1024 -nographic -no-reboot -nodefaults \
	-serial stdio -kernel "$root/boot/vmlinuz-$rel" -initrd "$out/initrd.img" \
	-append "console=ttyAMA0 panic=-1 oops=panic loglevel=4 nokaslr" \
	< /dev/null > "$out/console.log" 2>&1 || rc=$?
echo "# guest: $(echo "$(date +%s.%N) - $t0" | bc) s wall," \
	"$(awk -v c0="$c0" -v hz="$(getconf CLK_TCK)" \
		'{ printf "%.1f", ($14 + $15 + $16 + $17 - c0) / hz }' /proc/$$/stat) CPU-s"
tr -d '\r' < "$out/console.log" > "$out/console.txt"
lane_tap $((rc == 0)) "guest ran and powered off (qemu status $rc)"

# The counter: PMCCNTR_EL0 counted each of 1000 NOPs.
cal=$(grep -o 'ks_probe_driver: counter: .*' "$out/console.txt" | head -n 1)
echo "# ${cal:-no calibration line}"
grep -o 'ks_probe_driver: clock: .*' "$out/console.txt" | sed 's/^/# /'

if [[ $cal == *"pmccntr_el0 counted 1000 for 1000 nops"* ]]; then
	lane_tap 1 "the cycle counter advances once per instruction"
else
	lane_tap 0 "the cycle counter advances once per instruction"
fi

# On the host: the binaries' dispatch and fences, held to the budget
# file's "fences MODULE_MAX VMLINUX_MAX" line.
grep '^sym ' "$out/console.txt" > "$out/syms"
budget="$TOP/tests/bench/exit-cost-budget-arm64"
read -r _ fmax vmax < <(grep '^fences[[:space:]]' "$budget")
declare -A delta=()
while IFS= read -r line; do
	case $line in
	"ok - "*) lane_tap 1 "${line#ok - }" ;;
	"not ok - "*) lane_tap 0 "${line#not ok - }" ;;
	"delta "*) read -r _ tp d <<< "$line"; delta[$tp]=$d ;;
	*) echo "$line" >> "$out/dispatch-count.txt" ;;
	esac
done < <(nice -n 10 "$TOP/tests/bench/dispatch-count-arm64" --gate \
	"$root/boot/vmlinuz-$rel" "$out/syms" "$mod/kvm_statsfd.ko" \
	"$drv/ks_probe_driver.ko" "${fmax:-0}" "${vmax:-0}" 2>&1 ||
	echo "not ok - dispatch-count-arm64 --gate failed")

# The guest's cases (its two runs agree), and its counts judged here:
# instructions per exit with vmlinux's dispatch (the driver's, plus the
# difference of the sites), against the budget.
while IFS= read -r line; do
	case $line in
	# init.sh's own cases
	"ok - "*) lane_tap 1 "${line#ok - }" ;;
	"not ok - "*) lane_tap 0 "${line#not ok - }" ;;
	"ok "*) lane_tap 1 "exit-cost-gate-arm64.${line#ok * - }" ;;
	"not ok "*) lane_tap 0 "exit-cost-gate-arm64.${line#not ok * - }" ;;
	"# stats="* | "# kvm_statsfd"*) echo "$line" ;;
	"cost "*)
		# The differences of the sites that run: those of the
		# tracepoints with a probe (mask 1 kvm_exit, 2 kvm_entry,
		# 4 kvm_mmio; kvm_mmio's only on an MMIO exit).
		read -r _ config p ticks n b on <<< "$line"
		d=0
		((on & 1)) && d=$((d + ${delta[kvm_exit]:-0}))
		((on & 2)) && d=$((d + ${delta[kvm_entry]:-0}))
		case $p in
		mmio*) ((on & 4)) && d=$((d + ${delta[kvm_mmio]:-0})) ;;
		esac
		fig=$(awk -v t="$ticks" -v n="$n" -v d="$d" \
			'BEGIN { printf "%.1f", t / n + d }')
		awk -v f="$fig" -v b="$b" 'BEGIN { exit !(f <= b) }'
		lane_tap $((1 - $?)) "exit-cost-gate-arm64.stats=$config $p exit: $fig instructions per exit (budget $b)"
		;;
	esac
done < "$out/console.txt"
plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$out/console.txt" | head -n 1)
got=$(grep -cE '^(not )?ok [0-9]+ - ' "$out/console.txt")
[ -n "$plan" ] && [ "$got" = "$plan" ]
lane_tap $((1 - $?)) "the gate ran all its cases ($got of ${plan:-no plan})"
grep -q '^# guest done$' "$out/console.txt"
lane_tap $((1 - $?)) "guest finished"
lane_finish
