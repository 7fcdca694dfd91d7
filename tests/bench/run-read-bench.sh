#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Read-path benchmark: kvm_statsfd.ko's stats fd against KVM's own, side by
# side in one boot of each test kernel (tests/bench/read_bench.c describes
# the method).  Results are ratios measured in one run, so TCG's slowness
# cancels out; absolute times are TCG's, not a real host's.
#
# usage: tests/bench/run-read-bench.sh [SERIES...]    (default: 6.12)
#   BENCH_VCPUS  VM sizes to sweep (default "1 8 64 256")
#   BENCH_STATS  the module's stat groups (default all; "default" for a
#                load with no stats= parameter)
#   GUEST_MEM    guest memory in MB (default here 2048, for 256 vCPUs)
# Writes $BUILD/bench/read-<release>.txt (the raw "@bench" lines) and
# $BUILD/bench/read-summary.txt, and prints the summary.  Exits non-zero if
# a guest did not finish, its kernel log has a splat, or the bench failed.
set -euo pipefail
. "$(dirname "$0")/../vm/lib.sh"

[ $# -gt 0 ] || set -- 6.12
OUT="$BUILD/bench"
mkdir -p "$OUT/bin"
export GUEST_MEM=${GUEST_MEM:-2048}
export GUEST_TIMEOUT=${GUEST_TIMEOUT:-900}
# Under -icount the guest's clock advances 1 ns per instruction: the "ns"
# below are exact instruction counts, the same from run to run (no VM runs
# in this bench, so nothing stalls).  GUEST_ICOUNT=0 for wall-clock times.
export GUEST_ICOUNT=${GUEST_ICOUNT:-1}

step "building the read bench (static)"
make -s -C "$TOP/tools" O="$BUILD/tools" STATIC=1 >&2
${CC:-cc} -std=gnu11 -O2 -g -Wall -Wextra -Wno-sign-compare -Wno-unused-parameter \
	-static -pthread \
	-I"$TOP/tools/lib" -I"$TOP/tests/selftests" -I"$TOP/include" \
	-o "$OUT/bin/read_bench" "$TOP/tests/bench/read_bench.c" \
	"$TOP/tests/selftests/ks_util.c" "$TOP/tests/selftests/ks_util_x86.c" \
	"$BUILD/tools/libkvmstats.a"

# value KEY FILE: the value of one "@bench KEY VALUE" line.
value() { awk -v k="$2" '$1 == "@bench" && $2 == k { print $3; exit }' "$1"; }

summary="$OUT/read-summary.txt"
: > "$summary"
rc=0
for want in "$@"; do
	k=$(SERIES="$want" test_kernels | awk -v s="$want" '$1 == s')
	[ -n "$k" ] || { echo "no test kernel of series $want" >&2; exit 2; }
	read -r series rel root <<< "$k"
	step "[$series] building kvm_statsfd.ko for $rel"
	build_modules_for "$rel" "$root"
	run="$OUT/run-$rel"
	rm -rf "$run"
	"$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$OUT/initrd-$rel.gz" \
		--module "$BUILD/$rel/module/kvm_statsfd.ko" --tests "$OUT/bin"
	step "[$series] booting $rel: read bench (GUEST_MEM=$GUEST_MEM)"
	extra=()
	[ -z "${BENCH_VCPUS:-}" ] || extra+=("BENCH_VCPUS=${BENCH_VCPUS// /,}")
	[ -z "${BENCH_STATS:-}" ] || extra+=("BENCH_STATS=$BENCH_STATS")
	"$TOP/tests/vm/run-guest.sh" "$root/boot/vmlinuz-$rel" \
		"$OUT/initrd-$rel.gz" "$run" test "${extra[@]}"
	if ! "$TOP/tests/vm/judge.sh" "$run" "[$series] bench" > "$run/judge.tap"; then
		cat "$run/judge.tap" >&2
		rc=1
	fi
	res="$OUT/read-$rel.txt"
	tr -d '\r' < "$run/results.log" | grep '^@bench ' > "$res" || true
	if ! grep -q '^@bench done' "$res"; then
		echo "[$series] the bench did not finish:" >&2
		grep -E '^@bench error|^@@ ' "$run/results.txt" >&2 || true
		rc=1
	fi
	{
		if [ "$GUEST_ICOUNT" = 1 ]; then
			echo "== $rel (TCG guest under -icount: instructions per operation, medians of $(value "$res" runs) alternating runs; stats=$(value "$res" stats))"
		else
			echo "== $rel (TCG guest, medians of $(value "$res" runs) alternating runs; stats=$(value "$res" stats); ns per operation)"
		fi
		printf '%-44s %10s\n' "one pread of vCPU 0's data block" ""
		printf '  %-42s %10s\n' "KVM's fd ($(value "$res" data_bytes_native) B)" "$(value "$res" pread_native)"
		printf '  %-42s %10s\n' "module's fd, whole block ($(value "$res" data_bytes_module) B)" "$(value "$res" pread_module)"
		printf '  %-42s %10s\n' "module's fd, native prefix only" "$(value "$res" pread_module_pfx)"
		printf '  %-42s %10s\n' "getppid (syscall floor)" "$(value "$res" getppid)"
		printf '  %-42s %10s\n' "ratio module/native, whole block" "$(value "$res" ratio_pread_module/native)"
		printf '  %-42s %10s   (goal <= 1.10)\n' "ratio module/native, native prefix" "$(value "$res" ratio_pread_module_pfx/native)"
		printf '  %-42s %10s\n' "ratio above the floor, prefix" "$(value "$res" ratio_pread_native-floor/module_pfx-floor)"
		echo "the module's own block of vCPU 0 ($(value "$res" data_bytes_module_own) B)"
		printf '  %-42s %10s\n' "pread" "$(value "$res" pread_module_own)"
		printf '  %-42s %10s\n' "copied from its mmap (no system call)" "$(value "$res" mmap_module_own)"
		printf '  %-42s %10s\n' "ratio mmap/pread" "$(value "$res" ratio_mmap/pread_own)"
		printf '  %-42s %10s\n' "libkvmstats refresh (prefix pread + mmap)" "$(value "$res" refresh_lib_vcpu)"
		printf '  %-42s %10s\n' "one u64 of it: pread of 8 bytes" "$(value "$res" pread_module_own_one)"
		printf '  %-42s %10s\n' "one u64 of it: load from the mmap" "$(value "$res" mmap_module_own_one)"
		echo "sweep: one pread of every vCPU's data block"
		printf '  %6s %12s %12s %12s %8s %8s %10s\n' vCPUs native module mod-prefix ratio r-prefix mod/vCPU
		for n in ${BENCH_VCPUS:-1 8 64 256}; do
			[ -n "$(value "$res" "sweep_native@$n")" ] || continue
			printf '  %6s %12s %12s %12s %8s %8s %10s\n' "$n" \
				"$(value "$res" "sweep_native@$n")" \
				"$(value "$res" "sweep_module@$n")" \
				"$(value "$res" "sweep_module_pfx@$n")" \
				"$(value "$res" "ratio_sweep_module/native@$n")" \
				"$(value "$res" "ratio_sweep_module_pfx/native@$n")" \
				"$(value "$res" "sweep_module_per_vcpu@$n")"
		done
		echo "one pread of the VM file's data block (the module sums its own part over the vCPUs)"
		printf '  %6s %12s %12s %8s\n' vCPUs native module ratio
		for n in ${BENCH_VCPUS:-1 8 64 256}; do
			[ -n "$(value "$res" "pread_vm_native@$n")" ] || continue
			printf '  %6s %12s %12s %8s\n' "$n" \
				"$(value "$res" "pread_vm_native@$n")" \
				"$(value "$res" "pread_vm_module@$n")" \
				"$(value "$res" "ratio_pread_vm_module/native@$n")"
		done
		echo "KVM_GET_STATS_FD + close on vCPU 0"
		printf '  %-42s %10s\n' "KVM's" "$(value "$res" open_native)"
		printf '  %-42s %10s\n' "module's" "$(value "$res" open_module)"
		printf '  %-42s %10s\n' "ratio module/native" "$(value "$res" ratio_open_module/native)"
		printf '  %-42s %10s\n' "module's, cross_process=1" "$(value "$res" open_module_cross_process)"
		echo "a vCPU ioctl KVM answers at once (KVM_GET_MP_STATE): what the module adds to every vCPU ioctl, KVM_RUN included"
		printf '  %-42s %10s\n' "module not loaded" "$(value "$res" vcpu_ioctl_native)"
		printf '  %-42s %10s\n' "module loaded" "$(value "$res" vcpu_ioctl_module)"
		printf '  %-42s %10s\n' "difference" "$(value "$res" vcpu_ioctl_hook_cost)"
		printf '  %-42s %10s\n' "module loaded, cross_process=1" "$(value "$res" vcpu_ioctl_module_cross_process)"
		printf '  %-42s %10s\n' "difference, cross_process=1" "$(value "$res" vcpu_ioctl_hook_cost_cross_process)"
		echo "memory"
		grep -E '^@bench (slab_|vcpu_states_made|module_bytes)' "$res" | sed 's/^@bench /  /'
		echo
	} >> "$summary"
done
cat "$summary"
exit $rc
