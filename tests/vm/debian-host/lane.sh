#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The debian-host lane of make check (issue 23, items 2 and 4): the
# project's Debian packages on a real Debian 12 host with systemd as PID
# 1, booted under QEMU TCG with nested AMD SVM.
#
#   image.sh     the bookworm root filesystem (mmdebstrap, cached)
#   debs.sh      the packages, built from the tree with dpkg-buildpackage,
#                and the same one version newer, for the upgrade (cached
#                by a hash of the tree)
#   prepare.sh   the packages installed into the image with apt, DKMS
#                building the module for its kernel; an ext4 image of it
#                (cached)
#   guest-test.sh  the test, run by systemd in the booted host: module
#                loaded at boot, units, journal, the exporter's unit, VMs
#                of two users and a third who cannot read them, upgrade
#                and purge with VMs running
#
# The guest gets the disk with snapshot=on (the cached image is never
# written) and a second, read-only disk made here: guest-test.sh, the
# demo's VMM (tests/vm/demo), the upgrade's packages.  Each TAP line of
# the guest is a case; so are the steps before it, the guest's end and
# its console.  A run that reports fewer than DEBHOST_CASES guest cases
# fails.
#
# DEBHOST_UPGRADE says which upgrade the guest does (guest-test.sh):
# "tools" (the default), every package but kvm-statsfd-dkms, or "full",
# every package, so that DKMS builds the new module inside the emulated
# guest: about 350 CPU-seconds more (DKMS rebuilds on every upgrade of
# the package, even of the same module version).  The debian-host-dkms
# lane (lane-dkms.sh) is the full one.  DEBHOST_VARIANT says which image:
# "libvirt" (the default) has libvirt, whose domain the guest then runs
# and reads; "base" has not (the debian-host-plain and debian-host-dkms
# lanes).
#
# usage: lane.sh OUTDIR
# shellcheck disable=SC2016 # sh -c '...$1...' sh ARGS: expanded by that shell
set -uo pipefail
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/../lib.sh"

here=$TOP/tests/vm/debian-host
out=$1
UPGRADE=${DEBHOST_UPGRADE:-tools}
# The guest's cases (guest-test.sh); fewer means it lost some.  The full
# upgrade has one more.
case "$UPGRADE" in
full) MIN_CASES=58 ;;
*) MIN_CASES=57 ;;
esac
# With libvirt in the image (DEBHOST_VARIANT=libvirt, image.sh), its
# section's 12 more.
export DEBHOST_VARIANT=${DEBHOST_VARIANT:-libvirt}
[ "$DEBHOST_VARIANT" != libvirt ] || MIN_CASES=$((MIN_CASES + 12))
MIN_CASES=${DEBHOST_CASES:-$MIN_CASES}
# Wall-clock limit of the guest: the emulated DKMS build is most of it,
# and it shares the host's two cores with the other lanes.
TIMEOUT=${DEBHOST_TIMEOUT:-3600}
LABEL=${DEBHOST_LABEL:-debian-host}
lane_start "$out" "[$LABEL]"

# prep DESCRIPTION LOG CMD...: a preparation step as a case; its output
# (one line, a path) is left in $got.  A failed step ends the lane.
prep() {
	local d=$1 log=$2
	shift 2
	if got=$("$@" 2> "$log"); then
		lane_tap 1 "$d"
		return
	fi
	lane_tap 0 "$d"
	tail -n 20 "$log" | sed 's/^/#   /'
	lane_finish
}

prep "bookworm root filesystem with systemd (mmdebstrap, cached)" \
	"$out/image.log" "$here/image.sh"
base=$got
prep "the packages built from the tree with dpkg-buildpackage, and one version newer" \
	"$out/debs.log" "$here/debs.sh"
debs=$got
read -r old new < "$debs/versions"
prep "the $old packages installed into the image with apt-get (prepare.sh)" \
	"$out/prepare.log" "$here/prepare.sh" "$base" "$debs"
disk=$got
rel=$(cat "$disk/release")
cp "$disk/install.log" "$out/install.log"
lane_tap "$(grep -qE "^kvm-statsfd/$old, $rel, x86_64: installed" "$out/install.log" &&
	echo 1 || echo 0)" "... where DKMS built and installed kvm_statsfd.ko $old for $rel"

