// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kvm-statsfd: a process other than the VM's creator, holding one of
 * its VM or vCPU fds (here inherited through fork(), as a sandboxed helper
 * or an agent that borrowed it would hold it), gets a stats fd for it from
 * the device if it may observe the guest (CAP_SYS_PTRACE or CAP_PERFMON),
 * and EACCES if not; KVM_GET_STATS_FD itself keeps KVM's rule (EIO), and
 * with cross_process=1 answers under the same check.  Bad arguments get
 * their errno; an open device holds the module.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "ks_harness.h"
#include "internal.h"	/* white-box: reads the handle's fields */
#include "ks_util.h"
#include "kvm_statsfd/stats_dev.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON	38
#endif

FIXTURE(dev) {
	struct ks_module_state mod;
	struct ks_vm vm;
};

FIXTURE_SETUP(dev)
{
	int r;

	if (access("/dev/kvm", R_OK | W_OK))
		SKIP(return, "/dev/kvm is not usable: %s", strerror(errno));
	ks_module_save(&self->mod);
	/* The plain load an operator makes: no cross_process. */
	ASSERT_EQ(0, ks_module_reload("cross_process=0"));
	r = ks_vm_create(&self->vm, ks_code_out_hlt, ks_code_out_hlt_len, 1);
	ASSERT_EQ(0, r) TH_LOG("ks_vm_create: %s", strerror(-r));
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&self->vm.vcpu[0]));
}

FIXTURE_TEARDOWN(dev)
{
	ks_vm_destroy(&self->vm);
	KS_TEARDOWN_MODULE(&self->mod);
}

/* The device's answer for @fd: a stats fd, or -errno. */
static int dev_get(int fd)
{
	int dev = open(KVM_STATSFD_DEV_PATH, O_RDONLY | O_CLOEXEC);
	int ret;

	if (dev < 0)
		return -errno;
	ret = ioctl(dev, KVM_STATSFD_GET_STATS_FD, fd);
	if (ret < 0)
		ret = -errno;
	close(dev);
	return ret;
}

/* Keep only the capabilities in @caps (a mask of two words), as uid 65534. */
static int become_unprivileged(const uint32_t caps[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = {
		{ caps[0], caps[0], 0 }, { caps[1], caps[1], 0 },
	};

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) ||
	    setresgid(65534, 65534, 65534) || setresuid(65534, 65534, 65534))
		return -errno;
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/*
 * What a forked child (another mm) holding the VM's fds gets: from the
 * device for the VM fd and the vCPU fd, and from KVM_GET_STATS_FD on the
 * vCPU fd, each a stats fd's "exits" value or -errno.  The child keeps
 * @caps (NULL: stays root) and says whether its stats match @want_exits.
 */
struct child_view {
	int open;		/* 0, or -errno of opening the device */
	int vm, vcpu, ioctl;
	int exits_match;
};

static void child_reads(struct __test_metadata *_metadata, struct ks_vm *vm,
			const uint32_t *caps, uint64_t want_exits,
			struct child_view *v)
{
	int p[2], status;
	pid_t pid;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct child_view c = { 0 };
		struct kvmstats s = { 0 };
		int fd;

		close(p[0]);
		if (caps && become_unprivileged(caps))
			_exit(2);
		fd = open(KVM_STATSFD_DEV_PATH, O_RDONLY | O_CLOEXEC);
		c.open = fd < 0 ? -errno : 0;
		if (fd >= 0)
			close(fd);
		fd = dev_get(vm->fd);
		c.vm = fd < 0 ? fd : 0;
		if (fd >= 0)
			close(fd);
		fd = dev_get(vm->vcpu[0].fd);
		c.vcpu = fd < 0 ? fd : 0;
		if (fd >= 0 && !kvmstats_open(&s, fd)) {
			const struct kvmstats_desc *d = ks_find(&s, "exits");

			c.exits_match = d && kvmstats_value(&s, d, 0) == want_exits;
			kvmstats_close(&s);
		}
		fd = ioctl(vm->vcpu[0].fd, KVM_GET_STATS_FD, 0);
		c.ioctl = fd < 0 ? -errno : 0;
		if (write(p[1], &c, sizeof(c)) != sizeof(c))
			_exit(3);
		_exit(0);
	}
	close(p[1]);
	ASSERT_EQ(sizeof(*v), read(p[0], v, sizeof(*v)));
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, status);
	/* Any user may open the device: refusals come from its check. */
	if (v->open) {
		struct stat st = { 0 };

		stat(KVM_STATSFD_DEV_PATH, &st);
		TH_LOG("%s: mode %o, uid %u", KVM_STATSFD_DEV_PATH,
		       st.st_mode, st.st_uid);
	}
	ASSERT_EQ(0, v->open) TH_LOG("opening %s: %s", KVM_STATSFD_DEV_PATH,
				     strerror(-v->open));
}

/* The vCPU's "exits", as its creator reads it. */
static uint64_t own_exits(struct __test_metadata *_metadata, struct ks_vm *vm)
{
	uint64_t v = 0;
	int fd = ioctl(vm->vcpu[0].fd, KVM_GET_STATS_FD, 0);
	char err[128];

	EXPECT_LE(0, fd);
	if (fd < 0)
		return 0;
	EXPECT_EQ(1, ks_stat_read(fd, "exits", &v, 1, err, sizeof(err)))
		TH_LOG("%s", err);
	close(fd);
	EXPECT_LT(0, v);
	return v;
}

