# SPDX-License-Identifier: GPL-2.0
#
# Shell functions shared by the test rig's entry points (check.sh, demo.sh,
# lint.sh).  Source it; it sets TOP, CACHE and BUILD.

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CACHE=${CACHE:-$TOP/.cache}
BUILD=${BUILD:-$TOP/build}
export CACHE

step() { printf '==> %s\n' "$*" >&2; }

# The kernel series of the default lanes of make check (tests/vm/lanes)
# that boot a fetched kernel: what lint, DKMS, stress and the other entry
# points test when SERIES is not set.
default_series() {
	awk '!/^#/ && NF >= 4 && $4 == "yes" && $3 !~ /^script:/ && !seen[$2]++ {
		printf "%s%s", sep, $2; sep = " " }' "$TOP/tests/vm/lanes"
}

# "<series> <release> <root>" lines of the test kernels, fetched if needed.
test_kernels() {
	SERIES=${SERIES:-$(default_series)} "$TOP/tests/vm/fetch-kernels.sh"
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

# How a module is built for a kernel: "host" (make against the headers
# unpacked in ROOT, with the host's compiler) or "chroot NAME" (inside the
# cached chroot of that Debian release, with its compiler and its apt's
# headers: tests/vm/chroot.sh).  fetch-kernels.sh writes ROOT/.builder;
# trees without one (the debug kernel) are host builds.
builder_of_root() {
	cat "$1/.builder" 2>/dev/null || echo host
}

# build_module REL ROOT OUT [make args...]: build the mirrored module in OUT
# for one kernel; the log goes to OUT/build.log and to stderr on failure.
# A build whose every input is the same as an earlier one's is not made
# again: see build_cache_key.
build_module() {
	local rel=$1 root=$2 out=$3 key
	shift 3
	key=$(build_cache_key "$rel" "$root" "$out" "$@") &&
		build_cache_get "$key" "$out" && return
	build_module_uncached "$rel" "$root" "$out" "$@" || return
	[ -z "$key" ] || build_cache_put "$key" "$out"
}

build_module_uncached() {
	local rel=$1 root=$2 out=$3 builder
	shift 3
	read -r -a builder <<< "$(builder_of_root "$root")"
	if [ "${builder[0]}" = chroot ]; then
		"$TOP/tests/vm/chroot.sh" build "${builder[1]}" "$rel" "$out" "$@"
		return
	fi
	if ! make -C "$(kdir_of "$rel" "$root")" M="$out" "$@" modules \
		>"$out/build.log" 2>&1; then
		cat "$out/build.log" >&2
		echo "module build in $out failed for $rel" >&2
		return 1
	fi
}

# The module build cache, $CACHE/module-builds/KEY: the .ko files and the
# build log of a successful build.  KEY hashes everything the build reads:
# the mirrored sources' names and contents, make's arguments, the kernel's
# headers (.config, Module.symvers, and vmlinux, whose BTF the module's BTF
# is relative to) and the compiler, sparse and pahole that build it (the
# host's or the chroot's installed packages, as dpkg lists them).  The
# same inputs make the same module (Debian builds reproducibly; only the
# source paths in WARN()'s file names and the log differ, and the log's
# are rewritten), so a warm make check builds only what changed, and a
# change to any input builds again.  KS_BUILD_CACHE=0 turns it off.
# Prints nothing, and the build runs uncached, when a key cannot be made.
build_cache_key() {
	local rel=$1 root=$2 out=$3 builder kdir chroot f
	shift 3
	[ "${KS_BUILD_CACHE:-1}" = 1 ] || return 0
	read -r -a builder <<< "$(builder_of_root "$root")"
	{
		echo "module-build 1 $rel ${builder[*]}"
		printf '%s\n' "$@"
		(cd "$out" && find -L . -type f \( -name Kbuild -o -name Makefile \
			-o -name '*.[ch]' \) ! -name '*.mod.c' -print0 |
			LC_ALL=C sort -z | xargs -0r sha256sum)
		if [ "${builder[0]}" = chroot ]; then
			chroot=$("$TOP/tests/vm/chroot.sh" ensure "${builder[1]}" \
				"$rel") || return 1
			kdir="$chroot/usr/src/linux-headers-$rel"
			sha256sum "$chroot/var/lib/dpkg/status"
			for f in "$chroot"/var/lib/dpkg/ks-headers-*; do
				echo "${f##*/}"
			done
		else
			kdir=$(kdir_of "$rel" "$root")
			sha256sum /var/lib/dpkg/status
		fi
		# Debian's 5.10 and 6.1 headers have no vmlinux: a missing
		# file must not fail the key (under pipefail it did, and their
		# builds never came from the cache).
		for f in .config Module.symvers vmlinux; do
			[ ! -e "$kdir/$f" ] || sha256sum < "$kdir/$f"
		done
	} | sha256sum | cut -c1-40
}

# cache_state: what the cache holds, a line each, for cache_report.  What
# appears during a run was downloaded or built by it (a cold run, or a
# partly cold one), or by another run sharing CACHE meanwhile.
cache_state() {
	local d
	{
		ls -1d "$CACHE"/debs/*.deb "$CACHE"/kernels/*/ \
			"$CACHE"/debug-kernel/*/.built \
			"$CACHE"/linux-source/.extracted \
			"$CACHE"/module-builds/*/ok \
			"$CACHE"/debian-host/debs-*/ok
		for d in "$CACHE"/chroots/*/ "$CACHE"/debian-host/disk-*/; do
			case "$d" in *.tmp/) ;; *) echo "$d" ;; esac
		done
	} 2>/dev/null | sort
}

