// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Names of the buckets of the module's exit-reason histograms.
 *
 * The bucket <-> code map is include/kvm_statsfd/uapi.h's alone
 * (kvm_statsfd_svm_code(), kvm_statsfd_vmx_code()); the names are the
 * kernel's own, from the SVM_EXIT_REASONS and VMX_EXIT_REASONS tables of
 * the uapi <asm/svm.h> and <asm/vmx.h> the tools are built against: the
 * strings perf and the kvm_exit tracepoint show, spelled exactly as the
 * kernel spells them ("io", "hypercall", "PF excp", "read_rt",
 * "IO_INSTRUCTION").  A code that has a bucket of its own but no entry in
 * the kernel's table is "code_0x%03x" (SVM) or "reason_%u" (VMX); the last
 * bucket is "other".  Documentation/exit-reasons.rst lists the result and
 * a unit test compares the two.
 */
#include <stdio.h>
#include <string.h>

#include <linux/kvm.h>	/* the *_VECTOR constants SVM_EXIT_REASONS uses */
#include <asm/svm.h>
#include <asm/vmx.h>

#include "kvm_statsfd/uapi.h"
#include "kvmstats.h"

#define SVM_BUCKETS	KVM_STATSFD_SVM_BUCKETS
#define SVM_OTHER	KVM_STATSFD_SVM_OTHER
#define VMX_BUCKETS	KVM_STATSFD_VMX_BUCKETS
#define VMX_OTHER	KVM_STATSFD_VMX_OTHER

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

struct kernel_exit_name {
	unsigned long long code;
	const char *name;
};

/* The kernel's tables, verbatim. */
static const struct kernel_exit_name svm_kernel[] = { SVM_EXIT_REASONS };
static const struct kernel_exit_name vmx_kernel[] = { VMX_EXIT_REASONS };

/* Bucket -> kernel name, NULL where the kernel's table has none. */
static const char *svm_names[SVM_BUCKETS];
static const char *vmx_names[VMX_BUCKETS];

/*
 * Fill a bucket table from a kernel table through uapi.h's inverse map:
 * bucket i names code(i) if the kernel lists it (its first entry wins).
 * Runs once, before main() and so before any thread of the exporter.
 */
static void fill(const char **names, unsigned int buckets,
		 long (*code_of)(unsigned int),
		 const struct kernel_exit_name *k, size_t nk)
{
	unsigned int i;
	size_t j;
	long code;

	for (i = 0; i < buckets; i++) {
		code = code_of(i);
		if (code < 0)
			continue;
		for (j = 0; j < nk; j++) {
			if (k[j].code == (unsigned long long)code) {
				names[i] = k[j].name;
				break;
			}
		}
	}
}

static long svm_code(unsigned int i)
{
	return kvm_statsfd_svm_code(i);
}

static long vmx_code(unsigned int i)
{
	return kvm_statsfd_vmx_code(i);
}

__attribute__((constructor)) static void exit_names_init(void)
{
	fill(svm_names, SVM_BUCKETS, svm_code, svm_kernel, ARRAY_SIZE(svm_kernel));
	fill(vmx_names, VMX_BUCKETS, vmx_code, vmx_kernel, ARRAY_SIZE(vmx_kernel));
}

static int svm_name(unsigned int i, char *buf, size_t len)
{
	long code;

	if (i >= SVM_BUCKETS)
		return -1;
	if (svm_names[i])
		return snprintf(buf, len, "%s", svm_names[i]);
	code = kvm_statsfd_svm_code(i);
	if (code < 0)
		return i == SVM_OTHER ? snprintf(buf, len, "other") : -1;
	return snprintf(buf, len, "code_0x%03lx", code);
}

static int vmx_name(unsigned int i, char *buf, size_t len)
{
	long code;

	if (i >= VMX_BUCKETS)
		return -1;
	if (vmx_names[i])
		return snprintf(buf, len, "%s", vmx_names[i]);
	code = kvm_statsfd_vmx_code(i);
	if (code < 0)
		return i == VMX_OTHER ? snprintf(buf, len, "other") : -1;
	return snprintf(buf, len, "reason_%ld", code);
}

int kvmstats_exit_reason_kind(const struct kvmstats_desc *d)
{
	if (!d || d->type != KVM_STATS_TYPE_LINEAR_HIST || d->bucket_size != 1)
		return KVMSTATS_EXIT_NONE;
	if (!strcmp(d->name, KVM_STATSFD_EXIT_STAT_SVM) && d->size == SVM_BUCKETS)
		return KVMSTATS_EXIT_SVM;
	if (!strcmp(d->name, KVM_STATSFD_EXIT_STAT_VMX) && d->size == VMX_BUCKETS)
		return KVMSTATS_EXIT_VMX;
	return KVMSTATS_EXIT_NONE;
}

int kvmstats_exit_reason_name(const struct kvmstats_desc *d, unsigned int i,
			      char *buf, size_t len)
{
	int n = -1;

	if (!len)
		return -1;
	buf[0] = '\0';
	switch (kvmstats_exit_reason_kind(d)) {
	case KVMSTATS_EXIT_SVM:
		n = svm_name(i, buf, len);
		break;
	case KVMSTATS_EXIT_VMX:
		n = vmx_name(i, buf, len);
		break;
	}
	if (n < 0)
		buf[0] = '\0';
	return n;
}

