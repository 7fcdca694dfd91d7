// SPDX-License-Identifier: GPL-2.0
/*
 * /sys/kernel/debug/kvm_statsfd/: the module's live objects and the bytes
 * they take, for the tests' leak checks and the memory figures of
 * Documentation/performance.rst.  Debug information, not an ABI: debugfs,
 * not sysfs.  As debugfs wants, a failure to create a file is not the
 * module's failure (the files are simply absent).
 *
 *   vms, vcpus, files   VM and vCPU states alive, stats files open
 *   vm_bytes, vcpu_bytes
 *                       bytes of one VM's and one vCPU's state
 *   counter_pages       pages that mapped VMs' counters moved into
 *   bytes               all the state and counters alive, in bytes
 *   fail_nth            test builds only: include/kvm_statsfd/fault.h
 */

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>

#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/fault.h>
#include <kvm_statsfd/kvm_statsfd.h>

struct ks_debug_file {
	const char *name;
	u64 (*get)(void);
};

static u64 ks_get_vms(void)
{
	return atomic_long_read(&ks_nr_vms);
}

static u64 ks_get_vcpus(void)
{
	return atomic_long_read(&ks_nr_vcpus);
}

static u64 ks_get_files(void)
{
	return atomic_long_read(&ks_nr_files);
}

static u64 ks_get_vm_bytes(void)
{
	return ks_vm_state_size();
}

static u64 ks_get_vcpu_bytes(void)
{
	return ks_vcpu_state_size();
}

static u64 ks_get_counter_pages(void)
{
	return ks_counter_pages();
}

static u64 ks_get_bytes(void)
{
	return ks_state_bytes();
}

static const struct ks_debug_file ks_debug_files[] = {
	{ "vms", ks_get_vms },
	{ "vcpus", ks_get_vcpus },
	{ "files", ks_get_files },
	{ "vm_bytes", ks_get_vm_bytes },
	{ "vcpu_bytes", ks_get_vcpu_bytes },
	{ "counter_pages", ks_get_counter_pages },
	{ "bytes", ks_get_bytes },
};

static int ks_debug_get(void *data, u64 *val)
{
	const struct ks_debug_file *f = data;

	*val = f->get();
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(ks_debug_fops, ks_debug_get, NULL, "%llu\n");

static struct dentry *ks_debug_dir;

void ks_debugfs_init(void)
{
	unsigned int i;

	ks_debug_dir = debugfs_create_dir(KBUILD_MODNAME, NULL);
	for (i = 0; i < ARRAY_SIZE(ks_debug_files); i++)
		debugfs_create_file_unsafe(ks_debug_files[i].name, 0444,
					   ks_debug_dir,
					   (void *)&ks_debug_files[i],
					   &ks_debug_fops);
	ks_fault_debugfs_init(ks_debug_dir);
}

void ks_debugfs_exit(void)
{
	debugfs_remove_recursive(ks_debug_dir);
}
