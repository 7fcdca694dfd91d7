#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build-exporter.sh OUT: kvm-statsfd-exporter and its guest test for the
# arm64 guest (tests/vm/arm64/lane.sh), from the sources the x86 guests'
# are built from, cross-built with clang against Debian 12's arm64 -dev
# packages, unpacked (not installed) into a cached sysroot
# (tests/vm/fetch-arm64-closure.sh exporter-arm64).  Makes
#
#   OUT/tools/exporter-guest/   the exporter, the arm64 libraries it links
#                               and their loader, for the guest's /bin
#                               (tools/exporter/build.mk GUEST_SYSROOT)
#   OUT/tests-exporter/         kvm_statsfd_exporter_test and as-unit
#                               (tests/exporter/Makefile ARCH=arm64)
#
# and prints the build-initramfs.sh options that put them in the guest.
# All of it is built with --sysroot: the exporter, its libraries, libc
# and the loader are of one Debian release, as on a bookworm arm64 host.
# (The guest's other programs are static, with the host's arm64 cross
# libc: lib.sh build_userspace_arm64.)
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../../.." && pwd)
out=$1

# The exporter's libraries (tools/exporter/build.mk); libcap-dev for the
# static as-unit; libgcc-12-dev for the crt files and libgcc a --sysroot
# link takes from the sysroot.
sys=$("$TOP/tests/vm/fetch-arm64-closure.sh" exporter-arm64 \
	libmicrohttpd-dev libyaml-dev libsystemd-dev libcrypt-dev zlib1g-dev \
	libcap-dev libgcc-12-dev)
cc="${CC_ARM64:-clang --target=aarch64-linux-gnu} --sysroot=$sys"
export PKG_CONFIG_SYSROOT_DIR=$sys
export PKG_CONFIG_LIBDIR=$sys/usr/lib/aarch64-linux-gnu/pkgconfig:$sys/usr/share/pkgconfig

make -s -C "$TOP/tools" O="$out/tools" CC="$cc" AR=aarch64-linux-gnu-ar \
	GUEST_SYSROOT="$sys" exporter-guest >&2
make -s -C "$TOP/tests/exporter" O="$out/tests-exporter" ARCH=arm64 \
	CC="$cc" guest >&2

echo --tests "$out/tests-exporter/tests" --tree "$out/tests-exporter/guest-root"
for f in "$out/tools/exporter-guest/"*; do
	echo --bin "$f"
done
