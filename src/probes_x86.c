// SPDX-License-Identifier: GPL-2.0
/*
 * Feeding the counters from KVM's x86 tracepoints.
 *
 * Probes run on the vCPU's own thread, with preemption disabled, on every
 * VM exit and entry: each does a per-CPU lookup (ks_vcpu_of()) and plain
 * stores to that vCPU's own counters.  No locks, no atomics, no
 * allocation in the common case.
 *
 * Their cost is counted in instructions per exit (make bench, and a budget
 * that make check enforces), so the exit path is shaped by the load's
 * stat groups: a probe nothing needs is not attached at all, and inside
 * the probes every group is a static branch.  Counting groups alone need
 * only kvm_exit; only the time groups attach kvm_entry and read a clock.
 *
 * Intervals:
 *  - guest time: VM entry to the next VM exit;
 *  - exit latency: VM exit to the next VM entry, or to the return to
 *    userspace when KVM hands the exit to the VMM (time spent in userspace
 *    is not exit handling).  Every exit yields exactly one sample, in its
 *    class's histogram; the overall histogram leaves out HLT exits, whose
 *    "latency" is the time the vCPU was halted.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/jump_label.h>
#include <linux/kvm_host.h>
#include <linux/sched.h>
#include <linux/static_call.h>
#include <linux/tracepoint.h>
#include <asm/asm.h>
#include <asm/hypervisor.h>
#include <asm/processor.h>
#include <asm/svm.h>
#include <asm/vmx.h>

#include <kvm_statsfd/clock.h>
#include <kvm_statsfd/compat.h>
#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/exit_reasons.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/layout.h>
#include <kvm_statsfd/probes.h>

/* kvm_mmio's type argument (include/trace/events/kvm.h). */
#define KS_TRACE_MMIO_READ	1
#define KS_TRACE_MMIO_WRITE	2

/*
 * The vendor's get_exit_info(), through kvm.ko's own static call where
 * kvm.ko has one (compat.h): bound at init, never to the vendor module.
 */
DEFINE_STATIC_CALL_NULL(ks_exit_info, ks_exit_info_proto);
/* What kvm.ko has of it, KS_KVM_EXIT_INFO_SYMBOL (compat.h). */
static unsigned long ks_exit_info_addr __ro_after_init;

static DEFINE_STATIC_KEY_FALSE(ks_svm);

/* Exit class of each exit-reason bucket, for this host's vendor. */
static u8 ks_class_of[KS_SVM_NR_BUCKETS] __ro_after_init;

/*
 * The probe bodies below are compiled for a set of groups (probes.h); on
 * x86 a constant set may also fix the vendor ...
 */
#define KS_SET_SVM		BIT(KS_NR_GROUPS)
#define KS_SET_VMX		BIT(KS_NR_GROUPS + 1)
/* ... and the clock: the TSC (else the static branch of clock.h). */
#define KS_SET_TSC		BIT(KS_NR_GROUPS + 2)

static __always_inline bool ks_is_svm(unsigned long set)
{
	if (set & KS_SET_SVM)
		return true;
	if (set & KS_SET_VMX)
		return false;
	return static_branch_likely(&ks_svm);
}

/* ks_clock() and ks_clock_ns(), the TSC's fixed by @set if it says so. */
static __always_inline u64 ks_now(unsigned long set)
{
	return set & KS_SET_TSC ? rdtsc() : ks_clock();
}

static __always_inline u64 ks_ns(unsigned long set, u64 now, u64 then)
{
	return set & KS_SET_TSC ? ks_tsc_clock_ns(now, then) :
				  ks_clock_ns(now, then);
}

/*
 * The exit @kv last took was handled at @now: one latency sample, in its
 * class's histogram and, unless it is a HLT, in the overall one.
 */
static __always_inline void ks_exit_handled(unsigned long set,
					    struct ks_vcpu *kv, u64 now)
{
	u64 lat = ks_ns(set, now, kv->exit_ts);
	/* Whole registers: no zero extension to index with them. */
	unsigned long cls = kv->exit_class, b = ks_log_bucket(lat);

	kv->exit_ts = 0;
	if (ks_on(set, KS_GRP_CLASS_LATENCY) && cls < KS_NR_CLASSES) {
		struct ks_class_latency *cl = kv->cls;

		ks_inc(&cl->cls[cls].hist[b]);
		ks_add(&cl->cls[cls].ns, lat);
	}
	if (ks_on(set, KS_GRP_LATENCY) && cls != KS_CLASS_HLT) {
		struct ks_latency *l = kv->lat;

		ks_inc(&l->hist[b]);
		ks_add(&l->ns, lat);
		if (lat > l->max_ns)
			WRITE_ONCE(l->max_ns, lat);
	}
}

