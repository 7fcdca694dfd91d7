// SPDX-License-Identifier: GPL-2.0
/*
 * ks-kvm-cap: what KVM answers to KVM_CHECK_EXTENSION, for the guest-side
 * QEMU test (busybox sh cannot ioctl).  Links statically.
 *
 * usage: ks-kvm-cap CAP
 *
 * Prints two numbers: the answer on /dev/kvm and on a new VM's fd.
 * Status 0, or 1 when /dev/kvm or KVM_CREATE_VM fails.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/kvm.h>

int main(int argc, char **argv)
{
	int kvm, vm, dev_cap, vm_cap;
	long cap;
	char *end;

	if (argc != 2) {
		fprintf(stderr, "usage: ks-kvm-cap CAP\n");
		return 2;
	}
	cap = strtol(argv[1], &end, 0);
	if (*end || end == argv[1]) {
		fprintf(stderr, "ks-kvm-cap: bad capability %s\n", argv[1]);
		return 2;
	}
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		fprintf(stderr, "ks-kvm-cap: /dev/kvm: %s\n", strerror(errno));
		return 1;
	}
	dev_cap = ioctl(kvm, KVM_CHECK_EXTENSION, cap);
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (vm < 0) {
		fprintf(stderr, "ks-kvm-cap: KVM_CREATE_VM: %s\n", strerror(errno));
		return 1;
	}
	vm_cap = ioctl(vm, KVM_CHECK_EXTENSION, cap);
	printf("%d %d\n", dev_cap, vm_cap);
	close(vm);
	close(kvm);
	return 0;
}
