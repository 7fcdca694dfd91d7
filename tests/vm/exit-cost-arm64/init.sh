#!/bin/busybox sh
# shellcheck shell=dash
# SPDX-License-Identifier: GPL-2.0
#
# /init of the arm64 exit-cost guest (tests/vm/exit-cost-arm64/lane.sh),
# booted under -icount: the addresses the host needs to read KVM's
# dispatch out of the shipped kernel image, then the probe driver's
# calibration and the gate (tests/bench/exit-cost-gate-arm64), then the
# kernel log's verdict.  Lines for the host: "sym NAME ADDR NEXT_ADDR",
# TAP from the gate, "# guest done" at the end.
/bin/busybox mkdir -p /proc /sys /dev /tmp
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug

# The symbols the host's dispatch-count-arm64 reads: each with the
# address of the symbol after it (kallsyms lists vmlinux's in address
# order), the end of a function.
awk 'BEGIN {
	split("_text __start___jump_table __stop___jump_table " \
	      "__tracepoint_kvm_exit __tracepoint_kvm_entry " \
	      "__tracepoint_kvm_mmio __traceiter_kvm_exit " \
	      "__traceiter_kvm_entry __traceiter_kvm_mmio " \
	      "kvm_arch_vcpu_ioctl_run io_mem_abort handle_exit " \
	      "ktime_get_mono_fast_ns kvm_get_running_vcpu " \
	      "arch_counter_read arch_counter_get_cntpct", w, " ")
	for (i in w) want[w[i]] = 1
}
/\[/ { exit }
prev != "" && $1 != addr { print "sym", prev, addr, $1; prev = "" }
$3 in want && !seen[$3]++ { prev = $3; addr = $1 }' /proc/kallsyms

if /cost_arm64 insmod /ks_probe_driver.ko; then
	dmesg | grep -o 'ks_probe_driver: \(counter\|clock\): .*'
	# KVM takes a vCPU ioctl only from the VM's own mm; so must the
	# driver, whose vcpu_load() would otherwise write what KVM freed
	# when that mm went (an exec()ed gate oopsed at a later unload).
	if /cost_arm64 foreign; then
		echo "ok - the probe driver refuses a vCPU of another process's VM (EIO)"
	else
		echo "not ok - the probe driver refuses a vCPU of another process's VM (EIO)"
	fi
	/exit-cost-gate-arm64 /exit-cost-budget-arm64 /kvm_statsfd.ko
	rmmod ks_probe_driver
else
	echo "not ok - the probe driver loads"
fi
dmesg | grep 'kvm_statsfd: clock' | tail -n 1 | sed 's/^/# /'
# Anything the kernel complained of, and its taint (unsigned, out-of-tree
# modules taint O and E: 4096 + 8192; anything else is a finding).
bad=$(dmesg | grep -cE 'WARNING:|BUG:|Oops|Call trace:|RCU stall|lockup')
taint=$(cat /proc/sys/kernel/tainted)
if [ "$bad" = 0 ] && [ $((taint & ~12288)) = 0 ]; then
	echo "ok - kernel log clean, taint $taint"
else
	echo "not ok - kernel log clean, taint $taint ($bad lines)"
	dmesg | tail -n 60 | sed 's/^/# /'
fi
echo "# guest done"
poweroff -f
