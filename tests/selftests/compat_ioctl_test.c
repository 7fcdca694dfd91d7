// SPDX-License-Identifier: GPL-2.0
/*
 * KVM_GET_STATS_FD from a 32-bit process: KVM's compat ioctl path.
 *
 * This program is built for i386 (-m32, static) and runs on the 64-bit
 * guest kernels through IA32_EMULATION.  A 32-bit VMM's ioctls on a VM or
 * vCPU fd reach kvm_vm_compat_ioctl() and kvm_vcpu_compat_ioctl(), which
 * hand every ioctl they do not translate themselves to kvm_vm_ioctl() and
 * kvm_vcpu_ioctl(): the functions the module diverts.  KVM_GET_STATS_FD
 * is _IO() (no argument to translate), so the compat path is supported,
 * and these tests prove that it serves the module's file and that a 32-bit
 * reader reads it right:
 *
 *  vm_and_vcpu_stats_fds: through the 32-bit ioctl, a VM fd and each vCPU
 *    fd give a stats fd (O_CLOEXEC), which is the module's (its exit-reason
 *    histogram and in_guest are there), named kvm-PID and
 *    kvm-PID/vcpu-N, and read as QEMU reads it (ks_data_block_check: the
 *    descriptors tile the data block, one pread of it equals each stat's
 *    own pread); the histograms count exactly the guest's CPUID, OUT and
 *    HLT exits, sum to the native "exits" of the vCPU (superset, where the
 *    kernel has one) and the VM file's histogram is the sum of its vCPUs'.
 *  reads_like_a_64bit_reader: read(), pread(), lseek() with 64-bit offsets
 *    (_FILE_OFFSET_BITS=64, so the 32-bit llseek and pread64 syscalls):
 *    sequential reads of any chunk size give the bytes of one whole
 *    pread, EOF is where SEEK_END says, a pread at 4 GiB reads 0 bytes
 *    and an llseek there is EINVAL (the file has a fixed size), as for a
 *    64-bit reader: 64-bit offsets pass the 32-bit syscalls whole.
 *  dev_kvm_keeps_einval: on /dev/kvm the 32-bit ioctl keeps KVM's EINVAL.
 *  native_after_rmmod: with the module unloaded, the same 32-bit ioctl
 *    gets KVM's own answer (its own file on 5.14+, no module stat in it;
 *    ENOTTY on a VM fd and EINVAL on a vCPU fd where KVM has no binary
 *    stats), and after the module is loaded again, the module's file.
 *
 * No leak: /sys/kernel/debug/kvm_statsfd/{vms,vcpus,files} return to
 * their values before each test once its VM is destroyed.
 *
 * And one test of the rig, since these tests need 32-bit processes that
 * live:
 *  rig_syscalls_survive_preemption: a 32-bit process that sleeps 200 times
 *    while another task spins in user mode, so that it is switched back in
 *    from the timer interrupt that hit the spinner, returns from every
 *    syscall with a usable stack.  Under Bochs that needs vdso32=0
 *    (tests/vm/run-guest-bochs.sh says why); without it this test dies of
 *    SIGSEGV in its first sleeps.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ks_harness.h"
#include "internal.h"	/* white-box: reads the handle's fields */
#include "ks_util.h"

#define COMPAT_VCPUS	2
#define N_CPUID		23	/* CPUID exits of the guest's one segment */
#define MAX_FILE	65536

FIXTURE(compat) {
	struct ks_module_state mod;
	struct ks_exit_codes ec;
	struct ks_baseline base;
	int ready;
};

FIXTURE_SETUP(compat)
{
	struct utsname u;

	/* This must really be the compat path: a 32-bit process. */
	ASSERT_EQ(4, (int)sizeof(long));
	ASSERT_EQ(4, (int)sizeof(void *));
	ASSERT_EQ(0, uname(&u));
	TH_LOG("32-bit process on a %s kernel %s, syscalls through %s",
	       u.machine, u.release,
	       getauxval(AT_SYSINFO) ? "the vDSO" : "int $0x80");
	KS_SETUP_MODULE(&self->mod, "superset");
	ks_host_exit_codes(&self->ec);
	KS_BASELINE_TAKE(&self->base, KS_FREE_WAIT_MS);
	self->ready = 1;
}

