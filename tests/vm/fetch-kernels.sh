#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch and unpack the Debian test kernels without installing them.  Prints
# one line per kernel: "<series> <release> <root>", where <root> is the
# unpacked tree holding boot/vmlinuz-<release>, boot/config-<release> and
# lib/modules/<release>/, and <root>/.builder says how to build a module for
# it (see tests/vm/lib.sh, build_module):
#
#   series   Debian release    built with          builder
#   6.1      12 (bookworm)     the host's gcc-12   host (headers in <root>)
#   6.12     12 (bookworm)     the host's gcc-12   host (headers in <root>)
#   6.1-rt   12 (bookworm)     the host's gcc-12   host (headers in <root>)
#   5.10     11 (bullseye)     gcc-10              chroot bullseye
#   newest   unstable (sid)    sid's gcc           chroot sid
#   6.12-arm64 12 (bookworm)   aarch64-linux-gnu-gcc-12  chroot bookworm-arm64
#   6.1-arm64  12 (bookworm)   aarch64-linux-gnu-gcc-12  chroot bookworm-arm64
#   newest-arm64 unstable (sid) sid's aarch64-linux-gnu-gcc  chroot sid-arm64
#
# The chroot builders install the headers with that release's apt inside
# the chroot (tests/vm/chroot.sh), as DKMS would build on such a host.  The
# arm64 series are Debian's arm64 kernels (KVM built in), booted under
# qemu-system-aarch64; their roots also hold busybox-static:arm64, unpacked
# in <root>/userland, for the guest's initramfs, and libncurses-dev:arm64,
# there too, for the static arm64 kvm-statsfd the guest runs (its watch).
#
# The newest ABI of each series is resolved with apt at run time, because the
# archive drops old ABIs.  Bookworm's kernels come through the host's apt;
# bullseye, bullseye-security and sid through a private apt configuration
# under $CACHE/apt, and bookworm's arm64 packages through another under
# $CACHE/apt-arm64, so that the host's apt setup (and its architectures)
# is not changed.  A third, $CACHE/apt-bpo, holds bookworm-backports, for
# the arm64 lanes' emulator ("apt bookworm-backports", fetch-qemu.sh).
# Override
# with KVM_STATSFD_KERNELS, a space-separated list of releases, e.g.
# "6.1.0-56-amd64 6.12.117+deb12-amd64", or pick series with SERIES
# (default "6.1 6.12 6.1-rt").
#
# "fetch-kernels.sh apt SERIES CMD ARGS..." runs apt-get or apt-cache with
# the apt configuration of SERIES instead (see its end).
#
# Downloads and unpacked trees are cached under $CACHE (default .cache/ in the
# source tree, gitignored); a second run downloads nothing.
set -euo pipefail

CACHE=${CACHE:-$(cd "$(dirname "$0")/../.." && pwd)/.cache}
SERIES=${SERIES:-"6.1 6.12 6.1-rt"}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg
PAPT="$CACHE/apt"
PAPT_ARM64="$CACHE/apt-arm64"
PAPT_BPO="$CACHE/apt-bpo"
log() { echo "  [kernels] $*" >&2; }

# Where a series comes from: "host" (the host's apt, bookworm) or "extra"
# (the private apt configuration).
origin_of() {
	case "$1" in
	5.10 | newest) echo extra ;;
	*-arm64) echo arm64 ;;
	bookworm-backports) echo backports ;;
	*) echo host ;;
	esac
}

# How a module is built for a series: "host" or "chroot <release>".
builder_of() {
	case "$1" in
	5.10) echo "chroot bullseye" ;;
	newest) echo "chroot sid" ;;
	newest-arm64) echo "chroot sid-arm64" ;;
	*-arm64) echo "chroot bookworm-arm64" ;;
	*) echo host ;;
	esac
}

# The private apt configuration: its own sources, lists, cache and an
# empty dpkg status, so that nothing of /etc/apt or /var/lib/apt is used.
# sid's InRelease is often past its Valid-Until on the mirrors; the
# signature is still checked.
# papt_opts [DIR]: the options of the private configuration in DIR
# (default $PAPT); the arm64 one also has arm64's lists.  The binary
# caches are named: the host's configuration, read before these options,
# may have turned them off (Debian's container images do), and without
# them each apt call parses every list again (4 CPU-seconds, not 1, for
# the arm64 one's four).
papt_opts() {
	local d=${1:-$PAPT}
	echo -o "Dir::Etc=$d/etc" -o "Dir::State=$d/state" \
		-o "Dir::Cache=$d/cache" -o "Dir::State::status=$d/state/status" \
		-o Dir::Cache::pkgcache=pkgcache.bin \
		-o Dir::Cache::srcpkgcache=srcpkgcache.bin \
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root
	[ "$d" != "$PAPT_ARM64" ] || echo -o APT::Architectures::=arm64
}

