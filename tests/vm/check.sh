#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make check`: everything, on every test lane, then one summary line.
#
#  1. the lanes' kernels are fetched (tests/vm/lanes, fetch-kernels.sh), the
#     guests' programs and each kernel's module are built, the module once
#     per kernel (W=1, sparse) with that kernel's compiler;
#  2. the guests start, one per lane (at most GUEST_JOBS at once), plus the
#     rig's self-test (a guest WARN must fail the run) on one QEMU lane;
#  3. beside them, at a lower priority: lint (checkpatch, and the W=1 and
#     sparse logs of the module builds above), the host unit tests, DKMS;
#  4. every guest run is judged (test cases against tests/vm/manifest,
#     kernel log, taint).
#
# Progress goes to stderr as "==> [+SECONDS s] ...", per kernel and stage;
# stdout gets the TAP lines, and the last line is
# "N passed, N failed[, N skipped]".  LANES="name ..." or SERIES="series
# ..." pick lanes other than the default ones.
set -uo pipefail
. "$(dirname "$0")/lib.sh"

passed=0 failed=0 skipped=0
RUN="$BUILD/check"
rm -rf "$RUN"
mkdir -p "$RUN/host"
T0=$(date +%s)
# Guests get the CPU first; host work runs beside them at this niceness.
HOST_NICE=${HOST_NICE:-10}
GUEST_JOBS=${GUEST_JOBS:-$(($(nproc) * 2))}
# Several guests share few cores: give each more time than run-guest.sh's
# default for one alone (a hang's backstop: 6.1-rt's test boot took 659 s
# on a slow machine, 2026-11-26).
export GUEST_TIMEOUT=${GUEST_TIMEOUT:-1800}

progress() { step "[+$(($(date +%s) - T0)) s] $*"; }

# count FILE: add a "passed failed skipped" line to the totals.
count() {
	local p f s
	read -r p f s < "$1" || { p=0; f=1; s=0; }
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + ${s:-0}))
}

# host_case NAME CMD...: one host-side test case, TAP line and count.
host_case() {
	local name=$1
	shift
	if "$@" > "$RUN/host-case.log" 2>&1; then
		echo "ok - host $name"
		passed=$((passed + 1))
	else
		echo "not ok - host $name"
		sed 's/^/#   /' "$RUN/host-case.log" | tail -n 40
		failed=$((failed + 1))
	fi
}

# Host work, run beside the guests in two chains, each one job after the
# other: "kbuild" (lint, DKMS: kernel module builds) and "host" (the host
# test programs, which share build directories).  HOST_JOBS holds
# "kind name" per job, for collect_host; HOST_CHAIN_<chain> the commands.
HOST_JOBS=()
declare -A HOST_CHAIN=()

# host_start CHAIN KIND NAME CMD...: queue CMD; its output goes to
# RUN/host/NAME.log and its status to RUN/host/NAME.rc.
host_start() {
	local chain=$1 kind=$2 name=$3
	shift 3
	HOST_JOBS+=("$kind $name")
	HOST_CHAIN[$chain]+="host_job $(printf '%q ' "$name" "$@");"
}

host_job() {
	local name=$1 t rc
	shift
	progress "host: $name started"
	t=$(date +%s)
	nice -n "$HOST_NICE" "$@" > "$RUN/host/$name.log" 2>&1
	rc=$?
	echo "$rc" > "$RUN/host/$name.rc"
	progress "host: $name finished in $(($(date +%s) - t)) s (status $rc)"
}

# Start every chain in the background.
host_launch() {
	local c
	for c in "${!HOST_CHAIN[@]}"; do
		(eval "${HOST_CHAIN[$c]}") &
	done
}

# host_suite NAME CMD...: a host test program whose output is TAP ending
# in "N passed, N failed"; its cases join the totals.
host_suite() { host_start host suite "$@"; }

# host_kbuild_case NAME CMD... and host_kbuild_suite NAME CMD...: the same
# for work that builds kernel modules.
host_kbuild_case() { host_start kbuild case "$@"; }
host_kbuild_suite() { host_start kbuild suite "$@"; }

