/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Dense indexes of hardware exit reasons, one per vendor, for the
 * exit_reasons_* linear histograms (bucket_size 1: bucket N counts the
 * exits whose dense index is N).  The last bucket of each collects every
 * code the map does not name.  Documentation/exit-reasons.rst lists every
 * index.  These run on every VM exit: keep them branch-light and inline.
 */
#ifndef _KVM_STATSFD_EXIT_REASONS_H
#define _KVM_STATSFD_EXIT_REASONS_H

#include <linux/build_bug.h>
#include <linux/types.h>

/*
 * AMD SVM: exit codes 0x000-0x0af map to themselves (CR/DR accesses,
 * exceptions, interrupts, intercepted instructions), 0x400-0x403 (NPF and
 * the AVIC/SEV-ES exits) follow at 0x0b0-0x0b3, anything else is "other".
 */
#define KS_SVM_DENSE_LOW	0x0b0
#define KS_SVM_HIGH_BASE	0x400
#define KS_SVM_HIGH_COUNT	4
#define KS_SVM_OTHER		(KS_SVM_DENSE_LOW + KS_SVM_HIGH_COUNT)
#define KS_SVM_NR_BUCKETS	(KS_SVM_OTHER + 1)

static __always_inline u32 ks_svm_exit_index(u32 code)
{
	if (likely(code < KS_SVM_DENSE_LOW))
		return code;
	if (code - KS_SVM_HIGH_BASE < KS_SVM_HIGH_COUNT)
		return KS_SVM_DENSE_LOW + code - KS_SVM_HIGH_BASE;
	return KS_SVM_OTHER;
}

/*
 * Intel VMX: basic exit reasons (bits 15:0 of the exit reason) 0-79 map to
 * themselves; anything else is "other".  The VM-entry-failure flag (bit 31)
 * is not part of the index: such exits count under their basic reason.
 */
#define KS_VMX_OTHER		80
#define KS_VMX_NR_BUCKETS	(KS_VMX_OTHER + 1)

static __always_inline u32 ks_vmx_exit_index(u32 reason)
{
	u32 basic = reason & 0xffff;

	return likely(basic < KS_VMX_OTHER) ? basic : KS_VMX_OTHER;
}

/* Room for either vendor's histogram (SVM's is the larger). */
#define KS_EXIT_BUCKETS_MAX	KS_SVM_NR_BUCKETS
static_assert(KS_SVM_NR_BUCKETS >= KS_VMX_NR_BUCKETS);

#endif /* _KVM_STATSFD_EXIT_REASONS_H */
