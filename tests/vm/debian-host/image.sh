#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The debian-host lane's base: a Debian 12 (bookworm) root filesystem
# made with mmdebstrap, as a directory, with systemd, the newest 6.1
# kernel of tests/vm/fetch-kernels.sh (its initrd made by
# initramfs-tools in boot/), its headers, and what the project's
# packages depend on (./packages): what an operator's KVM host has
# before installing them.  No package of ours is in it (prepare.sh adds
# them).  Made once and cached as $CACHE/debian-host/base-KEY, KEY a
# hash of this script, the package list and the kernel release; a warm
# run costs a fetch-kernels.sh query.
#
# usage: image.sh          prints the directory
# The kernel release can be forced with DEBHOST_KERNEL=6.1.0-N-amd64.
# shellcheck disable=SC2016 # the hooks' "$1" is mmdebstrap's, expanded by its shell
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$here/../../.." && pwd)
CACHE=${CACHE:-$TOP/.cache}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
log() { echo "  [debian-host] $*" >&2; }

rel=${DEBHOST_KERNEL:-$(SERIES=6.1 "$TOP/tests/vm/fetch-kernels.sh" | awk '{ print $2; exit }')}
[ -n "$rel" ] || { echo "no 6.1 kernel release found" >&2; exit 1; }
# DEBHOST_VARIANT=libvirt (lane.sh's default) adds ./packages-libvirt,
# in a base of its own (named libvirt-KEY); the plain and DKMS lanes use
# the smaller base-KEY.
variant=${DEBHOST_VARIANT:-base}
lists=("$here/packages")
[ "$variant" = base ] || lists+=("$here/packages-$variant")
pkgs=$(sed -e '/^#/d' -e '/^ *$/d' -e "s/@REL@/$rel/" "${lists[@]}")
key=$({ cat "$0"; echo "$pkgs"; } | sha256sum | cut -c1-16)
dir=$CACHE/debian-host/$variant-$key

mkdir -p "$CACHE/debian-host"
exec 9> "$CACHE/debian-host/image.lock"
flock 9
if [ -f "$dir/.ks-format" ]; then
	echo "$dir"
	exit 0
fi

t0=$(date +%s)
log "creating the bookworm root filesystem for $rel (once; a few minutes)"
rm -rf "$dir.tmp"
# bookworm-security: the newest kernel ABI is often only there.
# Customisation, each for a reason:
#  - the host's name and its root on the lane's first disk;
#  - root without a password, for a look at the serial console when a
#    run goes wrong (the guest has no network);
#  - apt's daily timers masked: with no network they would only fail, and
#    they would compete with the test for the single emulated CPU.
# path-exclude as tests/vm/chroot.sh: documentation is not tested here,
# and the image is a quarter smaller without it.
if ! nice -n 10 mmdebstrap --variant=minbase --quiet \
	--include="$(echo "$pkgs" | tr '\n' ,)" \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--customize-hook='echo ks-debhost > "$1/etc/hostname"' \
	--customize-hook='echo "/dev/vda / ext4 errors=remount-ro 0 1" > "$1/etc/fstab"' \
	--customize-hook='chroot "$1" passwd -d root' \
	--customize-hook='chroot "$1" systemctl mask apt-daily.timer apt-daily-upgrade.timer apt-daily.service apt-daily-upgrade.service' \
	bookworm "$dir.tmp" \
	"deb $MIRROR bookworm main
deb $MIRROR bookworm-updates main
deb $SECURITY bookworm-security main" \
	> "$CACHE/debian-host/create.log" 2>&1; then
	tail -n 30 "$CACHE/debian-host/create.log" >&2
	echo "mmdebstrap failed (log: $CACHE/debian-host/create.log)" >&2
	exit 1
fi
# mmdebstrap can leave a mount behind in the new tree (seen once: /proc,
# read-only, in the libvirt variant, 2026-12-07); prepare.sh's copy of
# the base would then read /proc/kcore until the disk is full.  Unmount
# anything left, deepest first.
for m in $(awk -v d="$dir.tmp/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r); do
	log "unmounting $m, left mounted in the new root filesystem"
	umount -l "$m" || { echo "cannot unmount $m" >&2; exit 1; }
done
for f in vmlinuz initrd.img; do
	[ -f "$dir.tmp/boot/$f-$rel" ] || { echo "no boot/$f-$rel in the image" >&2; exit 1; }
done
echo 1 > "$dir.tmp/.ks-format"
mv "$dir.tmp" "$dir"
# Bases of older kernels or package lists go, but those made within the
# hour: another worktree's lane may be copying one (prepare.sh) right now.
find "$CACHE/debian-host" -mindepth 1 -maxdepth 1 -name "$variant-*" ! -name "$variant-$key" \
	-mmin +60 -exec rm -rf {} +
log "root filesystem ready in $(($(date +%s) - t0)) s ($(du -sh "$dir" | cut -f1))"
echo "$dir"
