#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The debug kernel's cache (tests/vm/debug-kernel/build.sh), on the host
# with a stand-in for make and a stand-in linux-source package: a build of
# another configuration must not remove a build that another run may be
# booting (one asked for within the last day), and must remove one that
# nobody asked for since.  Two checkouts on one machine share the cache
# (a developer's tree and a CI clone), each with its own debug.config;
# until 2026-12-07 the second removed the first's kernel in the middle of
# the first's debug lane.
#
# usage: tests/vm/debug_kernel_cache_test.sh
# Prints TAP, then "N passed, N failed".
set -uo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/ks-debug-kernel-cache.XXXXXX")
trap 'rm -rf "$T"' EXIT
export CACHE=$T/cache
# ok, tap_finish
. "$TOP/tests/lib/host-tap.sh"

# The stand-in for make: the kernel's version, a .config from the
# fragment, an empty bzImage.
mkdir -p "$T/bin"
cat > "$T/bin/make" <<'SH'
#!/bin/sh
o= frag=
for a; do
	case "$a" in
	O=*) o=${a#O=} ;;
	KCONFIG_ALLCONFIG=*) frag=${a#KCONFIG_ALLCONFIG=} ;;
	kernelversion) echo 6.12.999; exit 0 ;;
	allnoconfig) grep -E '^CONFIG_[A-Z0-9_]+=' "$frag" > "$o/.config" ;;
	bzImage) mkdir -p "$o/arch/x86/boot" && : > "$o/arch/x86/boot/bzImage" ;;
	esac
done
SH
chmod +x "$T/bin/make"
export PATH="$T/bin:$PATH"

# The source package, already unpacked: build.sh reads its version.
mkdir -p "$T/deb/DEBIAN" "$CACHE/debs" "$CACHE/debug-kernel/src-6.12.999-1"
printf 'Package: linux-source-6.12\nVersion: 6.12.999-1\nArchitecture: all\nMaintainer: test <test@example.org>\nDescription: stand-in\n' \
	> "$T/deb/DEBIAN/control"
dpkg-deb -b "$T/deb" "$CACHE/debs/linux-source-6.12_6.12.999-1_all.deb" > /dev/null
touch "$CACHE/debug-kernel/src-6.12.999-1/.extracted"

# Two checkouts: build.sh beside its own debug.config, and the
# fetch-deb.sh it takes the source package from one directory up.
cp "$TOP/tests/vm/fetch-deb.sh" "$T/"
for c in a b; do
	mkdir -p "$T/$c"
	cp "$TOP/tests/vm/debug-kernel/build.sh" "$TOP/tests/vm/debug-kernel/debug.config" "$T/$c/"
done
echo "# checkout b" >> "$T/b/debug.config"

# build CHECKOUT: build.sh's root for it, empty if it failed.
build() {
	local line series rel root
	line=$(bash "$T/$1/build.sh" 2> "$T/$1.log") || return 0
	read -r series rel root <<< "$line"
	[ "$series $rel" = "6.12-debug 6.12.999-ksdebug" ] &&
		[ -f "$root/.built" ] && [ -f "$root/boot/vmlinuz-$rel" ] &&
		echo "$root"
}

ra=$(build a)
[ -n "$ra" ]; ok $? "checkout a: a first build" "$(cat "$T/a.log")"
rb=$(build b)
[ -n "$rb" ] && [ "$rb" != "$ra" ]
ok $? "checkout b: its own build, under another key" "$(cat "$T/b.log")"
[ -n "$ra" ] && [ -f "$ra/.built" ]
ok $? "checkout b's build keeps a's, asked for a moment ago (a's debug lane may be booting it)" \
	"$(cat "$T/b.log")"

# Nobody has asked for a's build for two days: b's next run removes it.
[ -n "$ra" ] && [ -d "$ra" ] && touch -d '2 days ago' "$ra"
build b > /dev/null
[ -n "$ra" ] && [ ! -e "$ra" ]
ok $? "a build nobody asked for in two days is removed" "$(cat "$T/b.log")"

# Asking for a build marks it used.
[ -n "$rb" ] && touch -d '2 days ago' "$rb"
r=$(build b)
[ -n "$rb" ] && [ "$r" = "$rb" ] && [ -n "$(find "$rb" -maxdepth 0 -mmin -5)" ]
ok $? "a cached build asked for again is marked used" "$(cat "$T/b.log")"

tap_finish
