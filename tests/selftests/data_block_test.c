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
#include "ks_util.h"

#define NR_VCPUS	2
#define MAX_DESCS	4096

struct stats_header {
	uint32_t flags, name_size, num_desc, id_offset, desc_offset, data_offset;
};

struct desc_head {
	uint32_t flags;
	int16_t exponent;
	uint16_t size;
	uint32_t offset;
	uint32_t bucket_size;
};

struct range {
	uint64_t start, end;
	unsigned int desc;
};

static int range_cmp(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Read one stats fd as QEMU does and check it; @what names the fd in
 * failure messages.
 */
static void check_fd(struct __test_metadata *_metadata, int fd,
		     const char *what)
{
	struct stats_header h;
	struct desc_head *d;
	struct range *r;
	uint64_t sum = 0, *block, *one, end;
	unsigned char *descs, probe;
	size_t desc_size;
	unsigned int i;

	ASSERT_EQ(0, ks_pread_exact(fd, &h, sizeof(h), 0)) TH_LOG("%s", what);
	ASSERT_LT(0, h.num_desc) TH_LOG("%s: no descriptors", what);
	ASSERT_GT(MAX_DESCS, h.num_desc) TH_LOG("%s", what);
	desc_size = sizeof(*d) + h.name_size;
	descs = calloc(h.num_desc, desc_size);
	r = calloc(h.num_desc, sizeof(*r));
	ASSERT_NE(NULL, descs);
	ASSERT_NE(NULL, r);
	ASSERT_EQ(0, ks_pread_exact(fd, descs, h.num_desc * desc_size,
				    h.desc_offset)) TH_LOG("%s", what);

	for (i = 0; i < h.num_desc; i++) {
		d = (struct desc_head *)(descs + i * desc_size);
		ASSERT_NE(0, d->size) TH_LOG("%s: descriptor %u", what, i);
		r[i].start = d->offset;
		r[i].end = d->offset + d->size * 8ULL;
		r[i].desc = i;
		sum += d->size;
	}

	/* The ranges tile [0, sum * 8): sorted, each starts where the last ended. */
	qsort(r, h.num_desc, sizeof(*r), range_cmp);
	end = 0;
	for (i = 0; i < h.num_desc; i++) {
		d = (struct desc_head *)(descs + r[i].desc * desc_size);
		EXPECT_EQ(end, r[i].start)
			TH_LOG("%s: %s at byte %llu, but the stats before it end at %llu",
			       what, (char *)(d + 1),
			       (unsigned long long)r[i].start,
			       (unsigned long long)end);
		end = r[i].end;
	}
	EXPECT_EQ(sum * 8, end) TH_LOG("%s: the stats end at byte %llu of a %llu-byte block",
				       what, (unsigned long long)end,
				       (unsigned long long)sum * 8);

	/* One pread of exactly the block, and nothing after it. */
	block = calloc(sum, 8);
	one = calloc(65536, 8);
	ASSERT_NE(NULL, block);
	ASSERT_NE(NULL, one);
	ASSERT_EQ(0, ks_pread_exact(fd, block, sum * 8, h.data_offset))
		TH_LOG("%s: a pread of the %llu-byte block", what,
		       (unsigned long long)sum * 8);
	EXPECT_EQ(0, pread(fd, &probe, 1, h.data_offset + sum * 8))
		TH_LOG("%s: the file goes on past the data block", what);

	/* Each stat, found by its offset in the big read, as read alone. */
	for (i = 0; i < h.num_desc; i++) {
		d = (struct desc_head *)(descs + i * desc_size);
		if (d->offset + d->size * 8ULL > sum * 8)
			continue;	/* reported above */
		ASSERT_EQ(0, ks_pread_exact(fd, one, d->size * 8ULL,
					    h.data_offset + d->offset));
		EXPECT_EQ(0, memcmp(one, (char *)block + d->offset, d->size * 8ULL))
			TH_LOG("%s: %s differs between the block read and its own read",
			       what, (char *)(d + 1));
	}
	free(one);
	free(block);
	free(r);
	free(descs);
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
		ret = ks_module_unload_wait(2000);
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
		EXPECT_EQ(KVM_EXIT_IO, ks_vcpu_run(&self->vm.vcpu[i]));
		EXPECT_EQ(KVM_EXIT_HLT, ks_vcpu_run(&self->vm.vcpu[i]));
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
