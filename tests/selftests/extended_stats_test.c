// SPDX-License-Identifier: GPL-2.0
/*
 * The module's extended stats count exactly what a guest does: a guest
 * with known work (N port writes, K port reads, M MSR reads, one MMIO
 * write and one MMIO read, then hlt) must show exactly those numbers, and
 * every exit must give one exit-latency sample.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "kvmstats.h"
#include "ks_util.h"

#define N_OUT	37
#define K_IN	23
#define M_MSR	11

/* Real-mode guest code; the counts are patched in by code_init(). */
static unsigned char code[] = {
	0xb9, N_OUT, 0x00,		/* mov cx, N_OUT */
	0xe6, 0x10,			/* 1: out 0x10, al */
	0xe2, 0xfc,			/*    loop 1b */
	0xb9, K_IN, 0x00,		/* mov cx, K_IN */
	0xe4, 0x11,			/* 2: in al, 0x11 */
	0xe2, 0xfc,			/*    loop 2b */
	0xbe, M_MSR, 0x00,		/* mov si, M_MSR */
	0x66, 0xb9, 0x1b, 0, 0, 0,	/* 3: mov ecx, 0x1b (APIC_BASE) */
	0x0f, 0x32,			/*    rdmsr */
	0x4e,				/*    dec si */
	0x75, 0xf6,			/*    jnz 3b */
	0xb8, 0x00, 0x20,		/* mov ax, 0x2000 */
	0x8e, 0xd8,			/* mov ds, ax: ds:0 is unbacked */
	0xa2, 0x00, 0x00,		/* mov [0], al: MMIO write */
	0xa0, 0x00, 0x00,		/* mov al, [0]: MMIO read */
	0xf4,				/* hlt */
};

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
	ret = ks_vm_create(&self->vm, code, sizeof(code), 1);
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
	const struct kvmstats_desc *d = kvmstats_find(s, name);

	EXPECT_NE(NULL, d) TH_LOG("no stat %s", name);
	return d ? kvmstats_value(s, d, i) : 0;
}

static uint64_t total(struct __test_metadata *_metadata, struct kvmstats *s,
		      const char *name)
{
	const struct kvmstats_desc *d = kvmstats_find(s, name);
	uint64_t sum = 0;
	unsigned int i;

	EXPECT_NE(NULL, d) TH_LOG("no stat %s", name);
	for (i = 0; d && i < d->size; i++)
		sum += kvmstats_value(s, d, i);
	return sum;
}

TEST_F(ext, known_work_exact_counts)
{
	struct ks_vcpu *v = &self->vm.vcpu[0];
	int outs = 0, ins = 0, mmio_w = 0, mmio_r = 0, r;
	struct kvmstats s, vm;
	uint64_t t0, wall, exits;

	ASSERT_EQ(0, kvmstats_open_from(&s, v->fd)) TH_LOG("%s", s.err);
	ASSERT_EQ(0, kvmstats_open_from(&vm, self->vm.fd)) TH_LOG("%s", vm.err);

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

	/* Every exit is one latency sample; all the time fits the run. */
	exits = total(_metadata, &s, "exit_reasons_svm");
	EXPECT_EQ(val(_metadata, &s, "exits", 0), exits);
	EXPECT_EQ(exits, total(_metadata, &s, "exit_latency_hist"));
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
		  val(_metadata, &s, "exit_latency_hlt_ns", 0) +
		  val(_metadata, &s, "exit_latency_intr_ns", 0));

	/* The VM's view: the same sums, its vCPU count, none in guest. */
	ASSERT_EQ(0, kvmstats_refresh(&vm));
	EXPECT_EQ(N_OUT, val(_metadata, &vm, "io_out_exits", 0));
	EXPECT_EQ(exits, total(_metadata, &vm, "exit_latency_hist"));
	EXPECT_EQ(1, val(_metadata, &vm, "vcpus", 0));
	EXPECT_EQ(0, val(_metadata, &vm, "in_guest", 0));
	EXPECT_EQ(NULL, kvmstats_find(&s, "vcpus"));

	kvmstats_close(&s);
	kvmstats_close(&vm);
}

TEST_HARNESS_MAIN
