// SPDX-License-Identifier: GPL-2.0
/*
 * Scale: many VMs, the biggest VM KVM allows, rmmod racing VM destruction
 * and CPU hotplug while vCPUs run.  Sized by KS_STRESS_SCALE: 1 is the
 * quick version `make check` runs on every lane, `make stress` runs 10
 * (tests/vm/stress.sh).  KS_SCALE_VMS and KS_SCALE_VCPUS override the
 * sizes of the first two tests (for measuring).
 *
 *  many_live_vms: N VMs live at once (64 at scale 1, 110 x scale from
 *    scale 2: 1100 in make stress), each with one vCPU, a VM stats fd and a
 *    vCPU stats fd, taken before the vCPU runs.  VM i's vCPU runs
 *    1 + i % 7 CPUIDs, an OUT and a HLT.  Then, all of them still live:
 *    the module holds exactly N VM states, N vCPU states and 2N files;
 *    every file has the header of the first file of its kind and KVM's
 *    name for its VM (kvm-PID, kvm-PID/vcpu-0); every vCPU histogram
 *    counts exactly its VM's CPUIDs, one OUT and one HLT, and sums to the
 *    kernel's own "exits" (where it has one); every VM file's "vcpus" is
 *    1 and each of its stats equals its vCPU's.  The VMs are then
 *    destroyed with their stats fds still open, which read the same
 *    values; closed, nothing is left.  Time and memory are logged.
 *  max_vcpus_vm: one VM with KVM_CHECK_EXTENSION(KVM_CAP_MAX_VCPUS)
 *    vCPUs (at scale 1 at most 64 of them), each with a stats fd taken
 *    before it runs; one more KVM_CREATE_VCPU is refused (at the full
 *    size: that is KVM's limit).  vCPU i runs 1 + i % 5 CPUIDs (its SI
 *    register), an OUT and a HLT: every vCPU file counts exactly that,
 *    the VM file's "vcpus" is N, its exit histogram and every other sum
 *    of a vCPU stat (vcpus_<name>) are the sums (the maxima for peak
 *    stats) of the N vCPUs'; the module holds N vCPU states.
 *  rmmod_races_vm_destruction: threads create VMs, run them and destroy
 *    them (closing the VM's fds in a random order, sometimes leaving a
 *    stats fd the last holder) while the main thread unloads and loads
 *    the module in a loop.  Every unload succeeds or is refused as busy,
 *    every load succeeds, every KVM_RUN returns the guest's exits, every
 *    KVM_GET_STATS_FD gives the module's file, KVM's, or (without native
 *    stats, 5.10) KVM's own refusal; a vCPU whose module stats fd was
 *    taken before it ran (which pins the module: it cannot be unloaded
 *    meanwhile) counts its exits exactly; the loop goes on until at least
 *    one cycle went through and one such vCPU was counted.  After it an
 *    open stats fd makes rmmod fail with EBUSY, a fresh VM counts exactly,
 *    and once the VMs are gone the module holds no object.
 *  cpu_hotplug_while_vcpus_run: vCPU threads of one VM run in a loop and
 *    a thread reads their stats fds while CPU 1 is taken offline and back
 *    online, over and over.  In each round, a short VM runs on CPU 1
 *    (filling that CPU's cache of the last vCPU), is destroyed while CPU 1
 *    is offline, and a new VM then runs on CPU 1 once it is back: each
 *    counts exactly.  Every hotplug write succeeds and reads back, KVM_RUN
 *    never fails, counts never go backwards, and at the end every vCPU's
 *    histogram holds exactly its runs' CPUIDs and OUTs, the VM's is their
 *    sum.
 *
 * After every test the process's fds and /sys/kernel/debug/kvm_statsfd/
 * {files,vms,vcpus} are back to their values before it (vms and vcpus
 * polled: they drop after an RCU grace period and a work item).  The rig
 * fails the run on any kernel WARN, BUG, lockdep or KASAN report.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ks_harness.h"
#include "internal.h"	/* white-box: reads the handle's fields */
#include "ks_util.h"

#define TIMEOUT_S	3600	/* the harness's alarm; the tests stop sooner */
#define NOFILE		65536
#define CPU1_ONLINE	"/sys/devices/system/cpu/cpu1/online"

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

static int env_int(const char *name, int def)
{
	const char *s = getenv(name);

	return s && *s ? atoi(s) : def;
}

