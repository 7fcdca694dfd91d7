/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The exit path's clock, one section per architecture (src/clock_<arch>.c
 * chooses at load):
 *
 *   ks_clock()			a timestamp, never 0 (0 means "none" in
 *				the probes' bookkeeping)
 *   ks_clock_ns(now, then)	nanoseconds from timestamp @then to @now,
 *				or 0 when the clock went back between them
 *				(ktime_get_mono_fast_ns() may, across CPUs
 *				or around an NTP update): never a negative
 *				interval read as a huge one
 *
 * x86: where the TSC is constant, does not stop in idle and is synchronised
 * across CPUs (the kernel has not found it unstable by load time), the
 * probes read it directly: one instruction, and an interval is converted
 * to nanoseconds with a multiply and a shift.  Elsewhere they fall back to
 * ktime_get_mono_fast_ns(), monotonic across CPUs and lock-free but about
 * thirty instructions through the clocksource.  The choice is made once,
 * at load, and patched in as a static branch.
 *
 * arm64: the architected counter, read as the kernel's clocksource reads
 * it (arch_timer_read_counter(): CNTPCT_EL0 where the kernel may run at
 * EL2, VHE or not, so never CNTVCT with a guest's CNTVOFF; the timer
 * errata workarounds included), where CNTFRQ_EL0 agrees within 1% with
 * the rate measured against the kernel's clock at load; else
 * ktime_get_mono_fast_ns().  The counter is one system-wide count, the
 * same on every CPU.  Measured under QEMU -icount (exit-cost-arm64 lane),
 * ktime_get_mono_fast_ns() costs about 62 instructions a call there.
 */
#ifndef _KVM_STATSFD_CLOCK_H
#define _KVM_STATSFD_CLOCK_H

#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/timekeeping.h>
#include <linux/types.h>

#if defined(CONFIG_X86)
#include <asm/msr.h>

DECLARE_STATIC_KEY_FALSE(ks_clock_tsc);
/* Nanoseconds per TSC cycle, in 32.32 fixed point. */
extern u64 ks_tsc_ns_mult __ro_after_init;

/*
 * (@cycles * ks_tsc_ns_mult) >> 32 with the full 128-bit product: one
 * multiply and one double shift, and no 128-bit type (which would make
 * the compiler realign every probe's stack frame).
 */
static __always_inline u64 ks_tsc_to_ns(u64 cycles)
{
	u64 lo = cycles, hi;

	asm("mulq %[mult]\n\tshrdq $32, %%rdx, %%rax"
	    : "+a" (lo), "=d" (hi) : [mult] "rm" (ks_tsc_ns_mult) : "cc");
	return lo;
}

static __always_inline u64 ks_clock(void)
{
	if (static_branch_likely(&ks_clock_tsc))
		return rdtsc();
	return ktime_get_mono_fast_ns();
}

static __always_inline u64 ks_clock_ns(u64 now, u64 then)
{
	s64 delta = now - then;

	if (unlikely(delta < 0))
		return 0;
	return static_branch_likely(&ks_clock_tsc) ? ks_tsc_to_ns(delta) : delta;
}

/* ks_clock_ns() where the caller knows the TSC is the clock. */
static __always_inline u64 ks_tsc_clock_ns(u64 now, u64 then)
{
	s64 delta = now - then;

	return likely(delta >= 0) ? ks_tsc_to_ns(delta) : 0;
}

#elif defined(CONFIG_ARM64)
#include <linux/math64.h>
#include <clocksource/arm_arch_timer.h>

DECLARE_STATIC_KEY_FALSE(ks_clock_counter);
/* Nanoseconds per counter tick, in 32.32 fixed point. */
extern u64 ks_counter_ns_mult __ro_after_init;

static __always_inline u64 ks_clock(void)
{
	if (static_branch_likely(&ks_clock_counter))
		return arch_timer_read_counter();
	return ktime_get_mono_fast_ns();
}

static __always_inline u64 ks_clock_ns(u64 now, u64 then)
{
	s64 delta = now - then;

	if (unlikely(delta < 0))
		return 0;
	return static_branch_likely(&ks_clock_counter) ?
	       mul_u64_u64_shr(delta, ks_counter_ns_mult, 32) : delta;
}
#endif

/* Pick the clock; says which in the kernel log. */
void ks_clock_init(void);
/* "tsc", "arch_timer" or "ktime_get_mono_fast_ns", for the log and the tests. */
const char *ks_clock_name(void);

#endif /* _KVM_STATSFD_CLOCK_H */
