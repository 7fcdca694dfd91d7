// SPDX-License-Identifier: GPL-2.0
/*
 * KVM stats -> Prometheus text exposition format 0.0.4.
 *
 * Every descriptor of every VM and vCPU file becomes a member of one metric
 * family; families are collected first (the format wants each family's
 * samples together under one HELP and TYPE), then written.  The mapping
 * (Documentation/exporter.rst):
 *
 *   cumulative              counter    kvm_{vm,vcpu}_<stem><unit>_total
 *   instant, peak           gauge      kvm_{vm,vcpu}_<stem><unit>
 *   exit-reason histogram   counter    kvm_{vm,vcpu}_exits_by_reason_total
 *     (svm, vmx, arm64)                  {vendor=,reason=}: every reason,
 *                                        those seen, or none (--exit-reasons)
 *                           counter    kvm_{vm,vcpu}_exits_by_class_total
 *                                        {class=}: the same exits by
 *                                        vendor-neutral class, every class
 *   userspace_exits         counter    kvm_{vm,vcpu}_userspace_exits_total
 *                                      {reason="KVM_EXIT_IO"}, every reason
 *   exit_kinds_arm64        counter    kvm_{vm,vcpu}_exits_by_kind_total
 *                                      {kind="IRQ"}, every kind
 *   histogram with an       histogram  kvm_{vm,vcpu}_<stem><unit>
 *     exact companion sum              (_bucket{le=}, _sum, _count)
 *   other histograms        counter    kvm_{vm,vcpu}_<stem><unit>_bucket_total
 *                                      {bound=}, cumulative like le
 *
 * <unit> is _seconds, _bytes or _cycles, values are scaled to that base
 * unit; a unit suffix already in the stat's name (_ns, _kib) is replaced.
 * Nothing approximate is ever written: a histogram gets a _sum only from
 * a stat that is exactly the sum of its observations (KVM's X_hist/X_ns
 * pairs), and bucket bounds are exact for integer observations.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "metrics.h"

#define NAME_MAX_LEN	256
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum kind {
	K_INFO,		/* kvm_vm_info */
	K_AVAIL,	/* kvm_vm_stats_available */
	K_COUNTER,
	K_GAUGE,
	K_REASONS,	/* exit-reason histogram as a counter by reason */
	K_CLASSES,	/* the same histogram summed by vendor-neutral class */
	K_USEREXITS,	/* userspace_exits as a counter by KVM_EXIT_* */
	K_KINDS,	/* exit_kinds_arm64 as a counter by kind */
	K_HIST,		/* histogram with an exact _sum */
	K_BUCKETS,	/* histogram without one: cumulative bucket counters */
};

struct member {
	const struct prom_vm *vm;
	const char *vcpu;		/* NULL for VM stats */
	const struct kvmstats *s;
	const struct kvmstats_desc *d;
	const struct kvmstats_desc *sum;	/* K_HIST companion */
	const char *vendor;			/* K_REASONS: "svm", "vmx" */
};

struct family {
	char name[NAME_MAX_LEN];
	enum kind kind;
	const char *src;		/* stat name it was made for */
	int vcpu;
	int seen_only;			/* K_REASONS: only non-zero reasons */
	struct member *m;
	unsigned int nr, cap;
};

struct table {
	struct family *f;
	unsigned int nr, cap;
	unsigned int *hash;		/* family index + 1, 0 = empty */
	unsigned int hcap;		/* power of 2 */
};

struct mapping {
	char name[NAME_MAX_LEN];
	enum kind kind;
	unsigned int group;		/* PROM_G_* */
	const struct kvmstats_desc *sum;
	const char *vendor;
};

/* --- names ---------------------------------------------------------------- */

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);

	return n >= m && !strcmp(s + n - m, suf);
}

/* Strip the first of suffixes that s ends with, leaving at least 1 char. */
static void strip_one(char *s, const char *const *suffixes)
{
	size_t n = strlen(s), m;

	for (; *suffixes; suffixes++) {
		m = strlen(*suffixes);
		if (n > m && !strcmp(s + n - m, *suffixes)) {
			s[n - m] = '\0';
			return;
		}
	}
}

