// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Finding VMs run by other processes and borrowing their KVM fds.
 *
 * A VMM's fds show up in /proc/PID/fd as anon_inode:kvm-vm and
 * anon_inode:kvm-vcpu:N.  We take duplicates with pidfd_getfd() (root or
 * ptrace access) and ask for a stats fd: KVM's ioctl, which answers only
 * the VMM itself, then kvm_statsfd.ko's /dev/kvm-statsfd, then a stats fd
 * the VMM keeps.  Nothing here changes VM state: the only ioctls issued
 * ask for stats fds, and stats fds are only pread().
 *
 * Limitation: a vCPU fd does not say which VM it belongs to.  The common
 * case is one VM per process; when a process holds several VM fds we say
 * so (nr_vm_fds) and attribute all its vCPUs to the first VM fd.
 *
 * In the library, not the tools, because this is the security-critical
 * part every agent would otherwise copy: the pidfd taken before the scan
 * and every borrowed fd checked to be what the scan saw.  No globals:
 * what a scan could not look into goes back to the caller.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "kvm_statsfd/stats_dev.h"

/* Same number on every architecture that has them (since 5.3/5.6). */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open		434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd		438
#endif

#define CMDLINE_MAX		65536

static int sys_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int sys_pidfd_getfd(int pidfd, int fd)
{
	return (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
}

/* Append one (possibly ",,"-escaped) element of a QEMU option string. */
static const char *next_elem(const char *p, const char *end, char *out,
			     size_t outlen)
{
	size_t n = 0;

	while (p < end && *p) {
		if (*p == ',') {
			if (p + 1 < end && p[1] == ',') {
				p++;	/* ",," is a literal comma */
			} else {
				p++;
				break;
			}
		}
		if (n + 1 < outlen)
			out[n++] = *p;
		p++;
	}
	out[n] = '\0';
	return p;
}

static char *parse_name_opt(const char *v, const char *end)
{
	char elem[256], *guest = NULL;
	int first = 1;

	while (v < end && *v) {
		v = next_elem(v, end, elem, sizeof(elem));
		/* QEMU's implied key: a first element without '=' is guest. */
		if (!strncmp(elem, "guest=", 6) || (first && !strchr(elem, '='))) {
			free(guest);
			guest = strdup(strncmp(elem, "guest=", 6) ? elem : elem + 6);
		}
		first = 0;
	}
	if (guest && !*guest) {
		free(guest);
		guest = NULL;
	}
	return guest;
}

static int is_name_opt(const char *arg, size_t n)
{
	return (n == 5 && !memcmp(arg, "-name", 5)) ||
	       (n == 6 && !memcmp(arg, "--name", 6));
}

char *kvmstats__guest_name(const char *cmdline, size_t len)
{
	const char *p = cmdline, *end = cmdline + len, *nul;
	const char *val = NULL, *val_end = NULL;
	size_t n;

	while (p < end) {
		/* The last argument may be cut short without its NUL. */
		nul = memchr(p, '\0', end - p);
		n = nul ? (size_t)(nul - p) : (size_t)(end - p);
		if (is_name_opt(p, n) && nul && nul + 1 < end) {
			/* The last -name wins, as in QEMU. */
			val = nul + 1;
			val_end = memchr(val, '\0', end - val);
			if (!val_end)
				val_end = end;
		}
		p += n + 1;
	}
	return val ? parse_name_opt(val, val_end) : NULL;
}

static void read_small(pid_t pid, const char *file, char *buf, size_t len,
		       size_t *got)
{
	char path[64];
	ssize_t n;
	int fd;

	*got = 0;
	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		*got = n;
	}
}

static char *cmdline_opt(const char *cmdline, size_t len, const char *opt)
{
	const char *p = cmdline, *end = cmdline + len, *nul, *val = NULL;
	size_t n, m = strlen(opt);

	while (p < end) {
		nul = memchr(p, '\0', end - p);
		if (!nul)
			break;	/* cut short: no complete value follows */
		n = (size_t)(nul - p);
		if (n == m && !memcmp(p, opt, m) && nul + 1 < end &&
		    memchr(nul + 1, '\0', end - nul - 1))
			val = nul + 1;
		p = nul + 1;
	}
	return val ? strdup(val) : NULL;
}