FIXTURE_TEARDOWN(compat)
{
	KS_TEARDOWN_MODULE(&self->mod);
}

#define NEED_SETUP() do { if (!self->ready) return; } while (0)

static void check_no_leak(struct __test_metadata *_metadata,
			  FIXTURE_DATA(compat) *self)
{
	KS_BASELINE_CHECK(&self->base, KS_FREE_WAIT_MS);
}

/* A VM whose vCPUs run N_CPUID CPUIDs, an OUT, then HLT. */
static void make_vm(struct __test_metadata *_metadata, struct ks_vm *vm)
{
	unsigned int counts[] = { N_CPUID };
	unsigned char code[64];
	size_t len = ks_code_cpuid_segments(code, sizeof(code), counts, 1);
	int ret;

	ASSERT_LT(0, (int)len);
	ret = ks_vm_create(vm, code, len, COMPAT_VCPUS);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
}

static int get_stats_fd(struct __test_metadata *_metadata, int fd,
			const char *what)
{
	int sfd = ioctl(fd, KVM_GET_STATS_FD, 0);

	EXPECT_LE(0, sfd) TH_LOG("32-bit KVM_GET_STATS_FD on %s: %s", what,
				 strerror(errno));
	return sfd;
}

/* The exit histogram of a stats fd (zero-filled to 256). */
static void hist(struct __test_metadata *_metadata, int fd,
		 const struct ks_exit_codes *ec, uint64_t *h)
{
	char err[160] = "";
	int n = ks_stat_read(fd, ec->stat, h, 256, err, sizeof(err));

	EXPECT_EQ((int)ec->buckets, n) TH_LOG("%s: %s", ec->stat, err);
}

TEST_F(compat, vm_and_vcpu_stats_fds)
{
	const struct ks_exit_codes *ec = &self->ec;
	uint64_t h[COMPAT_VCPUS][256], vmh[256], v;
	int sfd[COMPAT_VCPUS], vm_sfd, i, b, ret;
	char why[256] = "", want[64], err[160];
	struct kvmstats s = { 0 };
	struct ks_vm vm;

	NEED_SETUP();
	make_vm(_metadata, &vm);
	/* Before the vCPUs run: on PREEMPT_RT counting starts at the fd. */
	vm_sfd = get_stats_fd(_metadata, vm.fd, "a VM fd");
	ASSERT_LE(0, vm_sfd);
	for (i = 0; i < COMPAT_VCPUS; i++) {
		sfd[i] = get_stats_fd(_metadata, vm.vcpu[i].fd, "a vCPU fd");
		ASSERT_LE(0, sfd[i]);
		EXPECT_EQ(FD_CLOEXEC, fcntl(sfd[i], F_GETFD) & FD_CLOEXEC);
	}
	EXPECT_EQ(self->base.files + COMPAT_VCPUS + 1, ks_objects_read("files"));

	/* vCPU 0 runs to its HLT, vCPU 1 only to its OUT. */
	ASSERT_EQ(KVM_EXIT_IO, ks_vcpu_run(&vm.vcpu[0]));
	ASSERT_EQ(KVM_EXIT_HLT, ks_vcpu_run(&vm.vcpu[0]));
	ASSERT_EQ(KVM_EXIT_IO, ks_vcpu_run(&vm.vcpu[1]));

	/* The module's files, named as KVM names them, read as QEMU does. */
	for (i = 0; i <= COMPAT_VCPUS; i++) {
		int fd = i < COMPAT_VCPUS ? sfd[i] : vm_sfd;

		if (i < COMPAT_VCPUS)
			snprintf(want, sizeof(want), "kvm-%d/vcpu-%d", getpid(), i);
		else
			snprintf(want, sizeof(want), "kvm-%d", getpid());
		ret = kvmstats_open(&s, dup(fd));
		ASSERT_EQ(0, ret) TH_LOG("libkvmstats (32-bit): %s", s.err);
		EXPECT_STREQ(want, s.id);
		EXPECT_TRUE(ks_find(&s, ec->stat) != NULL)
			TH_LOG("%s: no %s: not the module's file", want, ec->stat);
		EXPECT_TRUE(ks_find(&s, "in_guest") != NULL)
			TH_LOG("%s: no in_guest: not the module's file", want);
		kvmstats_close(&s);
		EXPECT_EQ(0, ks_data_block_check(fd, why, sizeof(why)))
			TH_LOG("%s: %s", want, why);
	}

	/* Exact counts, and the VM is the sum of its vCPUs. */
	for (i = 0; i < COMPAT_VCPUS; i++)
		hist(_metadata, sfd[i], ec, h[i]);
	hist(_metadata, vm_sfd, ec, vmh);
	EXPECT_EQ(N_CPUID, h[0][ec->cpuid]);
	EXPECT_EQ(1, h[0][ec->io]);
	EXPECT_EQ(1, h[0][ec->hlt]);
	EXPECT_EQ(N_CPUID, h[1][ec->cpuid]);
	EXPECT_EQ(1, h[1][ec->io]);
	EXPECT_EQ(0, h[1][ec->hlt]);
	for (b = 0; b < (int)ec->buckets; b++) {
		uint64_t sum = 0;

		for (i = 0; i < COMPAT_VCPUS; i++)
			sum += h[i][b];
		EXPECT_EQ(sum, vmh[b]) TH_LOG("bucket %d", b);
	}
	/* Superset: the buckets add up to the kernel's own "exits". */
	for (i = 0; i < COMPAT_VCPUS; i++) {
		uint64_t sum = 0;

		ret = ks_stat_read(sfd[i], "exits", &v, 1, err, sizeof(err));
		if (ret == -ENOENT)
			continue;	/* 5.10: no native stats */
		EXPECT_EQ(1, ret) TH_LOG("exits: %s", err);
		for (b = 0; b < (int)ec->buckets; b++)
			sum += h[i][b];
		EXPECT_EQ(v, sum) TH_LOG("vCPU %d", i);
	}
	ks_vm_destroy(&vm);
	for (i = 0; i < COMPAT_VCPUS; i++)
		close(sfd[i]);
	close(vm_sfd);
	check_no_leak(_metadata, self);
}

