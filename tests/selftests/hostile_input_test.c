// SPDX-License-Identifier: GPL-2.0
/*
 * Hostile input to the stats fd and to the ioctl the module diverts.
 *
 *  every_range_matches_full_read: byte ranges of the VM and vCPU files
 *    against one full read: every suffix, every prefix, every pair of
 *    block boundaries (+-0, 1, 7, 8), every descriptor and stat boundary
 *    with lengths 1..16 and a few large ones, random ranges, and huge
 *    lengths (the rest of the file, or EFAULT when the buffer cannot
 *    hold the length: the VFS checks that first); readv/preadv of many
 *    tiny iovecs.
 *  lseek_hostile: negative, past-the-end and overflowing offsets for each
 *    whence, unknown whence values: EINVAL, and the position unchanged.
 *  pread_hostile_offsets: negative offsets (EINVAL), offsets whose end
 *    overflows (EINVAL), offsets far past the end (0).
 *  zero_length_reads: always 0, even with NULL buffers and past the end;
 *    the position does not move.
 *  bad_buffers: NULL, unmapped, read-only and kernel addresses: EFAULT,
 *    and read() leaves the position alone.
 *  partially_unmapped_buffer: a buffer whose second page is unmapped, at
 *    every block of the file: EFAULT or a short count whose bytes are
 *    right, never more than fits; never a crash.
 *  get_stats_fd_ignores_arg: KVM_GET_STATS_FD with any argument works (the
 *    argument is ignored, as upstream), also with garbage in the upper 32
 *    bits of the command.
 *  other_ioctls_untouched: other ioctls with garbage arguments give the
 *    same result with the module loaded as without it.
 *  stats_fd_file_ops: mmap is ENODEV on a VM file; a vCPU file maps its
 *    own stats read-only (never writable or executable: mmap_test checks
 *    the mapping); write EBADF, any ioctl on the stats fd ENOTTY.
 *  no_uninitialised_bytes: the header's reserved flags, the id's and every
 *    name's unused tail are zero; no data byte outside a descriptor is
 *    non-zero; bucket_size is 0 except for linear histograms; a fresh
 *    vCPU's and VM's own values are all zero.
 *
 * Each runs in superset mode and in own mode (variants).  The VM is stopped
 * when files are compared, so their bytes hold still.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ks_harness.h"
#include "internal.h"	/* white-box: reads the handle's fields */
#include "ks_util.h"

#define NR_VCPUS	2
#define MAX_FILE	65536
#define NAME_SIZE	48
#define DESC_SIZE	(16 + NAME_SIZE)

static const unsigned int seg_cpuid[] = { 33 };

FIXTURE(hostile) {
	struct ks_module_state mod;
	struct ks_vm vm;
	int vm_created;
	int ready;
	int fds[2];		/* VM, vCPU 0 */
	unsigned char *full[2];
	ssize_t size[2];
};

FIXTURE_VARIANT(hostile) {
	const char *mode;
};

FIXTURE_VARIANT_ADD(hostile, superset) { .mode = "superset" };
FIXTURE_VARIANT_ADD(hostile, own) { .mode = "own" };

FIXTURE_SETUP(hostile)
{
	unsigned char code[64];
	size_t len;
	int ret, i;

	KS_SETUP_MODULE(&self->mod, variant->mode);
	len = ks_code_cpuid_segments(code, sizeof(code), seg_cpuid, 1);
	ASSERT_NE(0, len);
	ret = ks_vm_create(&self->vm, code, len, NR_VCPUS);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	self->vm_created = 1;
	/* Stats fds first (PREEMPT_RT counts from then), then run to HLT. */
	self->fds[0] = ioctl(self->vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, self->fds[0]);
	self->fds[1] = ioctl(self->vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, self->fds[1]);
	for (i = 0; i < NR_VCPUS; i++) {
		ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&self->vm.vcpu[i]));
		ASSERT_EQ(KS_EXIT_STOP, ks_vcpu_run(&self->vm.vcpu[i]));
	}
	for (i = 0; i < 2; i++) {
		self->full[i] = malloc(MAX_FILE);
		ASSERT_NE(NULL, self->full[i]);
		self->size[i] = ks_read_whole(self->fds[i], self->full[i], MAX_FILE);
		ASSERT_LT(0, self->size[i]);
		ASSERT_GT(MAX_FILE, self->size[i]);
		ASSERT_EQ(self->size[i], lseek(self->fds[i], 0, SEEK_END));
		ASSERT_EQ(0, lseek(self->fds[i], 0, SEEK_SET));
	}
	self->ready = 1;
}

FIXTURE_TEARDOWN(hostile)
{
	if (self->vm_created)
		ks_vm_destroy(&self->vm);
	free(self->full[0]);
	free(self->full[1]);
	KS_TEARDOWN_MODULE(&self->mod);
}

