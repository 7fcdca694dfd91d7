// SPDX-License-Identifier: GPL-2.0
/*
 * kvm-statsfd: KVM binary statistics served by a loadable module.
 *
 * Module entry and exit: the order in which the module's parts are set up
 * and torn down lives here, and nowhere else.  Setup goes from the inside
 * out (find KVM's pieces, build the layouts, then state, then the hooks
 * that make it reachable); teardown is the exact reverse.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/init.h>
#include <linux/kobject.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include <kvm_statsfd/clock.h>
#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/layout.h>
#include <kvm_statsfd/version.h>

static char *mode = "superset";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode,
		 "superset: the kernel's native stats, then the module's (default); own: only the module's");

/*
 * The default groups fit four vCPUs' counters in a page (1024 bytes on
 * SVM): the histograms of latency, class_latency and userspace_exits
 * (272, 1280 and 392 bytes) are asked for (Documentation/stats-fd.rst).
 */
static char *stats = KS_DEFAULT_STATS;
module_param(stats, charp, 0444);
MODULE_PARM_DESC(stats,
		 "the module's stat groups to serve: all, none, or a comma-separated list of exit_reasons, latency, class_latency, userspace_exits, io_msr, guest_time (default: exit_reasons,io_msr,guest_time)");

/*
 * KVM answers a VM's or vCPU's ioctls only in the process that created the
 * VM.  Telemetry agents get other processes' stats fds through
 * /dev/kvm-statsfd (stats_dev.c), which needs nothing of KVM's traced.
 * cross_process=1 also answers KVM_GET_STATS_FD itself on a borrowed VM
 * or vCPU fd, for readers that only know that ioctl, under the device's
 * permission check; it costs a hook on KVM's ioctl handlers, KVM_RUN's
 * included.
 */
bool ks_cross_process;
module_param_named(cross_process, ks_cross_process, bool, 0444);
MODULE_PARM_DESC(cross_process,
		 "answer KVM_GET_STATS_FD on a VM or vCPU fd held outside the VM's creator, for callers with CAP_SYS_PTRACE or CAP_PERFMON (default: off; /dev/kvm-statsfd serves them without it)");

bool ks_superset = true;

/*
 * /sys/module/kvm_statsfd/objects/: live objects, for leak checks, and
 * the bytes each one takes.
 */
static ssize_t ks_objects_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	const char *name = attr->attr.name;
	atomic_long_t *n;

	if (!strcmp(name, "vm_bytes"))
		return sysfs_emit(buf, "%u\n", ks_vm_state_size());
	if (!strcmp(name, "vcpu_bytes"))
		return sysfs_emit(buf, "%u\n", ks_vcpu_state_size());
	if (!strcmp(name, "file_bytes"))
		return sysfs_emit(buf, "%u\n", ks_stats_file_size());
	if (!strcmp(name, "counter_pages"))
		return sysfs_emit(buf, "%lu\n", ks_counter_pages());
	if (!strcmp(name, "bytes"))
		return sysfs_emit(buf, "%lu\n", ks_state_bytes());
	if (!strcmp(name, "vms"))
		n = &ks_nr_vms;
	else if (!strcmp(name, "vcpus"))
		n = &ks_nr_vcpus;
	else
		n = &ks_nr_files;
	return sysfs_emit(buf, "%ld\n", atomic_long_read(n));
}

#define KS_OBJECT_ATTR(_name) \
	static struct kobj_attribute ks_attr_##_name = \
		__ATTR(_name, 0444, ks_objects_show, NULL)

KS_OBJECT_ATTR(vms);
KS_OBJECT_ATTR(vcpus);
KS_OBJECT_ATTR(files);
KS_OBJECT_ATTR(vm_bytes);
KS_OBJECT_ATTR(vcpu_bytes);
KS_OBJECT_ATTR(file_bytes);
KS_OBJECT_ATTR(counter_pages);
KS_OBJECT_ATTR(bytes);

static struct attribute *ks_object_attrs[] = {
	&ks_attr_vms.attr,
	&ks_attr_vcpus.attr,
	&ks_attr_files.attr,
	&ks_attr_vm_bytes.attr,
	&ks_attr_vcpu_bytes.attr,
	&ks_attr_file_bytes.attr,
	&ks_attr_counter_pages.attr,
	&ks_attr_bytes.attr,
	NULL,
};

static const struct attribute_group ks_object_group = {
	.attrs = ks_object_attrs,
};

/*
 * A kobject of our own: attributes placed straight on the module's kobject
 * would be called as module_attributes, with another signature.
 */
static struct kobject *ks_objects_kobj;

static int ks_sysfs_init(void)
{
	int ret;

	ks_objects_kobj = kobject_create_and_add("objects",
						 &THIS_MODULE->mkobj.kobj);
	if (!ks_objects_kobj)
		return -ENOMEM;
	ret = sysfs_create_group(ks_objects_kobj, &ks_object_group);
	if (ret)
		kobject_put(ks_objects_kobj);
	return ret;
}

static void ks_sysfs_exit(void)
{
	sysfs_remove_group(ks_objects_kobj, &ks_object_group);
	kobject_put(ks_objects_kobj);
}

static int __init kvm_statsfd_init(void)
{
	int ret;

	if (!strcmp(mode, "superset")) {
		ks_superset = true;
	} else if (!strcmp(mode, "own")) {
		ks_superset = false;
	} else {
		pr_err("mode=%s: expected superset or own\n", mode);
		return -EINVAL;
	}

	ret = ks_groups_init(stats);
	if (ret)
		return ret;
	ks_clock_init();
	ret = ks_kvm_symbols_init();
	if (ret)
		return ret;
	ret = ks_layout_init();
	if (ret)
		return ret;
	ret = ks_counters_init();
	if (ret)
		goto out_layout;
	ret = ks_sysfs_init();
	if (ret)
		goto out_counters;
	ret = ks_hook_destroy_init();
	if (ret)
		goto out_sysfs;
	ret = ks_probes_init();
	if (ret)
		goto out_destroy;
	ret = ks_hook_init();
	if (ret)
		goto out_probes;
	ret = ks_stats_dev_init();
	if (ret)
		goto out_hook;

	pr_info("version %s loaded (%s stats, groups %s, %s, clock %s)\n",
		KVM_STATSFD_VERSION, ks_superset ? "native and own" : "own",
		stats, ks_exit_stat_name(), ks_clock_name());
	return 0;

out_hook:
	ks_hook_exit();
out_probes:
	ks_probes_exit();
out_destroy:
	ks_hook_destroy_exit();
out_sysfs:
	ks_sysfs_exit();
out_counters:
	ks_counters_exit();
out_layout:
	ks_layout_exit();
	return ret;
}

static void __exit kvm_statsfd_exit(void)
{
	ks_stats_dev_exit();
	ks_hook_exit();
	ks_probes_exit();
	ks_hook_destroy_exit();
	ks_sysfs_exit();
	ks_counters_exit();
	ks_layout_exit();
	pr_info("unloaded\n");
}

module_init(kvm_statsfd_init);
module_exit(kvm_statsfd_exit);

MODULE_LICENSE("GPL");
MODULE_AUTHOR("The kvm-statsfd developers");
MODULE_DESCRIPTION("KVM_GET_STATS_FD with extended statistics for every VM and vCPU");
MODULE_VERSION(KVM_STATSFD_VERSION);
