// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark builds only (make bench builds the module with
 * KVM_STATSFD_BENCH=1; a normal build never contains this file).
 *
 * /sys/module/kvm_statsfd/bench/probe_cost: write "VCPU_FD ITERATIONS" to
 * drive the exit-path probes that many times on that vCPU, then read back
 * "iterations probe_ns probe_cycles plain_ns plain_cycles clock_ns"
 * (clock_ns: the two clock reads the probes make per exit, alone).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/file.h>
#include <linux/kobject.h>
#include <linux/kvm_host.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sysfs.h>

#include <kvm_statsfd/bench.h>
#include <kvm_statsfd/kvm_statsfd.h>

static DEFINE_MUTEX(ks_bench_lock);
static u64 ks_bench_result[6];
static struct kobject *ks_bench_kobj;

static ssize_t probe_cost_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	ssize_t n;

	mutex_lock(&ks_bench_lock);
	n = sysfs_emit(buf, "%llu %llu %llu %llu %llu %llu\n",
		       ks_bench_result[0], ks_bench_result[1],
		       ks_bench_result[2], ks_bench_result[3],
		       ks_bench_result[4], ks_bench_result[5]);
	mutex_unlock(&ks_bench_lock);
	return n;
}

static ssize_t probe_cost_store(struct kobject *kobj,
				struct kobj_attribute *attr, const char *buf,
				size_t count)
{
	unsigned long long iters;
	struct file *file;
	int fd;

	if (sscanf(buf, "%d %llu", &fd, &iters) != 2 || !iters ||
	    iters > 100000000ULL)
		return -EINVAL;
	file = fget(fd);
	if (!file)
		return -EBADF;
	/* Only a KVM vCPU fd: its ioctl handler is the one we hook. */
	if ((unsigned long)file->f_op->unlocked_ioctl != ks_kvm.vcpu_ioctl) {
		fput(file);
		return -EINVAL;
	}
	mutex_lock(&ks_bench_lock);
	ks_bench_result[0] = iters;
	ks_bench_probes(file->private_data, iters, &ks_bench_result[1],
			&ks_bench_result[2], &ks_bench_result[3],
			&ks_bench_result[4], &ks_bench_result[5]);
	mutex_unlock(&ks_bench_lock);
	fput(file);
	return count;
}

static struct kobj_attribute ks_attr_probe_cost = __ATTR_RW_MODE(probe_cost, 0600);

int ks_bench_init(void)
{
	int ret;

	ks_bench_kobj = kobject_create_and_add("bench", &THIS_MODULE->mkobj.kobj);
	if (!ks_bench_kobj)
		return -ENOMEM;
	ret = sysfs_create_file(ks_bench_kobj, &ks_attr_probe_cost.attr);
	if (ret)
		kobject_put(ks_bench_kobj);
	else
		pr_warn("benchmark build: not for production\n");
	return ret;
}

void ks_bench_exit(void)
{
	sysfs_remove_file(ks_bench_kobj, &ks_attr_probe_cost.attr);
	kobject_put(ks_bench_kobj);
}
