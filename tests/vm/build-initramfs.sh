#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the test guest's initramfs: busybox-static, the kernel's own kvm and
# vendor modules with their dependencies (resolved with modinfo, since the
# unpacked image has no modules.dep), our module(s), and the statically
# linked programs to run.  KVM_VENDORS (default "kvm_amd kvm_intel") names
# the vendor modules to include; init loads the one matching the CPU.
# An arm64 kernel (RELEASE ends in "-arm64") gets arm64's busybox (ROOT's
# userland, from busybox-static:arm64: tests/vm/fetch-kernels.sh), no
# vendor module (KVM is built in) and aarch64-linux-gnu-strip.
#
# usage: build-initramfs.sh ROOT RELEASE OUT.img [options]
#   OUT.img is a cpio archive, LZ4-compressed when the kernel (ROOT's
#   boot/config-RELEASE) unpacks LZ4.
#   --module FILE.ko   add a module of ours to /lib/modules, without its
#                      debug information (repeatable)
#   --tests DIR        copy DIR's executables to /tests
#   --demo DIR         copy DIR to /demo
#   --bench DIR        copy DIR's executables to /bench
#   --bin FILE         add an executable to /bin (repeatable)
#   --tree DIR         copy DIR/. into the root, merging directories
#                      (repeatable; e.g. a QEMU with its libraries)
#   --without NAME     leave program NAME out of /tests (after --tests)
#   --cases FILE       /etc/ks-cases: "PROGRAM NAME..." lines, the only
#                      cases init.sh runs of those programs (KS_CASES)
set -euo pipefail

root=$1 rel=$2 out=$3
shift 3
here=$(cd "$(dirname "$0")" && pwd)
stage=$(mktemp -d)
# mktemp makes it 0700, and the archive's "." becomes the guest's "/":
# a host's is 0755, and tests that drop to another user must get past it.
chmod 0755 "$stage"
trap 'rm -rf "$stage"' EXIT

case "$rel" in
*-arm64)
	arch=arm64 busybox=$root/userland/bin/busybox
	STRIP=${STRIP:-aarch64-linux-gnu-strip}
	# Its applet list, from the arm64 binary itself, under qemu-user.
	applets() { qemu-aarch64 "$busybox" --list; }
	;;
*)
	arch=x86 busybox=/bin/busybox STRIP=${STRIP:-strip}
	applets() { "$busybox" --list; }
	;;
esac

mkdir -p "$stage"/{bin,sbin,proc,sys,dev,tmp,tests,demo,lib/modules}
cp "$busybox" "$stage/bin/busybox"
# One link per applet, made without a process each (about 270 of them).
applets | perl -nle 'BEGIN { $d = shift }
	$_ eq "busybox" or symlink("busybox", "$d/$_") or die "$_: $!\n"' \
	"$stage/bin"
install -m 0755 "$here/init.sh" "$stage/init"
# The TAP helpers the shell tests source (". ks-tap.sh").
install -m 0644 "$here/../lib/ks-tap.sh" "$stage/bin/ks-tap.sh"

moddir="$root/lib/modules/$rel"
declare -A seen=()
order=()

