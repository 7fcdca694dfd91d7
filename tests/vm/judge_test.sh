#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The rig's own test, on the host: judge.sh (with manifest.sh) must fail a
# guest run for each thing it exists to catch, and pass a clean one.  Each
# case writes a guest's report as init.sh would (tests/vm/init.sh), with
# one defect, and checks that the judge exits non-zero and says why on the
# check that should have caught it.  The WARN and debug-detector runs
# prove the same with real guests (make check's rig self-tests); these
# cover what a real guest cannot be made to do on demand: hang, stall,
# answer with another nonce, drop a program, skip a case unannounced.
#
# usage: tests/vm/judge_test.sh
# Prints TAP, then "N passed, N failed".
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/ks-judge.XXXXXX")
trap 'rm -rf "$T"' EXIT
NONCE=5eed5eed5eed5eed
n=0 passed=0 failed=0

ok() {	# ok STATUS NAME [DIAG-FILE]
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		passed=$((passed + 1))
		echo "ok $n - $2"
	else
		failed=$((failed + 1))
		echo "not ok $n - $2"
		[ -z "${3:-}" ] || sed 's/^/#   /' "$3" | tail -n 20
	fi
}

# The manifest every case is judged against, unless it brings its own.
cat > "$T/manifest" <<'EOF'
program | * | alpha_test | 2
program | * | beta_test | 2
skip | test | beta_test.b.announced | a reason the manifest gives
EOF

# report DIR: a clean run's report, on stdout, for a case to edit.
report() {
	cat <<EOF
@@ kernel 6.12.0-test mode=test
@@ taint-init 0
@@ begin alpha_test
TAP version 13
1..2
#  RUN           a.one ...
#            OK  a.one
ok 1 a.one
#  RUN           a.two ...
#            OK  a.two
ok 2 a.two
# Totals: pass:2 fail:0 xfail:0 xpass:0 skip:0 error:0
@@ end alpha_test rc=0 cs=120 busy=80
@@ begin beta_test
TAP version 13
1..2
ok 1 b.plain
ok 2 b.announced # SKIP as the manifest says
@@ end beta_test rc=0 cs=40 busy=10
@@ dmesg-begin
[    1.000000] ks: init $NONCE
[    2.000000] kvm_statsfd: version 0.1.0 loaded
[    3.000000] kvm_statsfd: unloaded
@@ dmesg-end
@@ taint 12288
@@ done $NONCE
EOF
}

# judge NAME [SED-SCRIPT]: judge the clean report edited by SED-SCRIPT,
# with $CONSOLE as the guest's console; the judge's output in
# $T/NAME/out, its status in $rc.
judge() {
	local d="$T/$1"
	mkdir -p "$d"
	echo "$NONCE" > "$d/nonce"
	printf '%s\n' "${CONSOLE:-}" > "$d/console.log"
	report | sed -e "${2:-}" > "$d/results.log"
	KS_MANIFEST=$T/manifest "$here/judge.sh" "$d" "[t]" test > "$d/out" 2>&1
	rc=$?
}

# must_fail NAME WHAT PATTERN [SED-SCRIPT]: the run is a failure, on a
# "not ok" line matching PATTERN.
must_fail() {
	local name=$1 what=$2 pat=$3
	judge "$name" "${4:-}"
	[ "$rc" != 0 ] && grep -E "^not ok .*$pat" "$T/$name/out" > /dev/null
	ok $? "$what: judged a failure ($pat)" "$T/$name/out"
}

# The control: the clean report passes, with the announced skip counted
# as a skip and each program's seconds recorded.
judge clean
[ "$rc" = 0 ] && grep -q '^ok .*beta_test.b.announced # SKIP' "$T/clean/out" &&
	[ "$(cat "$T/clean/counts")" = "7 0 1" ]
ok $? "a clean run passes (7 passed, the announced skip a skip)" "$T/clean/out"
grep -qx 'alpha_test 2 1.2 0.8' "$T/clean/programs"
ok $? "each program's wall and busy seconds are recorded" "$T/clean/programs"

must_fail hang "a guest that hangs in a program (no end, no done)" \
	"(did not finish|guest finished and reported)" \
	'/^ok 2 a.two/,$d'
must_fail panic "a guest that dies between programs" \
	"guest finished and reported" '/^@@ dmesg-begin/,$d'
