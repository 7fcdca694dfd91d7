#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The debian-host-dkms lane of make check: lane.sh with the full upgrade,
# kvm-statsfd-dkms included, so that DKMS builds the new module inside
# the booted host, with VMs running, as on an operator's upgrade.  Not a
# default lane: that build, under emulation, costs about 350
# CPU-seconds (tests/vm/lanes).
#
# usage: lane-dkms.sh OUTDIR
DEBHOST_UPGRADE=full DEBHOST_VARIANT=base DEBHOST_LABEL=debian-host-dkms \
	exec "$(dirname "$0")/lane.sh" "$@"
