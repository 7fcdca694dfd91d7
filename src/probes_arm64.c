// SPDX-License-Identifier: GPL-2.0
/*
 * Feeding the counters from KVM's arm64 tracepoints.
 *
 * The same bookkeeping as on x86 (probes_x86.c): the probes run on the
 * vCPU's own thread with preemption disabled, do a per-CPU lookup and
 * plain stores to that vCPU's own counters, with no locks, no atomics and
 * no allocation in the common case; a probe nothing needs is not
 * attached, and inside the probes every group is a static branch or, for
 * the loads that matter most, a constant.
 *
 * What differs on arm64:
 *  - kvm_exit(ret, esr_ec, vcpu_pc) and kvm_entry(vcpu_pc) pass no vCPU:
 *    the probes take the one loaded on this CPU, kvm_get_running_vcpu(),
 *    which KVM keeps from vcpu_load() to vcpu_put() across preemption.
 *    kvm_exit fires after KVM has re-enabled interrupts, preemption still
 *    disabled; an interrupt handler never writes these counters.
 *  - The exit is told by its kind (ret: IRQ, SError, trap, illegal
 *    exception return) and, for a trap, by its exception class (ESR_EL2's
 *    EC, which the tracepoint passes); the trapped instruction's syndrome
 *    (ESR_EL2's ISS, for the direction of a system register access and
 *    WFI against WFE) is read from the vCPU, where KVM saved it.  An IRQ
 *    exit's saved ESR is a stale one: only traps are counted by class.
 *  - kvm_mmio fires for a read at the exit (READ_UNSATISFIED) and again
 *    when the value comes (READ: from the in-kernel device at once, with
 *    the vCPU loaded, or on the next KVM_RUN before KVM loads it, when no
 *    vCPU is running here).  Reads are counted at the first, writes at
 *    their only one: once each.
 *
 * The clock is ktime_get_mono_fast_ns() (clock.h).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/jump_label.h>
#include <linux/kvm_host.h>
#include <linux/sched.h>
#include <linux/tracepoint.h>
#include <asm/esr.h>
#include <asm/kvm_asm.h>
#include <asm/kvm_emulate.h>

#include <kvm_statsfd/clock.h>
#include <kvm_statsfd/compat.h>
#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/exit_reasons.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/layout.h>
#include <kvm_statsfd/probes.h>

/* kvm_mmio's type argument (include/trace/events/kvm.h). */
#define KS_TRACE_MMIO_READ_UNSATISFIED	0
#define KS_TRACE_MMIO_WRITE		2

/* Exit class of each exception class, for trap exits. */
static u8 ks_class_of[KS_ARM64_EC_BUCKETS] __ro_after_init;

/* The probe bodies below are compiled for a set of groups (probes.h). */

/*
 * The exit @kv last took was handled at @now: one latency sample, in its
 * class's histogram and, unless it is a WFI or WFE (the time the vCPU
 * idled), in the overall one.
 */
static __always_inline void ks_exit_handled(unsigned long set,
					    struct ks_vcpu *kv, u64 now)
{
	u64 lat = ks_clock_ns(now, kv->exit_ts);
	unsigned long cls = kv->exit_class, b = ks_log_bucket(lat);

	kv->exit_ts = 0;
	if (ks_on(set, KS_GRP_CLASS_LATENCY) && cls < KS_NR_CLASSES) {
		struct ks_class_latency *cl = kv->cls;

		ks_inc(&cl->cls[cls].hist[b]);
		ks_add(&cl->cls[cls].ns, lat);
	}
	if (ks_on(set, KS_GRP_LATENCY) && cls != KS_CLASS_WFX) {
		struct ks_latency *l = kv->lat;

		ks_inc(&l->hist[b]);
		ks_add(&l->ns, lat);
		if (lat > l->max_ns)
			WRITE_ONCE(l->max_ns, lat);
	}
}

/* A trapped instruction of exception class @ec: count it by kind. */
static __always_inline void ks_count_dir(struct kvm_vcpu *vcpu,
					 struct ks_vcpu *kv, u32 ec)
{
	unsigned long i;

