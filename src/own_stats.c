// SPDX-License-Identifier: GPL-2.0
/*
 * The module's own statistics: one table, from which both kinds' own
 * descriptors are built.  A vCPU file serves each stat straight from its
 * struct ks_vcpu_counters field; a VM file serves the same stat aggregated
 * over the VM's vCPUs at read time, as the table says, plus the VM-only
 * stats.  Documentation/stats-fd.rst describes every entry.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kvm.h>
#include <linux/slab.h>
#include <linux/stddef.h>
#include <asm/processor.h>

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
		/* Offset: just past the vCPU block, set at init. */
		.name = "vcpus",
		.size = 1, .flags = KVM_STATS_TYPE_INSTANT | KS_COUNT,
		.agg = KS_AGG_NR_VCPUS, .vm_only = true,
	},
};

const struct ks_stat_def *ks_own_defs = ks_defs;
unsigned int ks_nr_own_defs = ARRAY_SIZE(ks_defs);

/* How the VM file computes each u64 of its own block. */
static u8 *ks_vm_word_agg;
static u32 ks_vcpu_own_words;

bool ks_vendor_is_svm(void)
{
	return boot_cpu_data.x86_vendor == X86_VENDOR_AMD ||
	       boot_cpu_data.x86_vendor == X86_VENDOR_HYGON;
}

unsigned int ks_exit_buckets(void)
{
	return ks_vendor_is_svm() ? KS_SVM_NR_BUCKETS : KS_VMX_NR_BUCKETS;
}

const char *ks_exit_stat_name(void)
{
	return ks_vendor_is_svm() ? KVM_STATSFD_EXIT_STAT_SVM :
				  KVM_STATSFD_EXIT_STAT_VMX;
}

u32 ks_own_vcpu_size(void)
{
	return ks_vcpu_own_words * sizeof(u64);
}

u32 ks_own_vm_words(void)
{
	return ks_vcpu_own_words + 1;	/* "vcpus" */
}

enum ks_aggregate ks_own_word_agg(u32 word)
{
	return ks_vm_word_agg[word];
}

int ks_own_stats_init(void)
{
	unsigned int i, j;

	ks_defs[0].name = ks_exit_stat_name();
	ks_defs[0].size = ks_exit_buckets();
	ks_vcpu_own_words = sizeof(struct ks_vcpu_counters) / sizeof(u64) +
			    ks_exit_buckets();
	for (i = 0; i < ks_nr_own_defs; i++)
		if (ks_defs[i].vm_only)
			ks_defs[i].offset = ks_own_vcpu_size();

	ks_vm_word_agg = kcalloc(ks_own_vm_words(), 1, GFP_KERNEL);
	if (!ks_vm_word_agg)
		return -ENOMEM;
	for (i = 0; i < ks_nr_own_defs; i++) {
		const struct ks_stat_def *def = &ks_defs[i];
		u32 first = def->offset / sizeof(u64);

		for (j = 0; j < def->size; j++)
			ks_vm_word_agg[first + j] = def->agg;
	}
	return 0;
}

void ks_own_stats_exit(void)
{
	kfree(ks_vm_word_agg);
	ks_vm_word_agg = NULL;
}