static const char *const time_sfx[] = {
	"_nanoseconds", "_microseconds", "_milliseconds", "_seconds",
	"_nsec", "_usec", "_msec", "_sec", "_ns", "_us", "_ms", "_s", NULL,
};
static const char *const byte_sfx[] = {
	"_bytes", "_kib", "_mib", "_gib", "_kb", "_mb", "_gb", "_b", NULL,
};
static const char *const cycle_sfx[] = { "_cycles", NULL };

/* KVM names are [a-z0-9_]; anything else becomes '_'. */
static void sanitize(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in[i] && i + 1 < len; i++) {
		char c = in[i];

		out[i] = ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9')) ? c : '_';
	}
	out[i] = '\0';
}

static const char *unit_suffix(const struct kvmstats_desc *d)
{
	switch (d->unit) {
	case KVM_STATS_UNIT_SECONDS:
		return "_seconds";
	case KVM_STATS_UNIT_BYTES:
		return "_bytes";
	case KVM_STATS_UNIT_CYCLES:
		return "_cycles";
	default:
		return "";
	}
}

/*
 * The stat's name without its unit suffix (and "_hist" for histograms),
 * and for a VM file's sum over its vCPUs without "vcpus_": kvm_vm_X and
 * kvm_vcpu_X are one stat's VM and vCPU metrics.
 */
static void stem_of(const struct kvmstats_desc *d, char *stem, size_t len)
{
	static const char *const hist_sfx[] = { "_hist", NULL };

	sanitize(kvmstats_stem(d), stem, len);
	if (kvmstats_is_hist(d))
		strip_one(stem, hist_sfx);
	switch (d->unit) {
	case KVM_STATS_UNIT_SECONDS:
		strip_one(stem, time_sfx);
		break;
	case KVM_STATS_UNIT_BYTES:
		strip_one(stem, byte_sfx);
		break;
	case KVM_STATS_UNIT_CYCLES:
		strip_one(stem, cycle_sfx);
		break;
	}
}

/*
 * KVM keeps the sum of a time histogram X_hist's observations in the
 * cumulative stat X_ns (halt_wait_hist/halt_wait_ns, exit_latency_hist/
 * exit_latency_ns): the same value is added to both.  Only such a pair
 * gives a histogram its _sum.
 */
static const struct kvmstats_desc *find_sum(const struct kvmstats *s,
					    const struct kvmstats_desc *d)
{
	const struct kvmstats_desc *c;
	char want[NAME_MAX_LEN];
	size_t n = strlen(d->name);

	if (d->unit != KVM_STATS_UNIT_SECONDS || n <= 5 ||
	    !ends_with(d->name, "_hist") || n - 5 + 4 > sizeof(want))
		return NULL;
	memcpy(want, d->name, n - 5);
	strcpy(want + n - 5, "_ns");
	c = kvmstats_find(s, want);
	if (!c || c->type != KVM_STATS_TYPE_CUMULATIVE || c->size != 1 ||
	    c->unit != KVM_STATS_UNIT_SECONDS)
		return NULL;
	return c;
}

