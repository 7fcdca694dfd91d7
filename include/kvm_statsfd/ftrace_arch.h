/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What hook.c needs to know about how ftrace patches this architecture's
 * code: where a function's ftrace location is, and whether ftrace's call
 * is really there once an ops is registered.  One file per architecture
 * implements it (src/ftrace_x86.c, src/ftrace_arm64.c); hook.c itself
 * stays generic.
 */
#ifndef _KVM_STATSFD_FTRACE_ARCH_H
#define _KVM_STATSFD_FTRACE_ARCH_H

#include <linux/types.h>

/* Bytes of the instruction ftrace writes at a location. */
#if defined(CONFIG_X86)
#define KS_FTRACE_INSN_SIZE	5	/* CALL rel32 */
#elif defined(CONFIG_ARM64)
#define KS_FTRACE_INSN_SIZE	4	/* BL */
#endif

/*
 * The ftrace location (the __fentry__ call site, the patchable entry's
 * second NOP on arm64) of the function that
 * starts at @func.  Not checked against ftrace's records:
 * ks_ftrace_live() tells, after the fact, whether it was right.
 */
unsigned long ks_ftrace_location(unsigned long func);

/*
 * 0 if ftrace's call is in place at @loc, which an ftrace_ops registered
 * on it must have put there; else -EOPNOTSUPP.  Either way @insn gets the
 * KS_FTRACE_INSN_SIZE bytes found at @loc (zeroes if unreadable), for the
 * caller's message.  May sleep.
 */
int ks_ftrace_live(unsigned long loc, u8 *insn);

#endif /* _KVM_STATSFD_FTRACE_ARCH_H */
