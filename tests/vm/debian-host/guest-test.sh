#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The debian-host lane's test, inside the booted Debian 12 host (systemd
# starts it once the boot is done: ks-guest-test.service, prepare.sh).
# The packages were installed in the image with apt before its first
# boot; this checks the host as an operator would find and use it:
#
#  1. the boot: kvm_statsfd loaded by systemd-modules-load from the
#     packaged modules-load.d entry, the DKMS build's module, no failed
#     unit, no error from us in the journal;
#  2. the exporter's packaged unit, enabled as README.Debian says, runs
#     sandboxed as the system user the package made (sysusers.d) and
#     serves the stats of a VM of root's (demo-vm);
#  3. another user's VM (demo-vm under systemd-run --uid=): root's tools
#     and the exporter read it, a third, unprivileged user cannot;
#  4. libvirt: libvirtd (bookworm's packages run the monolithic daemon,
#     started at boot and by socket activation) runs a transient domain;
#     virsh domstats --vm shows the module's stats beside KVM's, with the
#     values kvm-statsfd shows; the exporter names the VM by its domain
#     and UUID, as systemd-machined has them; virsh destroy ends it;
#  5. an upgrade to the next version with both VMs running: DKMS builds
#     the new module (it is not loaded: the old one keeps serving), the
#     exporter restarts on the new binary, a changed conffile is kept;
#     or, with ks.upgrade=tools, the same upgrade but of kvm-statsfd-dkms;
#  6. remove, then purge, with the VMs running: the module leaves every
#     kernel's tree but stays loaded, rmmod is refused while a stats fd
#     is open and works once it is closed, the VMs keep running, the
#     conffile stays after remove and goes with purge, nothing is left
#     but the exporter's system user (Debian policy, README.Debian).
#
# TAP goes to the second serial port (ttyS1), framed by "@@ begin NONCE"
# and "@@ end NONCE" (the nonce from the kernel command line), which
# lane.sh reads.  Payload in /opt/ks-test (lane.sh's second disk):
# demo-vm, upgrade/*.deb, versions ("OLD NEW").
# shellcheck disable=SC2016 # sh -c '...$1...' sh ARGS: expanded by that shell
set -u
exec 3> /dev/ttyS1
P=/opt/ks-test
read -r OLD NEW < "$P/versions"
REL=$(uname -r)
NONCE=$(sed -n 's/.*ks\.nonce=\([^ ]*\).*/\1/p' /proc/cmdline)
URL=http://127.0.0.1:9798/metrics
OURS="kvm-statsfd-dkms kvm-statsfd libkvmstats1 libkvmstats-dev kvm-statsfd-collectd"
export DEBIAN_FRONTEND=noninteractive
# The upgrade (ks.upgrade= on the kernel command line, lane.sh): "full",
# every package, so DKMS builds the new module here, under emulation; or
# "tools", every package but kvm-statsfd-dkms, which stays at OLD (a
# partial upgrade apt allows: nothing depends on the module's version),
# for a lane that cannot pay for that build.
UPGRADE=$(sed -n 's/.*ks\.upgrade=\([a-z]*\).*/\1/p' /proc/cmdline)
UPGRADE_DEBS="./kvm-statsfd_*_amd64.deb ./libkvmstats1_*_amd64.deb"
UPGRADE_DEBS="$UPGRADE_DEBS ./libkvmstats-dev_*_amd64.deb ./kvm-statsfd-collectd_*_amd64.deb"
case "$UPGRADE" in
full) DKV=$NEW UPGRADE_DEBS="./kvm-statsfd-dkms_*_all.deb $UPGRADE_DEBS" ;;
tools) DKV=$OLD ;;
*) echo "ks.upgrade=full|tools missing from the command line" >&2; exit 1 ;;
esac
T0=$(date +%s)

say() { printf '%s\n' "$*" >&3; }
diag() { [ -z "$1" ] || printf '%s\n' "$1" | head -n 40 | sed 's/^/#   /' >&3; }
# tap STATUS DESCRIPTION [DIAGNOSTIC]: status 0 is a pass.
tap() {
	if [ "$1" = 0 ]; then say "ok - $2"; else say "not ok - $2"; diag "${3:-}"; fi
}
# check DESCRIPTION CMD...: a case that passes when CMD (a command or a
# function below) succeeds; its output is the diagnostic.
check() {
	local d=$1 o
	shift
	o=$("$@" 2>&1)
	tap $? "$d" "$o"
}
phase() { say "# [$(($(date +%s) - T0)) s] $*"; }

