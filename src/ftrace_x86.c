// SPDX-License-Identifier: GPL-2.0
/*
 * ftrace on x86: where a function's ftrace location is, and whether
 * ftrace's call is there (include/kvm_statsfd/ftrace_arch.h).
 *
 * The compiler puts a 5-byte call to __fentry__ at each traceable
 * function's entry, which ftrace turns into a 5-byte NOP at boot or module
 * load and into a CALL (opcode 0xe8) to its trampoline while an ops traces
 * the function.  On kernels built for IBT the function starts with a
 * 4-byte ENDBR64 and the call site follows it.  On IBT hardware the kernel
 * seals the ENDBRs of functions whose address is never taken (objtool's
 * .ibt_endbr_seal; kvm_arch_destroy_vm in Debian 6.12's kvm.ko) and, with
 * FineIBT, the ENDBR at every function's entry, writing a 4-byte poison
 * over it: the call site is still 4 bytes in.
 */

#include <linux/delay.h>
#include <linux/errno.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include <kvm_statsfd/ftrace_arch.h>

#define KS_X86_CALL	0xe8
#define KS_X86_INT3	0xcc

/*
 * What may occupy the 4 bytes before the call site.  Kept as data, not as
 * immediates in code: an ENDBR64's bytes inside an instruction would be
 * an indirect branch target of their own.
 */
static const u8 ks_endbr_forms[][4] = {
	{ 0xf3, 0x0f, 0x1e, 0xfa },	/* endbr64 */
	/* Sealed: "osp nopl (%rax)", from 5.18 (IBT's first kernel). */
	{ 0x66, 0x0f, 0x1f, 0x00 },
	/* Sealed: "nopl -42(%rax)", carrying UDB (upstream, August 2025). */
	{ 0x0f, 0x1f, 0x40, 0xd6 },
	/*
	 * Sealed: "ud1 0x0(%eax), %edx", proposed for kernels that call
	 * functions past their ENDBR (X86_KERNEL_IBT_PLUS); harmless to
	 * know before it lands.
	 */
	{ 0x0f, 0xb9, 0x48, 0x00 },
};

unsigned long ks_ftrace_location(unsigned long func)
{
	u8 head[4];
	unsigned int i;

	if (copy_from_kernel_nofault(head, (const void *)func, sizeof(head)))
		return func;
	for (i = 0; i < ARRAY_SIZE(ks_endbr_forms); i++)
		if (!memcmp(head, ks_endbr_forms[i], sizeof(head)))
			return func + sizeof(head);
	return func;
}

int ks_ftrace_live(unsigned long loc, u8 *insn)
{
	unsigned int tries;

	/*
	 * Another tracer's update of the same location may be in flight:
	 * the kernel patches 5 bytes live by putting an INT3 over the first
	 * for the while (text_poke_bp()).  Such an update takes far less
	 * than the ~10 ms given here; a lasting INT3 is not ftrace's call.
	 */
	for (tries = 0; tries < 10; tries++) {
		if (copy_from_kernel_nofault(insn, (const void *)loc,
					     KS_FTRACE_INSN_SIZE)) {
			memset(insn, 0, KS_FTRACE_INSN_SIZE);
			return -EOPNOTSUPP;
		}
		if (insn[0] != KS_X86_INT3)
			break;
		usleep_range(1000, 2000);
	}
	/*
	 * Any CALL: to ftrace's common trampoline, to one of the ops' own,
	 * or to a direct caller's, as other tracers of the function decide.
	 * The unpatched call to __fentry__ is never left in place by dynamic
	 * ftrace, which every kernel the module supports has.
	 */
	return insn[0] == KS_X86_CALL ? 0 : -EOPNOTSUPP;
}
