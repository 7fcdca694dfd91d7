#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest-side test (busybox sh, TAP): upstream's own selftest of the format,
# kvm_binary_stats_test (tools/testing/selftests/kvm of Debian's
# linux-source-6.1, built by tests/upstream/build.sh), passes on the
# kernel's stats fds, then on the module's: with its default groups, and
# with every group and cross_process=1.  On a kernel without stats fds of
# its own (5.10) it must skip at first, for want of
# KVM_CAP_BINARY_STATS_FD, and pass with the module, which brings the
# ioctl and the capability there.  It checks each VM's and vCPU's fd
# as KVM serves it: the header and the id right after it, every
# descriptor's limits (type, unit, base, exponent, size, bucket size), the
# data block as one read and stat by stat, dup()ed and fresh fds, and fds
# that outlive their VM's.  Each run's output is printed as comments if it
# fails.  Needs root, /dev/kvm, kvm_binary_stats_test in PATH
# ($KVM_BINARY_STATS_TEST) and kvm_statsfd.ko at $KVM_STATSFD_KO, unloaded.

PATH=$PATH:/bin:/sbin
KO=${KVM_STATSFD_KO:-/lib/modules/kvm_statsfd.ko}
UP=${KVM_BINARY_STATS_TEST:-kvm_binary_stats_test}
T=$(mktemp -d /tmp/ksup.XXXXXX)
# ok, tap_end: tests/lib/ks-tap.sh (the guest's /bin).
# shellcheck source=../lib/ks-tap.sh
. ks-tap.sh
trap 'rm -rf "$T"' EXIT

# run: one run of upstream's test; its status in $rc, its output in $T/out.
run() {
	"$UP" > "$T/out" 2>&1
	rc=$?
}

# upstream WHAT: one run as a case; it must pass (0), not skip (4,
# KSFT_SKIP), since the module brings binary stats to every kernel.
upstream() {
	run
	ok "$rc" "upstream kvm_binary_stats_test passes $1" "status $rc" \
		"$(tail -n 15 "$T/out")"
}

if grep -q '^kvm_statsfd ' /proc/modules; then
	ok 1 "kvm_statsfd is not loaded at the start" "a test before left it"
	tap_end
fi
# KVM's own: a pass, or where KVM has no stats fds the skip for exactly
# that (the capability is the test's only requirement).
run
if [ "$rc" = 4 ] &&
	grep -q 'Requirement not met: kvm_has_cap(KVM_CAP_BINARY_STATS_FD)' "$T/out"; then
	rc=0
	echo "# KVM has no binary stats of its own: upstream's test skips"
fi
ok "$rc" "upstream kvm_binary_stats_test on KVM's own stats fds: passes, or skips where KVM has none" \
	"status $rc" "$(tail -n 15 "$T/out")"
for params in "" "stats=all cross_process=1"; do
	# shellcheck disable=SC2086 # no parameter, or two
	if insmod "$KO" $params; then
		upstream "with the module (${params:-its default groups})"
		rmmod kvm_statsfd
		ok $? "rmmod kvm_statsfd after it (${params:-default groups})"
	else
		ok 1 "insmod kvm_statsfd.ko $params"
	fi
done
tap_end
