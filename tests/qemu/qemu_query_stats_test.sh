#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest-side test: QEMU's QMP query-stats with and without kvm_statsfd.ko
# (busybox sh).  Prints TAP.  Needs root, /dev/kvm, Debian's QEMU 7.2 as
# collected by collect-qemu.sh ($QEMU, default
# /opt/qemu/qemu-system-x86_64, or -aarch64 on arm64), ks-qmp in PATH
# ($KS_QMP) and kvm_statsfd.ko at $KVM_STATSFD_KO; on arm64 also the VM's
# image ($KS_QEMU_GUEST, ks-guest-arm64.S).
#
# Twice, first without the module, then with it, one QEMU with 2 vCPUs
# and no devices is started paused (-S) and asked over QMP for
# query-stats-schemas and query-stats of target "vm" and "vcpu" (also with
# the "providers" and "vcpus" filters); then it runs, is stopped, and
# asked again.  While the VM is stopped every counter is still, so
# equalities between stats are exact.  On x86 the VM is q35 with SeaBIOS,
# which finds nothing to boot: it runs for a few seconds and is stopped
# with "stop".  On arm64 it is the virt machine running ks-guest-arm64.S,
# whose vCPU 0 makes KS_GUEST_LOOPS MMIO writes, ID register reads and
# HVCs, then powers the VM off: the test polls for that (QEMU runs with
# -no-shutdown and keeps the VM, stopped) and expects those counts exactly.
#
#  - without the module: the native stats only, every one of the schema,
#    and none of the module's; on a kernel without binary stats of its own
#    (KVM_CHECK_EXTENSION(KVM_CAP_BINARY_STATS_FD) 0 without the module, as
#    ks-kvm-cap asks: 5.10) QEMU shows no kvm stats at all, and the VM's
#    debugfs shows the kernel's counters;
#  - with the module: the native stats first, as before (same schema lines,
#    same order), then the module's with the types QEMU 7.2 shows
#    (exit_reasons_svm linear-histogram, exit_latency_hist log2-histogram,
#    guest_ns cumulative seconds, vcpus instant...); per vCPU the total of
#    the exit-reason histogram (exit_reasons_svm or _vmx: whichever the
#    module serves) is the native "exits", the VM's histogram
#    (vcpus_exit_reasons_svm) is the sum of its vCPUs', no name is both a
#    VM and a vCPU stat (libvirt shows no KVM stat otherwise), the I/O and MSR exit counts match their buckets.  On
#    arm64 the total of exit_kinds_arm64 is "exits", exit_reasons_arm64
#    (by exception class) counts its trap exits, the HVC, system register
#    and WFx counts match their classes and the native hvc_exit_stat,
#    wfi_exit_stat and wfe_exit_stat (Documentation/exit-reasons.rst), and
#    the guest's loop shows in them exactly.  Where the kernel has no
#    binary stats, the native stats the module serves are its debugfs
#    stats, each once (VM or vCPU), with the same values.  Every value
#    QEMU shows, native or the module's, is the stats fd's as kvm-statsfd
#    show --json reads it directly (through the module's /dev/kvm-statsfd),
#    where that command is in PATH.
# Native values are compared with the VM's debugfs directory: VM stats
# directly, vCPU stats summed over the vCPUs (debugfs has no per-vCPU
# stat files).
# The module is left loaded at the end only if it was loaded at the start.

PATH=$PATH:/bin:/sbin:$(dirname "$0")
export PATH
QMP=${KS_QMP:-ks-qmp}
KS=${KS_TOOL:-kvm-statsfd}
KCAP=${KS_KVM_CAP:-ks-kvm-cap}
KVM_CAP_BINARY_STATS_FD=203
KO=${KVM_STATSFD_KO:-/lib/modules/kvm_statsfd.ko}
RUN_SECONDS=${KS_QEMU_RUN_SECONDS:-3}
T=$(mktemp -d /tmp/ksqemu.XXXXXX)
SOCK=$T/qmp.sock
# ok, skip and tap_end: tests/lib/ks-tap.sh (in the guest's /bin).
. ks-tap.sh
qpid=
was_loaded=0
grep -q '^kvm_statsfd ' /proc/modules && was_loaded=1

# Names of every stat the module adds (exit_reasons_vmx on Intel hosts;
# the arm64 ones on arm64).
MODULE_STATS="exit_reasons_svm exit_reasons_vmx exit_latency_hist
exit_latency_ns exit_latency_max_ns exit_latency_io_hist exit_latency_npf_hist
exit_latency_msr_hist exit_latency_hlt_hist exit_latency_intr_hist
exit_latency_io_ns exit_latency_npf_ns exit_latency_msr_ns exit_latency_hlt_ns
exit_latency_intr_ns guest_ns
userspace_exits io_in_exits io_out_exits msr_read_exits msr_write_exits
mmio_reads mmio_writes in_guest vcpus
exit_reasons_arm64 exit_kinds_arm64
exit_latency_mmio_hist exit_latency_sysreg_hist exit_latency_hvc_hist
exit_latency_wfx_hist exit_latency_irq_hist exit_latency_mmio_ns
exit_latency_sysreg_ns exit_latency_hvc_ns exit_latency_wfx_ns
exit_latency_irq_ns sysreg_read_exits sysreg_write_exits wfi_exits wfe_exits
hvc_exits smc_exits"
# A VM serves each of them but vcpus again as its vCPUs' sum, prefixed.
MODULE_STATS="$MODULE_STATS $(for s in $MODULE_STATS; do
	[ "$s" = vcpus ] || echo "vcpus_$s"; done)"
KVM_EXIT_IO=2
KVM_EXIT_MMIO=6

# What differs between the architectures: QEMU and its VM; the debugfs
# (native) counters that say whether a vCPU handled an exit, and which
# one the VM's run makes for sure; how many native scalars there are to
# compare with debugfs at least (arm64 has few native stats: 16); two
# native vCPU stats for the providers filter.
case "$(uname -m)" in
aarch64)
	ARCH=arm64
	QEMU=${QEMU:-/opt/qemu/qemu-system-aarch64}
	GUEST=${KS_QEMU_GUEST:-/opt/ks-qemu-guest-arm64.bin}
	DBG_HANDLED="mmio_exit_user mmio_exit_kernel hvc_exit_stat wfi_exit_stat wfe_exit_stat"
	DBG_WHAT="MMIO, HVC, WFx"
	DBG_RAN=mmio_exit_user
	NATIVE_PAIR="exits hvc_exit_stat"
	MIN_COMPARED=16
	;;
