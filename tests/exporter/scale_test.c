// SPDX-License-Identifier: GPL-2.0
/*
 * Scale test of the exporter's rendering: 1,000 VMs with 10 vCPUs each
 * (10,000 vCPUs), every file carrying the stats a module-loaded 6.12 host
 * serves (45 native scalars, the module's exit reasons, latency
 * histograms and userspace exits), parsed through libkvmstats' buffer
 * path (the test seam: the same validation as a stats fd) and rendered
 * with prom_render().
 *
 * Measured, reported and bounded: the render time and output size of a
 * default scrape (VM-wide series, default groups) and of the most
 * expensive one (--vcpu --collect all), and the process's peak memory.
 * Budgets are in CPU time, several times what a 2-core CI machine
 * measures (Documentation/exporter.rst, "Scale").
 *
 * Prints TAP; the last line is "N passed, N failed".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "image.h"
#include "metrics.h"
#include "tap.h"

#define NR_VMS		1000
#define VCPUS_PER_VM	10
#define NATIVE		45

/* Budgets. */
#define DEFAULT_MS	1000	/* default scrape render */
#define DEFAULT_MAXRSS_MB	200	/* 1,000 VM files parsed + one default scrape */
#define FULL_MS		60000	/* --vcpu --collect all */
#define FULL_MAXRSS_MB	2000	/* + 10,000 vCPU files + that scrape's text */

#define T(x)	KVM_STATS_TYPE_##x
#define U(x)	KVM_STATS_UNIT_##x

static struct img_stat stats[NATIVE + 32];
static char names[NATIVE][16];
static unsigned int nr_stats;

static void add(const char *name, uint32_t flags, int16_t exp, uint16_t size,
		uint32_t bucket)
{
	static uint32_t off;

	stats[nr_stats++] = (struct img_stat){ name, flags, exp, size, off, bucket };
	off += size * 8u;
}

/* The stats of a module-loaded host (Documentation/stats-fd.rst). */
static void make_stats(void)
{
	static const char *const cls[] = {
		"exit_latency_io_hist", "exit_latency_npf_hist",
		"exit_latency_msr_hist", "exit_latency_hlt_hist",
		"exit_latency_intr_hist",
	};
	static const char *const cls_ns[] = {
		"exit_latency_io_ns", "exit_latency_npf_ns", "exit_latency_msr_ns",
		"exit_latency_hlt_ns", "exit_latency_intr_ns",
	};
	unsigned int i;

	for (i = 0; i < NATIVE; i++) {
		snprintf(names[i], sizeof(names[i]), "native_%02u", i);
		add(names[i], T(CUMULATIVE) | U(NONE), 0, 1, 0);
	}
	add("exit_reasons_svm", T(LINEAR_HIST) | U(NONE), 0, 120, 1);
	add("exit_latency_hist", T(LOG_HIST) | U(SECONDS), -9, 32, 0);
	add("exit_latency_ns", T(CUMULATIVE) | U(SECONDS), -9, 1, 0);
	add("exit_latency_max_ns", T(PEAK) | U(SECONDS), -9, 1, 0);
	for (i = 0; i < 5; i++) {
		add(cls[i], T(LOG_HIST) | U(SECONDS), -9, 32, 0);
		add(cls_ns[i], T(CUMULATIVE) | U(SECONDS), -9, 1, 0);
	}
	add("guest_ns", T(CUMULATIVE) | U(SECONDS), -9, 1, 0);
	add("userspace_exits", T(LINEAR_HIST) | U(NONE), 0, 49, 1);
	add("io_in_exits", T(CUMULATIVE) | U(NONE), 0, 1, 0);
	add("io_out_exits", T(CUMULATIVE) | U(NONE), 0, 1, 0);
	add("msr_read_exits", T(CUMULATIVE) | U(NONE), 0, 1, 0);
	add("msr_write_exits", T(CUMULATIVE) | U(NONE), 0, 1, 0);
	add("mmio_reads", T(CUMULATIVE) | U(NONE), 0, 1, 0);
}

/*
 * CPU time of this process: the budgets hold on a machine busy with other
 * work too (make check runs guests beside the host tests).
 */
static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long maxrss_mb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

/* A FILE that counts what is written to it and keeps nothing. */
static ssize_t count_write(void *cookie, const char *buf, size_t len)
{
	(void)buf;
	*(size_t *)cookie += len;
	return (ssize_t)len;
}

static int parse_all(struct kvmstats *s, unsigned int n, struct img *im)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (kvmstats_parse(&s[i], im->buf, im->len))
			return -1;
	return 0;
}

