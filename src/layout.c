// SPDX-License-Identifier: GPL-2.0
/*
 * Building each kind's immutable header and descriptor blocks, once.
 * Every fd of a kind shares them; only the id and the data differ per fd.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/kvm_host.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>

#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/fault.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/layout.h>
#include <kvm_statsfd/native.h>
#include <kvm_statsfd/uapi.h>

struct ks_kind ks_kinds[KS_NR_KINDS] = {
	[KS_KIND_VM] = { .anon_name = "kvm-vm-stats" },
	[KS_KIND_VCPU] = { .anon_name = "kvm-vcpu-stats" },
};

/*
 * A VM file's copy of a vCPU stat is its vCPUs' sum, under its own name
 * (KVM_STATSFD_VM_SUM_PREFIX): ks_kinds_check_names() says why.
 */
static int ks_put_own_desc(u8 *dst, const struct ks_stat_def *def,
			   u32 data_base, enum ks_kind_id id)
{
	const char *prefix = id == KS_KIND_VM && !def->vm_only ?
			     KVM_STATSFD_VM_SUM_PREFIX : "";
	struct ks_desc_head h = {
		.flags = def->flags,
		.exponent = def->exponent,
		.size = def->size,
		.offset = data_base + def->served,
		.bucket_size = def->bucket_size,
	};
	char *name = dst + sizeof(h);

	memcpy(dst, &h, sizeof(h));
	memset(name, 0, KVM_STATS_NAME_SIZE);
	if (snprintf(name, KVM_STATS_NAME_SIZE, "%s%s", prefix, def->name) >=
	    KVM_STATS_NAME_SIZE) {
		pr_err("stat name %s%s is too long\n", prefix, def->name);
		return -EINVAL;
	}
	return 0;
}

/* Does a file of kind @id serve the own stat @def? */
static bool ks_kind_has(enum ks_kind_id id, const struct ks_stat_def *def)
{
	return ks_group_enabled(def->group) &&
	       (id == KS_KIND_VM || !def->vm_only);
}

static int ks_kind_build(enum ks_kind_id id)
{
	struct ks_kind *k = &ks_kinds[id];
	static const struct ks_native none;
	const struct ks_native *n = ks_superset ? ks_native_of(id) : &none;
	u32 own_end = 0, nr_own = 0, i;
	int ret;
	u8 *d;

	for (i = 0; i < ks_nr_own_defs; i++) {
		if (!ks_kind_has(id, &ks_own_defs[i]))
			continue;
		own_end = max_t(u32, own_end, ks_own_defs[i].served +
				ks_own_defs[i].size * sizeof(u64));
		nr_own++;
	}

	k->native_size = n->words * sizeof(u64);
	k->native_word_off = n->word_off;
	k->native_struct_off = n->struct_off;
	k->own_size = own_end;
	k->nr_native = n->num_desc;
	k->descs_size = (n->num_desc + nr_own) * KS_DESC_SIZE;
	k->descs = ks_fault_null(kzalloc(k->descs_size, GFP_KERNEL));
	if (!k->descs)
		return -ENOMEM;

	/* Native descriptors first, byte for byte, then ours. */
	if (n->num_desc)
		memcpy(k->descs, n->descs, (size_t)n->num_desc * KS_DESC_SIZE);
	d = k->descs + (size_t)n->num_desc * KS_DESC_SIZE;
	for (i = 0; i < ks_nr_own_defs; i++) {
		if (!ks_kind_has(id, &ks_own_defs[i]))
			continue;
		ret = ks_put_own_desc(d, &ks_own_defs[i], k->native_size, id);
		if (ret)
			return ret;
		d += KS_DESC_SIZE;
	}

	k->header = (struct kvm_stats_header) {
		.flags = 0,
		.name_size = KVM_STATS_NAME_SIZE,
		.num_desc = n->num_desc + nr_own,
		.id_offset = sizeof(struct kvm_stats_header),
		.desc_offset = ALIGN(sizeof(struct kvm_stats_header) +
				     KVM_STATS_NAME_SIZE, 8),
	};
	k->header.data_offset = ALIGN(k->header.desc_offset + k->descs_size, 8);
	k->file_size = k->header.data_offset + k->native_size + k->own_size;
	return 0;
}

struct ks_range {
	u32 start, end;
	const u8 *desc;
};

