// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's native binary stats: descriptors from kvm.ko, values from
 * struct kvm_vm_stat / kvm_vcpu_stat, which upstream serves byte for byte
 * as the data block.
 *
 * The descriptors are read from kvm.ko's own tables (not copied from a
 * header), so the prefix is exactly what the running kernel serves.  They
 * are checked against the stats structs this module was built with: a
 * kvm.ko whose stats do not fit the structs we copy from is refused,
 * rather than served wrong.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kvm_host.h>
#include <linux/string.h>

#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/native.h>

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
		const u8 *d = n->descs + (size_t)i * n->desc_size;
		struct ks_desc_head h;

		memcpy(&h, d, sizeof(h));
		if (!h.size || (u64)h.offset + (u64)h.size * sizeof(u64) >
		    n->data_size) {
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

int ks_native_get(enum ks_kind_id kind, struct ks_native *n)
{
	const struct kvm_stats_header *hdr;

	if (kind == KS_KIND_VM) {
		hdr = ks_kvm.vm_header;
		n->descs = ks_kvm.vm_descs;
		n->data_size = sizeof(((struct kvm *)NULL)->stat);
	} else {
		hdr = ks_kvm.vcpu_header;
		n->descs = ks_kvm.vcpu_descs;
		n->data_size = sizeof(((struct kvm_vcpu *)NULL)->stat);
	}
	n->num_desc = hdr->num_desc;
	n->desc_size = sizeof(struct ks_desc_head) + hdr->name_size;

	/* kvm.ko's own layout must agree with the descriptor stride. */
	if (hdr->data_offset - hdr->desc_offset !=
	    (u64)n->num_desc * n->desc_size) {
		pr_err("%s stats header does not match its descriptors\n",
		       kind == KS_KIND_VM ? "VM" : "vCPU");
		return -EINVAL;
	}
	return ks_native_check(kind == KS_KIND_VM ? "VM" : "vCPU", n,
			       hdr->name_size);
}
