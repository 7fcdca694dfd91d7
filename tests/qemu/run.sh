#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Developer shortcut: build the module and the QEMU query-stats test, boot
# one test kernel with only that test, judge the run.
#
# usage: tests/qemu/run.sh [SERIES]
#   SERIES  6.1 (default), 6.12, 6.1-rt, 5.10 or newest (tests/vm/lanes)
# BUILD defaults to build/qemu-run/ (not build/, which make check uses);
# output and logs go to $BUILD/run/<release>/.  The guest's default 1 GB
# (run-guest.sh GUEST_MEM) is enough: with QEMU and its libraries (~50 MB)
# in the initramfs and a 64 MB VM running, about 760 MB stay available.
set -euo pipefail
TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$TOP/build/qemu-run}
. "$TOP/tests/vm/lib.sh"

want=${1:-6.1}
k=$(SERIES="$want" test_kernels | awk -v s="$want" '$1 == s')
[ -n "$k" ] || { echo "no test kernel of series $want" >&2; exit 2; }
read -r series rel root <<< "$k"

step "building the QEMU test payload"
make -s -C "$TOP/tests/qemu" O="$BUILD/qemu" >&2
step "[$series] building kvm_statsfd.ko for $rel"
mirror_tree "$TOP" "$BUILD/$rel/module" Kbuild src include
build_module "$rel" "$root" "$BUILD/$rel/module"

out="$BUILD/run/$rel"
rm -rf "$out"
mkdir -p "$out"
"$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$out/initrd.img" \
	--module "$BUILD/$rel/module/kvm_statsfd.ko" \
	--tests "$BUILD/qemu/tests" --tree "$BUILD/qemu/root"
step "[$series] booting $rel ($(du -h "$out/initrd.img" | cut -f1) initramfs)"
# shellcheck disable=SC2046 # the command line is a list of words
"$TOP/tests/vm/run-guest.sh" \
	"$root/boot/vmlinuz-$rel" "$out/initrd.img" "$out/run" test \
	$(guest_cmdline "$rel" "$root")
"$TOP/tests/vm/judge.sh" "$out/run" "[$series]"
