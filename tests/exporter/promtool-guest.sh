#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# promtool-guest.sh RESULTS: run `promtool check metrics` on the /metrics
# scrape that kvm_statsfd_exporter_test printed in a guest run's report
# (judge.sh's OUTDIR/results.txt, between "# exporter-metrics-begin" and
# "# exporter-metrics-end", each line prefixed "# | ").  Exit 0 if promtool
# accepts it; promtool's complaints on stdout otherwise.
set -uo pipefail

results=$1
command -v promtool > /dev/null || { echo "promtool not found (Debian package prometheus)"; exit 1; }
body=$(sed -n '/^# exporter-metrics-begin$/,/^# exporter-metrics-end$/p' "$results" |
	sed '1d;$d' | sed 's/^# | \{0,1\}//')
if [ -z "$body" ] || ! grep -q '^kvm_vcpu_' <<< "$body"; then
	echo "no exporter scrape with kvm_vcpu_ metrics in $results"
	exit 1
fi
printf '%s\n' "$body" | promtool check metrics
