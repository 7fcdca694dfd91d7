// SPDX-License-Identifier: GPL-2.0
/*
 * Finding what the module needs inside kvm.ko.
 *
 * kvm.ko exports little of what a stats provider needs: the VM and vCPU
 * ioctl handlers are static, and the native stats descriptors and
 * kvm_x86_ops are not exported.  kallsyms_lookup_name() is unexported (and
 * the usual tricks to reach it are unsafe on IBT kernels), so instead we
 * read kvm.ko's own symbol table: the module loader keeps it in
 * struct module for kallsyms, and kvm.ko is reachable as a module this
 * one depends on (we use its exported kvm_get_kvm()), so it cannot go away
 * while we are loaded.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/elf.h>
#include <linux/kvm_host.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/string.h>

#include <kvm_statsfd/kvm_statsfd.h>

struct ks_kvm_symbols ks_kvm;

/* kvm.ko among the modules this one uses (filled in by the loader). */
static struct module *ks_find_kvm_module(void)
{
	struct module_use *use;

	list_for_each_entry(use, &THIS_MODULE->target_list, target_list)
		if (!strcmp(use->target->name, "kvm"))
			return use->target;
	return NULL;
}

/*
 * Address of the symbol @name in @mod's symbol table, 0 if it is missing
 * or ambiguous (two local symbols of that name).  @text selects functions
 * (type t/T) or data (d/D/r/R/b/B).
 */
static unsigned long ks_module_symbol(struct module *mod, const char *name,
				      bool text)
{
	struct mod_kallsyms *ks;
	unsigned long addr = 0;
	unsigned int i, found = 0;

	preempt_disable();
	ks = rcu_dereference_sched(mod->kallsyms);
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
	struct module *mod = ks_find_kvm_module();
	unsigned long vm_hdr, vm_desc, vcpu_hdr, vcpu_desc, ops, tp_user, tp_mmio;

	if (!mod) {
		pr_err("kvm.ko is not among the modules we use\n");
		return -ENOENT;
	}
	ks_kvm.mod = mod;
	ks_kvm.vm_ioctl = ks_module_symbol(mod, "kvm_vm_ioctl", true);
	ks_kvm.vcpu_ioctl = ks_module_symbol(mod, "kvm_vcpu_ioctl", true);
	ks_kvm.arch_destroy_vm = ks_module_symbol(mod, "kvm_arch_destroy_vm",
						  true);
	ops = ks_module_symbol(mod, "kvm_x86_ops", false);
	vm_hdr = ks_module_symbol(mod, "kvm_vm_stats_header", false);
	vm_desc = ks_module_symbol(mod, "kvm_vm_stats_desc", false);
	vcpu_hdr = ks_module_symbol(mod, "kvm_vcpu_stats_header", false);
	vcpu_desc = ks_module_symbol(mod, "kvm_vcpu_stats_desc", false);
	tp_user = ks_module_symbol(mod, "__tracepoint_kvm_userspace_exit",
				   false);
	tp_mmio = ks_module_symbol(mod, "__tracepoint_kvm_mmio", false);

	if (!ks_kvm.vm_ioctl || !ks_kvm.vcpu_ioctl ||
	    !ks_kvm.arch_destroy_vm || !ops || !vm_hdr || !vm_desc ||
	    !vcpu_hdr || !vcpu_desc || !tp_user || !tp_mmio)
		return -ENOENT;

	ks_kvm.x86_ops = (struct kvm_x86_ops *)ops;
	ks_kvm.vm_header = (const struct kvm_stats_header *)vm_hdr;
	ks_kvm.vm_descs = (const u8 *)vm_desc;
	ks_kvm.vcpu_header = (const struct kvm_stats_header *)vcpu_hdr;
	ks_kvm.vcpu_descs = (const u8 *)vcpu_desc;
	ks_kvm.tp_userspace_exit = (struct tracepoint *)tp_user;
	ks_kvm.tp_mmio = (struct tracepoint *)tp_mmio;
	return 0;
}
