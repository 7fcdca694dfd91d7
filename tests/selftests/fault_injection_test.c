// SPDX-License-Identifier: GPL-2.0
/*
 * Failed allocations, on purpose, everywhere the module allocates at run
 * time: the stats fd (its file, the VM and vCPU state behind it), the
 * first mmap() of a VM's vCPU file (the pages its counters move into) and
 * the exit path (state created at a vCPU's first exit).
 *
 * The kernel's fault injection does the failing: /proc/thread-self/fail-nth
 * makes the Nth fault point this thread reaches fail (failslab,
 * fail_page_alloc).  For N = 1, 2, ... until the call goes through with the
 * fault unused, every allocation on the path fails once, in turn.  Each
 * failure must give a clear errno, leak nothing (no fd, no module object),
 * and leave the module working: the next call succeeds and counting
 * resumes.  The judge fails the run on any splat; kmemleak (on the debug
 * kernel) sees leaks of memory that is not ours to count.
 *
 * Where the faults come from: the kernel's fault injection, on a kernel
 * with CONFIG_FAULT_INJECTION and CONFIG_FAILSLAB (the rig's debug kernel);
 * else the module's own fault points, in a build of it made for that
 * (KS_FAULT_POINTS=1: include/kvm_statsfd/fault.h), which
 * KVM_STATSFD_FAULTS_KO names and this program then loads instead of
 * KVM_STATSFD_KO.  Those fail the module's own calls as a whole, an
 * allocation of the kernel's inside them (anon_inode_getfile's) included,
 * and reach the code of kernels that have no fault injection (5.10's
 * native stats, brought by the module).  With neither, it skips, an
 * expected skip (tests/vm/manifest).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ks_harness.h"
#include "internal.h"	/* white-box: reads the handle's fields */
#include "ks_util.h"

/* More fault points than any path of ours reaches. */
#define MAX_NTH		200
#define FAILSLAB	"/sys/kernel/debug/failslab/"
#define FAIL_PAGE	"/sys/kernel/debug/fail_page_alloc/"

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	close(fd);
	return n < 0 ? -errno : 0;
}

static enum { FAULTS_NONE, FAULTS_KERNEL, FAULTS_MODULE } faults;

/* The module's: /sys/kernel/debug/kvm_statsfd/fail_nth (src/fault.c). */
#define MODULE_FAIL_NTH	"/sys/kernel/debug/kvm_statsfd/fail_nth"
#define LOAD_FAULT_NTH	"/sys/module/kvm_statsfd/parameters/fault_nth"

static const char *fail_nth_file(void)
{
	return faults == FAULTS_MODULE ? MODULE_FAIL_NTH :
					 "/proc/thread-self/fail-nth";
}

/*
 * Before ks_util.c's program load (a constructor of default priority), so
 * that the module this program loads is the one with the fault points.
 */
static void __attribute__((constructor(101))) pick_faults(void)
{
	const char *ko = getenv("KVM_STATSFD_FAULTS_KO");

	if (!access("/proc/thread-self/fail-nth", W_OK) &&
	    !access(FAILSLAB "ignore-gfp-wait", W_OK)) {
		faults = FAULTS_KERNEL;
	} else if (ko && *ko && !access(ko, R_OK)) {
		faults = FAULTS_MODULE;
		setenv("KVM_STATSFD_KO", ko, 1);
	}
}

/* Arm the Nth fault point of this thread. */
static int fail_nth_set(int n)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d", n);
	return write_str(fail_nth_file(), buf);
}

