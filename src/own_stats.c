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

#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/fault.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/layout.h>

/* Byte offset of a field in its group's block. */
#define KS_AT(type, f)	offsetof(struct type, f)

#define KS_NS		(KVM_STATS_UNIT_SECONDS | KVM_STATS_BASE_POW10)
#define KS_COUNT	(KVM_STATS_UNIT_NONE | KVM_STATS_BASE_POW10)

#define KS_CUMULATIVE(n, off, g) { .name = n, .offset = off, \
	.size = 1, .flags = KVM_STATS_TYPE_CUMULATIVE | KS_COUNT, \
	.agg = KS_AGG_SUM, .group = g }
#define KS_NS_TOTAL(n, off, g) { .name = n, .offset = off, .size = 1, \
	.exponent = -9, .flags = KVM_STATS_TYPE_CUMULATIVE | KS_NS, \
	.agg = KS_AGG_SUM, .group = g }
#define KS_NS_HIST(n, off, g) { .name = n, .offset = off, \
	.size = KS_LAT_BUCKETS, .exponent = -9, \
	.flags = KVM_STATS_TYPE_LOG_HIST | KS_NS, .agg = KS_AGG_SUM, \
	.group = g }
#define KS_CLASS_HIST(n, c) KS_NS_HIST(n, \
	KS_AT(ks_class_latency, cls[c].hist), KS_GRP_CLASS_LATENCY)
#define KS_CLASS_TOTAL(n, c) KS_NS_TOTAL(n, \
	KS_AT(ks_class_latency, cls[c].ns), KS_GRP_CLASS_LATENCY)
#define KS_DIR(n, d) KS_CUMULATIVE(n, KS_AT(ks_io_msr, exits[d]), \
	KS_GRP_IO_MSR)
/* A linear histogram of @sz counts at word @word of the exit_reasons block. */
#define KS_EXIT_EXTRA(n, word, sz) { .name = n, \
	.offset = (word) * sizeof(u64), .size = sz, .bucket_size = 1, \
	.flags = KVM_STATS_TYPE_LINEAR_HIST | KS_COUNT, .agg = KS_AGG_SUM, \
	.group = KS_GRP_EXIT_REASONS }

/*
 * The table is built at init (ks_defs_build()) from these parts and the
 * architecture's stats (arch.h), in enum ks_group order, each group's
 * stats in the order of its block: the served own block is then the
 * counters block itself.
 */
static const struct ks_stat_def ks_exit_def = {
	/* Name and size depend on the host: see init. */
	.flags = KVM_STATS_TYPE_LINEAR_HIST | KS_COUNT,
	.bucket_size = 1,
	.agg = KS_AGG_SUM,
	.group = KS_GRP_EXIT_REASONS,
};

static const struct ks_stat_def ks_latency_defs[] = {
	KS_NS_HIST("exit_latency_hist", KS_AT(ks_latency, hist), KS_GRP_LATENCY),
	KS_NS_TOTAL("exit_latency_ns", KS_AT(ks_latency, ns), KS_GRP_LATENCY),
	{
		.name = "exit_latency_max_ns",
		.offset = KS_AT(ks_latency, max_ns),
		.size = 1, .exponent = -9, .agg = KS_AGG_MAX,
		.group = KS_GRP_LATENCY,
		.flags = KVM_STATS_TYPE_PEAK | KS_NS,
	},
};

static const struct ks_stat_def ks_userspace_def = {
	.name = "userspace_exits", .offset = KS_AT(ks_userspace, exits),
	.group = KS_GRP_USERSPACE,
	.size = KS_USER_EXIT_BUCKETS, .bucket_size = 1,
	.flags = KVM_STATS_TYPE_LINEAR_HIST | KS_COUNT,
	.agg = KS_AGG_SUM,
};

static const struct ks_stat_def ks_tail_defs[] = {
	KS_CUMULATIVE("mmio_reads", KS_AT(ks_io_msr, mmio_reads), KS_GRP_IO_MSR),
	KS_CUMULATIVE("mmio_writes", KS_AT(ks_io_msr, mmio_writes), KS_GRP_IO_MSR),
	KS_NS_TOTAL("guest_ns", KS_AT(ks_guest_time, ns), KS_GRP_GUEST_TIME),
	{
		/* 0 or 1 for a vCPU; for a VM, how many are in guest mode. */
		.name = "in_guest", .offset = KS_AT(ks_guest_time, in_guest),
		.size = 1, .flags = KVM_STATS_TYPE_INSTANT | KS_COUNT,
		.agg = KS_AGG_SUM, .group = KS_GRP_GUEST_TIME,
	},
	{
		/* Computed when read: no counter behind it. */
		.name = "vcpus",
		.size = 1, .flags = KVM_STATS_TYPE_INSTANT | KS_COUNT,
		.agg = KS_AGG_NR_VCPUS, .vm_only = true,
		.group = KS_GRP_ALWAYS,
	},
};

/* The architecture's names (arch.h), by class and by direction. */
static const char *const ks_class_names[KS_NR_CLASSES][2] = KS_CLASS_STAT_NAMES;
static const char *const ks_dir_names[KS_NR_DIRS] = KS_DIR_STAT_NAMES;

#define KS_NR_DEFS	(1 + !!KS_EXIT_EXTRA_WORDS + ARRAY_SIZE(ks_latency_defs) + \
			 2 * KS_NR_CLASSES + 1 + KS_NR_DIRS + \
			 ARRAY_SIZE(ks_tail_defs))

