#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: the benchmarks, side by side in one run.
#
#  - in a guest (newest test kernel; BENCH_KERNEL=6.1 for the other), with
#    the benchmark build of the module (KVM_STATSFD_BENCH=1): the probes'
#    in-kernel cost per exit against a plain increment (probe_cost), a
#    guest's exit loop with the module loaded against not (exit_loop), and
#    whatever else tests/bench builds for the guest;
#  - on the host: packed against cache-line separated counters (layout);
#  - in a second boot of the same kernel: the read path, module against
#    native stats fd (tests/bench/run-read-bench.sh).
#
# Every result is a "bench: NAME key=value ..." line, collected in
# $BUILD/bench/results.txt.  Absolute numbers under TCG are large and
# noisy: compare only the ratios, which are taken within one run.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mapfile -t KERNELS < <(test_kernels)
if [ -n "${BENCH_KERNEL:-}" ]; then
	k=$(printf '%s\n' "${KERNELS[@]}" | awk -v s="$BENCH_KERNEL" '$1 == s')
else
	k=$(printf '%s\n' "${KERNELS[@]}" | sort -V -k1,1 | tail -n 1)
fi
[ -n "$k" ] || { echo "no such test kernel: ${BENCH_KERNEL:-}" >&2; exit 2; }
read -r series rel root <<< "$k"

build_userspace
step "building the benchmark build of kvm_statsfd.ko for $rel"
mod="$BUILD/$rel/bench-module"
mirror_tree "$TOP" "$mod" Kbuild src include
build_module "$rel" "$root" "$mod" KVM_STATSFD_BENCH=1
step "building the benchmarks"
make -s -C "$TOP/tests/bench" O="$BUILD/bench" \
	LIBKVMSTATS="$BUILD/tools/libkvmstats.a" >&2

out="$BUILD/bench/$rel"
rm -rf "$out"
mkdir -p "$out"
"$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$out/initrd.gz" \
	--module "$mod/kvm_statsfd.ko" --bench "$BUILD/bench/guest"
step "[$series] booting $rel: benchmarks in the guest (a few minutes)"
GUEST_MEM=${GUEST_MEM:-2048} "$TOP/tests/vm/run-guest.sh" \
	"$root/boot/vmlinuz-$rel" "$out/initrd.gz" "$out/run" bench

results="$BUILD/bench/results.txt"
{
	echo "# make bench, $(date -u +%Y-%m-%dT%H:%MZ), guest kernel $rel (QEMU TCG, nested SVM)"
	tr -d '\r' < "$out/run/results.log" | grep -h '^bench: ' || true
	step "host: layout benchmark"
	"$BUILD/bench/layout"
} | tee "$results"

# The rig's judgement: guest finished, kernel log clean, each program ok.
"$TOP/tests/vm/judge.sh" "$out/run" "[$series bench]" > "$out/judge.tap" ||
	{ cat "$out/judge.tap"; echo "benchmark run failed" >&2; exit 1; }

"$TOP/tests/bench/run-read-bench.sh" "$series"
cat "$BUILD/bench/read-summary.txt" >> "$results"
echo "results: $results"
