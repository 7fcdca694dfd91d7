// SPDX-License-Identifier: GPL-2.0
/*
 * The read-only mapping of a vCPU stats fd's own data block
 * (Documentation/stats-fd.rst, "Mapping the module's stats").
 *
 * A vCPU stats fd of the module maps its own stats: /proc/self/fdinfo/<fd>
 * says where they lie in the data block (kvm_stats_mmap_offset), how many
 * bytes (kvm_stats_mmap_size) and where in the mapping they start
 * (kvm_stats_mmap_page_offset: a VM's vCPUs share pages).  Checked (what
 * depends on the layout in superset mode, own mode and with the default
 * groups: fixture "map"; what is the same in any layout once: "file"):
 * the mapping reads what pread reads, before and after guest work, also in
 * a forked child; it is a mapping of the stats file, as /proc/self/maps
 * names it, and like an open fd it holds the file, so the VM and the
 * module: it outlives the stats fd and the vCPU and VM fds, and rmmod is
 * refused until it is unmapped; writable, executable, offset and
 * oversized mappings are refused and so are mprotect() to write or
 * execute, growing it and MADV_WIPEONFORK; a page dropped with
 * MADV_DONTNEED raises SIGBUS, never reads as zeros; munmap under a
 * reading thread only ends that thread's reads; VM stats fds and KVM's
 * own refuse mmap with ENODEV; libkvmstats reads the mapped part with no
 * system call; and the first mapping of a VM, which moves its vCPUs'
 * counters into pages, loses and doubles no exit of the vCPUs running
 * then.  This program is linked with -Wl,--wrap=pread, so that it counts
 * the library's preads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ks_harness.h"
#include "internal.h"	/* white-box: reads the handle's fields */
#include "ks_util.h"

#define MAX_DATA	(64 * 1024)

/* Older libc headers (Linux 4.14's value). */
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK	18
#endif

/* Every pread() of this program and the libraries linked into it. */
static unsigned int nr_preads;
static size_t pread_bytes;

ssize_t __real_pread(int fd, void *buf, size_t len, off_t off);
ssize_t __wrap_pread(int fd, void *buf, size_t len, off_t off);

ssize_t __wrap_pread(int fd, void *buf, size_t len, off_t off)
{
	nr_preads++;
	pread_bytes += len;
	return __real_pread(fd, buf, len, off);
}

/* kvm_stats_mmap_offset and kvm_stats_mmap_size of @fd (ks_fdinfo_map()). */
static int fdinfo_map(int fd, uint64_t *off, uint64_t *size)
{
	uint64_t page_off;

	return ks_fdinfo_map(fd, off, size, &page_off);
}

/* Copy @n bytes out of a mapping, each u64 loaded whole. */
static void copy_mapped(void *dst, const void *map, size_t n)
{
	const volatile uint64_t *src = map;
	uint64_t *d = dst;
	size_t i;

	for (i = 0; i < n / 8; i++)
		d[i] = src[i];
}

FIXTURE(map) {
	struct ks_module_state mod;
	struct ks_exit_codes ec;
	struct ks_vm vm;
	int vm_made;
	int sfd;		/* vCPU 0's stats fd */
	uint64_t data_offset;	/* the file's */
	uint64_t data_size;
	uint64_t map_off;	/* fdinfo */
	uint64_t map_size;
	uint64_t page_off;	/* where the block starts in the mapping */
	size_t map_len;		/* page_off + map_size in whole pages */
	uint64_t hist_off;	/* exit-reason histogram, in the data block */
	uint64_t exits_off;	/* KVM's "exits" (superset mode) */
	long page;
	int ready;
};

FIXTURE_VARIANT(map) {
	const char *mode;
	bool deflt;	/* the default stat groups, not all */
};

FIXTURE_VARIANT_ADD(map, superset) { .mode = "superset" };
FIXTURE_VARIANT_ADD(map, own) { .mode = "own" };
/* Four vCPUs' blocks a page (on AMD): the mapping shows its neighbours. */
FIXTURE_VARIANT_ADD(map, default_groups) { .mode = "superset", .deflt = true };

/* Guest code: 20 CPUIDs then OUT, for each KVM_RUN; HLT after the last. */
static const unsigned int segs[] = { 20, 20, 20, 20, 20, 20 };

/*
 * The setup of both fixtures: the module in @mode, with every stat group
 * or (@deflt) the default ones; a VM whose vCPU ran once, its stats fd.
 */
static void mapping_setup(struct __test_metadata *_metadata,
			  struct _test_data_map *self, const char *mode,
			  bool deflt)
{
	const struct kvmstats_desc *d;
	unsigned char code[256];
	struct kvmstats s = { 0 };
	size_t len;
	int ret;

	KS_SETUP_MODULE(&self->mod, deflt ? NULL : mode);
	if (deflt) {
		/* Reloaded by this variant's first case only. */
		ret = ks_module_ensure_params("");
		ASSERT_EQ(0, ret) TH_LOG("loading: %s", strerror(-ret));
	}
	/*
	 * The module stays loaded from case to case: let it free the last
	 * case's VM (after RCU and a work item) before counting this one's.
	 */
	ks_objects_wait_le("vms", 0, KS_FREE_WAIT_MS);
	ks_host_exit_codes(&self->ec);
	self->page = sysconf(_SC_PAGESIZE);
	len = ks_code_cpuid_segments(code, sizeof(code), segs,
				     sizeof(segs) / sizeof(segs[0]));
	ASSERT_NE(0, len);
	ret = ks_vm_create(&self->vm, code, len, 1);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	self->vm_made = 1;
	/* Before the vCPU runs: PREEMPT_RT counts from the first stats fd. */
	self->sfd = ioctl(self->vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, self->sfd) TH_LOG("KVM_GET_STATS_FD: %s", strerror(errno));
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&self->vm.vcpu[0]));

	ASSERT_EQ(0, kvmstats_open(&s, dup(self->sfd))) TH_LOG("%s", s.err);
	self->data_offset = s.hdr.data_offset;
	self->data_size = s.data_size;
	d = ks_find(&s, self->ec.stat);
	ASSERT_NE(NULL, d) TH_LOG("no %s", self->ec.stat);
	self->hist_off = d->offset;
	d = ks_find(&s, "exits");
	self->exits_off = d ? d->offset : 0;
	ASSERT_EQ(!strcmp(mode, "superset"), d != NULL);
	kvmstats_close(&s);

	ret = ks_fdinfo_map(self->sfd, &self->map_off, &self->map_size,
			    &self->page_off);
	ASSERT_EQ(0, ret) TH_LOG("fdinfo of a vCPU stats fd: %s", strerror(-ret));
	ASSERT_LT(0, self->map_size);
	self->map_len = (self->page_off + self->map_size + self->page - 1) /
			self->page * self->page;
	self->ready = 1;
}