# cache_report BEFORE AFTER: what a run added to the cache, in words
# ("built the debug kernel, downloaded 3 packages"); nothing for a warm
# run.  BEFORE and AFTER are cache_state's lists.
cache_report() {
	comm -13 "$1" "$2" | awk -v c="$CACHE/" '
	index($0, c) == 1 { $0 = substr($0, length(c) + 1) }
	/^debug-kernel\// { dk = 1 }
	/^chroots\// { sub("^chroots/", ""); sub("/$", ""); ch = ch " " $0 }
	/^debs\// { debs++ }
	/^kernels\// { k++ }
	/^linux-source\// { ls = 1 }
	/^module-builds\// { mb++ }
	/^debian-host\/debs-/ { dp = 1 }
	/^debian-host\/disk-/ { dd = 1 }
	END {
		if (dk) out = out ", built the debug kernel"
		if (mb) out = out ", built " mb " module" (mb > 1 ? "s" : "")
		if (dp) out = out ", built the Debian packages"
		if (dd) out = out ", made the Debian host'"'"'s disk"
		if (ch != "") out = out ", built the chroots" ch
		if (debs) out = out ", downloaded " debs " packages"
		if (k) out = out ", unpacked " k " kernels"
		if (ls) out = out ", unpacked linux-source"
		print substr(out, 3)
	}'
}

build_cache_get() {
	local key=$1 out=$2 dir="$CACHE/module-builds/$1"
	[ -n "$key" ] && [ -f "$dir/ok" ] || return 1
	(cd "$dir/files" && find . -name '*.ko' -print0 |
		cpio -0 -pdm --quiet "$out") || return 1
	{
		sed "s|@OUT@|$out|g" "$dir/files/build.log"
		echo "  (kvm-statsfd: the build of $(date -r "$dir/ok" '+%F %T') with the same inputs, $CACHE/module-builds/$key)"
	} > "$out/build.log" && touch "$dir"
}

build_cache_put() {
	local key=$1 out=$2 dir="$CACHE/module-builds/$1"
	rm -rf "$dir.tmp.$$"
	mkdir -p "$dir.tmp.$$/files"
	if (cd "$out" && find . -name '*.ko' -print0 |
		cpio -0 -pdm --quiet "$dir.tmp.$$/files") &&
		sed "s|$out|@OUT@|g" "$out/build.log" > "$dir.tmp.$$/files/build.log"; then
		touch "$dir.tmp.$$/ok"
		rm -rf "$dir"
		mv "$dir.tmp.$$" "$dir"
	fi
	rm -rf "$dir.tmp.$$"
	# Builds not used for a month go.
	find "$CACHE/module-builds" -mindepth 1 -maxdepth 1 -mtime +30 \
		-exec rm -rf {} + 2>/dev/null || true
}

# The one build of our module for a kernel, in BUILD/REL/module: with W=1
# and sparse (C=1), which change no generated code, so that lint reads its
# log and the guests load the very same kvm_statsfd.ko.
build_module_once() {
	local rel=$1 root=$2
	# From scratch: an incremental build would not repeat the warnings
	# of files it does not recompile.
	rm -rf "$BUILD/$rel/module"
	mirror_tree "$TOP" "$BUILD/$rel/module" Kbuild src include
	build_module "$rel" "$root" "$BUILD/$rel/module" W=1 C=1
}

