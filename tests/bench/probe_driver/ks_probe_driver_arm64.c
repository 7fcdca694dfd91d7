// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only, arm64: the cost of what runs on KVM's exit path per VM exit,
 * driven from the guest kernel itself, as ks_probe_driver_x86.c does on x86
 * (same debugfs file and protocol, so tests/bench/exit-cost-gate-arm64 and
 * probe_cost read it alike).
 *
 * /sys/kernel/debug/ks_probe_driver/probe_cost: write
 * "VCPU_FD ITERATIONS [PATH [OTHER_VCPU_FD]]"; read back
 * "iterations exit_entry exit entry plain loop enabled" in counter ticks
 * for all iterations (the loops of ks_probe_driver_x86.c: kvm_exit then
 * kvm_entry, each alone, a u64 increment, the empty loop to subtract),
 * then which tracepoints have a probe (1 kvm_exit, 2 kvm_entry, 4
 * kvm_mmio): only those run their out-of-line dispatch.
 *
 * KVM's dispatch is compiled into vmlinux: kvm_exit and kvm_entry in
 * kvm_arch_vcpu_ioctl_run() (arch/arm64/kvm/arm.c), whose translation unit
 * also defines their iterators (CREATE_TRACE_POINTS), so that GCC inlines
 * __traceiter_kvm_exit() and __traceiter_kvm_entry() into the run loop;
 * kvm_mmio in io_mem_abort() (mmio.c), which calls __traceiter_kvm_mmio()
 * out of line.  The driver compiles the same: ks_trace_kvm_exit() and
 * ks_trace_kvm_entry() below are trace_kvm_exit() with the iterator
 * inlined, trace_kvm_mmio() is the kernel's own (kvm_trace_arm64.h), with
 * the arguments KVM passes: the exception class of the vCPU's saved
 * ESR_EL2 and its PC, read from the vCPU.  On Debian's 6.12
 * (PREEMPT_VOLUNTARY, no preempt count; arm64 has no static calls) an
 * enabled tracepoint there is the static key's branch, cpu_online(), the
 * arguments, the probe list's load and test, each probe's function and
 * data and the indirect call, the list's next entry and its test, and the
 * branch back.  tests/bench/dispatch-count-arm64 counts those
 * instructions in the shipped kernel image and in this driver, and make
 * check's exit-cost-arm64 lane fails if they differ.
 *
 * The counter is the PMU's cycle counter, PMCCNTR_EL0, with EL2 counted
 * (the host kernel runs there under VHE).  Under QEMU's -icount shift=0
 * TCG's PMU derives it from the virtual clock, which then advances 1 ns
 * per instruction: one tick per instruction.  The architected counter
 * (CNTVCT_EL0) follows the same clock at CNTFRQ_EL0 (62.5 MHz on QEMU
 * 7.2's virt machine), one tick per 16 instructions: too coarse.  At load
 * the driver counts 1000 NOPs with both and says so in the kernel log;
 * the lane fails unless PMCCNTR_EL0 counted exactly 1000.
 *
 * PATH is the exit the probes see: "irq" (an interrupt, the plain exit),
 * "mmio" (a data abort on an MMIO write: kvm_mmio fires too), "sysreg" (a
 * trapped MRS), "hvc" (HVC64), "wfx" (WFI).  The driver writes the exit's
 * ESR_EL2 into the vCPU (put back afterwards) and passes KVM's return
 * code (ARM_EXCEPTION_IRQ or ARM_EXCEPTION_TRAP).  On arm64 the probes
 * take the vCPU from kvm_get_running_vcpu(), so every iteration stores
 * the vCPU it drives into that per-CPU variable, as vcpu_load() would
 * (the empty loop too: it is subtracted).  With OTHER_VCPU_FD the
 * iterations alternate between two vCPUs of one VM, so that every kvm_exit
 * misses the module's per-CPU vCPU cache.
 *
 * The vCPU is locked and loaded (vcpu_load) as during KVM_RUN, and the
 * loops run with interrupts off in chunks, so that nothing else counts.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/kvm_host.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <asm/esr.h>
#include <asm/kvm_asm.h>
#include <asm/kvm_emulate.h>
#include <asm/sysreg.h>

#include "ks_probe_driver.h"
#include "kvm_trace_arm64.h"

/* Iterations per interrupts-off chunk. */
#define KS_CHUNK	1000
/* kvm_mmio's type for a write (include/trace/events/kvm.h). */
#define KS_TRACE_MMIO_WRITE	2
/* PMCCFILTR_EL0.NSH: count at EL2 too. */
#define KS_PMCCFILTR_NSH	BIT(27)
#define KS_PMCR_E		BIT(0)
#define KS_PMCR_LC		BIT(6)
#define KS_PMCNTEN_C		BIT(31)

/* KVM's (kvm_main.c, static; resolved at load like the tracepoints). */
DECLARE_PER_CPU(struct kvm_vcpu *, kvm_running_vcpu);

static u64 ks_plain_counter;
/*
 * An MMIO write's guest physical address, read at run time so that the
 * compiler cannot specialise the loops for a constant one (KVM's is not).
 */
static u64 ks_mmio_gpa = SZ_256M;

enum { PATH_IRQ, PATH_MMIO, PATH_SYSREG, PATH_HVC, PATH_WFX, PATH_NR };

const char *const ks_path_names[PATH_NR] = {
	"irq", "mmio", "sysreg", "hvc", "wfx",
};

#define KS_ESR(ec, iss)	(((u64)(ec) << ESR_ELx_EC_SHIFT) | ESR_ELx_IL | (iss))

/*
 * The saved ESR_EL2 of each path.  An IRQ exit leaves the last trap's
 * there: 0 here.  MMIO: a valid syndrome (ISV), a 4-byte (SAS 2) write
 * (WnR) from X1.  Sysreg: MRS (direction bit set) of some register.
 */
static const u64 ks_esr[PATH_NR] = {
	0,
	KS_ESR(ESR_ELx_EC_DABT_LOW, ESR_ELx_ISV | (2UL << ESR_ELx_SAS_SHIFT) |
	       (1UL << ESR_ELx_SRT_SHIFT) | ESR_ELx_WNR),
	KS_ESR(ESR_ELx_EC_SYS64, ESR_ELx_SYS64_ISS_DIR_READ),
	KS_ESR(ESR_ELx_EC_HVC64, 0),
	KS_ESR(ESR_ELx_EC_WFx, 0),
};

static const int ks_ret[PATH_NR] = {
	ARM_EXCEPTION_IRQ, ARM_EXCEPTION_TRAP, ARM_EXCEPTION_TRAP,
	ARM_EXCEPTION_TRAP, ARM_EXCEPTION_TRAP,
};

/*
 * trace_kvm_exit() and trace_kvm_entry() as arm.c compiles them, where
 * CREATE_TRACE_POINTS defines their iterators (tracepoint.h's
 * __DECLARE_TRACE, __DO_TRACE and DEFINE_TRACE_FN) and GCC inlines them:
 * no preempt count to raise on Debian's PREEMPT_VOLUNTARY kernels, so
 * after the static key come the cpu_online() test and the iterator's
 * walk of the probe list.
 */
static __always_inline void ks_trace_kvm_exit(int ret, unsigned int esr_ec,
					      unsigned long vcpu_pc)
{
	struct tracepoint_func *it;

	if (!static_key_false(&__tracepoint_kvm_exit.key) ||
	    !cpu_online(raw_smp_processor_id()))
		return;
	it = rcu_dereference_raw(__tracepoint_kvm_exit.funcs);
	if (!it)
		return;
	do {
		void (*probe)(void *data, int ret, unsigned int esr_ec,
			      unsigned long vcpu_pc) = READ_ONCE(it->func);

		probe(it->data, ret, esr_ec, vcpu_pc);
	} while ((++it)->func);
}

static __always_inline void ks_trace_kvm_entry(unsigned long vcpu_pc)
{
	struct tracepoint_func *it;

	if (!static_key_false(&__tracepoint_kvm_entry.key) ||
	    !cpu_online(raw_smp_processor_id()))
		return;
	it = rcu_dereference_raw(__tracepoint_kvm_entry.funcs);
	if (!it)
		return;
	do {
		void (*probe)(void *data, unsigned long vcpu_pc) =
			READ_ONCE(it->func);

		probe(it->data, vcpu_pc);
	} while ((++it)->func);
}

/*
 * An exit and an entry as KVM's run loop dispatches them.  KVM runs the
 * guest between the two: nothing of one site's arguments is shared with
 * the other's (the barriers).
 */
static __always_inline void ks_exit(struct kvm_vcpu *vcpu, int ret)
{
	ks_trace_kvm_exit(ret, kvm_vcpu_trap_get_class(vcpu), *vcpu_pc(vcpu));
	barrier();
}

static __always_inline void ks_entry(struct kvm_vcpu *vcpu)
{
	barrier();
	ks_trace_kvm_entry(*vcpu_pc(vcpu));
}

/* io_mem_abort()'s on an MMIO write: the kernel's trace_kvm_mmio(). */
static __always_inline void ks_mmio(u64 gpa, u32 *data)
{
	trace_kvm_mmio(KS_TRACE_MMIO_WRITE, sizeof(*data), gpa, data);
}

/* What every loop has, so that the empty one's work is in all. */
static __always_inline void ks_chosen(struct kvm_vcpu *vcpu, int ret, u64 gpa,
				      u32 *data)
{
	asm volatile("" : : "r" (vcpu), "r" (ret), "r" (gpa), "r" (data));
}

/*
 * The loops, one function each, so that the compiler shares no code
 * between their tracepoint sites and tests/bench/dispatch-count-arm64
 * finds the measured ones by name: ks_loop_exit_entry()'s and
 * ks_loop_mmio()'s must count as many instructions as vmlinux's.  Each
 * runs @n iterations over vcpus[i & 1], made the running vCPU first.
 */
#define KS_LOOP(what, body)						\
static noinline void ks_loop_##what(struct kvm_vcpu **vcpus, int ret,	\
				    u64 gpa, u32 n)			\
{									\
	struct kvm_vcpu *vcpu;						\
	u32 i, __maybe_unused data = 0;				\
									\
	for (i = 0; i < n; i++) {					\
		vcpu = vcpus[i & 1];					\
		this_cpu_write(kvm_running_vcpu, vcpu);			\
		body;							\
	}								\
	this_cpu_write(kvm_running_vcpu, vcpus[0]);			\
}

