/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kvm-statsfd selftests: a minimal KVM VM with
 * real-mode guest code, and loading/unloading kvm_statsfd.ko.
 */
#ifndef KS_UTIL_H
#define KS_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <linux/kvm.h>

#define KS_GUEST_MEM_SIZE	0x10000
#define KS_GUEST_CODE_ADDR	0x1000
#define KS_MAX_VCPUS		64

struct ks_vcpu {
	int fd;
	struct kvm_run *run;
	size_t run_size;
};

struct ks_vm {
	int kvm_fd;
	int fd;
	void *mem;
	int nr_vcpus;
	struct ks_vcpu vcpu[KS_MAX_VCPUS];
};

/*
 * Create a VM with KS_GUEST_MEM_SIZE bytes of memory at guest physical 0,
 * copy @code to KS_GUEST_CODE_ADDR and create @nr_vcpus vCPUs that start
 * there in real mode.  Returns 0 or -errno.
 */
int ks_vm_create(struct ks_vm *vm, const void *code, size_t code_len,
		 int nr_vcpus);
void ks_vm_destroy(struct ks_vm *vm);
/* KVM_RUN once; returns the exit reason or -errno. */
int ks_vcpu_run(struct ks_vcpu *vcpu);

/* Guest code: "out 0x10, al" with al = 0x42, then hlt. */
extern const unsigned char ks_code_out_hlt[];
extern const size_t ks_code_out_hlt_len;

/* Path of kvm_statsfd.ko: $KVM_STATSFD_KO, or the build tree default. */
const char *ks_module_path(void);
/* Load the module with @params ("" for none); returns 0 or -errno. */
int ks_module_load(const char *params);
/* Unload it; returns 0 or -errno (EBUSY while in use). */
int ks_module_unload(void);
/* 1 when kvm_statsfd is loaded, 0 when not. */
int ks_module_loaded(void);

#endif /* KS_UTIL_H */
