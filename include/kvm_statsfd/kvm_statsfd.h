/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the module's parts offer each other: the pieces of KVM found at
 * load time, the ioctl hook, the probes and the stats file.
 */
#ifndef _KVM_STATSFD_H
#define _KVM_STATSFD_H

#include <linux/kvm_host.h>
#include <linux/types.h>

/*
 * Things inside KVM (kvm.ko, or vmlinux where KVM is built in) that it does
 * not export, found by kvm_symbols.c.
 */
struct ks_kvm_symbols {
	unsigned long vm_ioctl;		/* kvm_vm_ioctl() */
	unsigned long vcpu_ioctl;	/* kvm_vcpu_ioctl() */
	unsigned long arch_destroy_vm;	/* kvm_arch_destroy_vm() */
	/* KVM's own stats files' (5.14+, else NULL). */
	const struct file_operations *vm_stats_fops, *vcpu_stats_fops;
	/*
	 * /dev/kvm's, whose owner is the vendor module (kvm_amd, ...), or
	 * NULL where KVM is built in.
	 */
	const struct file_operations *chardev_ops;
	/* A VM's and a vCPU's own files'. */
	const struct file_operations *vm_fops, *vcpu_fops;
	struct tracepoint *tp_exit, *tp_entry, *tp_userspace_exit, *tp_mmio;
};

extern struct ks_kvm_symbols ks_kvm;

/*
 * Address of @name in KVM's symbols (a function if @text, else data), 0
 * if it is missing or ambiguous (and then says so).  One implementation
 * per way KVM is built: kvm_lookup_module.c, kvm_lookup_builtin.c.
 */
unsigned long ks_kvm_symbol(const char *name, bool text);
/* KVM's tracepoint @name ("kvm_exit"), NULL if missing (and says so). */
struct tracepoint *ks_kvm_tracepoint(const char *name);
/* Find KVM's symbol table, before the two above. */
int ks_kvm_lookup_init(void);
int ks_kvm_symbols_init(void);
/* What the probes need of KVM beyond ks_kvm (probes_<arch>.c). */
int ks_arch_kvm_symbols_init(void);

/* cross_process=: stats fds for processes other than the VM's creator. */
extern bool ks_cross_process;

/*
 * Whether the current process may read @kvm's stats: it created the VM,
 * or has a capability to observe its guest (stats_dev.c).
 */
bool ks_reader_allowed(struct kvm *kvm);

/* /dev/kvm-statsfd (stats_dev.c). */
int ks_stats_dev_init(void);
void ks_stats_dev_exit(void);

/*
 * ftrace where KVM makes its stats files, or on its ioctl handlers (the
 * product), and on VM destruction.
 */
int ks_hook_init(void);
void ks_hook_exit(void);
int ks_hook_destroy_init(void);
void ks_hook_destroy_exit(void);

int ks_probes_init(void);
void ks_probes_exit(void);

/* Create a stats fd for a VM or a vCPU; returns the fd or -errno. */
int ks_stats_fd_create_vm(struct kvm *kvm);
int ks_stats_fd_create_vcpu(struct kvm_vcpu *vcpu);

/*
 * A stats file for a VM or a vCPU, named @name, or an ERR_PTR: the
 * caller takes a reference on the VM for it once it has it (as KVM does
 * for its own), which the file's release drops.
 */
struct file *ks_stats_file_vm(struct kvm *kvm, const char *name);
struct file *ks_stats_file_vcpu(struct kvm_vcpu *vcpu, const char *name);

extern atomic_long_t ks_nr_files;

/* /sys/kernel/debug/kvm_statsfd/: live objects (debugfs.c). */
void ks_debugfs_init(void);
void ks_debugfs_exit(void);

#endif /* _KVM_STATSFD_H */
