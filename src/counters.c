// SPDX-License-Identifier: GPL-2.0
/*
 * Per-VM and per-vCPU state: allocation, lookup and lifetime.
 *
 * Lookup on the exit path is a per-CPU pointer compare (ks_vcpu_of() in
 * counters.h).  Its slow path, taken when a vCPU thread lands on another
 * CPU or runs for the first time, looks the VM up in a hash table and the
 * vCPU in the VM's xarray; the first time a vCPU is seen it allocates
 * that vCPU's state without sleeping, so exits are counted from the first
 * one.  (Both the VM and its vCPU states can also be created by the stats
 * fd before any exit.)
 *
 * kvm_userspace_exit names no vCPU.  A thread has at most one vCPU inside
 * KVM_RUN, so each VM entry records its thread in the vCPU state, which is
 * also hashed by thread; the userspace exit takes the state of its thread
 * that entered the guest since the last userspace exit.
 *
 * Both tables have a fixed number of buckets, RCU readers and one raw
 * writer lock: writers run in probes with interrupts disabled, where
 * rhashtable's bucket lock is not allowed (local_bh_disable() on 6.1) and,
 * on PREEMPT_RT, nothing may allocate.  Writes are rare: a VM's creation
 * and destruction, a vCPU changing threads.
 *
 * A VM's state lives until KVM destroys the VM (kvm_arch_destroy_vm(),
 * watched by hook.c): then it is unlinked, every CPU's cached pointer to
 * it is cleared, and it is freed after an RCU grace period.  Stats fds
 * hold a reference on the VM, so no reader can outlive the state.  Only
 * the lookups of a running vCPU publish a state in the per-CPU cache: a
 * running vCPU's VM is not being destroyed, so the destroy path cannot
 * have passed that CPU's slot already.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/hashtable.h>
#include <linux/kvm_host.h>
#include <linux/mm.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include <kvm_statsfd/clock.h>
#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/fault.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/layout.h>

struct ks_vcpu ks_no_vcpu;
DEFINE_PER_CPU(struct ks_vcpu *, ks_last_vcpu);

/*
 * VM states by struct kvm, vCPU states by the thread that last entered
 * the guest with them.  Chains stay about one entry long up to a thousand
 * VMs and four thousand vCPU threads; no walk of every VM or vCPU.
 */
static DEFINE_HASHTABLE(ks_vm_table, 10);
static DEFINE_HASHTABLE(ks_tasks, 12);
/* Raw: taken in tracepoint and ftrace context, also on PREEMPT_RT. */
static DEFINE_RAW_SPINLOCK(ks_table_lock);

static struct kmem_cache *ks_vm_cache, *ks_vcpu_cache;
static struct workqueue_struct *ks_wq;

atomic_long_t ks_nr_vms, ks_nr_vcpus;

static struct ks_vm *ks_vm_find_rcu(struct kvm *kvm)
{
	struct ks_vm *vm;

	hash_for_each_possible_rcu(ks_vm_table, vm, node, (unsigned long)kvm)
		if (vm->kvm == kvm)
			return vm;
	return NULL;
}

/*
 * Counters blocks.  A vCPU's block starts in a slab cache of its own
 * (ks_block_cache): most VMs are read with pread alone, and a VM of one
 * vCPU should not pay a page for it.  A read-only mapping of a vCPU's
 * block (stats_fd.c) needs pages that hold nothing but counters of that
 * VM (no kernel pointer, no other VM's counters), which it can hold by
 * reference.  So the first mapping of any vCPU of a VM moves every
 * vCPU's block of that VM into the VM's arena: chunks of one page, each
 * holding ks_arena_slots blocks (four with the default groups on SVM),
 * or, for a block larger than a page, a compound page holding one.  A
 * vCPU's place in the arena is fixed when its state is made (its slot,
 * in creation order), so that fdinfo can tell a reader where to look
 * before the mapping exists.  Each block is cache-line aligned (one
 * writer per line).  The VM holds a reference on each chunk and each
 * mapping its own: a chunk is freed by the last put_page(), when the VM
 * goes or a mapping is unmapped, whichever comes last.  Page memory needs
 * no usercopy region.
 *
 * Moving a block that its vCPU is writing: the probes find the vCPU's
 * state by a per-CPU cache hit that compares kv->kvm, then write through
 * the block pointers in the state.  The mover (ks_vcpu_map_prepare())
 * gives the state its arena block in kv->spare, copies the counters
 * there (what the mapping shows until the move is done), and clears
 * kv->kvm: from then on every probe of that vCPU misses and takes the
 * slow path, which completes the move itself under ks_move_lock (the
 * vCPU's thread is the only writer, and its probes never overlap).  For
 * a vCPU that does not run, an RCU callback completes it: after a grace
 * period no probe that passed a cache hit before kv->kvm was cleared is
 * still running (probes run with preemption disabled).  Stats fd reads
 * may still be copying from the old block: it is freed after an SRCU
 * grace period of theirs (ks_read_srcu).  Each move holds a reference on
 * the VM's state until then, so that freeing a VM never waits for one.
 */
