#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest-side test of kvm-statsfd-exporter against real VMs, over real HTTP
# (busybox sh and wget).  Prints TAP.  Needs root, /dev/kvm,
# kvm-statsfd-exporter, kvm-statsfd and demo-vm in PATH (or
# $KVM_STATSFD_EXPORTER, $KVM_STATSFD, $DEMO_VM) and kvm_statsfd.ko at
# $KVM_STATSFD_KO.
#
#  1. a second exporter on a busy port exits 1, unknown paths are 404;
#  2. without the module (if it can be unloaded): a VMM like QEMU 8.1
#     (demo-vm --like-qemu 8.1: a stats fd kept per vCPU, none for the VM)
#     has its vCPUs exported through the fds it keeps, native stats only,
#     and kvm_vm_stats_available 0 with a note on stderr; one like QEMU 7.2
#     (none kept) has nothing exported, the EIO message and one error;
#  3. with the module: a VM started after the exporter shows up on the next
#     scrape with pid/name/vcpu labels; values agree with
#     `kvm-statsfd show --json` read between two scrapes; histograms have
#     cumulative buckets, +Inf == _count and _sum == the companion total;
#     nothing counted decreases from one scrape to the next; the stats fds
#     stay the same fds across scrapes; when the VM exits its fds are closed
#     and its series are gone; SIGTERM stops the exporter with status 0;
#  4. Debian's Prometheus, run in the guest (/opt/prometheus), scrapes the
#     live exporter and its HTTP API returns the stopped VM's counts that
#     `kvm-statsfd show --json` reads.
# The first scrape with the module is printed between "# exporter-metrics-
# begin" and "# exporter-metrics-end" as "# | " lines, for the host to run
# promtool on (tests/exporter/promtool-guest.sh).
# The exits it follows are the demo guest's (demo_vm.c): on x86 (AMD SVM)
# its port writes; on arm64 its MMIO writes, and its HVCs as the exception
# class it checks by name (uname -m picks them).
# KS_CASES="module native prometheus" (or some of them) runs only those
# parts: native is part 2, prometheus part 4; module (parts 1 and 3) runs
# in any case, as the others need its VM or its module load.
# The module is left loaded at the end only if it was loaded at the start.

PATH=$PATH:/bin:/sbin:$(dirname "$0")
export PATH
EXP=${KVM_STATSFD_EXPORTER:-kvm-statsfd-exporter}
KS=${KVM_STATSFD:-kvm-statsfd}
VMM=${DEMO_VM:-demo-vm}
KO=${KVM_STATSFD_KO:-/lib/modules/kvm_statsfd.ko}
PORT=${EXPORTER_TEST_PORT:-19798}
URL=http://127.0.0.1:$PORT
T=$(mktemp -d /tmp/kstexp.XXXXXX)
# ok, skip, tap_end, section, start_vm, stop_bg, kill_bg: tests/lib/ks-tap.sh
# (in the guest's /bin).
. ks-tap.sh
was_loaded=0
grep -q '^kvm_statsfd ' /proc/modules && was_loaded=1

cleanup() {
	kill_bg
}
trap 'cleanup; rm -rf "$T"' EXIT

# The demo guest's exits by architecture: the vendor label, the reason
# (an exit reason, or arm64's exception class) with its vendor's number
# of buckets, a class that is that reason alone (on arm64 the guest's
# only hypercalls are its HVCs; DABT_LOW's class npf also has IABT_LOW's
# stage-2 faults), the userspace exit and I/O stat of its writes, and
# their latency class.
case "$(uname -m)" in
aarch64)
	VENDOR=arm64 VNAME=arm64 NREASONS=64 REASON=HVC64 CLASS=hypercall
	UEXIT=KVM_EXIT_MMIO IOSTAT=mmio_writes LAT=mmio ;;
*)
	VENDOR=svm VNAME=SVM NREASONS=120 REASON=io CLASS=io
	UEXIT=KVM_EXIT_IO IOSTAT=io_out_exits LAT=io ;;
esac
# How long demo-vm idles at each HLT (HVC on arm64): 200 ms, not its
# default 10.  Under TCG its two vCPUs, spinning on exits, took both of
# the guest's CPUs, and every awk over a scrape waited for them (this
# test alone in the arm64 guest: 34 s and 51 guest CPU-seconds with 10,
# 11 and 10 with 200; 2026-12-07).
HLT_MS=200

# start_exporter LOG: the exporter in the background, $exp once it answers.
start_exporter() {
	"$EXP" --listen "127.0.0.1:$PORT" --vcpu --collect all --exit-reasons all \
		-v 2> "$1" &
	exp=$!
	bg_pids="$bg_pids $exp"
	i=0
	until wget -q -O /dev/null "$URL/" 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 100 ] || ! kill -0 "$exp" 2>/dev/null; then
			echo "# exporter did not start:"
			sed 's/^/#   /' "$1"
			return 1
		fi
		sleep 0.1
	done
	return 0
}

