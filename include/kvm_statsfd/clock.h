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
/*
 * arm64: ktime_get_mono_fast_ns(), already in nanoseconds.  Not the
 * architected counter read directly: which counter the host's
 * clocksource reads (CNTPCT at EL2 and under nVHE KVM, where CNTVCT
 * carries the guest's CNTVOFF while a vCPU is loaded, which is exactly
 * when the probes run) and the timer errata workarounds are the
 * clocksource's to know; its fast accessor is lock-free and NMI-safe.
 */
static __always_inline u64 ks_clock(void)
{
	return ktime_get_mono_fast_ns();
}

static __always_inline u64 ks_clock_ns(u64 now, u64 then)
{
	s64 delta = now - then;

	return likely(delta >= 0) ? delta : 0;
}
#endif

/* Pick the clock; says which in the kernel log. */
void ks_clock_init(void);
/* "tsc" or "ktime_get_mono_fast_ns", for sysfs and the tests. */
const char *ks_clock_name(void);

#endif /* _KVM_STATSFD_CLOCK_H */
