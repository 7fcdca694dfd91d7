// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit test of kvm-statsfd-exporter's rendering: crafted stats images
 * (tests/unit/image.c) rendered to Prometheus text, checked line by line,
 * by a small exposition checker (one HELP/TYPE per family, families
 * contiguous, histogram buckets cumulative with increasing le, +Inf equal
 * to _count, _sum present) and by `promtool check metrics`.
 * Prints TAP; the last line is "N passed, N failed".
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "identity.h"
#include "kvm_statsfd/uapi.h"
#include "image.h"
#include "metrics.h"
#include "tap.h"

#define T(x)	KVM_STATS_TYPE_##x
#define U(x)	KVM_STATS_UNIT_##x
#define B(x)	KVM_STATS_BASE_##x

/* A vCPU file with one stat of each kind the exporter maps. */
static const struct img_stat vcpu_stats[] = {
	/* 0 */ { "exits",                T(CUMULATIVE) | U(NONE),     0,   1,    0, 0 },
	/* 1 */ { "halt_wait_ns",         T(CUMULATIVE) | U(SECONDS), -9,   1,    8, 0 },
	/* 2 */ { "halt_wait_hist",       T(LOG_HIST) | U(SECONDS),   -9,  32,   16, 0 },
	/* 3 */ { "exit_latency_io_hist", T(LOG_HIST) | U(SECONDS),   -9,  32,  272, 0 },
	/* 4 */ { "exit_reasons_svm",     T(LINEAR_HIST) | U(NONE),    0, 120,  528, 1 },
	/* 5 */ { "blocking",             T(INSTANT) | U(BOOLEAN),     0,   1, 1488, 0 },
	/* 6 */ { "max_mmu_rmap_size",    T(PEAK) | U(NONE),           0,   1, 1496, 0 },
	/* 7 */ { "mem_kib",              T(INSTANT) | U(BYTES) | B(POW2), 10, 1, 1504, 0 },
	/* 8 */ { "cycles",               T(CUMULATIVE) | U(CYCLES),   0,   1, 1512, 0 },
	/* 9 */ { "userspace_exits",      T(LINEAR_HIST) | U(NONE),    0,   6, 1520, 1 },
	/* 10 */ { "wide_hist",           T(LINEAR_HIST) | U(NONE),    0,   4, 1568, 4 },
	/* 11 */ { "foo_ns",              T(CUMULATIVE) | U(SECONDS), -9,   1, 1600, 0 },
	/* 12 */ { "foo_seconds",         T(CUMULATIVE) | U(SECONDS),  0,   1, 1608, 0 },
	/* 13 */ { "lat_count",           T(INSTANT) | U(NONE),        0,   1, 1616, 0 },
	/* 14 */ { "exit_latency_max_ns", T(PEAK) | U(SECONDS),       -9,   1, 1624, 0 },
	/* 15 */ { "guest_ns",            T(CUMULATIVE) | U(SECONDS), -9,   1, 1632, 0 },
};
#define NVCPU	(sizeof(vcpu_stats) / sizeof(vcpu_stats[0]))

static const struct img_stat vm_stats[] = {
	{ "remote_tlb_flush", T(CUMULATIVE) | U(NONE), 0,   1,  0, 0 },
	{ "pages_4k",         T(INSTANT) | U(NONE),    0,   1,  8, 0 },
	/* The module's VM file: its vCPUs' sum (uapi.h). */
	{ "vcpus_exit_reasons_svm", T(LINEAR_HIST) | U(NONE), 0, 120, 16, 1 },
};
#define NVM	(sizeof(vm_stats) / sizeof(vm_stats[0]))

static void set_val(struct img *im, const struct img_stat *st, unsigned int j,
		    uint64_t v)
{
	memcpy(im->buf + im->data_off + st->offset + 8 * j, &v, 8);
}

static void zero_stat(struct img *im, const struct img_stat *st)
{
	unsigned int j;

	for (j = 0; j < st->size; j++)
		set_val(im, st, j, 0);
}

static int load(struct kvmstats *s, const char *id, const struct img_stat *st,
		unsigned int n, void (*fill)(struct img *im))
{
	struct img im;
	int ret;

	if (img_build(&im, id, 48, st, n, LAYOUT_UPSTREAM))
		return -1;
	if (fill)
		fill(&im);
	ret = kvmstats_parse(s, im.buf, im.len);
	img_free(&im);
	return ret;
}

/* vCPU 0 of VM 1: values chosen so every expected number is known. */
static void fill_vcpu0(struct img *im)
{
	const struct img_stat *st = vcpu_stats;
	unsigned int j;

	set_val(im, &st[0], 0, 12345);
	set_val(im, &st[1], 0, 1500000000ull);	/* 1.5 s */
	/* halt_wait_hist: bucket j holds j observations (bucket 0: none). */
	for (j = 0; j < 32; j++)
		set_val(im, &st[2], j, j);
	/* exit_latency_io_hist: buckets 0, 3 and 31 (the open-ended one). */
	zero_stat(im, &st[3]);
	set_val(im, &st[3], 0, 2);
	set_val(im, &st[3], 3, 5);
	set_val(im, &st[3], 31, 7);
	zero_stat(im, &st[4]);
	set_val(im, &st[4], kvm_statsfd_svm_index(0x7b), 1000);	/* io (SVM_EXIT_IOIO) */
	set_val(im, &st[4], kvm_statsfd_svm_index(0x400), 3);	/* npf */
	set_val(im, &st[4], 119, 2);	/* other */
	set_val(im, &st[5], 0, 1);
	set_val(im, &st[6], 0, 17);
	set_val(im, &st[7], 0, 4);	/* 4 KiB */
	set_val(im, &st[8], 0, 999);
	for (j = 0; j < 6; j++)
		set_val(im, &st[9], j, 10 * j);
	for (j = 0; j < 4; j++)
		set_val(im, &st[10], j, 1);
	set_val(im, &st[11], 0, 7);
	set_val(im, &st[12], 0, 8);
	set_val(im, &st[13], 0, 5);
	set_val(im, &st[14], 0, 2500);	/* 2.5 us */
	set_val(im, &st[15], 0, 3);	/* 3 ns */
}

/* Exit reasons all zero: the family for VM 2 has no samples of its own. */
static void fill_zero_reasons(struct img *im)
{
	zero_stat(im, &vcpu_stats[4]);
}

static void fill_vm(struct img *im)
{
	zero_stat(im, &vm_stats[2]);
	set_val(im, &vm_stats[2], kvm_statsfd_svm_index(0x7b), 2000);
}

static const struct prom_opts all_opts = { .groups = PROM_G_ALL, .vcpu = 1 };

static char *render_opts(const struct prom_vm *vms, unsigned int n,
			 const struct prom_opts *o, struct prom_result *res,
			 int *ret)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	*ret = prom_render(f, vms, n, o, res);
	fclose(f);
	return out;
}

