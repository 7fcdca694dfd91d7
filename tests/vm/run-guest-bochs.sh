#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Boot one test guest under Bochs with Intel VMX (kvm_intel runs in it),
# with a hard timeout.  The same interface and output as run-guest.sh:
#
# usage: run-guest-bochs.sh VMLINUZ INITRD OUTDIR MODE [EXTRA_CMDLINE...]
# Writes OUTDIR/console.log (COM1: kernel console and init's markers),
# OUTDIR/results.log (what init reports, sent through I/O port 0xE9 by
# e9cat and taken out of Bochs's output), OUTDIR/nonce, OUTDIR/qemu.log
# (Bochs's own log and host messages), OUTDIR/judge-from-init and
# OUTDIR/timeline (host seconds at which init's markers appeared).
#
# The initramfs must carry kvm_intel (build-initramfs.sh includes both
# vendors); e9cat (tests/vm/bochs/e9cat.c) is added here.  Facts behind
# the choices here: ../shared/notes/bochs-vmx.md.
#  - stock 6.12 WARNs twice at boot on Bochs's CPU model, before init: so
#    panic_on_warn is set by init (ks.panic_on_warn=1) and judge.sh reads
#    the kernel log from init's marker on (OUTDIR/judge-from-init);
#  - a panic does not stop Bochs, and a reboot would boot the ISO again:
#    panic=0 (halt) and this script stops Bochs on "Kernel panic";
#  - power-off makes Bochs "panic" and exit 1: the exit code means nothing.
set -euo pipefail

kernel=$1 initrd=$2 outdir=$3 mode=$4
shift 4
# A hang's backstop, not a budget: on a machine that ran the lanes about
# twice as slowly as usual, the test boot with the other lanes beside it
# took 1789 s (2026-11-26).
TIMEOUT=${GUEST_TIMEOUT_BOCHS:-3600}
MEM=${GUEST_MEM_BOCHS:-1024}
here=$(cd "$(dirname "$0")" && pwd)
CACHE=${CACHE:-$here/../../.cache}

mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
nonce=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
echo "$nonce" > "$outdir/nonce"
echo init > "$outdir/judge-from-init"
: > "$outdir/results.log"
: > "$outdir/console.log"
: > "$outdir/timeline"


# isolinux's files, once per machine.
iso_boot="$CACHE/bochs/isolinux"
if [ ! -f "$iso_boot/ldlinux.c32" ]; then
	mkdir -p "$iso_boot.tmp"
	cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 \
		"$iso_boot.tmp/"
	rm -rf "$iso_boot"
	mv "$iso_boot.tmp" "$iso_boot"
fi

work="$outdir/bochs"
rm -rf "$work"
mkdir -p "$work/iso"
cp "$iso_boot/isolinux.bin" "$iso_boot/ldlinux.c32" "$work/iso/"
cp "$kernel" "$work/iso/vmlinuz"
# e9cat, then the initramfs as given (an initramfs may be several
# concatenated archives).  e9cat's goes first, uncompressed, with its
# directory (nothing makes /bin before it): an LZ4 archive
# (build-initramfs.sh) has no end the kernel could find another archive
# after.
mkdir -p "$work/e9/bin"
gcc -static -O2 -o "$work/e9/bin/e9cat" "$here/bochs/e9cat.c"
{
	(cd "$work/e9" && printf 'bin\nbin/e9cat\n' | cpio -o -H newc --quiet)
	cat "$initrd"
} > "$work/iso/initrd"
# Bochs's TSC advances once per instruction, 60 MHz at ips=60000000, while
# CPUID leaves 0x15/0x16 of its CPU model claim 3.5 GHz: tsc_early_khz
# gives the kernel the real rate (else the guest's busy time runs ~60 times
# slow).  That TSC is invariant (CPUID 0x80000007) and Bochs's one clock,
# so tsc=reliable (no watchdog) is true here: the module takes its TSC
# clock, as on hosts, and the exit-cost gate counts that path.
# clocksource=hpet keeps timekeeping as it was with tsc=unstable before.
# vdso32=0: Bochs's SYSRET leaves SS's attributes as they were (AMD's
# behaviour, for every CPU model), and Linux reloads SS before a SYSRET only
# on AMD (X86_BUG_SYSRET_SS_ATTRS).  When a 32-bit task is switched back in
# after an interrupt from user mode loaded a null SS (B=0), its SYSRETL
# returns with a 16-bit stack and the vDSO's pop after the syscall faults
# at SP & 0xffff (compat_ioctl_test died of SIGSEGV in 2 of 4 runs).
# Without the 32-bit vDSO, 32-bit syscalls are int $0x80, which returns by
# IRET and loads SS from the GDT.  The QEMU lanes keep the vDSO.
cat > "$work/iso/isolinux.cfg" <<CFG
default ks
prompt 0
timeout 0
label ks
  kernel vmlinuz
  append initrd=initrd console=ttyS0 panic=0 oops=panic quiet loglevel=4 mitigations=off clocksource=hpet tsc_early_khz=60000 tsc=reliable vdso32=0 ks.out=e9 ks.panic_on_warn=1 ks.nonce=$nonce ks.mode=$mode $*