int main(void)
{
	static struct kvmstats vm_st[NR_VMS], vcpu_st[NR_VMS * VCPUS_PER_VM];
	static struct prom_vcpu pv[NR_VMS * VCPUS_PER_VM];
	static struct prom_vm pm[NR_VMS];
	static char vm_names[NR_VMS][32], ids[VCPUS_PER_VM][4];
	struct prom_opts def = { .groups = PROM_G_DEFAULT };
	struct prom_opts full = { .groups = PROM_G_ALL, .vcpu = 1 };
	cookie_io_functions_t io = { .write = count_write };
	struct prom_result res;
	char *out = NULL;
	size_t len = 0, counted = 0;
	double t0, ms;
	struct img im;
	unsigned int i, k;
	long rss;
	FILE *f;
	int ret;

	make_stats();
	if (img_build(&im, "kvm-1", 48, stats, nr_stats, LAYOUT_UPSTREAM)) {
		ok(0, "image builds");
		return tap_done();
	}
	t0 = now_ms();
	ret = parse_all(vm_st, NR_VMS, &im);
	ok(!ret, "%d VM files of %u stats parsed (%.0f ms)", NR_VMS, nr_stats,
	   now_ms() - t0);
	for (i = 0; i < VCPUS_PER_VM; i++)
		snprintf(ids[i], sizeof(ids[i]), "%u", i);
	for (i = 0; i < NR_VMS; i++) {
		snprintf(vm_names[i], sizeof(vm_names[i]), "vm-%04u", i);
		pm[i] = (struct prom_vm){
			.vm = vm_names[i], .info_pid = vm_names[i] + 3, .uuid = "",
			.source = "libvirt", .comm = "qemu-system-x86",
			.vm_st = &vm_st[i], .nr_vcpus = VCPUS_PER_VM,
			.vcpus = &pv[i * VCPUS_PER_VM],
		};
		for (k = 0; k < VCPUS_PER_VM; k++)
			pv[i * VCPUS_PER_VM + k] = (struct prom_vcpu){
				ids[k], &vcpu_st[i * VCPUS_PER_VM + k] };
	}

	/* Default: what every scrape of a 1,000-VM host costs. */
	f = open_memstream(&out, &len);
	t0 = now_ms();
	ret = prom_render(f, pm, NR_VMS, &def, &res);
	fclose(f);
	ms = now_ms() - t0;
	rss = maxrss_mb();
	ok(!ret, "default scrape of %d VMs renders: %lu series, %zu KB", NR_VMS,
	   res.samples, len / 1024);
	ok(ms < DEFAULT_MS, "default scrape renders within %d ms of CPU (%.0f ms)",
	   DEFAULT_MS, ms);
	ok(rss < DEFAULT_MAXRSS_MB, "peak memory %ld MB (budget %d MB)", rss,
	   DEFAULT_MAXRSS_MB);
	/* kvm_vm_info and kvm_vm_stats_available, then the stats. */
	ok(res.samples == NR_VMS * (2 + NATIVE + 13 + 120 + 49) &&
	   !strstr(out, "kvm_vcpu_"),
	   "default: VM-wide scalars, exit reasons and userspace exits only (%lu per VM)",
	   res.samples / NR_VMS);
	free(out);

	/* Everything, per vCPU: what --vcpu --collect all costs. */
	t0 = now_ms();
	ret = parse_all(vcpu_st, NR_VMS * VCPUS_PER_VM, &im);
	ok(!ret, "%d vCPU files parsed (%.0f ms)", NR_VMS * VCPUS_PER_VM,
	   now_ms() - t0);
	f = fopencookie(&counted, "w", io);
	t0 = now_ms();
	ret = f ? prom_render(f, pm, NR_VMS, &full, &res) : -1;
	if (f)
		fclose(f);
	ms = now_ms() - t0;
	rss = maxrss_mb();
	ok(!ret, "--vcpu --collect all over %d vCPUs renders: %lu series, %zu MB",
	   NR_VMS * VCPUS_PER_VM, res.samples, counted >> 20);
	ok(ms < FULL_MS, "... within %d ms of CPU (%.0f ms)", FULL_MS, ms);
	ok(rss < FULL_MAXRSS_MB, "... peak memory %ld MB (budget %d MB, the text not kept)",
	   rss, FULL_MAXRSS_MB);

	for (i = 0; i < NR_VMS; i++)
		kvmstats_close(&vm_st[i]);
	for (i = 0; i < NR_VMS * VCPUS_PER_VM; i++)
		kvmstats_close(&vcpu_st[i]);
	img_free(&im);
	return tap_done();
}
