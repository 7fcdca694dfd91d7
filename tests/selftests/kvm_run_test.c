// SPDX-License-Identifier: GPL-2.0
/*
 * The test host itself works: a real VM with a vCPU runs real-mode code
 * that exits to userspace with port I/O and then halts, and the kernel's
 * native binary stats fd describes that run.  Nothing here needs our
 * module; it proves the ground the module's tests stand on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kvmstats.h"
#include "ks_util.h"

FIXTURE(vm) {
	struct ks_vm vm;
};

FIXTURE_SETUP(vm)
{
	int ret;

	if (access("/dev/kvm", R_OK | W_OK))
		SKIP(return, "/dev/kvm is not usable: %s", strerror(errno));
	ret = ks_vm_create(&self->vm, ks_code_out_hlt, ks_code_out_hlt_len, 1);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
}

FIXTURE_TEARDOWN(vm)
{
	ks_vm_destroy(&self->vm);
}

static uint64_t stat_value(struct __test_metadata *_metadata,
			   struct kvmstats *s, const char *name)
{
	const struct kvmstats_desc *d = kvmstats_find(s, name);

	EXPECT_NE(NULL, d) TH_LOG("no stat named %s", name);
	return d ? kvmstats_value(s, d, 0) : 0;
}

TEST_F(vm, runs_out_then_hlt)
{
	struct kvm_run *run = self->vm.vcpu[0].run;

	ASSERT_EQ(KVM_EXIT_IO, ks_vcpu_run(&self->vm.vcpu[0]));
	EXPECT_EQ(KVM_EXIT_IO_OUT, run->io.direction);
	EXPECT_EQ(0x10, run->io.port);
	EXPECT_EQ(1, run->io.size);
	EXPECT_EQ(0x42, *((unsigned char *)run + run->io.data_offset));
	ASSERT_EQ(KVM_EXIT_HLT, ks_vcpu_run(&self->vm.vcpu[0]));
}

TEST_F(vm, native_vcpu_stats_describe_the_run)
{
	struct kvmstats s;
	int ret;

	ret = kvmstats_open_from(&s, self->vm.vcpu[0].fd);
	ASSERT_EQ(0, ret) TH_LOG("%s", s.err);
	EXPECT_EQ(0, strncmp(s.id, "kvm-", 4)) TH_LOG("id '%s'", s.id);
	ASSERT_EQ(0, kvmstats_refresh(&s));
	EXPECT_EQ(0, stat_value(_metadata, &s, "io_exits"));
	EXPECT_EQ(0, stat_value(_metadata, &s, "halt_exits"));

	ASSERT_EQ(KVM_EXIT_IO, ks_vcpu_run(&self->vm.vcpu[0]));
	ASSERT_EQ(KVM_EXIT_HLT, ks_vcpu_run(&self->vm.vcpu[0]));
	ASSERT_EQ(0, kvmstats_refresh(&s));
	EXPECT_EQ(1, stat_value(_metadata, &s, "io_exits"));
	EXPECT_EQ(1, stat_value(_metadata, &s, "halt_exits"));
	EXPECT_LE(2, stat_value(_metadata, &s, "exits"));
	kvmstats_close(&s);
}

TEST_F(vm, native_vm_stats_readable)
{
	struct kvmstats s;
	int ret;

	ret = kvmstats_open_from(&s, self->vm.fd);
	ASSERT_EQ(0, ret) TH_LOG("%s", s.err);
	EXPECT_LT(0, s.num_desc);
	EXPECT_NE(NULL, kvmstats_find(&s, "remote_tlb_flush"));
	ASSERT_EQ(0, kvmstats_refresh(&s));
	kvmstats_close(&s);
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
