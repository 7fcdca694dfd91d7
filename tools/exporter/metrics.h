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

/*
 * One VMM process and the VM attributed to it.  vm is the identity every
 * series carries (Documentation/exporter.rst, "Identity"): a libvirt
 * domain name, or OWNER/NAME from QEMU's -name, which no other user can
 * produce.  pid, when set, is added to every series (used when two
 * processes of one user claim the same name).
 */
struct prom_vm {
	const char *vm;			/* "vm" label */
	const char *pid;		/* "pid" label on every series, or NULL */
	const char *info_pid;		/* kvm_vm_info's "pid" */
	const char *uuid;		/* kvm_vm_info's "uuid", "" if none */
	const char *source;		/* kvm_vm_info's "source" */
	const char *comm;		/* kvm_vm_info's "comm" label */
	const struct kvmstats *vm_st;	/* VM-wide stats, NULL if not open */
	unsigned int nr_vcpus;
	const struct prom_vcpu *vcpus;
};

/* Stat groups: what an operator pays for (--collect). */
enum {
	PROM_G_SCALARS		= 1u << 0,	/* counters and gauges */
	PROM_G_EXITS		= 1u << 1,	/* exit reasons */
	PROM_G_USERSPACE	= 1u << 2,	/* userspace_exits */
	PROM_G_HISTOGRAMS	= 1u << 3,	/* every other histogram */
};
#define PROM_G_DEFAULT	(PROM_G_SCALARS | PROM_G_EXITS | PROM_G_USERSPACE)
#define PROM_G_ALL	(PROM_G_DEFAULT | PROM_G_HISTOGRAMS)

/*
 * Which exit reasons kvm_*_exits_by_reason_total has (--exit-reasons);
 * kvm_*_exits_by_class_total always has every class.
 */
enum {
	PROM_REASONS_ALL,		/* every reason, zeros too */
	PROM_REASONS_SEEN,		/* those counted so far */
	PROM_REASONS_NONE,		/* no such family */
};

/* At least kvmstats_exit_class_count(). */
#define PROM_MAX_CLASSES	64

struct prom_opts {
	unsigned int groups;		/* PROM_G_* */
	int vcpu;			/* per-vCPU series too */
	int reasons;			/* PROM_REASONS_* */
};

/*
 * "scalars,exits", "all", "default,histograms": the group mask, or -1 for
 * an unknown name.
 */
int prom_parse_groups(const char *arg, unsigned int *groups);

/* "all", "seen", "none": PROM_REASONS_*, or -1 for anything else. */
int prom_parse_reasons(const char *arg, int *reasons);

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
 * Write the exposition of the stats of every VM (and with o->vcpu of every
 * vCPU) in the groups o->groups, plus a kvm_vm_info series per VM, to f.
 * Families are grouped as the format requires (one HELP/TYPE each); stats are read from the kvmstats' data
 * as they are: refresh them first.  Returns 0, or -ENOMEM.
 */
int prom_render(FILE *f, const struct prom_vm *vms, unsigned int n,
		const struct prom_opts *o, struct prom_result *res);

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
