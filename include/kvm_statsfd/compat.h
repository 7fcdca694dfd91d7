/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one place where kernels differ.
 *
 * The module is written against the newest kernel's API.  For older
 * kernels this header supplies what they lack, from feature macros that
 * Kbuild probes in the target tree at build time (KS_HAVE_*), never from
 * version numbers.  Nothing else in the module tests a KS_HAVE_* macro.
 *
 *   KS_HAVE_BINARY_STATS	 the kernel has KVM_GET_STATS_FD (5.14+)
 *   KS_HAVE_EXIT_INFO_REASON kvm_exit is (vcpu, isa) and get_exit_info()
 *				 returns the reason (5.16+); before, kvm_exit
 *				 passes the reason first
 *   KS_HAVE_KVM_X86_STATIC_CALLS kvm.ko calls the vendor's kvm_x86_ops
 *				 through static calls of its own (5.12+)
 *   KS_HAVE_FTRACE_REGS	 ftrace callbacks get struct ftrace_regs (5.11+)
 *   KS_HAVE_FTRACE_FL_RECURSION ftrace ops opt in to recursion protection
 *				 (5.11+); before, it was the default and
 *				 ops opted out
 *   KS_HAVE_VM_DEAD		 struct kvm has vm_dead (5.15+)
 *   KS_HAVE_RUNNING_VCPU_EXPORT kvm_get_running_vcpu() is exported to any
 *				 module (7.x exports it to kvm-amd/kvm-intel
 *				 only)
 *   KS_HAVE_VM_FLAGS_SET	 a VMA's vm_flags change only through
 *				 vm_flags_set()/vm_flags_clear() (6.3+)
 *   KS_HAVE_TDX_VM		 x86 has TDX VMs, KVM_X86_TDX_VM (6.16+)
 *   KS_HAVE_FAULT_IN_WRITEABLE fault_in_writeable() exists (5.16+)
 *   KS_HAVE_ANON_GETFILE_FMODE anon_inode_getfile_fmode() exists (6.12+),
 *				 which KVM makes its stats files with from
 *				 6.13 on
 */
#ifndef _KVM_STATSFD_COMPAT_H
#define _KVM_STATSFD_COMPAT_H

#include <linux/anon_inodes.h>
#include <linux/ftrace.h>
#include <linux/kvm_host.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/static_call.h>
#include <linux/stddef.h>

#ifndef KS_HAVE_BINARY_STATS
/*
 * The binary stats format's uapi, for kernels that predate it (the
 * definitions of Documentation/virt/kvm/api.rst, section 4.133).
 */
#define KVM_CAP_BINARY_STATS_FD		203
#define KVM_GET_STATS_FD		_IO(KVMIO, 0xce)

#define KVM_STATS_TYPE_SHIFT		0
#define KVM_STATS_TYPE_MASK		(0xF << KVM_STATS_TYPE_SHIFT)
#define KVM_STATS_TYPE_CUMULATIVE	(0x0 << KVM_STATS_TYPE_SHIFT)
#define KVM_STATS_TYPE_INSTANT		(0x1 << KVM_STATS_TYPE_SHIFT)
#define KVM_STATS_TYPE_PEAK		(0x2 << KVM_STATS_TYPE_SHIFT)
#define KVM_STATS_TYPE_LINEAR_HIST	(0x3 << KVM_STATS_TYPE_SHIFT)
#define KVM_STATS_TYPE_LOG_HIST		(0x4 << KVM_STATS_TYPE_SHIFT)

#define KVM_STATS_UNIT_SHIFT		4
#define KVM_STATS_UNIT_MASK		(0xF << KVM_STATS_UNIT_SHIFT)
#define KVM_STATS_UNIT_NONE		(0x0 << KVM_STATS_UNIT_SHIFT)
#define KVM_STATS_UNIT_BYTES		(0x1 << KVM_STATS_UNIT_SHIFT)
#define KVM_STATS_UNIT_SECONDS		(0x2 << KVM_STATS_UNIT_SHIFT)
#define KVM_STATS_UNIT_CYCLES		(0x3 << KVM_STATS_UNIT_SHIFT)

