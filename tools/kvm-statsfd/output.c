// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output.h"

void out_bucket_label(const struct kvmstats_desc *d, unsigned int i,
		      char *buf, size_t len)
{
	char lo_s[32], hi_s[32];
	uint64_t lo, hi;

	if (kvmstats_bucket_range(d, i, &lo, &hi)) {
		snprintf(buf, len, "[?]");
		return;
	}
	kvmstats_format(d, lo, lo_s, sizeof(lo_s));
	if (hi == UINT64_MAX)
		snprintf(hi_s, sizeof(hi_s), "inf");
	else
		kvmstats_format(d, hi, hi_s, sizeof(hi_s));
	snprintf(buf, len, "[%s, %s)", lo_s, hi_s);
}

struct named_count {
	unsigned int idx;
	uint64_t v;
};

static int cmp_count_desc(const void *a, const void *b)
{
	const struct named_count *x = a, *y = b;

	if (x->v != y->v)
		return x->v < y->v ? 1 : -1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* Non-zero buckets of an exit-reason histogram by name, largest first. */
static void reasons_human(FILE *f, const struct kvmstats *s,
			  const struct kvmstats_desc *d)
{
	struct named_count *c = calloc(d->size, sizeof(*c));
	unsigned int i, n = 0;
	char name[48];
	uint64_t v;

	if (!c)
		return;
	for (i = 0; i < d->size; i++) {
		v = kvmstats_value(s, d, i);
		if (v)
			c[n++] = (struct named_count){ i, v };
	}
	qsort(c, n, sizeof(*c), cmp_count_desc);
	for (i = 0; i < n; i++) {
		kvmstats_exit_reason_name(d, c[i].idx, name, sizeof(name));
		fprintf(f, "%s %s %llu", i ? "," : ":", name,
			(unsigned long long)c[i].v);
	}
	free(c);
}

/*
 * Histograms are summarised: how many buckets are non-zero, the total
 * count, then only the non-zero buckets with their ranges (exit-reason
 * histograms: with the reason's name, largest count first).
 */
static void hist_human(FILE *f, const struct kvmstats *s,
		       const struct kvmstats_desc *d)
{
	unsigned int i, nz = 0, shown = 0;
	uint64_t v, total = 0;
	char label[80];

	for (i = 0; i < d->size; i++) {
		v = kvmstats_value(s, d, i);
		nz += v != 0;
		total += v;
	}
	fprintf(f, "%s %u/%u buckets non-zero, total %llu",
		kvmstats_type_name(d->type), nz, d->size,
		(unsigned long long)total);
	if (kvmstats_exit_reason_kind(d) != KVMSTATS_EXIT_NONE) {
		reasons_human(f, s, d);
		return;
	}
	for (i = 0; i < d->size; i++) {
		v = kvmstats_value(s, d, i);
		if (!v)
			continue;
		out_bucket_label(d, i, label, sizeof(label));
		fprintf(f, "%s %s %llu", shown++ ? "," : ":", label,
			(unsigned long long)v);
	}
}

void out_stat_human(FILE *f, const struct kvmstats *s,
		    const struct kvmstats_desc *d, const char *indent)
{
	char val[48], name[256];

	fprintf(f, "%s%-32s ", indent, term_safe(d->name, name, sizeof(name)));
	if (kvmstats_is_hist(d)) {
		hist_human(f, s, d);
	} else {
		kvmstats_format(d, kvmstats_value(s, d, 0), val, sizeof(val));
		fputs(val, f);
		if (d->type != KVM_STATS_TYPE_CUMULATIVE)
			fprintf(f, " (%s)", kvmstats_type_name(d->type));
	}
	fputc('\n', f);
}

void out_stats_human(FILE *f, const struct kvmstats *s, const char *indent)
{
	unsigned int i;

	for (i = 0; i < kvmstats_num_desc(s); i++)
		out_stat_human(f, s, kvmstats_desc_at(s, i), indent);
}

/* Exit-reason histograms: "reasons": {name: count} of non-zero buckets. */
static void reasons_json(struct json *j, const struct kvmstats *s,
			 const struct kvmstats_desc *d)
{
	unsigned int i;
	char name[48];
	uint64_t v;

	json_key(j, "reasons");
	json_obj_begin(j);
	for (i = 0; i < d->size; i++) {
		v = kvmstats_value(s, d, i);
		if (!v)
			continue;
		kvmstats_exit_reason_name(d, i, name, sizeof(name));
		json_key(j, name);
		json_u64(j, v);
	}
	json_obj_end(j);
}

static void stat_json(struct json *j, const struct kvmstats *s,
		      const struct kvmstats_desc *d)
{
	unsigned int i;

	json_obj_begin(j);
	json_key(j, "name");
	json_str(j, d->name);
	json_key(j, "type");
	json_str(j, kvmstats_type_name(d->type));
	json_key(j, "unit");
	json_str(j, kvmstats_unit_name(d->unit));
	json_key(j, "base");
	json_str(j, kvmstats_base_name(d->base));
	json_key(j, "exponent");
	json_i64(j, d->exponent);
	json_key(j, "size");
	json_u64(j, d->size);
	if (kvmstats_is_hist(d)) {
		json_key(j, "bucket_size");
		json_u64(j, d->bucket_size);
		json_key(j, "buckets");
		json_arr_begin(j);
		for (i = 0; i < d->size; i++)
			json_u64(j, kvmstats_value(s, d, i));
		json_arr_end(j);
		if (kvmstats_exit_reason_kind(d) != KVMSTATS_EXIT_NONE)
			reasons_json(j, s, d);
	} else {
		json_key(j, "value");
		json_u64(j, kvmstats_value(s, d, 0));
	}
	json_obj_end(j);
}

void out_stats_fields(struct json *j, const struct kvmstats *s)
{
	unsigned int i;

	json_key(j, "id");
	json_str(j, kvmstats_id(s));
	json_key(j, "stats");
	if (!s) {
		json_null(j);
		return;
	}
	json_arr_begin(j);
	for (i = 0; i < kvmstats_num_desc(s); i++)
		stat_json(j, s, kvmstats_desc_at(s, i));
	json_arr_end(j);
}

void out_stats_json(struct json *j, const struct kvmstats *s)
{
	json_obj_begin(j);
	out_stats_fields(j, s);
	json_obj_end(j);
}

const char *term_safe(const char *s, char *buf, size_t len)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");
	size_t o = 0;
	int n;

	if (!len)
		return "";
	while (*p && o + 5 < len) {
		n = kvmstats_utf8_len(p);
		/* C1 controls are U+0080-U+009F: 0xc2 0x80-0x9f. */
		if (n == 1 && *p >= 0x20 && *p != 0x7f && *p != '\\') {
			buf[o++] = (char)*p++;
		} else if (n == 1 && *p == '\\') {
			buf[o++] = '\\';
			buf[o++] = '\\';
			p++;
		} else if (n > 1 && !(p[0] == 0xc2 && p[1] < 0xa0)) {
			if (o + n >= len)
				break;
			memcpy(buf + o, p, n);
			o += n;
			p += n;
		} else {
			o += snprintf(buf + o, len - o, "\\x%02x", *p++);
		}
	}
	buf[o] = '\0';
	return buf;
}

void out_json_head(struct json *j)
{
	struct timespec ts;
	struct tm tm;
	char buf[40];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), ".%03ldZ",
		 ts.tv_nsec / 1000000);
	json_key(j, "schema");
	json_str(j, KVMSTATSFD_SCHEMA);
	json_key(j, "timestamp");
	json_str(j, buf);
}
