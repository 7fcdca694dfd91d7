/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * What kvm_statsfd.ko promises its readers beyond the binary stats format
 * itself, in the one place that the module, libkvmstats, the tools, the
 * tests and Documentation/exit-reasons.rst share.
 *
 * Exit-reason histograms.  exit_reasons_svm and exit_reasons_vmx are
 * LINEAR_HIST stats with bucket_size 1 and one bucket per "dense index".
 * They are structured alike: the codes KVM can see in ascending order (for
 * VMX every basic reason below 80, for SVM a compact selection), then the
 * last bucket, which counts every code the map does not name.  The
 * functions below convert both ways, exact inverses of each other; nothing
 * else may encode the mapping.
 *
 * Plain C with no kernel or libc dependency, so that both sides build it.
 */
#ifndef _KVM_STATSFD_UAPI_H
#define _KVM_STATSFD_UAPI_H

/* Values of KVM's x86 tracepoints' isa argument, used here as vendor ids. */
#define KVM_STATSFD_ISA_VMX	1
#define KVM_STATSFD_ISA_SVM	2

/*
 * AMD SVM: a compact map, 120 buckets (it was every code 0x000-0x0af, 181
 * buckets; the exit-reason histogram is most of a vCPU's memory):
 *
 *   index    0-3    CR0, CR3, CR4, CR8 read   (0x000, 0x003, 0x004, 0x008)
 *   index    4-7    CR0, CR3, CR4, CR8 write  (0x010, 0x013, 0x014, 0x018)
 *   index    8-15   DR0-DR7 read              (0x020-0x027)
 *   index   16-23   DR0-DR7 write             (0x030-0x037)
 *   index   24-55   the 32 exceptions         (0x040-0x05f)
 *   index   56-103  INTR .. EFER_WRITE_TRAP   (0x060-0x08f)
 *   index  104-107  CR0, CR3, CR4, CR8 write trap (0x090, 0x093, 0x094, 0x098)
 *   index  108-114  INVPCID .. IDLE_HLT       (0x0a0-0x0a6)
 *   index  115-118  NPF, AVIC_INCOMPLETE_IPI, AVIC_UNACCELERATED_ACCESS,
 *                   VMGEXIT                   (0x400-0x403)
 *   index  119      "other": every other code (CR1/2/5-7/9-15, DR8-15,
 *                   SVM_EXIT_ERR, ...)
 *
 * Codes below 0x0b0 take a byte table, the four high ones an offset.
 */
#define KVM_STATSFD_SVM_LOW_END		0x0b0
#define KVM_STATSFD_SVM_LOW_COUNT	115	/* indexes of codes < 0x0b0 */
#define KVM_STATSFD_SVM_HIGH_BASE	0x400
#define KVM_STATSFD_SVM_HIGH_COUNT	4
#define KVM_STATSFD_SVM_OTHER	(KVM_STATSFD_SVM_LOW_COUNT + \
				 KVM_STATSFD_SVM_HIGH_COUNT)
#define KVM_STATSFD_SVM_BUCKETS	(KVM_STATSFD_SVM_OTHER + 1)

/*
 * Intel VMX: basic exit reasons (bits 15:0) 0-79 are their own index;
 * index 80 is "other".  Bit 31 (VM-entry failure) is not part of it.
 */
#define KVM_STATSFD_VMX_OTHER	80
#define KVM_STATSFD_VMX_BUCKETS	(KVM_STATSFD_VMX_OTHER + 1)

/*
 * A VM file serves each of the module's vCPU stats again as the sum (the
 * maximum for a peak) over its vCPUs, named with this prefix: no name is
 * in both a VM file and a vCPU file, as in KVM's own stats.  Readers that
 * key QEMU's query-stats schema by name across its VM and vCPU targets
 * (libvirt) depend on that.  A VM's guest_ns is vcpus_guest_ns.
 */
#define KVM_STATSFD_VM_SUM_PREFIX	"vcpus_"

#define KVM_STATSFD_EXIT_STAT_SVM	"exit_reasons_svm"
#define KVM_STATSFD_EXIT_STAT_VMX	"exit_reasons_vmx"

/*
 * arm64: exit_reasons_arm64 has one bucket per exception class, the EC
 * field (bits 31:26) of ESR_EL2: its index is the class (0x16 HVC64, 0x18
 * SYS64, 0x24 DABT_LOW, ...), with no "other" bucket.  It counts the exits
 * that were traps (kind TRAP below); an interrupt's or an SError's exit
 * has no class of its own.  exit_kinds_arm64 counts every exit by the
 * kind KVM's world switch returns (ARM_EXCEPTION_*): 0 IRQ, 1 SError,
 * 2 trap, 3 illegal exception return, 4 anything else; its sum is the
 * number of exits.
 */
#define KVM_STATSFD_ARM64_EC_BUCKETS	64
#define KVM_STATSFD_ARM64_KIND_IRQ	0
#define KVM_STATSFD_ARM64_KIND_SERROR	1
#define KVM_STATSFD_ARM64_KIND_TRAP	2
#define KVM_STATSFD_ARM64_KIND_IL	3
#define KVM_STATSFD_ARM64_KIND_OTHER	4
#define KVM_STATSFD_ARM64_KINDS		5

#define KVM_STATSFD_EXIT_STAT_ARM64	"exit_reasons_arm64"
#define KVM_STATSFD_EXIT_KINDS_ARM64	"exit_kinds_arm64"