KS_LOOP(exit_entry, ks_exit(vcpu, ret); ks_entry(vcpu))
KS_LOOP(mmio, ks_exit(vcpu, ret); ks_mmio(gpa, &data); ks_entry(vcpu))
KS_LOOP(exit, ks_exit(vcpu, ret))
KS_LOOP(exit_mmio, ks_exit(vcpu, ret); ks_mmio(gpa, &data))
KS_LOOP(entry, ks_entry(vcpu))
KS_LOOP(plain, ks_chosen(vcpu, ret, gpa, &data);
	WRITE_ONCE(ks_plain_counter, ks_plain_counter + 1))
KS_LOOP(empty, ks_chosen(vcpu, ret, gpa, &data))

/* The cycle counter, counting EL2 too, started; the old state in @st. */
struct ks_pmu_state {
	u64 pmcr, filter, enabled;
};

static void ks_pmu_start(struct ks_pmu_state *st)
{
	st->pmcr = read_sysreg(pmcr_el0);
	st->filter = read_sysreg(pmccfiltr_el0);
	st->enabled = read_sysreg(pmcntenset_el0);
	write_sysreg(KS_PMCCFILTR_NSH, pmccfiltr_el0);
	write_sysreg(st->pmcr | KS_PMCR_E | KS_PMCR_LC, pmcr_el0);
	write_sysreg(KS_PMCNTEN_C, pmcntenset_el0);
	isb();
}

