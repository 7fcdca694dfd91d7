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
 * A kernel without binary stats of its own (KVM_CHECK_EXTENSION(
 * KVM_CAP_BINARY_STATS_FD) is 0 without the module: 5.10) refuses the
 * ioctl (ENOTTY on a VM fd, EINVAL on a vCPU fd) and shows its counters
 * in debugfs only (/sys/kernel/debug/kvm/<pid>-<fd>/<name>: VM stats, and
 * vCPU stats summed over the VM's vCPUs; no per-vCPU files).  There the
 * module's native part is compared with debugfs: every debugfs stat is
 * served once, in the VM file or in the vCPU files, one u64 each, before
 * the module's own stats; VM values equal debugfs, and so do the vCPU
 * files' values summed; each vCPU's values grew by what debugfs gained
 * while that vCPU alone ran (the tests run one vCPU at a time and keep
 * those deltas per vCPU; some counters, host_state_reload, also move in
 * the ioctls that set a vCPU up, before the module's fds are opened).
 *
 * own mode: only the module's stat, with the same counts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ks_harness.h"
#include "internal.h"	/* white-box: reads the handle's fields */
#include "ks_util.h"

#define NR_VCPUS	3
#define MAX_DBG		128	/* debugfs stats of a VM */
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
	/* KVM_CAP_BINARY_STATS_FD as the kernel answers it. */
	int native_cap;
	/* Opened before the module was loaded: served by KVM itself. */
	int vm_native, vcpu_native[NR_VCPUS];
	/*
	 * Without native_cap: the VM's debugfs stats, and what each gained
	 * while vCPU i alone ran (run_vcpu()).
	 */
	int ndbg;
	char dbg_name[MAX_DBG][NAME_SIZE];
	uint64_t dbg_vcpu[NR_VCPUS][MAX_DBG];
	/* superset: each vCPU file's native values when it was opened. */
	uint64_t mod_base[NR_VCPUS][MAX_DBG];
	/* Opened after: served by the module. */
	int vm_stats, vcpu_stats[NR_VCPUS];
};

/* The VM's debugfs directory. */
static void dbg_dir(const struct ctx *c, char *buf, size_t len)
{
	snprintf(buf, len, "/sys/kernel/debug/kvm/%d-%d", getpid(), c->vm.fd);
}

/* The names of the stats (regular files) in the VM's debugfs directory. */
static void dbg_list(struct __test_metadata *_metadata, struct ctx *c)
{
	char dir[128], path[512];
	struct dirent *e;
	struct stat st;
	DIR *d;

	dbg_dir(c, dir, sizeof(dir));
	d = opendir(dir);
	ASSERT_NE(NULL, d) TH_LOG("%s: %s", dir, strerror(errno));
	c->ndbg = 0;
	while ((e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] == '.' || stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		ASSERT_GT(MAX_DBG, c->ndbg);
		ASSERT_GT(NAME_SIZE, strlen(e->d_name));
		strcpy(c->dbg_name[c->ndbg++], e->d_name);
	}
	closedir(d);
	ASSERT_LT(0, c->ndbg) TH_LOG("no stats in %s", dir);
}

static int dbg_index(const struct ctx *c, const char *name)
{
	int i;

	for (i = 0; i < c->ndbg; i++)
		if (!strcmp(c->dbg_name[i], name))
			return i;
	return -1;
}

/* Every debugfs stat of the VM, now. */
static void dbg_snapshot(struct __test_metadata *_metadata, struct ctx *c,
			 uint64_t *v)
{
	int i, ret;

	for (i = 0; i < c->ndbg; i++) {
		ret = ks_debugfs_vm_stat(&c->vm, c->dbg_name[i], &v[i]);
		EXPECT_EQ(0, ret) TH_LOG("debugfs %s: %s", c->dbg_name[i],
					 strerror(-ret));
	}
}

/*
 * KVM_RUN on vCPU @i; without native stats fds, what debugfs gained
 * meanwhile is that vCPU's (one vCPU runs at a time here).
 */
static int run_vcpu(struct __test_metadata *_metadata, struct ctx *c, int i)
{
	uint64_t before[MAX_DBG], after[MAX_DBG];
	int ret, k;

	if (c->native_cap)
		return ks_vcpu_run(&c->vm.vcpu[i]);
	dbg_snapshot(_metadata, c, before);
	ret = ks_vcpu_run(&c->vm.vcpu[i]);
	dbg_snapshot(_metadata, c, after);
	for (k = 0; k < c->ndbg; k++)
		c->dbg_vcpu[i][k] += after[k] - before[k];
	return ret;
}

static uint64_t stat_of(struct __test_metadata *_metadata, int fd,
			const char *name, unsigned int i);

/*
 * The kernel's own value of vCPU @i's stat @name: from its stats fd, or
 * from what debugfs gained while that vCPU ran.
 */
static uint64_t native_vcpu(struct __test_metadata *_metadata, struct ctx *c,
			    int i, const char *name)
{
	int k;

	if (c->native_cap)
		return stat_of(_metadata, c->vcpu_native[i], name, 0);
	k = dbg_index(c, name);
	EXPECT_LE(0, k) TH_LOG("no debugfs stat %s", name);
	return k < 0 ? 0 : c->dbg_vcpu[i][k];
}

static void ctx_setup(struct __test_metadata *_metadata, struct ctx *c,
		      const char *mode)
{
	unsigned char code[256];
	struct kvmstats s = { 0 };
	size_t len;
	unsigned int j;
	int ret, i, k;

	if (access("/dev/kvm", R_OK | W_OK))
		SKIP(return, "/dev/kvm is not usable: %s", strerror(errno));
	ks_module_save(&c->mod);
	if (c->mod.was_loaded) {
		ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
		ASSERT_EQ(0, ret) TH_LOG("unloading: %s", strerror(-ret));
	}
	c->native_cap = ks_native_binary_stats();
	ASSERT_LE(0, c->native_cap) TH_LOG("KVM_CHECK_EXTENSION without the module: %s",
					   strerror(-c->native_cap));
	ks_host_exit_codes(&c->ec);

	len = ks_code_cpuid_segments(code, sizeof(code), seg_cpuid, 2);
	ASSERT_NE(0, len);
	ret = ks_vm_create(&c->vm, code, len, NR_VCPUS);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	c->vm_created = 1;

	if (!c->native_cap) {
		/* The kernel has no stats fd: it refuses, and has debugfs. */
		c->vm_native = -1;
		EXPECT_EQ(-1, ioctl(c->vm.fd, KVM_GET_STATS_FD, 0));
		EXPECT_EQ(ENOTTY, errno);
		for (i = 0; i < NR_VCPUS; i++) {
			c->vcpu_native[i] = -1;
			EXPECT_EQ(-1, ioctl(c->vm.vcpu[i].fd, KVM_GET_STATS_FD, 0));
			EXPECT_EQ(EINVAL, errno);
		}
		dbg_list(_metadata, c);
		ASSERT_LE(0, dbg_index(c, "exits"));
		goto load;
	}
	c->vm_native = ioctl(c->vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, c->vm_native) TH_LOG("native KVM_GET_STATS_FD: %s",
					  strerror(errno));
	for (i = 0; i < NR_VCPUS; i++) {
		c->vcpu_native[i] = ioctl(c->vm.vcpu[i].fd, KVM_GET_STATS_FD, 0);
		ASSERT_LE(0, c->vcpu_native[i]);
	}
	/* Really the kernel's: no stat of ours. */
	ASSERT_EQ(0, kvmstats_open(&s, dup(c->vcpu_native[0]))) TH_LOG("%s", s.err);
	ASSERT_EQ(NULL, ks_find(&s, c->ec.stat));
	ASSERT_NE(NULL, ks_find(&s, "exits"));
	kvmstats_close(&s);

load:
	ret = ks_module_ensure(mode);
	ASSERT_EQ(0, ret) TH_LOG("loading %s mode=%s: %s", ks_module_path(),
				 mode, strerror(-ret));

	c->vm_stats = ioctl(c->vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, c->vm_stats) TH_LOG("KVM_GET_STATS_FD: %s", strerror(errno));
	for (i = 0; i < NR_VCPUS; i++) {
		c->vcpu_stats[i] = ioctl(c->vm.vcpu[i].fd, KVM_GET_STATS_FD, 0);
		ASSERT_LE(0, c->vcpu_stats[i]);
		if (c->native_cap)
			continue;
		ASSERT_EQ(0, kvmstats_open(&s, dup(c->vcpu_stats[i]))) TH_LOG("%s", s.err);
		for (j = 0; j < s.num_desc; j++) {
			k = dbg_index(c, s.descs[j].name);
			if (k >= 0)
				c->mod_base[i][k] = kvmstats_value(&s, &s.descs[j], 0);
		}
		kvmstats_close(&s);
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
	struct kvmstats s = { 0 };
	uint64_t v;
	int ret;

	ret = kvmstats_open(&s, dup(fd));
	EXPECT_EQ(0, ret) TH_LOG("libkvmstats: %s", s.err);
	if (ret)
		return 0;
	d = ks_find(&s, name);
	EXPECT_NE(NULL, d) TH_LOG("no stat %s", name);
	v = d ? kvmstats_value(&s, d, i) : 0;
	kvmstats_close(&s);
	return v;
}

/*
 * The exit-reason histogram of a stats fd; returns the exits the module
 * counted there (the sum of its buckets, but on arm64: ks_exits_counted()).
 */
static uint64_t exit_hist(struct __test_metadata *_metadata, int fd,
			  const struct ks_exit_codes *ec, uint64_t *h)
{
	const struct kvmstats_desc *d;
	struct kvmstats s = { 0 };
	uint64_t sum = 0;
	unsigned int i;
	int ret;

	memset(h, 0, ec->buckets * sizeof(*h));
	ret = kvmstats_open(&s, dup(fd));
	EXPECT_EQ(0, ret) TH_LOG("libkvmstats: %s", s.err);
	if (ret)
		return 0;
	d = ks_find(&s, ec->stat);
	EXPECT_NE(NULL, d) TH_LOG("no stat %s", ec->stat);
	if (d) {
		EXPECT_EQ(ec->buckets, d->size);
		for (i = 0; i < d->size && i < ec->buckets; i++) {
			h[i] = kvmstats_value(&s, d, i);
			sum += h[i];
		}
	}
	kvmstats_close(&s);
	if (strcmp(ec->total, ec->stat))
		sum = ks_exits_counted(fd, ec);
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
	/* A raw descriptor's name, for kvmstats_stem(). */
	struct kvmstats_desc raw = { 0 };
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
		/* A VM file's: its vCPUs' sum (vcpus_exit_reasons_svm). */
		raw.name = (const char *)d + 16;
		if (strcmp(ec->stat, kvmstats_stem(&raw)))
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

/*
 * Without native stats fds: the file starts as 5.14's would (header, id),
 * then the native descriptors, one per debugfs stat of the kind, one u64
 * each, in seconds for "_ns" stats, cumulative unless debugfs makes them
 * read-only; then the module's own, after the native values.  Returns the
 * native names in @names (NAME_SIZE each), their count.
 */
static int check_prefix_legacy(struct __test_metadata *_metadata,
			       struct ctx *c, int fd, const char *want_id,
			       char (*names)[NAME_SIZE])
{
	const struct kvmstats_desc *d;
	char dir[128], path[512];
	unsigned int i, nd = 0;
	int found = 0, k;
	struct kvmstats s = { 0 };
	struct stat st;
	off_t size;

	dbg_dir(c, dir, sizeof(dir));
	if (kvmstats_open(&s, dup(fd))) {
		EXPECT_TRUE(0) TH_LOG("libkvmstats: %s", s.err);
		return 0;
	}
	EXPECT_EQ(0, s.hdr.flags);
	EXPECT_EQ(NAME_SIZE, s.hdr.name_size);
	EXPECT_EQ(24, s.hdr.id_offset);
	EXPECT_EQ(72, s.hdr.desc_offset);
	EXPECT_EQ(72 + s.hdr.num_desc * DESC_SIZE, s.hdr.data_offset);
	EXPECT_STREQ(want_id, s.id);

	/* The native descriptors: a run of debugfs names at the start. */
	while (nd < s.num_desc && dbg_index(c, s.descs[nd].name) >= 0)
		nd++;
	EXPECT_LT(0, nd) TH_LOG("%s: no debugfs stat at the start", want_id);
	for (i = 0; i < nd; i++) {
		d = &s.descs[i];
		strcpy(names[i], d->name);
		EXPECT_EQ(1, d->size) TH_LOG("%s", d->name);
		EXPECT_EQ(0, d->bucket_size) TH_LOG("%s", d->name);
		EXPECT_EQ(KVM_STATS_BASE_POW10, d->base) TH_LOG("%s", d->name);
		EXPECT_GT(nd * 8, d->offset) TH_LOG("%s: native value past the native block",
						    d->name);
		if (strlen(d->name) > 3 &&
		    !strcmp(d->name + strlen(d->name) - 3, "_ns")) {
			EXPECT_EQ(KVM_STATS_UNIT_SECONDS, d->unit) TH_LOG("%s", d->name);
			EXPECT_EQ(-9, d->exponent) TH_LOG("%s", d->name);
		} else {
			EXPECT_EQ(KVM_STATS_UNIT_NONE, d->unit) TH_LOG("%s", d->name);
			EXPECT_EQ(0, d->exponent) TH_LOG("%s", d->name);
		}
		EXPECT_TRUE(d->type == KVM_STATS_TYPE_CUMULATIVE ||
			    d->type == KVM_STATS_TYPE_INSTANT ||
			    d->type == KVM_STATS_TYPE_PEAK) TH_LOG("%s", d->name);
		/* debugfs lets one clear a counter; a read-only one is a level. */
		snprintf(path, sizeof(path), "%s/%s", dir, d->name);
		if (!stat(path, &st) && !(st.st_mode & 0222)) {
			EXPECT_NE(KVM_STATS_TYPE_CUMULATIVE, d->type)
				TH_LOG("%s is read-only in debugfs", d->name);
		}
	}
	/* Kinds every kernel of the architecture has, by their meaning. */
	for (i = 0; i < nd; i++) {
		static const char *const counters[] = {
			"exits", KS_STAT_USER_EXITS, KS_STAT_STOP_EXITS,
			"remote_tlb_flush",
		};

		for (k = 0; k < (int)(sizeof(counters) / sizeof(counters[0])); k++) {
			if (strcmp(s.descs[i].name, counters[k]))
				continue;
			EXPECT_EQ(KVM_STATS_TYPE_CUMULATIVE, s.descs[i].type)
				TH_LOG("%s", s.descs[i].name);
		}
		if (!strcmp(s.descs[i].name, "max_mmu_page_hash_collisions"))
			EXPECT_EQ(KVM_STATS_TYPE_PEAK, s.descs[i].type);
	}

	/* Then the module's own, their values after the native ones. */
	for (i = nd; i < s.num_desc; i++) {
		d = &s.descs[i];
		EXPECT_GT(0, dbg_index(c, d->name))
			TH_LOG("%s: a debugfs stat among the module's", d->name);
		EXPECT_LE(nd * 8, d->offset) TH_LOG("%s", d->name);
		if (strcmp(c->ec.stat, kvmstats_stem(d)))
			continue;
		found = 1;
		EXPECT_EQ(c->ec.buckets, d->size);
		EXPECT_EQ(1, d->bucket_size);
	}
	EXPECT_TRUE(found) TH_LOG("no %s after the native stats", c->ec.stat);
	size = lseek(fd, 0, SEEK_END);
	EXPECT_EQ(s.hdr.data_offset + s.data_size, size);
	kvmstats_close(&s);
	return nd;
}

TEST_F(superset, native_prefix_identical)
{
	static char vm_names[MAX_DBG][NAME_SIZE], vcpu_names[MAX_DBG][NAME_SIZE];
	char want[64], vcpu0[MAX_DBG][NAME_SIZE];
	int i, j, k, nvm, n, seen;
	volatile int nvcpu = 0;

	NEED_SETUP();
	if (!self->c.native_cap) {
		snprintf(want, sizeof(want), "kvm-%d", getpid());
		nvm = check_prefix_legacy(_metadata, &self->c, self->c.vm_stats,
					  want, vm_names);
		for (i = 0; i < NR_VCPUS; i++) {
			snprintf(want, sizeof(want), "kvm-%d/vcpu-%d", getpid(), i);
			n = check_prefix_legacy(_metadata, &self->c,
						self->c.vcpu_stats[i], want,
						i ? vcpu_names : vcpu0);
			if (!i) {
				nvcpu = n;
				continue;
			}
			/* Every vCPU's file describes the same stats. */
			EXPECT_EQ(nvcpu, n);
			for (j = 0; j < n && j < nvcpu; j++)
				EXPECT_STREQ(vcpu0[j], vcpu_names[j]);
		}
		/* Each debugfs stat in one kind's file, once. */
		for (k = 0; k < self->c.ndbg; k++) {
			seen = 0;
			for (j = 0; j < nvm; j++)
				seen += !strcmp(vm_names[j], self->c.dbg_name[k]);
			for (j = 0; j < nvcpu; j++)
				seen += !strcmp(vcpu0[j], self->c.dbg_name[k]);
			EXPECT_EQ(1, seen) TH_LOG("debugfs stat %s is served %d times",
						  self->c.dbg_name[k], seen);
		}
		EXPECT_EQ(self->c.ndbg, nvm + nvcpu);
		return;
	}
	check_prefix(_metadata, self->c.vm_native, self->c.vm_stats, &self->c.ec);
	for (i = 0; i < NR_VCPUS; i++)
		check_prefix(_metadata, self->c.vcpu_native[i],
			     self->c.vcpu_stats[i], &self->c.ec);
}

static void run_all_to_hlt(struct __test_metadata *_metadata, struct ctx *c)
{
	int i;

	for (i = 0; i < c->vm.nr_vcpus; i++) {
		ASSERT_EQ(KS_EXIT_USER, run_vcpu(_metadata, c, i));
		ASSERT_EQ(KS_EXIT_USER, run_vcpu(_metadata, c, i));
		ASSERT_EQ(KS_EXIT_STOP, run_vcpu(_metadata, c, i));
	}
}

/*
 * Without native stats fds: the native values of the module's file equal
 * the kernel's (debugfs now for the VM, @vcpu < 0; what debugfs gained
 * while vCPU @vcpu ran for a vCPU).  Returns how many were compared.
 */
static int check_values_legacy(struct __test_metadata *_metadata,
			       struct ctx *c, int fd, int vcpu)
{
	uint64_t now[MAX_DBG], want;
	struct kvmstats s = { 0 };
	unsigned int i;
	int k, n = 0;

	dbg_snapshot(_metadata, c, now);
	if (kvmstats_open(&s, dup(fd))) {
		EXPECT_TRUE(0) TH_LOG("libkvmstats: %s", s.err);
		return 0;
	}
	for (i = 0; i < s.num_desc; i++) {
		k = dbg_index(c, s.descs[i].name);
		if (k < 0)
			break;	/* the module's own from here */
		want = vcpu < 0 ? now[k] :
			c->mod_base[vcpu][k] + c->dbg_vcpu[vcpu][k];
		EXPECT_EQ(want, kvmstats_value(&s, &s.descs[i], 0))
			TH_LOG("%s of %s", s.descs[i].name,
			       vcpu < 0 ? "the VM" : "a vCPU");
		n++;
	}
	kvmstats_close(&s);
	return n;
}

/* Without native stats fds: the vCPU files' native values sum to debugfs. */
static void check_vcpu_sums_legacy(struct __test_metadata *_metadata,
				   struct ctx *c)
{
	uint64_t now[MAX_DBG], sum[MAX_DBG] = { 0 };
	int served[MAX_DBG] = { 0 };
	struct kvmstats s = { 0 };
	unsigned int j;
	int i, k, n = 0;

	for (i = 0; i < NR_VCPUS; i++) {
		ASSERT_EQ(0, kvmstats_open(&s, dup(c->vcpu_stats[i]))) TH_LOG("%s", s.err);
		for (j = 0; j < s.num_desc; j++) {
			k = dbg_index(c, s.descs[j].name);
			if (k < 0)
				break;
			sum[k] += kvmstats_value(&s, &s.descs[j], 0);
			served[k]++;
		}
		kvmstats_close(&s);
	}
	dbg_snapshot(_metadata, c, now);
	for (k = 0; k < c->ndbg; k++) {
		if (!served[k])
			continue;
		EXPECT_EQ(NR_VCPUS, served[k]) TH_LOG("%s", c->dbg_name[k]);
		EXPECT_EQ(now[k], sum[k]) TH_LOG("%s: debugfs %llu, the vCPU files' sum %llu",
						 c->dbg_name[k],
						 (unsigned long long)now[k],
						 (unsigned long long)sum[k]);
		n++;
	}
	EXPECT_LT(0, n);
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
	run_all_to_hlt(_metadata, &self->c);
	for (i = 0; i < NR_VCPUS; i++) {
		/* Not a comparison of zeros. */
		EXPECT_LT(N1 + N2, native_vcpu(_metadata, &self->c, i, "exits"));
		if (!self->c.native_cap) {
			EXPECT_LT(0, check_values_legacy(_metadata, &self->c,
							 self->c.vcpu_stats[i], i));
			continue;
		}
		check_values(_metadata, self->c.vcpu_native[i],
			     self->c.vcpu_stats[i]);
	}
	if (!self->c.native_cap) {
		EXPECT_LT(0, check_values_legacy(_metadata, &self->c,
						 self->c.vm_stats, -1));
		check_vcpu_sums_legacy(_metadata, &self->c);
	} else {
		check_values(_metadata, self->c.vm_native, self->c.vm_stats);
	}
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
	int fd, i;

	NEED_SETUP();
	for (i = 0; i < NR_VCPUS; i++) {
		fd = self->c.vcpu_stats[i];

		sum = exit_hist(_metadata, fd, ec, h);
		EXPECT_EQ(0, sum) TH_LOG("vCPU %d has not run yet", i);

		ASSERT_EQ(KS_EXIT_USER, run_vcpu(_metadata, &self->c, i));
		sum = exit_hist(_metadata, fd, ec, h);
		exits = stat_of(_metadata, fd, "exits", 0);
		EXPECT_EQ(N1, h[ec->cpuid]) TH_LOG("vCPU %d", i);
		EXPECT_EQ(1, h[ec->io]);
		EXPECT_EQ(0, h[ec->hlt]);
		EXPECT_EQ(exits, sum) TH_LOG("vCPU %d after segment 1", i);

		ASSERT_EQ(KS_EXIT_USER, run_vcpu(_metadata, &self->c, i));
		sum = exit_hist(_metadata, fd, ec, h);
		exits = stat_of(_metadata, fd, "exits", 0);
		EXPECT_EQ(N1 + N2, h[ec->cpuid]) TH_LOG("vCPU %d", i);
		EXPECT_EQ(2, h[ec->io]);
		EXPECT_EQ(0, h[ec->hlt]);
		EXPECT_EQ(exits, sum) TH_LOG("vCPU %d after segment 2", i);

		ASSERT_EQ(KS_EXIT_STOP, run_vcpu(_metadata, &self->c, i));
		sum = exit_hist(_metadata, fd, ec, h);
		exits = stat_of(_metadata, fd, "exits", 0);
		EXPECT_EQ(N1 + N2, h[ec->cpuid]);
		EXPECT_EQ(2, h[ec->io]);
		EXPECT_EQ(1, h[ec->hlt]);
		EXPECT_EQ(0, h[ec->other]);
		EXPECT_EQ(exits, sum) TH_LOG("vCPU %d after hlt", i);
		EXPECT_EQ(stat_of(_metadata, fd, KS_STAT_USER_EXITS, 0), h[ec->io]);
		EXPECT_EQ(stat_of(_metadata, fd, KS_STAT_STOP_EXITS, 0), h[ec->hlt]);
		/* The kernel's own stats agree. */
		EXPECT_EQ(native_vcpu(_metadata, &self->c, i, "exits"), sum);
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
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm->vcpu[0]));
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm->vcpu[1]));
	check_vm_sum(_metadata, &self->c, 2 * N1);
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm->vcpu[0]));
	ASSERT_EQ(KS_EXIT_STOP, ks_vcpu_run(&vm->vcpu[0]));
	check_vm_sum(_metadata, &self->c, 2 * N1 + N2);
}