*)
	ARCH=x86
	QEMU=${QEMU:-/opt/qemu/qemu-system-x86_64}
	GUEST=
	DBG_HANDLED="io_exits mmio_exits halt_exits irq_exits insn_emulation"
	DBG_WHAT="I/O, MMIO, HLT, interrupt, emulation"
	DBG_RAN=io_exits
	NATIVE_PAIR="exits halt_exits"
	MIN_COMPARED=20
	;;
esac
# The loop of ks-guest-arm64.S (its KS_LOOPS).
KS_GUEST_LOOPS=100
# arm64 exception classes (Documentation/exit-reasons.rst) and kinds.
EC_WFX=1 EC_HVC32=18 EC_HVC64=22 EC_SYS64=24 EC_DABT_LOW=36 KIND_TRAP=2

# The exit-reason histogram the module serves (its schema says which):
# its buckets, and the buckets of I/O and MSR exits
# (Documentation/exit-reasons.rst).  Sets EXIT_STAT, EXIT_BUCKETS, EXIT_IO,
# EXIT_MSR (one bucket or two, space separated).
exit_stat_of() {	# exit_stat_of SCHEMAFILE
	EXIT_STAT=$(awk '$1 == "kvm" && $2 == "vcpu" && $3 ~ /^exit_reasons_/ { print $3; exit }' "$1")
	case "$EXIT_STAT" in
	exit_reasons_svm) EXIT_BUCKETS=120 EXIT_IO=83 EXIT_MSR=84 ;;
	exit_reasons_vmx) EXIT_BUCKETS=81 EXIT_IO=30 EXIT_MSR="31 32" ;;
	exit_reasons_arm64) EXIT_BUCKETS=64 EXIT_IO='' EXIT_MSR='' ;;
	*) EXIT_STAT= ; return 1 ;;
	esac
}

# check NAME CMD...: one case from a command's status; its output is the
# diagnostic on failure.
check() {
	name=$1
	shift
	if out=$("$@" 2>&1); then
		ok 0 "$name"
	else
		ok 1 "$name"
		printf '%s\n' "$out" | head -n 20 | sed 's/^/# /'
	fi
}

qmp() {	# qmp [-s|-S|-f KEYS] COMMAND_JSON...
	case "$1" in
	-s | -S) "$QMP" -t 30 "$1" "$SOCK" "$2" ;;
	-f) "$QMP" -t 30 -f "$2" "$SOCK" "$3" ;;
	*) "$QMP" -t 30 "$SOCK" "$@" ;;
	esac
}

