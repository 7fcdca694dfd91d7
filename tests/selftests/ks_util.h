/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kvm-statsfd selftests: a minimal KVM VM with guest
 * code of known work, and loading/unloading kvm_statsfd.ko.
 */
#ifndef KS_UTIL_H
#define KS_UTIL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/kvm.h>

#define KS_GUEST_MEM_SIZE	0x10000
#define KS_GUEST_CODE_ADDR	0x1000
#define KS_MAX_VCPUS		64

struct ks_vcpu {
	int fd;
	struct kvm_run *run;
	size_t run_size;
};

struct ks_vm {
	int kvm_fd;
	int fd;
	void *mem;
	int nr_vcpus;
	struct ks_vcpu vcpu[KS_MAX_VCPUS];
};

/*
 * The guest code below, per architecture: x86 (ks_util_x86.c) runs in real
 * mode, where a port write exits to userspace (KVM_EXIT_IO), CPUID is an
 * exit KVM handles itself and HLT stops the vCPU (KVM_EXIT_HLT: there is
 * no in-kernel irqchip).  arm64 (ks_util_arm64.c) runs at EL1 with the MMU
 * off: an MMIO write exits to userspace (KVM_EXIT_MMIO), an ID register
 * read traps to KVM, which answers it itself (ESR class SYS64), and the
 * stop is an HVC that the VM's SMCCC filter forwards to userspace
 * (KVM_EXIT_HYPERCALL).  Not WFI, which blocks in KVM, nor PSCI
 * SYSTEM_OFF, which stops every vCPU of the VM.  Each run after a stop
 * stops again, as HLT does.  Tests name these, not the architecture's.
 */
#if defined(__aarch64__)
#define KS_EXIT_USER		KVM_EXIT_MMIO
#define KS_EXIT_STOP		KVM_EXIT_HYPERCALL
/* KVM's own vCPU stats counting them (the arm64 and x86 names). */
#define KS_STAT_USER_EXITS	"mmio_exit_user"
#define KS_STAT_STOP_EXITS	"hvc_exit_stat"
/* The module's own stat counting the exit to userspace. */
#define KS_STAT_OWN_USER_EXITS	"mmio_writes"
#else
#define KS_EXIT_USER		KVM_EXIT_IO
#define KS_EXIT_STOP		KVM_EXIT_HLT
#define KS_STAT_USER_EXITS	"io_exits"
#define KS_STAT_STOP_EXITS	"halt_exits"
#define KS_STAT_OWN_USER_EXITS	"io_out_exits"
#endif

/*
 * Create a VM with KS_GUEST_MEM_SIZE bytes of memory at guest physical 0,
 * copy @code to KS_GUEST_CODE_ADDR and create @nr_vcpus vCPUs that start
 * there (as ks_arch_vcpu_init() sets them up).  Returns 0 or -errno.
 */
int ks_vm_create(struct ks_vm *vm, const void *code, size_t code_len,
		 int nr_vcpus);
void ks_vm_destroy(struct ks_vm *vm);
/* KVM_RUN once; returns the exit reason or -errno. */
int ks_vcpu_run(struct ks_vcpu *vcpu);
/* The architecture's part of ks_vm_create() for the VM. */
int ks_arch_vm_init(struct ks_vm *vm);
/*
 * Set up vCPU @vcpu_fd of VM @vm_fd as ks_vm_create() does (also for vCPUs
 * made outside struct ks_vm), with @count in the register that
 * ks_code_cpuid_n_out_hlt counts down (x86: si, arm64: x5).  0 or -errno.
 */
int ks_vcpu_setup(int vm_fd, int vcpu_fd, uint64_t count);
/* Send a vCPU back to KS_GUEST_CODE_ADDR, to run its code again. */
int ks_vcpu_restart(int vcpu_fd);

/*
 * Guest code: one exit to userspace (x86: "out 0x10, al" with al = 0x42;
 * arm64: a store of 0x42 to KS_MMIO_ADDR), then the stop.
 */
extern const unsigned char ks_code_out_hlt[];
extern const size_t ks_code_out_hlt_len;

#define KS_MMIO_ADDR	0x20000	/* arm64: no memslot there */

/* Guest code: the exit to userspace, forever. */
extern const unsigned char ks_code_out_forever[];
extern const size_t ks_code_out_forever_len;

/*
 * Guest code: the exit to userspace, a one-byte store to guest memory at
 * KS_DATA_ADDR (a test can take that page away from the host mapping),
 * then the stop.
 */
