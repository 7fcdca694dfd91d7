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
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/srcu.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <kvm_statsfd/arch.h>
#include <kvm_statsfd/exit_reasons.h>
#include <kvm_statsfd/layout.h>

/* Log2 histograms of nanoseconds: bucket 0 is [0, 1), bucket i [2^(i-1), 2^i). */
#define KS_LAT_BUCKETS		32

/* KVM_EXIT_* reasons 0..47 by number, then "other". */
#define KS_USER_EXIT_OTHER	48
#define KS_USER_EXIT_BUCKETS	(KS_USER_EXIT_OTHER + 1)

/*
 * The per-vCPU counters block, byte for byte what a vCPU file serves as its
 * own data: the enabled groups' blocks, in enum ks_group order, packed.  A
 * disabled group takes no memory.  Where each enabled group starts is
 * fixed at load (ks_grp_off[]); each vCPU state keeps a pointer to each.
 * Only u64s.
 */
struct ks_latency {
	u64 hist[KS_LAT_BUCKETS];
	u64 ns;
	u64 max_ns;
};

/* Per class, its histogram and total side by side: one base pointer. */
struct ks_class_latency {
	struct {
		u64 hist[KS_LAT_BUCKETS];
		u64 ns;
	} cls[KS_NR_CLASSES];
};

struct ks_userspace {
	u64 exits[KS_USER_EXIT_BUCKETS];
};

/* The io_msr group: exits by direction (arch.h), then MMIO. */
struct ks_io_msr {
	u64 exits[KS_NR_DIRS];
	u64 mmio_reads;
	u64 mmio_writes;
};

struct ks_guest_time {
	u64 ns;
	u64 in_guest;
};

/*
 * The exit_reasons group is u64[ks_exit_buckets() + KS_EXIT_EXTRA_WORDS]:
 * the histogram, then what the architecture serves after it (arch.h).
 */

/* Byte offset of each enabled group in the counters block (own_stats.c). */
extern u32 ks_grp_off[KS_NR_GROUPS] __ro_after_init;

struct ks_vm;

struct ks_vcpu {
	/*
	 * The exit path's cache line: how it finds and checks this state,
	 * its own bookkeeping (same writer, not served), and where the
	 * counting groups' counters are.
	 */
	struct kvm_vcpu *vcpu;
	/*
	 * vcpu->kvm: the cache hit checks both.  NULL while the counters
	 * move (counters.c), so that every probe of the vCPU misses.
	 */
	struct kvm *kvm;
	/*
	 * The thread inside KVM_RUN with this vCPU, for the probe that gets
	 * no vCPU.  Compared, never dereferenced, and only while in_run: a
	 * thread inside KVM_RUN is alive, so no other task has its address.
	 */
	const struct task_struct *task;
	u64 entry_ts;		/* last VM entry, or state creation (guest time) */
	u64 exit_ts;		/* clock at the last VM exit, 0 once handled */
	u32 exit_class;		/* enum ks_exit_class of that exit */
	/* Exited the guest since the last return to userspace. */
	bool in_run;
	struct ks_vcpu_arch arch;	/* the probes' own (arch.h) */
	u64 *reasons;			/* KS_GRP_EXIT_REASONS */
	struct ks_io_msr *io;		/* KS_GRP_IO_MSR */

	/*
	 * The probes' state of the exit just taken (arch.h), then the time
	 * groups' counters.
	 */
	struct ks_vcpu_exit x ____cacheline_aligned;
	struct ks_latency *lat;			/* KS_GRP_LATENCY */
	struct ks_class_latency *cls;		/* KS_GRP_CLASS_LATENCY */
	struct ks_guest_time *guest;		/* KS_GRP_GUEST_TIME */
	struct ks_userspace *user;		/* KS_GRP_USERSPACE */

	/* Slow path only. */
	u64 *c ____cacheline_aligned;		/* the counters block */
	struct ks_vm *vm;
	struct hlist_node task_node;	/* in ks_tasks, while task is set */
	/*
	 * Moving the counters into the VM's arena (counters.c): where they
	 * go while they move, then the block they left until it is freed.
	 */
	u64 *spare;
	struct rcu_head move_rcu;
	u32 slot;		/* its place in the arena, in creation order */
	bool mapped;		/* the counters are in the arena */
};

struct ks_vm {
	struct hlist_node node;		/* in ks_vm_table, RCU */
	struct kvm *kvm;
	struct xarray vcpus;		/* vcpu_id -> struct ks_vcpu */
	atomic_t nr_vcpus;		/* states in vcpus */
	struct ks_vcpu *first;		/* the first state made, then set */
	struct rcu_work free_work;
	/*
	 * The counters arena (counters.c), made at the first mapping.  Its
	 * locks are the module's, not the VM's: mappings are rare, and a
	 * VM that nothing maps should not pay for them.
	 */
	atomic_t nr_slots;		/* arena places handed out */
	/*
	 * One for the VM (dropped an RCU grace period after KVM destroys
	 * it) and one for each move whose old block is not freed yet: the
	 * last one frees the state, so that no free waits for a move.
	 */
	atomic_t refs;
	unsigned int nr_chunks;		/* chunks[] entries, NULL if unused */
	struct page **chunks;		/* by index, under ks_map_lock */
};