/* 0 once the armed fault was used, else what is left of N. */
static int fail_nth_left(void)
{
	char buf[16] = "";
	int fd = open(fail_nth_file(), O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (read(fd, buf, sizeof(buf) - 1) < 0)
		buf[0] = '\0';
	close(fd);
	return atoi(buf);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * Sleeping allocations fail too (the default spares them), and quietly:
 * the injector's own stack traces would read as splats to the judge.
 */
static int fault_injection_setup(void)
{
	static const char *const files[][2] = {
		{ FAILSLAB "ignore-gfp-wait", "N" },
		{ FAILSLAB "verbose", "0" },
		{ FAIL_PAGE "ignore-gfp-wait", "N" },
		{ FAIL_PAGE "ignore-gfp-highmem", "N" },
		{ FAIL_PAGE "verbose", "0" },
	};
	unsigned int i;
	int ret;

	if (faults == FAULTS_MODULE)
		return access(MODULE_FAIL_NTH, W_OK) ? -errno : 0;
	if (faults != FAULTS_KERNEL)
		return -ENOENT;
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		ret = write_str(files[i][0], files[i][1]);
		if (ret && strncmp(files[i][0], FAIL_PAGE, strlen(FAIL_PAGE)))
			return ret;
	}
	return 0;
}

/* Only our state caches fail (KVM's own first run allocates a lot). */
static int only_our_caches(int on)
{
	static const char *const caches[] = {
		"/sys/kernel/slab/kvm_statsfd_vm/failslab",
		"/sys/kernel/slab/kvm_statsfd_vcpu/failslab",
		"/sys/kernel/slab/kvm_statsfd_counters/failslab",
	};
	unsigned int i;
	int ret;

	if (faults == FAULTS_MODULE)	/* the module's points are all ours */
		return 0;
	ret = write_str(FAILSLAB "cache-filter", on ? "Y" : "N");
	for (i = 0; !ret && i < ARRAY_SIZE(caches); i++)
		ret = write_str(caches[i], on ? "1" : "0");
	/* Page allocations of no order are considered: none consume N. */
	if (!ret)
		ret = write_str(FAIL_PAGE "min-order", on ? "20" : "1");
	return ret;
}

/* Where the module-load test looks for its allocations (struct load_scope). */
struct load_scope {
	unsigned long start;		/* the end of the kernel image */
	unsigned long reject_start;	/* kmem_cache_create()'s code */
	unsigned long reject_end;
	unsigned int depth;		/* frames the injector looks at */
};

/*
 * Count and fail only allocations with a return address at or above
 * @sc->start among their @sc->depth innermost frames and none inside
 * [@sc->reject_start, @sc->reject_end); @sc NULL: every allocation again.
 */
static int load_filter(const struct load_scope *sc)
{
	static const char *const dirs[] = { FAILSLAB, FAIL_PAGE };
	const char *const names[] = {
		"require-start", "require-end", "reject-start", "reject-end",
		"stacktrace-depth",
	};
	unsigned long vals[] = { 0, ~0ul, 0, 0, 32 };
	char path[128], val[32];
	unsigned int i, j;
	int ret = 0;

	if (faults == FAULTS_MODULE)	/* the module's points are all ours */
		return 0;
	if (sc) {
		vals[0] = sc->start;
		vals[2] = sc->reject_start;
		vals[3] = sc->reject_end;
		vals[4] = sc->depth;
	}
	for (i = 0; !ret && i < 2; i++) {
		for (j = 0; !ret && j < 5; j++) {
			snprintf(path, sizeof(path), "%s%s", dirs[i], names[j]);
			snprintf(val, sizeof(val), "%lu", vals[j]);
			ret = write_str(path, val);
		}
	}
	return ret;
}

/* Guest code: 20 CPUIDs, then OUT; a second KVM_RUN does it again. */
static const unsigned int seg_cpuid[] = { 20, 20 };

FIXTURE(fault) {
	struct ks_module_state mod;
	struct ks_exit_codes ec;
	unsigned char code[128];
	size_t code_len;
	int ready;
};

FIXTURE_SETUP(fault)
{
	int ret;

	KS_SETUP_MODULE(&self->mod, "superset");
	ret = fault_injection_setup();
	if (ret)
		SKIP(return, "no fault injection in this kernel (CONFIG_FAILSLAB, debugfs) and no module with its own fault points (KVM_STATSFD_FAULTS_KO): %s",
		     strerror(-ret));
	ks_host_exit_codes(&self->ec);
	self->code_len = ks_code_cpuid_segments(self->code, sizeof(self->code),
						seg_cpuid, 2);
	ASSERT_NE(0, self->code_len);
	self->ready = 1;
}

FIXTURE_TEARDOWN(fault)
{
	fail_nth_set(0);
	if (self->ready) {
		only_our_caches(0);
		load_filter(NULL);
	}
	KS_TEARDOWN_MODULE(&self->mod);
}

#define NEED_SETUP() do { if (!self->ready) return; } while (0)

/*
 * KVM_GET_STATS_FD on a VM (@vcpu_file 0) or vCPU file of a fresh VM each
 * time, with its Nth allocation failing, for every N.
 */
static void stats_fd_faults(struct __test_metadata *_metadata,
			    struct _test_data_fault *self, int vcpu_file)
{
	long files0 = ks_objects_read("files");
	long vms0 = ks_objects_read("vms");
	int n, fd, err, left, fds0, failed = 0;

	/* A VM's counters arena takes pages (order 0): fail them too. */
	write_str(FAIL_PAGE "min-order", "0");
	for (n = 1; n <= MAX_NTH; n++) {
		struct ks_vm vm;
		int target;

		ASSERT_EQ(0, ks_vm_create(&vm, self->code, self->code_len, 1));
		target = vcpu_file ? vm.vcpu[0].fd : vm.fd;
		fds0 = count_fds();
		ASSERT_EQ(0, fail_nth_set(n));
		fd = ioctl(target, KVM_GET_STATS_FD, 0);
		err = errno;
		left = fail_nth_left();
		fail_nth_set(0);

		if (fd < 0) {
			EXPECT_EQ(0, left) TH_LOG("fault %d unused, yet: %s", n,
						  strerror(err));
			EXPECT_TRUE(err == ENOMEM || err == ENFILE)
				TH_LOG("fault %d: errno %d (%s)", n, err,
				       strerror(err));
			EXPECT_EQ(fds0, count_fds()) TH_LOG("fault %d leaked an fd", n);
			failed++;
			/* Nothing half-made stays behind: a retry works. */
			fd = ioctl(target, KVM_GET_STATS_FD, 0);
			ASSERT_LE(0, fd) TH_LOG("retry after fault %d: %s", n,
						strerror(errno));
		}
		{
			char id[64] = "";

			EXPECT_EQ(0, ks_pread_exact(fd, id, 48, 24))
				TH_LOG("reading the fd made after fault %d", n);
			EXPECT_EQ(0, strncmp(id, "kvm-", 4));
		}
		close(fd);
		ks_vm_destroy(&vm);
		if (left)	/* the path has fewer than n fault points */
			break;
	}
	write_str(FAIL_PAGE "min-order", "1");
	EXPECT_GE(MAX_NTH, n) TH_LOG("more than %d fault points?", MAX_NTH);
	EXPECT_LT(0, failed) TH_LOG("no fault ever hit the ioctl");
	TH_LOG("%s stats fd: %d fault points, %d failed the ioctl",
	       vcpu_file ? "vCPU" : "VM", n - 1, failed);
	EXPECT_EQ(files0, ks_objects_wait_le("files", files0, KS_FREE_WAIT_MS));
	EXPECT_EQ(vms0, ks_objects_wait_le("vms", vms0, KS_FREE_WAIT_MS));
}

TEST_F(fault, vm_stats_fd_every_allocation)
{
	NEED_SETUP();
	stats_fd_faults(_metadata, self, 0);
}

TEST_F(fault, vcpu_stats_fd_every_allocation)
{
	NEED_SETUP();
	stats_fd_faults(_metadata, self, 1);
}

/*
 * 0 if the @size bytes mapped at @blk (each u64 loaded whole) are what a
 * pread of @size bytes of @fd at @pos reads, 1 if not, or -errno.
 */
static int mapped_equals_pread(int fd, uint64_t pos, uint64_t size,
			       const void *blk)
{
	static uint64_t want[8192], got[8192];
	const volatile uint64_t *src = blk;
	unsigned int i;
	int ret;

	if (size > sizeof(want))
		return -E2BIG;
	ret = ks_pread_exact(fd, want, size, pos);
	if (ret)
		return ret;
	for (i = 0; i < size / 8; i++)
		got[i] = src[i];
	return memcmp(want, got, size) ? 1 : 0;
}

/*
 * The first mmap() of any vCPU file of a VM moves the counters of all its
 * vCPUs out of their slab blocks into pages allocated then.  With each
 * allocation of that mmap() failing in turn (on a fresh 1-vCPU VM each
 * time, its stats fd opened with no fault): ENOMEM, and a retry maps.
 * Either way the mapping then reads what pread reads, and counts the next
 * run as the module does; no VM state, stats file or counter page is left
 * once the VMs are gone and the mappings unmapped.
 */
TEST_F(fault, first_mmap_every_allocation)
{
	uint64_t data_off, hist_off, off, size, page_off;
	long page = sysconf(_SC_PAGESIZE);
	long files0, vms0, pages0;
	int n, err, left, failed = 0;
	const struct kvmstats_desc *d;
	struct kvmstats s = { 0 };
	struct ks_vm vm;

	NEED_SETUP();
	files0 = ks_objects_read("files");
	vms0 = ks_objects_read("vms");
	pages0 = ks_objects_read("counter_pages");
	ASSERT_LE(0, pages0);
	/*
	 * The layout, from a VM of its own, so that nothing but the mmap
	 * under test ever maps the VMs below.
	 */
	ASSERT_EQ(0, ks_vm_create(&vm, self->code, self->code_len, 1));
	ASSERT_EQ(0, kvmstats_open_from(&s, vm.vcpu[0].fd)) TH_LOG("%s", s.err);
	data_off = s.hdr.data_offset;
	d = ks_find(&s, self->ec.stat);
	ASSERT_NE(NULL, d) TH_LOG("no %s", self->ec.stat);
	hist_off = d->offset;
	kvmstats_close(&s);
	ks_vm_destroy(&vm);

	/* The counter pages are order 0: fail those too. */
	write_str(FAIL_PAGE "min-order", "0");
	for (n = 1; n <= MAX_NTH; n++) {
		uint64_t mapped = 0, counted = 0, h[256];
		const volatile uint64_t *mh;
		unsigned int i;
		size_t len;
		void *m;
		int sfd;

		ASSERT_EQ(0, ks_vm_create(&vm, self->code, self->code_len, 1));
		sfd = ioctl(vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
		ASSERT_LE(0, sfd) TH_LOG("KVM_GET_STATS_FD: %s", strerror(errno));
		ASSERT_EQ(0, ks_fdinfo_map(sfd, &off, &size, &page_off));
		ASSERT_LE(off, hist_off);
		ASSERT_GE(off + size, hist_off + 8 * self->ec.buckets);
		len = (page_off + size + page - 1) / page * page;
		ASSERT_EQ(0, fail_nth_set(n));
		m = mmap(NULL, len, PROT_READ, MAP_SHARED, sfd, 0);
		err = errno;
		left = fail_nth_left();
		fail_nth_set(0);

		if (m == MAP_FAILED) {
			EXPECT_EQ(0, left) TH_LOG("fault %d unused, yet: %s", n,
						  strerror(err));
			EXPECT_EQ(ENOMEM, err) TH_LOG("fault %d: errno %d (%s)",
						      n, err, strerror(err));
			failed++;
			/* Nothing half-moved stays behind: a retry works. */
			m = mmap(NULL, len, PROT_READ, MAP_SHARED, sfd, 0);
			ASSERT_NE(MAP_FAILED, m)
				TH_LOG("retry after fault %d: %s", n,
				       strerror(errno));
		}
		EXPECT_EQ(0, mapped_equals_pread(sfd, data_off + off, size,
						 (const char *)m + page_off))
			TH_LOG("fault %d: the mapping differs from pread", n);
		/* Counting goes on, into the pages mapped. */
		EXPECT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[0]));
		mh = (const volatile uint64_t *)((const char *)m + page_off +
						 hist_off - off);
		ASSERT_EQ(0, ks_pread_exact(sfd, h, 8 * self->ec.buckets,
					    data_off + hist_off));
		for (i = 0; i < self->ec.buckets; i++) {
			mapped += mh[i];
			counted += h[i];
		}
		EXPECT_LT(20, mapped) TH_LOG("fault %d", n);
		EXPECT_EQ(counted, mapped)
			TH_LOG("fault %d: %llu exits mapped, %llu by pread", n,
			       (unsigned long long)mapped,
			       (unsigned long long)counted);
		munmap(m, len);
		close(sfd);
		ks_vm_destroy(&vm);
		if (left)	/* the path has fewer than n fault points */
			break;
	}
	write_str(FAIL_PAGE "min-order", "1");
	EXPECT_GE(MAX_NTH, n) TH_LOG("more than %d fault points?", MAX_NTH);
	EXPECT_LT(0, failed) TH_LOG("no fault ever failed the mmap");
	TH_LOG("first mmap: %d fault points, %d failed it", n - 1, failed);
	EXPECT_EQ(files0, ks_objects_wait_le("files", files0, KS_FREE_WAIT_MS));
	EXPECT_EQ(vms0, ks_objects_wait_le("vms", vms0, KS_FREE_WAIT_MS));
	EXPECT_EQ(pages0, ks_objects_wait_le("counter_pages", pages0, KS_FREE_WAIT_MS))
		TH_LOG("counter pages left");
}

