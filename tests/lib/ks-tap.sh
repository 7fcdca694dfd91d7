# SPDX-License-Identifier: GPL-2.0
#
# TAP helpers for the project's guest-side shell tests (busybox sh):
#   ok STATUS NAME [DIAG...]   case passes when STATUS is 0; DIAG lines are
#                              printed as comments when it fails
#   skip NAME REASON           a skipped case
#   tap_end                    prints the plan; exits 0 only if none failed
# The guest has it at /bin/ks-tap.sh; source it with ". ks-tap.sh".

n=0
failed=0

ok() {
	st=$1 name=$2
	shift 2
	n=$((n + 1))
	if [ "$st" = 0 ]; then
		echo "ok $n $name"
	else
		echo "not ok $n $name"
		failed=$((failed + 1))
		for l in "$@"; do echo "# $l"; done
	fi
}

skip() {
	n=$((n + 1))
	echo "ok $n $1 # SKIP $2"
}

tap_end() {
	echo "1..$n"
	exit $((failed != 0))
}
