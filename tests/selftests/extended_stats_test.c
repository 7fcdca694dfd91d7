// SPDX-License-Identifier: GPL-2.0
/*
 * The module's extended stats count exactly what a guest does: a guest
 * with known work (N port writes, K port reads, M MSR reads, one MMIO
 * write and one MMIO read, then hlt) must show exactly those numbers, and
 * every exit must give one exit-latency sample.  The exit-reason
 * histogram is whichever vendor's the module serves (found by its name in
 * the stats fd, include/kvm_statsfd/uapi.h): the same tests run on AMD SVM
 * and Intel VMX, bucket by bucket.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <asm/svm.h>
#include <asm/vmx.h>

#include "kselftest_harness.h"
#include "ks_harness.h"
#include "internal.h"	/* white-box: reads the handle's fields */
#include "ks_util.h"
#include "kvm_statsfd/uapi.h"

/* The known work of ks_code_known_work (ks_util.h). */
#define N_OUT	KS_WORK_OUT
#define K_IN	KS_WORK_IN
#define M_MSR	KS_WORK_MSR

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

FIXTURE(ext) {
	struct ks_vm vm;
	int loaded_here;
};

FIXTURE_SETUP(ext)
{
	int ret;

	if (access("/dev/kvm", R_OK | W_OK))
		SKIP(return, "/dev/kvm is not usable");
	if (!ks_module_loaded()) {
		ASSERT_EQ(0, ks_module_load(""));
		self->loaded_here = 1;
	}
	ret = ks_vm_create(&self->vm, ks_code_known_work,
			   ks_code_known_work_len, 1);
	ASSERT_EQ(0, ret) TH_LOG("ks_vm_create: %s", strerror(-ret));
}

FIXTURE_TEARDOWN(ext)
{
	ks_vm_destroy(&self->vm);
	if (self->loaded_here)
		ks_module_unload();
}

static uint64_t val(struct __test_metadata *_metadata, struct kvmstats *s,
		    const char *name, unsigned int i)
{
	const struct kvmstats_desc *d = ks_find(s, name);

	EXPECT_NE(NULL, d) TH_LOG("no stat %s", name);
	return d ? kvmstats_value(s, d, i) : 0;
}

static uint64_t total(struct __test_metadata *_metadata, struct kvmstats *s,
		      const char *name)
{
	const struct kvmstats_desc *d = ks_find(s, name);
	uint64_t sum = 0;
	unsigned int i;

	EXPECT_NE(NULL, d) TH_LOG("no stat %s", name);
	for (i = 0; d && i < d->size; i++)
		sum += kvmstats_value(s, d, i);
	return sum;
}

/*
 * The module's exit-reason histogram and the dense indexes of the exits
 * the tests cause, for the vendor whose histogram the stats fd has.
 */
struct exit_map {
	const char *stat;
	unsigned int buckets;
	int svm;
	unsigned int cpuid, io, msr_read, msr_write, hlt, mmio, intr, nmi;
};