static int map_stat(const struct kvmstats *s, const struct kvmstats_desc *d,
		    int vcpu, struct mapping *m)
{
	char stem[NAME_MAX_LEN - 32];
	const char *tail = "", *unit;
	int n;

	if (!d->size || !d->name[0])
		return -1;
	m->sum = NULL;
	m->vendor = NULL;
	switch (kvmstats_exit_reason_kind(d)) {
	case KVMSTATS_EXIT_SVM:
		m->vendor = "svm";
		break;
	case KVMSTATS_EXIT_VMX:
		m->vendor = "vmx";
		break;
	case KVMSTATS_EXIT_ARM64:
		m->vendor = "arm64";
		break;
	}
	/* One family for both vendors: one query on any host. */
	if (m->vendor) {
		m->kind = K_REASONS;
		m->group = PROM_G_EXITS;
		snprintf(m->name, sizeof(m->name), "kvm_%s_exits_by_reason_total",
			 vcpu ? "vcpu" : "vm");
		return (int)strlen(m->name);
	}
	/* arm64's exits by kind: categories, not bounds, as the reasons. */
	if (kvmstats_exit_reason_kind(d) == KVMSTATS_EXIT_ARM64_KIND) {
		m->kind = K_KINDS;
		m->group = PROM_G_EXITS;
		snprintf(m->name, sizeof(m->name), "kvm_%s_exits_by_kind_total",
			 vcpu ? "vcpu" : "vm");
		return (int)strlen(m->name);
	}
	if (kvmstats_is_userspace_exits(d)) {
		m->kind = K_USEREXITS;
		m->group = PROM_G_USERSPACE;
		snprintf(m->name, sizeof(m->name), "kvm_%s_userspace_exits_total",
			 vcpu ? "vcpu" : "vm");
		return (int)strlen(m->name);
	}
	stem_of(d, stem, sizeof(stem));
	m->group = PROM_G_SCALARS;
	switch (d->type) {
	case KVM_STATS_TYPE_CUMULATIVE:
		m->kind = K_COUNTER;
		tail = "_total";
		break;
	case KVM_STATS_TYPE_INSTANT:
	case KVM_STATS_TYPE_PEAK:
		m->kind = K_GAUGE;
		break;
	case KVM_STATS_TYPE_LINEAR_HIST:
	case KVM_STATS_TYPE_LOG_HIST:
		m->group = PROM_G_HISTOGRAMS;
		m->sum = find_sum(s, d);
		m->kind = m->sum ? K_HIST : K_BUCKETS;
		tail = m->sum ? "" : "_bucket_total";
		break;
	default:
		return -1;	/* a type this reader does not know */
	}
	unit = unit_suffix(d);
	if (*unit && !strcmp(stem, unit + 1))
		unit = "";	/* a stat called just "cycles" */
	n = snprintf(m->name, sizeof(m->name), "kvm_%s_%s%s", vcpu ? "vcpu" : "vm",
		     stem, unit);
	if (n >= (int)sizeof(m->name) - 16)
		return -1;
	/* Suffixes the format reserves for histograms and summaries. */
	if (m->kind == K_GAUGE && (ends_with(m->name, "_count") ||
				   ends_with(m->name, "_sum") ||
				   ends_with(m->name, "_bucket")))
		tail = "_value";
	if (m->kind == K_COUNTER && ends_with(m->name, "_total"))
		tail = "";
	strcat(m->name, tail);
	return (int)strlen(m->name);
}

int prom_family_name(const struct kvmstats *s, const struct kvmstats_desc *d,
		     int vcpu, char *buf, size_t len)
{
	struct mapping m;
	int n = map_stat(s, d, vcpu, &m);

	if (n < 0)
		return -1;
	snprintf(buf, len, "%s", m.name);
	return n;
}

/* --- the family table ------------------------------------------------------ */

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h;
}

static struct family *lookup(struct table *t, const char *name)
{
	uint32_t i;

	if (!t->hcap)
		return NULL;
	for (i = hash_str(name) & (t->hcap - 1); t->hash[i];
	     i = (i + 1) & (t->hcap - 1))
		if (!strcmp(t->f[t->hash[i] - 1].name, name))
			return &t->f[t->hash[i] - 1];
	return NULL;
}

static void hash_insert(unsigned int *h, unsigned int hcap, const char *name,
			unsigned int idx)
{
	uint32_t i;

	for (i = hash_str(name) & (hcap - 1); h[i]; i = (i + 1) & (hcap - 1))
		;
	h[i] = idx + 1;
}

static int rehash(struct table *t, unsigned int hcap)
{
	unsigned int *h = calloc(hcap, sizeof(*h)), k;

	if (!h)
		return -ENOMEM;
	for (k = 0; k < t->nr; k++)
		hash_insert(h, hcap, t->f[k].name, k);
	free(t->hash);
	t->hash = h;
	t->hcap = hcap;
	return 0;
}

static struct family *add_family(struct table *t, const char *name,
				 enum kind kind, const char *src, int vcpu)
{
	struct family *f;

