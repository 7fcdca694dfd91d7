/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test-only: what the probe driver's architecture files
 * (ks_probe_driver_x86.c, ks_probe_driver_arm64.c) and its debugfs file
 * (ks_probe_driver_file.c) share.
 */
#ifndef _KS_PROBE_DRIVER_H
#define _KS_PROBE_DRIVER_H

#include <linux/types.h>

struct kvm_vcpu;

/* What a run measured, in counter ticks for all iterations. */
enum { R_ITERS, R_EXIT_ENTRY, R_EXIT, R_ENTRY, R_PLAIN, R_LOOP, R_NR };

/* The exits a run can present to the probes, by name; the first is the default. */
extern const char *const ks_path_names[];
extern const int ks_path_nr;

/*
 * @iters iterations of each measurement on @vcpus[0] (alternating with
 * @vcpus[1] if it is another vCPU of the same VM) with exit @path, added
 * into @result[R_EXIT_ENTRY..R_LOOP].
 */
int ks_run(struct kvm_vcpu **vcpus, u64 iters, int path, u64 *result);

/* At load, before the file exists: what the architecture checks first. */
void ks_arch_init(void);

/* Appends the architecture's own fields to a read of the file. */
int ks_arch_read_extra(char *buf, size_t len);

#endif /* _KS_PROBE_DRIVER_H */