/* Dense index of an SVM exit code: a byte load for the codes below 0x0b0. */
static inline unsigned int kvm_statsfd_svm_index(unsigned int code)
{
	/* KVM_STATSFD_SVM_OTHER (119) where the code has no bucket. */
	static const unsigned char index[KVM_STATSFD_SVM_LOW_END] = {
		/* 0x000 */   0, 119, 119,   1,   2, 119, 119, 119,
		/* 0x008 */   3, 119, 119, 119, 119, 119, 119, 119,
		/* 0x010 */   4, 119, 119,   5,   6, 119, 119, 119,
		/* 0x018 */   7, 119, 119, 119, 119, 119, 119, 119,
		/* 0x020 */   8,   9,  10,  11,  12,  13,  14,  15,
		/* 0x028 */ 119, 119, 119, 119, 119, 119, 119, 119,
		/* 0x030 */  16,  17,  18,  19,  20,  21,  22,  23,
		/* 0x038 */ 119, 119, 119, 119, 119, 119, 119, 119,
		/* 0x040 */  24,  25,  26,  27,  28,  29,  30,  31,
		/* 0x048 */  32,  33,  34,  35,  36,  37,  38,  39,
		/* 0x050 */  40,  41,  42,  43,  44,  45,  46,  47,
		/* 0x058 */  48,  49,  50,  51,  52,  53,  54,  55,
		/* 0x060 */  56,  57,  58,  59,  60,  61,  62,  63,
		/* 0x068 */  64,  65,  66,  67,  68,  69,  70,  71,
		/* 0x070 */  72,  73,  74,  75,  76,  77,  78,  79,
		/* 0x078 */  80,  81,  82,  83,  84,  85,  86,  87,
		/* 0x080 */  88,  89,  90,  91,  92,  93,  94,  95,
		/* 0x088 */  96,  97,  98,  99, 100, 101, 102, 103,
		/* 0x090 */ 104, 119, 119, 105, 106, 119, 119, 119,
		/* 0x098 */ 107, 119, 119, 119, 119, 119, 119, 119,
		/* 0x0a0 */ 108, 109, 110, 111, 112, 113, 114, 119,
		/* 0x0a8 */ 119, 119, 119, 119, 119, 119, 119, 119,
	};

	/* Most exits: kept on the exit path's straight line. */
	if (__builtin_expect(code < KVM_STATSFD_SVM_LOW_END, 1))
		return index[code];
	if (code - KVM_STATSFD_SVM_HIGH_BASE < KVM_STATSFD_SVM_HIGH_COUNT)
		return KVM_STATSFD_SVM_LOW_COUNT + code - KVM_STATSFD_SVM_HIGH_BASE;
	return KVM_STATSFD_SVM_OTHER;
}

/* Dense index of a VMX exit reason. */
static inline unsigned int kvm_statsfd_vmx_index(unsigned int reason)
{
	unsigned int basic = reason & 0xffff;

	return basic < KVM_STATSFD_VMX_OTHER ? basic : KVM_STATSFD_VMX_OTHER;
}

/*
 * The hardware code of a dense index, or -1 for the "other" bucket (and
 * for an index past the histogram).
 */
static inline long kvm_statsfd_svm_code(unsigned int index)
{
	static const unsigned char code[KVM_STATSFD_SVM_LOW_COUNT] = {
		0x00, 0x03, 0x04, 0x08, 0x10, 0x13, 0x14, 0x18,
		0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27,
		0x30, 0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37,
		0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47,
		0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f,
		0x50, 0x51, 0x52, 0x53, 0x54, 0x55, 0x56, 0x57,
		0x58, 0x59, 0x5a, 0x5b, 0x5c, 0x5d, 0x5e, 0x5f,
		0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66, 0x67,
		0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x6d, 0x6e, 0x6f,
		0x70, 0x71, 0x72, 0x73, 0x74, 0x75, 0x76, 0x77,
		0x78, 0x79, 0x7a, 0x7b, 0x7c, 0x7d, 0x7e, 0x7f,
		0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87,
		0x88, 0x89, 0x8a, 0x8b, 0x8c, 0x8d, 0x8e, 0x8f,
		0x90, 0x93, 0x94, 0x98, 0xa0, 0xa1, 0xa2, 0xa3,
		0xa4, 0xa5, 0xa6,
	};

	if (index < KVM_STATSFD_SVM_LOW_COUNT)
		return code[index];
	if (index < KVM_STATSFD_SVM_OTHER)
		return KVM_STATSFD_SVM_HIGH_BASE + index - KVM_STATSFD_SVM_LOW_COUNT;
	return -1;
}

static inline long kvm_statsfd_vmx_code(unsigned int index)
{
	return index < KVM_STATSFD_VMX_OTHER ? (long)index : -1;
}

/* The exit_kinds_arm64 bucket of kvm_exit's ret (the SError flag dropped). */
static inline unsigned int kvm_statsfd_arm64_kind(unsigned int ret)
{
	ret &= ~(1U << 31);	/* ARM_EXIT_WITH_SERROR_BIT */
	return ret < KVM_STATSFD_ARM64_KIND_OTHER ? ret :
						    KVM_STATSFD_ARM64_KIND_OTHER;
}

#endif /* _KVM_STATSFD_UAPI_H */
