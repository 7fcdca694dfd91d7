// SPDX-License-Identifier: GPL-2.0
/*
 * The module's own fault points (include/kvm_statsfd/fault.h): built only
 * with KS_FAULT_POINTS=1, for the tests.
 *
 * One task at a time is armed, as the kernel's fail-nth arms one task: the
 * writer of debugfs' fail_nth, or the task that loads the module with
 * fault_nth=N.  Fault points that other tasks reach (a vCPU of another
 * process, the free workqueue) do not count, so a test's N names the same
 * call from run to run.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>

#include <kvm_statsfd/fault.h>

static int fault_nth;
module_param(fault_nth, int, 0444);
MODULE_PARM_DESC(fault_nth,
		 "test builds only: the Nth fault point the loading task reaches fails (0: none); read after the load, what was left of N (0: the fault was injected)");

/* What is left of N for the armed task; 0: nothing armed, or injected. */
static atomic_t ks_fault_left = ATOMIC_INIT(0);
static pid_t ks_fault_pid;

bool ks_fault(void)
{
	if (likely(!atomic_read(&ks_fault_left)))
		return false;
	if (READ_ONCE(ks_fault_pid) != task_pid_nr(current))
		return false;
	return atomic_dec_if_positive(&ks_fault_left) == 0;
}

static void ks_fault_arm(int n)
{
	atomic_set(&ks_fault_left, 0);
	WRITE_ONCE(ks_fault_pid, task_pid_nr(current));
	atomic_set(&ks_fault_left, max(n, 0));
}

void ks_fault_load_begin(void)
{
	if (fault_nth)
		ks_fault_arm(fault_nth);
}

/*
 * Whatever the load left armed does not outlive it; the parameter says
 * whether the fault was injected, as /proc/thread-self/fail-nth would.
 */
void ks_fault_load_end(void)
{
	if (fault_nth)
		fault_nth = atomic_read(&ks_fault_left);
	atomic_set(&ks_fault_left, 0);
}

static int ks_fail_nth_get(void *data, u64 *val)
{
	*val = atomic_read(&ks_fault_left);
	return 0;
}

static int ks_fail_nth_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	ks_fault_arm(val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(ks_fail_nth_fops, ks_fail_nth_get, ks_fail_nth_set,
			 "%llu\n");

void ks_fault_debugfs_init(struct dentry *dir)
{
	debugfs_create_file_unsafe("fail_nth", 0600, dir, NULL,
				   &ks_fail_nth_fops);
}