static void mapping_teardown(struct __test_metadata *_metadata,
			     struct _test_data_map *self)
{
	if (self->vm_made)
		ks_vm_destroy(&self->vm);
	KS_TEARDOWN_MODULE(&self->mod);
}

FIXTURE_SETUP(map)
{
	mapping_setup(_metadata, self, variant->mode, variant->deflt);
}

FIXTURE_TEARDOWN(map)
{
	mapping_teardown(_metadata, self);
}

/*
 * The cases about the mapping as a file (what it holds on to, what is
 * refused, what fork, madvise, mprotect and munmap do to it) meet the same
 * code whatever the mode and groups: they run once, in the "file" fixture,
 * superset mode with every group.  Its data is map's (the harness names a
 * fixture's data struct _test_data_NAME: this makes file's that name), so
 * that the helpers above serve both.
 */
#define _test_data_file _test_data_map
FIXTURE(file);

FIXTURE_SETUP(file)
{
	mapping_setup(_metadata, self, "superset", false);
}

FIXTURE_TEARDOWN(file)
{
	mapping_teardown(_metadata, self);
}

/* The 6.1 harness runs a test's body even when its setup skipped. */
#define NEED_SETUP() do { if (!self->ready) return; } while (0)

static void *map_own(struct __test_metadata *_metadata,
		     struct _test_data_map *self, int flags)
{
	void *m = mmap(NULL, self->map_len, PROT_READ, flags, self->sfd, 0);

	EXPECT_NE(MAP_FAILED, m) TH_LOG("mmap of %zu bytes: %s", self->map_len,
					strerror(errno));
	return m == MAP_FAILED ? NULL : m;
}

/*
 * The @size bytes mapped at @blk hold what a pread of @size bytes of @fd
 * at @pos reads (quiet VM).
 */
static void expect_block_same(struct __test_metadata *_metadata, int fd,
			      uint64_t pos, uint64_t size, const void *blk,
			      const char *when)
{
	static uint64_t want[MAX_DATA / 8], got[MAX_DATA / 8];

	ASSERT_GE(MAX_DATA, size);
	ASSERT_EQ(0, ks_pread_exact(fd, want, size, pos));
	copy_mapped(got, blk, size);
	EXPECT_EQ(0, memcmp(want, got, size))
		TH_LOG("%s: the mapping differs from pread", when);
}

/* The mapping holds what a pread of the mapped part reads (quiet VM). */
static void expect_same(struct __test_metadata *_metadata,
			struct _test_data_map *self, const void *m,
			const char *when)
{
	expect_block_same(_metadata, self->sfd,
			  self->data_offset + self->map_off, self->map_size,
			  (const char *)m + self->page_off, when);
}

/* Sum of the exit-reason histogram as the mapping holds it. */
static uint64_t mapped_exits(struct _test_data_map *self, const void *m)
{
	const volatile uint64_t *h = (const volatile uint64_t *)
		((const char *)m + self->page_off + self->hist_off -
		 self->map_off);
	uint64_t sum = 0;
	unsigned int i;

	for (i = 0; i < self->ec.buckets; i++)
		sum += h[i];
	return sum;
}

/*
 * fdinfo places the mapping on the module's own block, which ends the data
 * block: the exit-reason histogram inside it, KVM's stats before it.  VM
 * stats fds have no such lines.
 */
TEST_F(map, fdinfo_places_own_block)
{
	uint64_t off, size;
	int vfd;

	NEED_SETUP();
	EXPECT_EQ(0, self->map_off % 8);
	EXPECT_EQ(0, self->map_size % 8);
	/* A cache line of its own, in the pages mapped. */
	EXPECT_EQ(0, self->page_off % 64);
	EXPECT_GE(self->map_len, self->page_off + self->map_size);
	EXPECT_EQ(self->data_size, self->map_off + self->map_size);
	EXPECT_LE(self->map_off, self->hist_off);
	EXPECT_GE(self->map_off + self->map_size,
		  self->hist_off + 8 * self->ec.buckets);
	if (!strcmp(variant->mode, "own")) {
		EXPECT_EQ(0, self->map_off);
	} else {
		EXPECT_LE(self->exits_off + 8, self->map_off);
	}
	vfd = ioctl(self->vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, vfd);
	EXPECT_EQ(-ENOENT, fdinfo_map(vfd, &off, &size));
	close(vfd);
}

