// SPDX-License-Identifier: GPL-2.0
/*
 * What the module's stats files contain.
 *
 * superset mode: the kernel's native header, id and descriptors come first,
 * byte for byte, and so do the native values (compared with a native stats
 * fd opened before the module was loaded, which KVM keeps serving); then
 * the module's exit-reason histogram, whose buckets count exactly the exits
 * the guest code makes and sum to the native "exits" of the same vCPU; the
 * VM file sums its vCPUs.
 *
 * own mode: only the module's stat, with the same counts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kvmstats.h"
#include "ks_util.h"

#define NR_VCPUS	3
#define NAME_SIZE	48
#define DESC_SIZE	(16 + NAME_SIZE)
#define MAX_FILE	65536

/* CPUID exits of the guest code's two segments; each ends with an OUT. */
#define N1	100
#define N2	60
static const unsigned int seg_cpuid[] = { N1, N2 };

struct ctx {
	struct ks_module_state mod;
	struct ks_exit_codes ec;
	struct ks_vm vm;
	int vm_created;
	int ready;
	/* Opened before the module was loaded: served by KVM itself. */
	int vm_native, vcpu_native[NR_VCPUS];
	/* Opened after: served by the module. */
	int vm_stats, vcpu_stats[NR_VCPUS];
};

static void ctx_setup(struct __test_metadata *_metadata, struct ctx *c,
		      const char *mode)
{
	unsigned char code[256];
	struct kvmstats s;
	size_t len;
	int ret, i;

	if (access("/dev/kvm", R_OK | W_OK))
		SKIP(return, "/dev/kvm is not usable: %s", strerror(errno));
	ks_module_save(&c->mod);
	if (c->mod.was_loaded) {
		ret = ks_module_unload_wait(2000);
		ASSERT_EQ(0, ret) TH_LOG("unloading: %s", strerror(-ret));
	}
	ks_host_exit_codes(&c->ec);

	len = ks_code_cpuid_segments(code, sizeof(code), seg_cpuid, 2);
	ASSERT_NE(0, len);
	ret = ks_vm_create(&c->vm, code, len, NR_VCPUS);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	c->vm_created = 1;

	c->vm_native = ioctl(c->vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, c->vm_native) TH_LOG("native KVM_GET_STATS_FD: %s",
					  strerror(errno));
	for (i = 0; i < NR_VCPUS; i++) {
		c->vcpu_native[i] = ioctl(c->vm.vcpu[i].fd, KVM_GET_STATS_FD, 0);
		ASSERT_LE(0, c->vcpu_native[i]);
	}
	/* Really the kernel's: no stat of ours. */
	ASSERT_EQ(0, kvmstats_open(&s, dup(c->vcpu_native[0]))) TH_LOG("%s", s.err);
	ASSERT_EQ(NULL, kvmstats_find(&s, c->ec.stat));
	ASSERT_NE(NULL, kvmstats_find(&s, "exits"));
	kvmstats_close(&s);

	ret = ks_module_ensure(mode);
	ASSERT_EQ(0, ret) TH_LOG("loading %s mode=%s: %s", ks_module_path(),
				 mode, strerror(-ret));

	c->vm_stats = ioctl(c->vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, c->vm_stats) TH_LOG("KVM_GET_STATS_FD: %s", strerror(errno));
	for (i = 0; i < NR_VCPUS; i++) {
		c->vcpu_stats[i] = ioctl(c->vm.vcpu[i].fd, KVM_GET_STATS_FD, 0);
		ASSERT_LE(0, c->vcpu_stats[i]);
	}
	c->ready = 1;
}

static void ctx_teardown(struct __test_metadata *_metadata, struct ctx *c)
{
	int ret;

	if (c->vm_created)
		ks_vm_destroy(&c->vm);
	ks_close_from(3);
	ret = ks_module_restore(&c->mod);
	EXPECT_EQ(0, ret) TH_LOG("restoring the module: %s", strerror(-ret));
}

FIXTURE(superset) {
	struct ctx c;
};
FIXTURE_SETUP(superset) { ctx_setup(_metadata, &self->c, "superset"); }
FIXTURE_TEARDOWN(superset) { ctx_teardown(_metadata, &self->c); }