static char *render(const struct prom_vm *vms, unsigned int n,
		    struct prom_result *res, int *ret)
{
	return render_opts(vms, n, &all_opts, res, ret);
}

/* Does text contain exactly this line? */
static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p = text;

	while ((p = strstr(p, line))) {
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return 1;
		p += n;
	}
	return 0;
}

static int count_prefix(const char *text, const char *prefix)
{
	size_t n = strlen(prefix);
	const char *p = text;
	int c = 0;

	while (p && *p) {
		if (!strncmp(p, prefix, n))
			c++;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return c;
}

static void expect(const char *text, const char *line)
{
	if (!ok(has_line(text, line), "line: %s", line))
		tap_diag("not in the output");
}

/*
 * The checks promtool 2.42 does not do.  Walks the exposition: HELP then
 * TYPE once per family, a family's samples contiguous; for histograms,
 * per series: le strictly increasing ending in +Inf, counts non-decreasing,
 * +Inf == _count, a _sum.  Returns the number of problems (diagnosed).
 */
struct series {
	char key[512];		/* labels without le */
	double last_le, last_count, inf;
	int has_inf, has_sum, has_count;
	double count;
};

static int check_exposition(const char *text)
{
	char fam[256] = "", type[32] = "", seen[64][256], name[256], labels[512];
	struct series ser[64];
	int nser = 0, nseen = 0, bad = 0, i;
	char *copy = strdup(text), *line, *save = NULL;

	for (line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "# HELP ", 7)) {
			/* a new family: finish the histogram before it */
			for (i = 0; i < nser; i++) {
				if (!ser[i].has_inf || !ser[i].has_sum ||
				    !ser[i].has_count || ser[i].inf != ser[i].count) {
					tap_diag("%s{%s}: +Inf %d sum %d count %d (%g vs %g)",
						 fam, ser[i].key, ser[i].has_inf,
						 ser[i].has_sum, ser[i].has_count,
						 ser[i].inf, ser[i].count);
					bad++;
				}
			}
			nser = 0;
			sscanf(line + 7, "%255s", fam);
			for (i = 0; i < nseen; i++)
				if (!strcmp(seen[i], fam)) {
					tap_diag("family %s appears twice", fam);
					bad++;
				}
			if (nseen < 64)
				strcpy(seen[nseen++], fam);
			continue;
		}
		if (!strncmp(line, "# TYPE ", 7)) {
			if (sscanf(line + 7, "%255s %31s", name, type) != 2 ||
			    strcmp(name, fam)) {
				tap_diag("TYPE %s without its HELP", name);
				bad++;
			}
			continue;
		}
		if (line[0] == '#')
			continue;
		{
			char *brace = strchr(line, '{'), *sp = strrchr(line, ' ');
			char *sfx, *le, key[512];
			double v = strtod(sp + 1, NULL), lev;
			size_t nl = brace ? (size_t)(brace - line) : (size_t)(sp - line);

			snprintf(name, sizeof(name), "%.*s", (int)nl, line);
			labels[0] = '\0';
			if (brace)
				snprintf(labels, sizeof(labels), "%.*s",
					 (int)(sp - brace - 2), brace + 1);
			if (strncmp(name, fam, strlen(fam))) {
				tap_diag("sample %s outside its family (%s)", name, fam);
				bad++;
				continue;
			}
			if (strcmp(type, "histogram"))
				continue;
			sfx = name + strlen(fam);
			/* labels minus le, which is always last */
			snprintf(key, sizeof(key), "%s", labels);
			le = strstr(key, ",le=\"");
			lev = 0;
			if (le) {
				lev = !strncmp(le + 5, "+Inf", 4) ? INFINITY :
					strtod(le + 5, NULL);
				*le = '\0';
			}
			for (i = 0; i < nser; i++)
				if (!strcmp(ser[i].key, key))
					break;
			if (i == nser) {
				if (nser == 64)
					continue;
				memset(&ser[nser], 0, sizeof(ser[0]));
				snprintf(ser[nser].key, sizeof(ser[0].key), "%s", key);
				ser[nser].last_le = -INFINITY;
				nser++;
			}
			if (!strcmp(sfx, "_bucket")) {
				if (!le || lev <= ser[i].last_le || v < ser[i].last_count) {
					tap_diag("%s{%s}: bucket not cumulative/increasing", fam, labels);
					bad++;
				}
				ser[i].last_le = lev;
				ser[i].last_count = v;
				if (isinf(lev)) {
					ser[i].has_inf = 1;
					ser[i].inf = v;
				}
			} else if (!strcmp(sfx, "_sum")) {
				ser[i].has_sum = 1;
			} else if (!strcmp(sfx, "_count")) {
				ser[i].has_count = 1;
				ser[i].count = v;
			} else {
				tap_diag("histogram sample %s", name);
				bad++;
			}
		}
	}
	for (i = 0; i < nser; i++)
		if (!ser[i].has_inf || !ser[i].has_sum || !ser[i].has_count ||
		    ser[i].inf != ser[i].count) {
			tap_diag("%s{%s}: incomplete histogram", fam, ser[i].key);
			bad++;
		}
	free(copy);
	return bad;
}

