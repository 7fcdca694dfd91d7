# SPDX-License-Identifier: GPL-2.0
#
# kvm-statsfd-exporter, included by tools/Makefile (same O, CC, CFLAGS).
#
#   $(O)/kvm-statsfd-exporter     linked dynamically, for this machine
#   $(O)/exporter-guest/          (STATIC=1, or `make exporter-guest`) the
#                                 exporter for the busybox test guest, with
#                                 the shared libraries and the loader it
#                                 needs, all to go to the guest's /bin
#
# libmicrohttpd cannot be linked statically on Debian: its libmicrohttpd.a
# needs GnuTLS, and `pkg-config --static --libs libmicrohttpd` then wants
# libp11-kit.a, which Debian does not ship (Documentation/exporter.rst).
# So under STATIC=1 the exporter stays dynamic and the guest gets the
# libraries: the guest build's ELF interpreter is /bin/ld-linux-x86-64.so.2
# and it finds its libraries next to itself: DT_RPATH $ORIGIN (not
# RUNPATH, which would not apply to the libraries' own dependencies).
# A cross build names the target's unpacked packages, GUEST_SYSROOT=DIR
# (the arm64 guest's: tests/vm/arm64/build-exporter.sh): ldd cannot run
# a foreign binary, so the libraries are found by reading the ELF files
# there (tests/lib/sysroot-libs.sh), and the loader keeps its own name
# (ld-linux-aarch64.so.1).

EXP_SRCS := exporter/main.c exporter/metrics.c exporter/state.c exporter/identity.c \
	    exporter/web_config.c exporter/auth.c
EXP_OBJS := $(EXP_SRCS:%.c=$(O)/obj/%.o)
EXP := $(O)/kvm-statsfd-exporter
EXP_GUEST_DIR := $(O)/exporter-guest
EXP_GUEST := $(EXP_GUEST_DIR)/kvm-statsfd-exporter

MHD_CFLAGS := $(shell pkg-config --cflags libmicrohttpd 2>/dev/null)
MHD_LIBS := $(or $(shell pkg-config --libs libmicrohttpd 2>/dev/null),-lmicrohttpd) \
	    $(or $(shell pkg-config --libs yaml-0.1 2>/dev/null),-lyaml) \
	    $(or $(shell pkg-config --libs libsystemd 2>/dev/null),-lsystemd) -lcrypt -lz -lpthread
EXP_LDFLAGS := $(filter-out -static,$(LDFLAGS))
ifeq ($(GUEST_SYSROOT),)
EXP_GUEST_LOADER := ld-linux-x86-64.so.2
EXP_GUEST_LIBS_SH := exporter/guest-libs.sh
EXP_GUEST_LIBS = sh $(EXP_GUEST_LIBS_SH) $(EXP) $(EXP_GUEST_DIR)
else
# Read once $(EXP) is linked: its interpreter's name.
EXP_GUEST_LOADER = $(notdir $(shell readelf -l $(EXP) | \
	sed -n 's/.*program interpreter: \(.*\)]$$/\1/p'))
EXP_GUEST_LIBS_SH := ../tests/lib/sysroot-libs.sh
EXP_GUEST_LIBS = sh $(EXP_GUEST_LIBS_SH) $(EXP) $(GUEST_SYSROOT) $(EXP_GUEST_DIR)
endif

all: $(EXP)
ifeq ($(STATIC),1)
all: exporter-guest
endif

.PHONY: exporter-guest install-exporter
install-tools: install-exporter

$(EXP_OBJS): CPPFLAGS += -I../include $(MHD_CFLAGS)
$(EXP_OBJS): | exporter-have-mhd

.PHONY: exporter-have-mhd
exporter-have-mhd:
	@pkg-config --exists libmicrohttpd 2>/dev/null || [ -e /usr/include/microhttpd.h ] || \
		{ echo "kvm-statsfd-exporter needs libmicrohttpd (Debian: libmicrohttpd-dev; scripts/install-deps.sh)" >&2; exit 1; }

$(EXP): $(EXP_OBJS) $(LIB)
	$(CC) $(EXP_LDFLAGS) -o $@ $(EXP_OBJS) $(LIB) $(MHD_LIBS) $(LDLIBS)

exporter-guest: $(EXP_GUEST)

$(EXP_GUEST): $(EXP) $(EXP_OBJS) $(LIB) $(EXP_GUEST_LIBS_SH) exporter/build.mk
	@rm -rf $(EXP_GUEST_DIR) && mkdir -p $(EXP_GUEST_DIR)
	$(CC) $(EXP_LDFLAGS) -Wl,--dynamic-linker=/bin/$(EXP_GUEST_LOADER) \
		-Wl,--disable-new-dtags -Wl,-rpath,'$$ORIGIN' -o $@.tmp $(EXP_OBJS) $(LIB) \
		$(MHD_LIBS) $(LDLIBS)
	$(EXP_GUEST_LIBS)
	mv $@.tmp $@

install-exporter: $(EXP)
	install -D -m 0755 $(EXP) $(DESTDIR)$(SBINDIR)/kvm-statsfd-exporter
	sed 's|/usr/sbin/kvm-statsfd-exporter|$(SBINDIR)/kvm-statsfd-exporter|' \
		exporter/kvm-statsfd-exporter.service > $(O)/kvm-statsfd-exporter.service
	install -D -m 0644 $(O)/kvm-statsfd-exporter.service \
		$(DESTDIR)$(UNITDIR)/kvm-statsfd-exporter.service
	install -D -m 0644 exporter/kvm-statsfd-exporter.sysusers \
		$(DESTDIR)$(SYSUSERSDIR)/kvm-statsfd-exporter.conf

-include $(EXP_OBJS:.o=.d)