/*
 * The VMX exit state straight from the VMCS, rather than through the
 * vendor's get_exit_info(): one VMREAD for the reason (none where kvm_exit
 * passes it), one more for the qualification of an I/O exit, where
 * get_exit_info() reads the qualification and the interruption info
 * through KVM's register cache on every exit.  Set at load where every
 * VMCS KVM runs is a hardware one (ks_vmx_vmread_init()); per exit, only
 * for a VM whose vCPUs KVM runs from a VMCS of its own (compat.h).
 *
 * kvm_exit fires in vmx_vcpu_run() right after the VM exit (5.10 to 7.x),
 * interrupts off, and only when the exit came from the VMCS (not on a
 * failed VMLAUNCH/VMRESUME, not for emulated invalid guest state): the
 * VMCS just run, vmcs01 or a nested guest's vmcs02, is current, and its
 * exit fields are the ones KVM read into vmx->exit_reason.
 */
static DEFINE_STATIC_KEY_FALSE(ks_vmx_vmread);

static __always_inline bool ks_vmx_direct(struct kvm_vcpu *vcpu)
{
	return static_branch_likely(&ks_vmx_vmread) && ks_vmx_has_vmcs(vcpu);
}

/*
 * VMREAD of @field from the current VMCS.  It cannot fault where the
 * probes read (above); should it, the exception table skips it (#UD
 * outside VMX operation), and the value is whatever the register held:
 * the probes only index a clamped histogram and test one bit with it,
 * so that costs a wrong count, never a wrong access, and saves zeroing
 * the register on every exit.
 */
static __always_inline unsigned long ks_vmread(unsigned long field)
{
	unsigned long value;

	asm volatile("1: vmread %[field], %[value]\n"
		     "2:\n"
		     _ASM_EXTABLE(1b, 2b)
		     : [value] "=r" (value) : [field] "r" (field) : "cc");
	return value;
}

/*
 * The SVM exit state straight from the VMCB, rather than through the
 * vendor's get_exit_info(), which costs about 25 instructions (its call
 * with six arguments, kvm.ko's static call trampoline, and the copy of
 * five fields of which the probes use two): the exit code, and
 * exit_info_1 for an I/O or MSR exit.  svm_get_exit_info() reads them
 * from to_svm(vcpu)->vmcb, the VMCB the vCPU has just run (vmcb01, or a
 * nested guest's vmcb02), and so do the probes.
 *
 * struct vcpu_svm is kvm_amd's own (arch/x86/kvm/svm/svm.h), but its head
 * has not changed since 5.10: the struct kvm_vcpu, then that vmcb
 * pointer, then vmcb01 { ptr, pa, ... } on 5.13 and later, vmcb_pa on
 * 5.10.  ks_svm_vmcb_ok() checks the head of each vCPU when its state is
 * made (page-aligned VMCBs in the direct map, a physical address that
 * matches), and only a vCPU that passed is read so; any other goes
 * through get_exit_info() as before.
 */
static __always_inline struct vmcb **ks_svm_vmcb_slot(struct kvm_vcpu *vcpu)
{
	return (void *)vcpu + ALIGN(sizeof(*vcpu), sizeof(void *));
}

static __always_inline struct vmcb_control_area *
ks_svm_control(struct kvm_vcpu *vcpu)
{
	return &(*ks_svm_vmcb_slot(vcpu))->control;
}

/* @va is a page of the direct map, and @pa its physical address. */
static bool ks_svm_page(unsigned long va, unsigned long pa)
{
	return va && PAGE_ALIGNED(va) && virt_addr_valid((void *)va) &&
	       __pa(va) == pa;
}

static bool ks_svm_vmcb_ok(struct kvm_vcpu *vcpu)
{
	unsigned long *head = (unsigned long *)ks_svm_vmcb_slot(vcpu);

	if (!ks_vendor_is_svm())
		return false;
	/* 5.13 and later: vmcb01, and vmcb is vmcb01's or vmcb02's page. */
	if (ks_svm_page(head[1], head[2]))
		return head[0] && PAGE_ALIGNED(head[0]) &&
		       virt_addr_valid((void *)head[0]);
	/* 5.10: the one VMCB and its physical address. */
	return ks_svm_page(head[0], head[1]);
}

