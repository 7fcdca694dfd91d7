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

#include <kvm_statsfd/compat.h>
#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/native.h>

/*
 * ftrace locations of the hooked functions, 0 when not hooked: the ioctl
 * handlers, KVM's arch capability check (kernels without binary stats
 * only) and VM destruction.
 */
enum { KS_IP_VM_IOCTL, KS_IP_VCPU_IOCTL, KS_IP_CHECK_EXT, KS_NR_IOCTL_IPS };
static unsigned long ks_ioctl_ips[KS_NR_IOCTL_IPS];
static unsigned long ks_destroy_ip;

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

/*
 * KVM's own check on every VM and vCPU ioctl, as our handlers skip KVM's:
 * a dead VM answers nothing, and only the VM's creator gets an answer
 * unless the load said cross_process=1 (a telemetry agent borrows other
 * processes' fds with pidfd_getfd(); a stats fd only reads).
 */
static bool ks_ioctl_allowed(struct kvm *kvm)
{
	if (ks_kvm_is_dead(kvm))
		return false;
	return ks_cross_process || kvm->mm == current->mm;
}

static long ks_vm_ioctl_get_stats_fd(struct file *filp, unsigned int ioctl,
				     unsigned long arg)
{
	struct kvm *kvm = filp->private_data;
	long ret;

	if (!ks_ioctl_allowed(kvm))
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

	if (!ks_ioctl_allowed(vcpu->kvm))
		ret = -EIO;
	else
		ret = ks_stats_fd_create_vcpu(vcpu);
	module_put(THIS_MODULE);
	return ret;
}

/*
 * Replaces kvm_vm_ioctl_check_extension(kvm, KVM_CAP_BINARY_STATS_FD) on
 * kernels where the module brings the ioctl: QEMU asks before it uses it.
 */
static int ks_check_ext_binary_stats(struct kvm *kvm, long ext)
{
	module_put(THIS_MODULE);
	return 1;
}

static void notrace ks_ioctl_entry(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *op,
				   struct ks_ftrace_regs *fregs)
{
	struct pt_regs *regs = ks_ftrace_get_regs(fregs);
	unsigned long handler, arg;

	if (unlikely(!regs))
		return;
	arg = regs_get_kernel_argument(regs, 1);
	if (ip == ks_ioctl_ips[KS_IP_VM_IOCTL] &&
	    (unsigned int)arg == KVM_GET_STATS_FD)
		handler = (unsigned long)ks_vm_ioctl_get_stats_fd;
	else if (ip == ks_ioctl_ips[KS_IP_VCPU_IOCTL] &&
		 (unsigned int)arg == KVM_GET_STATS_FD)
		handler = (unsigned long)ks_vcpu_ioctl_get_stats_fd;
	else if (ip == ks_ioctl_ips[KS_IP_CHECK_EXT] &&
		 arg == KVM_CAP_BINARY_STATS_FD)
		handler = (unsigned long)ks_check_ext_binary_stats;
	else
		return;

	/* Unloading: let KVM answer as it would without us. */
	if (!try_module_get(THIS_MODULE))
		return;
	instruction_pointer_set(regs, handler);
}

/*
 * Every vCPU ioctl, KVM_RUN included, passes this callback: no recursion
 * guard around it (nor its preemption toggle).  It needs none: the only
 * function it calls, try_module_get(), cannot reach the functions it
 * traces, and it is fine in preemptible context.
 */
static struct ftrace_ops ks_ioctl_ops = {
	.func = ks_ioctl_entry,
	.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_IPMODIFY |
		 KS_FTRACE_OPS_FL_NO_GUARD,
};

static void notrace ks_destroy_entry(unsigned long ip, unsigned long parent_ip,
				     struct ftrace_ops *op,
				     struct ks_ftrace_regs *fregs)
{
	struct pt_regs *regs = ks_ftrace_get_regs(fregs);

	if (likely(regs))
		ks_vm_destroyed((struct kvm *)regs_get_kernel_argument(regs, 0));
}

