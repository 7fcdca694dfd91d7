#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# /init of the test guest.  Loads KVM, runs every program in /tests and
# reports on a channel of its own, which carries nothing but what this
# script writes: the second serial port (ttyS1) on x86, a virtio console
# (hvc0, ks.report=hvc0) on arm64's virt machine, which has one UART.  The host believes a run only when the last line there
# is "@@ done <nonce>", with the nonce it put on the kernel command line:
# console noise on ttyS0 cannot fake a pass, and a guest that panics or hangs
# never gets to write it.

export PATH=/bin:/sbin:/usr/bin:/usr/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null

R=/dev/ttyS1
nonce=
mode=test
out=serial
late_pow=
then=
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	ks.nonce=*) nonce=${arg#ks.nonce=} ;;
	ks.report=*) R=/dev/${arg#ks.report=} ;;
	ks.mode=*) mode=${arg#ks.mode=} ;;
	ks.out=e9) out=e9 ;;
	ks.panic_on_warn=1) late_pow=1 ;;
	ks.then=*) then=${arg#ks.then=} ;;
	esac
done

# Where the boot ends and init begins in the kernel log (at level 3, so
# that it reaches the quiet console as well).  Under Bochs the
# stock kernel WARNs at boot, before init: that lane's judge reads the log
# only from this line on, and panic_on_warn is set here instead of on the
# command line (ks.panic_on_warn=1).
echo "<3>ks: init $nonce" > /dev/kmsg
[ -n "$late_pow" ] && echo 1 > /proc/sys/kernel/panic_on_warn

# Bochs (ks.out=e9): the report goes out through I/O port 0xE9, which is
# far faster there than a UART; markers are copied to the console too.
if [ "$out" = e9 ]; then
	mkfifo /tmp/.ks-report
	e9cat < /tmp/.ks-report &
	e9pid=$!
	exec 9> /tmp/.ks-report
	R=/tmp/.ks-report
fi

say() {
	echo "$*" > $R
	if [ "$out" = e9 ]; then echo "$*" > /dev/ttyS0; fi
}

# The end of what the host judges as one run: the kernel log since the
# last report (dmesg -c), the taint, the nonce.
report() {
	# Kernels with kmemleak (the debug lane): scan now, so a leak shows up
	# in the log the judge reads.  Twice: an object is reported only once
	# its contents stayed the same from one scan to the next (and it is
	# older than 5 s).
	km=/sys/kernel/debug/kmemleak
	[ -w $km ] && echo scan > $km && echo scan > $km
	say "@@ dmesg-begin"
	dmesg -c > $R
	[ -r $km ] && cat $km > $R
	say "@@ dmesg-end"
	say "@@ taint $(cat /proc/sys/kernel/tainted)"
	say "@@ done $nonce"
}

# segment NAME: what follows is judged apart from what went before, as the
# run NAME (tests/vm/split-segments.sh cuts the report and the console at
# these two markers).
segment() {
	say "@@ segment $1"
	echo "<3>ks: segment $1 $nonce" > /dev/kmsg
}

finish() {
	report
	if [ "$out" = e9 ]; then
		exec 9>&-
		i=0
		while kill -0 "$e9pid" 2>/dev/null && [ $i -lt 50 ]; do
			sleep 0.1
			i=$((i + 1))
		done
		sleep 1
	fi
	sync
	poweroff -f
}

say "@@ kernel $(uname -r) mode=$mode"
say "@@ taint-init $(cat /proc/sys/kernel/tainted)"

# KVM and its dependencies, in the order listed at build time for the
# vendor module this CPU needs.  Not for the debug kernel's detector
# self-test (detect): its module needs nothing of KVM.
load_kvm() {
	order=/lib/modules/load-order
	# arm64: KVM is built into the kernel (no load order, nothing to load).
	[ -f $order ] || { [ -c /dev/kvm ] || say "@@ error /dev/kvm is missing"; return; }
	if grep -qw svm /proc/cpuinfo; then
		[ -f $order.kvm_amd ] && order=$order.kvm_amd
	elif grep -qw vmx /proc/cpuinfo; then
		[ -f $order.kvm_intel ] && order=$order.kvm_intel
	fi
	for m in $(cat $order); do
		if ! insmod "/lib/modules/$m.ko"; then
			say "@@ error cannot load $m"
			finish
		fi
	done
	[ -c /dev/kvm ] || say "@@ error /dev/kvm is missing"
}
case "$mode" in
test | bench | demo) load_kvm ;;
esac