static void ks_pmu_stop(const struct ks_pmu_state *st)
{
	if (!(st->enabled & KS_PMCNTEN_C))
		write_sysreg(KS_PMCNTEN_C, pmcntenclr_el0);
	write_sysreg(st->filter, pmccfiltr_el0);
	write_sysreg(st->pmcr, pmcr_el0);
	isb();
}

static __always_inline u64 ks_cycles(void)
{
	isb();
	return read_sysreg(pmccntr_el0);
}

/* Counter ticks of @n iterations of @what, interrupts off. */
static noinline u64 ks_measure(struct kvm_vcpu **vcpus, int path, int what,
			       u32 n)
{
	int ret = ks_ret[path];
	u64 gpa = READ_ONCE(ks_mmio_gpa), t0, t1;
	struct ks_pmu_state st;
	unsigned long flags;
	bool mmio = path == PATH_MMIO;

	local_irq_save(flags);
	ks_pmu_start(&st);
	t0 = ks_cycles();
	switch (what) {
	case R_EXIT_ENTRY:
		if (mmio)
			ks_loop_mmio(vcpus, ret, gpa, n);
		else
			ks_loop_exit_entry(vcpus, ret, gpa, n);
		break;
	case R_EXIT:
		if (mmio)
			ks_loop_exit_mmio(vcpus, ret, gpa, n);
		else
			ks_loop_exit(vcpus, ret, gpa, n);
		break;
	case R_ENTRY:
		ks_loop_entry(vcpus, ret, gpa, n);
		break;
	case R_PLAIN:
		ks_loop_plain(vcpus, ret, gpa, n);
		break;
	default:
		ks_loop_empty(vcpus, ret, gpa, n);
	}
	t1 = ks_cycles();
	ks_pmu_stop(&st);
	local_irq_restore(flags);
	return t1 - t0;
}

