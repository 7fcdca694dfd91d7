// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Names, scales, human units and histogram bucket bounds. */
#include <errno.h>
#include <stdio.h>

#include "kvmstats.h"

static const char *const type_names[] = {
	"cumulative", "instant", "peak", "linear_hist", "log_hist",
};
static const char *const unit_names[] = {
	"none", "bytes", "seconds", "cycles", "boolean",
};
static const char *const base_names[] = { "pow10", "pow2" };

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Callers hold either the masked flag value or the bare field index;
 * the two only coincide at 0, so accept both.
 */
static const char *field_name(const char *const *names, unsigned int n,
			      unsigned int v, unsigned int shift)
{
	if (v < n)
		return names[v];
	if (!(v & ((1u << shift) - 1)) && (v >> shift) < n)
		return names[v >> shift];
	return "unknown";
}

const char *kvmstats_type_name(unsigned int t)
{
	return field_name(type_names, ARRAY_SIZE(type_names), t,
			  KVM_STATS_TYPE_SHIFT);
}

const char *kvmstats_unit_name(unsigned int u)
{
	return field_name(unit_names, ARRAY_SIZE(unit_names), u,
			  KVM_STATS_UNIT_SHIFT);
}

const char *kvmstats_base_name(unsigned int b)
{
	return field_name(base_names, ARRAY_SIZE(base_names), b,
			  KVM_STATS_BASE_SHIFT);
}

int kvmstats_is_hist(const struct kvmstats_desc *d)
{
	return d->type == KVM_STATS_TYPE_LINEAR_HIST ||
	       d->type == KVM_STATS_TYPE_LOG_HIST;
}

static uint64_t mul_sat(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

int kvmstats_bucket_range(const struct kvmstats_desc *d, unsigned int i,
			  uint64_t *lo, uint64_t *hi)
{
	if (!d || !kvmstats_is_hist(d) || i >= d->size)
		return -EINVAL;
	if (d->type == KVM_STATS_TYPE_LINEAR_HIST) {
		*lo = mul_sat(d->bucket_size, i);
		*hi = mul_sat(d->bucket_size, (uint64_t)i + 1);
	} else if (i == 0) {
		*lo = 0;
		*hi = 1;
	} else {
		/* The kernel buckets by fls64(): only 65 buckets can fill. */
		*lo = i - 1 < 64 ? 1ull << (i - 1) : UINT64_MAX;
		*hi = i < 64 ? 1ull << i : UINT64_MAX;
	}
	if (i == (unsigned int)d->size - 1)
		*hi = UINT64_MAX;
	return 0;
}

static double ipow(double b, int e)
{
	double r = 1.0;
	int n = e < 0 ? -e : e;

	/* Past ~1100 a double is 0 or inf anyway; bound the loop. */
	if (n > 1100)
		n = 1100;
	while (n--)
		r *= b;
	return e < 0 ? 1.0 / r : r;
}

double kvmstats_scale(const struct kvmstats_desc *d)
{
	if (!d || d->unit == KVM_STATS_UNIT_BOOLEAN)
		return 1.0;
	return ipow(d->base == KVM_STATS_BASE_POW2 ? 2.0 : 10.0, d->exponent);
}

/* Three significant digits, but never exponent notation for big values. */
static int fmt_num(char *buf, size_t len, double v, const char *unit)
{
	if (v >= 1000.0 || v <= -1000.0)
		return snprintf(buf, len, "%.0f%s%s", v, *unit ? " " : "", unit);
	return snprintf(buf, len, "%.3g%s%s", v, *unit ? " " : "", unit);
}

static int fmt_seconds(char *buf, size_t len, double v)
{
	if (v == 0.0 || v >= 1.0)
		return fmt_num(buf, len, v, "s");
	if (v >= 1e-3)
		return fmt_num(buf, len, v * 1e3, "ms");
	if (v >= 1e-6)
		return fmt_num(buf, len, v * 1e6, "us");
	return fmt_num(buf, len, v * 1e9, "ns");
}

static int fmt_prefixed(char *buf, size_t len, double v, double step,
			const char *const *units, unsigned int n)
{
	unsigned int i = 0;

	while (v >= step && i + 1 < n) {
		v /= step;
		i++;
	}
	return fmt_num(buf, len, v, units[i]);
}

int kvmstats_format(const struct kvmstats_desc *d, uint64_t raw,
		    char *buf, size_t len)
{
	static const char *const bytes[] = {
		"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB",
	};
	static const char *const cycles[] = {
		"cycles", "Kcycles", "Mcycles", "Gcycles", "Tcycles",
	};
	double v = (double)raw * kvmstats_scale(d);

	switch (d->unit) {
	case KVM_STATS_UNIT_BOOLEAN:
		return snprintf(buf, len, "%s", raw ? "true" : "false");
	case KVM_STATS_UNIT_SECONDS:
		return fmt_seconds(buf, len, v);
	case KVM_STATS_UNIT_BYTES:
		return fmt_prefixed(buf, len, v, 1024.0, bytes,
				    ARRAY_SIZE(bytes));
	case KVM_STATS_UNIT_CYCLES:
		return fmt_prefixed(buf, len, v, 1000.0, cycles,
				    ARRAY_SIZE(cycles));
	default:
		/* Plain counters stay exact. */
		if (d->exponent == 0)
			return snprintf(buf, len, "%llu",
					(unsigned long long)raw);
		return fmt_num(buf, len, v, "");
	}
}

/* Length of a valid UTF-8 sequence at p, or 0 (RFC 3629 rules). */
int kvmstats_utf8_len(const unsigned char *p)
{
	unsigned int c = p[0], cp, n, i;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)	/* also stops at NUL */
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}
