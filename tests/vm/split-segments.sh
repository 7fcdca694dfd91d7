#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Cut one guest run into the runs it held, so that each is judged alone.
#
# usage: split-segments.sh RUNDIR NAME=DIR...
#
# A guest booted with ks.then=warn (tests/vm/init.sh) runs its tests,
# reports them as a whole run would ("@@ done NONCE"), then marks each part
# of the rig's self-test that follows with "@@ segment NAME" on its report
# channel and "ks: segment NAME NONCE" in its kernel log.  RUNDIR keeps what
# came before the first marker (the whole files stay as *.whole); DIR gets
# the segment NAME: its part of the report and of the console, and the
# run's nonce, qemu.log and judge-from-init, as judge.sh reads a run
# directory.  A segment the guest never reached gets an empty report, which
# the judge fails like a guest that died.  (No pipes here: an awk that
# stops reading early made its writer's EPIPE fail a pipefail run.)
set -eu
# Never silent: a failure says where (the lanes report it).
trap 'echo "split-segments.sh: line $LINENO failed (status $?)" >&2' ERR

run=$1
shift
nonce=$(cat "$run/nonce")
for f in results.log console.log; do
	[ -f "$run/$f.whole" ] || cp "$run/$f" "$run/$f.whole" 2>/dev/null ||
		: > "$run/$f.whole"
done

# cut_lines FILE START END: the lines of FILE from the first one holding
# START (a fixed string, followed by a space or the line's end; empty:
# from the first line) up to, not including,
# the next line holding END whose text was not seen before (a panic may
# replay the kernel log, earlier markers included).
cut_lines() {
	awk -v s="$2" -v e="$3" '
		function holds(l, m,  i) {
			i = index(l, m)
			return i && (i + length(m) > length(l) ||
				     substr(l, i + length(m), 1) == " ")
		}
		{ sub(/\r$/, "") }
		!on && (s == "" || holds($0, s)) { on = NR }
		e != "" && index($0, e) {
			if (on && (s == "" || NR > on) && !seen[$0]) exit
			seen[$0] = 1
		}
		on { print }' "$1"
}

# The markers of the console (kernel log) and of the report.
klog_mark() { echo "ks: segment $1 $nonce"; }
report_mark() { echo "@@ segment $1"; }

cut_lines "$run/results.log.whole" "" "@@ segment " > "$run/results.log"
cut_lines "$run/console.log.whole" "" "ks: segment " > "$run/console.log"
for arg in "$@"; do
	name=${arg%%=*} dir=${arg#*=}
	mkdir -p "$dir"
	cp "$run/nonce" "$dir/"
	for f in qemu.log judge-from-init; do
		[ -f "$run/$f" ] && cp "$run/$f" "$dir/"
	done
	if grep -qF "$(report_mark "$name")" "$run/results.log.whole"; then
		cut_lines "$run/results.log.whole" "$(report_mark "$name")" \
			"@@ segment " > "$dir/results.log"
	else
		: > "$dir/results.log"
	fi
	if grep -qF "$(klog_mark "$name")" "$run/console.log.whole"; then
		cut_lines "$run/console.log.whole" "$(klog_mark "$name")" \
			"ks: segment " > "$dir/console.log"
	else
		: > "$dir/console.log"
	fi
done
