/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KVMSTATSFD_DISCOVER_H
#define KVMSTATSFD_DISCOVER_H

#include <stddef.h>
#include <sys/types.h>

#include "kvmstats.h"
#include "kvm_statsfd/stats_dev.h"

/* A vCPU seen in a VMM process: its fd numbers in that process. */
struct vcpu_ref {
	int id;			/* N of anon_inode:kvm-vcpu:N */
	int fdnum;		/* vCPU fd, -1 if only a stats fd was seen */
	int stats_fdnum;	/* existing kvm-vcpu-stats:N fd, or -1 */
	struct kvmstats *st;	/* NULL until opened */
	int open;		/* st is open */
};

/* One VMM process and (see discover.c) the one VM we attribute to it. */
struct vm_proc {
	pid_t pid;
	char comm[64];
	char *guest;		/* from -name, NULL if none */
	char uuid[40];		/* from -uuid, "" if none */
	uid_t uid;		/* owner of /proc/PID */
	int nr_vm_fds;		/* > 1: vCPUs attributed to the first VM */
	int vm_fdnum;		/* first kvm-vm fd, or -1 */
	int vm_stats_fdnum;	/* first existing kvm-vm-stats fd, or -1 */
	int nr_vcpus;
	struct vcpu_ref *vcpus;	/* sorted by id */
	struct kvmstats *vm;	/* NULL until opened */
	int vm_open;
	int vm_unavailable;	/* the VM's own stats: see VM_UNAVAILABLE */
	int pidfd;		/* opened before /proc/PID/fd is read */
	char err[256];		/* first error while opening stats */
};

/*
 * Scan /proc for processes holding KVM VM or vCPU fds; only_pid > 0 limits
 * the scan to one process.  Processes we may not inspect are skipped.
 * Returns the number found (array in *out, sorted by pid) or -errno.
 */
int discover_vms(struct vm_proc **out, pid_t only_pid);
/* Processes the last discover_vms() was not allowed to look into. */
extern unsigned int discover_denied;

/*
 * Open stats fds for the VM and each vCPU of p (or only vCPU only_vcpu if
 * >= 0, and then not the VM's).  Never changes VM state: fds are duplicated, only ioctl
 * KVM_GET_STATS_FD and pread are used.  Returns 0 if everything opened,
 * else -errno with the first problem in p->err (partial results kept).
 * May be called again (e.g. after adding vCPUs to p->vcpus): the pidfd
 * and the stats already open are kept, only the others are tried.
 */
int vm_open_stats(struct vm_proc *p, int only_vcpu);
/* only_vcpu for vm_open_stats(): the VM's stats only, no vCPU's. */
#define VM_STATS_ONLY	(-2)

/*
 * Why p->vm_unavailable is set: KVM refused the VM's stats fd to us (EIO),
 * there is no kvm_statsfd.ko to ask, and the VMM keeps no VM stats fd to
 * borrow.  That is any QEMU without the module: 8.1 and later keep a stats
 * fd per vCPU only, 7.2 none.  vm_open_stats() does not count it as a
 * failure when any vCPU's stats opened (or with VM_STATS_ONLY, where no
 * vCPU is tried): the vCPUs' stats are there, and KVM's VM-wide stats
 * (remote_tlb_flush, mmu_*, pages_*) are no sum of theirs, so there is
 * nothing to put in their place.  Callers say so with this text.
 */
#define VM_UNAVAILABLE	"the VM's own stats are unavailable: KVM refuses KVM_GET_STATS_FD from outside the VMM process (EIO), the VMM keeps no VM stats fd to borrow (QEMU keeps none: 8.1 and later keep one per vCPU only) and there is no " KVM_STATSFD_DEV_PATH " (load kvm_statsfd.ko)"

/*
 * Whether fd is a KVM stats fd: /proc/self/fd/FD reads
 * "anon_inode:kvm-vm-stats" or "anon_inode:kvm-vcpu-stats:N", names only
 * KVM gives.  kvm_fd_is(fd, "kvm-vm") and kvm_fd_is(fd, "kvm-vcpu:")
 * check a VM or vCPU fd the same way (a name ending in ':' is a prefix).
 */
int kvm_fd_is(int fd, const char *what);

/*
 * The value of the last "-opt VALUE" in a NUL-separated command line, as
 * a malloc()ed string, or NULL.
 */
char *cmdline_opt(const char *cmdline, size_t len, const char *opt);
/* True once the VMM process has exited. */
int vm_proc_exited(const struct vm_proc *p);
void vm_close_stats(struct vm_proc *p);
void free_vms(struct vm_proc *vms, int n);

/*
 * Guest name from a NUL-separated QEMU command line: "-name foo",
 * "-name guest=foo,debug-threads=on" (",," is a literal comma).
 * Returns a malloc()ed string or NULL.
 */
char *guest_name_from_cmdline(const char *cmdline, size_t len);

#endif
