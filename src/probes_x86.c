// SPDX-License-Identifier: GPL-2.0
/*
 * Feeding the counters from KVM's x86 tracepoints.
 *
 * Probes run on the vCPU's own thread, with preemption disabled, on every
 * VM exit and entry: each does a per-CPU lookup (ks_vcpu_of()) and plain
 * stores to that vCPU's own counters.  No locks, no atomics, no
 * allocation in the common case.
 *
 * Time comes from ktime_get_mono_fast_ns(): monotonic across CPUs, so an
 * interval that spans a migration of the vCPU thread is still right, and
 * lock-free (a seqcount latch over the TSC on x86).  local_clock() is
 * cheaper but may be off between CPUs; a raw TSC is not trustworthy on
 * every host (and not in our TCG test guests).
 *
 * Intervals:
 *  - guest time: VM entry to the next VM exit;
 *  - exit latency: VM exit to the next VM entry, or to the return to
 *    userspace when KVM hands the exit to the VMM (time spent in userspace
 *    is not exit handling).  Every exit yields exactly one sample.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/kvm_host.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <asm/processor.h>
#include <asm/svm.h>
#include <asm/vmx.h>

#include <kvm_statsfd/compat.h>
#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/exit_reasons.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/layout.h>

/* Values of the tracepoints' isa argument (arch/x86/kvm/trace.h). */
#define KS_ISA_VMX	1
#define KS_ISA_SVM	2

/* kvm_mmio's type argument (include/trace/events/kvm.h). */
#define KS_TRACE_MMIO_READ	1
#define KS_TRACE_MMIO_WRITE	2

/* Cached for the exit path; set before the probes are attached. */
static bool ks_vendor_svm;

static __always_inline void ks_log_hist_add(u64 *hist, u64 value)
{
	unsigned int i = fls64(value);

	hist[i < KS_LAT_BUCKETS ? i : KS_LAT_BUCKETS - 1]++;
}

/*
 * One exit-latency sample of the exit @kv last took (exit_ns is only ever
 * set when a latency group is on).
 */
static __always_inline void ks_exit_handled(struct ks_vcpu *kv, u64 now)
{
	struct ks_vcpu_counters *c = &kv->c;
	u64 lat = ks_elapsed(now, kv->exit_ns);

	kv->exit_ns = 0;
	if (ks_group_active(KS_GRP_CLASS_LATENCY) &&
	    kv->exit_class < KS_NR_CLASSES) {
		ks_log_hist_add(c->exit_latency_class_hist[kv->exit_class], lat);
		WRITE_ONCE(c->exit_latency_class_ns[kv->exit_class],
			   c->exit_latency_class_ns[kv->exit_class] + lat);
	}
	if (!ks_group_active(KS_GRP_LATENCY))
		return;
	ks_log_hist_add(c->exit_latency_hist, lat);
	WRITE_ONCE(c->exit_latency_ns, c->exit_latency_ns + lat);
	if (lat > c->exit_latency_max_ns)
		WRITE_ONCE(c->exit_latency_max_ns, lat);
}

/* The clock, where a group needs it; 0 costs nothing otherwise. */
static __always_inline u64 ks_now(void)
{
	return static_branch_likely(&ks_clock_on) ? ktime_get_mono_fast_ns() : 0;
}

/* Does anything on the exit path need the exit's reason? */
static __always_inline bool ks_need_reason(void)
{
	return ks_group_active(KS_GRP_EXIT_REASONS) ||
	       ks_group_active(KS_GRP_IO_MSR) ||
	       ks_group_active(KS_GRP_CLASS_LATENCY);
}

/* SVM: class, and the I/O and MSR direction from exit_info_1. */
static __always_inline void ks_svm_exit(struct ks_vcpu *kv, u32 code,
					u64 info1)
{
	struct ks_vcpu_counters *c = &kv->c;

	switch (code) {
	case SVM_EXIT_IOIO:
		kv->exit_class = KS_CLASS_IO;
		if (ks_group_active(KS_GRP_IO_MSR))
			ks_inc(info1 & SVM_IOIO_TYPE_MASK ? &c->io_in_exits :
							    &c->io_out_exits);
		break;
	case SVM_EXIT_MSR:
		kv->exit_class = KS_CLASS_MSR;
		if (ks_group_active(KS_GRP_IO_MSR))
			ks_inc(info1 ? &c->msr_write_exits :
				       &c->msr_read_exits);
		break;
	case SVM_EXIT_NPF:
		kv->exit_class = KS_CLASS_NPF;
		break;
	case SVM_EXIT_HLT:
		kv->exit_class = KS_CLASS_HLT;
		break;
	case SVM_EXIT_INTR:
		kv->exit_class = KS_CLASS_INTR;
		break;
	default:
		kv->exit_class = KS_CLASS_OTHER;
	}
}

