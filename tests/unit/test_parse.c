// SPDX-License-Identifier: GPL-2.0
/* kvmstats_parse(): a valid image, lookups, units, and every refusal. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"
#include "tap.h"
#include "tests.h"

static int close_to(double a, double b)
{
	return fabs(a - b) <= fabs(b) * 1e-12;
}

static void test_values(const struct kvmstats *s)
{
	unsigned int k, j, bad = 0;

	for (k = 0; k < img_valid_n; k++) {
		const struct kvmstats_desc *d = kvmstats_find(s, img_valid[k].name);

		if (!d || d != &s->descs[k]) {
			bad++;
			continue;
		}
		for (j = 0; j < d->size; j++)
			bad += kvmstats_value(s, d, j) != img_value(k, j);
	}
	ok(!bad, "valid: every stat found by name, every value right (%u bad)", bad);
	ok(kvmstats_value(s, &s->descs[3], 8) == 0 &&
	   kvmstats_value(s, &s->descs[0], 1) == 0,
	   "valid: value index past size returns 0");
	ok(!kvmstats_find(s, "nope") && !kvmstats_find(s, "") &&
	   !kvmstats_find(s, "exit") && !kvmstats_find(s, NULL),
	   "valid: unknown names not found");
}

static void test_fields(const struct kvmstats *s)
{
	const struct kvmstats_desc *d = s->descs;

	ok(d[0].type == KVM_STATS_TYPE_CUMULATIVE &&
	   d[1].type == KVM_STATS_TYPE_INSTANT &&
	   d[2].type == KVM_STATS_TYPE_PEAK &&
	   d[3].type == KVM_STATS_TYPE_LINEAR_HIST &&
	   d[4].type == KVM_STATS_TYPE_LOG_HIST,
	   "valid: all five types decoded");
	ok(d[1].unit == KVM_STATS_UNIT_BYTES && d[1].base == KVM_STATS_BASE_POW2 &&
	   d[1].exponent == 10 && d[4].unit == KVM_STATS_UNIT_SECONDS &&
	   d[4].exponent == -9 && d[6].unit == KVM_STATS_UNIT_BOOLEAN &&
	   d[7].unit == KVM_STATS_UNIT_CYCLES && d[3].bucket_size == 4 &&
	   d[4].size == 32 && d[3].offset == 72,
	   "valid: unit, base, exponent, size, offset, bucket_size decoded");
	ok(s->data_size == 392, "valid: data_size is max(offset + 8*size) (%zu)",
	   s->data_size);
	ok(!strcmp(s->id, "kvm-1234/vcpu-0") && s->num_desc == img_valid_n &&
	   s->fd == -1, "valid: id, num_desc, fd == -1 after parse");
}

static void test_names(void)
{
	ok(!strcmp(kvmstats_type_name(KVM_STATS_TYPE_CUMULATIVE), "cumulative") &&
	   !strcmp(kvmstats_type_name(KVM_STATS_TYPE_INSTANT), "instant") &&
	   !strcmp(kvmstats_type_name(KVM_STATS_TYPE_PEAK), "peak") &&
	   !strcmp(kvmstats_type_name(KVM_STATS_TYPE_LINEAR_HIST), "linear_hist") &&
	   !strcmp(kvmstats_type_name(KVM_STATS_TYPE_LOG_HIST), "log_hist") &&
	   !strcmp(kvmstats_type_name(5), "unknown"),
	   "type names");
	ok(!strcmp(kvmstats_unit_name(KVM_STATS_UNIT_NONE), "none") &&
	   !strcmp(kvmstats_unit_name(KVM_STATS_UNIT_BYTES), "bytes") &&
	   !strcmp(kvmstats_unit_name(KVM_STATS_UNIT_SECONDS), "seconds") &&
	   !strcmp(kvmstats_unit_name(KVM_STATS_UNIT_CYCLES), "cycles") &&
	   !strcmp(kvmstats_unit_name(KVM_STATS_UNIT_BOOLEAN), "boolean") &&
	   !strcmp(kvmstats_unit_name(2), "seconds") &&
	   !strcmp(kvmstats_unit_name(0x50), "unknown") &&
	   !strcmp(kvmstats_unit_name(0x21), "unknown"),
	   "unit names, masked value or index");
	ok(!strcmp(kvmstats_base_name(KVM_STATS_BASE_POW10), "pow10") &&
	   !strcmp(kvmstats_base_name(KVM_STATS_BASE_POW2), "pow2") &&
	   !strcmp(kvmstats_base_name(1), "pow2") &&
	   !strcmp(kvmstats_base_name(0x200), "unknown"), "base names");
}

static int range_is(const struct kvmstats_desc *d, unsigned int i,
		    uint64_t lo, uint64_t hi)
{
	uint64_t l = 1, h = 1;

	return !kvmstats_bucket_range(d, i, &l, &h) && l == lo && h == hi;
}

static void test_ranges(const struct kvmstats *s)
{
	const struct kvmstats_desc *lin = &s->descs[3], *log = &s->descs[4];
	struct kvmstats_desc big = *log;
	uint64_t lo, hi;

	ok(range_is(lin, 0, 0, 4) && range_is(lin, 1, 4, 8) &&
	   range_is(lin, 6, 24, 28) && range_is(lin, 7, 28, UINT64_MAX),
	   "linear buckets [4i, 4i+4), last open");
	ok(range_is(log, 0, 0, 1) && range_is(log, 1, 1, 2) &&
	   range_is(log, 2, 2, 4) && range_is(log, 10, 512, 1024) &&
	   range_is(log, 31, 1u << 30, UINT64_MAX),
	   "log buckets [0,1), [2^(i-1), 2^i), last open");
	big.size = 100;
	ok(range_is(&big, 64, 1ull << 63, UINT64_MAX) &&
	   range_is(&big, 65, UINT64_MAX, UINT64_MAX) &&
	   range_is(&big, 99, UINT64_MAX, UINT64_MAX),
	   "log buckets past 2^64 saturate, no shift overflow");
	ok(kvmstats_bucket_range(lin, 8, &lo, &hi) == -EINVAL &&
	   kvmstats_bucket_range(&s->descs[0], 0, &lo, &hi) == -EINVAL,
	   "bucket range: index past size and non-histogram are -EINVAL");
}

static void test_scale(const struct kvmstats *s)
{
	char buf[32];
	const struct kvmstats_desc *d = s->descs;
	struct kvmstats_desc ms = d[5];

	ok(close_to(kvmstats_scale(&d[5]), 1e-9) &&
	   close_to(kvmstats_scale(&d[1]), 1024) &&
	   kvmstats_scale(&d[0]) == 1.0 && kvmstats_scale(&d[6]) == 1.0,
	   "scale: ns 1e-9, KiB 1024, plain 1, boolean 1");
	ms.exponent = -3;
	ok(close_to(kvmstats_scale(&ms), 1e-3), "scale: exponent -3 pow10");
	kvmstats_format(&d[5], 12300000, buf, sizeof(buf));
	ok(!strcmp(buf, "12.3 ms"), "format: 12300000 ns -> '%s'", buf);
	kvmstats_format(&d[5], 0, buf, sizeof(buf));
	ok(!strcmp(buf, "0 s"), "format: 0 ns -> '%s'", buf);
	kvmstats_format(&d[5], 450, buf, sizeof(buf));
	ok(!strcmp(buf, "450 ns"), "format: 450 ns -> '%s'", buf);
	kvmstats_format(&d[1], 1572864, buf, sizeof(buf));
	ok(!strcmp(buf, "1.5 GiB"), "format: 1572864 KiB -> '%s'", buf);
	kvmstats_format(&d[0], 18446744073709551615ull, buf, sizeof(buf));
	ok(!strcmp(buf, "18446744073709551615"), "format: plain counter exact");
	kvmstats_format(&d[6], 7, buf, sizeof(buf));
	ok(!strcmp(buf, "true"), "format: boolean -> '%s'", buf);
	kvmstats_format(&d[7], 2500000000ull, buf, sizeof(buf));
	ok(!strcmp(buf, "2.5 Gcycles"), "format: cycles -> '%s'", buf);
	kvmstats_format(&d[5], 3000000000000ull, buf, sizeof(buf));
	ok(!strcmp(buf, "3000 s"), "format: large seconds stay plain -> '%s'", buf);
}

static void test_valid(void)
{
	struct kvmstats s = { 0 };
	struct img im;
	int ret;

	img_build(&im, "kvm-1234/vcpu-0", 48, img_valid, img_valid_n,
		  LAYOUT_UPSTREAM);
	ret = kvmstats_parse(&s, im.buf, im.len);
	if (!ok(ret == 0, "valid image with all five types parses (%d %s)",
		ret, s.err))
		return;
	test_fields(&s);
	test_values(&s);
	test_ranges(&s);
	test_scale(&s);
	kvmstats_close(&s);
	kvmstats_close(&s);
	ok(s.data == NULL && s.descs == NULL, "close twice is harmless");
	img_free(&im);
	test_names();
}

/* Images that are unusual but valid. */
static void test_accept(void)
{
	struct kvmstats s = { 0 };
	struct img im;
	int ret;

	img_build(&im, "kvm-1", 48, img_valid, img_valid_n, LAYOUT_REVERSED);
	ret = kvmstats_parse(&s, im.buf, im.len);
	ok(!ret && kvmstats_value(&s, kvmstats_find(&s, "exits"), 0) == 1000 &&
	   kvmstats_value(&s, kvmstats_find(&s, "halt_wait_hist"), 31) == 5031,
	   "blocks in reverse order with gaps parse (%s)", s.err);
	kvmstats_close(&s);
	img_free(&im);

	img_build(&im, "kvm-1", 48, img_valid, 0, LAYOUT_UPSTREAM);
	ret = kvmstats_parse(&s, im.buf, im.len);
	ok(!ret && s.num_desc == 0 && s.data_size == 0 && !kvmstats_find(&s, "x"),
	   "num_desc 0 parses, data_size 0 (%s)", s.err);
	kvmstats_close(&s);
	img_free(&im);

	img_build(&im, "kvm-1", 8, img_valid + 2, 1, LAYOUT_UPSTREAM);
	ret = kvmstats_parse(&s, im.buf, im.len);
	ok(!ret && !strcmp(s.descs[0].name, "max_rma"),
	   "small name_size 8: 7-char name (%s)", s.err);
	kvmstats_close(&s);
	img_free(&im);

	img_build(&im, "kvm-1", 48, img_valid, img_valid_n, LAYOUT_UPSTREAM);
	img_set_hdr(&im, H_FLAGS, 1);
	img_set_desc32(&im, 0, D_FLAGS, img_valid[0].flags | (1u << 20));
	img_set_desc16(&im, 0, D_EXP, 3);
	ret = kvmstats_parse(&s, im.buf, im.len);
	ok(!ret && s.hdr.flags == 1 && s.descs[0].flags == (1u << 20) &&
	   s.descs[0].type == KVM_STATS_TYPE_CUMULATIVE,
	   "header flags, unknown high desc flag bits, exponent 3 accepted (%s)",
	   s.err);
	kvmstats_close(&s);
	img_free(&im);
}

