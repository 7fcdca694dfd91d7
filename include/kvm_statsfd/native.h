/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's own (native) binary stats, which the module's files begin
 * with in superset mode.
 */
#ifndef _KVM_STATSFD_NATIVE_H
#define _KVM_STATSFD_NATIVE_H

#include <linux/kvm.h>
#include <linux/types.h>

#include <kvm_statsfd/layout.h>

struct ks_native {
	u32 num_desc;
	u32 desc_size;		/* bytes per descriptor, name included */
	const u8 *descs;	/* kvm.ko's descriptor array */
	u32 data_size;		/* bytes of the kernel's stats struct */
};

/* Check and describe kvm.ko's native stats of one kind. */
int ks_native_get(enum ks_kind_id kind, struct ks_native *n);

#endif /* _KVM_STATSFD_NATIVE_H */
