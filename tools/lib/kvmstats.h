/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libkvmstats: reader for the KVM binary statistics fd (KVM_GET_STATS_FD).
 *
 * One parser for the whole project: the kvm-statsfd command, the unit tests
 * and the selftests all go through kvmstats_open()/kvmstats_parse(), so a
 * malformed stats file is judged the same way everywhere.
 *
 * Error convention: functions return 0 or a negative errno.  -EBADMSG means
 * the stats file itself is malformed, -EINVAL a bad argument;
 * kvmstats_errmsg() then gives a one-line human readable reason.
 *
 * The man page libkvmstats(3) documents every function.
 */
#ifndef KVMSTATS_H
#define KVMSTATS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/kvm.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Older uapi headers lack some of these; the values are ABI. */
#ifndef KVM_GET_STATS_FD
#define KVM_GET_STATS_FD		_IO(KVMIO, 0xce)
#endif
#ifndef KVM_STATS_TYPE_LINEAR_HIST
#define KVM_STATS_TYPE_LINEAR_HIST	(0x3 << KVM_STATS_TYPE_SHIFT)
#endif
#ifndef KVM_STATS_TYPE_LOG_HIST
#define KVM_STATS_TYPE_LOG_HIST		(0x4 << KVM_STATS_TYPE_SHIFT)
#endif
#ifndef KVM_STATS_UNIT_BOOLEAN
#define KVM_STATS_UNIT_BOOLEAN		(0x4 << KVM_STATS_UNIT_SHIFT)
#endif

/* Limits beyond which a header is considered absurd rather than large. */
#define KVMSTATS_MAX_NAME_SIZE		4096u
#define KVMSTATS_MAX_NUM_DESC		65536u
/*
 * Bounds on what we allocate because a file says so.  KVM's largest files
 * are a few KiB of each (a module-loaded vCPU: 21 KiB of descriptors,
 * 4.6 KiB of data); a file declaring more is refused, not believed.
 */
#define KVMSTATS_MAX_DESC_BYTES		(4u << 20)
#define KVMSTATS_MAX_DATA_BYTES		(1u << 20)

/* Wire sizes; do not use sizeof() of the uapi structs (headers differ). */
#define KVMSTATS_HDR_SIZE		24u
#define KVMSTATS_DESC_FIXED		16u

/*
 * One statistic.  Descriptors are only ever handed out by pointer
 * (kvmstats_desc_at(), kvmstats_find()): fields may be added at the end
 * in a later 1.x.
 */
struct kvmstats_desc {
	uint32_t flags;		/* raw descriptor flags */
	int16_t exponent;
	uint16_t size;		/* number of u64 values (buckets) */
	uint32_t offset;	/* byte offset inside the data block */
	uint32_t bucket_size;
	/*
	 * type, unit and base are the masked flag values, so they compare
	 * directly against the uapi macros: d->unit == KVM_STATS_UNIT_SECONDS.
	 */
	unsigned int type, unit, base;
	const char *name;	/* NUL-terminated, owned by struct kvmstats */
};

/*
 * A handle on one stats file: opaque, so that what it keeps can change
 * without breaking programs built against an older libkvmstats.so.1.
 * kvmstats_new() makes an empty one, kvmstats_open() (or _open_from(),
 * _parse()) fills it, kvmstats_close() empties it again for reuse, and
 * kvmstats_free() closes and frees it.
 *
 * Threads: a handle is not locked.  Calls on different handles may run
 * in parallel; calls on one handle must not, except that the const
 * functions (kvmstats_find(), _value(), _desc_at(), ...) may run in
 * parallel with each other, not with kvmstats_refresh().  Everything
 * else in the library keeps no state.
 *
 * The fd given to kvmstats_open() belongs to the handle once that call
 * succeeds (kvmstats_close() and kvmstats_free() close it); on failure it
 * is still the caller's.  kvmstats_open_from() never takes its fd.
 */
struct kvmstats;

/* The version of this header; the library's soname is libkvmstats.so.1. */
#define KVMSTATS_VERSION_MAJOR		1
#define KVMSTATS_VERSION_MINOR		3

/* An empty handle, or NULL (errno ENOMEM). */
struct kvmstats *kvmstats_new(void);
/* kvmstats_close(), then free the handle itself.  NULL is a no-op. */
void kvmstats_free(struct kvmstats *s);

/*
 * Open/parse, first closing what the handle held.  On failure the handle
 * is empty and kvmstats_errmsg() says why.
 */
int kvmstats_open(struct kvmstats *s, int stats_fd);
int kvmstats_open_from(struct kvmstats *s, int vm_or_vcpu_fd);
int kvmstats_parse(struct kvmstats *s, const void *buf, size_t len);
void kvmstats_close(struct kvmstats *s);