# papt_setup [DIR]: write DIR's sources and refresh its lists.
papt_setup() {
	local d=${1:-$PAPT} list fresh
	list="$d/state/lists"
	mkdir -p "$d/etc/sources.list.d" "$d/etc/preferences.d" \
		"$d/etc/apt.conf.d" "$list/partial" "$d/cache/archives/partial"
	# Lanes fetch at the same time (the two arm64 lanes): one writer of
	# the sources and the lists at a time, and apt runs unlocked
	# (Debug::NoLocking).  Held until this script exits.
	exec 8> "$d/.lock"
	flock 8
	[ -f "$d/state/status" ] || : > "$d/state/status"
	# The bookworm series' apt ignores sid (apt_for), whose packages are
	# newer: its busybox and ncurses are built for a newer libc than the
	# arm64 cross libc the guest's programs link (its ncurses.pc even
	# lost the -L a sysroot needs).
	printf 'Package: *\nPin: release n=sid\nPin-Priority: -1\n' > "$d/no-sid.pref"
	if [ "$d" = "$PAPT_BPO" ]; then
		cat > "$d/etc/sources.list.new" <<-EOS
		deb [arch=amd64 signed-by=$KEYRING] $MIRROR bookworm-backports main
		EOS
	elif [ "$d" = "$PAPT_ARM64" ]; then
		# amd64 too: the arm64 headers' kbuild runs on the build host.
		cat > "$d/etc/sources.list.new" <<-EOS
		deb [arch=amd64,arm64 signed-by=$KEYRING] $MIRROR bookworm main
		deb [arch=amd64,arm64 signed-by=$KEYRING] $MIRROR bookworm-updates main
		deb [arch=amd64,arm64 signed-by=$KEYRING] $SECURITY bookworm-security main
		deb [arch=arm64 signed-by=$KEYRING check-valid-until=no] $MIRROR sid main
		EOS
	else
		cat > "$d/etc/sources.list.new" <<-EOS
		deb [signed-by=$KEYRING] $MIRROR bullseye main
		deb [signed-by=$KEYRING] $SECURITY bullseye-security main
		deb [signed-by=$KEYRING check-valid-until=no] $MIRROR sid main
		EOS
	fi
	if ! cmp -s "$d/etc/sources.list.new" "$d/etc/sources.list"; then
		mv "$d/etc/sources.list.new" "$d/etc/sources.list"
		rm -f "$list/.stamp"
	else
		rm -f "$d/etc/sources.list.new"
	fi
	# Refresh twice a day: the newest ABI of sid moves fast.
	fresh=$(find "$list/.stamp" -mmin -720 2>/dev/null || true)
	if [ -z "$fresh" ]; then
		log "updating the private apt lists ($(awk '{ printf "%s%s", s, $(NF - 1); s = ", " }' "$d/etc/sources.list"))"
		# shellcheck disable=SC2046
		apt-get $(papt_opts "$d") update -qq 2>&1 | grep -v unsandboxed >&2 || true
		touch "$list/.stamp"
	fi
}

# Prepare the apt configuration a series comes from.
origin_setup() {
	case "$(origin_of "$1")" in
	extra) papt_setup ;;
	arm64) papt_setup "$PAPT_ARM64" ;;
	backports) papt_setup "$PAPT_BPO" ;;
	*) ensure_apt_lists ;;
	esac
}

# apt_for SERIES CMD ARGS...: apt-get/apt-cache with the series' origin.
apt_for() {
	local s=$1 cmd=$2
	shift 2
	case "$(origin_of "$s")" in
	extra)
		# shellcheck disable=SC2046
		"$cmd" $(papt_opts) "$@" ;;
	arm64)
		local pin=()
		[ "$s" = newest-arm64 ] ||
			pin=(-o "Dir::Etc::Preferences=$PAPT_ARM64/no-sid.pref")
		# shellcheck disable=SC2046
		"$cmd" $(papt_opts "$PAPT_ARM64") "${pin[@]}" "$@" ;;
	backports)
		# shellcheck disable=SC2046
		"$cmd" $(papt_opts "$PAPT_BPO") "$@" ;;
	*) "$cmd" "$@" ;;
	esac
}