static int exit_map_find(const struct kvmstats *s, struct exit_map *m)
{
	int svm = !!ks_find(s, KVM_STATSFD_EXIT_STAT_SVM);
	int vmx = !!ks_find(s, KVM_STATSFD_EXIT_STAT_VMX);

	if (svm + vmx != 1)
		return -ENOENT;
	memset(m, 0, sizeof(*m));
	m->svm = svm;
	if (svm) {
		m->stat = KVM_STATSFD_EXIT_STAT_SVM;
		m->buckets = KVM_STATSFD_SVM_BUCKETS;
		m->cpuid = kvm_statsfd_svm_index(SVM_EXIT_CPUID);
		m->io = kvm_statsfd_svm_index(SVM_EXIT_IOIO);
		m->msr_read = kvm_statsfd_svm_index(SVM_EXIT_MSR);
		m->msr_write = m->msr_read;
		m->hlt = kvm_statsfd_svm_index(SVM_EXIT_HLT);
		m->mmio = kvm_statsfd_svm_index(SVM_EXIT_NPF);
		m->intr = kvm_statsfd_svm_index(SVM_EXIT_INTR);
		m->nmi = kvm_statsfd_svm_index(SVM_EXIT_NMI);
	} else {
		m->stat = KVM_STATSFD_EXIT_STAT_VMX;
		m->buckets = KVM_STATSFD_VMX_BUCKETS;
		m->cpuid = kvm_statsfd_vmx_index(EXIT_REASON_CPUID);
		m->io = kvm_statsfd_vmx_index(EXIT_REASON_IO_INSTRUCTION);
		m->msr_read = kvm_statsfd_vmx_index(EXIT_REASON_MSR_READ);
		m->msr_write = kvm_statsfd_vmx_index(EXIT_REASON_MSR_WRITE);
		m->hlt = kvm_statsfd_vmx_index(EXIT_REASON_HLT);
		/* A known MMIO page: KVM cached it as misconfigured. */
		m->mmio = kvm_statsfd_vmx_index(EXIT_REASON_EPT_MISCONFIG);
		m->intr = kvm_statsfd_vmx_index(EXIT_REASON_EXTERNAL_INTERRUPT);
		m->nmi = kvm_statsfd_vmx_index(EXIT_REASON_EXCEPTION_NMI);
	}
	return 0;
}

TEST_F(ext, known_work_exact_counts)
{
	struct ks_vcpu *v = &self->vm.vcpu[0];
	int outs = 0, ins = 0, mmio_w = 0, mmio_r = 0, r;
	struct kvmstats s = { 0 }, vm = { 0 };
	uint64_t t0, wall, exits;
	struct exit_map m;

	ASSERT_EQ(0, kvmstats_open_from(&s, v->fd)) TH_LOG("%s", s.err);
	ASSERT_EQ(0, kvmstats_open_from(&vm, self->vm.fd)) TH_LOG("%s", vm.err);
	ASSERT_EQ(0, exit_map_find(&s, &m)) TH_LOG("no single exit-reason stat");

	t0 = now_ns();
	for (;;) {
		r = ks_vcpu_run(v);
		ASSERT_LE(0, r) TH_LOG("KVM_RUN: %s", strerror(-r));
		if (r == KVM_EXIT_IO && v->run->io.direction == KVM_EXIT_IO_OUT)
			outs++;
		else if (r == KVM_EXIT_IO)
			ins++;
		else if (r == KVM_EXIT_MMIO && v->run->mmio.is_write)
			mmio_w++;
		else if (r == KVM_EXIT_MMIO)
			mmio_r++;
		else
			break;
	}
	wall = now_ns() - t0;
	ASSERT_EQ(KVM_EXIT_HLT, r);
	ASSERT_EQ(N_OUT, outs);
	ASSERT_EQ(K_IN, ins);
	ASSERT_EQ(1, mmio_w);
	ASSERT_EQ(1, mmio_r);

	ASSERT_EQ(0, kvmstats_refresh(&s));
	EXPECT_EQ(N_OUT, val(_metadata, &s, "io_out_exits", 0));
	EXPECT_EQ(K_IN, val(_metadata, &s, "io_in_exits", 0));
	EXPECT_EQ(M_MSR, val(_metadata, &s, "msr_read_exits", 0));
	EXPECT_EQ(0, val(_metadata, &s, "msr_write_exits", 0));
	EXPECT_EQ(1, val(_metadata, &s, "mmio_writes", 0));
	EXPECT_EQ(1, val(_metadata, &s, "mmio_reads", 0));
	EXPECT_EQ(N_OUT + K_IN, val(_metadata, &s, "userspace_exits", KVM_EXIT_IO));
	EXPECT_EQ(2, val(_metadata, &s, "userspace_exits", KVM_EXIT_MMIO));
	EXPECT_EQ(1, val(_metadata, &s, "userspace_exits", KVM_EXIT_HLT));
	EXPECT_EQ(N_OUT + K_IN + 3, total(_metadata, &s, "userspace_exits"));
	EXPECT_EQ(0, val(_metadata, &s, "in_guest", 0));

	/*
	 * Every exit is one latency sample, in the overall histogram unless
	 * it is a HLT (time halted is not exit handling): the HLT's is in
	 * its class's only.  All the time fits the run.
	 */
	exits = total(_metadata, &s, m.stat);
	EXPECT_EQ(val(_metadata, &s, "exits", 0), exits);
	EXPECT_EQ(1, total(_metadata, &s, "exit_latency_hlt_hist"));
	EXPECT_EQ(exits - 1, total(_metadata, &s, "exit_latency_hist"));
	EXPECT_EQ(N_OUT + K_IN, total(_metadata, &s, "exit_latency_io_hist"));
	EXPECT_EQ(M_MSR, total(_metadata, &s, "exit_latency_msr_hist"));
	EXPECT_LT(0, val(_metadata, &s, "exit_latency_ns", 0));
	EXPECT_LT(0, val(_metadata, &s, "guest_ns", 0));
	EXPECT_GE(wall, val(_metadata, &s, "exit_latency_ns", 0) +
		  val(_metadata, &s, "guest_ns", 0));
	EXPECT_GE(val(_metadata, &s, "exit_latency_ns", 0),
		  val(_metadata, &s, "exit_latency_max_ns", 0));
	EXPECT_LT(0, val(_metadata, &s, "exit_latency_max_ns", 0));
	/* Per-class totals: I/O and MSR exits happened, and fit the total. */
	EXPECT_LT(0, val(_metadata, &s, "exit_latency_io_ns", 0));
	EXPECT_LT(0, val(_metadata, &s, "exit_latency_msr_ns", 0));
	EXPECT_GE(val(_metadata, &s, "exit_latency_ns", 0),
		  val(_metadata, &s, "exit_latency_io_ns", 0) +
		  val(_metadata, &s, "exit_latency_npf_ns", 0) +
		  val(_metadata, &s, "exit_latency_msr_ns", 0) +
		  val(_metadata, &s, "exit_latency_intr_ns", 0));

	/* The VM's view: the same sums, its vCPU count, none in guest. */
	ASSERT_EQ(0, kvmstats_refresh(&vm));
	EXPECT_EQ(N_OUT, val(_metadata, &vm, "vcpus_io_out_exits", 0));
	EXPECT_EQ(exits - 1, total(_metadata, &vm, "vcpus_exit_latency_hist"));
	EXPECT_EQ(1, val(_metadata, &vm, "vcpus", 0));
	EXPECT_EQ(0, val(_metadata, &vm, "vcpus_in_guest", 0));
	EXPECT_EQ(NULL, ks_find(&s, "vcpus"));

	kvmstats_close(&s);
	kvmstats_close(&vm);
}