#define KVM_STATS_BASE_SHIFT		8
#define KVM_STATS_BASE_MASK		(0xF << KVM_STATS_BASE_SHIFT)
#define KVM_STATS_BASE_POW10		(0x0 << KVM_STATS_BASE_SHIFT)
#define KVM_STATS_BASE_POW2		(0x1 << KVM_STATS_BASE_SHIFT)

struct kvm_stats_header {
	__u32 flags;
	__u32 name_size;
	__u32 num_desc;
	__u32 id_offset;
	__u32 desc_offset;
	__u32 data_offset;
};

#define KVM_STATS_NAME_SIZE		48

/*
 * Without native binary stats the module builds the kernel's descriptors
 * from its debugfs table (native.c); the id is the one 5.14 would give,
 * "kvm-<pid of the creator>", from the pid KVM keeps for its uevents.
 */
static inline void ks_kvm_stats_id(const struct kvm *kvm, char *buf)
{
	/* All KVM_STATS_NAME_SIZE bytes are served: a zeroed tail. */
	memset(buf, 0, KVM_STATS_NAME_SIZE);
	snprintf(buf, KVM_STATS_NAME_SIZE, "kvm-%d", kvm->userspace_pid);
}

static inline void ks_vcpu_stats_id(const struct kvm_vcpu *vcpu, char *buf)
{
	memset(buf, 0, KVM_STATS_NAME_SIZE);
	snprintf(buf, KVM_STATS_NAME_SIZE, "kvm-%d/vcpu-%d",
		 vcpu->kvm->userspace_pid, vcpu->vcpu_id);
}
#else
static inline void ks_kvm_stats_id(const struct kvm *kvm, char *buf)
{
	memcpy(buf, kvm->stats_id, KVM_STATS_NAME_SIZE);
}

static inline void ks_vcpu_stats_id(const struct kvm_vcpu *vcpu, char *buf)
{
	memcpy(buf, vcpu->stats_id, KVM_STATS_NAME_SIZE);
}
#endif

#ifdef CONFIG_X86
/*
 * kvm_exit's probe arguments, and the vendor's get_exit_info(): since 5.16
 * the tracepoint passes (vcpu, isa) and get_exit_info() returns the
 * reason; before, it passed (reason, vcpu, isa) and get_exit_info() had
 * no reason argument.  ks_exit_info_proto() is only a prototype, the type
 * of the probes' static call to the vendor's function.
 */
#ifdef KS_HAVE_EXIT_INFO_REASON
#define KS_KVM_EXIT_PROBE_ARGS	void *data, struct kvm_vcpu *vcpu, u32 isa
#define KS_KVM_EXIT_TP_REASON	0
#define KS_KVM_EXIT_PASSES_REASON false
void ks_exit_info_proto(struct kvm_vcpu *vcpu, u32 *reason, u64 *info1,
			u64 *info2, u32 *intr_info, u32 *error_code);
#define ks_call_exit_info(fn, vcpu, tp_reason, reason, info1, info2, ii, ec) \
	fn((vcpu), (reason), (info1), (info2), (ii), (ec))
#else
#define KS_KVM_EXIT_PROBE_ARGS	void *data, unsigned int tp_reason, \
				struct kvm_vcpu *vcpu, u32 isa
#define KS_KVM_EXIT_TP_REASON	tp_reason
#define KS_KVM_EXIT_PASSES_REASON true
void ks_exit_info_proto(struct kvm_vcpu *vcpu, u64 *info1, u64 *info2,
			u32 *intr_info, u32 *error_code);
#define ks_call_exit_info(fn, vcpu, tp_reason, reason, info1, info2, ii, ec) \
	({ *(reason) = (tp_reason);					\
	   fn((vcpu), (info1), (info2), (ii), (ec)); })
#endif

