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
#include <linux/kvm_host.h>
#include <linux/list.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <kvm_statsfd/exit_reasons.h>

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
	struct kvm *kvm;	/* vcpu->kvm: the cache hit checks both */
	/*
	 * The thread that last entered the guest with this vCPU, found again
	 * by the probes that get no vCPU.  Compared, never dereferenced; with
	 * its start_time, since a task_struct address is reused once freed.
	 */
	const struct task_struct *task;
	u64 task_start;
	u64 entry_ns;		/* last VM entry, 0 once exited */
	u64 exit_ns;		/* last VM exit, 0 once handled */
	u32 exit_class;		/* enum ks_exit_class of that exit */
	/* Entered the guest since the last return to userspace. */
	bool in_run;

	/* Slow path only. */
	struct ks_vm *vm;
	struct hlist_node task_node;	/* in ks_tasks, while task is set */

	/* Written by the vCPU's thread only; cache-line separated; last. */
	struct ks_vcpu_counters c ____cacheline_aligned;
};

struct ks_vm {
	struct hlist_node node;		/* in ks_vm_table, RCU */
	struct kvm *kvm;
	struct xarray vcpus;		/* vcpu_id -> struct ks_vcpu */
	struct rcu_work free_work;
};

DECLARE_PER_CPU(struct ks_vcpu *, ks_last_vcpu);

struct ks_vcpu *ks_vcpu_of_slow(struct kvm_vcpu *vcpu);
/*
 * The vCPU state @current has inside KVM_RUN, for probes that get no vCPU;
 * NULL when it has entered the guest with none since its last return to
 * userspace.  Never caches the result: see counters.c.
 */
struct ks_vcpu *ks_vcpu_of_current_slow(void);
/* Record that @current runs @kv (it changed threads). */
void ks_vcpu_bind_slow(struct ks_vcpu *kv);

/*
 * The exit path's lookup.  A vCPU thread mostly stays on one CPU, so the
 * last vCPU state used on this CPU almost always matches; otherwise the
 * slow path finds (or, the first time, creates) it.  The VM is compared
 * too, so a kvm_vcpu address reused by another VM never matches.  Called
 * with preemption disabled (tracepoint probes are).
 */
static __always_inline struct ks_vcpu *ks_vcpu_of(struct kvm_vcpu *vcpu)
{
	struct ks_vcpu *kv = __this_cpu_read(ks_last_vcpu);

	if (likely(kv && kv->vcpu == vcpu && kv->kvm == vcpu->kvm))
		return kv;
	return ks_vcpu_of_slow(vcpu);
}

/*
 * At each VM entry: @current is inside KVM_RUN with @kv.  The thread
 * running a vCPU rarely changes, so this is two compares and a store.
 */
static __always_inline void ks_vcpu_entered(struct ks_vcpu *kv)
{
	if (unlikely(kv->task != current ||
		     kv->task_start != current->start_time))
		ks_vcpu_bind_slow(kv);
	WRITE_ONCE(kv->in_run, true);
}

/*
 * For probes that get no vCPU (kvm_userspace_exit): @current's vCPU state
 * inside KVM_RUN.  It almost always exited last on this CPU.
 */
static __always_inline struct ks_vcpu *ks_vcpu_of_current(void)
{
	struct ks_vcpu *kv = __this_cpu_read(ks_last_vcpu);

	if (likely(kv && READ_ONCE(kv->in_run) &&
		   READ_ONCE(kv->task) == current &&
		   READ_ONCE(kv->task_start) == current->start_time))
		return kv;
	return ks_vcpu_of_current_slow();
}

/*
 * @now - @then for two ktime_get_mono_fast_ns() reads, or 0 when the
 * clock stepped back between them (it may, across CPUs or around an NTP
 * update): never a negative interval read as a huge one.
 */
static __always_inline u64 ks_elapsed(u64 now, u64 then)
{
	return likely(now >= then) ? now - then : 0;
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