static int ks_range_cmp(const void *a, const void *b)
{
	const struct ks_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Readers such as QEMU size the data block as the sum of the descriptors'
 * sizes and index it by their offsets: the ranges must tile the block
 * exactly, with no hole and no overlap, and the block must be that long.
 * Checked once per kind at load; a module that would serve anything else
 * refuses to load.
 */
static int ks_kind_check_tiling(enum ks_kind_id id)
{
	const struct ks_kind *k = &ks_kinds[id];
	u32 i, n = k->header.num_desc, end = 0;
	struct ks_range *r;
	int ret = 0;

	r = ks_fault_null(kcalloc(n, sizeof(*r), GFP_KERNEL));
	if (!r)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		struct ks_desc_head h;

		r[i].desc = k->descs + (size_t)i * KS_DESC_SIZE;
		memcpy(&h, r[i].desc, sizeof(h));
		r[i].start = h.offset;
		r[i].end = h.offset + h.size * sizeof(u64);
	}
	sort(r, n, sizeof(*r), ks_range_cmp, NULL);
	for (i = 0; i < n && !ret; i++) {
		if (r[i].start != end) {
			pr_err("%s stats: %.*s starts at byte %u of the data block, the stats before it end at %u\n",
			       k->anon_name, KVM_STATS_NAME_SIZE,
			       r[i].desc + sizeof(struct ks_desc_head),
			       r[i].start, end);
			ret = -EINVAL;
		}
		end = r[i].end;
	}
	if (!ret && end != k->native_size + k->own_size) {
		pr_err("%s stats: the descriptors cover %u bytes of a %u-byte data block\n",
		       k->anon_name, end, k->native_size + k->own_size);
		ret = -EINVAL;
	}
	kfree(r);
	return ret;
}

static const char *ks_desc_name(const struct ks_kind *k, u32 i)
{
	return (const char *)k->descs + (size_t)i * KS_DESC_SIZE +
	       sizeof(struct ks_desc_head);
}

/*
 * None of the module's names in both a VM file and a vCPU file, as in
 * KVM's own stats: libvirt keys QEMU's query-stats schema by name across
 * the VM and vCPU targets and, on a name in both, shows none of KVM's
 * stats.  Two of KVM's own sharing a name are the kernel's to answer for:
 * the module serves them as the kernel would.
 */
static int ks_kinds_check_names(void)
{
	const struct ks_kind *vm = &ks_kinds[KS_KIND_VM];
	const struct ks_kind *vcpu = &ks_kinds[KS_KIND_VCPU];
	u32 i, j;

	for (i = 0; i < vm->header.num_desc; i++) {
		const char *name = ks_desc_name(vm, i);

		for (j = 0; j < vcpu->header.num_desc; j++) {
			if ((i < vm->nr_native && j < vcpu->nr_native) ||
			    strncmp(name, ks_desc_name(vcpu, j),
				    KVM_STATS_NAME_SIZE))
				continue;
			pr_err("%.*s is both a VM stat and a vCPU stat\n",
			       KVM_STATS_NAME_SIZE, name);
			return -EINVAL;
		}
	}
	return 0;
}

int ks_layout_init(void)
{
	int ret;

	BUILD_BUG_ON(sizeof(struct ks_desc_head) != 16);
	BUILD_BUG_ON(sizeof(struct kvm_stats_header) != 24);

	ret = ks_own_stats_init();
	if (ret)
		return ret;
	ret = ks_superset ? ks_native_init() : 0;
	if (!ret)
		ret = ks_kind_build(KS_KIND_VM);
	if (!ret)
		ret = ks_kind_build(KS_KIND_VCPU);
	if (!ret)
		ret = ks_kind_check_tiling(KS_KIND_VM);
	if (!ret)
		ret = ks_kind_check_tiling(KS_KIND_VCPU);
	if (!ret)
		ret = ks_kinds_check_names();
	if (ret == -ENOMEM)
		pr_err("out of memory for the stats layout\n");
	else if (ret)
		pr_err("refusing to load: this kernel's stats cannot be served in KVM's binary format\n");
	if (ret)
		ks_layout_exit();
	return ret;
}

void ks_layout_exit(void)
{
	int i;

	for (i = 0; i < KS_NR_KINDS; i++) {
		kfree(ks_kinds[i].descs);
		ks_kinds[i].descs = NULL;
	}
	ks_native_exit();
	ks_own_stats_exit();
}