/* Pipe text to `promtool check metrics`; its exit status, or -1. */
static int promtool(const char *text, char *msg, size_t len)
{
	char tmpl[] = "/tmp/exporter-unit.XXXXXX", cmd[256];
	FILE *f, *p;
	int fd, st;
	size_t n;

	fd = mkstemp(tmpl);
	if (fd < 0)
		return -1;
	f = fdopen(fd, "w");
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", tmpl);
	p = popen(cmd, "r");
	if (!p) {
		unlink(tmpl);
		return -1;
	}
	n = fread(msg, 1, len - 1, p);
	msg[n] = '\0';
	st = pclose(p);
	unlink(tmpl);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_format_double(void)
{
	char buf[40];

	prom_format_double(1023 * 1e-9, buf, sizeof(buf));
	ok(!strcmp(buf, "1.023e-06"), "format: 1023 ns = %s", buf);
	prom_format_double(0.5, buf, sizeof(buf));
	ok(!strcmp(buf, "0.5"), "format: 0.5 = %s", buf);
	prom_format_double(3, buf, sizeof(buf));
	ok(!strcmp(buf, "3"), "format: 3 = %s", buf);
	prom_format_double(0.1 + 0.2, buf, sizeof(buf));
	ok(strtod(buf, NULL) == 0.1 + 0.2, "format: 0.1+0.2 round-trips (%s)", buf);
}

static void test_names(void)
{
	struct kvmstats s = { 0 };
	char buf[256];
	unsigned int i;
	static const char *const want[] = {
		"kvm_vcpu_exits_total", "kvm_vcpu_halt_wait_seconds_total",
		"kvm_vcpu_halt_wait_seconds",
		"kvm_vcpu_exit_latency_io_seconds_bucket_total",
		"kvm_vcpu_exits_by_reason_total", "kvm_vcpu_blocking",
		"kvm_vcpu_max_mmu_rmap_size", "kvm_vcpu_mem_bytes",
		"kvm_vcpu_cycles_total", "kvm_vcpu_userspace_exits_total",
		"kvm_vcpu_wide_bucket_total", "kvm_vcpu_foo_seconds_total",
		"kvm_vcpu_foo_seconds_total", "kvm_vcpu_lat_count_value",
		"kvm_vcpu_exit_latency_max_seconds", "kvm_vcpu_guest_seconds_total",
	};

	if (!ok(!load(&s, "kvm-1/vcpu-0", vcpu_stats, NVCPU, fill_vcpu0),
		"names: image parses"))
		return;
	for (i = 0; i < NVCPU; i++) {
		prom_family_name(&s, &s.descs[i], 1, buf, sizeof(buf));
		ok(!strcmp(buf, want[i]), "name: %s -> %s", s.descs[i].name, buf);
	}
	prom_family_name(&s, &s.descs[0], 0, buf, sizeof(buf));
	ok(!strcmp(buf, "kvm_vm_exits_total"), "name: VM exits -> %s", buf);
	kvmstats_close(&s);
}

static void test_render(void)
{
	struct kvmstats v0 = { 0 }, v1 = { 0 }, vm = { 0 }, w0 = { 0 };
	struct prom_vcpu vc1[] = { { "0", &v0 }, { "1", &v1 }, { "2", NULL } };
	struct prom_vcpu vc2[] = { { "0", &w0 } };
	struct prom_vm vms[] = {
		{ .vm = "alice/g1", .info_pid = "100", .uuid = "u-1",
		  .source = "qemu", .comm = "qemu-system-x86", .vm_st = &vm,
		  .nr_vcpus = 3, .vcpus = vc1 },
		{ .vm = "we\"ird\\na\nme\xff", .info_pid = "200", .uuid = "",
		  .source = "libvirt", .comm = "demo-vm", .vm_st = NULL,
		  .nr_vcpus = 1, .vcpus = vc2 },
	};
	struct prom_result res;
	char *out, msg[4096];
	int ret, st;

	if (load(&v0, "kvm-100/vcpu-0", vcpu_stats, NVCPU, fill_vcpu0) ||
	    load(&v1, "kvm-100/vcpu-1", vcpu_stats, NVCPU, fill_vcpu0) ||
	    load(&vm, "kvm-100", vm_stats, NVM, fill_vm) ||
	    load(&w0, "kvm-200/vcpu-0", vcpu_stats, NVCPU, fill_zero_reasons)) {
		ok(0, "render: images parse");
		return;
	}
	out = render(vms, 2, &res, &ret);
	ok(ret == 0, "render returns 0");

	/* kvm_vm_info, escaping and invalid UTF-8 */
	expect(out, "kvm_vm_info{vm=\"alice/g1\",uuid=\"u-1\",source=\"qemu\",pid=\"100\",comm=\"qemu-system-x86\"} 1");
	expect(out, "kvm_vm_info{vm=\"we\\\"ird\\\\na\\nme\xef\xbf\xbd\",uuid=\"\",source=\"libvirt\",pid=\"200\",comm=\"demo-vm\"} 1");
	ok(!strstr(out, "pid=\"100\",vcpu") && !strstr(out, "{pid="),
	   "no pid label on the stats' series by default");

	/* counters and gauges, scaled to base units */
	expect(out, "# TYPE kvm_vcpu_exits_total counter");
	expect(out, "kvm_vcpu_exits_total{vm=\"alice/g1\",vcpu=\"0\"} 12345");
	expect(out, "kvm_vcpu_exits_total{vm=\"alice/g1\",vcpu=\"1\"} 12345");
	ok(!strstr(out, "vcpu=\"2\""), "a vCPU without stats has no series");
	expect(out, "# TYPE kvm_vcpu_halt_wait_seconds_total counter");
	expect(out, "kvm_vcpu_halt_wait_seconds_total{vm=\"alice/g1\",vcpu=\"0\"} 1.5");
	expect(out, "kvm_vcpu_guest_seconds_total{vm=\"alice/g1\",vcpu=\"0\"} 3e-09");
	expect(out, "# TYPE kvm_vcpu_blocking gauge");
	expect(out, "kvm_vcpu_blocking{vm=\"alice/g1\",vcpu=\"0\"} 1");
	expect(out, "# TYPE kvm_vcpu_max_mmu_rmap_size gauge");
	expect(out, "kvm_vcpu_max_mmu_rmap_size{vm=\"alice/g1\",vcpu=\"0\"} 17");
	expect(out, "# TYPE kvm_vcpu_exit_latency_max_seconds gauge");
	expect(out, "kvm_vcpu_exit_latency_max_seconds{vm=\"alice/g1\",vcpu=\"0\"} 2.5e-06");
	expect(out, "kvm_vcpu_mem_bytes{vm=\"alice/g1\",vcpu=\"0\"} 4096");
	expect(out, "kvm_vcpu_cycles_total{vm=\"alice/g1\",vcpu=\"0\"} 999");
	expect(out, "kvm_vcpu_lat_count_value{vm=\"alice/g1\",vcpu=\"0\"} 5");
	/* VM-wide stats: no vcpu label */
	expect(out, "kvm_vm_remote_tlb_flush_total{vm=\"alice/g1\"} 1000");
	expect(out, "kvm_vm_pages_4k{vm=\"alice/g1\"} 2000");
	expect(out, "kvm_vm_exits_by_reason_total{vm=\"alice/g1\",vendor=\"svm\",reason=\"io\"} 2000");

	/* exit reasons: one family, vendor label, every reason from the start */
	expect(out, "# TYPE kvm_vcpu_exits_by_reason_total counter");
	expect(out, "kvm_vcpu_exits_by_reason_total{vm=\"alice/g1\",vendor=\"svm\",vcpu=\"0\",reason=\"io\"} 1000");
	expect(out, "kvm_vcpu_exits_by_reason_total{vm=\"alice/g1\",vendor=\"svm\",vcpu=\"0\",reason=\"npf\"} 3");
	expect(out, "kvm_vcpu_exits_by_reason_total{vm=\"alice/g1\",vendor=\"svm\",vcpu=\"0\",reason=\"other\"} 2");
	expect(out, "kvm_vcpu_exits_by_reason_total{vm=\"alice/g1\",vendor=\"svm\",vcpu=\"0\",reason=\"hlt\"} 0");
	expect(out, "kvm_vcpu_exits_by_reason_total{vm=\"alice/g1\",vendor=\"svm\",vcpu=\"0\",reason=\"PF excp\"} 0");
	ok(count_prefix(out, "kvm_vcpu_exits_by_reason_total{") == 3 * 120,
	   "exit reasons: all 120 reasons of each of 3 vCPU files, zeros too (%d)",
	   count_prefix(out, "kvm_vcpu_exits_by_reason_total{"));

	/* histogram with an exact sum: halt_wait_hist + halt_wait_ns */
	expect(out, "# TYPE kvm_vcpu_halt_wait_seconds histogram");
	expect(out, "kvm_vcpu_halt_wait_seconds_bucket{vm=\"alice/g1\",vcpu=\"0\",le=\"0\"} 0");
	expect(out, "kvm_vcpu_halt_wait_seconds_bucket{vm=\"alice/g1\",vcpu=\"0\",le=\"1e-09\"} 1");
	expect(out, "kvm_vcpu_halt_wait_seconds_bucket{vm=\"alice/g1\",vcpu=\"0\",le=\"3e-09\"} 3");
	expect(out, "kvm_vcpu_halt_wait_seconds_bucket{vm=\"alice/g1\",vcpu=\"0\",le=\"1.023e-06\"} 55");
	/* buckets 0..30 are bounded (le up to 2^30-1 ns), 31 is open-ended */
	expect(out, "kvm_vcpu_halt_wait_seconds_bucket{vm=\"alice/g1\",vcpu=\"0\",le=\"1.073741823\"} 465");
	expect(out, "kvm_vcpu_halt_wait_seconds_bucket{vm=\"alice/g1\",vcpu=\"0\",le=\"+Inf\"} 496");
	expect(out, "kvm_vcpu_halt_wait_seconds_count{vm=\"alice/g1\",vcpu=\"0\"} 496");
	expect(out, "kvm_vcpu_halt_wait_seconds_sum{vm=\"alice/g1\",vcpu=\"0\"} 1.5");
	ok(count_prefix(out, "kvm_vcpu_halt_wait_seconds_bucket{vm=\"alice/g1\",vcpu=\"0\",") == 32,
	   "histogram: 31 bounded buckets and +Inf");

	/* no exact sum: cumulative bucket counters, not a histogram */
	expect(out, "# TYPE kvm_vcpu_exit_latency_io_seconds_bucket_total counter");
	expect(out, "kvm_vcpu_exit_latency_io_seconds_bucket_total{vm=\"alice/g1\",vcpu=\"0\",bound=\"0\"} 2");
	expect(out, "kvm_vcpu_exit_latency_io_seconds_bucket_total{vm=\"alice/g1\",vcpu=\"0\",bound=\"3e-09\"} 2");
	expect(out, "kvm_vcpu_exit_latency_io_seconds_bucket_total{vm=\"alice/g1\",vcpu=\"0\",bound=\"7e-09\"} 7");
	expect(out, "kvm_vcpu_exit_latency_io_seconds_bucket_total{vm=\"alice/g1\",vcpu=\"0\",bound=\"+Inf\"} 14");
	ok(!strstr(out, "exit_latency_io_seconds_sum") &&
	   !strstr(out, "exit_latency_io_seconds_count"),
	   "no _sum or _count is made up for a histogram without a companion total");
	/* userspace_exits: a counter by KVM_EXIT_* name, the last bucket "other" */
	expect(out, "# TYPE kvm_vcpu_userspace_exits_total counter");
	expect(out, "kvm_vcpu_userspace_exits_total{vm=\"alice/g1\",vcpu=\"0\",reason=\"KVM_EXIT_UNKNOWN\"} 0");
	expect(out, "kvm_vcpu_userspace_exits_total{vm=\"alice/g1\",vcpu=\"0\",reason=\"KVM_EXIT_IO\"} 20");
	expect(out, "kvm_vcpu_userspace_exits_total{vm=\"alice/g1\",vcpu=\"0\",reason=\"KVM_EXIT_DEBUG\"} 40");
	expect(out, "kvm_vcpu_userspace_exits_total{vm=\"alice/g1\",vcpu=\"0\",reason=\"other\"} 50");
	ok(!strstr(out, "userspace_exits_bucket") && !strstr(out, "bound=\"2\""),
	   "userspace_exits: no cumulative buckets");
	/* linear: bucket i of size b holds [i*b, (i+1)*b), so bound (i+1)*b-1 */
	expect(out, "kvm_vcpu_wide_bucket_total{vm=\"alice/g1\",vcpu=\"0\",bound=\"3\"} 1");
	expect(out, "kvm_vcpu_wide_bucket_total{vm=\"alice/g1\",vcpu=\"0\",bound=\"11\"} 3");
	expect(out, "kvm_vcpu_wide_bucket_total{vm=\"alice/g1\",vcpu=\"0\",bound=\"+Inf\"} 4");

	/* collisions: foo_ns and foo_seconds both want foo_seconds_total */
	expect(out, "kvm_vcpu_foo_seconds_total{vm=\"alice/g1\",vcpu=\"0\"} 7e-09");
	ok(count_prefix(out, "kvm_vcpu_foo_seconds_total{") == 3,
	   "collision: only the first stat's series (3 vCPU files)");
	ok(res.skipped == 3, "collision: counted as skipped, once per file (%u)",
	   res.skipped);
	ok(count_prefix(out, "# TYPE ") == (int)res.families &&
	   count_prefix(out, "# HELP ") == (int)res.families,
	   "one HELP and one TYPE per family (%u)", res.families);

	ok(check_exposition(out) == 0,
	   "exposition: families contiguous, histograms cumulative, +Inf == _count, _sum present");
	st = promtool(out, msg, sizeof(msg));
	if (!ok(st == 0, "promtool check metrics accepts the exposition (status %d)", st))
		tap_diag("%s", msg);
	if (getenv("EXPORTER_UNIT_DUMP"))
		fputs(out, stderr);
	free(out);

	/* No VMs at all: empty output, still valid. */
	out = render(NULL, 0, &res, &ret);
	ok(ret == 0 && !*out && res.families == 0, "no VMs: nothing written");
	free(out);

	kvmstats_close(&v0);
	kvmstats_close(&v1);
	kvmstats_close(&vm);
	kvmstats_close(&w0);
}

static const struct img_stat vmx_vm_stats[] = {
	{ "exits",            T(CUMULATIVE) | U(NONE),  0,  1, 0, 0 },
	{ "vcpus_exit_reasons_vmx", T(LINEAR_HIST) | U(NONE), 0, 81, 8, 1 },
	{ "halt_wait_ns",     T(CUMULATIVE) | U(SECONDS), -9, 1, 656, 0 },
	{ "halt_wait_hist",   T(LOG_HIST) | U(SECONDS), -9, 32, 664, 0 },
};
#define NVMX	(sizeof(vmx_vm_stats) / sizeof(vmx_vm_stats[0]))

static void fill_vmx(struct img *im)
{
	zero_stat(im, &vmx_vm_stats[1]);
	set_val(im, &vmx_vm_stats[1], 30, 77);	/* IO_INSTRUCTION */
}

/* An arm64 VM: exits by kind and trap exits by exception class. */
static const struct img_stat arm64_vm_stats[] = {
	{ "exits",              T(CUMULATIVE) | U(NONE),  0,  1,  0, 0 },
	{ "vcpus_exit_kinds_arm64",   T(LINEAR_HIST) | U(NONE), 0,  5,  8, 1 },
	{ "vcpus_exit_reasons_arm64", T(LINEAR_HIST) | U(NONE), 0, 64, 48, 1 },
};
#define NARM64	(sizeof(arm64_vm_stats) / sizeof(arm64_vm_stats[0]))

static void fill_arm64(struct img *im)
{
	zero_stat(im, &arm64_vm_stats[1]);
	zero_stat(im, &arm64_vm_stats[2]);
	set_val(im, &arm64_vm_stats[0], 0, 179);
	set_val(im, &arm64_vm_stats[1], 0, 9);		/* IRQ */
	set_val(im, &arm64_vm_stats[1], 2, 170);	/* TRAP */
	set_val(im, &arm64_vm_stats[2], 0x16, 158);	/* HVC64 */
	set_val(im, &arm64_vm_stats[2], 0x24, 5);	/* DABT_LOW */
	set_val(im, &arm64_vm_stats[2], 0x18, 7);	/* SYS64 */
}

/*
 * What an operator gets without flags: VM series only, no histograms;
 * SVM and VMX hosts in one family; a pid label only where two VMs share
 * an identity.
 */
static void test_opts(void)
{
	struct kvmstats svm = { 0 }, vmx = { 0 }, c0 = { 0 };
	struct prom_vcpu vc[] = { { "0", &c0 } };
	struct prom_vm vms[] = {
		{ .vm = "a", .info_pid = "1", .uuid = "", .source = "libvirt",
		  .comm = "q", .vm_st = &svm, .nr_vcpus = 1, .vcpus = vc },
		{ .vm = "bob/x", .pid = "2", .info_pid = "2", .uuid = "",
		  .source = "qemu", .comm = "q", .vm_st = &vmx },
	};
	struct prom_opts def = { .groups = PROM_G_DEFAULT };
	struct prom_result res;
	unsigned int g;
	char *out, msg[4096];
	int ret;

	ok(!prom_parse_groups("scalars,histograms", &g) &&
	   g == (PROM_G_SCALARS | PROM_G_HISTOGRAMS), "groups: scalars,histograms");
	ok(!prom_parse_groups("all", &g) && g == PROM_G_ALL, "groups: all");
	ok(prom_parse_groups("scalars,nope", &g) == -1, "groups: unknown name refused");
	if (load(&svm, "kvm-1", vm_stats, NVM, fill_vm) ||
	    load(&vmx, "kvm-2", vmx_vm_stats, NVMX, fill_vmx) ||
	    load(&c0, "kvm-1/vcpu-0", vcpu_stats, NVCPU, fill_vcpu0)) {
		ok(0, "opts: images parse");
		return;
	}
	out = render_opts(vms, 2, &def, &res, &ret);
	ok(ret == 0, "default render returns 0");
	ok(!strstr(out, "kvm_vcpu_"), "default: no per-vCPU series");
	ok(!strstr(out, "_bucket") && !strstr(out, "halt_wait_seconds_count"),
	   "default: no histograms");
	expect(out, "kvm_vm_exits_by_reason_total{vm=\"a\",vendor=\"svm\",reason=\"io\"} 2000");
	expect(out, "kvm_vm_exits_by_reason_total{vm=\"bob/x\",pid=\"2\",vendor=\"vmx\",reason=\"IO_INSTRUCTION\"} 77");
	ok(count_prefix(out, "# TYPE kvm_vm_exits_by_reason_total ") == 1 &&
	   count_prefix(out, "kvm_vm_exits_by_reason_total{") == 120 + 81,
	   "SVM and VMX exit reasons in one family, every reason (%d series)",
	   count_prefix(out, "kvm_vm_exits_by_reason_total{"));
	ok(count_prefix(out, "kvm_vm_exits_total{vm=\"bob/x\",pid=\"2\"} ") == 1,
	   "a VM marked ambiguous carries a pid label");
	ret = promtool(out, msg, sizeof(msg));
	if (!ok(ret == 0, "promtool accepts the default exposition (status %d)", ret))
		tap_diag("%s", msg);
	free(out);

	def.vcpu = 1;
	out = render_opts(vms, 2, &def, &res, &ret);
	ok(ret == 0 && strstr(out, "kvm_vcpu_exits_total{vm=\"a\",vcpu=\"0\"} 12345"),
	   "--vcpu adds the per-vCPU series");
	free(out);
	def.groups = PROM_G_SCALARS;
	def.vcpu = 0;
	out = render_opts(vms, 2, &def, &res, &ret);
	ok(ret == 0 && !strstr(out, "exits_by_reason") && strstr(out, "kvm_vm_exits_total{"),
	   "--collect scalars: no exit reasons, counters stay");
	free(out);
	kvmstats_close(&svm);
	kvmstats_close(&vmx);
	kvmstats_close(&c0);
}

/*
 * Exits by class: one family for SVM and VMX hosts with the same class
 * names and no vendor label, every class from the start, the sums of the
 * reasons; and which reasons the by_reason family keeps (--exit-reasons).
 */
static void test_exit_classes(void)
{
	struct kvmstats svm = { 0 }, vmx = { 0 }, c0 = { 0 }, z0 = { 0 };
	struct prom_vcpu vc[] = { { "0", &c0 }, { "1", &z0 } };
	struct prom_vm vms[] = {
		{ .vm = "a", .info_pid = "1", .uuid = "", .source = "libvirt",
		  .comm = "q", .vm_st = &svm, .nr_vcpus = 2, .vcpus = vc },
		{ .vm = "b", .info_pid = "2", .uuid = "", .source = "libvirt",
		  .comm = "q", .vm_st = &vmx },
	};
	struct prom_opts o = { .groups = PROM_G_DEFAULT, .vcpu = 1 };
	unsigned int classes = kvmstats_exit_class_count();
	struct prom_result res;
	char *out, msg[4096];
	int ret, r;

	ok(!prom_parse_reasons("seen", &r) && r == PROM_REASONS_SEEN &&
	   !prom_parse_reasons("all", &r) && r == PROM_REASONS_ALL &&
	   !prom_parse_reasons("none", &r) && r == PROM_REASONS_NONE &&
	   prom_parse_reasons("some", &r) == -1 && prom_parse_reasons("", &r) == -1,
	   "--exit-reasons: all, seen, none; anything else refused");
	ok(classes >= 6 && classes <= PROM_MAX_CLASSES,
	   "exit classes: %u, within PROM_MAX_CLASSES", classes);
	if (load(&svm, "kvm-1", vm_stats, NVM, fill_vm) ||
	    load(&vmx, "kvm-2", vmx_vm_stats, NVMX, fill_vmx) ||
	    load(&c0, "kvm-1/vcpu-0", vcpu_stats, NVCPU, fill_vcpu0) ||
	    load(&z0, "kvm-1/vcpu-1", vcpu_stats, NVCPU, fill_zero_reasons)) {
		ok(0, "classes: images parse");
		return;
	}
	out = render_opts(vms, 2, &o, &res, &ret);
	ok(ret == 0, "classes: render returns 0");
	expect(out, "# TYPE kvm_vm_exits_by_class_total counter");
	expect(out, "kvm_vm_exits_by_class_total{vm=\"a\",class=\"io\"} 2000");
	expect(out, "kvm_vm_exits_by_class_total{vm=\"b\",class=\"io\"} 77");
	expect(out, "kvm_vm_exits_by_class_total{vm=\"b\",class=\"npf\"} 0");
	expect(out, "kvm_vcpu_exits_by_class_total{vm=\"a\",vcpu=\"0\",class=\"io\"} 1000");
	expect(out, "kvm_vcpu_exits_by_class_total{vm=\"a\",vcpu=\"0\",class=\"npf\"} 3");
	expect(out, "kvm_vcpu_exits_by_class_total{vm=\"a\",vcpu=\"0\",class=\"other\"} 2");
	expect(out, "kvm_vcpu_exits_by_class_total{vm=\"a\",vcpu=\"0\",class=\"hlt\"} 0");
	expect(out, "kvm_vcpu_exits_by_class_total{vm=\"a\",vcpu=\"1\",class=\"io\"} 0");
	ok(count_prefix(out, "# TYPE kvm_vm_exits_by_class_total ") == 1 &&
	   count_prefix(out, "kvm_vm_exits_by_class_total{vm=\"a\",") == (int)classes &&
	   count_prefix(out, "kvm_vm_exits_by_class_total{vm=\"b\",") == (int)classes,
	   "SVM and VMX in one class family, every class of each (%u)", classes);
	ok(!strstr(out, "exits_by_class_total{vm=\"a\",vendor") &&
	   !strstr(out, "exits_by_class_total{vm=\"b\",vendor"),
	   "the class family has no vendor label");
	/* the default of the library's caller: reasons from the start */
	ok(count_prefix(out, "kvm_vcpu_exits_by_reason_total{") == 2 * 120,
	   "reasons all: every reason of each vCPU (%d)",
	   count_prefix(out, "kvm_vcpu_exits_by_reason_total{"));
	ret = promtool(out, msg, sizeof(msg));
	if (!ok(ret == 0, "promtool accepts the classes (status %d)", ret))
		tap_diag("%s", msg);
	free(out);

	o.reasons = PROM_REASONS_SEEN;
	out = render_opts(vms, 2, &o, &res, &ret);
	ok(ret == 0 && count_prefix(out, "kvm_vcpu_exits_by_reason_total{") == 3 &&
	   has_line(out, "kvm_vcpu_exits_by_reason_total{vm=\"a\",vendor=\"svm\",vcpu=\"0\",reason=\"npf\"} 3") &&
	   !strstr(out, "exits_by_reason_total{vm=\"a\",vendor=\"svm\",vcpu=\"1\""),
	   "reasons seen: only the 3 counted, none of the idle vCPU (%d)",
	   count_prefix(out, "kvm_vcpu_exits_by_reason_total{"));
	ok(count_prefix(out, "kvm_vm_exits_by_reason_total{") == 2 &&
	   has_line(out, "kvm_vm_exits_by_reason_total{vm=\"b\",vendor=\"vmx\",reason=\"IO_INSTRUCTION\"} 77"),
	   "reasons seen: the VMs' one reason each");
	ok(count_prefix(out, "kvm_vcpu_exits_by_class_total{vm=\"a\",vcpu=\"1\",") == (int)classes,
	   "reasons seen: the class family keeps every class, zeros too");
	expect(out, "# HELP kvm_vcpu_exits_by_reason_total KVM vCPU exits by hardware exit reason (stat exit_reasons_svm, _vmx or _arm64, by vendor), the reasons seen so far.");
	ret = promtool(out, msg, sizeof(msg));
	if (!ok(ret == 0, "promtool accepts reasons seen (status %d)", ret))
		tap_diag("%s", msg);
	free(out);

	o.reasons = PROM_REASONS_NONE;
	out = render_opts(vms, 2, &o, &res, &ret);
	ok(ret == 0 && !strstr(out, "exits_by_reason") &&
	   count_prefix(out, "kvm_vm_exits_by_class_total{") == 2 * (int)classes,
	   "reasons none: no by_reason family, the classes stay");
	free(out);
	kvmstats_close(&svm);
	kvmstats_close(&vmx);
	kvmstats_close(&c0);
	kvmstats_close(&z0);
}

/*
 * Identity through systemd-machined: fake_machined (FAKE_MACHINED, built
 * beside this test) on a private dbus-daemon stands in for it.  A machine
 * libvirt registered is named by its domain and UUID, another VM machine
 * by its name; a container, a pid machined does not know, a machined that
 * is gone, hangs or has no bus fall back to OWNER/NAME, which no other
 * user can produce, and none of those stalls a scrape.
 */
#define LIBVIRT_ID	"8f5b8e3c1a2b4c5d9e8f0a1b2c3d4e5f"
#define LIBVIRT_UUID	"8f5b8e3c-1a2b-4c5d-9e8f-0a1b2c3d4e5f"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A child that waits to be killed: a pid for machined to know. */
static pid_t idle_child(void)
{
	pid_t p = fork();

	if (!p) {
		pause();
		_exit(0);
	}
	return p;
}

/* fake_machined with @args on the private bus; its pid, or -1. */
static pid_t start_fake(const char *bin, const char *args)
{
	char cmd[512], line[16] = "";
	FILE *f;
	int fds[2];
	pid_t p;

	if (pipe(fds))
		return -1;
	p = fork();
	if (!p) {
		dup2(fds[1], 1);
		close(fds[0]);
		snprintf(cmd, sizeof(cmd), "exec '%s' %s", bin, args);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	if (!f || !fgets(line, sizeof(line), f) || strcmp(line, "ready\n")) {
		if (f)
			fclose(f);
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
		return -1;
	}
	fclose(f);
	return p;
}

static void stop(pid_t p)
{
	if (p > 0) {
		kill(p, SIGKILL);
		waitpid(p, NULL, 0);
	}
}

static void test_identity(void)
{
	const char *fake = getenv("FAKE_MACHINED");
	char dir[] = "/tmp/kvmstats-bus.XXXXXX", conf[128], cmd[512], args[512];
	char busaddr[160], pidbuf[32] = "", logf[160], line[512];
	unsigned long errs[4] = { 0 };
	int errfd = -1, nlog;
	pid_t vm1 = idle_child(), vm2 = idle_child(), ct = idle_child(), fk;
	pid_t bus = -1;
	struct vm_identity id;
	double t;
	FILE *f;

	/* Without machined: the command line, qualified by the owner. */
	identity_of(0, 4242, 0, "web1", "u-1", &id);
	ok(!strcmp(id.vm, "root/web1") && !strcmp(id.uuid, "u-1") &&
	   !strcmp(id.source, "qemu"), "identity: -name qualified by the owner: %s", id.vm);
	identity_of(0, 4242, 0, NULL, NULL, &id);
	ok(!strcmp(id.vm, "root/pid-4242"), "identity: no -name: %s", id.vm);
	identity_of(0, 4242, 54321, "web1", NULL, &id);
	ok(strchr(id.vm, '/') && strcmp(id.vm, "web1") && strncmp(id.vm, "root/", 5),
	   "identity: another user's web1 is not web1 nor root's: %s", id.vm);

	if (!ok(fake && mkdtemp(dir), "identity: FAKE_MACHINED set, a directory for a private bus"))
		goto out;
	snprintf(conf, sizeof(conf), "%s/bus.conf", dir);
	f = fopen(conf, "w");
	if (f) {
		fprintf(f, "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
			" \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
			"<busconfig><type>custom</type><listen>unix:path=%s/bus</listen>\n"
			"<auth>EXTERNAL</auth><policy context=\"default\">\n"
			"<allow send_destination=\"*\"/><allow receive_sender=\"*\"/>\n"
			"<allow own=\"*\"/>\n"
			"</policy></busconfig>\n", dir);
		fclose(f);
	}
	/* (It warns that it may not raise its fd limit: not ours to see.) */
	snprintf(cmd, sizeof(cmd), "dbus-daemon --config-file=%s --fork --print-pid 2>/dev/null",
		 conf);
	f = popen(cmd, "r");
	if (f) {
		if (fgets(pidbuf, sizeof(pidbuf), f))
			bus = atoi(pidbuf);
		pclose(f);
	}
	if (!ok(bus > 0, "identity: a private dbus-daemon (package dbus-daemon)"))
		goto out;
	snprintf(busaddr, sizeof(busaddr), "unix:path=%s/bus", dir);
	setenv("DBUS_SYSTEM_BUS_ADDRESS", busaddr, 1);
	snprintf(args, sizeof(args),
		 "%d:qemu-7-web1:vm:libvirt-qemu:" LIBVIRT_ID " "
		 "%d:box1:vm:systemd-vmspawn:00112233445566778899aabbccddeeff "
		 "%d:ct1:container:systemd-nspawn:00112233445566778899aabbccddeef0",
		 (int)vm1, (int)vm2, (int)ct);
	fk = start_fake(fake, args);
	ok(fk > 0, "identity: fake_machined on the private bus");

	identity_of(1, vm1, 0, "spoof", "u", &id);
	ok(!strcmp(id.vm, "web1") && !strcmp(id.source, "libvirt") &&
	   !strcmp(id.uuid, LIBVIRT_UUID),
	   "identity: libvirt's machine qemu-7-web1: domain web1, its UUID (%s %s %s)",
	   id.vm, id.uuid, id.source);
	identity_of(1, vm2, 1000, "spoof", NULL, &id);
	ok(!strcmp(id.vm, "box1") && !strcmp(id.source, "machined") &&
	   !strcmp(id.uuid, "00112233-4455-6677-8899-aabbccddeeff"),
	   "identity: another VM machine: its machine name (%s %s %s)",
	   id.vm, id.uuid, id.source);
	identity_of(1, ct, 0, "ct", NULL, &id);
	ok(!strcmp(id.vm, "root/ct") && !strcmp(id.source, "qemu"),
	   "identity: a container is no VM: the command line (%s)", id.vm);
	identity_of(1, getpid(), 0, "mine", NULL, &id);
	ok(!strcmp(id.vm, "root/mine"), "identity: a pid machined does not know (%s)", id.vm);
	identity_of(0, vm1, 0, "spoof", NULL, &id);
	ok(!strcmp(id.vm, "root/spoof"), "identity: machined not asked when told not to (%s)",
	   id.vm);

	ok(identity_machined_errors() == 0, "identity: no failed lookup counted so far (%lu)",
	   identity_machined_errors());
	/*
	 * The failures below are counted; their causes are logged on
	 * standard error, to a file here, once each however many lookups.
	 */
	snprintf(logf, sizeof(logf), "%s/err", dir);
	fflush(stderr);
	errfd = dup(2);
	f = fopen(logf, "w");
	if (f) {
		dup2(fileno(f), 2);
		fclose(f);
	}
	/* machined gone: an error at once, not a wait. */
	stop(fk);
	t = now_s();
	identity_of(1, vm1, 0, "web1", NULL, &id);
	t = now_s() - t;
	errs[0] = identity_machined_errors();
	ok(!strcmp(id.vm, "root/web1") && t < 1.5,
	   "identity: no machined on the bus: the command line, in %.2f s", t);
	/* machined hung: the call gives up after its timeout. */
	fk = start_fake(fake, "--hang");
	t = now_s();
	identity_of(1, vm1, 0, "web1", NULL, &id);
	t = now_s() - t;
	errs[1] = identity_machined_errors();
	ok(fk > 0 && !strcmp(id.vm, "root/web1") && t < 5,
	   "identity: a hung machined: the command line after %.2f s (timeout 2 s)", t);
	stop(fk);
	/* No bus: not tried again at every new VM. */
	identity_close();
	setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/bus", 1);
	t = now_s();
	identity_of(1, vm1, 0, "web1", NULL, &id);
	identity_of(1, vm2, 0, "web2", NULL, &id);
	t = now_s() - t;
	ok(!strcmp(id.vm, "root/web2") && t < 1.5,
	   "identity: no system bus: the command line, in %.2f s", t);
	errs[2] = identity_machined_errors();
	/* The same cause again, after a reconnection: counted, not logged. */
	identity_close();
	identity_of(1, vm1, 0, "web1", NULL, &id);
	errs[3] = identity_machined_errors();
	identity_close();
	unsetenv("DBUS_SYSTEM_BUS_ADDRESS");
	fflush(stderr);
	if (errfd >= 0) {
		dup2(errfd, 2);
		close(errfd);
	}
	ok(errs[0] == 0 && errs[1] == 1 && errs[2] == 2 && errs[3] == 3,
	   "identity: failed lookups counted: machined gone 0, hung 1, no bus 2 (once for two VMMs), again 3 (%lu %lu %lu %lu)",
	   errs[0], errs[1], errs[2], errs[3]);
	nlog = 0;
	f = fopen(logf, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "systemd-machined could not be asked") &&
		    strstr(line, "kvm_exporter_machined_errors_total"))
			nlog++;
		else
			tap_diag("unexpected: %s", line);
	}
	if (f)
		fclose(f);
	ok(nlog == 2, "identity: logged once per cause (hung, no bus): %d lines", nlog);
out:
	stop(bus);
	stop(vm1);
	stop(vm2);
	stop(ct);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (dir[strlen(dir) - 1] != 'X' && system(cmd))
		tap_diag("could not remove %s", dir);
}

