/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exporter's VMs: stats fds kept open between scrapes, a /proc rescan
 * per scrape for new VMs, and closing the fds of VMs that went away.
 */
#ifndef KVM_EXPORTER_STATE_H
#define KVM_EXPORTER_STATE_H

#include <stdio.h>

#include "kvmstats.h"
#include "identity.h"
#include "metrics.h"

struct vm_entry {
	struct kvmstats_vm p;	/* from kvmstats_discover(); owns its fds */
	char pid[16];		/* label value */
	struct vm_identity id;	/* the "vm" label and kvm_vm_info's */
	int reported;		/* p.err already printed */
	int noted;		/* p.vm_unavailable already said */
};

struct exporter {
	struct vm_entry *vms;	/* sorted by pid */
	unsigned int nr;
	int verbose;
	struct prom_opts opts;
	int use_machined;	/* ask systemd-machined for VM names */
	unsigned long errors;	/* stats fds not opened or not read */
	unsigned long races;	/* ... because their VM or VMM was going */
	unsigned long scrapes;
	unsigned int denied;	/* processes whose fds we may not read */
	int denied_said;	/* ... logged */
	/*
	 * What the rescans learnt of processes without KVM fds: each is
	 * looked into once, then again only every RECHECK_MS (a new pid at
	 * once).  NULL until the first rescan.
	 */
	struct kvmstats_scan *scan;
	/*
	 * Tests only (--synthetic-vms N:V:FILE): no discovery, synth_vms
	 * VMs of synth_vcpus vCPUs each, every stats fd a new open() of
	 * synth_file (a stats file image).
	 */
	const char *synth_file;
	unsigned int synth_vms, synth_vcpus;
};

/*
 * How long a process seen without KVM fds goes unexamined (from half of
 * it to all of it): a VMM that some process exec()s into after a scrape
 * saw that process shows up within it; a new process at the next scrape.
 */
#define EXPORTER_RECHECK_MS	10000

/*
 * One scrape: close the stats of VMs whose VMM exited, rescan /proc once,
 * open stats for new VMs and vCPUs, read every stats fd once (one pread
 * each) and write the exposition to f.  Returns 0 or -errno (then f may
 * hold a partial exposition and should not be served).
 */
int exporter_scrape(struct exporter *e, FILE *f);

/*
 * Close the VMs whose VMM exited, rescan /proc, and say once on standard
 * error when processes' fds could not be read (e->denied).  Returns 0 or
 * -errno.  exporter_scrape() starts with it.
 */
int exporter_discover(struct exporter *e);

/* Close and forget the VMs whose VMM exited (pidfd readable).  Returns how many. */
unsigned int exporter_reap(struct exporter *e);

/* Close everything. */
void exporter_free(struct exporter *e);

#endif
