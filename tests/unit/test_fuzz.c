// SPDX-License-Identifier: GPL-2.0
/*
 * Deterministic mutation fuzzing of kvmstats_parse().  Each mutated image
 * lives in an exact-size heap buffer so the sanitizers (or valgrind) catch
 * any read past its end; accepted images must also satisfy the invariants
 * the API promises.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "image.h"
#include "tap.h"
#include "tests.h"

#define FUZZ_ITERS	200000
#define FUZZ_SEED	0x6b766d7374617473ull	/* "kvmstats" */

static uint64_t rng_state = FUZZ_SEED;

/* xorshift64*: tiny, deterministic, good enough for mutations. */
static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint32_t interesting32(size_t len)
{
	static const uint32_t v[] = {
		0, 1, 7, 8, 16, 24, 48, 64, 4096, 4097, 65536, 65537,
		0x7ffffff8, 0x80000000, 0xfffffff8, 0xffffffff,
	};
	switch (rnd() % 4) {
	case 0:
		return (uint32_t)len + (uint32_t)(rnd() % 17) - 8;
	case 1:
		return (uint32_t)rnd();
	default:
		return v[rnd() % (sizeof(v) / sizeof(v[0]))];
	}
}

static void mutate_once(unsigned char *b, size_t *len, size_t cap)
{
	size_t off;
	uint32_t v32;
	uint16_t v16;

	if (!*len)
		return;
	off = rnd() % *len;
	switch (rnd() % 7) {
	case 0:
		b[off] = (unsigned char)rnd();
		break;
	case 1:
		b[off] ^= 1u << (rnd() % 8);
		break;
	case 2:	/* a structural field: header and descriptors are u32s */
	case 3:
		off &= ~(size_t)3;
		if (off + 4 <= *len) {
			v32 = interesting32(*len);
			memcpy(b + off, &v32, 4);
		}
		break;
	case 4:
		off &= ~(size_t)1;
		if (off + 2 <= *len) {
			v16 = (uint16_t[]){ 0, 1, 2, 32, 0x8000, 0xffff, 0xfff7 }[rnd() % 7];
			memcpy(b + off, &v16, 2);
		}
		break;
	case 5:
		*len = rnd() % (*len + 1);
		break;
	case 6:
		*len += rnd() % (cap - *len + 1);
		break;
	}
}

/* Everything the API promises about an accepted image. */
static unsigned int check_invariants(const struct kvmstats *s, size_t len)
{
	unsigned int i, j, bad = 0;
	uint64_t lo, hi, sum = 0;
	char buf[64];

	bad += s->hdr.data_offset + (uint64_t)s->data_size > len;
	bad += !s->id || strlen(s->id) >= s->hdr.name_size;
	for (i = 0; i < s->num_desc; i++) {
		const struct kvmstats_desc *d = &s->descs[i];

		bad += d->offset + (uint64_t)d->size * 8 > s->data_size;
		bad += kvmstats_find(s, d->name) != d;
		bad += strlen(d->name) >= s->hdr.name_size;
		for (j = 0; j < d->size; j++)
			sum += kvmstats_value(s, d, j);
		for (j = 0; kvmstats_is_hist(d) && j < d->size && j < 80; j++)
			bad += kvmstats_bucket_range(d, j, &lo, &hi) != 0 || lo > hi;
		kvmstats_format(d, sum, buf, sizeof(buf));
	}
	return bad;
}

/*
 * The fd path (pread through kvmstats_open(), as from a stats fd) over
 * the same bytes must judge them as the buffer path did and read the
 * same values: one memfd, rewritten and truncated to each image.
 */
static unsigned int fd_runs;

static unsigned int fuzz_fd(int mfd, const unsigned char *img, size_t len,
			    const struct kvmstats *b, int b_ret)
{
	struct kvmstats f = { 0 };
	unsigned int bad = 0;
	int ret;

	if (mfd < 0 || ftruncate(mfd, 0) ||
	    pwrite(mfd, img, len, 0) != (ssize_t)len)
		return 1;
	fd_runs++;
	ret = kvmstats_open(&f, mfd);
	if (!ret != !b_ret) {
		bad++;
		tap_diag("fd path %s what the buffer path %s: %s / %s",
			 ret ? "refused" : "accepted", b_ret ? "refused" : "accepted",
			 f.err, b->err);
	} else if (!ret) {
		bad += f.num_desc != b->num_desc || f.data_size != b->data_size ||
		       memcmp(f.data, b->data, b->data_size);
		bad += check_invariants(&f, len);
		bad += kvmstats_refresh(&f) != 0;
	} else {
		bad += f.descs || f.data || f.err[0] == '\0' || f.fd != -1;
	}
	/* The fd is the test's: keep it open across kvmstats_close(). */
	f._own_fd = 0;
	kvmstats_close(&f);
	return bad;
}

static void fuzz_base(struct img *base, unsigned int iters,
		      unsigned int *accepted, unsigned int *refused,
		      unsigned int *violations)
{
	int mfd = memfd_create("kvmstats-fuzz", MFD_CLOEXEC), b_ret;
	size_t cap = base->len + 64, len;
	unsigned char *work = malloc(cap), *exact;
	struct kvmstats s = { 0 };
	unsigned int it, m, n;

	for (it = 0; it < iters; it++) {
		memset(work, 0, cap);
		memcpy(work, base->buf, base->len);
		len = base->len;
		n = 1 + rnd() % 4;
		for (m = 0; m < n; m++)
			mutate_once(work, &len, cap);
		exact = malloc(len ? len : 1);
		memcpy(exact, work, len);
		b_ret = kvmstats_parse(&s, exact, len);
		if (!b_ret) {
			(*accepted)++;
			*violations += check_invariants(&s, len);
		} else {
			(*refused)++;
			*violations += s.descs || s.data || s.err[0] == '\0';
		}
		/* Every 8th image through an fd too (a syscall or three each). */
		if (!(it % 8))
			*violations += fuzz_fd(mfd, exact, len, &s, b_ret);
		kvmstats_close(&s);
		free(exact);
	}
	if (mfd >= 0)
		close(mfd);
	free(work);
}

void test_fuzz(void)
{
	unsigned int acc = 0, ref = 0, viol = 0;
	unsigned int iters = FUZZ_ITERS;
	const char *env = getenv("KVMSTATS_FUZZ_ITERS");
	struct img a, b, c;

	if (env)
		iters = (unsigned int)strtoul(env, NULL, 0);
	/* Three bases: upstream layout, reversed, tiny names (dense). */
	img_build(&a, "kvm-1/vcpu-0", 48, img_valid, img_valid_n, LAYOUT_UPSTREAM);
	img_build(&b, "kvm-1", 48, img_valid, img_valid_n, LAYOUT_REVERSED);
	img_build(&c, "kvm", 16, img_valid, img_valid_n, LAYOUT_UPSTREAM);
	fuzz_base(&a, iters / 2, &acc, &ref, &viol);
	fuzz_base(&b, iters / 4, &acc, &ref, &viol);
	fuzz_base(&c, iters - iters / 2 - iters / 4, &acc, &ref, &viol);
	tap_diag("fuzz: %u iterations, seed %#llx: %u accepted, %u refused",
		 iters, (unsigned long long)FUZZ_SEED, acc, ref);
	ok(!viol && acc && ref,
	   "fuzz: %u mutated images, no crash, %u invariant violations", iters, viol);
	ok(fd_runs >= iters / 8,
	   "fuzz: %u of them also through an fd, judged and read as the buffer was",
	   fd_runs);
	img_free(&a);
	img_free(&b);
	img_free(&c);
}