#define NEED_SETUP() do { if (!self->ready) return; } while (0)

static const char *const kind[] = { "VM", "vCPU" };

/* Counts reads that disagree with the full read; keeps the first. */
struct tally {
	long reads, bad;
	char why[256];
};

static unsigned char rbuf[MAX_FILE + 4096];

static void check_range(struct tally *t, int fd, const unsigned char *full,
			size_t size, size_t off, size_t len)
{
	size_t want = off >= size ? 0 : size - off < len ? size - off : len;
	ssize_t n;

	t->reads++;
	if (want < sizeof(rbuf))
		rbuf[want] = 0x5a;
	n = pread(fd, rbuf, len, off);
	if (n == (ssize_t)want && !memcmp(rbuf, full + off, want) &&
	    (want >= sizeof(rbuf) || rbuf[want] == 0x5a))
		return;
	if (!t->bad++)
		snprintf(t->why, sizeof(t->why),
			 "pread(len %zu, off %zu) = %zd (%s), want %zu",
			 len, off, n, n < 0 ? strerror(errno) : "wrong bytes",
			 want);
}

/* The points where the file's blocks, descriptors and stats begin. */
static void boundaries(struct __test_metadata *_metadata, int fd,
		      size_t *blk, int *nblk, size_t *pt, int *npt, size_t cap)
{
	struct kvmstats s = { 0 };
	unsigned int i;

	ASSERT_EQ(0, kvmstats_open(&s, dup(fd))) TH_LOG("%s", s.err);
	*nblk = 0;
	*npt = 0;
	blk[(*nblk)++] = 0;
	blk[(*nblk)++] = s.hdr.id_offset;
	blk[(*nblk)++] = s.hdr.id_offset + strlen(s.id) + 1;
	blk[(*nblk)++] = s.hdr.desc_offset;
	blk[(*nblk)++] = s.hdr.data_offset;
	for (i = 0; i < s.num_desc && *npt + 2 < (int)cap; i++) {
		const struct kvmstats_desc *d = &s.descs[i];

		pt[(*npt)++] = s.hdr.desc_offset + i * DESC_SIZE;
		pt[(*npt)++] = s.hdr.desc_offset + i * DESC_SIZE + 16;
		pt[(*npt)++] = s.hdr.data_offset + d->offset;
	}
	/* The module's block follows the native one. */
	for (i = 0; i < s.num_desc; i++)
		if (s.descs[i].type == KVM_STATS_TYPE_LINEAR_HIST &&
		    !strncmp(s.descs[i].name, "exit_reasons_", 13))
			blk[(*nblk)++] = s.hdr.data_offset + s.descs[i].offset;
	blk[(*nblk)++] = s.hdr.data_offset + s.data_size;
	kvmstats_close(&s);
}

static void sweep(struct __test_metadata *_metadata, int fd,
		  const unsigned char *full, size_t size, const char *what)
{
	static const long delta[] = { -9, -8, -7, -1, 0, 1, 7, 8, 9 };
	static const size_t big[] = { 63, 64, 65, 127, 4096, 65536 };
	size_t blk[16], pt[1024], pts[16 * 9];
	int nblk, npt, npts = 0, i, j, k;
	struct tally t = { 0 };
	uint64_t rs = 0x1234567 ^ size;
	size_t off, len;

	boundaries(_metadata, fd, blk, &nblk, pt, &npt, 1024);

	/* Every suffix and every prefix. */
	for (off = 0; off <= size + 1; off++)
		check_range(&t, fd, full, size, off, size + 1 - off);
	for (len = 0; len <= size + 1; len++)
		check_range(&t, fd, full, size, 0, len);

	/* Every pair of points near block boundaries. */
	for (i = 0; i < nblk; i++)
		for (j = 0; j < 9; j++) {
			long p = (long)blk[i] + delta[j];

			if (p >= 0 && p <= (long)size + 9)
				pts[npts++] = p;
		}
	for (i = 0; i < npts; i++)
		for (j = 0; j < npts; j++)
			if (pts[j] >= pts[i])
				check_range(&t, fd, full, size, pts[i], pts[j] - pts[i]);

	/* Around every descriptor and stat: short and long reads. */
	for (i = 0; i < npt; i++)
		for (k = -8; k <= 8; k += 8) {
			long p = (long)pt[i] + k;

			if (p < 0)
				continue;
			for (len = 1; len <= 16; len++)
				check_range(&t, fd, full, size, p, len);
			for (j = 0; j < 6; j++)
				check_range(&t, fd, full, size, p, big[j]);
		}

	/* Random ranges, some past the end. */
	for (i = 0; i < 20000; i++) {
		uint64_t r = ks_rnd(&rs);

		check_range(&t, fd, full, size, r % (size + 16),
			    (r >> 24) % 3 ? (r >> 32) % 128 : (r >> 32) % (size + 16));
	}
	EXPECT_EQ(0, t.bad) TH_LOG("%s file: %ld of %ld reads disagree with the full read; first: %s",
				   what, t.bad, t.reads, t.why);
}

