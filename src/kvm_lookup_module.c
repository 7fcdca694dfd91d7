// SPDX-License-Identifier: GPL-2.0
/*
 * Finding what the module needs inside kvm.ko, where KVM is a module
 * (include/kvm_statsfd/kvm_statsfd.h; kvm_lookup_builtin.c is the other
 * way).
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

#include <kvm_statsfd/kvm_statsfd.h>

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

struct tracepoint *ks_kvm_tracepoint(const char *name)
{
	char sym[64];

	snprintf(sym, sizeof(sym), "__tracepoint_%s", name);
	return (struct tracepoint *)ks_kvm_symbol(sym, false);
}

int ks_kvm_lookup_init(void)
{
	if (!ks_find_kvm_module()) {
		pr_err("kvm.ko is not loaded, or has no tracepoints\n");
		return -ENOENT;
	}
	return 0;
}