enum mut {
	M_LEN,		/* truncate to v bytes */
	M_SHORTEN,	/* drop v bytes from the end */
	M_HDR,		/* header field idx = v */
	M_HDR_ADD,	/* header field idx += v */
	M_D32,		/* descriptor idx, u32 at off = v */
	M_D16,		/* descriptor idx, u16 at off = v */
	M_DFLAGS,	/* descriptor idx flags = v */
	M_NAMEFILL,	/* descriptor idx name all 'A', no NUL */
	M_IDFILL,	/* id all 'x', no NUL */
	M_DUP,		/* descriptor idx takes the name of descriptor 0 */
	M_BIGHDR,	/* num_desc 65536, name_size 4096 */
};

#define T(x)	KVM_STATS_TYPE_##x
#define U(x)	KVM_STATS_UNIT_##x
#define B(x)	KVM_STATS_BASE_##x

static const struct bad_case {
	const char *what;
	enum mut m;
	unsigned int idx, off;
	uint32_t v;
	const char *msg;	/* expected in s->err */
} bad_cases[] = {
	{ "empty file", M_LEN, 0, 0, 0, "header [0, 24) lies past the end" },
	{ "file shorter than header", M_LEN, 0, 0, 23, "header" },
	{ "name_size 0", M_HDR, H_NAME_SIZE, 0, 0, "name_size 0" },
	{ "name_size 5000", M_HDR, H_NAME_SIZE, 0, 5000, "name_size 5000" },
	{ "name_size 0xffffffff", M_HDR, H_NAME_SIZE, 0, 0xffffffff, "name_size" },
	{ "id offset unaligned", M_HDR, H_ID_OFF, 0, 25, "not 8-aligned" },
	{ "desc offset unaligned", M_HDR_ADD, H_DESC_OFF, 0, 4, "not 8-aligned" },
	{ "data offset unaligned", M_HDR_ADD, H_DATA_OFF, 0, 4, "not 8-aligned" },
	{ "id not NUL-terminated", M_IDFILL, 0, 0, 0, "id not NUL-terminated" },
	{ "id overlaps header", M_HDR, H_ID_OFF, 0, 16, "id [16, 64) overlaps header" },
	{ "descriptors overlap id", M_HDR, H_DESC_OFF, 0, 48, "descriptor block [48," },
	{ "data overlaps descriptors", M_HDR_ADD, H_DATA_OFF, 0, (uint32_t)-64, "data block" },
	{ "data overlaps header", M_HDR, H_DATA_OFF, 0, 0, "data block [0, 8) overlaps header" },
	{ "id past end of file", M_HDR, H_ID_OFF, 0, 0x7ffffff8, "id [" },
	{ "descriptors past end of file", M_HDR, H_DESC_OFF, 0, 0x7ffffff8, "descriptor block [" },
	{ "num_desc 70000", M_HDR, H_NUM_DESC, 0, 70000, "num_desc 70000" },
	{ "num_desc 0xffffffff", M_HDR, H_NUM_DESC, 0, 0xffffffff, "num_desc" },
	{ "descriptor block absurdly large", M_BIGHDR, 0, 0, 0, "too large" },
	{ "num_desc one too many", M_HDR_ADD, H_NUM_DESC, 0, 1, "overlaps" },
	{ "name not NUL-terminated", M_NAMEFILL, 2, 0, 0, "descriptor 2: name not NUL-terminated" },
	{ "empty name", M_D32, 1, D_NAME, 0, "descriptor 1: empty name" },
	{ "type 5", M_DFLAGS, 0, 0, 5, "unknown type 5" },
	{ "type 15", M_DFLAGS, 0, 0, 15, "unknown type" },
	{ "unit 5", M_DFLAGS, 0, 0, 5 << 4, "unknown unit 5" },
	{ "base 2", M_DFLAGS, 0, 0, 2 << 8, "unknown base 2" },
	{ "size 0", M_D16, 0, D_SIZE, 0, "size 0" },
	{ "histogram size 0", M_D16, 4, D_SIZE, 0, "size 0" },
	{ "cumulative with size 2", M_D16, 0, D_SIZE, 2, "must be 1" },
	{ "instant with size 2", M_D16, 1, D_SIZE, 2, "must be 1" },
	{ "peak with size 3", M_D16, 2, D_SIZE, 3, "must be 1" },
	{ "bucket_size on cumulative", M_D32, 0, D_BUCKET, 1, "bucket_size 1 invalid" },
	{ "bucket_size 0 on linear_hist", M_D32, 3, D_BUCKET, 0, "bucket_size 0 invalid" },
	{ "bucket_size on log_hist", M_D32, 4, D_BUCKET, 2, "bucket_size 2 invalid" },
	{ "negative exponent, unit none", M_D16, 0, D_EXP, 0xffff, "exponent -1 invalid for unit none" },
	{ "negative exponent, unit bytes", M_D16, 1, D_EXP, 0xfff6, "exponent -10 invalid for unit bytes" },
	{ "negative exponent, unit cycles", M_D16, 7, D_EXP, 0xffff, "unit cycles" },
	{ "positive exponent, unit seconds", M_D16, 5, D_EXP, 1, "exponent 1 invalid for unit seconds" },
	{ "non-zero exponent, unit boolean", M_D16, 6, D_EXP, 1, "unit boolean" },
	{ "stat offset unaligned", M_D32, 0, D_OFFSET, 4, "data offset 4 not 8-aligned" },
	{ "stat offset far past end", M_D32, 0, D_OFFSET, 0xfffffff8, "stat exits: values" },
	{ "histogram past end", M_D16, 4, D_SIZE, 0xffff, "stat halt_wait_hist: values" },
	{ "file truncated by 8 bytes", M_SHORTEN, 0, 0, 8, "past the end" },
	{ "file truncated by 1 byte", M_SHORTEN, 0, 0, 1, "past the end" },
	{ "duplicate names", M_DUP, 5, 0, 0, "duplicate stat name exits" },
};

