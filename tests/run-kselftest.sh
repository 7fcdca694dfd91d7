#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the selftests on this machine (a real KVM host, as root), the way
# `make kselftest` does: every program in DIR, TAP on stdout, and a last
# line "N passed, N failed[, N skipped]".
#
# A skip is not a pass: skipped cases are counted apart, and the run fails
# when a program reports no case at all (unless it exits 4, KSFT_SKIP,
# which counts as one skip), when it exits non-zero without a failed case,
# and when a case reports ok or SKIP after a failed expectation (the 6.1
# harness turns SKIP after a failed EXPECT into a skip).
#
# usage: run-kselftest.sh DIR   (KVM_STATSFD_KO names the module to load)
set -uo pipefail

dir=$1
[ "$(id -u)" = 0 ] || { echo "run-kselftest: must be root (loads a module)" >&2; exit 2; }
if [ ! -c /dev/kvm ]; then
	case "$(uname -m)" in
	aarch64) echo "run-kselftest: /dev/kvm is missing: boot at EL2 (KVM is built into Debian's arm64 kernels)" >&2 ;;
	*) echo "run-kselftest: /dev/kvm is missing: load kvm_amd or kvm_intel" >&2 ;;
	esac
	exit 2
fi
[ -f "${KVM_STATSFD_KO:-}" ] || { echo "run-kselftest: KVM_STATSFD_KO does not name a module file" >&2; exit 2; }

# count_cases: "passed failed skipped" of one program's output on stdin.
count_cases() {
	awk '
	/^#  RUN / { expfail = 0; next }
	/^# [^ :]+:[0-9]+:[^:]*:Expected / { expfail = 1; next }
	/^(not )?ok [0-9]+/ {
		if (/^not ok/ || expfail) f++
		else if (/# (SKIP|skip)/) s++
		else p++
		expfail = 0
	}
	END { printf "%d %d %d\n", p, f, s }'
}

passed=0 failed=0 skipped=0
for t in "$dir"/*; do
	[ -x "$t" ] || continue
	echo "# running ${t##*/}"
	out=$("$t" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	read -r p f s < <(printf '%s\n' "$out" | count_cases)
	if [ $((p + f + s)) = 0 ]; then
		if [ "$rc" = 4 ]; then
			echo "# ${t##*/}: skipped as a whole (exit 4)"
			s=1
		else
			echo "# ${t##*/}: no test case reported (exit $rc)"
			f=1
		fi
	elif [ "$rc" != 0 ] && [ "$f" = 0 ]; then
		echo "# ${t##*/}: exited with status $rc and no failed case"
		f=1
	fi
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
done
if [ "$skipped" = 0 ]; then
	echo "$passed passed, $failed failed"
else
	echo "$passed passed, $failed failed, $skipped skipped"
fi
[ "$failed" = 0 ]