/* Module exit-reason exits of a vCPU stats fd, and the native "exits". */
static void exit_counts(struct __test_metadata *_metadata, int stats_fd,
			const char *stat, unsigned int buckets, uint64_t *own,
			uint64_t *native)
{
	uint64_t v[256];
	unsigned int i;
	int ret;

	ret = ks_stat_read(stats_fd, stat, v, buckets, NULL, 0);
	ASSERT_EQ((int)buckets, ret);
	*own = 0;
	for (i = 0; i < buckets; i++)
		*own += v[i];
	ASSERT_EQ(1, ks_stat_read(stats_fd, "exits", native, 1, NULL, 0));
}

/*
 * A vCPU's state is made the first time a probe sees it (its first VM
 * entry), without sleeping.  With each of the module's state allocations
 * of the first KVM_RUN failing in turn, KVM_RUN works and no exit goes
 * uncounted: the failed allocation costs that entry's timing only, the
 * next probe makes the state.  The next run is counted exactly.
 */
TEST_F_TIMEOUT(fault, exit_path_every_allocation, 300)
{
	int n, left, r, consumed = 0;

	NEED_SETUP();
	if (ks_kernel_is_rt())
		SKIP(return, "PREEMPT_RT: the exit path never allocates");
	r = only_our_caches(1);
	ASSERT_EQ(0, r) TH_LOG("failslab cache filter: %s", strerror(-r));
	for (n = 1; n <= MAX_NTH; n++) {
		uint64_t own1, nat1, own2, nat2;
		struct ks_vm vm;
		int sfd;

		ASSERT_EQ(0, ks_vm_create(&vm, self->code, self->code_len, 1));
		ASSERT_EQ(0, fail_nth_set(n));
		r = ks_vcpu_run(&vm.vcpu[0]);
		left = fail_nth_left();
		fail_nth_set(0);
		consumed += !left;
		EXPECT_EQ(KS_EXIT_USER, r) TH_LOG("fault %d: %s", n,
						 r < 0 ? strerror(-r) : "exit");
		sfd = ioctl(vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
		ASSERT_LE(0, sfd) TH_LOG("after fault %d: %s", n, strerror(errno));
		exit_counts(_metadata, sfd, self->ec.stat, self->ec.buckets,
			    &own1, &nat1);
		EXPECT_EQ(nat1, own1) TH_LOG("fault %d: %llu of %llu exits counted",
					     n, (unsigned long long)own1,
					     (unsigned long long)nat1);
		/* Counting goes on: the next run is counted exactly. */
		EXPECT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[0]));
		exit_counts(_metadata, sfd, self->ec.stat, self->ec.buckets,
			    &own2, &nat2);
		EXPECT_EQ(nat2 - nat1, own2 - own1) TH_LOG("fault %d", n);
		close(sfd);
		ks_vm_destroy(&vm);
		if (left)
			break;
	}
	only_our_caches(0);
	EXPECT_GE(MAX_NTH, n);
	EXPECT_LT(0, consumed) TH_LOG("no fault ever hit the module's state");
	TH_LOG("first KVM_RUN: %d state allocations, each failed once", consumed);
}

