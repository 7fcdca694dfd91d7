// SPDX-License-Identifier: GPL-2.0
/*
 * Stat groups: kvm_statsfd.ko's stats= parameter chooses which groups of
 * its own stats it serves (exit_reasons, latency, class_latency,
 * userspace_exits, io_msr, guest_time; by default exit_reasons, io_msr
 * and guest_time, which fit four vCPUs' counters in a page).  For a load
 * with no stats= (the default), stats=all and subsets: exactly those
 * groups' stats are described, the data block is
 * still tiled exactly as QEMU reads it, what is served still counts
 * exactly (the exit-reason histogram sums to the native "exits"), and an
 * unknown group is refused at load.
 */
#define _GNU_SOURCE
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
#include "kvm_statsfd/uapi.h"
#include "ks_util.h"

#define MAX_NAMES	8

/*
 * A stat of each group; "@" stands for this vendor's exit-reason stat.
 * The io_msr group and the per-class latencies are the architecture's:
 * port I/O and MSRs on x86, system registers and HVCs on arm64, whose
 * exit_reasons group also has exit_kinds_arm64.
 */
#if defined(__aarch64__)
#define IO_MSR_STATS	"sysreg_read_exits", "sysreg_write_exits", "hvc_exits"
#define CLASS_STATS	"exit_latency_mmio_hist", "exit_latency_mmio_ns"
#define REASON_STATS	"@", "exit_kinds_arm64"
#else
#define IO_MSR_STATS	"io_in_exits", "io_out_exits", "msr_read_exits"
#define CLASS_STATS	"exit_latency_io_hist", "exit_latency_io_ns"
#define REASON_STATS	"@"
#endif
static const char *const counting_stats[] = {
	REASON_STATS, "userspace_exits", IO_MSR_STATS, "mmio_reads", NULL,
};
static const char *const latency_stats[] = {
	"exit_latency_hist", "exit_latency_ns", "exit_latency_max_ns", NULL,
};
static const char *const class_stats[] = { CLASS_STATS, NULL };
static const char *const time_stats[] = { "guest_ns", "in_guest", NULL };
static const char *const reason_stats[] = {
	REASON_STATS, "userspace_exits", NULL,
};
static const char *const default_stats[] = {
	REASON_STATS, IO_MSR_STATS, "mmio_reads", "mmio_writes", NULL,
};
static const char *const user_stats[] = { "userspace_exits", NULL };
static const char *const no_stats[] = { NULL };

static const unsigned int seg_cpuid[] = { 30, 20 };

FIXTURE(groups) {
	struct ks_module_state mod;
	struct ks_exit_codes ec;
	struct ks_vm vm;
	int vm_created;
	int ready;
};

FIXTURE_VARIANT(groups) {
	const char *params;
	/* Load with the module's default groups unless params says. */
	bool deflt;
	const char *const *present[4];
	const char *const *absent[4];
};

/* What a plain insmod serves: the default groups and only those. */
FIXTURE_VARIANT_ADD(groups, default_groups) {
	.params = "",
	.deflt = true,
	.present = { default_stats, time_stats },
	.absent = { latency_stats, class_stats, user_stats },
};

FIXTURE_VARIANT_ADD(groups, all) {
	.params = "stats=all",
	.present = { counting_stats, latency_stats, class_stats, time_stats },
	.absent = { no_stats },
};

FIXTURE_VARIANT_ADD(groups, counting) {
	.params = "stats=exit_reasons,io_msr,userspace_exits",
	.present = { counting_stats },
	.absent = { latency_stats, class_stats, time_stats },
};

FIXTURE_VARIANT_ADD(groups, timing) {
	.params = "stats=latency,guest_time",
	.present = { latency_stats, time_stats },
	.absent = { counting_stats, class_stats },
};

FIXTURE_VARIANT_ADD(groups, class_latency_only) {
	.params = "stats=class_latency",
	.present = { class_stats },
	.absent = { counting_stats, latency_stats, time_stats },
};

FIXTURE_VARIANT_ADD(groups, none) {
	.params = "stats=none",
	.present = { no_stats },
	.absent = { counting_stats, latency_stats, class_stats, time_stats },
};

FIXTURE_VARIANT_ADD(groups, own_mode_counting) {
	.params = "mode=own stats=exit_reasons,userspace_exits",
	.present = { reason_stats },
	.absent = { latency_stats, class_stats, time_stats },
};

