#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Judge one guest run.  usage: judge.sh OUTDIR LABEL [SERIES]
#
# Prints one TAP line per test case found in the guest's report, prefixed
# with LABEL, then one line per rig-level check (the guest finished, the
# kernel log is clean, no unexpected taint).  Writes "PASSED FAILED SKIPPED"
# to OUTDIR/counts.  Exits 0 only if nothing failed.
#
# Success is positive: a run counts only if the report channel ends with the
# nonce the host chose, which a panicking or hanging guest never writes.
#
# A skip is never a pass: it is counted as skipped, and with SERIES (the
# lane's kernel series) it must be listed for that series in
# tests/vm/manifest, with its reason, or it is a failure; so is a program
# that reports no case, a case that reports ok or SKIP after a failed
# expectation (the 6.1 harness turns a SKIP after a failed EXPECT into a
# skip), a program that reports fewer cases than its plan, and (with
# SERIES) a missing program or one with fewer cases than the manifest says.
set -uo pipefail

outdir=$1 label=$2 series=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
nonce=$(cat "$outdir/nonce")
results="$outdir/results.log"
console="$outdir/console.log"
tr -d '\r' < "$results" > "$outdir/results.txt"
tr -d '\r' < "$console" > "$outdir/console.txt" 2>/dev/null || : > "$outdir/console.txt"

# Kernel log lines that mean the kernel is unhappy, whatever the tests said.
SPLATS='WARNING:|BUG:|Oops|general protection fault|Kernel panic|'\
'possible circular locking|possible recursive locking|'\
'lockdep is turned off|DEBUG_LOCKS_WARN_ON|MAX_LOCKDEP_[A-Z_]* too low|'\
'rcu_sched self-detected stall|rcu: INFO|RCU stall|refcount_t:|'\
'list_add corruption|list_del corruption|UBSAN:|KASAN:|kernel BUG|'\
'Call Trace:|unreferenced object|hung_task|soft lockup|hard LOCKUP|'\
'suspected memory leak|inconsistent lock state|suspicious RCU usage'

# Which detector a report comes from, named on the judge's output (the rig's
# detector self-test checks that each one was recognised).
DETECTORS=(
	'KASAN|BUG: KASAN:'
	'KFENCE|BUG: KFENCE:'
	'lockdep|circular locking dependency|recursive locking detected|inconsistent lock state|suspicious RCU usage|irq lock inversion|bad unlock balance|held lock freed|lock held when returning'
	'kmemleak|unreferenced object|suspected memory leak'
	'sleep-in-atomic|BUG: sleeping function called from invalid context|BUG: scheduling while atomic'
	'UBSAN|UBSAN:'
	'BUG|kernel BUG at|BUG: unable to handle|Oops'
	'WARN|WARNING: CPU'
)

# Taint bits we expect from loading our own module: O (out-of-tree, 4096)
# and E (unsigned, 8192).
ALLOWED_TAINT=$((4096 | 8192))

# Expected skips of this series: "CASE<TAB>REASON" lines.
if [ -n "$series" ]; then
	"$here/manifest.sh" skips "$series" > "$outdir/expected-skips"
else
	: > "$outdir/expected-skips"
fi

: > "$outdir/programs"
awk -v label="$label" -v manifest="$series" -v skips="$outdir/expected-skips" \
	-v programs="$outdir/programs" '
