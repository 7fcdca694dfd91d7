#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The debian-host lane's disk: a copy of the base root filesystem
# (image.sh) into which the packages (debs.sh, the older version) are
# installed with apt, as Documentation/install.rst tells an operator,
# inside a chroot of it: DKMS builds kvm_statsfd.ko there for the image's
# kernel with the image's gcc, at native speed (the upgrade's build, in
# the booted guest, is the one under emulation).  Then the test's unit
# (it runs tests/vm/debian-host/guest-test.sh from the second disk, which
# lane.sh makes) and an ext4 image of the whole, made with mkfs.ext4 -d:
# no loop mount.
#
# Needs root (chroot(2), and files owned by the image's users), as
# tests/vm/chroot.sh.  Cached in $CACHE/debian-host/disk-KEY, KEY a hash
# of the base's and the packages' keys and of this script; QEMU boots it
# with snapshot=on, so it is never written.
#
# usage: prepare.sh BASE DEBS     prints DIR: DIR/disk.img, DIR/vmlinuz,
#                                 DIR/initrd.img, DIR/release,
#                                 DIR/install.log
# shellcheck disable=SC2016 # sh -c '...$1...' sh ARGS: expanded by that shell
set -euo pipefail

base=$1 debs=$2
here=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$here/../../.." && pwd)
CACHE=${CACHE:-$TOP/.cache}
log() { echo "  [debian-host] $*" >&2; }

key=$({ basename "$base"; basename "$debs"; cat "$0"; } | sha256sum | cut -c1-16)
dir=$CACHE/debian-host/disk-$key
mkdir -p "$CACHE/debian-host"
exec 9> "$CACHE/debian-host/disk.lock"
flock 9
if [ -f "$dir/ok" ]; then
	echo "$dir"
	exit 0
fi

t0=$(date +%s)
rm -rf "$dir.tmp"
mkdir -p "$dir.tmp"
trap 'rm -rf "$dir.tmp"' EXIT
root=$dir.tmp/root
log "copying the base into $root"
# One file system: nothing mounted in the base (image.sh) is copied.
cp -a -x --reflink=auto "$base" "$root"
rel=$(cd "$root/lib/modules" && ls)
[ "$(echo "$rel" | wc -w)" = 1 ] || { echo "not one kernel in the base: $rel" >&2; exit 1; }

# run_in CMD...: CMD in the chroot, /proc mounted in a private mount
# namespace (DKMS and kbuild read it) and a devpts of its own (apt logs
# the maintainer scripts' output through a pty), no network, a clean
# environment.
run_in() {
	unshare --mount --propagation private \
		sh -c 'mount -t proc proc "$1/proc" &&
			mount -t devpts -o newinstance,ptmxmode=0666 devpts "$1/dev/pts" &&
			exec chroot "$@"' sh \
		"$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"
}

# In /tmp, not /root: apt's sandbox user must be able to read them.
mkdir -p "$root/tmp/ks-debs"
cp "$debs"/old/*.deb "$root/tmp/ks-debs/"
log "installing the packages in the image (DKMS builds the module for $rel)"
# Install.rst's command, with the kernel's own headers package in place
# of the linux-headers-amd64 metapackage (the image has no network, and
# its headers are installed already), and every package of the source.
if ! run_in sh -c 'cd /tmp/ks-debs && apt-get install -y --no-install-recommends \
	"$1" ./kvm-statsfd-dkms_*_all.deb ./kvm-statsfd_*_amd64.deb \
	./libkvmstats1_*_amd64.deb ./libkvmstats-dev_*_amd64.deb \
	./kvm-statsfd-collectd_*_amd64.deb' sh "linux-headers-$rel" \
	> "$dir.tmp/install.log" 2>&1; then
	tail -n 30 "$dir.tmp/install.log" >&2
	echo "apt-get install in the image failed" >&2
	exit 1
fi
rm -rf "$root/tmp/ks-debs"
run_in dkms status >> "$dir.tmp/install.log" 2>&1
# apt's lists of the archive go, and its caches with them: the guest has
# no network, the test's apt runs install and remove local packages whose
# dependencies are all installed, which needs no list, and parsing
# bookworm's 51 MB of them is about 2 CPU-seconds natively, tens under
# emulation, at each apt run after dpkg changed something.
find "$root/var/lib/apt/lists" -maxdepth 1 -type f ! -name lock -delete
rm -f "$root"/var/cache/apt/*.bin

# The test's payload disk (lane.sh) and its unit: it starts once the boot
# is done; the test powers the guest off at its end, the unit on its
# failure.
mkdir -p "$root/opt/ks-test"
echo "/dev/vdb /opt/ks-test ext4 ro,nofail 0 0" >> "$root/etc/fstab"
cat > "$root/etc/systemd/system/ks-guest-test.service" <<'EOF'
# The debian-host lane's test (kvm-statsfd tests/vm/debian-host/): not
# part of the host under test, and not one of the project's packages.
[Unit]
Description=kvm-statsfd debian-host lane test
After=multi-user.target
RequiresMountsFor=/opt/ks-test
FailureAction=poweroff

[Service]
Type=exec
ExecStart=/opt/ks-test/guest-test.sh

[Install]
WantedBy=multi-user.target
EOF
ln -s /etc/systemd/system/ks-guest-test.service \
	"$root/etc/systemd/system/multi-user.target.wants/ks-guest-test.service"

cp "$root/boot/vmlinuz-$rel" "$dir.tmp/vmlinuz"
cp "$root/boot/initrd.img-$rel" "$dir.tmp/initrd.img"
echo "$rel" > "$dir.tmp/release"
# Room for two DKMS builds, the journal and apt's work.
size=$(($(du -sm "$root" | cut -f1) + 768))
log "making the ext4 image (${size} MB)"
mkfs.ext4 -q -F -L ks-root -d "$root" "$dir.tmp/disk.img" "${size}M" >&2
rm -rf "$root"
touch "$dir.tmp/ok"
rm -rf "$dir"
mv "$dir.tmp" "$dir"
trap - EXIT
# Older disks go, but the newest few (other worktrees).
find "$CACHE/debian-host" -mindepth 1 -maxdepth 1 -name 'disk-*' -printf '%T@ %p\n' |
	sort -rn | tail -n +4 | cut -d" " -f2- | xargs -r rm -rf
log "disk ready in $(($(date +%s) - t0)) s"
echo "$dir"
