#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the "6.12-debug" test kernel: Debian's linux-source-6.12 with a small
# config (debug.config on top of allnoconfig) that has KVM and the kernel's
# bug detectors (KASAN, KFENCE, kmemleak, lockdep/PROVE_RCU, atomic-sleep
# checks, UBSAN, debug objects, fault injection).  Built once and cached
# under $CACHE/debug-kernel/, keyed by the source package and the config.
#
# Prints "<series> <release> <root>" like fetch-kernels.sh, with <root> in
# the same shape as an unpacked Debian kernel: boot/vmlinuz-<release>,
# lib/modules/<release>/ (kvm, kvm_amd, irqbypass), and
# usr/src/linux-headers-<release>, which is the kernel's build tree itself,
# so `make -C <that> M=...` builds out-of-tree modules against it.
#
# Progress goes to stderr and the build log to <root>/build.log.  An
# interrupted build resumes where it stopped on the next run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
CACHE=${CACHE:-$(cd "$here/../../.." && pwd)/.cache}
PKG=linux-source-6.12
SERIES=6.12-debug
JOBS=${DEBUG_KERNEL_JOBS:-2}
# Not niced: in make check a cold build and then the debug lane are the
# longest chain, and at nice 10 beside the guests the build took 999 s of
# wall for ~620 CPU-seconds (review of cca4d4e); check.sh lowers the short
# lanes instead.
NICE=${DEBUG_KERNEL_NICE:-0}
# Bump when the way the tree is built changes (not the config: that is
# hashed).
FORMAT=1
log() { echo "  [debug-kernel] $*" >&2; }

mkdir -p "$CACHE/debs" "$CACHE/debug-kernel"
# One build at a time: make check starts one early, and its lane (or a
# make stress) waits here for it rather than building the same tree.
exec 9> "$CACHE/debug-kernel/.lock"
flock 9
deb=$("$here/../fetch-deb.sh" "$PKG" "about 150 MB")
debver=$(dpkg-deb -f "$deb" Version)

# The source, unpacked once per package version.
src="$CACHE/debug-kernel/src-$debver"
if [ ! -f "$src/.extracted" ]; then
	log "unpacking $(basename "$deb")"
	rm -rf "$src"
	mkdir -p "$src"
	dpkg-deb --fsys-tarfile "$deb" |
		tar -xO --wildcards './usr/src/linux-source-*.tar.xz' |
		tar -xJ -C "$src" --strip-components=1
	touch "$src/.extracted"
fi

kver=$(make -s -C "$src" kernelversion)
rel="$kver-ksdebug"
key=$( (echo "$FORMAT $debver"; cat "$here/debug.config") | sha256sum | cut -c1-12)
root="$CACHE/debug-kernel/$rel-$key"
obj="$root/usr/src/linux-headers-$rel"

# Builds of other configurations are dead weight (about 1 GB each) once
# nobody has asked for them for a day.  Not before: two checkouts on one
# machine share the cache, each with its own debug.config, and the other's
# debug lane may be booting its build right now (its directory's mtime
# says when it was last asked for, below).
find "$CACHE/debug-kernel" -mindepth 1 -maxdepth 1 -name "$kver-ksdebug-*" \
	! -path "$root" -mmin +1440 -print0 |
	while IFS= read -r -d '' old; do
		log "removing $old, unused for a day"
		rm -rf "$old"
	done

if [ -f "$root/.built" ]; then
	# guest_cmdline (lib.sh) reads it, as in a Debian image.
	[ -f "$root/boot/config-$rel" ] || cp "$obj/.config" "$root/boot/config-$rel"
	touch "$root"
	echo "$SERIES $rel $root"
	exit 0
fi

mkdir -p "$obj"
# Not through ccache, should a developer's PATH have its links: this
# build is cached whole, and would fill ccache's cache.
kmake() {
	CCACHE_DISABLE=1 nice -n "$NICE" make -C "$src" O="$obj" LOCALVERSION=-ksdebug \
		KBUILD_BUILD_USER=kvm-statsfd KBUILD_BUILD_HOST=rig "$@"
}
log "configuring $rel (allnoconfig + debug.config)"
kmake -s KCONFIG_ALLCONFIG="$here/debug.config" allnoconfig >&2

# Kconfig drops what it cannot satisfy without a word: insist on every
# option the fragment asks for.
bad=0
while IFS='=' read -r opt val; do
	got=$(sed -n "s/^$opt=//p" "$obj/.config")
	if [ "$got" != "$val" ]; then
		echo "debug.config: $opt=$val did not stick (got '${got:-unset}')" >&2
		bad=1
	fi
done < <(grep -E '^CONFIG_[A-Z0-9_]+=' "$here/debug.config")
while read -r opt; do
	if grep -q "^$opt=" "$obj/.config"; then
		echo "debug.config: $opt must stay unset" >&2
		bad=1
	fi
done < <(sed -n 's/^# \(CONFIG_[A-Z0-9_]*\) is not set$/\1/p' "$here/debug.config")
[ "$bad" = 0 ] || exit 1

log "building $rel with -j$JOBS (about 600 CPU-seconds, once; log: $root/build.log)"
start=$(date +%s)
if ! kmake -j"$JOBS" bzImage modules > "$root/build.log" 2>&1; then
	tail -n 40 "$root/build.log" >&2
	echo "debug kernel build failed (log: $root/build.log)" >&2
	exit 1
fi
rm -rf "${root:?}/lib"
kmake -s INSTALL_MOD_PATH="$root" modules_install >> "$root/build.log" 2>&1
mkdir -p "$root/boot"
cp "$obj/arch/x86/boot/bzImage" "$root/boot/vmlinuz-$rel"
cp "$obj/.config" "$root/boot/config-$rel"
log "built $rel in $(( $(date +%s) - start )) s"
touch "$root/.built"
echo "$SERIES $rel $root"