static struct kmem_cache *ks_block_cache;
/* One mover at a time; a block moving, and who moves it. */
static DEFINE_MUTEX(ks_map_lock);
static DEFINE_RAW_SPINLOCK(ks_move_lock);
static unsigned int ks_arena_order __ro_after_init;
static unsigned int ks_arena_slots __ro_after_init;
static unsigned int ks_block_size __ro_after_init;

struct srcu_struct ks_read_srcu;
static bool ks_read_srcu_ready;

atomic_long_t ks_nr_arena_chunks;
static atomic_long_t ks_nr_blocks;	/* in ks_block_cache */

/* Point @kv at the counters block @c. */
static void ks_vcpu_set_block(struct ks_vcpu *kv, u64 *c)
{
	/* Disabled groups' pointers are never followed. */
	kv->reasons = (void *)c + ks_grp_off[KS_GRP_EXIT_REASONS];
	kv->io = (void *)c + ks_grp_off[KS_GRP_IO_MSR];
	kv->lat = (void *)c + ks_grp_off[KS_GRP_LATENCY];
	kv->cls = (void *)c + ks_grp_off[KS_GRP_CLASS_LATENCY];
	kv->guest = (void *)c + ks_grp_off[KS_GRP_GUEST_TIME];
	kv->user = (void *)c + ks_grp_off[KS_GRP_USERSPACE];
	/* Readers load it with no lock (stats_fd.c). */
	WRITE_ONCE(kv->c, c);
}

/* A vCPU state of @vm and its counters, zeroed (the counters may be empty). */
static struct ks_vcpu *ks_vcpu_alloc(struct ks_vm *vm, gfp_t gfp)
{
	struct ks_vcpu *kv = ks_fault_null(kmem_cache_zalloc(ks_vcpu_cache, gfp));
	u64 *c;

	if (!kv)
		return NULL;
	c = ks_fault_null(kmem_cache_zalloc(ks_block_cache, gfp));
	if (!c) {
		kmem_cache_free(ks_vcpu_cache, kv);
		return NULL;
	}
	atomic_long_inc(&ks_nr_blocks);
	kv->vm = vm;
	/* A lost race's slot stays a hole in the arena. */
	kv->slot = atomic_inc_return(&vm->nr_slots) - 1;
	ks_vcpu_set_block(kv, c);
	return kv;
}

static void ks_block_free(u64 *c)
{
	kmem_cache_free(ks_block_cache, c);
	atomic_long_dec(&ks_nr_blocks);
}

/* A block in the arena is the VM's, and stays while a mapping holds it. */
static void ks_vcpu_free(struct ks_vcpu *kv)
{
	if (!kv->mapped)
		ks_block_free(kv->c);
	kmem_cache_free(ks_vcpu_cache, kv);
}

static void ks_vm_free(struct ks_vm *vm)
{
	struct ks_vcpu *kv;
	unsigned long id;
	unsigned int i;

	xa_for_each(&vm->vcpus, id, kv) {
		ks_vcpu_free(kv);
		atomic_long_dec(&ks_nr_vcpus);
	}
	xa_destroy(&vm->vcpus);
	/* Mappings may hold any chunk longer. */
	for (i = 0; i < vm->nr_chunks; i++) {
		if (!vm->chunks[i])
			continue;
		put_page(vm->chunks[i]);
		atomic_long_dec(&ks_nr_arena_chunks);
	}
	kfree(vm->chunks);
	kmem_cache_free(ks_vm_cache, vm);
	atomic_long_dec(&ks_nr_vms);
}