static void huge_lengths(struct __test_metadata *_metadata, int fd,
			 const unsigned char *full, size_t size)
{
	/* x86-64 user addresses end below 1 << 47. */
	const uintptr_t user_end = (1ull << 47) - 4096;
	unsigned char *buf = rbuf;
	volatile size_t lens[] = { 1ull << 31, 1ull << 32, 1ull << 40,
			  user_end - (uintptr_t)buf - (1 << 20) };
	size_t offs[] = { 0, 1, 8, 24, 72, size - 1, size };
	unsigned int i, j;
	ssize_t n;

	ASSERT_GT(user_end - (1ull << 41), (uintptr_t)buf)
		TH_LOG("buffer too high for the huge-length reads: %p", buf);
	/* The VFS checks that the buffer can hold len; then a short read. */
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		for (j = 0; j < sizeof(offs) / sizeof(offs[0]); j++) {
			n = pread(fd, buf, lens[i], offs[j]);
			EXPECT_EQ((ssize_t)(size - offs[j]), n)
				TH_LOG("pread(len %#zx, off %zu): %s", lens[i],
				       offs[j], n < 0 ? strerror(errno) : "");
			if (n > 0)
				EXPECT_EQ(0, memcmp(buf, full + offs[j], n));
		}
	/* Lengths no buffer can hold: refused before the module sees them. */
	for (j = 0; j < sizeof(offs) / sizeof(offs[0]); j++) {
		size_t bad[] = { SIZE_MAX, SIZE_MAX / 2 + 1, SIZE_MAX / 2,
				 1ull << 57 };

		for (i = 0; i < 4; i++) {
			n = pread(fd, buf, bad[i], offs[j]);
			EXPECT_EQ(-1, n) TH_LOG("pread(%p, len %#zx, off %zu)",
						buf, bad[i], offs[j]);
			EXPECT_TRUE(errno == EFAULT || errno == EINVAL)
				TH_LOG("pread(len %#zx): %s", bad[i], strerror(errno));
		}
	}
	/* read() too: from the position, which ends at EOF. */
	ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	n = read(fd, buf, lens[2]);
	EXPECT_EQ((ssize_t)size, n);
	EXPECT_EQ((off_t)size, lseek(fd, 0, SEEK_CUR));
	EXPECT_EQ(0, read(fd, buf, lens[2]));
	ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
}

/* readv/preadv with many tiny iovecs: the module's read, once per iovec. */
static void vectored(struct __test_metadata *_metadata, int fd,
		     const unsigned char *full, size_t size)
{
	static unsigned char vbuf[MAX_FILE];
	struct iovec iov[1024];
	size_t off = 0, start;
	int n, i;
	ssize_t got;

	for (start = 0; start < size; start += 997) {
		size_t total = 0;

		for (n = 0; n < 1024; n++) {
			iov[n].iov_base = vbuf + total;
			iov[n].iov_len = 1 + (n * 7 + start) % 13;
			total += iov[n].iov_len;
		}
		got = preadv(fd, iov, n, start);
		EXPECT_EQ((ssize_t)(size - start < total ? size - start : total), got);
		if (got > 0)
			EXPECT_EQ(0, memcmp(vbuf, full + start, got))
				TH_LOG("preadv at %zu", start);
	}
	/* readv from the position to EOF. */
	ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	while (off < size) {
		for (i = 0; i < 64; i++) {
			iov[i].iov_base = vbuf + off + i * 5;
			iov[i].iov_len = 5;
		}
		got = readv(fd, iov, 64);
		ASSERT_LT(0, got);
		off += got;
	}
	EXPECT_EQ(size, off);
	EXPECT_EQ(0, memcmp(vbuf, full, size));
	EXPECT_EQ(0, readv(fd, iov, 64));
	ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
}

TEST_F_TIMEOUT(hostile, every_range_matches_full_read, 300)
{
	int i;

	NEED_SETUP();
	for (i = 0; i < 2; i++) {
		sweep(_metadata, self->fds[i], self->full[i], self->size[i], kind[i]);
		huge_lengths(_metadata, self->fds[i], self->full[i], self->size[i]);
		vectored(_metadata, self->fds[i], self->full[i], self->size[i]);
	}
}