/* MemAvailable of /proc/meminfo, in KiB, or -1. */
static long mem_available_kb(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long kb = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* Run this thread on @cpu only, or (-1) on every CPU. */
static int pin_to(int cpu)
{
	cpu_set_t set;
	int i;

	CPU_ZERO(&set);
	if (cpu >= 0) {
		CPU_SET(cpu, &set);
	} else {
		for (i = 0; i < CPU_SETSIZE; i++)
			CPU_SET(i, &set);
	}
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/*
 * The layout of one kind of file (VM or vCPU), parsed once from its first
 * file: files of a kind share their header and descriptors (the tests of
 * stats_fd_test check that), so the others are read by header, id and data
 * block alone.  That keeps thousands of files cheap to read under TCG.
 */
struct layout {
	struct kvmstats s;
	int ok;
};

static int layout_open(struct layout *l, int fd)
{
	int d = dup(fd), ret;

	memset(l, 0, sizeof(*l));
	ret = kvmstats_open(&l->s, d);
	if (ret) {
		if (d >= 0)
			close(d);
		return ret;
	}
	l->ok = 1;
	return 0;
}

static void layout_close(struct layout *l)
{
	if (l->ok)
		kvmstats_close(&l->s);
	l->ok = 0;
}

/*
 * Read @fd as a file of @l's kind: its header must be @l's, its id goes
 * to @id (@idlen bytes), its data block to @data.  0, or -1 with @why.
 */
static int read_file(const struct layout *l, int fd, char *id, size_t idlen,
		     uint64_t *data, char *why, size_t wl)
{
	struct kvm_stats_header h;
	int ret;

	ret = ks_pread_exact(fd, &h, sizeof(h), 0);
	if (ret) {
		snprintf(why, wl, "reading the header: %s", strerror(-ret));
		return -1;
	}
	if (memcmp(&h, &l->s.hdr, sizeof(h))) {
		snprintf(why, wl, "a header unlike the first file's");
		return -1;
	}
	if (h.name_size > idlen) {
		snprintf(why, wl, "name_size %u", h.name_size);
		return -1;
	}
	ret = ks_pread_exact(fd, id, h.name_size, h.id_offset);
	if (!ret)
		ret = ks_pread_exact(fd, data, l->s.data_size, h.data_offset);
	if (ret) {
		snprintf(why, wl, "reading: %s", strerror(-ret));
		return -1;
	}
	id[h.name_size - 1] = '\0';
	return 0;
}

static uint64_t val(const struct layout *l, const uint64_t *data,
		    const struct kvmstats_desc *d, unsigned int i)
{
	return data[d->offset / 8 + i];
}

/*
 * A vCPU file's exit histogram (@h, @buckets wide) against what its guest
 * did: @cpuid CPUIDs, @io OUTs, @hlt HLTs; interrupt exits and the like may
 * come on top, but every bucket must sum to the kernel's "exits" where the
 * file has it.  0 or -1 with @why.
 */
static int check_vcpu(const struct layout *l, const uint64_t *data,
		      const struct ks_exit_codes *ec, uint64_t cpuid,
		      uint64_t io, uint64_t hlt, char *why, size_t wl)
{
	const struct kvmstats_desc *h = ks_find(&l->s, ec->stat);
	const struct kvmstats_desc *t = ks_find(&l->s, ec->total);
	const struct kvmstats_desc *ex = ks_find(&l->s, "exits");
	uint64_t sum = 0;
	unsigned int b;

	if (!h || h->size != ec->buckets) {
		snprintf(why, wl, "no %s of %u buckets", ec->stat, ec->buckets);
		return -1;
	}
	if (val(l, data, h, ec->cpuid) != cpuid || val(l, data, h, ec->io) != io ||
	    val(l, data, h, ec->hlt) != hlt) {
		snprintf(why, wl, "cpuid %llu io %llu hlt %llu, want %llu %llu %llu",
			 (unsigned long long)val(l, data, h, ec->cpuid),
			 (unsigned long long)val(l, data, h, ec->io),
			 (unsigned long long)val(l, data, h, ec->hlt),
			 (unsigned long long)cpuid, (unsigned long long)io,
			 (unsigned long long)hlt);
		return -1;
	}
	/* What counts every exit: the histogram, or arm64's exit kinds. */
	if (!t) {
		snprintf(why, wl, "no %s", ec->total);
		return -1;
	}
	for (b = 0; b < t->size; b++)
		sum += val(l, data, t, b);
	if (ex && val(l, data, ex, 0) != sum) {
		snprintf(why, wl, "histogram sums to %llu, native exits %llu",
			 (unsigned long long)sum,
			 (unsigned long long)val(l, data, ex, 0));
		return -1;
	}
	return 0;
}

/*
 * A VM file against its @n vCPUs' files: "vcpus" is @n, and each of the
 * VM file's sums of a vCPU stat (vcpus_<name>) is their sum, or their
 * maximum for a peak stat.  0 or -1 with @why.
 */
static int check_vm_sums(const struct layout *vml, const uint64_t *vmd,
			 const struct layout *vcl, uint64_t *const *vcd,
			 int n, char *why, size_t wl)
{
	const struct kvmstats_desc *nr = ks_find(&vml->s, "vcpus");
	unsigned int k, j;
	int i, shared = 0;

	if (!nr || val(vml, vmd, nr, 0) != (uint64_t)n) {
		snprintf(why, wl, "VM file: vcpus %lld, want %d",
			 nr ? (long long)val(vml, vmd, nr, 0) : -1LL, n);
		return -1;
	}
	for (k = 0; k < vml->s.num_desc; k++) {
		const struct kvmstats_desc *dv = &vml->s.descs[k];
		const struct kvmstats_desc *dc;

		if (kvmstats_stem(dv) == dv->name)
			continue;	/* KVM's own VM stat, or vcpus */
		dc = ks_find(&vcl->s, kvmstats_stem(dv));
		if (!dc) {
			snprintf(why, wl, "%s sums no vCPU stat", dv->name);
			return -1;
		}
		if (dc->size != dv->size) {
			snprintf(why, wl, "%s: %u values in the VM file, %u in a vCPU's",
				 dv->name, dv->size, dc->size);
			return -1;
		}
		shared++;
		for (j = 0; j < dv->size; j++) {
			uint64_t agg = 0, v;

			for (i = 0; i < n; i++) {
				v = val(vcl, vcd[i], dc, j);
				if (dv->type == KVM_STATS_TYPE_PEAK)
					agg = v > agg ? v : agg;
				else
					agg += v;
			}
			if (val(vml, vmd, dv, j) != agg) {
				snprintf(why, wl, "VM %s[%u] = %llu, its %d vCPUs' %s %llu",
					 dv->name, j,
					 (unsigned long long)val(vml, vmd, dv, j), n,
					 dv->type == KVM_STATS_TYPE_PEAK ? "max" : "sum",
					 (unsigned long long)agg);
				return -1;
			}
		}
	}
	if (!shared) {
		snprintf(why, wl, "the VM file sums no vCPU stat");
		return -1;
	}
	return 0;
}

/* A vCPU outside struct ks_vm (which holds KS_MAX_VCPUS), set up as its are. */
struct big_vcpu {
	int fd;
	int sfd;
	struct kvm_run *run;
};

static int big_vcpu_create(int vm_fd, int run_size, int id, uint64_t count,
			   struct big_vcpu *v)
{
	v->sfd = -1;
	v->run = NULL;
	v->fd = ioctl(vm_fd, KVM_CREATE_VCPU, id);
	if (v->fd < 0)
		return -errno;
	v->run = mmap(NULL, run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      v->fd, 0);
	if (v->run == MAP_FAILED) {
		v->run = NULL;
		return -errno;
	}
	return ks_vcpu_setup(vm_fd, v->fd, count);
}

/* As ks_vcpu_run() runs it (on arm64: bounded, its state told if stuck). */
static int big_vcpu_run(struct big_vcpu *v)
{
	struct ks_vcpu vcpu = { .fd = v->fd, .run = v->run };

	return ks_vcpu_run(&vcpu);
}

/* ------------------------------------------------------------------ */
/* The fixture                                                         */

FIXTURE(scale) {
	struct ks_module_state mod;
	struct ks_exit_codes ec;
	int scale;
	double deadline;
	struct ks_baseline base;
	int ready;
};

FIXTURE_SETUP(scale)
{
	struct rlimit rl = { NOFILE, NOFILE };

	KS_SETUP_MODULE(&self->mod, "superset");
	ks_host_exit_codes(&self->ec);
	/* Thousands of fds: a VM fd, vCPU fds and stats fds each. */
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl)) TH_LOG("RLIMIT_NOFILE %d: %s",
							   NOFILE, strerror(errno));
	self->scale = ks_stress_scale();
	KS_BASELINE_TAKE(&self->base, KS_FREE_WAIT_MS);
	self->deadline = ks_now_s() + ks_race_seconds() * self->scale;
	self->ready = 1;
}

