// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Vendor-neutral classes of the buckets of the module's exit-reason
 * histograms: what an exit was for ("io", "npf", "cpuid", ...), the same
 * names on AMD and Intel hosts, and on arm64 where the question has an
 * answer there.
 *
 * A bucket's class is that of its hardware code (uapi.h's
 * kvm_statsfd_svm_code() / kvm_statsfd_vmx_code()), looked up in the two
 * switches below, which follow the architectural numbering: the SVM exit
 * codes of AMD's APM vol. 2 (appendix C) and the VMX basic exit reasons
 * of Intel's SDM vol. 3 (appendix C).  The name strings play no part.
 * The first five classes are the module's own latency classes
 * (exit_latency_<c>_*, Documentation/stats-fd.rst), in its order; the
 * last, "other", takes every code listed nowhere else and the
 * histograms' last bucket.  Documentation/exit-reasons.rst has the
 * mapping as a table.
 *
 * Nothing here is written after compilation, so every function may be
 * called from any number of threads at once.
 */
#include <stddef.h>

#include "kvm_statsfd/uapi.h"
#include "kvmstats.h"

/*
 * The public class numbers, in order.  A later class goes just before
 * EC_OTHER, which stays last: no other class's number ever changes.
 */
enum exit_class {
	EC_IO, EC_NPF, EC_MSR, EC_HLT, EC_INTR,
	EC_NMI, EC_EXCEPTION, EC_CPUID, EC_CR, EC_DR, EC_IRQ_WINDOW, EC_PAUSE,
	EC_HYPERCALL, EC_APIC, EC_TIMER, EC_INVLPG, EC_XSETBV, EC_RDTSC,
	EC_MWAIT, EC_DESC_TABLE, EC_TASK_SWITCH, EC_NESTED, EC_SHUTDOWN,
	EC_INIT_SIPI, EC_CACHE, EC_BUS_LOCK, EC_INVALID,
	EC_OTHER,
	EC_COUNT
};

static const char *const class_names[EC_COUNT] = {
	[EC_IO]			= "io",
	[EC_NPF]		= "npf",
	[EC_MSR]		= "msr",
	[EC_HLT]		= "hlt",
	[EC_INTR]		= "intr",
	[EC_NMI]		= "nmi",
	[EC_EXCEPTION]		= "exception",
	[EC_CPUID]		= "cpuid",
	[EC_CR]			= "cr_access",
	[EC_DR]			= "dr_access",
	[EC_IRQ_WINDOW]		= "interrupt_window",
	[EC_PAUSE]		= "pause",
	[EC_HYPERCALL]		= "hypercall",
	[EC_APIC]		= "apic",
	[EC_TIMER]		= "timer",
	[EC_INVLPG]		= "invlpg",
	[EC_XSETBV]		= "xsetbv",
	[EC_RDTSC]		= "rdtsc",
	[EC_MWAIT]		= "monitor_mwait",
	[EC_DESC_TABLE]		= "descriptor_table",
	[EC_TASK_SWITCH]	= "task_switch",
	[EC_NESTED]		= "nested_virt",
	[EC_SHUTDOWN]		= "shutdown",
	[EC_INIT_SIPI]		= "init_sipi",
	[EC_CACHE]		= "cache_control",
	[EC_BUS_LOCK]		= "bus_lock",
	[EC_INVALID]		= "invalid",
	[EC_OTHER]		= "other",
};

/*
 * AMD SVM exit codes (EXITCODE, APM vol. 2 table C-1).  SVM_EXIT_ERR
 * (-1, failed VMRUN) would be "invalid", but has no bucket of its own:
 * it is counted in the last one, "other".
 */
