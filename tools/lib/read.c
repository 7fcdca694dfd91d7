// SPDX-License-Identifier: GPL-2.0
/*
 * The fd side of libkvmstats: loading through pread() and refreshing the
 * data block.  pread() never moves the file offset, which matters when the
 * fd is shared with the VMM (a duplicate taken with pidfd_getfd()).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "internal.h"

static ssize_t pread_once(int fd, void *buf, size_t len, uint64_t off)
{
	ssize_t n;

	do {
		n = pread(fd, buf, len, (off_t)off);
	} while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/*
 * One pread per block.  A stats fd hands out whole blocks in one call; a
 * short read means the file ends early, i.e. the header lied.
 */
static int fd_read(struct kvmstats *s, struct kvmstats_src *src, void *buf,
		   size_t len, uint64_t off, const char *what)
{
	unsigned char probe;
	ssize_t n;

	/*
	 * An empty block must still lie inside the file, as the buffer path
	 * checks: the file must reach its offset.
	 */
	if (!len && off) {
		n = pread_once(src->fd, &probe, 1, off - 1);
		if (n < 0)
			return kvmstats__err(s, (int)n, "pread of %s at %llu: %s",
					     what, (unsigned long long)off,
					     strerror((int)-n));
		if (n != 1)
			return kvmstats__err(s, -EBADMSG,
					     "%s at %llu lies past the end of the file",
					     what, (unsigned long long)off);
		return 0;
	}
	n = pread_once(src->fd, buf, len, off);
	if (n < 0)
		return kvmstats__err(s, (int)n, "pread of %s at %llu: %s",
				     what, (unsigned long long)off,
				     strerror((int)-n));
	if ((size_t)n != len)
		return kvmstats__err(s, -EBADMSG,
				     "%s truncated: got %zd of %zu bytes at offset %llu",
				     what, n, len, (unsigned long long)off);
	return 0;
}

int kvmstats_open(struct kvmstats *s, int stats_fd)
{
	struct kvmstats_src src = {
		.read = fd_read,
		.fd = stats_fd,
	};
	int ret;

	if (!s)
		return -EINVAL;
	kvmstats__reset(s);
	if (stats_fd < 0)
		return kvmstats__err(s, -EBADF, "invalid fd %d", stats_fd);
	ret = kvmstats__load(s, &src);
	if (ret)
		return ret;
	s->fd = stats_fd;
	s->_own_fd = 1;
	return 0;
}

int kvmstats_open_from(struct kvmstats *s, int vm_or_vcpu_fd)
{
	int fd, ret;

	if (!s)
		return -EINVAL;
	kvmstats__reset(s);
	fd = ioctl(vm_or_vcpu_fd, KVM_GET_STATS_FD, NULL);
	if (fd < 0) {
		ret = -errno;
		return kvmstats__err(s, ret, "KVM_GET_STATS_FD: %s",
				     strerror(-ret));
	}
	ret = kvmstats_open(s, fd);
	if (ret)
		close(fd);	/* ours, unlike the fd given to kvmstats_open() */
	return ret;
}

int kvmstats_refresh(struct kvmstats *s)
{
	ssize_t n;

	if (!s)
		return -EINVAL;
	if (s->fd < 0 || !s->data)
		return kvmstats__err(s, -EBADF, "no stats fd to refresh from");
	n = pread_once(s->fd, s->data, s->data_size, s->hdr.data_offset);
	if (n < 0)
		return kvmstats__err(s, (int)n, "pread of data block: %s",
				     strerror((int)-n));
	if ((size_t)n != s->data_size)
		return kvmstats__err(s, -EIO,
				     "data block short read: %zd of %zu bytes",
				     n, s->data_size);
	return 0;
}
