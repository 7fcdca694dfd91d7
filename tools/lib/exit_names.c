// SPDX-License-Identifier: GPL-2.0
/*
 * Names of the buckets of the module's exit-reason histograms.
 *
 * exit_reasons_svm: bucket = SVM exit code for 0x000-0x0af, 0x0b0-0x0b3
 * for codes 0x400-0x403, 180 for everything else.  exit_reasons_vmx:
 * bucket = basic exit reason 0-79, 80 for everything else.  The mapping is
 * ABI (Documentation/exit-reasons.rst); the names follow the SVM_EXIT_* and
 * EXIT_REASON_* constants of Linux's asm/svm.h and asm/vmx.h, lower case.
 */
#include <stdio.h>
#include <string.h>

#include "kvm_statsfd/uapi.h"
#include "kvmstats.h"

/* The bucket <-> code map is uapi.h's alone. */
#define SVM_BUCKETS	KVM_STATSFD_SVM_BUCKETS
#define SVM_OTHER	KVM_STATSFD_SVM_OTHER
#define VMX_BUCKETS	KVM_STATSFD_VMX_BUCKETS
#define VMX_OTHER	KVM_STATSFD_VMX_OTHER

/* Indexes 0x60 and up that have a name; 0x00-0x5f are generated. */
static const char *const svm_high[] = {
	[0x60] = "intr",		[0x61] = "nmi",
	[0x62] = "smi",			[0x63] = "init",
	[0x64] = "vintr",		[0x65] = "cr0_sel_write",
	[0x66] = "idtr_read",		[0x67] = "gdtr_read",
	[0x68] = "ldtr_read",		[0x69] = "tr_read",
	[0x6a] = "idtr_write",		[0x6b] = "gdtr_write",
	[0x6c] = "ldtr_write",		[0x6d] = "tr_write",
	[0x6e] = "rdtsc",		[0x6f] = "rdpmc",
	[0x70] = "pushf",		[0x71] = "popf",
	[0x72] = "cpuid",		[0x73] = "rsm",
	[0x74] = "iret",		[0x75] = "swint",
	[0x76] = "invd",		[0x77] = "pause",
	[0x78] = "hlt",			[0x79] = "invlpg",
	[0x7a] = "invlpga",		[0x7b] = "ioio",
	[0x7c] = "msr",			[0x7d] = "task_switch",
	[0x7e] = "ferr_freeze",		[0x7f] = "shutdown",
	[0x80] = "vmrun",		[0x81] = "vmmcall",
	[0x82] = "vmload",		[0x83] = "vmsave",
	[0x84] = "stgi",		[0x85] = "clgi",
	[0x86] = "skinit",		[0x87] = "rdtscp",
	[0x88] = "icebp",		[0x89] = "wbinvd",
	[0x8a] = "monitor",		[0x8b] = "mwait",
	[0x8c] = "mwait_cond",		[0x8d] = "xsetbv",
	[0x8e] = "rdpru",		[0x8f] = "efer_write_trap",
	[0xa0] = "invlpgb",		[0xa1] = "invlpgb_illegal",
	[0xa2] = "invpcid",		[0xa3] = "mcommit",
	[0xa4] = "tlbsync",		[0xa5] = "bus_lock",
	[0xa6] = "idle_hlt",
};

/* Codes from KVM_STATSFD_SVM_HIGH_BASE (0x400) on. */
static const char *const svm_high_codes[KVM_STATSFD_SVM_HIGH_COUNT] = {
	"npf", "avic_incomplete_ipi", "avic_unaccelerated_access", "vmgexit",
};

/* Exception intercepts 0x40 + vector: the vector's usual mnemonic. */
static const char *const x86_vectors[32] = {
	[0] = "de", [1] = "db", [2] = "nmi", [3] = "bp", [4] = "of",
	[5] = "br", [6] = "ud", [7] = "nm", [8] = "df", [10] = "ts",
	[11] = "np", [12] = "ss", [13] = "gp", [14] = "pf", [16] = "mf",
	[17] = "ac", [18] = "mc", [19] = "xm", [20] = "ve", [21] = "cp",
	[28] = "hv", [29] = "vc", [30] = "sx",
};

