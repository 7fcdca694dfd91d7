#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest-side test of the collectd plugin (tools/collectd): Debian's own
# collectd (/opt/collectd, collect-collectd.sh) loads kvm_statsfd.so, built
# against the installed libkvmstats, and its csv plugin writes what it
# dispatches.  A demo VM runs, then is frozen, so its counters hold still:
# every value the CSV files hold for it, the VM's and each vCPU's, must be
# what `kvm-statsfd show --json` reads, and every value show --json reads
# must be in them.  Prints TAP.  Needs root, /dev/kvm, kvm-statsfd and
# demo-vm in PATH, kvm_statsfd.ko at $KVM_STATSFD_KO.

PATH=$PATH:/bin:/sbin:$(dirname "$0")
export PATH
KS=${KVM_STATSFD:-kvm-statsfd}
VMM=${DEMO_VM:-demo-vm}
KO=${KVM_STATSFD_KO:-/lib/modules/kvm_statsfd.ko}
CD=${COLLECTD:-/opt/collectd}
T=$(mktemp -d /tmp/kscd.XXXXXX)
# ok, tap_end, start_vm, freeze_vm, kill_bg, json_vals, jget: tests/lib/ks-tap.sh
. ks-tap.sh
trap 'kill_bg; rm -rf "$T"' EXIT
CASES="collectd loads kvm_statsfd.so, built against the installed libkvmstats
the plugin dispatched the VM and its 2 vCPUs
every value of show --json is in the CSV files, the same
every value in the CSV files is one of show --json
the VM's vcpus_io_out_exits and vcpus_exit_reasons_svm io bucket, vCPU 0's exits: as show --json
no error or warning from the plugin in collectd's log"

echo "TAP version 13"
if [ ! -c /dev/kvm ] || [ ! -x "$CD/collectd" ] ||
	! command -v "$KS" > /dev/null || ! command -v "$VMM" > /dev/null; then
	all_cases fail "needs /dev/kvm, $CD/collectd, $KS and $VMM" "$CASES"
	tap_end
fi
loaded=0
grep -q '^kvm_statsfd ' /proc/modules && loaded=1
[ $loaded = 1 ] || insmod "$KO" || { all_cases fail "insmod $KO failed" "$CASES"; tap_end; }

if ! start_vm "$T/vm.log" -name guest=cdtest -t 600 || ! sleep 1 ||
	! freeze_vm "$vm"; then
	all_cases fail "demo-vm did not start, or could not be frozen" "$CASES"
	tap_end
fi
"$KS" show "$vm" --json > "$T/show.json" 2> "$T/show.err"
json_vals "$T/show.json" > "$T/jv"

cat > "$T/collectd.conf" <<EOF
Hostname "guest"
BaseDir "$T"
PIDFile "$T/collectd.pid"
PluginDir "$CD/plugins"
TypesDB "$CD/types.db"
Interval 1
LoadPlugin logfile
<Plugin logfile>
  LogLevel info
  File "$T/collectd.log"
</Plugin>
LoadPlugin csv
<Plugin csv>
  DataDir "$T/csv"
</Plugin>
LoadPlugin kvm_statsfd
<Plugin kvm_statsfd>
  PerVCPU true