void ks_vcpu_arch_init(struct ks_vcpu *kv, struct kvm_vcpu *vcpu)
{
	kv->arch.svm_vmcb = ks_svm_vmcb_ok(vcpu);
}

/*
 * An I/O or MSR exit (@cls, histogram index @idx; on SVM exit_info_1
 * @info1): count it by direction.
 */
static __always_inline void ks_count_dir(unsigned long set,
					 struct kvm_vcpu *vcpu,
					 struct ks_vcpu *kv, u32 cls,
					 unsigned long idx, u64 info1)
{
	unsigned long i;

	if (ks_is_svm(set))	/* SVM_IOIO_TYPE_MASK, or a WRMSR */
		i = 2 * (unsigned long)cls + (info1 & 1);
	else if (cls != KS_CLASS_IO)
		/* A VMX index is the basic exit reason: MSR_READ, MSR_WRITE. */
		i = idx - EXIT_REASON_MSR_READ + KS_DIR_MSR_READ;
	else if (ks_vmx_direct(vcpu))	/* the qualification's IN */
		i = KS_DIR_IO_OUT + ((ks_vmread(EXIT_QUALIFICATION) >> 3) & 1);
	else
		i = KS_DIR_IO_OUT + ((kv->x.info1 >> 3) & 1);
	ks_inc(&kv->io->exits[i]);
}

/*
 * kvm_exit.  The isa argument is always the loaded vendor's: the histogram
 * is sized and indexed for it.
 */
static __always_inline void ks_exit(unsigned long set, struct kvm_vcpu *vcpu,
				    u32 tp_reason)
{
	struct ks_vcpu *kv = __this_cpu_read(ks_last_vcpu);
	u32 reason, cls;
	unsigned long idx;
	u64 info1 = 0;

	if (!ks_vcpu_cached(kv, vcpu)) {
		kv = ks_vcpu_of_slow(vcpu);
		if (!kv)
			return;
	}
	if (ks_tracks_run(set))
		ks_vcpu_in_run(kv);
	if (ks_timed(set)) {
		u64 now = ks_now(set);

		if (ks_lat_timed(set))
			kv->exit_ts = now;
		if (ks_on(set, KS_GRP_GUEST_TIME)) {
			struct ks_guest_time *gt = kv->guest;

			/*
			 * entry_ts is the last entry's, or, at the first exit
			 * after the probes attached, the state's creation
			 * (counters.c): a lower bound of that guest time.
			 */
			ks_add(&gt->ns, ks_ns(set, now, kv->entry_ts));
			WRITE_ONCE(gt->in_guest, 0);
		}
	}
	if (!ks_on(set, KS_GRP_EXIT_REASONS) && !ks_classify(set))
		return;

	if (ks_is_svm(set) && likely(kv->arch.svm_vmcb)) {
		const struct vmcb_control_area *c = ks_svm_control(vcpu);

		/* Read on every exit: cheaper than keeping where it is. */
		info1 = c->exit_info_1;
		reason = KS_KVM_EXIT_PASSES_REASON ? tp_reason : c->exit_code;
	} else if (!ks_is_svm(set) && ks_vmx_direct(vcpu)) {
		reason = KS_KVM_EXIT_PASSES_REASON ? tp_reason :
						     ks_vmread(VM_EXIT_REASON);
	} else {
		/*
		 * The vendor module's answer, as the tracepoint's own event
		 * has it (the tracepoint passes no reason since 5.16).
		 */
		ks_call_exit_info(ks_exit_info_fn(), vcpu, tp_reason,
				  &kv->x.reason, &kv->x.info1, &kv->x.info2,
				  &kv->x.intr_info, &kv->x.error_code);
		reason = kv->x.reason;
		info1 = kv->x.info1;
	}
	if (ks_is_svm(set))
		idx = ks_svm_exit_index(reason);
	else
		idx = ks_vmx_exit_index(reason);
	if (ks_on(set, KS_GRP_EXIT_REASONS))
		ks_inc(&kv->reasons[idx]);
	if (!ks_classify(set))
		return;
	cls = ks_class_of[idx];
	/* For the latency sample when the exit is handled. */
	if (ks_lat_timed(set))
		kv->exit_class = cls;
	if (ks_on(set, KS_GRP_IO_MSR) && cls <= KS_CLASS_MSR)
		ks_count_dir(set, vcpu, kv, cls, idx, info1);
}

/*
 * kvm_entry, attached only when a group reads the clock.  kvm_entry is
 * (vcpu, force_immediate_exit) on the kernels we serve from 6.1 on,
 * (vcpu) on 5.10: the probes have the newest prototype and read only the
 * vCPU, which every version passes first.
 */
