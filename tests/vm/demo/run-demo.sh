#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The demo, inside the test guest (busybox sh): /init runs it in 'demo'
# mode with stdout and stderr on the results channel.  It loads
# kvm_statsfd.ko, starts demo-vm (2 vCPUs doing port I/O, MMIO and hlt) in
# the background and points kvm-statsfd at it.  Exit status 0 only if
# every step worked.

export PATH=/demo:/bin:/sbin
fail=0
VM_SECONDS=${VM_SECONDS:-40}	# upper bound; the VM is stopped when done

section() {
	echo
	echo "=== $*"
}

# run CMD...: echo the command line, run it, note a failure.
run() {
	echo "\$ $*"
	"$@"
	rc=$?
	if [ "$rc" != 0 ]; then
		echo "(exit status $rc)"
		fail=1
	fi
}

section "guest kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs"
echo "\$ insmod kvm_statsfd.ko"
if ! insmod "${KVM_STATSFD_KO:-/lib/modules/kvm_statsfd.ko}"; then
	echo "cannot load kvm_statsfd.ko"
	exit 1
fi
grep -E '^(kvm|kvm_amd|kvm_statsfd) ' /proc/modules | cut -d' ' -f1,3 | sed 's/^/  module /'

section "start a VM in the background: demo-vm, 2 vCPUs, one thread each"
echo "\$ demo-vm -name guest=demo1 -t $VM_SECONDS &"
demo-vm -name guest=demo1 -t "$VM_SECONDS" > /tmp/demo-vm.log 2>&1 &
vm=$!
i=0
until grep -q running /tmp/demo-vm.log 2>/dev/null; do
	i=$((i + 1))
	if [ $i -gt 100 ] || ! kill -0 $vm 2>/dev/null; then
		echo "demo-vm did not start:"
		cat /tmp/demo-vm.log
		exit 1
	fi
	sleep 0.1
done
cat /tmp/demo-vm.log
sleep 1		# let it run a little before looking

section "kvm-statsfd list: VMs found through /proc/*/fd"
run kvm-statsfd list

section "kvm-statsfd show $vm: every stat of the VM and its vCPUs"
run kvm-statsfd show $vm

section "kvm-statsfd watch $vm -i 1 -n 3: per-second rates, 3 frames"
# Into a file: the results channel is a serial tty, and on a tty watch
# would be its ncurses view.
echo "\$ kvm-statsfd watch $vm -i 1 -n 3 | cat"
kvm-statsfd watch $vm -i 1 -n 3 > /tmp/watch.out
rc=$?
cat /tmp/watch.out
[ "$rc" = 0 ] || { echo "(exit status $rc)"; fail=1; }

section "kvm-statsfd show $vm --json | head -n 25"
echo "\$ kvm-statsfd show $vm --json | head -n 25"
kvm-statsfd show $vm --json > /tmp/show.json
rc=$?
head -n 25 /tmp/show.json
[ "$rc" = 0 ] || { echo "(exit status $rc)"; fail=1; }

section "stop the VM"
echo "\$ kill $vm; wait"
kill $vm 2>/dev/null
wait $vm
rc=$?
sed 1d /tmp/demo-vm.log
[ "$rc" = 0 ] || { echo "demo-vm exited with status $rc"; fail=1; }
echo "\$ rmmod kvm_statsfd"
rmmod kvm_statsfd || fail=1

section "without the module: upstream KVM answers KVM_GET_STATS_FD only to the VMM itself"
# expect STATUS CMD...: run CMD, note a failure unless it exits STATUS.
expect() {
	want=$1
	shift
	echo "\$ $*"
	"$@"
	rc=$?
	echo "(exit status $rc)"
	[ "$rc" = "$want" ] || { echo "(expected $want)"; fail=1; }
}
demo-vm -name guest=plain -t 10 --like-qemu 7.2 > /tmp/plain.log 2>&1 &
p1=$!
demo-vm -name guest=qemu-like -t 10 --like-qemu 8.1 > /tmp/qemu-like.log 2>&1 &
p2=$!
sleep 1.5
echo "# $p1: a VMM holding no stats fd of its own (as QEMU 7.2): nothing to read, a clear error"
expect 1 kvm-statsfd show $p1 --vcpu 0
echo "# $p2: a VMM that keeps a stats fd per vCPU, as QEMU 8.1 and later do: they are borrowed"
echo "\$ kvm-statsfd show $p2 --vcpu 0 | grep -E '^vCPU| (exits|io_exits|mmio_exits|halt_exits) '"
kvm-statsfd show $p2 --vcpu 0 > /tmp/borrowed.out
rc=$?
grep -E '^vCPU| (exits|io_exits|mmio_exits|halt_exits) ' /tmp/borrowed.out
echo "(exit status $rc)"
[ "$rc" = 0 ] || { echo "(expected 0)"; fail=1; }
kill $p1 $p2 2>/dev/null
wait

exit $fail
