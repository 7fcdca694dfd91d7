// SPDX-License-Identifier: GPL-2.0
/*
 * Races around the stats fd, bounded in time and in count.  Each test runs
 * for ks_race_seconds() (2 s; 4 on PREEMPT_RT and the debug kernel) x
 * KS_STRESS_SCALE (1 is the short version `make check` runs; `make
 * stress` sets it higher), or until
 * its iteration cap, whichever comes first, and asserts that it made
 * progress.  The rig fails the run on any kernel WARN/BUG/taint, so these
 * tests only have to drive the races and check what userspace sees:
 *
 *  vm_churn_with_readers: 16 VMs of 3 vCPUs are created, run and
 *    destroyed in rounds by 4 threads while 3 others take stats fds of them
 *    (from dups of their VM and vCPU fds, so the creator may close the VM
 *    meanwhile) and read them at random offsets and lengths, holding a few
 *    fds past the VM's destruction.
 *  read_while_vcpus_run: readers read every fd of a running 4-vCPU VM;
 *    cumulative values never go backwards; the VM's fds are closed while
 *    readers read, and the stats fds go on.
 *  read_after_creator_killed: another process makes and runs a VM, passes
 *    its stats fds over a unix socket, and is SIGKILLed in KVM_RUN while we
 *    read; reads go on, then hold still with no vCPU in guest mode.
 *    (stats_lifetime_test's fd_outlives_creator covers the quiet case: a
 *    creator that stopped its vCPUs and exited normally.)
 *  rmmod_insmod_loop: rmmod/insmod in a loop while vCPUs run and readers
 *    take, hold and read stats fds: every rmmod succeeds or is refused
 *    with EBUSY/EAGAIN/EWOULDBLOCK, every insmod succeeds, KVM_RUN keeps
 *    returning the guest's exits, every KVM_GET_STATS_FD works (served by
 *    the module or by KVM) and gives a well-formed file; on a kernel
 *    without binary stats of its own (KVM_CHECK_EXTENSION(
 *    KVM_CAP_BINARY_STATS_FD) 0 without the module: 5.10) KVM's answer
 *    between an rmmod and the next insmod is its own refusal, ENOTTY on a
 *    VM fd and EINVAL on a vCPU fd, and nothing else.
 *  get_stats_fd_storm: 16 threads open, read and close stats fds of one
 *    running vCPU (and of its VM) at once: all succeed, all read the same
 *    fixed part, and the module keeps exactly one state per vCPU.
 *
 * Leak checks, after every test (check_no_leak()): every fd the test opened
 * is closed, so the number of entries in /proc/self/fd is what it was when
 * the test began; and /sys/kernel/debug/kvm_statsfd/{files,vms,vcpus}
 * are back to what they were before.  "files" drops at close(); "vms" and
 * "vcpus" only after KVM destroyed the VM, an RCU grace period and the
 * module's workqueue, so those are polled for up to KS_FREE_WAIT_MS.  The
 * baseline is taken once the counts of earlier tests' VMs have settled.
 *
 * PREEMPT_RT: there the module counts a vCPU only once a stats fd was
 * opened for it, so every exact count below is on a vCPU whose stats fd
 * was opened before it ran.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "ks_harness.h"
#include "internal.h"	/* white-box: reads the handle's fields */
#include "ks_util.h"

#define MAX_FILE	65536
#define TIMEOUT_S	3600	/* the harness's alarm; the tests stop sooner */

/* ------------------------------------------------------------------ */
/* Shared helpers                                                      */

/* What one stats fd looks like: its header and its fixed part. */
struct fd_info {
	struct kvm_stats_header h;
	off_t size;
	unsigned char *fixed;	/* [0, data_offset): never changes */
};

static int fd_info_get(int fd, struct fd_info *fi, char *why, size_t wl)
{
	struct kvmstats s = { 0 };
	int ret, d = dup(fd);

	memset(fi, 0, sizeof(*fi));
	ret = kvmstats_open(&s, d);
	if (ret) {
		snprintf(why, wl, "libkvmstats: %s", s.err);
		if (d >= 0)
			close(d);
		return ret;
	}
	fi->h = s.hdr;
	fi->size = s.hdr.data_offset + s.data_size;
	kvmstats_close(&s);
	fi->fixed = malloc(fi->h.data_offset);
	if (!fi->fixed)
		return -ENOMEM;
	ret = ks_pread_exact(fd, fi->fixed, fi->h.data_offset, 0);
	if (ret)
		snprintf(why, wl, "reading the fixed part: %s", strerror(-ret));
	return ret;
}

/*
 * @n random preads of @fd: the length read is what the file size says,
 * and what falls in the fixed part is the fixed part.  0 or -1 (@why).
 */
static int random_reads(int fd, const struct fd_info *fi, uint64_t *rs,
			int n, char *why, size_t wl)
{
	unsigned char buf[MAX_FILE];
	int i;

	for (i = 0; i < n; i++) {
		uint64_t r = ks_rnd(rs);
		off_t off = r % (fi->size + 64);
		size_t len = (r >> 20) % 4 ? (r >> 32) % 256 :
			     (r >> 32) % (fi->size + 64);
		size_t want = off >= fi->size ? 0 :
			      (size_t)(fi->size - off) < len ? fi->size - off : len;
		ssize_t got = pread(fd, buf, len, off);

		if (got != (ssize_t)want) {
			snprintf(why, wl, "pread(len %zu, off %jd) of a %jd-byte file = %zd (%s)",
				 len, (intmax_t)off, (intmax_t)fi->size, got,
				 got < 0 ? strerror(errno) : "short");
			return -1;
		}
		if (off < fi->h.data_offset) {
			size_t m = fi->h.data_offset - off;

			if (m > want)
				m = want;
			if (memcmp(buf, fi->fixed + off, m)) {
				snprintf(why, wl, "pread(len %zu, off %jd): fixed part changed",
					 len, (intmax_t)off);
				return -1;
			}
		}
	}
	return 0;
}