/*
 * The shipped alert rules: `promtool test rules` (tests/exporter/
 * rules_test.yml, run from tests/exporter as make does), and that a rule
 * file that does not fire them fails the same test.
 */
static void test_rules(void)
{
	int st;

	st = system("promtool check rules ../../tools/exporter/prometheus/kvm-statsfd.rules.yml > /dev/null 2>&1");
	ok(st == 0, "promtool check rules accepts kvm-statsfd.rules.yml (status %d)", st);
	st = system("promtool test rules rules_test.yml > /dev/null 2>&1");
	ok(st == 0, "promtool test rules: every alert fires where it should, not elsewhere (status %d)",
	   st);
	/* A storm threshold nothing reaches: the test must notice. */
	st = system("d=$(mktemp -d) && mkdir -p $d/a/b $d/tools/exporter/prometheus && "
		    "sed 's/> 100000/> 1e12/' ../../tools/exporter/prometheus/kvm-statsfd.rules.yml "
		    "> $d/tools/exporter/prometheus/kvm-statsfd.rules.yml && cp rules_test.yml $d/a/b/ && "
		    "(cd $d/a/b && promtool test rules rules_test.yml) > /dev/null 2>&1; r=$?; rm -rf $d; exit $r");
	ok(st != 0, "promtool test rules fails when the storm alert cannot fire (status %d)", st);
}

