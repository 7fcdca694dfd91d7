// SPDX-License-Identifier: GPL-2.0
/*
 * Finding what the module needs inside KVM where KVM is built into the
 * kernel (CONFIG_KVM=y, as on Debian's arm64 kernels): there is no kvm.ko
 * whose symbol table kvm_lookup_module.c could read, and KVM's symbols
 * are vmlinux's.
 *
 * kallsyms_lookup_name() is not exported; its address is what a kprobe
 * registered on it resolves (the kprobe is removed at once, never hit).
 * Everything it finds is in vmlinux, which cannot go away, so keeping the
 * addresses holds nothing that could be freed under us.  The calls
 * through these addresses are indirect calls to the start of kernel
 * functions, which branch target identification (BTI) allows; kCFI would
 * reject them (their type hashes are unknown here), so a kernel built
 * with it is refused at load.
 *
 * Data symbols resolve only with CONFIG_KALLSYMS_ALL (Debian's arm64 6.12
 * has it, 6.1 does not); tracepoints are found without it, by walking the
 * kernel's tracepoints.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/errno.h>
#include <linux/kprobes.h>
#include <linux/printk.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include <kvm_statsfd/kvm_statsfd.h>

static unsigned long (*ks_kallsyms_lookup_name)(const char *name);

unsigned long ks_kvm_symbol(const char *name, bool text)
{
	unsigned long addr = ks_kallsyms_lookup_name(name);

	if (!addr)
		pr_err("the kernel has no %s symbol %s%s: this kernel is not supported\n",
		       text ? "function" : "data", name,
		       !text && !IS_ENABLED(CONFIG_KALLSYMS_ALL) ?
		       " (no CONFIG_KALLSYMS_ALL)" : "");
	return addr;
}

struct ks_tp_search {
	const char *name;
	struct tracepoint *tp;
};

static void ks_tp_match(struct tracepoint *tp, void *priv)
{
	struct ks_tp_search *s = priv;

	if (!strcmp(tp->name, s->name))
		s->tp = tp;
}

struct tracepoint *ks_kvm_tracepoint(const char *name)
{
	struct ks_tp_search s = { .name = name };

	for_each_kernel_tracepoint(ks_tp_match, &s);
	if (!s.tp)
		pr_err("the kernel has no tracepoint %s: this kernel is not supported\n",
		       name);
	return s.tp;
}

int ks_kvm_lookup_init(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	int ret;

	if (IS_ENABLED(CONFIG_CFI_CLANG)) {
		pr_err("kernels with kCFI (CONFIG_CFI_CLANG) are not supported with KVM built in\n");
		return -EOPNOTSUPP;
	}
	ret = register_kprobe(&kp);
	if (ret) {
		pr_err("cannot find kallsyms_lookup_name (kprobe: %d)\n", ret);
		return ret;
	}
	ks_kallsyms_lookup_name = (void *)kp.addr;
	unregister_kprobe(&kp);
	return 0;
}
