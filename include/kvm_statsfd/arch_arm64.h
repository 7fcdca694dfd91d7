/* SPDX-License-Identifier: GPL-2.0 */
/*
 * arm64: see arch.h.  Implemented by src/probes_arm64.c.
 */
#ifndef _KVM_STATSFD_ARCH_ARM64_H
#define _KVM_STATSFD_ARCH_ARM64_H

#include <linux/compiler.h>
#include <linux/types.h>

#include <kvm_statsfd/uapi.h>

/* Exit classes with a latency histogram of their own. */
enum ks_exit_class {
	KS_CLASS_MMIO,		/* data abort from the guest (DABT_LOW) */
	KS_CLASS_SYSREG,	/* system register access (SYS64) */
	KS_CLASS_HVC,		/* HVC or SMC: PSCI and other SMCCC calls */
	KS_CLASS_WFX,		/* WFI, WFE: the guest idles */
	KS_CLASS_IRQ,		/* a host interrupt */
	KS_NR_CLASSES,
	KS_CLASS_OTHER = KS_NR_CLASSES,	/* no histogram of its own */
};

/*
 * The classes' latency stats, in enum order: { histogram, total } each.
 */
#define KS_CLASS_STAT_NAMES {						\
	{ "exit_latency_mmio_hist", "exit_latency_mmio_ns" },		\
	{ "exit_latency_sysreg_hist", "exit_latency_sysreg_ns" },	\
	{ "exit_latency_hvc_hist", "exit_latency_hvc_ns" },		\
	{ "exit_latency_wfx_hist", "exit_latency_wfx_ns" },		\
	{ "exit_latency_irq_hist", "exit_latency_irq_ns" },		\
}

/*
 * The io_msr group's trapped instructions by kind, from the exit's ESR:
 * system register reads and writes (ISS bit 0, 1 for a read), WFI and WFE
 * (ISS bit 0, 1 for WFE; WFIT and WFET with them), HVC and SMC calls.
 */
enum ks_dir {
	KS_DIR_SYSREG_READ,
	KS_DIR_SYSREG_WRITE,
	KS_DIR_WFI,
	KS_DIR_WFE,
	KS_DIR_HVC,
	KS_DIR_SMC,
	KS_NR_DIRS,
};

#define KS_DIR_STAT_NAMES {						\
	"sysreg_read_exits", "sysreg_write_exits", "wfi_exits",		\
	"wfe_exits", "hvc_exits", "smc_exits"				\
}

/*
 * The exit_reasons group: the histogram by exception class, then every
 * exit by kind (uapi.h).
 */
#define KS_EXIT_EXTRA_WORDS	KVM_STATSFD_ARM64_KINDS
#define KS_EXIT_EXTRA_NAME	KVM_STATSFD_EXIT_KINDS_ARM64

/* The probes keep nothing of their own per vCPU or per exit. */
struct ks_vcpu_arch {
};

struct ks_vcpu_exit {
};

/*
 * Single-writer updates that readers may load concurrently: an aligned
 * 64-bit store is single-copy atomic on arm64, so a reader sees the old
 * value or the new one, never a torn one.  No atomic instruction: the
 * vCPU's thread is the only writer.
 */
static __always_inline void ks_inc(u64 *counter)
{
	WRITE_ONCE(*counter, *counter + 1);
}

static __always_inline void ks_add(u64 *counter, u64 value)
{
	WRITE_ONCE(*counter, *counter + value);
}

#endif /* _KVM_STATSFD_ARCH_ARM64_H */
