#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Fetch and unpack the Debian test kernels (image + headers) without
# installing them.  Prints one line per kernel: "<series> <release> <root>",
# where <root> is the unpacked tree holding boot/, lib/modules/ and usr/src/.
#
# The newest ABI of each series is resolved with apt at run time, because the
# archive drops old ABIs.  Override with KVM_STATSFD_KERNELS, a space-separated
# list of releases, e.g. "6.1.0-56-amd64 6.12.117+deb12-amd64", or pick
# series with SERIES (default "6.1 6.12 6.1-rt": 6.1-rt is PREEMPT_RT).
#
# Downloads and unpacked trees are cached under $CACHE (default .cache/ in the
# source tree, gitignored); a second run downloads nothing.
set -euo pipefail

CACHE=${CACHE:-$(cd "$(dirname "$0")/../.." && pwd)/.cache}
SERIES=${SERIES:-"6.1 6.12 6.1-rt"}
log() { echo "  [kernels] $*" >&2; }

# Newest release string of one series, e.g. 6.1 -> 6.1.0-56-amd64.
newest_release() {
	local re
	case "$1" in
	6.1) re='^linux-image-6\.1\.0-[0-9]+-amd64$' ;;
	6.1-rt) re='^linux-image-6\.1\.0-[0-9]+-rt-amd64$' ;;
	6.12) re='^linux-image-6\.12\.[0-9]+\+deb12-amd64$' ;;
	*) echo "unknown kernel series '$1'" >&2; return 1 ;;
	esac
	apt-cache pkgnames linux-image- | grep -E "$re" | sort -V | tail -n 1 |
		sed 's/^linux-image-//'
}

series_of() {
	case "$1" in
	6.1.0-*-rt-amd64) echo 6.1-rt ;;
	6.1.0-*) echo 6.1 ;;
	6.12.*) echo 6.12 ;;
	*) echo unknown ;;
	esac
}

# The packages that make up a bootable image plus an out-of-tree build tree.
packages_of() {
	local rel=$1 deps

	echo "linux-image-$rel linux-headers-$rel"
	deps=$(apt-cache depends "linux-headers-$rel" 2>/dev/null |
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

fetch_one() {
	local rel=$1 root debs="$CACHE/debs" pkg

	root="$CACHE/kernels/$rel"
	if [ -f "$root/.unpacked" ]; then
		echo "$(series_of "$rel") $rel $root"
		return
	fi
	mkdir -p "$debs"
	for pkg in $(packages_of "$rel"); do
		if ! ls "$debs/${pkg}_"*.deb >/dev/null 2>&1; then
			log "downloading $pkg"
			(cd "$debs" && apt-get download -q "$pkg" 2>&1 |
				grep -v -e '^Get:' -e 'unsandboxed' >&2 || true)
			ls "$debs/${pkg}_"*.deb >/dev/null 2>&1 ||
				{ echo "download of $pkg failed" >&2; return 1; }
		fi
	done
	log "unpacking $rel"
	rm -rf "$root.tmp"
	mkdir -p "$root.tmp"
	for pkg in $(packages_of "$rel"); do
		dpkg -x "$(ls "$debs/${pkg}_"*.deb | sort -V | tail -n 1)" "$root.tmp"
	done
	# The arch headers' Makefile includes the common headers by absolute
	# path; point it into the unpacked tree instead.
	sed -i "s|/usr/src/|$root/usr/src/|g" \
		"$root.tmp/usr/src/linux-headers-$rel/Makefile"
	touch "$root.tmp/.unpacked"
	rm -rf "$root"
	mv "$root.tmp" "$root"
	echo "$(series_of "$rel") $rel $root"
}

main() {
	local rels s
	if [ -n "${KVM_STATSFD_KERNELS:-}" ]; then
		rels=$KVM_STATSFD_KERNELS
	else
		ensure_apt_lists
		rels=
		for s in $SERIES; do
			r=$(newest_release "$s")
			[ -n "$r" ] || { echo "no kernel found for series $s" >&2; exit 1; }
			rels="$rels $r"
		done
	fi
	for r in $rels; do
		fetch_one "$r"
	done
}

main "$@"
