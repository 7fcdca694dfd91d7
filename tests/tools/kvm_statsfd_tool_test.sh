#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest-side test of the kvm-statsfd command against real VMs (busybox sh).
# Prints TAP.  Needs root, /dev/kvm, kvm-statsfd and demo-vm in PATH (or
# $KVM_STATSFD / $DEMO_VM) and kvm_statsfd.ko at $KVM_STATSFD_KO.
#
#  1. (usage errors, a PID without a VM: on the host, tests/tools/host_test.sh)
#  2. "native", without the module: a VMM like QEMU 8.1 (demo-vm --like-qemu 8.1:
#     a stats fd kept per vCPU, none for the VM) is read through the vCPU
#     fds it keeps, exit 0, the VM's own stats reported unavailable; one
#     like QEMU 7.2 (no stats fd kept) gets exit 1 and the EIO message;
#  3. "module", with the module: a VMM like QEMU 8.1 started before the load is read
#     through the module's fresh fds, not its kept ones; list finds the VM
#     (like QEMU 8.1) and its 2 vCPUs, show --json has
#     exit_reasons_svm/_vmx/_arm64 per vCPU and for the VM (their sum), the
#     histogram total (arm64: exit_kinds_arm64's, as its exit_reasons
#     count only traps) matches the native "exits", values only grow,
#     reasons are named in human output, watch runs non-interactively.
# KS_CASES="native module" (or one of them) runs only those sections.
# The module is left loaded at the end only if it was loaded at the start.

PATH=$PATH:/bin:/sbin:$(dirname "$0")
export PATH
KS=${KVM_STATSFD:-kvm-statsfd}
VMM=${DEMO_VM:-demo-vm}
# Its VMs idle 200 ms at each HLT (HVC on arm64), as a guest does between
# timer ticks, not the 10 ms of demo-vm's default: with that, their vCPU
# threads kept the test guest's CPUs busy, most of the test's CPU time
# under the emulator.  A burst between two idles is 32 passes of the loop,
# so every check still sees exits of each kind within 0.5 s.
IDLE_MS=200
KO=${KVM_STATSFD_KO:-/lib/modules/kvm_statsfd.ko}
T=$(mktemp -d /tmp/kstool.XXXXXX)
# ok, skip, tap_end, section, start_vm, stop_bg, kill_bg: tests/lib/ks-tap.sh
# (in the guest's /bin).
. ks-tap.sh
was_loaded=0
grep -q '^kvm_statsfd ' /proc/modules && was_loaded=1

cleanup() {
	kill_bg
}
trap 'cleanup; rm -rf "$T"' EXIT

# Exit status of a command, its output in $T/out and $T/err.
st() {
	"$@" > "$T/out" 2> "$T/err"
	echo $?
}