# Newest release string of one series, e.g. 6.1 -> 6.1.0-56-amd64.
newest_release() {
	local re
	case "$1" in
	6.1) re='^linux-image-6\.1\.0-[0-9]+-amd64$' ;;
	6.1-rt) re='^linux-image-6\.1\.0-[0-9]+-rt-amd64$' ;;
	6.12) re='^linux-image-6\.12\.[0-9]+\+deb12-amd64$' ;;
	5.10) re='^linux-image-5\.10\.0-[0-9]+-amd64$' ;;
	# The private lists hold only bullseye and sid: sid's are +debNN.
	newest) re='^linux-image-[0-9]+\.[0-9]+\.[0-9]+\+deb[0-9]+-amd64$' ;;
	6.12-arm64) re='^linux-image-6\.12\.[0-9]+\+deb12-arm64$' ;;
	6.1-arm64) re='^linux-image-6\.1\.0-[0-9]+-arm64$' ;;
	newest-arm64) re='^linux-image-[0-9]+\.[0-9]+\.[0-9]+\+deb(1[3-9]|[2-9][0-9])-arm64$' ;;
	*) echo "unknown kernel series '$1'" >&2; return 1 ;;
	esac
	apt_for "$1" apt-cache pkgnames linux-image- | grep -E "$re" |
		sort -V | tail -n 1 | sed 's/^linux-image-//'
}

series_of() {
	case "$1" in
	6.1.0-*-rt-amd64) echo 6.1-rt ;;
	6.1.0-*-arm64) echo 6.1-arm64 ;;
	6.12.*+deb12-arm64) echo 6.12-arm64 ;;
	*+deb1[3-9]-arm64 | *+deb[2-9][0-9]-arm64) echo newest-arm64 ;;
	6.1.0-*) echo 6.1 ;;
	6.12.*+deb12-*) echo 6.12 ;;
	5.10.0-*) echo 5.10 ;;
	*+deb1[3-9]-amd64 | *+deb[2-9][0-9]-amd64) echo newest ;;
	*) echo unknown ;;
	esac
}

# The packages to unpack: the image (sid splits it into linux-binary-*,
# linux-modules-* and linux-base-*, which the image package depends on),
# plus, for host-built series, the headers and what they include.
packages_of() {
	local s=$1 rel=$2 deps

	echo "linux-image-$rel"
	# The arm64 guest's userland, and what its kvm-statsfd links.
	[ "$(origin_of "$s")" != arm64 ] ||
		printf '%s\n' busybox-static:arm64 libncurses-dev:arm64
	apt_for "$s" apt-cache depends "linux-image-$rel" 2>/dev/null |
		sed -n "s/^ *|\\?Depends: \\(linux-\\(binary\\|modules\\|base\\)-$rel\\)\\(:arm64\\)\\?\$/\\1/p"
	[ "$(builder_of "$s")" = host ] || return 0
	echo "linux-headers-$rel"
	deps=$(apt_for "$s" apt-cache depends "linux-headers-$rel" 2>/dev/null |
		sed -n 's/^ *|\?Depends: \(linux-\(headers\|kbuild\)-[^ ]*\)$/\1/p')
	[ -n "$deps" ] || { echo "no headers package for $rel" >&2; return 1; }
	echo "$deps"
}

ensure_apt_lists() {
	if ! apt-cache show busybox-static >/dev/null 2>&1; then
		log "apt lists are empty: running apt-get update"
		${SUDO:-} apt-get update -qq
	fi
}

# Give every root the same shape: boot/vmlinuz-REL, boot/config-REL and
# lib/modules/REL, whichever of /lib or /usr/lib the packages used.
normalise_root() {
	local root=$1 rel=$2
	# lib itself is the link (merged /usr): tools that do not follow a
	# symbolic link given as their argument (find) still see
	# lib/modules/REL as a directory.
	if [ ! -e "$root/lib" ] && [ -d "$root/usr/lib/modules/$rel" ]; then
		ln -s usr/lib "$root/lib"
	fi
	mkdir -p "$root/boot"
	local f
	for f in vmlinuz config System.map; do
		[ -e "$root/boot/$f-$rel" ] && continue
		[ -e "$root/usr/lib/modules/$rel/$f" ] || continue
		ln -s "../usr/lib/modules/$rel/$f" "$root/boot/$f-$rel"
	done
	[ -e "$root/boot/vmlinuz-$rel" ] ||
		{ echo "no vmlinuz in the packages of $rel" >&2; return 1; }
}

# The arm64 userland's packages as SERIES's apt would fetch them (its
# release's versions, which the cache may not hold yet): "PKG FILE" lines.
userland_debs() {
	apt_for "$1" apt-get --print-uris -qq download busybox-static:arm64 \
		libncurses-dev:arm64 2>/dev/null |
		awk '{ f = $2; sub(/_.*/, "", $2); print $2 ":arm64", f }'
}