unsigned long ks_vcpu_map_offset(const struct ks_vcpu *kv)
{
	return (kv->slot % ks_arena_slots) * ks_block_size;
}

unsigned int ks_map_chunk_pages(void)
{
	return 1U << ks_arena_order;
}

/* The chunk that holds (or will hold) @kv's block, NULL if none yet. */
static struct page **ks_vcpu_chunk_slot(struct ks_vm *vm, struct ks_vcpu *kv)
{
	unsigned int i = kv->slot / ks_arena_slots, n;
	struct page **chunks;

	lockdep_assert_held(&ks_map_lock);
	if (i >= vm->nr_chunks) {
		/* Grown by doubling: a VM's vCPUs come one by one. */
		n = max(i + 1, 2 * vm->nr_chunks);
		chunks = ks_fault_null(kcalloc(n, sizeof(*chunks),
					       GFP_KERNEL_ACCOUNT));
		if (!chunks)
			return NULL;
		if (vm->nr_chunks)
			memcpy(chunks, vm->chunks,
			       vm->nr_chunks * sizeof(*chunks));
		kfree(vm->chunks);
		vm->chunks = chunks;
		vm->nr_chunks = n;
	}
	return &vm->chunks[i];
}

/* @kv's block in @vm's arena, its chunk allocated if need be, or NULL. */
static u64 *ks_arena_block(struct ks_vm *vm, struct ks_vcpu *kv)
{
	struct page **chunk = ks_vcpu_chunk_slot(vm, kv);

	if (!chunk)
		return NULL;
	if (!*chunk) {
		*chunk = ks_fault_null(alloc_pages(GFP_KERNEL_ACCOUNT |
						   __GFP_ZERO |
						   (ks_arena_order ?
						    __GFP_COMP : 0),
						   ks_arena_order));
		if (!*chunk)
			return NULL;
		atomic_long_inc(&ks_nr_arena_chunks);
	}
	return page_address(*chunk) + ks_vcpu_map_offset(kv);
}

/* Every word of the block from @src to @dst, each whole. */
static void ks_block_copy(u64 *dst, const u64 *src)
{
	unsigned int i;

	for (i = 0; i < ks_block_size / sizeof(u64); i++)
		WRITE_ONCE(dst[i], READ_ONCE(src[i]));
}

/*
 * Complete @kv's move into kv->spare, under ks_move_lock, where no probe
 * writes the old block: on the vCPU's thread, or after a grace period.
 */
static void ks_vcpu_move(struct ks_vcpu *kv)
{
	u64 *old = kv->c;

	lockdep_assert_held(&ks_move_lock);
	ks_block_copy(kv->spare, old);
	ks_vcpu_set_block(kv, kv->spare);
	WRITE_ONCE(kv->spare, old);
	WRITE_ONCE(kv->mapped, true);
	/* The block pointers before the key that lets probes use them. */
	smp_store_release(&kv->kvm, kv->vm->kvm);
}

/* From a probe's slow path: @kv is moving (kv->kvm is NULL). */
static void ks_vcpu_settle(struct ks_vcpu *kv)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&ks_move_lock, flags);
	if (!kv->kvm)
		ks_vcpu_move(kv);
	raw_spin_unlock_irqrestore(&ks_move_lock, flags);
}

static void ks_vcpu_old_block_free(struct rcu_head *head)
{
	struct ks_vcpu *kv = container_of(head, struct ks_vcpu, move_rcu);
	struct ks_vm *vm = kv->vm;

	ks_block_free(kv->spare);
	WRITE_ONCE(kv->spare, NULL);
	/* The VM was destroyed meanwhile: its state goes with this move. */
	if (atomic_dec_and_test(&vm->refs))
		ks_vm_free(vm);
}

/*
 * A grace period after the mover cleared kv->kvm: every probe still
 * running then has seen it cleared, so the move is safe from here too.
 * Then the old block goes once no read can be copying from it.
 */
static void ks_vcpu_move_rcu(struct rcu_head *head)
{
	struct ks_vcpu *kv = container_of(head, struct ks_vcpu, move_rcu);

	ks_vcpu_settle(kv);
	call_srcu(&ks_read_srcu, &kv->move_rcu, ks_vcpu_old_block_free);
}

