#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# arm64 smoke test: build kvm_statsfd.ko for Debian's arm64 kernel (in the
# bookworm-arm64 chroot, W=1 C=1), boot that kernel under
# qemu-system-aarch64 (TCG, EL2 with VHE, so /dev/kvm exists and KVM runs
# a nested VM), load the module and check the stats fds of a VM with known
# work (kvm_smoke.c, init.sh).  Prints TAP; exits non-zero on a failure.
#
# usage: tests/vm/arm64/smoke.sh [SERIES]     (default 6.12-arm64)
#
# Needs what scripts/install-deps.sh installs (qemu-system-arm, clang,
# libc6-dev-arm64-cross, mmdebstrap); kernels and the chroot are cached
# under $CACHE, builds go to $BUILD (tests/vm/lib.sh).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck disable=SC1091 # lib.sh, checked on its own
. "$here/../lib.sh"
SERIES=${1:-6.12-arm64}
CC_ARM64=${CC_ARM64:-clang --target=aarch64-linux-gnu}

read -r _ rel root < <(SERIES=$SERIES "$TOP/tests/vm/fetch-kernels.sh")
out="$BUILD/$rel/arm64-smoke"
rm -rf "$out"
mkdir -p "$out/initrd/bin"

n=0
fails=0
tap() { # tap OK|FAIL DESCRIPTION [DETAIL]
	n=$((n + 1))
	if [ "$1" = OK ]; then
		echo "ok $n - $2${3:+ # $3}"
	else
		echo "not ok $n - $2${3:+ # $3}"
		fails=$((fails + 1))
	fi
}

step "building kvm_statsfd.ko for $rel (W=1 C=1)"
if build_module_once "$rel" "$root" > "$out/build.out" 2>&1; then
	tap OK "module builds for $rel"
else
	tap FAIL "module builds for $rel"
	tail -n 20 "$out/build.out" | sed 's/^/# /'
	echo "1..$n"
	exit 1
fi
log="$BUILD/$rel/module/build.log"
if grep -E 'warning:|error:' "$log" > "$out/warnings"; then
	tap FAIL "no compiler or sparse warnings" "$(wc -l < "$out/warnings") lines"
	sed 's/^/# /' "$out/warnings"
else
	tap OK "no compiler or sparse warnings"
fi

step "building the test program and the initramfs"
# shellcheck disable=SC2086 # CC_ARM64 is a command with arguments
$CC_ARM64 -O2 -Wall -Wextra -Werror -static -o "$out/initrd/kvm_smoke" \
	"$here/kvm_smoke.c"
cp "$BUILD/$rel/module/kvm_statsfd.ko" "$out/initrd/"
cp "$root/userland/bin/busybox" "$out/initrd/bin/"
cp "$here/init.sh" "$out/initrd/init"
(cd "$out/initrd" && find . | cpio -o -H newc --quiet | gzip -1) > "$out/initrd.gz"

step "booting $rel under qemu-system-aarch64"
rc=0
t0=$(date +%s.%N)
c0=$(awk '{ print $14 + $15 + $16 + $17 }' /proc/$$/stat)
timeout -k 5 300 qemu-system-aarch64 \
	-M virt,virtualization=on,gic-version=3 -cpu max,pauth-impdef=on \
	-smp 2 -m 1024 -nographic -no-reboot -nodefaults -serial stdio \
	-kernel "$root/boot/vmlinuz-$rel" -initrd "$out/initrd.gz" \
	-append "console=ttyAMA0 panic=-1 oops=panic loglevel=4" \
	< /dev/null > "$out/console.log" 2>&1 || rc=$?
# What the boot cost: wall, and the CPU of qemu (a waited-for child).
echo "# guest: $(echo "$(date +%s.%N) - $t0" | bc) s wall," \
	"$(awk -v c0="$c0" -v hz="$(getconf CLK_TCK)" \
		'{ printf "%.1f", ($14 + $15 + $16 + $17 - c0) / hz }' /proc/$$/stat) CPU-s"
tr -d '\r' < "$out/console.log" > "$out/console.txt"
if [ "$rc" = 0 ] && ! grep -q 'Kernel panic' "$out/console.txt"; then
	tap OK "guest ran and powered off"
else
	tap FAIL "guest ran and powered off" "qemu exit $rc"
fi
# The guest's TAP lines, numbered here.
while IFS= read -r line; do
	case "$line" in
	"ok - "*) tap OK "${line#ok - }" ;;
	"not ok - "*) tap FAIL "${line#not ok - }" ;;
	"# "*) echo "$line" ;;
	esac
done < "$out/console.txt"
if grep -q '^# guest done$' "$out/console.txt"; then
	tap OK "guest finished its tests"
else
	tap FAIL "guest finished its tests"
	tail -n 30 "$out/console.txt" | sed 's/^/# /'
fi
echo "1..$n"
[ "$fails" = 0 ]
