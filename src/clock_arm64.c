// SPDX-License-Identifier: GPL-2.0
/*
 * Choosing the exit path's clock on arm64 (see include/kvm_statsfd/clock.h).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/jump_label.h>
#include <linux/math64.h>
#include <linux/printk.h>
#include <linux/time.h>
#include <linux/timekeeping.h>
#include <asm/arch_timer.h>

#include <kvm_statsfd/clock.h>

DEFINE_STATIC_KEY_FALSE(ks_clock_counter);
u64 ks_counter_ns_mult __ro_after_init;

/*
 * The counter's rate over a few milliseconds of the kernel's clock, in Hz:
 * CNTFRQ_EL0 is firmware's word, which the devicetree may have had to
 * correct for the clocksource.
 */
static u64 ks_counter_measured_hz(void)
{
	u64 c0, c1, t0, t1;

	t0 = ktime_get_mono_fast_ns();
	c0 = arch_timer_read_counter();
	usleep_range(4000, 5000);
	c1 = arch_timer_read_counter();
	t1 = ktime_get_mono_fast_ns();
	return t1 > t0 ? mul_u64_u64_div_u64(c1 - c0, NSEC_PER_SEC, t1 - t0) : 0;
}

void ks_clock_init(void)
{
	u64 rate = arch_timer_get_cntfrq(), hz = 0;

	if (rate)
		hz = ks_counter_measured_hz();
	if (!rate || hz < rate - rate / 100 || hz > rate + rate / 100) {
		pr_info("clock: ktime_get_mono_fast_ns (CNTFRQ_EL0 %llu Hz, the counter runs at %llu)\n",
			rate, hz);
		return;
	}
	/* ns per tick is 10^9 / rate; in 32.32 fixed point. */
	ks_counter_ns_mult = div64_u64((u64)NSEC_PER_SEC << 32, rate);
	static_branch_enable(&ks_clock_counter);
	pr_info("clock: arch_timer (%llu Hz)\n", rate);
}

const char *ks_clock_name(void)
{
	return static_branch_likely(&ks_clock_counter) ? "arch_timer" :
							 "ktime_get_mono_fast_ns";
}