static __always_inline void ks_entry(unsigned long set, struct kvm_vcpu *vcpu)
{
	struct ks_vcpu *kv = __this_cpu_read(ks_last_vcpu);
	u64 now;

	if (!ks_vcpu_cached(kv, vcpu)) {
		kv = ks_vcpu_of_slow(vcpu);
		if (!kv)
			return;
	}
	now = ks_now(set);
	if (ks_lat_timed(set) && kv->exit_ts)
		ks_exit_handled(set, kv, now);
	if (ks_on(set, KS_GRP_GUEST_TIME)) {
		kv->entry_ts = now;
		WRITE_ONCE(kv->guest->in_guest, 1);
	}
}

/*
 * The probes, one per set.  notrace: tracing them would only add a call
 * to every exit.
 */
#define KS_EXIT_PROBE(name, set)					\
static notrace void name(KS_KVM_EXIT_PROBE_ARGS)			\
{									\
	ks_exit(set, vcpu, KS_KVM_EXIT_TP_REASON);			\
}

KS_EXIT_PROBE(ks_probe_kvm_exit, KS_SET_LOAD)
KS_EXIT_PROBE(ks_probe_kvm_exit_all_svm_tsc, KS_SET_ALL | KS_SET_SVM | KS_SET_TSC)
KS_EXIT_PROBE(ks_probe_kvm_exit_all_vmx_tsc, KS_SET_ALL | KS_SET_VMX | KS_SET_TSC)
KS_EXIT_PROBE(ks_probe_kvm_exit_counting_svm, KS_SET_COUNTING | KS_SET_SVM)
KS_EXIT_PROBE(ks_probe_kvm_exit_counting_vmx, KS_SET_COUNTING | KS_SET_VMX)
KS_EXIT_PROBE(ks_probe_kvm_exit_default_svm_tsc,
	      KS_DEFAULT_GROUPS | KS_SET_SVM | KS_SET_TSC)
KS_EXIT_PROBE(ks_probe_kvm_exit_default_vmx_tsc,
	      KS_DEFAULT_GROUPS | KS_SET_VMX | KS_SET_TSC)

static notrace void ks_probe_kvm_entry(void *data, struct kvm_vcpu *vcpu,
				       bool force_immediate_exit)
{
	ks_entry(KS_SET_LOAD, vcpu);
}

static notrace void ks_probe_kvm_entry_all_tsc(void *data,
					       struct kvm_vcpu *vcpu,
					       bool force_immediate_exit)
{
	ks_entry(KS_SET_ALL | KS_SET_TSC, vcpu);
}

static notrace void ks_probe_kvm_entry_default_tsc(void *data,
						   struct kvm_vcpu *vcpu,
						   bool force_immediate_exit)
{
	ks_entry(KS_DEFAULT_GROUPS | KS_SET_TSC, vcpu);
}

/* ks_probe_kvm_userspace_exit(), on this file's ks_exit_handled(). */
#include <kvm_statsfd/probe_userspace_exit.h>

static void ks_probe_kvm_mmio(void *data, int type, int len, u64 gpa,
			      void *val)
{
	struct kvm_vcpu *vcpu;
	struct ks_vcpu *kv;

	if (type != KS_TRACE_MMIO_READ && type != KS_TRACE_MMIO_WRITE)
		return;
	vcpu = ks_running_vcpu();
	kv = vcpu ? ks_vcpu_of(vcpu) : NULL;
	if (unlikely(!kv))
		return;
	ks_inc(type == KS_TRACE_MMIO_READ ? &kv->io->mmio_reads :
					    &kv->io->mmio_writes);
}

bool ks_vendor_is_svm(void)
{
	return boot_cpu_data.x86_vendor == X86_VENDOR_AMD ||
	       boot_cpu_data.x86_vendor == X86_VENDOR_HYGON;
}

unsigned int ks_exit_buckets(void)
{
	return ks_vendor_is_svm() ? KS_SVM_NR_BUCKETS : KS_VMX_NR_BUCKETS;
}

const char *ks_exit_stat_name(void)
{
	return ks_vendor_is_svm() ? KVM_STATSFD_EXIT_STAT_SVM :
				    KVM_STATSFD_EXIT_STAT_VMX;
}

int ks_arch_kvm_symbols_init(void)
{
	ks_exit_info_addr = ks_kvm_symbol(KS_KVM_EXIT_INFO_SYMBOL,
					  KS_KVM_EXIT_INFO_TEXT);
	return ks_exit_info_addr ? 0 : -ENOENT;
}

