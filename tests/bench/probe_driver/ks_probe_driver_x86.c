// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only: the cost of what runs on KVM's exit path per VM exit, driven
 * from the guest kernel itself (no nested VM has to run, so the count is
 * exact under QEMU's -icount, where the TSC advances once per instruction).
 *
 * /sys/kernel/debug/ks_probe_driver/probe_cost (ks_probe_driver_file.c): write
 * "VCPU_FD ITERATIONS [PATH [OTHER_VCPU_FD]]"; read back
 * "iterations exit_entry exit entry plain loop" in TSC ticks for all
 * iterations: exit_entry = kvm_exit then kvm_entry dispatched as KVM
 * dispatches them, exit and entry alone, plain = one u64 increment (what
 * KVM's own exits counter costs), loop = the empty loop, to subtract.
 *
 * KVM's dispatch is trace_kvm_exit() and trace_kvm_entry() themselves,
 * from the kernel's own DECLARE_TRACE (kvm_trace.h): on 6.12, per enabled
 * tracepoint, the static key's jump, cpu_online(), the preempt count's
 * increment, the probe list's load and NULL test, the first probe's data
 * and the arguments, the (inline static) call, the preempt count's
 * decrement and its taken jne back: 14 instructions, as in Debian's
 * kvm-amd.ko (svm_vcpu_run) and kvm-intel.ko (vmx_vcpu_run).
 * tests/bench/dispatch-count counts both from the binaries and make
 * check's exit-cost lane fails if they differ.  As in KVM, the loops run
 * with preemption and interrupts off (vcpu_enter_guest()'s context), so
 * the preempt count never drops to zero.
 *
 * PATH is the exit the probes see: "left" (the exit state a vCPU that
 * never ran has: 0, an exception exit), "intr" (an external interrupt, the
 * plain exit), "io" (an IN from port 0x70), "msr" (a WRMSR), "hlt".  On
 * SVM the driver writes them into the vCPU's VMCB, on VMX into its VMCS
 * (VMWRITE of the read-only exit fields, where IA32_VMX_MISC allows it;
 * else -EOPNOTSUPP), and puts the old values back afterwards.  With
 * OTHER_VCPU_FD (a vCPU of the same VM) the iterations alternate between
 * the two vCPUs, so that every kvm_exit misses the module's per-CPU vCPU
 * cache (its entry then hits); without it, both hit.
 *
 * The vCPU is locked and loaded (vcpu_load) as during KVM_RUN, so that the
 * probes may read its exit state (a VMX VMCS must be loaded), and the loops
 * run with interrupts off in chunks, so that nothing else is counted.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/kvm_host.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/static_call.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <asm/msr.h>
#include <asm/processor.h>
#include <asm/svm.h>
#include <asm/vmx.h>

#include "ks_probe_driver.h"
#include "kvm_trace.h"

/* IA32_VMX_MISC bit 29: asm/vmx.h since 6.9, asm/msr-index.h before. */
#ifndef VMX_MISC_VMWRITE_SHADOW_RO_FIELDS
#define VMX_MISC_VMWRITE_SHADOW_RO_FIELDS MSR_IA32_VMX_MISC_VMWRITE_SHADOW_RO_FIELDS
#endif

#define KS_ISA_VMX	1
#define KS_ISA_SVM	2
/* Iterations per interrupts-off chunk. */
#define KS_CHUNK	1000

static u64 ks_plain_counter;

static u32 ks_isa(void)
{
	return boot_cpu_data.x86_vendor == X86_VENDOR_INTEL ? KS_ISA_VMX :
							      KS_ISA_SVM;
}

enum { PATH_LEFT, PATH_INTR, PATH_IO, PATH_MSR, PATH_HLT, PATH_NR };

const char *const ks_path_names[PATH_NR] = {
	"left", "intr", "io", "msr", "hlt",
};

/* The exit state of @path: SVM exit code and exit_info_1. */
static const u32 ks_svm_code[PATH_NR] = {
	0, SVM_EXIT_INTR, SVM_EXIT_IOIO, SVM_EXIT_MSR, SVM_EXIT_HLT,
};

/* IN (type bit 0) from port 0x70; a WRMSR (1). */
static const u64 ks_svm_info1[PATH_NR] = { 0, 0, (0x70 << 16) | 1, 1, 0 };

/* VMX: exit reason and qualification. */
static const u32 ks_vmx_reason[PATH_NR] = {
	0, EXIT_REASON_EXTERNAL_INTERRUPT, EXIT_REASON_IO_INSTRUCTION,
	EXIT_REASON_MSR_WRITE, EXIT_REASON_HLT,
};

/* IN (bit 3), one byte, from port 0x70. */
static const u64 ks_vmx_qual[PATH_NR] = { 0, 0, (0x70 << 16) | 8, 0, 0 };

/*
 * The VMCB of a vCPU of kvm_amd: struct vcpu_svm (arch/x86/kvm/svm/svm.h,
 * 5.13 to 6.18) starts with the struct kvm_vcpu, then the vmcb pointer,
 * then vmcb01, whose ptr and pa repeat it: checked, so that a layout that
 * differs gives NULL, not a wrong write.
 */
static struct vmcb *ks_svm_vmcb(struct kvm_vcpu *vcpu)
{
	unsigned long *p = (void *)vcpu + ALIGN(sizeof(*vcpu), sizeof(long));
	void *vmcb = (void *)p[0];

	if (!vmcb || !PAGE_ALIGNED(vmcb) || !virt_addr_valid(vmcb) ||
	    p[1] != (unsigned long)vmcb || p[2] != __pa(vmcb))
		return NULL;
	return vmcb;
}

static unsigned long ks_vmread(unsigned long field)
{
	unsigned long value = 0;

	asm volatile("vmread %[field], %[value]"
		     : [value] "+r" (value) : [field] "r" (field) : "cc");
	return value;
}

/* VMWRITE to the current VMCS; false on VMfail. */
static bool ks_vmwrite(unsigned long field, unsigned long value)
{
	bool fail;

	asm volatile("vmwrite %[value], %[field]"
		     : "=@ccna" (fail) : [field] "r" (field), [value] "rm" (value)
		     : "cc");
	return !fail;
}

/* A vCPU's exit state, saved to be put back. */
struct ks_exit_state {
	struct vmcb *vmcb;
	u32 code;
	u64 info1;
};

/*
 * Give @vcpu the exit state of @path (@set), or put back @st (!@set).
 * VMX: the current VMCS, @vcpu's; preemption off.
 */
static int ks_exit_state(struct kvm_vcpu *vcpu, int path,
			 struct ks_exit_state *st, bool set)
{
	if (ks_isa() == KS_ISA_SVM) {
		struct vmcb *vmcb = set ? ks_svm_vmcb(vcpu) : st->vmcb;

		if (!vmcb)
			return -EOPNOTSUPP;
		if (set) {
			st->vmcb = vmcb;
			st->code = vmcb->control.exit_code;
			st->info1 = vmcb->control.exit_info_1;
			vmcb->control.exit_code = ks_svm_code[path];
			vmcb->control.exit_info_1 = ks_svm_info1[path];
		} else {
			vmcb->control.exit_code = st->code;
			vmcb->control.exit_info_1 = st->info1;
		}
		return 0;
	}
	if (set) {
		u64 misc;

		if (path == PATH_LEFT)
			return 0;
		rdmsrl(MSR_IA32_VMX_MISC, misc);
		if (!(misc & VMX_MISC_VMWRITE_SHADOW_RO_FIELDS))
			return -EOPNOTSUPP;
		st->code = ks_vmread(VM_EXIT_REASON);
		st->info1 = ks_vmread(EXIT_QUALIFICATION);
		if (!ks_vmwrite(VM_EXIT_REASON, ks_vmx_reason[path]) ||
		    !ks_vmwrite(EXIT_QUALIFICATION, ks_vmx_qual[path]))
			return -EIO;
		st->vmcb = (void *)1;	/* something to put back */
		return 0;
	}
	if (st->vmcb && (!ks_vmwrite(VM_EXIT_REASON, st->code) ||
			 !ks_vmwrite(EXIT_QUALIFICATION, st->info1)))
		return -EIO;
	return 0;
}

/*
 * The loops, one function each (named ks_loop_<what>), so that the
 * compiler shares no code between their tracepoint sites and
 * tests/bench/dispatch-count finds the measured ones by name: those of
 * ks_loop_exit_entry() must count as many instructions as KVM's.  Each
 * runs @n iterations over vcpus[i & 1] (the same vCPU twice unless a
 * cache miss is measured).
 */
#define KS_LOOP(what, body)						\
static noinline void ks_loop_##what(struct kvm_vcpu **vcpus, u32 isa,	\
				    u32 n)				\
{									\
	struct kvm_vcpu *vcpu;						\
	u32 i;								\
									\
	for (i = 0; i < n; i++) {					\
		vcpu = vcpus[i & 1];					\
		body;							\
	}								\
}

KS_LOOP(exit_entry, trace_kvm_exit(vcpu, isa); trace_kvm_entry(vcpu, false))
KS_LOOP(exit, trace_kvm_exit(vcpu, isa))
KS_LOOP(entry, trace_kvm_entry(vcpu, false))
/* The vCPU is chosen in every loop, and the empty one's work is in all. */
#define KS_CHOSEN do { asm volatile("" : : "r" (vcpu), "r" (isa)); } while (0)
KS_LOOP(plain, KS_CHOSEN; WRITE_ONCE(ks_plain_counter, ks_plain_counter + 1))
KS_LOOP(empty, KS_CHOSEN)

/* TSC ticks of @n iterations of @what, preemption and interrupts off. */
static noinline u64 ks_measure(struct kvm_vcpu **vcpus, int what, u32 n)
{
	u32 isa = ks_isa();
	unsigned long flags;
	u64 t0, t1;

	preempt_disable();
	local_irq_save(flags);
	t0 = rdtsc_ordered();
	switch (what) {
	case R_EXIT_ENTRY:
		ks_loop_exit_entry(vcpus, isa, n);
		break;
	case R_EXIT:
		ks_loop_exit(vcpus, isa, n);
		break;
	case R_ENTRY:
		ks_loop_entry(vcpus, isa, n);
		break;
	case R_PLAIN:
		ks_loop_plain(vcpus, isa, n);
		break;
	default:
		ks_loop_empty(vcpus, isa, n);
	}
	t1 = rdtsc_ordered();
	local_irq_restore(flags);
	preempt_enable();
	return t1 - t0;
}

int ks_run(struct kvm_vcpu **vcpus, u64 iters, int path, u64 *result)
{
	struct ks_exit_state st[2] = {};
	struct kvm_vcpu *vcpu = vcpus[0];
	int what, ret, ret2;
	u64 done, n;

	mutex_lock(&vcpu->mutex);
	vcpu_load(vcpu);
	preempt_disable();
	ret = ks_exit_state(vcpus[0], path, &st[0], true);
	/* VMX: the other vCPU's VMCS is not loaded; VMREAD reads vcpus[0]'s. */
	if (!ret && vcpus[1] != vcpu && ks_isa() == KS_ISA_SVM)
		ret = ks_exit_state(vcpus[1], path, &st[1], true);
	preempt_enable();
	for (done = 0; !ret && done < iters; done += n) {
		n = min_t(u64, iters - done, KS_CHUNK);
		for (what = R_EXIT_ENTRY; what < R_NR; what++)
			result[what] += ks_measure(vcpus, what, n);
		/* Between chunks, with the vCPU loaded: as KVM_RUN would. */
		cond_resched();
	}
	preempt_disable();
	ret2 = ks_exit_state(vcpus[0], path, &st[0], false);
	if (!ret2 && st[1].vmcb)
		ret2 = ks_exit_state(vcpus[1], path, &st[1], false);
	preempt_enable();
	vcpu_put(vcpu);
	mutex_unlock(&vcpu->mutex);
	return ret ? ret : ret2;
}

const int ks_path_nr = PATH_NR;

void ks_arch_init(void)
{
}

int ks_arch_read_extra(char *buf, size_t len)
{
	return 0;
}