FIXTURE(own) {
	struct ctx c;
};
FIXTURE_SETUP(own) { ctx_setup(_metadata, &self->c, "own"); }
FIXTURE_TEARDOWN(own) { ctx_teardown(_metadata, &self->c); }

#define NEED_SETUP() do { if (!self->c.ready) return; } while (0)

struct file_bytes {
	unsigned char *b;
	ssize_t size;
	struct kvm_stats_header h;
};

static void read_file(struct __test_metadata *_metadata, int fd,
		      struct file_bytes *f)
{
	f->b = malloc(MAX_FILE);
	ASSERT_NE(NULL, f->b);
	f->size = ks_read_whole(fd, f->b, MAX_FILE);
	ASSERT_LT(24, f->size);
	memcpy(&f->h, f->b, sizeof(f->h));
}

/* A stat's value(s) from a fresh read of the file. */
static uint64_t stat_of(struct __test_metadata *_metadata, int fd,
			const char *name, unsigned int i)
{
	const struct kvmstats_desc *d;
	struct kvmstats s;
	uint64_t v;
	int ret;

	ret = kvmstats_open(&s, dup(fd));
	EXPECT_EQ(0, ret) TH_LOG("libkvmstats: %s", s.err);
	if (ret)
		return 0;
	d = kvmstats_find(&s, name);
	EXPECT_NE(NULL, d) TH_LOG("no stat %s", name);
	v = d ? kvmstats_value(&s, d, i) : 0;
	kvmstats_close(&s);
	return v;
}

/* The exit-reason histogram of a stats fd, and the sum of its buckets. */
static uint64_t exit_hist(struct __test_metadata *_metadata, int fd,
			  const struct ks_exit_codes *ec, uint64_t *h)
{
	const struct kvmstats_desc *d;
	struct kvmstats s;
	uint64_t sum = 0;
	unsigned int i;
	int ret;

	memset(h, 0, ec->buckets * sizeof(*h));
	ret = kvmstats_open(&s, dup(fd));
	EXPECT_EQ(0, ret) TH_LOG("libkvmstats: %s", s.err);
	if (ret)
		return 0;
	d = kvmstats_find(&s, ec->stat);
	EXPECT_NE(NULL, d) TH_LOG("no stat %s", ec->stat);
	if (d) {
		EXPECT_EQ(ec->buckets, d->size);
		for (i = 0; i < d->size && i < ec->buckets; i++) {
			h[i] = kvmstats_value(&s, d, i);
			sum += h[i];
		}
	}
	kvmstats_close(&s);
	return sum;
}

/*
 * The native part is the kernel's own file, unchanged; the module's own
 * descriptors follow the native ones (the exit-reason histogram among
 * them), and their values follow the native values, up to EOF.
 */
static void check_prefix(struct __test_metadata *_metadata, int native,
			 int ours, const struct ks_exit_codes *ec)
{
	struct file_bytes n, m;
	uint32_t nd, i, off, bsize, native_end, own_end = 0;
	uint16_t size;
	int found = 0;

	read_file(_metadata, native, &n);
	read_file(_metadata, ours, &m);
	nd = n.h.num_desc;

	EXPECT_EQ(n.h.flags, m.h.flags);
	EXPECT_EQ(n.h.name_size, m.h.name_size);
	ASSERT_LT(nd, m.h.num_desc);
	EXPECT_EQ(n.h.id_offset, m.h.id_offset);
	EXPECT_EQ(n.h.desc_offset, m.h.desc_offset);
	EXPECT_EQ(n.h.data_offset + (m.h.num_desc - nd) * DESC_SIZE,
		  m.h.data_offset);
	ASSERT_EQ(NAME_SIZE, m.h.name_size);
	ASSERT_LE(m.h.desc_offset + m.h.num_desc * DESC_SIZE, m.size);

	/* The same id and the same descriptors, byte for byte. */
	EXPECT_EQ(0, memcmp(n.b + n.h.id_offset, m.b + m.h.id_offset,
			    NAME_SIZE));
	EXPECT_EQ(0, memcmp(n.b + n.h.desc_offset, m.b + m.h.desc_offset,
			    (size_t)nd * DESC_SIZE));

	/* Ours after them; their values after the native values. */
	native_end = (n.size - n.h.data_offset + 7) / 8 * 8;
	for (i = nd; i < m.h.num_desc; i++) {
		const unsigned char *d = m.b + m.h.desc_offset + i * DESC_SIZE;

		memcpy(&size, d + 6, 2);
		memcpy(&off, d + 8, 4);
		memcpy(&bsize, d + 12, 4);
		EXPECT_LE(native_end, off) TH_LOG("%s", (const char *)d + 16);
		if (off + size * 8 > own_end)
			own_end = off + size * 8;
		if (strcmp(ec->stat, (const char *)d + 16))
			continue;
		found = 1;
		EXPECT_EQ(ec->buckets, size);
		EXPECT_EQ(1, bsize);
	}
	EXPECT_TRUE(found) TH_LOG("no %s after the native stats", ec->stat);
	EXPECT_EQ(m.h.data_offset + own_end, m.size);
	free(n.b);
	free(m.b);
}

