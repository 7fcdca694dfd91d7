// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A minimal monitoring agent on libkvmstats: every VM on this host, its
 * vCPUs' exits per second, once a second (or once, with -1).  Copy it.
 *
 *   vm_exits [-1]
 *
 * Needs root, or CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH, to look into the VMMs (QEMU and others).
 * Build it against the installed library:
 *
 *   cc -o vm_exits vm_exits.c $(pkg-config --cflags --libs libkvmstats)
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <kvmstats/kvmstats.h>

/* Sum of the "exits" counters of vm's vCPUs whose stats are open. */
static uint64_t total_exits(const struct kvmstats_vm *vm)
{
	const struct kvmstats_desc *d;
	uint64_t sum = 0;
	int i;

	for (i = 0; i < vm->nr_vcpus; i++) {
		if (!vm->vcpus[i].open || kvmstats_refresh(vm->vcpus[i].st))
			continue;
		d = kvmstats_find(vm->vcpus[i].st, "exits");
		if (d)
			sum += kvmstats_value(vm->vcpus[i].st, d, 0);
	}
	return sum;
}

int main(int argc, char **argv)
{
	int once = argc > 1 && !strcmp(argv[1], "-1");
	struct kvmstats_vm *vms;
	unsigned int denied;
	uint64_t before[64];
	int i, n;

	n = kvmstats_discover(&vms, 0, &denied);
	if (n < 0) {
		fprintf(stderr, "vm_exits: scanning /proc: %s\n", strerror(-n));
		return 1;
	}
	if (!n) {
		/* Nothing found is not "no VMs" when we could not look. */
		if (denied)
			fprintf(stderr, "vm_exits: %u processes could not be read (needs root, or CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH)\n",
				denied);
		else
			printf("no KVM VMs on this host\n");
		kvmstats_vms_free(vms, n);
		return denied ? 1 : 0;
	}
	if (n > 64)
		n = 64;		/* a minimal example: the first 64 */
	for (i = 0; i < n; i++) {
		/* What failed is in vms[i].err; what opened stays open. */
		if (kvmstats_vm_open(&vms[i], -1))
			fprintf(stderr, "vm_exits: %s\n", vms[i].err);
		before[i] = total_exits(&vms[i]);
	}
	do {
		sleep(1);
		for (i = 0; i < n; i++) {
			uint64_t now = total_exits(&vms[i]);

			printf("pid %d %s: %llu exits/s\n", (int)vms[i].pid,
			       vms[i].guest ? vms[i].guest : vms[i].comm,
			       (unsigned long long)(now - before[i]));
			before[i] = now;
		}
		fflush(stdout);
	} while (!once);
	kvmstats_vms_free(vms, n);	/* closes every stats fd and pidfd */
	return 0;
}
