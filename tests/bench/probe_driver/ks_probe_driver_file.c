// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only: the probe driver's file, /sys/kernel/debug/ks_probe_driver/
 * probe_cost, the same on every architecture: write
 * "VCPU_FD ITERATIONS [PATH [OTHER_VCPU_FD]]", read back
 * "iterations exit_entry exit entry plain loop" and what the architecture
 * adds (ks_probe_driver_<arch>.c says what each means there).  The
 * writer must be the process that created the VM.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kvm_host.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "ks_probe_driver.h"

static DEFINE_MUTEX(ks_lock);
static u64 ks_result[R_NR];
static struct dentry *ks_dir;

/* A KVM vCPU file: its dentry is "kvm-vcpu:N" (kvm_main.c names it). */
static struct kvm_vcpu *ks_vcpu_of_file(struct file *file)
{
	const char *name;

	if (!file)
		return NULL;
	name = file->f_path.dentry->d_name.name;
	if (strncmp(name, "kvm-vcpu:", 9) || !file->private_data)
		return NULL;
	return file->private_data;
}

static ssize_t ks_cost_write(struct file *f, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	struct file *file = NULL, *other = NULL;
	struct kvm_vcpu *vcpus[2];
	unsigned long long iters;
	int fd, fd2 = -1, path, ret;
	char buf[64], name[16] = "";

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	strscpy(name, ks_path_names[0], sizeof(name));
	if (sscanf(buf, "%d %llu %15s %d", &fd, &iters, name, &fd2) < 2 ||
	    !iters || iters > 100000000ULL)
		return -EINVAL;
	for (path = 0; path < ks_path_nr; path++)
		if (!strcmp(name, ks_path_names[path]))
			break;
	if (path == ks_path_nr)
		return -EINVAL;
	ret = -EINVAL;
	file = fget(fd);
	vcpus[0] = ks_vcpu_of_file(file);
	if (!vcpus[0])
		goto out;
	/*
	 * Only from the VM's own process, as KVM's vCPU ioctls (-EIO
	 * otherwise): once that process has exec()ed or exited, KVM has
	 * torn down what lives as long as its mm (arm64 frees the stage-2
	 * MMU's per-CPU last_vcpu_ran, which vcpu_load() then writes).
	 */
	if (vcpus[0]->kvm->mm != current->mm) {
		ret = -EIO;
		goto out;
	}
	vcpus[1] = vcpus[0];
	if (fd2 >= 0) {
		other = fget(fd2);
		vcpus[1] = ks_vcpu_of_file(other);
		if (!vcpus[1] || vcpus[1]->kvm != vcpus[0]->kvm ||
		    vcpus[1] == vcpus[0])
			goto out;
	}
	mutex_lock(&ks_lock);
	memset(ks_result, 0, sizeof(ks_result));
	ks_result[R_ITERS] = iters;
	ret = ks_run(vcpus, iters, path, ks_result);
	mutex_unlock(&ks_lock);
out:
	if (other)
		fput(other);
	if (file)
		fput(file);
	return ret ? ret : len;
}

static ssize_t ks_cost_read(struct file *f, char __user *ubuf, size_t len,
			    loff_t *ppos)
{
	char buf[192];
	int n;

	mutex_lock(&ks_lock);
	n = scnprintf(buf, sizeof(buf), "%llu %llu %llu %llu %llu %llu",
		      ks_result[R_ITERS], ks_result[R_EXIT_ENTRY],
		      ks_result[R_EXIT], ks_result[R_ENTRY],
		      ks_result[R_PLAIN], ks_result[R_LOOP]);
	mutex_unlock(&ks_lock);
	n += ks_arch_read_extra(buf + n, sizeof(buf) - n);
	n += scnprintf(buf + n, sizeof(buf) - n, "\n");
	return simple_read_from_buffer(ubuf, len, ppos, buf, n);
}

static const struct file_operations ks_cost_fops = {
	.owner = THIS_MODULE,
	.write = ks_cost_write,
	.read = ks_cost_read,
	.llseek = default_llseek,
};

static int __init ks_probe_driver_init(void)
{
	ks_arch_init();
	ks_dir = debugfs_create_dir("ks_probe_driver", NULL);
	debugfs_create_file("probe_cost", 0600, ks_dir, NULL, &ks_cost_fops);
	return 0;
}

static void __exit ks_probe_driver_exit(void)
{
	debugfs_remove_recursive(ks_dir);
}

module_init(ks_probe_driver_init);
module_exit(ks_probe_driver_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kvm-statsfd benchmark: drive KVM's exit-path tracepoints (test only)");
