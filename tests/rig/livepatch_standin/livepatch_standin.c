// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only: stands in for a livepatch of KVM's ioctl handlers.
 *
 * A livepatch owns each function it replaces through an ftrace_ops with
 * IPMODIFY, and ftrace allows one such ops per function.  This module
 * registers one on kvm_vm_ioctl() and kvm_vcpu_ioctl(), whose callback
 * changes nothing, so that module_load_test can check which loads of
 * kvm_statsfd live beside a livepatch of them and which are refused.
 * Loading fails (EBUSY) if another IPMODIFY user owns either function.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/module.h>
#include <linux/string.h>

#ifdef STANDIN_FTRACE_REGS
#define standin_regs ftrace_regs
#else
#define standin_regs pt_regs
#endif

static void notrace standin_entry(unsigned long ip, unsigned long parent_ip,
				  struct ftrace_ops *op,
				  struct standin_regs *regs)
{
}

static struct ftrace_ops standin_ops = {
	.func = standin_entry,
	.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY,
};

/*
 * Add @func to the filter, or take it out again ("!func"); taking the last
 * one out frees the filter (ftrace_free_filter() is not exported before
 * 6.2).
 */
static int standin_filter(const char *func)
{
	static char buf[KSYM_NAME_LEN + 1];

	strscpy(buf, func, sizeof(buf));
	return ftrace_set_filter(&standin_ops, buf, strlen(buf), 0);
}

static void standin_unfilter(void)
{
	standin_filter("!kvm_vm_ioctl");
	standin_filter("!kvm_vcpu_ioctl");
}

static int __init standin_init(void)
{
	int ret;

	ret = standin_filter("kvm_vm_ioctl");
	if (!ret)
		ret = standin_filter("kvm_vcpu_ioctl");
	if (!ret)
		ret = register_ftrace_function(&standin_ops);
	if (ret) {
		pr_info("cannot own KVM's ioctl handlers: %d\n", ret);
		standin_unfilter();
	}
	return ret;
}

static void __exit standin_exit(void)
{
	unregister_ftrace_function(&standin_ops);
	standin_unfilter();
}

module_init(standin_init);
module_exit(standin_exit);
MODULE_DESCRIPTION("kvm-statsfd test rig: a livepatch's hold on KVM's ioctl handlers");
MODULE_LICENSE("GPL");
