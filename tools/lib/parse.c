// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Validation of a KVM binary stats file, shared by the buffer and fd paths.
 *
 * Everything read from the file is untrusted: all sizes are computed in
 * 64 bits with overflow checks, and every block is range-checked before
 * it is touched, so a hostile or buggy producer can make us fail but not
 * overread or crash.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

_Static_assert(sizeof(struct kvm_stats_header) == KVMSTATS_HDR_SIZE,
	       "struct kvm_stats_header is read directly from the file");

struct range {
	uint64_t start, end;	/* [start, end) */
	const char *what;
};

void kvmstats__reset(struct kvmstats *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

int kvmstats__err(struct kvmstats *s, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	return ret;
}

static void free_all(struct kvmstats *s)
{
	free(s->id);
	free(s->descs);
	free(s->data);
	free(s->_names);
	free(s->_by_name);
	s->id = NULL;
	s->descs = NULL;
	s->data = NULL;
	s->_names = NULL;
	s->_by_name = NULL;
}

void kvmstats_close(struct kvmstats *s)
{
	if (!s)
		return;
	free_all(s);
	kvmstats__unmap(s);
	/* Only close what kvmstats_open() took over: a zeroed struct is safe. */
	if (s->_own_fd && s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->_own_fd = 0;
	s->num_desc = 0;
	s->data_size = 0;
}

static int check_header(struct kvmstats *s, uint64_t *desc_len)
{
	const struct kvm_stats_header *h = &s->hdr;
	uint64_t stride;

	if (h->name_size == 0 || h->name_size > KVMSTATS_MAX_NAME_SIZE)
		return kvmstats__err(s, -EBADMSG,
				     "header: name_size %u out of range [1, %u]",
				     h->name_size, KVMSTATS_MAX_NAME_SIZE);
	if (h->num_desc > KVMSTATS_MAX_NUM_DESC)
		return kvmstats__err(s, -EBADMSG,
				     "header: num_desc %u exceeds %u",
				     h->num_desc, KVMSTATS_MAX_NUM_DESC);
	if (h->id_offset % 8 || h->desc_offset % 8 || h->data_offset % 8)
		return kvmstats__err(s, -EBADMSG,
				     "header: offsets not 8-aligned (id %u, desc %u, data %u)",
				     h->id_offset, h->desc_offset, h->data_offset);

	stride = KVMSTATS_DESC_FIXED + (uint64_t)h->name_size;
	if (__builtin_mul_overflow(stride, (uint64_t)h->num_desc, desc_len) ||
	    *desc_len > KVMSTATS_MAX_DESC_BYTES)
		return kvmstats__err(s, -EBADMSG,
				     "header: descriptor block too large (%u x %llu bytes)",
				     h->num_desc, (unsigned long long)stride);
	return 0;
}

/* Refuse any two non-empty blocks that share a byte. */
static int check_overlap(struct kvmstats *s, const struct range *r, int n)
{
	int i, j;

	for (i = 0; i < n; i++) {
		if (r[i].start == r[i].end)
			continue;
		for (j = i + 1; j < n; j++) {
			if (r[j].start == r[j].end)
				continue;
			if (r[i].start < r[j].end && r[j].start < r[i].end)
				return kvmstats__err(s, -EBADMSG,
						     "%s [%llu, %llu) overlaps %s [%llu, %llu)",
						     r[j].what,
						     (unsigned long long)r[j].start,
						     (unsigned long long)r[j].end,
						     r[i].what,
						     (unsigned long long)r[i].start,
						     (unsigned long long)r[i].end);
		}
	}
	return 0;
}

static void fill_ranges(const struct kvmstats *s, uint64_t desc_len,
			struct range *r)
{
	const struct kvm_stats_header *h = &s->hdr;

	r[0] = (struct range){ 0, KVMSTATS_HDR_SIZE, "header" };
	r[1] = (struct range){ h->id_offset,
			       (uint64_t)h->id_offset + h->name_size, "id" };
	r[2] = (struct range){ h->desc_offset,
			       (uint64_t)h->desc_offset + desc_len,
			       "descriptor block" };
	r[3] = (struct range){ h->data_offset,
			       (uint64_t)h->data_offset + s->data_size,
			       "data block" };
}

static int check_exponent(struct kvmstats *s, const struct kvmstats_desc *d)
{
	int ok;

	switch (d->unit) {
	case KVM_STATS_UNIT_SECONDS:
		ok = d->exponent <= 0;
		break;
	case KVM_STATS_UNIT_BOOLEAN:
		ok = d->exponent == 0;
		break;
	default:		/* NONE, BYTES, CYCLES: no fractions */
		ok = d->exponent >= 0;
		break;
	}
	if (!ok)
		return kvmstats__err(s, -EBADMSG,
				     "stat %s: exponent %d invalid for unit %s",
				     d->name, d->exponent,
				     kvmstats_unit_name(d->unit));
	return 0;
}

static int check_shape(struct kvmstats *s, const struct kvmstats_desc *d)
{
	if (d->type > KVM_STATS_TYPE_LOG_HIST)
		return kvmstats__err(s, -EBADMSG, "stat %s: unknown type %u",
				     d->name, d->type >> KVM_STATS_TYPE_SHIFT);
	if (d->unit > KVM_STATS_UNIT_BOOLEAN)
		return kvmstats__err(s, -EBADMSG, "stat %s: unknown unit %u",
				     d->name, d->unit >> KVM_STATS_UNIT_SHIFT);
	if (d->base > KVM_STATS_BASE_POW2)
		return kvmstats__err(s, -EBADMSG, "stat %s: unknown base %u",
				     d->name, d->base >> KVM_STATS_BASE_SHIFT);
	if (d->size == 0)
		return kvmstats__err(s, -EBADMSG, "stat %s: size 0", d->name);
	if (!kvmstats_is_hist(d) && d->size != 1)
		return kvmstats__err(s, -EBADMSG,
				     "stat %s: %s stat with size %u (must be 1)",
				     d->name, kvmstats_type_name(d->type),
				     d->size);
	if ((d->type == KVM_STATS_TYPE_LINEAR_HIST) != (d->bucket_size != 0))
		return kvmstats__err(s, -EBADMSG,
				     "stat %s: bucket_size %u invalid for type %s",
				     d->name, d->bucket_size,
				     kvmstats_type_name(d->type));
	if (d->offset % 8)
		return kvmstats__err(s, -EBADMSG,
				     "stat %s: data offset %u not 8-aligned",
				     d->name, d->offset);
	return check_exponent(s, d);
}

/* Decode descriptor i from its wire bytes; names stay in s->_names. */
static int parse_desc(struct kvmstats *s, unsigned int i)
{
	uint32_t name_size = s->hdr.name_size;
	const char *p = s->_names + (size_t)i * (KVMSTATS_DESC_FIXED + name_size);
	struct kvmstats_desc *d = &s->descs[i];
	const char *name = p + KVMSTATS_DESC_FIXED;

	memcpy(&d->flags, p, 4);
	memcpy(&d->exponent, p + 4, 2);
	memcpy(&d->size, p + 6, 2);
	memcpy(&d->offset, p + 8, 4);
	memcpy(&d->bucket_size, p + 12, 4);

	if (!memchr(name, '\0', name_size))
		return kvmstats__err(s, -EBADMSG,
				     "descriptor %u: name not NUL-terminated within %u bytes",
				     i, name_size);
	if (!name[0])
		return kvmstats__err(s, -EBADMSG, "descriptor %u: empty name", i);
	d->name = name;
	/*
	 * Upper flag bits are unassigned; keep them in d->flags but do not
	 * refuse, so a future flag does not break old readers.
	 */
	d->type = d->flags & KVM_STATS_TYPE_MASK;
	d->unit = d->flags & KVM_STATS_UNIT_MASK;
	d->base = d->flags & KVM_STATS_BASE_MASK;
	return check_shape(s, d);
}

static int cmp_name(const void *a, const void *b, void *arg)
{
	const struct kvmstats *s = arg;

	return strcmp(s->descs[*(const unsigned int *)a].name,
		      s->descs[*(const unsigned int *)b].name);
}

/*
 * Duplicate names are refused: a consumer looking a stat up by name could
 * not tell which one it got.  The sorted index doubles as the lookup table
 * for kvmstats_find().
 */
static int index_names(struct kvmstats *s)
{
	unsigned int i, n = s->num_desc;

	s->_by_name = calloc(n ? n : 1, sizeof(*s->_by_name));
	if (!s->_by_name)
		return kvmstats__err(s, -ENOMEM, "out of memory");
	for (i = 0; i < n; i++)
		s->_by_name[i] = i;
	qsort_r(s->_by_name, n, sizeof(*s->_by_name), cmp_name, s);
	for (i = 1; i < n; i++) {
		const char *a = s->descs[s->_by_name[i - 1]].name;

		if (!strcmp(a, s->descs[s->_by_name[i]].name))
			return kvmstats__err(s, -EBADMSG,
					     "duplicate stat name %s", a);
	}
	return 0;
}

/* data_size = max(offset + size * 8), rounded to 8; checked per stat. */
static int size_data(struct kvmstats *s, struct kvmstats_src *src)
{
	uint64_t max_end = 0, end, start, file_end;
	unsigned int i;

	for (i = 0; i < s->num_desc; i++) {
		const struct kvmstats_desc *d = &s->descs[i];

		start = (uint64_t)s->hdr.data_offset + d->offset;
		if (__builtin_add_overflow((uint64_t)d->offset,
					   (uint64_t)d->size * 8, &end) ||
		    __builtin_add_overflow(start, (uint64_t)d->size * 8,
					   &file_end) ||
		    (src->len_known && file_end > src->buf_len))
			return kvmstats__err(s, -EBADMSG,
					     "stat %s: values [%llu, %llu) lie past the end of the file",
					     d->name, (unsigned long long)start,
					     (unsigned long long)file_end);
		if (end > max_end)
			max_end = end;
	}
	/* A size the file declares is not one we allocate blindly. */
	if (max_end > KVMSTATS_MAX_DATA_BYTES)
		return kvmstats__err(s, -EBADMSG,
				     "data block of %llu bytes exceeds %u",
				     (unsigned long long)max_end,
				     KVMSTATS_MAX_DATA_BYTES);
	s->data_size = (max_end + 7) & ~7ull;
	return 0;
}

static int load_descs(struct kvmstats *s, struct kvmstats_src *src,
		      uint64_t desc_len)
{
	unsigned int i;
	int ret;

	s->num_desc = s->hdr.num_desc;
	s->_names = malloc(desc_len ? desc_len : 1);
	s->descs = calloc(s->num_desc ? s->num_desc : 1, sizeof(*s->descs));
	if (!s->_names || !s->descs)
		return kvmstats__err(s, -ENOMEM, "out of memory");
	ret = src->read(s, src, s->_names, desc_len, s->hdr.desc_offset,
			"descriptor block");
	if (ret)
		return ret;
	for (i = 0; i < s->num_desc; i++) {
		ret = parse_desc(s, i);
		if (ret)
			return ret;
	}
	return index_names(s);
}

static int load_id(struct kvmstats *s, struct kvmstats_src *src)
{
	uint32_t n = s->hdr.name_size;
	int ret;

	s->id = malloc(n);
	if (!s->id)
		return kvmstats__err(s, -ENOMEM, "out of memory");
	ret = src->read(s, src, s->id, n, s->hdr.id_offset, "id");
	if (ret)
		return ret;
	if (!memchr(s->id, '\0', n))
		return kvmstats__err(s, -EBADMSG,
				     "id not NUL-terminated within %u bytes", n);
	return 0;
}

static int load_all(struct kvmstats *s, struct kvmstats_src *src)
{
	struct range r[4];
	uint64_t desc_len = 0;
	int ret;

	ret = src->read(s, src, &s->hdr, KVMSTATS_HDR_SIZE, 0, "header");
	if (ret)
		return ret;
	ret = check_header(s, &desc_len);
	if (ret)
		return ret;
	/*
	 * Before the descriptors are read only a lower bound of the data
	 * block is known: its first u64 if there are any stats.  That is
	 * enough to refuse a descriptor block running into the data block
	 * before decoding values as descriptors.
	 */
	s->data_size = s->hdr.num_desc ? 8 : 0;
	fill_ranges(s, desc_len, r);
	ret = check_overlap(s, r, 4);
	if (ret)
		return ret;
	ret = load_id(s, src);
	if (!ret)
		ret = load_descs(s, src, desc_len);
	if (!ret)
		ret = size_data(s, src);
	if (ret)
		return ret;
	fill_ranges(s, desc_len, r);
	ret = check_overlap(s, r, 4);
	if (ret)
		return ret;
	s->data = calloc(1, s->data_size ? s->data_size : 8);
	if (!s->data)
		return kvmstats__err(s, -ENOMEM, "out of memory");
	return src->read(s, src, s->data, s->data_size, s->hdr.data_offset,
			 "data block");
}

int kvmstats__load(struct kvmstats *s, struct kvmstats_src *src)
{
	int ret = load_all(s, src);

	if (ret) {
		free_all(s);
		s->num_desc = 0;
		s->data_size = 0;
		s->fd = -1;
	}
	return ret;
}

static int buf_read(struct kvmstats *s, struct kvmstats_src *src, void *buf,
		    size_t len, uint64_t off, const char *what)
{
	if (off > src->buf_len || len > src->buf_len - off)
		return kvmstats__err(s, -EBADMSG,
				     "%s [%llu, %llu) lies past the end of the file (%zu bytes)",
				     what, (unsigned long long)off,
				     (unsigned long long)(off + len),
				     src->buf_len);
	memcpy(buf, src->buf + off, len);
	return 0;
}

int kvmstats_parse(struct kvmstats *s, const void *buf, size_t len)
{
	struct kvmstats_src src = {
		.read = buf_read,
		.buf = buf,
		.buf_len = len,
		.fd = -1,
		.len_known = 1,
	};

	if (!s)
		return -EINVAL;
	kvmstats_close(s);
	kvmstats__reset(s);
	if (!buf && len)
		return kvmstats__err(s, -EINVAL, "NULL buffer");
	return kvmstats__load(s, &src);
}

static int cmp_key(const void *key, const void *elem, void *arg)
{
	const struct kvmstats *s = arg;

	return strcmp(key, s->descs[*(const unsigned int *)elem].name);
}

const struct kvmstats_desc *kvmstats_find(const struct kvmstats *s,
					  const char *name)
{
	unsigned int lo = 0, hi, mid;
	int c;

	if (!s || !name || !s->_by_name)
		return NULL;
	/* bsearch() has no context argument; open-code it. */
	hi = s->num_desc;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = cmp_key(name, &s->_by_name[mid], (void *)s);
		if (!c)
			return &s->descs[s->_by_name[mid]];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

uint64_t kvmstats_value(const struct kvmstats *s,
			const struct kvmstats_desc *d, unsigned int i)
{
	if (!s || !d || !s->data || i >= d->size)
		return 0;
	/* Validation guaranteed offset % 8 == 0 and the range fits. */
	return s->data[d->offset / 8 + i];
}
