// SPDX-License-Identifier: GPL-2.0
/*
 * The module's own statistics: one table, from which both kinds' own
 * descriptors are built.  A vCPU file serves each stat straight from its
 * struct ks_vcpu_counters field; a VM file serves the same stat aggregated
 * over the VM's vCPUs at read time, as the table says.
 */

#include <linux/kvm.h>
#include <linux/stddef.h>

#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/layout.h>

#define KS_FIELD(f) offsetof(struct ks_vcpu_counters, f)

static struct ks_stat_def ks_defs[] = {
	{
		/* Name and size depend on the host's vendor: see init. */
		.flags = KVM_STATS_TYPE_LINEAR_HIST | KVM_STATS_UNIT_NONE |
			 KVM_STATS_BASE_POW10,
		.offset = KS_FIELD(exit_reasons),
		.bucket_size = 1,
		.agg = KS_AGG_SUM,
	},
};

const struct ks_stat_def *ks_own_defs = ks_defs;
unsigned int ks_nr_own_defs = ARRAY_SIZE(ks_defs);

void ks_own_stats_init(void)
{
	ks_defs[0].name = ks_exit_stat_name();
	ks_defs[0].size = ks_exit_buckets();
}

u64 ks_vm_aggregate(struct ks_vm *vm, u64 index)
{
	unsigned int i;

	for (i = 0; i < ks_nr_own_defs; i++) {
		const struct ks_stat_def *def = &ks_defs[i];
		u64 first = def->offset / sizeof(u64);

		if (index < first || index >= first + def->size)
			continue;
		if (def->agg == KS_AGG_MAX)
			return ks_vm_max_u64(vm, index);
		return ks_vm_sum_u64(vm, index);
	}
	return 0;	/* padding between stats */
}
