// SPDX-License-Identifier: GPL-2.0
/*
 * The stats fd kvm_statsfd.ko serves, as a file: its header and block
 * layout, the id, every descriptor, and the file operations (pread at any
 * offset and length, read, lseek, write, EOF, O_CLOEXEC, the /proc name).
 *
 * Parsing and validation go through libkvmstats, the project's one reader;
 * raw pread is used only where the test is about bytes and offsets.
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
#include "ks_harness.h"
#include "internal.h"	/* white-box: reads the handle's fields */
#include "ks_util.h"

#define NR_VCPUS	3
#define NAME_SIZE	48	/* KVM_STATS_NAME_SIZE */
#define DESC_SIZE	(16 + NAME_SIZE)
#define MAX_FILE	65536

/* CPUID exits per segment of the guest code (each ends with an OUT). */
static const unsigned int seg_cpuid[] = { 40, 25 };

FIXTURE(fd) {
	struct ks_module_state mod;
	struct ks_exit_codes ec;
	struct ks_vm vm;
	int vm_created;
	int ready;
	int vm_stats;
	int vcpu_stats[NR_VCPUS];
};

FIXTURE_SETUP(fd)
{
	unsigned char code[256];
	size_t len;
	int ret, i;

	KS_SETUP_MODULE(&self->mod, "superset");
	ks_host_exit_codes(&self->ec);

	len = ks_code_cpuid_segments(code, sizeof(code), seg_cpuid, 2);
	ASSERT_NE(0, len);
	ret = ks_vm_create(&self->vm, code, len, NR_VCPUS);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	self->vm_created = 1;

	self->vm_stats = ioctl(self->vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, self->vm_stats) TH_LOG("VM KVM_GET_STATS_FD: %s",
					    strerror(errno));
	for (i = 0; i < NR_VCPUS; i++) {
		self->vcpu_stats[i] = ioctl(self->vm.vcpu[i].fd,
					    KVM_GET_STATS_FD, 0);
		ASSERT_LE(0, self->vcpu_stats[i])
			TH_LOG("vCPU %d KVM_GET_STATS_FD: %s", i,
			       strerror(errno));
	}
	self->ready = 1;
}

FIXTURE_TEARDOWN(fd)
{
	if (self->vm_created)
		ks_vm_destroy(&self->vm);
	KS_TEARDOWN_MODULE(&self->mod);
}

/* Tests run their body even when setup skipped (6.1 harness). */
#define NEED_SETUP() do { if (!self->ready) return; } while (0)

/* Run every vCPU's guest code to its end: two OUTs, then HLT. */
static void run_guest_to_hlt(struct __test_metadata *_metadata,
			     struct ks_vm *vm)
{
	int i;

	for (i = 0; i < vm->nr_vcpus; i++) {
		ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm->vcpu[i]));
		ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm->vcpu[i]));
		ASSERT_EQ(KS_EXIT_STOP, ks_vcpu_run(&vm->vcpu[i]));
	}
}

static off_t file_size(int fd)
{
	off_t end = lseek(fd, 0, SEEK_END);

	lseek(fd, 0, SEEK_SET);
	return end;
}

/*
 * Header, block bounds and every descriptor of one stats fd, through
 * libkvmstats; then the assertions the library does not make (the layout
 * this module promises, and our own stat).
 */
