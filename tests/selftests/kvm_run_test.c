// SPDX-License-Identifier: GPL-2.0
/*
 * The test host itself works: a real VM with a vCPU runs code that exits
 * to userspace (x86: port I/O, arm64: MMIO) and then stops (ks_util.h),
 * and the kernel's own stats describe that run: its binary stats fd where it has one (the
 * kernel says so with KVM_CHECK_EXTENSION(KVM_CAP_BINARY_STATS_FD)), its
 * debugfs files where it has not (5.10: there KVM_GET_STATS_FD is ENOTTY
 * on a VM fd and EINVAL on a vCPU fd).  These run with kvm_statsfd
 * unloaded; it proves the ground the module's tests stand on.  One case
 * loads the module: the capability is 1 with it, the kernel's without.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ks_harness.h"
#include "internal.h"	/* white-box: reads the handle's fields */
#include "ks_util.h"

#ifndef KVM_CAP_BINARY_STATS_FD
#define KVM_CAP_BINARY_STATS_FD 203
#endif

FIXTURE(vm) {
	struct ks_module_state mod;
	struct ks_vm vm;
	int native_cap;		/* the kernel's KVM_CAP_BINARY_STATS_FD */
	int ready;
};

FIXTURE_SETUP(vm)
{
	int ret;

	if (access("/dev/kvm", R_OK | W_OK))
		SKIP(return, "/dev/kvm is not usable: %s", strerror(errno));
	/* The kernel's own answers, not the module's. */
	ks_module_save(&self->mod);
	if (self->mod.was_loaded) {
		ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
		ASSERT_EQ(0, ret) TH_LOG("unloading: %s", strerror(-ret));
	}
	self->native_cap = ks_native_binary_stats();
	ASSERT_LE(0, self->native_cap)
		TH_LOG("KVM_CHECK_EXTENSION without the module: %s",
		       strerror(-self->native_cap));
	ret = ks_vm_create(&self->vm, ks_code_out_hlt, ks_code_out_hlt_len, 1);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	self->ready = 1;
}

FIXTURE_TEARDOWN(vm)
{
	int ret;

	ks_vm_destroy(&self->vm);
	ks_close_from(3);
	ret = ks_module_restore(&self->mod);
	EXPECT_EQ(0, ret) TH_LOG("restoring the module: %s", strerror(-ret));
}

/* The 6.1 harness runs a test's body even when its setup skipped. */
#define NEED_SETUP() do { if (!self->ready) return; } while (0)

/* Stat @name of the VM from the kernel's debugfs (the sum of its vCPUs'). */
static uint64_t debugfs_value(struct __test_metadata *_metadata,
			      const struct ks_vm *vm, const char *name)
{
	uint64_t v = 0;
	int ret = ks_debugfs_vm_stat(vm, name, &v);

	EXPECT_EQ(0, ret) TH_LOG("debugfs kvm/%d-%d/%s: %s", getpid(), vm->fd,
				 name, strerror(-ret));
	return v;
}

static uint64_t stat_value(struct __test_metadata *_metadata,
			   struct kvmstats *s, const char *name)
{
	const struct kvmstats_desc *d = ks_find(s, name);

	EXPECT_NE(NULL, d) TH_LOG("no stat named %s", name);
	return d ? kvmstats_value(s, d, 0) : 0;
}

TEST_F(vm, runs_out_then_hlt)
{
	struct kvm_run *run = self->vm.vcpu[0].run;

	NEED_SETUP();

	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&self->vm.vcpu[0]));
#if defined(__aarch64__)
	EXPECT_EQ(1, run->mmio.is_write);
	EXPECT_EQ(KS_MMIO_ADDR, run->mmio.phys_addr);
	EXPECT_EQ(1, run->mmio.len);
	EXPECT_EQ(0x42, run->mmio.data[0]);
	ASSERT_EQ(KS_EXIT_STOP, ks_vcpu_run(&self->vm.vcpu[0]));
	/* The SMCCC function the stop calls, forwarded as an HVC. */
	EXPECT_EQ(0xc2000000, run->hypercall.nr);
	/* It stops again, as HLT does. */
	ASSERT_EQ(KS_EXIT_STOP, ks_vcpu_run(&self->vm.vcpu[0]));