/*
 * Reload the data block.  One pread of the whole block; or, where the
 * file lets part of it be mapped (kvmstats_mapped()), that part is copied
 * from the mapping with no system call and only the rest is pread.  The
 * first refresh of a handle made by kvmstats_open() maps it.  -EIO on a
 * short read.
 */
int kvmstats_refresh(struct kvmstats *s);

/*
 * Bytes of the data block that kvmstats_refresh() reads from a read-only
 * mapping of the stats fd, 0 if none (yet); the part's byte offset in the
 * data block goes to *data_off (if not NULL).  The first
 * kvmstats_refresh() maps what the file offers, not kvmstats_open(): a
 * handle read once costs the module no pages (a VM's counters move into
 * pages at its first mapping).  kvm_statsfd's vCPU files offer their own
 * stats, and say where they lie in /proc/self/fdinfo/<fd>
 * (Documentation/stats-fd.rst); other files (VM files, KVM's own) refuse
 * mmap and are read by pread.  The mapping stays valid, with its last
 * values, after the VM is gone.
 */
size_t kvmstats_mapped(const struct kvmstats *s, uint64_t *data_off);

/*
 * What the handle holds.  kvmstats_errmsg(): a one-line reason for the
 * last failure, "" if none (never NULL).  kvmstats_fd(): the stats fd,
 * -1 if none (kvmstats_parse()), still owned by the handle.
 * kvmstats_id(): the file's id string ("kvm-1234", "kvm-vcpu-0"), NULL
 * if empty.  kvmstats_desc_at(): the i-th descriptor in file order, NULL
 * if i >= kvmstats_num_desc().  kvmstats_data(): the data block as last
 * read, kvmstats_data_size() bytes.  Pointers stay valid until
 * kvmstats_close() or _free(); kvmstats_refresh() changes what data
 * points to, not where.
 */
const char *kvmstats_errmsg(const struct kvmstats *s);
int kvmstats_fd(const struct kvmstats *s);
const char *kvmstats_id(const struct kvmstats *s);
unsigned int kvmstats_num_desc(const struct kvmstats *s);
const struct kvmstats_desc *kvmstats_desc_at(const struct kvmstats *s,
					     unsigned int i);
const uint64_t *kvmstats_data(const struct kvmstats *s);
size_t kvmstats_data_size(const struct kvmstats *s);

/* The descriptor named name, NULL if none (binary search). */
const struct kvmstats_desc *kvmstats_find(const struct kvmstats *s,
					  const char *name);
/* i-th u64 of a stat; 0 if i >= d->size. */
uint64_t kvmstats_value(const struct kvmstats *s,
			const struct kvmstats_desc *d, unsigned int i);

/*
 * Names.  Each accepts either the masked flag value (KVM_STATS_UNIT_SECONDS)
 * or the plain field index (2); "unknown" for anything else.
 */
const char *kvmstats_type_name(unsigned int t);
const char *kvmstats_unit_name(unsigned int u);
const char *kvmstats_base_name(unsigned int b);

/* True for LINEAR_HIST and LOG_HIST. */
int kvmstats_is_hist(const struct kvmstats_desc *d);

/*
 * Bucket i (0-based) covers [*lo, *hi); the last bucket is open-ended and
 * reports *hi == UINT64_MAX.  Returns -EINVAL for non-histograms or
 * i >= d->size.
 */
int kvmstats_bucket_range(const struct kvmstats_desc *d, unsigned int i,
			  uint64_t *lo, uint64_t *hi);

/* Multiplier from a raw value to the base unit (s, bytes, cycles). */
double kvmstats_scale(const struct kvmstats_desc *d);

/*
 * Human readable "12.3 ms", "1.5 GiB", "42", "true".  Returns the
 * snprintf()-style length; buf is always NUL-terminated when len > 0.
 */
int kvmstats_format(const struct kvmstats_desc *d, uint64_t raw,
		    char *buf, size_t len);

/*
 * The stat's name with KVM_STATSFD_VM_SUM_PREFIX ("vcpus_") dropped: a
 * VM file serves each of the module's vCPU stats again as its vCPUs' sum
 * under that prefix, so that no name is in both kinds of file (libvirt
 * needs that).  kvmstats_stem() gives the vCPU stat's name for both, the
 * name itself for any other stat; the functions below that judge a stat
 * by name go by its stem.  Since 1.3.
 */
const char *kvmstats_stem(const struct kvmstats_desc *d);

/*
 * The module's exit-reason histograms (Documentation/exit-reasons.rst):
 * exit_reasons_svm (120 buckets), exit_reasons_vmx (81), and on arm64
 * exit_reasons_arm64 (64: trap exits by exception class) and
 * exit_kinds_arm64 (5: every exit by the kind KVM's world switch returns;
 * since 1.2).  Which one d is, judged by name, type, size and
 * bucket_size; KVMSTATS_EXIT_NONE for anything else.
 */