must_fail nonce "a report ending with another run's nonce" \
	"guest finished and reported" "s/^@@ done .*/@@ done 0123456789abcdef/"
CONSOLE="@@ done $NONCE" must_fail forged \
	"a nonce printed on the console, not the report channel" \
	"guest finished and reported" '/^@@ done /d'
must_fail rcu "an RCU stall in the kernel log" "kernel log is clean" \
	'/ks: init/a [   30.000000] rcu: INFO: rcu_preempt self-detected stall on CPU'
must_fail warn "a WARN in the kernel log" "kernel log is clean" \
	'/ks: init/a [    9.000000] WARNING: CPU: 1 PID: 99 at src/counters.c:1 x+0x1/0x2'
must_fail hung "a hung task in the kernel log" "kernel log is clean" \
	'/ks: init/a [  130.000000] INFO: task kworker:1 blocked for more than 120 seconds. hung_task'
must_fail taint "an unexpected taint (W)" "no unexpected taint" \
	"s/^@@ taint 12288/@@ taint $((12288 | 512))/"
must_fail missing "a program the manifest expects that did not run" \
	"every program in the manifest ran" '/^@@ begin beta_test/,/^@@ end beta_test/d'
must_fail shrunk "a program with fewer cases than the manifest says" \
	"every program in the manifest ran" '/^ok 2 a.two/d;s/^1\.\.2$/1..1/'
must_fail skip "a skip the manifest does not announce" \
	"alpha_test.a.two" 's/^ok 2 a.two$/ok 2 a.two # SKIP no reason given/'
must_fail plan "a program that reports fewer cases than its plan" \
	"planned 2 cases, reported 1" '/^ok 2 a.two/d'
must_fail rc "a program that exits non-zero with every case ok" \
	"exited with status 1" 's/^@@ end alpha_test rc=0/@@ end alpha_test rc=1/'
must_fail nocase "a program that reports no case" "no test case reported" \
	'/^@@ begin beta_test/,/^@@ end beta_test/{/^ok /d;/^1\.\./d}'
# A shell test whose command the guest has not (busybox has no applet
# for it): its check then compares nothing and passes, so the run fails.
must_fail notfound "a shell test that ran a command the guest has not" \
	"beta_test ran a command the guest has not" \
	'/^ok 1 b.plain/i /tests/beta_test: line 12: comm: not found'
must_fail notfound_bash "the same, in bash's words" \
	"beta_test ran a command the guest has not" \
	'/^ok 1 b.plain/i /tests/beta_test: line 12: comm: command not found'
must_fail expfail "a case reported ok after a failed expectation" \
	"after a failed expectation" \
	'/^#            OK  a.one/i # alpha_test.c:10:one:Expected 1 (1) == x (0)'

# A missing program must be caught by the manifest even when its whole
# lane skips it, unless the manifest says "none" for that series.
cat > "$T/manifest" <<'EOF'
program | * | alpha_test | 2
program | test | beta_test | none
EOF
judge none '/^@@ begin beta_test/,/^@@ end beta_test/d'
[ "$rc" = 0 ]
ok $? "a program the manifest leaves out of the series (none) is not required" "$T/none/out"
[ "$(KS_MANIFEST=$T/manifest "$here/manifest.sh" absent test)" = beta_test ]
ok $? "manifest.sh absent names it, so the lane's initramfs leaves it out"

# A lane that runs only some of a program's cases ("cases"): exactly
# those; a program that ran them all (its filter lost) fails the lane.
cat > "$T/manifest" <<'EOF'
program | * | alpha_test | 2
program | * | beta_test | 2
program | test | alpha_test | 1
cases | test | alpha_test | a.one
skip | test | beta_test.b.announced | a reason the manifest gives
EOF
judge only '/^@@ begin alpha_test/,/^@@ end alpha_test/{/a\.two/d;s/^1\.\.2$/1..1/}'
[ "$rc" = 0 ]
ok $? "a lane that runs the one case the manifest names passes" "$T/only/out"
must_fail unfiltered "a program that ran more than the cases the manifest names" \
	"every program in the manifest ran"
[ "$(KS_MANIFEST=$T/manifest "$here/manifest.sh" cases test)" = "$(printf 'alpha_test\ta.one')" ]
ok $? "manifest.sh cases names them, for the lane's initramfs"