stop_qemu() {
	[ -n "$qpid" ] || return 0
	qmp '{"execute":"quit"}' > /dev/null 2>&1
	i=0
	while kill -0 "$qpid" 2>/dev/null && [ $i -lt 50 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	kill -9 "$qpid" 2>/dev/null
	wait "$qpid" 2>/dev/null
	qpid=
}

cleanup() {
	stop_qemu
	if [ "$was_loaded" = 1 ]; then
		grep -q '^kvm_statsfd ' /proc/modules || insmod "$KO" stats=all
	else
		grep -q '^kvm_statsfd ' /proc/modules && rmmod kvm_statsfd
	fi
	rm -rf "$T"
}
trap cleanup EXIT

# start_qemu LOG: a paused VM with 2 vCPUs: q35, or on arm64 virt with
# the host's GIC and CPU (KVM's only choices) running ks-guest-arm64.S,
# which powers it off: -no-shutdown keeps QEMU and the VM then.
start_qemu() {
	rm -f "$SOCK"
	if [ "$ARCH" = arm64 ]; then
		"$QEMU" -accel kvm -S -nodefaults -display none -no-user-config \
			-machine virt,gic-version=host -cpu host -m 64 -smp 2 \
			-kernel "$GUEST" -no-shutdown \
			-qmp "unix:$SOCK,server=on,wait=off" > "$1" 2>&1 &
	else
		"$QEMU" -accel kvm -S -nodefaults -display none -no-user-config \
			-machine q35 -m 64 -smp 2 \
			-qmp "unix:$SOCK,server=on,wait=off" > "$1" 2>&1 &
	fi
	qpid=$!
}

# --- reading ks-qmp -s / -S output -------------------------------------
# -s lines: <qom-path|-> <provider> <name> <value>
# -S lines: <provider> <target> <name> <type> <unit> <base> <exp> <bucket>

schema_names() {	# schema_names FILE TARGET
	awk -v t="$2" '$1 == "kvm" && $2 == t { print $3 }' "$1"
}

paths() {	# paths FILE: the qom-paths in an answer, in order
	awk '!seen[$1]++ { print $1 }' "$1"
}

names_of() {	# names_of FILE PATH
	awk -v p="$2" '$1 == p { print $3 }' "$1"
}

value() {	# value FILE PATH NAME
	awk -v p="$2" -v s="$3" '$1 == p && $3 == s { print $4 }' "$1"
}

total() {	# total VALUE: the sum of a comma-separated list
	echo "$1" | awk -F, '{ t = 0; for (i = 1; i <= NF; i++) t += $i; print t }'
}

# QEMU 7.2 builds each histogram's list by prepending bucket after bucket
# (and each answer's stat list likewise): it shows buckets last first.
# Measured: the I/O exits counted by io_in_exits + io_out_exits sit at
# position 180 - 123 of exit_reasons_svm.  KS_QEMU_HIST_REVERSED=0 for a
# QEMU that lists them first first.
HIST_REVERSED=${KS_QEMU_HIST_REVERSED:-1}

bucket() {	# bucket VALUE INDEX: bucket INDEX (0-based) of a histogram
	echo "$1" | awk -F, -v i="$2" -v r="$HIST_REVERSED" \
		'{ print (r == 1 ? $(NF - i) : $(i + 1)) }'
}

# --- checks, each a command that fails with a diagnostic ---------------

equals() { [ "$1" = "$2" ] || { echo "'$1', expected '$2'"; return 1; }; }

has_targets() {	# has_targets SCHEMAFILE
	grep -q '^kvm vm ' "$1" && grep -q '^kvm vcpu ' "$1" && return 0
	cat "$1"
	return 1
}

only_path() {	# only_path FILE PATH
	equals "$(paths "$1" | tr '\n' ' ')" "$2 "
}

# Every vCPU (or the VM, path "-") answers exactly the schema's names, in
# the schema's order.
answers_schema() {	# answers_schema FILE SCHEMAFILE TARGET NPATHS
	schema_names "$2" "$3" > "$T/want"
	np=$(paths "$1" | wc -l)
	[ "$np" = "$4" ] || { echo "$np results, expected $4"; return 1; }
	for p in $(paths "$1"); do
		names_of "$1" "$p" > "$T/got"
		if ! cmp -s "$T/want" "$T/got"; then
			echo "$p: names differ from the schema's $3 stats:"
			diff "$T/want" "$T/got" | head -n 10
			return 1
		fi
	done
	[ -s "$T/want" ] || { echo "empty schema"; return 1; }
}

has_no_module_stats() {	# has_no_module_stats FILE...
	for s in $MODULE_STATS; do
		if grep -q " $s " "$@"; then
			echo "found $s:"
			grep -h " $s " "$@" | head -n 3
			return 1
		fi
	done
}

only_names() {	# only_names FILE NPATHS NAME...: each path has just NAMEs
	f=$1 np=$2
	shift 2
	got=$(paths "$f" | wc -l)
	[ "$got" = "$np" ] || { echo "$got results, expected $np"; cat "$f"; return 1; }
	want=$(echo "$@" | tr ' ' '\n' | sort | tr '\n' ' ')
	for p in $(paths "$f"); do
		have=$(names_of "$f" "$p" | sort | tr '\n' ' ')
		[ "$have" = "$want" ] || { echo "$p: '$have', expected '$want'"; return 1; }
	done
}

# A vCPU that never ran has no exit: QEMU's exits are the kernel's
# (debugfs, summed over the vCPUs), and that is 0 where the kernel's
# "exits" counts VM exits only.  (Debian's 5.10.0-46 also adds one to
# "exits" for each MSR filter range kvm_msr_allowed() passes over, and
# QEMU installs a filter: there it is not 0 before any VM exit.)
zero_exits() {	# zero_exits FILE DBG_SNAPSHOT
	[ -s "$1" ] || { echo "empty answer"; return 1; }
	k=$(dbg_value "$2" exits)
	sum=0
	for p in $(paths "$1"); do
		v=$(value "$1" "$p" exits)
		[ "$v" = 0 ] || [ "$k" != 0 ] || {
			echo "$p: exits=$v; its non-zero stats:"
			awk -v p="$p" '$1 == p && $4 !~ /^[0,]*$/ { printf "%s=%s ", $3, $4 }' "$1"
			return 1
		}
		sum=$((sum + v))
	done
	[ "$sum" = "$k" ] || { echo "exits: QEMU's sum $sum, debugfs $k"; return 1; }
	[ "$k" = 0 ] || echo "the kernel counted $k exits before any vCPU ran"
}

ran() {	# ran FILE CPUS: vCPU 0 (cpu-index 0) exited at least once
	p=$(awk '$2 == 0 { print $1 }' "$2")
	v=$(value "$1" "$p" exits)
	if [ -z "$v" ] || [ "$v" -le 0 ]; then echo "$p: exits=$v"; return 1; fi
}

# The native schema lines of the run without the module are all there with
# the module, unchanged and in the same relative order, and every other
# line is one of the module's stats.  (QEMU 7.2 lists stats last first, so
# the module's, which the fd serves after the native ones, come first.)
native_kept() {	# native_kept NATIVE_SCHEMA MODULE_SCHEMA TARGET
	grep "^kvm $3 " "$1" > "$T/native"
	[ -s "$T/native" ] || { echo "no native $3 stats"; return 1; }
	grep "^kvm $3 " "$2" > "$T/all"
	grep -vxF -f "$T/native" "$T/all" > "$T/rest"
	grep -xF -f "$T/native" "$T/all" > "$T/kept"
	cmp -s "$T/native" "$T/kept" || {
		echo "native $3 stats changed or reordered:"
		diff "$T/native" "$T/kept" | head
		return 1
	}
	[ -s "$T/rest" ] || { echo "no extended $3 stats"; return 1; }
	for s in $(awk '{ print $3 }' "$T/rest"); do
		echo " $MODULE_STATS " | tr '\n' ' ' | grep -q " $s " ||
			{ echo "unexpected $3 stat: $(grep " $s " "$T/rest")"; return 1; }
	done
	# The two blocks are not interleaved.
	first_native=$(grep -nxF -f "$T/native" "$T/all" | head -n 1 | cut -d: -f1)
	last_rest=$(grep -nxF -f "$T/rest" "$T/all" | tail -n 1 | cut -d: -f1)
	[ "$last_rest" -lt "$first_native" ] ||
		{ echo "module stats interleaved with native ones"; return 1; }
}

schema_line() {	# schema_line FILE LINE: the exact schema line is there
	grep -qx "$2" "$1" || {
		echo "no line '$2'; have:"
		grep " $(echo "$2" | awk '{ print $2 " " $3 }') " "$1"
		return 1
	}
}

extended_schema() {	# extended_schema FILE
	[ -n "$EXIT_STAT" ] || { echo "no exit_reasons_svm, _vmx or _arm64"; return 1; }
	if [ "$ARCH" = arm64 ]; then
		set -- "$1" "kvm vcpu exit_kinds_arm64 linear-histogram - - 0 1" \
			"kvm vm vcpus_exit_kinds_arm64 linear-histogram - - 0 1" \
			"kvm vcpu hvc_exits cumulative - - 0 -" \
			"kvm vcpu sysreg_read_exits cumulative - - 0 -" \
			"kvm vcpu exit_latency_mmio_hist log2-histogram seconds 10 -9 -"
	else
		set -- "$1" "kvm vcpu io_in_exits cumulative - - 0 -"
	fi
	f=$1
	shift
	for l in \
		"kvm vcpu $EXIT_STAT linear-histogram - - 0 1" \
		"kvm vm vcpus_$EXIT_STAT linear-histogram - - 0 1" \
		"kvm vcpu exit_latency_hist log2-histogram seconds 10 -9 -" \
		"kvm vcpu exit_latency_ns cumulative seconds 10 -9 -" \
		"kvm vcpu exit_latency_max_ns peak seconds 10 -9 -" \
		"kvm vcpu guest_ns cumulative seconds 10 -9 -" \
		"kvm vm vcpus_guest_ns cumulative seconds 10 -9 -" \
		"kvm vcpu userspace_exits linear-histogram - - 0 1" \
		"kvm vcpu in_guest instant - - 0 -" \
		"kvm vm vcpus instant - - 0 -" "$@"; do
		schema_line "$f" "$l" || return 1
	done
	set -- "$f"
	if grep -q '^kvm vcpu vcpus ' "$1"; then
		echo "vcpus is a vCPU stat"
		return 1
	fi
}

# libvirt keys the schema by name across the targets: a name that is both
# a VM and a vCPU stat makes it show none of KVM's stats.
names_disjoint() {	# names_disjoint SCHEMAFILE
	both=$(awk '$1 == "kvm" && $2 == "vm" { vm[$3] = 1 }
		$1 == "kvm" && $2 == "vcpu" { vcpu[$3] = 1 }
		END { for (n in vm) if (n in vcpu) print n }' "$1")
	[ -z "$both" ] || { echo "both VM and vCPU stats:" $both; return 1; }
}

paused_extended() {	# paused_extended VMFILE VCPUFILE
	for p in - $(paths "$2"); do
		f=$2 v=
		[ "$p" = - ] && f=$1 v=vcpus_
		h=$(value "$f" "$p" "$v$EXIT_STAT")
		nb=$(echo "$h" | awk -F, '{ print NF }')
		[ "$nb" = "$EXIT_BUCKETS" ] || { echo "$p: $nb buckets"; return 1; }
		[ "$(total "$h")" = 0 ] || { echo "$p: $h"; return 1; }
		if [ "$ARCH" = arm64 ]; then
			k=$(value "$f" "$p" "${v}exit_kinds_arm64")
			[ "$k" = 0,0,0,0,0 ] || { echo "$p: exit_kinds_arm64 $k"; return 1; }
		fi
		g=$(value "$f" "$p" "${v}guest_ns")
		[ "$g" = 0 ] || { echo "$p: guest_ns=$g"; return 1; }
	done
}

# Per vCPU: the histogram's total is exits; I/O and MSR counts match
# their buckets; latency, guest time and userspace exits are plausible.
# Where the kernel's "exits" counted before any vCPU ran (PAUSED_EXITS,
# debugfs, not 0: see zero_exits) it counts more than VM exits, and the
# total can only be at most exits.
running_vcpus() {	# running_vcpus VCPUFILE PAUSED_EXITS
	[ "$ARCH" = x86 ] || { running_vcpus_arm64 "$1"; return; }
	for p in $(paths "$1"); do
		ex=$(value "$1" "$p" exits)
		h=$(value "$1" "$p" "$EXIT_STAT")
		ht=$(total "$h")
		bad=0
		if [ -z "$ex" ] || [ -z "$ht" ]; then
			bad=1
		elif [ "$2" = 0 ]; then
			[ "$ht" = "$ex" ] || bad=1
		else
			[ "$ht" -le "$ex" ] || bad=1
		fi
		if [ "$bad" = 1 ]; then
			echo "$p: exits=$ex, $EXIT_STAT total=$ht (the kernel's exits before any run: $2)"
			return 1
		fi
		[ "$2" = 0 ] || echo "$p: exits=$ex, $EXIT_STAT total=$ht: the kernel's exits are not VM exits only"
		[ "$ex" -gt 0 ] || continue
		io=$(($(value "$1" "$p" io_in_exits) + $(value "$1" "$p" io_out_exits)))
		[ "$io" = "$(bucket "$h" "$EXIT_IO")" ] ||
			{ echo "$p: io exits $io, I/O bucket $(bucket "$h" "$EXIT_IO")"; return 1; }
		msr=$(($(value "$1" "$p" msr_read_exits) + $(value "$1" "$p" msr_write_exits)))
		mb=0
		for b in $EXIT_MSR; do mb=$((mb + $(bucket "$h" "$b"))); done
		[ "$msr" = "$mb" ] ||
			{ echo "$p: msr exits $msr, MSR bucket(s) $mb"; return 1; }
		plausible "$1" "$p" "$ex" || return 1
	done
	# SeaBIOS talks to fw_cfg and PCI through I/O ports that QEMU serves.
	io=0
	for p in $(paths "$1"); do
		io=$((io + $(bucket "$(value "$1" "$p" userspace_exits)" $KVM_EXIT_IO)))
	done
	[ "$io" -gt 0 ] || { echo "no KVM_EXIT_IO in any vCPU's userspace_exits"; return 1; }
}

# A vCPU that exited EX times: latency, guest time and userspace exits are
# plausible, and it is not in the guest (the VM is stopped).
plausible() {	# plausible VCPUFILE PATH EX
	lt=$(total "$(value "$1" "$2" exit_latency_hist)")
	if [ "$lt" -le 0 ] || [ "$lt" -gt "$3" ]; then
		echo "$2: exit_latency_hist total $lt, exits $3"
		return 1
	fi
	g=$(value "$1" "$2" guest_ns)
	[ "$g" -gt 0 ] || { echo "$2: guest_ns=$g"; return 1; }
	ig=$(value "$1" "$2" in_guest)
	[ "$ig" = 0 ] || { echo "$2: in_guest=$ig while stopped"; return 1; }
	ut=$(total "$(value "$1" "$2" userspace_exits)")
	[ "$ut" -le "$3" ] || { echo "$2: userspace_exits $ut > exits $3"; return 1; }
}

# arm64, per vCPU: every exit has a kind, every trap exit a class; the
# HVC, system register and WFx counts are their classes', and the native
# counts of HVCs and WFx; MMIO to QEMU is its userspace exits by reason.
# Summed over the vCPUs: ks-guest-arm64.S's loop exactly.
running_vcpus_arm64() {	# running_vcpus_arm64 VCPUFILE
	for p in $(paths "$1"); do
		ex=$(value "$1" "$p" exits)
		k=$(value "$1" "$p" exit_kinds_arm64)
		h=$(value "$1" "$p" exit_reasons_arm64)
		[ "$(total "$k")" = "$ex" ] ||
			{ echo "$p: exits=$ex, exit_kinds_arm64 $k"; return 1; }
		[ "$(total "$h")" = "$(bucket "$k" $KIND_TRAP)" ] ||
			{ echo "$p: exit_reasons_arm64 total $(total "$h"), trap exits $(bucket "$k" $KIND_TRAP)"; return 1; }
		v=$(value "$1" "$p" hvc_exits)
		c=$(($(bucket "$h" $EC_HVC64) + $(bucket "$h" $EC_HVC32)))
		n=$(value "$1" "$p" hvc_exit_stat)
		if [ "$v" != "$c" ] || [ "$v" != "$n" ]; then
			echo "$p: hvc_exits $v, HVC classes $c, native hvc_exit_stat $n"
			return 1
		fi
		v=$(($(value "$1" "$p" sysreg_read_exits) + $(value "$1" "$p" sysreg_write_exits)))
		c=$(bucket "$h" $EC_SYS64)
		[ "$v" = "$c" ] || { echo "$p: sysreg exits $v, SYS64 class $c"; return 1; }
		v=$(($(value "$1" "$p" wfi_exits) + $(value "$1" "$p" wfe_exits)))
		c=$(bucket "$h" $EC_WFX)
		n=$(($(value "$1" "$p" wfi_exit_stat) + $(value "$1" "$p" wfe_exit_stat)))
		if [ "$v" != "$c" ] || [ "$v" != "$n" ]; then
			echo "$p: wfi+wfe exits $v, WFx class $c, native $n"
			return 1
		fi
		v=$(bucket "$(value "$1" "$p" userspace_exits)" $KVM_EXIT_MMIO)
		n=$(value "$1" "$p" mmio_exit_user)
		[ "$v" = "$n" ] || { echo "$p: KVM_EXIT_MMIO $v, native mmio_exit_user $n"; return 1; }
		c=$(bucket "$h" $EC_DABT_LOW)
		[ "$v" -le "$c" ] || { echo "$p: $v MMIO exits, DABT_LOW class $c"; return 1; }
		[ "$ex" -gt 0 ] || continue
		plausible "$1" "$p" "$ex" || return 1
	done
	n=$KS_GUEST_LOOPS
	printf '%s\n' "hvc_exits $((n + 1))" "sysreg_read_exits $n" \
		"sysreg_write_exits 0" "mmio_writes $n" "mmio_reads 0" > "$T/loop"
	while read -r s want; do
		v=$(sum_of "$1" "$s")
		[ "$v" = "$want" ] ||
			{ echo "$s: $v over the vCPUs, the guest's loop makes $want"; return 1; }
	done < "$T/loop"
}

sum_of() {	# sum_of FILE NAME: a scalar stat summed over the paths
	awk -v s="$2" '$3 == s { t += $4 } END { printf "%.0f\n", t }' "$1"
}

# arm64, with or without the module: the guest's loop shows in the native
# stats (summed over the vCPUs): an HVC each time and one to power off,
# an MMIO write to QEMU each time.
guest_loop_native() {	# guest_loop_native VCPUFILE
	v=$(sum_of "$1" hvc_exit_stat)
	[ "$v" = $((KS_GUEST_LOOPS + 1)) ] ||
		{ echo "hvc_exit_stat $v, expected $((KS_GUEST_LOOPS + 1))"; return 1; }
	v=$(sum_of "$1" mmio_exit_user)
	[ "$v" = "$KS_GUEST_LOOPS" ] ||
		{ echo "mmio_exit_user $v, expected $KS_GUEST_LOOPS"; return 1; }
}

# Every stat QEMU shows of the VM and its vCPUs (native and the module's)
# is the stats fd's, as kvm-statsfd show --json reads it through the
# module, and the module's are among them.  QEMU's histograms are turned
# first bucket first (HIST_REVERSED), its booleans into 0 and 1.
tool_values() {	# tool_values JSON: "<vm|vcpuN> <name> <value[,...]>"
	awk '
	/"vm": \{/ { ctx = "vm" }
	/"vcpu": [0-9]+/ { v = $0; gsub(/[^0-9]/, "", v); ctx = "vcpu" v }
	/"name": "/ { name = $0; sub(/.*"name": "/, "", name); sub(/".*/, "", name) }
	/"value": / { v = $0; gsub(/[^0-9]/, "", v); print ctx, name, v }
	/"buckets": \[/ { inb = 1; list = ""; next }
	inb && /\]/ { inb = 0; print ctx, name, list; next }
	inb { v = $0; gsub(/[^0-9]/, "", v); list = list (list == "" ? "" : ",") v }
	' "$1"
}

qemu_values() {	# qemu_values CPUS VMFILE VCPUFILE: the same of QEMU's answers
	awk -v r="$HIST_REVERSED" -v vmf="$2" '
	FNR == NR { idx[$1] = $2; next }
	{
		ctx = FILENAME == vmf ? "vm" : "vcpu" idx[$1]
		v = $4
		if (v == "true") v = 1
		if (v == "false") v = 0
		if (r == 1 && v ~ /,/) {
			n = split(v, b, ",")
			v = b[n]
			for (i = n - 1; i >= 1; i--) v = v "," b[i]
		}
		print ctx, $3, v
	}' "$1" "$2" "$3"
}

tool_agrees() {	# tool_agrees TAG
	[ "$(cat "$T/$1.tool.rc")" = 0 ] ||
		{ echo "$KS show --json failed:"; cat "$T/$1.tool.err"; return 1; }
	tool_values "$T/$1.tool.json" > "$T/$1.tool"
	qemu_values "$T/$1.cpus" "$T/$1.vm.run" "$T/$1.vcpu.run" > "$T/$1.qemu"
	awk -v mods="$(tr '\n' ' ' < "$T/module_stats")" '
	FNR == NR { tool[$1 " " $2] = $3; next }
	{
		k = $1 " " $2
		if (!(k in tool)) { print k ": QEMU " $3 ", not read by the tool"; bad = 1; next }
		if (tool[k] != $3) { print k ": QEMU " $3 ", stats fd " tool[k]; bad = 1; next }
		n++
		if (index(" " mods " ", " " $2 " ")) m++
	}
	END {
		if (!m) { print "none of the module stats compared"; bad = 1 }
		if (!bad) print n " values compared, " m " of them the module'"'"'s"
		exit bad
	}' "$T/$1.tool" "$T/$1.qemu"
}

vm_is_sum() {	# vm_is_sum VMFILE VCPUFILE: VM histograms = sum of vCPUs'
	kinds=
	[ "$ARCH" = arm64 ] && kinds=exit_kinds_arm64
	for s in $EXIT_STAT $kinds exit_latency_hist userspace_exits guest_ns; do
		want=$(awk -v s="$s" '$3 == s { n = split($4, v, ",");
			for (i = 1; i <= n; i++) t[i] += v[i] }
			END { for (i = 1; i <= n; i++) printf "%s%.0f", (i > 1 ? "," : ""), t[i]; print "" }' "$2")
		got=$(value "$1" - "vcpus_$s")
		[ "$got" = "$want" ] || { echo "vm vcpus_$s: $got"; echo "sum of vCPUs: $want"; return 1; }
	done
}

# The VM's debugfs directory (/sys/kernel/debug/kvm/<pid>-<fd>), QEMU's.
vm_dbg_dir() {
	d=
	for x in /sys/kernel/debug/kvm/"$qpid"-*; do [ -d "$x" ] && d=$x; done
	echo "$d"
}

# dbg_snapshot FILE: "<name> <value>" of every stat file of the VM's
# debugfs directory (VM stats, and vCPU stats summed over the vCPUs).
dbg_snapshot() {
	d=$(vm_dbg_dir)
	: > "$1"
	[ -d "$d" ] || return 0
	for x in "$d"/*; do
		[ -f "$x" ] && echo "${x##*/} $(cat "$x")" >> "$1"
	done
}

dbg_value() {	# dbg_value SNAPSHOT NAME
	awk -v s="$2" '$1 == s { print $2 }' "$1"
}

# No vCPU ran yet: the kernel handled no exit of any kind it counts by
# reason.  ("exits" itself is not asked: see zero_exits.)
dbg_no_exit_handled() {	# dbg_no_exit_handled SNAPSHOT
	[ -s "$1" ] || { echo "no debugfs directory for QEMU's VM"; return 1; }
	for n in $DBG_HANDLED; do
		v=$(dbg_value "$1" "$n")
		[ "$v" = 0 ] || { echo "debugfs $n=$v"; awk '$2 != 0' "$1" | tr '\n' ' '; return 1; }
	done
}

powered_off() {	# powered_off STATUS: query-status's answer after SYSTEM_OFF
	grep -q '"status":"shutdown"' "$1" && grep -q '"running":false' "$1" ||
		{ cat "$1"; return 1; }
}

dbg_ran() {	# dbg_ran SNAPSHOT: the vCPUs ran (SeaBIOS's port I/O, arm64's MMIO)
	[ -s "$1" ] || { echo "no debugfs directory for QEMU's VM"; return 1; }
	v=$(dbg_value "$1" "$DBG_RAN")
	if [ -z "$v" ] || [ "$v" -le 0 ]; then echo "debugfs $DBG_RAN=$v"; return 1; fi
}

no_kvm() {	# no_kvm FILE...: QEMU answered no kvm stat (no error either)
	if grep -q . "$@"; then
		head -n 5 "$@"
		return 1
	fi
}

# The native scalar values QEMU shows are the kernel's own, as its per-VM
# debugfs files show them: VM stats as they are, vCPU stats summed over
# the vCPUs (or per vCPU where a vcpuN directory has the file).  The VM
# must be stopped.  Booleans (QEMU: true/false) and histograms are left
# out.
native_match_debugfs() {	# native_match_debugfs TAG
	d=$(vm_dbg_dir)
	[ -d "$d" ] || { echo "no /sys/kernel/debug/kvm/$qpid-*"; return 1; }
	compared=0
	for target in vm vcpu; do
		f=$T/$1.$target.run
		awk -v t="$target" '$1 == "kvm" && $2 == t && $4 !~ /histogram/ { print $3 }' \
			"$T/$1.schemas" | grep -vxF -f "$T/module_stats" > "$T/scalars"
		# name, QEMU's value per path, summed; "x" when not numeric
		awk 'NR == FNR { want[$1] = 1; next }
			want[$3] { if ($4 !~ /^[0-9]+$/) bad[$3] = 1; sum[$3] += $4; n[$3]++ }
			END { for (s in n) printf "%s %s\n", s, bad[s] ? "x" : sprintf("%.0f", sum[s]) }' \
			"$T/scalars" "$f" > "$T/values"
		while read -r name v; do
			[ "$v" != x ] || continue
			if [ "$target" = vcpu ] && [ -f "$d/vcpu0/$name" ]; then
				while read -r path idx; do
					k=$(cat "$d/vcpu$idx/$name")
					q=$(value "$f" "$path" "$name")
					[ "$k" = "$q" ] || { echo "$path $name: QEMU $q, debugfs $k"; return 1; }
					compared=$((compared + 1))
				done < "$T/$1.cpus"
				continue
			fi
			[ -f "$d/$name" ] || continue
			k=$(cat "$d/$name")
			[ "$k" = "$v" ] || { echo "$target $name: QEMU $v (summed over vCPUs for vcpu), debugfs $k"; return 1; }
			compared=$((compared + 1))
		done < "$T/values"
	done
	[ "$compared" -ge "$MIN_COMPARED" ] || { echo "only $compared values compared"; return 1; }
	echo "$compared values compared"
}

# Without binary stats of the kernel's own: the native stats the module
# serves (every stat of TARGET that is not one of the module's) are the
# VM's debugfs stats, as QEMU shows a u64 counter: no unit, or seconds
# (10^-9) for a "_ns" one; in the VM or in the vCPU schema, not both, all
# of them between the two; none interleaved with the module's.
native_is_debugfs() {	# native_is_debugfs SCHEMA TARGET DBG_SNAPSHOT
	awk '{ print $1 }' "$3" | sort > "$T/dbg.names"
	[ -s "$T/dbg.names" ] || { echo "no debugfs stats"; return 1; }
	grep "^kvm $2 " "$1" > "$T/all"
	awk '{ print $3 }' "$T/all" | grep -vxF -f "$T/module_stats" > "$T/native.names"
	[ -s "$T/native.names" ] || { echo "no native $2 stats"; return 1; }
	while read -r n; do
		grep -qxF "$n" "$T/dbg.names" || { echo "$2 stat $n is not in debugfs"; return 1; }
		l=$(grep "^kvm $2 $n " "$1")
		case "$n" in
		*_ns) echo "$l" | grep -Eq "^kvm $2 $n (cumulative|instant|peak) seconds 10 -9 -$" ;;
		*) echo "$l" | grep -Eq "^kvm $2 $n (cumulative|instant|peak) - - 0 -$" ;;
		esac || { echo "unexpected schema line: $l"; return 1; }
	done < "$T/native.names"
	# The module's are listed first (QEMU 7.2 lists stats last first).
	last_mod=$(awk '{ print $3 }' "$T/all" | grep -nxF -f "$T/module_stats" | tail -n 1 | cut -d: -f1)
	first_nat=$(awk '{ print $3 }' "$T/all" | grep -nxF -f "$T/native.names" | head -n 1 | cut -d: -f1)
	[ -z "$last_mod" ] || [ "$last_mod" -lt "$first_nat" ] ||
		{ echo "module stats interleaved with native ones"; return 1; }
	[ "$2" = vcpu ] || return 0
	# Every debugfs stat once, in the VM's schema or the vCPUs'.
	awk '$1 == "kvm" { print $3 }' "$1" | grep -vxF -f "$T/module_stats" | sort > "$T/both"
	dup=$(uniq -d "$T/both")
	[ -z "$dup" ] || { echo "in both schemas: $dup"; return 1; }
	cmp -s "$T/both" "$T/dbg.names" || {
		echo "native stats (<) and debugfs stats (>) differ:"
		diff "$T/both" "$T/dbg.names" | head
		return 1
	}
}