static void check_format(struct __test_metadata *_metadata, int fd,
			 const struct ks_exit_codes *ec)
{
	const struct kvm_stats_header *h;
	const struct kvmstats_desc *own;
	struct kvmstats s = { 0 };
	unsigned char raw[DESC_SIZE];
	off_t size;
	unsigned int i;
	int ret;

	ret = kvmstats_open(&s, dup(fd));
	ASSERT_EQ(0, ret) TH_LOG("libkvmstats refuses the file: %s", s.err);
	h = &s.hdr;

	EXPECT_EQ(0, h->flags);
	EXPECT_EQ(NAME_SIZE, h->name_size);
	EXPECT_LT(1, h->num_desc);
	EXPECT_EQ(24, h->id_offset);
	EXPECT_EQ(72, h->desc_offset);
	EXPECT_LE(h->id_offset + h->name_size, h->desc_offset);
	EXPECT_EQ(0, h->desc_offset % 8);
	EXPECT_EQ(0, h->data_offset % 8);
	EXPECT_EQ(h->desc_offset + h->num_desc * DESC_SIZE, h->data_offset);

	/* The data block is exactly what the descriptors cover: to EOF. */
	size = file_size(fd);
	ASSERT_LT(0, size);
	EXPECT_EQ(h->data_offset + s.data_size, (size_t)size);
	EXPECT_LE(h->num_desc * 8, s.data_size);

	for (i = 0; i < s.num_desc; i++) {
		const struct kvmstats_desc *d = &s.descs[i];
		uint64_t *vals;

		EXPECT_LT(0, strlen(d->name)) TH_LOG("descriptor %u", i);
		EXPECT_GT(NAME_SIZE, strlen(d->name)) TH_LOG("%s", d->name);
		EXPECT_GE(KVM_STATS_TYPE_LOG_HIST, d->type) TH_LOG("%s", d->name);
		EXPECT_GE(KVM_STATS_UNIT_BOOLEAN, d->unit) TH_LOG("%s", d->name);
		EXPECT_GE(KVM_STATS_BASE_POW2, d->base) TH_LOG("%s", d->name);
		if (d->unit == KVM_STATS_UNIT_SECONDS) {
			EXPECT_GE(0, d->exponent) TH_LOG("%s", d->name);
		} else if (d->unit == KVM_STATS_UNIT_BOOLEAN) {
			EXPECT_EQ(0, d->exponent) TH_LOG("%s", d->name);
		} else {
			EXPECT_LE(0, d->exponent) TH_LOG("%s", d->name);
		}
		EXPECT_NE(0, d->size) TH_LOG("%s", d->name);
		if (d->type == KVM_STATS_TYPE_LINEAR_HIST) {
			EXPECT_NE(0, d->bucket_size) TH_LOG("%s", d->name);
		} else {
			EXPECT_EQ(0, d->bucket_size) TH_LOG("%s", d->name);
		}
		EXPECT_GE(s.data_size, d->offset + d->size * 8ull)
			TH_LOG("%s", d->name);

		/* Each stat's values can be read on their own. */
		vals = calloc(d->size, 8);
		ASSERT_NE(NULL, vals);
		EXPECT_EQ(d->size * 8, pread(fd, vals, d->size * 8,
					     h->data_offset + d->offset))
			TH_LOG("%s", d->name);
		free(vals);

		/* The library shows the name the bytes hold. */
		ASSERT_EQ(0, ks_pread_exact(fd, raw, sizeof(raw),
					    h->desc_offset + i * DESC_SIZE));
		EXPECT_EQ(0, strcmp((char *)raw + 16, d->name));
	}

	/* No two stats share a value. */
	for (i = 0; i < s.num_desc; i++) {
		const struct kvmstats_desc *a = &s.descs[i];
		unsigned int j;

		for (j = i + 1; j < s.num_desc; j++) {
			const struct kvmstats_desc *b = &s.descs[j];

			EXPECT_TRUE(a->offset + a->size * 8 <= b->offset ||
				    b->offset + b->size * 8 <= a->offset)
				TH_LOG("%s and %s overlap", a->name, b->name);
		}
	}

	/* Ours, shaped as promised. */
	own = ks_find(&s, ec->stat);
	ASSERT_NE(NULL, own) TH_LOG("no stat named %s", ec->stat);
	EXPECT_EQ(KVM_STATS_TYPE_LINEAR_HIST | KVM_STATS_UNIT_NONE |
		  KVM_STATS_BASE_POW10, own->flags);
	EXPECT_EQ(0, own->exponent);
	EXPECT_EQ(1, own->bucket_size);
	EXPECT_EQ(ec->buckets, own->size);
	kvmstats_close(&s);
}

TEST_F(fd, vm_format)
{
	NEED_SETUP();
	run_guest_to_hlt(_metadata, &self->vm);
	check_format(_metadata, self->vm_stats, &self->ec);
}

