#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Collect a QEMU into a tree to be copied into the test guest's root, so
# the guest can run QEMU on its own /dev/kvm:
#
#   ROOT/opt/qemu/bin/qemu-system-ARCH       the binary, unchanged
#   ROOT/opt/qemu/lib/                       every library it links, and
#                                            the dynamic loader
#                                            (tests/lib/guest-bundle.sh)
#   ROOT/opt/qemu/share/qemu/                x86: the firmware a q35 VM
#                                            with no devices loads
#                                            (SeaBIOS, option ROMs for
#                                            -kernel)
#   ROOT/opt/qemu/qemu-system-ARCH           wrapper: runs the binary
#                                            through the copied loader
#
# usage: collect-qemu.sh ROOT           the host's qemu-system-x86_64
#                                       (Debian's qemu-system-x86 package)
#        collect-qemu.sh ROOT SYSROOT   the arm64 qemu-system-aarch64
#                                       unpacked in SYSROOT with its
#                                       libraries (fetch-qemu-arm64.sh)
# The guest's busybox root has no /usr/lib: the wrapper starts the binary
# with the copied loader and --library-path, and points QEMU at the
# firmware with -L.  The arm64 VM of the test needs no firmware: the virt
# machine boots its -kernel image through a few instructions QEMU writes
# into the VM's RAM itself.
set -euo pipefail

root=$1
here=$(dirname "$0")
if [ $# -gt 1 ]; then
	SYSROOT=$2 "$here/../lib/guest-bundle.sh" "$root" /opt/qemu \
		"$2/usr/bin/qemu-system-aarch64" qemu-system-aarch64
	echo "collect-qemu: $(du -sh "$root/opt/qemu" | cut -f1) in $root/opt/qemu" >&2
	exit 0
fi
qemu=${QEMU_BIN:-/usr/bin/qemu-system-x86_64}
[ -x "$qemu" ] || { echo "collect-qemu: $qemu not found (package qemu-system-x86)" >&2; exit 1; }

prefix=$root/opt/qemu
"$here/../lib/guest-bundle.sh" "$root" /opt/qemu "$qemu" \
	qemu-system-x86_64 -L /opt/qemu/share/qemu
mkdir -p "$prefix/share/qemu"

# Firmware: QEMU's data dir and Debian's SeaBIOS, dereferenced.
for f in bios-256k.bin kvmvapic.bin linuxboot.bin linuxboot_dma.bin \
	multiboot.bin multiboot_dma.bin; do
	src=
	for d in /usr/share/qemu /usr/share/seabios; do
		[ -e "$d/$f" ] && { src=$d/$f; break; }
	done
	[ -n "$src" ] || { echo "collect-qemu: firmware $f not found" >&2; exit 1; }
	cp -L "$src" "$prefix/share/qemu/$f"
done

echo "collect-qemu: $(du -sh "$prefix" | cut -f1) in $prefix" >&2