collect_suite() {
	local name=$1 up uf us log="$RUN/host/$1.log"
	grep -E '^(not )?ok ' "$log" |
		sed "s/^\(not \)\?ok [0-9]* \(- \)\?/&host $name: /"
	read -r up uf us < <(tail -n 1 "$log" |
		sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed\(, \([0-9]*\) skipped\)\?$/\1 \2 \4/p') || true
	if [ -z "${up:-}" ]; then
		echo "not ok - host $name did not report a summary"
		tail -n 20 "$log" | sed 's/^/#   /'
		failed=$((failed + 1))
	else
		passed=$((passed + up)) failed=$((failed + uf))
		skipped=$((skipped + ${us:-0}))
	fi
}

collect_host() {
	local j kind name
	for j in "${HOST_JOBS[@]}"; do
		read -r kind name <<< "$j"
		if [ "$kind" = suite ]; then
			collect_suite "$name"
		elif [ "$(cat "$RUN/host/$name.rc" 2>/dev/null)" = 0 ]; then
			echo "ok - host $name"
			passed=$((passed + 1))
		else
			echo "not ok - host $name"
			sed 's/^/#   /' "$RUN/host/$name.log" | tail -n 40
			failed=$((failed + 1))
		fi
	done
}

# --- lanes ----------------------------------------------------------------

# The selected lanes, "name series runner" per line.
select_lanes() {
	local want=${LANES:-${SERIES:-}}
	grep -v -e '^#' -e '^ *$' "$TOP/tests/vm/lanes" |
		while read -r name series runner default; do
			if [ -n "$want" ]; then
				case " $want " in *" $name "*) ;; *) continue ;; esac
			elif [ "$default" != yes ]; then
				continue
			fi
			echo "$name $series $runner"
		done
}

mapfile -t LANE_LIST < <(select_lanes)
[ "${#LANE_LIST[@]}" -gt 0 ] || { echo "no lanes selected (tests/vm/lanes)" >&2; exit 1; }

# The kernels of the lanes that boot a fetched kernel, one fetch for all.
kseries=$(for l in "${LANE_LIST[@]}"; do
	read -r _ s r <<< "$l"
	case "$r" in script:*) ;; *) echo "$s" ;; esac
done | awk '!seen[$0]++' | tr '\n' ' ')
declare -A REL_OF ROOT_OF
if [ -n "$kseries" ]; then
	progress "fetching kernels: $kseries"
	SERIES="$kseries" test_kernels > "$RUN/kernels" || exit 1
	while read -r s rel root; do
		REL_OF[$s]=$rel ROOT_OF[$s]=$root
	done < "$RUN/kernels"
else
	: > "$RUN/kernels"
fi

# The rig's self-test runs on the first run-guest.sh lane.
WARN_LANE=
for l in "${LANE_LIST[@]}"; do
	read -r name s r <<< "$l"
	if [ "$r" = tests/vm/run-guest.sh ]; then WARN_LANE=$name; break; fi
done

# --- builds ---------------------------------------------------------------

# Each lane's guest starts as soon as the guests' programs and its own
# kernel's module are built (BUILD/check/build/REL/done); kernels built with
# the host's compiler go one after the other, each chroot-built kernel in
# parallel with them (a cold chroot is mostly downloads and dpkg).

# build_kernel SERIES REL ROOT: the one module build for a kernel, the
# rig's livepatch stand-in (and its WARN module on the self-test lane's
# kernel).
build_kernel() {
	local s=$1 rel=$2 root=$3 t
	t=$(date +%s)
	mkdir -p "$RUN/build/$rel"
	if build_module_once "$rel" "$root" > "$RUN/build/$rel/log" 2>&1 &&
		build_livepatch_standin "$rel" "$root" >> "$RUN/build/$rel/log" 2>&1 &&
		{ [ "$WARN_LANE" != "$s" ] ||
			build_rig_warn "$rel" "$root" >> "$RUN/build/$rel/log" 2>&1; }; then
		touch "$RUN/build/$rel/ok"
		progress "[$s] kvm_statsfd.ko built for $rel ($(builder_of_root "$root"), $(($(date +%s) - t)) s)"
	else
		progress "[$s] module build FAILED for $rel (log: $RUN/build/$rel/log)"
	fi
	touch "$RUN/build/$rel/done"
}

progress "building the guests' programs and one module per kernel"
(
	build_userspace > "$RUN/userspace.log" 2>&1
	echo $? > "$RUN/userspace.rc.tmp"
	mv "$RUN/userspace.rc.tmp" "$RUN/userspace.rc"
	progress "guests' programs built"
) &
while read -r s rel root; do
	case "$(builder_of_root "$root")" in
	chroot*) build_kernel "$s" "$rel" "$root" & ;;
	esac
done < "$RUN/kernels"
(
	while read -r s rel root; do
		[ "$(builder_of_root "$root")" = host ] || continue
		build_kernel "$s" "$rel" "$root"
	done < "$RUN/kernels"
) &

