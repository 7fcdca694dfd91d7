/* SPDX-License-Identifier: GPL-2.0 */
/*
 * x86 (AMD SVM, Intel VMX): see arch.h.  Implemented by src/probes_x86.c.
 */
#ifndef _KVM_STATSFD_ARCH_X86_H
#define _KVM_STATSFD_ARCH_X86_H

#include <linux/compiler.h>
#include <linux/types.h>

struct kvm_vcpu;

/* Exit classes with a latency histogram of their own. */
enum ks_exit_class {
	KS_CLASS_IO,		/* IO and MSR first: ks_probe_kvm_exit() */
	KS_CLASS_MSR,
	KS_CLASS_NPF,
	KS_CLASS_HLT,
	KS_CLASS_INTR,
	KS_NR_CLASSES,
	KS_CLASS_OTHER = KS_NR_CLASSES,	/* no histogram of its own */
};

/*
 * The classes' latency stats, in enum order: { histogram, total } each.
 */
#define KS_CLASS_STAT_NAMES {						\
	{ "exit_latency_io_hist", "exit_latency_io_ns" },		\
	{ "exit_latency_msr_hist", "exit_latency_msr_ns" },		\
	{ "exit_latency_npf_hist", "exit_latency_npf_ns" },		\
	{ "exit_latency_hlt_hist", "exit_latency_hlt_ns" },		\
	{ "exit_latency_intr_hist", "exit_latency_intr_ns" },		\
}

/*
 * I/O and MSR exits by class and direction: index 2 * class + bit, where
 * class is KS_CLASS_IO or KS_CLASS_MSR and bit is what SVM's exit_info_1
 * says in bit 0 for both (IN, WRITE).
 */
enum ks_dir {
	KS_DIR_IO_OUT,
	KS_DIR_IO_IN,
	KS_DIR_MSR_READ,
	KS_DIR_MSR_WRITE,
	KS_NR_DIRS,
};

/* The io_msr group's counters by direction, in enum order. */
#define KS_DIR_STAT_NAMES {						\
	"io_out_exits", "io_in_exits", "msr_read_exits", "msr_write_exits" \
}

/*
 * The exit_reasons group is the vendor's histogram alone
 * (ks_exit_buckets() words): no stats after it.
 */
#define KS_EXIT_EXTRA_WORDS	0
#define KS_EXIT_EXTRA_NAME	NULL

/* Per-vCPU state of the probes, in the exit path's cache line. */
struct ks_vcpu_arch {
	/* SVM: the probes read the exit from the VMCB (ks_svm_vmcb_ok()). */
	bool svm_vmcb;
};

/*
 * get_exit_info()'s answers, written on every exit: in the vCPU state
 * rather than on the probe's stack, which would cost a stack canary.
 */
struct ks_vcpu_exit {
	u32 reason;
	u32 intr_info;
	u32 error_code;
	u64 info1;
	u64 info2;
};

/* The host's vendor is AMD (or Hygon): SVM, else VMX. */
bool ks_vendor_is_svm(void);

/*
 * Single-writer updates that readers may load concurrently: one x86
 * read-modify-write instruction each, so one whole store, never torn.
 * WRITE_ONCE(*c, *c + 1) would say the same in three instructions.
 */
static __always_inline void ks_inc(u64 *counter)
{
	asm volatile("incq %0" : "+m" (*counter));
}

static __always_inline void ks_add(u64 *counter, u64 value)
{
	asm volatile("addq %1, %0" : "+m" (*counter) : "er" (value));
}

#endif /* _KVM_STATSFD_ARCH_X86_H */