TEST_F(dev, root_in_another_process_is_served)
{
	uint64_t exits = own_exits(_metadata, &self->vm);
	struct child_view v;

	child_reads(_metadata, &self->vm, NULL, exits, &v);
	EXPECT_EQ(0, v.vm);
	EXPECT_EQ(0, v.vcpu);
	EXPECT_EQ(1, v.exits_match) TH_LOG("the device's fd reads other values");
	/* KVM's own rule stands for its ioctl. */
	EXPECT_EQ(-EIO, v.ioctl);
}

TEST_F(dev, perfmon_alone_is_enough)
{
	const uint32_t caps[2] = { 0, 1u << (CAP_PERFMON - 32) };
	uint64_t exits = own_exits(_metadata, &self->vm);
	struct child_view v;

	child_reads(_metadata, &self->vm, caps, exits, &v);
	EXPECT_EQ(0, v.vm);
	EXPECT_EQ(0, v.vcpu);
	EXPECT_EQ(1, v.exits_match);
	EXPECT_EQ(-EIO, v.ioctl);
}

TEST_F(dev, sys_ptrace_alone_is_enough)
{
	const uint32_t caps[2] = { 1u << CAP_SYS_PTRACE, 0 };
	struct child_view v;

	child_reads(_metadata, &self->vm, caps, own_exits(_metadata, &self->vm), &v);
	EXPECT_EQ(0, v.vm);
	EXPECT_EQ(0, v.vcpu);
	EXPECT_EQ(1, v.exits_match);
}

TEST_F(dev, no_capability_is_refused)
{
	const uint32_t none[2] = { 0, 0 };
	long files = ks_objects_read("files");
	struct child_view v;

	child_reads(_metadata, &self->vm, none, 0, &v);
	EXPECT_EQ(-EACCES, v.vm);
	EXPECT_EQ(-EACCES, v.vcpu);
	EXPECT_EQ(-EIO, v.ioctl);
	EXPECT_EQ(files, ks_objects_read("files"));
}

/* cross_process=1 answers KVM_GET_STATS_FD, under the device's check. */
TEST_F(dev, cross_process_checks_the_same)
{
	const uint32_t none[2] = { 0, 0 };
	const uint32_t perfmon[2] = { 0, 1u << (CAP_PERFMON - 32) };
	struct child_view v;

	ks_vm_destroy(&self->vm);
	ASSERT_EQ(0, ks_module_reload("cross_process=1"));
	ASSERT_EQ(0, ks_vm_create(&self->vm, ks_code_out_hlt,
				  ks_code_out_hlt_len, 1));
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&self->vm.vcpu[0]));

	child_reads(_metadata, &self->vm, none, 0, &v);
	EXPECT_EQ(-EIO, v.ioctl) TH_LOG("no capability, cross_process=1");
	EXPECT_EQ(-EACCES, v.vcpu);
	child_reads(_metadata, &self->vm, perfmon, 0, &v);
	EXPECT_EQ(0, v.ioctl) TH_LOG("CAP_PERFMON, cross_process=1");
	child_reads(_metadata, &self->vm, NULL, 0, &v);
	EXPECT_EQ(0, v.ioctl) TH_LOG("root, cross_process=1");
}

TEST_F(dev, bad_arguments)
{
	int dev = open(KVM_STATSFD_DEV_PATH, O_RDONLY | O_CLOEXEC);
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int stats = ioctl(self->vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	long files;

	ASSERT_LE(0, dev) TH_LOG("%s: %s", KVM_STATSFD_DEV_PATH, strerror(errno));
	ASSERT_LE(0, null);
	ASSERT_LE(0, stats);
	files = ks_objects_read("files");
	EXPECT_EQ(-1, ioctl(dev, KVM_STATSFD_GET_STATS_FD, -1));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(-1, ioctl(dev, KVM_STATSFD_GET_STATS_FD, 1L << 40));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(-1, ioctl(dev, KVM_STATSFD_GET_STATS_FD, 4095));
	EXPECT_EQ(EBADF, errno);
	EXPECT_EQ(-1, ioctl(dev, KVM_STATSFD_GET_STATS_FD, null));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(dev, KVM_STATSFD_GET_STATS_FD, stats));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, ioctl(dev, KVM_STATSFD_GET_STATS_FD, self->vm.kvm_fd));
	EXPECT_EQ(EINVAL, errno) TH_LOG("/dev/kvm's fd");
	EXPECT_EQ(-1, ioctl(dev, KVM_GET_STATS_FD, self->vm.fd));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(-1, ioctl(dev, _IO('k', 0xcf), self->vm.fd));
	EXPECT_EQ(ENOTTY, errno);
	EXPECT_EQ(files, ks_objects_read("files"));
	close(stats);
	close(null);
	close(dev);
}

/* An open device holds the module: rmmod is refused until it is closed. */
TEST_F(dev, open_device_holds_the_module)
{
	int dev = open(KVM_STATSFD_DEV_PATH, O_RDONLY | O_CLOEXEC);
	int r;

	ASSERT_LE(0, dev);
	ks_vm_destroy(&self->vm);
	r = ks_module_unload();
	EXPECT_TRUE(r == -EWOULDBLOCK || r == -EBUSY) TH_LOG("%s", strerror(-r));
	close(dev);
	EXPECT_EQ(0, ks_module_unload_wait(KS_FREE_WAIT_MS));
	EXPECT_NE(0, access(KVM_STATSFD_DEV_PATH, F_OK));
}

TEST_HARNESS_MAIN