# wait_for FILE...: until every FILE exists.
wait_for() {
	local f
	for f in "$@"; do
		while [ ! -e "$f" ]; do sleep 1; done
	done
}

# --- guests ---------------------------------------------------------------

# initrd REL ROOT: the initramfs of one kernel, made once for all its lanes.
initrd_of() {
	local rel=$1 root=$2 f="$RUN/build/$1/initrd.gz"
	(
		flock 8
		[ -f "$f" ] && exit 0
		# shellcheck disable=SC2046 # the payload is a list of options
		"$TOP/tests/vm/build-initramfs.sh" "$root" "$rel" "$f.tmp" \
			--module "$BUILD/$rel/module/kvm_statsfd.ko" \
			$(rig_modules_of "$rel") \
			$(guest_test_payload) && mv "$f.tmp" "$f"
	) 8> "$RUN/build/$rel/initrd.lock" >&2
	[ -f "$f" ] && echo "$f"
}

# guest NAME SERIES RUNNER MODE OUTDIR [CMDLINE...]: one boot.
guest() {
	local name=$1 s=$2 runner=$3 mode=$4 out=$5 rel root initrd t
	shift 5
	rel=${REL_OF[$s]} root=${ROOT_OF[$s]}
	mkdir -p "$out"
	wait_for "$RUN/userspace.rc" "$RUN/build/$rel/done"
	if [ "$(cat "$RUN/userspace.rc")" != 0 ]; then
		echo "building the tools and selftests failed" > "$out/failed"
		return
	fi
	if [ ! -f "$RUN/build/$rel/ok" ]; then
		echo "module build failed" > "$out/failed"
		return
	fi
	initrd=$(initrd_of "$rel" "$root") ||
		{ echo "initramfs build failed" > "$out/failed"; return; }
	progress "[$name] booting $rel ($mode, ${runner##*/})"
	t=$(date +%s)
	# shellcheck disable=SC2046 # the command line is a list of words
	"$TOP/$runner" "$root/boot/vmlinuz-$rel" "$initrd" "$out" "$mode" \
		$(guest_cmdline "$rel" "$root") "$@"
	echo "$(($(date +%s) - t))" > "$out/seconds"
	progress "[$name] $mode run finished in $(cat "$out/seconds") s"
}

# A lane: its suite, or its own script.
lane() {
	local name=$1 s=$2 runner=$3 out="$RUN/$1" t
	mkdir -p "$out"
	case "$runner" in
	script:*)
		# Lane scripts put the guests' programs in their initramfs.
		wait_for "$RUN/userspace.rc"
		progress "[$name] lane script ${runner#script:} started"
		t=$(date +%s)
		"$TOP/${runner#script:}" "$out" > "$out/lane.tap"
		echo "$(($(date +%s) - t))" > "$out/seconds"
		progress "[$name] lane finished in $(cat "$out/seconds") s"
		;;
	*) guest "$name" "$s" "$runner" test "$out/tests" ;;
	esac
}

# The guest runs, at most GUEST_JOBS at a time: the lanes in table order,
# then the rig's self-test.
guests() {
	local l name s r w
	run_one() {
		while [ "$(jobs -rp | wc -l)" -ge "$GUEST_JOBS" ]; do wait -n; done
		"$@" &
	}
	for l in "${LANE_LIST[@]}"; do
		read -r name s r <<< "$l"
		run_one lane "$name" "$s" "$r"
	done
	if [ -n "$WARN_LANE" ]; then
		read -r name s r <<< "$(printf '%s\n' "${LANE_LIST[@]}" |
			awk -v n="$WARN_LANE" '$1 == n')"
		run_one guest "$name" "$s" "$r" warn "$RUN/$name/warn"
		run_one guest "$name" "$s" "$r" warn-nopanic "$RUN/$name/warn-nopanic" \
			panic_on_warn=0
	fi
	wait
}

guests &
guests_pid=$!

# --- host work beside the guests -----------------------------------------

# Lint reads the logs of the module builds: it waits for them.
host_kbuild_case "lint (checkpatch --strict, W=1 and sparse on every kernel)" \
	sh -c 'while [ ! -e "$1" ]; do sleep 1; done; shift; exec "$@"' sh \
	"$RUN/build/all-done" env LINT_REUSE=1 "$TOP/tests/vm/lint.sh" "$RUN/kernels"
MAKE_QUIET="make -s --no-print-directory"
host_suite unit $MAKE_QUIET -C "$TOP/tests/unit" OUT="$BUILD/unit" run
host_suite exporter-unit $MAKE_QUIET -C "$TOP/tests/exporter" \
	O="$BUILD/tests-exporter" run
