/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Between the attaching of the probes to KVM's four tracepoints, the same
 * on every architecture (src/probes.c), and the probes themselves, which
 * each architecture writes (src/probes_<arch>.c).
 */
#ifndef _KVM_STATSFD_PROBES_H
#define _KVM_STATSFD_PROBES_H

#include <linux/bitops.h>
#include <linux/jump_label.h>
#include <linux/types.h>

#include <kvm_statsfd/counters.h>
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

/*
 * What a probe body compiled for @set does, decided at compile time for a
 * constant set, by the static branches of the groups for KS_SET_LOAD.
 */
static __always_inline bool ks_on(unsigned long set, enum ks_group g)
{
	return set ? set & BIT(g) : ks_group_active(g);
}

/* Something reads the clock on the exit path. */
static __always_inline bool ks_timed(unsigned long set)
{
	return set ? set & KS_TIME_GROUPS : static_branch_likely(&ks_clock_on);
}

/* The exit's class is needed: for latency, or for the direction counts. */
static __always_inline bool ks_classify(unsigned long set)
{
	return ks_on(set, KS_GRP_IO_MSR) || ks_on(set, KS_GRP_LATENCY) ||
	       ks_on(set, KS_GRP_CLASS_LATENCY);
}

/* Exit latencies are measured: an exit's time is kept until it is handled. */
static __always_inline bool ks_lat_timed(unsigned long set)
{
	return ks_on(set, KS_GRP_LATENCY) || ks_on(set, KS_GRP_CLASS_LATENCY);
}

/* The userspace exit probe will look for this thread's vCPU. */
static __always_inline bool ks_tracks_run(unsigned long set)
{
	return ks_on(set, KS_GRP_USERSPACE) || ks_timed(set);
}

/*
 * The log2 bucket of @ns: 0 for 0, i for [2^(i-1), 2^i), the last one for
 * the rest.  __fls(2 * ns + 1) is fls64(ns) with no special case for 0.
 */
static __always_inline unsigned long ks_log_bucket(u64 ns)
{
	unsigned long i = __fls(2 * ns + 1);

	return i < KS_LAT_BUCKETS ? i : KS_LAT_BUCKETS - 1;
}

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