int ks_run(struct kvm_vcpu **vcpus, u64 iters, int path, u64 *result)
{
	struct kvm_vcpu *vcpu = vcpus[0];
	u64 esr[2], done, n;
	int what, i;

	mutex_lock(&vcpu->mutex);
	if (vcpus[1] != vcpu)
		mutex_lock_nested(&vcpus[1]->mutex, 1);
	vcpu_load(vcpu);
	for (i = 0; i < 2; i++) {
		esr[i] = vcpus[i]->arch.fault.esr_el2;
		vcpus[i]->arch.fault.esr_el2 = ks_esr[path];
	}
	for (done = 0; done < iters; done += n) {
		n = min_t(u64, iters - done, KS_CHUNK);
		for (what = R_EXIT_ENTRY; what < R_NR; what++)
			result[what] += ks_measure(vcpus, path, what, n);
		/* Between chunks, with the vCPU loaded: as KVM_RUN would. */
		cond_resched();
	}
	for (i = 1; i >= 0; i--)
		vcpus[i]->arch.fault.esr_el2 = esr[i];
	vcpu_put(vcpu);
	if (vcpus[1] != vcpu)
		mutex_unlock(&vcpus[1]->mutex);
	mutex_unlock(&vcpu->mutex);
	return 0;
}

/*
 * The counters against 1000 NOPs: PMCCNTR_EL0 must count each, and the
 * architected counter's rate says why it is not the one read.  Then what
 * the module's clock costs on this path, ktime_get_mono_fast_ns(), against
 * a read of the architected counter itself, for the record (the kernel
 * log, and so the lane's console).
 */
static void ks_calibrate(void)
{
	u64 c0, c1, c2, v0, v1, v2, k, p, sink = 0;
	struct ks_pmu_state st;
	unsigned long flags;
	int i;

	local_irq_save(flags);
	ks_pmu_start(&st);
	/*
	 * One asm each, so that no instruction of the compiler's comes
	 * between the reads: c1 - c0 is the ISB and the second read, c2 less
	 * the same is the NOPs.
	 */
	asm volatile("isb\n\tmrs %0, pmccntr_el0\n\tisb\n\tmrs %1, pmccntr_el0"
		     : "=&r" (c0), "=r" (c1));
	c2 = c1 - c0;
	asm volatile("isb\n\tmrs %0, pmccntr_el0\n\t.rept 1000\n\tnop\n\t.endr\n\t"
		     "isb\n\tmrs %1, pmccntr_el0" : "=&r" (c0), "=r" (c1));
	v0 = __arch_counter_get_cntvct();
	v1 = __arch_counter_get_cntvct();
	asm volatile(".rept 1000\n\tnop\n\t.endr");
	v2 = __arch_counter_get_cntvct();
	k = ks_cycles();
	for (i = 0; i < 100; i++)
		sink += ktime_get_mono_fast_ns();
	k = ks_cycles() - k;
	p = ks_cycles();
	for (i = 0; i < 100; i++)
		sink += __arch_counter_get_cntpct();
	p = ks_cycles() - p;
	ks_pmu_stop(&st);
	local_irq_restore(flags);
	pr_info("counter: pmccntr_el0 counted %llu for 1000 nops, cntvct_el0 %llu (cntfrq_el0 %lu Hz)\n",
		(c1 - c0) - c2, (v2 - v1) - (v1 - v0),
		(unsigned long)read_sysreg(cntfrq_el0));
	/* Each loop's own instructions (about 4 a call) included. */
	pr_info("clock: 100 calls of ktime_get_mono_fast_ns %llu instructions, 100 reads of cntpct_el0 %llu (%llu)\n",
		k, p, sink & 1);
}

const int ks_path_nr = PATH_NR;

void ks_arch_init(void)
{
	ks_calibrate();
}

/* Which of the three tracepoints have probes: bits kvm_exit, entry, mmio. */
int ks_arch_read_extra(char *buf, size_t len)
{
	unsigned int on = static_key_enabled(&__tracepoint_kvm_exit.key) |
			  static_key_enabled(&__tracepoint_kvm_entry.key) << 1 |
			  static_key_enabled(&__tracepoint_kvm_mmio.key) << 2;

	return scnprintf(buf, len, " %u", on);
}
