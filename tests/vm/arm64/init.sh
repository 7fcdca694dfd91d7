#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the arm64 smoke test's guest (tests/vm/arm64/smoke.sh): KVM's
# own stats, then the module's in its default and its stats=all loads,
# then KVM's own again after rmmod, and a clean kernel log.  Prints TAP
# lines without a plan, then "# guest done"; the host counts them.
/bin/busybox mkdir -p /proc /sys /dev /tmp /bin
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
# The module's live objects are counted in debugfs.
mount -t debugfs debugfs /sys/kernel/debug


tap() { # tap OK|FAIL DESCRIPTION [DETAIL]
	if [ "$1" = OK ]; then echo "ok - $2${3:+ # $3}"; else echo "not ok - $2${3:+ # $3}"; fi
}

# No VM or vCPU state of the module left once the program's VMs are gone
# (freed an RCU grace period after KVM destroys them).
no_leak() {
	for i in 1 2 3 4 5 6 7 8 9 10; do
		v=$(cat /sys/kernel/debug/kvm_statsfd/vms)
		[ "$v" = 0 ] && break
		sleep 0.1
	done
	if [ "$v" = 0 ]; then
		tap OK "$1: no VM state left"
	else
		tap FAIL "$1: no VM state left" "vms=$v"
		cat /sys/kernel/debug/kvm_statsfd/* 2>&1 | sed 's/^/# /'
	fi
}

load() {
	if insmod /kvm_statsfd.ko "$@"; then
		tap OK "insmod kvm_statsfd.ko $*"
	else
		tap FAIL "insmod kvm_statsfd.ko $*"
		return 1
	fi
}

unload() {
	if rmmod kvm_statsfd; then tap OK "rmmod kvm_statsfd"; else tap FAIL "rmmod kvm_statsfd"; fi
}

if [ -e /dev/kvm ]; then tap OK "/dev/kvm exists"; else tap FAIL "/dev/kvm exists"; fi
echo "# $(dmesg | grep -m1 -o 'kvm \[1\]: .*mode initialized.*')"
/kvm_smoke native /tmp/native
if load; then
	/kvm_smoke module /tmp/native
	no_leak "default groups"
	unload
fi
if load stats=all; then
	/kvm_smoke module /tmp/native
	no_leak "stats=all"
	unload
fi
# The ioctl route: KVM_GET_STATS_FD diverted at KVM's ioctl handlers.
if load cross_process=1; then
	if [ -c /dev/kvm-statsfd ]; then
		tap OK "/dev/kvm-statsfd exists"
	else
		tap FAIL "/dev/kvm-statsfd exists"
	fi
	/kvm_smoke module /tmp/native
	no_leak "cross_process=1"
	unload
fi
# A stats fd outlives its VM's own fds and pins the module.
if load; then
	/kvm_smoke hold /tmp/native > /tmp/hold 2>&1 &
	pid=$!
	i=0
	while ! grep -q '^# holding' /tmp/hold && [ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	cat /tmp/hold
	if rmmod kvm_statsfd 2>/dev/null; then
		tap FAIL "rmmod refused while a stats fd is open"
		load
	else
		tap OK "rmmod refused while a stats fd is open"
	fi
	kill "$pid"
	wait "$pid"
	no_leak "stats fds closed after their VM's fds"
	unload
fi
/kvm_smoke native /tmp/native
if dmesg | grep -E 'WARNING:|BUG:|Oops|Call trace:|Kernel panic|UBSAN|general protection' > /tmp/splat; then
	tap FAIL "kernel log: no WARN, BUG or splat"
	sed 's/^/# /' /tmp/splat
else
	tap OK "kernel log: no WARN, BUG or splat"
fi
dmesg | grep kvm_statsfd | sed 's/^/# /'
echo "# guest done"
poweroff -f
