/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Private to libkvmstats (and its in-tree read bench): not installed. */
#ifndef KVMSTATS_INTERNAL_H
#define KVMSTATS_INTERNAL_H

#include <stdarg.h>
#include "kvmstats.h"

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
int kvmstats__err(struct kvmstats *s, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