TEST_F(hostile, lseek_hostile)
{
	int i;

	NEED_SETUP();
	for (i = 0; i < 2; i++) {
		int fd = self->fds[i];
		off_t size = self->size[i];
		struct { off_t off; int whence; } bad[] = {
			{ -1, SEEK_SET }, { LLONG_MIN, SEEK_SET },
			{ size + 1, SEEK_SET }, { LLONG_MAX, SEEK_SET },
			{ -9, SEEK_CUR }, { LLONG_MIN, SEEK_CUR },
			{ LLONG_MAX, SEEK_CUR }, { LLONG_MAX - 4, SEEK_CUR },
			{ size, SEEK_CUR },
			{ 1, SEEK_END }, { -size - 1, SEEK_END },
			{ LLONG_MIN, SEEK_END }, { LLONG_MAX, SEEK_END },
			{ 0, 5 }, { 0, 100 }, { 0, -1 }, { 8, INT_MAX },
			/* fixed_size_llseek() knows only these three. */
			{ 16, SEEK_DATA }, { 16, SEEK_HOLE },
		};
		unsigned int j;

		/* From position 8, every bad seek leaves it there. */
		for (j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
			ASSERT_EQ(8, lseek(fd, 8, SEEK_SET));
			errno = 0;
			EXPECT_EQ(-1, lseek(fd, bad[j].off, bad[j].whence))
				TH_LOG("%s: lseek(%jd, %d)", kind[i],
				       (intmax_t)bad[j].off, bad[j].whence);
			EXPECT_EQ(EINVAL, errno) TH_LOG("%s: lseek(%jd, %d): %s",
				kind[i], (intmax_t)bad[j].off, bad[j].whence,
				strerror(errno));
			EXPECT_EQ(8, lseek(fd, 0, SEEK_CUR));
		}
		/* The edges that are allowed. */
		EXPECT_EQ(size, lseek(fd, size, SEEK_SET));
		EXPECT_EQ(0, read(fd, rbuf, 16));
		EXPECT_EQ(0, lseek(fd, -size, SEEK_END));
		EXPECT_EQ(size, lseek(fd, size, SEEK_CUR));
		EXPECT_EQ(0, lseek(fd, -size, SEEK_CUR));
		ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	}
}

TEST_F(hostile, pread_hostile_offsets)
{
	int i;

	NEED_SETUP();
	for (i = 0; i < 2; i++) {
		int fd = self->fds[i];
		off_t size = self->size[i];
		off_t neg[] = { -1, -8, -size, LLONG_MIN, LLONG_MIN + 1 };
		unsigned int j;

		for (j = 0; j < sizeof(neg) / sizeof(neg[0]); j++) {
			errno = 0;
			EXPECT_EQ(-1, pread(fd, rbuf, 8, neg[j]));
			EXPECT_EQ(EINVAL, errno) TH_LOG("%s: pread at %jd: %s",
				kind[i], (intmax_t)neg[j], strerror(errno));
			EXPECT_EQ(-1, pread(fd, rbuf, 0, neg[j]));
			EXPECT_EQ(EINVAL, errno);
		}
		/* pos + len overflows a loff_t: the VFS says EINVAL. */
		EXPECT_EQ(-1, pread(fd, rbuf, 16, LLONG_MAX - 8));
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(-1, pread(fd, rbuf, 1, LLONG_MAX));
		EXPECT_EQ(EINVAL, errno);
		/* Far past the end, not overflowing: EOF. */
		EXPECT_EQ(0, pread(fd, rbuf, 1, LLONG_MAX - 1));
		EXPECT_EQ(0, pread(fd, rbuf, 0, LLONG_MAX));
		EXPECT_EQ(0, pread(fd, rbuf, 16, 1ll << 62));
		EXPECT_EQ(0, pread(fd, rbuf, 16, (off_t)UINT_MAX + 1));
		EXPECT_EQ(0, pread(fd, rbuf, 16, (off_t)UINT_MAX + 24));
		EXPECT_EQ(0, pread(fd, rbuf, 16, size));
		/* 4 GiB + 8 is not offset 8 (no 32-bit truncation). */
		EXPECT_EQ(0, pread(fd, rbuf, 8, (1ll << 32) + 8));
	}
}

TEST_F(hostile, zero_length_reads)
{
	int i;

	NEED_SETUP();
	for (i = 0; i < 2; i++) {
		int fd = self->fds[i];
		off_t size = self->size[i];
		off_t offs[] = { 0, 1, 23, 24, 72, size - 1, size, size + 100 };
		unsigned int j;

		for (j = 0; j < sizeof(offs) / sizeof(offs[0]); j++) {
			EXPECT_EQ(0, pread(fd, NULL, 0, offs[j]));
			EXPECT_EQ(0, pread(fd, (void *)1, 0, offs[j]));
			EXPECT_EQ(0, pread(fd, rbuf, 0, offs[j]));
		}
		ASSERT_EQ(40, lseek(fd, 40, SEEK_SET));
		EXPECT_EQ(0, read(fd, NULL, 0));
		EXPECT_EQ(0, read(fd, rbuf, 0));
		EXPECT_EQ(40, lseek(fd, 0, SEEK_CUR));
		ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	}
}