# One boot, three runs (init.sh, ks.then=warn): the tests, then the rig's
# WARN without and with panic_on_warn.  split-segments.sh must give the
# tests their own run, clean, and each WARN segment a run the judge fails;
# a WARN during the tests must stay in the tests' run.
# SED-SCRIPT2 and SED-SCRIPT3 edit the whole report and console.
segmented() {	# segmented NAME [SED-SCRIPT for the tests' part [SED-SCRIPT2 SED-SCRIPT3]]
	local d="$T/$1"
	mkdir -p "$d/run"
	echo "$NONCE" > "$d/run/nonce"
	{
		report | sed -e "${2:-}"
		cat <<EOF
@@ segment warn-nopanic
@@ rig_warn loaded rc=0
@@ dmesg-begin
[   50.000000] WARNING: CPU: 0 PID: 9 at rig_warn_init+0x1/0x2 [rig_warn]
@@ dmesg-end
@@ taint 12800
@@ done $NONCE
@@ segment warn
EOF
	} | sed -e "${3:-}" > "$d/run/results.log"
	printf '%s\n' "[ 1.0] ks: init $NONCE" "[ 2.0] kvm_statsfd: loaded" \
		"[49.0] ks: segment warn-nopanic $NONCE" \
		"[50.0] WARNING: CPU: 0 PID: 9 at rig_warn_init+0x1/0x2 [rig_warn]" \
		"[51.0] ks: segment warn $NONCE" \
		"[52.0] WARNING: CPU: 0 PID: 9 at rig_warn_init+0x1/0x2 [rig_warn]" \
		"[52.1] Kernel panic - not syncing: kernel: panic_on_warn set ..." |
		sed -e "${4:-}" > "$d/run/console.log"
	"$here/split-segments.sh" "$d/run" warn-nopanic="$d/np" warn="$d/w"
	KS_MANIFEST=$T/manifest "$here/judge.sh" "$d/run" "[t]" test > "$d/out" 2>&1
	rc=$?
}
cat > "$T/manifest" <<'EOF'
program | * | alpha_test | 2
program | * | beta_test | 2
skip | test | beta_test.b.announced | a reason the manifest gives
EOF
segmented seg
[ "$rc" = 0 ]
ok $? "one boot, three runs: the tests' run passes without the WARNs that follow it" "$T/seg/out"
"$here/judge.sh" "$T/seg/np" "[t]" > "$T/seg/np.out" 2>&1
[ $? != 0 ] && grep -q '^not ok .*kernel log is clean' "$T/seg/np.out" &&
	grep -q 'rig_warn' "$T/seg/np.out"
ok $? "one boot, three runs: the WARN without panic_on_warn is judged a failure" "$T/seg/np.out"
"$here/judge.sh" "$T/seg/w" "[t]" > "$T/seg/w.out" 2>&1
[ $? != 0 ] && grep -q '^not ok .*guest finished and reported' "$T/seg/w.out"
ok $? "one boot, three runs: the WARN with panic_on_warn is judged a failure" "$T/seg/w.out"
segmented segwarn '/^@@ dmesg-begin/a [    9.000000] WARNING: CPU: 1 PID: 99 at src/counters.c:1 x+0x1/0x2'
[ "$rc" != 0 ] && grep -q '^not ok .*kernel log is clean' "$T/segwarn/out"
ok $? "one boot, three runs: a WARN during the tests fails the tests' run" "$T/segwarn/out"

# A boot that never reached its last segment (the guest died after the
# first WARN): the tests' run still stands, and the missing segment is a
# run the judge fails for having no report (its kernel log, empty, is
# clean), so that the lanes' WARN self-test cannot pass on it.
segmented segdied '' '/^@@ segment warn$/,$d' '/ks: segment warn /,$d'
"$here/judge.sh" "$T/segdied/w" "[t]" > "$T/segdied/w.out" 2>&1
r=$?
[ "$rc" = 0 ] && [ "$r" != 0 ] && grep -q '^not ok .*guest finished and reported' "$T/segdied/w.out" &&
	grep -q '^ok .*kernel log is clean' "$T/segdied/w.out"
ok $? "one boot, three runs: a segment the guest never reached is judged a failure" \
	"$(cat "$T/segdied/out" "$T/segdied/w.out")"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