static long objects(const char *name)
{
	return ks_objects_read(name);
}

FIXTURE(stress) {
	struct ks_module_state mod;
	struct ks_exit_codes ec;
	int scale;
	int seconds;	/* at scale 1: ks_race_seconds() */
	double deadline;
	struct ks_baseline base;
	int ready;
};

FIXTURE_SETUP(stress)
{
	KS_SETUP_MODULE(&self->mod, "superset");
	ks_host_exit_codes(&self->ec);
	self->scale = ks_stress_scale();
	self->seconds = ks_race_seconds();
	/* Let the frees of earlier tests' VMs finish, then take the base. */
	KS_BASELINE_TAKE(&self->base, KS_FREE_WAIT_MS);
	self->deadline = ks_now_s() + self->seconds * self->scale;
	self->ready = 1;
}

FIXTURE_TEARDOWN(stress)
{
	KS_TEARDOWN_MODULE(&self->mod);
}

#define NEED_SETUP() do { if (!self->ready) return; } while (0)

/*
 * Everything the test made is gone: the fds it opened are closed, and the
 * module's objects are back to the baseline (vms and vcpus polled: freed
 * after KVM destroys the VM, an RCU grace period and a work item).
 */
static void check_no_leak(struct __test_metadata *_metadata,
			  FIXTURE_DATA(stress) *self)
{
	KS_BASELINE_CHECK(&self->base, KS_FREE_WAIT_MS);
}

static void on_sigusr1(int sig) { }

static void install_sigusr1(void)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 };

	sigaction(SIGUSR1, &sa, NULL);
}

/* ------------------------------------------------------------------ */
/* vm_churn_with_readers                                               */

#define CHURN_CREATORS	4
#define CHURN_PER	4	/* VMs per creator per round: 16 in all */
#define CHURN_VCPUS	3
#define CHURN_READERS	3
#define CHURN_HOLD	4	/* stats fds a reader keeps past their VM */
#define CHURN_CPUID	20

struct churn_slot {
	pthread_mutex_t lock;
	int live;
	pid_t tid;		/* the creator's: KVM names the VM after it */
	int vm_fd;
	int vcpu_fd[CHURN_VCPUS];
};

struct churn {
	struct churn_slot slot[CHURN_CREATORS * CHURN_PER];
	const struct ks_exit_codes *ec;
	double deadline;
	int max_rounds;
	atomic_int stop;
	struct ks_errs err;
	atomic_long rounds, opens, reads;
};

struct churn_thread {
	struct churn *c;
	int idx;
	pthread_t t;
};

static void *churn_creator(void *arg)
{
	struct churn_thread *ct = arg;
	struct churn *c = ct->c;
	unsigned int counts[] = { CHURN_CPUID };
	unsigned char code[64];
	struct ks_vm vm[CHURN_PER];
	int sfd[CHURN_PER];
	size_t len = ks_code_cpuid_segments(code, sizeof(code), counts, 1);
	int round, i, j, ret;

	/*
	 * One round at least, deadline or not: with other guests beside
	 * this one, a creator thread could first run after the deadline,
	 * and the test's "every creator got through a round" would fail
	 * on the machine's load, not on the module.
	 */
	for (round = 0; round < c->max_rounds && !c->stop &&
	     (round < 1 || ks_now_s() < c->deadline); round++) {
		for (i = 0; i < CHURN_PER; i++) {
			struct churn_slot *s = &c->slot[ct->idx * CHURN_PER + i];

			ret = ks_vm_create(&vm[i], code, len, CHURN_VCPUS);
			if (ret) {
				ks_errs_add(&c->err, "ks_vm_create: %s", strerror(-ret));
				goto out_destroy;
			}
			/* vCPU 0's fd before it runs: exact counts, on RT too. */
			sfd[i] = ioctl(vm[i].vcpu[0].fd, KVM_GET_STATS_FD, 0);
			if (sfd[i] < 0) {
				ks_errs_add(&c->err, "creator KVM_GET_STATS_FD: %s",
					strerror(errno));
				ks_vm_destroy(&vm[i]);
				goto out_destroy;
			}
			pthread_mutex_lock(&s->lock);
			s->tid = gettid();
			s->vm_fd = vm[i].fd;
			for (j = 0; j < CHURN_VCPUS; j++)
				s->vcpu_fd[j] = vm[i].vcpu[j].fd;
			s->live = 1;
			pthread_mutex_unlock(&s->lock);
		}
		for (i = 0; i < CHURN_PER; i++)
			for (j = 0; j < CHURN_VCPUS; j++) {
				int a = ks_vcpu_run(&vm[i].vcpu[j]);
				int b = ks_vcpu_run(&vm[i].vcpu[j]);

				if (a != KS_EXIT_USER || b != KS_EXIT_STOP)
					ks_errs_add(&c->err, "KVM_RUN gave %d then %d", a, b);
			}
		for (i = 0; i < CHURN_PER; i++) {
			uint64_t h[256];
			int n = ks_stat_read(sfd[i], c->ec->stat, h, 256, NULL, 0);

			if (n != (int)c->ec->buckets || h[c->ec->cpuid] != CHURN_CPUID ||
			    h[c->ec->io] != 1 || h[c->ec->hlt] != 1)
				ks_errs_add(&c->err, "vCPU 0 counted cpuid %llu io %llu hlt %llu (size %d), want %d 1 1",
					(unsigned long long)h[c->ec->cpuid],
					(unsigned long long)h[c->ec->io],
					(unsigned long long)h[c->ec->hlt], n,
					CHURN_CPUID);
		}
		i = CHURN_PER;
out_destroy:
		for (j = 0; j < i; j++) {
			struct churn_slot *s = &c->slot[ct->idx * CHURN_PER + j];

			pthread_mutex_lock(&s->lock);
			s->live = 0;
			pthread_mutex_unlock(&s->lock);
			ks_vm_destroy(&vm[j]);
			close(sfd[j]);
		}
		if (i < CHURN_PER)
			break;
		c->rounds++;
	}
	return NULL;
}