# --- one QEMU, paused then running --------------------------------------

# scenario LABEL TAG STATS: writes $T/TAG.* and reports the cases common
# to both runs; STATS is 1 when QEMU has kvm stats to show (the kernel's
# or the module's), 0 when it has none (no module, no native binary stats).
scenario() {
	L=$1 tag=$2 stats=$3
	start_qemu "$T/$tag.qemu.log"
	# QEMU's start (about 50 shared libraries, a q35 machine) is the one
	# step that needs a guest CPU for long: under TCG on a loaded host it
	# once took more than the 30 s a QMP command gets (6.1-rt, the
	# machine's load at 12, 2026-11-28).  A hang still fails, in 3 minutes.
	if ! "$QMP" -t 180 "$SOCK" '{"execute":"query-status"}' \
		> "$T/$tag.status" 2> "$T/$tag.err" ||
		! grep -q '"running":false' "$T/$tag.status"; then
		ok 1 "$L: QEMU starts paused and answers QMP" \
			"$(cat "$T/$tag.status" "$T/$tag.err")" "QEMU:" \
			"$(head -n 20 "$T/$tag.qemu.log")"
		stop_qemu
		return 1
	fi
	ok 0 "$L: QEMU starts paused and answers QMP"

	qmp -S '{"execute":"query-stats-schemas"}' > "$T/$tag.schemas"
	# The module's exit-reason histogram, as its descriptors name it.
	[ "$tag" = mod ] && exit_stat_of "$T/$tag.schemas"
	qmp -s '{"execute":"query-stats","arguments":{"target":"vm"}}' > "$T/$tag.vm.paused"
	qmp -s '{"execute":"query-stats","arguments":{"target":"vcpu"}}' > "$T/$tag.vcpu.paused"
	qmp -f qom-path,cpu-index '{"execute":"query-cpus-fast"}' > "$T/$tag.cpus"
	dbg_snapshot "$T/$tag.dbg.paused"
	check "$L: paused: debugfs: no vCPU handled an exit yet ($DBG_WHAT)" \
		dbg_no_exit_handled "$T/$tag.dbg.paused"
	if [ "$stats" = 1 ]; then
		check "$L: query-stats-schemas has kvm vm and vcpu stats" \
			has_targets "$T/$tag.schemas"
		check "$L: paused: query-stats vm answers every vm stat of the schema" \
			answers_schema "$T/$tag.vm.paused" "$T/$tag.schemas" vm 1
		check "$L: paused: query-stats vcpu answers 2 vCPUs with every vcpu stat of the schema" \
			answers_schema "$T/$tag.vcpu.paused" "$T/$tag.schemas" vcpu 2
		check "$L: paused: vCPUs that never ran have exits 0" \
			zero_exits "$T/$tag.vcpu.paused" "$T/$tag.dbg.paused"
	else
		check "$L: query-stats-schemas has no kvm stats (no binary stats)" \
			no_kvm "$T/$tag.schemas"
		check "$L: paused: query-stats vm answers no kvm stats" \
			no_kvm "$T/$tag.vm.paused"
		check "$L: paused: query-stats vcpu answers no kvm stats" \
			no_kvm "$T/$tag.vcpu.paused"
	fi

	want=$NATIVE_PAIR
	[ "$tag" = mod ] && want="exits $EXIT_STAT guest_ns"
	names=$(echo "$want" | sed 's/\([a-z0-9_]*\)/"\1"/g; s/ /,/g')
	qmp -s "{\"execute\":\"query-stats\",\"arguments\":{\"target\":\"vcpu\",\"providers\":[{\"provider\":\"kvm\",\"names\":[$names]}]}}" \
		> "$T/$tag.vcpu.names" 2>&1
	p0=$(awk '$2 == 0 { print $1 }' "$T/$tag.cpus")
	qmp -s "{\"execute\":\"query-stats\",\"arguments\":{\"target\":\"vcpu\",\"vcpus\":[\"$p0\"]}}" \
		> "$T/$tag.vcpu.one" 2>&1
	if [ "$stats" = 1 ]; then
		check "$L: providers filter: only $want" \
			only_names "$T/$tag.vcpu.names" 2 $want
		check "$L: vcpus filter: only $p0" \
			only_path "$T/$tag.vcpu.one" "$p0"
	else
		check "$L: providers filter kvm: answers nothing, no error" \
			no_kvm "$T/$tag.vcpu.names"
		check "$L: vcpus filter $p0: answers nothing, no error" \
			no_kvm "$T/$tag.vcpu.one"
	fi

	# Run SeaBIOS, then stop: the counters are still while we read.  The
	# arm64 guest stops itself: poll for it (QEMU's start was the slow
	# part; its loop takes well under a second).
	qmp '{"execute":"cont"}' > /dev/null
	if [ "$ARCH" = arm64 ]; then
		mem_running=$(awk '/^MemAvailable/ { print $2 / 1024 " MB" }' /proc/meminfo)
		i=0
		while qmp '{"execute":"query-status"}' > "$T/$tag.status.run" &&
			! grep -q '"status":"shutdown"' "$T/$tag.status.run" &&
			[ $i -lt 600 ]; do
			sleep 0.1
			i=$((i + 1))
		done
	else
		sleep "$RUN_SECONDS"
		mem_running=$(awk '/^MemAvailable/ { print $2 / 1024 " MB" }' /proc/meminfo)
		qmp '{"execute":"query-status"}' > "$T/$tag.status.run"
		qmp '{"execute":"stop"}' > /dev/null
	fi
	qmp -s '{"execute":"query-stats","arguments":{"target":"vcpu"}}' > "$T/$tag.vcpu.run"
	qmp -s '{"execute":"query-stats","arguments":{"target":"vm"}}' > "$T/$tag.vm.run"
	dbg_snapshot "$T/$tag.dbg.run"
	# The stats fd read directly, while the VM is still stopped.
	if [ "$tag" = mod ] && command -v "$KS" > /dev/null; then
		"$KS" show "$qpid" --json > "$T/$tag.tool.json" 2> "$T/$tag.tool.err"
		echo $? > "$T/$tag.tool.rc"
	fi
	if [ "$ARCH" = arm64 ]; then
		check "$L: cont ran the guest to its PSCI SYSTEM_OFF (status shutdown, not running)" \
			powered_off "$T/$tag.status.run"
	else
		check "$L: cont ran the VM for ${RUN_SECONDS}s" \
			grep -q '"running":true' "$T/$tag.status.run"
	fi
	if [ "$stats" = 1 ]; then
		check "$L: running then stopped: vCPU 0 exited, exits > 0" \
			ran "$T/$tag.vcpu.run" "$T/$tag.cpus"
		check "$L: running then stopped: query-stats vcpu answers every vcpu stat of the schema" \
			answers_schema "$T/$tag.vcpu.run" "$T/$tag.schemas" vcpu 2
		check "$L: running then stopped: native values are the kernel's (debugfs)" \
			native_match_debugfs "$tag"
		[ "$ARCH" = x86 ] ||
			check "$L: the guest's loop in the native stats: hvc_exit_stat $((KS_GUEST_LOOPS + 1)), mmio_exit_user $KS_GUEST_LOOPS" \
				guest_loop_native "$T/$tag.vcpu.run"
	else
		check "$L: running then stopped: debugfs: the vCPUs ran, io_exits > 0" \
			dbg_ran "$T/$tag.dbg.run"
		check "$L: running then stopped: query-stats vm and vcpu answer no kvm stats" \
			no_kvm "$T/$tag.vm.run" "$T/$tag.vcpu.run"
	fi
	stop_qemu
}