/*
 * Module load.  finit_module() of kvm_statsfd.ko with the Nth allocation
 * failing, for N = 1, 2, ... until a load goes through without reaching
 * it.  What counts as an allocation here (the injector's stack filter,
 * struct load_scope):
 *  - one made with code outside the kernel image among its innermost
 *    frames: the module's init and everything it calls.  Not the loader's
 *    work before it (reading the file, laying the module out, its sysfs
 *    directory): the kernel's, and it reports those failures itself with
 *    stack dumps (warn_alloc()) that no test can tell from a bug;
 *  - none inside kmem_cache_create(): on failure it dump_stack()s by
 *    design, and 6.12's sysfs_slab_add() then leaks the cache's kobject
 *    name (kobject_init_and_add() failing without a kobject_put(): 120
 *    kmemleak reports in one run, all that one backtrace);
 *  - the module's frame among the 10 innermost: deeper, 6.12's KASAN
 *    allocates shadow for each ftrace trampoline without __GFP_NOWARN
 *    (kasan_alloc_module_shadow(), under register_ftrace_function()),
 *    warn_alloc() again; ftrace itself carries on without the trampoline.
 *
 * Each failed load must return ENOMEM and leave nothing behind: no module,
 * none of its slab caches, no ftrace hook on KVM's functions, no probe on
 * KVM's tracepoints (right after, with the module gone, a VM runs, opens
 * KVM's own stats fd and is destroyed), and kmemleak (the debug kernel's)
 * finds nothing.  A load that goes through with its fault used (the
 * allocation had a fallback: kmemleak's own pool, ftrace without a
 * trampoline) must work.  After every 16th failure and at the end, a
 * normal load works and counts every exit.
 */