static void read_labels(struct kvmstats_vm *p)
{
	char *cmd, *uuid;
	size_t n;

	read_small(p->pid, "comm", p->comm, sizeof(p->comm), &n);
	if (n && p->comm[n - 1] == '\n')
		p->comm[n - 1] = '\0';
	cmd = malloc(CMDLINE_MAX);
	if (!cmd)
		return;
	read_small(p->pid, "cmdline", cmd, CMDLINE_MAX, &n);
	p->guest = kvmstats__guest_name(cmd, n);
	uuid = cmdline_opt(cmd, n, "-uuid");
	if (!uuid)
		uuid = cmdline_opt(cmd, n, "--uuid");
	if (uuid)
		snprintf(p->uuid, sizeof(p->uuid), "%s", uuid);
	free(uuid);
	free(cmd);
}

/*
 * Room for element @n of an array of @n elements of @size bytes at @p:
 * capacity doubles from 8 (the public structs keep no capacity: it is
 * the next power of two of the count), so a VM of N vCPUs or a host of N
 * VMs costs log N reallocations, not N.  NULL when out of memory, @p
 * then still valid.
 */
static void *grow(void *p, size_t n, size_t size)
{
	if (n && (n < 8 || (n & (n - 1))))
		return p;
	return realloc(p, (n ? 2 * n : 8) * size);
}

static struct kvmstats_vcpu *get_vcpu(struct kvmstats_vm *p, int id)
{
	struct kvmstats_vcpu *v;
	int i;

	for (i = 0; i < p->nr_vcpus; i++)
		if (p->vcpus[i].id == id)
			return &p->vcpus[i];
	v = grow(p->vcpus, p->nr_vcpus, sizeof(*v));
	if (!v)
		return NULL;
	p->vcpus = v;
	v = &v[p->nr_vcpus++];
	memset(v, 0, sizeof(*v));
	v->id = id;
	v->fdnum = -1;
	v->stats_fdnum = -1;
	return v;
}

/* "kvm-vcpu:12" -> 12 after prefix; -1 if malformed. */
static int suffix_id(const char *s)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*s))
		return -1;
	v = strtol(s, &end, 10);
	return (*end || v > 0x7fffffff) ? -1 : (int)v;
}

static void note_fd(struct kvmstats_vm *p, int fdnum, const char *link)
{
	struct kvmstats_vcpu *v;
	int id;

	if (strncmp(link, "anon_inode:kvm-", 15))
		return;
	link += 15;
	if (!strcmp(link, "vm")) {
		if (!p->nr_vm_fds++)
			p->vm_fdnum = fdnum;
	} else if (!strcmp(link, "vm-stats")) {
		if (p->vm_stats_fdnum < 0)
			p->vm_stats_fdnum = fdnum;
	} else if (!strncmp(link, "vcpu:", 5) &&
		   (id = suffix_id(link + 5)) >= 0) {
		v = get_vcpu(p, id);
		if (v && v->fdnum < 0)
			v->fdnum = fdnum;
	} else if (!strncmp(link, "vcpu-stats:", 11) &&
		   (id = suffix_id(link + 11)) >= 0) {
		v = get_vcpu(p, id);
		if (v && v->stats_fdnum < 0)
			v->stats_fdnum = fdnum;
	}
}