BEGIN {
	FS = "\t"
	while ((getline l < skips) > 0) { split(l, f, "\t"); expect_skip[f[1]] = f[2] }
	FS = " "
}
function emit(ok, name, extra) {
	n++
	if (ok == "skip" && manifest != "" && !(name in expect_skip)) {
		failed++
		printf "not ok %d - %s %s (skipped, and no skip is expected here on %s: tests/vm/manifest):%s\n", n, label, name, manifest, extra
	} else if (ok == "skip") {
		skipped++
		if (name in expect_skip)
			extra = extra " (expected on " manifest ": " expect_skip[name] ")"
		printf "ok %d - %s %s # SKIP%s\n", n, label, name, extra
	}
	else if (ok) { passed++; printf "ok %d - %s %s\n", n, label, name }
	else { failed++; printf "not ok %d - %s %s%s\n", n, label, name, extra }
}
/^@@ begin / { prog = $3; inprog = 1; prog_fail = 0; prog_cases = 0; plan = -1; expfail = 0; next }
/^@@ end / {
	rc = $4; sub(/^rc=/, "", rc)
	# A program with no case proves nothing: exit 4 (KSFT_SKIP) is a
	# skip of the whole program, anything else a failure.
	if (prog_cases == 0 && rc == 4)
		emit("skip", prog, " (the whole program skipped)")
	else if (rc != 0 && prog_fail == 0)
		emit(0, prog, " (exited with status " rc " and no failed case)")
	else if (prog_cases == 0)
		emit(0, prog, " (no test case reported)")
	else if (plan >= 0 && plan != prog_cases)
		emit(0, prog, " (planned " plan " cases, reported " prog_cases ")")
	# PROGRAM CASES [SECONDS BUSY-CPU-SECONDS]
	cs = $5; sub(/^cs=/, "", cs); busy = $6; sub(/^busy=/, "", busy)
	if (cs == "") print prog, prog_cases > programs
	else printf "%s %d %.1f %.1f\n", prog, prog_cases, cs / 100, busy / 100 > programs
	inprog = 0; next
}
/^@@ error / { emit(0, "guest", ": " substr($0, 10)); next }
/^@@ dmesg-begin/ { indmesg = 1; next }
/^@@ dmesg-end/ { indmesg = 0; next }
indmesg { next }
# A shell test that ran a command the guest has not (busybox, bash): what
# the command should have printed is empty, and a check comparing it may
# pass on nothing.
inprog && /: line [0-9]+: [^ ]+: (command )?not found$/ {
	emit(0, prog, " ran a command the guest has not: " $0)
	prog_fail++
	next
}
# The words of a failed case go under its "not ok" (at most 8 lines each
# way): what was printed since the case before (for the kselftest harness,
# since its RUN line), and what a shell test printed after the result.
# Totals belong to no case.
inprog && /^# / && !/^#  RUN / && !/^# +(OK|FAIL|SKIP) / &&
    !/^# (PASSED|FAILED|Totals|Starting)[: ]/ {
	if (after > 0) {
		print "#   " substr($0, 3)
		after--
	} else if (nd < 8) {
		diag[nd++] = $0
	}
}
# The kselftest harness of 6.1 leaves the name out of a SKIP line: take it
# from the RUN line of the case.
inprog && /^#  RUN / { lastrun = $3; expfail = 0; nd = 0; after = 0; next }
inprog && /^1\.\.[0-9]+/ && plan < 0 { plan = substr($1, 4) + 0; next }
# The harness logs a failed EXPECT or ASSERT as "# FILE:LINE:TEST:Expected".
inprog && /^# [^ :]+:[0-9]+:[^:]*:Expected / { expfail = 1; next }
inprog && /^(not )?ok [0-9]+ / {
	line = $0
	isok = (line ~ /^ok /)
	sub(/^(not )?ok [0-9]+ (- )?/, "", line)
	name = line; reason = ""
	if (match(line, /(^| )# (SKIP|skip)/)) {
		name = substr(line, 1, RSTART - 1)
		reason = substr(line, RSTART + RLENGTH)
		if (name == "")
			name = lastrun
		if (expfail)
			emit(0, prog "." name, " (skipped after a failed expectation)")
		else
			emit("skip", prog "." name, reason)
	} else if (isok && expfail) {
		emit(0, prog "." name, " (reported ok after a failed expectation)")
		isok = 0
	} else {
		emit(isok, prog "." name, "")
	}
	expfail = 0
	after = 0
	if (!isok) {
		prog_fail++
		for (i = 0; i < nd; i++)
			print "#   " substr(diag[i], 3)
		after = 8
	}
	nd = 0
	prog_cases++
	next
}
END {
	if (inprog) emit(0, prog, " (did not finish: guest died while it ran)")
	printf "%d %d %d\n", passed, failed, skipped > "/dev/stderr"
}
' "$outdir/results.txt" > "$outdir/cases.tap" 2> "$outdir/counts"

read -r passed failed skipped < "$outdir/counts"
n=$((passed + failed + skipped))
cat "$outdir/cases.tap"
check() {
	local ok=$1 name=$2
	n=$((n + 1))
	if [ "$ok" = 1 ]; then
		passed=$((passed + 1)); echo "ok $n - $label $name"
	else
		failed=$((failed + 1)); echo "not ok $n - $label $name"
	fi
}

last=$(grep '^@@ ' "$outdir/results.txt" | tail -n 1)
if [ "$last" = "@@ done $nonce" ]; then
	check 1 "rig: guest finished and reported"
else
	check 0 "rig: guest finished and reported"
	grep -h '^@@ host' "$outdir/qemu.log" 2>/dev/null | sed 's/^/# /'
	echo "# last lines of the guest console:"
	tail -n 25 "$outdir/console.txt" | sed 's/^/#   /'
fi

# The manifest: every program the lane must run, with its cases.
if [ -n "$series" ]; then
	if "$here/manifest.sh" check "$series" "$outdir/programs" > "$outdir/manifest.log"; then
		check 1 "rig: every program in the manifest ran, none shrank"
	else
		check 0 "rig: every program in the manifest ran, none shrank"
	fi
	sed 's/^/# manifest: /' "$outdir/manifest.log"
fi

# A lane whose stock kernel WARNs at boot, before init (Bochs: its runner
# writes OUTDIR/judge-from-init), is judged from init's kernel-log line
# "ks: init NONCE" on; without that line, the whole log is judged.
from_init() {
	if [ -f "$outdir/judge-from-init" ]; then
		awk -v m="ks: init $nonce" '{ l[NR] = $0 }
			!s && index($0, m) { s = NR }
			END { for (i = s ? s : 1; i <= NR; i++) print l[i] }'
	else
		cat
	fi
}
klog=$(sed -n '/^@@ dmesg-begin/,/^@@ dmesg-end/p' "$outdir/results.txt" | from_init
	from_init < "$outdir/console.txt")
if splats=$(printf '%s\n' "$klog" | grep -E "$SPLATS"); then
	check 0 "rig: kernel log is clean"
	for d in "${DETECTORS[@]}"; do
		printf '%s\n' "$splats" | grep -qE "${d#*|}" &&
			echo "# detector fired: ${d%%|*}"
	done
	printf '%s\n' "$splats" | head -n 20 | sed 's/^/#   /'
else
	check 1 "rig: kernel log is clean"
fi

taint=$(sed -n 's/^@@ taint //p' "$outdir/results.txt" | tail -n 1)
# There, the taint init found (W from those WARNs) is not the tests' doing:
# only bits that appear after it count (a later WARN shows in the log).
if [ -f "$outdir/judge-from-init" ]; then
	tinit=$(sed -n 's/^@@ taint-init //p' "$outdir/results.txt" | head -n 1)
	ALLOWED_TAINT=$((ALLOWED_TAINT | ${tinit:-0}))
fi
if [ -n "$taint" ] && [ $((taint & ~ALLOWED_TAINT)) = 0 ]; then
	check 1 "rig: no unexpected taint"
else
	check 0 "rig: no unexpected taint (tainted=${taint:-unknown})"
fi

echo "$passed $failed $skipped" > "$outdir/counts"
[ "$failed" = 0 ]