/* own mode: the module's stats alone, no native one. */
static void check_own_layout(struct __test_metadata *_metadata, int fd,
			     const struct ks_exit_codes *ec)
{
	const struct kvmstats_desc *d;
	uint32_t min_off = ~0u;
	struct kvmstats s = { 0 };
	unsigned int i;
	off_t size;

	ASSERT_EQ(0, kvmstats_open(&s, dup(fd))) TH_LOG("%s", s.err);
	EXPECT_EQ(0, s.hdr.flags);
	EXPECT_EQ(NAME_SIZE, s.hdr.name_size);
	EXPECT_LE(1, s.hdr.num_desc);
	EXPECT_EQ(24, s.hdr.id_offset);
	EXPECT_EQ(72, s.hdr.desc_offset);
	EXPECT_EQ(72 + s.hdr.num_desc * DESC_SIZE, s.hdr.data_offset);
	d = ks_find(&s, ec->stat);
	ASSERT_NE(NULL, d);
	EXPECT_EQ(ec->buckets, d->size);
	EXPECT_EQ(1, d->bucket_size);
	EXPECT_EQ(KVM_STATS_TYPE_LINEAR_HIST, d->type);
	for (i = 0; i < s.num_desc; i++)
		if (s.descs[i].offset < min_off)
			min_off = s.descs[i].offset;
	EXPECT_EQ(0, min_off) TH_LOG("the data block starts with a hole");
	EXPECT_EQ(NULL, ks_find(&s, "exits"));
	EXPECT_EQ(NULL, ks_find(&s, "halt_exits"));
	EXPECT_EQ(NULL, ks_find(&s, "remote_tlb_flush"));
	size = lseek(fd, 0, SEEK_END);
	EXPECT_EQ(s.hdr.data_offset + s.data_size, size);
	kvmstats_close(&s);
}