TEST_F(compat, reads_like_a_64bit_reader)
{
	static unsigned char full[MAX_FILE], seq[MAX_FILE];
	static const size_t chunks[] = { 1, 3, 8, 61, 512, 4096 };
	struct ks_vm vm;
	ssize_t size, n;
	size_t c, got;
	int fds[2], k;
	off_t end;

	NEED_SETUP();
	make_vm(_metadata, &vm);
	fds[0] = get_stats_fd(_metadata, vm.vcpu[0].fd, "a vCPU fd");
	fds[1] = get_stats_fd(_metadata, vm.fd, "a VM fd");
	ASSERT_LE(0, fds[0]);
	ASSERT_LE(0, fds[1]);
	ASSERT_EQ(KVM_EXIT_IO, ks_vcpu_run(&vm.vcpu[0]));
	ASSERT_EQ(KVM_EXIT_HLT, ks_vcpu_run(&vm.vcpu[0]));
	for (k = 0; k < 2; k++) {
		size = ks_read_whole(fds[k], full, sizeof(full));
		ASSERT_LT(0, size);
		end = lseek(fds[k], 0, SEEK_END);
		EXPECT_EQ(size, end);
		for (c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
			ASSERT_EQ(0, lseek(fds[k], 0, SEEK_SET));
			for (got = 0; (n = read(fds[k], seq + got, chunks[c])) > 0;)
				got += n;
			EXPECT_EQ(0, n) TH_LOG("read(%zu): %s", chunks[c],
					       strerror(errno));
			EXPECT_EQ((size_t)size, got) TH_LOG("chunks of %zu", chunks[c]);
			EXPECT_EQ(0, memcmp(full, seq, size))
				TH_LOG("chunks of %zu", chunks[c]);
			EXPECT_EQ(size, lseek(fds[k], 0, SEEK_CUR));
		}
		/*
		 * Offsets a 32-bit off_t cannot hold reach the file whole:
		 * pread64 past EOF reads nothing, and llseek past EOF is
		 * EINVAL (the file's fixed size, as for a 64-bit caller).
		 */
		EXPECT_EQ(0, pread(fds[k], seq, 16, (off_t)1 << 32));
		EXPECT_EQ(-1, lseek(fds[k], ((off_t)1 << 32) + 8, SEEK_SET));
		EXPECT_EQ(EINVAL, errno);
		EXPECT_EQ(size, lseek(fds[k], 0, SEEK_CUR));
		EXPECT_EQ(size - 8, lseek(fds[k], -8, SEEK_END));
		EXPECT_EQ(8, read(fds[k], seq, 16));
		EXPECT_EQ(0, memcmp(full + size - 8, seq, 8));
		/* And a read in the middle, by pread64, matches. */
		EXPECT_EQ(size / 2, pread(fds[k], seq, size, size - size / 2));
		EXPECT_EQ(0, memcmp(full + size - size / 2, seq, size / 2));
	}
	ks_vm_destroy(&vm);
	close(fds[0]);
	close(fds[1]);
	check_no_leak(_metadata, self);
}

