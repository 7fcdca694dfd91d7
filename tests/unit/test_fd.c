// SPDX-License-Identifier: GPL-2.0
/* kvmstats_open()/refresh()/close() against a real fd: a memfd image. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "kvmstats.h"
#include "image.h"
#include "tap.h"
#include "tests.h"
#include "kvm_statsfd/stats_dev.h"

static int memfd_with(const struct img *im)
{
	int fd = memfd_create("kvmstats-test", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (pwrite(fd, im->buf, im->len, 0) != (ssize_t)im->len) {
		close(fd);
		return -1;
	}
	return fd;
}

static int fd_valid(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void test_open_refresh(struct img *im)
{
	const struct kvmstats_desc *d;
	struct kvmstats s = { 0 };
	uint64_t v = 424242;
	int fd = memfd_with(im), ret;

	if (!ok(fd >= 0, "memfd_create + write image"))
		return;
	ret = kvmstats_open(&s, fd);
	ok(!ret && s.fd == fd && s.num_desc == img_valid_n,
	   "open: memfd image opens, s->fd is the fd (%s)", s.err);
	if (ret) {
		close(fd);
		return;
	}
	d = kvmstats_find(&s, "halt_wait_hist");
	ok(d && kvmstats_value(&s, d, 3) == img_value(4, 3),
	   "open: histogram value read through pread");
	/* The VMM side changes a counter; refresh must see it. */
	d = kvmstats_find(&s, "exits");
	pwrite(fd, &v, 8, im->data_off + d->offset);
	ok(kvmstats_value(&s, d, 0) == img_value(0, 0),
	   "refresh: value unchanged before refresh");
	lseek(fd, 5, SEEK_SET);
	ret = kvmstats_refresh(&s);
	ok(!ret && kvmstats_value(&s, d, 0) == 424242,
	   "refresh: new value after refresh (%d)", ret);
	ok(lseek(fd, 0, SEEK_CUR) == 5,
	   "refresh: pread leaves the (shared) file offset alone");
	ftruncate(fd, im->data_off + 8);
	ret = kvmstats_refresh(&s);
	ok(ret == -EIO && strstr(s.err, "short read"),
	   "refresh: short data read is -EIO (%s)", s.err);
	kvmstats_close(&s);
	ok(!fd_valid(fd) && s.fd == -1, "close: closes the stats fd it owns");
}

