// SPDX-License-Identifier: GPL-2.0
/*
 * Per-VM and per-vCPU state: allocation, lookup and lifetime.
 *
 * Lookup on the exit path is a per-CPU pointer compare (ks_vcpu_of() in
 * counters.h).  Its slow path, taken when a vCPU thread lands on another
 * CPU or runs for the first time, walks an RCU list of VMs and an xarray
 * of the VM's vCPUs; the first time a vCPU is seen it allocates that
 * vCPU's state without sleeping, so exits are counted from the first one.
 * (Both the VM and its vCPU states can also be created by the stats fd
 * before any exit.)
 *
 * A VM's state lives until KVM destroys the VM (kvm_arch_destroy_vm(),
 * watched by hook.c): then it is unlinked, every CPU's cached pointer to
 * it is cleared, and it is freed after an RCU grace period.  Stats fds
 * hold a reference on the VM, so no reader can outlive the state.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kvm_host.h>
#include <linux/rculist.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/layout.h>

DEFINE_PER_CPU(struct ks_vcpu *, ks_last_vcpu);

static LIST_HEAD(ks_vms);
/* Raw: taken in tracepoint and ftrace context, also on PREEMPT_RT. */
static DEFINE_RAW_SPINLOCK(ks_vms_lock);

static struct kmem_cache *ks_vm_cache, *ks_vcpu_cache;
static struct workqueue_struct *ks_wq;

atomic_long_t ks_nr_vms, ks_nr_vcpus;

static struct ks_vm *ks_vm_find_rcu(struct kvm *kvm)
{
	struct ks_vm *vm;

	list_for_each_entry_rcu(vm, &ks_vms, node)
		if (vm->kvm == kvm)
			return vm;
	return NULL;
}

static void ks_vm_free(struct ks_vm *vm)
{
	struct ks_vcpu *kv;
	unsigned long id;

	xa_for_each(&vm->vcpus, id, kv) {
		kmem_cache_free(ks_vcpu_cache, kv);
		atomic_long_dec(&ks_nr_vcpus);
	}
	xa_destroy(&vm->vcpus);
	kmem_cache_free(ks_vm_cache, vm);
	atomic_long_dec(&ks_nr_vms);
}

static void ks_vm_free_work(struct work_struct *work)
{
	ks_vm_free(container_of(to_rcu_work(work), struct ks_vm, free_work));
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

	vm = kmem_cache_zalloc(ks_vm_cache, gfp | __GFP_NOWARN);
	if (!vm)
		return NULL;
	vm->kvm = kvm;
	xa_init(&vm->vcpus);
	INIT_RCU_WORK(&vm->free_work, ks_vm_free_work);

	raw_spin_lock_irqsave(&ks_vms_lock, flags);
	old = ks_vm_find_rcu(kvm);
	if (!old)
		list_add_rcu(&vm->node, &ks_vms);
	raw_spin_unlock_irqrestore(&ks_vms_lock, flags);

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

	kv = kmem_cache_zalloc(ks_vcpu_cache, gfp | __GFP_NOWARN);
	if (!kv)
		return NULL;
	kv->vm = vm;
	kv->vcpu = vcpu;
	old = xa_cmpxchg(&vm->vcpus, vcpu->vcpu_id, NULL, kv, gfp);
	if (old) {
		/* Lost a race, or no memory for the xarray node. */
		kmem_cache_free(ks_vcpu_cache, kv);
		if (xa_is_err(old))
			return NULL;
		kv = old;
		goto found;
	}
	atomic_long_inc(&ks_nr_vcpus);
	return kv;

found:
	/* vCPU ids are unique in a VM, so this is the same vCPU. */
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

	if (likely(kv))
		__this_cpu_write(ks_last_vcpu, kv);
	return kv;
}

struct ks_vcpu *ks_vcpu_of_pid_slow(struct pid *pid)
{
	struct ks_vcpu *kv, *found = NULL;
	struct ks_vm *vm;
	unsigned long id;

	rcu_read_lock();
	list_for_each_entry_rcu(vm, &ks_vms, node) {
		xa_for_each(&vm->vcpus, id, kv) {
			if (READ_ONCE(kv->pid) == pid) {
				found = kv;
				goto out;
			}
		}
	}
out:
	rcu_read_unlock();
	if (found)
		__this_cpu_write(ks_last_vcpu, found);
	return found;
}

u64 ks_vm_nr_vcpus(struct ks_vm *vm)
{
	/* The VM's own count: the module may not have seen every vCPU yet. */
	return atomic_read(&vm->kvm->online_vcpus);
}

