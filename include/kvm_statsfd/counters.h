/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The module's own per-VM and per-vCPU state.
 *
 * Each vCPU's counters are written only by the thread running that vCPU
 * (from KVM's tracepoints) and live in their own cache lines: no locks and
 * no atomics on the write side.  Readers copy them as they are, with no
 * snapshot, like upstream KVM's own stats.  Per-VM values are computed at
 * read time from the vCPUs', so nothing is shared between writers.
 */
#ifndef _KVM_STATSFD_COUNTERS_H
#define _KVM_STATSFD_COUNTERS_H

#include <linux/cache.h>
#include <linux/list.h>
#include <linux/percpu.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <kvm_statsfd/exit_reasons.h>

struct kvm;
struct kvm_vcpu;

/*
 * The per-vCPU block of the stats file's data, byte for byte: the stats
 * fd copies it to userspace as it is.  Only u64 fields.
 */
struct ks_vcpu_counters {
	u64 exit_reasons[KS_EXIT_BUCKETS_MAX];
};

struct ks_vm;

struct ks_vcpu {
	/* Read-mostly: how the exit path finds and checks this state. */
	struct kvm_vcpu *vcpu;
	struct ks_vm *vm;
	u32 vcpu_id;

	/* Written by the vCPU's thread only; cache-line separated. */
	struct ks_vcpu_counters c ____cacheline_aligned;
};

struct ks_vm {
	struct list_head node;		/* in ks_vms, RCU */
	struct kvm *kvm;
	struct xarray vcpus;		/* vcpu_id -> struct ks_vcpu */
	struct rcu_work free_work;
};

DECLARE_PER_CPU(struct ks_vcpu *, ks_last_vcpu);

struct ks_vcpu *ks_vcpu_of_slow(struct kvm_vcpu *vcpu);

/*
 * The exit path's lookup.  A vCPU thread mostly stays on one CPU, so the
 * last vCPU state used on this CPU almost always matches; otherwise the
 * slow path finds (or, the first time, creates) it.  Called with
 * preemption disabled (tracepoint probes are).
 */
static __always_inline struct ks_vcpu *ks_vcpu_of(struct kvm_vcpu *vcpu)
{
	struct ks_vcpu *kv = __this_cpu_read(ks_last_vcpu);

	if (likely(kv && kv->vcpu == vcpu))
		return kv;
	return ks_vcpu_of_slow(vcpu);
}

/* Single-writer increment: readers may load it concurrently. */
static __always_inline void ks_inc(u64 *counter)
{
	WRITE_ONCE(*counter, *counter + 1);
}

/* Sleepable lookups for the stats fd; allocate on first use. */
struct ks_vm *ks_vm_get(struct kvm *kvm, gfp_t gfp);
struct ks_vcpu *ks_vcpu_get(struct kvm_vcpu *vcpu, gfp_t gfp);

/* Sum, or maximum, of one u64 of every vCPU's counters. */
u64 ks_vm_sum_u64(struct ks_vm *vm, unsigned int index);
u64 ks_vm_max_u64(struct ks_vm *vm, unsigned int index);

/* KVM is destroying @kvm: forget it and free its state after RCU. */
void ks_vm_destroyed(struct kvm *kvm);

int ks_counters_init(void);
void ks_counters_exit(void);

/* Live object counts, for leak checks (sysfs). */
extern atomic_long_t ks_nr_vms, ks_nr_vcpus, ks_nr_files;

#endif /* _KVM_STATSFD_COUNTERS_H */
