// SPDX-License-Identifier: GPL-2.0
/*
 * Choosing the exit path's clock on x86 (see include/kvm_statsfd/clock.h).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jump_label.h>
#include <linux/math64.h>
#include <linux/time.h>
#include <asm/cpufeature.h>
#include <asm/tsc.h>

#include <kvm_statsfd/clock.h>

DEFINE_STATIC_KEY_FALSE(ks_clock_tsc);
u64 ks_tsc_ns_mult __ro_after_init;

void ks_clock_init(void)
{
	if (!boot_cpu_has(X86_FEATURE_TSC) ||
	    !boot_cpu_has(X86_FEATURE_CONSTANT_TSC) ||
	    !boot_cpu_has(X86_FEATURE_NONSTOP_TSC) ||
	    check_tsc_unstable() || !tsc_khz) {
		pr_info("clock: ktime_get_mono_fast_ns (no constant, nonstop and stable TSC)\n");
		return;
	}
	/* ns per cycle is 10^6 / kHz; in 32.32 fixed point. */
	ks_tsc_ns_mult = div_u64((u64)NSEC_PER_MSEC << 32, tsc_khz);
	static_branch_enable(&ks_clock_tsc);
	pr_info("clock: tsc (%u kHz)\n", tsc_khz);
}

const char *ks_clock_name(void)
{
	return static_branch_likely(&ks_clock_tsc) ? "tsc" :
						     "ktime_get_mono_fast_ns";
}
