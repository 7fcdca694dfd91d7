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
#include <linux/bits.h>
#include <linux/jump_label.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/stddef.h>
#include <asm/processor.h>

#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/layout.h>

#define KS_FIELD(f)	offsetof(struct ks_vcpu_counters, f)

#define KS_NS		(KVM_STATS_UNIT_SECONDS | KVM_STATS_BASE_POW10)
#define KS_COUNT	(KVM_STATS_UNIT_NONE | KVM_STATS_BASE_POW10)

#define KS_CUMULATIVE(n, f, g) { .name = n, .offset = KS_FIELD(f), \
	.size = 1, .flags = KVM_STATS_TYPE_CUMULATIVE | KS_COUNT, \
	.agg = KS_AGG_SUM, .group = g }
#define KS_NS_TOTAL(n, f, g) { .name = n, .offset = KS_FIELD(f), .size = 1, \
	.exponent = -9, .flags = KVM_STATS_TYPE_CUMULATIVE | KS_NS, \
	.agg = KS_AGG_SUM, .group = g }
#define KS_NS_HIST(n, f, g) { .name = n, .offset = KS_FIELD(f), \
	.size = KS_LAT_BUCKETS, .exponent = -9, \
	.flags = KVM_STATS_TYPE_LOG_HIST | KS_NS, .agg = KS_AGG_SUM, \
	.group = g }

static struct ks_stat_def ks_defs[] = {
	{
		/* Name and size depend on the host's vendor: see init. */
		.flags = KVM_STATS_TYPE_LINEAR_HIST | KS_COUNT,
		.offset = KS_FIELD(exit_reasons),
		.bucket_size = 1,
		.agg = KS_AGG_SUM,
		.group = KS_GRP_EXIT_REASONS,
	},
	KS_NS_HIST("exit_latency_hist", exit_latency_hist, KS_GRP_LATENCY),
	{
		.name = "exit_latency_ns", .offset = KS_FIELD(exit_latency_ns),
		.size = 1, .exponent = -9, .agg = KS_AGG_SUM,
		.group = KS_GRP_LATENCY,
		.flags = KVM_STATS_TYPE_CUMULATIVE | KS_NS,
	},
	{
		.name = "exit_latency_max_ns",
		.offset = KS_FIELD(exit_latency_max_ns),
		.size = 1, .exponent = -9, .agg = KS_AGG_MAX,
		.group = KS_GRP_LATENCY,
		.flags = KVM_STATS_TYPE_PEAK | KS_NS,
	},
	KS_NS_HIST("exit_latency_io_hist", exit_latency_class_hist[KS_CLASS_IO],
		   KS_GRP_CLASS_LATENCY),
	KS_NS_HIST("exit_latency_npf_hist", exit_latency_class_hist[KS_CLASS_NPF],
		   KS_GRP_CLASS_LATENCY),
	KS_NS_HIST("exit_latency_msr_hist", exit_latency_class_hist[KS_CLASS_MSR],
		   KS_GRP_CLASS_LATENCY),
	KS_NS_HIST("exit_latency_hlt_hist", exit_latency_class_hist[KS_CLASS_HLT],
		   KS_GRP_CLASS_LATENCY),
	KS_NS_HIST("exit_latency_intr_hist", exit_latency_class_hist[KS_CLASS_INTR],
		   KS_GRP_CLASS_LATENCY),
	KS_NS_TOTAL("exit_latency_io_ns", exit_latency_class_ns[KS_CLASS_IO],
		    KS_GRP_CLASS_LATENCY),
	KS_NS_TOTAL("exit_latency_npf_ns", exit_latency_class_ns[KS_CLASS_NPF],
		    KS_GRP_CLASS_LATENCY),
	KS_NS_TOTAL("exit_latency_msr_ns", exit_latency_class_ns[KS_CLASS_MSR],
		    KS_GRP_CLASS_LATENCY),
	KS_NS_TOTAL("exit_latency_hlt_ns", exit_latency_class_ns[KS_CLASS_HLT],
		    KS_GRP_CLASS_LATENCY),
	KS_NS_TOTAL("exit_latency_intr_ns", exit_latency_class_ns[KS_CLASS_INTR],
		    KS_GRP_CLASS_LATENCY),
	{
		.name = "guest_ns", .offset = KS_FIELD(guest_ns),
		.size = 1, .exponent = -9, .agg = KS_AGG_SUM,
		.group = KS_GRP_GUEST_TIME,
		.flags = KVM_STATS_TYPE_CUMULATIVE | KS_NS,
	},
	{
		.name = "userspace_exits", .offset = KS_FIELD(userspace_exits),
		.group = KS_GRP_USERSPACE,
		.size = KS_USER_EXIT_BUCKETS, .bucket_size = 1,
		.flags = KVM_STATS_TYPE_LINEAR_HIST | KS_COUNT,
		.agg = KS_AGG_SUM,
	},
	KS_CUMULATIVE("io_in_exits", io_in_exits, KS_GRP_IO_MSR),
	KS_CUMULATIVE("io_out_exits", io_out_exits, KS_GRP_IO_MSR),
	KS_CUMULATIVE("msr_read_exits", msr_read_exits, KS_GRP_IO_MSR),
	KS_CUMULATIVE("msr_write_exits", msr_write_exits, KS_GRP_IO_MSR),
	KS_CUMULATIVE("mmio_reads", mmio_reads, KS_GRP_IO_MSR),
	KS_CUMULATIVE("mmio_writes", mmio_writes, KS_GRP_IO_MSR),
	{
		/* 0 or 1 for a vCPU; for a VM, how many are in guest mode. */
		.name = "in_guest", .offset = KS_FIELD(in_guest), .size = 1,
		.flags = KVM_STATS_TYPE_INSTANT | KS_COUNT, .agg = KS_AGG_SUM,
		.group = KS_GRP_GUEST_TIME,
	},
	{
		/* Computed when read: no counter behind it. */
		.name = "vcpus",
		.size = 1, .flags = KVM_STATS_TYPE_INSTANT | KS_COUNT,
		.agg = KS_AGG_NR_VCPUS, .vm_only = true,
		.group = KS_GRP_ALWAYS,
	},
};