/*
 * A VM file alone: taken before any vCPU ran, with no vCPU stats fd, it
 * counts every vCPU's exits from the first one.  (On PREEMPT_RT the exit
 * path never allocates, so opening the VM file must set up its vCPUs.)
 */
TEST_F(ext, vm_file_alone_counts_every_vcpu)
{
	struct ks_vm vm2;
	struct kvmstats vm = { 0 };
	int i, r, outs = 0;

	r = ks_vm_create(&vm2, ks_code_known_work, ks_code_known_work_len, 2);
	ASSERT_EQ(0, r) TH_LOG("ks_vm_create: %s", strerror(-r));
	ASSERT_EQ(0, kvmstats_open_from(&vm, vm2.fd)) TH_LOG("%s", vm.err);
	for (i = 0; i < 2; i++) {
		struct ks_vcpu *v = &vm2.vcpu[i];

		do {
			r = ks_vcpu_run(v);
			ASSERT_LE(0, r) TH_LOG("KVM_RUN: %s", strerror(-r));
			outs += r == KVM_EXIT_IO &&
				v->run->io.direction == KVM_EXIT_IO_OUT;
		} while (r == KVM_EXIT_IO || r == KVM_EXIT_MMIO);
		ASSERT_EQ(KVM_EXIT_HLT, r);
	}
	ASSERT_EQ(2 * N_OUT, outs);
	ASSERT_EQ(0, kvmstats_refresh(&vm));
	EXPECT_EQ(2, val(_metadata, &vm, "vcpus", 0));
	EXPECT_EQ(2 * N_OUT, val(_metadata, &vm, "vcpus_io_out_exits", 0));
	EXPECT_EQ(2 * K_IN, val(_metadata, &vm, "vcpus_io_in_exits", 0));
	EXPECT_EQ(2 * M_MSR, val(_metadata, &vm, "vcpus_msr_read_exits", 0));
	EXPECT_EQ(2, val(_metadata, &vm, "vcpus_mmio_writes", 0));
	EXPECT_EQ(2, val(_metadata, &vm, "vcpus_userspace_exits", KVM_EXIT_HLT));
	EXPECT_EQ(2, total(_metadata, &vm, "vcpus_exit_latency_hlt_hist"));
	kvmstats_close(&vm);
	ks_vm_destroy(&vm2);
}