struct page *ks_vcpu_map_prepare(struct ks_vcpu *kv)
{
	struct ks_vm *vm = kv->vm;
	unsigned long id, flags;
	struct ks_vcpu *other;
	struct page *chunk;
	u64 *block;

	mutex_lock(&ks_map_lock);
	xa_for_each(&vm->vcpus, id, other) {
		/* Moved, or moving (its old block not freed yet). */
		if (READ_ONCE(other->mapped) || READ_ONCE(other->spare))
			continue;
		block = ks_arena_block(vm, other);
		/* Those marked already move; a retry does the rest. */
		if (!block)
			break;
		raw_spin_lock_irqsave(&ks_move_lock, flags);
		ks_block_copy(block, other->c);
		other->spare = block;
		WRITE_ONCE(other->kvm, NULL);
		raw_spin_unlock_irqrestore(&ks_move_lock, flags);
		atomic_inc(&vm->refs);
		call_rcu(&other->move_rcu, ks_vcpu_move_rcu);
	}
	/* @kv's chunk exists once @kv is moved or moving. */
	chunk = READ_ONCE(kv->mapped) || READ_ONCE(kv->spare) ?
		vm->chunks[kv->slot / ks_arena_slots] : NULL;
	mutex_unlock(&ks_map_lock);
	return chunk ?: ERR_PTR(-ENOMEM);
}

static void ks_vm_free_work(struct work_struct *work)
{
	struct ks_vm *vm = container_of(to_rcu_work(work), struct ks_vm,
					free_work);

	/* Else the last move's old block frees it (softirq: no sleeping). */
	if (atomic_dec_and_test(&vm->refs))
		ks_vm_free(vm);
}

/*
 * The VM state of @kvm, created if needed.  @gfp says whether we may
 * sleep: GFP_NOWAIT on the exit path, GFP_KERNEL for the stats fd.
 */
struct ks_vm *ks_vm_get(struct kvm *kvm, gfp_t gfp)
{
	struct ks_vm *vm, *old;
	unsigned long flags;

	rcu_read_lock();
	vm = ks_vm_find_rcu(kvm);
	rcu_read_unlock();
	if (vm)
		return vm;

	vm = ks_fault_null(kmem_cache_zalloc(ks_vm_cache, gfp | __GFP_NOWARN));
	if (!vm)
		return NULL;
	vm->kvm = kvm;
	xa_init(&vm->vcpus);
	atomic_set(&vm->refs, 1);
	INIT_RCU_WORK(&vm->free_work, ks_vm_free_work);

	raw_spin_lock_irqsave(&ks_table_lock, flags);
	old = ks_vm_find_rcu(kvm);
	if (!old)
		hash_add_rcu(ks_vm_table, &vm->node, (unsigned long)kvm);
	raw_spin_unlock_irqrestore(&ks_table_lock, flags);

	if (old) {
		kmem_cache_free(ks_vm_cache, vm);
		return old;
	}
	atomic_long_inc(&ks_nr_vms);
	return vm;
}

struct ks_vcpu *ks_vm_vcpu_get(struct ks_vm *vm, struct kvm_vcpu *vcpu,
			       gfp_t gfp)
{
	struct ks_vcpu *kv, *old;

	kv = xa_load(&vm->vcpus, vcpu->vcpu_id);
	if (kv)
		goto found;

	kv = ks_vcpu_alloc(vm, gfp | __GFP_NOWARN);
	if (!kv)
		return NULL;
	kv->vcpu = vcpu;
	kv->kvm = vcpu->kvm;
	ks_vcpu_arch_init(kv, vcpu);
	/* Guest time of an exit whose entry the probes did not see. */
	kv->entry_ts = ks_clock();
	old = xa_cmpxchg(&vm->vcpus, vcpu->vcpu_id, NULL, kv, gfp);
	if (old) {
		/* Lost a race, or no memory for the xarray node. */
		ks_vcpu_free(kv);
		if (xa_is_err(old))
			return NULL;
		kv = old;
		goto found;
	}
	cmpxchg(&vm->first, NULL, kv);
	/* After first: ks_vm_sole_vcpu() reads them in the other order. */
	atomic_inc_return_release(&vm->nr_vcpus);
	atomic_long_inc(&ks_nr_vcpus);
	return kv;

found:
	/*
	 * vCPU ids are unique in a VM, so this is the same vCPU (kv->kvm
	 * may be NULL: its counters are moving).
	 */
	return kv->vcpu == vcpu ? kv : NULL;
}

