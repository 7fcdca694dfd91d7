#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The module build cache's own test (build_module in tests/vm/lib.sh), on
# the host with a stand-in for make: a second build with the same inputs
# must come from the cache, and a change to any input must build again;
# and make check's last word on the cache (lib.sh cache_report) must say
# when a run built a module.
# Debian's 5.10 and 6.1 headers ship no vmlinux (6.12's do), so both kinds
# of headers tree are tried: the cache must serve a kernel without one.
#
# usage: tests/vm/build_cache_test.sh
# Prints TAP, then "N passed, N failed".
set -uo pipefail

T=$(mktemp -d "${TMPDIR:-/tmp}/ks-build-cache.XXXXXX")
trap 'rm -rf "$T"' EXIT
export CACHE=$T/cache BUILD=$T/build
# shellcheck disable=SC1091 # lib.sh, checked on its own
. "$(dirname "$0")/lib.sh"
# ok, tap_finish
. "$TOP/tests/lib/host-tap.sh"

# The stand-in for make: counts its runs, makes a .ko from the sources.
mkdir -p "$T/bin"
cat > "$T/bin/make" <<'SH'
#!/bin/sh
echo run >> "$MAKE_RUNS"
for a; do case "$a" in M=*) m=${a#M=} ;; esac; done
cat "$m"/src/*.c > "$m/kvm_statsfd.ko"
echo "  LD [M]  $m/kvm_statsfd.ko"
SH
chmod +x "$T/bin/make"
export PATH="$T/bin:$PATH" MAKE_RUNS="$T/runs"

# runs_of BUILD-DIR ARGS...: how many times make ran for one build_module
# into a fresh directory, "failed" if the build failed or made no module.
n_build=0
runs_of() {
	local root=$1 out
	shift
	n_build=$((n_build + 1))
	out="$T/out/$n_build"
	mkdir -p "$out/src"
	cp "$T/src/"*.c "$out/src/"
	: > "$MAKE_RUNS"
	if build_module "$REL" "$root" "$out" "$@" 2>/dev/null &&
		[ -s "$out/kvm_statsfd.ko" ]; then
		wc -l < "$MAKE_RUNS"
	else
		echo failed
	fi
}

REL=9.9.9-test
mkdir -p "$T/src"
echo "int x;" > "$T/src/main.c"
for kind in "without vmlinux" "with vmlinux"; do
	root="$T/root-${kind// /-}"
	kdir=$(kdir_of "$REL" "$root")
	mkdir -p "$kdir"
	echo "CONFIG_KVM=m" > "$kdir/.config"
	: > "$kdir/Module.symvers"
	[ "$kind" = "with vmlinux" ] && echo "ELF" > "$kdir/vmlinux"
	echo "int x;" > "$T/src/main.c"

	cache_state > "$T/before"
	r=$(runs_of "$root" W=1)
	[ "$r" = 1 ]; ok $? "headers $kind: a first build runs make once (ran $r)"
	cache_state > "$T/after"
	said=$(cache_report "$T/before" "$T/after")
	[ "$said" = "built 1 module" ]
	ok $? "headers $kind: make check's cache line says the run built it ('$said')"
	r=$(runs_of "$root" W=1)
	[ "$r" = 0 ]; ok $? "headers $kind: the same build again comes from the cache (make ran $r)"
	cache_state > "$T/again"
	said=$(cache_report "$T/after" "$T/again")
	[ -z "$said" ]
	ok $? "headers $kind: ... and that this one built nothing ('$said')"
	r=$(runs_of "$root" W=1 C=1)
	[ "$r" = 1 ]; ok $? "headers $kind: other make arguments build again (ran $r)"
	echo "int y;" > "$T/src/main.c"
	r=$(runs_of "$root" W=1)
	[ "$r" = 1 ]; ok $? "headers $kind: a changed source builds again (ran $r)"
	echo "CONFIG_KVM=y" > "$kdir/.config"
	r=$(runs_of "$root" W=1)
	[ "$r" = 1 ]; ok $? "headers $kind: a changed kernel .config builds again (ran $r)"
	r=$(KS_BUILD_CACHE=0 runs_of "$root" W=1)
	[ "$r" = 1 ]; ok $? "headers $kind: KS_BUILD_CACHE=0 builds again (ran $r)"
done

tap_finish