#else
	EXPECT_EQ(KVM_EXIT_IO_OUT, run->io.direction);
	EXPECT_EQ(0x10, run->io.port);
	EXPECT_EQ(1, run->io.size);
	EXPECT_EQ(0x42, *((unsigned char *)run + run->io.data_offset));
	ASSERT_EQ(KS_EXIT_STOP, ks_vcpu_run(&self->vm.vcpu[0]));
#endif
}

/*
 * Without binary stats of its own (5.10) the kernel refuses the ioctl on a
 * vCPU fd with EINVAL, and its debugfs describes the run (one vCPU: the
 * VM's sums are that vCPU's values).
 */
static void debugfs_describes_the_run(struct __test_metadata *_metadata,
				      struct ks_vm *vm)
{
	EXPECT_EQ(-1, ioctl(vm->vcpu[0].fd, KVM_GET_STATS_FD, 0));
	EXPECT_EQ(EINVAL, errno) TH_LOG("native KVM_GET_STATS_FD on a vCPU fd: %s",
					 strerror(errno));
	EXPECT_EQ(0, debugfs_value(_metadata, vm, KS_STAT_USER_EXITS));
	EXPECT_EQ(0, debugfs_value(_metadata, vm, KS_STAT_STOP_EXITS));
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm->vcpu[0]));
	ASSERT_EQ(KS_EXIT_STOP, ks_vcpu_run(&vm->vcpu[0]));
	EXPECT_EQ(1, debugfs_value(_metadata, vm, KS_STAT_USER_EXITS));
	EXPECT_EQ(1, debugfs_value(_metadata, vm, KS_STAT_STOP_EXITS));
	EXPECT_LE(2, debugfs_value(_metadata, vm, "exits"));
}

TEST_F(vm, native_vcpu_stats_describe_the_run)
{
	struct kvmstats s = { 0 };
	int ret;

	NEED_SETUP();
	if (!self->native_cap) {
		debugfs_describes_the_run(_metadata, &self->vm);
		return;
	}
	ret = kvmstats_open_from(&s, self->vm.vcpu[0].fd);
	ASSERT_EQ(0, ret) TH_LOG("%s", s.err);
	EXPECT_EQ(0, strncmp(s.id, "kvm-", 4)) TH_LOG("id '%s'", s.id);
	ASSERT_EQ(0, kvmstats_refresh(&s));
	EXPECT_EQ(0, stat_value(_metadata, &s, KS_STAT_USER_EXITS));
	EXPECT_EQ(0, stat_value(_metadata, &s, KS_STAT_STOP_EXITS));

	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&self->vm.vcpu[0]));
	ASSERT_EQ(KS_EXIT_STOP, ks_vcpu_run(&self->vm.vcpu[0]));
	ASSERT_EQ(0, kvmstats_refresh(&s));
	EXPECT_EQ(1, stat_value(_metadata, &s, KS_STAT_USER_EXITS));
	EXPECT_EQ(1, stat_value(_metadata, &s, KS_STAT_STOP_EXITS));
	EXPECT_LE(2, stat_value(_metadata, &s, "exits"));
	kvmstats_close(&s);
}

TEST_F(vm, native_vm_stats_readable)
{
	struct kvmstats s = { 0 };
	uint64_t v;
	int ret;

	NEED_SETUP();
	if (!self->native_cap) {
		/* No stats fd of its own: ENOTTY; its debugfs has the stats. */
		EXPECT_EQ(-1, ioctl(self->vm.fd, KVM_GET_STATS_FD, 0));
		EXPECT_EQ(ENOTTY, errno)
			TH_LOG("native KVM_GET_STATS_FD on a VM fd: %s",
			       strerror(errno));
		ret = ks_debugfs_vm_stat(&self->vm, "remote_tlb_flush", &v);
		EXPECT_EQ(0, ret) TH_LOG("debugfs remote_tlb_flush: %s",
					 strerror(-ret));
		return;
	}
	ret = kvmstats_open_from(&s, self->vm.fd);
	ASSERT_EQ(0, ret) TH_LOG("%s", s.err);
	EXPECT_LT(0, s.num_desc);
	EXPECT_NE(NULL, ks_find(&s, "remote_tlb_flush"));
	ASSERT_EQ(0, kvmstats_refresh(&s));
	kvmstats_close(&s);
}