TEST_F(fd, vcpu_format)
{
	int i;

	NEED_SETUP();
	run_guest_to_hlt(_metadata, &self->vm);
	for (i = 0; i < NR_VCPUS; i++)
		check_format(_metadata, self->vcpu_stats[i], &self->ec);
}

/* All vCPU files share one layout: only the id and the values differ. */
TEST_F(fd, vcpu_files_share_layout)
{
	unsigned char *a, *b;
	struct kvmstats s = { 0 };
	ssize_t na, nb;
	int i;

	NEED_SETUP();
	a = malloc(MAX_FILE);
	b = malloc(MAX_FILE);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, kvmstats_open(&s, dup(self->vcpu_stats[0]))) TH_LOG("%s", s.err);
	na = ks_read_whole(self->vcpu_stats[0], a, MAX_FILE);
	for (i = 1; i < NR_VCPUS; i++) {
		nb = ks_read_whole(self->vcpu_stats[i], b, MAX_FILE);
		ASSERT_EQ(na, nb);
		EXPECT_EQ(0, memcmp(a, b, s.hdr.id_offset));
		EXPECT_EQ(0, memcmp(a + s.hdr.desc_offset, b + s.hdr.desc_offset,
				    s.hdr.data_offset - s.hdr.desc_offset));
	}
	kvmstats_close(&s);
	free(a);
	free(b);
}

static void check_id(struct __test_metadata *_metadata, int fd,
		     const char *want)
{
	char raw[NAME_SIZE + 1] = "";
	struct kvmstats s = { 0 };

	/* Upstream readers take the id at 24, whatever id_offset says. */
	ASSERT_EQ(NAME_SIZE, pread(fd, raw, NAME_SIZE, 24));
	EXPECT_GT(NAME_SIZE, strnlen(raw, NAME_SIZE));
	EXPECT_STREQ(want, raw);

	ASSERT_EQ(0, kvmstats_open(&s, dup(fd))) TH_LOG("%s", s.err);
	EXPECT_EQ(24, s.hdr.id_offset);
	EXPECT_STREQ(want, s.id);
	kvmstats_close(&s);
}

TEST_F(fd, ids)
{
	char want[64];
	int i;

	NEED_SETUP();
	snprintf(want, sizeof(want), "kvm-%d", getpid());
	check_id(_metadata, self->vm_stats, want);
	for (i = 0; i < NR_VCPUS; i++) {
		snprintf(want, sizeof(want), "kvm-%d/vcpu-%d", getpid(), i);
		check_id(_metadata, self->vcpu_stats[i], want);
	}
}

/*
 * With the VM stopped nothing changes, so every pread of any offset and
 * length must return the same bytes as one read of the whole file.
 */
static void sweep(struct __test_metadata *_metadata, int fd, size_t max_len)
{
	unsigned char *full = malloc(MAX_FILE);
	char why[256];
	ssize_t size;
	long bad;

	ASSERT_NE(NULL, full);
	size = ks_read_whole(fd, full, MAX_FILE);
	ASSERT_LT(0, size);
	ASSERT_EQ(file_size(fd), size);
	bad = ks_sweep_reads(fd, full, size, max_len, why, sizeof(why));
	EXPECT_EQ(0, bad) TH_LOG("%ld reads disagree; first: %s", bad, why);
	free(full);
}

TEST_F(fd, vcpu_read_any_offset_and_length)
{
	NEED_SETUP();
	run_guest_to_hlt(_metadata, &self->vm);
	sweep(_metadata, self->vcpu_stats[1], 64);
}

TEST_F(fd, vm_read_any_offset_and_length)
{
	NEED_SETUP();
	run_guest_to_hlt(_metadata, &self->vm);
	sweep(_metadata, self->vm_stats, 64);
}

