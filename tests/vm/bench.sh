#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make bench`: the benchmarks, side by side in one run.
#
#  - in a guest (6.12; BENCH_KERNEL=6.1 for the other) under QEMU's
#    -icount, where the TSC counts instructions: the exit-path probes'
#    instructions per exit against a plain increment (probe_cost, driven by
#    the test-only tests/bench/probe_driver module), and the same exits
#    with Debian's bpftrace building the same statistics instead, the
#    module unloaded (tests/bench/bpftrace);
#  - in a second, plain boot: a guest's exit loop with the module loaded
#    against not (exit_loop, timed);
#  - on the host: packed against cache-line separated counters (layout);
#  - in a second boot of the same kernel: the read path, module against
#    native stats fd (tests/bench/run-read-bench.sh).
#
# Every result is a "bench: NAME key=value ..." line, collected in
# $BUILD/bench/results.txt.  Absolute numbers under TCG are large and
# noisy: compare only the ratios, which are taken within one run.
#
# BENCH_PARTS (default "icount timed read") picks the boots: e.g.
# BENCH_PARTS=icount for the instruction counts alone.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

mapfile -t KERNELS < <(test_kernels)
# 6.12 by default: the probe driver needs vcpu_load(), which 7.x exports
# to KVM's vendor modules only.
k=$(printf '%s\n' "${KERNELS[@]}" | awk -v s="${BENCH_KERNEL:-6.12}" '$1 == s')
[ -n "$k" ] || { echo "no such test kernel: ${BENCH_KERNEL:-}" >&2; exit 2; }
read -r series rel root <<< "$k"
parts=" ${BENCH_PARTS:-icount timed read} "
has_part() { [[ "$parts" == *" $1 "* ]]; }

build_userspace
step "building kvm_statsfd.ko, the test-only probe driver and the benchmarks for $rel"
build_module_once "$rel" "$root"
drv="$BUILD/$rel/probe-driver"
mirror_tree "$TOP/tests/bench/probe_driver" "$drv" .
build_module "$rel" "$root" "$drv"
make -s -C "$TOP/tests/bench" O="$BUILD/bench" \
	LIBKVMSTATS="$BUILD/tools/libkvmstats.a" >&2
# Debian's bpftrace with its libraries, and its program, for the -icount
# guest (tests/bench/bpftrace).
bt_root="$BUILD/bench/bpftrace-root"
if has_part icount; then
	"$TOP/tests/bench/bpftrace/collect-bpftrace.sh" "$bt_root"
	install -m 0644 "$TOP/tests/bench/bpftrace/exit-stats.bt" "$bt_root/opt/bpftrace/"
fi

# Two boots: one under -icount, where the guest TSC counts instructions
# (probe_cost: exact instructions per exit), one plain for exit_loop,
# whose nested VM makes no progress under -icount.
out="$BUILD/bench/$rel"
rm -rf "$out"
mkdir -p "$out/icount" "$out/timed"
cp "$BUILD/bench/guest/probe_cost" "$TOP/tests/bench/bpftrace/bpftrace_cost" \
	"$out/icount/"
cp "$BUILD/bench/guest/exit_loop" "$out/timed/"
boots=()
for b in icount timed; do
	has_part "$b" || continue
	boots+=("$b")
	extra=()
	[ "$b" = icount ] && extra=(--tree "$bt_root")
	"$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$out/initrd-$b.img" \
		--module "$BUILD/$rel/module/kvm_statsfd.ko" \
		--module "$drv/ks_probe_driver.ko" --bench "$out/$b" "${extra[@]}"
done
if has_part icount; then
	step "[$series] booting $rel under -icount: instructions per exit, bpftrace's beside"
	# bpftrace's start (LLVM compiling its program) can be slow under TCG.
	# An invariant TSC, as KVM hosts have: without one the module's time
	# groups read ktime_get_mono_fast_ns() instead of the TSC (stats=all
	# 218 instructions per exit instead of 115 on 2026-11-24).
	GUEST_TIMEOUT=${GUEST_TIMEOUT:-900} GUEST_ICOUNT=1 GUEST_MEM=${GUEST_MEM:-2048} \
		GUEST_CPU=${GUEST_CPU:-max,+invtsc,x-force-features=on} \
		"$TOP/tests/vm/run-guest.sh" "$root/boot/vmlinuz-$rel" \
		"$out/initrd-icount.img" "$out/run-icount" bench
fi
if has_part timed; then
	step "[$series] booting $rel: timed exit loop (a few minutes)"
	GUEST_MEM=${GUEST_MEM:-2048} "$TOP/tests/vm/run-guest.sh" \
		"$root/boot/vmlinuz-$rel" "$out/initrd-timed.img" "$out/run-timed" bench
fi

results="$BUILD/bench/results.txt"
{
	echo "# make bench, $(date -u +%Y-%m-%dT%H:%MZ), guest kernel $rel (QEMU TCG, nested SVM)"
	echo "# probe_cost ran under -icount: its ticks are guest instructions"
	for b in "${boots[@]}"; do
		tr -d '\r' < "$out/run-$b/results.log"
	done | grep -h '^bench: ' || true
	step "host: layout benchmark"
	"$BUILD/bench/layout"
} | tee "$results"

# The rig's judgement: guest finished, kernel log clean, each program ok.
for b in "${boots[@]}"; do
	"$TOP/tests/vm/judge.sh" "$out/run-$b" "[$series bench $b]" > "$out/judge-$b.tap" ||
		{ cat "$out/judge-$b.tap"; echo "benchmark run failed" >&2; exit 1; }
done

if has_part read; then
	"$TOP/tests/bench/run-read-bench.sh" "$series"
	cat "$BUILD/bench/read-summary.txt" >> "$results"
fi
echo "results: $results"