# build_fault_module SERIES REL ROOT: where tests/vm/manifest runs
# fault_injection_test on a kernel without fault injection of its own (no
# CONFIG_FAILSLAB), a build of our module with its own fault points
# (KS_FAULT_POINTS=1, include/kvm_statsfd/fault.h), as the rig module
# BUILD/REL/rig/faults/kvm_statsfd-faults.ko: the guest's init names it in
# KVM_STATSFD_FAULTS_KO, and that program loads it instead of the plain one.
build_fault_module() {
	local series=$1 rel=$2 root=$3 out=$BUILD/$2/module-faults

	rm -rf "$BUILD/$rel/rig/faults"
	! grep -qx 'CONFIG_FAILSLAB=y' "$root/boot/config-$rel" || return 0
	! "$TOP/tests/vm/manifest.sh" absent "$series" |
		grep -qx fault_injection_test || return 0
	rm -rf "$out"
	mirror_tree "$TOP" "$out" Kbuild src include
	build_module "$rel" "$root" "$out" W=1 KS_FAULT_POINTS=1 || return
	mkdir -p "$BUILD/$rel/rig/faults"
	cp "$out/kvm_statsfd.ko" "$BUILD/$rel/rig/faults/kvm_statsfd-faults.ko"
}

# check_module_of REL: under make check (KS_CHECK_RUN, exported by
# check.sh), the directory of its one build of our module for REL
# (BUILD/REL/module, by build_kernel), once that build is done; status 1,
# and nothing printed, when make check is not building REL or the build
# failed: the caller builds its own.  The lanes that load it (Bochs,
# exit-cost) then load what the QEMU lane of that kernel loads, and the
# module is not built once per lane.  It is a W=1 build, and W=1 is not
# quite free of code changes (through fortify's memcpy checks it moved
# registers in two functions of layout.c on 6.12, 2026-11-27), but it
# changed none on the exit path the exit-cost gate counts.
check_module_of() {
	local rel=$1 run=${KS_CHECK_RUN:-}
	[ -n "$run" ] && awk -v r="$rel" '$2 == r { f = 1 } END { exit !f }' \
		"$run/kernels" 2>/dev/null || return 1
	while [ ! -e "$run/build/$rel/done" ]; do sleep 1; done
	[ -f "$run/build/$rel/ok" ] && [ -f "$BUILD/$rel/module/kvm_statsfd.ko" ] ||
		return 1
	echo "$BUILD/$rel/module"
}

# lane_module LABEL REL ROOT DIR: the kvm_statsfd.ko a script lane loads
# for REL: make check's build (check_module_of), or, run alone, a build of
# its own in DIR.  Prints the directory of the .ko; status 1 if the build
# fails.
lane_module() {
	local label=$1 rel=$2 root=$3 dir=$4 m
	if m=$(check_module_of "$rel"); then
		step "$label kvm_statsfd.ko: make check's, in $m"
		echo "$m"
		return
	fi
	step "$label building kvm_statsfd.ko for $rel"
	rm -rf "$dir"
	mirror_tree "$TOP" "$dir" Kbuild src include
	build_module "$rel" "$root" "$dir" >&2 && echo "$dir"
}

# exit_cost_builds LABEL REL ROOT DIR: the exit-cost gate's test-only
# probe driver for REL (DIR/probe-driver) and its userspace (DIR/bench,
# tests/bench).  Under make check both lanes that count the exit path
# (exit-cost: SVM under QEMU; 6.12-vmx: VMX under Bochs) take one build,
# made by whichever asks first, in BUILD/REL/exit-cost; run alone, a lane
# builds its own in DIR.  Prints the directory; status 1 if a build fails.
exit_cost_builds() {
	local label=$1 rel=$2 root=$3 dir=$4 run=${KS_CHECK_RUN:-} stamp
	if [ -n "$run" ] && [ -d "$run/build" ]; then
		dir="$BUILD/$rel/exit-cost"
		stamp="$run/build/$rel/exit-cost.ok"
	else
		stamp="$dir.ok"
		rm -f "$stamp"
	fi
	mkdir -p "${stamp%/*}"
	(
		flock 8
		[ -f "$stamp" ] && exit 0
		step "$label building the probe driver and the gate's programs for $rel"
		rm -rf "$dir"
		mirror_tree "$TOP/tests/bench/probe_driver" "$dir/probe-driver" . &&
			build_module "$rel" "$root" "$dir/probe-driver" &&
			make -s -C "$TOP/tests/bench" O="$dir/bench" \
				LIBKVMSTATS="$BUILD/tools/libkvmstats.a" &&
			touch "$stamp"
	) 8> "$stamp.lock" >&2
	[ -f "$stamp" ] && echo "$dir"
}

