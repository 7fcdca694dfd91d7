// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only: stands in for a livepatch of KVM's ioctl handlers, or (with
 * target=anon_inodes) of fs/anon_inodes.c.
 *
 * A livepatch owns each function it replaces through an ftrace_ops with
 * IPMODIFY, and ftrace allows one such ops per function.  This module
 * registers one, whose callback changes nothing, on kvm_vm_ioctl() and
 * kvm_vcpu_ioctl(), or on anon_inode_getfile() and, where the kernel has
 * it, anon_inode_getfile_fmode(), so that module_load_test can check which
 * loads of kvm_statsfd live beside such a livepatch and which are refused.
 * Loading fails (EBUSY) if another IPMODIFY user owns one of them.
 *
 * The functions are found by address when the loader passes them (ip=,
 * from /proc/kallsyms), as a livepatch finds its own: ftrace maps each
 * to its location.  By name, ftrace_set_filter() looks the name up for
 * every traceable function of the kernel, about half a second under TCG
 * for each one added or taken out, and module_load_test adds and takes
 * out a dozen.
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

static char *target = "kvm_ioctls";
module_param(target, charp, 0444);
MODULE_PARM_DESC(target, "what the stand-in livepatch owns: kvm_ioctls (default) or anon_inodes");

/* The functions of each target; an optional one may be missing. */
struct standin_fn {
	const char *name;
	bool optional;
};

static const struct standin_fn kvm_ioctls[] = {
	{ "kvm_vm_ioctl" }, { "kvm_vcpu_ioctl" },
};

static const struct standin_fn anon_inodes[] = {
	{ "anon_inode_getfile" }, { "anon_inode_getfile_fmode", true },
};

static const struct standin_fn *standin_fns;
static unsigned int standin_nr;

static unsigned long ip[2];
static int ip_nr;
module_param_array(ip, ulong, &ip_nr, 0444);
MODULE_PARM_DESC(ip, "the target's functions' addresses, in the order above (0: this kernel has none); without them, their names are looked up");

/*
 * A livepatch's ops: IPMODIFY, with SAVE_REGS where the kernel has them.
 * arm64's 6.12 has ftrace WITH_ARGS, not WITH_REGS, and refuses SAVE_REGS
 * (-EINVAL); IPMODIFY alone holds the functions there as well.
 */
static struct ftrace_ops standin_ops = {
	.func = standin_entry,
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_REGS
	.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY,
#else
	.flags = FTRACE_OPS_FL_IPMODIFY,
#endif
};

/*
 * Add the target's function @i to the filter, or take it out again;
 * taking the last one out frees the filter (ftrace_free_filter() is not
 * exported before 6.2).  -EINVAL: the kernel has no such function.
 */
static int standin_filter(unsigned int i, bool remove)
{
	static char buf[KSYM_NAME_LEN + 2];

	if (ip_nr) {
		if (!ip[i])
			return -EINVAL;
		return ftrace_set_filter_ip(&standin_ops, ip[i], remove, 0);
	}
	snprintf(buf, sizeof(buf), "%s%s", remove ? "!" : "",
		 standin_fns[i].name);
	return ftrace_set_filter(&standin_ops, buf, strlen(buf), 0);
}

static void standin_unfilter(void)
{
	unsigned int i;

	for (i = 0; i < standin_nr; i++)
		standin_filter(i, true);
}

static int __init standin_init(void)
{
	unsigned int i;
	int ret = 0;

	if (!strcmp(target, "kvm_ioctls")) {
		standin_fns = kvm_ioctls;
		standin_nr = ARRAY_SIZE(kvm_ioctls);
	} else if (!strcmp(target, "anon_inodes")) {
		standin_fns = anon_inodes;
		standin_nr = ARRAY_SIZE(anon_inodes);
	} else {
		return -EINVAL;
	}
	if (ip_nr && ip_nr != standin_nr)
		return -EINVAL;
	for (i = 0; i < standin_nr && !ret; i++) {
		ret = standin_filter(i, false);
		if (ret == -EINVAL && standin_fns[i].optional)
			ret = 0;
	}
	if (!ret)
		ret = register_ftrace_function(&standin_ops);
	if (ret) {
		pr_info("cannot own %s: %d\n", target, ret);
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
MODULE_DESCRIPTION("kvm-statsfd test rig: a livepatch's hold on KVM's ioctl handlers or on anon_inodes");
MODULE_LICENSE("GPL");
