#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The emulator the arm64 lanes boot their guests in: QEMU 10.0 of
# bookworm-backports (qemu-system-arm, with qemu-system-data), unpacked
# into $CACHE, nothing installed and the host's apt setup unchanged:
#
#   fetch-qemu.sh        prints the tree, $CACHE/qemu-host/<versions>/root,
#                        holding usr/bin/qemu-system-aarch64 and
#                        usr/share/qemu (run it with -L there)
#
# Why not bookworm's QEMU 7.2: under it a nested arm64 vCPU now and then
# stayed in the guest for good (about 3 runs of 10 of the 6.12-arm64 lane
# on a loaded machine, each time another case), and with 10.0 none did
# in 13 runs, two at a time on two cores (2026-12-07, tests/vm/lanes).
# Its libraries are bookworm's, those qemu-system-arm 7.2 already pulls
# in (scripts/install-deps.sh installs it); a missing one fails here, by name.
#
# The newest backport is resolved through fetch-kernels.sh's private apt
# configuration of bookworm-backports ($CACHE/apt-bpo, its lists
# refreshed twice a day); a warm run with fresh lists asks apt nothing.
# Older trees are removed.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${CACHE:-$TOP/.cache}
PKGS="qemu-system-arm qemu-system-data"
dir=$CACHE/qemu-host
log() { echo "  [qemu] $*" >&2; }
apt_bpo() { "$TOP/tests/vm/fetch-kernels.sh" apt bookworm-backports "$@"; }

mkdir -p "$dir"
exec 7> "$dir/.lock"
flock 7

stamp=$CACHE/apt-bpo/state/lists/.stamp
if [ -n "$(find "$stamp" -mmin -720 2>/dev/null)" ] && [ -s "$dir/current" ] &&
	[ -f "$dir/$(cat "$dir/current")/.unpacked" ]; then
	echo "$dir/$(cat "$dir/current")/root"
	exit 0
fi

# NAME=VERSION of each package's newest backport.
files=()
for p in $PKGS; do
	v=$(apt_bpo apt-cache show "$p" 2>/dev/null |
		awk '/^Version:/ { print $2 }' | sort -V | tail -n 1)
	[ -n "$v" ] || { log "bookworm-backports has no $p"; exit 1; }
	files+=("$p=$v")
done
key=$(printf '%s\n' "${files[@]}" | sha256sum | cut -c1-16)
tree=$dir/$key
if [ ! -f "$tree/.unpacked" ]; then
	log "downloading ${files[*]}"
	rm -rf "$tree.tmp"
	mkdir -p "$tree.tmp/debs" "$tree.tmp/root"
	(cd "$tree.tmp/debs" && apt_bpo apt-get download -q "${files[@]}" 2>&1) |
		grep -v -e '^Get:' -e 'unsandboxed' >&2 || true
	for f in "$tree.tmp"/debs/*.deb; do
		[ -f "$f" ] || { log "download failed"; exit 1; }
		dpkg-deb -x "$f" "$tree.tmp/root"
	done
	[ "$(find "$tree.tmp/debs" -name '*.deb' | wc -l)" = "${#files[@]}" ] ||
		{ log "a package did not download"; exit 1; }
	missing=$(ldd "$tree.tmp/root/usr/bin/qemu-system-aarch64" |
		awk '/not found/ { print $1 }')
	if [ -n "$missing" ]; then
		log "QEMU's libraries are not installed: $missing (scripts/install-deps.sh)"
		exit 1
	fi
	rm -rf "$tree.tmp/debs"
	touch "$tree.tmp/.unpacked"
	rm -rf "$tree"
	mv "$tree.tmp" "$tree"
fi
echo "$key" > "$dir/current"
find "$dir" -mindepth 1 -maxdepth 1 -type d ! -name "$key" -exec rm -rf {} +
echo "$tree/root"