/*
 * Words [@first, @first + @n) of @vm's own block into @buf: one pass over
 * the vCPUs, each adding its words in, so the cost is O(vCPUs * n), never
 * a walk of the vCPUs per word.  Each word is loaded whole.  Sleeps.
 */
void ks_vm_own_fill(struct ks_vm *vm, u32 first, u32 n, u64 *buf)
{
	struct ks_vcpu *kv;
	unsigned long id;
	u32 i, seen = 0;

	memset(buf, 0, n * sizeof(*buf));
	xa_for_each(&vm->vcpus, id, kv) {
		const u64 *src = (const u64 *)&kv->c;

		for (i = 0; i < n; i++) {
			u32 w = first + i;
			u64 v;

			switch (ks_own_word_agg(w)) {
			case KS_AGG_SUM:
				buf[i] += READ_ONCE(src[w]);
				break;
			case KS_AGG_MAX:
				v = READ_ONCE(src[w]);
				buf[i] = max(buf[i], v);
				break;
			default:
				break;
			}
		}
		/* A VM may have thousands of vCPUs. */
		if (!(++seen % 64))
			cond_resched();
	}
	for (i = 0; i < n; i++)
		if (ks_own_word_agg(first + i) == KS_AGG_NR_VCPUS)
			buf[i] = ks_vm_nr_vcpus(vm);
}

/* Drop every CPU's cached pointer into @vm. */
static void ks_vm_uncache(struct ks_vm *vm)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct ks_vcpu **slot = per_cpu_ptr(&ks_last_vcpu, cpu);
		struct ks_vcpu *kv = READ_ONCE(*slot);

		if (kv && kv->vm == vm)
			cmpxchg(slot, kv, NULL);
	}
}

/*
 * Called from ftrace at kvm_arch_destroy_vm(): no vCPU of @kvm runs and no
 * stats fd holds it.  Must not sleep.
 */
void ks_vm_destroyed(struct kvm *kvm)
{
	struct ks_vm *vm;
	unsigned long flags;

	raw_spin_lock_irqsave(&ks_vms_lock, flags);
	vm = ks_vm_find_rcu(kvm);
	if (vm)
		list_del_rcu(&vm->node);
	raw_spin_unlock_irqrestore(&ks_vms_lock, flags);
	if (!vm)
		return;
	ks_vm_uncache(vm);
	queue_rcu_work(ks_wq, &vm->free_work);
}

unsigned int ks_vm_state_size(void)
{
	return kmem_cache_size(ks_vm_cache);
}

unsigned int ks_vcpu_state_size(void)
{
	return kmem_cache_size(ks_vcpu_cache);
}

int ks_counters_init(void)
{
	slab_flags_t flags = SLAB_HWCACHE_ALIGN | SLAB_ACCOUNT;

#ifdef SLAB_NO_MERGE
	/* Own slab caches, so their object counts in slabinfo are ours. */
	flags |= SLAB_NO_MERGE;
#endif
	ks_vm_cache = kmem_cache_create("kvm_statsfd_vm", sizeof(struct ks_vm),
					0, flags, NULL);
	/*
	 * The stats fd copies the counters straight to userspace: declare
	 * them as the cache's usercopy region (hardened usercopy).
	 */
	ks_vcpu_cache = kmem_cache_create_usercopy("kvm_statsfd_vcpu",
						   offsetof(struct ks_vcpu, c) +
						   ks_own_vcpu_size(), 0, flags,
						   offsetof(struct ks_vcpu, c),
						   ks_own_vcpu_size(), NULL);
	ks_wq = alloc_workqueue("kvm_statsfd", 0, 0);
	if (!ks_vm_cache || !ks_vcpu_cache || !ks_wq) {
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
	struct ks_vm *vm, *tmp;
	int cpu;

	/* Frees already queued by VM destruction run first. */
	rcu_barrier();
	if (ks_wq)
		destroy_workqueue(ks_wq);
	ks_wq = NULL;

	list_for_each_entry_safe(vm, tmp, &ks_vms, node) {
		list_del(&vm->node);
		ks_vm_free(vm);
	}
	for_each_possible_cpu(cpu)
		per_cpu(ks_last_vcpu, cpu) = NULL;

	kmem_cache_destroy(ks_vcpu_cache);
	kmem_cache_destroy(ks_vm_cache);
	ks_vcpu_cache = NULL;
	ks_vm_cache = NULL;
}
