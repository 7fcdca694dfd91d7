/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Private to libkvmstats (and its in-tree tests and read bench): not
 * installed, and its kvmstats__* functions are not exported by
 * libkvmstats.so (libkvmstats.map).
 */
#ifndef KVMSTATS_INTERNAL_H
#define KVMSTATS_INTERNAL_H

#include <stdarg.h>
#include "kvmstats.h"

/*
 * The handle.  In-tree tests include this header to look at what the
 * parser made of a file, and may keep a handle on their stack, zeroed
 * ("= { 0 }": an open closes what the handle held first); programs use
 * kvmstats_new().
 */
struct kvmstats {
	int fd;				/* stats fd, -1 after kvmstats_parse() */
	struct kvm_stats_header hdr;
	char *id;
	struct kvmstats_desc *descs;	/* in file order */
	unsigned int num_desc;
	size_t data_size;		/* bytes */
	uint64_t *data;			/* data_size bytes of values */
	char err[160];
	int _own_fd;			/* kvmstats_close() closes fd */
	char *_names;			/* storage behind descs[].name */
	unsigned int *_by_name;		/* desc indexes sorted by name */
	const volatile uint64_t *_map;	/* mapped part of the data block */
	size_t _map_len;		/* bytes mapped (whole pages) */
	size_t _map_page_off;		/* where in the mapping _map starts */
	uint64_t _map_off;		/* where in the data block it lies */
	size_t _map_size;		/* bytes of the data block it serves */
	int _map_tried;			/* the first refresh tried to map */
};

/*
 * Where the bytes come from.  The validator only ever asks for whole
 * blocks, so a buffer and an fd can share every check.
 */
struct kvmstats_src {
	/* Fill buf with exactly len bytes at off, or return -errno. */
	int (*read)(struct kvmstats *s, struct kvmstats_src *src,
		    void *buf, size_t len, uint64_t off, const char *what);
	const unsigned char *buf;
	size_t buf_len;
	int fd;
	int len_known;		/* buf_len is the total file length */
};

int kvmstats__load(struct kvmstats *s, struct kvmstats_src *src);
void kvmstats__reset(struct kvmstats *s);
/* Undo the mapping kvmstats_open() may have made (read.c). */
void kvmstats__unmap(struct kvmstats *s);
/*
 * @n u64s out of a mapping, each loaded whole, eight a round (read.c; the
 * read bench times it too).
 */
void kvmstats__copy_mapped(uint64_t *restrict dst,
			   const volatile uint64_t *restrict src, size_t n);
/*
 * Guest name from a NUL-separated QEMU command line: "-name foo",
 * "-name guest=foo,debug-threads=on" (",," is a literal comma).  A
 * malloc()ed string or NULL (discover.c).
 */
char *kvmstats__guest_name(const char *cmdline, size_t len);
int kvmstats__err(struct kvmstats *s, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