static enum exit_class svm_class(long code)
{
	switch (code) {
	case 0x000 ... 0x01f:	/* CR0-CR15 read, write */
	case 0x065:		/* CR0 selective write */
	case 0x090 ... 0x09f:	/* CR0-CR15 write trap (SEV-ES) */
		return EC_CR;
	case 0x020 ... 0x03f:	/* DR0-DR15 read, write */
		return EC_DR;
	case 0x040 ... 0x05f:	/* exception vectors 0-31 */
		return EC_EXCEPTION;
	case 0x060:		/* INTR: physical interrupt */
		return EC_INTR;
	case 0x061:		/* NMI */
		return EC_NMI;
	case 0x063:		/* INIT */
		return EC_INIT_SIPI;
	case 0x064:		/* VINTR: virtual interrupt window */
	case 0x074:		/* IRET: KVM's NMI window */
		return EC_IRQ_WINDOW;
	case 0x066 ... 0x06d:	/* IDTR, GDTR, LDTR, TR read, write */
		return EC_DESC_TABLE;
	case 0x06e:		/* RDTSC */
	case 0x06f:		/* RDPMC */
	case 0x087:		/* RDTSCP */
		return EC_RDTSC;
	case 0x072:		/* CPUID */
		return EC_CPUID;
	case 0x076:		/* INVD */
	case 0x089:		/* WBINVD */
		return EC_CACHE;
	case 0x077:		/* PAUSE */
		return EC_PAUSE;
	case 0x078:		/* HLT */
	case 0x0a6:		/* IDLE_HLT */
		return EC_HLT;
	case 0x079:		/* INVLPG */
	case 0x07a:		/* INVLPGA */
	case 0x0a0:		/* INVLPGB */
	case 0x0a1:		/* INVLPGB, illegal */
	case 0x0a2:		/* INVPCID */
	case 0x0a4:		/* TLBSYNC */
		return EC_INVLPG;
	case 0x07b:		/* IOIO */
		return EC_IO;
	case 0x07c:		/* MSR */
	case 0x08f:		/* EFER write trap (SEV-ES) */
		return EC_MSR;
	case 0x07d:		/* task switch */
		return EC_TASK_SWITCH;
	case 0x07f:		/* shutdown */
		return EC_SHUTDOWN;
	case 0x080:		/* VMRUN */
	case 0x082:		/* VMLOAD */
	case 0x083:		/* VMSAVE */
	case 0x084:		/* STGI */
	case 0x085:		/* CLGI */
	case 0x086:		/* SKINIT */
		return EC_NESTED;
	case 0x081:		/* VMMCALL */
	case 0x403:		/* VMGEXIT (SEV-ES, SEV-SNP) */
		return EC_HYPERCALL;
	case 0x08a:		/* MONITOR */
	case 0x08b:		/* MWAIT */
	case 0x08c:		/* MWAIT, conditional */
		return EC_MWAIT;
	case 0x08d:		/* XSETBV */
		return EC_XSETBV;
	case 0x0a5:		/* bus lock */
		return EC_BUS_LOCK;
	case 0x400:		/* NPF: nested page fault */
		return EC_NPF;
	case 0x401:		/* AVIC incomplete IPI */
	case 0x402:		/* AVIC unaccelerated access */
		return EC_APIC;
	default:		/* SMI, PUSHF, POPF, RSM, SWINT, ICEBP, ... */
		return EC_OTHER;
	}
}

/* Intel VMX basic exit reasons (SDM vol. 3 appendix C). */
static enum exit_class vmx_class(long reason)
{
	switch (reason) {
	case 0:			/* exception or NMI */
		return EC_EXCEPTION;
	case 1:			/* external interrupt */
		return EC_INTR;
	case 2:			/* triple fault */
		return EC_SHUTDOWN;
	case 3:			/* INIT signal */
	case 4:			/* start-up IPI */
		return EC_INIT_SIPI;
	case 7:			/* interrupt window */
	case 8:			/* NMI window */
		return EC_IRQ_WINDOW;
	case 9:			/* task switch */
		return EC_TASK_SWITCH;
	case 10:		/* CPUID */
		return EC_CPUID;
	case 12:		/* HLT */
		return EC_HLT;
	case 13:		/* INVD */
	case 54:		/* WBINVD, WBNOINVD */
		return EC_CACHE;
	case 14:		/* INVLPG */
	case 58:		/* INVPCID */
		return EC_INVLPG;
	case 15:		/* RDPMC */
	case 16:		/* RDTSC */
	case 51:		/* RDTSCP */
		return EC_RDTSC;
	case 18:		/* VMCALL */
	case 77:		/* TDCALL: a TDX guest's TDG.VP.VMCALL */
		return EC_HYPERCALL;
	case 19 ... 27:		/* VMCLEAR .. VMXON */
	case 50:		/* INVEPT */
	case 53:		/* INVVPID */
	case 59:		/* VMFUNC */
		return EC_NESTED;
	case 28:		/* control-register access */
		return EC_CR;
	case 29:		/* MOV DR */
		return EC_DR;
	case 30:		/* I/O instruction */
		return EC_IO;
	case 31:		/* RDMSR */
	case 32:		/* WRMSR */
	case 78:		/* RDMSRLIST */
	case 79:		/* WRMSRLIST */
		return EC_MSR;
	case 33:		/* VM entry: invalid guest state */
	case 34:		/* VM entry: MSR loading */
	case 41:		/* VM entry: machine-check event */
		return EC_INVALID;
	case 36:		/* MWAIT */
	case 39:		/* MONITOR */
	case 67:		/* UMWAIT */
	case 68:		/* TPAUSE */
		return EC_MWAIT;
	case 40:		/* PAUSE */
		return EC_PAUSE;
	case 43:		/* TPR below threshold */
	case 44:		/* APIC access */
	case 45:		/* virtualized EOI */
	case 56:		/* APIC write */
		return EC_APIC;
	case 46:		/* GDTR or IDTR access */
	case 47:		/* LDTR or TR access */
		return EC_DESC_TABLE;
	case 48:		/* EPT violation */
	case 49:		/* EPT misconfiguration */
		return EC_NPF;
	case 52:		/* VMX-preemption timer expired */
		return EC_TIMER;
	case 55:		/* XSETBV */
		return EC_XSETBV;
	case 74:		/* bus lock */
		return EC_BUS_LOCK;
	default:		/* SMIs, GETSEC, RSM, MTF, RDRAND, PML full, ... */
		return EC_OTHER;
	}
}