FIXTURE_SETUP(groups)
{
	unsigned char code[128];
	size_t len;
	int ret;

	if (access("/dev/kvm", R_OK | W_OK))
		SKIP(return, "/dev/kvm is not usable: %s", strerror(errno));
	ks_module_save(&self->mod);
	ks_host_exit_codes(&self->ec);
	/*
	 * A variant's first case reloads; its other cases find the module
	 * so.  Every variant but the default names its groups (stats=), so
	 * ks_module_load() would load it the same.
	 */
	ASSERT_TRUE(variant->deflt || strstr(variant->params, "stats="));
	ret = ks_module_ensure_params(variant->params);
	ASSERT_EQ(0, ret) TH_LOG("loading with %s: %s", variant->params,
				 strerror(-ret));
	/*
	 * Unless it was just reloaded, the module still frees the last
	 * case's VM (after RCU and a work item): let that land first, not
	 * inside memory_per_vcpu's measurements.
	 */
	ks_objects_wait_le("vms", 0, KS_FREE_WAIT_MS);
	len = ks_code_cpuid_segments(code, sizeof(code), seg_cpuid, 2);
	ASSERT_NE(0, len);
	ret = ks_vm_create(&self->vm, code, len, 1);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	self->vm_created = 1;
	self->ready = 1;
}

FIXTURE_TEARDOWN(groups)
{
	int ret;

	if (self->vm_created)
		ks_vm_destroy(&self->vm);
	ks_close_from(3);
	/*
	 * Not the groups the rest of the suite expects: put back as it was,
	 * or under the program's load, by the next case that needs another.
	 */
	ret = ks_module_restore(&self->mod);
	EXPECT_EQ(0, ret) TH_LOG("restoring the module: %s", strerror(-ret));
}

#define NEED_SETUP() do { if (!self->ready) return; } while (0)

static const char *stat_name(const struct ks_exit_codes *ec, const char *n)
{
	return strcmp(n, "@") ? n : ec->stat;
}

TEST_F(groups, only_the_chosen_groups_are_described)
{
	const char *const *const *lists[2] = { variant->present, variant->absent };
	struct kvmstats s = { 0 };
	int fd, l, i, j;

	NEED_SETUP();
	fd = ioctl(self->vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, fd) TH_LOG("KVM_GET_STATS_FD: %s", strerror(errno));
	ASSERT_EQ(0, kvmstats_open(&s, fd)) TH_LOG("%s", s.err);
	for (l = 0; l < 2; l++) {
		for (i = 0; i < 4 && lists[l][i]; i++) {
			for (j = 0; lists[l][i][j]; j++) {
				const char *n = stat_name(&self->ec, lists[l][i][j]);

				if (l) {
					EXPECT_EQ(NULL, kvmstats_find(&s, n))
						TH_LOG("%s served with %s", n,
						       variant->params);
				} else {
					EXPECT_NE(NULL, kvmstats_find(&s, n))
						TH_LOG("%s missing with %s", n,
						       variant->params);
				}
			}
		}
	}
	kvmstats_close(&s);

	/* The VM file always says how many vCPUs it has. */
	fd = ioctl(self->vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kvmstats_open(&s, fd)) TH_LOG("%s", s.err);
	EXPECT_NE(NULL, kvmstats_find(&s, "vcpus"));
	kvmstats_close(&s);
}