# build_rig_modules REL ROOT OUT DIR...: the rig's test modules of
# tests/rig/DIR (warn_module, filler_module, ...) for REL, in one kbuild
# run (each run of its own costs seconds of kbuild's setup), in OUT/DIR;
# with W=1, as our module (OUT/build.log has the warnings).
build_rig_modules() {
	local rel=$1 root=$2 out=$3
	shift 3
	rm -rf "$out"
	mirror_tree "$TOP/tests/rig" "$out" Kbuild "$@"
	build_module "$rel" "$root" "$out" W=1 RIG="$*"
}

# The rig's modules built for REL in BUILD/REL/rig (make check's build:
# the stand-in for a livepatch of KVM's ioctl handlers for
# module_load_test, the filler that takes the place of an unloaded vendor
# module for lifecycle_test, and on one lane the WARN module of the rig's
# self-test), as build-initramfs.sh options.
rig_modules_of() {
	local m

	for m in "$BUILD/$1/rig/"*/*.ko; do
		[ -f "$m" ] && echo --module "$m"
	done
	return 0
}

# The debug kernel's guests (tests/vm/debug-kernel/): their timeout, a
# hang's backstop (1405 s of guest time measured on a slow machine,
# 2026-11-26, more with the other lanes beside it), and their memory.
debug_guest_limits() {
	export GUEST_TIMEOUT=${DEBUG_GUEST_TIMEOUT:-3600}
	export GUEST_MEM=${DEBUG_GUEST_MEM:-2048}
}

# Our module and the rig's modules for one kernel, in BUILD/REL/.
build_modules_for() {
	build_module_once "$1" "$2" &&
		build_rig_modules "$1" "$2" "$BUILD/$1/rig" warn_module \
			livepatch_standin filler_module
}

# Kernel command line of the test guests, for the kernel in ROOT: no zeroing
# of every allocation (Debian enables INIT_ON_ALLOC_DEFAULT_ON, which hides
# a missing initialisation), no slab merging (a leak or overrun stays in its
# own cache), and KFENCE sampling where the kernel has it (Debian builds it
# with sample_interval=0, off).  The guests have no PMU under TCG, so the
# perf NMI (hard lockup) watchdog cannot run there; soft lockups and hung
# tasks are reported by the kernels' own detectors, which the judge reads.
# no_timer_check: on a busy host, TCG can be too slow for the boot's
# IO-APIC timer check, and 5.10 then panics ("IO-APIC + timer doesn't
# work"); virtual machines skip that check as a rule.
# rcu_cpu_stall_timeout=300: single-threaded TCG on a busy 2-core host can
# leave one guest CPU unscheduled for tens of seconds (the debug kernel's
# boot reported a stall in param_sysfs_builtin_init); a real stall of ours
# still shows, after five minutes, and the tests' own timeouts are shorter.
# watchdog_thresh=60 (soft lockups reported after 120 s, not 20): the same
# starvation once tripped the soft-lockup detector of a 7.2 guest at boot
# (a kworker "stuck for 26s" with the host's load at 9, 2026-11-27); a
# real lockup of ours still shows within a test's timeout.
guest_cmdline() {
	local rel=$1 root=$2 cfg
	cfg="$root/boot/config-$rel"
	printf 'init_on_alloc=0 slab_nomerge no_timer_check rcupdate.rcu_cpu_stall_timeout=300 watchdog_thresh=60'
	if grep -qx 'CONFIG_KFENCE=y' "$cfg" 2>/dev/null; then
		printf ' kfence.sample_interval=%s' "${KFENCE_INTERVAL:-10}"
	fi
	echo
}

harness_dir() {
	echo "$("$TOP/tests/vm/fetch-linux-source.sh")/tools/testing/selftests"
}

# ccache_first: Debian's ccache links (/usr/lib/ccache), where installed,
# first in PATH, which the caller has made local.  For the guests'
# programs only: their compiles hit from one clone to the next (make check
# sets CCACHE_BASEDIR), 42 CPU-s of a warm run down to 15 (2026-12-07).
# A module's kbuild, DKMS's and dpkg-buildpackage's compiles name paths
# outside the clone, which differ from run to run: through ccache they
# only missed, at a fifth more CPU (the DKMS test 62 CPU-s, then 74 and
# 95).
ccache_first() {
	[ ! -d /usr/lib/ccache ] || PATH="/usr/lib/ccache:$PATH"
}

# Build the userspace side once, statically (it runs in a busybox guest).
build_userspace() {
	local PATH=$PATH
	ccache_first
	step "building tools and selftests (static)"
	make -s -C "$TOP/tools" O="$BUILD/tools" STATIC=1 >&2
	make -s -C "$TOP/tests/selftests" O="$BUILD/selftests" \
		HARNESS="$(harness_dir)" \
		LIBKVMSTATS="$BUILD/tools/libkvmstats.a" >&2
	make -s -C "$TOP/tests/tools" O="$BUILD/tests-tools" >&2
	make -s -C "$TOP/tests/exporter" O="$BUILD/tests-exporter" guest >&2
	make -s -C "$TOP/tests/qemu" O="$BUILD/tests-qemu" >&2
	make -s -C "$TOP/tests/collectd" O="$BUILD/tests-collectd" >&2
	"$TOP/tests/upstream/build.sh" x86_64 "$BUILD/tests-upstream" >&2
}

# build_userspace_arm64 ROOT OUT: the arm64 guest's programs, in OUT,
# cross-built with CC_ARM64 (clang: tests/selftests/Makefile says why not
# gcc) and linked statically: tools/ (libkvmstats and kvm-statsfd, with
# the arm64 ncurses that tests/vm/fetch-kernels.sh unpacks in ROOT),
# selftests/ (those that apply to arm64), tests/ (the command's test and
# the smoke test), bin/ (demo-vm, kvm_smoke, ks-kvm-cap) and upstream/
# (upstream's kvm_binary_stats_test: tests/upstream/build.sh).
# Incremental: a warm run rebuilds nothing.
build_userspace_arm64() {
	local root=$1 out=$2 sys=$1/userland f bin PATH=$PATH
	local cc=${CC_ARM64:-clang --target=aarch64-linux-gnu}
	local cflags=(-std=gnu11 -O2 -g -Wall -Wextra -Werror -static)

	ccache_first
	step "building the arm64 guest's tools and selftests (static, $cc)"
	mkdir -p "$out/tests" "$out/bin" || return
	PKG_CONFIG_SYSROOT_DIR=$sys \
		PKG_CONFIG_LIBDIR=$sys/usr/lib/aarch64-linux-gnu/pkgconfig \
		make -s -C "$TOP/tools" O="$out/tools" STATIC=1 CC="$cc" \
		AR=aarch64-linux-gnu-ar CPPFLAGS="-idirafter $sys/usr/include" \
		"$out/tools/kvm-statsfd" >&2 &&
		make -s -C "$TOP/tests/selftests" ARCH=arm64 CC_ARM64="$cc" \
			O="$out/selftests" HARNESS="$(harness_dir)" \
			LIBKVMSTATS="$out/tools/libkvmstats.a" >&2 &&
		make -s -C "$TOP/tests/vm/demo" O="$out/bin" CC="$cc" >&2 &&
		CC_ARM64=$cc "$TOP/tests/upstream/build.sh" arm64 "$out/upstream" >&2 ||
		return
	for f in tests/vm/arm64/kvm_smoke.c tests/qemu/ks-kvm-cap.c; do
		bin=$out/bin/${f##*/}
		bin=${bin%.c}
		[ "$bin" -nt "$TOP/$f" ] && continue
		# shellcheck disable=SC2086 # CC_ARM64 is a command with arguments
		$cc "${cflags[@]}" -o "$bin" "$TOP/$f" >&2 || return
	done
	install -m 0755 "$TOP/tests/tools/kvm_statsfd_tool_test.sh" \
		"$out/tests/kvm_statsfd_tool_test" &&
		install -m 0755 "$TOP/tests/vm/arm64/arm64_smoke_test.sh" \
			"$out/tests/arm64_smoke_test"
}

