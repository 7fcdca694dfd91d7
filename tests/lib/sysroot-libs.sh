#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# sysroot-libs.sh BINARY SYSROOT DIR: copy the shared libraries BINARY
# needs, found in SYSROOT, and its dynamic loader (under the name its
# program interpreter has), into DIR.  tools/exporter/guest-libs.sh does
# the same for a host binary with ldd; this one reads the ELF files
# (readelf: any architecture) and runs none of them, so it serves another
# architecture's binary unpacked from its packages (an arm64 QEMU for the
# arm64 guest: tests/qemu/collect-qemu.sh).  Looks in SYSROOT's lib and
# usr/lib, each with its multiarch directory; fails if a library is not
# found.
set -eu
bin=$1 sysroot=$2 dir=$3

interp=$(readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
[ -n "$interp" ] || { echo "sysroot-libs.sh: $bin has no program interpreter" >&2; exit 1; }
multiarch=$(basename "$(dirname "$(find "$sysroot/lib" -maxdepth 2 -name libc.so.6 | head -n 1)")")

# inside PATH: PATH as found in SYSROOT, its symbolic links followed
# within SYSROOT (Debian's absolute and relative ones alike).
inside() {
	p=$1 n=0
	while [ -L "$sysroot$p" ] && [ $n -lt 20 ]; do
		t=$(readlink "$sysroot$p")
		case "$t" in
		/*) p=$t ;;
		*) p=$(dirname "$p")/$t ;;
		esac
		n=$((n + 1))
	done
	echo "$sysroot$p"
}

needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'; }

install -m 0755 "$(inside "$interp")" "$dir/${interp##*/}"
todo=$(needed "$bin")
while [ -n "$todo" ]; do
	next=
	for so in $todo; do
		[ -e "$dir/$so" ] && continue
		found=
		for d in "/lib/$multiarch" "/usr/lib/$multiarch" /lib /usr/lib; do
			[ -e "$sysroot$d/$so" ] || continue
			found=$(inside "$d/$so")
			break
		done
		[ -n "$found" ] || { echo "sysroot-libs.sh: $so (for $bin) not in $sysroot" >&2; exit 1; }
		install -m 0755 "$found" "$dir/$so"
		next="$next $(needed "$found")"
	done
	todo=$next
done