TEST_F(own, layout)
{
	char mode[32] = "", want[64];
	struct kvmstats s = { 0 };
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
	run_all_to_hlt(_metadata, &self->c);
	for (i = 0; i < NR_VCPUS; i++) {
		sum = exit_hist(_metadata, self->c.vcpu_stats[i], ec, h);
		native = native_vcpu(_metadata, &self->c, i, "exits");
		EXPECT_EQ(native, sum) TH_LOG("vCPU %d", i);
		EXPECT_EQ(N1 + N2, h[ec->cpuid]);
		EXPECT_EQ(2, h[ec->io]);
		EXPECT_EQ(1, h[ec->hlt]);
		EXPECT_EQ(native_vcpu(_metadata, &self->c, i, KS_STAT_USER_EXITS),
			  h[ec->io]);
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
	run_all_to_hlt(_metadata, &self->c);
	/* The VM file: every value is summed at read time. */
	size = ks_read_whole(self->c.vm_stats, full, MAX_FILE);
	ASSERT_LT(0, size);
	bad = ks_sweep_reads(self->c.vm_stats, full, size, 64, why, sizeof(why));
	EXPECT_EQ(0, bad) TH_LOG("%ld reads disagree; first: %s", bad, why);
	free(full);
}

TEST_HARNESS_MAIN