TEST_F(map, mapped_equals_pread)
{
	uint64_t before, after;
	void *m, *p;
	int i;

	NEED_SETUP();
	m = map_own(_metadata, self, MAP_SHARED);
	p = map_own(_metadata, self, MAP_PRIVATE);
	ASSERT_NE(NULL, m);
	ASSERT_NE(NULL, p);
	expect_same(_metadata, self, m, "after the first run");
	expect_same(_metadata, self, p, "MAP_PRIVATE, after the first run");
	before = mapped_exits(self, m);
	EXPECT_LE(21, before);
	for (i = 0; i < 3; i++)
		ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&self->vm.vcpu[0]));
	after = mapped_exits(self, m);
	EXPECT_LE(before + 63, after) TH_LOG("%llu exits, then %llu",
					     (unsigned long long)before,
					     (unsigned long long)after);
	EXPECT_EQ(after, mapped_exits(self, p));
	expect_same(_metadata, self, m, "after three more runs");
	expect_same(_metadata, self, p, "MAP_PRIVATE, after three more runs");
	/* The only vCPU: the rest of its pages hold nothing but zeros. */
	for (i = 0; i < (int)self->map_len; i++)
		if ((uint64_t)i == self->page_off)
			i += self->map_size - 1;
		else if (((const volatile char *)m)[i])
			break;
	EXPECT_EQ((int)self->map_len, i) TH_LOG("byte %d outside the block", i);
	munmap(m, self->map_len);
	munmap(p, self->map_len);
}

/*
 * The mapping holds the stats file as an open fd does, and through it the
 * VM and the module: with the stats fd, the vCPU and the VM fds closed it
 * still reads the vCPU's last values, the VM's state stays, and rmmod is
 * refused as busy; once it is unmapped the VM's state and the file go and
 * rmmod goes through, with nothing left (oops, KASAN, leak) for the judge.
 */
TEST_F(file, pins_the_module_until_unmapped)
{
	static uint64_t last[MAX_DATA / 8], now[MAX_DATA / 8];
	long vms0, files0;
	void *m;
	int ret;

	NEED_SETUP();
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&self->vm.vcpu[0]));
	m = map_own(_metadata, self, MAP_SHARED);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, ks_pread_exact(self->sfd, last, self->map_size,
				    self->data_offset + self->map_off));
	vms0 = ks_objects_read("vms");
	files0 = ks_objects_read("files");
	ASSERT_LT(0, vms0);
	ASSERT_LT(0, files0);
	close(self->sfd);
	self->sfd = -1;
	ks_vm_destroy(&self->vm);
	self->vm_made = 0;

	ret = ks_module_unload();
	EXPECT_TRUE(ret == -EWOULDBLOCK || ret == -EBUSY)
		TH_LOG("rmmod with a mapping: %s",
		       ret ? strerror(-ret) : "unloaded");
	ASSERT_EQ(1, ks_module_loaded());
	EXPECT_EQ(files0, ks_objects_read("files"))
		TH_LOG("the mapped file was released");
	EXPECT_EQ(vms0, ks_objects_read("vms"))
		TH_LOG("the mapped file's VM was freed");
	copy_mapped(now, (char *)m + self->page_off, self->map_size);
	EXPECT_EQ(0, memcmp(last, now, self->map_size))
		TH_LOG("the mapping changed with nothing running");
	EXPECT_LE(41, mapped_exits(self, m));

	EXPECT_EQ(0, munmap(m, self->map_len));
	EXPECT_EQ(files0 - 1, ks_objects_wait_le("files", files0 - 1,
						 KS_FREE_WAIT_MS));
	EXPECT_EQ(vms0 - 1, ks_objects_wait_le("vms", vms0 - 1, KS_FREE_WAIT_MS))
		TH_LOG("the VM's state was not freed after munmap");
	ret = ks_module_unload();
	EXPECT_EQ(0, ret) TH_LOG("rmmod after munmap: %s", strerror(-ret));
	EXPECT_EQ(0, ks_module_loaded());
}

