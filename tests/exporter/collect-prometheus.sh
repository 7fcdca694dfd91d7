#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# collect-prometheus.sh ROOT: Debian's Prometheus (package prometheus,
# /usr/bin/prometheus) as a tree for the test guest's root
# (build-initramfs.sh --tree ROOT), so that a real Prometheus scrapes the
# live exporter inside the guest (kvm_statsfd_exporter_test):
#
#   ROOT/opt/prometheus/bin/prometheus   the binary, unchanged
#   ROOT/opt/prometheus/lib/             the libraries ldd lists and the
#                                        loader (tools/exporter/guest-libs.sh)
#   ROOT/opt/prometheus/prometheus       wrapper: the binary through the
#                                        copied loader (the guest's busybox
#                                        root has no /lib64)
set -euo pipefail

root=$1
bin=${PROMETHEUS_BIN:-/usr/bin/prometheus}
here=$(cd "$(dirname "$0")" && pwd)
[ -x "$bin" ] || { echo "collect-prometheus: $bin not found (package prometheus)" >&2; exit 1; }

prefix=$root/opt/prometheus
"$here/../lib/guest-bundle.sh" "$root" /opt/prometheus "$bin" prometheus
echo "collect-prometheus: $(du -sh "$prefix" | cut -f1) in $prefix" >&2
