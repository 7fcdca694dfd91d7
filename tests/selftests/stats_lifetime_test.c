// SPDX-License-Identifier: GPL-2.0
/*
 * Lifetimes around the stats fd: it keeps working after the VM's fds are
 * closed and after the process that made the VM is gone; other processes
 * may ask for one; many VMs and vCPUs at once; the module's object counts
 * come back to where they were; rmmod is refused while a stats fd is open
 * and KVM answers natively again after it; the module loaded while a VM
 * exists (stopped, or running) counts that VM's exits from then on; several
 * threads asking for the same vCPU's fd at once get one shared state.
 *
 * "KVM's own" stats are its stats fd where the kernel has one (asked with
 * KVM_CHECK_EXTENSION(KVM_CAP_BINARY_STATS_FD) without the module), and
 * its debugfs where not (5.10: the VM's sums, exact for a vCPU that runs
 * alone); there KVM's own answer to KVM_GET_STATS_FD is ENOTTY on a VM fd
 * and EINVAL on a vCPU fd.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ks_harness.h"
#include "internal.h"	/* white-box: reads the handle's fields */
#include "ks_util.h"

#define MAX_FILE	65536

FIXTURE(life) {
	struct ks_module_state mod;
	struct ks_exit_codes ec;
	int ready;
};

FIXTURE_SETUP(life)
{
	KS_SETUP_MODULE(&self->mod, "superset");
	ks_host_exit_codes(&self->ec);
	self->ready = 1;
}

FIXTURE_TEARDOWN(life)
{
	KS_TEARDOWN_MODULE(&self->mod);
}

#define NEED_SETUP() do { if (!self->ready) return; } while (0)

static void make_vm(struct __test_metadata *_metadata, struct ks_vm *vm,
		    unsigned int n1, unsigned int n2, int nr_vcpus)
{
	unsigned int counts[] = { n1, n2 };
	unsigned char code[256];
	size_t len;
	int ret;

	len = ks_code_cpuid_segments(code, sizeof(code), counts, n2 ? 2 : 1);
	ASSERT_NE(0, len);
	ret = ks_vm_create(vm, code, len, nr_vcpus);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
}

static int stats_fd(struct __test_metadata *_metadata, int fd)
{
	int sfd = ioctl(fd, KVM_GET_STATS_FD, 0);

	EXPECT_LE(0, sfd) TH_LOG("KVM_GET_STATS_FD: %s", strerror(errno));
	return sfd;
}

static uint64_t stat1(struct __test_metadata *_metadata, int fd,
		      const char *name)
{
	char err[160] = "";
	uint64_t v;
	int ret = ks_stat_read(fd, name, &v, 1, err, sizeof(err));

	EXPECT_LT(0, ret) TH_LOG("%s: %s", name, err);
	return v;
}

#ifndef KVM_CAP_BINARY_STATS_FD
#define KVM_CAP_BINARY_STATS_FD 203
#endif

/*
 * With the module unloaded: KVM's own stats fd of @fd (a VM or vCPU fd)
 * where the kernel has binary stats; where it has not, KVM's refusal
 * (ENOTTY on a VM fd, EINVAL on a vCPU fd) and -1.
 */
static int native_fd(struct __test_metadata *_metadata, int fd, int is_vm)
{
	int cap = ks_native_binary_stats(), sfd;

	EXPECT_LE(0, cap) TH_LOG("KVM_CHECK_EXTENSION: %s", strerror(-cap));
	if (cap > 0)
		return stats_fd(_metadata, fd);
	sfd = ioctl(fd, KVM_GET_STATS_FD, 0);
	EXPECT_EQ(-1, sfd) TH_LOG("no native binary stats, yet KVM_GET_STATS_FD works");
	EXPECT_EQ(is_vm ? ENOTTY : EINVAL, errno)
		TH_LOG("KVM_GET_STATS_FD on a %s fd: %s", is_vm ? "VM" : "vCPU",
		       strerror(errno));
	if (sfd >= 0)
		close(sfd);
	return -1;
}

/*
 * KVM's own "exits" of the vCPU whose native_fd() is @nfd: from that fd,
 * or from the VM's debugfs (the sum of its vCPUs: exact while that vCPU
 * is the only one that ran).
 */
static uint64_t native_exits(struct __test_metadata *_metadata,
			     const struct ks_vm *vm, int nfd)
{
	uint64_t v = 0;
	int ret;

	if (nfd >= 0)
		return stat1(_metadata, nfd, "exits");
	ret = ks_debugfs_vm_stat(vm, "exits", &v);
	EXPECT_EQ(0, ret) TH_LOG("debugfs exits: %s", strerror(-ret));
	return v;
}

/*
 * Histogram into h[256]; returns the exits the module counted (the sum of
 * its buckets, but on arm64: ks_exits_counted()).
 */