enum {
	KVMSTATS_EXIT_NONE, KVMSTATS_EXIT_SVM, KVMSTATS_EXIT_VMX,
	KVMSTATS_EXIT_ARM64, KVMSTATS_EXIT_ARM64_KIND
};

int kvmstats_exit_reason_kind(const struct kvmstats_desc *d);

/*
 * Name of bucket i of such a histogram into buf: the kernel's own string
 * from SVM_EXIT_REASONS/VMX_EXIT_REASONS ("io", "npf", "hlt", "PF excp",
 * "IO_INSTRUCTION"); "code_0x0a7"/"reason_70" for codes the kernel's table
 * lacks; "other" for the last bucket.  arm64: the exception class's name
 * ("HVC64", "SYS64", "DABT_LOW"), "EC_0x0b" for an unallocated one; the
 * kinds "IRQ", "SERROR", "TRAP", "ILLEGAL", "other".  Returns the
 * snprintf()-style length, or -1 (buf == "") if d is not an exit-reason
 * histogram or i is out of range.
 */
int kvmstats_exit_reason_name(const struct kvmstats_desc *d, unsigned int i,
			      char *buf, size_t len);

/*
 * Vendor-neutral classes of exits, the same on SVM and VMX: "io", "npf"
 * (nested page fault: SVM NPF, VMX EPT violation and misconfiguration),
 * "msr", "hlt", "intr" (the module's own latency classes), then "nmi",
 * "exception", "cpuid", ... and "other" (Documentation/exit-reasons.rst).
 * Classes are numbered 0 .. kvmstats_exit_class_count() - 1, always in
 * the same order; kvmstats_exit_class_name() gives a class's name, NULL
 * past the end.  kvmstats_exit_reason_class() gives the class of bucket i
 * of an exit-reason histogram (kvmstats_exit_reason_kind()), or -1 if d is
 * not one or i is out of range.  Since 1.1 (KVMSTATS_1.1).  arm64's
 * exception classes have classes too since 1.2 (a stage-2 abort is "npf",
 * a system-register trap "msr", WFI/WFE "hlt", HVC/SMC "hypercall");
 * exit_kinds_arm64's buckets have none (-1): they overlap the classes.
 */
unsigned int kvmstats_exit_class_count(void);
const char *kvmstats_exit_class_name(unsigned int c);
int kvmstats_exit_reason_class(const struct kvmstats_desc *d, unsigned int i);

/*
 * The module's userspace_exits histogram: bucket i counts returns to
 * userspace with kvm_run.exit_reason i, the last bucket every larger one.
 * kvmstats_userspace_exit_name() writes "KVM_EXIT_IO" (the uapi name),
 * "KVM_EXIT_<n>" for a number without one, "other" for the last bucket.
 */
int kvmstats_is_userspace_exits(const struct kvmstats_desc *d);
int kvmstats_userspace_exit_name(const struct kvmstats_desc *d,
				 unsigned int i, char *buf, size_t len);

/*
 * Length of the valid UTF-8 sequence at p (1 to 4), or 0 for an invalid
 * one (RFC 3629: no overlongs, surrogates or code points past U+10FFFF).
 * Stops at a NUL.  The one validator of the tools.
 */
int kvmstats_utf8_len(const unsigned char *p);

/*
 * Discovery: the VMs of this host, from the KVM fds their processes hold
 * (/proc/PID/fd links anon_inode:kvm-vm and anon_inode:kvm-vcpu:N), and
 * their stats, through duplicates taken with pidfd_getfd() (root or
 * ptrace access to the VMM).  Nothing changes VM state: the only ioctls
 * issued ask for stats fds.  Every fd taken is checked to be the KVM fd
 * the scan saw before it is used: the VMM may be hostile.
 *
 * The structs are filled by the library and read by the caller; their
 * layout is part of libkvmstats.so.1 (arrays of them are returned), so a
 * field added to them comes with a new soname.
 */
struct kvmstats_vcpu {
	int id;			/* N of anon_inode:kvm-vcpu:N */
	int fdnum;		/* vCPU fd in the VMM, -1 if only a stats fd was seen */
	int stats_fdnum;	/* the VMM's kvm-vcpu-stats:N fd, or -1 */
	struct kvmstats *st;	/* its stats; NULL until opened */
	int open;		/* st is open */
};

