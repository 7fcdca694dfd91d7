// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only: the cost of what runs on KVM's exit path per VM exit, driven
 * from the guest kernel itself (no nested VM has to run, so the count is
 * exact under QEMU's -icount, where the TSC advances once per instruction).
 *
 * /sys/kernel/debug/ks_probe_driver/probe_cost: write "VCPU_FD ITERATIONS";
 * read back "iterations exit_entry exit entry plain loop" in TSC ticks for
 * all iterations: exit_entry = kvm_exit then kvm_entry dispatched as KVM
 * dispatches them, exit and entry alone, plain = one u64 increment (what
 * KVM's own exits counter costs), loop = the empty loop, to subtract.
 * KVM's dispatch: the tracepoint's static key, then its static call with
 * the first probe's data, as trace_kvm_exit() makes it.  With one probe the
 * static call is that probe itself, which may need its data (perf's, and
 * so BPF's, do); with several it is the iterator, which reads the data of
 * each.
 *
 * The vCPU is locked and loaded (vcpu_load) as during KVM_RUN, so that the
 * probes may read its exit state (a VMX VMCS must be loaded), and the loops
 * run with interrupts off in chunks, so that nothing else is counted.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kvm_host.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/static_call.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <asm/msr.h>
#include <asm/processor.h>

#include "kvm_trace.h"

#define KS_ISA_VMX	1
#define KS_ISA_SVM	2
/* Iterations per interrupts-off chunk. */
#define KS_CHUNK	1000

enum { R_ITERS, R_EXIT_ENTRY, R_EXIT, R_ENTRY, R_PLAIN, R_LOOP, R_NR };

static DEFINE_MUTEX(ks_lock);
static u64 ks_result[R_NR];
static struct dentry *ks_dir;

static u64 ks_plain_counter;

static u32 ks_isa(void)
{
	return boot_cpu_data.x86_vendor == X86_VENDOR_INTEL ? KS_ISA_VMX :
							      KS_ISA_SVM;
}

/*
 * One tracepoint hit as KVM's trace_kvm_exit()/trace_kvm_entry() make it
 * (__DO_TRACE_CALL; interrupts are off, so without its preempt guard).
 */
#define KS_DISPATCH(name, ...)						\
	do {								\
		struct tracepoint_func *f;				\
									\
		if (static_key_false(&__tracepoint_##name.key)) {	\
			f = rcu_dereference_raw(__tracepoint_##name.funcs); \
			if (f)						\
				static_call(tp_func_##name)(f->data,	\
							   __VA_ARGS__); \
		}							\
	} while (0)

/* TSC ticks of @n iterations of @what, interrupts off. */
static u64 ks_measure(struct kvm_vcpu *vcpu, int what, u32 n)
{
	u32 isa = ks_isa(), i;
	unsigned long flags;
	u64 t0, t1;

	local_irq_save(flags);
	t0 = rdtsc_ordered();
	for (i = 0; i < n; i++) {
		switch (what) {
		case R_EXIT_ENTRY:
			KS_DISPATCH(kvm_exit, vcpu, isa);
			KS_DISPATCH(kvm_entry, vcpu, false);
			break;
		case R_EXIT:
			KS_DISPATCH(kvm_exit, vcpu, isa);
			break;
		case R_ENTRY:
			KS_DISPATCH(kvm_entry, vcpu, false);
			break;
		case R_PLAIN:
			WRITE_ONCE(ks_plain_counter, ks_plain_counter + 1);
			break;
		default:
			barrier();
		}
	}
	t1 = rdtsc_ordered();
	local_irq_restore(flags);
	return t1 - t0;
}

static void ks_run(struct kvm_vcpu *vcpu, u64 iters)
{
	u64 done, n;
	int what;

	memset(ks_result, 0, sizeof(ks_result));
	ks_result[R_ITERS] = iters;
	mutex_lock(&vcpu->mutex);
	vcpu_load(vcpu);
	for (done = 0; done < iters; done += n) {
		n = min_t(u64, iters - done, KS_CHUNK);
		for (what = R_EXIT_ENTRY; what < R_NR; what++)
			ks_result[what] += ks_measure(vcpu, what, n);
		/* Between chunks, with the vCPU loaded: as KVM_RUN would. */
		cond_resched();
	}
	vcpu_put(vcpu);
	mutex_unlock(&vcpu->mutex);
}

/* A KVM vCPU file: its dentry is "kvm-vcpu:N" (kvm_main.c names it). */
static struct kvm_vcpu *ks_vcpu_of_file(struct file *file)
{
	const char *name = file->f_path.dentry->d_name.name;

	if (strncmp(name, "kvm-vcpu:", 9) || !file->private_data)
		return NULL;
	return file->private_data;
}

static ssize_t ks_cost_write(struct file *f, const char __user *ubuf,
			     size_t len, loff_t *ppos)
{
	unsigned long long iters;
	struct kvm_vcpu *vcpu;
	struct file *file;
	char buf[64];
	int fd;

	if (len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%d %llu", &fd, &iters) != 2 || !iters ||
	    iters > 100000000ULL)
		return -EINVAL;
	file = fget(fd);
	if (!file)
		return -EBADF;
	vcpu = ks_vcpu_of_file(file);
	if (!vcpu) {
		fput(file);
		return -EINVAL;
	}
	mutex_lock(&ks_lock);
	ks_run(vcpu, iters);
	mutex_unlock(&ks_lock);
	fput(file);
	return len;
}

static ssize_t ks_cost_read(struct file *f, char __user *ubuf, size_t len,
			    loff_t *ppos)
{
	char buf[160];
	int n;

	mutex_lock(&ks_lock);
	n = scnprintf(buf, sizeof(buf), "%llu %llu %llu %llu %llu %llu\n",
		      ks_result[R_ITERS], ks_result[R_EXIT_ENTRY],
		      ks_result[R_EXIT], ks_result[R_ENTRY],
		      ks_result[R_PLAIN], ks_result[R_LOOP]);
	mutex_unlock(&ks_lock);
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
