// SPDX-License-Identifier: GPL-2.0
/*
 * mkstats: write a KVM binary stats file, for watch --file on a host
 * without KVM.
 *
 *   mkstats FILE SPEC...
 *
 * SPEC is one stat:
 *   NAME=V                 cumulative counter
 *   NAME:ns=V              cumulative time in nanoseconds
 *   NAME:inst=V            instant value
 *   NAME:hist=N/I:V,I:V..  linear histogram of N buckets of size 1,
 *                          bucket I holding V (the others 0)
 *
 * The file is rewritten in place, not replaced: a watch that holds it
 * open sees the new values at its next read.  Run again with the same
 * stats in the same order, only the values change, so a reader never
 * sees another layout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME_SIZE	48
#define HDR_SIZE	24
#define DESC_SIZE	(16 + NAME_SIZE)
#define MAX_STATS	64
#define MAX_BUCKETS	256

/* Flag values of the binary stats ABI (include/uapi/linux/kvm.h). */
#define TYPE_CUMULATIVE		0x0
#define TYPE_INSTANT		0x1
#define TYPE_LINEAR_HIST	0x3
#define UNIT_SECONDS		(0x2 << 4)

struct stat_spec {
	char name[NAME_SIZE];
	uint32_t flags;
	int16_t exponent;
	uint16_t size;
	uint32_t bucket_size;
	uint64_t v[MAX_BUCKETS];
};

static void die(const char *msg, const char *arg)
{
	fprintf(stderr, "mkstats: %s '%s'\n", msg, arg);
	exit(2);
}

static uint64_t parse_u64(const char *s, char **end, const char *spec)
{
	uint64_t v;

	errno = 0;
	v = strtoull(s, end, 10);
	if (errno || *end == s)
		die("bad number in", spec);
	return v;
}

/* "N/I:V,I:V": sparse buckets of a histogram. */
static void parse_hist(struct stat_spec *st, const char *s, const char *spec)
{
	char *end;
	uint64_t n, i;

	n = parse_u64(s, &end, spec);
	if (!n || n > MAX_BUCKETS || *end != '/')
		die("bad histogram in", spec);
	st->size = (uint16_t)n;
	st->flags = TYPE_LINEAR_HIST;
	st->bucket_size = 1;
	s = end + 1;
	while (*s) {
		i = parse_u64(s, &end, spec);
		if (i >= n || *end != ':')
			die("bad bucket in", spec);
		st->v[i] = parse_u64(end + 1, &end, spec);
		if (*end && *end != ',')
			die("bad bucket in", spec);
		s = *end ? end + 1 : end;
	}
}

static void parse_spec(struct stat_spec *st, const char *spec)
{
	const char *eq = strchr(spec, '='), *colon = strchr(spec, ':');
	size_t len;
	char *end;

	memset(st, 0, sizeof(*st));
	st->size = 1;
	if (!eq)
		die("no '=' in", spec);
	len = (colon && colon < eq ? colon : eq) - spec;
	if (!len || len >= NAME_SIZE)
		die("bad name in", spec);
	memcpy(st->name, spec, len);
	if (colon && colon < eq && !strncmp(colon, ":hist=", 6)) {
		parse_hist(st, eq + 1, spec);
		return;
	}
	if (colon && colon < eq) {
		if (!strncmp(colon, ":ns=", 4)) {
			st->flags = TYPE_CUMULATIVE | UNIT_SECONDS;
			st->exponent = -9;
		} else if (!strncmp(colon, ":inst=", 6)) {
			st->flags = TYPE_INSTANT;
		} else {
			die("unknown kind in", spec);
		}
	}
	st->v[0] = parse_u64(eq + 1, &end, spec);
	if (*end)
		die("bad number in", spec);
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
}

int main(int argc, char **argv)
{
	static struct stat_spec st[MAX_STATS];
	uint32_t n = argc - 2, i, words = 0, desc_off, data_off;
	unsigned char *img, *d;
	size_t len;
	int fd;

	if (argc < 3 || n > MAX_STATS) {
		fprintf(stderr, "usage: mkstats FILE SPEC... (at most %d)\n",
			MAX_STATS);
		return 2;
	}
	for (i = 0; i < n; i++) {
		parse_spec(&st[i], argv[i + 2]);
		words += st[i].size;
	}
	/* Header, id, descriptors, data: the layout KVM uses. */
	desc_off = HDR_SIZE + NAME_SIZE;
	data_off = desc_off + n * DESC_SIZE;
	len = data_off + words * 8;
	img = calloc(1, len);
	if (!img)
		return 1;
	put32(img + 4, NAME_SIZE);
	put32(img + 8, n);
	put32(img + 12, HDR_SIZE);
	put32(img + 16, desc_off);
	put32(img + 20, data_off);
	strcpy((char *)img + HDR_SIZE, "kvm-vcpu-0");
	for (i = 0, words = 0; i < n; i++) {
		d = img + desc_off + i * DESC_SIZE;
		put32(d, st[i].flags);
		memcpy(d + 4, &st[i].exponent, 2);
		memcpy(d + 6, &st[i].size, 2);
		put32(d + 8, words * 8);
		put32(d + 12, st[i].bucket_size);
		memcpy(d + 16, st[i].name, NAME_SIZE);
		memcpy(img + data_off + words * 8, st[i].v, st[i].size * 8);
		words += st[i].size;
	}
	fd = open(argv[1], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || pwrite(fd, img, len, 0) != (ssize_t)len ||
	    ftruncate(fd, len) || close(fd)) {
		fprintf(stderr, "mkstats: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	free(img);
	return 0;
}