static struct ks_stat_def ks_defs[KS_NR_DEFS];

static void ks_defs_build(void)
{
	unsigned int n = 0, i;

	ks_defs[n] = ks_exit_def;
	ks_defs[n].name = ks_exit_stat_name();
	ks_defs[n++].size = ks_exit_buckets();
	if (KS_EXIT_EXTRA_WORDS)
		ks_defs[n++] = (struct ks_stat_def)
			KS_EXIT_EXTRA(KS_EXIT_EXTRA_NAME, ks_exit_buckets(),
				      KS_EXIT_EXTRA_WORDS);
	for (i = 0; i < ARRAY_SIZE(ks_latency_defs); i++)
		ks_defs[n++] = ks_latency_defs[i];
	for (i = 0; i < KS_NR_CLASSES; i++) {
		ks_defs[n++] = (struct ks_stat_def)
			KS_CLASS_HIST(ks_class_names[i][0], i);
		ks_defs[n++] = (struct ks_stat_def)
			KS_CLASS_TOTAL(ks_class_names[i][1], i);
	}
	ks_defs[n++] = ks_userspace_def;
	for (i = 0; i < KS_NR_DIRS; i++)
		ks_defs[n++] = (struct ks_stat_def)KS_DIR(ks_dir_names[i], i);
	for (i = 0; i < ARRAY_SIZE(ks_tail_defs); i++)
		ks_defs[n++] = ks_tail_defs[i];
}

const struct ks_stat_def *ks_own_defs = ks_defs;
unsigned int ks_nr_own_defs = ARRAY_SIZE(ks_defs);

/*
 * The own block as served: the counters block (the enabled groups, packed
 * in group order), then for a VM file the VM-only stats.  For each served
 * word, how a VM file computes it from its vCPUs' same word.
 */
static u8 *ks_word_agg;
static u32 ks_vcpu_own_words, ks_vm_own_words;
/* The words that are not sums (peaks, VM-only), in order. */
static u32 ks_special[8], ks_nr_special;

u32 ks_grp_off[KS_NR_GROUPS] __ro_after_init;

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

/* Bytes of @g's block in a vCPU's counters. */
static u32 ks_group_size(enum ks_group g)
{
	switch (g) {
	case KS_GRP_EXIT_REASONS:
		return (ks_exit_buckets() + KS_EXIT_EXTRA_WORDS) * sizeof(u64);
	case KS_GRP_LATENCY:
		return sizeof(struct ks_latency);
	case KS_GRP_CLASS_LATENCY:
		return sizeof(struct ks_class_latency);
	case KS_GRP_USERSPACE:
		return sizeof(struct ks_userspace);
	case KS_GRP_IO_MSR:
		return sizeof(struct ks_io_msr);
	case KS_GRP_GUEST_TIME:
		return sizeof(struct ks_guest_time);
	default:
		return 0;
	}
}

u32 ks_own_counters_size(void)
{
	return ks_vcpu_own_words * sizeof(u64);
}

enum ks_aggregate ks_own_word_agg(u32 word)
{
	return ks_word_agg[word];
}

const u32 *ks_own_special_words(u32 *count)
{
	*count = ks_nr_special;
	return ks_special;
}

/*
 * Lay out the counters block (the enabled groups in order) and the served
 * block: the vCPU's stats at their place in the counters, then the VM-only
 * ones.
 */
int ks_own_stats_init(void)
{
	u32 off = 0, w, vm_words = 0;
	unsigned int g, i, j;

	ks_defs_build();

	for (g = 0; g < KS_NR_GROUPS; g++) {
		if (!ks_group_enabled(g))
			continue;
		ks_grp_off[g] = off;
		off += ks_group_size(g);
	}
	ks_vcpu_own_words = off / sizeof(u64);
	for (i = 0; i < ks_nr_own_defs; i++)
		if (ks_defs[i].vm_only && ks_group_enabled(ks_defs[i].group))
			vm_words += ks_defs[i].size;

	ks_word_agg = ks_fault_null(kcalloc(ks_vcpu_own_words + vm_words,
					    sizeof(*ks_word_agg), GFP_KERNEL));
	if (!ks_word_agg)
		return -ENOMEM;
	w = ks_vcpu_own_words;
	for (i = 0; i < ks_nr_own_defs; i++) {
		struct ks_stat_def *def = &ks_defs[i];

		if (!ks_group_enabled(def->group))
			continue;
		if (def->vm_only) {
			def->served = w * sizeof(u64);
			w += def->size;
		} else {
			def->served = ks_grp_off[def->group] + def->offset;
		}
		for (j = 0; j < def->size; j++)
			ks_word_agg[def->served / sizeof(u64) + j] = def->agg;
	}
	ks_vm_own_words = w;
	ks_nr_special = 0;
	for (w = 0; w < ks_vm_own_words; w++) {
		if (ks_word_agg[w] == KS_AGG_SUM)
			continue;
		if (ks_nr_special == ARRAY_SIZE(ks_special)) {
			ks_own_stats_exit();
			return -EINVAL;
		}
		ks_special[ks_nr_special++] = w;
	}
	return 0;
}

void ks_own_stats_exit(void)
{
	kfree(ks_word_agg);
	ks_word_agg = NULL;
}
