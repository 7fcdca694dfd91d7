/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM's exit-path tracepoints as arch/x86/kvm/trace.h declares them on
 * 6.1 and later (that header is not shipped with the kernel headers):
 * kvm.ko exports the tracepoints, their iterators and static calls.
 *
 * Declared with DECLARE_TRACE, the macro TRACE_EVENT expands to outside
 * CREATE_TRACE_POINTS, so that trace_kvm_exit() and the others are the
 * very inline functions KVM's own call sites are compiled from: the static
 * key, the cpu_online() test, __DO_TRACE's preempt_disable_notrace(), the
 * probe list, its first probe's data, the static call, and
 * preempt_enable_notrace().  tests/bench/dispatch-count checks that the
 * driver's sites count the same instructions as the shipped vendor
 * modules' (kvm-amd.ko, kvm-intel.ko).  kvm_userspace_exit, which fires
 * on KVM_RUN's return to userspace and not between an exit and its entry,
 * is not exported by kvm.ko, and not driven.
 */
#ifndef _KS_KVM_TRACE_H
#define _KS_KVM_TRACE_H

#include <linux/tracepoint.h>
#include <linux/types.h>

struct kvm_vcpu;

DECLARE_TRACE(kvm_exit,
	      TP_PROTO(struct kvm_vcpu *vcpu, u32 isa),
	      TP_ARGS(vcpu, isa));
DECLARE_TRACE(kvm_entry,
	      TP_PROTO(struct kvm_vcpu *vcpu, bool force_immediate_exit),
	      TP_ARGS(vcpu, force_immediate_exit));

#endif /* _KS_KVM_TRACE_H */
