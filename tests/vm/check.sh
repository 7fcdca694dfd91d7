#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: everything, on every test kernel, then one summary line.
#
#  1. host: lint (checkpatch, W=1 + sparse builds) and the unit tests;
#  2. per kernel, in parallel: build the module, boot a guest, run the
#     selftests in it, judge the run (test cases, kernel log, taint);
#  3. the rig's self-test: a guest that WARNs must be judged a failure.
#
# Test cases from all of these are counted and the last line printed is
# "N passed, N failed".
set -uo pipefail
. "$(dirname "$0")/lib.sh"

passed=0 failed=0 skipped=0
RUN="$BUILD/check"
rm -rf "$RUN"
mkdir -p "$RUN"

# count FILE: add a "passed failed skipped" line to the totals.
count() {
	local p f s
	read -r p f s < "$1" || { p=0; f=1; s=0; }
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + ${s:-0}))
}

# host_case NAME CMD...: one host-side test case, TAP line and count.
host_case() {
	local name=$1
	shift
	if "$@" > "$RUN/host-case.log" 2>&1; then
		echo "ok - host $name"
		passed=$((passed + 1))
	else
		echo "not ok - host $name"
		sed 's/^/#   /' "$RUN/host-case.log" | tail -n 40
		failed=$((failed + 1))
	fi
}

# host_suite NAME CMD...: a host test program whose output is TAP ending
# in "N passed, N failed"; its cases join the totals.
host_suite() {
	local name=$1 up uf
	shift
	step "host: $name"
	"$@" > "$RUN/$name.log" 2>&1
	grep -E '^(not )?ok ' "$RUN/$name.log" |
		sed "s/^\(not \)\?ok [0-9]* \(- \)\?/&host $name: /"
	read -r up uf < <(tail -n 1 "$RUN/$name.log" |
		sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p') || true
	if [ -z "${up:-}" ]; then
		echo "not ok - host $name did not report a summary"
		tail -n 20 "$RUN/$name.log" | sed 's/^/#   /'
		failed=$((failed + 1))
	else
		passed=$((passed + up)) failed=$((failed + uf))
	fi
}

mapfile -t KERNELS < <(test_kernels) || exit 1
[ "${#KERNELS[@]}" -gt 0 ] || { echo "no test kernels" >&2; exit 1; }
build_userspace || exit 1

step "host: lint"
host_case "lint (checkpatch --strict, W=1 and sparse on every kernel)" \
	"$TOP/tests/vm/lint.sh"

MAKE_QUIET="make -s --no-print-directory"
host_suite unit $MAKE_QUIET -C "$TOP/tests/unit" OUT="$BUILD/unit" run
host_suite exporter-unit $MAKE_QUIET -C "$TOP/tests/exporter" \
	O="$BUILD/tests-exporter" run
host_suite exporter-load $MAKE_QUIET -C "$TOP/tests/exporter" \
	O="$BUILD/tests-exporter" load
host_suite exporter-scale $MAKE_QUIET -C "$TOP/tests/exporter" \
	O="$BUILD/tests-exporter" scale
# DKMS and make install against every test kernel's headers (~1 min).
host_suite dkms "$TOP/tests/dkms/test.sh"

# One guest per kernel, run side by side (single-threaded TCG uses one
# core each).
pids=()
for k in "${KERNELS[@]}"; do
	read -r series rel root <<< "$k"
	(
		out="$RUN/$rel"
		mkdir -p "$out"
		step "[$series] building kvm_statsfd.ko for $rel"
		build_modules_for "$rel" "$root" || exit 1
		"$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$out/initrd.gz" \
			--module "$BUILD/$rel/module/kvm_statsfd.ko" \
			--module "$BUILD/$rel/rig_warn/rig_warn.ko" \
			$(guest_test_payload) || exit 1
		step "[$series] booting $rel: selftests"
		"$TOP/tests/vm/run-guest.sh" "$root/boot/vmlinuz-$rel" \
			"$out/initrd.gz" "$out/tests" test
		step "[$series] rig self-test: a guest WARN must fail the run"
		"$TOP/tests/vm/run-guest.sh" "$root/boot/vmlinuz-$rel" \
			"$out/initrd.gz" "$out/warn" warn
		"$TOP/tests/vm/run-guest.sh" "$root/boot/vmlinuz-$rel" \
			"$out/initrd.gz" "$out/warn-nopanic" warn-nopanic \
			panic_on_warn=0
		step "[$series] guest runs finished"
	) &
	pids+=($!)
done
i=0
for k in "${KERNELS[@]}"; do
	read -r series rel root <<< "$k"
	out="$RUN/$rel"
	if ! wait "${pids[$i]}"; then
		echo "not ok - [$series] build or boot of $rel failed"
		failed=$((failed + 1))
		i=$((i + 1))
		continue
	fi
	i=$((i + 1))
	"$TOP/tests/vm/judge.sh" "$out/tests" "[$series]"
	count "$out/tests/counts"
	host_case "[$series] exporter: guest /metrics passes promtool" \
		"$TOP/tests/exporter/promtool-guest.sh" "$out/tests/results.txt"

	# The rig must call both WARN runs failures: with panic_on_warn the
	# guest never reports, without it the kernel log gives it away.
	for w in warn warn-nopanic; do
		if "$TOP/tests/vm/judge.sh" "$out/$w" "[$series]" > "$out/$w/judge.tap"; then
			echo "not ok - [$series] rig self-test: $w run was judged a pass"
			failed=$((failed + 1))
		elif grep -q 'rig_warn' "$out/$w/judge.tap" "$out/$w/console.txt"; then
			echo "ok - [$series] rig self-test: $w run judged a failure"
			passed=$((passed + 1))
		else
			echo "not ok - [$series] rig self-test: $w run failed for another reason"
			sed 's/^/#   /' "$out/$w/judge.tap"
			failed=$((failed + 1))
		fi
	done
done

if [ "$skipped" = 0 ]; then
	echo "$passed passed, $failed failed"
else
	echo "$passed passed, $failed failed, $skipped skipped"
fi
[ "$failed" = 0 ]
