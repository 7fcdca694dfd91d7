#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run the selftests on this machine (a real KVM host, as root), the way
# `make kselftest` does: every program in DIR, TAP on stdout, and a last
# line "N passed, N failed".
#
# usage: run-kselftest.sh DIR   (KVM_STATSFD_KO names the module to load)
set -uo pipefail

dir=$1
[ "$(id -u)" = 0 ] || { echo "run-kselftest: must be root (loads a module)" >&2; exit 2; }
[ -c /dev/kvm ] || { echo "run-kselftest: /dev/kvm is missing: load kvm_amd or kvm_intel" >&2; exit 2; }
[ -f "${KVM_STATSFD_KO:-}" ] || { echo "run-kselftest: KVM_STATSFD_KO does not name a module file" >&2; exit 2; }

passed=0 failed=0
for t in "$dir"/*; do
	[ -x "$t" ] || continue
	echo "# running ${t##*/}"
	out=$("$t" 2>&1)
	rc=$?
	printf '%s\n' "$out"
	p=$(printf '%s\n' "$out" | grep -c '^ok ')
	f=$(printf '%s\n' "$out" | grep -c '^not ok ')
	[ "$rc" != 0 ] && [ "$f" = 0 ] && f=1
	passed=$((passed + p)) failed=$((failed + f))
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