static void *churn_reader(void *arg)
{
	struct churn_thread *ct = arg;
	struct churn *c = ct->c;
	uint64_t rs = ks_rnd_seed(ct->idx + 100);
	int held[CHURN_HOLD], nheld = 0, i;
	char why[256], want[64], id[64];
	pid_t tid = 0;

	while (!c->stop) {
		struct churn_slot *s = &c->slot[ks_rnd(&rs) % (CHURN_CREATORS * CHURN_PER)];
		int which = ks_rnd(&rs) % (CHURN_VCPUS + 1);	/* CHURN_VCPUS: the VM */
		struct fd_info fi;
		int src = -1, sfd;

		pthread_mutex_lock(&s->lock);
		if (s->live) {
			src = dup(which == CHURN_VCPUS ? s->vm_fd : s->vcpu_fd[which]);
			tid = s->tid;
		}
		pthread_mutex_unlock(&s->lock);
		if (src < 0) {
			ks_sleep_us(100);
			continue;
		}
		/* The creator may destroy the VM now: our dup keeps it. */
		sfd = ioctl(src, KVM_GET_STATS_FD, 0);
		if (sfd < 0) {
			ks_errs_add(&c->err, "reader KVM_GET_STATS_FD: %s", strerror(errno));
			close(src);
			continue;
		}
		c->opens++;
		/* Half the time the stats fd alone holds the VM from here. */
		if (ks_rnd(&rs) % 2) {
			close(src);
			src = -1;
		}
		if (fd_info_get(sfd, &fi, why, sizeof(why))) {
			ks_errs_add(&c->err, "%s", why);
		} else {
			/*
			 * KVM's stats_id: task_pid_nr() of the thread that
			 * made the VM (and the vCPU), not the process id.
			 */
			if (which == CHURN_VCPUS)
				snprintf(want, sizeof(want), "kvm-%d", tid);
			else
				snprintf(want, sizeof(want), "kvm-%d/vcpu-%d", tid, which);
			memcpy(id, fi.fixed + fi.h.id_offset, sizeof(id) - 1);
			id[sizeof(id) - 1] = '\0';
			if (strcmp(id, want))
				ks_errs_add(&c->err, "id %s, want %s", id, want);
			if (random_reads(sfd, &fi, &rs, 8, why, sizeof(why)))
				ks_errs_add(&c->err, "%s", why);
			c->reads += 8;
		}
		free(fi.fixed);
		if (src >= 0)
			close(src);
		/* Keep a few stats fds past their VM's destruction. */
		if (nheld == CHURN_HOLD) {
			i = ks_rnd(&rs) % CHURN_HOLD;
			close(held[i]);
			held[i] = sfd;
		} else {
			held[nheld++] = sfd;
		}
		/* A held fd read again, maybe after its VM was destroyed. */
		i = ks_rnd(&rs) % nheld;
		if (!fd_info_get(held[i], &fi, why, sizeof(why))) {
			if (random_reads(held[i], &fi, &rs, 4, why, sizeof(why)))
				ks_errs_add(&c->err, "held fd: %s", why);
			c->reads += 4;
		} else {
			ks_errs_add(&c->err, "held fd: %s", why);
		}
		free(fi.fixed);
	}
	for (i = 0; i < nheld; i++)
		close(held[i]);
	return NULL;
}

TEST_F_TIMEOUT(stress, vm_churn_with_readers, TIMEOUT_S)
{
	struct churn_thread cr[CHURN_CREATORS], rd[CHURN_READERS];
	struct churn *c = calloc(1, sizeof(*c));
	int i;

	NEED_SETUP();
	ASSERT_NE(NULL, c);
	pthread_mutex_init(&c->err.lock, NULL);
	for (i = 0; i < CHURN_CREATORS * CHURN_PER; i++)
		pthread_mutex_init(&c->slot[i].lock, NULL);
	c->ec = &self->ec;
	c->deadline = self->deadline;
	c->max_rounds = 50 * self->scale;
	for (i = 0; i < CHURN_READERS; i++) {
		rd[i] = (struct churn_thread){ .c = c, .idx = i };
		ASSERT_EQ(0, pthread_create(&rd[i].t, NULL, churn_reader, &rd[i]));
	}
	for (i = 0; i < CHURN_CREATORS; i++) {
		cr[i] = (struct churn_thread){ .c = c, .idx = i };
		ASSERT_EQ(0, pthread_create(&cr[i].t, NULL, churn_creator, &cr[i]));
	}
	for (i = 0; i < CHURN_CREATORS; i++)
		pthread_join(cr[i].t, NULL);
	c->stop = 1;
	for (i = 0; i < CHURN_READERS; i++)
		pthread_join(rd[i].t, NULL);

	TH_LOG("%ld rounds of %d VMs x %d vCPUs, %ld stats fds, %ld reads",
	       (long)c->rounds, CHURN_CREATORS * CHURN_PER, CHURN_VCPUS,
	       (long)c->opens, (long)c->reads);
	EXPECT_EQ(0, c->err.count) TH_LOG("%ld errors; first: %s",
					  c->err.count, c->err.first);
	/* Plain longs: clang's typeof keeps _Atomic, which the macros reject. */
	EXPECT_LE(CHURN_CREATORS, (long)c->rounds)
		TH_LOG("%ld rounds: a creator stopped on an error",
		       (long)c->rounds);
	EXPECT_LT(0, (long)c->opens);
	check_no_leak(_metadata, self);
	free(c);
}

