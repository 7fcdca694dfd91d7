// SPDX-License-Identifier: GPL-2.0
/*
 * Serving KVM_GET_STATS_FD with the module's file.
 *
 * Where KVM has binary stats (5.14+) it makes the stats file itself, with
 * anon_inode_getfile() (anon_inode_getfile_fmode() since 6.13) given its
 * kvm_vm_stats_fops or kvm_vcpu_stats_fops.  An ftrace callback with
 * IPMODIFY (the mechanism livepatch uses) runs at the entry of those
 * functions of the core kernel: when the file operations are KVM's stats
 * ones, and only then, it points the saved instruction pointer at our
 * handler of the same signature, which makes the module's file for the
 * same VM or vCPU and returns it straight to KVM.  KVM then does for our
 * file what it does for its own: it takes the reference on the VM that the
 * file's release drops, and installs the fd.  KVM's checks (the VM's
 * creator only, no dead VM) have run before.  No KVM function on an
 * ioctl's path is traced (only kvm_arch_destroy_vm(), below): a KVM_RUN,
 * like every other ioctl, passes no code of ours, and a livepatch of
 * KVM's ioctl handlers can load.  Every anon_inode_getfile()
 * on the host passes the callback, a compare of one argument.
 *
 * Where the module brings the ioctl itself (before 5.14), or answers
 * processes other than the VM's creator (cross_process=1, before KVM's
 * same-process check), the callback runs at the entry of kvm_vm_ioctl()
 * and kvm_vcpu_ioctl() instead and diverts KVM_GET_STATS_FD, and nothing
 * else, to our handlers; every other ioctl continues into KVM untouched,
 * so no module code is on the stack of a KVM_RUN.
 *
 * The callback takes a module reference before it diverts and the handler
 * drops it, so rmmod either waits for no one or is refused; the few
 * instructions after the drop are covered by synchronize_rcu_tasks() on
 * unload.
 *
 * A second, plain ftrace callback at kvm_arch_destroy_vm() tells the
 * counters that a VM is going away.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/ftrace.h>
#include <linux/kvm_host.h>
#include <linux/module.h>
#include <linux/ptrace.h>
#include <linux/string.h>

#include <kvm_statsfd/compat.h>
#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/fault.h>
#include <kvm_statsfd/ftrace_arch.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/native.h>

/*
 * ftrace locations of the hooked functions, 0 when not hooked: where KVM
 * makes its stats files, or the ioctl handlers and KVM's arch capability
 * check (kernels without binary stats only); and VM destruction.
 */
enum {
	KS_IP_GETFILE, KS_IP_GETFILE_FMODE,
	KS_IP_VM_IOCTL, KS_IP_VCPU_IOCTL, KS_IP_CHECK_EXT,
	KS_NR_IOCTL_IPS
};

static unsigned long ks_ioctl_ips[KS_NR_IOCTL_IPS];
static unsigned long ks_destroy_ip;

/* The functions behind ks_ioctl_ips, and ks_destroy_ip's, for messages. */
static const char *const ks_ioctl_names[KS_NR_IOCTL_IPS] = {
	[KS_IP_GETFILE] = "anon_inode_getfile",
	[KS_IP_GETFILE_FMODE] = "anon_inode_getfile_fmode",
	[KS_IP_VM_IOCTL] = "kvm_vm_ioctl",
	[KS_IP_VCPU_IOCTL] = "kvm_vcpu_ioctl",
	[KS_IP_CHECK_EXT] = "kvm_vm_ioctl_check_extension",
};

static const char *const ks_destroy_name = "kvm_arch_destroy_vm";

/*
 * KVM's own check on every VM and vCPU ioctl, as our handlers skip KVM's:
 * a dead VM answers nothing, and only the VM's creator gets an answer;
 * with cross_process=1, also a process that may observe the guest
 * anyway, as /dev/kvm-statsfd checks (a stats fd only reads).
 */
