#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: boot a test kernel under QEMU, load kvm_statsfd.ko, run a
# small VM (tests/vm/demo/demo_vm.c) in the guest and show what
# `kvm-statsfd` reports about it.  The guest's output is streamed to the
# terminal as it arrives (the rig's @@ lines and the kernel log left out).
#
# usage: tests/vm/demo.sh
#   DEMO_KERNEL=6.1   the older test kernel (default: the newest)
#   DEMO_MODULE=FILE  load this prebuilt kvm_statsfd.ko (built for that
#                     kernel) instead of building one from the tree
# Exit status 0 only if the guest finished, the demo script succeeded and
# the rig's checks (kernel log clean, no unexpected taint) passed.
# Logs: $BUILD/demo/<release>/run/.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

t0=$SECONDS
mapfile -t KERNELS < <(test_kernels)
[ "${#KERNELS[@]}" -gt 0 ] || { echo "no test kernels" >&2; exit 1; }
if [ -n "${DEMO_KERNEL:-}" ]; then
	k=$(printf '%s\n' "${KERNELS[@]}" | awk -v s="$DEMO_KERNEL" '$1 == s')
	[ -n "$k" ] || { echo "no test kernel of series $DEMO_KERNEL" >&2; exit 2; }
else
	k=$(printf '%s\n' "${KERNELS[@]}" | sort -V -k1,1 | tail -n 1)
fi
read -r series rel root <<< "$k"

build_userspace
if [ -n "${DEMO_MODULE:-}" ]; then
	ko=$DEMO_MODULE
	step "using prebuilt $ko"
else
	step "building kvm_statsfd.ko for $rel"
	build_modules_for "$rel" "$root"
	ko=$BUILD/$rel/module/kvm_statsfd.ko
fi
step "building demo-vm (static)"
make -s -C "$TOP/tests/vm/demo" O="$BUILD/demo" >&2

out="$BUILD/demo/$rel"
rm -rf "$out"
mkdir -p "$out/stage"
cp "$TOP/tests/vm/demo/run-demo.sh" "$BUILD/demo/demo-vm" "$out/stage/"
"$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$out/initrd.img" \
	--module "$ko" \
	--bin "$BUILD/tools/kvm-statsfd" --demo "$out/stage"

step "booting $rel under QEMU (TCG, nested SVM; about 30-60 s)"
GUEST_TIMEOUT=${GUEST_TIMEOUT:-150} \
	"$TOP/tests/vm/run-guest.sh" "$root/boot/vmlinuz-$rel" \
	"$out/initrd.img" "$out/run" demo &
guest=$!

# Stream the guest's report while it runs: drop the rig's @@ lines and the
# kernel log it dumps at the end (judge.sh looks at those).
sleep 0.2
tail -n +1 -F --pid="$guest" "$out/run/results.log" 2>/dev/null |
	tr -d '\r' |
	awk '/^@@ dmesg-begin/ { skip = 1; next }
	     /^@@ dmesg-end/ { skip = 0; next }
	     skip || /^@@ / { next }
	     { print; fflush() }'
wait "$guest"

step "judging the run"
rc=0
if ! "$TOP/tests/vm/judge.sh" "$out/run" "[demo $series]" > "$out/judge.tap"; then
	rc=1
fi
if ! grep -qx '@@ demo rc=0' "$out/run/results.txt"; then
	echo "not ok - [demo $series] demo script: $(grep '^@@ demo rc=' "$out/run/results.txt" || echo 'did not report')"
	rc=1
fi
if [ "$rc" = 0 ]; then
	step "demo passed on $rel in $((SECONDS - t0)) s (guest finished, kernel log clean, no unexpected taint)"
else
	cat "$out/judge.tap"
	step "demo FAILED on $rel after $((SECONDS - t0)) s; logs in $out/run"
fi
exit "$rc"
