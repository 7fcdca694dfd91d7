// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-statsfd: KVM binary statistics served by a loadable module.
 *
 * Module entry and exit: the order in which the module's parts are set up
 * and torn down lives here, and nowhere else.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/init.h>
#include <linux/module.h>

#include <kvm_statsfd/version.h>

static int __init kvm_statsfd_init(void)
{
	pr_info("version %s loaded\n", KVM_STATSFD_VERSION);
	return 0;
}

static void __exit kvm_statsfd_exit(void)
{
	pr_info("unloaded\n");
}

module_init(kvm_statsfd_init);
module_exit(kvm_statsfd_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("The kvm-statsfd developers");
MODULE_DESCRIPTION("KVM_GET_STATS_FD with extended statistics for every VM and vCPU");
MODULE_VERSION(KVM_STATSFD_VERSION);
