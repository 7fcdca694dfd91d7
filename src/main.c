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
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/string.h>

#include <kvm_statsfd/clock.h>
#include <kvm_statsfd/counters.h>
#include <kvm_statsfd/fault.h>
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

static int __init ks_load(void)
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
	ks_debugfs_init();
	ret = ks_hook_destroy_init();
	if (ret)
		goto out_debugfs;
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
out_debugfs:
	ks_debugfs_exit();
	ks_counters_exit();
out_layout:
	ks_layout_exit();
	return ret;
}

static int __init kvm_statsfd_init(void)
{
	int ret;

	ks_fault_load_begin();
	ret = ks_load();
	ks_fault_load_end();
	return ret;
}

static void __exit kvm_statsfd_exit(void)
{
	ks_stats_dev_exit();
	ks_hook_exit();
	ks_probes_exit();
	ks_hook_destroy_exit();
	ks_debugfs_exit();
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