TEST_F(hostile, bad_buffers)
{
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *none, *ro, *gone;
	int i;

	NEED_SETUP();
	none = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, none);
	ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	gone = mmap(NULL, page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, gone);
	ASSERT_EQ(0, munmap(gone, page));

	for (i = 0; i < 2; i++) {
		int fd = self->fds[i];
		off_t size = self->size[i];
		void *bufs[] = { NULL, (void *)8, none, ro, gone,
				 (void *)0xffffffff81000000ull,
				 (void *)0xffff888000000000ull,
				 (void *)(1ull << 47), (void *)-1ll };
		off_t offs[] = { 0, 24, 72, size - 8 };
		unsigned int b, o;

		for (b = 0; b < sizeof(bufs) / sizeof(bufs[0]); b++)
			for (o = 0; o < sizeof(offs) / sizeof(offs[0]); o++) {
				errno = 0;
				EXPECT_EQ(-1, pread(fd, bufs[b], 8, offs[o]))
					TH_LOG("%s: pread to %p", kind[i], bufs[b]);
				EXPECT_EQ(EFAULT, errno) TH_LOG("%s: pread to %p at %jd: %s",
					kind[i], bufs[b], (intmax_t)offs[o], strerror(errno));
				/* read() fails the same and leaves the position. */
				ASSERT_EQ(offs[o], lseek(fd, offs[o], SEEK_SET));
				EXPECT_EQ(-1, read(fd, bufs[b], 8));
				EXPECT_EQ(EFAULT, errno);
				EXPECT_EQ(offs[o], lseek(fd, 0, SEEK_CUR));
			}
		/* A whole-file read into a NULL buffer. */
		EXPECT_EQ(-1, pread(fd, NULL, size, 0));
		EXPECT_EQ(EFAULT, errno);
		ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	}
	munmap(none, page);
	munmap(ro, page);
}

/*
 * Buffers whose second page is unmapped, with 0..k bytes of room, at every
 * block of the file (header, id, descriptors, native data, own data: each a
 * different copy in the module; the VM's own block goes through a bounce
 * buffer).  The module returns EFAULT for a read that faults; a short count
 * would be as sane, as long as what it counts is right.
 */
TEST_F(hostile, partially_unmapped_buffer)
{
	long page = sysconf(_SC_PAGESIZE);
	long efault = 0, shorts = 0;
	unsigned char *two;
	int i;

	NEED_SETUP();
	two = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, two);
	ASSERT_EQ(0, munmap(two + page, page));

	for (i = 0; i < 2; i++) {
		int fd = self->fds[i];
		size_t size = self->size[i];
		size_t room[] = { 0, 1, 7, 8, 9, 63, 64, 100, 1000, 4095 };
		size_t off;
		unsigned int r;

		for (off = 0; off < size; off += off < 200 ? 1 : 37)
			for (r = 0; r < sizeof(room) / sizeof(room[0]); r++) {
				unsigned char *buf = two + page - room[r];
				size_t len = room[r] + 1 + (off % 5000);
				ssize_t n;

				if (off + room[r] >= size)
					continue;	/* would not fault */
				memset(buf, 0xee, room[r]);
				errno = 0;
				n = pread(fd, buf, len, off);
				if (n < 0) {
					EXPECT_EQ(EFAULT, errno);
					efault++;
					continue;
				}
				shorts++;
				EXPECT_GE((ssize_t)room[r], n)
					TH_LOG("%s: %zd bytes into %zu of room", kind[i], n, room[r]);
				if (n > 0 && n <= (ssize_t)room[r])
					EXPECT_EQ(0, memcmp(buf, self->full[i] + off, n));
			}
		/* read(): EFAULT leaves the position; a short count moves it. */
		ASSERT_EQ(100, lseek(fd, 100, SEEK_SET));
		if (read(fd, two + page - 16, 64) < 0) {
			EXPECT_EQ(EFAULT, errno);
			EXPECT_EQ(100, lseek(fd, 0, SEEK_CUR));
		} else {
			EXPECT_GE(116, lseek(fd, 0, SEEK_CUR));
		}
		ASSERT_EQ(0, lseek(fd, 0, SEEK_SET));
	}
	TH_LOG("%ld reads failed with EFAULT, %ld returned a short count",
	       efault, shorts);
	munmap(two, page);
}