static bool ks_ioctl_allowed(struct kvm *kvm)
{
	if (ks_kvm_is_dead(kvm))
		return false;
	if (ks_cross_process)
		return ks_reader_allowed(kvm);
	return kvm->mm == current->mm;
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

/* The module's file in place of the one KVM was making with @fops. */
static struct file *ks_stats_file_for_kvm(const char *name,
					  const struct file_operations *fops,
					  void *priv)
{
	if (fops == ks_kvm.vm_stats_fops)
		return ks_stats_file_vm(priv, name);
	return ks_stats_file_vcpu(priv, name);
}

/* Replaces anon_inode_getfile() when KVM makes a stats file. */
static struct file *ks_anon_getfile(const char *name,
				    const struct file_operations *fops,
				    void *priv, int flags)
{
	struct file *file = ks_stats_file_for_kvm(name, fops, priv);

	module_put(THIS_MODULE);
	return file;
}

/* Replaces anon_inode_getfile_fmode() when KVM makes a stats file. */
static struct file *ks_anon_getfile_fmode(const char *name,
					  const struct file_operations *fops,
					  void *priv, int flags, fmode_t f_mode)
{
	struct file *file = ks_stats_file_for_kvm(name, fops, priv);

	if (!IS_ERR(file))
		file->f_mode |= f_mode;
	module_put(THIS_MODULE);
	return file;
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

/* Send the traced call in @regs to @handler, unless we are unloading. */
static __always_inline void ks_divert(struct ks_fargs *regs,
				      unsigned long handler)
{
	/* Unloading: let the kernel answer as it would without us. */
	if (!try_module_get(THIS_MODULE))
		return;
	ks_fargs_set_ip(regs, handler);
}

/* At anon_inode_getfile() and _fmode(): KVM's stats files only. */
static void notrace ks_getfile_entry(unsigned long ip, unsigned long parent_ip,
				     struct ftrace_ops *op,
				     struct ks_ftrace_regs *fregs)
{
	struct ks_fargs *regs = ks_fargs_of(fregs);
	unsigned long fops;

	if (unlikely(!regs))
		return;
	fops = ks_fargs_arg(regs, 1);
	if (fops != (unsigned long)ks_kvm.vm_stats_fops &&
	    fops != (unsigned long)ks_kvm.vcpu_stats_fops)
		return;
	/*
	 * Each handler has its function's signature: a call we cannot place
	 * goes on to the kernel's own function, untouched.
	 */
	if (ip == ks_ioctl_ips[KS_IP_GETFILE])
		ks_divert(regs, (unsigned long)ks_anon_getfile);
	else if (ip == ks_ioctl_ips[KS_IP_GETFILE_FMODE])
		ks_divert(regs, (unsigned long)ks_anon_getfile_fmode);
}

/* At KVM's ioctl handlers (and capability check): KVM_GET_STATS_FD only. */
static void notrace ks_ioctl_entry(unsigned long ip, unsigned long parent_ip,
				   struct ftrace_ops *op,
				   struct ks_ftrace_regs *fregs)
{
	struct ks_fargs *regs = ks_fargs_of(fregs);
	unsigned long arg;

	if (unlikely(!regs))
		return;
	arg = ks_fargs_arg(regs, 1);
	if (ip == ks_ioctl_ips[KS_IP_VM_IOCTL] &&
	    (unsigned int)arg == KVM_GET_STATS_FD)
		ks_divert(regs, (unsigned long)ks_vm_ioctl_get_stats_fd);
	else if (ip == ks_ioctl_ips[KS_IP_VCPU_IOCTL] &&
		 (unsigned int)arg == KVM_GET_STATS_FD)
		ks_divert(regs, (unsigned long)ks_vcpu_ioctl_get_stats_fd);
	else if (ip == ks_ioctl_ips[KS_IP_CHECK_EXT] &&
		 arg == KVM_CAP_BINARY_STATS_FD)
		ks_divert(regs, (unsigned long)ks_check_ext_binary_stats);
}

/*
 * Every anon_inode_getfile() on the host, or (the ioctl hook) every vCPU
 * ioctl, KVM_RUN included, passes one of these callbacks: no recursion
 * guard around it (nor its preemption toggle).  Neither needs one: the
 * only function they call, try_module_get(), cannot reach the functions
 * they trace, and it is fine in preemptible context.  One ops per hook, so
 * that each callback tests only for its own functions.
 */
static struct ftrace_ops ks_getfile_ops = {
	.func = ks_getfile_entry,
	.flags = KS_FTRACE_OPS_FL_REGS | FTRACE_OPS_FL_IPMODIFY |
		 KS_FTRACE_OPS_FL_NO_GUARD,
};

static struct ftrace_ops ks_ioctl_ops = {
	.func = ks_ioctl_entry,
	.flags = KS_FTRACE_OPS_FL_REGS | FTRACE_OPS_FL_IPMODIFY |
		 KS_FTRACE_OPS_FL_NO_GUARD,
};

/* The one of them this load registers (ks_hook_attach()). */
static struct ftrace_ops *ks_divert_ops;

static void notrace ks_destroy_entry(unsigned long ip, unsigned long parent_ip,
				     struct ftrace_ops *op,
				     struct ks_ftrace_regs *fregs)
{
	struct ks_fargs *regs = ks_fargs_of(fregs);

	if (likely(regs))
		ks_vm_destroyed((struct kvm *)ks_fargs_arg(regs, 0));
}

static struct ftrace_ops ks_destroy_ops = {
	.func = ks_destroy_entry,
	.flags = KS_FTRACE_OPS_FL_REGS | FTRACE_OPS_FL_RECURSION,
};

/*
 * Filter @ops on the function at @addr; its ftrace location goes to @ip.
 * The location is computed here (ftrace_arch.h), as ftrace_set_filter_ip()'s
 * own mapping of a function address to its location was seen to drop
 * kvm_vm_ioctl on Debian's 6.12; ks_ftrace_verify() checks it once
 * registered.
 */
static int ks_ftrace_attach(struct ftrace_ops *ops, unsigned long addr,
			    const char *name, unsigned long *ip)
{
	unsigned long loc = addr ? ks_ftrace_location(addr) : 0;
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

/*
 * After register_ftrace_function(): whether ftrace's call really is at
 * each of the @n locations @ips (0: none) of the functions @names.
 * ftrace_set_filter_ip() accepts some addresses that are not an ftrace
 * location of their own, depending on the kernel (a function's first byte
 * where a sealed ENDBR hides its real location), and the callback then
 * never runs, or runs with an ip the callback does not recognise: a VM's
 * destruction never reaches the counters (its state leaks), or
 * KVM_GET_STATS_FD is silently KVM's again.  So every load looks, on
 * every kernel, and refuses with -EOPNOTSUPP (this kernel's ftrace is not
 * what the module knows) rather than run half hooked.
 */
static int ks_ftrace_verify(const unsigned long *ips,
			    const char *const *names, unsigned int n)
{
	u8 insn[KS_FTRACE_INSN_SIZE];
	unsigned int i;
	int ret;

	for (i = 0; i < n; i++) {
		if (!ips[i])
			continue;
		ret = ks_ftrace_live(ips[i], insn);
		if (ret) {
			pr_err("cannot trace %s: no ftrace call at %pS once registered (found %*ph)\n",
			       names[i], (void *)ips[i], KS_FTRACE_INSN_SIZE,
			       insn);
			return ret;
		}
	}
	return 0;
}

/* Watch VM destruction first: counters may exist as soon as probes run. */
int ks_hook_destroy_init(void)
{
	int ret;

	ret = ks_ftrace_attach(&ks_destroy_ops, ks_kvm.arch_destroy_vm,
			       ks_destroy_name, &ks_destroy_ip);
	if (ret)
		return ret;
	ret = ks_fault_int(register_ftrace_function(&ks_destroy_ops));
	if (ret) {
		pr_err("cannot register the VM destruction hook: %d\n", ret);
		goto out_detach;
	}
	ret = ks_ftrace_verify(&ks_destroy_ip, &ks_destroy_name, 1);
	if (ret) {
		unregister_ftrace_function(&ks_destroy_ops);
		goto out_detach;
	}
	return 0;

out_detach:
	ks_ftrace_detach(&ks_destroy_ops, &ks_destroy_ip, 1);
	return ret;
}

void ks_hook_destroy_exit(void)
{
	unregister_ftrace_function(&ks_destroy_ops);
	ks_ftrace_detach(&ks_destroy_ops, &ks_destroy_ip, 1);
}

/*
 * Where KVM makes its stats files; or, where the module brings the ioctl
 * or answers other processes than the VM's creator, KVM's ioctl handlers.
 */
static int ks_hook_attach(void)
{
	int ret;

	if (!ks_native_brings_ioctl && !ks_cross_process) {
		ks_divert_ops = &ks_getfile_ops;
		ret = ks_ftrace_attach(ks_divert_ops,
				       (unsigned long)anon_inode_getfile,
				       ks_ioctl_names[KS_IP_GETFILE],
				       &ks_ioctl_ips[KS_IP_GETFILE]);
		if (!ret && KS_ANON_GETFILE_FMODE)
			ret = ks_ftrace_attach(ks_divert_ops,
					       KS_ANON_GETFILE_FMODE,
					       ks_ioctl_names[KS_IP_GETFILE_FMODE],
					       &ks_ioctl_ips[KS_IP_GETFILE_FMODE]);
		return ret;
	}
	ks_divert_ops = &ks_ioctl_ops;
	ret = ks_ftrace_attach(ks_divert_ops, ks_kvm.vm_ioctl,
			       ks_ioctl_names[KS_IP_VM_IOCTL],
			       &ks_ioctl_ips[KS_IP_VM_IOCTL]);
	if (!ret)
		ret = ks_ftrace_attach(ks_divert_ops, ks_kvm.vcpu_ioctl,
				       ks_ioctl_names[KS_IP_VCPU_IOCTL],
				       &ks_ioctl_ips[KS_IP_VCPU_IOCTL]);
	if (!ret && ks_native_brings_ioctl)
		ret = ks_ftrace_attach(ks_divert_ops,
				       ks_kvm_symbol(ks_ioctl_names[KS_IP_CHECK_EXT],
						     true),
				       ks_ioctl_names[KS_IP_CHECK_EXT],
				       &ks_ioctl_ips[KS_IP_CHECK_EXT]);
	return ret;
}

int ks_hook_init(void)
{
	int ret;

	ret = ks_hook_attach();
	if (ret)
		goto out_detach;
	ret = ks_fault_int(register_ftrace_function(ks_divert_ops));
	if (ret == -ENOMEM) {
		pr_err("cannot divert KVM_GET_STATS_FD: out of memory\n");
		goto out_detach;
	} else if (ret) {
		pr_err("cannot divert KVM_GET_STATS_FD (%d): another IPMODIFY user, such as a livepatch, may own %s\n",
		       ret, ks_ioctl_ips[KS_IP_GETFILE] ? "anon_inode_getfile" :
		       "KVM's ioctl handlers");
		goto out_detach;
	}
	ret = ks_ftrace_verify(ks_ioctl_ips, ks_ioctl_names, KS_NR_IOCTL_IPS);
	if (ret) {
		/* The live ones may have diverted a call meanwhile. */
		unregister_ftrace_function(ks_divert_ops);
		ks_synchronize_handlers();
		goto out_detach;
	}
	return 0;

out_detach:
	ks_ftrace_detach(ks_divert_ops, ks_ioctl_ips, KS_NR_IOCTL_IPS);
	return ret;
}

void ks_hook_exit(void)
{
	unregister_ftrace_function(ks_divert_ops);
	ks_ftrace_detach(ks_divert_ops, ks_ioctl_ips, KS_NR_IOCTL_IPS);
	/*
	 * A handler that already dropped its module reference may still be
	 * on its last instructions; they never sleep, so one RCU-tasks grace
	 * period sees them gone.
	 */
	ks_synchronize_handlers();
}