/* read() walks the file from its position: 7 bytes at a time, then EOF. */
TEST_F(fd, sequential_read)
{
	unsigned char *full = malloc(MAX_FILE), *seq = malloc(MAX_FILE);
	ssize_t size, n, done = 0;
	int fd;

	NEED_SETUP();
	ASSERT_NE(NULL, full);
	ASSERT_NE(NULL, seq);
	run_guest_to_hlt(_metadata, &self->vm);
	fd = self->vcpu_stats[0];
	size = ks_read_whole(fd, full, MAX_FILE);
	ASSERT_LT(0, size);
	while ((n = read(fd, seq + done, 7)) > 0) {
		done += n;
		ASSERT_GE(size, done);
	}
	EXPECT_EQ(0, n);
	EXPECT_EQ(size, done);
	EXPECT_EQ(0, memcmp(full, seq, size));
	EXPECT_EQ(size, lseek(fd, 0, SEEK_CUR));
	free(full);
	free(seq);
}

TEST_F(fd, lseek)
{
	uint64_t want, got;
	struct kvmstats s = { 0 };
	off_t size;
	int fd;

	NEED_SETUP();
	run_guest_to_hlt(_metadata, &self->vm);
	fd = self->vcpu_stats[0];
	ASSERT_EQ(0, kvmstats_open(&s, dup(fd))) TH_LOG("%s", s.err);
	size = s.hdr.data_offset + s.data_size;

	EXPECT_EQ(size, lseek(fd, 0, SEEK_END));
	EXPECT_EQ(0, read(fd, &got, 8));
	EXPECT_EQ(size - 8, lseek(fd, -8, SEEK_END));
	ASSERT_EQ(8, read(fd, &got, 8));
	EXPECT_EQ(s.data[s.data_size / 8 - 1], got);
	EXPECT_EQ(size, lseek(fd, 0, SEEK_CUR));

	/* SEEK_SET to the data block, read the first value, SEEK_CUR on. */
	EXPECT_EQ(s.hdr.data_offset, lseek(fd, s.hdr.data_offset, SEEK_SET));
	ASSERT_EQ(8, read(fd, &got, 8));
	EXPECT_EQ(s.data[0], got);
	EXPECT_EQ(s.hdr.data_offset + 8, lseek(fd, 0, SEEK_CUR));
	EXPECT_EQ(s.hdr.data_offset + 24, lseek(fd, 16, SEEK_CUR));
	ASSERT_EQ(8, read(fd, &got, 8));
	EXPECT_EQ(s.data[3], got);
	EXPECT_EQ(s.hdr.data_offset + 16, lseek(fd, -16, SEEK_CUR));
	ASSERT_EQ(8, read(fd, &got, 8));
	EXPECT_EQ(s.data[2], got);

	/* The header again, from the start. */
	EXPECT_EQ(0, lseek(fd, 0, SEEK_SET));
	ASSERT_EQ(8, read(fd, &got, 8));
	memcpy(&want, &s.hdr, 8);
	EXPECT_EQ(want, got);

	/* Before the start is refused and leaves the position alone. */
	EXPECT_EQ(-1, lseek(fd, -1, SEEK_SET));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, lseek(fd, -(size + 1), SEEK_END));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(8, lseek(fd, 0, SEEK_CUR));

	/* pread neither uses nor moves the position. */
	ASSERT_EQ(8, pread(fd, &got, 8, s.hdr.data_offset + 8));
	EXPECT_EQ(s.data[1], got);
	EXPECT_EQ(8, lseek(fd, 0, SEEK_CUR));
	kvmstats_close(&s);
}

TEST_F(fd, write_is_ebadf)
{
	char buf[8] = "";
	int i, fds[] = { self->vm_stats, self->vcpu_stats[0] };

	NEED_SETUP();
	for (i = 0; i < 2; i++) {
		EXPECT_EQ(-1, write(fds[i], buf, sizeof(buf)));
		EXPECT_EQ(EBADF, errno);
		/* No FMODE_PWRITE, as upstream: ESPIPE comes first. */
		EXPECT_EQ(-1, pwrite(fds[i], buf, sizeof(buf), 0));
		EXPECT_TRUE(errno == EBADF || errno == ESPIPE)
			TH_LOG("pwrite: %s", strerror(errno));
		EXPECT_EQ(O_RDONLY, fcntl(fds[i], F_GETFL) & O_ACCMODE);
	}
}

