// SPDX-License-Identifier: GPL-2.0
/*
 * ftrace on arm64: where a function's ftrace location is, and whether
 * ftrace's call is there (include/kvm_statsfd/ftrace_arch.h).
 *
 * The compiler puts two NOPs at each traceable function's entry
 * (-fpatchable-function-entry); with kernel BTI a "BTI C" landing pad
 * comes first.  ftrace makes the first NOP "MOV X9, X30" at boot or
 * module load and the second a BL to its trampoline while an ops traces
 * the function: the second is the location (ftrace_call_adjust()).  The
 * kernel rewrites one aligned 4-byte instruction at a time, so a read
 * sees either instruction, never half of one.
 */

#include <linux/errno.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <asm/byteorder.h>

#include <kvm_statsfd/ftrace_arch.h>

#define KS_ARM64_BTI_C		0xd503245fU
#define KS_ARM64_BL_MASK	0xfc000000U
#define KS_ARM64_BL		0x94000000U

/* The instruction at @addr, 0 (a UDF) if unreadable. */
static u32 ks_insn_at(unsigned long addr)
{
	__le32 insn;

	if (copy_from_kernel_nofault(&insn, (const void *)addr, sizeof(insn)))
		return 0;
	return le32_to_cpu(insn);
}

unsigned long ks_ftrace_location(unsigned long func)
{
	if (ks_insn_at(func) == KS_ARM64_BTI_C)
		return func + 8;
	return func + 4;
}

int ks_ftrace_live(unsigned long loc, u8 *insn)
{
	u32 word = ks_insn_at(loc);
	__le32 bytes = cpu_to_le32(word);

	/* For the caller's message, in memory order. */
	memcpy(insn, &bytes, KS_FTRACE_INSN_SIZE);
	/*
	 * Any BL: to ftrace's common trampoline or to a direct caller's,
	 * as other tracers of the function decide.
	 */
	return (word & KS_ARM64_BL_MASK) == KS_ARM64_BL ? 0 : -EOPNOTSUPP;
}
