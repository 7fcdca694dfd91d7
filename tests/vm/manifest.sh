#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What a guest suite must contain: tests/vm/manifest, read for one lane's
# kernel series.  judge.sh uses it so that a missing test program, a suite
# that shrank, or a skip nobody explained fails the run.
#
# usage: manifest.sh skips SERIES
#          the expected skips of SERIES: "CASE<TAB>REASON" lines
#        manifest.sh absent SERIES
#          the programs not to run on SERIES (CASES "none"), one a line
#        manifest.sh check SERIES PROGRAMS
#          PROGRAMS has "PROGRAM CASES" lines (what a run reported); prints
#          a diagnostic per missing or shrunk program and exits 1 if any
set -euo pipefail

MANIFEST=${KS_MANIFEST:-$(dirname "$0")/manifest}

# Fields are separated by " | "; a series field is "*" or a list.
entries() {	# entries KIND SERIES: the matching lines' fields after the series
	awk -F ' [|] ' -v kind="$1" -v s="$2" '
	/^#/ || NF < 3 { next }
	$1 == kind {
		n = split($2, list, " ")
		for (i = 1; i <= n; i++)
			if (list[i] == "*" || list[i] == s) {
				out = $3
				for (j = 4; j <= NF; j++) out = out "\t" $j
				print out
				next
			}
	}' "$MANIFEST"
}

skips() { entries skip "$1"; }

# cases SERIES: "PROGRAM<TAB>NAME ..." for each program that runs only some
# of its cases on SERIES (init.sh hands them over as KS_CASES).
cases() { entries cases "$1"; }

# The last line for a program wins, as in check().
absent() {
	local prog want
	declare -A expect=()
	while IFS=$'\t' read -r prog want; do
		expect[$prog]=$want
	done < <(entries program "$1")
	for prog in "${!expect[@]}"; do
		[ "${expect[$prog]}" = none ] && echo "$prog"
	done | sort
}

# A later line for the same program overrides an earlier one, so that a
# series-specific count can follow the "*" one.
check() {
	local s=$1 programs=$2 prog want got rc=0 names
	declare -A expect=() only=()
	while IFS=$'\t' read -r prog want; do
		expect[$prog]=$want
	done < <(entries program "$s")
	while IFS=$'\t' read -r prog names; do
		only[$prog]=$names
	done < <(cases "$s")
	for prog in "${!expect[@]}"; do
		want=${expect[$prog]}
		[ "$want" = none ] && continue
		got=$(awk -v p="$prog" '$1 == p { print $2 }' "$programs" | tail -n 1)
		if [ -z "$got" ]; then
			echo "$prog did not run (the manifest expects $want cases)"
			rc=1
		elif [ "$got" -lt "$want" ]; then
			echo "$prog reported $got cases, the manifest expects $want"
			rc=1
		elif [ -n "${only[$prog]:-}" ] && [ "$got" != "$want" ]; then
			echo "$prog reported $got cases; of its cases, the manifest names $want for this lane"
			rc=1
		elif [ "$got" -gt "$want" ]; then
			echo "note: $prog reported $got cases, more than the $want in the manifest (raise it)"
		fi
	done
	while read -r prog got _; do
		[ -n "${expect[$prog]:-}" ] ||
			echo "note: $prog ($got cases) is not in the manifest (add it)"
	done < "$programs"
	return "$rc"
}

cmd=${1:-}
shift || true
case "$cmd" in
skips) skips "$@" ;;
cases) cases "$@" ;;
absent) absent "$@" ;;
check) check "$@" ;;
*) echo "usage: manifest.sh skips|cases|absent|check SERIES ..." >&2; exit 2 ;;
esac
