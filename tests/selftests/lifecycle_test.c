// SPDX-License-Identifier: GPL-2.0
/*
 * A host's life around the module: the vendor module (kvm_amd, kvm_intel)
 * unloaded and loaded again while kvm_statsfd stays, with other modules
 * loaded in between and other parameters; kvm_statsfd loaded before the
 * vendor module, as parallel module loading at boot may order them; and
 * what KVM itself pins while VMs or stats fds exist.  After every step a
 * new VM does known work and the module must count it exactly, exit
 * reason by exit reason: a module that kept an address inside the first
 * load of the vendor module, or never learnt of the vendor module, either
 * oopses (the judge fails the run) or miscounts here.
 *
 * These tests unload KVM's vendor module: they run only where that is
 * harmless, in the test guest, which sets KS_KVM_MODULES to the directory
 * of kvm.ko and the vendor modules.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
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

#define FILLER	"rig_filler"

static int delete_module(const char *name)
{
	return syscall(SYS_delete_module, name, O_NONBLOCK) < 0 ? -errno : 0;
}

static int module_live(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/module/%s/initstate", name);
	return access(path, R_OK) == 0;
}

FIXTURE(life) {
	struct ks_module_state mod;
	const char *dir;	/* KS_KVM_MODULES */
	char vendor[32];	/* kvm_amd or kvm_intel */
	char filler[512];	/* the rig's filler module */
};

FIXTURE_SETUP(life)
{
	const char *ko = ks_module_path(), *slash = strrchr(ko, '/');

	self->dir = getenv("KS_KVM_MODULES");
	if (!self->dir)
		SKIP(return, "KS_KVM_MODULES not set: will not unload KVM here");
	if (access("/dev/kvm", R_OK | W_OK))
		SKIP(return, "/dev/kvm is not usable: %s", strerror(errno));
	if (module_live("kvm_amd"))
		snprintf(self->vendor, sizeof(self->vendor), "kvm_amd");
	else if (module_live("kvm_intel"))
		snprintf(self->vendor, sizeof(self->vendor), "kvm_intel");
	ASSERT_NE(0, self->vendor[0]) TH_LOG("neither kvm_amd nor kvm_intel is loaded");
	snprintf(self->filler, sizeof(self->filler), "%.*s/" FILLER ".ko",
		 slash ? (int)(slash - ko) : 1, slash ? ko : ".");
	ks_module_save(&self->mod);
}

/* Load the vendor module from KS_KVM_MODULES with @params. */
static int vendor_load(FIXTURE_DATA(life) *self, const char *params)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s.ko", self->dir, self->vendor);
	return ks_insmod(path, params);
}

FIXTURE_TEARDOWN(life)
{
	/* Whatever a failed case left: the vendor module back, no filler. */
	ks_close_from(3);
	delete_module(FILLER);
	if (!module_live(self->vendor))
		EXPECT_EQ(0, vendor_load(self, ""));
	EXPECT_EQ(0, ks_module_restore(&self->mod));
}

/* The exit-reason buckets of that work, for this host's vendor. */
struct work_buckets {
	const char *stat;
	unsigned int io, msr_read, hlt;
};

static void work_buckets(struct work_buckets *b)
{
	struct ks_exit_codes ec;

	ks_host_exit_codes(&ec);
	b->stat = ec.stat;
	if (ec.svm) {
		b->io = kvm_statsfd_svm_index(SVM_EXIT_IOIO);
		b->msr_read = kvm_statsfd_svm_index(SVM_EXIT_MSR);
		b->hlt = kvm_statsfd_svm_index(SVM_EXIT_HLT);
	} else {
		b->io = kvm_statsfd_vmx_index(EXIT_REASON_IO_INSTRUCTION);
		b->msr_read = kvm_statsfd_vmx_index(EXIT_REASON_MSR_READ);
		b->hlt = kvm_statsfd_vmx_index(EXIT_REASON_HLT);
	}
}

static uint64_t val(struct __test_metadata *_metadata, struct kvmstats *s,
		    const char *name, unsigned int i)
{
	const struct kvmstats_desc *d = ks_find(s, name);

	EXPECT_NE(NULL, d) TH_LOG("no stat %s", name);
	return d ? kvmstats_value(s, d, i) : 0;
}

