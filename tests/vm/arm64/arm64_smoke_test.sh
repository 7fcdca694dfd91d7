#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# arm64 guest test (busybox sh, TAP): a VM with known work (kvm_smoke, in
# the guest's /bin) and its stats fds: KVM's own, then the module's in its
# default, its stats=all and its cross_process=1 loads, with exact counts
# per exit class (HVC64, DABT_LOW, SYS64, WFx), per kind, per MMIO and
# system-register direction and per WFI and WFE, and of KVM_RUN's EINTR
# returns (the virtual timer's wake-ups); a stats fd that outlives its VM's fds pins
# the module; no VM state is left after any of them; KVM serves its own
# file again after rmmod.  The kernel log is the rig's judge's to read.
# Needs root, /dev/kvm and kvm_statsfd.ko at $KVM_STATSFD_KO, unloaded.

PATH=$PATH:/bin:/sbin
KO=${KVM_STATSFD_KO:-/lib/modules/kvm_statsfd.ko}
T=$(mktemp -d /tmp/ksmoke.XXXXXX)
# ok, tap_end, stop_bg, kill_bg: tests/lib/ks-tap.sh (the guest's /bin).
# shellcheck source=../../lib/ks-tap.sh
. ks-tap.sh
trap 'kill_bg; rm -rf "$T"' EXIT

# smoke MODE: kvm_smoke's TAP lines (unnumbered) as this test's cases.
smoke() {
	kvm_smoke "$1" "$T/native" > "$T/smoke" 2>&1
	rc=$?
	while IFS= read -r line; do
		case "$line" in
		"ok - "*) ok 0 "$1: ${line#ok - }" ;;
		"not ok - "*) ok 1 "$1: ${line#not ok - }" ;;
		"# "*) echo "$line" ;;
		esac
	done < "$T/smoke"
	ok "$rc" "kvm_smoke $1 exits 0" "status $rc" "$(tail -n 3 "$T/smoke")"
}

# No VM or vCPU state of the module left once the program's VMs are gone
# (freed an RCU grace period after KVM destroys them).
no_leak() {
	i=0
	while v=$(cat /sys/kernel/debug/kvm_statsfd/vms) && [ "$v" != 0 ] &&
		[ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	ok "$([ "$v" = 0 ]; echo $?)" "$1: no VM state left" "vms=$v"
}

load() {
	insmod "$KO" "$@"
	r=$?
	ok $r "insmod kvm_statsfd.ko $*"
	return $r
}

unload() {
	rmmod kvm_statsfd
	ok $? "rmmod kvm_statsfd"
}

if grep -q '^kvm_statsfd ' /proc/modules; then
	ok 1 "kvm_statsfd is not loaded at the start" "a test before left it"
	tap_end
fi
smoke native
for params in "" stats=all cross_process=1; do
	# shellcheck disable=SC2086 # no parameter, or one
	load $params || continue
	if [ "$params" = cross_process=1 ]; then
		# The ioctl route: KVM_GET_STATS_FD diverted at KVM's handlers.
		[ -c /dev/kvm-statsfd ]
		ok $? "/dev/kvm-statsfd exists with cross_process=1"
	fi
	smoke module
	no_leak "${params:-default groups}"
	unload
done

# A stats fd outlives its VM's own fds and pins the module.
if load; then
	kvm_smoke hold "$T/native" > "$T/hold" 2>&1 &
	pid=$!
	bg_pids="$bg_pids $pid"
	i=0
	while ! grep -q '^# holding' "$T/hold" && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	grep -q '^ok - stats fds to hold' "$T/hold"
	ok $? "kvm_smoke holds the stats fds of its VM" "$(cat "$T/hold")"
	if rmmod kvm_statsfd 2>/dev/null; then
		ok 1 "rmmod refused while a stats fd is open"
		load
	else
		ok 0 "rmmod refused while a stats fd is open"
	fi
	stop_bg "$pid"
	no_leak "stats fds closed after their VM's fds"
	unload
fi
# KVM's own file again, as before the module.
smoke native
tap_end