/*
 * The vCPU state each CPU used last; &ks_no_vcpu, which matches no vCPU
 * and no thread, when none (so that the exit path needs no NULL test).
 */
DECLARE_PER_CPU(struct ks_vcpu *, ks_last_vcpu);
extern struct ks_vcpu ks_no_vcpu;

struct ks_vcpu *ks_vcpu_of_slow(struct kvm_vcpu *vcpu);
/* Set up the probes' own part of a new vCPU state (probes_<arch>.c). */
void ks_vcpu_arch_init(struct ks_vcpu *kv, struct kvm_vcpu *vcpu);
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
 * too, so a kvm_vcpu address reused by another VM never matches, even on
 * a kernel that would free a dying VM's vCPUs before kvm_arch_destroy_vm()
 * (where hook.c clears the cache): the dying VM's struct kvm is still
 * there, so no new VM has its address.  Called with preemption disabled
 * (tracepoint probes are).
 *
 * The probes open-code ks_vcpu_of() (the cache hit, then the slow path and
 * its NULL test), so that a hit tests no NULL pointer.
 */
static __always_inline bool ks_vcpu_cached(const struct ks_vcpu *kv,
					   const struct kvm_vcpu *vcpu)
{
	return likely(kv->vcpu == vcpu && kv->kvm == vcpu->kvm);
}

static __always_inline struct ks_vcpu *ks_vcpu_of(struct kvm_vcpu *vcpu)
{
	struct ks_vcpu *kv = __this_cpu_read(ks_last_vcpu);

	return ks_vcpu_cached(kv, vcpu) ? kv : ks_vcpu_of_slow(vcpu);
}

/*
 * At each VM exit: @current is inside KVM_RUN with @kv.  The thread
 * running a vCPU rarely changes, so this is a compare and a store.  (At
 * the exit, not the entry: that needs no kvm_entry probe, and every entry
 * the module counts anything for is followed by an exit.)
 */
static __always_inline void ks_vcpu_in_run(struct ks_vcpu *kv)
{
	if (unlikely(kv->task != current))
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

	/* kv->kvm: not while its counters move (the slow path moves them). */
	if (likely(READ_ONCE(kv->in_run) && READ_ONCE(kv->task) == current &&
		   READ_ONCE(kv->kvm)))
		return kv;
	return ks_vcpu_of_current_slow();
}

/* Sleepable lookups for the stats fd; allocate on first use. */
struct ks_vm *ks_vm_get(struct kvm *kvm, gfp_t gfp);
struct ks_vcpu *ks_vcpu_get(struct kvm_vcpu *vcpu, gfp_t gfp);
/* The same when the caller already has the vCPU's VM state. */
struct ks_vcpu *ks_vm_vcpu_get(struct ks_vm *vm, struct kvm_vcpu *vcpu,
			       gfp_t gfp);

/*
 * Create the state of every vCPU the VM has now, so that each is counted
 * from its next exit even where the exit path cannot allocate
 * (PREEMPT_RT).  0 or -ENOMEM.  Sleepable context with GFP_KERNEL.
 */
int ks_vm_vcpus_get(struct ks_vm *vm, gfp_t gfp);
/* Some vCPU of the VM has no state yet (a cheap test for readers). */
static inline bool ks_vm_vcpus_missing(struct ks_vm *vm)
{
	return atomic_read(&vm->nr_vcpus) <
	       atomic_read(&vm->kvm->online_vcpus);
}

/*
 * The VM's only vCPU state, or NULL if it has none or several: then its
 * sums and peaks are that vCPU's own words.
 */
static inline struct ks_vcpu *ks_vm_sole_vcpu(struct ks_vm *vm)
{
	/* Ordered: the first state is set before the count says 1. */
	return atomic_read_acquire(&vm->nr_vcpus) == 1 ? READ_ONCE(vm->first) :
							 NULL;
}

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
/* Counter arena chunks of live VMs (pages, or compound pages). */
extern atomic_long_t ks_nr_arena_chunks;
/*
 * Where @kv's block lies, or will lie, in its VM's counters arena: the
 * byte offset in its chunk.
 */
unsigned long ks_vcpu_map_offset(const struct ks_vcpu *kv);
/* How many pages a chunk of the arena has (at most what one maps). */
unsigned int ks_map_chunk_pages(void);
/*
 * Before a mapping of @kv: move every vCPU's block of its VM into the
 * arena, allocating its chunks, and return the first page of the chunk
 * that holds @kv's (the VM's until it goes), or an ERR_PTR (-ENOMEM).
 * The move of a running vCPU completes at its next probe, of any other
 * within an RCU grace period; the mapping reads their values as they
 * were until then.  Sleeps.
 */
struct page *ks_vcpu_map_prepare(struct ks_vcpu *kv);
/*
 * Readers of the counters blocks (stats fd reads) hold this SRCU: a block
 * that moved is freed only after them.
 */
extern struct srcu_struct ks_read_srcu;
/* Bytes per object of the VM and vCPU state caches. */
unsigned int ks_vm_state_size(void);
unsigned int ks_vcpu_state_size(void);
/* Pages of the counters arenas of live VMs. */
unsigned long ks_counter_pages(void);
/* All of the live VM and vCPU states: slab objects and arena pages. */
unsigned long ks_state_bytes(void);

#endif /* _KVM_STATSFD_COUNTERS_H */
