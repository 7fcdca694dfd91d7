// SPDX-License-Identifier: GPL-2.0
/*
 * Feeding the counters from KVM's x86 tracepoints.
 *
 * Probes run on the vCPU's own thread, with preemption disabled, on every
 * VM exit: each does a per-CPU lookup (ks_vcpu_of()) and plain increments
 * of that vCPU's own counters.  No locks, no atomics, no allocation in the
 * common case.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kvm_host.h>
#include <linux/tracepoint.h>
#include <asm/processor.h>

#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/exit_reasons.h>
#include <kvm_statsfd/kvm_statsfd.h>

/* Exported by kvm.ko (EXPORT_TRACEPOINT_SYMBOL_GPL). */
extern struct tracepoint __tracepoint_kvm_exit;

/* Values of the tracepoints' isa argument (arch/x86/kvm/trace.h). */
#define KS_ISA_VMX	1
#define KS_ISA_SVM	2

/* Cached for the exit path; set before the probe is attached. */
static bool ks_vendor_svm;

static bool ks_host_is_svm(void)
{
	return boot_cpu_data.x86_vendor == X86_VENDOR_AMD ||
	       boot_cpu_data.x86_vendor == X86_VENDOR_HYGON;
}

unsigned int ks_exit_buckets(void)
{
	return ks_host_is_svm() ? KS_SVM_NR_BUCKETS : KS_VMX_NR_BUCKETS;
}

const char *ks_exit_stat_name(void)
{
	return ks_host_is_svm() ? "exit_reasons_svm" : "exit_reasons_vmx";
}

/* The dense index of this exit's hardware reason, for this host's vendor. */
static __always_inline u32 ks_exit_index(u32 isa, u32 reason)
{
	if (ks_vendor_svm)
		return isa == KS_ISA_SVM ? ks_svm_exit_index(reason) :
					   KS_SVM_OTHER;
	return isa == KS_ISA_VMX ? ks_vmx_exit_index(reason) : KS_VMX_OTHER;
}

static void ks_probe_kvm_exit(void *data, struct kvm_vcpu *vcpu, u32 isa)
{
	struct ks_vcpu *kv = ks_vcpu_of(vcpu);
	u32 reason, intr_info, error_code;
	u64 info1, info2;

	if (unlikely(!kv))
		return;
	/*
	 * The tracepoint passes no reason: ask the vendor module, as the
	 * tracepoint's own event does.
	 */
	ks_kvm.x86_ops->get_exit_info(vcpu, &reason, &info1, &info2,
				      &intr_info, &error_code);
	ks_inc(&kv->c.exit_reasons[ks_exit_index(isa, reason)]);
}

int ks_probes_init(void)
{
	int ret;

	ks_vendor_svm = ks_host_is_svm();

	ret = tracepoint_probe_register(&__tracepoint_kvm_exit,
					ks_probe_kvm_exit, NULL);
	if (ret)
		pr_err("cannot attach to the kvm_exit tracepoint: %d\n", ret);
	return ret;
}

void ks_probes_exit(void)
{
	tracepoint_probe_unregister(&__tracepoint_kvm_exit,
				    ks_probe_kvm_exit, NULL);
	/* No probe may still be running when the counters go. */
	tracepoint_synchronize_unregister();
}
