#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# collect-bpftrace.sh ROOT: Debian 12's bpftrace (package bpftrace, 0.17)
# as a tree for the bench guest's root (build-initramfs.sh --tree ROOT),
# so that make bench can measure it against the module under -icount:
#
#   ROOT/opt/bpftrace/bin/bpftrace   the binary, unchanged
#   ROOT/opt/bpftrace/lib/           the libraries it needs and the loader
#   ROOT/opt/bpftrace/bpftrace       wrapper: the binary through the copied
#                                    loader (the busybox root has no /lib64)
#
# The packages are not installed on the host: bpftrace and its dependencies
# (apt-cache depends --recurse, bookworm through the host's apt, as
# fetch-kernels.sh fetches the bookworm kernels) are downloaded once into
# $CACHE/debs/bpftrace and unpacked into $CACHE/bpftrace/unpacked; ldd,
# pointed at the unpacked libraries, picks what the binary loads.
set -euo pipefail

root=$1
CACHE=${CACHE:-$(cd "$(dirname "$0")/../../.." && pwd)/.cache}
debs=$CACHE/debs/bpftrace
tree=$CACHE/bpftrace/unpacked
log() { echo "  [bpftrace] $*" >&2; }

deps_of() {
	apt-cache depends --recurse --no-recommends --no-suggests \
		--no-conflicts --no-breaks --no-replaces --no-enhances bpftrace |
		sed -n 's/^ *\(Pre\)\?Depends: \([a-z0-9][^ <>]*\)$/\2/p; /^[a-z0-9]/p' |
		sort -u
}

if [ ! -f "$tree/.unpacked" ]; then
	mkdir -p "$debs"
	exec 7> "$debs/.lock"
	flock 7
	pkgs=$(deps_of)
	[ -n "$pkgs" ] || { echo "collect-bpftrace: apt knows no bpftrace" >&2; exit 1; }
	for pkg in $pkgs; do
		ls "$debs/${pkg}_"*.deb >/dev/null 2>&1 && continue
		log "downloading $pkg"
		(cd "$debs" && apt-get download -q "$pkg") 2>&1 |
			grep -v -e '^Get:' -e 'unsandboxed' >&2 || true
		ls "$debs/${pkg}_"*.deb >/dev/null 2>&1 ||
			{ echo "collect-bpftrace: download of $pkg failed" >&2; exit 1; }
	done
	rm -rf "$tree"
	mkdir -p "$tree"
	for deb in "$debs"/*.deb; do
		dpkg-deb -x "$deb" "$tree"
	done
	touch "$tree/.unpacked"
fi

bin=$tree/usr/bin/bpftrace
[ -x "$bin" ] || { echo "collect-bpftrace: no $bin" >&2; exit 1; }
prefix=$root/opt/bpftrace
rm -rf "$prefix"
mkdir -p "$prefix/bin" "$prefix/lib"
cp -L "$bin" "$prefix/bin/bpftrace"
# The unpacked tree holds the whole closure, libc and its loader included.
libs=$tree/usr/lib/x86_64-linux-gnu:$tree/lib/x86_64-linux-gnu
out=$(LD_LIBRARY_PATH=$libs ldd "$bin")
if echo "$out" | grep -q 'not found'; then
	echo "$out" >&2
	echo "collect-bpftrace: unresolved libraries" >&2
	exit 1
fi
echo "$out" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' |
	while read -r soname path; do
		install -m 0755 "$path" "$prefix/lib/$soname"
	done
loader=$(find "$tree" -name ld-linux-x86-64.so.2 -type f | head -n 1)
[ -n "$loader" ] || { echo "collect-bpftrace: no loader in libc6" >&2; exit 1; }
install -m 0755 "$loader" "$prefix/lib/ld-linux-x86-64.so.2"
cat > "$prefix/bpftrace" <<'WRAP'
#!/bin/sh
# Debian's bpftrace through its own copied loader and libraries.
exec /opt/bpftrace/lib/ld-linux-x86-64.so.2 --library-path /opt/bpftrace/lib \
	/opt/bpftrace/bin/bpftrace "$@"
WRAP
chmod 0755 "$prefix/bpftrace"
log "$(du -sh "$prefix" | cut -f1) in $prefix"