#define MAX_LOAD_NTH	3000
#define LOAD_CHECK_EVERY	16

/*
 * /proc/kallsyms: the address of @name, and in @next (if not NULL) the
 * lowest address above it, the end of that function.  0 if not found.
 */
static unsigned long kallsyms_addr(const char *name, unsigned long *next)
{
	unsigned long addr, found = 0, above = ~0ul;
	FILE *f = fopen("/proc/kallsyms", "re");
	char type, sym[256];

	if (!f)
		return 0;
	while (fscanf(f, "%lx %c %255s%*[^\n]", &addr, &type, sym) == 3) {
		if (!found && !strcmp(sym, name) && addr) {
			found = addr;
			if (!next)
				break;
			rewind(f);
			continue;
		}
		if (found && addr > found && addr < above)
			above = addr;
	}
	fclose(f);
	if (next)
		*next = above;
	return found;
}

/* 1 if @path exists. */
static int exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* 1 if a line of @path contains @needle, 0 if not, -errno. */
static int file_has(const char *path, const char *needle)
{
	FILE *f = fopen(path, "re");
	char line[512];
	int found = 0;

	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f))
		found = !!strstr(line, needle);
	fclose(f);
	return found;
}

/* What a load leaves behind; empty when nothing.  */
static void load_leftovers(char *why, size_t len)
{
	static const char *const caches[] = {
		"/sys/kernel/slab/kvm_statsfd_vm",
		"/sys/kernel/slab/kvm_statsfd_vcpu",
		"/sys/kernel/slab/kvm_statsfd_counters",
	};
	static const char *const hooked[] = {
		"kvm_vm_ioctl", "kvm_vcpu_ioctl", "kvm_vm_ioctl_check_extension",
		"kvm_arch_destroy_vm", "anon_inode_getfile",
		"anon_inode_getfile_fmode",
	};
	unsigned int i;

	why[0] = '\0';
	if (ks_module_loaded() || file_has("/proc/modules", "kvm_statsfd ") > 0) {
		snprintf(why, len, "the module is still there");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(caches); i++) {
		if (exists(caches[i])) {
			snprintf(why, len, "%s is still there", caches[i]);
			return;
		}
	}
	for (i = 0; i < ARRAY_SIZE(hooked); i++) {
		if (ks_traced(hooked[i]) > 0) {
			snprintf(why, len, "%s is still hooked", hooked[i]);
			return;
		}
	}
}