/* One VMM process and the one VM attributed to it. */
struct kvmstats_vm {
	pid_t pid;
	char comm[64];
	char *guest;		/* QEMU's -name, NULL if none */
	char uuid[40];		/* QEMU's -uuid, "" if none */
	uid_t uid;		/* owner of /proc/PID */
	int nr_vm_fds;		/* > 1: vCPUs attributed to the first VM */
	int vm_fdnum;		/* first kvm-vm fd, or -1 */
	int vm_stats_fdnum;	/* first kvm-vm-stats fd the VMM holds, or -1 */
	int nr_vcpus;
	struct kvmstats_vcpu *vcpus;	/* sorted by id */
	struct kvmstats *vm;	/* the VM's own stats; NULL until opened */
	int vm_open;		/* vm is open */
	int vm_unavailable;	/* see KVMSTATS_VM_UNAVAILABLE */
	int pidfd;		/* opened before /proc/PID/fd is read */
	char err[256];		/* first error while opening stats */
};

/*
 * Scan /proc for processes holding KVM VM or vCPU fds; only_pid > 0
 * limits the scan to that process.  Returns how many were found, in a
 * malloc()ed array *out sorted by pid (free with kvmstats_vms_free()), or
 * -errno.  Processes the caller may not look into are skipped and
 * counted in *denied (if not NULL).  No stats are opened yet.
 */
int kvmstats_discover(struct kvmstats_vm **out, pid_t only_pid,
		      unsigned int *denied);

/*
 * Incremental discovery, for an agent that looks every few seconds
 * (since 1.1).  kvmstats_discover_again() returns what kvmstats_discover()
 * does, but remembers, in sc, each process it found holding no KVM fd
 * (or could not look into), and does not look into it again (open its
 * /proc/PID/fd and read every link) for recheck_ms: only its start time
 * is read, from /proc/PID/stat, so that a new process under a reused pid
 * is looked into at once.  VMMs are looked into every time (their vCPUs
 * come and go).  So a new process is found by the next call, and one
 * that starts using KVM after it was first seen (a VMM that the shell
 * that started it exec()ed into, say) within recheck_ms.  *denied counts
 * remembered refusals too.  kvmstats_scan_counts() tells how many
 * processes the last call looked into and how many it skipped.  A scan
 * state is not thread-safe: one caller at a time.
 */
struct kvmstats_scan;
struct kvmstats_scan *kvmstats_scan_new(unsigned int recheck_ms);
void kvmstats_scan_free(struct kvmstats_scan *sc);
int kvmstats_discover_again(struct kvmstats_scan *sc, struct kvmstats_vm **out,
			    unsigned int *denied);
void kvmstats_scan_counts(const struct kvmstats_scan *sc,
			  unsigned int *looked, unsigned int *skipped);

/*
 * Open the stats of vm's VM and of each vCPU (only_vcpu -1), of vCPU
 * only_vcpu only, or of the VM only (KVMSTATS_VM_ONLY).  The stats fd
 * comes from KVM_GET_STATS_FD on a duplicate of the VMM's fd; KVM answers
 * that only in the VMM, so then from kvm_statsfd.ko's /dev/kvm-statsfd,
 * then from a stats fd the VMM holds.  Returns 0 if everything asked for
 * opened, else -errno with the first problem in vm->err (what opened
 * stays open).  May be called again: only what is not open is tried.
 */
int kvmstats_vm_open(struct kvmstats_vm *vm, int only_vcpu);
#define KVMSTATS_VM_ONLY	(-2)

/*
 * Why vm->vm_unavailable is set: KVM refused the VM's stats fd (EIO),
 * there is no kvm_statsfd.ko to ask and the VMM keeps no VM stats fd to
 * borrow; QEMU 8.1 and later keep one per vCPU only.  Not counted as a
 * failure when a vCPU's stats opened: KVM's VM-wide stats are no sum of
 * the vCPUs', so nothing stands in for them.
 */
#define KVMSTATS_VM_UNAVAILABLE	"the VM's own stats are unavailable: KVM refuses KVM_GET_STATS_FD from outside the VMM process (EIO), the VMM keeps no VM stats fd to borrow (QEMU keeps none: 8.1 and later keep one per vCPU only) and there is no /dev/kvm-statsfd (load kvm_statsfd.ko)"

/* True once the VMM process has exited (its pidfd polls readable). */
int kvmstats_vm_exited(const struct kvmstats_vm *vm);
/*
 * Close vm's stats and pidfd.  Stats fds hold a reference on the VM: close
 * them promptly once the VMM has exited, or its memory stays allocated.
 */
void kvmstats_vm_close(struct kvmstats_vm *vm);
/* Close and free what kvmstats_discover() returned. */
void kvmstats_vms_free(struct kvmstats_vm *vms, int n);

/*
 * Whether fd is a KVM fd of the kind what names, by /proc/self/fd/FD's
 * link: "kvm-vm", "kvm-vm-stats", and, with a trailing ':' taking a
 * number, "kvm-vcpu:" and "kvm-vcpu-stats:".  Names only KVM gives.
 */
int kvmstats_fd_is(int fd, const char *what);

#ifdef __cplusplus
}
#endif

#endif /* KVMSTATS_H */
