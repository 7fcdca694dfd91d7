# SPDX-License-Identifier: GPL-2.0
#
# kvm-statsfd top-level Makefile.
#
#   make                 build kvm_statsfd.ko for the running kernel, and the tools
#   make KDIR=DIR        build the module against another kernel tree
#   make install         install-module and install-tools
#   make install-module  install the module for that kernel (modules_install, depmod);
#                        INSTALL_MOD_PATH=DIR installs under DIR instead of /
#   make install-tools   kvm-statsfd, kvm-statsfd-exporter, their man pages, bash
#                        completion and the exporter's systemd unit, and libkvmstats
#                        (.so, .a, header, .pc, man page) (DESTDIR, PREFIX, LIBDIR)
#   make check           everything, on Debian 6.1 and 6.12 booted under QEMU
#   make demo            boot a guest, load the module, show a running VM's stats
#   make kselftest       run the selftests here, on a real KVM host, as root
#   make lint            checkpatch --strict, W=1 and sparse against the test kernels
#   make bench           benchmarks (guest and host), results in build/bench/results.txt
#   make stress          the race, hostile-input and scale tests, bigger, on every kernel
#   make unit            host-only unit tests of the reader library
#   make clean
#
# The kernel build itself is described in Kbuild; this file only drives it.

KDIR	?= /lib/modules/$(shell uname -r)/build
BUILD	?= $(CURDIR)/build
CACHE	?= $(CURDIR)/.cache
export BUILD CACHE

all: module tools

module:
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules

tools:
	$(MAKE) -C tools O=$(BUILD)/tools

# The release modules_install installs for is the one the module's vermagic
# names, UTS_RELEASE: Debian's 6.1 headers have the upstream version
# ("6.1.192") in include/config/kernel.release.  modules_install honours
# INSTALL_MOD_PATH and skips depmod without a System.map (headers packages
# have none), so depmod runs here, on the same tree.
KRELEASE = $(shell sed -n 's/.*UTS_RELEASE "\(.*\)"/\1/p' $(KDIR)/include/generated/utsrelease.h)

# The module installs once per kernel (install-module: DKMS, tests/dkms),
# the tools once per host; `make install` does both.
install: install-module install-tools

install-tools:
	$(MAKE) -C tools O=$(BUILD)/tools install

install-module: module
	$(MAKE) -C $(KDIR) M=$(CURDIR) modules_install
	depmod $(if $(INSTALL_MOD_PATH),-b $(abspath $(INSTALL_MOD_PATH))) -a $(KRELEASE)

# The targets below boot test kernels or read Debian packages: first make
# sure what they need is installed.
deps:
	@scripts/install-deps.sh

check: deps
	@tests/vm/check.sh

demo: deps
	@tests/vm/demo.sh

lint: deps
	@tests/vm/lint.sh

bench: deps
	@tests/vm/bench.sh

stress: deps
	@tests/vm/stress.sh

unit:
	$(MAKE) -C tests/unit OUT=$(BUILD)/unit run

# The selftests of this machine's architecture, with its own compiler.
KS_ARCH := $(if $(filter aarch64 arm64,$(shell uname -m)),arm64,x86)

# Selftests on this machine: needs /dev/kvm, root, and the module built
# for the running kernel.
kselftest: module tools
	$(MAKE) -C tests/selftests O=$(BUILD)/kselftest ARCH=$(KS_ARCH) \
		CC_ARM64="$(CC)" \
		HARNESS=$$(tests/vm/fetch-linux-source.sh)/tools/testing/selftests \
		LIBKVMSTATS=$(BUILD)/tools/libkvmstats.a
	KVM_STATSFD_KO=$(CURDIR)/kvm_statsfd.ko tests/run-kselftest.sh $(BUILD)/kselftest

clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) clean 2>/dev/null || true
	rm -rf $(BUILD)

.PHONY: all module tools install install-module install-tools deps check demo lint bench stress unit kselftest clean
