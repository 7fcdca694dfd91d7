/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's own (native) stats, which the module's files begin with in
 * superset mode.  Two implementations, one per kind of kernel, chosen by
 * Kbuild: src/native.c where KVM has binary stats (5.14+) and serves its
 * own descriptors, src/native_legacy.c before, where the module builds
 * descriptors from KVM's debugfs table and brings the ioctl itself.
 */
#ifndef _KVM_STATSFD_NATIVE_H
#define _KVM_STATSFD_NATIVE_H

#include <linux/types.h>

#include <kvm_statsfd/layout.h>

struct ks_native {
	u32 num_desc;
	const u8 *descs;	/* num_desc descriptors of KS_DESC_SIZE bytes */
	u32 words;		/* u64 words of the native data block */
	/*
	 * Byte offset of each word in struct kvm (VM) or kvm_vcpu (vCPU); or
	 * NULL where the block is KVM's stats struct itself, at struct_off,
	 * and is copied the way KVM copies it.
	 */
	const u32 *word_off;
	u32 struct_off;
};

/* The native stats of @kind, valid between init and exit. */
const struct ks_native *ks_native_of(enum ks_kind_id kind);

/*
 * True where the kernel has no KVM_GET_STATS_FD of its own: the module
 * then also answers KVM_CHECK_EXTENSION(KVM_CAP_BINARY_STATS_FD) (hook.c).
 */
extern const bool ks_native_brings_ioctl;

int ks_native_init(void);
void ks_native_exit(void);

#endif /* _KVM_STATSFD_NATIVE_H */