/*
 * How the probes reach the vendor's get_exit_info().  The vendor module
 * (kvm_amd, kvm_intel) may be unloaded and loaded again, elsewhere, while
 * this module stays, or come after it at boot: the module never keeps an
 * address inside it, and calls the function the way kvm.ko itself does at
 * that moment.  Since 5.12 that is through kvm.ko's static call
 * kvm_x86_get_exit_info, whose trampoline kvm.ko points at each vendor
 * module as it loads (and which returns at once before any has): our
 * static call ks_exit_info points at that trampoline, in kvm.ko, which we
 * hold.  Before, kvm.ko calls through its kvm_x86_ops, which each vendor
 * module fills as it loads: the probes read the pointer from there on
 * every call, as kvm.ko does.  A vendor module cannot go while a vCPU
 * exits: every VM holds it.
 *
 *   KS_KVM_EXIT_INFO_SYMBOL	what probes_x86.c finds in kvm.ko
 *				(ks_exit_info_addr)
 *   KS_KVM_EXIT_INFO_TEXT	and whether it is a function
 *   ks_exit_info_bind(addr)	once, at load, with what it found
 *   ks_exit_info_fn()		the function to call, on each exit
 */
DECLARE_STATIC_CALL(ks_exit_info, ks_exit_info_proto);

#ifdef KS_HAVE_KVM_X86_STATIC_CALLS
#define KS_KVM_EXIT_INFO_SYMBOL	"__SCT__kvm_x86_get_exit_info"
#define KS_KVM_EXIT_INFO_TEXT	true
#define ks_exit_info_bind(addr)	static_call_update(ks_exit_info, (void *)(addr))
#define ks_exit_info_fn()	static_call(ks_exit_info)
#else
#define KS_KVM_EXIT_INFO_SYMBOL	"kvm_x86_ops"
#define KS_KVM_EXIT_INFO_TEXT	false
#define ks_exit_info_bind(addr)	do { } while (0)
#define ks_exit_info_fn()						\
	READ_ONCE(((struct kvm_x86_ops *)ks_exit_info_addr)->get_exit_info)
#endif

/*
 * KVM runs @vcpu from a VMCS of its own, current when kvm_exit fires, so
 * that the probes may VMREAD its exit state.  A TDX guest's is in the TDX
 * module's VMCS, out of VMREAD's reach: its exits go through the vendor's
 * get_exit_info().  Kernels built without KVM's TDX have no such guest.
 */
static __always_inline bool ks_vmx_has_vmcs(const struct kvm_vcpu *vcpu)
{
#if defined(KS_HAVE_TDX_VM) && IS_ENABLED(CONFIG_KVM_INTEL_TDX)
	return vcpu->kvm->arch.vm_type != KVM_X86_TDX_VM;
#else
	return true;
#endif
}
#endif /* CONFIG_X86 */

/* ftrace callbacks: regs came straight as struct pt_regs before 5.11. */
#ifdef KS_HAVE_FTRACE_REGS
#define ks_ftrace_regs		ftrace_regs
#define ks_ftrace_get_regs(f)	ftrace_get_regs(f)
#else
#define ks_ftrace_regs		pt_regs
#define ks_ftrace_get_regs(f)	(f)
#endif

/*
 * What a callback reads the traced call's arguments from, and redirects
 * the call with (ks_fargs_set_ip(), with FTRACE_OPS_FL_IPMODIFY).  With
 * DYNAMIC_FTRACE_WITH_REGS (x86, arm64 6.1) an ops asks for the full
 * pt_regs with FTRACE_OPS_FL_SAVE_REGS.  Kernels with only
 * DYNAMIC_FTRACE_WITH_ARGS (arm64 from 6.5 on) refuse that flag (-EINVAL):
 * there every callback gets the argument registers and the instruction
 * pointer in struct ftrace_regs, through its accessors.
 */
