// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The fd side of libkvmstats: loading through pread() and refreshing the
 * data block, from a read-only mapping where the file offers one.  pread()
 * never moves the file offset, which matters when the fd is shared with
 * the VMM (a duplicate taken with pidfd_getfd()).
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

/* The value of "@key:\t<n>" in @text, or -1. */
static long long fdinfo_value(const char *text, const char *key)
{
	size_t len = strlen(key);
	const char *p = text;
	char *end;
	long long v;

	while (p && *p) {
		if (!strncmp(p, key, len) && p[len] == ':') {
			v = strtoll(p + len + 1, &end, 10);
			return end != p + len + 1 && v >= 0 ? v : -1;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

/*
 * Map the part of the data block that the file offers to map, as its
 * fdinfo describes it: kvm_stats_mmap_size bytes of the data block from
 * kvm_stats_mmap_offset on, found kvm_stats_mmap_page_offset bytes into
 * the mapping (0 when the line is missing: modules before it put the
 * block at the start).  No mapping (and no error) when it offers none,
 * the description does not fit the data block, or mmap() refuses.
 */
static void map_data(struct kvmstats *s)
{
	char path[64], text[1024];
	long long off, size, page_off;
	long page = sysconf(_SC_PAGESIZE);
	size_t len;
	ssize_t n;
	void *m;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", s->fd);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return;
	text[n] = '\0';
	off = fdinfo_value(text, "kvm_stats_mmap_offset");
	size = fdinfo_value(text, "kvm_stats_mmap_size");
	page_off = fdinfo_value(text, "kvm_stats_mmap_page_offset");
	if (page_off < 0)
		page_off = 0;
	if (off < 0 || size <= 0 || off % 8 || size % 8 || page_off % 8 ||
	    page <= 0 || (uint64_t)off > s->data_size ||
	    (uint64_t)size > s->data_size - (uint64_t)off ||
	    page_off > (1LL << 40))
		return;
	len = ((size_t)(page_off + size) + page - 1) / page * page;
	m = mmap(NULL, len, PROT_READ, MAP_SHARED, s->fd, 0);
	if (m == MAP_FAILED)
		return;
	s->_map = (const volatile uint64_t *)((char *)m + page_off);
	s->_map_len = len;
	s->_map_page_off = (size_t)page_off;
	s->_map_off = (uint64_t)off;
	s->_map_size = (size_t)size;
}

size_t kvmstats_mapped(const struct kvmstats *s, uint64_t *data_off)
{
	if (!s || !s->_map)
		return 0;
	if (data_off)
		*data_off = s->_map_off;
	return s->_map_size;
}

void kvmstats__unmap(struct kvmstats *s)
{
	if (s->_map)
		munmap((char *)s->_map - s->_map_page_off, s->_map_len);
	s->_map = NULL;
	s->_map_len = 0;
	s->_map_page_off = 0;
	s->_map_off = 0;
	s->_map_size = 0;
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
	kvmstats_close(s);	/* what it held before, if anything */
	kvmstats__reset(s);
	if (stats_fd < 0)
		return kvmstats__err(s, -EBADF, "invalid fd %d", stats_fd);
	ret = kvmstats__load(s, &src);
	if (ret)
		return ret;
	s->fd = stats_fd;
	s->_own_fd = 1;
	/* Mapped at the first refresh: a file read once is not mapped. */
	return 0;
}

int kvmstats_open_from(struct kvmstats *s, int vm_or_vcpu_fd)
{
	int fd, ret;

	if (!s)
		return -EINVAL;
	kvmstats_close(s);
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

/* pread [@off, @off + @len) of the data block into place. */
static int refresh_range(struct kvmstats *s, uint64_t off, size_t len)
{
	ssize_t n;

	if (!len)
		return 0;
	n = pread_once(s->fd, (unsigned char *)s->data + off, len,
		       s->hdr.data_offset + off);
	if (n < 0)
		return kvmstats__err(s, (int)n, "pread of data block: %s",
				     strerror((int)-n));
	if ((size_t)n != len)
		return kvmstats__err(s, -EIO,
				     "data block short read: %zd of %zu bytes",
				     n, len);
	return 0;
}

void kvmstats__copy_mapped(uint64_t *restrict dst,
			   const volatile uint64_t *restrict src, size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		dst[i] = src[i];
		dst[i + 1] = src[i + 1];
		dst[i + 2] = src[i + 2];
		dst[i + 3] = src[i + 3];
		dst[i + 4] = src[i + 4];
		dst[i + 5] = src[i + 5];
		dst[i + 6] = src[i + 6];
		dst[i + 7] = src[i + 7];
	}
	for (; i < n; i++)
		dst[i] = src[i];
}

int kvmstats_refresh(struct kvmstats *s)
{
	size_t end;
	int ret;

	if (!s)
		return -EINVAL;
	if (s->fd < 0 || !s->data)
		return kvmstats__err(s, -EBADF, "no stats fd to refresh from");
	/*
	 * A handle refreshed is polled: map what the file offers now.  Not
	 * at open: the module keeps a VM's counters in pages only once one
	 * of its vCPU files is mapped, and a reader that reads once (like
	 * kvm-statsfd show) should not make it do so.
	 */
	if (!s->_map_tried) {
		s->_map_tried = 1;
		map_data(s);
	}
	if (!s->_map)
		return refresh_range(s, 0, s->data_size);
	/* The mapped part with no system call, each u64 loaded whole. */
	ret = refresh_range(s, 0, s->_map_off);
	if (ret)
		return ret;
	kvmstats__copy_mapped(s->data + s->_map_off / 8, s->_map, s->_map_size / 8);
	end = s->_map_off + s->_map_size;
	return refresh_range(s, end, s->data_size - end);
}
