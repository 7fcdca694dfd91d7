#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build chroots: a minimal Debian system of one release with that release's
# compiler, make, kmod, sparse and pahole, and the kernel headers installed
# by the release's own apt.  A module built in it is built the way DKMS
# builds it on a host running that release (same gcc, headers at their
# real /usr/src paths, which the headers' Makefiles name absolutely).
#
# The bookworm-arm64 chroot is Debian 12 amd64 with the arm64 cross
# compiler (gcc-aarch64-linux-gnu, the kernel's own aarch64-linux-gnu-gcc-12
# 12.2.0): Debian 12 will not install it beside the host's gcc-multilib;
# sid-arm64 is the same for unstable's arm64 kernels.
# Its arm64 headers come from its own apt too, unpacked at their real
# /usr/src paths with the amd64 linux-kbuild (host fixdep and modpost), as
# they would sit on an arm64 host; modules build with ARCH=arm64.
#
# usage: chroot.sh ensure NAME RELEASE
#          create (once) and print the chroot of NAME (bullseye, sid,
#          bookworm-arm64, sid-arm64) with linux-headers-RELEASE installed and older
#          headers purged
#        chroot.sh build NAME RELEASE DIR [make args...]
#          build the module whose Kbuild and sources are in DIR (symlinks
#          are followed) inside the chroot; DIR receives the *.ko files
#          and build.log.  Fails, printing the log, when the build fails.
#
# Chroots are cached under $CACHE/chroots/NAME; a warm `ensure` costs one
# dpkg query.  Concurrent callers are serialised on a lock per chroot.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
CACHE=${CACHE:-$(cd "$here/../.." && pwd)/.cache}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
# Bump when the chroot's contents change, so that cached ones are rebuilt.
FORMAT=1
log() { echo "  [chroot] $*" >&2; }

# The apt source lines of a build release.  sid's InRelease is often past
# its Valid-Until on the mirrors; its signature is still checked.
sources_of() {
	case "$1" in
	bullseye)
		echo "deb $MIRROR bullseye main"
		echo "deb $SECURITY bullseye-security main"
		;;
	sid)
		echo "deb [check-valid-until=no] $MIRROR sid main"
		;;
	bookworm-arm64)
		echo "deb [arch=amd64,arm64] $MIRROR bookworm main"
		echo "deb [arch=amd64,arm64] $MIRROR bookworm-updates main"
		echo "deb [arch=amd64,arm64] $SECURITY bookworm-security main"
		;;
	sid-arm64)
		echo "deb [arch=amd64,arm64 check-valid-until=no] $MIRROR sid main"
		;;
	*) echo "unknown build release '$1'" >&2; return 1 ;;
	esac
}

# The Debian suite of a chroot, and what it needs beyond BASE_PKGS.
suite_of() { echo "${1%-arm64}"; }
extra_pkgs_of() {
	case "$1" in
	*-arm64) echo gcc-aarch64-linux-gnu ;;
	esac
}

# make's arguments for a chroot's kernels: ARCH and CROSS_COMPILE, which
# 6.1's headers set only when dpkg says the build is a cross build.
make_args_of() {
	case "$1" in
	*-arm64) echo ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- ;;
	esac
}

# What DKMS needs on such a host; the headers bring the right gcc.
BASE_PKGS="make kmod bc sparse dwarves libc6-dev debian-archive-keyring"

# run_in DIR CMD...: run a command inside the chroot, with the network
# configuration apt needs and nothing of the host mounted.
run_in() {
	local dir=$1
	shift
	cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
	# /proc in a private mount namespace, gone with it: objtool reads
	# /proc/self (7.x kernels' module links fail without it).
	unshare --mount --propagation private \
		sh -c 'mount -t proc proc "$1/proc" && exec chroot "$@"' sh \
		"$dir" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LC_ALL=C DEBIAN_FRONTEND=noninteractive "$@"
}

# The headers package mmdebstrap installs with the system: the release's
# own for a native chroot; none for a cross one (headers() unpacks them).
native_headers_of() {
	case "$1" in
	*-arm64) ;;
	*) echo "linux-headers-$2" ;;
	esac
}

# mmdebstrap's foreign architectures: arm64 lists for the cross chroot.
architectures_of() {
	case "$1" in
	*-arm64) echo --architectures=amd64,arm64 ;;
	esac
}