/*
 * Known work by exit reason.  The guest first touches its code page and
 * the MMIO page (first-touch faults, not counted) and stops at port 0x20;
 * from there on every exit is known: C CPUIDs, N port writes, K port reads,
 * M MSR reads and M MSR writes, W MMIO writes and R MMIO reads through the
 * now-cached MMIO mapping, then a spin without exits until the host has
 * seen an external interrupt (reads of port 0x22 say whether to spin on),
 * and hlt.  The guest sets IF for the spin: a host interrupt exits
 * whatever the guest's IF (external-interrupt exiting, SVM's V_INTR_MASKING)
 * and KVM injects nothing here (no irqchip), but Bochs's VMX exits only
 * when the guest could take the interrupt.  The differences from the stop
 * at port 0x20 must be exactly
 * those, bucket by bucket, in the direction counters, in the per-class
 * latency histograms and in userspace_exits; host interrupts (and NMIs)
 * are the only exits the guest does not choose, and they must be in their
 * own buckets and class.
 */
#define W_C	13
#define W_N	17
#define W_K	19
#define W_M	7
#define W_W	5
#define W_R	3
#define SPIN_MAX_NS	(20 * 1000000000ull)

static const unsigned char work_code[] = {
	0xb8, 0x00, 0x20,		/* mov ax, 0x2000 */
	0x8e, 0xd8,			/* mov ds, ax: ds:0 is unbacked */
	0xa2, 0x00, 0x00,		/* mov [0], al: first MMIO write */
	0xa0, 0x00, 0x00,		/* mov al, [0]: first MMIO read */
	0xe6, 0x20,			/* out 0x20, al: snapshot */
	0xbe, W_C, 0x00,		/* mov si, W_C */
	0x66, 0x31, 0xc0,		/* 1: xor eax, eax */
	0x0f, 0xa2,			/*    cpuid */
	0x4e,				/*    dec si */
	0x75, 0xf8,			/*    jnz 1b */
	0xb9, W_N, 0x00,		/* mov cx, W_N */
	0xe6, 0x10,			/* 2: out 0x10, al */
	0xe2, 0xfc,			/*    loop 2b */
	0xb9, W_K, 0x00,		/* mov cx, W_K */
	0xe4, 0x11,			/* 3: in al, 0x11 */
	0xe2, 0xfc,			/*    loop 3b */
	0xbe, W_M, 0x00,		/* mov si, W_M */
	0x66, 0xb9, 0xa0, 0x01, 0, 0,	/* 4: mov ecx, 0x1a0 (MISC_ENABLE) */
	0x0f, 0x32,			/*    rdmsr */
	0x0f, 0x30,			/*    wrmsr: the value just read */
	0x4e,				/*    dec si */
	0x75, 0xf3,			/*    jnz 4b */
	0xbb, W_W, 0x00,		/* mov bx, W_W */
	0xa2, 0x00, 0x00,		/* 5: mov [0], al */
	0x4b,				/*    dec bx */
	0x75, 0xfa,			/*    jnz 5b */
	0xbb, W_R, 0x00,		/* mov bx, W_R */
	0xa0, 0x00, 0x00,		/* 6: mov al, [0] */
	0x4b,				/*    dec bx */
	0x75, 0xfa,			/*    jnz 6b */
	0xfb,				/* sti (see below) */
	0xba, 0x40, 0x00,		/* 7: mov dx, 0x40 */
	0xb9, 0xff, 0xff,		/* 8: mov cx, 0xffff */
	0xe2, 0xfe,			/* 9: loop 9b */
	0x4a,				/*    dec dx */
	0x75, 0xf8,			/*    jnz 8b */
	0xe4, 0x22,			/*    in al, 0x22 */
	0x84, 0xc0,			/*    test al, al */
	0x75, 0xef,			/*    jnz 7b */
	0xf4,				/* hlt */
};

