#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Developer shortcut: boot one test kernel with only the exporter's guest
# test (and what it needs), judge the run, then check the guest's /metrics
# scrape with promtool on the host.
#
# usage: tests/exporter/run-guest-test.sh [SERIES]
#   SERIES  6.1 (default) or 6.12
# Output goes to $BUILD/exporter-guest/<release>/ (BUILD defaults to build/).
set -euo pipefail
# shellcheck source=../vm/lib.sh
. "$(dirname "$0")/../vm/lib.sh"

want=${1:-6.1}
k=$(test_kernels | awk -v s="$want" '$1 == s')
[ -n "$k" ] || { echo "no test kernel of series $want" >&2; exit 2; }
read -r series rel root <<< "$k"

step "building tools (STATIC=1: exporter with its libraries), demo-vm, the test"
make -s -C "$TOP/tools" O="$BUILD/tools" STATIC=1 >&2
make -s -C "$TOP/tests/tools" O="$BUILD/tests-tools" >&2
make -s -C "$TOP/tests/exporter" O="$BUILD/tests-exporter" guest >&2
build_modules_for "$rel" "$root"

# The guest bundle must run on its own: try it in an empty root first.
if [ "$(id -u)" = 0 ] && command -v unshare > /dev/null; then
	jail=$(mktemp -d)
	mkdir "$jail/bin" "$jail/proc"
	cp "$BUILD/tools/exporter-guest/"* "$jail/bin/"
	if ! unshare --mount sh -c "mount -t proc proc '$jail/proc' &&
		chroot '$jail' /bin/kvm-statsfd-exporter --help > /dev/null"; then
		rm -rf "$jail"
		echo "the exporter-guest bundle does not run in an empty root" >&2
		exit 1
	fi
	rm -rf "$jail"
fi

out="$BUILD/exporter-guest/$rel"
rm -rf "$out"
mkdir -p "$out"
bins=()
for f in "$BUILD/tools/exporter-guest/"*; do bins+=(--bin "$f"); done
"$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$out/initrd.img" \
	--module "$BUILD/$rel/module/kvm_statsfd.ko" \
	--tests "$BUILD/tests-exporter/tests" \
	--tree "$BUILD/tests-exporter/guest-root" \
	--tree "$BUILD/tests-exporter/prometheus-root" \
	--bin "$BUILD/tests-tools/bin/demo-vm" \
	--bin "$BUILD/tools/kvm-statsfd" "${bins[@]}"
step "[$series] booting $rel"
"$TOP/tests/vm/run-guest.sh" "$root/boot/vmlinuz-$rel" "$out/initrd.img" \
	"$out/run" test
rc=0
"$TOP/tests/vm/judge.sh" "$out/run" "[$series]" || rc=1
if "$TOP/tests/exporter/promtool-guest.sh" "$out/run/results.txt" > "$out/promtool.log" 2>&1; then
	echo "ok - [$series] host: the guest's /metrics passes promtool check metrics"
else
	echo "not ok - [$series] host: the guest's /metrics passes promtool check metrics"
	sed 's/^/#   /' "$out/promtool.log" | head -n 40
	rc=1
fi
exit $rc
