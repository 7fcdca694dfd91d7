// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only: takes up module memory, and does nothing else.
 *
 * lifecycle_test unloads the vendor module (kvm_amd, kvm_intel), loads this
 * one and loads the vendor module again, as an operator does who changes a
 * vendor parameter while other modules come and go.  Loaded into the space
 * the vendor module left, this module makes the vendor's second load land
 * elsewhere, so that anything that kept an address inside the first load
 * calls into this module's memory, not into an identical copy of the code
 * it expected.  Its data is filled with int3 bytes: an old text address
 * that now points here traps at once.
 */
#include <linux/module.h>
#include <linux/string.h>

/* About the size of kvm-amd's text (kvm-intel's is larger). */
static u8 rig_filler_bytes[256 << 10];

static int __init rig_filler_init(void)
{
	memset(rig_filler_bytes, 0xcc, sizeof(rig_filler_bytes));
	return 0;
}

static void __exit rig_filler_exit(void)
{
}

module_init(rig_filler_init);
module_exit(rig_filler_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kvm-statsfd test rig: takes up module memory");