/*
 * KVM_EXIT_* names for the module's userspace_exits histogram, from the
 * uapi constants themselves: whatever <linux/kvm.h> the tools are built
 * against defines is named, the rest is "KVM_EXIT_<n>".
 */
#define KVM_EXIT_NAME(x)	[(x)] = #x
static const char *const kvm_exit_names[] = {
	KVM_EXIT_NAME(KVM_EXIT_UNKNOWN),
	KVM_EXIT_NAME(KVM_EXIT_EXCEPTION),
	KVM_EXIT_NAME(KVM_EXIT_IO),
	KVM_EXIT_NAME(KVM_EXIT_HYPERCALL),
	KVM_EXIT_NAME(KVM_EXIT_DEBUG),
	KVM_EXIT_NAME(KVM_EXIT_HLT),
	KVM_EXIT_NAME(KVM_EXIT_MMIO),
	KVM_EXIT_NAME(KVM_EXIT_IRQ_WINDOW_OPEN),
	KVM_EXIT_NAME(KVM_EXIT_SHUTDOWN),
	KVM_EXIT_NAME(KVM_EXIT_FAIL_ENTRY),
	KVM_EXIT_NAME(KVM_EXIT_INTR),
	KVM_EXIT_NAME(KVM_EXIT_SET_TPR),
	KVM_EXIT_NAME(KVM_EXIT_TPR_ACCESS),
	KVM_EXIT_NAME(KVM_EXIT_S390_SIEIC),
	KVM_EXIT_NAME(KVM_EXIT_S390_RESET),
	KVM_EXIT_NAME(KVM_EXIT_DCR),
	KVM_EXIT_NAME(KVM_EXIT_NMI),
	KVM_EXIT_NAME(KVM_EXIT_INTERNAL_ERROR),
	KVM_EXIT_NAME(KVM_EXIT_OSI),
	KVM_EXIT_NAME(KVM_EXIT_PAPR_HCALL),
	KVM_EXIT_NAME(KVM_EXIT_S390_UCONTROL),
	KVM_EXIT_NAME(KVM_EXIT_WATCHDOG),
	KVM_EXIT_NAME(KVM_EXIT_S390_TSCH),
	KVM_EXIT_NAME(KVM_EXIT_EPR),
	KVM_EXIT_NAME(KVM_EXIT_SYSTEM_EVENT),
	KVM_EXIT_NAME(KVM_EXIT_S390_STSI),
	KVM_EXIT_NAME(KVM_EXIT_IOAPIC_EOI),
	KVM_EXIT_NAME(KVM_EXIT_HYPERV),
#ifdef KVM_EXIT_ARM_NISV
	KVM_EXIT_NAME(KVM_EXIT_ARM_NISV),
#endif
#ifdef KVM_EXIT_X86_RDMSR
	KVM_EXIT_NAME(KVM_EXIT_X86_RDMSR),
	KVM_EXIT_NAME(KVM_EXIT_X86_WRMSR),
#endif
#ifdef KVM_EXIT_DIRTY_RING_FULL
	KVM_EXIT_NAME(KVM_EXIT_DIRTY_RING_FULL),
#endif
#ifdef KVM_EXIT_AP_RESET_HOLD
	KVM_EXIT_NAME(KVM_EXIT_AP_RESET_HOLD),
#endif
#ifdef KVM_EXIT_X86_BUS_LOCK
	KVM_EXIT_NAME(KVM_EXIT_X86_BUS_LOCK),
#endif
#ifdef KVM_EXIT_XEN
	KVM_EXIT_NAME(KVM_EXIT_XEN),
#endif
#ifdef KVM_EXIT_RISCV_SBI
	KVM_EXIT_NAME(KVM_EXIT_RISCV_SBI),
#endif
#ifdef KVM_EXIT_RISCV_CSR
	KVM_EXIT_NAME(KVM_EXIT_RISCV_CSR),
#endif
#ifdef KVM_EXIT_NOTIFY
	KVM_EXIT_NAME(KVM_EXIT_NOTIFY),
#endif
#ifdef KVM_EXIT_LOONGARCH_IOCSR
	KVM_EXIT_NAME(KVM_EXIT_LOONGARCH_IOCSR),
#endif
#ifdef KVM_EXIT_MEMORY_FAULT
	KVM_EXIT_NAME(KVM_EXIT_MEMORY_FAULT),
#endif
};

int kvmstats_is_userspace_exits(const struct kvmstats_desc *d)
{
	return d && d->type == KVM_STATS_TYPE_LINEAR_HIST &&
	       d->bucket_size == 1 && d->size >= 2 &&
	       !strcmp(d->name, "userspace_exits");
}

int kvmstats_userspace_exit_name(const struct kvmstats_desc *d,
				 unsigned int i, char *buf, size_t len)
{
	if (!len)
		return -1;
	buf[0] = '\0';
	if (!kvmstats_is_userspace_exits(d) || i >= d->size)
		return -1;
	/* The last bucket counts every reason past the others. */
	if (i == d->size - 1u)
		return snprintf(buf, len, "other");
	if (i < ARRAY_SIZE(kvm_exit_names) &&
	    kvm_exit_names[i])
		return snprintf(buf, len, "%s", kvm_exit_names[i]);
	return snprintf(buf, len, "KVM_EXIT_%u", i);
}
