/* SPDX-License-Identifier: GPL-2.0 */
/* Crafting KVM stats file images in memory for the unit tests. */
#ifndef UNIT_IMAGE_H
#define UNIT_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"	/* white-box: reads the handle's fields */

struct img_stat {
	const char *name;
	uint32_t flags;
	int16_t exponent;
	uint16_t size;
	uint32_t offset;
	uint32_t bucket_size;
};

enum img_layout {
	LAYOUT_UPSTREAM,	/* header, id, descs, data; as KVM does it */
	LAYOUT_REVERSED,	/* header, gap, data, descs, id */
};

struct img {
	unsigned char *buf;	/* exactly len bytes, so ASan sees overreads */
	size_t len;
	uint32_t name_size, num_desc, id_off, desc_off, data_off;
	uint32_t data_size;
};

/* Header fields by index, in wire order. */
enum { H_FLAGS, H_NAME_SIZE, H_NUM_DESC, H_ID_OFF, H_DESC_OFF, H_DATA_OFF };
/* Descriptor field byte offsets. */
enum { D_FLAGS = 0, D_EXP = 4, D_SIZE = 6, D_OFFSET = 8, D_BUCKET = 12,
       D_NAME = 16 };

extern const struct img_stat img_valid[];
extern const unsigned int img_valid_n;

/* Value j of stat k (in the img_stat array) as written by img_build(). */
uint64_t img_value(unsigned int k, unsigned int j);

int img_build(struct img *im, const char *id, uint32_t name_size,
	      const struct img_stat *st, unsigned int n, enum img_layout l);
void img_free(struct img *im);
void img_set_hdr(struct img *im, unsigned int field, uint32_t v);
unsigned char *img_desc(struct img *im, unsigned int i);
void img_set_desc32(struct img *im, unsigned int i, unsigned int off,
		    uint32_t v);
void img_set_desc16(struct img *im, unsigned int i, unsigned int off,
		    uint16_t v);

#endif
