// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the kvm-statsfd selftests.  What differs per
 * architecture (guest code, vCPU setup, exit codes) is in ks_util_x86.c
 * and ks_util_arm64.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <dirent.h>
#include <unistd.h>

#include "internal.h"	/* white-box: reads the handle's fields */
#include "ks_util.h"
#include "kvm_statsfd/uapi.h"

static int ks_vcpu_create(struct ks_vm *vm, int id)
{
	struct ks_vcpu *vcpu = &vm->vcpu[id];
	int size;

	vcpu->fd = ioctl(vm->fd, KVM_CREATE_VCPU, id);
	if (vcpu->fd < 0)
		return -errno;
	size = ioctl(vm->kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (size < 0)
		return -errno;
	vcpu->run_size = size;
	vcpu->run = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			 vcpu->fd, 0);
	if (vcpu->run == MAP_FAILED) {
		vcpu->run = NULL;
		return -errno;
	}
	return ks_vcpu_setup(vm->fd, vcpu->fd, 0);
}

int ks_vm_create(struct ks_vm *vm, const void *code, size_t code_len,
		 int nr_vcpus)
{
	struct kvm_userspace_memory_region region;
	int i, ret;

	memset(vm, 0, sizeof(*vm));
	vm->fd = -1;
	for (i = 0; i < KS_MAX_VCPUS; i++)
		vm->vcpu[i].fd = -1;
	if (nr_vcpus > KS_MAX_VCPUS || code_len > KS_GUEST_MEM_SIZE -
	    KS_GUEST_CODE_ADDR)
		return -EINVAL;

	vm->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (vm->kvm_fd < 0)
		return -errno;
	vm->fd = ioctl(vm->kvm_fd, KVM_CREATE_VM, 0);
	if (vm->fd < 0) {
		ret = -errno;
		goto fail;
	}
	ret = ks_arch_vm_init(vm);
	if (ret)
		goto fail;
	vm->mem = mmap(NULL, KS_GUEST_MEM_SIZE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (vm->mem == MAP_FAILED) {
		vm->mem = NULL;
		ret = -errno;
		goto fail;
	}
	memcpy((char *)vm->mem + KS_GUEST_CODE_ADDR, code, code_len);
	region = (struct kvm_userspace_memory_region) {
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = KS_GUEST_MEM_SIZE,
		.userspace_addr = (uintptr_t)vm->mem,
	};
	if (ioctl(vm->fd, KVM_SET_USER_MEMORY_REGION, &region) < 0) {
		ret = -errno;
		goto fail;
	}
	for (i = 0; i < nr_vcpus; i++) {
		vm->nr_vcpus = i + 1;
		ret = ks_vcpu_create(vm, i);
		if (ret)
			goto fail;
	}
	return 0;
fail:
	ks_vm_destroy(vm);
	return ret;
}

void ks_vm_destroy(struct ks_vm *vm)
{
	int i;

	for (i = 0; i < vm->nr_vcpus; i++) {
		if (vm->vcpu[i].run)
			munmap(vm->vcpu[i].run, vm->vcpu[i].run_size);
		if (vm->vcpu[i].fd >= 0)
			close(vm->vcpu[i].fd);
		vm->vcpu[i].run = NULL;
		vm->vcpu[i].fd = -1;
	}
	vm->nr_vcpus = 0;
	if (vm->mem)
		munmap(vm->mem, KS_GUEST_MEM_SIZE);
	vm->mem = NULL;
	if (vm->fd >= 0)
		close(vm->fd);
	vm->fd = -1;
	if (vm->kvm_fd >= 0)
		close(vm->kvm_fd);
	vm->kvm_fd = -1;
}

const char *ks_module_path(void)
{
	const char *p = getenv("KVM_STATSFD_KO");

	return p && *p ? p : "kvm_statsfd.ko";
}

int ks_insmod(const char *path, const char *params)
{
	int fd, ret = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, params, 0) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

/* @params, and @extra unless @params says @name=. */
static void add_param(char *buf, size_t len, const char *params,
		      const char *name, const char *extra)
{
	if (strstr(params, name))
		snprintf(buf, len, "%s", params);
	else
		snprintf(buf, len, "%s%s%s", params, *params ? " " : "", extra);
}

int ks_module_load_default(const char *params)
{
	return ks_insmod(ks_module_path(), params);
}

int ks_module_load(const char *params)
{
	char all[512];

	/*
	 * Every stat group, unless they say: most tests check stats outside
	 * the default groups (stat_groups_test checks the default).
	 */
	add_param(all, sizeof(all), params, "stats=", "stats=all");
	return ks_module_load_default(all);
}

int ks_module_unload(void)
{
	if (syscall(SYS_delete_module, "kvm_statsfd", O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

int ks_module_loaded(void)
{
	struct stat st;

	return stat("/sys/module/kvm_statsfd", &st) == 0;
}



static int read_line(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return n;
	}
	close(fd);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

long ks_objects_read(const char *name)
{
	char path[128], buf[64], *end;
	long v;
	int ret;

	snprintf(path, sizeof(path), "/sys/kernel/debug/kvm_statsfd/%s",
		 name);
	ret = read_line(path, buf, sizeof(buf));
	if (ret)
		return ret;
	v = strtol(buf, &end, 10);
	return end == buf ? -EINVAL : v;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

long ks_objects_wait_le(const char *name, long target, int timeout_ms)
{
	long v = ks_objects_read(name);
	int waited = 0;

	while (v > target && waited < timeout_ms) {
		sleep_ms(10);
		waited += 10;
		v = ks_objects_read(name);
	}
	return v;
}

int ks_module_mode(char *buf, size_t len)
{
	return read_line("/sys/module/kvm_statsfd/parameters/mode", buf, len);
}

/*
 * The loaded module's parameters as insmod arguments, e.g. "mode=own
 * stats=all cross_process=Y", leaving out @skip.  0 or -errno.
 */
static int module_params(char *buf, size_t len, const char *skip)
{
	static const char *const names[] = { "mode", "stats", "cross_process" };
	size_t used = 0;
	unsigned int i;

	buf[0] = '\0';
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[128], val[96];
		int n;

		if (skip && !strcmp(names[i], skip))
			continue;
		snprintf(path, sizeof(path),
			 "/sys/module/kvm_statsfd/parameters/%s", names[i]);
		if (read_line(path, val, sizeof(val)) < 0)
			continue;
		n = snprintf(buf + used, len - used, "%s%s=%s", used ? " " : "",
			     names[i], val);
		if (n < 0 || (size_t)n >= len - used)
			return -ENOSPC;
		used += n;
	}
	return 0;
}

void ks_module_save(struct ks_module_state *st)
{
	memset(st, 0, sizeof(*st));
	st->was_loaded = ks_module_loaded();
	if (st->was_loaded && ks_module_mode(st->mode, sizeof(st->mode)))
		st->mode[0] = '\0';
	if (st->was_loaded && module_params(st->params, sizeof(st->params), NULL))
		st->params[0] = '\0';
}

int ks_module_unload_wait(int timeout_ms)
{
	int ret, waited = 0;

	for (;;) {
		ret = ks_module_unload();
		if (ret != -EWOULDBLOCK && ret != -EBUSY)
			return ret;
		if (waited >= timeout_ms)
			return ret;
		sleep_ms(10);
		waited += 10;
	}
}

/* Load in @mode, with @others (insmod arguments) besides. */
static int load_mode(const char *mode, const char *others)
{
	char params[320];

	if (!mode || !*mode)
		return ks_module_load(others);
	snprintf(params, sizeof(params), "%s%smode=%s", others,
		 *others ? " " : "", mode);
	return ks_module_load(params);
}

/*
 * In @mode with the default stat groups, which the callers expect.  A
 * reload keeps the load's cross_process= (the tests' reading rights).
 */
int ks_module_ensure(const char *mode)
{
	char cur[32], groups[128], xp[8], others[32] = "";
	int ret;

	if (ks_module_loaded()) {
		if (!ks_module_mode(cur, sizeof(cur)) && !strcmp(cur, mode) &&
		    !read_line("/sys/module/kvm_statsfd/parameters/stats",
			       groups, sizeof(groups)) && !strcmp(groups, "all"))
			return 0;
		if (!read_line("/sys/module/kvm_statsfd/parameters/cross_process",
			       xp, sizeof(xp)))
			snprintf(others, sizeof(others), "cross_process=%s", xp);
		ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
		if (ret)
			return ret;
	}
	return load_mode(mode, others);
}

/*
 * @params (insmod arguments) as the loaded module's parameters would read
 * (module_params()): every parameter, the defaults filled in.
 */
static int params_as_loaded(char *buf, size_t len, const char *params)
{
	char mode[32] = "superset", stats[128] = KS_DEFAULT_GROUPS;
	char xp[8] = "N", copy[320], *tok, *save = NULL;
	int n;

	snprintf(copy, sizeof(copy), "%s", params);
	for (tok = strtok_r(copy, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		if (!strncmp(tok, "mode=", 5))
			snprintf(mode, sizeof(mode), "%s", tok + 5);
		else if (!strncmp(tok, "stats=", 6))
			snprintf(stats, sizeof(stats), "%s", tok + 6);
		else if (!strncmp(tok, "cross_process=", 14))
			snprintf(xp, sizeof(xp), "%s",
				 strchr("1yY", tok[14]) ? "Y" : "N");
		else
			return -EINVAL;	/* not one this can compare */
	}
	n = snprintf(buf, len, "mode=%s stats=%s cross_process=%s", mode,
		     stats, xp);
	return n < 0 || (size_t)n >= len ? -ENOSPC : 0;
}

int ks_module_ensure_params(const char *params)
{
	char want[256], cur[256];
	int ret;

	if (ks_module_loaded()) {
		if (!params_as_loaded(want, sizeof(want), params) &&
		    !module_params(cur, sizeof(cur), NULL) &&
		    !strcmp(want, cur))
			return 0;
		ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
		if (ret)
			return ret;
	}
	return ks_module_load_default(params);
}

/* The process that loaded the module for the whole program, if one did. */
static pid_t program_loader;

/* The module as @st found it, now. */
static int module_put_back(const struct ks_module_state *st)
{
	char cur[256] = "";
	int ret;

	if (ks_module_loaded()) {
		if (st->was_loaded && !module_params(cur, sizeof(cur), NULL) &&
		    !strcmp(cur, st->params))
			return 0;
		ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
		if (ret)
			return ret;
	}
	return st->was_loaded ? ks_module_load(st->params) : 0;
}

int ks_module_restore(const struct ks_module_state *st)
{
	char xp[8];

	/*
	 * Under the program's own load (below), a case that reloaded with
	 * other stat groups or another mode leaves that for the next case,
	 * whose setup reloads only if it needs to, and the program unloads at
	 * its end: one reload a case at most, not two.  Not a wider reading
	 * right (cross_process), which the next case's setup would keep.
	 */
	if (program_loader && st->was_loaded &&
	    (read_line("/sys/module/kvm_statsfd/parameters/cross_process",
		       xp, sizeof(xp)) || strcmp(xp, "Y")))
		return 0;
	return module_put_back(st);
}

int ks_traced(const char *func)
{
	static const char *const lists[] = {
		"/sys/kernel/tracing/enabled_functions",
		"/sys/kernel/debug/tracing/enabled_functions",
	};
	size_t n = strlen(func);
	char line[1024];
	int found = 0;
	unsigned int i;
	FILE *f = NULL;

	for (i = 0; !f && i < sizeof(lists) / sizeof(lists[0]); i++)
		f = fopen(lists[i], "re");
	if (!f)
		return -errno;
	/* "<function> [<module>] (<users>) <flags> ..." */
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, func, n) && line[n] == ' ';
	fclose(f);
	return found;
}

int ks_module_reload(const char *params)
{
	int ret;

	if (ks_module_loaded()) {
		ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
		if (ret)
			return ret;
	}
	return ks_module_load(params);
}


int ks_stress_scale(void)
{
	const char *s = getenv("KS_STRESS_SCALE");
	int v = s ? atoi(s) : 1;

	return v < 1 ? 1 : v > 100 ? 100 : v;
}

void ks_errs_add(struct ks_errs *e, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&e->lock);
	if (!e->count++) {
		va_start(ap, fmt);
		vsnprintf(e->first, sizeof(e->first), fmt, ap);
		va_end(ap);
	}
	pthread_mutex_unlock(&e->lock);
}

void ks_close_from(int first)
{
	if (syscall(SYS_close_range, first, ~0U, 0) == 0)
		return;
	for (int fd = first; fd < 4096; fd++)
		close(fd);
}

int ks_pread_exact(int fd, void *buf, size_t len, off_t off)
{
	ssize_t n = pread(fd, buf, len, off);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

int ks_fdinfo_map(int fd, uint64_t *off, uint64_t *size, uint64_t *page_off)
{
	char path[64], line[256];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "kvm_stats_mmap_offset: %llu", &v) == 1) {
			*off = v;
			found |= 1;
		} else if (sscanf(line, "kvm_stats_mmap_size: %llu", &v) == 1) {
			*size = v;
			found |= 2;
		} else if (sscanf(line, "kvm_stats_mmap_page_offset: %llu",
				  &v) == 1) {
			*page_off = v;
			found |= 4;
		}
	}
	fclose(f);
	return found == 7 ? 0 : found ? -EBADMSG : -ENOENT;
}

ssize_t ks_read_whole(int fd, void *buf, size_t cap)
{
	size_t done = 0;
	ssize_t n;

	while (done < cap) {
		n = pread(fd, (char *)buf + done, cap - done, done);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

long ks_sweep_reads(int fd, const unsigned char *full, size_t size,
		    size_t max_len, char *why, size_t why_len)
{
	size_t big[] = { size, size + 1, 4096, 65536 };
	size_t buf_len = 65536 + 64;
	unsigned char *buf;
	long bad = 0;
	size_t off, i;

	buf = malloc(buf_len);
	if (!buf) {
		snprintf(why, why_len, "out of memory");
		return 1;
	}
	why[0] = '\0';
	for (off = 0; off <= size; off++) {
		size_t nlens = max_len + sizeof(big) / sizeof(big[0]);

		for (i = 0; i < nlens; i++) {
			size_t len = i < max_len ? i + 1 : big[i - max_len];
			size_t want;
			ssize_t n;

			if (i >= 16 && i < max_len && off % 7)
				continue;
			if (i >= max_len && off % 61 && off + 72 < size)
				continue;
			want = off + len <= size ? len : size - off;

			/* A canary after what the read may fill. */
			memset(buf, 0xa5, want + 8 <= buf_len ? want + 8 : buf_len);
			n = pread(fd, buf, len, off);
			if (n == (ssize_t)want && !memcmp(buf, full + off, want) &&
			    (want + 8 > buf_len || buf[want] == 0xa5))
				continue;
			if (!bad++) {
				size_t j = 0;

				if (n > 0)
					while (j < (size_t)n && j < want &&
					       buf[j] == full[off + j])
						j++;
				snprintf(why, why_len,
					 "pread(len %zu, off %zu) = %zd (errno %d), want %zu; first differing byte %zu: got 0x%02x, want 0x%02x",
					 len, off, n, n < 0 ? errno : 0, want,
					 off + j, j < buf_len ? buf[j] : 0,
					 off + j < size ? full[off + j] : 0);
			}
		}
	}
	free(buf);
	return bad;
}

const struct kvmstats_desc *ks_find(const struct kvmstats *s, const char *name)
{
	const struct kvmstats_desc *d = kvmstats_find(s, name);
	char sum[64];

	/* KVM's ids: "kvm-PID" for a VM, "kvm-PID/vcpu-N" for a vCPU. */
	if (d || !s->id || strstr(s->id, "/vcpu-"))
		return d;
	snprintf(sum, sizeof(sum), "%s%s", KVM_STATSFD_VM_SUM_PREFIX, name);
	return kvmstats_find(s, sum);
}

int ks_stat_read(int stats_fd, const char *name, uint64_t *vals,
		 unsigned int n, char *err, size_t err_len)
{
	const struct kvmstats_desc *d;
	struct kvmstats s = { 0 };
	unsigned int i;
	int fd, ret;

	memset(vals, 0, n * sizeof(*vals));
	fd = dup(stats_fd);
	if (fd < 0)
		return -errno;
	ret = kvmstats_open(&s, fd);
	if (ret) {
		if (err)
			snprintf(err, err_len, "%s", s.err);
		close(fd);
		return ret;
	}
	d = ks_find(&s, name);
	if (!d) {
		if (err)
			snprintf(err, err_len, "no stat named %s", name);
		kvmstats_close(&s);
		return -ENOENT;
	}
	for (i = 0; i < n && i < d->size; i++)
		vals[i] = kvmstats_value(&s, d, i);
	ret = d->size;
	kvmstats_close(&s);
	return ret;
}

int64_t ks_exits_counted(int fd, const struct ks_exit_codes *ec)
{
	uint64_t v[256];
	int64_t sum = 0;
	int i, n;

	n = ks_stat_read(fd, ec->total, v, 256, NULL, 0);
	if (n < 0)
		return n;
	for (i = 0; i < n && i < 256; i++)
		sum += v[i];
	return sum;
}

int ks_kernel_is_rt(void)
{
	FILE *f = fopen("/sys/kernel/realtime", "r");
	int rt = 0;

	if (f) {
		if (fscanf(f, "%d", &rt) != 1)
			rt = 0;
		fclose(f);
	}
	return rt == 1;
}

int ks_kernel_has_lockdep(void)
{
	return access("/proc/lockdep", F_OK) == 0;
}

int ks_race_seconds(void)
{
	return ks_kernel_is_rt() || ks_kernel_has_lockdep() ? 4 : 2;
}

#ifndef KVM_CAP_BINARY_STATS_FD
#define KVM_CAP_BINARY_STATS_FD 203
#endif

int ks_native_binary_stats(void)
{
	static int cached = -1;
	struct ks_module_state st;
	int fd, ret;

	if (cached >= 0)
		return cached;
	ks_module_save(&st);
	if (st.was_loaded) {
		ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
		if (ret)
			return ret;
	}
	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	ret = fd < 0 ? -errno : ioctl(fd, KVM_CHECK_EXTENSION,
				      KVM_CAP_BINARY_STATS_FD);
	if (fd >= 0 && ret < 0)
		ret = -errno;
	if (fd >= 0)
		close(fd);
	if (st.was_loaded) {
		int r = module_put_back(&st);

		if (r && ret >= 0)
			ret = r;
	}
	if (ret >= 0)
		cached = ret > 0;
	return ret < 0 ? ret : cached;
}

int ks_debugfs_vm_stat(const struct ks_vm *vm, const char *name,
		       uint64_t *val)
{
	char path[256], buf[64], *end;
	int ret;

	snprintf(path, sizeof(path), "/sys/kernel/debug/kvm/%d-%d/%s",
		 getpid(), vm->fd, name);
	ret = read_line(path, buf, sizeof(buf));
	if (ret)
		return ret;
	errno = 0;
	*val = strtoull(buf, &end, 10);
	return end == buf || *end || errno ? -EINVAL : 0;
}

int ks_send_fds(int sock, const int *fds, int n)
{
	char cbuf[CMSG_SPACE(KS_MAX_PASS_FDS * sizeof(int))] = { 0 };
	char byte = 'x';
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = CMSG_SPACE(n * sizeof(int)),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	if (n < 1 || n > KS_MAX_PASS_FDS)
		return -1;
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(n * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

int ks_recv_fds(int sock, int *fds, int n)
{
	char cbuf[CMSG_SPACE(KS_MAX_PASS_FDS * sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;

	if (n < 1 || n > KS_MAX_PASS_FDS)
		return -1;
	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(n * sizeof(int)))
		return -1;
	memcpy(fds, CMSG_DATA(cm), n * sizeof(int));
	return 0;
}

static int ks_range_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return x[0] < y[0] ? -1 : x[0] > y[0];
}

int ks_data_block_check(int fd, char *why, size_t why_len)
{
	const struct kvmstats_desc *d;
	struct kvmstats s = { 0 };
	uint64_t (*r)[2] = NULL, end = 0, sum = 0;
	unsigned char *block = NULL, *one = NULL, probe;
	unsigned int i;
	int ret = -EBADMSG, dfd = dup(fd);

	if (dfd < 0)
		return -errno;
	if (kvmstats_open(&s, dfd)) {
		snprintf(why, why_len, "libkvmstats: %s", s.err);
		close(dfd);
		return -EBADMSG;
	}
	if (!s.num_desc) {
		snprintf(why, why_len, "no descriptors");
		goto out;
	}
	r = calloc(s.num_desc + 1, sizeof(*r));
	for (i = 0; r && i < s.num_desc; i++) {
		d = &s.descs[i];
		if (!d->size) {
			snprintf(why, why_len, "%s has size 0", d->name);
			goto out;
		}
		r[i][0] = d->offset;
		r[i][1] = d->offset + d->size * 8ULL;
		sum += d->size;
	}
	if (!r)
		goto out;
	qsort(r, s.num_desc, sizeof(*r), ks_range_cmp);
	for (i = 0; i < s.num_desc; end = r[i][1], i++) {
		if (r[i][0] != end) {
			snprintf(why, why_len, "a stat starts at byte %llu, the ones before end at %llu",
				 (unsigned long long)r[i][0], (unsigned long long)end);
			goto out;
		}
	}
	if (end != sum * 8) {
		snprintf(why, why_len, "the stats cover %llu bytes, their sizes sum to %llu",
			 (unsigned long long)end, (unsigned long long)sum * 8);
		goto out;
	}
	block = malloc(sum * 8 + 1);
	one = malloc(sum * 8 + 1);
	if (!block || !one)
		goto out;
	/* As QEMU reads it: sum(size) * 8 bytes in one pread, then by offset. */
	if (ks_pread_exact(fd, block, sum * 8, s.hdr.data_offset) ||
	    pread(fd, &probe, 1, s.hdr.data_offset + sum * 8) != 0) {
		snprintf(why, why_len, "the data block is not sum(size) * 8 = %llu bytes long",
			 (unsigned long long)sum * 8);
		goto out;
	}
	for (i = 0; i < s.num_desc; i++) {
		d = &s.descs[i];
		if (ks_pread_exact(fd, one, d->size * 8ULL,
				   s.hdr.data_offset + d->offset) ||
		    memcmp(one, block + d->offset, d->size * 8ULL)) {
			snprintf(why, why_len, "%s differs between the block and its own read",
				 d->name);
			goto out;
		}
	}
	ret = 0;
out:
	free(one);
	free(block);
	free(r);
	kvmstats_close(&s);
	return ret;
}

int ks_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

double ks_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void ks_sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* xorshift64*: one state per thread, no locks. */
uint64_t ks_rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

uint64_t ks_rnd_seed(int salt)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_nsec ^ ((uint64_t)getpid() << 32) ^
		(salt * 0x9e3779b97f4a7c15ull)) | 1;
}

/*
 * One load per program.  A case whose fixture wants the module loaded as
 * ks_module_load("") loads it (mode=superset, every stat group) finds it so
 * and leaves it so, instead of paying an insmod and an rmmod of its own:
 * ~230 of them a boot, a second each on the slower lanes.  Cases about
 * loading, or wanting other parameters, still unload and reload, and their
 * teardown puts this load back.  Nothing happens where the module is
 * already loaded (a host that runs it) or cannot be (no /dev/kvm, no
 * module file): each case then reports for itself.
 */
static void __attribute__((constructor)) program_load(void)
{
	if (access("/dev/kvm", R_OK | W_OK) || ks_module_loaded())
		return;
	if (access(ks_module_path(), R_OK) || ks_module_load(""))
		return;
	program_loader = getpid();
}

/*
 * The harness runs each case in a child: only the process that loaded
 * unloads.  A module that will not go is a leak of some case's: fail the
 * program, which has no other way left to say so.
 */
static void __attribute__((destructor)) program_unload(void)
{
	int ret;

	if (!program_loader || getpid() != program_loader ||
	    !ks_module_loaded())
		return;
	ret = ks_module_unload_wait(KS_FREE_WAIT_MS);
	if (ret) {
		printf("# kvm_statsfd stayed loaded after the last case: %s\n",
		       strerror(-ret));
		fflush(stdout);
		_exit(1);
	}
}
