/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rendering KVM stats files as Prometheus text exposition (format 0.0.4).
 * No discovery and no I/O beyond the FILE: unit-testable with crafted
 * stats images.  The mapping from KVM stats to metric families is
 * described in Documentation/exporter.rst.
 */
#ifndef KVM_EXPORTER_METRICS_H
#define KVM_EXPORTER_METRICS_H

#include <stdio.h>

#include "kvmstats.h"

struct prom_vcpu {
	const char *id;			/* "vcpu" label value */
	const struct kvmstats *st;	/* NULL: no stats for this vCPU */
};

/* One VMM process and the VM attributed to it. */
struct prom_vm {
	const char *pid;		/* "pid" label value */
	const char *name;		/* "name" label: guest name, NULL/"" if none */
	const char *comm;		/* kvm_vm_info's "comm" label */
	const struct kvmstats *vm;	/* VM-wide stats, NULL if not open */
	unsigned int nr_vcpus;
	const struct prom_vcpu *vcpus;
};

struct prom_result {
	unsigned int families;		/* metric families written */
	unsigned long samples;		/* sample lines written */
	/*
	 * Stats left out because their metric name was already taken by a
	 * different stat or type (two stats mapping to one name).
	 */
	unsigned int skipped;
};

/*
 * Write the exposition of every stat of every VM and vCPU, plus a
 * kvm_vm_info series per VM, to f.  Families are grouped as the format
 * requires (one HELP/TYPE each); stats are read from the kvmstats' data
 * as they are: refresh them first.  Returns 0, or -ENOMEM.
 */
int prom_render(FILE *f, const struct prom_vm *vms, unsigned int n,
		struct prom_result *res);

/*
 * The metric family name for stat d (vcpu: of a vCPU file, else of a VM
 * file) into buf; what prom_render() uses.  Returns the length, or -1 if
 * the stat is not exported.
 */
int prom_family_name(const struct kvmstats *s, const struct kvmstats_desc *d,
		     int vcpu, char *buf, size_t len);

/* Shortest decimal text that reads back as v ("1.023e-06", "0.5", "3"). */
void prom_format_double(double v, char *buf, size_t len);

#endif