static int cmp_vcpu(const void *a, const void *b)
{
	const struct kvmstats_vcpu *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static int has_vcpu_fd(const struct kvmstats_vm *p)
{
	int i;

	for (i = 0; i < p->nr_vcpus; i++)
		if (p->vcpus[i].fdnum >= 0)
			return 1;
	return 0;
}

/*
 * Fill p from /proc/PID/fd.  Returns 1 for a VMM, 0 otherwise.  Holding
 * only stats fds does not make a VMM: another kvm-statsfd looks like that.
 */
static int scan_pid(struct kvmstats_vm *p, pid_t pid, unsigned int *denied)
{
	char path[64], link[128];
	struct dirent *de;
	struct stat st;
	DIR *d;
	ssize_t n;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->vm_fdnum = -1;
	p->vm_stats_fdnum = -1;
	/*
	 * The pidfd first: the fd numbers read below then belong to the
	 * process it names, unless that one exited and the pid was reused
	 * during the scan, which the check after it catches.
	 */
	p->pidfd = sys_pidfd_open(pid);
	if (p->pidfd < 0)
		return 0;	/* gone, or no pidfd support */
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st)) {
		close(p->pidfd);
		return 0;
	}
	p->uid = st.st_uid;
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	if (!d) {
		if (errno == EACCES || errno == EPERM)
			(*denied)++;
		close(p->pidfd);
		return 0;	/* gone, or not ours to look at */
	}
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		n = readlinkat(dirfd(d), de->d_name, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		note_fd(p, atoi(de->d_name), link);
	}
	closedir(d);
	if ((!p->nr_vm_fds && !has_vcpu_fd(p)) || kvmstats_vm_exited(p)) {
		free(p->vcpus);
		close(p->pidfd);
		return 0;
	}
	qsort(p->vcpus, p->nr_vcpus, sizeof(*p->vcpus), cmp_vcpu);
	read_labels(p);
	return 1;
}

static int add_pid(struct kvmstats_vm **vms, int *n, pid_t pid,
		   unsigned int *denied)
{
	struct kvmstats_vm p, *nv;

	if (!scan_pid(&p, pid, denied))
		return 0;
	nv = grow(*vms, *n, sizeof(**vms));
	if (!nv) {
		free(p.vcpus);
		free(p.guest);
		close(p.pidfd);
		return -ENOMEM;
	}
	*vms = nv;
	nv[(*n)++] = p;
	return 0;
}

