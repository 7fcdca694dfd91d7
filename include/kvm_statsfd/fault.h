/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's own fault points, for tests on kernels without fault
 * injection (Debian's: no CONFIG_FAILSLAB).  Each call the module makes
 * that can fail for want of memory is written as ks_fault_null(call),
 * ks_fault_ptr(call) or ks_fault_int(call).  A build with KS_FAULT_POINTS=1
 * (tests/selftests/fault_injection_test.c, on the lanes of
 * tests/vm/manifest) can make the Nth of them that one task reaches fail
 * as the call would, without making it: load the module with
 * fault_nth=N for its load, or write N to
 * /sys/kernel/debug/kvm_statsfd/fail_nth (read back: 0 once that fault was
 * injected, else what is left of N), as /proc/thread-self/fail-nth does for
 * the kernel's allocations.  In other builds the wrappers are the bare
 * calls: no cost, no parameter, no file.
 */
#ifndef _KVM_STATSFD_FAULT_H
#define _KVM_STATSFD_FAULT_H

#include <linux/err.h>
#include <linux/errno.h>
#include <linux/types.h>

struct dentry;

#ifdef KS_FAULT_POINTS
bool ks_fault(void);
void ks_fault_load_begin(void);
void ks_fault_load_end(void);
void ks_fault_debugfs_init(struct dentry *dir);
#else
static inline bool ks_fault(void)
{
	return false;
}

static inline void ks_fault_load_begin(void)
{
}

static inline void ks_fault_load_end(void)
{
}

static inline void ks_fault_debugfs_init(struct dentry *dir)
{
}
#endif

/* An allocation that returns NULL on failure. */
#define ks_fault_null(call)	(ks_fault() ? NULL : (call))
/* A call that returns ERR_PTR(-errno) on failure. */
#define ks_fault_ptr(call)	(ks_fault() ? ERR_PTR(-ENOMEM) : (call))
/* A call that returns -errno on failure. */
#define ks_fault_int(call)	(ks_fault() ? -ENOMEM : (call))

#endif /* _KVM_STATSFD_FAULT_H */