static void mutate(struct img *im, const struct bad_case *c)
{
	uint32_t v;

	switch (c->m) {
	case M_LEN:
		im->len = c->v;
		break;
	case M_SHORTEN:
		im->len -= c->v;
		break;
	case M_HDR:
		img_set_hdr(im, c->idx, c->v);
		break;
	case M_HDR_ADD:
		memcpy(&v, im->buf + 4 * c->idx, 4);
		img_set_hdr(im, c->idx, v + c->v);
		break;
	case M_D32:
		img_set_desc32(im, c->idx, c->off, c->v);
		break;
	case M_D16:
		img_set_desc16(im, c->idx, c->off, (uint16_t)c->v);
		break;
	case M_DFLAGS:
		img_set_desc32(im, c->idx, D_FLAGS, c->v);
		break;
	case M_NAMEFILL:
		memset(img_desc(im, c->idx) + D_NAME, 'A', im->name_size);
		break;
	case M_IDFILL:
		memset(im->buf + im->id_off, 'x', im->name_size);
		break;
	case M_DUP:
		memcpy(img_desc(im, c->idx) + D_NAME, img_desc(im, 0) + D_NAME,
		       im->name_size);
		break;
	case M_BIGHDR:
		img_set_hdr(im, H_NUM_DESC, 65536);
		img_set_hdr(im, H_NAME_SIZE, 4096);
		break;
	}
}