</Plugin>
EOF
"$CD/collectd" -f -C "$T/collectd.conf" > "$T/collectd.out" 2>&1 &
cd_pid=$!
bg_pids="$bg_pids $cd_pid"
dir=$T/csv/guest
# Two intervals' values, or a minute (the debug kernel is slow).
i=0
until [ "$(cat "$dir"/kvm_statsfd-cdtest_vcpu1/derive-exits-* 2>/dev/null |
	grep -c '^[0-9]')" -ge 2 ] ||
	[ $i -ge 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 1.5
stop_bg "$cd_pid"

grep -q 'plugin "kvm_statsfd" successfully loaded' "$T/collectd.log"
ok $? "collectd loads kvm_statsfd.so, built against the installed libkvmstats" \
	"$(cat "$T/collectd.log" "$T/collectd.out")"
[ -d "$dir/kvm_statsfd-cdtest" ] && [ -d "$dir/kvm_statsfd-cdtest_vcpu0" ] &&
	[ -d "$dir/kvm_statsfd-cdtest_vcpu1" ]
ok $? "the plugin dispatched the VM and its 2 vCPUs" "$(ls -R "$T/csv" 2>&1 | head -n 20)"

# "CTX NAME VALUE" lines (CTX vm or vcpuN) of the stopped VM, a
# histogram's VALUE the sum of its buckets: json_sums from show --json,
# csv_sums from the last line of each CSV file (a bucket's file is
# NAME-BUCKET; the plugin writes those counted so far).
json_sums() {
	awk '
	/"vm": \{/ { ctx = "vm" }
	/"vcpu": [0-9]+/ { v = $0; gsub(/[^0-9]/, "", v); ctx = "vcpu" v }
	/"name": "/ { name = $0; sub(/.*"name": "/, "", name); sub(/".*/, "", name) }
	/"value": / { v = $0; gsub(/[^0-9]/, "", v); print ctx, name, v }
	/"buckets": \[/ { inb = 1; sum = 0; next }
	inb && /\]/ { inb = 0; print ctx, name, sum, "hist"; next }
	inb { v = $0; gsub(/[^0-9]/, "", v); sum += v }
	' "$1"
}
csv_sums() {
	for f in "$dir"/kvm_statsfd-cdtest*/*-*; do
		[ -f "$f" ] || continue
		inst=${f%/*}
		inst=${inst##*/kvm_statsfd-cdtest}
		ctx=vm
		[ -n "$inst" ] && ctx=vcpu${inst#_vcpu}
		base=${f##*/}
		base=${base#*-}			# derive- or gauge-
		base=${base%-????-??-??}	# the date
		v=$(tail -n 1 "$f" | cut -d, -f2)
		echo "$ctx ${base%%-*} ${v%.*}"
	done | awk '{ s[$1 " " $2] += $3 } END { for (k in s) print k, s[k] }'
}
# A histogram counted nowhere has no file: its sum, 0, is not in the CSV.
json_sums "$T/show.json" | awk '!($4 == "hist" && $3 == 0) { print $1, $2, $3 }' |
	sort > "$T/want"
csv_sums | sort > "$T/got"
# Lines of file $2 that are not in file $1 (the guest's busybox has no
# comm, and its grep -f reads an empty pattern file as matching all).
not_in() { awk -v a="$1" 'FILENAME == a { have[$0]; next } !($0 in have)' "$1" "$2"; }
missing=$(not_in "$T/got" "$T/want" | head -n 10)
extra=$(not_in "$T/want" "$T/got" | head -n 10)
nw=$(wc -l < "$T/want")
[ -z "$missing" ] && [ "$nw" -gt 20 ]
ok $? "every value of show --json is in the CSV files, the same ($nw stats)" \
	"not in the CSV files, or another value there:" "$missing"
[ -z "$extra" ] && [ -s "$T/got" ]
ok $? "every value in the CSV files is one of show --json" "$extra"
io=$(jget "$T/jv" vm vcpus_io_out_exits)
rs=$(jget "$T/jv" vm "vcpus_exit_reasons_svm:io")
[ -z "$rs" ] && rs=$(jget "$T/jv" vm "vcpus_exit_reasons_vmx:IO_INSTRUCTION")
ex=$(jget "$T/jv" vcpu0 exits)
last() { tail -n 1 "$1"-????-??-?? 2>/dev/null | cut -d, -f2 | sed 's/\..*//'; }
[ "$(last "$dir/kvm_statsfd-cdtest/derive-vcpus_io_out_exits")" = "$io" ] && [ "${io:-0}" -gt 0 ] &&
	{ [ "$(last "$dir/kvm_statsfd-cdtest/derive-vcpus_exit_reasons_svm-io")" = "$rs" ] ||
	  [ "$(last "$dir/kvm_statsfd-cdtest/derive-vcpus_exit_reasons_vmx-IO_INSTRUCTION")" = "$rs" ]; } &&
	[ "$(last "$dir/kvm_statsfd-cdtest_vcpu0/derive-exits")" = "$ex" ]
ok $? "the VM's vcpus_io_out_exits and vcpus_exit_reasons_svm io bucket, vCPU 0's exits: as show --json ($io, $rs, $ex)" \
	"$(ls "$dir/kvm_statsfd-cdtest" | head -n 30)"
! grep -iE 'kvm_statsfd.*(error|warn)|(error|warn).*kvm_statsfd' "$T/collectd.log"
ok $? "no error or warning from the plugin in collectd's log" "$(cat "$T/collectd.log")"

kill -CONT "$vm" 2>/dev/null
kill_bg
[ $loaded = 1 ] || rmmod kvm_statsfd 2>/dev/null
tap_end
