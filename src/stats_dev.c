// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/kvm-statsfd: a stats fd for any VM or vCPU fd its caller holds,
 * under a permission check of the module's own
 * (include/kvm_statsfd/stats_dev.h).
 *
 * A telemetry agent borrows a VMM's VM and vCPU fds with pidfd_getfd(),
 * but KVM answers ioctls only in the VM's creator (its mm): KVM_GET_STATS_FD
 * on a borrowed fd gets EIO.  This device makes the stats file itself, as
 * the ioctl would in the VMM, so that nothing of KVM's needs to be traced
 * for it: no hook on KVM's ioctl handlers, none on KVM_RUN's path.
 *
 * Holding the fd is not enough: it may have come by SCM_RIGHTS or fork()
 * to a process KVM itself would refuse (a sandboxed device process), and
 * per-vCPU exit and halt histograms are a timing side channel on the
 * guest.  So the caller must be the VM's creator, or have a capability
 * under which the kernel already lets it observe the guest: CAP_SYS_PTRACE
 * (read the VMM's memory) or CAP_PERFMON (trace KVM's exit tracepoints for
 * every process, as kvm_stat does).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kvm_host.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched.h>

#include <kvm_statsfd/compat.h>
#include <kvm_statsfd/fault.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/stats_dev.h>

bool ks_reader_allowed(struct kvm *kvm)
{
	return kvm->mm == current->mm || capable(CAP_SYS_PTRACE) ||
	       perfmon_capable();
}

/* A stats fd for the VM or vCPU that the caller's fd @vfd is. */
static long ks_dev_get_stats_fd(unsigned int vfd)
{
	struct file *file = fget(vfd);
	struct kvm_vcpu *vcpu = NULL;
	struct kvm *kvm;
	long ret;

	if (!file)
		return -EBADF;
	/* The file holds its VM, and the vendor module, until fput(). */
	if (file->f_op == ks_kvm.vm_fops) {
		kvm = file->private_data;
	} else if (file->f_op == ks_kvm.vcpu_fops) {
		vcpu = file->private_data;
		kvm = vcpu->kvm;
	} else {
		ret = -EINVAL;
		goto out;
	}
	if (!ks_reader_allowed(kvm))
		ret = -EACCES;
	else if (ks_kvm_is_dead(kvm))
		ret = -EIO;
	else if (vcpu)
		ret = ks_stats_fd_create_vcpu(vcpu);
	else
		ret = ks_stats_fd_create_vm(kvm);
out:
	fput(file);
	return ret;
}

static long ks_dev_ioctl(struct file *file, unsigned int cmd,
			 unsigned long arg)
{
	if (cmd != KVM_STATSFD_GET_STATS_FD)
		return -ENOTTY;
	if (arg > INT_MAX)
		return -EBADF;
	return ks_dev_get_stats_fd(arg);
}

static const struct file_operations ks_dev_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = ks_dev_ioctl,
	.compat_ioctl = ks_dev_ioctl,
	.llseek = noop_llseek,
};

static struct miscdevice ks_dev = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = KVM_STATSFD_DEV_NAME,
	.fops = &ks_dev_fops,
	/* Anyone may ask; each call is checked (ks_reader_allowed()). */
	.mode = 0444,
};

int ks_stats_dev_init(void)
{
	int ret = ks_fault_int(misc_register(&ks_dev));

	if (ret)
		pr_err("cannot register /dev/%s: %d\n", KVM_STATSFD_DEV_NAME,
		       ret);
	return ret;
}

void ks_stats_dev_exit(void)
{
	misc_deregister(&ks_dev);
}
