// SPDX-License-Identifier: GPL-2.0
/*
 * The data block read the way QEMU's query-stats reads it.
 *
 * QEMU sizes its buffer as the sum of the descriptors' sizes (times 8),
 * reads that many bytes at data_offset in one pread, and then finds each
 * stat at its descriptor's offset inside the buffer.  That is only right
 * when the descriptors' ranges tile [0, sum * 8) exactly: no hole, no
 * overlap, nothing past the end.  Descriptor order need not be offset
 * order (the kernel's own x86 VM descriptors are not in offset order).
 *
 * For every stats fd (the kernel's own, opened before the module is
 * loaded, and the module's, in superset and in own mode), on a quiet VM
 * whose vCPUs ran to HLT: the ranges tile the block, the block ends the
 * file, and each stat's value in the one big read equals a pread of that
 * stat alone.  A kernel without binary stats of its own (KVM_CHECK_EXTENSION(
 * KVM_CAP_BINARY_STATS_FD) 0 without the module: 5.10) has no fd to tile:
 * there the kernel's refusal is checked (ENOTTY on a VM fd, EINVAL on a
 * vCPU fd) and native_fds_tile skips (tests/vm/manifest expects it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ks_harness.h"
#include "ks_util.h"

#define NR_VCPUS	2
#define MAX_DESCS	4096

/* Read one stats fd as QEMU does and check it (ks_data_block_check()). */
static void check_fd(struct __test_metadata *_metadata, int fd,
		     const char *what)
{
	char why[160] = "";

	EXPECT_EQ(0, ks_data_block_check(fd, why, sizeof(why)))
		TH_LOG("%s: %s", what, why);
}

FIXTURE(block) {
	struct ks_module_state mod;
	struct ks_vm vm;
	int vm_created;
	int ready;
	int native_cap;		/* the kernel's own KVM_CAP_BINARY_STATS_FD */
	int vm_native, vcpu_native[NR_VCPUS];
};

FIXTURE_VARIANT(block) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(block, superset) { .mode = "superset" };
FIXTURE_VARIANT_ADD(block, own) { .mode = "own" };

FIXTURE_SETUP(block)
{
	int ret, i;

	if (access("/dev/kvm", R_OK | W_OK))
		SKIP(return, "/dev/kvm is not usable: %s", strerror(errno));
	ks_module_save(&self->mod);
	if (self->mod.was_loaded) {
		ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
		ASSERT_EQ(0, ret) TH_LOG("unloading: %s", strerror(-ret));
	}
	self->native_cap = ks_native_binary_stats();
	ASSERT_LE(0, self->native_cap)
		TH_LOG("KVM_CHECK_EXTENSION without the module: %s",
		       strerror(-self->native_cap));
	ret = ks_vm_create(&self->vm, ks_code_out_hlt, ks_code_out_hlt_len,
			   NR_VCPUS);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	self->vm_created = 1;
	/* Some exits of every kind the guest makes, then quiet. */
	for (i = 0; i < NR_VCPUS; i++) {
		EXPECT_EQ(KS_EXIT_USER, ks_vcpu_run(&self->vm.vcpu[i]));
		EXPECT_EQ(KS_EXIT_STOP, ks_vcpu_run(&self->vm.vcpu[i]));
	}
	/* The kernel's own fds where it has them, its refusal where not. */
	self->vm_native = ioctl(self->vm.fd, KVM_GET_STATS_FD, 0);
	if (self->native_cap) {
		ASSERT_LE(0, self->vm_native)
			TH_LOG("native KVM_GET_STATS_FD: %s", strerror(errno));
	} else {
		ASSERT_EQ(-1, self->vm_native);
		ASSERT_EQ(ENOTTY, errno);
	}
	for (i = 0; i < NR_VCPUS; i++) {
		self->vcpu_native[i] = ioctl(self->vm.vcpu[i].fd,
					     KVM_GET_STATS_FD, 0);
		if (self->native_cap) {
			ASSERT_LE(0, self->vcpu_native[i])
				TH_LOG("native KVM_GET_STATS_FD: %s", strerror(errno));
		} else {
			ASSERT_EQ(-1, self->vcpu_native[i]);
			ASSERT_EQ(EINVAL, errno);
		}
	}
	ret = ks_module_ensure(variant->mode);
	ASSERT_EQ(0, ret) TH_LOG("loading %s mode=%s: %s", ks_module_path(),
				 variant->mode, strerror(-ret));
	self->ready = 1;
}

FIXTURE_TEARDOWN(block)
{
	int ret;

	if (self->vm_created)
		ks_vm_destroy(&self->vm);
	ks_close_from(3);
	ret = ks_module_restore(&self->mod);
	EXPECT_EQ(0, ret) TH_LOG("restoring the module: %s", strerror(-ret));
}

/* The 6.1 harness runs a test's body even when its setup skipped. */
#define NEED_SETUP() do { if (!self->ready) return; } while (0)

TEST_F(block, native_fds_tile)
{
	char what[64];
	int i;

	NEED_SETUP();
	if (!self->native_cap)
		SKIP(return, "no binary stats of the kernel's own (KVM_CAP_BINARY_STATS_FD 0): nothing to tile");
	check_fd(_metadata, self->vm_native, "native VM fd");
	for (i = 0; i < NR_VCPUS; i++) {
		snprintf(what, sizeof(what), "native vCPU %d fd", i);
		check_fd(_metadata, self->vcpu_native[i], what);
	}
}

TEST_F(block, module_fds_tile_and_read_like_qemu)
{
	char what[64];
	int fd, i;

	NEED_SETUP();
	fd = ioctl(self->vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, fd) TH_LOG("KVM_GET_STATS_FD: %s", strerror(errno));
	snprintf(what, sizeof(what), "%s VM fd", variant->mode);
	check_fd(_metadata, fd, what);
	for (i = 0; i < NR_VCPUS; i++) {
		fd = ioctl(self->vm.vcpu[i].fd, KVM_GET_STATS_FD, 0);
		ASSERT_LE(0, fd) TH_LOG("KVM_GET_STATS_FD: %s", strerror(errno));
		snprintf(what, sizeof(what), "%s vCPU %d fd", variant->mode, i);
		check_fd(_metadata, fd, what);
	}
}

TEST_HARNESS_MAIN