/*
 * KVM_CHECK_EXTENSION(KVM_CAP_BINARY_STATS_FD) on /dev/kvm and on a VM fd:
 * the kernel's own answer without the module, and KVM_GET_STATS_FD works
 * exactly when it is 1; 1 with the module, whose fds then work; the
 * kernel's answer again after rmmod.
 */
static void expect_cap(struct __test_metadata *_metadata, struct ks_vm *vm,
		       int want, const char *when)
{
	EXPECT_EQ(want, ioctl(vm->kvm_fd, KVM_CHECK_EXTENSION,
			      KVM_CAP_BINARY_STATS_FD))
		TH_LOG("/dev/kvm, %s", when);
	EXPECT_EQ(want, ioctl(vm->fd, KVM_CHECK_EXTENSION,
			      KVM_CAP_BINARY_STATS_FD))
		TH_LOG("VM fd, %s", when);
}

static void expect_stats_fds(struct __test_metadata *_metadata,
			     struct ks_vm *vm, int work, const char *when)
{
	int fd;

	fd = ioctl(vm->fd, KVM_GET_STATS_FD, 0);
	if (work) {
		EXPECT_LE(0, fd) TH_LOG("VM fd, %s: %s", when, strerror(errno));
	} else {
		EXPECT_EQ(-1, fd) TH_LOG("VM fd, %s", when);
		EXPECT_EQ(ENOTTY, errno) TH_LOG("VM fd, %s", when);
	}
	if (fd >= 0)
		close(fd);
	fd = ioctl(vm->vcpu[0].fd, KVM_GET_STATS_FD, 0);
	if (work) {
		EXPECT_LE(0, fd) TH_LOG("vCPU fd, %s: %s", when, strerror(errno));
	} else {
		EXPECT_EQ(-1, fd) TH_LOG("vCPU fd, %s", when);
		EXPECT_EQ(EINVAL, errno) TH_LOG("vCPU fd, %s", when);
	}
	if (fd >= 0)
		close(fd);
}

TEST_F(vm, binary_stats_capability)
{
	struct ks_vm later;
	int ret;

	NEED_SETUP();
	expect_cap(_metadata, &self->vm, self->native_cap, "without the module");
	expect_stats_fds(_metadata, &self->vm, self->native_cap,
			 "without the module");

	ret = ks_module_ensure("superset");
	ASSERT_EQ(0, ret) TH_LOG("loading %s: %s", ks_module_path(),
				 strerror(-ret));
	/* A VM made before the load, and one made after. */
	expect_cap(_metadata, &self->vm, 1, "module loaded");
	expect_stats_fds(_metadata, &self->vm, 1, "module loaded");
	ret = ks_vm_create(&later, ks_code_out_hlt, ks_code_out_hlt_len, 1);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	expect_cap(_metadata, &later, 1, "module loaded, VM made after");
	expect_stats_fds(_metadata, &later, 1, "module loaded, VM made after");
	ks_vm_destroy(&later);

	ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
	ASSERT_EQ(0, ret) TH_LOG("unloading: %s", strerror(-ret));
	expect_cap(_metadata, &self->vm, self->native_cap, "after rmmod");
	expect_stats_fds(_metadata, &self->vm, self->native_cap, "after rmmod");
}

TEST(dev_kvm_has_no_stats_fd)
{
	int fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		SKIP(return, "/dev/kvm is not usable: %s", strerror(errno));
	EXPECT_EQ(-1, ioctl(fd, KVM_GET_STATS_FD, 0));
	EXPECT_EQ(EINVAL, errno);
	close(fd);
}

TEST_HARNESS_MAIN