TEST_F(superset, native_prefix_identical)
{
	int i;

	NEED_SETUP();
	check_prefix(_metadata, self->c.vm_native, self->c.vm_stats, &self->c.ec);
	for (i = 0; i < NR_VCPUS; i++)
		check_prefix(_metadata, self->c.vcpu_native[i],
			     self->c.vcpu_stats[i], &self->c.ec);
}

static void run_all_to_hlt(struct __test_metadata *_metadata, struct ks_vm *vm)
{
	int i;

	for (i = 0; i < vm->nr_vcpus; i++) {
		ASSERT_EQ(KVM_EXIT_IO, ks_vcpu_run(&vm->vcpu[i]));
		ASSERT_EQ(KVM_EXIT_IO, ks_vcpu_run(&vm->vcpu[i]));
		ASSERT_EQ(KVM_EXIT_HLT, ks_vcpu_run(&vm->vcpu[i]));
	}
}

/* With the VM stopped the native values read the same through both. */
static void check_values(struct __test_metadata *_metadata, int native,
			 int ours)
{
	struct file_bytes n, m;
	size_t len;

	read_file(_metadata, native, &n);
	read_file(_metadata, ours, &m);
	len = n.size - n.h.data_offset;
	ASSERT_LT(0, len);
	ASSERT_LE(m.h.data_offset + len, m.size);
	EXPECT_EQ(0, memcmp(n.b + n.h.data_offset, m.b + m.h.data_offset, len));
	free(n.b);
	free(m.b);
}

TEST_F(superset, native_values_identical)
{
	int i;

	NEED_SETUP();
	run_all_to_hlt(_metadata, &self->c.vm);
	for (i = 0; i < NR_VCPUS; i++) {
		/* Not a comparison of zeros. */
		EXPECT_LT(N1 + N2, stat_of(_metadata, self->c.vcpu_native[i],
					   "exits", 0));
		check_values(_metadata, self->c.vcpu_native[i],
			     self->c.vcpu_stats[i]);
	}
	check_values(_metadata, self->c.vm_native, self->c.vm_stats);
}

/*
 * The histogram counts exactly the guest's CPUID, OUT and HLT exits as
 * they happen, and its buckets add up to the native "exits" of the vCPU,
 * read from the same file and from the kernel's own fd.
 */