#define KS_DATA_ADDR	0x8000
extern const unsigned char ks_code_out_store_hlt[];
extern const size_t ks_code_out_store_hlt_len;

/*
 * Guest code into @buf (at most 32 bytes): the exit to userspace @n times
 * (1 to 65535), then the stop.  Returns its length.
 */
size_t ks_code_outs(unsigned char *buf, unsigned int n);

/*
 * Guest code: CPUID as many times as ks_vcpu_setup()'s @count (at least
 * once), the exit to userspace, then the stop.
 */
extern const unsigned char ks_code_cpuid_n_out_hlt[];
extern const size_t ks_code_cpuid_n_out_hlt_len;

#if defined(__x86_64__) || defined(__i386__)
/*
 * Guest code of known work: KS_WORK_OUT port writes (port 0x10),
 * KS_WORK_IN port reads (0x11), KS_WORK_MSR MSR reads (APIC_BASE), one
 * MMIO write and one MMIO read (at 0x20000, which no memory backs), then
 * hlt.
 */
#define KS_WORK_OUT	37
#define KS_WORK_IN	23
#define KS_WORK_MSR	11
extern const unsigned char ks_code_known_work[];
extern const size_t ks_code_known_work_len;
#endif

/* Path of kvm_statsfd.ko: $KVM_STATSFD_KO, or the build tree default. */
const char *ks_module_path(void);
/* Load the module file at @path with @params; returns 0 or -errno. */
int ks_insmod(const char *path, const char *params);
/*
 * Load the module with @params ("" for none); returns 0 or -errno.  With
 * stats=all unless @params says otherwise: most tests check every group.
 * cross_process stays as the module's default (off: its stats files are
 * made where KVM makes its own) unless @params says cross_process=1.
 */
int ks_module_load(const char *params);
/* The same with the module's default stat groups unless @params says. */
int ks_module_load_default(const char *params);
/*
 * 1 if the kernel traces @func (tracefs enabled_functions lists it), 0 if
 * not, -errno if there is no such list.
 */
int ks_traced(const char *func);
/* Unload it; returns 0 or -errno (EBUSY while in use). */
int ks_module_unload(void);
/* 1 when kvm_statsfd is loaded, 0 when not. */
int ks_module_loaded(void);

/*
 * Guest code: for each of the @nr_seg counts, run CPUID (leaf 0; arm64: the
 * ID register read) that many times (exits KVM handles in the kernel) and
 * then the exit to userspace; after the last segment, the stop.  Writes at most @len bytes to
 * @buf and returns the code length, or 0 if it does not fit.
 */
size_t ks_code_cpuid_segments(unsigned char *buf, size_t len,
			      const unsigned int *counts, int nr_seg);

/*
 * Guest code into @c (at most 32 bytes): CPUID @n times, the exit to
 * userspace, and again, forever: every KVM_RUN returns with KS_EXIT_USER
 * after exactly n + 1 exits.  Returns its length.
 */
size_t ks_code_cpuid_out_loop(unsigned char *c, unsigned int n);
/* Guest code: CPUID (leaf 0) in an endless loop; never exits to userspace. */
extern const unsigned char ks_code_cpuid_forever[];
extern const size_t ks_code_cpuid_forever_len;

/*
 * Hardware exit codes of this host's vendor, and the module's histogram.
 * On arm64 the buckets are exception classes: cpuid is SYS64, io
 * DABT_LOW, hlt HVC64 (the guest code's three kinds of exit) and other
 * 0, the class of IRQ exits, which exit_reasons_arm64 does not count.
 */
struct ks_exit_codes {
	int svm;		/* 1 on AMD/Hygon, 0 on Intel and arm64 */
	const char *stat;	/* "exit_reasons_svm", "_vmx" or "_arm64" */
	unsigned int buckets;	/* 120, 81 or 64 */
	unsigned int cpuid, io, hlt, other;	/* dense indexes */
	/*
	 * The stat whose buckets sum to KVM's "exits": the histogram itself
	 * on x86, where every exit has a reason; exit_kinds_arm64 on arm64,
	 * where an interrupt's exit has no exception class.
	 */
	const char *total;
	unsigned int total_buckets;
};
void ks_host_exit_codes(struct ks_exit_codes *c);
/*
 * The exits the module counted on the vCPU (or, summed, the VM) of stats
 * fd @fd, to compare with KVM's "exits": the sum of @ec's total stat.
 * -errno (as a negative value) if it cannot be read.
 */