/* Writes, execution, offsets and sizes past the block are refused. */
TEST_F(file, refusals)
{
	static const struct {
		int prot, flags;
		off_t pages;		/* offset, in pages */
		size_t extra;		/* pages past the block's */
		int err;
		const char *what;
	} bad[] = {
		/* The fd is read-only: the VFS refuses before the module. */
		{ PROT_READ | PROT_WRITE, MAP_SHARED, 0, 0, EACCES, "shared write" },
		{ PROT_READ | PROT_WRITE, MAP_PRIVATE, 0, 0, EPERM, "private write" },
		{ PROT_READ | PROT_EXEC, MAP_SHARED, 0, 0, EPERM, "shared exec" },
		{ PROT_READ | PROT_EXEC, MAP_PRIVATE, 0, 0, EPERM, "private exec" },
		{ PROT_READ, MAP_SHARED, 1, 0, EINVAL, "offset one page" },
		{ PROT_READ, MAP_SHARED, 0, 1, EINVAL, "one page too many" },
		{ PROT_READ, MAP_PRIVATE, 0, 16, EINVAL, "16 pages too many" },
	};
	unsigned int i;
	void *m, *r;

	NEED_SETUP();
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		m = mmap(NULL, self->map_len + bad[i].extra * self->page,
			 bad[i].prot, bad[i].flags, self->sfd,
			 bad[i].pages * self->page);
		EXPECT_EQ(MAP_FAILED, m) TH_LOG("%s: mapped", bad[i].what);
		if (m != MAP_FAILED) {
			munmap(m, self->map_len + bad[i].extra * self->page);
			continue;
		}
		EXPECT_EQ(bad[i].err, errno) TH_LOG("%s: %s", bad[i].what,
						    strerror(errno));
	}
	m = map_own(_metadata, self, MAP_SHARED);
	ASSERT_NE(NULL, m);
	EXPECT_EQ(-1, mprotect(m, self->map_len, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(-1, mprotect(m, self->map_len, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	/* It cannot grow either (VM_DONTEXPAND). */
	r = mremap(m, self->map_len, self->map_len + self->page, MREMAP_MAYMOVE);
	EXPECT_EQ(MAP_FAILED, r);
	if (r != MAP_FAILED)
		m = r;
	/* A shorter mapping is fine. */
	expect_same(_metadata, self, m, "after the refusals");
	EXPECT_EQ(0, munmap(m, self->map_len));
}

/*
 * Loads that may fault: the handler jumps back to the faulting thread's
 * own sigsetjmp() with the signal's number.
 */
static __thread sigjmp_buf fault_jmp;

static void fault_handler(int sig)
{
	siglongjmp(fault_jmp, sig);
}

static void catch_faults(bool on)
{
	struct sigaction sa = { .sa_handler = on ? fault_handler : SIG_DFL };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGSEGV, &sa, NULL);
}

/* Load the u64 at @p into *@v: 0, or the signal the load raised. */
static int load_or_signal(const volatile uint64_t *p, uint64_t *v)
{
	int sig = sigsetjmp(fault_jmp, 1);

	if (!sig)
		*v = *p;
	return sig;
}

/* The name /proc/self/maps gives the mapping that starts at @addr. */
static int maps_name(const void *addr, char *name, size_t len)
{
	unsigned long lo, hi;
	char line[512];
	int n, ret = -ENOENT;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		n = 0;
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi,
			   &n) < 2 || lo != (unsigned long)addr || !n)
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(name, len, "%s", line + n);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/*
 * The mapping is one of the stats file: /proc/self/maps names it by the
 * file, as /proc/self/fd does, shared or private.
 */
TEST_F(file, maps_names_the_file)
{
	static const int flags[] = { MAP_SHARED, MAP_PRIVATE };
	/* The fixture's vCPU has id 0 (ks_vm_create()). */
	static const char want[] = "anon_inode:kvm-vcpu-stats:0";
	char name[256];
	unsigned int i;
	void *m;
	int ret;

	NEED_SETUP();
	for (i = 0; i < 2; i++) {
		m = map_own(_metadata, self, flags[i]);
		ASSERT_NE(NULL, m);
		name[0] = '\0';
		ret = maps_name(m, name, sizeof(name));
		EXPECT_EQ(0, ret) TH_LOG("no line for %p: %s", m, strerror(-ret));
		EXPECT_STREQ(want, name) TH_LOG("flags %#x", flags[i]);
		EXPECT_EQ(0, munmap(m, self->map_len));
	}
}

/*
 * MADV_DONTNEED drops the mapping's pages for good: a read of them then
 * raises SIGBUS, it never reads zeros (a reader would take them for a
 * counter reset).  The file is unaffected: pread and a new mapping read
 * the counters.
 */
TEST_F(file, dontneed_then_sigbus)
{
	const volatile uint64_t *h;
	uint64_t v = 0, want;
	void *m, *again;
	int sig;

	NEED_SETUP();
	m = map_own(_metadata, self, MAP_SHARED);
	ASSERT_NE(NULL, m);
	h = (const volatile uint64_t *)((char *)m + self->page_off +
					self->hist_off - self->map_off +
					8 * self->ec.cpuid);
	ASSERT_EQ(0, ks_pread_exact(self->sfd, &want, 8,
				    self->data_offset + self->hist_off +
				    8 * self->ec.cpuid));
	ASSERT_LT(0, want);
	catch_faults(true);
	sig = load_or_signal(h, &v);
	EXPECT_EQ(0, sig) TH_LOG("signal %d before MADV_DONTNEED", sig);
	EXPECT_EQ(want, v);
	ASSERT_EQ(0, madvise(m, self->map_len, MADV_DONTNEED))
		TH_LOG("MADV_DONTNEED: %s", strerror(errno));
	v = 12345;
	sig = load_or_signal(h, &v);
	catch_faults(false);
	EXPECT_EQ(SIGBUS, sig) TH_LOG("after MADV_DONTNEED: %s, value %llu",
				      sig ? strsignal(sig) : "no signal",
				      (unsigned long long)v);
	EXPECT_EQ(0, munmap(m, self->map_len));

	ASSERT_EQ(0, ks_pread_exact(self->sfd, &v, 8,
				    self->data_offset + self->hist_off +
				    8 * self->ec.cpuid));
	EXPECT_EQ(want, v);
	again = map_own(_metadata, self, MAP_SHARED);
	ASSERT_NE(NULL, again);
	expect_same(_metadata, self, again, "mapped again");
	EXPECT_EQ(0, munmap(again, self->map_len));
}

/* MADV_WIPEONFORK is for anonymous memory: a file's mapping refuses it. */
TEST_F(file, wipeonfork_refused)
{
	static const int flags[] = { MAP_SHARED, MAP_PRIVATE };
	unsigned int i;
	void *m;

	NEED_SETUP();
	for (i = 0; i < 2; i++) {
		m = map_own(_metadata, self, flags[i]);
		ASSERT_NE(NULL, m);
		EXPECT_EQ(-1, madvise(m, self->map_len, MADV_WIPEONFORK))
			TH_LOG("flags %#x: MADV_WIPEONFORK accepted", flags[i]);
		EXPECT_EQ(EINVAL, errno) TH_LOG("flags %#x: %s", flags[i],
						strerror(errno));
		expect_same(_metadata, self, m, "after MADV_WIPEONFORK");
		EXPECT_EQ(0, munmap(m, self->map_len));
	}
}

/*
 * Shared or private, the mapping never becomes writable or executable
 * (EACCES: the module took VM_MAYWRITE and VM_MAYEXEC away), cannot grow
 * (EFAULT, in place or moving), and may move or shrink, reading the same
 * counters wherever it is.
 */
TEST_F(file, mprotect_and_mremap)
{
	static const int flags[] = { MAP_SHARED, MAP_PRIVATE };
	unsigned int i;
	void *m, *r, *to;

	NEED_SETUP();
	for (i = 0; i < 2; i++) {
		m = map_own(_metadata, self, flags[i]);
		ASSERT_NE(NULL, m);
		EXPECT_EQ(-1, mprotect(m, self->map_len, PROT_READ | PROT_WRITE));
		EXPECT_EQ(EACCES, errno) TH_LOG("flags %#x, write: %s",
						flags[i], strerror(errno));
		EXPECT_EQ(-1, mprotect(m, self->map_len, PROT_READ | PROT_EXEC));
		EXPECT_EQ(EACCES, errno) TH_LOG("flags %#x, exec: %s",
						flags[i], strerror(errno));
		r = mremap(m, self->map_len, self->map_len + self->page, 0);
		EXPECT_EQ(MAP_FAILED, r) TH_LOG("flags %#x: grown in place",
						flags[i]);
		EXPECT_EQ(EFAULT, errno) TH_LOG("flags %#x: %s", flags[i],
						strerror(errno));
		r = mremap(m, self->map_len, self->map_len + self->page,
			   MREMAP_MAYMOVE);
		EXPECT_EQ(MAP_FAILED, r) TH_LOG("flags %#x: grown by a move",
						flags[i]);
		EXPECT_EQ(EFAULT, errno) TH_LOG("flags %#x: %s", flags[i],
						strerror(errno));
		/* A free place to move it to. */
		to = mmap(NULL, self->map_len, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, to);
		r = mremap(m, self->map_len, self->map_len,
			   MREMAP_MAYMOVE | MREMAP_FIXED, to);
		EXPECT_EQ(to, r) TH_LOG("flags %#x, move: %s", flags[i],
					strerror(errno));
		if (r == MAP_FAILED) {
			munmap(to, self->map_len);
		} else {
			m = r;
			expect_same(_metadata, self, m, "moved");
		}
		if (self->map_len > (size_t)self->page &&
		    self->page_off + self->map_size <= (uint64_t)self->page) {
			EXPECT_EQ(m, mremap(m, self->map_len, self->page, 0));
			expect_same(_metadata, self, m, "shrunk");
			EXPECT_EQ(0, munmap(m, self->page));
		} else {
			EXPECT_EQ(0, munmap(m, self->map_len));
		}
	}
}

/*
 * munmap() while another thread reads the mapping in a loop, each time
 * from a new stats fd closed before: the munmap drops the file's last
 * reference under the reader.  The reader's next load faults (SIGSEGV,
 * never SIGBUS: nothing is mapped there any more), or it runs out its
 * time if something else came to be mapped there; nothing else happens.
 */
#define UNMAP_ROUNDS	20

struct unmap_reader {
	pthread_t t;
	const volatile uint64_t *p;
	atomic_long loads;
	double until;
	volatile int sig;
};

static void *unmap_read_fn(void *arg)
{
	struct unmap_reader *r = arg;
	volatile uint64_t sink;
	int sig;

	sig = sigsetjmp(fault_jmp, 1);
	if (sig) {
		r->sig = sig;
		return NULL;
	}
	for (;;) {
		sink = *r->p;
		(void)sink;
		if (!(atomic_fetch_add(&r->loads, 1) % 4096) &&
		    ks_now_s() > r->until)
			break;
	}
	return NULL;
}

TEST_F(file, munmap_while_reading)
{
	int round, fd, ret, faulted = 0;
	struct unmap_reader r;
	double t0;
	void *m;

	NEED_SETUP();
	catch_faults(true);
	for (round = 0; round < UNMAP_ROUNDS; round++) {
		fd = ioctl(self->vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
		ASSERT_LE(0, fd) TH_LOG("KVM_GET_STATS_FD: %s", strerror(errno));
		m = mmap(NULL, self->map_len, PROT_READ, MAP_SHARED, fd, 0);
		ASSERT_NE(MAP_FAILED, m) TH_LOG("round %d: %s", round,
						strerror(errno));
		close(fd);
		memset(&r, 0, sizeof(r));
		r.p = (const volatile uint64_t *)((char *)m + self->page_off +
						  self->hist_off - self->map_off);
		r.until = ks_now_s() + 10;
		ret = pthread_create(&r.t, NULL, unmap_read_fn, &r);
		ASSERT_EQ(0, ret) TH_LOG("pthread_create: %s", strerror(ret));
		t0 = ks_now_s();
		while (atomic_load(&r.loads) < 1000 && !r.sig &&
		       ks_now_s() < t0 + 10)
			ks_sleep_us(100);
		EXPECT_EQ(0, munmap(m, self->map_len));
		pthread_join(r.t, NULL);
		EXPECT_LE(1000, atomic_load(&r.loads)) TH_LOG("round %d", round);
		EXPECT_TRUE(r.sig == 0 || r.sig == SIGSEGV)
			TH_LOG("round %d: %s", round, strsignal(r.sig));
		faulted += r.sig == SIGSEGV;
	}
	catch_faults(false);
	if (faulted < UNMAP_ROUNDS)
		TH_LOG("%d of %d readers ran out their time unfaulted",
		       UNMAP_ROUNDS - faulted, UNMAP_ROUNDS);
	/* The stats fd and the vCPU work on. */
	EXPECT_EQ(KS_EXIT_USER, ks_vcpu_run(&self->vm.vcpu[0]));
	m = map_own(_metadata, self, MAP_SHARED);
	ASSERT_NE(NULL, m);
	expect_same(_metadata, self, m, "after the unmapped rounds");
	EXPECT_EQ(0, munmap(m, self->map_len));
}

/* VM stats fds and KVM's own stats fds have nothing to map. */
TEST_F(file, vm_and_native_fds_enodev)
{
	int fd, ret, native;
	void *m;

	NEED_SETUP();
	fd = ioctl(self->vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, fd);
	m = mmap(NULL, self->page, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(ENODEV, errno) TH_LOG("VM stats fd: %s", strerror(errno));
	close(fd);

	/* Asking reloads the module: no stats fd may be open. */
	close(self->sfd);
	self->sfd = -1;
	native = ks_native_binary_stats();
	ASSERT_LE(0, native) TH_LOG("%s", strerror(-native));
	if (!native)
		return;		/* 5.10: no stats fd of KVM's own */
	ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
	ASSERT_EQ(0, ret) TH_LOG("unloading: %s", strerror(-ret));
	fd = ioctl(self->vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, fd) TH_LOG("KVM's own stats fd: %s", strerror(errno));
	m = mmap(NULL, self->page, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT_EQ(MAP_FAILED, m);
	EXPECT_EQ(ENODEV, errno) TH_LOG("KVM's vCPU stats fd: %s", strerror(errno));
	close(fd);
	ret = ks_module_ensure("superset");
	ASSERT_EQ(0, ret) TH_LOG("reloading: %s", strerror(-ret));
}

/*
 * A forked child inherits the mappings, shared and private (the module
 * does not set VM_DONTCOPY: a VMM's helper may read them): it sees the
 * exits its parent's vCPU makes after the fork, as pread does.
 */
TEST_F(file, fork_shares_the_pages)
{
	int to_child[2], status, i;
	uint64_t before;
	void *m, *p;
	pid_t pid;

	NEED_SETUP();
	m = map_own(_metadata, self, MAP_SHARED);
	p = map_own(_metadata, self, MAP_PRIVATE);
	ASSERT_NE(NULL, m);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, pipe(to_child));
	before = mapped_exits(self, m);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		static uint64_t want[MAX_DATA / 8], got[MAX_DATA / 8];
		char c;

		close(to_child[1]);
		if (read(to_child[0], &c, 1) != 1)
			_exit(2);
		if (mapped_exits(self, m) < before + 40)
			_exit(3);
		if (ks_pread_exact(self->sfd, want, self->map_size,
				   self->data_offset + self->map_off))
			_exit(4);
		copy_mapped(got, (char *)m + self->page_off, self->map_size);
		if (memcmp(want, got, self->map_size))
			_exit(5);
		copy_mapped(got, (char *)p + self->page_off, self->map_size);
		_exit(memcmp(want, got, self->map_size) ? 6 : 0);
	}
	close(to_child[0]);
	for (i = 0; i < 2; i++)
		EXPECT_EQ(KS_EXIT_USER, ks_vcpu_run(&self->vm.vcpu[0]));
	EXPECT_EQ(1, write(to_child[1], "x", 1));
	close(to_child[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status)) TH_LOG("child killed by signal %d",
					      WTERMSIG(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("child: 2 pipe, 3 no new exits, 4 pread, 5 shared differs, 6 private differs");
	munmap(m, self->map_len);
	munmap(p, self->map_len);
}

/*
 * libkvmstats maps what a vCPU file offers at a handle's first refresh,
 * not at open (a handle read once costs the module no pages): a refresh
 * then preads only KVM's native part (nothing in own mode) and reads the
 * rest from the mapping; its values are a whole pread's.  A VM handle has
 * no mapping and preads its whole block.
 */
TEST_F(map, library_reads_the_mapping)
{
	static uint64_t whole[MAX_DATA / 8];
	struct kvmstats s = { 0 }, v = { 0 };
	uint64_t off = ~0ull;
	int ret;

	NEED_SETUP();
	ret = kvmstats_open(&s, dup(self->sfd));
	ASSERT_EQ(0, ret) TH_LOG("%s", s.err);
	/* Read once so far: not mapped (it would cost the module pages). */
	EXPECT_EQ(0, kvmstats_mapped(&s, NULL));
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&self->vm.vcpu[0]));
	nr_preads = 0;
	pread_bytes = 0;
	ret = kvmstats_refresh(&s);
	EXPECT_EQ(0, ret) TH_LOG("%s", s.err);
	EXPECT_EQ(self->map_size, kvmstats_mapped(&s, &off));
	EXPECT_EQ(self->map_off, off);
	EXPECT_EQ(self->map_off ? 1 : 0, nr_preads);
	EXPECT_EQ(self->map_off, pread_bytes);
	ASSERT_GE(MAX_DATA, s.data_size);
	ASSERT_EQ(0, ks_pread_exact(self->sfd, whole, s.data_size,
				    self->data_offset));
	EXPECT_EQ(0, memcmp(whole, s.data, s.data_size))
		TH_LOG("the refreshed block differs from a pread");
	kvmstats_close(&s);

	ret = kvmstats_open_from(&v, self->vm.fd);
	ASSERT_EQ(0, ret) TH_LOG("%s", v.err);
	EXPECT_EQ(0, kvmstats_mapped(&v, NULL));
	nr_preads = 0;
	pread_bytes = 0;
	EXPECT_EQ(0, kvmstats_refresh(&v)) TH_LOG("%s", v.err);
	EXPECT_EQ(1, nr_preads);
	EXPECT_EQ(v.data_size, pread_bytes);
	kvmstats_close(&v);
}

/*
 * A VM's vCPUs share pages: each vCPU file maps the page(s) holding its
 * block, at its own cache-line-aligned place that fdinfo gives; no two
 * blocks overlap; the block of a vCPU that ran counts its exits and the
 * others' stay zero; libkvmstats reads each at its place.
 */
#define SHARED_VCPUS	6

TEST_F(map, vcpus_share_pages)
{
	static uint64_t want[MAX_DATA / 8], got[MAX_DATA / 8];
	uint64_t off[SHARED_VCPUS], size, page_off[SHARED_VCPUS];
	int sfd[SHARED_VCPUS], i, ret;
	uint64_t line, slots;
	unsigned char code[256];
	struct kvmstats s = { 0 };
	struct ks_vm vm;
	size_t len, map_len;
	void *m;

	NEED_SETUP();
	line = (self->map_size + 63) / 64 * 64;
	slots = line <= (uint64_t)self->page ? self->page / line : 1;
	if (variant->deflt && self->ec.svm)
		EXPECT_EQ(4, slots);
	len = ks_code_cpuid_segments(code, sizeof(code), segs, 1);
	ASSERT_NE(0, len);
	ret = ks_vm_create(&vm, code, len, SHARED_VCPUS);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	for (i = 0; i < SHARED_VCPUS; i++) {
		sfd[i] = ioctl(vm.vcpu[i].fd, KVM_GET_STATS_FD, 0);
		ASSERT_LE(0, sfd[i]) TH_LOG("vCPU %d: %s", i, strerror(errno));
		ASSERT_EQ(0, ks_fdinfo_map(sfd[i], &off[i], &size, &page_off[i]));
		EXPECT_EQ(self->map_size, size);
		EXPECT_EQ(0, page_off[i] % 64);
		/* Blocks are handed out in order, in whole cache lines. */
		EXPECT_EQ(i % slots * line, page_off[i]) TH_LOG("vCPU %d", i);
	}
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[2]));
	for (i = 0; i < SHARED_VCPUS; i++) {
		map_len = (page_off[i] + size + self->page - 1) / self->page *
			  self->page;
		m = mmap(NULL, map_len, PROT_READ, MAP_SHARED, sfd[i], 0);
		ASSERT_NE(MAP_FAILED, m) TH_LOG("vCPU %d: %s", i, strerror(errno));
		ASSERT_GE(MAX_DATA, size);
		ASSERT_EQ(0, ks_pread_exact(sfd[i], want, size,
					    self->data_offset + off[i]));
		copy_mapped(got, (char *)m + page_off[i], size);
		EXPECT_EQ(0, memcmp(want, got, size)) TH_LOG("vCPU %d", i);
		EXPECT_EQ(i == 2, mapped_exits(self, (char *)m + page_off[i] -
						     self->page_off) >= 21)
			TH_LOG("vCPU %d", i);
		munmap(m, map_len);

		ret = kvmstats_open(&s, dup(sfd[i]));
		ASSERT_EQ(0, ret) TH_LOG("%s", s.err);
		EXPECT_EQ(0, kvmstats_refresh(&s)) TH_LOG("%s", s.err);
		EXPECT_EQ(size, kvmstats_mapped(&s, NULL));
		EXPECT_EQ(0, memcmp(want, (char *)s.data + off[i], size))
			TH_LOG("vCPU %d: the library's copy", i);
		kvmstats_close(&s);
		close(sfd[i]);
	}
	ks_vm_destroy(&vm);
}