static uint64_t hist(struct __test_metadata *_metadata, int fd,
		     const struct ks_exit_codes *ec, uint64_t *h)
{
	char err[160] = "";
	uint64_t sum = 0;
	unsigned int i;
	int ret = ks_stat_read(fd, ec->stat, h, 256, err, sizeof(err));

	EXPECT_EQ((int)ec->buckets, ret) TH_LOG("%s: %s", ec->stat, err);
	for (i = 0; i < ec->buckets; i++)
		sum += h[i];
	if (strcmp(ec->total, ec->stat))
		sum = ks_exits_counted(fd, ec);
	return sum;
}

static void check_id(struct __test_metadata *_metadata, int fd,
		     const char *want)
{
	struct kvmstats s = { 0 };

	ASSERT_EQ(0, kvmstats_open(&s, dup(fd))) TH_LOG("%s", s.err);
	EXPECT_STREQ(want, s.id);
	kvmstats_close(&s);
}

static long objects(struct __test_metadata *_metadata, const char *name)
{
	long v = ks_objects_read(name);

	EXPECT_LE(0, v) TH_LOG("objects/%s: %s", name, strerror(-v));
	return v;
}

/* All three object counts are back to @base (vms, vcpus, files). */
static void expect_objects_back(struct __test_metadata *_metadata,
				const long *base)
{
	EXPECT_EQ(base[2], objects(_metadata, "files"));
	EXPECT_EQ(base[0], ks_objects_wait_le("vms", base[0], KS_FREE_WAIT_MS));
	EXPECT_EQ(base[1], ks_objects_wait_le("vcpus", base[1], KS_FREE_WAIT_MS));
}

static void objects_base(struct __test_metadata *_metadata, long *base)
{
	base[0] = objects(_metadata, "vms");
	base[1] = objects(_metadata, "vcpus");
	base[2] = objects(_metadata, "files");
}

TEST_F(life, fd_outlives_vm_fds)
{
	unsigned char *before = malloc(MAX_FILE), *after = malloc(MAX_FILE);
	int fds[3], dups[3], i;
	ssize_t nb, na;
	struct ks_vm vm;
	uint64_t h[256];
	char want[64];
	long base[3];

	NEED_SETUP();
	ASSERT_NE(NULL, before);
	ASSERT_NE(NULL, after);
	objects_base(_metadata, base);
	make_vm(_metadata, &vm, 30, 0, 2);
	fds[0] = stats_fd(_metadata, vm.fd);
	fds[1] = stats_fd(_metadata, vm.vcpu[0].fd);
	fds[2] = stats_fd(_metadata, vm.vcpu[1].fd);
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[0]));
	ASSERT_EQ(KS_EXIT_STOP, ks_vcpu_run(&vm.vcpu[0]));
	EXPECT_EQ(base[0] + 1, objects(_metadata, "vms"));
	EXPECT_EQ(base[1] + 2, objects(_metadata, "vcpus"));
	EXPECT_EQ(base[2] + 3, objects(_metadata, "files"));

	for (i = 0; i < 3; i++) {
		dups[i] = dup(fds[i]);
		ASSERT_LE(0, dups[i]);
	}
	/* Close the VM, its vCPUs and /dev/kvm: only the stats fds remain. */
	ks_vm_destroy(&vm);
	EXPECT_EQ(base[0] + 1, objects(_metadata, "vms"));

	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, lseek(fds[i], 0, SEEK_SET));
		nb = ks_read_whole(fds[i], before, MAX_FILE);
		ASSERT_LT(0, nb);
		/* Every byte stays the same: the VM is stopped for good. */
		na = ks_read_whole(dups[i], after, MAX_FILE);
		EXPECT_EQ(nb, na);
		EXPECT_EQ(0, memcmp(before, after, nb));
	}
	snprintf(want, sizeof(want), "kvm-%d", getpid());
	check_id(_metadata, fds[0], want);
	snprintf(want, sizeof(want), "kvm-%d/vcpu-1", getpid());
	check_id(_metadata, fds[2], want);
	hist(_metadata, fds[1], &self->ec, h);
	EXPECT_EQ(30, h[self->ec.cpuid]);
	hist(_metadata, fds[0], &self->ec, h);
	EXPECT_EQ(30, h[self->ec.cpuid]);
	EXPECT_EQ(1, h[self->ec.hlt]);

	/* Closing one of two fds of a file keeps it. */
	for (i = 0; i < 3; i++)
		close(fds[i]);
	EXPECT_EQ(base[2] + 3, objects(_metadata, "files"));
	hist(_metadata, dups[1], &self->ec, h);
	EXPECT_EQ(30, h[self->ec.cpuid]);
	for (i = 0; i < 3; i++)
		close(dups[i]);
	expect_objects_back(_metadata, base);
	free(before);
	free(after);
}

/*
 * The child makes a VM, opens its stats fds, runs it, hands the stats fds
 * and the VM and vCPU fds to us, and exits.  The fds come first so that
 * the counts are the same where the module counts a vCPU only from its
 * first stats fd (PREEMPT_RT).  Plain code: no harness asserts here.
 */