/* Lookup only, never allocates. */
static struct ks_vcpu *ks_vcpu_find(struct kvm_vcpu *vcpu)
{
	struct ks_vcpu *kv = NULL;
	struct ks_vm *vm;

	rcu_read_lock();
	vm = ks_vm_find_rcu(vcpu->kvm);
	if (vm)
		kv = xa_load(&vm->vcpus, vcpu->vcpu_id);
	rcu_read_unlock();
	return kv && kv->vcpu == vcpu ? kv : NULL;
}

struct ks_vcpu *ks_vcpu_get(struct kvm_vcpu *vcpu, gfp_t gfp)
{
	struct ks_vm *vm = ks_vm_get(vcpu->kvm, gfp);

	return vm ? ks_vm_vcpu_get(vm, vcpu, gfp) : NULL;
}

struct ks_vcpu *ks_vcpu_of_slow(struct kvm_vcpu *vcpu)
{
	struct ks_vcpu *kv;

	/*
	 * On PREEMPT_RT the slab and the xarray lock sleep, and probes run
	 * with preemption disabled: there, only a stats fd creates state.
	 */
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		kv = ks_vcpu_find(vcpu);
	else
		kv = ks_vcpu_get(vcpu, GFP_NOWAIT);

	if (unlikely(!kv))
		return NULL;
	if (unlikely(!READ_ONCE(kv->kvm)))
		ks_vcpu_settle(kv);
	/*
	 * Safe to cache: @vcpu is running, so its VM holds references and
	 * ks_vm_destroyed() cannot run for it before this probe returns.
	 */
	__this_cpu_write(ks_last_vcpu, kv);
	return kv;
}

static u32 ks_task_key(const struct task_struct *task)
{
	return hash_ptr(task, HASH_BITS(ks_tasks));
}

/*
 * From the VM entry probe, on @kv's thread, when that thread is not the
 * one @kv recorded: move @kv to @current's chain.  @kv->task is set only
 * while @kv is on a chain.  A reader walking the old chain may follow @kv
 * into the new one and miss the rest of the old: it then drops one
 * userspace exit of another thread, never counts it on a wrong vCPU.
 */
void ks_vcpu_bind_slow(struct ks_vcpu *kv)
{
	unsigned long flags;

	raw_spin_lock_irqsave(&ks_table_lock, flags);
	if (kv->task)
		hash_del_rcu(&kv->task_node);
	WRITE_ONCE(kv->task, current);
	hlist_add_head_rcu(&kv->task_node, &ks_tasks[ks_task_key(current)]);
	raw_spin_unlock_irqrestore(&ks_table_lock, flags);
}

/*
 * The per-CPU cache missed: another vCPU thread ran on this CPU between
 * this thread's last VM exit and now, or this KVM_RUN never entered the
 * guest (immediate_exit, a signal already pending, invalid input).  In the
 * latter case no tracepoint names the vCPU, and this thread's other vCPUs
 * are not it: count nothing.  The result is not cached: this thread's VM
 * may be destroyed by another before the next exit re-validates it.
 */
struct ks_vcpu *ks_vcpu_of_current_slow(void)
{
	struct ks_vcpu *kv, *found = NULL;

	rcu_read_lock();
	hlist_for_each_entry_rcu(kv, &ks_tasks[ks_task_key(current)],
				 task_node) {
		if (READ_ONCE(kv->task) == current && READ_ONCE(kv->in_run)) {
			found = kv;
			break;
		}
	}
	rcu_read_unlock();
	if (found && unlikely(!READ_ONCE(found->kvm)))
		ks_vcpu_settle(found);
	return found;
}

u64 ks_vm_nr_vcpus(struct ks_vm *vm)
{
	/* The VM's own count: the module may not have seen every vCPU yet. */
	return atomic_read(&vm->kvm->online_vcpus);
}