export KVM_STATSFD_KO=/lib/modules/kvm_statsfd.ko
# The module with its own fault points, where the lane has it
# (build_fault_module in tests/vm/lib.sh): fault_injection_test's.
[ ! -f /lib/modules/kvm_statsfd-faults.ko ] ||
	export KVM_STATSFD_FAULTS_KO=/lib/modules/kvm_statsfd-faults.ko
# Tests may unload and reload KVM here (never on a real host).
export KS_KVM_MODULES=/lib/modules

# The guest's uptime, and the time its CPUs were busy, in hundredths of a
# second (USER_HZ): the judge reports both for each program, to show where
# a lane's time goes (under TCG the busy time is what the host pays).
uptime_cs() {
	read -r up _ < /proc/uptime
	echo "${up%.*}${up#*.}"
}
busy_cs() {
	read -r _ user nice system _ _ irq softirq steal _ < /proc/stat
	echo $((user + nice + system + irq + softirq + steal))
}

# Run every program in a directory, each framed for the host's judge.
run_all() {
	for t in "$1"/*; do
		[ -x "$t" ] || continue
		name=${t##*/}
		t0=$(uptime_cs) b0=$(busy_cs)
		# The manifest's "cases" for this lane, if any (ks_harness.h).
		cases=
		[ -f /etc/ks-cases ] &&
			cases=$(sed -n "s/^$name //p" /etc/ks-cases)
		say "@@ begin $name"
		(cd /tmp && KS_CASES=$cases "$t") > $R 2>&1
		rc=$?
		say "@@ end $name rc=$rc cs=$(($(uptime_cs) - t0)) busy=$(($(busy_cs) - b0))"
	done
}

# The rig's self-test, in the boot that ran the tests (ks.then=warn), where
# a boot of its own costs too much (Bochs: about 50 s to init): once the
# tests' run is reported, a module that WARNs is loaded without
# panic_on_warn, then again with it; each must be judged a failure.
warn_selftest() {
	report
	segment warn-nopanic
	echo 0 > /proc/sys/kernel/panic_on_warn
	insmod /lib/modules/rig_warn.ko
	say "@@ rig_warn loaded rc=$?"
	report
	segment warn
	rmmod rig_warn
	echo 1 > /proc/sys/kernel/panic_on_warn
	insmod /lib/modules/rig_warn.ko
	say "@@ rig_warn loaded rc=$?"
}

case "$mode" in
test)
	run_all /tests
	[ "$then" = warn ] && warn_selftest
	;;
bench)
	run_all /bench
	;;
demo)
	/demo/run-demo.sh > $R 2>&1
	say "@@ demo rc=$?"
	;;
detect)
	# Rig self-test of the debug kernel: one deliberate bug per detector,
	# all in one boot, then BUG(), which ends it, in a segment of its own.
	for f in lockdep leak sleep ubsan kfence uaf; do
		insmod /lib/modules/rig_detect.ko fault=$f
		say "@@ rig_detect $f rc=$?"
		rmmod rig_detect 2>/dev/null
	done
	# The leaks must be older than 5 s, and seen unchanged by two scans
	# before kmemleak lists them.  A scan ends early, finding nothing,
	# when a signal is pending, so scan until they are listed (report
	# scans twice more).
	sleep 6
	for i in 1 2 3 4; do
		echo scan > /sys/kernel/debug/kmemleak
		grep -q unreferenced /sys/kernel/debug/kmemleak && break
	done
	report
	segment detect-bug
	insmod /lib/modules/rig_detect.ko fault=bug
	say "@@ rig_detect bug rc=$?"
	;;
esac

finish