static int creator_child(int sock, unsigned int n)
{
	unsigned int counts[] = { n };
	unsigned char code[64];
	struct ks_vm vm;
	int fds[4];
	size_t len;

	len = ks_code_cpuid_segments(code, sizeof(code), counts, 1);
	if (!len || ks_vm_create(&vm, code, len, 2))
		return 1;
	fds[0] = ioctl(vm.fd, KVM_GET_STATS_FD, 0);
	fds[1] = ioctl(vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	fds[2] = vm.fd;
	fds[3] = vm.vcpu[1].fd;
	if (fds[0] < 0 || fds[1] < 0)
		return 3;
	if (ks_vcpu_run(&vm.vcpu[0]) != KS_EXIT_USER ||
	    ks_vcpu_run(&vm.vcpu[0]) != KS_EXIT_STOP)
		return 2;
	return ks_send_fds(sock, fds, 4) ? 4 : 0;
}

/*
 * Run creator_child(@n) in a child and take its four fds (its two stats
 * fds, its VM fd and a vCPU fd); returns the child's pid, gone by then.
 */
static pid_t from_creator(struct __test_metadata *_metadata, unsigned int n,
			  int fds[4])
{
	int sv[2], status = 0, ok;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		_exit(creator_child(sv[1], n));
	}
	close(sv[1]);
	ok = pid > 0 && !ks_recv_fds(sv[0], fds, 4);
	ok = ok && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	     !WEXITSTATUS(status);
	close(sv[0]);
	if (!ok)
		TH_LOG("the creator child failed: pid %d, status %#x", pid, status);
	return ok ? pid : -1;
}

TEST_F(life, fd_outlives_creator)
{
	const struct ks_exit_codes *ec = &self->ec;
	int fds[4], other[2];
	char want[64];
	uint64_t h[256];
	long base[3];
	pid_t pid;
	int ret;

	NEED_SETUP();
	/*
	 * A telemetry agent's load: another process than the VM's creator
	 * asks, which KVM itself refuses (EIO), so the module answers before
	 * KVM does.
	 */
	ret = ks_module_reload("cross_process=1");
	ASSERT_EQ(0, ret) TH_LOG("reloading: %s", strerror(-ret));
	objects_base(_metadata, base);
	pid = from_creator(_metadata, 77, fds);
	ASSERT_LT(0, pid);

	/* The creator is gone; its stats fds still serve its VM. */
	snprintf(want, sizeof(want), "kvm-%d", pid);
	check_id(_metadata, fds[0], want);
	snprintf(want, sizeof(want), "kvm-%d/vcpu-0", pid);
	check_id(_metadata, fds[1], want);
	hist(_metadata, fds[1], ec, h);
	EXPECT_EQ(77, h[ec->cpuid]);
	EXPECT_EQ(1, h[ec->hlt]);
	hist(_metadata, fds[0], ec, h);
	EXPECT_EQ(77, h[ec->cpuid]);
	EXPECT_LT(77, stat1(_metadata, fds[1], "exits"));

	/* Another process may ask for stats fds (upstream says EIO). */
	other[0] = ioctl(fds[2], KVM_GET_STATS_FD, 0);
	EXPECT_LE(0, other[0]) TH_LOG("VM fd from a non-creator: %s",
				      strerror(errno));
	other[1] = ioctl(fds[3], KVM_GET_STATS_FD, 0);
	EXPECT_LE(0, other[1]) TH_LOG("vCPU fd from a non-creator: %s",
				      strerror(errno));
	if (other[0] >= 0) {
		snprintf(want, sizeof(want), "kvm-%d", pid);
		check_id(_metadata, other[0], want);
		hist(_metadata, other[0], ec, h);
		EXPECT_EQ(77, h[ec->cpuid]);
	}
	if (other[1] >= 0) {
		snprintf(want, sizeof(want), "kvm-%d/vcpu-1", pid);
		check_id(_metadata, other[1], want);
		EXPECT_EQ(0, hist(_metadata, other[1], ec, h));
	}
	EXPECT_EQ(base[0] + 1, objects(_metadata, "vms"));

	close(fds[2]);
	close(fds[3]);
	close(fds[0]);
	close(fds[1]);
	if (other[0] >= 0)
		close(other[0]);
	if (other[1] >= 0)
		close(other[1]);
	expect_objects_back(_metadata, base);
}

/*
 * KVM answers a VM's ioctls in its creator's process only; the module
 * answers KVM_GET_STATS_FD for others only when loaded with
 * cross_process=1 (and then only to those that may observe the guest:
 * stats_dev_test, which also covers /dev/kvm-statsfd).  The creator
 * itself always may.
 */
