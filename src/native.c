// SPDX-License-Identifier: GPL-2.0
/*
 * Native stats on kernels with binary stats (5.14+): descriptors from
 * kvm.ko's own tables, values from struct kvm_vm_stat / kvm_vcpu_stat,
 * which KVM serves byte for byte as the data block.
 *
 * The descriptors are read from kvm.ko (not copied from a header), so the
 * prefix is exactly what the running kernel serves.  They are checked
 * against the stats structs this module was built with: a kvm.ko whose
 * stats do not fit the structs we copy from is refused, rather than
 * served wrong.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kvm_host.h>
#include <linux/slab.h>
#include <linux/string.h>

#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/native.h>

const bool ks_native_brings_ioctl;

static struct ks_native ks_natives[KS_NR_KINDS];

static const char *const ks_kind_names[KS_NR_KINDS] = {
	[KS_KIND_VM] = "VM", [KS_KIND_VCPU] = "vCPU",
};

static int ks_native_check(const char *what, const struct ks_native *n,
			   u32 name_size)
{
	u32 i;

	if (name_size != KVM_STATS_NAME_SIZE) {
		pr_err("%s stats: name size %u, expected %u\n", what,
		       name_size, KVM_STATS_NAME_SIZE);
		return -EINVAL;
	}
	for (i = 0; i < n->num_desc; i++) {
		const u8 *d = n->descs + (size_t)i * KS_DESC_SIZE;
		struct ks_desc_head h;

		memcpy(&h, d, sizeof(h));
		if (!h.size || (u64)h.offset + (u64)h.size * sizeof(u64) >
		    n->words * sizeof(u64)) {
			pr_err("%s stat %.*s lies outside the stats struct this module was built with\n",
			       what, (int)name_size, d + sizeof(h));
			return -EINVAL;
		}
		if (!memchr(d + sizeof(h), '\0', name_size)) {
			pr_err("%s stat %u has an unterminated name\n", what, i);
			return -EINVAL;
		}
	}
	return 0;
}

static int ks_native_build(enum ks_kind_id kind, const char *hdr_sym,
			   const char *desc_sym, size_t stat_off,
			   size_t stat_size)
{
	const struct kvm_stats_header *hdr;
	struct ks_native *n = &ks_natives[kind];

	hdr = (const void *)ks_kvm_symbol(hdr_sym, false);
	n->descs = (const void *)ks_kvm_symbol(desc_sym, false);
	if (!hdr || !n->descs)
		return -ENOENT;
	n->num_desc = hdr->num_desc;
	n->words = stat_size / sizeof(u64);

	/* kvm.ko's own layout must agree with the descriptor stride. */
	if (stat_size % sizeof(u64) ||
	    hdr->data_offset - hdr->desc_offset !=
	    (u64)n->num_desc * (sizeof(struct ks_desc_head) + hdr->name_size)) {
		pr_err("%s stats header does not match its descriptors\n",
		       ks_kind_names[kind]);
		return -EINVAL;
	}
	n->struct_off = stat_off;
	return ks_native_check(ks_kind_names[kind], n, hdr->name_size);
}

const struct ks_native *ks_native_of(enum ks_kind_id kind)
{
	return &ks_natives[kind];
}

int ks_native_init(void)
{
	int ret;

	ret = ks_native_build(KS_KIND_VM, "kvm_vm_stats_header",
			      "kvm_vm_stats_desc", offsetof(struct kvm, stat),
			      sizeof_field(struct kvm, stat));
	if (!ret)
		ret = ks_native_build(KS_KIND_VCPU, "kvm_vcpu_stats_header",
				      "kvm_vcpu_stats_desc",
				      offsetof(struct kvm_vcpu, stat),
				      sizeof_field(struct kvm_vcpu, stat));
	if (ret)
		ks_native_exit();
	return ret;
}

void ks_native_exit(void)
{
	int i;

	for (i = 0; i < KS_NR_KINDS; i++)
		ks_natives[i] = (struct ks_native){ 0 };
}