TEST_F(groups, block_tiles_and_counts_stay_exact)
{
	uint64_t hist[256], exits[1];
	char why[160] = "";
	unsigned int i;
	int fd, vfd, ret;
	uint64_t sum = 0;

	NEED_SETUP();
	vfd = ioctl(self->vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	fd = ioctl(self->vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, vfd);
	ASSERT_LE(0, fd);
	/* Opened first: counting starts now, also on PREEMPT_RT. */
	EXPECT_EQ(KS_EXIT_USER, ks_vcpu_run(&self->vm.vcpu[0]));
	EXPECT_EQ(KS_EXIT_USER, ks_vcpu_run(&self->vm.vcpu[0]));

	EXPECT_EQ(0, ks_data_block_check(vfd, why, sizeof(why)))
		TH_LOG("vCPU file, %s: %s", variant->params, why);
	EXPECT_EQ(0, ks_data_block_check(fd, why, sizeof(why)))
		TH_LOG("VM file, %s: %s", variant->params, why);

	ret = ks_stat_read(vfd, self->ec.stat, hist, self->ec.buckets, NULL, 0);
	if (ret == -ENOENT)
		return;		/* the histogram is not served: nothing to sum */
	ASSERT_EQ((int)self->ec.buckets, ret);
	for (i = 0; i < self->ec.buckets; i++)
		sum += hist[i];
	EXPECT_EQ(seg_cpuid[0] + seg_cpuid[1], hist[self->ec.cpuid]);
	EXPECT_EQ(2, hist[self->ec.io]);
	if (strcmp(self->ec.total, self->ec.stat))
		sum = ks_exits_counted(vfd, &self->ec);
	if (ks_stat_read(vfd, "exits", exits, 1, NULL, 0) == 1) {
		EXPECT_EQ(exits[0], sum);
	}
}

/*
 * libvirt keys the query-stats schema by stat name across QEMU's VM and
 * vCPU targets, and drops every KVM stat when one name is in both: a VM
 * file serves its vCPUs' sum of a module stat as KVM_STATSFD_VM_SUM_PREFIX
 * and the vCPU file's name, and shares no name with a vCPU file.
 */
TEST_F(groups, vm_and_vcpu_names_are_disjoint)
{
	struct kvmstats vm = { 0 }, vc = { 0 };
	size_t plen = strlen(KVM_STATSFD_VM_SUM_PREFIX);
	unsigned int i, j;
	char want[64];
	int fd;

	NEED_SETUP();
	fd = ioctl(self->vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kvmstats_open(&vm, fd)) TH_LOG("%s", vm.err);
	fd = ioctl(self->vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, kvmstats_open(&vc, fd)) TH_LOG("%s", vc.err);
	for (i = 0; i < vm.num_desc; i++) {
		EXPECT_EQ(NULL, kvmstats_find(&vc, vm.descs[i].name))
			TH_LOG("%s is in both files (%s)", vm.descs[i].name,
			       *variant->params ? variant->params : "default");
	}
	/* Each of the variant's stats is summed in the VM file... */
	for (i = 0; i < 4 && variant->present[i]; i++) {
		for (j = 0; variant->present[i][j]; j++) {
			snprintf(want, sizeof(want), "%s%s",
				 KVM_STATSFD_VM_SUM_PREFIX,
				 stat_name(&self->ec, variant->present[i][j]));
			EXPECT_NE(NULL, kvmstats_find(&vm, want))
				TH_LOG("the VM file has no %s", want);
		}
	}
	/* ... and each sum is of a vCPU stat of its size and stem. */
	for (i = 0; i < vm.num_desc; i++) {
		const struct kvmstats_desc *v = &vm.descs[i], *d;

		if (strncmp(v->name, KVM_STATSFD_VM_SUM_PREFIX, plen))
			continue;
		d = kvmstats_find(&vc, v->name + plen);
		EXPECT_NE(NULL, d) TH_LOG("%s sums no vCPU stat", v->name);
		if (d) {
			EXPECT_EQ(d->size, v->size) TH_LOG("%s", v->name);
			EXPECT_STREQ(d->name, kvmstats_stem(v));
		}
	}
	kvmstats_close(&vc);
	kvmstats_close(&vm);
}

FIXTURE(bad) {
	struct ks_module_state mod;
};

FIXTURE_SETUP(bad)
{
	int ret;

	ks_module_save(&self->mod);
	if (self->mod.was_loaded) {
		ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
		ASSERT_EQ(0, ret) TH_LOG("unloading: %s", strerror(-ret));
	}
}

FIXTURE_TEARDOWN(bad)
{
	EXPECT_EQ(0, ks_module_restore(&self->mod));
}

TEST_F(bad, unknown_group_refused)
{
	EXPECT_EQ(-EINVAL, ks_module_load("stats=exit_reasons,bogus"));
	EXPECT_EQ(0, ks_module_loaded());
	EXPECT_EQ(-EINVAL, ks_module_load("stats="));
	EXPECT_EQ(0, ks_module_loaded());
}

/*
 * Module memory per vCPU: VMs of 1, 8, 64 and 256 vCPUs whose vCPUs got
 * their state (a stats fd each), measured by the module's own count of
 * what its live states take (objects/bytes: slab objects and counter
 * pages).  A VM none of whose vCPU files is mapped keeps each vCPU's
 * counters in a slab block (the kvm_statsfd_counters cache): with the
 * default groups a vCPU takes at most 1.5 KiB at every VM size (issue
 * 14), a VM of one vCPU included.  The first mapping of a
 * vCPU file moves the VM's counters into whole pages (four blocks a page
 * with the default groups): a 1-vCPU VM mapped takes at most a page more.
 */
static long vm_bytes_per_vcpu(struct __test_metadata *_metadata, int kvm,
			      int n)
{
	long before, after;
	int vm, i, fd;

	before = ks_objects_read("bytes");
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		int vcpu = ioctl(vm, KVM_CREATE_VCPU, i);

		if (vcpu < 0)
			break;
		fd = ioctl(vcpu, KVM_GET_STATS_FD, 0);
		if (fd >= 0)
			close(fd);
		close(vcpu);
		if (fd < 0)
			break;
	}
	after = ks_objects_read("bytes");
	close(vm);
	EXPECT_EQ(n, i) TH_LOG("%d vCPUs: only %d", n, i);
	if (i != n || before < 0 || after < 0)
		return -1;
	return (after - before) / n;
}