/*
 * A new VM runs the work to its hlt; its vCPU's stats must show exactly
 * that work, reason by reason and by direction.  @when names the step.
 */
static void counts_exactly(struct __test_metadata *_metadata, const char *when)
{
	struct work_buckets b;
	struct ks_vcpu *v;
	struct kvmstats s = { 0 };
	struct ks_vm vm;
	int r, outs = 0, ins = 0, mmio = 0;

	work_buckets(&b);
	r = ks_vm_create(&vm, ks_code_known_work, ks_code_known_work_len, 1);
	ASSERT_EQ(0, r) TH_LOG("%s: ks_vm_create: %s", when, strerror(-r));
	v = &vm.vcpu[0];
	r = kvmstats_open_from(&s, v->fd);
	ASSERT_EQ(0, r) TH_LOG("%s: %s", when, s.err);
	for (;;) {
		r = ks_vcpu_run(v);
		ASSERT_LE(0, r) TH_LOG("%s: KVM_RUN: %s", when, strerror(-r));
		if (r == KVM_EXIT_MMIO)
			mmio++;
		else if (r != KVM_EXIT_IO)
			break;
		else if (v->run->io.direction == KVM_EXIT_IO_OUT)
			outs++;
		else
			ins++;
	}
	ASSERT_EQ(KVM_EXIT_HLT, r) TH_LOG("%s", when);
	ASSERT_EQ(N_OUT, outs) TH_LOG("%s", when);
	ASSERT_EQ(K_IN, ins) TH_LOG("%s", when);
	ASSERT_EQ(2, mmio) TH_LOG("%s", when);
	ASSERT_EQ(0, kvmstats_refresh(&s)) TH_LOG("%s: %s", when, s.err);
	EXPECT_EQ(N_OUT + K_IN, val(_metadata, &s, b.stat, b.io)) TH_LOG("%s", when);
	EXPECT_EQ(M_MSR, val(_metadata, &s, b.stat, b.msr_read)) TH_LOG("%s", when);
	EXPECT_EQ(1, val(_metadata, &s, b.stat, b.hlt)) TH_LOG("%s", when);
	EXPECT_EQ(N_OUT, val(_metadata, &s, "io_out_exits", 0)) TH_LOG("%s", when);
	EXPECT_EQ(K_IN, val(_metadata, &s, "io_in_exits", 0)) TH_LOG("%s", when);
	EXPECT_EQ(M_MSR, val(_metadata, &s, "msr_read_exits", 0)) TH_LOG("%s", when);
	EXPECT_EQ(0, val(_metadata, &s, "msr_write_exits", 0)) TH_LOG("%s", when);
	EXPECT_EQ(1, val(_metadata, &s, "mmio_writes", 0)) TH_LOG("%s", when);
	EXPECT_EQ(1, val(_metadata, &s, "mmio_reads", 0)) TH_LOG("%s", when);
	kvmstats_close(&s);
	ks_vm_destroy(&vm);
}

/*
 * Unload the vendor module: no VM may be left (KVM pins it by each VM),
 * and the states of the VMs just destroyed may still be on their way out.
 */
static int vendor_unload(FIXTURE_DATA(life) *self)
{
	int ret, ms;

	for (ms = 0; ms < KS_FREE_WAIT_MS; ms += 10) {
		ret = delete_module(self->vendor);
		if (ret != -EWOULDBLOCK && ret != -EBUSY)
			return ret;
		ks_sleep_us(10000);
	}
	return ret;
}

/*
 * The vendor module unloaded and loaded again while kvm_statsfd stays
 * loaded: with another module taking the place it left (it comes back
 * elsewhere), with another parameter, and plainly.  Counting must follow
 * it each time.
 */