/* The checker must catch what promtool lets through. */
static void test_checker(void)
{
	static const char bad_cum[] =
		"# HELP h_seconds x\n# TYPE h_seconds histogram\n"
		"h_seconds_bucket{le=\"1\"} 3\nh_seconds_bucket{le=\"+Inf\"} 2\n"
		"h_seconds_sum 1\nh_seconds_count 2\n";
	static const char bad_count[] =
		"# HELP h_seconds x\n# TYPE h_seconds histogram\n"
		"h_seconds_bucket{le=\"1\"} 1\nh_seconds_bucket{le=\"+Inf\"} 2\n"
		"h_seconds_sum 1\nh_seconds_count 3\n";
	static const char no_sum[] =
		"# HELP h_seconds x\n# TYPE h_seconds histogram\n"
		"h_seconds_bucket{le=\"+Inf\"} 2\nh_seconds_count 2\n";

	tap_diag("the checker on broken input (diagnostics expected):");
	ok(check_exposition(bad_cum) > 0, "checker: non-cumulative buckets caught");
	ok(check_exposition(bad_count) > 0, "checker: +Inf != _count caught");
	ok(check_exposition(no_sum) > 0, "checker: missing _sum caught");
}

/*
 * arm64 hosts: the exception classes join the one exit-reason family with
 * vendor "arm64", under the kernel's class names, and the class family
 * with the same class names as x86 (a stage-2 abort is npf, HVC a
 * hypercall, a system-register trap msr); the kinds histogram, whose TRAP
 * bucket the classes refine, is in neither: it is a family of its own,
 * by kind.
 */