create() {
	local name=$1 rel=$2 dir=$3 t0
	t0=$(date +%s)
	log "creating the $name chroot (once; a few minutes)"
	rm -rf "$dir.tmp"
	mkdir -p "$(dirname "$dir")"
	# shellcheck disable=SC2046 # one argument per source line
	if ! nice -n 10 mmdebstrap --variant=minbase --quiet \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		--include="$(echo $BASE_PKGS $(extra_pkgs_of "$name") \
			$(native_headers_of "$name" "$rel") | tr ' ' ,)" \
		$(architectures_of "$name") \
		--dpkgopt='path-exclude=/usr/share/doc/*' \
		--dpkgopt='path-exclude=/usr/share/man/*' \
		--dpkgopt='path-exclude=/usr/share/locale/*' \
		"$(suite_of "$name")" "$dir.tmp" "$(sources_of "$name")" \
		> "$CACHE/chroots/$name.create.log" 2>&1; then
		tail -n 30 "$CACHE/chroots/$name.create.log" >&2
		echo "creating the $name chroot failed" >&2
		return 1
	fi
	echo "$FORMAT" > "$dir.tmp/.ks-format"
	rm -rf "$dir"
	mv "$dir.tmp" "$dir"
	log "$name chroot ready in $(($(date +%s) - t0)) s ($(du -sh "$dir" | cut -f1))"
}

# The arm64 headers of RELEASE in a cross chroot: the headers, the common
# headers and the amd64 kbuild they depend on, downloaded with the chroot's
# apt and unpacked (not installed: the arm64 package depends on arm64 gcc
# and kbuild) at their real paths; a stamp in the chroot's dpkg directory
# says which.  Older ABIs of the same series are removed, as in headers().
cross_headers() {
	local name=$1 rel=$2 dir=$3 stamp t0 pkgs deb series
	stamp="$dir/var/lib/dpkg/ks-headers-$rel"
	[ -e "$stamp" ] && return 0
	t0=$(date +%s)
	log "unpacking linux-headers-$rel in the $name chroot"
	run_in "$dir" apt-get update -qq >> "$CACHE/chroots/$name.apt.log" 2>&1
	pkgs="linux-headers-$rel:arm64 $(run_in "$dir" apt-cache depends \
		"linux-headers-$rel:arm64" 2>/dev/null |
		sed -n 's/^ *|\?Depends: <\?\(linux-\(headers\|kbuild\)-[^ :>]*\)\(:arm64\)\?>\?$/\1/p' |
		sed 's/^linux-kbuild-.*/&:amd64/')"
	case "$pkgs" in
	*linux-kbuild-*) ;;
	*) echo "no headers package for $rel in the $name chroot" >&2; return 1 ;;
	esac
	rm -rf "$dir/tmp/ks-debs"
	mkdir -p "$dir/tmp/ks-debs/x"
	# shellcheck disable=SC2086
	run_in "$dir" sh -c 'cd /tmp/ks-debs && apt-get download -q "$@"' sh \
		$pkgs >> "$CACHE/chroots/$name.apt.log" 2>&1 ||
		{ tail -n 20 "$CACHE/chroots/$name.apt.log" >&2; return 1; }
	# Older ABIs of the same series go (6.1.0-55 when 6.1.0-56 comes);
	# other series (6.1 beside 6.12) stay.
	series=${rel#*.}
	series=${rel%%.*}.${series%%[!0-9]*}.
	rm -rf "$dir"/usr/src/linux-headers-"$series"* \
		"$dir"/var/lib/dpkg/ks-headers-"$series"*
	# Unpacked aside, then only /usr/src and the kbuild copied in: dpkg
	# -x straight into the chroot would put a directory in place of its
	# /lib link (the headers ship lib/modules/REL/build).
	for deb in "$dir"/tmp/ks-debs/*.deb; do
		dpkg -x "$deb" "$dir/tmp/ks-debs/x"
	done
	cp -a "$dir/tmp/ks-debs/x/usr/src/." "$dir/usr/src/"
	rm -rf "$dir"/usr/lib/"$(basename "$dir"/tmp/ks-debs/x/usr/lib/linux-kbuild-*)"
	cp -a "$dir"/tmp/ks-debs/x/usr/lib/linux-kbuild-* "$dir/usr/lib/"
	rm -rf "$dir/tmp/ks-debs"
	checker_valid "$dir"
	touch "$stamp"
	log "headers for $rel unpacked in $(($(date +%s) - t0)) s"
}

# Install the headers of RELEASE with the release's apt; purge others, as
# the archive moves on and each headers tree is ~100 MB.
headers() {
	local name=$1 rel=$2 dir=$3 old t0

	case "$name" in
	*-arm64) cross_headers "$@"; return ;;
	esac
	if run_in "$dir" dpkg-query -W -f='${Status}' "linux-headers-$rel" \
		2>/dev/null | grep -q 'ok installed'; then
		return 0
	fi
	t0=$(date +%s)
	log "installing linux-headers-$rel in the $name chroot"
	run_in "$dir" apt-get update -qq -o Acquire::Check-Valid-Until=false \
		>> "$CACHE/chroots/$name.apt.log" 2>&1
	run_in "$dir" apt-get install -y -qq --no-install-recommends \
		"linux-headers-$rel" >> "$CACHE/chroots/$name.apt.log" 2>&1 ||
		{ tail -n 20 "$CACHE/chroots/$name.apt.log" >&2; return 1; }
	old=$(run_in "$dir" dpkg-query -W -f='${Package}\n' 'linux-headers-*' |
		grep -v -e "^linux-headers-$rel\$" || true)
	if [ -n "$old" ]; then
		# shellcheck disable=SC2086
		run_in "$dir" apt-get purge -y -qq --autoremove $old \
			>> "$CACHE/chroots/$name.apt.log" 2>&1 || true
		run_in "$dir" apt-get install -y -qq --no-install-recommends \
			"linux-headers-$rel" >> "$CACHE/chroots/$name.apt.log" 2>&1
	fi
	run_in "$dir" apt-get clean
	checker_valid "$dir"
	log "headers for $rel installed in $(($(date +%s) - t0)) s"
}

# Kernels from 6.13 run scripts/checker-valid.sh before they let C=1 call
# sparse, and Debian's headers packages do not ship it: without it kbuild
# only warns and builds without sparse.  Put our own check there (does the
# checker run at all?), so that lint's C=1 means sparse on these kernels too.
checker_valid() {
	local dir=$1 mk
	for mk in "$dir"/usr/src/linux-headers-*/Makefile; do
		grep -q 'scripts/checker-valid.sh' "$mk" || continue
		[ -e "$(dirname "$mk")/scripts/checker-valid.sh" ] && continue
		cat > "$(dirname "$mk")/scripts/checker-valid.sh" <<-'EOS'
		#!/bin/sh
		# Added by kvm-statsfd's tests/vm/chroot.sh (the headers lack it).
		"$1" --version > /dev/null 2>&1 && echo 1
		EOS
		chmod +x "$(dirname "$mk")/scripts/checker-valid.sh"
	done
}