/* ------------------------------------------------------------------ */
/* read_while_vcpus_run                                                */

#define RUN_VCPUS	4
#define RUN_READERS	3

struct runner {
	struct ks_vcpu *vcpu;
	atomic_int stop;
	pthread_t thread;
	long runs;
	int err;		/* first unexpected KVM_RUN result */
	int forever;		/* guest never exits to userspace */
};

static void *runner_fn(void *arg)
{
	struct runner *r = arg;

	while (!r->stop) {
		int ret = ks_vcpu_run(r->vcpu);

		if (ret == -EINTR)
			continue;
		if (ret != KS_EXIT_USER) {
			if (!r->err)
				r->err = ret ? ret : -1000;
			break;
		}
		r->runs++;
	}
	return NULL;
}

static int start_runner(struct runner *r, struct ks_vcpu *vcpu)
{
	memset(r, 0, sizeof(*r));
	r->vcpu = vcpu;
	return pthread_create(&r->thread, NULL, runner_fn, r);
}

static void stop_runner(struct runner *r)
{
	r->stop = 1;
	r->vcpu->run->immediate_exit = 1;
	__sync_synchronize();
	pthread_kill(r->thread, SIGUSR1);
	pthread_join(r->thread, NULL);
	r->vcpu->run->immediate_exit = 0;
}

/* Types whose values never go down. */
static int monotonic(const struct kvmstats_desc *d)
{
	return d->type == KVM_STATS_TYPE_CUMULATIVE ||
	       d->type == KVM_STATS_TYPE_PEAK || kvmstats_is_hist(d);
}

struct mono_fd {
	int fd;
	int opened;
	struct kvmstats s;	/* parsed once; data refreshed per read */
	uint64_t *last;		/* last values this reader saw */
};

struct reader {
	pthread_t t;
	int idx;
	int nfds;
	int *fds;
	atomic_int *stop;
	struct ks_errs *err;
	long reads;
};

static void *mono_reader(void *arg)
{
	struct reader *r = arg;
	struct mono_fd *m = calloc(r->nfds, sizeof(*m));
	uint64_t rs = ks_rnd_seed(r->idx);
	char why[256];
	int i;

	if (!m) {
		ks_errs_add(r->err, "out of memory");
		return NULL;
	}
	for (i = 0; i < r->nfds; i++) {
		int d = dup(r->fds[i]);

		m[i].fd = r->fds[i];
		if (kvmstats_open(&m[i].s, d)) {
			ks_errs_add(r->err, "libkvmstats: %s", m[i].s.err);
			close(d);
			goto out;
		}
		m[i].opened = 1;
		m[i].last = calloc(1, m[i].s.data_size);
	}
	while (!*r->stop) {
		struct mono_fd *f = &m[ks_rnd(&rs) % r->nfds];
		unsigned int d, j;

		if (ks_rnd(&rs) % 4 == 0) {
			struct fd_info fi;

			if (fd_info_get(f->fd, &fi, why, sizeof(why)) ||
			    random_reads(f->fd, &fi, &rs, 4, why, sizeof(why)))
				ks_errs_add(r->err, "%s", why);
			free(fi.fixed);
			r->reads += 5;
			continue;
		}
		if (kvmstats_refresh(&f->s)) {
			ks_errs_add(r->err, "refresh: %s", f->s.err);
			continue;
		}
		r->reads++;
		for (d = 0; d < f->s.num_desc; d++) {
			const struct kvmstats_desc *ds = &f->s.descs[d];

			if (!monotonic(ds))
				continue;
			for (j = 0; j < ds->size; j++) {
				uint64_t v = kvmstats_value(&f->s, ds, j);
				uint64_t *last = &f->last[ds->offset / 8 + j];

				if (v < *last)
					ks_errs_add(r->err, "%s[%u] of %s went from %llu to %llu",
						ds->name, j, f->s.id,
						(unsigned long long)*last,
						(unsigned long long)v);
				*last = v;
			}
		}
	}
out:
	for (i = 0; i < r->nfds; i++) {
		if (m[i].opened)
			kvmstats_close(&m[i].s);
		free(m[i].last);
	}
	free(m);
	return NULL;
}

static uint64_t stat_sum(struct __test_metadata *_metadata, int fd,
			 const char *name, unsigned int n)
{
	uint64_t v[256], sum = 0;
	char err[160] = "";
	int ret = ks_stat_read(fd, name, v, n, err, sizeof(err));
	unsigned int i;

	EXPECT_LT(0, ret) TH_LOG("%s: %s", name, err);
	for (i = 0; i < n && i < 256; i++)
		sum += v[i];
	return sum;
}