static int cmp_pid(const void *a, const void *b)
{
	const struct kvmstats_vm *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* --- incremental discovery ------------------------------------------------ */

/* A process that held no KVM fd, or that we may not look into. */
struct scan_entry {
	pid_t pid;		/* 0: free slot */
	unsigned long long start;	/* /proc/PID/stat starttime */
	unsigned long long next_ms;	/* look into it again from then on */
	unsigned int gen;	/* the last call that saw the pid */
	int denied;
};

struct kvmstats_scan {
	struct scan_entry *tab;	/* open addressing, by pid */
	unsigned int cap;	/* power of 2, or 0 */
	unsigned int used;	/* slots with a pid */
	unsigned int gen;
	unsigned int recheck_ms;
	unsigned int looked, skipped;
};

static unsigned long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The start time of pid (clock ticks after boot, field 22 of
 * /proc/PID/stat, which follows the comm in parentheses: the comm may hold
 * spaces and parentheses, so the fields are counted from the last ')').
 * 0 if it cannot be read.
 */
static unsigned long long start_time(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* After ") ": field 3 (state) ... field 22 (starttime). */
	for (field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		v = strtoull(p + 1, NULL, 10);
	return v;
}

static unsigned int slot_of(const struct kvmstats_scan *sc, pid_t pid)
{
	unsigned int i = ((unsigned int)pid * 2654435761u) & (sc->cap - 1);

	while (sc->tab[i].pid && sc->tab[i].pid != pid)
		i = (i + 1) & (sc->cap - 1);
	return i;
}

static int scan_grow(struct kvmstats_scan *sc)
{
	unsigned int cap = sc->cap ? 2 * sc->cap : 1024, i, k;
	struct scan_entry *old = sc->tab, *tab;

	tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	sc->tab = tab;
	k = sc->cap;
	sc->cap = cap;
	for (i = 0; i < k; i++)
		if (old[i].pid)
			tab[slot_of(sc, old[i].pid)] = old[i];
	free(old);
	return 0;
}

/* Forget the pids the last call did not see (rebuilt without them). */
static int scan_sweep(struct kvmstats_scan *sc)
{
	struct scan_entry *old = sc->tab, *tab;
	unsigned int i;

	if (!sc->cap)
		return 0;
	tab = calloc(sc->cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	sc->tab = tab;
	sc->used = 0;
	for (i = 0; i < sc->cap; i++) {
		if (old[i].pid && old[i].gen == sc->gen) {
			tab[slot_of(sc, old[i].pid)] = old[i];
			sc->used++;
		}
	}
	free(old);
	return 0;
}

struct kvmstats_scan *kvmstats_scan_new(unsigned int recheck_ms)
{
	struct kvmstats_scan *sc = calloc(1, sizeof(*sc));

	if (sc)
		sc->recheck_ms = recheck_ms;
	return sc;
}

void kvmstats_scan_free(struct kvmstats_scan *sc)
{
	if (!sc)
		return;
	free(sc->tab);
	free(sc);
}

void kvmstats_scan_counts(const struct kvmstats_scan *sc,
			  unsigned int *looked, unsigned int *skipped)
{
	if (looked)
		*looked = sc ? sc->looked : 0;
	if (skipped)
		*skipped = sc ? sc->skipped : 0;
}

/*
 * One pid of a call: skipped while remembered, else looked into (and
 * remembered if it is no VMM).
 */
static int again_pid(struct kvmstats_scan *sc, struct kvmstats_vm **vms,
		     int *n, pid_t pid, unsigned long long now,
		     unsigned int *denied)
{
	unsigned long long start = start_time(pid);
	unsigned int i, before = *denied;
	struct scan_entry *e;
	int was = *n, ret;

	if (!start)
		return 0;	/* gone */
	if ((sc->used + 1) * 2 > sc->cap && scan_grow(sc))
		return -ENOMEM;
	i = slot_of(sc, pid);
	e = &sc->tab[i];
	if (e->pid && e->start == start && now < e->next_ms) {
		e->gen = sc->gen;
		*denied += e->denied;
		sc->skipped++;
		return 0;
	}
	sc->looked++;
	ret = add_pid(vms, n, pid, denied);
	if (ret || *n > was) {
		/* A VMM: looked into every time, remembered or not. */
		if (e->pid) {
			e->next_ms = 0;
			e->gen = sc->gen;
		}
		return ret;
	}
	if (!e->pid)
		sc->used++;
	e->pid = pid;
	e->start = start;
	e->denied = *denied > before;
	e->gen = sc->gen;
	/*
	 * Spread the rechecks over the interval, so that they do not all
	 * fall on one call: from 1/2 to 1 times recheck_ms.
	 */
	e->next_ms = now + sc->recheck_ms / 2 +
		     ((unsigned int)pid * 2654435761u) % (sc->recheck_ms / 2 + 1);
	return 0;
}

/*
 * Both discoveries: every process in /proc (or only_pid), each looked
 * into (sc NULL) or as sc remembers it.
 */
static int walk_proc(struct kvmstats_scan *sc, struct kvmstats_vm **out,
		     pid_t only_pid, unsigned int *denied)
{
	unsigned long long now = now_ms();
	struct kvmstats_vm *vms = NULL;
	unsigned int ignored;
	struct dirent *de;
	int n = 0, ret = 0;
	pid_t pid;
	DIR *d;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!denied)
		denied = &ignored;
	*denied = 0;
	if (sc) {
		sc->gen++;
		sc->looked = 0;
		sc->skipped = 0;
	}
	if (only_pid > 0) {
		ret = add_pid(&vms, &n, only_pid, denied);
		goto out;
	}
	d = opendir("/proc");
	if (!d)
		return -errno;
	while (!ret && (de = readdir(d))) {
		pid = (pid_t)atoi(de->d_name);
		if (pid <= 0 || pid == getpid())
			continue;
		ret = sc ? again_pid(sc, &vms, &n, pid, now, denied) :
			   add_pid(&vms, &n, pid, denied);
	}
	closedir(d);
	if (!ret && sc)
		ret = scan_sweep(sc);
	if (n > 1)	/* qsort(NULL, 0, ...) is undefined */
		qsort(vms, n, sizeof(*vms), cmp_pid);
out:
	if (ret) {
		kvmstats_vms_free(vms, n);
		return ret;
	}
	*out = vms;
	return n;
}

int kvmstats_discover(struct kvmstats_vm **out, pid_t only_pid,
		      unsigned int *denied)
{
	return walk_proc(NULL, out, only_pid, denied);
}

int kvmstats_discover_again(struct kvmstats_scan *sc, struct kvmstats_vm **out,
			    unsigned int *denied)
{
	return sc ? walk_proc(sc, out, 0, denied) : -EINVAL;
}

static const char *explain(int err)
{
	switch (err) {
	case -EPERM:
		return "permission denied (needs root or ptrace access to the VMM)";
	case -ESRCH:
		return "process exited";
	case -EBADF:
		return "the fd is no longer what it was when /proc was read (closed or replaced)";
	case -EIO:
		return "KVM refused KVM_GET_STATS_FD from outside the VMM process (EIO), the VMM has no stats fd of its own to borrow, and there is no " KVM_STATSFD_DEV_PATH " (load kvm_statsfd.ko)";
	case -EACCES:
		return KVM_STATSFD_DEV_PATH " refused: reading another process's VM needs CAP_SYS_PTRACE or CAP_PERFMON";
	case -ENOTTY:
	case -EINVAL:
		return "KVM_GET_STATS_FD not supported by this kernel";
	default:
		return strerror(-err);
	}
}

static void set_err(struct kvmstats_vm *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void set_err(struct kvmstats_vm *p, const char *fmt, ...)
{
	va_list ap;

	if (p->err[0])
		return;		/* keep the first, it is usually the cause */
	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
}

/*
 * Prefer a fresh stats fd from KVM_GET_STATS_FD (it carries the module's
 * extra stats).  Upstream KVM answers ioctls only from the process that
 * created the VM, so fall back to a stats fd the VMM already holds (QEMU
 * opens one per vCPU); pread does not move its shared file offset.
 */
int kvmstats_fd_is(int fd, const char *what)
{
	char path[64], link[128], want[80];
	size_t n;
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	len = readlink(path, link, sizeof(link) - 1);
	if (len <= 0 || !*what)
		return 0;
	link[len] = '\0';
	snprintf(want, sizeof(want), "anon_inode:%s", what);
	n = strlen(want);
	if (want[n - 1] != ':')
		return !strcmp(link, want);
	/* "kvm-vcpu:" takes a vCPU number after it. */
	return !strncmp(link, want, n) && link[n] &&
	       strspn(link + n, "0123456789") == strlen(link + n);
}

/*
 * KVM answers KVM_GET_STATS_FD only in the VM's creator (EIO elsewhere);
 * kvm_statsfd.ko's device answers for a borrowed VM or vCPU fd @fd
 * (include/kvm_statsfd/stats_dev.h).  A stats fd, or -errno: -EIO again
 * where there is no device (no module, or an older one).
 */
static int stats_dev_get(int fd)
{
	int dev = open(KVM_STATSFD_DEV_PATH, O_RDONLY | O_CLOEXEC);
	int ret;

	if (dev < 0)
		return -EIO;
	ret = ioctl(dev, KVM_STATSFD_GET_STATS_FD, fd);
	if (ret < 0)
		ret = -errno;
	close(dev);
	return ret;
}

/*
 * The fd numbers come from a scan of a process that may be hostile (any
 * user with /dev/kvm runs one): what the numbers name can change between
 * the scan and pidfd_getfd().  So every fd taken is checked to be what the
 * scan said, a KVM VM or vCPU fd or a KVM stats fd, before it is used.
 */
static int get_stats_fd(struct kvmstats_vm *p, int fdnum, int stats_fdnum,
			int vcpu)
{
	int dup, fd = -1, err = -ENOENT;

	if (fdnum >= 0) {
		dup = sys_pidfd_getfd(p->pidfd, fdnum);
		if (dup < 0) {
			err = -errno;
		} else if (!kvmstats_fd_is(dup, vcpu ? "kvm-vcpu:" : "kvm-vm")) {
			err = -EBADF;	/* swapped since the scan */
			close(dup);
		} else {
			fd = ioctl(dup, KVM_GET_STATS_FD, NULL);
			if (fd < 0 && errno == EIO)
				fd = stats_dev_get(dup);
			else if (fd < 0)
				fd = -errno;
			if (fd < 0)
				err = fd;
			close(dup);
		}
	}
	if (fd < 0 && stats_fdnum >= 0 && err != -EPERM) {
		fd = sys_pidfd_getfd(p->pidfd, stats_fdnum);
		if (fd < 0) {
			err = -errno;
		} else if (!kvmstats_fd_is(fd, vcpu ? "kvm-vcpu-stats:" : "kvm-vm-stats")) {
			close(fd);
			fd = -1;
			err = -EBADF;
		}
	}
	return fd >= 0 ? fd : err;
}

static int open_one(struct kvmstats_vm *p, int fdnum, int stats_fdnum,
		    struct kvmstats **st, const char *what, int vcpu)
{
	int fd, ret;

	fd = get_stats_fd(p, fdnum, stats_fdnum, vcpu);
	if (fd == -EIO && !vcpu)
		return fd;	/* vm_unavailable: kvmstats_vm_open() judges it */
	if (fd < 0) {
		set_err(p, "pid %d %s: %s", (int)p->pid, what, explain(fd));
		return fd;
	}
	if (!*st)
		*st = kvmstats_new();
	if (!*st) {
		close(fd);
		set_err(p, "pid %d %s: out of memory", (int)p->pid, what);
		return -ENOMEM;
	}
	ret = kvmstats_open(*st, fd);
	if (ret) {
		close(fd);
		set_err(p, "pid %d %s: malformed stats: %s", (int)p->pid,
			what, kvmstats_errmsg(*st));
		kvmstats_free(*st);
		*st = NULL;
	}
	return ret;
}

int kvmstats_vm_open(struct kvmstats_vm *p, int only_vcpu)
{
	char what[32];
	int i, ret, first = 0, vcpus_open = 0;

	if (p->pidfd < 0)
		p->pidfd = sys_pidfd_open(p->pid);
	if (p->pidfd < 0) {
		ret = -errno;
		set_err(p, "pid %d: pidfd_open: %s", (int)p->pid, explain(ret));
		return ret;
	}
	/* With only_vcpu the VM-wide stats are not shown: do not ask. */
	if ((only_vcpu == -1 || only_vcpu == KVMSTATS_VM_ONLY) && !p->vm_open &&
	    (p->vm_fdnum >= 0 || p->vm_stats_fdnum >= 0)) {
		ret = open_one(p, p->vm_fdnum, p->vm_stats_fdnum, &p->vm, "VM", 0);
		p->vm_open = !ret;
		/* Judged below, once the vCPUs' outcome is known. */
		p->vm_unavailable = ret == -EIO;
		if (ret != -EIO)
			first = ret;
	}
	for (i = 0; i < p->nr_vcpus; i++) {
		struct kvmstats_vcpu *v = &p->vcpus[i];

		if (only_vcpu == KVMSTATS_VM_ONLY)
			break;
		if ((only_vcpu >= 0 && v->id != only_vcpu) || v->open) {
			vcpus_open += v->open;
			continue;
		}
		snprintf(what, sizeof(what), "vCPU %d", v->id);
		ret = open_one(p, v->fdnum, v->stats_fdnum, &v->st, what, 1);
		v->open = !ret;
		vcpus_open += v->open;
		if (!first)
			first = ret;
	}
	/*
	 * The VM refused with nothing to borrow and no vCPU read either
	 * (a VMM that keeps no stats fds, QEMU 7.2): that is the failure.
	 */
	if (p->vm_unavailable && !first && !vcpus_open &&
	    only_vcpu != KVMSTATS_VM_ONLY) {
		set_err(p, "pid %d VM: %s", (int)p->pid, explain(-EIO));
		first = -EIO;
	}
	return first;
}

int kvmstats_vm_exited(const struct kvmstats_vm *p)
{
	struct pollfd pfd = { .fd = p->pidfd, .events = POLLIN };

	if (p->pidfd < 0)
		return kill(p->pid, 0) && errno == ESRCH;
	/* A pidfd polls readable once the process has exited. */
	return poll(&pfd, 1, 0) > 0;
}

/*
 * Stats fds hold a reference on the VM: close them promptly once the VMM
 * is gone so we do not keep its memory alive.
 */
void kvmstats_vm_close(struct kvmstats_vm *p)
{
	int i;

	kvmstats_free(p->vm);
	p->vm = NULL;
	p->vm_open = 0;
	for (i = 0; i < p->nr_vcpus; i++) {
		kvmstats_free(p->vcpus[i].st);
		p->vcpus[i].st = NULL;
		p->vcpus[i].open = 0;
	}
	if (p->pidfd >= 0)
		close(p->pidfd);
	p->pidfd = -1;
}

void kvmstats_vms_free(struct kvmstats_vm *vms, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		kvmstats_vm_close(&vms[i]);
		free(vms[i].vcpus);
		free(vms[i].guest);
	}
	free(vms);
}