TEST_F(fd, eof)
{
	unsigned char buf[256], full[64];
	off_t size;
	int i, fds[] = { self->vm_stats, self->vcpu_stats[2] };

	NEED_SETUP();
	for (i = 0; i < 2; i++) {
		size = file_size(fds[i]);
		ASSERT_LT(64, size);
		ASSERT_EQ(0, ks_pread_exact(fds[i], full, 64, size - 64));

		EXPECT_EQ(0, pread(fds[i], buf, sizeof(buf), size));
		EXPECT_EQ(0, pread(fds[i], buf, sizeof(buf), size + 1));
		EXPECT_EQ(0, pread(fds[i], buf, sizeof(buf), size + 4096));
		EXPECT_EQ(0, pread(fds[i], buf, 1, 1ll << 40));
		EXPECT_EQ(1, pread(fds[i], buf, sizeof(buf), size - 1));
		EXPECT_EQ(full[63], buf[0]);
		EXPECT_EQ(5, pread(fds[i], buf, sizeof(buf), size - 5));
		EXPECT_EQ(0, memcmp(buf, full + 59, 5));
		EXPECT_EQ(64, pread(fds[i], buf, 65, size - 64));
		EXPECT_EQ(0, pread(fds[i], buf, 0, 0));
		EXPECT_EQ(-1, pread(fds[i], buf, 8, -8));
		EXPECT_EQ(EINVAL, errno);
	}
}

TEST_F(fd, cloexec)
{
	int i, flags;

	NEED_SETUP();
	flags = fcntl(self->vm_stats, F_GETFD);
	ASSERT_LE(0, flags);
	EXPECT_TRUE(flags & FD_CLOEXEC);
	for (i = 0; i < NR_VCPUS; i++) {
		flags = fcntl(self->vcpu_stats[i], F_GETFD);
		ASSERT_LE(0, flags);
		EXPECT_TRUE(flags & FD_CLOEXEC);
	}
}

static void check_link(struct __test_metadata *_metadata, int fd,
		       const char *want)
{
	char path[64], target[256];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	ASSERT_LT(0, n) TH_LOG("readlink %s: %s", path, strerror(errno));
	target[n] = '\0';
	EXPECT_STREQ(want, target);
}

TEST_F(fd, proc_fd_names)
{
	char want[64];
	int i;

	NEED_SETUP();
	check_link(_metadata, self->vm_stats, "anon_inode:kvm-vm-stats");
	for (i = 0; i < NR_VCPUS; i++) {
		snprintf(want, sizeof(want), "anon_inode:kvm-vcpu-stats:%d", i);
		check_link(_metadata, self->vcpu_stats[i], want);
	}
}

/* Each KVM_GET_STATS_FD is a new file with its own position. */
TEST_F(fd, independent_fds)
{
	int a = self->vcpu_stats[0], b;
	struct kvmstats sa = { 0 }, sb = { 0 };

	NEED_SETUP();
	b = ioctl(self->vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, b);
	EXPECT_NE(a, b);
	EXPECT_EQ(100, lseek(a, 100, SEEK_SET));
	EXPECT_EQ(0, lseek(b, 0, SEEK_CUR));

	run_guest_to_hlt(_metadata, &self->vm);
	ASSERT_EQ(0, kvmstats_open(&sa, dup(a))) TH_LOG("%s", sa.err);
	ASSERT_EQ(0, kvmstats_open(&sb, b)) TH_LOG("%s", sb.err);
	ASSERT_EQ(sa.data_size, sb.data_size);
	EXPECT_EQ(0, memcmp(sa.data, sb.data, sa.data_size));
	kvmstats_close(&sa);
	kvmstats_close(&sb);
}

/* The module answers VM and vCPU fds only; /dev/kvm still says EINVAL. */
TEST_F(fd, dev_kvm_has_no_stats_fd)
{
	NEED_SETUP();
	EXPECT_EQ(-1, ioctl(self->vm.kvm_fd, KVM_GET_STATS_FD, 0));
	EXPECT_EQ(EINVAL, errno);
}

TEST_HARNESS_MAIN
