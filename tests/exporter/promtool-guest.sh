#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# promtool-guest.sh [--format-only] RESULTS: checks on the /metrics scrape that
# kvm_statsfd_exporter_test printed in a guest run's report (judge.sh's
# OUTDIR/results.txt, between "# exporter-metrics-begin" and
# "# exporter-metrics-end", each line prefixed "# | "):
#
#  1. `promtool check metrics` accepts it;
#  2. every kvm_* metric the Grafana dashboard and the alert rules query
#     (tools/exporter/grafana, tools/exporter/prometheus) is in it;
#  3. a real Prometheus (Debian's) scrapes it, replayed over loopback by
#     busybox httpd (the guest has no network), and PromQL queries return
#     the values the scrape holds; the same Prometheus scrapes a live
#     exporter on this host (no VMs here: its own metrics), gzip and all.
# (Prometheus scraping the live exporter inside the guest, with the VMs
# there, is kvm_statsfd_exporter_test's part 4.)
# --format-only: 1 alone, for the arm64 guest's scrape (tests/vm/arm64/
# lane.sh), which has no port I/O for the dashboard's panels and 3's query.
#
# Exit 0 if all hold; what failed on stdout otherwise.
set -uo pipefail

format_only=
[ "$1" != --format-only ] || { format_only=1; shift; }
results=$1
TOP=$(cd "$(dirname "$0")/../.." && pwd)
command -v promtool > /dev/null || { echo "promtool not found (Debian package prometheus)"; exit 1; }
body=$(sed -n '/^# exporter-metrics-begin$/,/^# exporter-metrics-end$/p' "$results" |
	sed '1d;$d' | sed 's/^# | \{0,1\}//')
if [ -z "$body" ] || ! grep -q '^kvm_vcpu_' <<< "$body"; then
	echo "no exporter scrape with kvm_vcpu_ metrics in $results"
	exit 1
fi
printf '%s\n' "$body" | promtool check metrics || exit 1
[ -z "$format_only" ] || exit 0

# 2. Metric names queried (recording rules' names have colons: not ours).
missing=
for m in $(cat "$TOP/tools/exporter/grafana/kvm-statsfd.json" \
		"$TOP/tools/exporter/prometheus/kvm-statsfd.rules.yml" |
		grep -o '[a-z_:]*kvm_[a-z_]*' | grep -v ':' | sort -u); do
	grep -q "^$m{" <<< "$body" || grep -q "^$m " <<< "$body" ||
		missing="$missing $m"
done
if [ -n "$missing" ]; then
	echo "queried by the dashboard or the alert rules but not in the scrape:$missing"
	exit 1
fi

# 3. Prometheus scrapes the replayed exposition; a query reads it back.
command -v prometheus > /dev/null && command -v busybox > /dev/null ||
	{ echo "prometheus or busybox not found (scripts/install-deps.sh)"; exit 1; }
T=$(mktemp -d /tmp/ks-prom.XXXXXX)
pids=
trap 'for p in $pids; do kill "$p" 2> /dev/null; wait "$p" 2> /dev/null; done; rm -rf "$T"' EXIT
free_port() {
	local p
	for p in $(seq "$1" $(($1 + 200))); do
		! (echo > "/dev/tcp/127.0.0.1/$p") 2> /dev/null && { echo "$p"; return; }
	done
}
hp=$(free_port 19900)
pp=$(free_port $((hp + 1)))
ep=$(free_port $((pp + 1)))
make -s -C "$TOP/tools" O="$T/tools" "$T/tools/kvm-statsfd-exporter" > "$T/build.log" 2>&1 ||
	{ cat "$T/build.log"; exit 1; }
"$T/tools/kvm-statsfd-exporter" --listen "127.0.0.1:$ep" --libvirt-dir '' 2> "$T/exp.log" &
pids="$pids $!"
mkdir -p "$T/www"
printf '%s\n' "$body" > "$T/www/metrics"
busybox httpd -f -p "127.0.0.1:$hp" -h "$T/www" &
pids="$pids $!"
cat > "$T/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: kvm-statsfd
    static_configs:
      - targets: ['127.0.0.1:$hp']
  - job_name: live
    static_configs:
      - targets: ['127.0.0.1:$ep']
EOF
t0=$(date +%s.%N)
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/data" \
	--web.listen-address="127.0.0.1:$pp" > "$T/prom.log" 2>&1 &
pids="$pids $!"

# query EXPR: the first result's value, or "".
query() {
	wget -q -O - "http://127.0.0.1:$pp/api/v1/query?query=$1" 2> /dev/null |
		sed -n 's/.*"value":\[[0-9.]*,"\([^"]*\)"\].*/\1/p'
}
want=$(awk '$1 ~ /^kvm_vm_io_out_exits_total\{/ { print $2; exit }' <<< "$body")
lbl=$(awk '$1 ~ /^kvm_vm_io_out_exits_total\{/ { print $1; exit }' <<< "$body" |
	sed 's/^[^{]*//')
reasons=$(grep -c '^kvm_vm_exits_by_reason_total{' <<< "$body")
got= n=
for _ in $(seq 1 60); do
	got=$(query "kvm_vm_io_out_exits_total$(printf '%s' "$lbl" | sed 's/"/%22/g; s/{/%7B/; s/}/%7D/')")
	[ -n "$got" ] && break
	sleep 0.5
done
t1=$(date +%s.%N)
n=$(query 'count(kvm_vm_exits_by_reason_total)')
live=
for _ in $(seq 1 20); do
	live=$(query 'kvm_exporter_build_info%7Bjob=%22live%22%7D')
	[ -n "$live" ] && break
	sleep 0.5
done
if [ "$live" != 1 ]; then
	echo "Prometheus: kvm_exporter_build_info of the live exporter is '$live', want 1"
	query 'up' ; tail -n 20 "$T/prom.log" "$T/exp.log"
	exit 1
fi
if [ -z "$want" ] || [ "$got" != "$want" ] || [ "$n" != "$reasons" ]; then
	echo "Prometheus: kvm_vm_io_out_exits_total$lbl = '$got', the scrape says '$want';"
	echo "count(kvm_vm_exits_by_reason_total) = '$n', the scrape has $reasons"
	tail -n 20 "$T/prom.log"
	exit 1
fi
echo "Prometheus read kvm_vm_io_out_exits_total$lbl = $got, $n exit-reason series and the live exporter's build_info" \
	"($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s from start)"