# rig_warn_verdict DIR LABEL: the rig's self-test of one run that WARNed on
# purpose (init.sh's warn_selftest, cut out by split-segments.sh): the
# judge must fail it, and for the WARN.  Prints the verdict; status 0 only
# if the judge failed the run and the WARN module shows in its findings.
rig_warn_verdict() {
	local dir=$1 label=$2
	if [ -f "$dir/failed" ]; then
		cat "$dir/failed"
	elif [ ! -d "$dir" ]; then
		echo "run: no run directory"
	elif "$TOP/tests/vm/judge.sh" "$dir" "$label" > "$dir/judge.tap"; then
		echo "run was judged a pass"
	elif grep -q 'rig_warn' "$dir/judge.tap" "$dir/console.txt"; then
		echo "run judged a failure"
		return 0
	else
		echo "run failed for another reason"
		sed 's/^/#   /' "$dir/judge.tap"
	fi
	return 1
}

# guest_test_payload [SERIES]: the build-initramfs.sh options that put
# every test and tool in a guest, but the programs the manifest does not
# run on SERIES.  The exporter cannot link statically (GnuTLS): it comes
# with its shared libraries and loader (tools/exporter/build.mk).  Debian's
# Prometheus comes with its own (tests/exporter/collect-prometheus.sh), for
# the exporter's test, and so does Debian's collectd, with our plugin
# (tests/collectd/collect-collectd.sh).
guest_test_payload() {
	local f absent='' cases=''

	# What tests/vm/manifest says SERIES does not run ("none"), and the
	# trees only those programs need: the initramfs stays small (under
	# Bochs each MB of it costs seconds of boot).  Its programs that run
	# only some of their cases, and which.
	if [ -n "${1:-}" ]; then
		absent=$("$TOP/tests/vm/manifest.sh" absent "$1")
		cases=$("$TOP/tests/vm/manifest.sh" cases "$1")
	fi
	echo --tests "$BUILD/selftests" --tests "$BUILD/tests-tools/tests" \
		--bin "$BUILD/tests-tools/bin/demo-vm" \
		--bin "$BUILD/tools/kvm-statsfd"
	if ! grep -qx kvm_statsfd_exporter_test <<< "$absent"; then
		echo --tests "$BUILD/tests-exporter/tests" \
			--tree "$BUILD/tests-exporter/guest-root"
		# Prometheus (50 MB) only for a lane that runs the test's part
		# 4: all of it, or cases that name it.
		awk -F'\t' '$1 == "kvm_statsfd_exporter_test" &&
			$2 !~ /(^| )prometheus( |$)/ { f = 1 } END { exit !f }' \
			<<< "$cases" ||
			echo --tree "$BUILD/tests-exporter/prometheus-root"
		for f in "$BUILD/tools/exporter-guest/"*; do
			echo --bin "$f"
		done
	fi
	grep -qx qemu_query_stats_test <<< "$absent" ||
		echo --tests "$BUILD/tests-qemu/tests" --tree "$BUILD/tests-qemu/root"
	grep -qx collectd_plugin_test <<< "$absent" ||
		echo --tests "$BUILD/tests-collectd/tests" \
			--tree "$BUILD/tests-collectd/root"
	grep -qx upstream_stats_test <<< "$absent" ||
		echo --tests "$BUILD/tests-upstream/tests" \
			--bin "$BUILD/tests-upstream/bin/kvm_binary_stats_test"
	[ -z "$absent" ] || sed 's/^/--without /' <<< "$absent"
	if [ -n "${1:-}" ]; then
		f="$BUILD/cases/$1"
		mkdir -p "${f%/*}"
		: > "$f"
		[ -z "$cases" ] || { printf '%s\n' "$cases" > "$f"; echo --cases "$f"; }
	fi
}