TEST_F(life, cross_process_is_opt_in)
{
	int fds[4], ret, own, i;
	struct ks_vm vm;

	NEED_SETUP();
	ASSERT_LT(0, from_creator(_metadata, 5, fds));
	/* The stats fds the creator made are its own: they stay valid. */
	close(fds[0]);
	close(fds[1]);

	for (i = 0; i < 2; i++) {
		const char *params = i ? "cross_process=1" : "cross_process=0";
		int vm_sfd, vcpu_sfd;

		ASSERT_EQ(0, ks_module_unload_wait(KS_FREE_WAIT_MS));
		ret = ks_module_load(params);
		ASSERT_EQ(0, ret) TH_LOG("insmod %s: %s", params, strerror(-ret));
		vm_sfd = ioctl(fds[2], KVM_GET_STATS_FD, 0);
		vcpu_sfd = ioctl(fds[3], KVM_GET_STATS_FD, 0);
		if (!i) {
			/* KVM's own answer to a non-creator: EIO. */
			EXPECT_EQ(-1, vm_sfd);
			EXPECT_EQ(EIO, errno);
			EXPECT_EQ(-1, vcpu_sfd);
		} else {
			EXPECT_LE(0, vm_sfd) TH_LOG("%s", strerror(errno));
			EXPECT_LE(0, vcpu_sfd) TH_LOG("%s", strerror(errno));
		}
		if (vm_sfd >= 0)
			close(vm_sfd);
		if (vcpu_sfd >= 0)
			close(vcpu_sfd);

		/* The creator's own VM: always. */
		ASSERT_EQ(0, ks_vm_create(&vm, ks_code_out_hlt,
					  ks_code_out_hlt_len, 1));
		own = ioctl(vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
		EXPECT_LE(0, own) TH_LOG("%s: own vCPU: %s", params,
					 strerror(errno));
		if (own >= 0)
			close(own);
		ks_vm_destroy(&vm);
	}
	close(fds[2]);
	close(fds[3]);
}

#define MANY_VMS	8
#define MANY_VCPUS	4

TEST_F(life, many_vms_and_vcpus)
{
	const struct ks_exit_codes *ec = &self->ec;
	int vm_fd[MANY_VMS], vcpu_fd[MANY_VMS][MANY_VCPUS], v, c;
	struct ks_vm *vms;
	uint64_t h[256];
	char want[64];
	long base[3];

	NEED_SETUP();
	vms = calloc(MANY_VMS, sizeof(*vms));
	ASSERT_NE(NULL, vms);
	objects_base(_metadata, base);
	for (v = 0; v < MANY_VMS; v++) {
		make_vm(_metadata, &vms[v], 5 + 3 * v, 0, MANY_VCPUS);
		vm_fd[v] = stats_fd(_metadata, vms[v].fd);
		for (c = 0; c < MANY_VCPUS; c++)
			vcpu_fd[v][c] = stats_fd(_metadata, vms[v].vcpu[c].fd);
	}
	EXPECT_EQ(base[0] + MANY_VMS, objects(_metadata, "vms"));
	EXPECT_EQ(base[1] + MANY_VMS * MANY_VCPUS, objects(_metadata, "vcpus"));
	EXPECT_EQ(base[2] + MANY_VMS * (MANY_VCPUS + 1),
		  objects(_metadata, "files"));

	for (v = 0; v < MANY_VMS; v++)
		for (c = 0; c < MANY_VCPUS; c++) {
			ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vms[v].vcpu[c]));
			ASSERT_EQ(KS_EXIT_STOP, ks_vcpu_run(&vms[v].vcpu[c]));
		}

	/* Each file counts its own vCPU or VM, nobody else's. */
	for (v = 0; v < MANY_VMS; v++) {
		for (c = 0; c < MANY_VCPUS; c++) {
			uint64_t sum = hist(_metadata, vcpu_fd[v][c], ec, h);

			EXPECT_EQ(5 + 3 * v, h[ec->cpuid]) TH_LOG("VM %d vCPU %d", v, c);
			EXPECT_EQ(1, h[ec->hlt]);
			EXPECT_EQ(stat1(_metadata, vcpu_fd[v][c], "exits"), sum);
			snprintf(want, sizeof(want), "kvm-%d/vcpu-%d", getpid(), c);
			check_id(_metadata, vcpu_fd[v][c], want);
		}
		hist(_metadata, vm_fd[v], ec, h);
		EXPECT_EQ(MANY_VCPUS * (5 + 3 * v), h[ec->cpuid]) TH_LOG("VM %d", v);
		EXPECT_EQ(MANY_VCPUS, h[ec->hlt]);
	}

	/* The VMs' own fds go; the stats fds keep every VM alive. */
	for (v = 0; v < MANY_VMS; v++)
		ks_vm_destroy(&vms[v]);
	EXPECT_EQ(base[0] + MANY_VMS, objects(_metadata, "vms"));
	EXPECT_EQ(base[1] + MANY_VMS * MANY_VCPUS, objects(_metadata, "vcpus"));
	hist(_metadata, vm_fd[MANY_VMS - 1], ec, h);
	EXPECT_EQ(MANY_VCPUS * (5 + 3 * (MANY_VMS - 1)), h[ec->cpuid]);

	for (v = 0; v < MANY_VMS; v++) {
		close(vm_fd[v]);
		for (c = 0; c < MANY_VCPUS; c++)
			close(vcpu_fd[v][c]);
	}
	expect_objects_back(_metadata, base);
	free(vms);
}