host_suite exporter-load $MAKE_QUIET -C "$TOP/tests/exporter" \
	O="$BUILD/tests-exporter" load
host_suite exporter-scale $MAKE_QUIET -C "$TOP/tests/exporter" \
	O="$BUILD/tests-exporter" scale
host_suite tools-host $MAKE_QUIET -C "$TOP/tests/tools" \
	O="$BUILD/tests-tools" host
# DKMS and make install against the kernels built with the host's compiler.
host_kbuild_suite dkms "$TOP/tests/dkms/test.sh" "$RUN/kernels"
host_launch
# All module builds done: lint may start.
(
	while read -r _ rel _; do wait_for "$RUN/build/$rel/done"; done < "$RUN/kernels"
	# (No build/ yet when the lanes chosen build nothing here: the debug
	# lane alone builds its own.)
	mkdir -p "$RUN/build"
	touch "$RUN/build/all-done"
	progress "module builds done"
) &

wait "$guests_pid"
wait
progress "all runs finished; judging"

# --- results --------------------------------------------------------------

# Every TAP line goes to report.tap too, for the digest of failures below.
{
collect_host
if [ "$(cat "$RUN/userspace.rc" 2>/dev/null)" != 0 ]; then
	echo "not ok - host: building the tools and selftests for the guests"
	tail -n 30 "$RUN/userspace.log" | sed 's/^/#   /'
	failed=$((failed + 1))
fi

# rig_selftest NAME RUN: the rig must call a WARN run a failure: with
# panic_on_warn the guest never reports, without it the kernel log gives it
# away.
rig_selftest() {
	local name=$1 w=$2 dir="$RUN/$1/$2"
	if [ -f "$dir/failed" ]; then
		echo "not ok - [$name] rig self-test: $w: $(cat "$dir/failed")"
		failed=$((failed + 1))
	elif "$TOP/tests/vm/judge.sh" "$dir" "[$name]" > "$dir/judge.tap"; then
		echo "not ok - [$name] rig self-test: $w run was judged a pass"
		failed=$((failed + 1))
	elif grep -q 'rig_warn' "$dir/judge.tap" "$dir/console.txt"; then
		echo "ok - [$name] rig self-test: $w run judged a failure"
		passed=$((passed + 1))
	else
		echo "not ok - [$name] rig self-test: $w run failed for another reason"
		sed 's/^/#   /' "$dir/judge.tap"
		failed=$((failed + 1))
	fi
}

for l in "${LANE_LIST[@]}"; do
	read -r name s r <<< "$l"
	out="$RUN/$name"
	case "$r" in
	script:*)
		cat "$out/lane.tap"
		count "$out/counts"
		;;
	*)
		if [ -f "$out/tests/failed" ]; then
			echo "not ok - [$name] $(cat "$out/tests/failed") for ${REL_OF[$s]}"
			sed 's/^/#   /' "$RUN/build/${REL_OF[$s]}/log" | tail -n 30
			failed=$((failed + 1))
			continue
		fi
		"$TOP/tests/vm/judge.sh" "$out/tests" "[$name]" "$s"
		count "$out/tests/counts"
		host_case "[$name] exporter: guest /metrics passes promtool" \
			"$TOP/tests/exporter/promtool-guest.sh" "$out/tests/results.txt"
		;;
	esac
	if [ "$name" = "$WARN_LANE" ]; then
		rig_selftest "$name" warn
		rig_selftest "$name" warn-nopanic
	fi
done
} > "$RUN/report.tap"
cat "$RUN/report.tap"

# The failures once more, each with the lines that explain it, where the
# end of a long log (all a CI page may show) still has them.
if grep -q '^not ok' "$RUN/report.tap"; then
	echo "# the failures again, with their diagnostics:"
	awk '/^not ok/ { print; n = 12; next }
		/^#/ && n > 0 { print; n--; next }
		{ n = 0 }' "$RUN/report.tap" | head -n 300
fi

{
	printf 'wall time %d s;' "$(($(date +%s) - T0))"
	for l in "${LANE_LIST[@]}"; do
		read -r name _ <<< "$l"
		printf ' %s %s s' "$name" "$(cat "$RUN/$name/tests/seconds" \
			"$RUN/$name/seconds" 2>/dev/null | head -n 1)"
	done
	echo
} | tee "$RUN/times" | sed 's/^/# /'

if [ "$skipped" = 0 ]; then
	echo "$passed passed, $failed failed"
else
	echo "$passed passed, $failed failed, $skipped skipped"
fi
[ "$failed" = 0 ]
