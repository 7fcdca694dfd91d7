/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * What kvm_statsfd.ko promises its readers beyond the binary stats format
 * itself, in the one place that the module, libkvmstats, the tools, the
 * tests and Documentation/exit-reasons.rst share.
 *
 * Exit-reason histograms.  exit_reasons_svm and exit_reasons_vmx are
 * LINEAR_HIST stats with bucket_size 1 and one bucket per "dense index".
 * They are structured alike: the dense index is the hardware exit code
 * wherever that code is small, a few high codes are folded in just after,
 * and the last bucket counts every code the map does not name.  The
 * functions below convert both ways; nothing else may encode the mapping.
 *
 * Plain C with no kernel or libc dependency, so that both sides build it.
 */
#ifndef _KVM_STATSFD_UAPI_H
#define _KVM_STATSFD_UAPI_H

/* Values of KVM's x86 tracepoints' isa argument, used here as vendor ids. */
#define KVM_STATSFD_ISA_VMX	1
#define KVM_STATSFD_ISA_SVM	2

/*
 * AMD SVM: exit codes 0x000-0x0af are their own index; 0x400-0x403 (NPF,
 * AVIC_INCOMPLETE_IPI, AVIC_UNACCELERATED_ACCESS, VMGEXIT) are indexes
 * 0x0b0-0x0b3; index 0x0b4 is "other".
 */
#define KVM_STATSFD_SVM_LOW_END		0x0b0
#define KVM_STATSFD_SVM_HIGH_BASE	0x400
#define KVM_STATSFD_SVM_HIGH_COUNT	4
#define KVM_STATSFD_SVM_OTHER	(KVM_STATSFD_SVM_LOW_END + \
				 KVM_STATSFD_SVM_HIGH_COUNT)
#define KVM_STATSFD_SVM_BUCKETS	(KVM_STATSFD_SVM_OTHER + 1)

/*
 * Intel VMX: basic exit reasons (bits 15:0) 0-79 are their own index;
 * index 80 is "other".  Bit 31 (VM-entry failure) is not part of it.
 */
#define KVM_STATSFD_VMX_OTHER	80
#define KVM_STATSFD_VMX_BUCKETS	(KVM_STATSFD_VMX_OTHER + 1)

#define KVM_STATSFD_EXIT_STAT_SVM	"exit_reasons_svm"
#define KVM_STATSFD_EXIT_STAT_VMX	"exit_reasons_vmx"

/* Dense index of an SVM exit code. */
static inline unsigned int kvm_statsfd_svm_index(unsigned int code)
{
	if (code < KVM_STATSFD_SVM_LOW_END)
		return code;
	if (code - KVM_STATSFD_SVM_HIGH_BASE < KVM_STATSFD_SVM_HIGH_COUNT)
		return KVM_STATSFD_SVM_LOW_END + code - KVM_STATSFD_SVM_HIGH_BASE;
	return KVM_STATSFD_SVM_OTHER;
}

/* Dense index of a VMX exit reason. */
static inline unsigned int kvm_statsfd_vmx_index(unsigned int reason)
{
	unsigned int basic = reason & 0xffff;

	return basic < KVM_STATSFD_VMX_OTHER ? basic : KVM_STATSFD_VMX_OTHER;
}

/*
 * The hardware code of a dense index, or -1 for the "other" bucket (and
 * for an index past the histogram).
 */
static inline long kvm_statsfd_svm_code(unsigned int index)
{
	if (index < KVM_STATSFD_SVM_LOW_END)
		return index;
	if (index < KVM_STATSFD_SVM_OTHER)
		return KVM_STATSFD_SVM_HIGH_BASE + index - KVM_STATSFD_SVM_LOW_END;
	return -1;
}

static inline long kvm_statsfd_vmx_code(unsigned int index)
{
	return index < KVM_STATSFD_VMX_OTHER ? (long)index : -1;
}

#endif /* _KVM_STATSFD_UAPI_H */
