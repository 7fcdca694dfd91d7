// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the kvm-statsfd selftests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ks_util.h"

const unsigned char ks_code_out_hlt[] = {
	0xb0, 0x42,		/* mov al, 0x42 */
	0xe6, 0x10,		/* out 0x10, al */
	0xf4,			/* hlt */
};
const size_t ks_code_out_hlt_len = sizeof(ks_code_out_hlt);

static int ks_vcpu_create(struct ks_vm *vm, int id)
{
	struct ks_vcpu *vcpu = &vm->vcpu[id];
	struct kvm_sregs sregs;
	struct kvm_regs regs;
	int size;

	vcpu->fd = ioctl(vm->fd, KVM_CREATE_VCPU, id);
	if (vcpu->fd < 0)
		return -errno;
	size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (size < 0)
		return -errno;
	vcpu->run_size = size;
	vcpu->run = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 vcpu->fd, 0);
	if (vcpu->run == MAP_FAILED) {
		vcpu->run = NULL;
		return -errno;
	}
	if (ioctl(vcpu->fd, KVM_GET_SREGS, &sregs) < 0)
		return -errno;
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(vcpu->fd, KVM_SET_SREGS, &sregs) < 0)
		return -errno;
	memset(&regs, 0, sizeof(regs));
	regs.rip = KS_GUEST_CODE_ADDR;
	regs.rflags = 0x2;
	if (ioctl(vcpu->fd, KVM_SET_REGS, &regs) < 0)
		return -errno;
	return 0;
}

int ks_vm_create(struct ks_vm *vm, const void *code, size_t code_len,
		 int nr_vcpus)
{
	struct kvm_userspace_memory_region region;
	int i, ret;

	memset(vm, 0, sizeof(*vm));
	vm->fd = -1;
	for (i = 0; i < KS_MAX_VCPUS; i++)
		vm->vcpu[i].fd = -1;
	if (nr_vcpus > KS_MAX_VCPUS || code_len > KS_GUEST_MEM_SIZE -
	    KS_GUEST_CODE_ADDR)
		return -EINVAL;

	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0)
		return -errno;
	vm->fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->fd < 0) {
		ret = -errno;
		goto fail;
	}
	vm->mem = mmap(NULL, KS_GUEST_MEM_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->mem == MAP_FAILED) {
		vm->mem = NULL;
		ret = -errno;
		goto fail;
	}
	memcpy((char *)vm->mem + KS_GUEST_CODE_ADDR, code, code_len);
	region = (struct kvm_userspace_memory_region) {
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = KS_GUEST_MEM_SIZE,
		.userspace_addr = (uintptr_t)vm->mem,
	};
	if (ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &region) < 0) {
		ret = -errno;
		goto fail;
	}
	for (i = 0; i < nr_vcpus; i++) {
		vm->nr_vcpus = i + 1;
		ret = ks_vcpu_create(vm, i);
		if (ret)
			goto fail;
	}
	return 0;
fail:
	ks_vm_destroy(vm);
	return ret;
}

void ks_vm_destroy(struct ks_vm *vm)
{
	int i;

	for (i = 0; i < vm->nr_vcpus; i++) {
		if (vm->vcpu[i].run)
			munmap(vm->vcpu[i].run, vm->vcpu[i].run_size);
		if (vm->vcpu[i].fd >= 0)
			close(vm->vcpu[i].fd);
		vm->vcpu[i].run = NULL;
		vm->vcpu[i].fd = -1;
	}
	vm->nr_vcpus = 0;
	if (vm->mem)
		munmap(vm->mem, KS_GUEST_MEM_SIZE);
	vm->mem = NULL;
	if (vm->fd >= 0)
		close(vm->fd);
	vm->fd = -1;
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	vm->kvm_fd = -1;
}

int ks_vcpu_run(struct ks_vcpu *vcpu)
{
	if (ioctl(vcpu->fd, KVM_RUN, 0) < 0)
		return -errno;
	return vcpu->run->exit_reason;
}

const char *ks_module_path(void)
{
	const char *p = getenv("KVM_STATSFD_KO");

	return p && *p ? p : "kvm_statsfd.ko";
}

int ks_module_load(const char *params)
{
	int fd, ret = 0;

	fd = open(ks_module_path(), O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, params, 0) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

int ks_module_unload(void)
{
	if (syscall(SYS_delete_module, "kvm_statsfd", O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int ks_module_loaded(void)
{
	struct stat st;

	return stat("/sys/module/kvm_statsfd", &st) == 0;
}