ensure() {
	local name=$1 rel=$2 dir="$CACHE/chroots/$1"

	sources_of "$name" > /dev/null
	mkdir -p "$CACHE/chroots"
	exec 9> "$CACHE/chroots/$name.lock"
	flock 9
	if [ "$(cat "$dir/.ks-format" 2>/dev/null)" != "$FORMAT" ]; then
		create "$name" "$rel" "$dir"
	fi
	headers "$name" "$rel" "$dir"
	checker_valid "$dir"
	exec 9>&-
	echo "$dir"
}

# build NAME RELEASE DIR [make args]: copy DIR's sources in, make, copy the
# modules and the log back out.
build() {
	local name=$1 rel=$2 src=$3 dir work rc=0
	shift 3
	dir=$(ensure "$name" "$rel")
	work=$(mktemp -d "$dir/tmp/ks-build.XXXXXX")
	# Sources only: objects from an earlier build elsewhere do not belong.
	(cd "$src" && find -L . -type f \( -name Kbuild -o -name Makefile \
		-o -name '*.[ch]' \) ! -name '*.mod.c' -print0 |
		cpio -0 -pdmL --quiet "$work")
	# shellcheck disable=SC2046 # one argument per word
	run_in "$dir" make -C "/usr/src/linux-headers-$rel" \
		M="/${work#"$dir"/}" $(make_args_of "$name") "$@" modules > "$src/build.log" 2>&1 || rc=$?
	# Name our sources by their place in the tree, not in the chroot.
	sed -i "s|/${work#"$dir"/}/|$src/|g" "$src/build.log"
	if [ "$rc" = 0 ]; then
		(cd "$work" && find . -name '*.ko' -print0 |
			cpio -0 -pdm --quiet "$src")
	fi
	rm -rf "$work"
	if [ "$rc" != 0 ]; then
		cat "$src/build.log" >&2
		echo "module build in $src failed for $rel ($name chroot)" >&2
		return 1
	fi
}

cmd=${1:-}
shift || true
case "$cmd" in
ensure) ensure "$@" ;;
build) build "$@" ;;
*) echo "usage: chroot.sh ensure|build NAME RELEASE ..." >&2; exit 2 ;;
esac