# --- the host's state ------------------------------------------------------------

# Errors in this boot's journal that are ours: the module's kernel
# messages, our units and commands, DKMS.
no_errors_from_us() {
	! journalctl -b -p err -o short-monotonic --no-pager | grep -iE 'kvm[_-]statsfd|dkms'
}
no_failed_units() {
	local f
	f=$(systemctl --failed --no-legend --plain)
	[ -z "$f" ] && return 0
	echo "$f"
	awk '{ print $1 }' <<< "$f" | xargs -r systemctl status --no-pager 2>&1 | tail -n 30
	return 1
}
no_kernel_splat() {
	! journalctl -k -b -o cat --no-pager |
		grep -E 'WARNING:|BUG:|Oops|general protection|Call Trace'
}
# systemd-modules-load runs before journald: its messages reach the
# journal through the kernel's log, without the unit's name, so they are
# looked for by the sender's name and pid, whichever way they came.
modules_load_loaded_it() {
	test -f /usr/lib/modules-load.d/kvm_statsfd.conf &&
		journalctl -b -o short-monotonic --no-pager |
		grep -E "systemd-modules-load\[[0-9]+\]: Inserted module 'kvm_statsfd'" &&
		return 0
	journalctl -b -o short-monotonic --no-pager | grep -E 'modules-load|kvm' | head -n 20
	return 1
}
loaded_is_dkms() {	# loaded_is_dkms VERSION
	local f
	f=$(modinfo -F filename kvm_statsfd) || return 1
	echo "$f, loaded $(cat /sys/module/kvm_statsfd/version)"
	case "$f" in /lib/modules/"$REL"/updates/dkms/kvm_statsfd.ko*) ;; *) return 1 ;; esac
	[ "$(cat /sys/module/kvm_statsfd/version)" = "$1" ] &&
		[ "$(cat /sys/module/kvm_statsfd/srcversion)" = "$(modinfo -F srcversion kvm_statsfd)" ]
}
dkms_has() {	# dkms_has VERSION: installed for this kernel
	dkms status kvm-statsfd | tee /dev/stderr |
		grep -qE "^kvm-statsfd/$1, $REL, x86_64: installed"
}
only_o_e_taint() {
	local t
	t=$(cat /proc/sys/kernel/tainted)
	echo "tainted=$t"
	[ $((t & ~(4096 | 8192))) = 0 ]
}
is_disabled() { [ "$(systemctl is-enabled "$1")" = disabled ]; }
versions_are() {	# versions_are VERSION DKMS-VERSION: of every package of ours
	local p v want
	for p in $OURS; do
		v=$(dpkg-query -W -f='${Version}' "$p")
		want=$1
		[ "$p" != kvm-statsfd-dkms ] || want=$2
		echo "$p $v"
		[ "$v" = "$want" ] || return 1
	done
}
none_known() {	# dpkg has none of ours, not even as config-files
	local p s
	for p in $OURS; do
		s=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)
		case "$s" in "" | un* | pn*) ;; *) echo "$p: '$s'"; return 1 ;; esac
	done
}
nothing_of_dkms_left() {
	local m
	m=$(find /lib/modules/*/updates/dkms -type f 2>/dev/null)
	echo "$m"
	ls -d /var/lib/dkms/kvm-statsfd /usr/src/kvm-statsfd-* 2>/dev/null
	[ -z "$m" ] && [ ! -e /var/lib/dkms/kvm-statsfd ] &&
		! ls -d /usr/src/kvm-statsfd-* > /dev/null 2>&1
}
no_enablement_left() {
	! find /etc/systemd /var/lib/systemd/deb-systemd-helper-enabled \
		/var/lib/systemd/deb-systemd-helper-masked -name 'kvm-statsfd*' 2>/dev/null |
		grep .
}

# --- the exporter --------------------------------------------------------------------

scrape() { curl -fsS --max-time 30 "$URL"; }
# value FILE NAME LABEL...: the value of the first series of NAME whose
# labels include each LABEL (name="value").
value() {
	local f=$1 n=$2
	shift 2
	awk -v n="$n" -v want="$*" '
		BEGIN { k = split(want, w, " ") }
		index($0, n "{") == 1 {
			for (i = 1; i <= k; i++) if (!index($1, w[i])) next
			print $NF; exit
		}' "$f"
}
# above FILE MIN NAME LABEL...: that series exists and is above MIN.
above() {
	local f=$1 min=$2 v
	shift 2
	v=$(value "$f" "$@")
	echo "$1{${*:2}} = '$v'"
	awk -v v="$v" -v m="$min" 'BEGIN { exit !(v != "" && v + 0 > m + 0) }' && return 0
	grep -E '^(kvm_vm_stats_available|kvm_vm_info|kvm_exporter_errors_total)' "$f" | head -n 20
	return 1
}
# grows_in FILE1 FILE2 NAME LABEL...: the series is above 0 and grew.
grows_in() {
	local a b
	a=$(value "$1" "${@:3}") b=$(value "$2" "${@:3}")
	echo "$3{${*:4}}: '$a' then '$b'"
	awk -v a="$a" -v b="$b" 'BEGIN { exit !(a != "" && b + 0 > a + 0 && a + 0 > 0) }'
}
no_exporter_errors() {	# neither a stats fd nor a machined lookup failed
	grep -E '^kvm_exporter_(machined_)?errors_total' "$1" || return 1
	[ "$(grep -cE '^kvm_exporter_(machined_)?errors_total(\{.*\})? 0$' "$1")" = 2 ]
}
EXP_USER=_kvm-statsfd-exporter
# exp_user: the package made the exporter's system user, as its
# sysusers.d file says: a system uid, its own group, no home, nologin.
exp_user() {
	local pw
	ls -l /usr/lib/sysusers.d/kvm-statsfd-exporter.conf || return 1
	pw=$(getent passwd "$EXP_USER") || return 1
	echo "$pw; $(getent group "$EXP_USER")"
	echo "$pw" | awk -F: -v g="$(getent group "$EXP_USER" | cut -d: -f3)" '
		{ exit !($3 > 0 && $3 < 1000 && $4 == g && $6 == "/nonexistent" &&
			 $7 ~ /nologin$/) }'
}
exporter_pid() { systemctl show -p MainPID --value kvm-statsfd-exporter; }
sandboxed() {	# sandboxed PID: its user, no CAP_SYS_ADMIN, NoNewPrivs, seccomp
	local s=/proc/$1/status eff
	grep -E '^(Uid|CapEff|NoNewPrivs|Seccomp):' "$s" || return 1
	eff=$(awk '/^CapEff:/ { print $2 }' "$s")
	[ "$(awk '/^Uid:/ { print $2 }' "$s")" = "$(id -u "$EXP_USER")" ] &&
		[ "$(id -u "$EXP_USER")" != 0 ] &&
		[ $((0x$eff & (1 << 21))) = 0 ] &&
		grep -qE '^NoNewPrivs:\s+1' "$s" && grep -qE '^Seccomp:\s+2' "$s"
}
restarted_on() {	# restarted_on OLDPID NEWPID VERSION
	echo "pid $1 -> $2, $(systemctl is-enabled kvm-statsfd-exporter), $(readlink "/proc/$2/exe")"
	[ "$2" != 0 ] && [ "$2" != "$1" ] &&
		[ "$(systemctl is-enabled kvm-statsfd-exporter)" = enabled ] &&
		! readlink "/proc/$2/exe" | grep -q deleted &&
		[ "$(kvm-statsfd-exporter --version)" = "kvm-statsfd-exporter $3" ]
}

# --- the VMs ------------------------------------------------------------------------

# start_vm UNIT NAME [systemd-run options]: a demo-vm as a transient
# service; prints its pid once kvm-statsfd lists it.  Half a second out
# of the guest per HLT (demo-vm's longest is under a second) keeps the
# nested vCPU from eating the emulated CPU the test needs (each exit
# costs the emulator dearly); it still makes over 100 exits a second.
start_vm() {
	local unit=$1 name=$2 pid
	shift 2
	systemd-run --quiet --unit="$unit" "$@" -- "$P/demo-vm" -name "guest=$name" \
		-t 3600 -c 1 --hlt-ms 500 >&2 || return 1
	for _ in $(seq 60); do
		pid=$(systemctl show -p MainPID --value "$unit")
		if [ "${pid:-0}" != 0 ] && kvm-statsfd list 2>/dev/null |
			awk -v p="$pid" '$1 == p { f = 1 } END { exit !f }'; then
			echo "$pid"
			return 0
		fi
		sleep 1
	done
	systemctl status --no-pager "$unit" >&2
	return 1
}
# io_exits PID: the module's SVM "io" exits of that VM, as root sees them.
io_exits() {
	kvm-statsfd show "$1" 2>/dev/null |
		sed -n 's/^ *vcpus_exit_reasons_svm .*[:,] io \([0-9]*\).*/\1/p' | head -n 1
}
grows() {	# grows PID: the module counts that VM's io exits, and they go up
	local a b
	a=$(io_exits "$1")
	sleep 3
	b=$(io_exits "$1")
	echo "io exits of $1: '$a' then '$b'"
	[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ]
}
listed_as() {	# listed_as PID GUEST: root's kvm-statsfd list has it
	kvm-statsfd list | tee /dev/stderr |
		awk -v p="$1" -v g="$2" '$1 == p && $3 == g { f = 1 } END { exit !f }'
}
bob_cannot_show() {	# bob_cannot_show PID
	local o rc
	o=$(runuser -u ksbob -- kvm-statsfd show "$1" 2>&1)
	rc=$?
	echo "status $rc: $o"
	[ "$rc" != 0 ] && ! grep -q exit_reasons <<< "$o"
}
bob_cannot_list() {	# bob_cannot_list PID
	! runuser -u ksbob -- kvm-statsfd list 2>&1 | tee /dev/stderr |
		awk -v p="$1" '$1 == p { f = 1 } END { exit !f }'
}
running() {	# running PID UNIT...: the processes live, the units active
	local pid=$1
	shift
	kill -0 "$pid" && systemctl is-active "$@"
}

# libvirt's helpers and section 4 (libvirt_host).
# shellcheck source=tests/vm/debian-host/guest-libvirt.sh
. "$P/guest-libvirt.sh"

# --- 1. the boot ----------------------------------------------------------------

check "systemd is PID 1" test "$(cat /proc/1/comm)" = systemd
st=$(timeout 600 systemctl is-system-running --wait 2>&1)
tap "$([ "$st" = running ]; echo $?)" "the boot finished: systemctl is-system-running says running" "$st"
check "systemctl --failed lists no unit after the boot" no_failed_units
check "kvm_statsfd is loaded" test -d /sys/module/kvm_statsfd
check "systemd-modules-load.service loaded it, from the packaged /usr/lib/modules-load.d/kvm_statsfd.conf" \
	modules_load_loaded_it
check "kvm_amd is loaded, /dev/kvm and /dev/kvm-statsfd exist" \
	test -d /sys/module/kvm_amd -a -c /dev/kvm -a -c /dev/kvm-statsfd
check "the loaded module is DKMS's build of $OLD, in /lib/modules/$REL/updates/dkms" \
	loaded_is_dkms "$OLD"
check "dkms status: kvm-statsfd/$OLD installed for $REL" dkms_has "$OLD"
check "the kernel's taint is only the out-of-tree module's (O, E)" only_o_e_taint
check "the boot's journal has no error from kvm-statsfd, its module or DKMS" no_errors_from_us

# --- 2. the exporter's unit, and a VM of root's -----------------------------------

phase "exporter"
check "the exporter's unit is installed, not enabled (README.Debian)" \
	is_disabled kvm-statsfd-exporter
check "the package made the exporter's system user $EXP_USER (sysusers.d): a system uid, its own group, home /nonexistent, nologin" \
	exp_user
check "systemctl enable --now kvm-statsfd-exporter" systemctl enable --now kvm-statsfd-exporter
rpid=$(start_vm ks-vm-root rootvm)
tap $? "a VM of root's runs (demo-vm, pid ${rpid:=0})"
check "kvm-statsfd show (root) reads the module's exit reasons of root's VM, and they grow" \
	grows "$rpid"
for _ in $(seq 30); do
	systemctl is-active --quiet kvm-statsfd-exporter && scrape > /tmp/m1 2>> /tmp/scrape.err && break
	sleep 1
done
check "the exporter's unit is active and answers on $URL" \
	sh -c 'systemctl is-active kvm-statsfd-exporter && test -s /tmp/m1 || cat /tmp/scrape.err'
epid=$(exporter_pid)
check "the exporter runs sandboxed: as $EXP_USER, no CAP_SYS_ADMIN, no new privileges, seccomp" \
	sandboxed "$epid"
check "the exporter reads root's VM whole: kvm_vm_stats_available{vm=\"root/rootvm\"} 1" \
	above /tmp/m1 0 kvm_vm_stats_available 'vm="root/rootvm"'
sleep 3
scrape > /tmp/m2 2>> /tmp/scrape.err
check "the exporter serves the module's stats of root's VM: exits_by_class{class=\"io\"} above 0, growing" \
	grows_in /tmp/m1 /tmp/m2 kvm_vm_exits_by_class_total 'vm="root/rootvm"' 'class="io"'
check "the exporter counts no error (kvm_exporter_errors_total 0, kvm_exporter_machined_errors_total 0)" \
	no_exporter_errors /tmp/m2

# --- 3. another user's VM, and a third user -------------------------------------------

phase "users"
check "users ksalice (group kvm) and ksbob (no KVM access) created" \
	sh -c 'useradd -m -G kvm ksalice && useradd -m ksbob'
apid=$(start_vm ks-vm-alice alicevm --uid=ksalice)
tap $? "ksalice's VM runs under systemd-run --uid=ksalice (demo-vm, pid ${apid:=0})"
check "its process is ksalice's" test "$(stat -c %U "/proc/$apid")" = ksalice
check "kvm-statsfd list (root) lists it with its guest name" listed_as "$apid" alicevm
check "kvm-statsfd show (root) reads its module stats, and they grow" grows "$apid"
scrape > /tmp/m3 2>> /tmp/scrape.err
check "the exporter reads it: kvm_vm_stats_available{vm=\"ksalice/alicevm\"} 1" \
	above /tmp/m3 0 kvm_vm_stats_available 'vm="ksalice/alicevm"'
check "ksbob cannot read ksalice's VM: kvm-statsfd show fails, shows no stat" \
	bob_cannot_show "$apid"
check "ksbob cannot read root's VM either" bob_cannot_show "$rpid"
check "kvm-statsfd list (ksbob) does not list ksalice's VM" bob_cannot_list "$apid"

# --- 4. libvirt (the debian-host lane's image has it, not the plain lane's) --------

# libvirt_host: guest-libvirt.sh.  lane.sh expects this section's cases
# where the image has libvirt: a lost virsh fails there as too few cases.
if command -v virsh > /dev/null; then
	libvirt_host
fi

# --- 5. upgrade, VMs running ----------------------------------------------------------

phase "upgrade to $NEW ($UPGRADE)"
# An operator's change to the conffile: kept by the upgrade (the file
# itself did not change), and read by the restarted exporter.
echo 'KVM_STATSFD_EXPORTER_ARGS="--listen=127.0.0.1:9798 --vcpu"' >> /etc/default/kvm-statsfd-exporter
t=$(date +%s)
# shellcheck disable=SC2086 # the file names are words
o=$(cd "$P/upgrade" && apt-get install -y --no-install-recommends $UPGRADE_DEBS < /dev/null 2>&1)
tap $? "apt-get install of the $NEW packages (upgrade: $UPGRADE), both VMs running" \
	"$(tail -n 30 <<< "$o")"
phase "the upgrade took $(($(date +%s) - t)) s"
check "every package is at $NEW-1, kvm-statsfd-dkms at $DKV-1" versions_are "$NEW-1" "$DKV-1"
if [ "$UPGRADE" = full ]; then
	check "kvm-statsfd/$OLD is gone from DKMS and /usr/src" \
		sh -c 'dkms status kvm-statsfd; ! dkms status kvm-statsfd | grep -q "^kvm-statsfd/$1," &&
			test ! -e "/usr/src/kvm-statsfd-$1"' sh "$OLD"
fi
check "dkms status: kvm-statsfd/$DKV installed for $REL" dkms_has "$DKV"
check "the module on disk is $DKV, the loaded one still $OLD (installing does not load)" \
	sh -c 'd=$(modinfo -F version kvm_statsfd); l=$(cat /sys/module/kvm_statsfd/version);
		echo "disk $d, loaded $l"; [ "$d" = "$1" ] && [ "$l" = "$2" ]' sh "$DKV" "$OLD"
check "both VMs kept running" running "$rpid" ks-vm-root ks-vm-alice
check "the old module still counts root's VM's exits" grows "$rpid"
npid=$(exporter_pid)
check "the exporter was restarted, is enabled, and runs the $NEW binary" \
	restarted_on "$epid" "$npid" "$NEW"
check "the changed conffile /etc/default/kvm-statsfd-exporter was kept, nothing beside it" \
	sh -c 'grep -q -- "--vcpu" /etc/default/kvm-statsfd-exporter &&
		! ls /etc/default/kvm-statsfd-exporter.* 2>/dev/null'
for _ in $(seq 30); do
	scrape > /tmp/m4 2>> /tmp/scrape.err && grep -q '^kvm_vcpu_.*vm="root/rootvm"' /tmp/m4 && break
	sleep 1
done
check "the restarted exporter reads root's VM, with the conffile's --vcpu series" \
	sh -c 'grep -m1 "^kvm_vcpu_.*vm=\"root/rootvm\"" /tmp/m4'
check "... and its VM-wide stats (kvm_vm_stats_available 1)" \
	above /tmp/m4 0 kvm_vm_stats_available 'vm="root/rootvm"'
check "systemctl --failed lists no unit after the upgrade" no_failed_units

# --- 6. remove, then purge, VMs running ---------------------------------------------

phase "remove and purge"
# A reader with the module's stats fds open all along: rmmod must wait
# for it.
kvm-statsfd watch "$rpid" -l -i 1 > /dev/null 2>&1 &
wpid=$!
sleep 3
check "a kvm-statsfd watch of root's VM holds the module (refcnt above 0)" \
	sh -c 'cat /sys/module/kvm_statsfd/refcnt; [ "$(cat /sys/module/kvm_statsfd/refcnt)" -gt 0 ]'
t=$(date +%s)
# shellcheck disable=SC2086 # the package names are words
o=$(apt-get remove -y $OURS < /dev/null 2>&1)
tap $? "apt-get remove of every package" "$(tail -n 30 <<< "$o")"
phase "apt-get remove took $(($(date +%s) - t)) s"
check "the exporter is stopped, its unit gone" \
	sh -c '! systemctl is-active kvm-statsfd-exporter &&
		test ! -e /lib/systemd/system/kvm-statsfd-exporter.service'
check "no module left under /lib/modules/*/updates/dkms, none in /var/lib/dkms or /usr/src" \
	nothing_of_dkms_left
check "the modules-load.d entry went with the package" \
	test ! -e /usr/lib/modules-load.d/kvm_statsfd.conf
check "removed, the module stays loaded (README.Debian)" test -d /sys/module/kvm_statsfd
check "the changed conffile stays after remove, the package in state rc" \
	sh -c 'grep -q -- "--vcpu" /etc/default/kvm-statsfd-exporter &&
		[ "$(dpkg-query -W -f="\${db:Status-Abbrev}" kvm-statsfd)" = "rc " ]'
# What remove left: the packages with conffiles, in state rc (apt
# knows no other, as they came from files, not from an archive).
# shellcheck disable=SC2086 # the package names are words
rc=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package}\n' $OURS 2>/dev/null |
	awk '$1 == "rc" { print $2 }' | xargs)
