// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "image.h"

#define T(x)	KVM_STATS_TYPE_##x
#define U(x)	KVM_STATS_UNIT_##x
#define B(x)	KVM_STATS_BASE_##x

/*
 * All five types and all units.  Data offsets deliberately do not follow
 * descriptor order, and leave a gap at [40, 64).
 */
const struct img_stat img_valid[] = {
	{ "exits",           T(CUMULATIVE) | U(NONE),    0,  1,  64, 0 },
	{ "mem_kib",         T(INSTANT) | U(BYTES) | B(POW2), 10, 1, 0, 0 },
	{ "max_rmap",        T(PEAK) | U(NONE),          0,  1,   8, 0 },
	{ "exit_reason_svm", T(LINEAR_HIST) | U(NONE),   0,  8,  72, 4 },
	{ "halt_wait_hist",  T(LOG_HIST) | U(SECONDS),  -9, 32, 136, 0 },
	{ "halt_wait_ns",    T(CUMULATIVE) | U(SECONDS), -9, 1,  16, 0 },
	{ "blocking",        T(INSTANT) | U(BOOLEAN),    0,  1,  24, 0 },
	{ "cycles",          T(CUMULATIVE) | U(CYCLES),  0,  1,  32, 0 },
};
const unsigned int img_valid_n = sizeof(img_valid) / sizeof(img_valid[0]);

#define ALIGN8(x)	(((x) + 7u) & ~7u)

uint64_t img_value(unsigned int k, unsigned int j)
{
	return (uint64_t)(k + 1) * 1000 + j;
}

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static void put16(unsigned char *p, uint16_t v) { memcpy(p, &v, 2); }

static void layout(struct img *im, uint32_t desc_len, enum img_layout l)
{
	if (l == LAYOUT_UPSTREAM) {
		im->id_off = 24;
		im->desc_off = ALIGN8(24 + im->name_size);
		im->data_off = ALIGN8(im->desc_off + desc_len);
		im->len = im->data_off + im->data_size;
	} else {
		im->data_off = 64;
		im->desc_off = ALIGN8(im->data_off + im->data_size) + 8;
		im->id_off = ALIGN8(im->desc_off + desc_len) + 8;
		im->len = im->id_off + im->name_size;
	}
}

static void write_descs(struct img *im, const struct img_stat *st)
{
	unsigned int k, j;

	for (k = 0; k < im->num_desc; k++) {
		unsigned char *p = img_desc(im, k);

		put32(p + D_FLAGS, st[k].flags);
		put16(p + D_EXP, (uint16_t)st[k].exponent);
		put16(p + D_SIZE, st[k].size);
		put32(p + D_OFFSET, st[k].offset);
		put32(p + D_BUCKET, st[k].bucket_size);
		strncpy((char *)p + D_NAME, st[k].name, im->name_size - 1);
		for (j = 0; j < st[k].size; j++) {
			uint64_t v = img_value(k, j);

			memcpy(im->buf + im->data_off + st[k].offset + 8 * j,
			       &v, 8);
		}
	}
}

int img_build(struct img *im, const char *id, uint32_t name_size,
	      const struct img_stat *st, unsigned int n, enum img_layout l)
{
	uint32_t end, max = 0, desc_len = n * (16 + name_size);
	unsigned int k;

	memset(im, 0, sizeof(*im));
	for (k = 0; k < n; k++) {
		end = st[k].offset + st[k].size * 8u;
		if (end > max)
			max = end;
	}
	im->name_size = name_size;
	im->num_desc = n;
	im->data_size = ALIGN8(max);
	layout(im, desc_len, l);
	im->buf = calloc(1, im->len);
	if (!im->buf)
		return -1;
	img_set_hdr(im, H_FLAGS, 0);
	img_set_hdr(im, H_NAME_SIZE, name_size);
	img_set_hdr(im, H_NUM_DESC, n);
	img_set_hdr(im, H_ID_OFF, im->id_off);
	img_set_hdr(im, H_DESC_OFF, im->desc_off);
	img_set_hdr(im, H_DATA_OFF, im->data_off);
	strncpy((char *)im->buf + im->id_off, id, name_size - 1);
	write_descs(im, st);
	return 0;
}

void img_free(struct img *im)
{
	free(im->buf);
	im->buf = NULL;
}

void img_set_hdr(struct img *im, unsigned int field, uint32_t v)
{
	put32(im->buf + 4 * field, v);
}

unsigned char *img_desc(struct img *im, unsigned int i)
{
	return im->buf + im->desc_off + i * (16 + im->name_size);
}

void img_set_desc32(struct img *im, unsigned int i, unsigned int off,
		    uint32_t v)
{
	put32(img_desc(im, i) + off, v);
}

void img_set_desc16(struct img *im, unsigned int i, unsigned int off,
		    uint16_t v)
{
	put16(img_desc(im, i) + off, v);
}
