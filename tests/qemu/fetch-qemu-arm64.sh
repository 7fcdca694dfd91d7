#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Debian 12's arm64 QEMU (qemu-system-aarch64 of qemu-system-arm:arm64) and
# the arm64 libraries it links, unpacked into a tree for collect-qemu.sh,
# without installing anything and without running an arm64 program:
#
#   fetch-qemu-arm64.sh      prints the tree: $CACHE/qemu-arm64/<key>/root,
#                            holding usr/bin/qemu-system-aarch64 and every
#                            arm64 package of its dependency closure
#
# tests/vm/fetch-arm64-closure.sh resolves, fetches and unpacks it, cached
# by the packages' versions.  Of the closure only arm64 packages are
# unpacked: QEMU's firmware and adduser, architecture-independent, hold
# no library of QEMU's.
set -euo pipefail

exec "$(dirname "$0")/../vm/fetch-arm64-closure.sh" qemu-arm64 qemu-system-arm