int ks_vm_vcpus_get(struct ks_vm *vm, gfp_t gfp)
{
	int i, n = atomic_read(&vm->kvm->online_vcpus);
	struct kvm_vcpu *vcpu;

	/* Online ones only (not kvm_for_each_vcpu(): 6.1 may see more). */
	for (i = 0; i < n; i++) {
		vcpu = kvm_get_vcpu(vm->kvm, i);
		if (vcpu && !ks_vm_vcpu_get(vm, vcpu, gfp))
			return -ENOMEM;
	}
	return 0;
}

/* @buf[i] += @src[i] for @n words, eight a round. */
static void ks_add_words(u64 *buf, const u64 *src, u32 n)
{
	for (; n >= 8; n -= 8, buf += 8, src += 8) {
		buf[0] += READ_ONCE(src[0]);
		buf[1] += READ_ONCE(src[1]);
		buf[2] += READ_ONCE(src[2]);
		buf[3] += READ_ONCE(src[3]);
		buf[4] += READ_ONCE(src[4]);
		buf[5] += READ_ONCE(src[5]);
		buf[6] += READ_ONCE(src[6]);
		buf[7] += READ_ONCE(src[7]);
	}
	for (; n; n--)
		*buf++ += READ_ONCE(*src++);
}

/*
 * Words [@first, @first + @n) of @vm's own block into @buf: the vCPUs'
 * words summed in one pass (each vCPU's are the VM's first ones, at the
 * same place), then the few that are not sums (a list made at load):
 * peaks (the largest) and the VM-only ones.  O(vCPUs * n), each word
 * loaded whole.  Sleeps.
 */
void ks_vm_own_fill(struct ks_vm *vm, u32 first, u32 n, u64 *buf)
{
	u32 vcpu_words = ks_own_counters_size() / sizeof(u64);
	u32 i, j, nr_special, nv = first < vcpu_words ?
					min(n, vcpu_words - first) : 0;
	const u32 *special;
	struct ks_vcpu *kv;
	unsigned long id;
	u32 seen = 0;

	memset(buf, 0, n * sizeof(*buf));
	/* No walk for the VM-only words alone: they are not sums. */
	if (nv) {
		xa_for_each(&vm->vcpus, id, kv) {
			ks_add_words(buf, READ_ONCE(kv->c) + first, nv);
			/* A VM may have thousands of vCPUs. */
			if (!(++seen % 64))
				cond_resched();
		}
	}
	special = ks_own_special_words(&nr_special);
	for (j = 0; j < nr_special; j++) {
		u32 w = special[j];

		if (w < first || w >= first + n)
			continue;
		i = w - first;
		switch (ks_own_word_agg(w)) {
		case KS_AGG_MAX:
			buf[i] = 0;
			xa_for_each(&vm->vcpus, id, kv)
				buf[i] = max(buf[i],
					     READ_ONCE(READ_ONCE(kv->c)[w]));
			break;
		case KS_AGG_NR_VCPUS:
			buf[i] = ks_vm_nr_vcpus(vm);
			break;
		default:
			break;
		}
	}
}

/* Drop every CPU's cached pointer into @vm. */
static void ks_vm_uncache(struct ks_vm *vm)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct ks_vcpu **slot = per_cpu_ptr(&ks_last_vcpu, cpu);
		struct ks_vcpu *kv = READ_ONCE(*slot);

		if (kv->vm == vm)
			cmpxchg(slot, kv, &ks_no_vcpu);
	}
}

/*
 * Called from ftrace at kvm_arch_destroy_vm(): no vCPU of @kvm runs and no
 * stats fd holds it.  Must not sleep.
 */
void ks_vm_destroyed(struct kvm *kvm)
{
	struct ks_vcpu *kv;
	struct ks_vm *vm;
	unsigned long flags, id;

	raw_spin_lock_irqsave(&ks_table_lock, flags);
	vm = ks_vm_find_rcu(kvm);
	if (vm) {
		hash_del_rcu(&vm->node);
		/* No vCPU of @kvm runs: none can bind concurrently. */
		xa_for_each(&vm->vcpus, id, kv)
			if (kv->task)
				hash_del_rcu(&kv->task_node);
	}
	raw_spin_unlock_irqrestore(&ks_table_lock, flags);
	if (!vm)
		return;
	ks_vm_uncache(vm);
	queue_rcu_work(ks_wq, &vm->free_work);
}