# Index of the kernel's modules by name ('-' and '_' are the same to
# modprobe, so both are folded to '_').
declare -A modpath=()
while read -r f; do
	b=${f##*/}
	b=${b%%.ko*}
	modpath[${b//-/_}]=$f
done < <(find "$moddir" -name '*.ko*')

add_with_deps() {
	local name=${1//-/_} path dep
	[ -n "${seen[$name]:-}" ] && return
	seen[$name]=1
	path=${modpath[$name]:-}
	[ -n "$path" ] || { echo "module $name not found in $moddir" >&2; exit 1; }
	for dep in $(modinfo -F depends "$path" | tr ',' ' '); do
		add_with_deps "$dep"
	done
	case "$path" in
	*.xz) xz -dc "$path" > "$stage/lib/modules/$name.ko" ;;
	*.zst) zstd -qdc "$path" > "$stage/lib/modules/$name.ko" ;;
	*) cp "$path" "$stage/lib/modules/$name.ko" ;;
	esac
	order+=("$name")
}

# Each vendor module present in the kernel, with its own load order
# (load-order.VENDOR); init loads the one the CPU has.  load-order is the
# first vendor's, for scripts that know only one.
nvend=0
[ "$arch" = x86 ] || KVM_VENDORS=${KVM_VENDORS:-none}
for vendor in ${KVM_VENDORS:-kvm_amd kvm_intel}; do
	[ "$vendor" != none ] || continue
	[ -n "${modpath[$vendor]:-}" ] || { echo "  [initramfs] no $vendor in $rel" >&2; continue; }
	order=()
	seen=()
	add_with_deps "$vendor"
	printf '%s\n' "${order[@]}" > "$stage/lib/modules/load-order.$vendor"
	[ "$nvend" = 0 ] && cp "$stage/lib/modules/load-order.$vendor" "$stage/lib/modules/load-order"
	nvend=$((nvend + 1))
done
[ "$nvend" -gt 0 ] || [ "$arch" = arm64 ] ||
	{ echo "no KVM vendor module in $moddir" >&2; exit 1; }

# copy_prog FILE DIR: a program into DIR, an ELF one without its DWARF
# (a -g static test program is a third DWARF): the guest never reads it,
# and under the debug kernel every MB to unpack costs about 0.4 s of boot.
# The host keeps the built file for gdb.
copy_prog() {
	if [ "$(head -c 4 "$1")" = "$(printf '\177ELF')" ]; then
		"$STRIP" --strip-debug -o "$2/${1##*/}" "$1" && chmod +x "$2/${1##*/}"
	else
		cp "$1" "$2/"
	fi
}

# copy_progs FROM DIR: FROM's executable files, each as copy_prog does.
copy_progs() {
	local f
	for f in "$1"/*; do
		[ ! -f "$f" ] || [ ! -x "$f" ] || copy_prog "$f" "$2"
	done
}

while [ $# -gt 0 ]; do
	case "$1" in
	# As a host has it: Debian and DKMS install modules without their
	# DWARF (dh_strip, DKMS's STRIP), which is 96% of a -g build's
	# kvm_statsfd.ko (4.7 MB of 4.9 on 6.12).  Symbols and BTF stay, for
	# splats and BPF; every load then reads 0.2 MB, not 4.9.
	--module) "$STRIP" --strip-debug -o "$stage/lib/modules/${2##*/}" "$2"
		shift 2 ;;
	--tests) copy_progs "$2" "$stage/tests"; shift 2 ;;
	--demo) cp -r "$2"/. "$stage/demo/"; shift 2 ;;
	--bench) mkdir -p "$stage/bench"; copy_progs "$2" "$stage/bench"; shift 2 ;;
	--bin) copy_prog "$2" "$stage/bin"; shift 2 ;;
	--without) rm -f "$stage/tests/$2"; shift 2 ;;
	--cases) mkdir -p "$stage/etc"; tr '\t' ' ' < "$2" > "$stage/etc/ks-cases"; shift 2 ;;
	--tree) cp -a "$2"/. "$stage/"; shift 2 ;;
	*) echo "unknown option $1" >&2; exit 2 ;;
	esac
done

# The archive's compression: LZ4 where the kernel unpacks it, none where
# not (the debug kernel), never gzip.  A TCG guest's CPU inflates gzip
# about as fast as the host's ten times over: the 6.12 lane's 150 MB
# archive took 3.3 s of its boot, 1.0 s as LZ4 or uncompressed, and
# gzip -1 took 2.1 CPU-s on the host, lz4 -1 0.3 (2026-12-07).
compress() { cat; }
grep -qx 'CONFIG_RD_LZ4=y' "$root/boot/config-$rel" 2>/dev/null &&
	compress() { lz4 -1 -l -q; }	# -l: the legacy frame, the kernel's
(cd "$stage" && find . | sort | cpio -o -H newc --quiet) | compress > "$out"