/*
 * The first mapping of any vCPU file of a VM moves the counters of all its
 * vCPUs, from their slab blocks into pages allocated then, while the vCPUs
 * may be running and counting.  Four vCPUs run the same work, each on a
 * thread of its own, and the main thread maps each vCPU's file in turn
 * once every one of them has run: the first mapping moves live counters.
 * An increment lost in the move would show as a count below R * N, one
 * made twice as one above it: afterwards each vCPU's CPUID bucket must be
 * exactly R * N and its I/O bucket exactly R, in the mapping and by pread,
 * and the whole mapped block must read what pread reads.  fdinfo's place
 * in the page is fixed when the vCPU's state is made: the same after the
 * move.  Each KVM_RUN is N CPUIDs and an OUT: 4 x R x (N + 1) exits, ~20k
 * (~50 us each on the nested TCG lanes).  The move is the same code in
 * every mode and layout, only the block's size differs: it runs once, in
 * the file fixture, whose block (every group) is the largest.
 */
#define LIVE_VCPUS	4
#define LIVE_CPUID	40	/* N */
#define LIVE_RUNS	120	/* R */

struct live_runner {
	pthread_t t;
	struct ks_vcpu *vcpu;
	int idx;
	atomic_int *started;	/* runners past their first KVM_RUN */
	atomic_int *finished;	/* runners done */
	struct ks_errs *err;
};