CFG
xorriso -as mkisofs -quiet -o "$work/guest.iso" -b isolinux.bin -c boot.cat \
	-no-emul-boot -boot-load-size 4 -boot-info-table "$work/iso" \
	> "$work/xorriso.log" 2>&1
rm -rf "$work/iso"

# Bochs does not expand ${VARS} in its rc file: write it out.  ignore_bad_msrs:
# KVM reads MSRs Bochs lacks (IA32_DEBUGCTL on every entry); error: ignore
# keeps that from logging a line per VM exit.
cat > "$work/bochsrc" <<RC
plugin_ctrl: unmapped=1, biosdev=1, speaker=0, extfpuirq=0, parallel=0, gameport=0, iodebug=0, serial=1
config_interface: textconfig
display_library: rfb, options="timeout=0"
memory: guest=$MEM, host=$MEM
romimage: file=/usr/share/bochs/BIOS-bochs-latest, options=fastboot
vgaromimage: file=/usr/share/vgabios/vgabios.bin
cpu: model=corei7_skylake_x, count=1, ips=60000000, reset_on_triple_fault=1, ignore_bad_msrs=1
pci: enabled=1, chipset=i440fx
ata0-master: type=cdrom, path=$work/guest.iso, status=inserted
boot: cdrom
clock: sync=none, time0=local
com1: enabled=1, mode=file, dev=$outdir/console.log
port_e9_hack: enabled=1
log: $work/bochs.log
panic: action=fatal
error: action=ignore
info: action=report
debug: action=ignore
mouse: enabled=0
RC
# The built-in debugger stops at its prompt unless told to continue.
echo c > "$work/debugger.rc"

start=$(date +%s)
(cd "$work" && exec timeout -k 5 "$TIMEOUT" nice -n "${BOCHS_NICE:-5}" \
	bochs -q -f "$work/bochsrc" -rc "$work/debugger.rc" \
	</dev/null >"$work/stdout" 2>"$work/stderr") &
pid=$!
why=
seen=0
# When each of init's markers reached the console (host seconds).
timeline() {
	local n
	n=$(wc -l < "$outdir/console.log")
	if [ "$n" -gt "$seen" ]; then
		tail -n +$((seen + 1)) "$outdir/console.log" | head -n $((n - seen)) |
			sed -n "s/^@@ /$(($(date +%s) - start)) /p" >> "$outdir/timeline"
		seen=$n
	fi
}
while kill -0 "$pid" 2>/dev/null; do
	timeline
	if grep -q 'Kernel panic' "$outdir/console.log" 2>/dev/null; then
		why="guest panicked"
		sleep 2	# the rest of the panic message
		kill "$pid" 2>/dev/null || true
		break
	fi
	sleep 1
done
rc=0
wait "$pid" || rc=$?
timeline
end=$(date +%s)

{
	cat "$work/stderr" "$work/bochs.log" 2>/dev/null
	echo "@@ host: bochs ran $((end - start))s, exit status $rc"
	[ -n "$why" ] && echo "@@ host: stopped bochs: $why"
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		echo "@@ host: guest timed out after ${TIMEOUT}s"
	fi
} > "$outdir/qemu.log"
# Bochs's stdout: its banner and debugger lines around what the guest
# wrote to port 0xE9.
sed -n '/^@@ /,$p' "$work/stdout" | grep -Ev '^\(0\)\.?\[' > "$outdir/results.log" || true
rm -f "$work/guest.iso"
exit 0
