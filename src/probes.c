// SPDX-License-Identifier: GPL-2.0
/*
 * Attaching the probes (src/probes_<arch>.c) to KVM's tracepoints, and
 * detaching them: the same on every architecture.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/tracepoint.h>

#include <kvm_statsfd/fault.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/layout.h>
#include <kvm_statsfd/probes.h>

/* The groups this load serves, as a mask of enum ks_group. */
static unsigned long ks_load_set(void)
{
	unsigned long set = 0;
	unsigned int g;

	for (g = 0; g < KS_NR_GROUPS; g++)
		if (ks_group_enabled(g))
			set |= BIT(g);
	return set;
}

struct ks_probe {
	struct tracepoint *tp;
	void *func;
	bool needed;
};

/*
 * Tracepoints found in KVM at init (kvm_symbols.c).  Attached last to
 * first and detached first to last: kvm_exit's probe marks a vCPU thread
 * in a KVM_RUN, which kvm_userspace_exit's clears, so the clearing one
 * must be there for every exit the marking one sees.
 */
static struct ks_probe ks_probes[4];

/* Detach the probes from @first on, kvm_exit's first. */
static void ks_probes_detach(int first)
{
	int i;

	for (i = first; i < ARRAY_SIZE(ks_probes); i++)
		if (ks_probes[i].needed)
			tracepoint_probe_unregister(ks_probes[i].tp,
						    ks_probes[i].func, NULL);
	/* No probe may still be running when the counters go. */
	tracepoint_synchronize_unregister();
}

int ks_probes_init(void)
{
	unsigned long set = ks_load_set();
	struct ks_probe_funcs f = { };
	int i, ret;

	ks_probes_arch_init(set, &f);
	ks_probes[0] = (struct ks_probe){ ks_kvm.tp_exit, f.exit, set != 0 };
	ks_probes[1] = (struct ks_probe){ ks_kvm.tp_entry, f.entry,
					  set & KS_TIME_GROUPS };
	ks_probes[2] = (struct ks_probe){
		ks_kvm.tp_userspace_exit, f.userspace_exit,
		set & (KS_TIME_GROUPS | BIT(KS_GRP_USERSPACE)) };
	ks_probes[3] = (struct ks_probe){ ks_kvm.tp_mmio, f.mmio,
					  set & BIT(KS_GRP_IO_MSR) };

	for (i = ARRAY_SIZE(ks_probes) - 1; i >= 0; i--) {
		if (!ks_probes[i].needed)
			continue;
		ret = ks_fault_int(tracepoint_probe_register(ks_probes[i].tp,
							     ks_probes[i].func,
							     NULL));
		if (ret) {
			pr_err("cannot attach to tracepoint %s: %d\n",
			       ks_probes[i].tp->name, ret);
			ks_probes_detach(i + 1);
			return ret;
		}
	}
	return 0;
}

void ks_probes_exit(void)
{
	ks_probes_detach(0);
}
