// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark (a): the in-kernel cost of the exit-path probes, per VM exit.
 *
 * Needs the benchmark build of the module (make bench), which has
 * /sys/module/kvm_statsfd/bench/probe_cost: it drives the kvm_exit and
 * kvm_entry probes in a loop on a real vCPU and, in the same preemption-
 * disabled chunks, a plain u64 increment (what upstream does per exit).
 * Prints one "bench:" line with both costs and their difference.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ks_util.h"

#define SYSFS "/sys/module/kvm_statsfd/bench/probe_cost"

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Also reports the module's memory per VM, per vCPU and per open fd. */
int main(int argc, char **argv)
{
	unsigned long long iters = argc > 1 ? strtoull(argv[1], NULL, 0) : 200000;
	unsigned long long r[6];
	int ret, loaded_here = 0;
	struct ks_vm vm;
	char buf[128];
	FILE *f;

	if (!ks_module_loaded()) {
		ret = ks_module_load("");
		if (ret) {
			fprintf(stderr, "probe_cost: cannot load %s: %s\n",
				ks_module_path(), strerror(-ret));
			return 1;
		}
		loaded_here = 1;
	}

	ret = ks_vm_create(&vm, ks_code_out_hlt, ks_code_out_hlt_len, 1);
	if (ret) {
		fprintf(stderr, "probe_cost: cannot create a VM: %s\n", strerror(-ret));
		return 1;
	}
	/* Run it once so the vCPU has exit state to read. */
	ks_vcpu_run(&vm.vcpu[0]);
	ks_vcpu_run(&vm.vcpu[0]);

	f = fopen(SYSFS, "w");
	if (!f || fprintf(f, "%d %llu\n", vm.vcpu[0].fd, iters) < 0 || fclose(f)) {
		fprintf(stderr, "probe_cost: %s: %s (benchmark build loaded?)\n",
			SYSFS, strerror(errno));
		return 1;
	}
	f = fopen(SYSFS, "r");
	if (!f || !fgets(buf, sizeof(buf), f) ||
	    sscanf(buf, "%llu %llu %llu %llu %llu %llu", &r[0], &r[1], &r[2],
		   &r[3], &r[4], &r[5]) != 6 || !r[0]) {
		fprintf(stderr, "probe_cost: bad result from %s\n", SYSFS);
		return 1;
	}
	fclose(f);
	printf("bench: probe_cost iterations=%llu probes_ns_per_exit=%.1f probes_cycles_per_exit=%.1f plain_inc_ns=%.2f plain_inc_cycles=%.2f extra_ns_per_exit=%.1f clock_reads_ns_per_exit=%.1f\n",
	       r[0], (double)r[1] / r[0], (double)r[2] / r[0],
	       (double)r[3] / r[0], (double)r[4] / r[0],
	       (double)(r[1] - r[3]) / r[0], (double)r[5] / r[0]);
	printf("bench: memory vm_bytes=%ld vcpu_bytes=%ld stats_fd_bytes=%ld\n",
	       read_long("/sys/module/kvm_statsfd/objects/vm_bytes"),
	       read_long("/sys/module/kvm_statsfd/objects/vcpu_bytes"),
	       read_long("/sys/module/kvm_statsfd/objects/file_bytes"));
	ks_vm_destroy(&vm);
	if (loaded_here)
		ks_module_unload();
	return 0;
}
