/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM's exit-path tracepoints as arch/x86/kvm/trace.h declares them on
 * 6.1 and later (that header is not shipped with the kernel headers):
 * kvm.ko exports the tracepoints, their iterators and static calls.
 */
#ifndef _KS_KVM_TRACE_H
#define _KS_KVM_TRACE_H

#include <linux/static_call.h>
#include <linux/tracepoint-defs.h>
#include <linux/types.h>

struct kvm_vcpu;

int __traceiter_kvm_exit(void *data, struct kvm_vcpu *vcpu, u32 isa);
int __traceiter_kvm_entry(void *data, struct kvm_vcpu *vcpu,
			  bool force_immediate_exit);
extern struct tracepoint __tracepoint_kvm_exit;
extern struct tracepoint __tracepoint_kvm_entry;
DECLARE_STATIC_CALL(tp_func_kvm_exit, __traceiter_kvm_exit);
DECLARE_STATIC_CALL(tp_func_kvm_entry, __traceiter_kvm_entry);

#endif /* _KS_KVM_TRACE_H */