/*
 * With the module not loaded: a VM runs (a probe left on kvm_exit or
 * kvm_entry would be called in freed memory), its stats fd is KVM's own
 * (a hook left on kvm_vm_ioctl likewise), and it is destroyed.
 */
static void kvm_alone_works(struct __test_metadata *_metadata,
			    struct _test_data_fault *self, int n)
{
	struct ks_vm vm;
	int fd;

	ASSERT_EQ(0, ks_vm_create(&vm, self->code, self->code_len, 1));
	EXPECT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[0])) TH_LOG("after fault %d", n);
	if (ks_native_binary_stats() == 1) {
		fd = ioctl(vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
		EXPECT_LE(0, fd) TH_LOG("KVM's stats fd after fault %d: %s", n,
					strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	ks_vm_destroy(&vm);
}

/*
 * The module (loaded first if @load, and then unloaded again) counts
 * every exit of a VM.
 */
static void load_counts(struct __test_metadata *_metadata,
			struct _test_data_fault *self, int n, int load)
{
	uint64_t own, native;
	struct ks_vm vm;
	int ret, sfd;

	if (load) {
		ret = ks_module_load("");
		ASSERT_EQ(0, ret) TH_LOG("normal load after fault %d: %s", n,
					 strerror(-ret));
	}
	ASSERT_EQ(0, ks_vm_create(&vm, self->code, self->code_len, 1));
	EXPECT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[0]));
	EXPECT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[0]));
	sfd = ioctl(vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, sfd) TH_LOG("after fault %d: %s", n, strerror(errno));
	exit_counts(_metadata, sfd, self->ec.stat, self->ec.buckets, &own,
		    &native);
	EXPECT_LT(40, own) TH_LOG("after fault %d", n);
	EXPECT_EQ(native, own) TH_LOG("after fault %d: %llu of %llu exits counted",
				      n, (unsigned long long)own,
				      (unsigned long long)native);
	close(sfd);
	ks_vm_destroy(&vm);
	if (load) {
		ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
		ASSERT_EQ(0, ret) TH_LOG("unload after fault %d: %s", n,
					 strerror(-ret));
	}
}

