// SPDX-License-Identifier: GPL-2.0
/*
 * Native stats on kernels without binary stats (before 5.14), where the
 * module brings KVM_GET_STATS_FD whole.
 *
 * Such a kernel describes its own counters in one table, the one its
 * debugfs files are made from (debugfs_entries[] in kvm.ko): name, offset
 * in struct kvm or struct kvm_vcpu, kind, mode.  The module builds binary
 * stats descriptors from that table rather than from a list of its own,
 * so it serves exactly the counters the running kernel has, under the
 * names its debugfs uses, one u64 each, in table order.  A table that
 * does not fit the stats structs this module was built with is refused.
 *
 * Types: a counter is cumulative, unless debugfs makes it read-only
 * (mode 0444: a level such as "largepages", so instant), or it is one of
 * the few levels or peaks that debugfs cannot tell apart (below); names
 * that end in "_ns" are nanoseconds.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kvm_host.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <kvm_statsfd/compat.h>
#include <kvm_statsfd/fault.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/native.h>

const bool ks_native_brings_ioctl = true;

static struct ks_native ks_natives[KS_NR_KINDS];

/* Counters that are levels or peaks although debugfs lets one clear them. */
static const struct {
	const char *name;
	u32 type;
} ks_legacy_types[] = {
	{ "mmu_unsync", KVM_STATS_TYPE_INSTANT },
	{ "max_mmu_page_hash_collisions", KVM_STATS_TYPE_PEAK },
};

static void ks_legacy_desc(u8 *dst, const struct kvm_stats_debugfs_item *it,
			   u32 offset)
{
	struct ks_desc_head h = {
		.flags = KVM_STATS_TYPE_CUMULATIVE | KVM_STATS_UNIT_NONE |
			 KVM_STATS_BASE_POW10,
		.size = 1,
		.offset = offset,
	};
	size_t len = strlen(it->name);
	unsigned int i;

	if (it->mode == 0444)
		h.flags = KVM_STATS_TYPE_INSTANT;
	for (i = 0; i < ARRAY_SIZE(ks_legacy_types); i++)
		if (!strcmp(it->name, ks_legacy_types[i].name))
			h.flags = ks_legacy_types[i].type;
	if (len > 3 && !strcmp(it->name + len - 3, "_ns")) {
		h.flags |= KVM_STATS_UNIT_SECONDS;
		h.exponent = -9;
	}
	memcpy(dst, &h, sizeof(h));
	strscpy_pad(dst + sizeof(h), it->name, KVM_STATS_NAME_SIZE);
}

/*
 * Descriptors and word offsets of the items of @stat_kind, which must lie
 * in the stats struct at [@stat_off, @stat_off + @stat_size) of their
 * object.
 */
static int ks_legacy_build(enum ks_kind_id kind,
			   const struct kvm_stats_debugfs_item *items,
			   enum kvm_stat_kind stat_kind, size_t stat_off,
			   size_t stat_size)
{
	struct ks_native *n = &ks_natives[kind];
	const struct kvm_stats_debugfs_item *it;
	u32 *word_off;
	u32 nr = 0;
	u8 *descs;

	for (it = items; it->name; it++)
		nr += it->kind == stat_kind;
	if (!nr)
		return -ENOENT;
	descs = ks_fault_null(kcalloc(nr, KS_DESC_SIZE, GFP_KERNEL));
	word_off = ks_fault_null(kcalloc(nr, sizeof(*word_off), GFP_KERNEL));
	n->descs = descs;
	n->word_off = word_off;
	if (!descs || !word_off)
		return -ENOMEM;

	for (it = items; it->name; it++) {
		if (it->kind != stat_kind)
			continue;
		if (it->offset < stat_off ||
		    it->offset + sizeof(u64) > stat_off + stat_size ||
		    it->offset % sizeof(u64) ||
		    strlen(it->name) >= KVM_STATS_NAME_SIZE) {
			pr_err("kvm.ko's stat %s does not fit the stats struct this module was built with\n",
			       it->name);
			return -EINVAL;
		}
		ks_legacy_desc(descs + (size_t)n->num_desc * KS_DESC_SIZE, it,
			       n->num_desc * sizeof(u64));
		word_off[n->num_desc++] = it->offset;
	}
	n->words = n->num_desc;
	return 0;
}

const struct ks_native *ks_native_of(enum ks_kind_id kind)
{
	return &ks_natives[kind];
}

int ks_native_init(void)
{
	const struct kvm_stats_debugfs_item *items;
	int ret;

	items = (const void *)ks_kvm_symbol("debugfs_entries", false);
	if (!items)
		return -ENOENT;
	ret = ks_legacy_build(KS_KIND_VM, items, KVM_STAT_VM,
			      offsetof(struct kvm, stat),
			      sizeof_field(struct kvm, stat));
	if (!ret)
		ret = ks_legacy_build(KS_KIND_VCPU, items, KVM_STAT_VCPU,
				      offsetof(struct kvm_vcpu, stat),
				      sizeof_field(struct kvm_vcpu, stat));
	if (ret)
		ks_native_exit();
	return ret;
}

void ks_native_exit(void)
{
	int i;

	for (i = 0; i < KS_NR_KINDS; i++) {
		kfree(ks_natives[i].descs);
		kfree(ks_natives[i].word_off);
		ks_natives[i] = (struct ks_native){ 0 };
	}
}