int64_t ks_exits_counted(int fd, const struct ks_exit_codes *ec);

/*
 * /sys/kernel/debug/kvm_statsfd/@name ("vms", "vcpus", "files"): the
 * value, or -errno.
 */
long ks_objects_read(const char *name);
/*
 * Poll ks_objects_read(@name) until it is <= @target or @timeout_ms pass;
 * returns the last value read.
 */
long ks_objects_wait_le(const char *name, long target, int timeout_ms);
/*
 * How long the tests wait for a destroyed VM's states to be freed (KVM's
 * destruction, an RCU or SRCU grace period, a work item), or for an rmmod
 * to get through once they are.  Milliseconds on hardware; seconds on the
 * debug kernel under TCG with make check's other guests beside it, where
 * the tests' old 5 s bounds were the first thing to fail.  Only a failure
 * waits this long.
 */
#define KS_FREE_WAIT_MS	30000
/*
 * How long the tests wait for a running vCPU to make progress: its first
 * exit, its state, a count that grows, a return from KVM_RUN.  The same
 * slow guests; the same rule: each wait ends at its first success.
 */
#define KS_PROGRESS_WAIT_MS	30000

/* The loaded module's mode parameter ("superset"/"own"), or -errno. */
int ks_module_mode(char *buf, size_t len);

/* What the module looked like before a test changed it. */
struct ks_module_state {
	int was_loaded;
	char mode[32];
	/* Every parameter it was loaded with, as insmod arguments. */
	char params[256];
};
void ks_module_save(struct ks_module_state *st);
/*
 * Make sure the module is loaded in @mode ("superset" or "own") with every
 * stat group: load it if it is not, reload it if it runs otherwise.  0 or
 * -errno.
 */
int ks_module_ensure(const char *mode);
/*
 * Make sure the module is loaded exactly as ks_module_load_default(@params)
 * would load it ("" = the module's defaults: superset, KS_DEFAULT_GROUPS,
 * no cross_process): reload only if it runs with other parameters, so a
 * fixture's variants pay one reload each, not one per case.  0 or -errno.
 */
int ks_module_ensure_params(const char *params);
/* The module's default stat groups, as its "stats" parameter reads. */
#define KS_DEFAULT_GROUPS "exit_reasons,io_msr,guest_time"
/* Unload, retrying a while if it is still in use.  0 or -errno. */
int ks_module_unload_wait(int timeout_ms);
/*
 * In a teardown: put the module back as @st saw it, or, where the program
 * loaded it for all its cases (ks_util.c), leave it to the next case's
 * setup and the program's end.  0 or -errno.
 */
int ks_module_restore(const struct ks_module_state *st);
/*
 * Reload the module with @params, as ks_module_load() loads it, for a
 * test that needs another load than its fixture's (which restores the
 * fixture's after it).  0 or -errno.
 */
int ks_module_reload(const char *params);

/*
 * KS_STRESS_SCALE (1 to 100, default 1): how much longer and harder the
 * race tests run (make stress).
 */
int ks_stress_scale(void);

/*
 * Errors of a test's threads: how many, and the first one's text, for
 * the main thread to report.  Initialise with
 * { .lock = PTHREAD_MUTEX_INITIALIZER }.
 */
struct ks_errs {
	pthread_mutex_t lock;
	long count;
	char first[256];
};