TEST_F_TIMEOUT(stress, read_while_vcpus_run, TIMEOUT_S)
{
	const struct ks_exit_codes *ec = &self->ec;
	int fds[RUN_VCPUS + 1], i, ret;
	struct runner run[RUN_VCPUS];
	struct reader rd[RUN_READERS];
	struct ks_errs err = { .lock = PTHREAD_MUTEX_INITIALIZER };
	unsigned char code[32], *a, *b;
	size_t len;
	atomic_int stop = 0;
	struct ks_vm vm;
	long reads = 0;
	ssize_t na, nb;

	NEED_SETUP();
	install_sigusr1();
	len = ks_code_cpuid_out_loop(code, 50);
	ret = ks_vm_create(&vm, code, len, RUN_VCPUS);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	/* The fds before the vCPUs run (on PREEMPT_RT, that is when counting starts). */
	fds[RUN_VCPUS] = ioctl(vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, fds[RUN_VCPUS]);
	for (i = 0; i < RUN_VCPUS; i++) {
		fds[i] = ioctl(vm.vcpu[i].fd, KVM_GET_STATS_FD, 0);
		ASSERT_LE(0, fds[i]);
	}
	for (i = 0; i < RUN_VCPUS; i++)
		ASSERT_EQ(0, start_runner(&run[i], &vm.vcpu[i]));
	for (i = 0; i < RUN_READERS; i++) {
		rd[i] = (struct reader){ .idx = i, .nfds = RUN_VCPUS + 1,
					 .fds = fds, .stop = &stop, .err = &err };
		ASSERT_EQ(0, pthread_create(&rd[i].t, NULL, mono_reader, &rd[i]));
	}

	/* Half the time with the VM's fds open, then without them. */
	while (ks_now_s() < self->deadline - self->seconds * self->scale / 2.0)
		ks_sleep_us(20000);
	for (i = 0; i < RUN_VCPUS; i++)
		stop_runner(&run[i]);
	for (i = 0; i < RUN_VCPUS; i++) {
		EXPECT_EQ(0, run[i].err) TH_LOG("vCPU %d: KVM_RUN gave %d", i, run[i].err);
		EXPECT_LT(0, run[i].runs) TH_LOG("vCPU %d never ran", i);
	}
	/* 50 CPUIDs and one OUT per KVM_RUN that returned: at least that many. */
	for (i = 0; i < RUN_VCPUS; i++) {
		uint64_t io = stat_sum(_metadata, fds[i], ec->stat, 256);

		EXPECT_LE((uint64_t)run[i].runs * 51, io) TH_LOG("vCPU %d", i);
	}
	EXPECT_EQ(0, stat_sum(_metadata, fds[RUN_VCPUS], "in_guest", 1));
	ks_vm_destroy(&vm);
	while (ks_now_s() < self->deadline)
		ks_sleep_us(20000);
	stop = 1;
	for (i = 0; i < RUN_READERS; i++) {
		pthread_join(rd[i].t, NULL);
		reads += rd[i].reads;
	}
	TH_LOG("%ld reads; KVM_RUN returned %ld %ld %ld %ld times", reads,
	       run[0].runs, run[1].runs, run[2].runs, run[3].runs);
	EXPECT_EQ(0, err.count) TH_LOG("%ld errors; first: %s", err.count, err.first);

	/* Nothing runs any more: every file holds still. */
	a = malloc(MAX_FILE);
	b = malloc(MAX_FILE);
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	for (i = 0; i <= RUN_VCPUS; i++) {
		na = ks_read_whole(fds[i], a, MAX_FILE);
		nb = ks_read_whole(fds[i], b, MAX_FILE);
		EXPECT_LT(0, na);
		EXPECT_EQ(na, nb);
		EXPECT_EQ(0, memcmp(a, b, na));
		close(fds[i]);
	}
	free(a);
	free(b);
	check_no_leak(_metadata, self);
}

/* ------------------------------------------------------------------ */
/* read_after_creator_killed                                           */

#define KILL_VCPUS	3

static void *forever_fn(void *arg)
{
	struct ks_vcpu *v = arg;

	for (;;)
		ks_vcpu_run(v);
	return NULL;
}

/*
 * The child: a VM whose vCPUs loop on CPUID in KVM_RUN on their own
 * threads; its stats fds (taken before the vCPUs run) and its VM fd go to
 * the parent; then it waits to be killed.  Plain code, no harness.
 */
static int creator_child(int sock)
{
	pthread_t t[KILL_VCPUS];
	int fds[KILL_VCPUS + 2], i;
	struct ks_vm vm;

	if (ks_vm_create(&vm, ks_code_cpuid_forever, ks_code_cpuid_forever_len,
			 KILL_VCPUS))
		return 1;
	fds[0] = vm.fd;
	fds[1] = ioctl(vm.fd, KVM_GET_STATS_FD, 0);
	for (i = 0; i < KILL_VCPUS; i++)
		fds[2 + i] = ioctl(vm.vcpu[i].fd, KVM_GET_STATS_FD, 0);
	for (i = 0; i < KILL_VCPUS + 2; i++)
		if (fds[i] < 0)
			return 2;
	for (i = 0; i < KILL_VCPUS; i++)
		if (pthread_create(&t[i], NULL, forever_fn, &vm.vcpu[i]))
			return 3;
	if (ks_send_fds(sock, fds, KILL_VCPUS + 2))
		return 4;
	for (;;)
		pause();
}

