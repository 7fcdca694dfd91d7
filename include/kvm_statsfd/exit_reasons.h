/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exit path's view of the exit-reason maps of include/kvm_statsfd/uapi.h
 * (the one place that defines them): the same functions, always inlined,
 * since they run on every VM exit.
 */
#ifndef _KVM_STATSFD_EXIT_REASONS_H
#define _KVM_STATSFD_EXIT_REASONS_H

#include <linux/types.h>

#include <kvm_statsfd/uapi.h>

#define KS_SVM_OTHER		KVM_STATSFD_SVM_OTHER
#define KS_SVM_NR_BUCKETS	KVM_STATSFD_SVM_BUCKETS
#define KS_VMX_OTHER		KVM_STATSFD_VMX_OTHER
#define KS_VMX_NR_BUCKETS	KVM_STATSFD_VMX_BUCKETS
#define KS_ARM64_EC_BUCKETS	KVM_STATSFD_ARM64_EC_BUCKETS
#define KS_ARM64_KINDS		KVM_STATSFD_ARM64_KINDS

static __always_inline u32 ks_svm_exit_index(u32 code)
{
	return kvm_statsfd_svm_index(code);
}

static __always_inline u32 ks_vmx_exit_index(u32 reason)
{
	return kvm_statsfd_vmx_index(reason);
}

static __always_inline u32 ks_arm64_kind(u32 ret)
{
	return kvm_statsfd_arm64_kind(ret);
}

#endif /* _KVM_STATSFD_EXIT_REASONS_H */