/* The exit classes of the vendor's exit codes. */
static void ks_classes_init(bool svm)
{
	static const struct { u32 code; u8 cls; } svm_map[] = {
		{ SVM_EXIT_IOIO, KS_CLASS_IO }, { SVM_EXIT_MSR, KS_CLASS_MSR },
		{ SVM_EXIT_NPF, KS_CLASS_NPF }, { SVM_EXIT_HLT, KS_CLASS_HLT },
		{ SVM_EXIT_INTR, KS_CLASS_INTR },
	}, vmx_map[] = {
		{ EXIT_REASON_IO_INSTRUCTION, KS_CLASS_IO },
		{ EXIT_REASON_MSR_READ, KS_CLASS_MSR },
		{ EXIT_REASON_MSR_WRITE, KS_CLASS_MSR },
		{ EXIT_REASON_EPT_VIOLATION, KS_CLASS_NPF },
		{ EXIT_REASON_EPT_MISCONFIG, KS_CLASS_NPF },
		{ EXIT_REASON_HLT, KS_CLASS_HLT },
		{ EXIT_REASON_EXTERNAL_INTERRUPT, KS_CLASS_INTR },
	};
	unsigned int i;

	/* ks_count_dir()'s arithmetic. */
	BUILD_BUG_ON(EXIT_REASON_MSR_WRITE - EXIT_REASON_MSR_READ != 1);
	BUILD_BUG_ON(KS_DIR_MSR_READ != 2 * KS_CLASS_MSR ||
		     KS_DIR_IO_IN != 2 * KS_CLASS_IO + 1);
	memset(ks_class_of, KS_CLASS_OTHER, sizeof(ks_class_of));
	if (svm) {
		for (i = 0; i < ARRAY_SIZE(svm_map); i++)
			ks_class_of[ks_svm_exit_index(svm_map[i].code)] = svm_map[i].cls;
	} else {
		for (i = 0; i < ARRAY_SIZE(vmx_map); i++)
			ks_class_of[ks_vmx_exit_index(vmx_map[i].code)] = vmx_map[i].cls;
	}
}

/*
 * VMREAD the exit state (ks_vmx_direct()) unless KVM may run its guests
 * from enlightened VMCSs: on Hyper-V, kvm_intel can keep them in memory
 * (its enlightened_vmcs parameter), where VMREAD does not read them.
 */
static void ks_vmx_vmread_init(void)
{
	if (ks_vendor_is_svm() || !boot_cpu_has(X86_FEATURE_VMX))
		return;
	if (hypervisor_is_type(X86_HYPER_MS_HYPERV)) {
		pr_info("exit reasons: from KVM (Hyper-V: enlightened VMCS possible)\n");
		return;
	}
	static_branch_enable(&ks_vmx_vmread);
	pr_info("exit reasons: VMREAD\n");
}

void ks_probes_arch_init(unsigned long set, struct ks_probe_funcs *f)
{
	if (ks_vendor_is_svm())
		static_branch_enable(&ks_svm);
	ks_classes_init(ks_vendor_is_svm());
	ks_vmx_vmread_init();
	ks_exit_info_bind(ks_exit_info_addr);

	*f = (struct ks_probe_funcs){
		.exit = ks_probe_kvm_exit,
		.entry = ks_probe_kvm_entry,
		.userspace_exit = ks_probe_kvm_userspace_exit,
		.mmio = ks_probe_kvm_mmio,
	};
	/* The probes compiled for exactly this load's groups, if any. */
	if (set == KS_SET_ALL && static_key_enabled(&ks_clock_tsc)) {
		f->exit = ks_vendor_is_svm() ? ks_probe_kvm_exit_all_svm_tsc :
					       ks_probe_kvm_exit_all_vmx_tsc;
		f->entry = ks_probe_kvm_entry_all_tsc;
	} else if (set == KS_DEFAULT_GROUPS && static_key_enabled(&ks_clock_tsc)) {
		f->exit = ks_vendor_is_svm() ? ks_probe_kvm_exit_default_svm_tsc :
					       ks_probe_kvm_exit_default_vmx_tsc;
		f->entry = ks_probe_kvm_entry_default_tsc;
	} else if (set == KS_SET_COUNTING) {
		f->exit = ks_vendor_is_svm() ? ks_probe_kvm_exit_counting_svm :
					       ks_probe_kvm_exit_counting_vmx;
	}
}
