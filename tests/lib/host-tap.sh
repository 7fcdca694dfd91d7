# SPDX-License-Identifier: GPL-2.0
#
# TAP helpers of the host test scripts that make check runs as host suites
# (tests/vm/check.sh host_suite), sourced by bash:
#   ok STATUS NAME [DIAG...]   case passes when STATUS is 0; DIAG lines are
#                              printed as comments when it fails
#   check NAME CMD...          a case from a command: passes if CMD does;
#                              its last 25 lines of output are the DIAG
#   skip NAME REASON           a skipped case (make check fails it unless
#                              tests/vm/manifest expects it, series "host")
#   tap_finish                 the plan and the summary line make check
#                              reads ("N passed, N failed[, N skipped]");
#                              status 0 only if none failed
# (tests/lib/ks-tap.sh is the guests' busybox counterpart.)

pass=0 fail=0 skipped=0 n=0

ok() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
		pass=$((pass + 1))
	else
		echo "not ok $n - $2"
		shift 2
		for d in "$@"; do printf '%s\n' "$d" | sed 's/^/# /'; done
		fail=$((fail + 1))
	fi
}

check() {
	chk_name=$1
	shift
	if chk_out=$("$@" 2>&1); then
		ok 0 "$chk_name"
	else
		ok 1 "$chk_name" "$(printf '%s\n' "$chk_out" | tail -n 25)"
	fi
}

skip() {
	n=$((n + 1)) skipped=$((skipped + 1))
	echo "ok $n - $1 # SKIP $2"
}

tap_finish() {
	echo "1..$n"
	if [ "$skipped" != 0 ]; then
		echo "$pass passed, $fail failed, $skipped skipped"
	else
		echo "$pass passed, $fail failed"
	fi
	[ "$fail" = 0 ]
}