static void *live_run_fn(void *arg)
{
	struct live_runner *r = arg;
	int i, ret;

	for (i = 0; i < LIVE_RUNS; i++) {
		ret = ks_vcpu_run(r->vcpu);
		if (!i)
			atomic_fetch_add(r->started, 1);
		if (ret != KS_EXIT_USER) {
			ks_errs_add(r->err, "vCPU %d, run %d: %s", r->idx, i,
				    ret < 0 ? strerror(-ret) : "not KS_EXIT_USER");
			break;
		}
	}
	atomic_fetch_add(r->finished, 1);
	return NULL;
}

/* The u64 at @off of a mapped block. */
static uint64_t mapped_u64(const void *blk, uint64_t off)
{
	return *(const volatile uint64_t *)((const char *)blk + off);
}

TEST_F_TIMEOUT(file, first_mapping_while_running_loses_no_exit, 600)
{
	struct ks_errs err = { .lock = PTHREAD_MUTEX_INITIALIZER };
	uint64_t off[LIVE_VCPUS], size[LIVE_VCPUS], page_off[LIVE_VCPUS];
	const uint64_t want_cpuid = (uint64_t)LIVE_RUNS * LIVE_CPUID;
	const uint64_t want_io = LIVE_RUNS;
	int rounds = ks_stress_scale(), round, i, ret, sfd[LIVE_VCPUS];
	struct live_runner run[LIVE_VCPUS];
	atomic_int started, finished;
	size_t len, map_len[LIVE_VCPUS];
	int running, overlapped = 0;
	unsigned char code[32];
	void *m[LIVE_VCPUS];
	struct ks_vm vm;
	double t0;

	NEED_SETUP();
	len = ks_code_cpuid_out_loop(code, LIVE_CPUID);
	for (round = 0; round < rounds; round++) {
		uint64_t cpuid_pos, io_pos, o, sz, po, v;

		ret = ks_vm_create(&vm, code, len, LIVE_VCPUS);
		ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
		/* Before any vCPU runs: PREEMPT_RT counts from the first fd. */
		for (i = 0; i < LIVE_VCPUS; i++) {
			sfd[i] = ioctl(vm.vcpu[i].fd, KVM_GET_STATS_FD, 0);
			ASSERT_LE(0, sfd[i]) TH_LOG("vCPU %d: %s", i,
						    strerror(errno));
			ret = ks_fdinfo_map(sfd[i], &off[i], &size[i],
					    &page_off[i]);
			ASSERT_EQ(0, ret) TH_LOG("vCPU %d: %s", i, strerror(-ret));
			ASSERT_EQ(self->map_off, off[i]);
			ASSERT_EQ(self->map_size, size[i]);
			ASSERT_GE(MAX_DATA, size[i]);
			map_len[i] = (page_off[i] + size[i] + self->page - 1) /
				     self->page * self->page;
			m[i] = MAP_FAILED;
		}
		err.count = 0;
		atomic_store(&started, 0);
		atomic_store(&finished, 0);
		for (i = 0; i < LIVE_VCPUS; i++) {
			run[i] = (struct live_runner){
				.vcpu = &vm.vcpu[i], .idx = i,
				.started = &started, .finished = &finished,
				.err = &err,
			};
			ret = pthread_create(&run[i].t, NULL, live_run_fn, &run[i]);
			ASSERT_EQ(0, ret) TH_LOG("pthread_create: %s", strerror(ret));
		}
		t0 = ks_now_s();
		while (atomic_load(&started) < LIVE_VCPUS && ks_now_s() < t0 + 60)
			ks_sleep_us(200);
		if (atomic_load(&started) < LIVE_VCPUS)
			ks_errs_add(&err, "round %d: only %d vCPUs ran in 60 s",
				    round, atomic_load(&started));
		running = LIVE_VCPUS - atomic_load(&finished);
		/* The first of these moves every vCPU's counters. */
		for (i = 0; i < LIVE_VCPUS; i++) {
			m[i] = mmap(NULL, map_len[i], PROT_READ, MAP_SHARED,
				    sfd[i], 0);
			if (m[i] == MAP_FAILED)
				ks_errs_add(&err, "round %d: mmap of vCPU %d: %s",
					    round, i, strerror(errno));
		}
		for (i = 0; i < LIVE_VCPUS; i++)
			pthread_join(run[i].t, NULL);
		overlapped += running > 0;
		EXPECT_EQ(0, err.count) TH_LOG("round %d: %ld errors; the first: %s",
					       round, err.count, err.first);

		/* Quiet now: every count is final. */
		cpuid_pos = self->hist_off - self->map_off + 8 * self->ec.cpuid;
		io_pos = self->hist_off - self->map_off + 8 * self->ec.io;
		for (i = 0; i < LIVE_VCPUS; i++) {
			const char *blk;
			char when[64];

			ASSERT_EQ(0, ks_pread_exact(sfd[i], &v, 8,
						    self->data_offset + off[i] +
						    cpuid_pos));
			EXPECT_EQ(want_cpuid, v)
				TH_LOG("round %d, vCPU %d: %s by pread",
				       round, i, self->ec.stat);
			ASSERT_EQ(0, ks_pread_exact(sfd[i], &v, 8,
						    self->data_offset + off[i] +
						    io_pos));
			EXPECT_EQ(want_io, v) TH_LOG("round %d, vCPU %d: I/O by pread",
						     round, i);
			ret = ks_fdinfo_map(sfd[i], &o, &sz, &po);
			EXPECT_EQ(0, ret);
			EXPECT_EQ(page_off[i], po)
				TH_LOG("round %d, vCPU %d: fdinfo's page offset changed",
				       round, i);
			if (m[i] == MAP_FAILED)
				continue;
			blk = (const char *)m[i] + page_off[i];
			EXPECT_EQ(want_cpuid, mapped_u64(blk, cpuid_pos))
				TH_LOG("round %d, vCPU %d: %s in the mapping",
				       round, i, self->ec.stat);
			EXPECT_EQ(want_io, mapped_u64(blk, io_pos))
				TH_LOG("round %d, vCPU %d: I/O in the mapping",
				       round, i);
			snprintf(when, sizeof(when), "round %d, vCPU %d",
				 round, i);
			expect_block_same(_metadata, sfd[i],
					  self->data_offset + off[i], size[i],
					  blk, when);
			munmap(m[i], map_len[i]);
		}
		for (i = 0; i < LIVE_VCPUS; i++)
			close(sfd[i]);
		ks_vm_destroy(&vm);
	}
	/* Not a failure: then this run moved counters that stood still. */
	if (overlapped < rounds)
		TH_LOG("%d of %d first mappings came after every vCPU was done",
		       rounds - overlapped, rounds);
}

TEST_HARNESS_MAIN
