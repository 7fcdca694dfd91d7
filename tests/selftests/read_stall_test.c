// SPDX-License-Identifier: GPL-2.0
/*
 * A reader whose buffer cannot be faulted in (a userfaultfd page that no
 * one serves, as a FUSE-backed or deliberately slow buffer would be)
 * holds nothing that other VMs need: while it waits, another VM's counters
 * move into pages (its first mapping) and that VM is destroyed, and its
 * state is freed as promptly as with no reader at all.  Once the page is
 * served, the stalled read completes with the right bytes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/userfaultfd.h>

#include "kselftest_harness.h"
#include "ks_harness.h"
#include "ks_util.h"

#define READ_LEN	64

FIXTURE(stall) {
	struct ks_module_state mod;
	struct ks_baseline base;
	struct ks_vm vm;
	int sfd;
};

FIXTURE_SETUP(stall)
{
	int r;

	KS_SETUP_MODULE(&self->mod, "superset");
	KS_BASELINE_TAKE(&self->base, KS_FREE_WAIT_MS);
	r = ks_vm_create(&self->vm, ks_code_out_hlt, ks_code_out_hlt_len, 1);
	ASSERT_EQ(0, r) TH_LOG("ks_vm_create: %s", strerror(-r));
	self->sfd = ioctl(self->vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, self->sfd) TH_LOG("KVM_GET_STATS_FD: %s", strerror(errno));
}

FIXTURE_TEARDOWN(stall)
{
	close(self->sfd);
	ks_vm_destroy(&self->vm);
	KS_BASELINE_CHECK(&self->base, KS_FREE_WAIT_MS);
	KS_TEARDOWN_MODULE(&self->mod);
}

struct reader {
	int fd;
	void *buf;
	ssize_t ret;
	int err;
};

static void *read_into(void *arg)
{
	struct reader *r = arg;

	r->ret = pread(r->fd, r->buf, READ_LEN, 0);
	r->err = errno;
	return NULL;
}

/* A VM whose vCPU's counters move into pages, then destroyed. */
static void vm_moved_and_destroyed(struct __test_metadata *_metadata)
{
	uint64_t off, size, page_off;
	long page = sysconf(_SC_PAGESIZE);
	struct ks_vm vm;
	void *m;
	int fd;

	ASSERT_EQ(0, ks_vm_create(&vm, ks_code_out_hlt, ks_code_out_hlt_len, 1));
	ASSERT_EQ(KS_EXIT_USER, ks_vcpu_run(&vm.vcpu[0]));
	fd = ioctl(vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ks_fdinfo_map(fd, &off, &size, &page_off));
	m = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, m) TH_LOG("mmap: %s", strerror(errno));
	munmap(m, page);
	close(fd);
	ks_vm_destroy(&vm);
}

TEST_F(stall, stalled_reader_holds_back_no_other_vm)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_zeropage zero = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	unsigned char want[READ_LEN];
	struct uffd_msg msg;
	struct reader r = { .fd = self->sfd };
	struct pollfd pfd;
	pthread_t t;
	long vms;
	int uffd;

	ASSERT_EQ(READ_LEN, pread(self->sfd, want, READ_LEN, 0));
	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	if (uffd < 0)
		SKIP(return, "no userfaultfd: %s", strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	r.buf = mmap(NULL, page, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, r.buf);
	reg.range.start = (unsigned long)r.buf;
	reg.range.len = page;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));

	/* The reader stalls in its buffer's page fault. */
	ASSERT_EQ(0, pthread_create(&t, NULL, read_into, &r));
	pfd.fd = uffd;
	pfd.events = POLLIN;
	ASSERT_EQ(1, poll(&pfd, 1, KS_PROGRESS_WAIT_MS));
	ASSERT_EQ(sizeof(msg), read(uffd, &msg, sizeof(msg)));
	ASSERT_EQ(UFFD_EVENT_PAGEFAULT, msg.event);

	/* Meanwhile another VM's state goes, as it would with no reader. */
	vms = ks_objects_read("vms");
	vm_moved_and_destroyed(_metadata);
	EXPECT_EQ(vms, ks_objects_wait_le("vms", vms, KS_FREE_WAIT_MS))
		TH_LOG("a destroyed VM's state waited for the stalled reader");

	/* Served, the read completes, with what an unstalled read gives. */
	zero.range.start = (unsigned long)r.buf;
	zero.range.len = page;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_ZEROPAGE, &zero));
	ASSERT_EQ(0, pthread_join(t, NULL));
	EXPECT_EQ(READ_LEN, r.ret) TH_LOG("pread: %s", strerror(r.err));
	EXPECT_EQ(0, memcmp(want, r.buf, READ_LEN));
	munmap(r.buf, page);
	close(uffd);
}

TEST_HARNESS_MAIN