TEST_F_TIMEOUT(stress, read_after_creator_killed, TIMEOUT_S)
{
	int rounds = 0, max_rounds = 20 * self->scale;
	struct ks_errs err = { .lock = PTHREAD_MUTEX_INITIALIZER };
	double deadline = self->deadline;
	unsigned char *a = malloc(MAX_FILE), *b = malloc(MAX_FILE);
	uint64_t rs = ks_rnd_seed(7);
	long reads = 0;
	int ret;

	NEED_SETUP();
	ASSERT_NE(NULL, a);
	ASSERT_NE(NULL, b);
	/*
	 * A telemetry agent's load: another process than the VM's creator
	 * asks, which KVM itself refuses (EIO), so the module answers before
	 * KVM does.
	 */
	ret = ks_module_reload("cross_process=1");
	ASSERT_EQ(0, ret) TH_LOG("reloading: %s", strerror(-ret));
	while (rounds < max_rounds && (rounds < 1 || ks_now_s() < deadline)) {
		int sv[2], fds[KILL_VCPUS + 2], status, i, extra;
		struct reader rd[2];
		atomic_int stop = 0;
		char want[64];
		pid_t pid;

		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			close(sv[0]);
			_exit(creator_child(sv[1]));
		}
		close(sv[1]);
		if (ks_recv_fds(sv[0], fds, KILL_VCPUS + 2)) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			ASSERT_TRUE(0) TH_LOG("the child sent no fds (status %d)",
					      WEXITSTATUS(status));
		}
		close(sv[0]);

		/* Readers on the stats fds, while the child's vCPUs run... */
		for (i = 0; i < 2; i++) {
			rd[i] = (struct reader){ .idx = i, .nfds = KILL_VCPUS + 1,
						 .fds = fds + 1, .stop = &stop,
						 .err = &err };
			ASSERT_EQ(0, pthread_create(&rd[i].t, NULL, mono_reader, &rd[i]));
		}
		ks_sleep_us(20000 + ks_rnd(&rs) % 200000);
		/*
		 * The vCPUs must have run first: on a slow kernel (the debug
		 * one, under TCG) they were seen not to start within 20 ms.
		 */
		for (i = 0; i < 500 && !stat_sum(_metadata, fds[1],
						 self->ec.stat, 256); i++)
			ks_sleep_us(20000);
		/* ...while the child dies in KVM_RUN... */
		ASSERT_EQ(0, kill(pid, SIGKILL));
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFSIGNALED(status));
		/* ...and after; then the VM fd goes too. */
		extra = ioctl(fds[0], KVM_GET_STATS_FD, 0);
		EXPECT_LE(0, extra) TH_LOG("VM fd of a dead creator: %s", strerror(errno));
		ks_sleep_us(20000 + ks_rnd(&rs) % 50000);
		close(fds[0]);
		ks_sleep_us(20000);
		stop = 1;
		for (i = 0; i < 2; i++) {
			pthread_join(rd[i].t, NULL);
			reads += rd[i].reads;
		}

		/* Dead: nothing in guest mode, and every file holds still. */
		EXPECT_EQ(0, stat_sum(_metadata, fds[1], "in_guest", 1));
		for (i = 1; i < KILL_VCPUS + 2; i++) {
			ssize_t na = ks_read_whole(fds[i], a, MAX_FILE);
			ssize_t nb = ks_read_whole(fds[i], b, MAX_FILE);

			EXPECT_LT(0, na);
			EXPECT_EQ(na, nb);
			EXPECT_EQ(0, memcmp(a, b, na));
		}
		snprintf(want, sizeof(want), "kvm-%d", pid);
		if (extra >= 0) {
			struct kvmstats s = { 0 };

			EXPECT_EQ(0, kvmstats_open(&s, extra)) TH_LOG("%s", s.err);
			EXPECT_STREQ(want, s.id);
			kvmstats_close(&s);
		}
		/* The vCPUs ran: the VM file counts their CPUID exits. */
		EXPECT_LT(0, stat_sum(_metadata, fds[1], self->ec.stat, 256));
		for (i = 1; i < KILL_VCPUS + 2; i++)
			close(fds[i]);
		rounds++;
	}
	TH_LOG("%d creators killed, %ld reads", rounds, reads);
	EXPECT_EQ(0, err.count) TH_LOG("%ld errors; first: %s", err.count, err.first);
	free(a);
	free(b);
	check_no_leak(_metadata, self);
}

/* ------------------------------------------------------------------ */
/* rmmod_insmod_loop                                                   */

#define RM_VMS		2
#define RM_VCPUS	2
#define RM_READERS	2

struct rm_reader {
	pthread_t t;
	int idx;
	int src[RM_VMS * (RM_VCPUS + 1)];
	atomic_int *stop;
	struct ks_errs *err;
	int native_cap;		/* the kernel's own KVM_CAP_BINARY_STATS_FD */
	long ours, native;
};

static void *rm_reader_fn(void *arg)
{
	struct rm_reader *r = arg;
	uint64_t rs = ks_rnd_seed(r->idx + 50);
	const int nsrc = RM_VMS * (RM_VCPUS + 1);
	char why[256];

	while (!*r->stop) {
		int which = ks_rnd(&rs) % nsrc;
		int sfd = ioctl(r->src[which], KVM_GET_STATS_FD, 0);
		int is_vm = which % (RM_VCPUS + 1) == 0;
		struct kvmstats s = { 0 };
		struct fd_info fi;
		int ret, k;

		if (sfd < 0 && !r->native_cap &&
		    errno == (is_vm ? ENOTTY : EINVAL)) {
			/* KVM's own answer while the module is out. */
			r->native++;
			ks_sleep_us(ks_rnd(&rs) % 5000);
			continue;
		}
		if (sfd < 0) {
			ks_errs_add(r->err, "KVM_GET_STATS_FD on a %s fd: %s",
				is_vm ? "VM" : "vCPU", strerror(errno));
			continue;
		}
		/* The module's file or KVM's, whoever answered: well formed. */
		ret = kvmstats_open(&s, dup(sfd));
		if (ret) {
			ks_errs_add(r->err, "libkvmstats: %s", s.err);
		} else {
			if (ks_find(&s, "in_guest"))
				r->ours++;
			else
				r->native++;
			kvmstats_close(&s);
		}
		/* Hold it a while, reading. */
		for (k = ks_rnd(&rs) % 4; k >= 0; k--) {
			if (fd_info_get(sfd, &fi, why, sizeof(why)) ||
			    random_reads(sfd, &fi, &rs, 4, why, sizeof(why)))
				ks_errs_add(r->err, "%s", why);
			free(fi.fixed);
			ks_sleep_us(ks_rnd(&rs) % 3000);
		}
		close(sfd);
		ks_sleep_us(ks_rnd(&rs) % 5000);
	}
	return NULL;
}

