#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A dynamically linked program of this host, for the busybox test guest,
# which has no libraries of its own:
#
#   guest-bundle.sh ROOT DIR BIN NAME [ARG...]
#
# or, with SYSROOT=DIR in the environment, a program of another
# architecture unpacked with its libraries in DIR (sysroot-libs.sh finds
# them there without running it),
#
# makes ROOT/DIR (DIR: where the guest sees it, /opt/NAME say) with
#   bin/NAME    BIN, unchanged
#   lib/        the libraries ldd lists and the loader
#               (tools/exporter/guest-libs.sh), or SYSROOT's
#   NAME        a wrapper running bin/NAME ARG... "$@" through that loader
#               and library path, which holds for what it dlopen()s too.
# ROOT/DIR is emptied first.
set -eu

root=$1 dir=$2 bin=$3 name=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$bin" ] || { echo "guest-bundle: $bin not found" >&2; exit 1; }
prefix=$root$dir
rm -rf "$prefix"
mkdir -p "$prefix/bin" "$prefix/lib"
cp -L "$bin" "$prefix/bin/$name"
if [ -n "${SYSROOT:-}" ]; then
	"$here/sysroot-libs.sh" "$bin" "$SYSROOT" "$prefix/lib"
	loader=$(readelf -l "$bin" | sed -n 's/.*Requesting program interpreter: .*\/\(.*\)]$/\1/p')
else
	"$here/../../tools/exporter/guest-libs.sh" "$bin" "$prefix/lib"
	loader=ld-linux-x86-64.so.2
fi
{
	echo '#!/bin/sh'
	echo "# $bin through its own copied loader and libraries."
	printf 'exec %s/lib/%s --library-path %s/lib %s/bin/%s' \
		"$dir" "$loader" "$dir" "$dir" "$name"
	for a in "$@"; do printf ' %s' "$a"; done
	echo ' "$@"'
} > "$prefix/$name"
chmod 0755 "$prefix/$name"
