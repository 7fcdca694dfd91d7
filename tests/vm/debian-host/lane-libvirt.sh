#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The debian-host-libvirt lane of make check (issue 23, item 3): lane.sh
# on an image with libvirt (packages-libvirt), where guest-test.sh starts
# a transient domain with virsh, compares virsh domstats --vm with
# kvm-statsfd show and checks the exporter's name for it, taken from
# systemd-machined.  Not a default lane: it fails today, for two defects
# it found (tests/vm/lanes says which).
#
# usage: lane-libvirt.sh OUTDIR
DEBHOST_VARIANT=libvirt DEBHOST_LABEL=debian-host-libvirt \
	exec "$(dirname "$0")/lane.sh" "$@"