scrape() {	# scrape FILE
	wget -q -O "$1" "$URL/metrics"
}

# val FILE SERIES: value of the sample whose name{labels} is SERIES, or "".
val() {
	awk -v s="$2" 'index($0, s " ") == 1 { print $NF; exit }' "$1"
}

# stats_fds PID: "fd link" of each KVM stats fd PID holds, sorted.
stats_fds() {
	for f in /proc/"$1"/fd/*; do
		l=$(readlink "$f" 2>/dev/null) || continue
		case "$l" in
		anon_inode:kvm-*stats*) echo "${f##*/} $l" ;;
		esac
	done | sort
}

# hist_check FILE: one line per histogram series that is broken (buckets
# not cumulative, le not increasing, +Inf != _count, no _sum); prints the
# number of series checked last.
hist_check() {
	awk '
	/^# TYPE / { type[$3] = $4; next }
	/^#/ { next }
	{
		name = $0; sub(/\{.*/, "", name)
		labels = $0; sub(/^[^{]*\{/, "", labels); sub(/\} [^ ]*$/, "", labels)
		v = $NF
		fam = name
		if (sub(/_bucket$/, "", fam) || sub(/_count$/, "", fam) || sub(/_sum$/, "", fam)) {
			if (type[fam] != "histogram") next
		} else next
		key = labels; le = ""
		if (match(key, /,le="[^"]*"$/)) {
			le = substr(key, RSTART + 5, RLENGTH - 6); key = substr(key, 1, RSTART - 1)
		}
		k = fam "{" key "}"
		if (!(k in seen)) { seen[k] = 1; order[++ns] = k; last[k] = -1; lastle[k] = -1 }
		if (name ~ /_bucket$/) {
			lev = (le == "+Inf") ? 1e308 : le + 0
			if (lev <= lastle[k] || v + 0 < last[k]) bad[k] = bad[k] " not-cumulative@" le
			lastle[k] = lev; last[k] = v + 0
			if (le == "+Inf") inf[k] = v
		} else if (name ~ /_count$/) cnt[k] = v
		else sum[k] = v
	}
	END {
		for (i = 1; i <= ns; i++) {
			k = order[i]
			if (!(k in inf)) bad[k] = bad[k] " no+Inf"
			if (!(k in cnt)) bad[k] = bad[k] " no_count"
			else if (inf[k] != cnt[k]) bad[k] = bad[k] " +Inf(" inf[k] ")!=_count(" cnt[k] ")"
			if (!(k in sum)) bad[k] = bad[k] " no_sum"
			if (bad[k] != "") print "bad " k bad[k]
		}
		print "series " ns
	}' "$1"
}

# not_decreasing OLD NEW: compares every counter and histogram sample in
# both; prints "down SERIES OLD NEW" lines, then "compared N up M".
not_decreasing() {
	awk '
	FNR == 1 { f++ }
	/^# TYPE / { type[$3] = $4; next }
	/^#/ { next }
	{
		name = $0; sub(/\{.*/, "", name); sub(/ .*/, "", name)
		fam = name
		if (type[fam] != "counter") {
			sub(/_(bucket|sum|count)$/, "", fam)
			if (type[fam] != "histogram") next
		}
		s = $0; sub(/ [^ ]*$/, "", s)
		if (f == 1) old[s] = $NF
		else if (s in old) {
			c++
			if ($NF + 0 < old[s] + 0) print "down", s, old[s], $NF
			if ($NF + 0 > old[s] + 0) up++
		}
	}
	END { print "compared", c + 0, "up", up + 0 }' "$1" "$2"
}

# Exit status of a command, its output in $T/out and $T/err.
st() {
	"$@" > "$T/out" 2> "$T/err"
	echo $?
}

echo "TAP version 13"

if [ ! -c /dev/kvm ] || ! command -v "$EXP" > /dev/null ||
	! command -v "$KS" > /dev/null || ! command -v "$VMM" > /dev/null; then
	skip "exporter test" "needs /dev/kvm, $EXP, $KS and $VMM"
	echo "1..1"
	exit 0
fi

# The test guest's init does not bring up the loopback interface.
if ! ip addr show lo 2>/dev/null | grep -q 'inet 127\.0\.0\.1'; then
	ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up 2>/dev/null
fi

# --- 1. HTTP basics ----------------------------------------------------------
# (The usage errors are userspace only: tests/tools/host_test.sh.)

# --- 2. without the module -------------------------------------------------
# demo-vm --like-qemu keeps the stats fds that QEMU keeps (demo_vm.c): 8.1
# and later one per vCPU and none for the VM, 7.2 none.
if grep -q '^kvm_statsfd ' /proc/modules; then
	rmmod kvm_statsfd 2>/dev/null
fi
if section native; then
# Has the kernel binary stats of its own (KVM_CAP_BINARY_STATS_FD, 203)?
# Debian 11's 5.10 has none: the exporter can only say it has no stats.
native=$(ks-kvm-cap 203 2>/dev/null | cut -d' ' -f1)
NATIVE_CASES="native, like QEMU 8.1: each vCPU's stats exported from its borrowed stats fd, no module stats
native, like QEMU 8.1: the VM's own stats reported unavailable (kvm_vm_stats_available 0, no VM stat series)
native, like QEMU 8.1: a note on stderr says why, no error counted
native, like QEMU 7.2: nothing to borrow: no stats exported, the EIO message on stderr, one error counted"
# native_cases skip|fail DETAIL: every case of this section, one outcome.
native_cases() { all_cases "$1" "$2" "$NATIVE_CASES"; }
# vm_series FILE VM: the VM's kvm_vm_* samples but kvm_vm_info and
# kvm_vm_stats_available, i.e. the VM's own stats.
vm_series() {
	grep "^kvm_vm_.*{vm=\"$2\"" "$1" | grep -v '^kvm_vm_info{\|^kvm_vm_stats_available{'
}
if grep -q '^kvm_statsfd ' /proc/modules; then
	native_cases skip "kvm_statsfd is loaded and cannot be unloaded"
elif ! start_exporter "$T/exp-native.err"; then
	native_cases fail "exporter did not start"
elif [ "$native" = 0 ]; then
	# Nothing to read with either, and demo-vm, like QEMU, goes on
	# without the stats fds the kernel does not give.
	vm81='' vm72=''
	start_vm "$T/vm-native.log" -name guest=native -t 60 --like-qemu 8.1 --hlt-ms "$HLT_MS" && vm81=$vm
	start_vm "$T/vm-native2.log" -name guest=native72 -t 60 --hlt-ms "$HLT_MS" && vm72=$vm
	if [ -n "$vm81" ] && [ -n "$vm72" ]; then
		sleep 0.5
		scrape "$T/native"; r=$?
		grep -q "^kvm_vcpu_" "$T/native"; g=$?
		ok $((r != 0 || g == 0)) \
			"native: no binary stats in this kernel: the scrape answers, with no vCPU stats (like QEMU 8.1 and 7.2)" \
			"wget $r" "$(cat "$T/exp-native.err")"
		[ "$(val "$T/native" "kvm_vm_stats_available{vm=\"root/native\"}")" = 0 ] &&
			[ "$(val "$T/native" "kvm_vm_stats_available{vm=\"root/native72\"}")" = 0 ] &&
			[ -z "$(vm_series "$T/native" root/native)" ]
		ok $? "native: no binary stats in this kernel: kvm_vm_stats_available 0, no VM stat series" \
			"$(grep '^kvm_vm_' "$T/native" | head -n 5)"
		grep -q "pid $vm81 vCPU 0: .*(EIO)" "$T/exp-native.err" &&
			grep -q "pid $vm72 vCPU 0: .*(EIO)" "$T/exp-native.err"
		ok $? "native: no binary stats in this kernel: the EIO message on stderr for each VMM" \
			"$(cat "$T/exp-native.err")"
		[ "$(val "$T/native" kvm_exporter_errors_total)" = 2 ]
		ok $? "native: no binary stats in this kernel: one error counted per VMM" \
			"$(grep '^kvm_exporter_errors_total' "$T/native")"
	else
		native_cases fail "demo-vm did not start"
	fi
	for p in $vm81 $vm72; do stop_bg "$p"; done
	stop_bg "$exp"
else
	if start_vm "$T/vm-native.log" -name guest=native -t 60 --like-qemu 8.1 --hlt-ms "$HLT_MS"; then
		sleep 0.5
		scrape "$T/native"; r=$?
		e0=$(val "$T/native" "kvm_vcpu_exits_total{vm=\"root/native\",vcpu=\"0\"}")
		e1=$(val "$T/native" "kvm_vcpu_exits_total{vm=\"root/native\",vcpu=\"1\"}")
		grep -q "^kvm_vcpu_exits_by_reason_total" "$T/native"; g=$?
		ok $((r != 0 || ${e0:-0} <= 0 || ${e1:-0} <= 0 || g == 0)) \
			"native, like QEMU 8.1: each vCPU's stats exported from its borrowed stats fd, no module stats" \
			"wget $r, exits '$e0' '$e1'" "$(cat "$T/exp-native.err")"
		[ "$(val "$T/native" "kvm_vm_stats_available{vm=\"root/native\"}")" = 0 ] &&
			[ -z "$(vm_series "$T/native" root/native)" ]
		ok $? "native, like QEMU 8.1: the VM's own stats reported unavailable (kvm_vm_stats_available 0, no VM stat series)" \
			"$(grep '^kvm_vm_' "$T/native" | head -n 5)"
		grep -q "note: pid $vm: the VM's own stats are unavailable: .*(EIO).*QEMU.*kvm_statsfd.ko.*exported from the stats fds the VMM keeps" "$T/exp-native.err" &&
			[ "$(val "$T/native" kvm_exporter_errors_total)" = 0 ]
		ok $? "native, like QEMU 8.1: a note on stderr says why, no error counted" \
			"$(cat "$T/exp-native.err")" "$(grep '^kvm_exporter_errors_total' "$T/native")"
		stop_bg "$vm"
	else
		for t in 1 2 3; do ok 1 "native, like QEMU 8.1 ($t)" "demo-vm did not start"; done
	fi
	if start_vm "$T/vm-native2.log" -name guest=native72 -t 60 --like-qemu 7.2 --hlt-ms "$HLT_MS"; then
		sleep 0.5
		scrape "$T/native72"; r=$?
		grep -q "^kvm_vcpu_.*{vm=\"root/native72\"" "$T/native72"; g=$?
		a=$(val "$T/native72" "kvm_vm_stats_available{vm=\"root/native72\"}")
		grep -q "pid $vm vCPU 0: KVM refused KVM_GET_STATS_FD from outside the VMM process (EIO)" "$T/exp-native.err" &&
			[ "$(val "$T/native72" kvm_exporter_errors_total)" = 1 ] &&
			[ -z "$(vm_series "$T/native72" root/native72)" ] && [ "$a" = 0 ] && [ $g != 0 ]
		ok $((r != 0 || $? != 0)) \
			"native, like QEMU 7.2: nothing to borrow: no stats exported, the EIO message on stderr, one error counted" \
			"wget $r, vCPU series $((!g)), kvm_vm_stats_available '$a'" \
			"$(grep '^kvm_exporter_errors_total' "$T/native72")" "$(cat "$T/exp-native.err")"
		stop_bg "$vm"
	else
		ok 1 "native, like QEMU 7.2: nothing to borrow" "demo-vm did not start"
	fi
	stop_bg "$exp"
fi
fi

# --- 3. with the module ------------------------------------------------------
# The plain load: other processes' VMs are read through /dev/kvm-statsfd.
# Every stat group (latency, userspace exits are not in the default).
if [ "$(cat /sys/module/kvm_statsfd/parameters/cross_process 2>/dev/null)" != N ] ||
	[ "$(cat /sys/module/kvm_statsfd/parameters/stats 2>/dev/null)" != all ]; then
	rmmod kvm_statsfd 2>/dev/null
	insmod "$KO" stats=all
fi
grep -q '^kvm_statsfd ' /proc/modules; ok $? "module: kvm_statsfd loaded, no cross_process"

start_exporter "$T/exp.err"; ok $? "exporter listens on 127.0.0.1:$PORT"
r=$(st "$EXP" --listen "127.0.0.1:$PORT")
grep -q "Address already in use" "$T/err"; g=$?
ok $((r != 1 || g != 0)) "a second exporter on the same port exits 1 with the reason" \
	"got $r: $(cat "$T/err")"
# Any failure of wget would do for "fails": it must be the server's 404.
wget -q -O /dev/null "$URL/nope" 2> "$T/nope.err"; r=$?
grep -q ' 404' "$T/nope.err"; g=$?
ok $((r == 0 || g != 0)) "GET /nope is answered 404" "wget $r" "$(cat "$T/nope.err")"

scrape "$T/m0"; r=$?
ok $((r != 0)) "scrape with no VM succeeds" "wget $r"
[ "$(val "$T/m0" kvm_exporter_vms)" = 0 ]
ok $? "no VM: kvm_exporter_vms 0" "$(grep -v '^#' "$T/m0" | head -n 5)"

# The test stops this VM itself; -t is only a backstop (the debug kernel
# under TCG took over 60 s to get from here to the stopped-VM checks).
# Like QEMU 8.1: the VMM keeps vCPU stats fds the exporter could borrow;
# the module's fresh ones are what it must take (the VM's are only there).
start_vm "$T/vm.log" -name guest=exptest -t 600 --like-qemu 8.1 --hlt-ms "$HLT_MS"
ok $? "demo-vm with 2 vCPUs started (like QEMU 8.1)"
sleep 1
# On PREEMPT_RT the module counts a vCPU only from its first stats fd
# (Documentation/design.rst): let one scrape open them, then run on.
if [ "$(cat /sys/kernel/realtime 2>/dev/null)" = 1 ]; then
	scrape "$T/m-prime"
	sleep 1
fi

scrape "$T/m1"; r1=$?
fds1=$(stats_fds "$exp")
r=$(st "$KS" show "$vm" --json); cp "$T/out" "$T/show.json"
sleep 0.5
scrape "$T/m2"; r2=$?
fds2=$(stats_fds "$exp")
ok $((r1 != 0 || r2 != 0 || r != 0)) "two scrapes and show --json around them succeed" \
	"wget $r1 $r2, show $r"
json_vals "$T/show.json" > "$T/jv"

echo "# exporter-metrics-begin"
sed 's/^/# | /' "$T/m1"
echo "# exporter-metrics-end"

# Identity: not libvirt's, so the owner qualifies the -name: root/exptest.
L="vm=\"root/exptest\""
I="$L,uuid=\"\",source=\"qemu\",pid=\"$vm\",comm=\"demo-vm\""
[ "$(val "$T/m1" "kvm_vm_info{$I}")" = 1 ]
ok $? "kvm_vm_info{$I} 1" "$(grep '^kvm_vm_info' "$T/m1")"
[ "$(val "$T/m1" "kvm_vm_stats_available{$L}")" = 1 ] && ! grep -q 'note: pid' "$T/exp.err"
ok $? "kvm_vm_stats_available{$L} 1: the VM's own stats, through the module, no note" \
	"$(grep '^kvm_vm_stats_available' "$T/m1")" "$(cat "$T/exp.err")"
! grep -v '^kvm_vm_info' "$T/m1" | grep -q 'pid="'
ok $? "no pid label outside kvm_vm_info" "$(grep -v '^kvm_vm_info' "$T/m1" | grep 'pid="' | head -n 3)"
a0=$(val "$T/m1" "kvm_vcpu_exits_total{$L,vcpu=\"0\"}")
a1=$(val "$T/m1" "kvm_vcpu_exits_total{$L,vcpu=\"1\"}")
ok $((${a0:-0} <= 0 || ${a1:-0} <= 0)) "kvm_vcpu_exits_total for vCPUs 0 and 1, labelled vm, vcpu" \
	"vcpu0 '$a0' vcpu1 '$a1'" "$(grep '^kvm_vcpu_exits_total' "$T/m1")"
grep -q "^kvm_vm_exits_by_reason_total{$L,vendor=\"$VENDOR\",reason=\"$REASON\"} [1-9]" "$T/m1"
ok $? "VM-wide exit reasons by the kernel's name and vendor, no vcpu label ($VENDOR, $REASON)"
grep -q "^kvm_vcpu_exits_by_reason_total{$L,vendor=\"$VENDOR\",vcpu=\"1\",reason=\"$REASON\"} [1-9]" "$T/m1"
ok $? "vCPU exit reasons by the kernel's name (vCPU 1, $REASON)"
nr=$(grep -c "^kvm_vm_exits_by_reason_total{$L," "$T/m1")
ok $((nr != NREASONS)) "every $VNAME exit reason present, zeros too ($nr of $NREASONS)"
# The same exits by class: the class is the reason alone (SVM's io;
# arm64's hypercall, HVC64), and the classes add up to the reasons (one
# scrape, one read of the stats).
ci=$(val "$T/m1" "kvm_vm_exits_by_class_total{$L,class=\"$CLASS\"}")
ri=$(val "$T/m1" "kvm_vm_exits_by_reason_total{$L,vendor=\"$VENDOR\",reason=\"$REASON\"}")
sums=$(awk -v c="kvm_vm_exits_by_class_total{$L," -v r="kvm_vm_exits_by_reason_total{$L," '
	index($0, c) == 1 { sc += $NF; nc++ }
	index($0, r) == 1 { sr += $NF }
	END { printf "%d %.0f %.0f", nc, sc, sr }' "$T/m1")
read -r nc sc sr <<EOF
$sums
EOF
[ -n "$ci" ] && [ "$ci" = "$ri" ] && [ "${ci:-0}" -gt 0 ] && [ "$nc" -ge 20 ] && [ "$sc" = "$sr" ]
ok $? "exits by class: class $CLASS = reason $REASON ($ci = $ri), $nc classes summing to the reasons ($sc = $sr)" \
	"$(grep "^kvm_vm_exits_by_class_total{$L," "$T/m1" | head -n 8)"
grep -q "^kvm_vm_userspace_exits_total{$L,reason=\"$UEXIT\"} [1-9]" "$T/m1"
ok $? "userspace_exits as a counter by KVM_EXIT_* name ($UEXIT > 0)" \
	"$(grep "^kvm_vm_userspace_exits_total" "$T/m1" | head -n 5)"
[ -n "$(val "$T/m1" "kvm_vm_vcpus{$L}")" ] && [ "$(val "$T/m1" "kvm_vm_vcpus{$L}")" = 2 ]
ok $? "kvm_vm_vcpus (instant, a gauge) is 2" "'$(val "$T/m1" "kvm_vm_vcpus{$L}")'"
grep -q '^# TYPE kvm_vcpu_exits_total counter$' "$T/m1" &&
	grep -q '^# TYPE kvm_vcpu_exit_latency_seconds histogram$' "$T/m1" &&
	grep -q '^# TYPE kvm_vcpu_exit_latency_max_seconds gauge$' "$T/m1" &&
	grep -q '^# TYPE kvm_vcpu_guest_seconds_total counter$' "$T/m1"
ok $? "TYPE lines: counter, histogram, gauge; seconds in names"

# Values against kvm-statsfd show --json, read between the two scrapes:
# every counter only grows, so scrape1 <= json <= scrape2.
between() {	# between NAME A J B: A <= J <= B (J may be scaled by 1e9)
	awk -v a="$2" -v j="$3" -v b="$4" 'BEGIN { exit !(a != "" && j != "" && b != "" && a <= j + 1e-6 && j <= b + 1e-6) }'
	ok $? "$1: scrape 1 <= show --json <= scrape 2" "$2 <= $3 <= $4"
}
for c in 0 1; do
	between "vCPU $c exits" "$(val "$T/m1" "kvm_vcpu_exits_total{$L,vcpu=\"$c\"}")" \
		"$(jget "$T/jv" vcpu$c exits)" "$(val "$T/m2" "kvm_vcpu_exits_total{$L,vcpu=\"$c\"}")"
done
j=$(jget "$T/jv" vcpu0 guest_ns)
between "vCPU 0 guest_ns in seconds" "$(val "$T/m1" "kvm_vcpu_guest_seconds_total{$L,vcpu=\"0\"}")" \
	"$(awk -v j="$j" 'BEGIN { if (j != "") printf "%.9f", j / 1e9 }')" \
	"$(val "$T/m2" "kvm_vcpu_guest_seconds_total{$L,vcpu=\"0\"}")"
ek="kvm_vcpu_exits_by_reason_total{$L,vendor=\"$VENDOR\",vcpu=\"0\",reason=\"$REASON\"}"
between "vCPU 0 exit_reasons_$VENDOR $REASON" "$(val "$T/m1" "$ek")" \
	"$(jget "$T/jv" vcpu0 "exit_reasons_$VENDOR:$REASON")" "$(val "$T/m2" "$ek")"
between "VM $IOSTAT" "$(val "$T/m1" "kvm_vm_${IOSTAT}_total{$L}")" \
	"$(jget "$T/jv" vm "vcpus_$IOSTAT")" "$(val "$T/m2" "kvm_vm_${IOSTAT}_total{$L}")"

# Histograms: structure of every series; _sum is the companion total read
# in the same pread, so the two are the same number.
hist_check "$T/m1" > "$T/hc"
ns=$(sed -n 's/^series //p' "$T/hc")
! grep -q '^bad' "$T/hc" && [ "${ns:-0}" -gt 0 ]
ok $? "histograms: cumulative buckets, le increasing, +Inf == _count, _sum ($ns series)" \
	"$(grep '^bad' "$T/hc" | head -n 5)"
for c in 0 1; do
	s=$(val "$T/m1" "kvm_vcpu_exit_latency_seconds_sum{$L,vcpu=\"$c\"}")
	t=$(val "$T/m1" "kvm_vcpu_exit_latency_seconds_total{$L,vcpu=\"$c\"}")
	k=$(val "$T/m1" "kvm_vcpu_exit_latency_seconds_count{$L,vcpu=\"$c\"}")
	[ -n "$s" ] && [ "$s" = "$t" ] && [ "${k:-0}" -gt 0 ]
	ok $? "vCPU $c exit_latency: _sum == exit_latency_ns as seconds, _count > 0" \
		"sum '$s' total '$t' count '$k'"
done
s=$(val "$T/m1" "kvm_vcpu_exit_latency_${LAT}_seconds_sum{$L,vcpu=\"0\"}")
t=$(val "$T/m1" "kvm_vcpu_exit_latency_${LAT}_seconds_total{$L,vcpu=\"0\"}")
grep -q "^kvm_vcpu_exit_latency_${LAT}_seconds_bucket{$L,vcpu=\"0\",le=\"+Inf\"} [1-9]" "$T/m1" &&
	[ -n "$s" ] && [ "$s" = "$t" ]
ok $? "exit_latency_${LAT}_hist with its total exit_latency_${LAT}_ns: a histogram, _sum == total" \
	"sum '$s' total '$t'"

not_decreasing "$T/m1" "$T/m2" > "$T/nd"
c=$(sed -n 's/^compared \([0-9]*\) up .*/\1/p' "$T/nd")
u=$(sed -n 's/^compared [0-9]* up \([0-9]*\)/\1/p' "$T/nd")
! grep -q '^down' "$T/nd" && [ "${c:-0}" -gt 100 ] && [ "${u:-0}" -gt 0 ]
ok $? "second scrape: no counter or histogram sample decreased ($c compared, $u grew)" \
	"$(grep '^down' "$T/nd" | head -n 5)"

# What an operator gets without flags: VM-wide series only, gzip on request.
r=$(st "$EXP" --once); cp "$T/out" "$T/once"
! grep -q '^kvm_vcpu_' "$T/once" && grep -q "^kvm_vm_${IOSTAT}_total{$L} [1-9]" "$T/once" &&
	! grep -q '_bucket{' "$T/once"
ok $((r != 0 || $? != 0)) "--once without flags: VM-wide series only, no histograms" \
	"status $r, $(grep -c '^kvm_vcpu_' "$T/once") vCPU series"
wget -q -O - --header 'Accept-Encoding: gzip' "$URL/metrics" 2>/dev/null > "$T/gz"
gzip -dc < "$T/gz" 2>/dev/null | grep -q '^kvm_exporter_build_info{version="'
ok $? "Accept-Encoding: gzip gets a gzip body with build_info" \
	"$(head -c 64 "$T/gz" | od -c | head -n 2)"
grep -q '^kvm_exporter_scrape_duration_seconds [0-9]' "$T/m1"
ok $? "kvm_exporter_scrape_duration_seconds present"

# As the package runs it: the shipped unit's user and capabilities
# (tests/exporter/as_unit.c reads them from the unit file), against this
# VM of root's.  /proc/PID/fd of another user's process is mode 0500:
# CAP_SYS_PTRACE alone cannot list it.
AS_UNIT=/opt/kvm-statsfd-test/as-unit
UNIT=/opt/kvm-statsfd-test/kvm-statsfd-exporter.service
r=$(st "$AS_UNIT" "$UNIT" -- "$EXP" --once)
grep -q "^kvm_vm_${IOSTAT}_total{$L} [1-9]" "$T/out" &&
	[ "$(val "$T/out" kvm_exporter_processes_denied)" = 0 ]
ok $((r != 0 || $? != 0)) "under the shipped unit's user and capabilities ($(sed -n 's/^AmbientCapabilities=//p' "$UNIT")): the VM of root is exported, no process denied" \
	"status $r, $(grep '^kvm_exporter_processes_denied' "$T/out")" \
	"$(head -n 5 "$T/err")"

nf=$(echo "$fds1" | grep -c kvm)
[ "$fds1" = "$fds2" ] && [ "$nf" = 3 ]
ok $? "stats fds kept open between scrapes (the same 3 fds: VM + 2 vCPUs)" \
	"after scrape 1: $(echo "$fds1" | tr '\n' ' ')" \
	"after scrape 2: $(echo "$fds2" | tr '\n' ' ')"

# --- 4. a real Prometheus scrapes the live exporter --------------------------
# Debian's Prometheus (the guest's /opt/prometheus, build-initramfs.sh
# --tree from collect-prometheus.sh), on loopback, storage in $T, scrapes
# this exporter every 15 s, with as long to answer: a scrape took 1.2 s on
# the debug kernel, and 4.5 s there with other lanes running beside it.
# With a 1 s timeout Prometheus gave up on nearly every scrape, and one it
# gave up on could still be running while the VMM exited.
# The VM is stopped (SIGSTOP) first, so its counters hold still: what
# PromQL returns must be exactly what kvm-statsfd show --json reads.
# Two bounds, so that a failure says which part was slow: PROM_START_WAIT
# seconds for Prometheus' own start-up (/-/ready; 12 s on the debug kernel
# alone, 21 s with the other lanes beside it), then PROM_WAIT seconds, six
# scrape intervals, for the scrape and the answer.  Then Prometheus is
# stopped.  (The arm64 guest has no Prometheus: tests/vm/manifest.)
if section prometheus; then
PROM=${PROMETHEUS:-/opt/prometheus/prometheus}
PROM_PORT=${PROMETHEUS_TEST_PORT:-19799}
PROM_START_WAIT=${PROMETHEUS_START_WAIT:-600}
PROM_WAIT=${PROMETHEUS_TEST_WAIT:-90}
# promql EXPR: the value of the first sample of an instant query, or "".
promql() {
	q=$(printf '%s' "$1" | sed 's/%/%25/g; s/ /%20/g; s/"/%22/g; s/{/%7B/g; s/}/%7D/g;
		s/=/%3D/g; s/,/%2C/g; s/\//%2F/g; s/(/%28/g; s/)/%29/g; s/+/%2B/g')
	# (busybox 1.35 wget -T segfaults: timeout bounds it instead.)
	timeout 10 wget -q -O - "http://127.0.0.1:$PROM_PORT/api/v1/query?query=$q" 2>/dev/null |
		sed -n 's/.*"value":\[[0-9.e+]*,"\([^"]*\)"\].*/\1/p'
}
kill -STOP "$vm"
sleep 0.5
r=$(st "$KS" show "$vm" --json); json_vals "$T/out" > "$T/jv-stopped"
sleep 0.5
r2=$(st "$KS" show "$vm" --json); json_vals "$T/out" > "$T/jv-stopped2"
want_io=$(jget "$T/jv-stopped" vm "vcpus_$IOSTAT")
want_rs=$(jget "$T/jv-stopped" vm "vcpus_exit_reasons_$VENDOR:$REASON")
still=1
[ "$r" = 0 ] && [ "$r2" = 0 ] && cmp -s "$T/jv-stopped" "$T/jv-stopped2" && still=0
# Every 2 s: Prometheus takes its first scrape at an offset within the
# interval, and at its default 15 s it sat idle for 14 to 18 s here.
cat > "$T/prometheus.yml" <<EOF
global:
  scrape_interval: 2s
  scrape_timeout: 2s
scrape_configs:
  - job_name: kvm-statsfd
    static_configs:
      - targets: ['127.0.0.1:$PORT']
EOF
prom=
if [ -x "$PROM" ]; then
	"$PROM" --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/prom-data" \
		--web.listen-address="127.0.0.1:$PROM_PORT" > "$T/prom.log" 2>&1 &
	prom=$!
	bg_pids="$bg_pids $prom"
fi
sel="{vm=\"root/exptest\"}"
# poll LIMIT CMD...: CMD once a second until it succeeds, LIMIT seconds
# pass or Prometheus is gone; the seconds it took go to $polled.
poll() {
	limit=$1 polled=0 t0=$(date +%s)
	shift
	while [ -n "$prom" ] && [ "$polled" -lt "$limit" ] && kill -0 "$prom" 2>/dev/null; do
		"$@" && return 0
		sleep 1
		polled=$(($(date +%s) - t0))
	done
	return 1
}
prom_ready() {
	timeout 10 wget -q -O /dev/null "http://127.0.0.1:$PROM_PORT/-/ready" 2>/dev/null
}
# Prometheus has scraped the exporter, and both values of the stopped VM
# are in its answers.
prom_answers() {
	[ "$up" = 1 ] || up=$(promql 'up{job="kvm-statsfd"}')
	[ "$up" = 1 ] || return 1
	got_io=$(promql "kvm_vm_${IOSTAT}_total$sel")
	got_rs=$(promql "kvm_vm_exits_by_reason_total{vm=\"root/exptest\",vendor=\"$VENDOR\",reason=\"$REASON\"}")
	[ -n "$got_io" ] && [ -n "$got_rs" ]
}
ready=0
poll "$PROM_START_WAIT" prom_ready && ready=1
[ "$ready" = 1 ]
ok $? "Prometheus in the guest starts and is ready (${polled} s)" \
	"$PROM: $([ -x "$PROM" ] && echo present || echo missing)" \
	"$(tail -n 15 "$T/prom.log" 2>/dev/null)"
up='' got_io='' got_rs='' t=$PROM_WAIT
if [ "$ready" = 1 ]; then
	poll "$PROM_WAIT" prom_answers
	t=$polled
fi
[ "$up" = 1 ]
ok $? "Prometheus in the guest scrapes the live exporter: up{job=\"kvm-statsfd\"} 1 (${t} s)" \
	"$PROM: $([ -x "$PROM" ] && echo present || echo missing), up '$up'" \
	"targets: $(timeout 10 wget -q -O - "http://127.0.0.1:$PROM_PORT/api/v1/targets" 2>/dev/null | head -c 1000)" \
	"$(tail -n 15 "$T/prom.log" 2>/dev/null)"
[ $still = 0 ] && [ -n "$want_io" ] && [ "$got_io" = "$want_io" ]
ok $? "PromQL kvm_vm_${IOSTAT}_total$sel of the stopped VM is show --json's vcpus_$IOSTAT ($want_io)" \
	"Prometheus '$got_io', show --json '$want_io', counters still: $still"
[ $still = 0 ] && [ -n "$want_rs" ] && [ "$got_rs" = "$want_rs" ]
ok $? "PromQL kvm_vm_exits_by_reason_total{reason=\"$REASON\"} of the stopped VM is show --json's vcpus_exit_reasons_$VENDOR $REASON ($want_rs)" \
	"Prometheus '$got_rs', show --json '$want_rs'"
if [ -n "$prom" ]; then
	stop_bg "$prom"
fi
# Scrapes run one at a time under the exporter's lock: this one ends after
# any that Prometheus left running, while the VMM still holds its fds.
scrape "$T/m-settle" || :
kill -CONT "$vm"
fi

stop_bg "$vm"
i=0
while [ -n "$(stats_fds "$exp")" ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -z "$(stats_fds "$exp")" ]
ok $? "VMM exit: the exporter closes the VM's stats fds without a scrape" \
	"$(stats_fds "$exp")"
scrape "$T/m3"; r=$?
! grep -q "$L" "$T/m3" && [ "$(val "$T/m3" kvm_exporter_vms)" = 0 ]
ok $((r != 0 || $? != 0)) "after the VM exits its series are gone" \
	"$(grep "$L" "$T/m3" | head -n 3)"
[ "$(val "$T/m3" kvm_exporter_errors_total)" = 0 ]
ok $? "a VM going away is no error: kvm_exporter_errors_total 0" \
	"$(grep '^kvm_exporter_\(errors\|vm_exit_races\)' "$T/m3")"

kill -TERM "$exp"
wait "$exp"; r=$?
forget_bg "$exp"
ok $((r != 0)) "SIGTERM: exporter exits 0" "got $r" "$(tail -n 5 "$T/exp.err")"
grep -q "pid $vm: VMM exited" "$T/exp.err"
ok $? "-v reports the VM going" "$(cat "$T/exp.err")"

cleanup
# Nothing may pin the module once the exporter and the VMs are gone.
rmmod kvm_statsfd; ok $? "module unloads after the test"
[ $was_loaded = 1 ] && insmod "$KO" stats=all
tap_end