/* The fixed part of a stats fd (header, id, descriptors). */
static int fixed_part(int fd, unsigned char *buf, size_t cap)
{
	struct kvm_stats_header h;

	if (ks_pread_exact(fd, &h, sizeof(h), 0) || h.data_offset > cap)
		return -1;
	return ks_pread_exact(fd, buf, h.data_offset, 0) ? -1 : (int)h.data_offset;
}

TEST_F(hostile, get_stats_fd_ignores_arg)
{
	static unsigned char want[MAX_FILE], got[MAX_FILE];
	unsigned long args[] = {
		0, 1, 2, 0xce, ~0ul, 0x7fffffffffffffff, 0x8000000000000000,
		0xdeadbeef, 0xffffffff81000000, (unsigned long)rbuf,
		(unsigned long)&args, 4096,
	};
	uint64_t rs = 0xabcdef;
	int i, src, fd, wl, gl;
	unsigned int a;

	NEED_SETUP();
	for (i = 0; i < 2; i++) {
		src = i ? self->vm.vcpu[0].fd : self->vm.fd;
		wl = fixed_part(self->fds[i], want, sizeof(want));
		ASSERT_LT(0, wl);
		for (a = 0; a < sizeof(args) / sizeof(args[0]) + 32; a++) {
			unsigned long arg = a < sizeof(args) / sizeof(args[0]) ?
					    args[a] : ks_rnd(&rs);

			fd = ioctl(src, KVM_GET_STATS_FD, arg);
			ASSERT_LE(0, fd) TH_LOG("%s: KVM_GET_STATS_FD(%#lx): %s",
						kind[i], arg, strerror(errno));
			gl = fixed_part(fd, got, sizeof(got));
			EXPECT_EQ(wl, gl);
			EXPECT_EQ(0, memcmp(want, got, wl));
			close(fd);
		}
		/*
		 * The command is an unsigned int: garbage above bit 31 of the
		 * register is dropped by the syscall, so it is still ours.
		 */
		fd = syscall(SYS_ioctl, src, 0xdeadbeef00000000ul | KVM_GET_STATS_FD,
			     ks_rnd(&rs));
		ASSERT_LE(0, fd) TH_LOG("%s: %s", kind[i], strerror(errno));
		gl = fixed_part(fd, got, sizeof(got));
		EXPECT_EQ(wl, gl);
		EXPECT_EQ(0, memcmp(want, got, wl));
		close(fd);
	}
}

/* Result of an ioctl as "ret/errno", for comparing two runs. */
struct outcome {
	long ret;
	int err;
};

static void probe_ioctls(struct ks_vm *vm, struct outcome *out, int *n)
{
	long page = sysconf(_SC_PAGESIZE);
	void *gone = mmap(NULL, page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct { int vcpu; unsigned long cmd; unsigned long arg; } c[] = {
		/* Near-misses of KVM_GET_STATS_FD: other commands to KVM. */
		{ 0, _IOR(KVMIO, 0xce, int), 0 },
		{ 1, _IOR(KVMIO, 0xce, int), 0 },
		{ 0, _IOW(KVMIO, 0xce, long), 0 },
		{ 1, _IOWR(KVMIO, 0xce, char[1234]), 0 },
		{ 0, _IO(KVMIO, 0xcf), 0 },
		{ 1, _IO(KVMIO, 0xcd), 0 },
		{ 0, _IO(0xaf, 0xce), 0 },
		{ 1, _IO(0xaf, 0xce), 0 },
		/* Real commands with garbage pointers. */
		{ 1, KVM_GET_REGS, 0 },
		{ 1, KVM_GET_REGS, (unsigned long)gone },
		{ 1, KVM_GET_SREGS, 0xffffffff81000000ul },
		{ 0, KVM_CHECK_EXTENSION, 0xdeadbeef },
		{ 0, KVM_CHECK_EXTENSION, ~0ul },
		{ 0, KVM_SET_USER_MEMORY_REGION, 0 },
		{ 0, KVM_GET_DIRTY_LOG, (unsigned long)gone },
		{ 1, KVM_GET_ONE_REG, 0 },
		{ 0, 0xffffffff, 0 },
		{ 1, 0, 0 },
	};
	unsigned int i;

	munmap(gone, page);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int fd = c[i].vcpu ? vm->vcpu[0].fd : vm->fd;

		errno = 0;
		out[i].ret = ioctl(fd, c[i].cmd, c[i].arg);
		out[i].err = out[i].ret < 0 ? errno : 0;
	}
	*n = i;
}