static const char *const vmx_names[VMX_OTHER] = {
	[0] = "exception_nmi",		[1] = "external_interrupt",
	[2] = "triple_fault",		[3] = "init_signal",
	[4] = "sipi_signal",		[7] = "interrupt_window",
	[8] = "nmi_window",		[9] = "task_switch",
	[10] = "cpuid",			[11] = "getsec",
	[12] = "hlt",			[13] = "invd",
	[14] = "invlpg",		[15] = "rdpmc",
	[16] = "rdtsc",			[17] = "rsm",
	[18] = "vmcall",		[19] = "vmclear",
	[20] = "vmlaunch",		[21] = "vmptrld",
	[22] = "vmptrst",		[23] = "vmread",
	[24] = "vmresume",		[25] = "vmwrite",
	[26] = "vmoff",			[27] = "vmon",
	[28] = "cr_access",		[29] = "dr_access",
	[30] = "io_instruction",	[31] = "msr_read",
	[32] = "msr_write",		[33] = "invalid_state",
	[34] = "msr_load_fail",		[36] = "mwait_instruction",
	[37] = "monitor_trap_flag",	[39] = "monitor_instruction",
	[40] = "pause_instruction",	[41] = "mce_during_vmentry",
	[43] = "tpr_below_threshold",	[44] = "apic_access",
	[45] = "eoi_induced",		[46] = "gdtr_idtr",
	[47] = "ldtr_tr",		[48] = "ept_violation",
	[49] = "ept_misconfig",		[50] = "invept",
	[51] = "rdtscp",		[52] = "preemption_timer",
	[53] = "invvpid",		[54] = "wbinvd",
	[55] = "xsetbv",		[56] = "apic_write",
	[57] = "rdrand",		[58] = "invpcid",
	[59] = "vmfunc",		[60] = "encls",
	[61] = "rdseed",		[62] = "pml_full",
	[63] = "xsaves",		[64] = "xrstors",
	[67] = "umwait",		[68] = "tpause",
	[74] = "bus_lock",		[75] = "notify",
};

/* Name of the SVM exit code of bucket i (uapi.h's map). */
static int svm_name(unsigned int i, char *buf, size_t len)
{
	long code = kvm_statsfd_svm_code(i);

	if (code < 0)
		return i == SVM_OTHER ? snprintf(buf, len, "other") : -1;
	if (code >= KVM_STATSFD_SVM_HIGH_BASE)
		return snprintf(buf, len, "%s",
				svm_high_codes[code - KVM_STATSFD_SVM_HIGH_BASE]);
	if (code < 0x40) {
		/* 0x00-0x0f read_crN, 0x10 write_crN, 0x20 read_drN, 0x30 write_drN */
		return snprintf(buf, len, "%s_%s%ld", (code & 0x10) ? "write" : "read",
				(code & 0x20) ? "dr" : "cr", code & 0xf);
	}
	if (code < 0x60) {
		if (x86_vectors[code - 0x40])
			return snprintf(buf, len, "excp_%s", x86_vectors[code - 0x40]);
		return snprintf(buf, len, "excp_%ld", code - 0x40);
	}
	if (code >= 0x90 && code <= 0x9f)
		return snprintf(buf, len, "cr%ld_write_trap", code - 0x90);
	if ((size_t)code < sizeof(svm_high) / sizeof(svm_high[0]) && svm_high[code])
		return snprintf(buf, len, "%s", svm_high[code]);
	return snprintf(buf, len, "code_0x%03lx", code);
}

static int vmx_name(unsigned int i, char *buf, size_t len)
{
	long code = kvm_statsfd_vmx_code(i);

	if (code < 0)
		return i == VMX_OTHER ? snprintf(buf, len, "other") : -1;
	if (vmx_names[code])
		return snprintf(buf, len, "%s", vmx_names[code]);
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
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif
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