/* VMX: the same from the basic exit reason and exit qualification. */
static __always_inline void ks_vmx_exit(struct ks_vcpu *kv, u32 reason,
					u64 qual)
{
	struct ks_vcpu_counters *c = &kv->c;

	switch (reason & 0xffff) {
	case EXIT_REASON_IO_INSTRUCTION:
		kv->exit_class = KS_CLASS_IO;
		if (ks_group_active(KS_GRP_IO_MSR))
			ks_inc(qual & BIT(3) ? &c->io_in_exits :
					       &c->io_out_exits);
		break;
	case EXIT_REASON_MSR_READ:
		kv->exit_class = KS_CLASS_MSR;
		if (ks_group_active(KS_GRP_IO_MSR))
			ks_inc(&c->msr_read_exits);
		break;
	case EXIT_REASON_MSR_WRITE:
		kv->exit_class = KS_CLASS_MSR;
		if (ks_group_active(KS_GRP_IO_MSR))
			ks_inc(&c->msr_write_exits);
		break;
	case EXIT_REASON_EPT_VIOLATION:
	case EXIT_REASON_EPT_MISCONFIG:
		kv->exit_class = KS_CLASS_NPF;
		break;
	case EXIT_REASON_HLT:
		kv->exit_class = KS_CLASS_HLT;
		break;
	case EXIT_REASON_EXTERNAL_INTERRUPT:
		kv->exit_class = KS_CLASS_INTR;
		break;
	default:
		kv->exit_class = KS_CLASS_OTHER;
	}
}

static void ks_probe_kvm_exit(KS_KVM_EXIT_PROBE_ARGS)
{
	struct ks_vcpu *kv = ks_vcpu_of(vcpu);
	u32 reason, intr_info, error_code;
	u64 info1, info2, now;
	u32 index;

	if (unlikely(!kv))
		return;
	now = ks_now();
	if (ks_group_active(KS_GRP_GUEST_TIME)) {
		if (likely(kv->entry_ns))
			WRITE_ONCE(kv->c.guest_ns, kv->c.guest_ns +
				   ks_elapsed(now, kv->entry_ns));
		kv->entry_ns = 0;
		WRITE_ONCE(kv->c.in_guest, 0);
	}
	if (ks_group_active(KS_GRP_LATENCY) ||
	    ks_group_active(KS_GRP_CLASS_LATENCY))
		kv->exit_ns = now;
	if (!ks_need_reason())
		return;

	/*
	 * The tracepoint passes no reason: ask the vendor module, as the
	 * tracepoint's own event does.
	 */
	ks_get_exit_info(ks_kvm.x86_ops, vcpu, KS_KVM_EXIT_TP_REASON, &reason,
			 &info1, &info2, &intr_info, &error_code);
	if (ks_vendor_svm) {
		index = isa == KS_ISA_SVM ? ks_svm_exit_index(reason) :
					    KS_SVM_OTHER;
		ks_svm_exit(kv, reason, info1);
	} else {
		index = isa == KS_ISA_VMX ? ks_vmx_exit_index(reason) :
					    KS_VMX_OTHER;
		ks_vmx_exit(kv, reason, info1);
	}
	if (ks_group_active(KS_GRP_EXIT_REASONS))
		ks_inc(&kv->c.exit_reasons[index]);
}

/*
 * kvm_entry is (vcpu, force_immediate_exit) on the kernels we serve from
 * 6.1 on, (vcpu) on 5.10: the probe has the newest prototype and reads
 * only the vCPU, which every version passes first.
 */