/* What fail_nth_left() said after the last load_with_fault(). */
static int load_left;

/*
 * A load with its Nth fault failing.  The module's own points are armed by
 * its parameter, which reads what was left of N once loaded; a load that
 * failed used its fault.
 */
static int load_with_fault(int n)
{
	char params[32], buf[16] = "";
	int ret;

	if (faults == FAULTS_MODULE) {
		snprintf(params, sizeof(params), "fault_nth=%d", n);
		ret = ks_module_load(params);
		load_left = 0;
		if (!ret) {
			int fd = open(LOAD_FAULT_NTH, O_RDONLY | O_CLOEXEC);

			if (fd < 0 || read(fd, buf, sizeof(buf) - 1) < 0)
				buf[0] = '\0';
			if (fd >= 0)
				close(fd);
			load_left = atoi(buf);
		}
		return ret;
	}
	ret = fail_nth_set(n);
	if (ret)
		return ret;
	ret = ks_module_load("");
	load_left = fail_nth_left();
	fail_nth_set(0);
	return ret;
}

TEST_F_TIMEOUT(fault, load_every_allocation, 1500)
{
	int n, ret, left, failed = 0, absorbed = 0, checked = 0;
	struct load_scope sc = { .depth = 10 };
	char why[160];

	NEED_SETUP();
	if (faults == FAULTS_KERNEL) {
		sc.start = kallsyms_addr("_end", NULL);
		if (!sc.start)
			SKIP(return, "no _end in /proc/kallsyms (kptr_restrict?)");
		sc.reject_start = kallsyms_addr("__kmem_cache_create_args",
						&sc.reject_end);
		if (!sc.reject_start)
			sc.reject_start = kallsyms_addr("kmem_cache_create_usercopy",
							&sc.reject_end);
		ASSERT_NE(0, sc.reject_start)
			TH_LOG("no kmem_cache_create in /proc/kallsyms");
	}
	/* Asked now: it reloads the module when loaded (cached after). */
	ks_native_binary_stats();
	ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
	ASSERT_EQ(0, ret) TH_LOG("unloading: %s", strerror(-ret));
	ret = load_filter(&sc);
	ASSERT_EQ(0, ret) TH_LOG("fault injection stack filter: %s",
				 strerror(-ret));
	for (n = 1; n <= MAX_LOAD_NTH; n++) {
		ret = load_with_fault(n);
		left = load_left;
		if (!ret) {
			/* Went through: the fault had a fallback, or no use. */
			absorbed += !left;
			if (!left)
				load_counts(_metadata, self, n, 0);
			ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
			ASSERT_EQ(0, ret) TH_LOG("unload after fault %d: %s", n,
						 strerror(-ret));
			if (left)
				break;
			continue;
		}
		failed++;
		EXPECT_EQ(0, left) TH_LOG("load failed with fault %d unused: %s",
					  n, strerror(-ret));
		EXPECT_EQ(-ENOMEM, ret) TH_LOG("fault %d: errno %d (%s)", n,
					       -ret, strerror(-ret));
		load_leftovers(why, sizeof(why));
		EXPECT_STREQ("", why) TH_LOG("fault %d: %s", n, why);
		if (why[0])
			break;
		kvm_alone_works(_metadata, self, n);
		if (failed % LOAD_CHECK_EVERY == 0) {
			load_counts(_metadata, self, n, 1);
			checked++;
		}
	}
	load_filter(NULL);
	EXPECT_GE(MAX_LOAD_NTH, n) TH_LOG("more than %d fault points?",
					  MAX_LOAD_NTH);
	EXPECT_LT(0, failed) TH_LOG("no fault ever failed the load");
	load_counts(_metadata, self, n, 1);
	TH_LOG("load: %d fault points, %d failed it, %d went through; %d checks",
	       n - 1, failed, absorbed, checked + 1);
}

TEST_HARNESS_MAIN