TEST_F_TIMEOUT(stress, rmmod_insmod_loop, TIMEOUT_S)
{
	struct ks_errs err = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct runner run[RM_VMS * RM_VCPUS];
	struct rm_reader rd[RM_READERS];
	long cycles = 0, refused = 0, tries = 0;
	uint64_t rs = ks_rnd_seed(3);
	unsigned char code[32];
	size_t len;
	struct ks_vm vm[RM_VMS];
	atomic_int stop = 0;
	long before[RM_VMS * RM_VCPUS];
	int v, c, i, ret, bad_rmmod = 0, bad_insmod = 0;
	double t, t_unload = 0, t_load = 0;
	int native_cap;

	NEED_SETUP();
	native_cap = ks_native_binary_stats();
	ASSERT_LE(0, native_cap) TH_LOG("KVM_CHECK_EXTENSION without the module: %s",
					strerror(-native_cap));
	install_sigusr1();
	len = ks_code_cpuid_out_loop(code, 10);
	for (v = 0; v < RM_VMS; v++) {
		ret = ks_vm_create(&vm[v], code, len, RM_VCPUS);
		ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	}
	for (v = 0; v < RM_VMS; v++)
		for (c = 0; c < RM_VCPUS; c++)
			ASSERT_EQ(0, start_runner(&run[v * RM_VCPUS + c], &vm[v].vcpu[c]));
	for (i = 0; i < RM_READERS; i++) {
		rd[i] = (struct rm_reader){ .idx = i, .stop = &stop, .err = &err,
					    .native_cap = native_cap };
		for (v = 0; v < RM_VMS; v++) {
			rd[i].src[v * (RM_VCPUS + 1)] = vm[v].fd;
			for (c = 0; c < RM_VCPUS; c++)
				rd[i].src[v * (RM_VCPUS + 1) + 1 + c] = vm[v].vcpu[c].fd;
		}
		ASSERT_EQ(0, pthread_create(&rd[i].t, NULL, rm_reader_fn, &rd[i]));
	}

	/*
	 * Until the deadline, and past it until one cycle went through: an
	 * unload succeeds only between two readers' files, and under a
	 * loaded emulator those gaps are rare (400 tries, about a second,
	 * once saw none).  A module reference that never drops fails it
	 * after 30 s.
	 */
	while (cycles < 1 || ks_now_s() < self->deadline) {
		if (ks_now_s() > self->deadline + 30)
			break;	/* never unloaded in 30 s past the deadline */
		tries++;
		t = ks_now_s();
		ret = ks_module_unload();
		if (ret == -EBUSY || ret == -EAGAIN || ret == -EWOULDBLOCK) {
			refused++;
			ks_sleep_us(ks_rnd(&rs) % 2000);
			continue;
		}
		if (ret) {
			if (!bad_rmmod++)
				TH_LOG("rmmod: %s", strerror(-ret));
			if (!ks_module_loaded())
				goto load;
			continue;
		}
		t_unload += ks_now_s() - t;
		ks_sleep_us(ks_rnd(&rs) % 5000);
load:
		t = ks_now_s();
		ret = ks_module_load("");
		t_load += ks_now_s() - t;
		if (ret) {
			if (!bad_insmod++)
				TH_LOG("insmod: %s", strerror(-ret));
			if (!ks_module_loaded())
				break;
		}
		cycles++;
		ks_sleep_us(ks_rnd(&rs) % 3000);
	}
	/*
	 * KVM_RUN still works after all that: each vCPU returns again
	 * (within KS_PROGRESS_WAIT_MS: only a vCPU that failed to waits it out).
	 */
	for (i = 0; i < RM_VMS * RM_VCPUS; i++)
		before[i] = run[i].runs;
	ks_sleep_us(200000);
	for (i = 0; i < RM_VMS * RM_VCPUS; i++) {
		long waited = 0;

		while (run[i].runs == before[i] && !run[i].err &&
		       waited < KS_PROGRESS_WAIT_MS * 1000L) {
			ks_sleep_us(10000);
			waited += 10000;
		}
		EXPECT_LT(before[i], run[i].runs) TH_LOG("vCPU %d stopped returning", i);
	}
	stop = 1;
	for (i = 0; i < RM_READERS; i++)
		pthread_join(rd[i].t, NULL);
	for (i = 0; i < RM_VMS * RM_VCPUS; i++) {
		stop_runner(&run[i]);
		EXPECT_EQ(0, run[i].err) TH_LOG("vCPU %d: KVM_RUN gave %d", i, run[i].err);
	}
	TH_LOG("%ld rmmod tries: %ld unload+load cycles, %ld refused as busy; stats fds: %ld module, %ld native (KVM's refusal where it has none)",
	       tries, cycles, refused, rd[0].ours + rd[1].ours,
	       rd[0].native + rd[1].native);
	if (cycles)
		TH_LOG("a successful rmmod took %.0f ms, insmod %.0f ms (mean)",
		       t_unload * 1000 / cycles, t_load * 1000 / cycles);
	EXPECT_EQ(0, bad_rmmod);
	EXPECT_EQ(0, bad_insmod);
	EXPECT_LT(0, cycles) TH_LOG("rmmod never got through");
	EXPECT_EQ(0, err.count) TH_LOG("%ld errors; first: %s", err.count, err.first);
	ASSERT_EQ(1, ks_module_loaded());

	/* The module state of running VMs went with each unload: 0 now. */
	for (v = 0; v < RM_VMS; v++)
		ks_vm_destroy(&vm[v]);
	self->base.vms = self->base.vcpus = self->base.files = 0;
	check_no_leak(_metadata, self);
}