static void ks_probe_kvm_entry(void *data, struct kvm_vcpu *vcpu,
			       bool force_immediate_exit)
{
	struct ks_vcpu *kv = ks_vcpu_of(vcpu);
	u64 now;

	if (unlikely(!kv))
		return;
	/* This thread is inside KVM_RUN with it, for kvm_userspace_exit. */
	ks_vcpu_entered(kv);
	now = ks_now();
	if (kv->exit_ns)
		ks_exit_handled(kv, now);
	if (ks_group_active(KS_GRP_GUEST_TIME)) {
		kv->entry_ns = now;
		WRITE_ONCE(kv->c.in_guest, 1);
	}
}

/*
 * Fires on return from KVM_RUN, after vcpu_put(): no vCPU is passed or
 * running.  ks_vcpu_of_current() finds the vCPU this thread entered the
 * guest with in this KVM_RUN; a KVM_RUN that never entered is not counted.
 */
static void ks_probe_kvm_userspace_exit(void *data, u32 reason, int err)
{
	struct ks_vcpu *kv = ks_vcpu_of_current();
	u32 i;

	if (unlikely(!kv))
		return;
	WRITE_ONCE(kv->in_run, false);
	if (kv->exit_ns)
		ks_exit_handled(kv, ks_now());
	/* A VMX entry failure has no kvm_exit: the guest is not running. */
	kv->entry_ns = 0;
	if (ks_group_active(KS_GRP_GUEST_TIME))
		WRITE_ONCE(kv->c.in_guest, 0);
	if (!ks_group_active(KS_GRP_USERSPACE))
		return;
	/*
	 * -EINTR is a signal (KVM_EXIT_INTR).  On any other error exit_reason
	 * is not this return's: an older exit's, or KVM_EXIT_UNKNOWN.
	 */
	if (err == -EINTR)
		i = KVM_EXIT_INTR;
	else if (err < 0 || reason >= KS_USER_EXIT_OTHER)
		i = KS_USER_EXIT_OTHER;
	else
		i = reason;
	ks_inc(&kv->c.userspace_exits[i]);
}

static void ks_probe_kvm_mmio(void *data, int type, int len, u64 gpa,
			      void *val)
{
	struct kvm_vcpu *vcpu;
	struct ks_vcpu *kv;

	if (!ks_group_active(KS_GRP_IO_MSR) ||
	    (type != KS_TRACE_MMIO_READ && type != KS_TRACE_MMIO_WRITE))
		return;
	vcpu = ks_running_vcpu();
	kv = vcpu ? ks_vcpu_of(vcpu) : NULL;
	if (unlikely(!kv))
		return;
	ks_inc(type == KS_TRACE_MMIO_READ ? &kv->c.mmio_reads :
					    &kv->c.mmio_writes);
}

struct ks_probe {
	struct tracepoint *tp;
	void *func;
};

/* Tracepoints found in kvm.ko at init (kvm_symbols.c). */
static struct ks_probe ks_probes[] = {
	{ NULL, ks_probe_kvm_exit },
	{ NULL, ks_probe_kvm_entry },
	{ NULL, ks_probe_kvm_userspace_exit },
	{ NULL, ks_probe_kvm_mmio },
};

int ks_probes_init(void)
{
	int i, ret = 0;

	ks_vendor_svm = ks_vendor_is_svm();
	ks_probes[0].tp = ks_kvm.tp_exit;
	ks_probes[1].tp = ks_kvm.tp_entry;
	ks_probes[2].tp = ks_kvm.tp_userspace_exit;
	ks_probes[3].tp = ks_kvm.tp_mmio;

	for (i = 0; i < ARRAY_SIZE(ks_probes); i++) {
		ret = tracepoint_probe_register(ks_probes[i].tp,
						ks_probes[i].func, NULL);
		if (ret) {
			pr_err("cannot attach to tracepoint %s: %d\n",
			       ks_probes[i].tp->name, ret);
			break;
		}
	}
	if (!ret)
		return 0;
	while (--i >= 0)
		tracepoint_probe_unregister(ks_probes[i].tp,
					    ks_probes[i].func, NULL);
	tracepoint_synchronize_unregister();
	return ret;
}

void ks_probes_exit(void)
{
	int i;

	for (i = ARRAY_SIZE(ks_probes) - 1; i >= 0; i--)
		tracepoint_probe_unregister(ks_probes[i].tp,
					    ks_probes[i].func, NULL);
	/* No probe may still be running when the counters go. */
	tracepoint_synchronize_unregister();
}