	switch (ec) {
	case ESR_ELx_EC_SYS64:
		/* ISS bit 0: 1 for a read (MRS), 0 for a write (MSR). */
		i = KS_DIR_SYSREG_WRITE -
		    (kvm_vcpu_get_esr(vcpu) & ESR_ELx_SYS64_ISS_DIR_MASK);
		break;
	case ESR_ELx_EC_WFx:
		/* ISS bit 0: 1 for WFE (and WFET), 0 for WFI (and WFIT). */
		i = KS_DIR_WFI + (kvm_vcpu_get_esr(vcpu) & ESR_ELx_WFx_ISS_WFE);
		break;
	case ESR_ELx_EC_HVC32:
	case ESR_ELx_EC_HVC64:
		i = KS_DIR_HVC;
		break;
	case ESR_ELx_EC_SMC32:
	case ESR_ELx_EC_SMC64:
		i = KS_DIR_SMC;
		break;
	default:
		return;
	}
	ks_inc(&kv->io->exits[i]);
}

/* kvm_exit: @ret is the exit's kind, @esr_ec a trap's exception class. */
static __always_inline void ks_exit(unsigned long set, int ret, u32 esr_ec)
{
	struct kvm_vcpu *vcpu = ks_running_vcpu();
	u32 kind, ec = esr_ec & (KS_ARM64_EC_BUCKETS - 1), cls;
	struct ks_vcpu *kv;

	if (unlikely(!vcpu))
		return;
	kv = ks_vcpu_of(vcpu);
	if (!kv)
		return;
	if (ks_tracks_run(set))
		ks_vcpu_in_run(kv);
	if (ks_timed(set)) {
		u64 now = ks_clock();

		if (ks_lat_timed(set))
			kv->exit_ts = now;
		if (ks_on(set, KS_GRP_GUEST_TIME)) {
			struct ks_guest_time *gt = kv->guest;

			/*
			 * entry_ts is the last entry's, or, at the first exit
			 * after the probes attached, the state's creation
			 * (counters.c): a lower bound of that guest time.
			 */
			ks_add(&gt->ns, ks_clock_ns(now, kv->entry_ts));
			WRITE_ONCE(gt->in_guest, 0);
		}
	}
	if (!ks_on(set, KS_GRP_EXIT_REASONS) && !ks_classify(set))
		return;

	kind = ks_arm64_kind(ret);
	if (ks_on(set, KS_GRP_EXIT_REASONS)) {
		ks_inc(&kv->reasons[KS_ARM64_EC_BUCKETS + kind]);
		if (kind == KVM_STATSFD_ARM64_KIND_TRAP)
			ks_inc(&kv->reasons[ec]);
	}
	if (!ks_classify(set))
		return;
	if (kind == KVM_STATSFD_ARM64_KIND_TRAP)
		cls = ks_class_of[ec];
	else
		cls = kind == KVM_STATSFD_ARM64_KIND_IRQ ? KS_CLASS_IRQ :
							   KS_CLASS_OTHER;
	/* For the latency sample when the exit is handled. */
	if (ks_lat_timed(set))
		kv->exit_class = cls;
	if (ks_on(set, KS_GRP_IO_MSR) && kind == KVM_STATSFD_ARM64_KIND_TRAP)
		ks_count_dir(vcpu, kv, ec);
}