void ks_errs_add(struct ks_errs *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Close every fd from @first up (test teardown: nothing may keep a ref). */
void ks_close_from(int first);

/* pread exactly @len bytes at @off: 0, -EIO on a short read, or -errno. */
int ks_pread_exact(int fd, void *buf, size_t len, off_t off);
/*
 * The mapping a vCPU stats fd of the module offers, from
 * /proc/self/fdinfo/@fd: where its part of the data block starts
 * (kvm_stats_mmap_offset), how many bytes (kvm_stats_mmap_size) and where
 * in the mapping they lie (kvm_stats_mmap_page_offset).  0, or -ENOENT
 * when the file has none of these lines (-EBADMSG: only some).
 */
int ks_fdinfo_map(int fd, uint64_t *off, uint64_t *size, uint64_t *page_off);
/* pread from offset 0 until EOF into @buf (@cap bytes); bytes or -errno. */
ssize_t ks_read_whole(int fd, void *buf, size_t cap);

struct kvmstats;
struct kvmstats_desc;

/*
 * Stat @name of a parsed stats file.  In a VM file, the name of one of the
 * module's vCPU stats finds the VM's sum of it (KVM_STATSFD_VM_SUM_PREFIX
 * and the name), so that a case asks a VM and its vCPUs the same way; that
 * the names do differ is stat_groups_test's vm_and_vcpu_names_are_disjoint.
 */
const struct kvmstats_desc *ks_find(const struct kvmstats *s,
				    const char *name);

/*
 * Read stat @name (as ks_find() finds it) from a stats fd through
 * libkvmstats (a fresh parse of a dup of @stats_fd): its first @n values
 * go to @vals, zero-filled past its size.  Returns the stat's size,
 * -ENOENT if there is no such stat, or another -errno (the library's
 * message goes to @err if not NULL).
 */
int ks_stat_read(int stats_fd, const char *name, uint64_t *vals,
		 unsigned int n, char *err, size_t err_len);

/*
 * Compare preads of [off, off + len) against @full (@size bytes, the whole
 * file), for every off in 0..@size: lengths 1..16 at every offset (every
 * alignment, crossing one u64 boundary), lengths 17..@max_len at every 7th
 * offset (still every alignment mod 8: 7 and 8 are coprime), and a few
 * large lengths at every 61st offset and the last 72.  Reads past the end
 * must be short.  TCG costs ~10 us a syscall, hence the thinning.  Returns
 * the number of reads that disagreed and describes the first in @why.
 */
long ks_sweep_reads(int fd, const unsigned char *full, size_t size,
		    size_t max_len, char *why, size_t why_len);

/*
 * 1 on a PREEMPT_RT kernel.  There the module never allocates in its
 * probes, so a vCPU counts only from when a stats fd is first opened for
 * it (Documentation/design.rst): tests of counting from creation or from
 * the first exit after load do not apply.
 */
int ks_kernel_is_rt(void);
/* 1 if the running kernel has lockdep (the debug lane's), else 0. */
int ks_kernel_has_lockdep(void);
/*
 * How long a timed race of stress_test and scale_test runs at scale 1, in
 * seconds: 4 where the kernel changes how the races can interleave or
 * watches them (PREEMPT_RT; the debug lane's lockdep, KASAN and other
 * detectors), 2 elsewhere (make check's other lanes run the same races on
 * the same paths, four kernels over).
 */
int ks_race_seconds(void);

/*
 * What the kernel itself answers to KVM_CHECK_EXTENSION(
 * KVM_CAP_BINARY_STATS_FD) on /dev/kvm, without kvm_statsfd (which makes
 * it 1): asked while the module is not loaded; if it is, it is unloaded
 * for the question and loaded back in its mode.  1 when the kernel has
 * binary stats fds of its own (5.14+), 0 when not, or -errno.  Cached.
 */
int ks_native_binary_stats(void);

/*
 * The kernel's debugfs value of stat @name of a VM this process created
 * (/sys/kernel/debug/kvm/<pid>-<vm fd>/<name>: a VM stat, or a vCPU stat
 * summed over the VM's vCPUs).  0 or -errno.
 */
int ks_debugfs_vm_stat(const struct ks_vm *vm, const char *name,
		       uint64_t *val);

/* Pass up to KS_MAX_PASS_FDS fds over a unix socket (SCM_RIGHTS). */
#define KS_MAX_PASS_FDS	8
int ks_send_fds(int sock, const int *fds, int n);
int ks_recv_fds(int sock, int *fds, int n);

/*
 * Read stats fd @fd as QEMU's query-stats does: there must be descriptors,
 * none of size 0, and their ranges must tile [0, sum of sizes * 8) exactly, one pread of that many bytes at
 * data_offset must be the whole data block, and each stat found by its
 * offset there must equal a pread of that stat alone (on a quiet VM).
 * 0, or -EBADMSG with the first problem in @why.
 */
int ks_data_block_check(int fd, char *why, size_t why_len);

/* Open fds of this process (/proc/self/fd), or -errno. */
int ks_count_fds(void);
/* CLOCK_MONOTONIC in seconds; sleep @us microseconds. */
double ks_now_s(void);
void ks_sleep_us(long us);
/* A fast pseudo-random stream: ks_rnd(&state), state from ks_rnd_seed(). */
uint64_t ks_rnd(uint64_t *s);
uint64_t ks_rnd_seed(int salt);

#endif /* KS_UTIL_H */
