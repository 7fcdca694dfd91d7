/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * /dev/kvm-statsfd: stats fds of other processes' VMs, for telemetry
 * agents, without any change to KVM's rule that only a VM's creator
 * issues ioctls on it.
 *
 * KVM_STATSFD_GET_STATS_FD takes, as its argument, a VM or vCPU fd that
 * the caller holds (typically borrowed from the VMM with pidfd_getfd(),
 * which itself needs ptrace attach rights over the VMM) and returns a new
 * stats fd for that VM or vCPU, as KVM_GET_STATS_FD would in the VMM, or
 * -1 with errno:
 *
 *   EBADF   the argument is not an open fd
 *   EINVAL  it is not a KVM VM or vCPU fd
 *   EACCES  the caller is not the VM's creator and has neither
 *           CAP_SYS_PTRACE nor CAP_PERFMON (nor CAP_SYS_ADMIN), the
 *           capabilities under which the kernel lets a process trace
 *           another's guest exits (perf) or read its memory
 *   EIO     the VM is dead (KVM's answer)
 *   ENOMEM, EMFILE, ...  as KVM_GET_STATS_FD
 *
 * Any user may open the device; the check is on each call, against the
 * caller's own credentials, however the VM fd reached it.
 */
#ifndef _KVM_STATSFD_STATS_DEV_H
#define _KVM_STATSFD_STATS_DEV_H

#include <linux/ioctl.h>

#define KVM_STATSFD_DEV_NAME		"kvm-statsfd"
#define KVM_STATSFD_DEV_PATH		"/dev/" KVM_STATSFD_DEV_NAME

/* 'k' 0xce: KVM_GET_STATS_FD's number, under the module's own type. */
#define KVM_STATSFD_IOC_TYPE		'k'
#define KVM_STATSFD_GET_STATS_FD	_IO(KVM_STATSFD_IOC_TYPE, 0xce)

#endif /* _KVM_STATSFD_STATS_DEV_H */