static struct ftrace_ops ks_destroy_ops = {
	.func = ks_destroy_entry,
	.flags = FTRACE_OPS_FL_SAVE_REGS | FTRACE_OPS_FL_RECURSION,
};

/* Filter @ops on the function at @addr; its ftrace location goes to @ip. */
static int ks_ftrace_attach(struct ftrace_ops *ops, unsigned long addr,
			    const char *name, unsigned long *ip)
{
	unsigned long loc = addr ? ks_fentry_of(addr) : 0;
	int ret = loc ? ftrace_set_filter_ip(ops, loc, 0, 0) : -ENOENT;

	if (ret == -ENOMEM)
		pr_err("cannot trace %s: out of memory\n", name);
	else if (ret)
		pr_err("cannot trace %s (%d): is it notrace or patched?\n",
		       name, ret);
	else
		*ip = loc;
	return ret;
}

/*
 * Undo ks_ftrace_attach() for each of @ips (ftrace_free_filter() is not
 * exported everywhere; removing the last location frees the filter too).
 */
static void ks_ftrace_detach(struct ftrace_ops *ops, unsigned long *ips,
			     unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (ips[i])
			ftrace_set_filter_ip(ops, ips[i], 1, 0);
		ips[i] = 0;
	}
}

/* Watch VM destruction first: counters may exist as soon as probes run. */
int ks_hook_destroy_init(void)
{
	int ret;

	ret = ks_ftrace_attach(&ks_destroy_ops, ks_kvm.arch_destroy_vm,
			       "kvm_arch_destroy_vm", &ks_destroy_ip);
	if (ret)
		return ret;
	ret = register_ftrace_function(&ks_destroy_ops);
	if (ret) {
		pr_err("cannot register the VM destruction hook: %d\n", ret);
		ks_ftrace_detach(&ks_destroy_ops, &ks_destroy_ip, 1);
	}
	return ret;
}

void ks_hook_destroy_exit(void)
{
	unregister_ftrace_function(&ks_destroy_ops);
	ks_ftrace_detach(&ks_destroy_ops, &ks_destroy_ip, 1);
}

int ks_hook_init(void)
{
	int ret;

	ret = ks_ftrace_attach(&ks_ioctl_ops, ks_kvm.vm_ioctl, "kvm_vm_ioctl",
			       &ks_ioctl_ips[KS_IP_VM_IOCTL]);
	if (!ret)
		ret = ks_ftrace_attach(&ks_ioctl_ops, ks_kvm.vcpu_ioctl,
				       "kvm_vcpu_ioctl",
				       &ks_ioctl_ips[KS_IP_VCPU_IOCTL]);
	if (!ret && ks_native_brings_ioctl)
		ret = ks_ftrace_attach(&ks_ioctl_ops,
				       ks_kvm_symbol("kvm_vm_ioctl_check_extension",
						     true),
				       "kvm_vm_ioctl_check_extension",
				       &ks_ioctl_ips[KS_IP_CHECK_EXT]);
	if (ret)
		goto out_detach;
	ret = register_ftrace_function(&ks_ioctl_ops);
	if (ret == -ENOMEM) {
		pr_err("cannot hook KVM's ioctls: out of memory\n");
		goto out_detach;
	} else if (ret) {
		pr_err("cannot hook KVM's ioctls (%d): another IPMODIFY user, such as a livepatch, may own them\n",
		       ret);
		goto out_detach;
	}
	return 0;

out_detach:
	ks_ftrace_detach(&ks_ioctl_ops, ks_ioctl_ips, KS_NR_IOCTL_IPS);
	return ret;
}

void ks_hook_exit(void)
{
	unregister_ftrace_function(&ks_ioctl_ops);
	ks_ftrace_detach(&ks_ioctl_ops, ks_ioctl_ips, KS_NR_IOCTL_IPS);
	/*
	 * A handler that already dropped its module reference may still be
	 * on its last instructions; they never sleep, so one RCU-tasks grace
	 * period sees them gone.
	 */
	ks_synchronize_handlers();
}