TEST_F(superset, exit_reasons_match_exits)
{
	const struct ks_exit_codes *ec = &self->c.ec;
	uint64_t h[256], sum, exits;
	struct ks_vcpu *v;
	int fd, i;

	NEED_SETUP();
	for (i = 0; i < NR_VCPUS; i++) {
		v = &self->c.vm.vcpu[i];
		fd = self->c.vcpu_stats[i];

		sum = exit_hist(_metadata, fd, ec, h);
		EXPECT_EQ(0, sum) TH_LOG("vCPU %d has not run yet", i);

		ASSERT_EQ(KVM_EXIT_IO, ks_vcpu_run(v));
		sum = exit_hist(_metadata, fd, ec, h);
		exits = stat_of(_metadata, fd, "exits", 0);
		EXPECT_EQ(N1, h[ec->cpuid]) TH_LOG("vCPU %d", i);
		EXPECT_EQ(1, h[ec->io]);
		EXPECT_EQ(0, h[ec->hlt]);
		EXPECT_EQ(exits, sum) TH_LOG("vCPU %d after segment 1", i);

		ASSERT_EQ(KVM_EXIT_IO, ks_vcpu_run(v));
		sum = exit_hist(_metadata, fd, ec, h);
		exits = stat_of(_metadata, fd, "exits", 0);
		EXPECT_EQ(N1 + N2, h[ec->cpuid]) TH_LOG("vCPU %d", i);
		EXPECT_EQ(2, h[ec->io]);
		EXPECT_EQ(0, h[ec->hlt]);
		EXPECT_EQ(exits, sum) TH_LOG("vCPU %d after segment 2", i);

		ASSERT_EQ(KVM_EXIT_HLT, ks_vcpu_run(v));
		sum = exit_hist(_metadata, fd, ec, h);
		exits = stat_of(_metadata, fd, "exits", 0);
		EXPECT_EQ(N1 + N2, h[ec->cpuid]);
		EXPECT_EQ(2, h[ec->io]);
		EXPECT_EQ(1, h[ec->hlt]);
		EXPECT_EQ(0, h[ec->other]);
		EXPECT_EQ(exits, sum) TH_LOG("vCPU %d after hlt", i);
		EXPECT_EQ(stat_of(_metadata, fd, "io_exits", 0), h[ec->io]);
		EXPECT_EQ(stat_of(_metadata, fd, "halt_exits", 0), h[ec->hlt]);
		/* The kernel's own fd agrees. */
		EXPECT_EQ(stat_of(_metadata, self->c.vcpu_native[i], "exits", 0),
			  sum);
	}
}

/* The VM file's histogram is its vCPUs', summed bucket by bucket. */
static void check_vm_sum(struct __test_metadata *_metadata, struct ctx *c,
			 uint64_t want_cpuid)
{
	const struct ks_exit_codes *ec = &c->ec;
	uint64_t vm[256], one[256], sum[256] = { 0 };
	unsigned int b;
	int i;

	for (i = 0; i < NR_VCPUS; i++) {
		exit_hist(_metadata, c->vcpu_stats[i], ec, one);
		for (b = 0; b < ec->buckets; b++)
			sum[b] += one[b];
	}
	exit_hist(_metadata, c->vm_stats, ec, vm);
	for (b = 0; b < ec->buckets; b++)
		EXPECT_EQ(sum[b], vm[b]) TH_LOG("bucket %u", b);
	EXPECT_EQ(want_cpuid, vm[ec->cpuid]);
}

TEST_F(superset, vm_sums_vcpus)
{
	struct ks_vm *vm = &self->c.vm;

	NEED_SETUP();
	check_vm_sum(_metadata, &self->c, 0);
	/* vCPU 0 runs it all, vCPU 1 the first segment, vCPU 2 nothing. */
	ASSERT_EQ(KVM_EXIT_IO, ks_vcpu_run(&vm->vcpu[0]));
	ASSERT_EQ(KVM_EXIT_IO, ks_vcpu_run(&vm->vcpu[1]));
	check_vm_sum(_metadata, &self->c, 2 * N1);
	ASSERT_EQ(KVM_EXIT_IO, ks_vcpu_run(&vm->vcpu[0]));
	ASSERT_EQ(KVM_EXIT_HLT, ks_vcpu_run(&vm->vcpu[0]));
	check_vm_sum(_metadata, &self->c, 2 * N1 + N2);
}

