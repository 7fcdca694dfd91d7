// SPDX-License-Identifier: GPL-2.0
/*
 * Finding what the module needs inside kvm.ko.
 *
 * kvm.ko exports little of what a stats provider needs: the VM and vCPU
 * ioctl handlers are static, and the native stats descriptors and the way
 * to the vendor's get_exit_info() are not exported.
 * kallsyms_lookup_name() is unexported (and the usual tricks to reach it
 * are unsafe on IBT kernels), so instead we read kvm.ko's own symbol
 * table: the module loader keeps it in struct module for kallsyms.
 *
 * kvm.ko's struct module itself is found through public API only: the
 * tracepoint module notifier reports every loaded module that has
 * tracepoints (kvm.ko does) as it is registered.  kvm.ko cannot go away
 * while we are loaded: we use its exported kvm_get_kvm().
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/elf.h>
#include <linux/kvm_host.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include <kvm_statsfd/compat.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/native.h>

struct ks_kvm_symbols ks_kvm;

/* Where kvm.ko does not export it to us (compat.h). */
struct kvm_vcpu *(*ks_kvm_get_running_vcpu)(void);

static struct module *ks_kvm_module;

static int ks_tp_module_seen(struct notifier_block *nb, unsigned long state,
			     void *data)
{
	struct tp_module *tp_mod = data;

	if (state == MODULE_STATE_COMING && !strcmp(tp_mod->mod->name, "kvm"))
		ks_kvm_module = tp_mod->mod;
	return NOTIFY_OK;
}

/* kvm.ko's struct module: registering the notifier replays loaded modules. */
static struct module *ks_find_kvm_module(void)
{
	struct notifier_block nb = { .notifier_call = ks_tp_module_seen };

	ks_kvm_module = NULL;
	if (register_tracepoint_module_notifier(&nb))
		return NULL;
	unregister_tracepoint_module_notifier(&nb);
	return ks_kvm_module;
}

/*
 * Address of the symbol @name in @mod's symbol table, 0 if it is missing
 * or ambiguous (two local symbols of that name).  @text selects functions
 * (type t/T) or data (d/D/r/R/b/B).
 */
unsigned long ks_kvm_symbol(const char *name, bool text)
{
	struct mod_kallsyms *ks;
	unsigned long addr = 0;
	unsigned int i, found = 0;

	preempt_disable();
	ks = rcu_dereference_sched(ks_kvm_module->kallsyms);
	for (i = 0; i < ks->num_symtab; i++) {
		const typeof(*ks->symtab) *sym = &ks->symtab[i];
		char type = ks->typetab[i] | 0x20;	/* lower case */

		if (sym->st_shndx == SHN_UNDEF ||
		    strcmp(ks->strtab + sym->st_name, name))
			continue;
		if (text != (type == 't'))
			continue;
		addr = sym->st_value;
		found++;
	}
	preempt_enable();

	if (found > 1) {
		pr_err("kvm.ko has %u symbols named %s\n", found, name);
		return 0;
	}
	if (!found)
		pr_err("kvm.ko has no %s symbol %s: this kernel is not supported\n",
		       text ? "function" : "data", name);
	return addr;
}

int ks_kvm_symbols_init(void)
{
	if (!ks_find_kvm_module()) {
		pr_err("kvm.ko is not loaded, or has no tracepoints\n");
		return -ENOENT;
	}
	ks_kvm.vm_ioctl = ks_kvm_symbol("kvm_vm_ioctl", true);
	ks_kvm.vcpu_ioctl = ks_kvm_symbol("kvm_vcpu_ioctl", true);
	ks_kvm.arch_destroy_vm = ks_kvm_symbol("kvm_arch_destroy_vm", true);
	ks_kvm.exit_info = ks_kvm_symbol(KS_KVM_EXIT_INFO_SYMBOL,
					 KS_KVM_EXIT_INFO_TEXT);
	ks_kvm.chardev_ops = (const struct file_operations *)
		ks_kvm_symbol("kvm_chardev_ops", false);
	ks_kvm.vm_fops = (const struct file_operations *)
		ks_kvm_symbol("kvm_vm_fops", false);
	ks_kvm.vcpu_fops = (const struct file_operations *)
		ks_kvm_symbol("kvm_vcpu_fops", false);
	/* Not every kernel exports them: found like the rest. */
	ks_kvm.tp_exit = (void *)ks_kvm_symbol("__tracepoint_kvm_exit", false);
	ks_kvm.tp_entry = (void *)ks_kvm_symbol("__tracepoint_kvm_entry", false);
	ks_kvm.tp_userspace_exit =
		(void *)ks_kvm_symbol("__tracepoint_kvm_userspace_exit", false);
	ks_kvm.tp_mmio = (void *)ks_kvm_symbol("__tracepoint_kvm_mmio", false);

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
	    !ks_kvm.arch_destroy_vm || !ks_kvm.exit_info ||
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
	return 0;
}
