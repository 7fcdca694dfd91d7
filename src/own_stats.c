// SPDX-License-Identifier: GPL-2.0
/*
 * The module's own statistics: one table, from which both kinds' own
 * descriptors are built.  A vCPU file serves each stat straight from its
 * struct ks_vcpu_counters field; a VM file serves the same stat aggregated
 * over the VM's vCPUs at read time, as the table says, plus the VM-only
 * stats.  Documentation/stats-fd.rst describes every entry.
 */

#include <linux/kvm.h>
#include <linux/stddef.h>

#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/layout.h>

#define KS_FIELD(f)	offsetof(struct ks_vcpu_counters, f)

#define KS_NS		(KVM_STATS_UNIT_SECONDS | KVM_STATS_BASE_POW10)
#define KS_COUNT	(KVM_STATS_UNIT_NONE | KVM_STATS_BASE_POW10)

#define KS_CUMULATIVE(n, f) { .name = n, .offset = KS_FIELD(f), .size = 1, \
	.flags = KVM_STATS_TYPE_CUMULATIVE | KS_COUNT, .agg = KS_AGG_SUM }
#define KS_NS_TOTAL(n, f) { .name = n, .offset = KS_FIELD(f), .size = 1, \
	.exponent = -9, .flags = KVM_STATS_TYPE_CUMULATIVE | KS_NS, \
	.agg = KS_AGG_SUM }
#define KS_NS_HIST(n, f) { .name = n, .offset = KS_FIELD(f), \
	.size = KS_LAT_BUCKETS, .exponent = -9, \
	.flags = KVM_STATS_TYPE_LOG_HIST | KS_NS, .agg = KS_AGG_SUM }

static struct ks_stat_def ks_defs[] = {
	{
		/* Name and size depend on the host's vendor: see init. */
		.flags = KVM_STATS_TYPE_LINEAR_HIST | KS_COUNT,
		.offset = KS_FIELD(exit_reasons),
		.bucket_size = 1,
		.agg = KS_AGG_SUM,
	},
	KS_NS_HIST("exit_latency_hist", exit_latency_hist),
	{
		.name = "exit_latency_ns", .offset = KS_FIELD(exit_latency_ns),
		.size = 1, .exponent = -9, .agg = KS_AGG_SUM,
		.flags = KVM_STATS_TYPE_CUMULATIVE | KS_NS,
	},
	{
		.name = "exit_latency_max_ns",
		.offset = KS_FIELD(exit_latency_max_ns),
		.size = 1, .exponent = -9, .agg = KS_AGG_MAX,
		.flags = KVM_STATS_TYPE_PEAK | KS_NS,
	},
	KS_NS_HIST("exit_latency_io_hist", exit_latency_class_hist[KS_CLASS_IO]),
	KS_NS_HIST("exit_latency_npf_hist", exit_latency_class_hist[KS_CLASS_NPF]),
	KS_NS_HIST("exit_latency_msr_hist", exit_latency_class_hist[KS_CLASS_MSR]),
	KS_NS_HIST("exit_latency_hlt_hist", exit_latency_class_hist[KS_CLASS_HLT]),
	KS_NS_HIST("exit_latency_intr_hist", exit_latency_class_hist[KS_CLASS_INTR]),
	KS_NS_TOTAL("exit_latency_io_ns", exit_latency_class_ns[KS_CLASS_IO]),
	KS_NS_TOTAL("exit_latency_npf_ns", exit_latency_class_ns[KS_CLASS_NPF]),
	KS_NS_TOTAL("exit_latency_msr_ns", exit_latency_class_ns[KS_CLASS_MSR]),
	KS_NS_TOTAL("exit_latency_hlt_ns", exit_latency_class_ns[KS_CLASS_HLT]),
	KS_NS_TOTAL("exit_latency_intr_ns", exit_latency_class_ns[KS_CLASS_INTR]),
	{
		.name = "guest_ns", .offset = KS_FIELD(guest_ns),
		.size = 1, .exponent = -9, .agg = KS_AGG_SUM,
		.flags = KVM_STATS_TYPE_CUMULATIVE | KS_NS,
	},
	{
		.name = "userspace_exits", .offset = KS_FIELD(userspace_exits),
		.size = KS_USER_EXIT_BUCKETS, .bucket_size = 1,
		.flags = KVM_STATS_TYPE_LINEAR_HIST | KS_COUNT,
		.agg = KS_AGG_SUM,
	},
	KS_CUMULATIVE("io_in_exits", io_in_exits),
	KS_CUMULATIVE("io_out_exits", io_out_exits),
	KS_CUMULATIVE("msr_read_exits", msr_read_exits),
	KS_CUMULATIVE("msr_write_exits", msr_write_exits),
	KS_CUMULATIVE("mmio_reads", mmio_reads),
	KS_CUMULATIVE("mmio_writes", mmio_writes),
	{
		/* 0 or 1 for a vCPU; for a VM, how many are in guest mode. */
		.name = "in_guest", .offset = KS_FIELD(in_guest), .size = 1,
		.flags = KVM_STATS_TYPE_INSTANT | KS_COUNT, .agg = KS_AGG_SUM,
	},
	{
		.name = "vcpus", .offset = sizeof(struct ks_vcpu_counters),
		.size = 1, .flags = KVM_STATS_TYPE_INSTANT | KS_COUNT,
		.agg = KS_AGG_NR_VCPUS, .vm_only = true,
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
		switch (def->agg) {
		case KS_AGG_MAX:
			return ks_vm_max_u64(vm, index);
		case KS_AGG_NR_VCPUS:
			return ks_vm_nr_vcpus(vm);
		default:
			return ks_vm_sum_u64(vm, index);
		}
	}
	return 0;	/* padding between stats */
}