/* own mode: the module's stats alone, no native one. */
static void check_own_layout(struct __test_metadata *_metadata, int fd,
			     const struct ks_exit_codes *ec)
{
	const struct kvmstats_desc *d;
	uint32_t min_off = ~0u;
	struct kvmstats s;
	unsigned int i;
	off_t size;

	ASSERT_EQ(0, kvmstats_open(&s, dup(fd))) TH_LOG("%s", s.err);
	EXPECT_EQ(0, s.hdr.flags);
	EXPECT_EQ(NAME_SIZE, s.hdr.name_size);
	EXPECT_LE(1, s.hdr.num_desc);
	EXPECT_EQ(24, s.hdr.id_offset);
	EXPECT_EQ(72, s.hdr.desc_offset);
	EXPECT_EQ(72 + s.hdr.num_desc * DESC_SIZE, s.hdr.data_offset);
	d = kvmstats_find(&s, ec->stat);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(ec->buckets, d->size);
	EXPECT_EQ(1, d->bucket_size);
	EXPECT_EQ(KVM_STATS_TYPE_LINEAR_HIST, d->type);
	for (i = 0; i < s.num_desc; i++)
		if (s.descs[i].offset < min_off)
			min_off = s.descs[i].offset;
	EXPECT_EQ(0, min_off) TH_LOG("the data block starts with a hole");
	EXPECT_EQ(NULL, kvmstats_find(&s, "exits"));
	EXPECT_EQ(NULL, kvmstats_find(&s, "halt_exits"));
	EXPECT_EQ(NULL, kvmstats_find(&s, "remote_tlb_flush"));
	size = lseek(fd, 0, SEEK_END);
	EXPECT_EQ(s.hdr.data_offset + s.data_size, size);
	kvmstats_close(&s);
}

TEST_F(own, layout)
{
	char mode[32] = "", want[64];
	struct kvmstats s;
	int i;

	NEED_SETUP();
	ASSERT_EQ(0, ks_module_mode(mode, sizeof(mode)));
	EXPECT_STREQ("own", mode);
	check_own_layout(_metadata, self->c.vm_stats, &self->c.ec);
	for (i = 0; i < NR_VCPUS; i++) {
		check_own_layout(_metadata, self->c.vcpu_stats[i], &self->c.ec);
		ASSERT_EQ(0, kvmstats_open(&s, dup(self->c.vcpu_stats[i])));
		snprintf(want, sizeof(want), "kvm-%d/vcpu-%d", getpid(), i);
		EXPECT_STREQ(want, s.id);
		kvmstats_close(&s);
	}
}

/* The same counts as superset mode gives; the kernel's fd says exits. */
TEST_F(own, exit_reasons_match_native_exits)
{
	const struct ks_exit_codes *ec = &self->c.ec;
	uint64_t h[256], sum, native;
	int i;

	NEED_SETUP();
	run_all_to_hlt(_metadata, &self->c.vm);
	for (i = 0; i < NR_VCPUS; i++) {
		sum = exit_hist(_metadata, self->c.vcpu_stats[i], ec, h);
		native = stat_of(_metadata, self->c.vcpu_native[i], "exits", 0);
		EXPECT_EQ(native, sum) TH_LOG("vCPU %d", i);
		EXPECT_EQ(N1 + N2, h[ec->cpuid]);
		EXPECT_EQ(2, h[ec->io]);
		EXPECT_EQ(1, h[ec->hlt]);
		EXPECT_EQ(stat_of(_metadata, self->c.vcpu_native[i],
				  "io_exits", 0), h[ec->io]);
	}
	check_vm_sum(_metadata, &self->c, NR_VCPUS * (N1 + N2));
}

TEST_F(own, vm_read_any_offset_and_length)
{
	unsigned char *full = malloc(MAX_FILE);
	char why[256];
	ssize_t size;
	long bad;

	NEED_SETUP();
	ASSERT_NE(NULL, full);
	run_all_to_hlt(_metadata, &self->c.vm);
	/* The VM file: every value is summed at read time. */
	size = ks_read_whole(self->c.vm_stats, full, MAX_FILE);
	ASSERT_LT(0, size);
	bad = ks_sweep_reads(self->c.vm_stats, full, size, 64, why, sizeof(why));
	EXPECT_EQ(0, bad) TH_LOG("%ld reads disagree; first: %s", bad, why);
	free(full);
}

TEST_HARNESS_MAIN
