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
# in 12 runs, two at a time on two cores (2026-12-07, tests/vm/lanes).
# Its libraries are bookworm's, those qemu-system-arm 7.2 already pulls
# in (scripts/install-deps.sh installs it); a missing one fails here, by name.
#
# A private apt configuration under $CACHE/apt-qemu (its own sources,
# lists and cache) resolves the newest backport; a warm run asks apt only
# when its lists are older than a day.  Older trees are removed.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
CACHE=${CACHE:-$TOP/.cache}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
PKGS="qemu-system-arm qemu-system-data"
dir=$CACHE/qemu-host
papt=$CACHE/apt-qemu
log() { echo "  [qemu] $*" >&2; }

apt_q() {
	"$@" -o "Dir::Etc=$papt/etc" -o "Dir::State=$papt/state" \
		-o "Dir::Cache=$papt/cache" -o "Dir::State::status=$papt/state/status" \
		-o Dir::Cache::pkgcache=pkgcache.bin \
		-o Dir::Cache::srcpkgcache=srcpkgcache.bin \
		-o APT::Architectures::=amd64 \
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root
}

mkdir -p "$dir" "$papt/etc/apt.conf.d" "$papt/etc/preferences.d" \
	"$papt/state/lists/partial" "$papt/cache/archives/partial"
exec 7> "$dir/.lock"
flock 7

stamp=$papt/state/lists/.stamp
if [ -n "$(find "$stamp" -mmin -1440 2>/dev/null)" ] && [ -s "$dir/current" ] &&
	[ -f "$dir/$(cat "$dir/current")/.unpacked" ]; then
	echo "$dir/$(cat "$dir/current")/root"
	exit 0
fi

[ -f "$papt/state/status" ] || : > "$papt/state/status"
echo "deb [arch=amd64 signed-by=$KEYRING] $MIRROR bookworm-backports main" \
	> "$papt/etc/sources.list"
log "updating the apt lists of bookworm-backports"
apt_q apt-get update -qq 2>&1 | grep -v unsandboxed >&2 || true
touch "$stamp"

# NAME_VERSION_amd64.deb (or _all.deb) of each package, newest first.
files=()
for p in $PKGS; do
	v=$(apt_q apt-cache show "$p" 2>/dev/null |
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
	(cd "$tree.tmp/debs" && apt_q apt-get download -q "${files[@]}" 2>&1) |
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
