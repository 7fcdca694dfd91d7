/* SPDX-License-Identifier: GPL-2.0 */
/*
 * KVM's exit-path tracepoints on arm64, as arch/arm64/kvm/trace_arm.h
 * (kvm_exit, kvm_entry) and include/trace/events/kvm.h (kvm_mmio) declare
 * them in 6.12; the former header is not shipped with the kernel headers.
 *
 * Declared with DECLARE_TRACE, what TRACE_EVENT expands to outside
 * CREATE_TRACE_POINTS, so that trace_kvm_exit() and the others are the
 * same inline functions KVM's call sites in vmlinux are compiled from.
 * KVM is built into Debian's arm64 kernels and exports none of their
 * symbols (__tracepoint_kvm_exit, __SCK__tp_func_kvm_exit, ...): the
 * driver is linked with them undefined (KBUILD_MODPOST_WARN) and
 * tests/bench/ksym_insmod.c resolves them from /proc/kallsyms at load.
 */
#ifndef _KS_KVM_TRACE_ARM64_H
#define _KS_KVM_TRACE_ARM64_H

#include <linux/tracepoint.h>
#include <linux/types.h>

DECLARE_TRACE(kvm_exit,
	      TP_PROTO(int ret, unsigned int esr_ec, unsigned long vcpu_pc),
	      TP_ARGS(ret, esr_ec, vcpu_pc));
DECLARE_TRACE(kvm_entry,
	      TP_PROTO(unsigned long vcpu_pc),
	      TP_ARGS(vcpu_pc));
DECLARE_TRACE(kvm_mmio,
	      TP_PROTO(int type, int len, u64 gpa, void *val),
	      TP_ARGS(type, len, gpa, val));

#endif /* _KS_KVM_TRACE_ARM64_H */