/*
 * What a 1-vCPU VM takes while its vCPU file is mapped (one page at 0:
 * a block of the default groups fits), in bytes; @pages: by how much
 * objects/counter_pages rose then.  The counter pages go back to what
 * they were once the VM and the mapping are gone.
 */
static long mapped_vm_bytes(struct __test_metadata *_metadata, int kvm,
			    long *pages)
{
	long before, after, pages0, pages1, page = sysconf(_SC_PAGESIZE);
	int vm, vcpu, fd;
	void *m;

	before = ks_objects_read("bytes");
	pages0 = ks_objects_read("counter_pages");
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0)
		return -errno;
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	EXPECT_LE(0, vcpu) TH_LOG("KVM_CREATE_VCPU: %s", strerror(errno));
	fd = vcpu < 0 ? -1 : ioctl(vcpu, KVM_GET_STATS_FD, 0);
	EXPECT_LE(0, fd) TH_LOG("KVM_GET_STATS_FD: %s", strerror(errno));
	m = fd < 0 ? MAP_FAILED : mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	EXPECT_NE(MAP_FAILED, m) TH_LOG("mmap: %s", strerror(errno));
	after = ks_objects_read("bytes");
	pages1 = ks_objects_read("counter_pages");
	if (m != MAP_FAILED)
		munmap(m, page);
	if (fd >= 0)
		close(fd);
	if (vcpu >= 0)
		close(vcpu);
	close(vm);
	EXPECT_EQ(pages0, ks_objects_wait_le("counter_pages", pages0, KS_FREE_WAIT_MS))
		TH_LOG("the mapped VM's counter pages were not freed");
	if (m == MAP_FAILED || before < 0 || after < 0 || pages0 < 0 ||
	    pages1 < 0)
		return -1;
	*pages = pages1 - pages0;
	return after - before;
}

TEST_F(groups, memory_per_vcpu)
{
	static const int sizes[] = { 1, 8, 64, 256 };
	long per, one = -1, mapped, pages, vms0;
	unsigned int i;
	int kvm;

	NEED_SETUP();
	/* The two loads that matter (quick on the slower lanes). */
	if (!variant->deflt && strcmp(variant->params, "stats=all"))
		return;
	vms0 = ks_objects_read("vms");
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, kvm);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		/* The last VM's state is freed after RCU: not counted here. */
		EXPECT_EQ(vms0, ks_objects_wait_le("vms", vms0, KS_FREE_WAIT_MS));
		per = vm_bytes_per_vcpu(_metadata, kvm, sizes[i]);
		ASSERT_LE(0, per);
		printf("# %s: %d vCPUs: %ld bytes a vCPU\n",
		       *variant->params ? variant->params : "default",
		       sizes[i], per);
		if (sizes[i] == 1)
			one = per;
		/* No mapping: every vCPU's counters in a slab block. */
		if (variant->deflt) {
			EXPECT_GE(1536, per) TH_LOG("%d vCPUs", sizes[i]);
		}
	}
	if (variant->deflt) {
		EXPECT_EQ(vms0, ks_objects_wait_le("vms", vms0, KS_FREE_WAIT_MS));
		mapped = mapped_vm_bytes(_metadata, kvm, &pages);
		ASSERT_LE(0, mapped);
		printf("# default: 1 vCPU, mapped: %ld bytes a vCPU (%ld unmapped)\n",
		       mapped, one);
		/* At most the page its counters moved into. */
		EXPECT_GE(one + 4096 + 64, mapped);
		EXPECT_EQ(1, pages) TH_LOG("counter pages while mapped");
	}
	close(kvm);
}

TEST_HARNESS_MAIN
