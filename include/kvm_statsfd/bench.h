/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Benchmark hooks, built only with KVM_STATSFD_BENCH=1 (make bench).
 */
#ifndef _KVM_STATSFD_BENCH_H
#define _KVM_STATSFD_BENCH_H

#include <linux/types.h>

struct kvm_vcpu;

#ifdef KVM_STATSFD_BENCH
int ks_bench_init(void);
void ks_bench_exit(void);
void ks_bench_probes(struct kvm_vcpu *vcpu, u64 iters, u64 *probe_ns,
		     u64 *probe_cycles, u64 *plain_ns, u64 *plain_cycles,
		     u64 *clock_ns);
#else
static inline int ks_bench_init(void) { return 0; }
static inline void ks_bench_exit(void) { }
#endif

#endif /* _KVM_STATSFD_BENCH_H */