TEST_F(compat, dev_kvm_keeps_einval)
{
	int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);

	NEED_SETUP();
	ASSERT_LE(0, kvm);
	EXPECT_EQ(-1, ioctl(kvm, KVM_GET_STATS_FD, 0));
	EXPECT_EQ(EINVAL, errno);
	close(kvm);
}

TEST_F(compat, native_after_rmmod)
{
	const struct ks_exit_codes *ec = &self->ec;
	int native = ks_native_binary_stats();
	struct kvmstats s = { 0 };
	struct ks_vm vm;
	int fd, ret, i;

	NEED_SETUP();
	ASSERT_LE(0, native) TH_LOG("KVM_CHECK_EXTENSION without the module: %s",
				    strerror(-native));
	make_vm(_metadata, &vm);
	ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
	ASSERT_EQ(0, ret) TH_LOG("rmmod: %s", strerror(-ret));
	ASSERT_EQ(0, ks_module_loaded());
	for (i = 0; i < 2; i++) {
		int src = i ? vm.vcpu[0].fd : vm.fd;

		fd = ioctl(src, KVM_GET_STATS_FD, 0);
		if (!native) {
			/* 5.10: KVM's own refusal, as for a 64-bit caller. */
			EXPECT_EQ(-1, fd);
			EXPECT_EQ(i ? EINVAL : ENOTTY, errno);
			continue;
		}
		ASSERT_LE(0, fd) TH_LOG("KVM's own fd (32-bit): %s", strerror(errno));
		ret = kvmstats_open(&s, fd);
		ASSERT_EQ(0, ret) TH_LOG("libkvmstats: %s", s.err);
		EXPECT_TRUE(ks_find(&s, ec->stat) == NULL)
			TH_LOG("the module's stat with the module unloaded");
		EXPECT_TRUE(ks_find(&s, "in_guest") == NULL);
		kvmstats_close(&s);
	}
	/* Loaded again, the 32-bit caller gets the module's file again. */
	ret = ks_module_ensure("superset");
	ASSERT_EQ(0, ret) TH_LOG("insmod: %s", strerror(-ret));
	fd = get_stats_fd(_metadata, vm.vcpu[0].fd, "a vCPU fd");
	ASSERT_LE(0, fd);
	ret = kvmstats_open(&s, fd);
	ASSERT_EQ(0, ret) TH_LOG("libkvmstats: %s", s.err);
	EXPECT_TRUE(ks_find(&s, ec->stat) != NULL);
	kvmstats_close(&s);
	ks_vm_destroy(&vm);
	/* Nothing of the module's survived its unload. */
	self->base.vms = self->base.vcpus = self->base.files = 0;
	check_no_leak(_metadata, self);
}

#define RIG_SLEEPS	200

TEST(rig_syscalls_survive_preemption)
{
	pid_t spinner;
	int i, status, ret = 0;

	ASSERT_EQ(4, (int)sizeof(long));
	spinner = fork();
	ASSERT_LE(0, spinner);
	if (!spinner) {
		/* Never outlive the test, whatever ends it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			__asm__ volatile("" ::: "memory");
	}
	/* poll(): no time_t (kernels without COMPAT_32BIT_TIME have it). */
	for (i = 0; i < RIG_SLEEPS && !ret; i++)
		ret = poll(NULL, 0, 1);
	EXPECT_EQ(0, ret) TH_LOG("sleep %d: %s", i, strerror(errno));
	EXPECT_EQ(0, kill(spinner, SIGKILL));
	ASSERT_EQ(spinner, waitpid(spinner, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST_HARNESS_MAIN
