// SPDX-License-Identifier: GPL-2.0
/*
 * Finding what the module needs inside KVM, at load: its unexported
 * ioctl handlers, file operations and tracepoints, by name, through
 * whichever symbol lookup fits how this kernel built KVM (kvm.ko's own
 * symbol table, or vmlinux's kallsyms).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kvm_host.h>

#include <kvm_statsfd/compat.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/native.h>

struct ks_kvm_symbols ks_kvm;

/* Where KVM does not export it to us (compat.h). */
struct kvm_vcpu *(*ks_kvm_get_running_vcpu)(void);

int ks_kvm_symbols_init(void)
{
	int ret;

	ret = ks_kvm_lookup_init();
	if (ret)
		return ret;
	ks_kvm.vm_ioctl = ks_kvm_symbol("kvm_vm_ioctl", true);
	ks_kvm.vcpu_ioctl = ks_kvm_symbol("kvm_vcpu_ioctl", true);
	ks_kvm.arch_destroy_vm = ks_kvm_symbol("kvm_arch_destroy_vm", true);
	ks_kvm.chardev_ops = (const struct file_operations *)
		ks_kvm_symbol("kvm_chardev_ops", false);
	ks_kvm.vm_fops = (const struct file_operations *)
		ks_kvm_symbol("kvm_vm_fops", false);
	ks_kvm.vcpu_fops = (const struct file_operations *)
		ks_kvm_symbol("kvm_vcpu_fops", false);
	/* Not every kernel exports them: found like the rest. */
	ks_kvm.tp_exit = ks_kvm_tracepoint("kvm_exit");
	ks_kvm.tp_entry = ks_kvm_tracepoint("kvm_entry");
	ks_kvm.tp_userspace_exit = ks_kvm_tracepoint("kvm_userspace_exit");
	ks_kvm.tp_mmio = ks_kvm_tracepoint("kvm_mmio");

	/* KVM's own stats files, which hook.c replaces with the module's. */
	if (!ks_native_brings_ioctl) {
		ks_kvm.vm_stats_fops = (const struct file_operations *)
			ks_kvm_symbol("kvm_vm_stats_fops", false);
		ks_kvm.vcpu_stats_fops = (const struct file_operations *)
			ks_kvm_symbol("kvm_vcpu_stats_fops", false);
		if (!ks_kvm.vm_stats_fops || !ks_kvm.vcpu_stats_fops)
			return -ENOENT;
	}

	if (!ks_kvm.vm_ioctl || !ks_kvm.vcpu_ioctl ||
	    !ks_kvm.arch_destroy_vm ||
	    !ks_kvm.chardev_ops || !ks_kvm.vm_fops || !ks_kvm.vcpu_fops ||
	    !ks_kvm.tp_exit ||
	    !ks_kvm.tp_entry || !ks_kvm.tp_userspace_exit || !ks_kvm.tp_mmio)
		return -ENOENT;
	if (!KS_RUNNING_VCPU_EXPORTED) {
		ks_kvm_get_running_vcpu =
			(void *)ks_kvm_symbol("kvm_get_running_vcpu", true);
		if (!ks_kvm_get_running_vcpu)
			return -ENOENT;
	}
	return ks_arch_kvm_symbols_init();
}