TEST_F(hostile, other_ioctls_untouched)
{
	struct outcome with[32], without[32];
	struct ks_vm vm;
	int n1, n2, i, ret;

	NEED_SETUP();
	/* Our stats fds would hold the module. */
	close(self->fds[0]);
	close(self->fds[1]);
	probe_ioctls(&self->vm, with, &n1);
	ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
	ASSERT_EQ(0, ret) TH_LOG("rmmod: %s (stats fds are open?)", strerror(-ret));
	probe_ioctls(&self->vm, without, &n2);
	ASSERT_EQ(n1, n2);
	for (i = 0; i < n1; i++) {
		EXPECT_EQ(without[i].ret, with[i].ret) TH_LOG("ioctl %d", i);
		EXPECT_EQ(without[i].err, with[i].err) TH_LOG("ioctl %d: %s with the module, %s without",
			i, strerror(with[i].err), strerror(without[i].err));
	}
	ret = ks_module_ensure(variant->mode);
	ASSERT_EQ(0, ret);
	/* KVM still runs a VM after all that. */
	ASSERT_EQ(0, ks_vm_create(&vm, ks_code_out_hlt, ks_code_out_hlt_len, 1));
	EXPECT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[0]));
	EXPECT_EQ(KS_EXIT_STOP, ks_vcpu_run(&vm.vcpu[0]));
	ks_vm_destroy(&vm);
}

TEST_F(hostile, stats_fd_file_ops)
{
	uint64_t rs = 42;
	int i, j;

	NEED_SETUP();
	for (i = 0; i < 2; i++) {
		int fd = self->fds[i];
		int prots[] = { PROT_READ, PROT_READ | PROT_WRITE, PROT_EXEC, PROT_NONE };
		int flags[] = { MAP_SHARED, MAP_PRIVATE };
		unsigned int p, f;
		unsigned long cmds[] = { KVM_GET_STATS_FD, KVM_RUN, KVM_CREATE_VCPU,
					 KVM_GET_REGS, KVM_CHECK_EXTENSION,
					 KVM_CREATE_VM, 0xdeadbeef };
		char buf[8] = "";

		for (p = 0; p < 4; p++)
			for (f = 0; f < 2; f++) {
				void *m = mmap(NULL, 4096, prots[p], flags[f], fd, 0);
				/* vCPU files map their own block, read-only. */
				int maps = i == 1 &&
					   !(prots[p] & (PROT_WRITE | PROT_EXEC));

				EXPECT_EQ(maps, m != MAP_FAILED)
					TH_LOG("%s: mmap prot %d flags %d: %s", kind[i],
					       prots[p], flags[f], strerror(errno));
				if (m != MAP_FAILED) {
					munmap(m, 4096);
					continue;
				}
				/* PROT_WRITE|MAP_SHARED of a read-only fd: EACCES first. */
				if (flags[f] == MAP_SHARED && (prots[p] & PROT_WRITE)) {
					EXPECT_EQ(EACCES, errno);
				} else if (prots[p] & (PROT_EXEC | PROT_WRITE)) {
					/* noexec mount, or the module: EPERM */
					EXPECT_TRUE(errno == ENODEV || errno == EPERM);
				} else {
					EXPECT_EQ(ENODEV, errno) TH_LOG("%s: mmap prot %d flags %d: %s",
						kind[i], prots[p], flags[f], strerror(errno));
				}
			}
		EXPECT_EQ(-1, write(fd, buf, sizeof(buf)));
		EXPECT_EQ(EBADF, errno);
		EXPECT_EQ(-1, write(fd, buf, 0));
		EXPECT_EQ(EBADF, errno);
		for (j = 0; j < (int)(sizeof(cmds) / sizeof(cmds[0])); j++) {
			EXPECT_EQ(-1, ioctl(fd, cmds[j], 0));
			EXPECT_EQ(ENOTTY, errno) TH_LOG("%s: ioctl %#lx: %s", kind[i],
							cmds[j], strerror(errno));
		}
		/* Every KVM command number, with any direction and size. */
		for (j = 0; j < 512; j++) {
			unsigned long cmd = _IOC(ks_rnd(&rs) % 4, KVMIO, j % 256,
						 ks_rnd(&rs) % 512);

			EXPECT_EQ(-1, ioctl(fd, cmd, ks_rnd(&rs)));
			EXPECT_EQ(ENOTTY, errno) TH_LOG("%s: ioctl %#lx: %s", kind[i],
							cmd, strerror(errno));
		}
	}
}