FIXTURE_TEARDOWN(scale)
{
	int ret, fd;

	ks_close_from(3);
	/* A failed hotplug test must not leave CPU 1 offline. */
	fd = open(CPU1_ONLINE, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1 && errno != EINVAL)
			TH_LOG("putting CPU 1 back online: %s", strerror(errno));
		close(fd);
	}
	ret = ks_module_restore(&self->mod);
	EXPECT_EQ(0, ret) TH_LOG("restoring the module: %s", strerror(-ret));
}

#define NEED_SETUP() do { if (!self->ready) return; } while (0)

static void check_no_leak(struct __test_metadata *_metadata,
			  FIXTURE_DATA(scale) *self)
{
	KS_BASELINE_CHECK(&self->base, KS_FREE_WAIT_MS);
}

/* ------------------------------------------------------------------ */
/* many_live_vms                                                       */

struct live_vm {
	struct ks_vm vm;
	int vm_sfd, vcpu_sfd;
};

TEST_F_TIMEOUT(scale, many_live_vms, TIMEOUT_S)
{
	const struct ks_exit_codes *ec = &self->ec;
	int n = env_int("KS_SCALE_VMS", self->scale == 1 ? 64 : 110 * self->scale);
	struct layout vml = { 0 }, vcl = { 0 };
	uint64_t *vmd = NULL, *vcd = NULL, *again = NULL;
	double t0, t_create, t_run, t_read, t_destroy;
	long mem0, mem1;
	struct live_vm *v;
	char id[256], want[64], why[256] = "";
	int i, ret, made = 0, bad = 0;

	NEED_SETUP();
	v = calloc(n, sizeof(*v));
	ASSERT_NE(NULL, v);
	mem0 = mem_available_kb();

	/* N VMs, each with its two stats fds before its vCPU runs. */
	t0 = ks_now_s();
	for (i = 0; i < n; i++) {
		unsigned int counts[] = { 1 + i % 7 };
		unsigned char code[64];
		size_t len = ks_code_cpuid_segments(code, sizeof(code), counts, 1);

		ret = ks_vm_create(&v[i].vm, code, len, 1);
		if (ret) {
			TH_LOG("VM %d of %d: ks_vm_create: %s (MemAvailable %ld kB)",
			       i, n, strerror(-ret), mem_available_kb());
			break;
		}
		made++;
		/* /dev/kvm's fd is not needed any more: fewer fds. */
		close(v[i].vm.kvm_fd);
		v[i].vm.kvm_fd = -1;
		v[i].vm_sfd = ioctl(v[i].vm.fd, KVM_GET_STATS_FD, 0);
		v[i].vcpu_sfd = ioctl(v[i].vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
		if (v[i].vm_sfd < 0 || v[i].vcpu_sfd < 0) {
			TH_LOG("VM %d: KVM_GET_STATS_FD: %s", i, strerror(errno));
			break;
		}
	}
	t_create = ks_now_s() - t0;
	ASSERT_EQ(n, made);
	ASSERT_LE(0, v[n - 1].vcpu_sfd);

	t0 = ks_now_s();
	for (i = 0; i < n; i++) {
		int a = ks_vcpu_run(&v[i].vm.vcpu[0]);
		int b = ks_vcpu_run(&v[i].vm.vcpu[0]);

		if ((a != KS_EXIT_USER || b != KS_EXIT_STOP) && !bad++)
			TH_LOG("VM %d: KVM_RUN gave %d then %d", i, a, b);
	}
	t_run = ks_now_s() - t0;
	EXPECT_EQ(0, bad);
	mem1 = mem_available_kb();

	/* All of them live: one module state per VM and vCPU, 2N files. */
	EXPECT_EQ(self->base.vms + n, ks_objects_read("vms"));
	EXPECT_EQ(self->base.vcpus + n, ks_objects_read("vcpus"));
	EXPECT_EQ(self->base.files + 2 * n, ks_objects_read("files"));

	t0 = ks_now_s();
	ASSERT_EQ(0, layout_open(&vml, v[0].vm_sfd)) TH_LOG("%s", vml.s.err);
	ASSERT_EQ(0, layout_open(&vcl, v[0].vcpu_sfd)) TH_LOG("%s", vcl.s.err);
	vmd = malloc(vml.s.data_size);
	vcd = malloc(vcl.s.data_size);
	again = malloc(vml.s.data_size + vcl.s.data_size);
	ASSERT_NE(NULL, vmd);
	ASSERT_NE(NULL, vcd);
	ASSERT_NE(NULL, again);
	for (i = 0, bad = 0; i < n; i++) {
		uint64_t *vcp = vcd;

		if (read_file(&vcl, v[i].vcpu_sfd, id, sizeof(id), vcd, why,
			      sizeof(why)) ||
		    check_vcpu(&vcl, vcd, ec, 1 + i % 7, 1, 1, why, sizeof(why)))
			goto bad;
		snprintf(want, sizeof(want), "kvm-%d/vcpu-0", getpid());
		if (strcmp(id, want)) {
			snprintf(why, sizeof(why), "vCPU file id %.64s, want %s", id, want);
			goto bad;
		}
		if (read_file(&vml, v[i].vm_sfd, id, sizeof(id), vmd, why,
			      sizeof(why)) ||
		    check_vm_sums(&vml, vmd, &vcl, &vcp, 1,
				  why, sizeof(why)))
			goto bad;
		snprintf(want, sizeof(want), "kvm-%d", getpid());
		if (strcmp(id, want)) {
			snprintf(why, sizeof(why), "VM file id %.64s, want %s", id, want);
			goto bad;
		}
		continue;
bad:
		if (!bad++)
			TH_LOG("VM %d of %d: %s", i, n, why);
	}
	t_read = ks_now_s() - t0;
	EXPECT_EQ(0, bad) TH_LOG("%d of %d VMs read wrong", bad, n);

	/* Destroyed, every VM's stats fds read what they read before. */
	t0 = ks_now_s();
	for (i = 0; i < n; i++)
		ks_vm_destroy(&v[i].vm);
	t_destroy = ks_now_s() - t0;
	for (i = 0, bad = 0; i < n; i += 1 + n / 64) {
		if (read_file(&vcl, v[i].vcpu_sfd, id, sizeof(id), again, why,
			      sizeof(why)) ||
		    check_vcpu(&vcl, again, ec, 1 + i % 7, 1, 1, why, sizeof(why))) {
			if (!bad++)
				TH_LOG("VM %d after its destruction: %s", i, why);
		}
	}
	EXPECT_EQ(0, bad);
	for (i = 0; i < n; i++) {
		close(v[i].vm_sfd);
		close(v[i].vcpu_sfd);
	}
	layout_close(&vml);
	layout_close(&vcl);
	TH_LOG("%d live VMs (1 vCPU, 2 stats fds each): created in %.1f s, run in %.1f s, read in %.1f s, destroyed in %.1f s",
	       n, t_create, t_run, t_read, t_destroy);
	if (mem0 > 0 && mem1 > 0)
		TH_LOG("MemAvailable %ld -> %ld kB: %ld kB per live VM",
		       mem0, mem1, (mem0 - mem1) / n);
	free(vmd);
	free(vcd);
	free(again);
	free(v);
	check_no_leak(_metadata, self);
}

/* ------------------------------------------------------------------ */
/* max_vcpus_vm                                                        */

TEST_F_TIMEOUT(scale, max_vcpus_vm, TIMEOUT_S)
{
	const struct ks_exit_codes *ec = &self->ec;
	struct layout vml = { 0 }, vcl = { 0 };
	struct big_vcpu *vc = NULL, extra;
	uint64_t **vcd = NULL, *vmd = NULL;
	double t0, t_create, t_run, t_read;
	int max, n, i, ret, run_size, bad = 0, made = 0, vm_sfd;
	char id[256], want[64], why[256] = "";
	long mem0, mem1;
	struct ks_vm vm;

	NEED_SETUP();
	ret = ks_vm_create(&vm, ks_code_cpuid_n_out_hlt,
			   ks_code_cpuid_n_out_hlt_len, 0);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	max = ioctl(vm.fd, KVM_CHECK_EXTENSION, KVM_CAP_MAX_VCPUS);
	ASSERT_LT(0, max) TH_LOG("KVM_CAP_MAX_VCPUS: %s", strerror(errno));
	n = env_int("KS_SCALE_VCPUS", self->scale == 1 && max > 64 ? 64 : max);
	if (n > max)
		n = max;
	run_size = ioctl(vm.kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	ASSERT_LT(0, run_size);
	vc = calloc(n, sizeof(*vc));
	vcd = calloc(n, sizeof(*vcd));
	ASSERT_NE(NULL, vc);
	ASSERT_NE(NULL, vcd);
	mem0 = mem_available_kb();

	t0 = ks_now_s();
	vm_sfd = ioctl(vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, vm_sfd);
	for (i = 0; i < n; i++) {
		ret = big_vcpu_create(vm.fd, run_size, i, 1 + i % 5, &vc[i]);
		if (ret) {
			TH_LOG("vCPU %d of %d: %s (MemAvailable %ld kB)", i, n,
			       strerror(-ret), mem_available_kb());
			break;
		}
		made++;
		vc[i].sfd = ioctl(vc[i].fd, KVM_GET_STATS_FD, 0);
		if (vc[i].sfd < 0) {
			TH_LOG("vCPU %d: KVM_GET_STATS_FD: %s", i, strerror(errno));
			break;
		}
	}
	t_create = ks_now_s() - t0;
	ASSERT_EQ(n, made);
	ASSERT_LE(0, vc[n - 1].sfd);
	/* KVM's limit is what it said: one more vCPU is refused. */
	if (n == max) {
		ret = big_vcpu_create(vm.fd, run_size, n, 1, &extra);
		EXPECT_EQ(-EINVAL, ret) TH_LOG("vCPU %d of a VM of at most %d", n, max);
		if (extra.run)
			munmap(extra.run, run_size);
		if (extra.fd >= 0)
			close(extra.fd);
	}

	t0 = ks_now_s();
	for (i = 0; i < n; i++) {
		int a = big_vcpu_run(&vc[i]);
		int b = big_vcpu_run(&vc[i]);

		if ((a != KS_EXIT_USER || b != KS_EXIT_STOP) && !bad++)
			TH_LOG("vCPU %d: KVM_RUN gave %d then %d", i, a, b);
	}
	t_run = ks_now_s() - t0;
	EXPECT_EQ(0, bad);
	mem1 = mem_available_kb();
	EXPECT_EQ(self->base.vms + 1, ks_objects_read("vms"));
	EXPECT_EQ(self->base.vcpus + n, ks_objects_read("vcpus"));
	EXPECT_EQ(self->base.files + n + 1, ks_objects_read("files"));

	/* Every vCPU exact, then the VM file the sum of all of them. */
	t0 = ks_now_s();
	ASSERT_EQ(0, layout_open(&vcl, vc[0].sfd)) TH_LOG("%s", vcl.s.err);
	ASSERT_EQ(0, layout_open(&vml, vm_sfd)) TH_LOG("%s", vml.s.err);
	for (i = 0, bad = 0; i < n; i++) {
		vcd[i] = malloc(vcl.s.data_size);
		ASSERT_NE(NULL, vcd[i]);
		snprintf(want, sizeof(want), "kvm-%d/vcpu-%d", getpid(), i);
		ret = read_file(&vcl, vc[i].sfd, id, sizeof(id), vcd[i], why,
				sizeof(why));
		if (!ret)
			ret = check_vcpu(&vcl, vcd[i], ec, 1 + i % 5, 1, 1, why,
					 sizeof(why));
		if (!ret && strcmp(id, want)) {
			snprintf(why, sizeof(why), "id %.64s, want %s", id, want);
			ret = -1;
		}
		if (ret && !bad++)
			TH_LOG("vCPU %d of %d: %s", i, n, why);
	}
	EXPECT_EQ(0, bad) TH_LOG("%d of %d vCPU files wrong", bad, n);
	vmd = malloc(vml.s.data_size);
	ASSERT_NE(NULL, vmd);
	ASSERT_EQ(0, read_file(&vml, vm_sfd, id, sizeof(id), vmd, why, sizeof(why)))
		TH_LOG("%s", why);
	snprintf(want, sizeof(want), "kvm-%d", getpid());
	EXPECT_STREQ(want, id);
	EXPECT_EQ(0, check_vm_sums(&vml, vmd, &vcl, vcd, n, why, sizeof(why)))
		TH_LOG("%s", why);
	t_read = ks_now_s() - t0;

	TH_LOG("one VM of %d vCPUs (KVM_CAP_MAX_VCPUS %d), a stats fd each: created in %.1f s, run in %.1f s, all read in %.1f s",
	       n, max, t_create, t_run, t_read);
	if (mem0 > 0 && mem1 > 0)
		TH_LOG("MemAvailable %ld -> %ld kB: %ld kB per vCPU",
		       mem0, mem1, (mem0 - mem1) / n);
	for (i = 0; i < n; i++) {
		munmap(vc[i].run, run_size);
		close(vc[i].fd);
		close(vc[i].sfd);
		free(vcd[i]);
	}
	close(vm_sfd);
	ks_vm_destroy(&vm);
	layout_close(&vml);
	layout_close(&vcl);
	free(vmd);
	free(vcd);
	free(vc);
	check_no_leak(_metadata, self);
}

/* ------------------------------------------------------------------ */
/* rmmod_races_vm_destruction                                          */

#define RR_CREATORS	2
#define RR_VCPUS	2
#define RR_CPUID	9

struct rr_creator {
	pthread_t t;
	int idx;
	atomic_int *stop;
	struct ks_errs *err;
	const struct ks_exit_codes *ec;
	int native_cap;
	atomic_long *exact_all;	/* every creator's exact counts so far */
	long vms, exact, ours, native;
};

static void *rr_creator_fn(void *arg)
{
	struct rr_creator *c = arg;
	unsigned int counts[] = { RR_CPUID };
	uint64_t rs = ks_rnd_seed(c->idx + 300), h[256];
	unsigned char code[64];
	size_t len = ks_code_cpuid_segments(code, sizeof(code), counts, 1);
	struct ks_vm vm;
	int ret, i, sfd, ours, is_vm;

	while (!*c->stop) {
		ret = ks_vm_create(&vm, code, len, RR_VCPUS);
		if (ret) {
			ks_errs_add(c->err, "ks_vm_create: %s", strerror(-ret));
			ks_sleep_us(10000);
			continue;
		}
		c->vms++;
		/* Half the time a stats fd before the vCPUs run. */
		sfd = -1;
		ours = 0;
		is_vm = ks_rnd(&rs) % 4 == 0;
		if (ks_rnd(&rs) % 2) {
			sfd = ioctl(is_vm ? vm.fd : vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
			if (sfd < 0 && !c->native_cap &&
			    errno == (is_vm ? ENOTTY : EINVAL)) {
				c->native++;	/* 5.10's KVM, the module out */
			} else if (sfd < 0) {
				ks_errs_add(c->err, "KVM_GET_STATS_FD: %s", strerror(errno));
			} else {
				ret = ks_stat_read(sfd, c->ec->stat, h, 256, NULL, 0);
				if (ret == (int)c->ec->buckets)
					ours = 1;
				else if (ret == -ENOENT)
					c->native++;
				else
					ks_errs_add(c->err, "a stats fd reads %d", ret);
			}
		}
		for (i = 0; i < RR_VCPUS; i++) {
			int a = ks_vcpu_run(&vm.vcpu[i]);
			int b = ks_vcpu_run(&vm.vcpu[i]);

			if (a != KS_EXIT_USER || b != KS_EXIT_STOP)
				ks_errs_add(c->err, "KVM_RUN gave %d then %d", a, b);
		}
		/*
		 * The module's file pins the module: it was loaded all along,
		 * so the vCPUs' exits were all counted (the VM file sums them).
		 */
		if (ours) {
			uint64_t want_cpuid = RR_CPUID * (is_vm ? RR_VCPUS : 1);
			uint64_t want_one = is_vm ? RR_VCPUS : 1;

			c->ours++;
			ret = ks_stat_read(sfd, c->ec->stat, h, 256, NULL, 0);
			if (ret != (int)c->ec->buckets || h[c->ec->cpuid] != want_cpuid ||
			    h[c->ec->io] != want_one || h[c->ec->hlt] != want_one) {
				ks_errs_add(c->err, "a pinned %s counted cpuid %llu io %llu hlt %llu, want %llu %llu %llu",
					is_vm ? "VM" : "vCPU",
					(unsigned long long)h[c->ec->cpuid],
					(unsigned long long)h[c->ec->io],
					(unsigned long long)h[c->ec->hlt],
					(unsigned long long)want_cpuid,
					(unsigned long long)want_one,
					(unsigned long long)want_one);
			} else {
				c->exact++;
				(*c->exact_all)++;
			}
		}
		/*
		 * Destroy: the stats fd first, or the VM's fds first (the
		 * stats fd is then the last to hold the VM, and its release
		 * destroys it), in a random order of vCPU and VM fds.
		 */
		if (sfd >= 0 && ks_rnd(&rs) % 2) {
			close(sfd);
			sfd = -1;
		}
		if (ks_rnd(&rs) % 2) {
			ks_vm_destroy(&vm);
		} else {
			close(vm.fd);
			vm.fd = -1;
			ks_sleep_us(ks_rnd(&rs) % 1000);
			ks_vm_destroy(&vm);
		}
		if (sfd >= 0) {
			ks_sleep_us(ks_rnd(&rs) % 2000);
			close(sfd);
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(scale, rmmod_races_vm_destruction, TIMEOUT_S)
{
	const struct ks_exit_codes *ec = &self->ec;
	struct ks_errs err = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct rr_creator cr[RR_CREATORS];
	long cycles = 0, refused = 0, vms = 0, exact = 0, ours = 0, native = 0;
	int i, ret, native_cap, bad_rmmod = 0, bad_insmod = 0, sfd;
	unsigned int counts[] = { RR_CPUID };
	unsigned char code[64];
	size_t len = ks_code_cpuid_segments(code, sizeof(code), counts, 1);
	uint64_t rs = ks_rnd_seed(5), h[256];
	double t, t_unload = 0, t_load = 0;
	atomic_long exact_all = 0;
	long loaded_exact;
	atomic_int stop = 0;
	struct ks_vm vm;

	NEED_SETUP();
	native_cap = ks_native_binary_stats();
	ASSERT_LE(0, native_cap) TH_LOG("KVM_CHECK_EXTENSION without the module: %s",
					strerror(-native_cap));
	ASSERT_EQ(1, ks_module_loaded());
	for (i = 0; i < RR_CREATORS; i++) {
		cr[i] = (struct rr_creator){ .idx = i, .stop = &stop, .err = &err,
					     .ec = ec, .native_cap = native_cap,
					     .exact_all = &exact_all };
		ASSERT_EQ(0, pthread_create(&cr[i].t, NULL, rr_creator_fn, &cr[i]));
	}
	/*
	 * Until the deadline, and at least until one cycle went through and
	 * one VM ran with the module's stats fd (slow emulators: Bochs).
	 */
	while (cycles < 1 || !exact_all || ks_now_s() < self->deadline) {
		if (ks_now_s() > self->deadline + 120)
			break;	/* never got there in two minutes past the deadline */
		t = ks_now_s();
		ret = ks_module_unload();
		if (ret == -EBUSY || ret == -EAGAIN || ret == -EWOULDBLOCK) {
			refused++;
			ks_sleep_us(ks_rnd(&rs) % 3000);
			continue;
		}
		if (ret) {
			if (!bad_rmmod++)
				TH_LOG("rmmod: %s", strerror(-ret));
			if (ks_module_loaded())
				continue;
		}
		t_unload += ks_now_s() - t;
		/* Out for a moment: VMs are created and destroyed without it. */
		ks_sleep_us(ks_rnd(&rs) % 5000);
		t = ks_now_s();
		ret = ks_module_load("");
		t_load += ks_now_s() - t;
		if (ret) {
			if (!bad_insmod++)
				TH_LOG("insmod: %s", strerror(-ret));
			if (!ks_module_loaded())
				break;
		}
		cycles++;
		/*
		 * In for a while: creators take its stats fds, which pin it.
		 * At least until one more VM ran with its stats fd, up to
		 * 5 s: on the debug kernel a VM's round takes longer than
		 * the random stay, and a whole run once went by (25 cycles,
		 * 2 minutes) without one, the race this test is about.
		 */
		loaded_exact = exact_all;
		t = ks_now_s();
		ks_sleep_us(ks_rnd(&rs) % 200000);
		while (exact_all == loaded_exact && ks_now_s() < t + 5)
			ks_sleep_us(10000);
	}
	stop = 1;
	for (i = 0; i < RR_CREATORS; i++) {
		pthread_join(cr[i].t, NULL);
		vms += cr[i].vms;
		exact += cr[i].exact;
		ours += cr[i].ours;
		native += cr[i].native;
	}
	TH_LOG("%ld unload+load cycles, %ld refused as busy; %ld VMs made and destroyed, %ld stats fds the module's (counts exact on %ld), %ld KVM's",
	       cycles, refused, vms, ours, exact, native);
	if (cycles)
		TH_LOG("a successful rmmod took %.0f ms, insmod %.0f ms (mean)",
		       t_unload * 1000 / cycles, t_load * 1000 / cycles);
	EXPECT_EQ(0, bad_rmmod);
	EXPECT_EQ(0, bad_insmod);
	EXPECT_LT(0, cycles) TH_LOG("rmmod never got through");
	EXPECT_LT(0, vms);
	/* The race was run: VMs counted by the module, and others by KVM. */
	EXPECT_LT(0, exact) TH_LOG("no VM ran with the module's stats fd");
	EXPECT_EQ(0, err.count) TH_LOG("%ld errors; first: %s", err.count, err.first);
	if (!ks_module_loaded())
		ASSERT_EQ(0, ks_module_load(""));

	/* After all that: an open stats fd holds the module, and it counts. */
	ret = ks_vm_create(&vm, code, len, 1);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	sfd = ioctl(vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, sfd);
	ret = ks_module_unload();
	EXPECT_TRUE(ret == -EBUSY || ret == -EWOULDBLOCK)
		TH_LOG("rmmod with a stats fd open: %s", strerror(-ret));
	ASSERT_EQ(1, ks_module_loaded());
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[0]));
	ASSERT_EQ(KS_EXIT_STOP, ks_vcpu_run(&vm.vcpu[0]));
	ASSERT_EQ((int)ec->buckets, ks_stat_read(sfd, ec->stat, h, 256, NULL, 0));
	EXPECT_EQ(RR_CPUID, h[ec->cpuid]);
	EXPECT_EQ(1, h[ec->io]);
	EXPECT_EQ(1, h[ec->hlt]);
	ks_vm_destroy(&vm);
	close(sfd);
	/* Every object of every load is gone with the VMs. */
	self->base.vms = self->base.vcpus = self->base.files = 0;
	check_no_leak(_metadata, self);
}

/* ------------------------------------------------------------------ */
/* cpu_hotplug_while_vcpus_run                                         */

#define HP_VCPUS	2
#define HP_CPUID	10

struct hp_runner {
	pthread_t t;
	struct ks_vcpu *vcpu;
	atomic_int *stop;
	long runs;
	int err;
};

/* No signal ever interrupts it: each KVM_RUN is exactly HP_CPUID + 1 exits. */
static void *hp_runner_fn(void *arg)
{
	struct hp_runner *r = arg;

	while (!*r->stop) {
		int ret = ks_vcpu_run(r->vcpu);

		if (ret != KS_EXIT_USER) {
			r->err = ret ? ret : -1000;
			break;
		}
		r->runs++;
	}
	return NULL;
}

struct hp_reader {
	pthread_t t;
	int fds[HP_VCPUS + 1];
	atomic_int *stop;
	struct ks_errs *err;
	const struct ks_exit_codes *ec;
	long reads;
};

/* Reads every file again and again: the exit counts never go down. */
static void *hp_reader_fn(void *arg)
{
	struct hp_reader *r = arg;
	uint64_t last[HP_VCPUS + 1] = { 0 }, h[256];
	int i, b, ret;

	while (!*r->stop) {
		for (i = 0; i <= HP_VCPUS; i++) {
			uint64_t sum = 0;

			ret = ks_stat_read(r->fds[i], r->ec->stat, h, 256, NULL, 0);
			if (ret != (int)r->ec->buckets) {
				ks_errs_add(r->err, "reading %s: %d", r->ec->stat, ret);
				continue;
			}
			for (b = 0; b < ret; b++)
				sum += h[b];
			if (sum < last[i])
				ks_errs_add(r->err, "file %d: exits went from %llu to %llu", i,
					(unsigned long long)last[i],
					(unsigned long long)sum);
			last[i] = sum;
			r->reads++;
		}
		ks_sleep_us(2000);
	}
	return NULL;
}

static int cpu1_set(int on)
{
	char c = on ? '1' : '0', back[4] = "";
	int fd = open(CPU1_ONLINE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (write(fd, &c, 1) != 1) {
		int e = errno;

		close(fd);
		return -e;
	}
	if (pread(fd, back, sizeof(back) - 1, 0) < 1 || back[0] != c) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return 0;
}

/*
 * A short VM of one vCPU that runs @cpuid CPUIDs, an OUT and a HLT on
 * @cpu; its stats fd (taken before it runs) to *@sfd.  0 or -1 (@why).
 */
static int short_vm_run(struct ks_vm *vm, int *sfd, int cpu, unsigned int cpuid,
			char *why, size_t wl)
{
	unsigned int counts[] = { cpuid };
	unsigned char code[64];
	size_t len = ks_code_cpuid_segments(code, sizeof(code), counts, 1);
	int ret, a, b;

	ret = ks_vm_create(vm, code, len, 1);
	if (ret) {
		snprintf(why, wl, "ks_vm_create: %s", strerror(-ret));
		return -1;
	}
	*sfd = ioctl(vm->vcpu[0].fd, KVM_GET_STATS_FD, 0);
	if (*sfd < 0) {
		snprintf(why, wl, "KVM_GET_STATS_FD: %s", strerror(errno));
		ks_vm_destroy(vm);
		return -1;
	}
	ret = pin_to(cpu);
	a = ks_vcpu_run(&vm->vcpu[0]);
	b = ks_vcpu_run(&vm->vcpu[0]);
	pin_to(-1);
	if (ret || a != KS_EXIT_USER || b != KS_EXIT_STOP) {
		snprintf(why, wl, "pinning to CPU %d: %d; KVM_RUN gave %d then %d",
			 cpu, ret, a, b);
		return -1;
	}
	return 0;
}

/* @runs runs of @cpuid CPUIDs, an OUT and a HLT: exactly that counted. */
static int short_vm_check(int sfd, const struct ks_exit_codes *ec,
			  unsigned int cpuid, unsigned int runs, char *why,
			  size_t wl)
{
	uint64_t h[256];
	int ret = ks_stat_read(sfd, ec->stat, h, 256, NULL, 0);

	if (ret != (int)ec->buckets || h[ec->cpuid] != cpuid * runs ||
	    h[ec->io] != runs || h[ec->hlt] != runs) {
		snprintf(why, wl, "counted cpuid %llu io %llu hlt %llu (size %d), want %u %u %u",
			 (unsigned long long)h[ec->cpuid],
			 (unsigned long long)h[ec->io],
			 (unsigned long long)h[ec->hlt], ret, cpuid * runs,
			 runs, runs);
		return -1;
	}
	return 0;
}

TEST_F_TIMEOUT(scale, cpu_hotplug_while_vcpus_run, TIMEOUT_S)
{
	const struct ks_exit_codes *ec = &self->ec;
	struct ks_errs err = { .lock = PTHREAD_MUTEX_INITIALIZER };
	int min_rounds = self->scale == 1 ? 3 : 10 * self->scale;
	struct hp_runner run[HP_VCPUS];
	uint64_t h[HP_VCPUS + 1][256];
	struct hp_reader rd;
	atomic_int stop = 0, rd_stop = 0;
	unsigned char code[32];
	size_t len = ks_code_cpuid_out_loop(code, HP_CPUID);
	double t0, t_off = 0, t_on = 0;
	char why[256];
	int i, a, b, ret, rounds = 0, fds[HP_VCPUS + 1];
	struct ks_vm vm, x, y;
	int xs, ys;

	NEED_SETUP();
	if (access(CPU1_ONLINE, W_OK))
		SKIP(return, "CPU 1 cannot be taken offline: %s", strerror(errno));
	ret = ks_vm_create(&vm, code, len, HP_VCPUS);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	fds[HP_VCPUS] = ioctl(vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, fds[HP_VCPUS]);
	for (i = 0; i < HP_VCPUS; i++) {
		fds[i] = ioctl(vm.vcpu[i].fd, KVM_GET_STATS_FD, 0);
		ASSERT_LE(0, fds[i]);
	}
	for (i = 0; i < HP_VCPUS; i++) {
		run[i] = (struct hp_runner){ .vcpu = &vm.vcpu[i], .stop = &stop };
		ASSERT_EQ(0, pthread_create(&run[i].t, NULL, hp_runner_fn, &run[i]));
	}
	rd = (struct hp_reader){ .stop = &rd_stop, .err = &err, .ec = ec };
	memcpy(rd.fds, fds, sizeof(fds));
	ASSERT_EQ(0, pthread_create(&rd.t, NULL, hp_reader_fn, &rd));

	while (rounds < min_rounds || ks_now_s() < self->deadline) {
		if (ks_now_s() > self->deadline + 120 && rounds)
			break;
		/* X fills CPU 1's cache, and is destroyed while CPU 1 is out. */
		if (short_vm_run(&x, &xs, 1, 3 + rounds % 5, why, sizeof(why))) {
			ks_errs_add(&err, "VM on CPU 1 before offline: %s", why);
			break;
		}
		if (short_vm_check(xs, ec, 3 + rounds % 5, 1, why, sizeof(why)))
			ks_errs_add(&err, "VM on CPU 1 before offline: %s", why);
		t0 = ks_now_s();
		ret = cpu1_set(0);
		t_off += ks_now_s() - t0;
		if (ret) {
			ks_errs_add(&err, "CPU 1 offline: %s", strerror(-ret));
			ks_vm_destroy(&x);
			close(xs);
			break;
		}
		ks_vm_destroy(&x);
		close(xs);
		if (ks_objects_wait_le("vms", self->base.vms + 1, KS_FREE_WAIT_MS) !=
		    self->base.vms + 1)
			ks_errs_add(&err, "the destroyed VM's state was not freed");
		/* Y runs on CPU 0 while CPU 1 is out... */
		if (short_vm_run(&y, &ys, 0, 11 + rounds % 5, why, sizeof(why))) {
			ks_errs_add(&err, "VM on CPU 0 while CPU 1 is offline: %s", why);
			cpu1_set(1);
			break;
		}
		ks_sleep_us(10000 + rounds % 7 * 10000);
		t0 = ks_now_s();
		ret = cpu1_set(1);
		t_on += ks_now_s() - t0;
		if (ret) {
			ks_errs_add(&err, "CPU 1 online: %s", strerror(-ret));
			ks_vm_destroy(&y);
			close(ys);
			break;
		}
		/* ...then again from the start, on CPU 1 once it is back. */
		ret = pin_to(1);
		if (ret)
			ks_errs_add(&err, "pinning to CPU 1: %s", strerror(-ret));
		a = ks_vcpu_restart(y.vcpu[0].fd);
		if (a)
			ks_errs_add(&err, "restarting the vCPU: %s", strerror(-a));
		a = ks_vcpu_run(&y.vcpu[0]);
		b = ks_vcpu_run(&y.vcpu[0]);
		if (a != KS_EXIT_USER || b != KS_EXIT_STOP)
			ks_errs_add(&err, "VM on CPU 1 after online: KVM_RUN gave %d then %d",
				a, b);
		pin_to(-1);
		if (short_vm_check(ys, ec, 11 + rounds % 5, 2, why, sizeof(why)))
			ks_errs_add(&err, "VM run on CPU 0, then on CPU 1: %s", why);
		ks_vm_destroy(&y);
		close(ys);
		rounds++;
	}
	stop = 1;
	for (i = 0; i < HP_VCPUS; i++)
		pthread_join(run[i].t, NULL);
	rd_stop = 1;
	pthread_join(rd.t, NULL);
	ret = cpu1_set(1);
	EXPECT_EQ(0, ret) TH_LOG("CPU 1 back online: %s", strerror(-ret));
	TH_LOG("%d offline/online rounds of CPU 1 (%.0f ms offline, %.0f ms online, mean); KVM_RUN returned %ld and %ld times; %ld reads",
	       rounds, rounds ? t_off * 1000 / rounds : 0.0,
	       rounds ? t_on * 1000 / rounds : 0.0, run[0].runs, run[1].runs,
	       rd.reads);
	EXPECT_LE(min_rounds, rounds);
	EXPECT_EQ(0, err.count) TH_LOG("%ld errors; first: %s", err.count, err.first);

	/* Exact: each run was HP_CPUID CPUIDs and an OUT, nothing lost. */
	for (i = 0; i < HP_VCPUS; i++) {
		uint64_t sum = 0, ex;

		EXPECT_EQ(0, run[i].err) TH_LOG("vCPU %d: KVM_RUN gave %d", i, run[i].err);
		EXPECT_LT(0, run[i].runs);
		ASSERT_EQ((int)ec->buckets, ks_stat_read(fds[i], ec->stat, h[i], 256,
							 NULL, 0));
		EXPECT_EQ((uint64_t)run[i].runs * HP_CPUID, h[i][ec->cpuid])
			TH_LOG("vCPU %d", i);
		EXPECT_EQ((uint64_t)run[i].runs, h[i][ec->io]) TH_LOG("vCPU %d", i);
		EXPECT_EQ(0, h[i][ec->hlt]);
		for (b = 0; b < (int)ec->buckets; b++)
			sum += h[i][b];
		if (strcmp(ec->total, ec->stat))
			sum = ks_exits_counted(fds[i], ec);
		ret = ks_stat_read(fds[i], "exits", &ex, 1, NULL, 0);
		if (ret != -ENOENT)
			EXPECT_EQ(ex, sum) TH_LOG("vCPU %d: native exits", i);
	}
	ASSERT_EQ((int)ec->buckets, ks_stat_read(fds[HP_VCPUS], ec->stat,
						 h[HP_VCPUS], 256, NULL, 0));
	for (b = 0; b < (int)ec->buckets; b++)
		EXPECT_EQ(h[0][b] + h[1][b], h[HP_VCPUS][b]) TH_LOG("VM bucket %d", b);
	for (i = 0; i <= HP_VCPUS; i++)
		close(fds[i]);
	ks_vm_destroy(&vm);
	check_no_leak(_metadata, self);
}

TEST_HARNESS_MAIN