const struct ks_stat_def *ks_own_defs = ks_defs;
unsigned int ks_nr_own_defs = ARRAY_SIZE(ks_defs);

/*
 * The own block as served: only the enabled groups' stats, packed in
 * table order.  For each served word, where it lives in struct
 * ks_vcpu_counters and how a VM file computes it.
 */
static u32 *ks_word_src;
static u8 *ks_word_agg;
static u32 ks_vcpu_own_words, ks_vm_own_words;

static const char *const ks_group_names[KS_NR_GROUPS] = {
	[KS_GRP_EXIT_REASONS] = "exit_reasons",
	[KS_GRP_LATENCY] = "latency",
	[KS_GRP_CLASS_LATENCY] = "class_latency",
	[KS_GRP_USERSPACE] = "userspace_exits",
	[KS_GRP_IO_MSR] = "io_msr",
	[KS_GRP_GUEST_TIME] = "guest_time",
};

/* On until ks_groups_init() turns off what the load did not ask for. */
struct static_key_true ks_group_on[KS_NR_GROUPS] = {
	[0 ... KS_NR_GROUPS - 1] = STATIC_KEY_TRUE_INIT,
};

/* Any group that reads the clock on the exit path. */
DEFINE_STATIC_KEY_TRUE(ks_clock_on);
static u32 ks_groups_mask = GENMASK(KS_NR_GROUPS - 1, 0);

bool ks_group_enabled(enum ks_group g)
{
	return g == KS_GRP_ALWAYS || (ks_groups_mask & BIT(g));
}

/*
 * @list: "all", "none", or a comma-separated list of group names.
 * Returns the mask, or a negative errno naming nothing.
 */
static int ks_parse_groups(const char *list, u32 *mask)
{
	char buf[128], *cur, *tok;
	unsigned int g;

	if (!strcmp(list, "all")) {
		*mask = GENMASK(KS_NR_GROUPS - 1, 0);
		return 0;
	}
	*mask = 0;
	if (!strcmp(list, "none"))
		return 0;
	if (strscpy(buf, list, sizeof(buf)) < 0)
		return -EINVAL;
	cur = buf;
	while ((tok = strsep(&cur, ","))) {
		for (g = 0; g < KS_NR_GROUPS; g++)
			if (!strcmp(tok, ks_group_names[g]))
				break;
		if (g == KS_NR_GROUPS) {
			pr_err("stats=%s: unknown group '%s' (groups: all, none, exit_reasons, latency, class_latency, userspace_exits, io_msr, guest_time)\n",
			       list, tok);
			return -EINVAL;
		}
		*mask |= BIT(g);
	}
	return 0;
}

int ks_groups_init(const char *list)
{
	unsigned int g;
	int ret;

	ret = ks_parse_groups(list, &ks_groups_mask);
	if (ret)
		return ret;
	for (g = 0; g < KS_NR_GROUPS; g++)
		if (!ks_group_enabled(g))
			static_branch_disable(&ks_group_on[g]);
	if (!ks_group_enabled(KS_GRP_LATENCY) &&
	    !ks_group_enabled(KS_GRP_CLASS_LATENCY) &&
	    !ks_group_enabled(KS_GRP_GUEST_TIME))
		static_branch_disable(&ks_clock_on);
	return 0;
}

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

u32 ks_own_counters_size(void)
{
	return sizeof(struct ks_vcpu_counters) + ks_exit_buckets() * sizeof(u64);
}

u32 ks_own_vcpu_size(void)
{
	return ks_vcpu_own_words * sizeof(u64);
}

u32 ks_own_vm_words(void)
{
	return ks_vm_own_words;
}

enum ks_aggregate ks_own_word_agg(u32 word)
{
	return ks_word_agg[word];
}

u32 ks_own_word_src(u32 word)
{
	return ks_word_src[word];
}

const u32 *ks_own_word_src_map(void)
{
	return ks_word_src;
}

/* Lay out the served block: the vCPU's stats, then the VM-only ones. */
int ks_own_stats_init(void)
{
	u32 words = ks_own_counters_size() / sizeof(u64) + 1, w = 0;
	unsigned int i, j, pass;

	ks_defs[0].name = ks_exit_stat_name();
	ks_defs[0].size = ks_exit_buckets();

	ks_word_src = kcalloc(words, sizeof(*ks_word_src), GFP_KERNEL);
	ks_word_agg = kcalloc(words, sizeof(*ks_word_agg), GFP_KERNEL);
	if (!ks_word_src || !ks_word_agg) {
		ks_own_stats_exit();
		return -ENOMEM;
	}
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < ks_nr_own_defs; i++) {
			struct ks_stat_def *def = &ks_defs[i];

			if (def->vm_only != pass || !ks_group_enabled(def->group))
				continue;
			def->served = w * sizeof(u64);
			for (j = 0; j < def->size; j++, w++) {
				ks_word_src[w] = def->offset / sizeof(u64) + j;
				ks_word_agg[w] = def->agg;
			}
		}
		if (!pass)
			ks_vcpu_own_words = w;
	}
	ks_vm_own_words = w;
	return 0;
}

void ks_own_stats_exit(void)
{
	kfree(ks_word_src);
	kfree(ks_word_agg);
	ks_word_src = NULL;
	ks_word_agg = NULL;
}