/* One file's bytes that nothing defines are zero. */
static void check_zeroes(struct __test_metadata *_metadata, int fd,
			 const unsigned char *full, size_t size, const char *what,
			 int fresh)
{
	const struct kvm_stats_header *h = (const void *)full;
	unsigned char *covered = calloc(1, size);
	struct kvmstats s = { 0 };
	size_t i, own_start = SIZE_MAX;
	unsigned int d;
	long bad_data = 0, own_nonzero = 0;

	ASSERT_NE(NULL, covered);
	ASSERT_EQ(0, kvmstats_open(&s, dup(fd))) TH_LOG("%s", s.err);
	EXPECT_EQ(0, h->flags) TH_LOG("%s: header flags", what);
	EXPECT_EQ(NAME_SIZE, h->name_size);
	/* The id: NUL, then zeroes to name_size; nothing between it and the descriptors. */
	i = strnlen((const char *)full + h->id_offset, h->name_size);
	EXPECT_GT(h->name_size, i) TH_LOG("%s: id not terminated", what);
	for (; i < h->name_size; i++)
		EXPECT_EQ(0, full[h->id_offset + i]) TH_LOG("%s: id byte %zu", what, i);
	for (i = h->id_offset + h->name_size; i < h->desc_offset; i++)
		EXPECT_EQ(0, full[i]) TH_LOG("%s: byte %zu after the id", what, i);
	/* Every name: non-empty, NUL, then zeroes. */
	for (d = 0; d < h->num_desc; d++) {
		const unsigned char *desc = full + h->desc_offset + d * DESC_SIZE;
		const unsigned char *name = desc + 16;
		size_t len = strnlen((const char *)name, NAME_SIZE);
		const struct kvmstats_desc *k = &s.descs[d];
		size_t j;

		EXPECT_LT(0, len) TH_LOG("%s: descriptor %u has no name", what, d);
		EXPECT_GT(NAME_SIZE, len);
		for (j = len; j < NAME_SIZE; j++)
			if (name[j]) {
				EXPECT_EQ(0, name[j]) TH_LOG("%s: %.48s: name byte %zu", what, name, j);
				break;
			}
		if (k->type != KVM_STATS_TYPE_LINEAR_HIST)
			EXPECT_EQ(0, k->bucket_size) TH_LOG("%s: %s: bucket_size %u",
							    what, k->name, k->bucket_size);
		for (j = 0; j < k->size * 8u; j++)
			if (h->data_offset + k->offset + j < size)
				covered[h->data_offset + k->offset + j] = 1;
		if (!strcmp(kvmstats_stem(k), "exit_latency_hist") ||
		    !strncmp(kvmstats_stem(k), "exit_reasons_", 13))
			if (h->data_offset + k->offset < own_start)
				own_start = h->data_offset + k->offset;
	}
	EXPECT_EQ(size, h->data_offset + s.data_size);
	/*
	 * The module's data bytes that no descriptor covers hold nothing (the
	 * native block is the kernel's struct, served as upstream does).
	 */
	ASSERT_NE(SIZE_MAX, own_start);
	for (i = own_start; i < size; i++)
		if (!covered[i] && full[i] && !bad_data++)
			TH_LOG("%s: data byte %zu is covered by no descriptor and is 0x%02x",
			       what, i, full[i]);
	EXPECT_EQ(0, bad_data);
	/* A vCPU that never ran and a VM none of whose vCPUs did: all zero. */
	if (fresh) {
		const struct kvmstats_desc *vcpus = ks_find(&s, "vcpus");

		for (i = own_start; i < size; i++) {
			if (vcpus && i >= h->data_offset + vcpus->offset &&
			    i < h->data_offset + vcpus->offset + 8)
				continue;
			if (full[i] && !own_nonzero++)
				TH_LOG("%s: own byte %zu is 0x%02x", what, i, full[i]);
		}
		EXPECT_EQ(0, own_nonzero);
	}
	kvmstats_close(&s);
	free(covered);
}

TEST_F(hostile, no_uninitialised_bytes)
{
	static unsigned char fresh[2][MAX_FILE];
	struct ks_vm vm;
	ssize_t n[2];
	int fds[2], i, ret;

	NEED_SETUP();
	for (i = 0; i < 2; i++)
		check_zeroes(_metadata, self->fds[i], self->full[i], self->size[i],
			     kind[i], 0);

	/* A new VM, never run: the module's values are zero (zeroed state). */
	ret = ks_vm_create(&vm, ks_code_out_hlt, ks_code_out_hlt_len, 2);
	ASSERT_EQ(0, ret);
	fds[1] = ioctl(vm.vcpu[1].fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, fds[1]);
	fds[0] = ioctl(vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, fds[0]);
	for (i = 0; i < 2; i++) {
		n[i] = ks_read_whole(fds[i], fresh[i], MAX_FILE);
		ASSERT_LT(0, n[i]);
		check_zeroes(_metadata, fds[i], fresh[i], n[i], kind[i], 1);
		close(fds[i]);
	}
	ks_vm_destroy(&vm);
}

TEST_HARNESS_MAIN