# --- main ---------------------------------------------------------------

if [ ! -c /dev/kvm ] || [ ! -x "$QEMU" ]; then
	skip "qemu query-stats" "no /dev/kvm or no $QEMU"
	exit 0
fi
if ! command -v "$QMP" > /dev/null; then
	ok 1 "qemu query-stats: ks-qmp is in PATH"
	exit 1
fi

echo "$MODULE_STATS" | tr ' ' '\n' | grep . > "$T/module_stats"
grep -q '^kvm_statsfd ' /proc/modules && rmmod kvm_statsfd
# The kernel's own answer, asked without the module.
caps=$("$KCAP" $KVM_CAP_BINARY_STATS_FD 2>&1)
native=${caps%% *}
check "no module: KVM_CHECK_EXTENSION(KVM_CAP_BINARY_STATS_FD) answers 0 or 1, the same on /dev/kvm and a VM fd" \
	equals "$caps" "$native $native"
[ "$native" = 1 ] || native=0
echo "# the kernel's own KVM_CAP_BINARY_STATS_FD: $native"
if scenario "no module" nat "$native" && [ "$native" = 1 ]; then
	check "no module: none of the module's stats in schemas or answers" \
		has_no_module_stats "$T/nat.schemas" "$T/nat.vm.paused" \
		"$T/nat.vcpu.paused" "$T/nat.vm.run" "$T/nat.vcpu.run"
