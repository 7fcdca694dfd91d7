#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# build.sh ARCH OUT: upstream's kvm_binary_stats_test for a test guest of
# ARCH (x86_64 or arm64), static, from the KVM selftests of Debian's
# linux-source-6.1 (tests/vm/fetch-linux-source.sh) against the uapi
# headers of the host's C library for ARCH (linux-libc-dev, or
# linux-libc-dev-arm64-cross, both 6.1 in Debian 12: the selftests' own
# release), with $CC (x86_64) or $CC_ARM64 (arm64, clang by default, as
# the other arm64 guest programs).  Makes OUT/bin/kvm_binary_stats_test
# and OUT/tests/upstream_stats_test, which runs it with and without the
# module.  Incremental: the selftests' make rebuilds only what changed.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
arch=$1 out=$2
src=$("$TOP/tests/vm/fetch-linux-source.sh")
case "$arch" in
x86_64) cc=${CC:-gcc} hdr=/usr/include/ ;;
arm64) cc=${CC_ARM64:-clang --target=aarch64-linux-gnu}
	hdr=/usr/aarch64-linux-gnu/include/ ;;
*) echo "build.sh: ARCH is x86_64 or arm64, not $arch" >&2; exit 2 ;;
esac
mkdir -p "$out/bin" "$out/tests" "$out/obj"
# Upstream's code, upstream's warnings: they are not this project's to
# fix, and its make prints every command; only a failure is shown.
if ! make -s -C "$src/tools/testing/selftests/kvm" ARCH="$arch" CC="$cc" \
	OUTPUT="$out/obj" LINUX_HDR_PATH="$hdr" EXTRA_CFLAGS=-static \
	"$out/obj/kvm_binary_stats_test" > "$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	exit 1
fi
install -m 0755 "$out/obj/kvm_binary_stats_test" "$out/bin/"
install -m 0755 "$TOP/tests/upstream/upstream_stats_test.sh" \
	"$out/tests/upstream_stats_test"