static void test_bad(void)
{
	unsigned int i;
	struct kvmstats s = { 0 };
	struct img im;
	unsigned char *copy;
	int ret;

	for (i = 0; i < sizeof(bad_cases) / sizeof(bad_cases[0]); i++) {
		const struct bad_case *c = &bad_cases[i];

		img_build(&im, "kvm-1234", 48, img_valid, img_valid_n,
			  LAYOUT_UPSTREAM);
		mutate(&im, c);
		/* Exact-size copy: ASan flags any read past im.len. */
		copy = malloc(im.len ? im.len : 1);
		memcpy(copy, im.buf, im.len);
		ret = kvmstats_parse(&s, copy, im.len);
		ok(ret == -EBADMSG && strstr(s.err, c->msg) && s.fd == -1 &&
		   !s.descs && !s.data && !s.id,
		   "refused: %s (%d: %s)", c->what, ret, s.err);
		kvmstats_close(&s);
		free(copy);
		img_free(&im);
	}
	ret = kvmstats_parse(&s, NULL, 10);
	ok(ret == -EINVAL, "NULL buffer is -EINVAL");
	ok(kvmstats_parse(NULL, "", 0) == -EINVAL, "NULL struct is -EINVAL");
}

/* The opaque handle through the public API only, as a program sees it. */
static void test_handle(void)
{
	const struct kvmstats_desc *d;
	struct kvmstats *s = kvmstats_new();
	unsigned int i, same = 1;
	struct img im;
	int ret;

	if (!ok(s != NULL, "kvmstats_new: a handle"))
		return;
	ok(kvmstats_num_desc(s) == 0 && !kvmstats_id(s) && kvmstats_fd(s) == -1 &&
	   !kvmstats_data(s) && kvmstats_data_size(s) == 0 &&
	   !kvmstats_desc_at(s, 0) && !strcmp(kvmstats_errmsg(s), ""),
	   "a new handle is empty: no stats, no id, fd -1, errmsg \"\"");
	img_build(&im, "kvm-1234/vcpu-0", 48, img_valid, img_valid_n,
		  LAYOUT_UPSTREAM);
	ret = kvmstats_parse(s, im.buf, im.len);
	ok(ret == 0 && kvmstats_num_desc(s) == img_valid_n &&
	   !strcmp(kvmstats_id(s), "kvm-1234/vcpu-0") && kvmstats_fd(s) == -1,
	   "accessors: %u stats, id '%s', no fd (parsed from memory)",
	   kvmstats_num_desc(s), kvmstats_id(s) ? kvmstats_id(s) : "(null)");
	for (i = 0; i < kvmstats_num_desc(s); i++) {
		d = kvmstats_desc_at(s, i);
		same &= d && kvmstats_find(s, d->name) == d &&
			kvmstats_value(s, d, 0) == kvmstats_data(s)[d->offset / 8];
	}
	ok(same && !kvmstats_desc_at(s, kvmstats_num_desc(s)) && kvmstats_data_size(s) > 0,
	   "kvmstats_desc_at(i) is what kvmstats_find() finds, values match kvmstats_data(); NULL past the end");
	img_set_hdr(&im, H_NUM_DESC, 0xffffffffu);	/* absurd */
	ret = kvmstats_parse(s, im.buf, im.len);
	ok(ret < 0 && kvmstats_errmsg(s)[0] && kvmstats_num_desc(s) == 0 && !kvmstats_id(s),
	   "a failed parse leaves the handle empty, kvmstats_errmsg says why (%s)",
	   kvmstats_errmsg(s));
	kvmstats_free(s);
	kvmstats_free(NULL);
	ok(1, "kvmstats_free closes and frees (ASan checks), NULL is a no-op");
	ok(!strcmp(kvmstats_errmsg(NULL), "no handle") && kvmstats_num_desc(NULL) == 0 &&
	   !kvmstats_desc_at(NULL, 0) && kvmstats_fd(NULL) == -1,
	   "accessors take NULL");
	img_free(&im);
}

void test_parse(void)
{
	test_handle();
	test_valid();
	test_accept();
	test_bad();
}
