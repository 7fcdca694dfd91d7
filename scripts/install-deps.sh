#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages the build, the test rig and the tools need.
# Only missing packages are installed; apt's own cache keeps the .debs.
set -euo pipefail

# prometheus is there for promtool (tests/exporter); the package also brings
# the Prometheus server, which Debian enables as a service.  zlib1g-dev: the
# exporter's gzip responses; python3-docutils: rst2man for the tools' man
# pages.  libyaml-dev and libcrypt-dev: the exporter's --web-config
# (exporter-toolkit's YAML, bcrypt); curl and openssl test it over TLS.
# libncurses-dev: kvm-statsfd watch's view on a terminal (its static
# libraries too, for the guests' STATIC=1 build).
# collectd-dev builds the collectd plugin (tools/collectd) and
# collectd-core is the daemon its guest test runs; the package ships a
# service that stays inactive without /etc/collectd/collectd.conf.
# libcap-dev: the exporter's guest test runs it with the credentials
# of its shipped unit (tests/exporter/as_unit.c).
# libsystemd-dev: the exporter asks systemd-machined for VM names over
# sd-bus; dbus-daemon runs a private bus for its test's stand-in.
# bochs and the
# isolinux ISO tools run the Intel VMX lane (tests/vm/run-guest-bochs.sh).
# mmdebstrap makes the build chroots of the kernels built with another
# release's compiler (tests/vm/chroot.sh); the keyring checks that
# release's archive.  gcc-multilib (libc6-dev-i386) builds the 32-bit
# selftest of KVM's compat ioctl path (tests/selftests/compat_ioctl_test.c).
# libkvmstats is also built and unit-tested for arm64 (make -C tests/unit
# run-arm64) with clang, the arm64 cross libc and libgcc, binutils' arm64
# ld, and qemu-user to run the tests: not gcc-aarch64-linux-gnu, which
# Debian 12 will not install beside gcc-multilib (installing it removes
# gcc-multilib).  qemu-system-arm (qemu-system-aarch64) boots Debian's
# arm64 kernels with nested virtualisation for the arm64 module test
# (tests/vm/arm64/lane.sh), whose module builds in the bookworm-arm64
# chroot with the cross gcc instead (tests/vm/chroot.sh).  dpkg-dev, debhelper, dh-dkms, pkgconf and lintian build
# and check the Debian packages (debian/, tests/debian/test.sh); no
# fakeroot: debian/control says Rules-Requires-Root: no.
# The debian-host lane (tests/vm/debian-host/) makes its Debian 12 root
# filesystem with mmdebstrap and its disk images with e2fsprogs'
# mkfs.ext4 -d (no loop mount), and boots them with qemu-system-x86.
# Upstream's kvm_binary_stats_test (tests/upstream/build.sh) builds
# against the uapi headers of linux-libc-dev and, for arm64, of
# linux-libc-dev-arm64-cross.
PKGS="make ccache gcc gcc-multilib libc6-dev linux-libc-dev linux-libc-dev-arm64-cross bc bison flex libelf-dev libssl-dev dwarves sparse
clang libc6-dev-arm64-cross libgcc-12-dev-arm64-cross binutils-aarch64-linux-gnu qemu-user
kmod cpio gzip lz4 xz-utils zstd busybox-static qemu-system-x86 qemu-system-arm perl
libmicrohttpd-dev libyaml-dev libcrypt-dev libncurses-dev libcap-dev curl collectd-core collectd-dev libsystemd-dev dbus-daemon zlib1g-dev python3-docutils prometheus dkms openssl
bochs bochsbios vgabios isolinux syslinux-common xorriso
mmdebstrap debian-archive-keyring e2fsprogs
dpkg-dev debhelper dh-dkms pkgconf lintian"

missing=
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "  [deps] installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