TEST_F(life, vendor_reloads_under_the_module)
{
	ASSERT_EQ(0, access(self->filler, R_OK)) TH_LOG("no %s", self->filler);
	ASSERT_EQ(0, ks_module_ensure("superset"));
	counts_exactly(_metadata, "before any reload");

	ASSERT_EQ(0, vendor_unload(self));
	ASSERT_EQ(0, ks_insmod(self->filler, ""));
	ASSERT_EQ(0, vendor_load(self, "nested=0"));
	counts_exactly(_metadata, "vendor reloaded after another module, nested=0");

	ASSERT_EQ(0, vendor_unload(self));
	ASSERT_EQ(0, delete_module(FILLER));
	ASSERT_EQ(0, vendor_load(self, ""));
	counts_exactly(_metadata, "vendor reloaded into the space it left");

	ASSERT_EQ(0, vendor_unload(self));
	ASSERT_EQ(0, vendor_load(self, ""));
	counts_exactly(_metadata, "vendor reloaded plainly");
}

/*
 * kvm_statsfd loaded after kvm.ko but before the vendor module, as boot
 * may order them: it loads, and counts once the vendor module is there;
 * it also unloads cleanly without it ever coming.
 */
TEST_F(life, module_before_vendor)
{
	ASSERT_EQ(0, vendor_unload(self));
	if (ks_module_loaded())
		ASSERT_EQ(0, ks_module_unload_wait(KS_FREE_WAIT_MS));
	ASSERT_EQ(0, ks_module_load("")) TH_LOG("loading with kvm.ko alone");
	ASSERT_EQ(0, ks_module_unload());
	ASSERT_EQ(0, ks_module_load("")) TH_LOG("loading with kvm.ko alone");
	ASSERT_EQ(0, ks_insmod(self->filler, ""));
	ASSERT_EQ(0, vendor_load(self, ""));
	counts_exactly(_metadata, "module loaded before the vendor module");

	/* The default groups too: their probes are built for one vendor. */
	ASSERT_EQ(0, vendor_unload(self));
	ASSERT_EQ(0, ks_module_unload_wait(KS_FREE_WAIT_MS));
	ASSERT_EQ(0, ks_module_load_default("stats=exit_reasons,io_msr"));
	ASSERT_EQ(0, vendor_load(self, ""));
	counts_exactly(_metadata, "counting groups, module before the vendor");
}

/*
 * What an operator meets when VMs exist: KVM pins the vendor module by
 * every VM, and a stats fd keeps its VM, so neither a running VM nor a
 * telemetry agent's open stats fd ever sees the vendor module go; it can
 * go once both are closed.  kvm.ko stays pinned by kvm_statsfd.
 */
TEST_F(life, vendor_pinned_while_vm_or_stats_fd_lives)
{
	struct ks_vm vm;
	int fd, r;

	ASSERT_EQ(0, ks_module_ensure("superset"));
	r = ks_vm_create(&vm, ks_code_known_work, ks_code_known_work_len, 1);
	ASSERT_EQ(0, r) TH_LOG("ks_vm_create: %s", strerror(-r));
	fd = ioctl(vm.vcpu[0].fd, KVM_GET_STATS_FD, 0);
	ASSERT_LE(0, fd) TH_LOG("KVM_GET_STATS_FD: %s", strerror(errno));

	r = delete_module(self->vendor);
	EXPECT_TRUE(r == -EWOULDBLOCK || r == -EBUSY)
		TH_LOG("unloading %s with a VM: %s", self->vendor, strerror(-r));
	ks_vm_destroy(&vm);
	r = delete_module(self->vendor);
	EXPECT_TRUE(r == -EWOULDBLOCK || r == -EBUSY)
		TH_LOG("unloading %s with a stats fd open: %s", self->vendor,
		       strerror(-r));
	EXPECT_EQ(1, module_live(self->vendor));
	close(fd);
	ASSERT_EQ(0, vendor_unload(self));
	r = delete_module("kvm");
	EXPECT_TRUE(r == -EWOULDBLOCK || r == -EBUSY)
		TH_LOG("unloading kvm under kvm_statsfd: %s", strerror(-r));
	ASSERT_EQ(0, vendor_load(self, ""));
	counts_exactly(_metadata, "after the pinned vendor module came back");
}

TEST_HARNESS_MAIN