/*
 * While any stats fd is open the module cannot go; once the last one is
 * closed it can, and KVM serves its own stats again.
 */
TEST_F(life, rmmod_refused_while_fd_open)
{
	const struct ks_exit_codes *ec = &self->ec;
	struct kvmstats ours = { 0 }, native = { 0 };
	unsigned char *our_descs = NULL;
	unsigned int our_num_desc;
	struct ks_vm vm;
	uint64_t h[256];
	int vcpu_stats, vm_stats, ret, fd, cap;

	NEED_SETUP();
	make_vm(_metadata, &vm, 10, 0, 1);
	vcpu_stats = stats_fd(_metadata, vm.vcpu[0].fd);
	vm_stats = stats_fd(_metadata, vm.fd);
	ASSERT_EQ(0, kvmstats_open(&ours, dup(vcpu_stats))) TH_LOG("%s", ours.err);
	our_num_desc = ours.num_desc;
	our_descs = malloc(our_num_desc * 64);
	ASSERT_NE(NULL, our_descs);
	ASSERT_EQ(0, ks_pread_exact(vcpu_stats, our_descs, our_num_desc * 64,
				    ours.hdr.desc_offset));
	kvmstats_close(&ours);
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[0]));
	ASSERT_EQ(KS_EXIT_STOP, ks_vcpu_run(&vm.vcpu[0]));
	/* Loaded, it says binary stats exist, on /dev/kvm and the VM. */
	EXPECT_EQ(1, ioctl(vm.kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_BINARY_STATS_FD));
	EXPECT_EQ(1, ioctl(vm.fd, KVM_CHECK_EXTENSION, KVM_CAP_BINARY_STATS_FD));
	ks_vm_destroy(&vm);

	/* A vCPU stats fd and a VM stats fd hold it; then the VM one alone. */
	ret = ks_module_unload();
	EXPECT_TRUE(ret == -EWOULDBLOCK || ret == -EBUSY)
		TH_LOG("rmmod with two stats fds open: %s", strerror(-ret));
	EXPECT_EQ(1, ks_module_loaded());
	hist(_metadata, vcpu_stats, ec, h);
	EXPECT_EQ(10, h[ec->cpuid]);
	close(vcpu_stats);

	ret = ks_module_unload();
	EXPECT_TRUE(ret == -EWOULDBLOCK || ret == -EBUSY)
		TH_LOG("rmmod with a VM stats fd open: %s", strerror(-ret));
	ASSERT_EQ(1, ks_module_loaded());
	hist(_metadata, vm_stats, ec, h);
	EXPECT_EQ(10, h[ec->cpuid]);
	close(vm_stats);

	/* The last one closed: nothing holds the module. */
	ret = ks_module_unload();
	ASSERT_EQ(0, ret) TH_LOG("rmmod after the last close: %s", strerror(-ret));
	EXPECT_EQ(0, ks_module_loaded());

	/* KVM's own stats fd again: its descriptors, without ours. */
	make_vm(_metadata, &vm, 10, 0, 1);
	cap = ks_native_binary_stats();
	ASSERT_LE(0, cap) TH_LOG("KVM_CHECK_EXTENSION: %s", strerror(-cap));
	EXPECT_EQ(cap, ioctl(vm.kvm_fd, KVM_CHECK_EXTENSION, KVM_CAP_BINARY_STATS_FD));
	EXPECT_EQ(cap, ioctl(vm.fd, KVM_CHECK_EXTENSION, KVM_CAP_BINARY_STATS_FD));
	if (!cap) {
		/* Or none: KVM's own refusals, as before the module came. */
		EXPECT_EQ(-1, native_fd(_metadata, vm.fd, 1));
		EXPECT_EQ(-1, native_fd(_metadata, vm.vcpu[0].fd, 0));
		ks_vm_destroy(&vm);
		free(our_descs);
		return;
	}
	for (fd = 0; fd < 2; fd++) {
		ret = kvmstats_open_from(&native, fd ? vm.fd : vm.vcpu[0].fd);
		ASSERT_EQ(0, ret) TH_LOG("native: %s", native.err);
		EXPECT_EQ(NULL, ks_find(&native, ec->stat));
		if (!fd) {
			unsigned char *descs = malloc(native.num_desc * 64);

			/* The module served these, and more after them. */
			EXPECT_LT(native.num_desc, our_num_desc);
			EXPECT_NE(NULL, ks_find(&native, "exits"));
			ASSERT_NE(NULL, descs);
			ASSERT_EQ(0, ks_pread_exact(native.fd, descs,
						    native.num_desc * 64,
						    native.hdr.desc_offset));
			EXPECT_EQ(0, memcmp(descs, our_descs,
					    native.num_desc * 64));
			free(descs);
		}
		kvmstats_close(&native);
	}
	ks_vm_destroy(&vm);
	free(our_descs);
}