unsigned int ks_vm_state_size(void)
{
	return kmem_cache_size(ks_vm_cache);
}

/* The state and its block, as long as nothing maps the VM's counters. */
unsigned int ks_vcpu_state_size(void)
{
	return kmem_cache_size(ks_vcpu_cache) + ks_block_size;
}

unsigned long ks_counter_pages(void)
{
	return atomic_long_read(&ks_nr_arena_chunks) << ks_arena_order;
}

unsigned long ks_state_bytes(void)
{
	return atomic_long_read(&ks_nr_vms) * kmem_cache_size(ks_vm_cache) +
	       atomic_long_read(&ks_nr_vcpus) * kmem_cache_size(ks_vcpu_cache) +
	       atomic_long_read(&ks_nr_blocks) * kmem_cache_size(ks_block_cache) +
	       ks_counter_pages() * PAGE_SIZE;
}

int ks_counters_init(void)
{
	slab_flags_t flags = SLAB_HWCACHE_ALIGN | SLAB_ACCOUNT;
	int cpu;

	/* Before any probe: they expect a state here, never NULL. */
	for_each_possible_cpu(cpu)
		per_cpu(ks_last_vcpu, cpu) = &ks_no_vcpu;

#ifdef SLAB_NO_MERGE
	/* Own slab caches, so their object counts in slabinfo are ours. */
	flags |= SLAB_NO_MERGE;
#endif
	ks_vm_cache = ks_fault_null(kmem_cache_create("kvm_statsfd_vm",
						      sizeof(struct ks_vm), 0,
						      flags, NULL));
	ks_vcpu_cache = ks_fault_null(kmem_cache_create("kvm_statsfd_vcpu",
							sizeof(struct ks_vcpu),
							0, flags, NULL));
	/* A block with no group enabled still gets a line, never read. */
	ks_block_size = ALIGN(max_t(u32, ks_own_counters_size(), 1),
			      SMP_CACHE_BYTES);
	ks_arena_order = get_order(ks_block_size);
	ks_arena_slots = (PAGE_SIZE << ks_arena_order) / ks_block_size;
	ks_block_cache = ks_fault_null(kmem_cache_create("kvm_statsfd_counters",
							 ks_block_size,
							 SMP_CACHE_BYTES,
							 flags, NULL));
	ks_read_srcu_ready = !init_srcu_struct(&ks_read_srcu);
	/*
	 * Frees after RCU need no particular CPU.  7.x WARNs at a workqueue
	 * that says neither WQ_UNBOUND nor WQ_PERCPU (and the test guests
	 * panic on WARN); WQ_UNBOUND means the same on every kernel.
	 */
	ks_wq = alloc_workqueue("kvm_statsfd", WQ_UNBOUND, 0);
	if (!ks_vm_cache || !ks_vcpu_cache || !ks_block_cache ||
	    !ks_read_srcu_ready || !ks_wq) {
		ks_counters_exit();
		return -ENOMEM;
	}
	return 0;
}

/*
 * Module unload: nothing can reach the states any more (hooks and probes
 * are gone, no stats fd is open), so free what is left.
 */
void ks_counters_exit(void)
{
	struct hlist_node *tmp;
	struct ks_vm *vm;
	int cpu, bkt;

	/* Frees already queued by VM destruction run first. */
	rcu_barrier();
	if (ks_wq)
		destroy_workqueue(ks_wq);
	ks_wq = NULL;
	/* Then the old blocks of moves (queued by RCU callbacks). */
	if (ks_read_srcu_ready) {
		srcu_barrier(&ks_read_srcu);
		cleanup_srcu_struct(&ks_read_srcu);
	}
	ks_read_srcu_ready = false;

	hash_init(ks_tasks);
	hash_for_each_safe(ks_vm_table, bkt, tmp, vm, node) {
		hash_del(&vm->node);
		ks_vm_free(vm);
	}
	for_each_possible_cpu(cpu)
		per_cpu(ks_last_vcpu, cpu) = &ks_no_vcpu;

	kmem_cache_destroy(ks_block_cache);
	kmem_cache_destroy(ks_vcpu_cache);
	kmem_cache_destroy(ks_vm_cache);
	ks_block_cache = NULL;
	ks_vcpu_cache = NULL;
	ks_vm_cache = NULL;
}