/* ------------------------------------------------------------------ */
/* get_stats_fd_storm                                                  */

#define STORM_THREADS	16

struct storm {
	pthread_t t;
	int idx;
	int vcpu_fd, vm_fd;
	int iters;
	const unsigned char *fixed_vcpu, *fixed_vm;
	size_t fixed_vcpu_len, fixed_vm_len;
	pthread_barrier_t *barrier;
	struct ks_errs *err;
	int kept[8];
	int nkept;
	long opens;
};

static void *storm_fn(void *arg)
{
	struct storm *s = arg;
	unsigned char buf[MAX_FILE];
	uint64_t rs = ks_rnd_seed(s->idx + 200);
	int i;

	pthread_barrier_wait(s->barrier);
	for (i = 0; i < s->iters; i++) {
		int vm = ks_rnd(&rs) % 4 == 0;
		int fd = ioctl(vm ? s->vm_fd : s->vcpu_fd, KVM_GET_STATS_FD, 0);
		size_t len = vm ? s->fixed_vm_len : s->fixed_vcpu_len;

		if (fd < 0) {
			ks_errs_add(s->err, "KVM_GET_STATS_FD: %s", strerror(errno));
			continue;
		}
		s->opens++;
		if (ks_pread_exact(fd, buf, len, 0) ||
		    memcmp(buf, vm ? s->fixed_vm : s->fixed_vcpu, len))
			ks_errs_add(s->err, "a %s stats fd reads another fixed part",
				vm ? "VM" : "vCPU");
		if (s->nkept < 8 && ks_rnd(&rs) % 8 == 0)
			s->kept[s->nkept++] = fd;
		else
			close(fd);
	}
	return NULL;
}

TEST_F_TIMEOUT(stress, get_stats_fd_storm, TIMEOUT_S)
{
	struct ks_errs err = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct storm st[STORM_THREADS];
	pthread_barrier_t barrier;
	struct fd_info vcpu_fi, vm_fi;
	struct runner run;
	struct ks_vm vm;
	long opens = 0, kept = 0;
	char why[256];
	int i, j, ret, rounds = 0, fd;

	NEED_SETUP();
	/*
	 * cross_process=1, as an agent loads it: the vCPU fds are asked for
	 * while the vCPU is inside KVM_RUN, where KVM (and so the module's
	 * default load, which serves the ioctl inside KVM's) would wait for
	 * the vCPU's mutex until the vCPU returns to userspace.
	 */
	ret = ks_module_reload("cross_process=1");
	ASSERT_EQ(0, ret) TH_LOG("reloading: %s", strerror(-ret));
	install_sigusr1();
	ret = ks_vm_create(&vm, ks_code_cpuid_forever, ks_code_cpuid_forever_len, 1);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
	/* The vCPU runs before anyone asks: on non-RT its exits race the fds. */
	ASSERT_EQ(0, start_runner(&run, &vm.vcpu[0]));
	ks_sleep_us(20000);

	fd = ioctl(vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fd_info_get(fd, &vcpu_fi, why, sizeof(why))) TH_LOG("%s", why);
	close(fd);
	fd = ioctl(vm.fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, fd_info_get(fd, &vm_fi, why, sizeof(why))) TH_LOG("%s", why);
	close(fd);

	while (rounds < 10 * self->scale && (rounds < 1 || ks_now_s() < self->deadline)) {
		ASSERT_EQ(0, pthread_barrier_init(&barrier, NULL, STORM_THREADS));
		for (i = 0; i < STORM_THREADS; i++) {
			st[i] = (struct storm){
				.idx = i + rounds * STORM_THREADS,
				.vcpu_fd = vm.vcpu[0].fd, .vm_fd = vm.fd,
				.iters = 32,
				.fixed_vcpu = vcpu_fi.fixed,
				.fixed_vcpu_len = vcpu_fi.h.data_offset,
				.fixed_vm = vm_fi.fixed,
				.fixed_vm_len = vm_fi.h.data_offset,
				.barrier = &barrier, .err = &err,
			};
			ASSERT_EQ(0, pthread_create(&st[i].t, NULL, storm_fn, &st[i]));
		}
		for (i = 0; i < STORM_THREADS; i++)
			pthread_join(st[i].t, NULL);
		pthread_barrier_destroy(&barrier);
		/* One state for the VM and one for its vCPU, however many fds. */
		for (i = 0; i < STORM_THREADS; i++)
			kept += st[i].nkept;
		EXPECT_EQ(self->base.vms + 1, objects("vms"));
		EXPECT_EQ(self->base.vcpus + 1, objects("vcpus"));
		EXPECT_EQ(self->base.files + kept, objects("files"));
		for (i = 0; i < STORM_THREADS; i++) {
			opens += st[i].opens;
			for (j = 0; j < st[i].nkept; j++)
				close(st[i].kept[j]);
		}
		kept = 0;
		EXPECT_EQ(self->base.files, objects("files"));
		rounds++;
	}
	stop_runner(&run);
	EXPECT_EQ(0, run.err) TH_LOG("KVM_RUN gave %d", run.err);
	TH_LOG("%d rounds, %ld stats fds opened by %d threads", rounds, opens,
	       STORM_THREADS);
	EXPECT_EQ(0, err.count) TH_LOG("%ld errors; first: %s", err.count, err.first);
	free(vcpu_fi.fixed);
	free(vm_fi.fixed);
	ks_vm_destroy(&vm);
	check_no_leak(_metadata, self);
}

TEST_HARNESS_MAIN