/* Value @i of stat @name now, minus what it was in the snapshot @old. */
static uint64_t delta(struct __test_metadata *_metadata,
		      const struct kvmstats *s, const uint64_t *old,
		      const char *name, unsigned int i)
{
	const struct kvmstats_desc *d = ks_find(s, name);

	EXPECT_NE(NULL, d) TH_LOG("no stat %s", name);
	if (!d || i >= d->size)
		return 0;
	return kvmstats_value(s, d, i) - old[d->offset / 8 + i];
}

static uint64_t delta_total(struct __test_metadata *_metadata,
			    const struct kvmstats *s, const uint64_t *old,
			    const char *name)
{
	const struct kvmstats_desc *d = ks_find(s, name);
	uint64_t sum = 0;
	unsigned int i;

	EXPECT_NE(NULL, d) TH_LOG("no stat %s", name);
	for (i = 0; d && i < d->size; i++)
		sum += delta(_metadata, s, old, name, i);
	return sum;
}

/* Slow emulators (Bochs: ~20 s to load the module) need the time. */
TEST_F_TIMEOUT(ext, known_work_by_exit_reason, 300)
{
	uint64_t want[KVM_STATSFD_SVM_BUCKETS] = { 0 }, *old = NULL;
	unsigned int spins = 0, i, io_ins = 0, io_outs = 0, mmio = 0;
	uint64_t host_exits, got, all = 0, t0 = now_ns();
	struct ks_vcpu *v;
	struct exit_map m;
	struct kvmstats s = { 0 };
	int r, snapped = 0;

	ks_vm_destroy(&self->vm);
	r = ks_vm_create(&self->vm, work_code, sizeof(work_code), 1);
	ASSERT_EQ(0, r) TH_LOG("ks_vm_create: %s", strerror(-r));
	v = &self->vm.vcpu[0];
	ASSERT_EQ(0, kvmstats_open_from(&s, v->fd)) TH_LOG("%s", s.err);
	ASSERT_EQ(0, exit_map_find(&s, &m)) TH_LOG("no single exit-reason stat");
	ASSERT_GE(KVM_STATSFD_SVM_BUCKETS, m.buckets);
	ASSERT_EQ(m.buckets, ks_find(&s, m.stat)->size);
	old = calloc(1, s.data_size);
	ASSERT_NE(NULL, old);

	for (;;) {
		r = ks_vcpu_run(v);
		ASSERT_LE(0, r) TH_LOG("KVM_RUN: %s", strerror(-r));
		if (r != KVM_EXIT_IO && r != KVM_EXIT_MMIO)
			break;
		if (r == KVM_EXIT_IO && v->run->io.port == 0x20) {
			ASSERT_EQ(0, snapped);
			ASSERT_EQ(0, kvmstats_refresh(&s));
			memcpy(old, s.data, s.data_size);
			snapped = 1;
			continue;
		}
		if (!snapped)
			continue;
		if (r == KVM_EXIT_MMIO) {
			mmio++;
			continue;
		}
		if (v->run->io.direction == KVM_EXIT_IO_OUT) {
			io_outs++;
			continue;
		}
		io_ins++;
		if (v->run->io.port == 0x22) {
			/* Spin on until a host interrupt has been seen. */
			ASSERT_EQ(0, kvmstats_refresh(&s));
			spins++;
			*((unsigned char *)v->run + v->run->io.data_offset) =
				!delta(_metadata, &s, old, m.stat, m.intr) &&
				now_ns() - t0 < SPIN_MAX_NS;
		}
	}
	ASSERT_EQ(KVM_EXIT_HLT, r) TH_LOG("exit %d at rip %#llx", r,
					  (unsigned long long)v->run->s.regs.regs.rip);
	ASSERT_EQ(1, snapped);
	ASSERT_EQ(W_N, io_outs);
	ASSERT_EQ(W_K + spins, io_ins);
	ASSERT_EQ(W_W + W_R, mmio);
	ASSERT_EQ(0, kvmstats_refresh(&s));

	/* The host's own: at least one interrupt, in its bucket and class. */
	got = delta(_metadata, &s, old, m.stat, m.intr);
	EXPECT_LT(0, got) TH_LOG("no external interrupt in %u spins, %llu ms",
				 spins, (unsigned long long)(now_ns() - t0) / 1000000);
	EXPECT_EQ(got, delta_total(_metadata, &s, old, "exit_latency_intr_hist"));
	host_exits = got + delta(_metadata, &s, old, m.stat, m.nmi);

	/* Bucket by bucket. */
	want[m.cpuid] += W_C;
	want[m.io] += W_N + W_K + spins;
	want[m.msr_read] += W_M;
	want[m.msr_write] += W_M;
	want[m.mmio] += W_W + W_R;
	want[m.hlt] += 1;
	want[m.intr] += got;
	want[m.nmi] += delta(_metadata, &s, old, m.stat, m.nmi);
	for (i = 0; i < m.buckets; i++) {
		got = delta(_metadata, &s, old, m.stat, i);
		all += got;
		EXPECT_EQ(want[i], got) TH_LOG("%s bucket %u", m.stat, i);
	}
	EXPECT_EQ(W_C + W_N + W_K + spins + 2 * W_M + W_W + W_R + 1 +
		  host_exits, all);
	/* Every exit counted once, as KVM's own counter sees them. */
	EXPECT_EQ(delta(_metadata, &s, old, "exits", 0), all);

	/* Directions. */
	EXPECT_EQ(W_N, delta(_metadata, &s, old, "io_out_exits", 0));
	EXPECT_EQ(W_K + spins, delta(_metadata, &s, old, "io_in_exits", 0));
	EXPECT_EQ(W_M, delta(_metadata, &s, old, "msr_read_exits", 0));
	EXPECT_EQ(W_M, delta(_metadata, &s, old, "msr_write_exits", 0));
	EXPECT_EQ(W_W, delta(_metadata, &s, old, "mmio_writes", 0));
	EXPECT_EQ(W_R, delta(_metadata, &s, old, "mmio_reads", 0));

	/* One latency sample per exit, in its class; the HLT not overall. */
	EXPECT_EQ(all - 1, delta_total(_metadata, &s, old, "exit_latency_hist"));
	EXPECT_EQ(W_N + W_K + spins,
		  delta_total(_metadata, &s, old, "exit_latency_io_hist"));
	EXPECT_EQ(2 * W_M,
		  delta_total(_metadata, &s, old, "exit_latency_msr_hist"));
	EXPECT_EQ(W_W + W_R,
		  delta_total(_metadata, &s, old, "exit_latency_npf_hist"));
	EXPECT_EQ(1, delta_total(_metadata, &s, old, "exit_latency_hlt_hist"));

	/* What reached userspace, by KVM exit reason. */
	EXPECT_EQ(W_N + W_K + spins,
		  delta(_metadata, &s, old, "userspace_exits", KVM_EXIT_IO));
	EXPECT_EQ(W_W + W_R,
		  delta(_metadata, &s, old, "userspace_exits", KVM_EXIT_MMIO));
	EXPECT_EQ(1, delta(_metadata, &s, old, "userspace_exits", KVM_EXIT_HLT));
	EXPECT_EQ(W_N + W_K + spins + W_W + W_R + 1,
		  delta_total(_metadata, &s, old, "userspace_exits"));

	free(old);
	kvmstats_close(&s);
}

TEST_HARNESS_MAIN