# The "script:" lanes of tests/vm/lanes print TAP and write their counts:
# lane_start OUTDIR LABEL; lane_tap 1|0 TEXT for each case; lane_judged
# FILE to add a judged guest run's "PASSED FAILED SKIPPED"; lane_finish,
# which writes OUTDIR/counts and exits 0 only if nothing failed.
lane_start() {
	LANE_OUT=$1 LANE_LABEL=$2 LANE_T0=$(date +%s)
	lane_passed=0 lane_failed=0 lane_skipped=0
	mkdir -p "$LANE_OUT"
}

lane_tap() {
	if [ "$1" = 1 ]; then
		lane_passed=$((lane_passed + 1)); echo "ok - $LANE_LABEL $2"
	else
		lane_failed=$((lane_failed + 1)); echo "not ok - $LANE_LABEL $2"
	fi
}

lane_judged() {
	local p f s
	read -r p f s < "$1" || { p=0; f=1; s=0; }
	lane_passed=$((lane_passed + p)) lane_failed=$((lane_failed + f))
	lane_skipped=$((lane_skipped + ${s:-0}))
}

lane_finish() {
	echo "$lane_passed $lane_failed $lane_skipped" > "$LANE_OUT/counts"
	step "$LANE_LABEL lane finished in $(($(date +%s) - LANE_T0)) s"
	[ "$lane_failed" = 0 ]
	exit
}
