#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# guest-libs.sh BINARY DIR: copy the shared libraries BINARY needs, and the
# dynamic loader as ld-linux-x86-64.so.2, into DIR (for the test guest's
# /bin, where BINARY finds them through its $ORIGIN run path).  Fails if
# ldd cannot resolve a library.
set -eu
bin=$1 dir=$2
out=$(ldd "$bin")
if echo "$out" | grep -q 'not found'; then
	echo "$out" >&2
	echo "guest-libs.sh: unresolved libraries for $bin" >&2
	exit 1
fi
echo "$out" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' |
	while read -r soname path; do
		install -m 0755 "$path" "$dir/$soname"
	done
loader=$(echo "$out" | awk '$1 ~ /^\/.*ld-linux/ { print $1 }')
[ -n "$loader" ] || { echo "guest-libs.sh: no loader in ldd output" >&2; exit 1; }
install -m 0755 "$loader" "$dir/ld-linux-x86-64.so.2"
