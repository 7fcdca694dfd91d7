// SPDX-License-Identifier: GPL-2.0
/*
 * rig_warn: a test-only module that WARNs when loaded.  The test rig boots a
 * guest that loads it and must judge that run a failure; if it does not, the
 * rig is blind and every green result it gives is worthless.
 */
#include <linux/bug.h>
#include <linux/module.h>

static int __init rig_warn_init(void)
{
	WARN(1, "rig_warn: deliberate warning to test the test rig\n");
	return 0;
}

static void __exit rig_warn_exit(void)
{
}

module_init(rig_warn_init);
module_exit(rig_warn_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Test-only: WARNs on load to prove the test rig sees it");