# The cached .deb of PKG (NAME or NAME:ARCH), the newest if several; for a
# userland package, the file that fetch_one's $ul names, if cached.
deb_of() {
	local name=${1%%:*} arch='' f
	f=$(awk -v p="$1" '$1 == p { print $2 }' <<< "${ul:-}")
	if [ -n "$f" ]; then
		[ ! -f "$CACHE/debs/$f" ] || echo "$CACHE/debs/$f"
		return
	fi
	[ "$name" = "$1" ] || arch=_${1#*:}
	find "$CACHE/debs" -maxdepth 1 -name "${name}_*$arch.deb" 2>/dev/null |
		sort -V | tail -n 1
}

fetch_one() {
	local s=$1 rel=$2 root debs="$CACHE/debs" pkg pkgs ul=

	root="$CACHE/kernels/$rel"
	[ "$(origin_of "$s")" != arm64 ] || ul=$(userland_debs "$s")
	# Trees unpacked before lib became the link, or arm64 trees whose
	# userland is not of those packages (older, or sid's), are unpacked
	# again.
	if [ -f "$root/.unpacked" ] && [ ! -L "$root/lib/modules/$rel" ] &&
		[ "$(cat "$root/.userland" 2>/dev/null)" = "$ul" ]; then
		echo "$s $rel $root"
		return
	fi
	mkdir -p "$debs"
	pkgs=$(packages_of "$s" "$rel")
	# Kernels fetched side by side share packages (linux-kbuild-6.1):
	# one download at a time.
	exec 7> "$debs/.lock"
	flock 7
	for pkg in $pkgs; do
		if [ -z "$(deb_of "$pkg")" ]; then
			log "downloading $pkg"
			(cd "$debs" && apt_for "$s" apt-get download -q "$pkg" 2>&1 |
				grep -v -e '^Get:' -e 'unsandboxed' >&2 || true)
			[ -n "$(deb_of "$pkg")" ] ||
				{ echo "download of $pkg failed" >&2; return 1; }
		fi
	done
	exec 7>&-
	log "unpacking $rel"
	rm -rf "$root.tmp"
	mkdir -p "$root.tmp"
	for pkg in $pkgs; do
		if [ "$pkg" = busybox-static:arm64 ] ||
			[ "$pkg" = libncurses-dev:arm64 ]; then
			dpkg -x "$(deb_of "$pkg")" "$root.tmp/userland"
			continue
		fi
		dpkg -x "$(deb_of "$pkg")" "$root.tmp"
	done
	if [ "$(builder_of "$s")" = host ]; then
		# The arch headers' Makefile includes the common headers by
		# absolute path; point it into the unpacked tree instead.
		sed -i "s|/usr/src/|$root/usr/src/|g" \
			"$root.tmp/usr/src/linux-headers-$rel/Makefile"
	fi
	normalise_root "$root.tmp" "$rel"
	builder_of "$s" > "$root.tmp/.builder"
	[ -z "$ul" ] || echo "$ul" > "$root.tmp/.userland"
	touch "$root.tmp/.unpacked"
	rm -rf "$root"
	mv "$root.tmp" "$root"
	echo "$s $rel $root"
}

main() {
	local s r pairs=()
	if [ -n "${KVM_STATSFD_KERNELS:-}" ]; then
		for r in $KVM_STATSFD_KERNELS; do
			s=$(series_of "$r")
			[ "$(origin_of "$s")" = host ] || origin_setup "$s"
			pairs+=("$s $r")
		done
	else
		for s in $SERIES; do
			origin_setup "$s"
			r=$(newest_release "$s")
			[ -n "$r" ] || { echo "no kernel found for series $s" >&2; exit 1; }
			pairs+=("$s $r")
		done
	fi
	# Side by side: a cold fetch is mostly xz decompression.  Printed in
	# the order asked for.
	local tmp i=0 pids=() rc=0
	tmp=$(mktemp -d)
	for r in "${pairs[@]}"; do
		# shellcheck disable=SC2086
		fetch_one $r > "$tmp/$i" &
		pids+=($!)
		i=$((i + 1))
	done
	for i in "${!pids[@]}"; do
		wait "${pids[$i]}" || rc=1
		cat "$tmp/$i"
	done
	rm -rf "$tmp"
	return "$rc"
}

# fetch-kernels.sh apt SERIES CMD ARGS...: CMD (apt-get, apt-cache) with
# the apt configuration SERIES comes from, set up first: other scripts
# fetch more of that release's packages through it
# (tests/vm/fetch-arm64-closure.sh).
if [ "${1:-}" = apt ]; then
	shift
	origin_setup "$1"
	apt_for "$@"
	exit
fi
main "$@"
