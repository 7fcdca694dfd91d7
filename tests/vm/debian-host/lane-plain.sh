#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The debian-host-plain lane of make check: lane.sh on the image without
# libvirt (image.sh's base variant), the packages on a host that has no
# libvirt (the exporter then names VMs from QEMU's command line).  Not a
# default lane: the debian-host lane runs every one of its cases, and
# libvirt's besides.
#
# usage: lane-plain.sh OUTDIR
DEBHOST_VARIANT=base DEBHOST_LABEL=debian-host-plain \
	exec "$(dirname "$0")/lane.sh" "$@"
