#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Host test of libkvmstats as a library a distribution ships and an
# agent links: the soname, exactly the header's functions exported, each
# under the symbol version of its node of lib/libkvmstats.map (KVMSTATS_1.0,
# KVMSTATS_1.1, ...; no kvmstats__* internals), `make
# install` placing the .so with its links, the .a, the header, the .pc
# and libkvmstats(3), and tools/examples built outside the tree against
# that staged install with pkg-config, shared and static, and run.
#
#   lib_test.sh BUILD_DIR       (make -C tools O=BUILD_DIR, not STATIC=1)
#
# Prints TAP; the last line is "N passed, N failed".
set -u
B=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d /tmp/ks-lib.XXXXXX)
trap 'rm -rf "$T"' EXIT
# ok, skip, tap_finish
. "$(dirname "$0")/../lib/host-tap.sh"
# The file's version is tools/Makefile's LIB_VERSION (1.1.0 and so on).
LIBV=$(sed -n 's/^LIB_VERSION := *//p' "$TOP/tools/Makefile")
SO=$B/libkvmstats.so.$LIBV


soname=$(readelf -d "$SO" 2>&1 | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
[ -n "$LIBV" ] && [ "$soname" = libkvmstats.so.1 ] &&
	[ "$(readlink "$B/libkvmstats.so.1")" = "libkvmstats.so.$LIBV" ]
ok $? "libkvmstats.so.$LIBV has the soname libkvmstats.so.1 (and its link)" "soname: '$soname'"

# What the header declares: every "kvmstats_name(" that starts a
# declaration, return type on the same line.
sed -n 's/^[a-z].*[ *]\(kvmstats_[a-z0-9_]*\)(.*/\1/p' "$TOP/tools/lib/kvmstats.h" |
	sort -u > "$T/declared"
nm -D --defined-only "$SO" | awk '$2 == "T" { print $3 }' | sort > "$T/exported"
sed 's/@@KVMSTATS_[0-9.]*$//' "$T/exported" | sort > "$T/exported-names"
[ -s "$T/declared" ] && cmp -s "$T/declared" "$T/exported-names"
ok $? "the .so exports exactly the $(wc -l < "$T/declared") functions kvmstats.h declares" \
	"$(diff "$T/declared" "$T/exported-names")"
# The version each function should have: the node of the map that lists
# it (functions of 1.0 in KVMSTATS_1.0, those added in 1.1 in KVMSTATS_1.1).
awk '/^KVMSTATS_[0-9.]+ *\{/ { node = $1 }
     /^\t\tkvmstats_[a-z0-9_]*;$/ { sub(/^\t\t/, ""); sub(/;$/, ""); print $0 "@@" node }' \
	"$TOP/tools/lib/libkvmstats.map" | sort > "$T/mapped"
nodes=$(sed 's/.*@@//' "$T/mapped" | sort | uniq -c | awk '{ printf "%s%s: %s", sep, $2, $1; sep = ", " }')
[ -s "$T/mapped" ] && cmp -s "$T/mapped" "$T/exported"
ok $? "every exported function has the symbol version of its node in libkvmstats.map ($nodes)" \
	"$(diff "$T/mapped" "$T/exported")"
# A released node never changes: 1.0 keeps its 35 functions, 1.1 added 7
# (the exit classes, incremental discovery), 1.3 one (kvmstats_stem).
[ "$nodes" = "KVMSTATS_1.0: 35, KVMSTATS_1.1: 7, KVMSTATS_1.3: 1" ]
ok $? "libkvmstats.map: KVMSTATS_1.0 has its 35 functions, KVMSTATS_1.1 the 3 exit-class and 4 incremental-discovery ones, KVMSTATS_1.3 kvmstats_stem" \
	"nodes: $nodes"
leaked=$(nm -D "$SO" | grep -c 'kvmstats__')
inside=$(nm "$B/libkvmstats.a" 2>/dev/null | grep -c ' T kvmstats__')
[ "$leaked" = 0 ] && [ "$inside" -gt 0 ]
ok $? "internal kvmstats__* functions: in libkvmstats.a ($inside), not exported by the .so" \
	"exported: $leaked"
undef=$(nm -D --undefined-only "$SO" | awk '{ print $2 }' | grep -v '@GLIBC_' | grep -v '^_')
ok "$([ -z "$undef" ]; echo $?)" "the .so needs nothing but the C library" "$undef"

D=$T/dest
make -s -C "$TOP/tools" O="$B" DESTDIR="$D" PREFIX=/usr install > "$T/out" 2>&1
ok $? "make -C tools install DESTDIR=... PREFIX=/usr" "$(tail -n 5 "$T/out")"
missing=
for f in "usr/lib/libkvmstats.so.$LIBV" usr/lib/libkvmstats.a \
	 usr/include/kvmstats/kvmstats.h usr/lib/pkgconfig/libkvmstats.pc \
	 usr/share/man/man3/libkvmstats.3; do
	[ -s "$D/$f" ] || missing="$missing $f"
done
[ "$(readlink "$D/usr/lib/libkvmstats.so.1")" = "libkvmstats.so.$LIBV" ] || missing="$missing so.1-link"
[ "$(readlink "$D/usr/lib/libkvmstats.so")" = libkvmstats.so.1 ] || missing="$missing so-link"
ok "$([ -z "$missing" ]; echo $?)" \
	"install places the .so and its links, the .a, <kvmstats/kvmstats.h>, the .pc and libkvmstats(3)" \
	"missing:$missing"
nman=0
while read -r f; do
	[ "$(cat "$D/usr/share/man/man3/$f.3" 2>/dev/null)" = ".so man3/libkvmstats.3" ] &&
		nman=$((nman + 1))
done < "$T/declared"
[ "$nman" = "$(wc -l < "$T/declared")" ] &&
	man -l "$D/usr/share/man/man3/libkvmstats.3" 2>/dev/null | grep -q 'THREAD SAFETY'
ok $? "man 3 kvmstats_open and the other $((nman - 1)) functions lead to libkvmstats(3)" \
	"$nman of $(wc -l < "$T/declared") found"
grep -qx 'libdir=/usr/lib' "$D/usr/lib/pkgconfig/libkvmstats.pc" &&
	grep -qx 'includedir=/usr/include' "$D/usr/lib/pkgconfig/libkvmstats.pc"
ok $? "the installed .pc names the install's PREFIX, not the build's default" \
	"$(cat "$D/usr/lib/pkgconfig/libkvmstats.pc")"
# One version everywhere: the .so's file name, the .pc, the header.
pcv=$(PKG_CONFIG_PATH=$D/usr/lib/pkgconfig pkg-config --modversion libkvmstats 2>&1)
hv=$(sed -n 's/^#define KVMSTATS_VERSION_\(MAJOR\|MINOR\)[[:space:]]*\([0-9]*\)$/\2/p' \
	"$D/usr/include/kvmstats/kvmstats.h" | paste -sd .)
[ -e "$D/usr/lib/libkvmstats.so.$pcv" ] && [ "${pcv%.*}" = "$hv" ] &&
	[ "libkvmstats.so.${hv%%.*}" = "$soname" ]
ok $? "one version: libkvmstats.so.$pcv, pkg-config $pcv, header $hv, soname $soname"
r=0
for s in install-lib install-dev; do
	make -s -C "$TOP/tools" O="$B" DESTDIR="$T/$s" PREFIX=/usr "$s" > "$T/out" 2>&1 || r=1
done
[ "$r" = 0 ] && [ -e "$T/install-lib/usr/lib/libkvmstats.so.1" ] &&
	[ ! -e "$T/install-lib/usr/include" ] && [ ! -e "$T/install-lib/usr/sbin" ] &&
	[ -e "$T/install-dev/usr/include/kvmstats/kvmstats.h" ] && [ ! -e "$T/install-dev/usr/sbin" ]
ok $? "install-lib installs the runtime library only, install-dev adds the rest, no tools" \
	"$(find "$T/install-lib" "$T/install-dev" -type f -o -type l | sed "s|$T/||")"

# The header alone, as a C99 program includes it.
printf '#include <kvmstats/kvmstats.h>\nvoid f(void) { kvmstats_free(kvmstats_new()); }\n' > "$T/h.c"
cc -std=c99 -pedantic -Wall -Wextra -Werror -I"$D/usr/include" -c -o "$T/h.o" "$T/h.c" \
	> "$T/out" 2>&1
ok $? "<kvmstats/kvmstats.h> compiles on its own (C99, -pedantic -Werror)" "$(cat "$T/out")"
if command -v c++ > /dev/null; then
	printf '#include <kvmstats/kvmstats.h>\nint main() { kvmstats_free(kvmstats_new()); }\n' \
		> "$T/h.cc"
	c++ -std=c++11 -pedantic -Wall -Wextra -Werror -I"$D/usr/include" -o "$T/hpp" \
		"$T/h.cc" -L"$D/usr/lib" -lkvmstats > "$T/out" 2>&1 &&
		LD_LIBRARY_PATH=$D/usr/lib "$T/hpp" >> "$T/out" 2>&1
	ok $? "a C++ program includes <kvmstats/kvmstats.h>, links and runs (extern \"C\")" \
		"$(cat "$T/out")"
fi

# A stats file to read: id "kvm-4242", a counter and a time in ns.
python3 - "$T/fixture" <<'EOF'
import struct, sys
ns = 48
descs = [("exits", 0x0, 0, 0), ("halt_wait_ns", 0x20, -9, 8)]
desc_off = 24 + ns
data_off = desc_off + len(descs) * (16 + ns)
b = struct.pack("<IIIIII", 0, ns, len(descs), 24, desc_off, data_off)
b += b"kvm-4242".ljust(ns, b"\0")
for name, flags, exp, off in descs:
    b += struct.pack("<IhHII", flags, exp, 1, off, 0) + name.encode().ljust(ns, b"\0")
b += struct.pack("<QQ", 12345, 1500000)
open(sys.argv[1], "wb").write(b)
EOF
printf 'kvm-4242\nexits: 12345\nhalt_wait_ns: 1.5 ms\n' > "$T/want"
for kind in shared static; do
	st=$([ $kind = static ] && echo 1 || echo 0)
	mkdir -p "$T/ex-$kind"
	PKG_CONFIG_PATH=$D/usr/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$D \
		make -s -C "$TOP/tools/examples" O="$T/ex-$kind" STATIC="$st" > "$T/out" 2>&1
	ok $? "tools/examples builds against the staged install with pkg-config ($kind)" \
		"$(tail -n 5 "$T/out")"
	needed=$(readelf -d "$T/ex-$kind/print_stats" 2>/dev/null | grep -c 'NEEDED.*libkvmstats')
	LD_LIBRARY_PATH=$D/usr/lib "$T/ex-$kind/print_stats" "$T/fixture" > "$T/got" 2>&1
	r=$?
	want_needed=$([ $kind = shared ] && echo 1 || echo 0)
	[ "$r" = 0 ] && cmp -s "$T/want" "$T/got" && [ "$needed" = "$want_needed" ]
	ok $? "the example ($kind, NEEDED libkvmstats: $needed) reads a stats file" \
		"status $r:" "$(cat "$T/got")"
done
# The discovery example runs (this host has no VMs, or it lists them).
LD_LIBRARY_PATH=$D/usr/lib timeout 20 "$T/ex-shared/vm_exits" -1 > "$T/got" 2>&1
r=$?
[ "$r" = 0 ] && grep -q -e '^no KVM VMs on this host$' -e ' exits/s$' "$T/got"
ok $? "the discovery example (vm_exits -1) finds this host's VMs or says there are none" \
	"status $r:" "$(head -n 5 "$T/got")"

# Exit-reason names come from the generated tables, not this machine's
# headers; regenerated from them, when they are the same kernel's, the
# tables come out the same (the name lists; the header line says where
# they came from).
inc=$(grep -l '#include <asm/' "$TOP"/tools/lib/*.c "$TOP"/tools/lib/*.h 2>/dev/null)
ok "$([ -z "$inc" ]; echo $?)" "libkvmstats includes no <asm/...> header" "$inc"
ver=$(sed -n 's/^ \* Linux \([0-9.]*\)'"'"'s source.*/\1/p' "$TOP/tools/lib/exit_tables.c")
here=$(printf '#include <linux/version.h>\nLINUX_VERSION_MAJOR.LINUX_VERSION_PATCHLEVEL\n' |
	cc -E -P -x c - 2>/dev/null | tail -n 1 | tr -d ' ')
if [ "${ver%.*}" = "$here" ] && sh "$TOP/scripts/gen-exit-names.sh" > "$T/tables.c" 2> "$T/err"; then
	sed '1,/^#include/d' "$TOP/tools/lib/exit_tables.c" > "$T/committed"
	sed '1,/^#include/d' "$T/tables.c" > "$T/regenerated"
	cmp -s "$T/committed" "$T/regenerated"
	ok $? "tools/lib/exit_tables.c is what scripts/gen-exit-names.sh makes from this machine's Linux $here headers" \
		"$(diff "$T/committed" "$T/regenerated" | head -n 20)"
else
	skip "exit_tables.c regenerated from this machine's headers" \
		"tables from Linux $ver, headers here $here $(cat "$T/err" 2>/dev/null)"
fi

tap_finish
