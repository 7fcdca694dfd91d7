# SPDX-License-Identifier: GPL-2.0
#
# Shell functions shared by the test rig's entry points (check.sh, demo.sh,
# lint.sh).  Source it; it sets TOP, CACHE and BUILD.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${CACHE:-$TOP/.cache}
BUILD=${BUILD:-$TOP/build}
export CACHE

step() { printf '==> %s\n' "$*" >&2; }

# "<series> <release> <root>" lines of the test kernels, fetched if needed.
test_kernels() {
	"$TOP/tests/vm/fetch-kernels.sh"
}

kdir_of() { echo "$2/usr/src/linux-headers-$1"; }

# Mirror a module's Kbuild and C files into a per-kernel build directory as
# symlinks, so builds for several kernels do not overwrite each other's
# objects.  mirror_tree FROM TO PATH...
mirror_tree() {
	local from=$1 to=$2 f
	shift 2
	mkdir -p "$to"
	(cd "$from" && find "$@" -type f \( -name Kbuild -o -name '*.[ch]' \)) |
		while read -r f; do
			mkdir -p "$to/$(dirname "$f")"
			ln -sfn "$from/$f" "$to/$f"
		done
}

# build_module REL ROOT OUT [make args...]: build the mirrored module in OUT
# for one kernel; the log goes to OUT/build.log and to stderr on failure.
build_module() {
	local rel=$1 root=$2 out=$3
	shift 3
	if ! make -C "$(kdir_of "$rel" "$root")" M="$out" "$@" modules \
		>"$out/build.log" 2>&1; then
		cat "$out/build.log" >&2
		echo "module build in $out failed for $rel" >&2
		return 1
	fi
}

# Our module and the rig's WARN module for one kernel, in BUILD/REL/.
build_modules_for() {
	local rel=$1 root=$2
	mirror_tree "$TOP" "$BUILD/$rel/module" Kbuild src include
	build_module "$rel" "$root" "$BUILD/$rel/module"
	mirror_tree "$TOP/tests/rig/warn_module" "$BUILD/$rel/rig_warn" .
	build_module "$rel" "$root" "$BUILD/$rel/rig_warn"
}

harness_dir() {
	echo "$("$TOP/tests/vm/fetch-linux-source.sh")/tools/testing/selftests"
}

# Build the userspace side once, statically (it runs in a busybox guest).
build_userspace() {
	step "building tools and selftests (static)"
	make -s -C "$TOP/tools" O="$BUILD/tools" STATIC=1 >&2
	make -s -C "$TOP/tests/selftests" O="$BUILD/selftests" \
		HARNESS="$(harness_dir)" \
		LIBKVMSTATS="$BUILD/tools/libkvmstats.a" >&2
	make -s -C "$TOP/tests/tools" O="$BUILD/tests-tools" >&2
	make -s -C "$TOP/tests/exporter" O="$BUILD/tests-exporter" guest >&2
	make -s -C "$TOP/tests/qemu" O="$BUILD/tests-qemu" >&2
}

# The build-initramfs.sh options that put every test and tool in a guest.
# The exporter cannot link statically (GnuTLS): it comes with its shared
# libraries and loader (tools/exporter/build.mk).
guest_test_payload() {
	local f

	echo --tests "$BUILD/selftests" --tests "$BUILD/tests-tools/tests" \
		--tests "$BUILD/tests-exporter/tests" \
		--tests "$BUILD/tests-qemu/tests" --tree "$BUILD/tests-qemu/root" \
		--bin "$BUILD/tests-tools/bin/demo-vm" \
		--bin "$BUILD/tools/kvm-statsfd"
	for f in "$BUILD/tools/exporter-guest/"*; do
		echo --bin "$f"
	done
}
