# SPDX-License-Identifier: GPL-2.0
#
# Section 4 of guest-test.sh, sourced by it: libvirt on the Debian host
# (the debian-host lane's image has it, the plain lane's has not).
# libvirtd starts a transient domain; virsh domstats --vm shows KVM's VM
# stats and the module's beside them, every scalar kvm-statsfd show
# lists, a counter between two of kvm-statsfd's reads; systemd-machined
# has the domain, and the exporter names it by its domain and UUID from
# machined; virsh destroy ends it and the exporter forgets it.  Uses
# guest-test.sh's helpers (check, tap, phase, scrape, above, EXP_USER).
# shellcheck shell=bash

DOM=ksvirt
# The domain: KVM, 32 MiB, one vCPU, and no disk, network, graphics, USB
# or balloon.  SeaBIOS finds nothing to boot and waits to retry, halted
# between timer interrupts, each of which exits (the HLT, the interrupt,
# the PIC's EOI as port I/O): a steady trickle of exits, little work for
# the emulated CPU.
domain_xml() {	# domain_xml UUID
	cat <<-EOF
	<domain type='kvm'>
	  <name>$DOM</name>
	  <uuid>$1</uuid>
	  <memory unit='MiB'>32</memory>
	  <vcpu>1</vcpu>
	  <os><type arch='x86_64' machine='pc'>hvm</type></os>
	  <devices>
	    <controller type='usb' model='none'/>
	    <memballoon model='none'/>
	  </devices>
	</domain>
	EOF
}
# vm_stats FILE: "NAME VALUE" for each scalar stat (not a histogram) of
# the VM's own file, from kvm-statsfd show PID --json (its "vm" object
# comes before "vm_unavailable" and the vCPUs').
vm_stats() {
	awk '/^ *"vm": \{/ { in_vm = 1 }
		/^ *"vm_unavailable":/ { in_vm = 0 }
		!in_vm { next }
		/^ *"name": / { n = $2; gsub(/[",]/, "", n) }
		/^ *"value": / { v = $2; gsub(/,/, "", v); print n, v }' "$1"
}
show_value() {	# show_value FILE NAME: that stat's value in vm_stats
	vm_stats "$1" | awk -v n="$2" '$1 == n { print $2; exit }'
}
# virsh_value FILE NAME: the value of vm.NAME.TYPE in virsh domstats --vm
# output (TYPE is libvirt's: sum, cur or max for QEMU's cumulative,
# instant and peak stats; it leaves histograms out).
virsh_value() {
	sed -n "s/^ *vm\.$2\.[a-z]*=\([0-9]*\)\$/\1/p" "$1" | head -n 1
}
# virsh_has FILE NAME...: virsh's output has each NAME; else what it has,
# and what libvirtd logged (it drops a group of stats it cannot make,
# saying so only there).
virsh_has() {
	local f=$1 n miss=0
	shift
	for n in "$@"; do
		[ -n "$(virsh_value "$f" "$n")" ] || { echo "no vm.$n.*"; miss=1; }
	done
	[ "$miss" = 0 ] && return 0
	cat "$f"
	echo "libvirtd's warnings:"
	journalctl -b -u libvirtd -p warning -o cat --no-pager | tail -n 5
	return 1
}
# virsh_has_all FILE SHOWFILE: every scalar VM stat kvm-statsfd shows,
# KVM's and the module's, virsh shows too.
virsh_has_all() {
	local names
	names=$(vm_stats "$2" | awk '{ print $1 }')
	echo "kvm-statsfd shows $(echo "$names" | wc -w) scalar VM stats"
	# shellcheck disable=SC2086 # the names are words
	[ -n "$names" ] && virsh_has "$1" $names
}
# between NAME BEFORE VIRSH AFTER: BEFORE <= VIRSH <= AFTER, and the
# counter grew (BEFORE < AFTER): virsh read it live, between two reads.
between() {
	echo "$1: kvm-statsfd '$2', then virsh '$3', then kvm-statsfd '$4'"
	[ -n "$2" ] && [ -n "$3" ] && [ -n "$4" ] &&
		[ "$2" -le "$3" ] && [ "$3" -le "$4" ] && [ "$2" -lt "$4" ]
}
same() {	# same NAME SHOW VIRSH WANT: both are WANT
	echo "$1: kvm-statsfd '$2', virsh '$3', want $4"
	[ "$2" = "$4" ] && [ "$3" = "$4" ]
}
# machine_of PID UUID: systemd-machined has PID as the leader of a
# machine of class vm that libvirt registered for the domain, with the
# domain's UUID as its id.
machine_of() {
	local m u
	m=$(machinectl list --no-legend --no-pager |
		awk -v d="$DOM" '$1 ~ "^qemu-[0-9]+-" d "$" { print $1 }')
	echo "machine '$m'"
	[ -n "$m" ] || { machinectl list --no-pager; return 1; }
	u=$(echo "$2" | tr -d - | tr A-F a-f)
	machinectl show "$m" -p Class -p Service -p Leader -p Id | tee /dev/stderr |
		awk -F= -v p="$1" -v u="$u" '
			{ v = $2 }
			$1 == "Id" { gsub(/-/, "", v); v = tolower(v) }
			($1 == "Class" && v == "vm") || ($1 == "Service" && v == "libvirt-qemu") ||
			($1 == "Leader" && v == p) || ($1 == "Id" && v == u) { n++ }
			END { exit n != 4 }'
}
# exporter_names FILE PID UUID: the exporter's kvm_vm_info names the VMM
# by its domain and UUID, which it has from libvirt through machined.
exporter_names() {
	local want="kvm_vm_info{vm=\"$DOM\",uuid=\"$3\",source=\"libvirt\",pid=\"$2\","
	grep -F "pid=\"$2\"" "$1" | grep '^kvm_vm_info'
	grep -qF "$want" "$1" && return 0
	echo "want: $want"
	grep '^kvm_vm_info' "$1"
	echo "the system bus's log:"
	journalctl -b -u dbus -o cat --no-pager | tail -n 5
	echo "the exporter's log and failed machined lookups:"
	journalctl -b -u kvm-statsfd-exporter -o cat --no-pager | tail -n 3
	grep '^kvm_exporter_machined_errors_total' "$1"
	# Which part fails: machined's answer, as root and as the exporter's
	# user (timed: the exporter waits 2 s), or the exporter's code
	# (root's --once, outside the unit's sandbox).
	echo "GetMachineByPID($2) as root:"
	{ time -p busctl call org.freedesktop.machine1 /org/freedesktop/machine1 \
		org.freedesktop.machine1.Manager GetMachineByPID u "$2"; } 2>&1 | head -n 4
	# --collect: its failure must not stay behind as a failed unit.
	echo "... as $EXP_USER, in a unit:"
	timeout 120 systemd-run --quiet --wait --pipe --collect -p User="$EXP_USER" -- busctl call \
		org.freedesktop.machine1 /org/freedesktop/machine1 \
		org.freedesktop.machine1.Manager GetMachineByPID u "$2" 2>&1 | head -n 3
	echo "root's kvm-statsfd-exporter --once:"
	timeout 120 kvm-statsfd-exporter --once 2>&1 | grep -E "^kvm_vm_info.*pid=\"$2\"|exporter:"
	return 1
}
# gone PID: the domain, its QEMU and its machine are gone, and the
# exporter no longer serves it.
gone() {
	local m
	for _ in $(seq 30); do
		kill -0 "$1" 2> /dev/null || break
		sleep 1
	done
	m=$(machinectl list --no-legend --no-pager | grep -- "-$DOM ")
	scrape > /tmp/m6 2>> /tmp/scrape.err
	echo "pid $1: $(kill -0 "$1" 2>&1 && echo alive); machine: '$m'"
	grep "vm=\"$DOM\"" /tmp/m6 | head -n 3
	! kill -0 "$1" 2> /dev/null && [ -z "$m" ] &&
		! virsh domstate "$DOM" > /dev/null 2>&1 &&
		test -s /tmp/m6 && ! grep -q "vm=\"$DOM\"" /tmp/m6
}

say "@@ begin $NONCE"
phase "guest up $(cut -d' ' -f1 /proc/uptime) s after the kernel's start: kernel $REL, packages $OLD, upgrade to $NEW"

libvirt_host() {
phase "libvirt"
export LIBVIRT_DEFAULT_URI=qemu:///system
check "virsh reaches libvirtd through libvirtd.socket; its hypervisor is QEMU 7.2" \
	sh -c 'systemctl is-active libvirtd.socket && virsh version | tee /dev/stderr |
		grep -q "hypervisor: QEMU 7\.2\."'
uuid=$(cat /proc/sys/kernel/random/uuid)
domain_xml "$uuid" > "/tmp/$DOM.xml"
t=$(date +%s)
o=$(timeout 300 virsh create "/tmp/$DOM.xml" 2>&1 && virsh domstate "$DOM" 2>&1)
tap $? "virsh create: a transient KVM domain (32 MiB, one vCPU, no disk, network or graphics) runs" \
	"$o"
vpid=
for _ in $(seq 30); do
	vpid=$(kvm-statsfd list 2>/dev/null | awk -v g="$DOM" '$3 == g { print $1; exit }')
	[ -z "$vpid" ] || break
	sleep 1
done
phase "the domain's QEMU (pid ${vpid:=0}) is listed $(($(date +%s) - t)) s after virsh create"
check "systemd-machined has it: machine qemu-N-$DOM, class vm, service libvirt-qemu, the domain's UUID, its leader the QEMU kvm-statsfd lists as $DOM" \
	machine_of "$vpid" "$uuid"
# One query of libvirt's between two reads of the module's stats: the
# counters grow meanwhile, so virsh's values lie between the two.
kvm-statsfd show "$vpid" --json > /tmp/show1 2> /tmp/show.err
virsh domstats --vm "$DOM" > /tmp/domstats 2>&1
kvm-statsfd show "$vpid" --json > /tmp/show2 2>> /tmp/show.err
check "virsh domstats --vm shows KVM's native VM stats (remote_tlb_flush, pages_4k, max_mmu_page_hash_collisions)" \
	virsh_has /tmp/domstats remote_tlb_flush pages_4k max_mmu_page_hash_collisions
check "virsh domstats --vm shows the module's stats beside them (vcpus_io_out_exits, vcpus_guest_ns, vcpus_in_guest, vcpus)" \
	virsh_has /tmp/domstats vcpus_io_out_exits vcpus_guest_ns vcpus_in_guest vcpus
check "virsh domstats --vm shows every scalar VM stat kvm-statsfd show lists for that QEMU" \
	virsh_has_all /tmp/domstats /tmp/show1
check "virsh's vcpus_io_out_exits lies between kvm-statsfd show's before and after it, which grew" \
	between vcpus_io_out_exits "$(show_value /tmp/show1 vcpus_io_out_exits)" \
	"$(virsh_value /tmp/domstats vcpus_io_out_exits)" "$(show_value /tmp/show2 vcpus_io_out_exits)"
check "virsh's vcpus is kvm-statsfd show's: 1" \
	same vcpus "$(show_value /tmp/show1 vcpus)" "$(virsh_value /tmp/domstats vcpus)" 1
for _ in $(seq 30); do
	scrape > /tmp/m5 2>> /tmp/scrape.err && grep -q "^kvm_vm_info{vm=\"$DOM\"" /tmp/m5 && break
	sleep 1
done
check "the exporter names it by its domain and UUID, from systemd-machined: kvm_vm_info{vm=\"$DOM\",uuid=\"$uuid\",source=\"libvirt\"}" \
	exporter_names /tmp/m5 "$vpid" "$uuid"
check "the exporter serves its module stats under that name: exits_by_class{vm=\"$DOM\",class=\"io\"} above 0" \
	above /tmp/m5 0 kvm_vm_exits_by_class_total "vm=\"$DOM\"" 'class="io"'
o=$(virsh destroy "$DOM" 2>&1)
tap $? "virsh destroy $DOM" "$o"
check "the domain, its QEMU and its machine are gone, and the exporter's next scrape has no series of it" \
	gone "$vpid"
phase "libvirt took $(($(date +%s) - t)) s"
}
