#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Debian's collectd for the test guest: collect-collectd.sh ROOT PLUGIN
# LIBDIR puts under ROOT/opt/collectd the daemon with its shared libraries
# and loader, and a wrapper, ROOT/opt/collectd/collectd, that runs it with
# them (tests/lib/guest-bundle.sh); its csv and logfile plugins, types.db,
# our plugin PLUGIN and the libkvmstats.so.1 of LIBDIR (a staged install
# of the library, which the plugin was built against).
set -eu

root=$1 plugin=$2 libdir=$3
bin=${COLLECTD_BIN:-/usr/sbin/collectd}
cdlib=${COLLECTD_PLUGINS:-/usr/lib/collectd}
here=$(cd "$(dirname "$0")" && pwd)
for f in "$bin" "$cdlib/csv.so" "$cdlib/logfile.so" /usr/share/collectd/types.db; do
	[ -e "$f" ] || { echo "collect-collectd: $f not found (package collectd-core)" >&2; exit 1; }
done

prefix=$root/opt/collectd
"$here/../lib/guest-bundle.sh" "$root" /opt/collectd "$bin" collectd
mkdir -p "$prefix/plugins"
cp "$cdlib/csv.so" "$cdlib/logfile.so" "$plugin" "$prefix/plugins/"
cp -L "$libdir/libkvmstats.so.1" "$prefix/lib/"
cp /usr/share/collectd/types.db "$prefix/"
echo "collect-collectd: $(du -sh "$prefix" | cut -f1) in $prefix" >&2