# hist_sums FILE: "CTX exits N" and "CTX hist N" lines from show --json,
# CTX = vm or vcpuN; hist = sum of the buckets of the exit histogram that
# counts every exit: x86's exit-reason histogram, arm64's exit_kinds_arm64
# (an interrupt's exit has no exception class in exit_reasons_arm64).
hist_sums() {
	awk '
	/"vm": \{/ { ctx = "vm" }
	/"vcpu": [0-9]+/ { v = $0; gsub(/[^0-9]/, "", v); ctx = "vcpu" v }
	/"name": "/ { name = $0; sub(/.*"name": "/, "", name); sub(/".*/, "", name) }
	name == "exits" && /"value": / { v = $0; gsub(/[^0-9]/, "", v); print ctx, "exits", v }
	name ~ /^(vcpus_)?(exit_reasons_(svm|vmx)|exit_kinds_arm64)$/ && /"buckets": \[/ { inb = 1; sum = 0; next }
	inb && /\]/ { inb = 0; print ctx, "hist", sum; next }
	inb { v = $0; gsub(/[^0-9]/, "", v); sum += v }
	' "$1"
}

get() {	# get FILE CTX WHAT
	awk -v c="$2" -v w="$3" '$1 == c && $2 == w { print $3; f = 1 } END { if (!f) print -1 }' "$1"
}

echo "TAP version 13"

if [ ! -c /dev/kvm ] || ! command -v "$KS" > /dev/null || ! command -v "$VMM" > /dev/null; then
	skip "tool test" "needs /dev/kvm, $KS and $VMM"
	echo "1..1"
	exit 0
fi

# The command's usage and runtime errors need no VM: tests/tools/host_test.sh.

# --- 2. without the module ----------------------------------------------
# demo-vm --like-qemu keeps the stats fds that QEMU keeps (demo_vm.c): 8.1
# and later one per vCPU and none for the VM, 7.2 none.  Upstream KVM
# answers KVM_GET_STATS_FD only in the VMM: the tools borrow what it keeps.
# Section 3 starts from here too: a VMM started before the module's load.
if grep -q '^kvm_statsfd ' /proc/modules; then
	rmmod kvm_statsfd 2>/dev/null
fi
if section native; then
# Has the kernel binary stats of its own (KVM_CAP_BINARY_STATS_FD, 203)?
# Debian 11's 5.10 has none: there is nothing native to borrow.
native=$(ks-kvm-cap 203 2>/dev/null | cut -d' ' -f1)
NATIVE_CASES="native, like QEMU 8.1: show --json exits 0, each vCPU's exits from its borrowed stats fd, no module stats
native, like QEMU 8.1: show --json has no VM stats and says why (vm null, vm_unavailable, error null)
native, like QEMU 8.1: show notes on stderr that the VM's own stats are unavailable
native, like QEMU 8.1: show exits 0, prints the vCPUs, says the VM-wide stats are unavailable
native, like QEMU 7.2: nothing to borrow: show exits 1 with the EIO message
native, like QEMU 7.2: nothing to borrow: show --json exits 1, EIO in error"
# native_cases skip|fail DETAIL: every case of this section, one outcome.
native_cases() { all_cases "$1" "$2" "$NATIVE_CASES"; }
if grep -q '^kvm_statsfd ' /proc/modules; then
	native_cases skip "kvm_statsfd is loaded and cannot be unloaded"
elif [ "$native" = 0 ]; then
	# Both asks get a clear refusal from such a kernel, and demo-vm, like
	# QEMU, goes on without the stats fds the kernel does not give.
	for q in 8.1 7.2; do
		if start_vm "$T/vm-native.log" --hlt-ms "$IDLE_MS" -t 30 --like-qemu $q; then
			grep -q "like QEMU $q: 0 vCPU stats fds kept" "$T/vm-native.log"
			ok $? "native: no binary stats in this kernel: demo-vm like QEMU $q keeps no stats fd" \
				"$(cat "$T/vm-native.log")"
			r=$(st "$KS" show $vm)
			[ -s "$T/err" ]; g=$?
			ok $((r != 1 || g != 0)) "native: no binary stats in this kernel, like QEMU $q: show exits 1 and says why" \
				"status $r" "$(cat "$T/err")"
			r=$(st "$KS" show $vm --json)
			[ -s "$T/err" ] && grep -q '"error": "' "$T/out"; g=$?
			ok $((r != 1 || g != 0)) "native: no binary stats in this kernel, like QEMU $q: show --json exits 1 and says why" \
				"status $r" "$(cat "$T/err")"
			stop_bg $vm
		else
			for t in 1 2 3; do ok 1 "native: no binary stats in this kernel, like QEMU $q ($t)" "demo-vm did not start"; done
		fi
	done
elif start_vm "$T/vm-native.log" --hlt-ms "$IDLE_MS" -name guest=native -t 30 --like-qemu 8.1; then
	sleep 0.5
	r=$(st "$KS" show $vm --json)
	cp "$T/out" "$T/native81.json"
	cp "$T/err" "$T/native81.err"
	hist_sums "$T/native81.json" > "$T/sums"
	e0=$(get "$T/sums" vcpu0 exits) e1=$(get "$T/sums" vcpu1 exits)
	h=$(get "$T/sums" vcpu0 hist)
	ok $((r != 0 || e0 <= 0 || e1 <= 0 || h != -1)) \
		"native, like QEMU 8.1: show --json exits 0, each vCPU's exits from its borrowed stats fd, no module stats" \
		"status $r, exits vcpu0 $e0 vcpu1 $e1, module histogram $h" "$(cat "$T/err")"
	grep -q '"vm": null' "$T/native81.json" && grep -q '"error": null' "$T/native81.json" &&
		grep -q "\"vm_unavailable\": \"the VM's own stats are unavailable: KVM refuses KVM_GET_STATS_FD from outside the VMM process (EIO)" "$T/native81.json"
	ok $? "native, like QEMU 8.1: show --json has no VM stats and says why (vm null, vm_unavailable, error null)" \
		"$(grep -E '"(vm|error|vm_unavailable)":' "$T/native81.json")"
	grep -q "^kvm-statsfd: note: pid $vm: the VM's own stats are unavailable: .*(EIO).*QEMU.*8.1.*kvm_statsfd.ko" "$T/native81.err"
	ok $? "native, like QEMU 8.1: show notes on stderr that the VM's own stats are unavailable" \
		"$(cat "$T/native81.err")"
	r=$(st "$KS" show $vm)
	grep -q '^vCPU 0: ' "$T/out" && grep -q '^vCPU 1: ' "$T/out" &&
		grep -q '^  VM-wide stats: unavailable' "$T/out" && grep -q 'note: pid' "$T/err"
	ok $((r != 0 || $? != 0)) "native, like QEMU 8.1: show exits 0, prints the vCPUs, says the VM-wide stats are unavailable" \
		"status $r" "$(head -n 3 "$T/out")" "$(cat "$T/err")"
	stop_bg $vm
	if start_vm "$T/vm-native2.log" --hlt-ms "$IDLE_MS" -t 30 --like-qemu 7.2; then
		r=$(st "$KS" show $vm)
		grep -q "EIO" "$T/err"; g=$?
		ok $((r != 1 || g != 0)) "native, like QEMU 7.2: nothing to borrow: show exits 1 with the EIO message" \
			"status $r" "$(cat "$T/err")"
		r=$(st "$KS" show $vm --json)
		grep -q "EIO" "$T/err" && grep -q '"error": ".*(EIO)' "$T/out"; g=$?
		ok $((r != 1 || g != 0)) "native, like QEMU 7.2: nothing to borrow: show --json exits 1, EIO in error" \
			"status $r" "$(cat "$T/err")"
		stop_bg $vm
	else
		ok 1 "native, like QEMU 7.2: nothing to borrow: show exits 1 with the EIO message" "demo-vm did not start"
		ok 1 "native, like QEMU 7.2: nothing to borrow: show --json exits 1, EIO in error" "demo-vm did not start"
	fi
else
	native_cases fail "demo-vm did not start"
fi
fi

# --- 3. with the module --------------------------------------------------
# The plain load serves other processes' VMs through /dev/kvm-statsfd
# (to root here); KVM_GET_STATS_FD itself keeps KVM's rule, so no
# cross_process=1 is needed.
# A VMM like QEMU 8.1 started before the load keeps vCPU stats fds that
# have only KVM's stats: the module's fresh ones must be taken instead.
early=
start_vm "$T/vm-early.log" --hlt-ms "$IDLE_MS" -name guest=early -t 600 --like-qemu 8.1 && early=$vm
if [ "$(cat /sys/module/kvm_statsfd/parameters/cross_process 2>/dev/null)" != N ]; then
	rmmod kvm_statsfd 2>/dev/null
	insmod "$KO" stats=all
fi
grep -q '^kvm_statsfd ' /proc/modules; ok $? "module: kvm_statsfd loaded, no cross_process"
[ -c /dev/kvm-statsfd ]; ok $? "module: /dev/kvm-statsfd is there for agents"
if [ -n "$early" ]; then
	r=$(st "$KS" show $early --json)
	hist_sums "$T/out" > "$T/sums-early"
	he=$(get "$T/sums-early" vcpu0 hist) hv=$(get "$T/sums-early" vm hist)
	grep -q '"vm_unavailable": null' "$T/out"; g=$?
	ok $((r != 0 || he == -1 || hv == -1 || g != 0)) \
		"module: a VMM like QEMU 8.1 started before the load: its vCPUs and VM read through the module's fresh fds, not its kept ones" \
		"status $r, module histogram in vCPU 0 $he, VM $hv" "$(cat "$T/err")"
	stop_bg $early
else
	ok 1 "module: a VMM like QEMU 8.1 started before the load: read through the module's fresh fds" \
		"demo-vm did not start"
fi

# The test stops this VM itself; -t is only a backstop (on the debug
# kernel with other lanes beside it, 40 s ran out before the watch tests).
# Like QEMU 8.1: the VMM keeps vCPU stats fds, which the tools could borrow.
start_vm "$T/vm.log" --hlt-ms "$IDLE_MS" -name guest=tooltest -t 600 --like-qemu 8.1
ok $? "module: demo-vm with 2 vCPUs started (like QEMU 8.1)"
sleep 1
# On PREEMPT_RT the module counts a vCPU only from its first stats fd
# (Documentation/design.rst): like QEMU 8.1, demo-vm took each vCPU's
# before its first KVM_RUN, so KVM and the module count the same exits
# there too.

r=$(st "$KS" list)
line=$(awk -v p=$vm '$1 == p' "$T/out")
# shellcheck disable=SC2086 # split the line into fields
set -- $line
ok $((r != 0)) "list exits 0"
[ "$2" = demo-vm ] && [ "$3" = tooltest ] && [ "$4" = 1 ] && [ "$5" = 2 ]
ok $? "list: pid $vm, demo-vm, guest tooltest, 1 VM fd, 2 vCPUs" "line: '$line'" "$(cat "$T/out")"

r=$(st "$KS" list --json)
grep -q "\"pid\": $vm," "$T/out" && grep -q '"vcpu_count": 2' "$T/out" &&
	grep -q '"schema": "kvm-statsfd/1"' "$T/out"
ok $((r != 0 || $? != 0)) "list --json: schema, pid and vcpu_count" "status $r"

# Stopped (SIGSTOP, every vCPU thread out of KVM_RUN), the VM's counters
# hold still: the sums below are exact.
freeze_vm $vm; frozen=$?
r=$(st "$KS" show $vm --json)
cp "$T/out" "$T/show1.json"
hist_sums "$T/show1.json" > "$T/sums1"
ok $((r != 0)) "show --json exits 0" "status $r" "$(cat "$T/err")"
h0=$(get "$T/sums1" vcpu0 hist) h1=$(get "$T/sums1" vcpu1 hist) hv=$(get "$T/sums1" vm hist)
e0=$(get "$T/sums1" vcpu0 exits)
ok $((h0 <= 0 || h1 <= 0)) "show --json: each vCPU's exit-reason histogram is non-zero" \
	"vcpu0 $h0, vcpu1 $h1"
s=$((h0 + h1))
ok $((frozen != 0 || hv <= 0 || hv != s)) \
	"show --json: VM histogram = sum over vCPUs" \
	"vm $hv, vcpus $h0 + $h1 = $s (VMM stopped: status $frozen)"
ok $((frozen != 0 || e0 <= 0 || e0 != h0)) \
	"show --json: vCPU 0 histogram total = native exits" \
	"exits $e0, histogram $h0 (VMM stopped: status $frozen)"
# The kernel's names of the demo guest's I/O and nested-page-fault exits,
# for the vendor the module reports (its exit-reason stat's name); on
# arm64, its MMIO writes (DABT_LOW) and trapped ID register reads (SYS64),
# and the stats of its I/O, whose names start with IO_STATS.
IO_STATS=io_
if grep -q 'exit_reasons_vmx' "$T/show1.json"; then
	IO_NAME=IO_INSTRUCTION NPF_RE='EPT_(MISCONFIG|VIOLATION)'
elif grep -q 'exit_reasons_arm64' "$T/show1.json"; then
	IO_NAME=DABT_LOW NPF_RE=SYS64 IO_STATS=mmio_
else
	IO_NAME=io NPF_RE=npf
fi
grep -q '"reasons": {' "$T/show1.json" && grep -q "\"$IO_NAME\": [1-9]" "$T/show1.json"
ok $? "show --json: reasons by the kernel's name ($IO_NAME: SVM_EXIT_IOIO, EXIT_REASON_IO_INSTRUCTION or ESR_ELx_EC_DABT_LOW)"
kill -CONT $vm

sleep 0.5
r=$(st "$KS" show $vm --json)
hist_sums "$T/out" > "$T/sums2"
m0=$(get "$T/sums2" vcpu0 hist) f0=$(get "$T/sums2" vcpu0 exits)
ok $((m0 <= h0 || f0 < e0)) "show --json twice: counters grow" \
	"hist $h0 -> $m0, exits $e0 -> $f0"

r=$(st "$KS" show $vm)
line=$(grep -m1 'exit_reasons_' "$T/out")
printf '%s\n' "$line" | grep -Eq "[:,] $IO_NAME [0-9]" &&
	printf '%s\n' "$line" | grep -Eq "[:,] $NPF_RE [0-9]"
ok $? "show: exit reasons by the kernel's name ($IO_NAME, $NPF_RE)" "status $r, '$line'"

r=$(st "$KS" show $vm --vcpu 1 --json)
grep -q '"vm": null' "$T/out" && grep -q '"vcpu": 1' "$T/out" && ! grep -q '"vcpu": 0' "$T/out"
ok $((r != 0 || $? != 0)) "show --vcpu 1 --json: only vCPU 1, no VM stats" "status $r"
r=$(st "$KS" show $vm --vcpu 7); ok $((r != 1)) "show --vcpu 7 (no such vCPU) exits 1" "got $r"

r=$(st "$KS" watch $vm -i 0.5 -n 2)
frames=$(grep -c '^kvm-statsfd watch: .* frame' "$T/out")
esc=$(tr -dc '\033' < "$T/out" | wc -c)
# The busiest reason comes first, right after the colon.
grep -Eq "exit reasons/s:(.*,)? $IO_NAME ([0-9]|<1)" "$T/out"; g=$?
ok $((r != 0 || frames != 2 || esc != 0 || g != 0)) \
	"watch -n 2 without a tty: 2 frames, no escapes, reasons by name" \
	"status $r, frames $frames, escapes $esc" "$(head -n 12 "$T/out")"

# kvm_stat's filters: -f by stat name, -g by guest.
r=$(st "$KS" watch $vm -i 0.3 -n 2 -f "^$IO_STATS")
grep -q "counters/s: $IO_STATS" "$T/out" && ! grep -q 'counters/s:.* exits ' "$T/out" &&
	! grep -q 'exit reasons/s' "$T/out"
ok $((r != 0 || $? != 0)) "watch -f '^$IO_STATS': only the $IO_STATS* stats" "status $r" "$(head -n 8 "$T/out")"
r=$(st "$KS" watch -i 0.3 -n 1 -g '^tooltest$')
grep -q "^PID $vm demo-vm guest tooltest" "$T/out"
ok $((r != 0 || $? != 0)) "watch -g '^tooltest\$': the VM by its guest name" "status $r" "$(head -n 4 "$T/out")"
r=$(st "$KS" watch -i 0.3 -n 1 -g nomatch)
grep -q "no VM matches" "$T/err"
ok $((r != 1 || $? != 0)) "watch -g nomatch: status 1, says so" "status $r: $(cat "$T/err")"

# A VM that starts while watch runs joins the view.
first=$vm
"$KS" watch -i 0.5 -n 8 -g 'tooltest' > "$T/w2" 2>&1 &
wpid=$!
bg_pids="$bg_pids $wpid"
sleep 1
if start_vm "$T/vm2.log" --hlt-ms "$IDLE_MS" -name guest=tooltest2 -t 20; then
	wait $wpid; r=$?
	forget_bg $wpid
	grep -q "^PID $vm demo-vm guest tooltest2" "$T/w2" &&
		grep -q "^kvm-statsfd watch: 2 VMs" "$T/w2"
	ok $((r != 0 || $? != 0)) "watch picks up a VM started after it" \
		"status $r" "$(grep '^kvm-statsfd watch\|^PID' "$T/w2" | tail -n 4)"
	stop_bg $vm
else
	ok 1 "watch picks up a VM started after it" "second demo-vm did not start"
fi
vm=$first

stop_bg $vm
r=$(st "$KS" show $vm); ok $((r != 1)) "show of an exited VMM exits 1" "got $r"

cleanup
# Our stats fds and the VMMs are gone: nothing may pin the module.
rmmod kvm_statsfd; ok $? "module unloads after the test"
[ $was_loaded = 1 ] && insmod "$KO" stats=all
tap_end
