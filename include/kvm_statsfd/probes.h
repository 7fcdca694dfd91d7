/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between the attaching of the probes to KVM's four tracepoints, the same
 * on every architecture (src/probes.c), and the probes themselves, which
 * each architecture writes (src/probes_<arch>.c).
 */
#ifndef _KVM_STATSFD_PROBES_H
#define _KVM_STATSFD_PROBES_H

#include <linux/bits.h>

#include <kvm_statsfd/layout.h>

/*
 * Each probe body is compiled for a set of groups @set: a constant mask,
 * for the loads that matter most (every group, the default groups, the
 * counting groups), where the compiler drops what is off and no static
 * branch is left; or KS_SET_LOAD, where each group is a static branch
 * patched at load.
 */
#define KS_SET_LOAD		0UL
#define KS_SET_ALL		GENMASK(KS_NR_GROUPS - 1, 0)
#define KS_SET_COUNTING		(BIT(KS_GRP_EXIT_REASONS) | BIT(KS_GRP_IO_MSR) | \
				 BIT(KS_GRP_USERSPACE))
#define KS_TIME_GROUPS		(BIT(KS_GRP_LATENCY) | \
				 BIT(KS_GRP_CLASS_LATENCY) | \
				 BIT(KS_GRP_GUEST_TIME))

/* The probe this load attaches to each of KVM's tracepoints. */
struct ks_probe_funcs {
	void *exit;		/* kvm_exit */
	void *entry;		/* kvm_entry */
	void *userspace_exit;	/* kvm_userspace_exit */
	void *mmio;		/* kvm_mmio */
};

/*
 * probes_<arch>.c: set up for a load serving the groups @set (a mask of
 * enum ks_group) and give its probes: the bodies compiled for exactly
 * @set where there are, the KS_SET_LOAD ones otherwise.  src/probes.c
 * attaches only those the groups need.
 */
void ks_probes_arch_init(unsigned long set, struct ks_probe_funcs *f);

#endif /* _KVM_STATSFD_PROBES_H */