/*
 * Loaded while a VM exists and its vCPU has run: counting starts at load.
 * vCPU 0 gets its stats fd first (state made by the fd), vCPU 1 runs first
 * (state made at its first exit).
 */
TEST_F(life, load_while_vm_exists)
{
	const struct ks_exit_codes *ec = &self->ec;
	uint64_t h[256], e0, sum, exits;
	int native0, fd0, fd1 = -1, vmfd, ret, rt;
	struct ks_vm vm;
	long base[3];

	NEED_SETUP();
	rt = ks_kernel_is_rt();
	ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
	ASSERT_EQ(0, ret) TH_LOG("unloading: %s", strerror(-ret));
	make_vm(_metadata, &vm, 50, 40, 2);
	/* KVM's own count of vCPU 0 (debugfs: vCPU 1 runs only later). */
	native0 = native_fd(_metadata, vm.vcpu[0].fd, 0);
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[0]));
	e0 = native_exits(_metadata, &vm, native0);
	EXPECT_LT(50, e0);

	ASSERT_EQ(0, ks_module_load("")) TH_LOG("loading %s", ks_module_path());
	objects_base(_metadata, base);
	fd0 = stats_fd(_metadata, vm.vcpu[0].fd);
	ASSERT_LE(0, fd0);
	EXPECT_EQ(0, hist(_metadata, fd0, ec, h)) TH_LOG("counts start at load");
	EXPECT_EQ(e0, stat1(_metadata, fd0, "exits"));

	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[0]));
	sum = hist(_metadata, fd0, ec, h);
	exits = native_exits(_metadata, &vm, native0);
	EXPECT_EQ(40, h[ec->cpuid]);
	EXPECT_EQ(1, h[ec->io]);
	EXPECT_EQ(exits - e0, sum);
	ASSERT_EQ(KS_EXIT_STOP, ks_vcpu_run(&vm.vcpu[0]));
	sum = hist(_metadata, fd0, ec, h);
	EXPECT_EQ(1, h[ec->hlt]);
	EXPECT_EQ(stat1(_metadata, fd0, "exits") - e0, sum);
	EXPECT_EQ(native_exits(_metadata, &vm, native0),
		  stat1(_metadata, fd0, "exits"));

	/*
	 * vCPU 1: no fd yet; its first exit after load makes its state.  On
	 * PREEMPT_RT the exit path cannot allocate (design.rst): the state
	 * comes with the vCPU's first stats fd, opened first there.
	 */
	if (rt) {
		fd1 = stats_fd(_metadata, vm.vcpu[1].fd);
		ASSERT_LE(0, fd1);
	}
	EXPECT_EQ(base[1] + 1 + rt, objects(_metadata, "vcpus"));
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[1]));
	EXPECT_EQ(base[1] + 2, objects(_metadata, "vcpus"));
	if (!rt)
		fd1 = stats_fd(_metadata, vm.vcpu[1].fd);
	ASSERT_LE(0, fd1);
	EXPECT_EQ(base[1] + 2, objects(_metadata, "vcpus"));
	sum = hist(_metadata, fd1, ec, h);
	EXPECT_EQ(50, h[ec->cpuid]);
	EXPECT_EQ(stat1(_metadata, fd1, "exits"), sum);

	vmfd = stats_fd(_metadata, vm.fd);
	ASSERT_LE(0, vmfd);
	hist(_metadata, vmfd, ec, h);
	EXPECT_EQ(90, h[ec->cpuid]);
	EXPECT_EQ(2, h[ec->io]);
}

struct runner {
	struct ks_vcpu *vcpu;
	volatile int stop;
	int last_err;
	pthread_t thread;
	pthread_barrier_t *barrier;
	int until_hlt;		/* run to HLT, else until stop */
	int result;		/* 0 when it ran as asked */
};

static void on_sigusr1(int sig) { }

static void *runner_fn(void *arg)
{
	struct runner *r = arg;
	int ret;

	if (r->barrier)
		pthread_barrier_wait(r->barrier);
	if (r->until_hlt) {
		r->result = ks_vcpu_run(r->vcpu) != KS_EXIT_USER ||
			    ks_vcpu_run(r->vcpu) != KS_EXIT_STOP;
		return NULL;
	}
	while (!r->stop) {
		ret = ks_vcpu_run(r->vcpu);
		if (ret < 0 && ret != -EINTR) {
			r->last_err = ret;
			r->result = 1;
			break;
		}
	}
	return NULL;
}