fi

# Every stat group: latency, userspace exits are not in the default.
if ! out=$(insmod "$KO" stats=all 2>&1); then
	ok 1 "module: insmod $KO" "$out"
	exit 1
fi
check "module: KVM_CHECK_EXTENSION(KVM_CAP_BINARY_STATS_FD) is 1 on /dev/kvm and a VM fd" \
	equals "$("$KCAP" $KVM_CAP_BINARY_STATS_FD 2>&1)" "1 1"
if scenario "module" mod 1; then
	if [ "$native" = 1 ]; then
		check "module: schema: every native vm stat unchanged, in order, plus only the module's" \
			native_kept "$T/nat.schemas" "$T/mod.schemas" vm
		check "module: schema: every native vcpu stat unchanged, in order, plus only the module's" \
			native_kept "$T/nat.schemas" "$T/mod.schemas" vcpu
	else
		check "module: schema: the native vm stats are the kernel's debugfs stats, then only the module's" \
			native_is_debugfs "$T/mod.schemas" vm "$T/mod.dbg.run"
		check "module: schema: the native vcpu stats are the kernel's debugfs stats, every one once, then only the module's" \
			native_is_debugfs "$T/mod.schemas" vcpu "$T/mod.dbg.run"
	fi
	check "module: schema: extended stats have the types, units and buckets QEMU shows" \
		extended_schema "$T/mod.schemas"
	check "module: schema: no name is both a VM and a vCPU stat (libvirt keys the schema by name)" \
		names_disjoint "$T/mod.schemas"
	check "module: paused: $EXIT_STAT has $EXIT_BUCKETS buckets, all 0, guest_ns 0 (VM and vCPUs)" \
		paused_extended "$T/mod.vm.paused" "$T/mod.vcpu.paused"
	check "module: paused: vm vcpus=2 before any vCPU ran" \
		equals "$(value "$T/mod.vm.paused" - vcpus)" 2
	if [ "$ARCH" = arm64 ]; then
		what="exit_kinds_arm64 total = exits, $EXIT_STAT total = trap exits; hvc, sysreg, wfx, MMIO counts, latency, guest_ns, userspace_exits; the guest's loop exactly"
	else
		what="$EXIT_STAT total = exits; io/msr buckets, latency, guest_ns, userspace_exits"
	fi
	check "module: running then stopped: per vCPU, $what" \
		running_vcpus "$T/mod.vcpu.run" "$(dbg_value "$T/mod.dbg.paused" exits)"
	check "module: running then stopped: the VM's stats are the sums of its vCPUs'" \
		vm_is_sum "$T/mod.vm.run" "$T/mod.vcpu.run"
	if command -v "$KS" > /dev/null; then
		check "module: running then stopped: every value QEMU shows is the stats fd's ($KS show --json)" \
			tool_agrees mod
	fi
	check "module: running then stopped: vm vcpus=2" \
		equals "$(value "$T/mod.vm.run" - vcpus)" 2
fi

echo "# guest memory: $(awk '/^MemTotal/ { print $2 / 1024 " MB" }' /proc/meminfo) total," \
	"${mem_running:-?} available while the last VM ran"
# Keep the answers for the log: the module's stats as QEMU shows them.
if [ -s "$T/mod.vcpu.run" ]; then
	echo "# query-stats vcpu with the module, the VM run then stopped:"
	awk '{ print "#   " $0 }' "$T/mod.vcpu.run" | head -n 200
	echo "# query-stats vm with the module:"
	awk '{ print "#   " $0 }' "$T/mod.vm.run"
fi
tap_end
