#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one test guest under QEMU TCG with nested AMD SVM and a hard timeout.
#
# usage: run-guest.sh VMLINUZ INITRD OUTDIR MODE [EXTRA_CMDLINE...]
# Writes OUTDIR/console.log (ttyS0: kernel console), OUTDIR/results.log
# (ttyS1: what the guest's init reports) and OUTDIR/nonce.
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
[ "${GUEST_ICOUNT:-0}" = 1 ] && icount=(-icount shift=0,sleep=off,align=off)

rc=0
timeout --foreground -k 5 "$TIMEOUT" \
	qemu-system-x86_64 \
	-machine q35 -accel tcg,thread=single -cpu "$CPU" -smp "$SMP" -m "$MEM" \
	"${icount[@]}" \
	-nographic -no-reboot -nodefaults \
	-fw_cfg name=etc/sercon-port,string=0 \
	-serial "file:$outdir/console.log" \
	-serial "file:$outdir/results.log" \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 oops=panic panic_on_warn=1 quiet loglevel=4 ks.nonce=$nonce ks.mode=$mode $*" \
	</dev/null >"$outdir/qemu.log" 2>&1 || rc=$?
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	echo "@@ host: guest timed out after ${TIMEOUT}s" >> "$outdir/qemu.log"
fi
exit 0