#ifdef CONFIG_DYNAMIC_FTRACE_WITH_REGS
#define KS_FTRACE_OPS_FL_REGS	FTRACE_OPS_FL_SAVE_REGS
#define ks_fargs		pt_regs
#define ks_fargs_of(f)		ks_ftrace_get_regs(f)
#define ks_fargs_arg(a, n)	regs_get_kernel_argument(a, n)
#define ks_fargs_set_ip(a, ip)	instruction_pointer_set(a, ip)
#else
#define KS_FTRACE_OPS_FL_REGS	0
#define ks_fargs		ftrace_regs
#define ks_fargs_of(f)		(f)
#define ks_fargs_arg(a, n)	ftrace_regs_get_argument(a, n)
#define ks_fargs_set_ip(a, ip)	ftrace_regs_set_instruction_pointer(a, ip)
#endif

/*
 * Recursion protection: since 5.11 an ops asks for it; before, it was on
 * unless the ops said it needed none.  KS_FTRACE_OPS_FL_NO_GUARD is how a
 * callback that cannot recurse says so on each.
 */
#ifdef KS_HAVE_FTRACE_FL_RECURSION
#define KS_FTRACE_OPS_FL_NO_GUARD	0
#else
#define FTRACE_OPS_FL_RECURSION		0
#define KS_FTRACE_OPS_FL_NO_GUARD	FTRACE_OPS_FL_RECURSION_SAFE
#endif

/*
 * The vCPU loaded on this CPU (KVM keeps it across preemption with its
 * preempt notifiers).  Where kvm.ko no longer exports the function to us,
 * kvm_symbols.c finds it in kvm.ko like the ioctl handlers.
 */
extern struct kvm_vcpu *(*ks_kvm_get_running_vcpu)(void);

#ifdef KS_HAVE_RUNNING_VCPU_EXPORT
#define KS_RUNNING_VCPU_EXPORTED	true
static inline struct kvm_vcpu *ks_running_vcpu(void)
{
	return kvm_get_running_vcpu();
}
#else
#define KS_RUNNING_VCPU_EXPORTED	false
static inline struct kvm_vcpu *ks_running_vcpu(void)
{
	return ks_kvm_get_running_vcpu();
}
#endif

static inline bool ks_kvm_is_dead(struct kvm *kvm)
{
#ifdef KS_HAVE_VM_DEAD
	return READ_ONCE(kvm->vm_dead);
#else
	return false;
#endif
}

/*
 * Wait until no task can still be on the last instructions of a diverted
 * ioctl handler (hook.c).  synchronize_rcu_tasks() is exported since 5.11;
 * before, the "rude" flavour waits for every CPU to schedule, which covers
 * it on kernels that do not preempt kernel code (Debian's 5.10 kernels are
 * PREEMPT_VOLUNTARY).
 */
static inline void ks_synchronize_handlers(void)
{
#ifdef KS_HAVE_FTRACE_REGS
	synchronize_rcu_tasks();
#else
	synchronize_rcu_tasks_rude();
#endif
}

/*
 * anon_inode_getfile_fmode(), one of the functions KVM makes its stats
 * files with (hook.c), where it exists; else 0.
 */
#ifdef KS_HAVE_ANON_GETFILE_FMODE
#define KS_ANON_GETFILE_FMODE	((unsigned long)anon_inode_getfile_fmode)
#else
#define KS_ANON_GETFILE_FMODE	0UL
#endif

/*
 * Fault in @size bytes of a user buffer for writing; what is left not
 * faulted in (0 when all of it is).  Before 5.16 the same work was
 * fault_in_pages_writeable(), which takes an int (a stats file is far
 * smaller) and says only whether all of it went.
 */
#ifndef KS_HAVE_FAULT_IN_WRITEABLE
static inline size_t fault_in_writeable(char __user *uaddr, size_t size)
{
	return fault_in_pages_writeable(uaddr, size) ? size : 0;
}
#endif

/*
 * Since 6.3 vm_flags is read-only outside mm, written through these (which
 * also assert the mmap lock and lock the VMA); before, it was written
 * directly, under the mmap lock the caller holds.
 */
#ifndef KS_HAVE_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma,
				  vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

#endif /* _KVM_STATSFD_COMPAT_H */
