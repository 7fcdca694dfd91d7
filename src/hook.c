// SPDX-License-Identifier: GPL-2.0
/*
 * Diverting KVM_GET_STATS_FD, and only it, to the module.
 *
 * kvm_vm_ioctl() and kvm_vcpu_ioctl() are static in kvm.ko.  An ftrace
 * callback with IPMODIFY (the mechanism livepatch uses) runs at their
 * entry: for KVM_GET_STATS_FD it points the saved instruction pointer at
 * our handler of the same signature, which then returns straight to KVM's
 * caller; every other ioctl continues into KVM untouched, so no module
 * code is on the stack of a KVM_RUN.  The callback takes a module
 * reference before it diverts and the handler drops it, so rmmod either
 * waits for no one or is refused; the few instructions after the drop are
 * covered by synchronize_rcu_tasks() on unload.
 *
 * A second, plain ftrace callback at kvm_arch_destroy_vm() tells the
 * counters that a VM is going away.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/ftrace.h>
#include <linux/kvm_host.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/string.h>

#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/kvm_statsfd.h>

/* ftrace locations of the hooked ioctl handlers. */
static unsigned long ks_vm_ioctl_ip, ks_vcpu_ioctl_ip;

/*
 * The ftrace location (the __fentry__ call) of the function at @func: the
 * function itself, or just past its ENDBR on IBT kernels.  Computed here
 * because ftrace_set_filter_ip()'s own mapping of a function address to
 * its location was seen to drop kvm_vm_ioctl on Debian's 6.12.
 */
static unsigned long ks_fentry_of(unsigned long func)
{
	static const u8 endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

	if (!memcmp((const void *)func, endbr64, sizeof(endbr64)))
		return func + sizeof(endbr64);
	return func;
}

static long ks_vm_ioctl_get_stats_fd(struct file *filp, unsigned int ioctl,
				     unsigned long arg)
{
	struct kvm *kvm = filp->private_data;
	long ret;

	/*
	 * Unlike KVM's other VM ioctls, any process holding the fd may ask
	 * (a telemetry agent takes a copy with pidfd_getfd()): the stats fd
	 * only reads.
	 */
	if (READ_ONCE(kvm->vm_dead))
		ret = -EIO;
	else
		ret = ks_stats_fd_create_vm(kvm);
	module_put(THIS_MODULE);
	return ret;
}

static long ks_vcpu_ioctl_get_stats_fd(struct file *filp, unsigned int ioctl,
				       unsigned long arg)
{
	struct kvm_vcpu *vcpu = filp->private_data;
	long ret;

	if (READ_ONCE(vcpu->kvm->vm_dead))
		ret = -EIO;
	else
		ret = ks_stats_fd_create_vcpu(vcpu);
	module_put(THIS_MODULE);
	return ret;
}

static void notrace ks_ioctl_entry(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *op,
				   struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);
	unsigned long handler;

	if (unlikely(!regs) ||
	    (unsigned int)regs_get_kernel_argument(regs, 1) != KVM_GET_STATS_FD)
		return;

	if (ip == ks_vm_ioctl_ip)
		handler = (unsigned long)ks_vm_ioctl_get_stats_fd;
	else if (ip == ks_vcpu_ioctl_ip)
		handler = (unsigned long)ks_vcpu_ioctl_get_stats_fd;
	else
		return;

	/* Unloading: let KVM answer as it would without us. */
	if (!try_module_get(THIS_MODULE))
		return;
	instruction_pointer_set(regs, handler);
}

static struct ftrace_ops ks_ioctl_ops = {
	.func = ks_ioctl_entry,
	.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY |
		 FTRACE_OPS_FL_RECURSION,
};

static void notrace ks_destroy_entry(unsigned long ip, unsigned long parent_ip,
				     struct ftrace_ops *op,
				     struct ftrace_regs *fregs)
{
	struct pt_regs *regs = ftrace_get_regs(fregs);

	if (likely(regs))
		ks_vm_destroyed((struct kvm *)regs_get_kernel_argument(regs, 0));
}

static struct ftrace_ops ks_destroy_ops = {
	.func = ks_destroy_entry,
	.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_RECURSION,
};

static int ks_ftrace_attach(struct ftrace_ops *ops, unsigned long addr,
			    const char *name)
{
	int ret = ftrace_set_filter_ip(ops, ks_fentry_of(addr), 0, 0);

	if (ret)
		pr_err("cannot trace %s (%d): is it notrace or patched?\n",
		       name, ret);
	return ret;
}

/* Watch VM destruction first: counters may exist as soon as probes run. */
int ks_hook_destroy_init(void)
{
	int ret;

	ret = ks_ftrace_attach(&ks_destroy_ops, ks_kvm.arch_destroy_vm,
			       "kvm_arch_destroy_vm");
	if (ret)
		return ret;
	ret = register_ftrace_function(&ks_destroy_ops);
	if (ret) {
		pr_err("cannot register the VM destruction hook: %d\n", ret);
		ftrace_free_filter(&ks_destroy_ops);
	}
	return ret;
}

void ks_hook_destroy_exit(void)
{
	unregister_ftrace_function(&ks_destroy_ops);
	ftrace_free_filter(&ks_destroy_ops);
}

int ks_hook_init(void)
{
	int ret;

	ks_vm_ioctl_ip = ks_fentry_of(ks_kvm.vm_ioctl);
	ks_vcpu_ioctl_ip = ks_fentry_of(ks_kvm.vcpu_ioctl);
	ret = ks_ftrace_attach(&ks_ioctl_ops, ks_kvm.vm_ioctl, "kvm_vm_ioctl");
	if (!ret)
		ret = ks_ftrace_attach(&ks_ioctl_ops, ks_kvm.vcpu_ioctl,
				       "kvm_vcpu_ioctl");
	if (ret)
		goto out_free;
	ret = register_ftrace_function(&ks_ioctl_ops);
	if (ret) {
		pr_err("cannot hook KVM's ioctls (%d): another IPMODIFY user, such as a livepatch, may own them\n",
		       ret);
		goto out_free;
	}
	return 0;

out_free:
	ftrace_free_filter(&ks_ioctl_ops);
	return ret;
}

void ks_hook_exit(void)
{
	unregister_ftrace_function(&ks_ioctl_ops);
	ftrace_free_filter(&ks_ioctl_ops);
	/*
	 * A handler that already dropped its module reference may still be
	 * on its last instructions; they never sleep, so one RCU-tasks grace
	 * period sees them gone.
	 */
	synchronize_rcu_tasks();
}
