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

#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/kvm_statsfd.h>
#include <kvm_statsfd/layout.h>
#include <kvm_statsfd/version.h>

static char *mode = "superset";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode,
		 "superset: the kernel's native stats, then the module's (default); own: only the module's");

bool ks_superset = true;

/* /sys/module/kvm_statsfd/objects/: live objects, for leak checks. */
static ssize_t ks_objects_show(struct kobject *kobj,
			       struct kobj_attribute *attr, char *buf)
{
	atomic_long_t *n;

	if (!strcmp(attr->attr.name, "vms"))
		n = &ks_nr_vms;
	else if (!strcmp(attr->attr.name, "vcpus"))
		n = &ks_nr_vcpus;
	else
		n = &ks_nr_files;
	return sysfs_emit(buf, "%ld\n", atomic_long_read(n));
}

static struct kobj_attribute ks_attr_vms = __ATTR(vms, 0444, ks_objects_show, NULL);
static struct kobj_attribute ks_attr_vcpus = __ATTR(vcpus, 0444, ks_objects_show, NULL);
static struct kobj_attribute ks_attr_files = __ATTR(files, 0444, ks_objects_show, NULL);

static struct attribute *ks_object_attrs[] = {
	&ks_attr_vms.attr,
	&ks_attr_vcpus.attr,
	&ks_attr_files.attr,
	NULL,
};

static const struct attribute_group ks_object_group = {
	.name = "objects",
	.attrs = ks_object_attrs,
};

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

	ret = ks_kvm_symbols_init();
	if (ret)
		return ret;
	ret = ks_layout_init();
	if (ret)
		return ret;
	ret = ks_counters_init();
	if (ret)
		goto out_layout;
	ret = ks_stats_fd_init();
	if (ret)
		goto out_counters;
	ret = sysfs_create_group(&THIS_MODULE->mkobj.kobj, &ks_object_group);
	if (ret)
		goto out_stats_fd;
	ret = ks_hook_destroy_init();
	if (ret)
		goto out_sysfs;
	ret = ks_probes_init();
	if (ret)
		goto out_destroy;
	ret = ks_hook_init();
	if (ret)
		goto out_probes;

	pr_info("version %s loaded (%s stats, %s)\n", KVM_STATSFD_VERSION,
		ks_superset ? "native and own" : "own", ks_exit_stat_name());
	return 0;

out_probes:
	ks_probes_exit();
out_destroy:
	ks_hook_destroy_exit();
out_sysfs:
	sysfs_remove_group(&THIS_MODULE->mkobj.kobj, &ks_object_group);
out_stats_fd:
	ks_stats_fd_exit();
out_counters:
	ks_counters_exit();
out_layout:
	ks_layout_exit();
	return ret;
}

static void __exit kvm_statsfd_exit(void)
{
	ks_hook_exit();
	ks_probes_exit();
	ks_hook_destroy_exit();
	sysfs_remove_group(&THIS_MODULE->mkobj.kobj, &ks_object_group);
	ks_stats_fd_exit();
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