static void test_open_errors(struct img *im)
{
	struct kvmstats s = { 0 }, z = { 0 };
	int fd, ret, before;

	fd = memfd_with(im);
	ftruncate(fd, im->len - 8);
	ret = kvmstats_open(&s, fd);
	ok(ret == -EBADMSG && strstr(s.err, "data block truncated") && s.fd == -1,
	   "open: truncated data block refused (%s)", s.err);
	ok(fd_valid(fd), "open: failure does not close the caller's fd");
	ftruncate(fd, 20);
	ret = kvmstats_open(&s, fd);
	ok(ret == -EBADMSG && strstr(s.err, "header truncated"),
	   "open: file shorter than header refused (%s)", s.err);
	kvmstats_close(&s);
	ok(fd_valid(fd), "close after failed open leaves the fd alone");

	ret = kvmstats_open(&s, -1);
	ok(ret == -EBADF, "open: fd -1 is -EBADF");
	ret = kvmstats_open_from(&s, fd);
	/* ENOSYS: qemu-user (make run-arm64) answers ioctls it does not know. */
	ok((ret == -ENOTTY || ret == -ENOSYS) && strstr(s.err, "KVM_GET_STATS_FD") &&
	   fd_valid(fd),
	   "open_from: ioctl on a non-KVM fd fails, fd kept (%s)", s.err);
	close(fd);

	memset(&z, 0, sizeof(z));
	before = fd_valid(0);
	kvmstats_close(&z);
	ok(fd_valid(0) == before, "close of a zeroed struct does not close fd 0");

	kvmstats_parse(&s, im->buf, im->len);
	ok(kvmstats_refresh(&s) == -EBADF, "refresh after parse (no fd) is -EBADF");
	kvmstats_close(&s);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * A stats fd declares its own sizes: one stat at offset 0x7ff00000 once
 * made the reader allocate 2 GiB and read for 16 s.  Nothing a file
 * declares may be allocated past the library's caps.  A sparse memfd
 * plays the file: the bytes exist, as they would in a hostile producer.
 */
static void test_declared_sizes(void)
{
	static const struct img_stat far[] = {
		{ "exits", KVM_STATS_TYPE_CUMULATIVE, 0, 1, 0, 0 },
		{ "far",   KVM_STATS_TYPE_CUMULATIVE, 0, 1, 0, 0 },
	};
	struct kvmstats s = { 0 };
	struct img im;
	double t0;
	int fd, ret;

	if (img_build(&im, "kvm-1", 48, far, 2, LAYOUT_UPSTREAM))
		return;
	img_set_desc32(&im, 1, D_OFFSET, 0x7ff00000);
	fd = memfd_with(&im);
	if (!ok(fd >= 0 && !ftruncate(fd, (off_t)im.data_off + 0x7ff00000 + 8),
		"sparse 2 GiB memfd"))
		goto out;
	t0 = now_s();
	ret = kvmstats_open(&s, fd);
	ok(ret == -EBADMSG && strstr(s.err, "data block") && now_s() - t0 < 0.5,
	   "open: a data block past %u bytes is refused, not allocated (%d, %.3f s: %s)",
	   KVMSTATS_MAX_DATA_BYTES, ret, now_s() - t0, s.err);
	kvmstats_close(&s);
	/* The same file as a buffer is refused by the same check. */
	ok(KVMSTATS_MAX_DATA_BYTES <= (1u << 20) && KVMSTATS_MAX_DESC_BYTES <= (4u << 20),
	   "caps: data block %u bytes, descriptor block %u bytes",
	   KVMSTATS_MAX_DATA_BYTES, KVMSTATS_MAX_DESC_BYTES);
	close(fd);
out:
	img_free(&im);
}

/* The check discovery makes of every fd it borrows. */
static void test_fd_kind(void)
{
	int efd = eventfd(0, EFD_CLOEXEC), mfd = memfd_create("kvm-vm-stats", 0);

	ok(efd >= 0 && kvmstats_fd_is(efd, "[eventfd]"),
	   "kvmstats_fd_is: matches the anon inode's name (eventfd)");
	ok(!kvmstats_fd_is(efd, "kvm-vm-stats") && !kvmstats_fd_is(efd, "kvm-vcpu-stats:"),
	   "kvmstats_fd_is: an eventfd is no KVM stats fd");
	ok(mfd >= 0 && !kvmstats_fd_is(mfd, "kvm-vm-stats") && !kvmstats_fd_is(mfd, "kvm-vm"),
	   "kvmstats_fd_is: a memfd named kvm-vm-stats is no KVM stats fd");
	ok(!kvmstats_fd_is(-1, "kvm-vm") && !kvmstats_fd_is(12345, "kvm-vm"),
	   "kvmstats_fd_is: no fd, no match");
	close(efd);
	close(mfd);
}

/*
 * Discovery through the public API on a host with no VMs (or, on a KVM
 * host, whatever runs): no global state, results sorted, freed cleanly.
 */
static void test_discover(void)
{
	struct kvmstats_vm *vms = NULL;
	unsigned int denied = 12345;
	int n, i, sorted = 1;

	n = kvmstats_discover(&vms, 0, &denied);
	for (i = 1; i < n; i++)
		sorted &= vms[i - 1].pid < vms[i].pid;
	ok(n >= 0 && sorted && denied != 12345,
	   "kvmstats_discover: %d VMs, sorted by pid, %u processes not readable", n, denied);
	kvmstats_vms_free(vms, n > 0 ? n : 0);
	n = kvmstats_discover(&vms, getpid(), NULL);
	ok(n == 0, "kvmstats_discover: this process holds no VM (%d), denied may be NULL", n);
	kvmstats_vms_free(vms, 0);
	ok(kvmstats_discover(NULL, 0, NULL) == -EINVAL, "kvmstats_discover: NULL out is EINVAL");
	ok(strstr(KVMSTATS_VM_UNAVAILABLE, KVM_STATSFD_DEV_PATH),
	   "KVMSTATS_VM_UNAVAILABLE names the module's device, " KVM_STATSFD_DEV_PATH);
}

void test_fd(void)
{
	struct img im;

	img_build(&im, "kvm-99/vcpu-3", 48, img_valid, img_valid_n,
		  LAYOUT_UPSTREAM);
	test_open_refresh(&im);
	test_open_errors(&im);
	img_free(&im);
	test_declared_sizes();
	test_fd_kind();
	test_discover();
}