unsigned int kvmstats_exit_class_count(void)
{
	return EC_COUNT;
}

const char *kvmstats_exit_class_name(unsigned int c)
{
	return c < EC_COUNT ? class_names[c] : NULL;
}

/*
 * arm64 exception classes (ESR_EL2.EC, Arm ARM): the same questions as
 * for x86, of a trap exit.  A stage-2 abort is what an x86 nested page
 * fault is (MMIO included), a system-register or coprocessor access what
 * an MSR access is, WFI/WFE what HLT is.  An interrupt exit is no class
 * (exit_kinds_arm64 counts it).
 */
static enum exit_class arm64_class(unsigned int ec)
{
	switch (ec) {
	case 0x01:		/* WFx */
		return EC_HLT;
	case 0x03 ... 0x06:	/* CP15_32, CP15_64, CP14_MR, CP14_LS */
	case 0x08:		/* CP10_ID */
	case 0x0c:		/* CP14_64 */
	case 0x18:		/* SYS64 */
		return EC_MSR;
	case 0x12:		/* HVC32 */
	case 0x13:		/* SMC32 */
	case 0x16:		/* HVC64 */
	case 0x17:		/* SMC64 */
		return EC_HYPERCALL;
	case 0x20:		/* IABT_LOW */
	case 0x24:		/* DABT_LOW */
		return EC_NPF;
	case 0x1a:		/* ERET: nested virtualisation */
		return EC_NESTED;
	case 0x0e:		/* ILL: illegal execution state */
		return EC_INVALID;
	case 0x07:		/* FP_ASIMD */
	case 0x09:		/* PAC */
	case 0x0d:		/* BTI */
	case 0x11:		/* SVC32 */
	case 0x15:		/* SVC64 */
	case 0x19:		/* SVE */
	case 0x1c:		/* FPAC */
	case 0x1d:		/* SME */
	case 0x22:		/* PC_ALIGN */
	case 0x26:		/* SP_ALIGN */
	case 0x27:		/* MOPS */
	case 0x28:		/* FP_EXC32 */
	case 0x2c:		/* FP_EXC64 */
	case 0x2f:		/* SERROR */
	case 0x30:		/* BREAKPT_LOW */
	case 0x32:		/* SOFTSTP_LOW */
	case 0x34:		/* WATCHPT_LOW */
	case 0x38:		/* BKPT32 */
	case 0x3a:		/* VECTOR32 */
	case 0x3c:		/* BRK64 */
		return EC_EXCEPTION;
	default:		/* UNKNOWN, unallocated */
		return EC_OTHER;
	}
}

int kvmstats_exit_reason_class(const struct kvmstats_desc *d, unsigned int i)
{
	long code;

	switch (kvmstats_exit_reason_kind(d)) {
	case KVMSTATS_EXIT_SVM:
		if (i >= KVM_STATSFD_SVM_BUCKETS)
			return -1;
		code = kvm_statsfd_svm_code(i);
		/* The last bucket has no code: "other". */
		return code < 0 ? EC_OTHER : (int)svm_class(code);
	case KVMSTATS_EXIT_VMX:
		if (i >= KVM_STATSFD_VMX_BUCKETS)
			return -1;
		code = kvm_statsfd_vmx_code(i);
		return code < 0 ? EC_OTHER : (int)vmx_class(code);
	case KVMSTATS_EXIT_ARM64:
		if (i >= KVM_STATSFD_ARM64_EC_BUCKETS)
			return -1;
		return (int)arm64_class(i);
	default:
		return -1;
	}
}