static void test_arm64_reasons(void)
{
	struct kvmstats a = { 0 };
	struct prom_vm vms[] = {
		{ .vm = "c", .info_pid = "3", .uuid = "", .source = "qemu",
		  .comm = "q", .vm_st = &a },
	};
	struct prom_opts o = { .groups = PROM_G_DEFAULT };
	struct prom_result res;
	char *out, msg[4096];
	int ret;

	if (load(&a, "kvm-3", arm64_vm_stats, NARM64, fill_arm64)) {
		ok(0, "arm64: image parses");
		return;
	}
	out = render_opts(vms, 1, &o, &res, &ret);
	ok(ret == 0, "arm64: render returns 0");
	expect(out, "kvm_vm_exits_by_reason_total{vm=\"c\",vendor=\"arm64\",reason=\"HVC64\"} 158");
	expect(out, "kvm_vm_exits_by_reason_total{vm=\"c\",vendor=\"arm64\",reason=\"DABT_LOW\"} 5");
	expect(out, "kvm_vm_exits_by_reason_total{vm=\"c\",vendor=\"arm64\",reason=\"EC_0x0b\"} 0");
	ok(count_prefix(out, "kvm_vm_exits_by_reason_total{vm=\"c\",vendor=\"arm64\",") == 64,
	   "arm64: every exception class a reason (%d of 64)",
	   count_prefix(out, "kvm_vm_exits_by_reason_total{vm=\"c\",vendor=\"arm64\","));
	expect(out, "kvm_vm_exits_by_class_total{vm=\"c\",class=\"hypercall\"} 158");
	expect(out, "kvm_vm_exits_by_class_total{vm=\"c\",class=\"npf\"} 5");
	expect(out, "kvm_vm_exits_by_class_total{vm=\"c\",class=\"msr\"} 7");
	expect(out, "kvm_vm_exits_by_class_total{vm=\"c\",class=\"io\"} 0");
	ok(!strstr(out, "reason=\"TRAP\"") && !strstr(out, "reason=\"IRQ\""),
	   "arm64: the kinds histogram is not in the exit-reason family");
	expect(out, "# TYPE kvm_vm_exits_by_kind_total counter");
	expect(out, "kvm_vm_exits_by_kind_total{vm=\"c\",kind=\"IRQ\"} 9");
	expect(out, "kvm_vm_exits_by_kind_total{vm=\"c\",kind=\"TRAP\"} 170");
	expect(out, "kvm_vm_exits_by_kind_total{vm=\"c\",kind=\"other\"} 0");
	ok(count_prefix(out, "kvm_vm_exits_by_kind_total{") == 5,
	   "arm64: exits by kind, every kind (%d of 5)",
	   count_prefix(out, "kvm_vm_exits_by_kind_total{"));
	ret = promtool(out, msg, sizeof(msg));
	if (!ok(ret == 0, "promtool accepts an arm64 VM (status %d)", ret))
		tap_diag("%s", msg);
	free(out);
	kvmstats_close(&a);
}

int main(void)
{
	test_format_double();
	test_names();
	test_render();
	test_opts();
	test_exit_classes();
	test_arm64_reasons();
	test_identity();
	test_rules();
	test_checker();
	return tap_done();
}