static void stop_runner(struct runner *r)
{
	r->stop = 1;
	r->vcpu->run->immediate_exit = 1;
	__sync_synchronize();
	pthread_kill(r->thread, SIGUSR1);
	pthread_join(r->thread, NULL);
	r->vcpu->run->immediate_exit = 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Loaded while a vCPU is inside KVM_RUN, exiting all the time. */
TEST_F(life, load_while_vcpu_runs)
{
	const struct ks_exit_codes *ec = &self->ec;
	struct sigaction sa = { .sa_handler = on_sigusr1 };
	uint64_t h[256], before, total, c1, c2, sum;
	struct runner r = { 0 };
	int native, fd = -1, ret, waited, rt;
	struct ks_vm vm;
	long vcpus;

	NEED_SETUP();
	rt = ks_kernel_is_rt();
	ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
	ASSERT_EQ(0, ret) TH_LOG("unloading: %s", strerror(-ret));
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ret = ks_vm_create(&vm, ks_code_cpuid_forever, ks_code_cpuid_forever_len, 1);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	/* One vCPU: debugfs's VM sum is its count where there is no fd. */
	native = native_fd(_metadata, vm.vcpu[0].fd, 0);

	r.vcpu = &vm.vcpu[0];
	ASSERT_EQ(0, pthread_create(&r.thread, NULL, runner_fn, &r));
	for (waited = 0; native_exits(_metadata, &vm, native) < 100 &&
	     waited < KS_PROGRESS_WAIT_MS; waited += 10)
		sleep_ms(10);
	before = native_exits(_metadata, &vm, native);
	EXPECT_LE(100, before) TH_LOG("the vCPU does not run");

	/*
	 * cross_process=1, as an agent loads it: the fd below is asked for
	 * while the vCPU is inside KVM_RUN, where KVM (and so the module's
	 * default load, which serves the ioctl inside KVM's) would wait for
	 * the vCPU's mutex until the vCPU returns to userspace.
	 */
	ret = ks_module_load("cross_process=1");
	if (ret) {
		stop_runner(&r);
		ASSERT_EQ(0, ret) TH_LOG("loading while the vCPU runs");
	}
	/*
	 * No fd asked for it: the running vCPU's exits make its state; on
	 * PREEMPT_RT, where the exit path cannot allocate, its first stats
	 * fd does, asked for at once.
	 */
	if (rt)
		fd = stats_fd(_metadata, vm.vcpu[0].fd);
	vcpus = ks_objects_read("vcpus");
	for (waited = 0; vcpus < 1 && waited < KS_PROGRESS_WAIT_MS;
	     waited += 10) {
		sleep_ms(10);
		vcpus = ks_objects_read("vcpus");
	}
	EXPECT_EQ(1, vcpus);

	if (!rt)
		fd = stats_fd(_metadata, vm.vcpu[0].fd);
	c1 = c2 = 0;
	if (fd >= 0) {
		/* The first CPUID counted, then more. */
		for (waited = 0; !c1 && waited < KS_PROGRESS_WAIT_MS;
		     waited += 10) {
			hist(_metadata, fd, ec, h);
			c1 = h[ec->cpuid];
			if (!c1)
				sleep_ms(10);
		}
		for (waited = 0; waited < KS_PROGRESS_WAIT_MS; waited += 10) {
			hist(_metadata, fd, ec, h);
			c2 = h[ec->cpuid];
			if (c2 > c1)
				break;
			sleep_ms(10);
		}
	}
	stop_runner(&r);
	EXPECT_EQ(0, r.result) TH_LOG("KVM_RUN: %s", strerror(-r.last_err));
	EXPECT_LT(0, c1) TH_LOG("no CPUID exit counted by the time of the fd");
	EXPECT_LT(c1, c2) TH_LOG("CPUID exits do not grow");
	ASSERT_LE(0, fd);

	/* Stopped: what we counted is at most what happened since load. */
	sum = hist(_metadata, fd, ec, h);
	total = native_exits(_metadata, &vm, native);
	EXPECT_EQ(total, stat1(_metadata, fd, "exits"));
	EXPECT_LT(0, sum);
	EXPECT_GE(total - before, sum) TH_LOG("counted %llu, only %llu since load",
		(unsigned long long)sum, (unsigned long long)(total - before));
	EXPECT_EQ(0, h[ec->hlt]);
	EXPECT_EQ(0, h[ec->io]);
	ks_vm_destroy(&vm);
}

#define OPENERS		8
#define PER_VCPU0	16
#define PER_VCPU1	8
#define PER_VM		4
#define PER_OPENER	(PER_VCPU0 + PER_VCPU1 + PER_VM)

struct opener {
	pthread_t thread;
	pthread_barrier_t *barrier;
	int vcpu0_fd, vcpu1_fd, vm_fd;
	int fds[PER_OPENER];	/* vCPU 0's, vCPU 1's, then the VM's */
	int err;
};

static void *opener_fn(void *arg)
{
	struct opener *o = arg;
	int i;

	pthread_barrier_wait(o->barrier);
	for (i = 0; i < PER_OPENER; i++) {
		int fd = i < PER_VCPU0 ? o->vcpu0_fd :
			 i < PER_VCPU0 + PER_VCPU1 ? o->vcpu1_fd : o->vm_fd;

		o->fds[i] = ioctl(fd, KVM_GET_STATS_FD, 0);
		if (o->fds[i] < 0 && !o->err)
			o->err = errno;
	}
	return NULL;
}

/*
 * Threads ask for stats fds of one vCPU at once, and of another vCPU while
 * it makes its first exits: every fd works and they all share one state
 * per vCPU (a second state would show zeros, or split the counts).
 */
TEST_F(life, concurrent_get_stats_fd)
{
	const struct ks_exit_codes *ec = &self->ec;
	struct opener o[OPENERS];
	struct runner r = { 0 };
	pthread_barrier_t barrier;
	unsigned char *first = malloc(MAX_FILE), *other = malloc(MAX_FILE);
	ssize_t n0, n;
	struct ks_vm vm;
	uint64_t h[256];
	long base[3];
	int t, i, early;

	NEED_SETUP();
	ASSERT_NE(NULL, first);
	ASSERT_NE(NULL, other);
	objects_base(_metadata, base);
	make_vm(_metadata, &vm, 300, 0, 2);
	/*
	 * PREEMPT_RT counts a vCPU only from its first stats fd: open one for
	 * the vCPU that runs now, before it runs.  The openers still race to
	 * create vCPU 0's state and the VM's fds while vCPU 1 exits.
	 */
	early = ks_kernel_is_rt() ? ioctl(vm.vcpu[1].fd, KVM_GET_STATS_FD, 0) : -1;
	if (ks_kernel_is_rt()) {
		ASSERT_LE(0, early) TH_LOG("KVM_GET_STATS_FD: %s", strerror(errno));
	}
	ASSERT_EQ(0, pthread_barrier_init(&barrier, NULL, OPENERS + 1));
	r.vcpu = &vm.vcpu[1];
	r.until_hlt = 1;
	r.barrier = &barrier;
	ASSERT_EQ(0, pthread_create(&r.thread, NULL, runner_fn, &r));
	for (t = 0; t < OPENERS; t++) {
		o[t] = (struct opener){
			.barrier = &barrier,
			.vcpu0_fd = vm.vcpu[0].fd,
			.vcpu1_fd = vm.vcpu[1].fd,
			.vm_fd = vm.fd,
		};
		ASSERT_EQ(0, pthread_create(&o[t].thread, NULL, opener_fn, &o[t]));
	}
	for (t = 0; t < OPENERS; t++)
		pthread_join(o[t].thread, NULL);
	pthread_join(r.thread, NULL);
	EXPECT_EQ(0, r.result) TH_LOG("vCPU 1 did not run to HLT");
	for (t = 0; t < OPENERS; t++) {
		int err = o[t].err;

		EXPECT_EQ(0, err) TH_LOG("thread %d: %s", t, strerror(err));
	}
	ASSERT_EQ(0, o[0].err);

	EXPECT_EQ(base[0] + 1, objects(_metadata, "vms"));
	EXPECT_EQ(base[1] + 2, objects(_metadata, "vcpus"));
	EXPECT_EQ(base[2] + OPENERS * PER_OPENER + (early >= 0),
		  objects(_metadata, "files"));

	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[0]));
	ASSERT_EQ(KS_EXIT_STOP, ks_vcpu_run(&vm.vcpu[0]));

	/* Every fd of a kind reads the same bytes, counting this run. */
	for (i = 0; i < PER_OPENER; i++) {
		n0 = ks_read_whole(o[0].fds[i], first, MAX_FILE);
		ASSERT_LT(0, n0);
		hist(_metadata, o[0].fds[i], ec, h);
		EXPECT_EQ(i < PER_VCPU0 + PER_VCPU1 ? 300 : 600, h[ec->cpuid])
			TH_LOG("fd %d of thread 0", i);
		for (t = 1; t < OPENERS; t++) {
			if (o[t].fds[i] < 0)
				continue;
			n = ks_read_whole(o[t].fds[i], other, MAX_FILE);
			EXPECT_EQ(n0, n);
			EXPECT_EQ(0, memcmp(first, other, n0))
				TH_LOG("fd %d of thread %d differs", i, t);
		}
	}

	for (t = 0; t < OPENERS; t++)
		for (i = 0; i < PER_OPENER; i++)
			if (o[t].fds[i] >= 0)
				close(o[t].fds[i]);
	if (early >= 0)
		close(early);
	EXPECT_EQ(base[2], objects(_metadata, "files"));
	ks_vm_destroy(&vm);
	expect_objects_back(_metadata, base);
	free(first);
	free(other);
}

TEST_HARNESS_MAIN
