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

/* Log2 histograms of nanoseconds: bucket 0 is [0, 1), bucket i [2^(i-1), 2^i). */
#define KS_LAT_BUCKETS		32

/* Exit classes with a latency histogram of their own. */
enum ks_exit_class {
	KS_CLASS_IO,
	KS_CLASS_NPF,
	KS_CLASS_MSR,
	KS_CLASS_HLT,
	KS_CLASS_INTR,
	KS_NR_CLASSES,
	KS_CLASS_OTHER = KS_NR_CLASSES,
};

/* KVM_EXIT_* reasons 0..47 by number, then "other". */
#define KS_USER_EXIT_OTHER	48
#define KS_USER_EXIT_BUCKETS	(KS_USER_EXIT_OTHER + 1)

/*
 * The per-vCPU block of the stats file's data, byte for byte: the stats
 * fd serves it as it is, so the descriptors' ranges must tile it (checked
 * at load).  Only u64 fields.  The exit-reason histogram comes last and
 * has as many buckets as this host's vendor needs (ks_exit_buckets()): an
 * Intel host carries 81, not SVM's 181.
 */
struct ks_vcpu_counters {
	u64 exit_latency_hist[KS_LAT_BUCKETS];
	u64 exit_latency_ns;
	u64 exit_latency_max_ns;
	u64 exit_latency_class_hist[KS_NR_CLASSES][KS_LAT_BUCKETS];
	u64 exit_latency_class_ns[KS_NR_CLASSES];
	u64 guest_ns;
	u64 userspace_exits[KS_USER_EXIT_BUCKETS];
	u64 io_in_exits;
	u64 io_out_exits;
	u64 msr_read_exits;
	u64 msr_write_exits;
	u64 mmio_reads;
	u64 mmio_writes;
	u64 in_guest;
	u64 exit_reasons[];
};

struct ks_vm;

struct ks_vcpu {
	/*
	 * How the exit path finds and checks this state, and its own
	 * bookkeeping (same writer, not served): one cache line, the one
	 * the lookup touches anyway.
	 */
	struct kvm_vcpu *vcpu;
	struct ks_vm *vm;
	struct pid *pid;	/* thread that last ran it; compared, never used */
	u64 entry_ns;		/* last VM entry, 0 once exited */
	u64 exit_ns;		/* last VM exit, 0 once handled */
	u32 exit_class;		/* enum ks_exit_class of that exit */

	/* Written by the vCPU's thread only; cache-line separated; last. */
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
 * The vCPU state whose thread is @pid, for probes that get no vCPU.  Uses
 * ks_vcpu.pid, never kvm_vcpu: KVM frees a dying VM's vCPUs without an
 * RCU grace period after we unlink its state.
 */
struct ks_vcpu *ks_vcpu_of_pid_slow(struct pid *pid);

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
/* The same when the caller already has the vCPU's VM state. */
struct ks_vcpu *ks_vm_vcpu_get(struct ks_vm *vm, struct kvm_vcpu *vcpu,
			       gfp_t gfp);

/* Words [@first, @first + @n) of the VM file's own block. */
void ks_vm_own_fill(struct ks_vm *vm, u32 first, u32 n, u64 *buf);
/* Number of vCPUs the VM has. */
u64 ks_vm_nr_vcpus(struct ks_vm *vm);

/* KVM is destroying @kvm: forget it and free its state after RCU. */
void ks_vm_destroyed(struct kvm *kvm);

int ks_counters_init(void);
void ks_counters_exit(void);

/* Live object counts, for leak checks (sysfs). */
extern atomic_long_t ks_nr_vms, ks_nr_vcpus;
/* Bytes per object of the VM and vCPU state caches. */
unsigned int ks_vm_state_size(void);
unsigned int ks_vcpu_state_size(void);

#endif /* _KVM_STATSFD_COUNTERS_H */