/* kvm_entry, attached only when a group reads the clock. */
static __always_inline void ks_entry(unsigned long set)
{
	struct kvm_vcpu *vcpu = ks_running_vcpu();
	struct ks_vcpu *kv;
	u64 now;

	if (unlikely(!vcpu))
		return;
	kv = ks_vcpu_of(vcpu);
	if (!kv)
		return;
	now = ks_clock();
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
static notrace void name(void *data, int ret, unsigned int esr_ec,	\
			 unsigned long vcpu_pc)				\
{									\
	ks_exit(set, ret, esr_ec);					\
}

KS_EXIT_PROBE(ks_probe_kvm_exit, KS_SET_LOAD)
KS_EXIT_PROBE(ks_probe_kvm_exit_all, KS_SET_ALL)
KS_EXIT_PROBE(ks_probe_kvm_exit_counting, KS_SET_COUNTING)
KS_EXIT_PROBE(ks_probe_kvm_exit_default, KS_DEFAULT_GROUPS)

static notrace void ks_probe_kvm_entry(void *data, unsigned long vcpu_pc)
{
	ks_entry(KS_SET_LOAD);
}

static notrace void ks_probe_kvm_entry_all(void *data, unsigned long vcpu_pc)
{
	ks_entry(KS_SET_ALL);
}

static notrace void ks_probe_kvm_entry_default(void *data,
					       unsigned long vcpu_pc)
{
	ks_entry(KS_DEFAULT_GROUPS);
}

/* ks_probe_kvm_userspace_exit(), on this file's ks_exit_handled(). */
#include <kvm_statsfd/probe_userspace_exit.h>

static void ks_probe_kvm_mmio(void *data, int type, int len, u64 gpa,
			      void *val)
{
	struct kvm_vcpu *vcpu;
	struct ks_vcpu *kv;

	if (type != KS_TRACE_MMIO_READ_UNSATISFIED &&
	    type != KS_TRACE_MMIO_WRITE)
		return;
	vcpu = ks_running_vcpu();
	kv = vcpu ? ks_vcpu_of(vcpu) : NULL;
	if (unlikely(!kv))
		return;
	ks_inc(type == KS_TRACE_MMIO_WRITE ? &kv->io->mmio_writes :
					     &kv->io->mmio_reads);
}

unsigned int ks_exit_buckets(void)
{
	return KS_ARM64_EC_BUCKETS;
}

const char *ks_exit_stat_name(void)
{
	return KVM_STATSFD_EXIT_STAT_ARM64;
}

void ks_vcpu_arch_init(struct ks_vcpu *kv, struct kvm_vcpu *vcpu)
{
}

int ks_arch_kvm_symbols_init(void)
{
	return 0;
}

/* The exit classes of the exception classes. */
static void ks_classes_init(void)
{
	static const struct { u8 ec, cls; } map[] = {
		{ ESR_ELx_EC_DABT_LOW, KS_CLASS_MMIO },
		{ ESR_ELx_EC_SYS64, KS_CLASS_SYSREG },
		{ ESR_ELx_EC_HVC32, KS_CLASS_HVC },
		{ ESR_ELx_EC_HVC64, KS_CLASS_HVC },
		{ ESR_ELx_EC_SMC32, KS_CLASS_HVC },
		{ ESR_ELx_EC_SMC64, KS_CLASS_HVC },
		{ ESR_ELx_EC_WFx, KS_CLASS_WFX },
	};
	unsigned int i;

	/* ks_count_dir()'s arithmetic. */
	BUILD_BUG_ON(KS_DIR_SYSREG_WRITE - KS_DIR_SYSREG_READ != 1 ||
		     ESR_ELx_SYS64_ISS_DIR_READ != 1);
	BUILD_BUG_ON(KS_DIR_WFE - KS_DIR_WFI != 1 || ESR_ELx_WFx_ISS_WFE != 1);
	BUILD_BUG_ON(ESR_ELx_EC_MAX + 1 != KS_ARM64_EC_BUCKETS);
	/* The kinds are KVM's own numbers (uapi.h). */
	BUILD_BUG_ON(KVM_STATSFD_ARM64_KIND_IRQ != ARM_EXCEPTION_IRQ);
	BUILD_BUG_ON(KVM_STATSFD_ARM64_KIND_SERROR != ARM_EXCEPTION_EL1_SERROR);
	BUILD_BUG_ON(KVM_STATSFD_ARM64_KIND_TRAP != ARM_EXCEPTION_TRAP);
	BUILD_BUG_ON(KVM_STATSFD_ARM64_KIND_IL != ARM_EXCEPTION_IL);
	memset(ks_class_of, KS_CLASS_OTHER, sizeof(ks_class_of));
	for (i = 0; i < ARRAY_SIZE(map); i++)
		ks_class_of[map[i].ec] = map[i].cls;
}

void ks_probes_arch_init(unsigned long set, struct ks_probe_funcs *f)
{
	ks_classes_init();

	*f = (struct ks_probe_funcs){
		.exit = ks_probe_kvm_exit,
		.entry = ks_probe_kvm_entry,
		.userspace_exit = ks_probe_kvm_userspace_exit,
		.mmio = ks_probe_kvm_mmio,
	};
	/* The probes compiled for exactly this load's groups, if any. */
	if (set == KS_SET_ALL) {
		f->exit = ks_probe_kvm_exit_all;
		f->entry = ks_probe_kvm_entry_all;
	} else if (set == KS_DEFAULT_GROUPS) {
		f->exit = ks_probe_kvm_exit_default;
		f->entry = ks_probe_kvm_entry_default;
	} else if (set == KS_SET_COUNTING) {
		f->exit = ks_probe_kvm_exit_counting;
	}
}
