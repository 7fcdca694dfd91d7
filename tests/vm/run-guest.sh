#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one test guest under QEMU TCG with nested AMD SVM and a hard timeout;
# an arm64 kernel (a VMLINUZ whose name holds "-arm64") under
# qemu-system-aarch64, at EL2 with VHE, so that its KVM runs nested VMs.
#
# usage: run-guest.sh VMLINUZ INITRD OUTDIR MODE [EXTRA_CMDLINE...]
# Writes OUTDIR/console.log (the kernel console: ttyS0, arm64's ttyAMA0),
# OUTDIR/results.log (what the guest's init reports: ttyS1; on arm64,
# whose virt machine has one UART, a virtio console, hvc0) and
# OUTDIR/nonce.
#
# Single-threaded TCG: multi-threaded TCG with several CPUs was seen to lose
# an IPI while a VM was being destroyed (see the harness notes).
set -euo pipefail

kernel=$1 initrd=$2 outdir=$3 mode=$4
shift 4
TIMEOUT=${GUEST_TIMEOUT:-300}
SMP=${GUEST_SMP:-2}
MEM=${GUEST_MEM:-1024}
# PREEMPT_RT kernels refuse kvm_amd without an invariant TSC, which TCG
# does not advertise by itself.
case "$kernel" in
*-rt-amd64*) CPU=${GUEST_CPU:-max,+invtsc,x-force-features=on} ;;
*) CPU=${GUEST_CPU:-max} ;;
esac

mkdir -p "$outdir"
nonce=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
echo "$nonce" > "$outdir/nonce"
: > "$outdir/results.log"

# GUEST_ICOUNT=1: the guest runs one instruction per virtual nanosecond and
# its TSC ticks once per instruction, so that make bench counts instructions.
# (A nested VM makes no progress that way: benchmarks there never run one.)
icount=()
# shellcheck disable=SC2054 # the commas are QEMU's, inside options
[ "${GUEST_ICOUNT:-0}" = 1 ] && icount=(-icount shift=0,sleep=off,align=off)

# arm64: -M virt,virtualization=on starts the guest at EL2, where Debian's
# kernels run KVM in VHE mode; pauth-impdef=on (QEMU's cheap pointer
# authentication instead of QARMA5) halves the boot: 2.4 s to init, not
# 4.3-6.3 s (../shared/notes/arm64.md).  The report goes to a virtio
# console on PCI (virtio_console and virtio_pci are built in; virtio_mmio
# is a module).  The emulator is bookworm-backports' QEMU 10.0
# (fetch-qemu.sh): under bookworm's 7.2 a nested vCPU now and then never
# left the guest.
append="panic=-1 oops=panic panic_on_warn=1 quiet loglevel=4 ks.nonce=$nonce ks.mode=$mode"
# shellcheck disable=SC2054 # the commas are QEMU's, inside options
case "$kernel" in
*-arm64*)
	qroot=$("$(dirname "$0")/fetch-qemu.sh")
	qemu=("$qroot/usr/bin/qemu-system-aarch64" -L "$qroot/usr/share/qemu"
		-M virt,virtualization=on,gic-version=3 -accel tcg,thread=single
		-cpu "${GUEST_CPU:-max,pauth-impdef=on}" -smp "$SMP" -m "$MEM"
		-nographic -no-reboot -nodefaults
		-serial "file:$outdir/console.log"
		-device virtio-serial-pci
		-chardev "file,id=report,path=$outdir/results.log"
		-device virtconsole,chardev=report
		-append "console=ttyAMA0 $append ks.report=hvc0 $*")
	;;
*)
	qemu=(qemu-system-x86_64
		-machine q35 -accel tcg,thread=single -cpu "$CPU" -smp "$SMP" -m "$MEM"
		"${icount[@]}"
		-nographic -no-reboot -nodefaults
		-fw_cfg name=etc/sercon-port,string=0
		-serial "file:$outdir/console.log"
		-serial "file:$outdir/results.log"
		-append "console=ttyS0 $append $*")
	;;
esac

rc=0
timeout --foreground -k 5 "$TIMEOUT" "${qemu[@]}" \
	-kernel "$kernel" -initrd "$initrd" \
	</dev/null >"$outdir/qemu.log" 2>&1 || rc=$?
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	echo "@@ host: guest timed out after ${TIMEOUT}s" >> "$outdir/qemu.log"
fi
exit 0