t=$(date +%s)
# shellcheck disable=SC2086 # the package names are words
o=$(apt-get purge -y $rc < /dev/null 2>&1)
tap $? "apt-get purge of what remove left (${rc:-nothing})" "$(tail -n 30 <<< "$o")"
phase "apt-get purge took $(($(date +%s) - t)) s"
check "purged: the conffile is gone" test ! -e /etc/default/kvm-statsfd-exporter
check "purged: the system user $EXP_USER stays, as Debian policy has it (README.Debian)" \
	getent passwd "$EXP_USER"
check "purged: dpkg knows none of the packages" none_known
check "purged: the unit's enablement is gone from /etc/systemd and deb-systemd-helper's state" \
	no_enablement_left
check "rmmod kvm_statsfd is refused as in use while the watch holds a stats fd" \
	sh -c 'o=$(rmmod kvm_statsfd 2>&1) && exit 1; echo "$o";
		echo "$o" | grep -q "in use" && test -d /sys/module/kvm_statsfd'
kill "$wpid"
wait "$wpid" 2> /dev/null
check "rmmod kvm_statsfd succeeds once the reader is gone" \
	sh -c 'rmmod kvm_statsfd && test ! -d /sys/module/kvm_statsfd'
sleep 2
check "both VMs keep running without the module" running "$rpid" ks-vm-root ks-vm-alice
check "... and ksalice's too" running "$apid" ks-vm-alice

# --- the end --------------------------------------------------------------------------

phase "the end"
systemctl stop ks-vm-root ks-vm-alice
check "systemctl --failed lists no unit at the end" no_failed_units
check "this boot's journal has no error from kvm-statsfd, its module or DKMS" no_errors_from_us
check "the kernel logged no warning, bug or oops" no_kernel_splat
say "@@ end $NONCE"
exec 3>&-
systemctl poweroff --no-block