	if (t->nr == t->cap) {
		unsigned int cap = t->cap ? 2 * t->cap : 64;

		f = realloc(t->f, cap * sizeof(*f));
		if (!f)
			return NULL;
		t->f = f;
		t->cap = cap;
	}
	/* Keep the hash at most half full. */
	if ((t->nr + 1) * 2 > t->hcap && rehash(t, t->hcap ? 2 * t->hcap : 128))
		return NULL;
	f = &t->f[t->nr];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->kind = kind;
	f->src = src;
	f->vcpu = vcpu;
	hash_insert(t->hash, t->hcap, f->name, t->nr++);
	return f;
}

static int add_member(struct family *f, const struct member *m)
{
	if (f->nr == f->cap) {
		unsigned int cap = f->cap ? 2 * f->cap : 8;
		struct member *nm = realloc(f->m, cap * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		f->m = nm;
		f->cap = cap;
	}
	f->m[f->nr++] = *m;
	return 0;
}

static void free_table(struct table *t)
{
	unsigned int i;

	for (i = 0; i < t->nr; i++)
		free(t->f[i].m);
	free(t->f);
	free(t->hash);
}

/* Would a new family `name` of `kind` clash with a histogram's series? */
static int reserved_clash(struct table *t, const char *name, enum kind kind)
{
	static const char *const sfx[] = { "_bucket", "_sum", "_count" };
	char buf[NAME_MAX_LEN + 8];
	struct family *f;
	size_t n = strlen(name), m;
	unsigned int i;

	for (i = 0; i < 3; i++) {
		if (kind == K_HIST) {
			snprintf(buf, sizeof(buf), "%s%s", name, sfx[i]);
			if (lookup(t, buf))
				return 1;
		}
		m = strlen(sfx[i]);
		if (n > m && !strcmp(name + n - m, sfx[i])) {
			memcpy(buf, name, n - m);
			buf[n - m] = '\0';
			f = lookup(t, buf);
			if (f && f->kind == K_HIST)
				return 1;
		}
	}
	return 0;
}

/*
 * An exit-reason histogram's second family, by class: one for both
 * vendors, without the vendor label (a class means the same on both).
 */
static int add_class_member(struct table *t, const struct member *mem,
			    struct prom_result *res)
{
	struct member cm = *mem;
	char name[NAME_MAX_LEN];
	struct family *f;

	snprintf(name, sizeof(name), "kvm_%s_exits_by_class_total",
		 mem->vcpu ? "vcpu" : "vm");
	f = lookup(t, name);
	if (!f) {
		if (reserved_clash(t, name, K_CLASSES)) {
			res->skipped++;
			return 0;
		}
		f = add_family(t, name, K_CLASSES, mem->d->name, mem->vcpu != NULL);
		if (!f)
			return -ENOMEM;
	} else if (f->kind != K_CLASSES) {
		res->skipped++;		/* a stat of KVM's took the name */
		return 0;
	}
	cm.vendor = NULL;
	return add_member(f, &cm);
}

static int collect_file(struct table *t, const struct prom_vm *vm,
			const char *vcpu, const struct kvmstats *s,
			const struct prom_opts *o, struct prom_result *res)
{
	struct member mem = { .vm = vm, .vcpu = vcpu, .s = s };
	unsigned int i, groups = o->groups;
	struct mapping m;
	struct family *f;

	for (i = 0; i < kvmstats_num_desc(s); i++) {
		mem.d = kvmstats_desc_at(s, i);
		if (map_stat(s, mem.d, vcpu != NULL, &m) < 0) {
			res->skipped++;
			continue;
		}
		if (!(m.group & groups))
			continue;
		mem.sum = m.sum;
		mem.vendor = m.vendor;
		if (m.kind == K_REASONS) {
			if (add_class_member(t, &mem, res))
				return -ENOMEM;
			if (o->reasons == PROM_REASONS_NONE)
				continue;
		}
		f = lookup(t, m.name);
		if (!f) {
			if (reserved_clash(t, m.name, m.kind)) {
				res->skipped++;
				continue;
			}
			f = add_family(t, m.name, m.kind, mem.d->name,
				       vcpu != NULL);
			if (!f)
				return -ENOMEM;
			f->seen_only = o->reasons == PROM_REASONS_SEEN;
		} else if (f->kind != m.kind ||
			   (m.kind != K_REASONS && strcmp(f->src, mem.d->name))) {
			/* Another stat (or type) already has this name. */
			res->skipped++;
			continue;
		}
		if (add_member(f, &mem))
			return -ENOMEM;
	}
	return 0;
}

/* --- writing --------------------------------------------------------------- */

void prom_format_double(double v, char *buf, size_t len)
{
	int p;

	for (p = 1; p < 17; p++) {
		snprintf(buf, len, "%.*g", p, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, len, "%.17g", v);
}

/* A label value: escaped, invalid UTF-8 replaced by U+FFFD. */
static void put_label_value(FILE *f, const char *v)
{
	const unsigned char *s = (const unsigned char *)(v ? v : "");
	const unsigned char *run;
	int n;

	while (*s) {
		/*
		 * What needs no escaping goes out in one fwrite(): a label
		 * value is written on every series (millions a scrape).
		 */
		for (run = s; *s && *s != '\\' && *s != '"' && *s != '\n' &&
		     (n = kvmstats_utf8_len(s)); s += n)
			;
		if (s > run)
			fwrite(run, 1, s - run, f);
		if (!*s)
			break;
		/* A character to escape, or invalid UTF-8. */
		if (*s == '\\' || *s == '"') {
			fputc('\\', f);
			fputc(*s++, f);
		} else if (*s == '\n') {
			fputs("\\n", f);
			s++;
		} else {
			fputs("\xef\xbf\xbd", f);
			s++;
		}
	}
}

static void put_labels(FILE *f, const struct member *m, const char *key,
		       const char *val)
{
	fputs("{vm=\"", f);
	put_label_value(f, m->vm->vm);
	if (m->vm->pid) {
		fputs("\",pid=\"", f);
		put_label_value(f, m->vm->pid);
	}
	if (m->vendor) {
		fputs("\",vendor=\"", f);
		put_label_value(f, m->vendor);
	}
	if (m->vcpu) {
		fputs("\",vcpu=\"", f);
		put_label_value(f, m->vcpu);
	}
	if (key) {
		fprintf(f, "\",%s=\"", key);
		put_label_value(f, val);
	}
	fputs("\"}", f);
}

/*
 * raw in the stat's base unit, rounded once: 3 ns is 3 / 1e9 (the double
 * nearest 3e-9), not 3 * 1e-9 (which is not).  Powers of ten up to 1e22
 * are exact doubles, powers of two always are.
 */
static double scaled(uint64_t raw, const struct kvmstats_desc *d)
{
	static const double p10[] = {
		1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
		1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
	};
	int e = d->exponent;

	if (d->unit == KVM_STATS_UNIT_BOOLEAN || !e)
		return (double)raw;
	if (d->base == KVM_STATS_BASE_POW2)
		return ldexp((double)raw, e);
	if (e < 0 && e >= -22)
		return (double)raw / p10[-e];
	if (e > 0 && e <= 22)
		return (double)raw * p10[e];
	return (double)raw * kvmstats_scale(d);
}

/* Integers as integers (exact beyond 2^53 too); scaled values as doubles. */
static void put_value(FILE *f, uint64_t raw, const struct kvmstats_desc *d)
{
	char buf[40];

	if (!d || d->unit == KVM_STATS_UNIT_BOOLEAN || !d->exponent) {
		fprintf(f, " %llu\n", (unsigned long long)raw);
	} else {
		prom_format_double(scaled(raw, d), buf, sizeof(buf));
		fprintf(f, " %s\n", buf);
	}
}

static void sample(FILE *f, struct prom_result *res, const char *name,
		   const char *sfx, const struct member *m, const char *key,
		   const char *val, uint64_t raw, const struct kvmstats_desc *d)
{
	fputs(name, f);
	fputs(sfx, f);
	put_labels(f, m, key, val);
	put_value(f, raw, d);
	res->samples++;
}

static int sum_buckets(const struct member *m, uint64_t *total)
{
	unsigned int i;

	*total = 0;
	for (i = 0; i < m->d->size; i++)
		if (__builtin_add_overflow(*total, kvmstats_value(m->s, m->d, i),
					   total))
			return -1;
	return 0;
}

/*
 * Histogram buckets, cumulative.  KVM bucket i holds integer observations
 * in [lo, hi), i.e. <= hi - 1: that is the exact `le` bound.  The last
 * bucket is open-ended and only counts towards +Inf; bounds too large to
 * tell apart as doubles are merged into the next bucket.
 */
static void write_buckets(FILE *f, struct prom_result *res,
			  const struct family *fam, const struct member *m,
			  const char *key, const char *sfx)
{
	double le, prev = -1.0;
	uint64_t lo, hi, cum = 0;
	char bound[40];
	unsigned int i;

	for (i = 0; i < m->d->size; i++) {
		cum += kvmstats_value(m->s, m->d, i);
		if (kvmstats_bucket_range(m->d, i, &lo, &hi) || hi == UINT64_MAX)
			continue;
		le = scaled(hi - 1, m->d);
		if (le <= prev)
			continue;
		prev = le;
		prom_format_double(le, bound, sizeof(bound));
		sample(f, res, fam->name, sfx, m, key, bound, cum, NULL);
	}
	sample(f, res, fam->name, sfx, m, key, "+Inf", cum, NULL);
}

/* Every class, zeros too: the counts of its reasons, summed. */
static void write_classes(FILE *f, struct prom_result *res,
			  const struct family *fam, const struct member *m)
{
	uint64_t sum[PROM_MAX_CLASSES] = { 0 };
	unsigned int i, n = kvmstats_exit_class_count();
	int c;

	if (n > PROM_MAX_CLASSES)
		n = PROM_MAX_CLASSES;
	for (i = 0; i < m->d->size; i++) {
		c = kvmstats_exit_reason_class(m->d, i);
		/* Counts wrap as the counters they sum do, modulo 2^64. */
		if (c >= 0 && (unsigned int)c < n)
			sum[c] += kvmstats_value(m->s, m->d, i);
	}
	for (i = 0; i < n; i++)
		sample(f, res, fam->name, "", m, "class",
		       kvmstats_exit_class_name(i), sum[i], NULL);
}

static void write_member(FILE *f, struct prom_result *res,
			 const struct family *fam, const struct member *m)
{
	char label[48];
	uint64_t v, total;
	unsigned int i;

	switch (fam->kind) {
	case K_INFO:
		fputs(fam->name, f);
		fputs("{vm=\"", f);
		put_label_value(f, m->vm->vm);
		fputs("\",uuid=\"", f);
		put_label_value(f, m->vm->uuid);
		fputs("\",source=\"", f);
		put_label_value(f, m->vm->source);
		fputs("\",pid=\"", f);
		put_label_value(f, m->vm->info_pid);
		fputs("\",comm=\"", f);
		put_label_value(f, m->vm->comm);
		fputs("\"} 1\n", f);
		res->samples++;
		break;
	case K_AVAIL:
		sample(f, res, fam->name, "", m, NULL, NULL, m->vm->vm_st != NULL,
		       NULL);
		break;
	case K_COUNTER:
	case K_GAUGE:
		for (i = 0; i < m->d->size; i++) {
			snprintf(label, sizeof(label), "%u", i);
			sample(f, res, fam->name, "", m,
			       m->d->size > 1 ? "index" : NULL, label,
			       kvmstats_value(m->s, m->d, i), m->d);
		}
		break;
	case K_REASONS:
		/*
		 * Every reason from the start (rate() needs the zero), or with
		 * --exit-reasons seen those counted so far: the class family
		 * has the zeros.
		 */
		for (i = 0; i < m->d->size; i++) {
			v = kvmstats_value(m->s, m->d, i);
			if (!v && fam->seen_only)
				continue;
			kvmstats_exit_reason_name(m->d, i, label, sizeof(label));
			sample(f, res, fam->name, "", m, "reason", label, v, NULL);
		}
		break;
	case K_CLASSES:
		write_classes(f, res, fam, m);
		break;
	case K_USEREXITS:
		for (i = 0; i < m->d->size; i++) {
			v = kvmstats_value(m->s, m->d, i);
			kvmstats_userspace_exit_name(m->d, i, label, sizeof(label));
			sample(f, res, fam->name, "", m, "reason", label, v, NULL);
		}
		break;
	case K_KINDS:
		for (i = 0; i < m->d->size; i++) {
			v = kvmstats_value(m->s, m->d, i);
			kvmstats_exit_reason_name(m->d, i, label, sizeof(label));
			sample(f, res, fam->name, "", m, "kind", label, v, NULL);
		}
		break;
	case K_HIST:
		if (sum_buckets(m, &total))
			break;	/* a count we cannot state exactly */
		write_buckets(f, res, fam, m, "le", "_bucket");
		sample(f, res, fam->name, "_sum", m, NULL, NULL,
		       kvmstats_value(m->s, m->sum, 0), m->sum);
		sample(f, res, fam->name, "_count", m, NULL, NULL, total, NULL);
		break;
	case K_BUCKETS:
		if (!sum_buckets(m, &total))
			write_buckets(f, res, fam, m, "bound", "");
		break;
	}
}

/* Whether write_member() writes anything for m. */
static int member_has_samples(const struct family *fam, const struct member *m)
{
	uint64_t total;

	unsigned int i;

	switch (fam->kind) {
	case K_HIST:
	case K_BUCKETS:
		return !sum_buckets(m, &total);
	case K_REASONS:
		for (i = 0; fam->seen_only && i < m->d->size; i++)
			if (kvmstats_value(m->s, m->d, i))
				return 1;
		return !fam->seen_only;
	default:
		return 1;
	}
}

static void put_help_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void write_help(FILE *f, const struct family *fam)
{
	const struct member *m = &fam->m[0];
	const struct kvmstats_desc *d = m->d;
	const char *who = fam->vcpu ? "vCPU" : "VM";
	static const char *const types[] = {
		[K_INFO] = "gauge", [K_AVAIL] = "gauge",
		[K_COUNTER] = "counter", [K_GAUGE] = "gauge",
		[K_REASONS] = "counter", [K_CLASSES] = "counter",
		[K_USEREXITS] = "counter", [K_KINDS] = "counter",
		[K_HIST] = "histogram",
		[K_BUCKETS] = "counter",
	};
	char unit[96] = "";

	fprintf(f, "# HELP %s ", fam->name);
	if (fam->kind == K_INFO) {
		fputs("A VMM process holding a KVM VM: its identity (vm), UUID, where the identity comes from (libvirt or machined through systemd-machined, else qemu: the command line), pid and process name; always 1.\n",
		      f);
		fprintf(f, "# TYPE %s gauge\n", fam->name);
		return;
	}
	if (fam->kind == K_AVAIL) {
		fputs("1 when the VM's own stats file (KVM's VM-wide stats, and the kvm_statsfd module's sums over the vCPUs) is read; 0 when it cannot be opened: without the module KVM answers only the VMM itself, and QEMU keeps no VM stats fd to borrow (8.1 and later keep one per vCPU, which --vcpu exports).\n",
		      f);
		fprintf(f, "# TYPE %s gauge\n", fam->name);
		return;
	}
	if (d->unit != KVM_STATS_UNIT_NONE || d->exponent)
		snprintf(unit, sizeof(unit), ", unit %s, %s exponent %d%s",
			 kvmstats_unit_name(d->unit),
			 d->base == KVM_STATS_BASE_POW2 ? "base 2" : "base 10",
			 d->exponent,
			 d->exponent && *unit_suffix(d) ? ", scaled to the base unit" : "");
	if (fam->kind == K_REASONS) {
		fprintf(f, "KVM %s exits by hardware exit reason (stat exit_reasons_svm, _vmx or _arm64, by vendor)%s.\n# TYPE %s counter\n",
			who, fam->seen_only ? ", the reasons seen so far" : "",
			fam->name);
		return;
	}
	if (fam->kind == K_CLASSES) {
		fprintf(f, "KVM %s exits by class, the same on SVM, VMX and arm64 (io, npf, msr, hlt, intr, ...: the exit-reason histogram summed by class).\n# TYPE %s counter\n",
			who, fam->name);
		return;
	}
	fputs("KVM ", f);
	fputs(who, f);
	fputs(" stat ", f);
	put_help_text(f, d->name);
	fprintf(f, " (%s%s)", kvmstats_type_name(d->type), unit);
	switch (fam->kind) {
	case K_USEREXITS:
		fputs(": returns from KVM_RUN to userspace by kvm_run.exit_reason", f);
		break;
	case K_KINDS:
		fputs(": every exit by what KVM's world switch returned (IRQ, SERROR, TRAP, ILLEGAL, other); TRAP exits by exception class are in exits_by_reason_total",
		      f);
		break;
	case K_HIST:
		fputs(" with _sum from ", f);
		put_help_text(f, m->sum->name);
		break;
	case K_BUCKETS:
		fputs(": cumulative count of observations <= bound; no exact sum exists, so not a histogram",
		      f);
		break;
	default:
		break;
	}
	fprintf(f, ".\n# TYPE %s %s\n", fam->name, types[fam->kind]);
}

int prom_parse_groups(const char *arg, unsigned int *groups)
{
	static const struct {
		const char *name;
		unsigned int mask;
	} g[] = {
		{ "scalars", PROM_G_SCALARS }, { "exits", PROM_G_EXITS },
		{ "userspace-exits", PROM_G_USERSPACE },
		{ "histograms", PROM_G_HISTOGRAMS },
		{ "default", PROM_G_DEFAULT }, { "all", PROM_G_ALL },
	};
	const char *p = arg, *e;
	unsigned int i, mask = 0;
	size_t n;

	for (; *p; p = *e ? e + 1 : e) {
		e = strchrnul(p, ',');
		n = (size_t)(e - p);
		for (i = 0; i < ARRAY_SIZE(g); i++)
			if (strlen(g[i].name) == n && !memcmp(g[i].name, p, n))
				break;
		if (i == ARRAY_SIZE(g))
			return -1;
		mask |= g[i].mask;
	}
	*groups = mask;
	return 0;
}

int prom_parse_reasons(const char *arg, int *reasons)
{
	if (!strcmp(arg, "all"))
		*reasons = PROM_REASONS_ALL;
	else if (!strcmp(arg, "seen"))
		*reasons = PROM_REASONS_SEEN;
	else if (!strcmp(arg, "none"))
		*reasons = PROM_REASONS_NONE;
	else
		return -1;
	return 0;
}

int prom_render(FILE *f, const struct prom_vm *vms, unsigned int n,
		const struct prom_opts *o, struct prom_result *res)
{
	struct table t = { 0 };
	unsigned int i, k;
	int ret = -ENOMEM;

	memset(res, 0, sizeof(*res));
	/*
	 * kvm_vm_info and kvm_vm_stats_available first: VM stats called
	 * "info" or "stats_available" cannot take their names.
	 */
	if (!add_family(&t, "kvm_vm_info", K_INFO, "", 0) ||
	    !add_family(&t, "kvm_vm_stats_available", K_AVAIL, "", 0))
		goto out;
	for (i = 0; i < n; i++) {
		struct member m = { .vm = &vms[i] };

		if (add_member(&t.f[0], &m) || add_member(&t.f[1], &m))
			goto out;
		if (vms[i].vm_st &&
		    collect_file(&t, &vms[i], NULL, vms[i].vm_st, o, res))
			goto out;
		for (k = 0; o->vcpu && k < vms[i].nr_vcpus; k++)
			if (vms[i].vcpus[k].st &&
			    collect_file(&t, &vms[i], vms[i].vcpus[k].id,
					 vms[i].vcpus[k].st, o, res))
				goto out;
	}
	for (i = 0; i < t.nr; i++) {
		struct family *fam = &t.f[i];

		for (k = 0; k < fam->nr; k++)
			if (member_has_samples(fam, &fam->m[k]))
				break;
		if (k == fam->nr)
			continue;
		write_help(f, fam);
		res->families++;
		for (; k < fam->nr; k++)
			write_member(f, res, fam, &fam->m[k]);
	}
	ret = 0;
out:
	free_table(&t);
	return ret;
}