# The second disk.
p=$out/payload
rm -rf "$p" "$out/payload.img"
mkdir -p "$p/upgrade"
cp "$here/guest-test.sh" "$here/guest-libvirt.sh" "$p/"
cp "$debs"/new/*.deb "$p/upgrade/"
rm -f "$p"/upgrade/*-dbgsym_*.deb
echo "$old $new" > "$p/versions"
prep "the demo's VMM built (tests/vm/demo) and the test's disk made" "$out/payload.log" \
	sh -c 'make -s -C "$1/tests/vm/demo" O="$2" >&2 &&
		mkfs.ext4 -q -F -L ks-test -d "$2" "$3" 64M >&2' sh "$TOP" "$p" "$out/payload.img"

nonce=$(od -An -N8 -tx8 /dev/urandom | tr -d ' ')
step "[$LABEL] booting $rel with systemd (QEMU TCG, nested SVM), upgrade: $UPGRADE"
: > "$out/results.log"
t0=$(date +%s)
# One emulated CPU: the tests need no more, and each one more is host CPU
# time spent idling.  The command line: tests/vm/lib.sh's for the rig's
# kernels (TCG on a busy host needs its longer stall limits), root on the
# first disk.
(
	rc=0
	# shellcheck disable=SC2046 # the command line is a list of words
	timeout --foreground -k 5 "$TIMEOUT" \
		qemu-system-x86_64 -machine q35 -accel tcg,thread=single -cpu max \
		-smp 1 -m 1536 -nographic -no-reboot -nodefaults \
		-fw_cfg name=etc/sercon-port,string=0 \
		-serial "file:$out/console.log" -serial "file:$out/results.log" \
		-drive "file=$disk/disk.img,if=virtio,format=raw,snapshot=on" \
		-drive "file=$out/payload.img,if=virtio,format=raw,readonly=on" \
		-kernel "$disk/vmlinuz" -initrd "$disk/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 oops=panic ks.nonce=$nonce ks.upgrade=$UPGRADE $(guest_cmdline "$rel" "$base")" \
		< /dev/null > "$out/qemu.log" 2>&1 || rc=$?
	echo "$rc" > "$out/qemu.rc"
	times > "$out/qemu.times"
)
rc=$(cat "$out/qemu.rc")
secs() { awk -F'[ms]' '{ printf "%.0f", $1 * 60 + $2 }' <<< "$1"; }
read -r q_user q_sys < <(sed -n 2p "$out/qemu.times")
echo "# guest: $(($(date +%s) - t0)) s wall, $(secs "$q_user") s user + $(secs "$q_sys") s system CPU (QEMU)"

tr -d '\r' < "$out/results.log" > "$out/results.txt"
lane_tap "$(grep -qx "@@ begin $nonce" "$out/results.txt" && echo 1 || echo 0)" \
	"the guest booted with systemd and started the test"
cases=0
while IFS= read -r line; do
	case "$line" in
	"ok - "*) lane_tap 1 "${line#ok - }"; cases=$((cases + 1)) ;;
	"not ok - "*) lane_tap 0 "${line#not ok - }"; cases=$((cases + 1)) ;;
	"#"*) echo "$line" ;;
	esac
done < "$out/results.txt"
ended=0
tr -d '\r' < "$out/console.log" > "$out/console.txt"
# The kernel's last word on a clean power-off: QEMU also exits 0 when
# killed.
grep -qx "@@ end $nonce" "$out/results.txt" && [ "$rc" = 0 ] &&
	grep -q 'reboot: Power down' "$out/console.txt" && ended=1
lane_tap "$ended" "the test ran to its end and the guest powered off (QEMU status $rc$(
	[ "$rc" = 124 ] && echo ", timed out after $TIMEOUT s"))"
[ "$ended" = 1 ] || tail -n 30 "$out/console.txt" | sed 's/^/#   /'
lane_tap "$([ "$cases" -ge "$MIN_CASES" ] && echo 1 || echo 0)" \
	"the guest reported $cases cases (at least $MIN_CASES)"
splat=$(grep -E 'Kernel panic|BUG:|WARNING:|Oops|general protection|Call Trace' "$out/console.txt" | head -n 10)
lane_tap "$([ -s "$out/console.txt" ] && [ -z "$splat" ] && echo 1 || echo 0)" \
	"the guest's console shows no panic, oops or kernel warning"
[ -z "$splat" ] || printf '%s\n' "$splat" | sed 's/^/#   /'
lane_finish
