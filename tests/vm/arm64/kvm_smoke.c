// SPDX-License-Identifier: GPL-2.0
/*
 * The program of tests/vm/arm64/arm64_smoke_test.sh: runs a VM with known
 * work on the arm64 guest's KVM and checks its stats fds, printing TAP
 * lines without numbers or plan (the test script numbers them).
 *
 *   kvm_smoke native FILE      KVM's own stats, without the module: the
 *                              work's native counts; FILE gets KVM's
 *                              descriptors (or, if FILE exists, they must
 *                              match it: KVM serves its own file again)
 *   kvm_smoke module FILE      with the module: KVM's descriptors first,
 *                              as FILE has them, then the module's, with
 *                              exact counts of the work
 *   kvm_smoke hold FILE        run the work, keep only the stats fds of
 *                              the VM and the vCPU open (the VM's and the
 *                              vCPU's own closed), say "# holding" and
 *                              wait for a signal
 *
 * The work: a vCPU at EL1 with the MMU off, interrupts masked, waits for
 * its virtual timer (armed about 62 ms ahead) in WFI, then reads a command
 * from an MMIO address with no memslot (a KVM_EXIT_MMIO read), writes it
 * back to the next word (an MMIO write), reads an ID register and writes
 * ACTLR_EL1 (each a trapped system register access), then makes that many
 * HVCs (SMCCC function 0, answered in the kernel); 0 asks again, -1 ends
 * with PSCI SYSTEM_OFF (an HVC too, KVM_EXIT_SYSTEM_EVENT).  KVM's SMCCC
 * handler writes x0-x3: the guest keeps its state in x5 to x8.
 *
 * Each wait traps exactly one WFI.  This VM has no in-kernel interrupt
 * controller, so KVM reports the timer's output to the VMM: KVM_RUN
 * returns EINTR (KVM_EXIT_INTR) when it differs from what the VMM was
 * last told, and until then KVM counts the vCPU runnable, so a trapped
 * WFI does not idle (kvm_arch_vcpu_runnable()).  The wait's one WFI that
 * traps therefore idles until the timer fires, and the guest, seeing
 * ISTATUS, stops waiting.  Only if the VMM was last told the output was
 * high would a first WFI return at once and a second one idle: the MMIO
 * read after each wait is a return to the VMM that tells it the output
 * is low again (measured: three waits back to back trapped five WFIs).
 * A WFI under an emulator (QEMU's TCG) completes without trapping when an
 * interrupt of the host's is already pending; the guest then waits again.
 * run_work counts the EINTR returns and enters again.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/kvm.h>

/* Global labels: a -static build reads them right (no GOT surprise). */
extern const unsigned char ks_guest[], ks_guest_end[];
asm(".pushsection .rodata.ks_guest, \"a\"\n"
    ".global ks_guest, ks_guest_end\n"
    ".p2align 2\n"
    "ks_guest:\n"
    "	movz x6, #0x1000, lsl #16\n"	/* x6 = 0x10000000: no memslot */
    "	mrs x8, cntfrq_el0\n"
    "	lsr x8, x8, #4\n"			/* ticks in about 62 ms */
    "1:	mrs x7, cntvct_el0\n"		/* the wait */
    "	add x7, x7, x8\n"
    "	msr cntv_cval_el0, x7\n"
    "	mov x7, #1\n"
    "	msr cntv_ctl_el0, x7\n"		/* ENABLE; IMASK clear */
    "	isb\n"
    "4:	wfi\n"
    "	mrs x7, cntv_ctl_el0\n"
    "	tbz x7, #2, 4b\n"			/* until ISTATUS */
    "	msr cntv_ctl_el0, xzr\n"
    "	ldr x5, [x6]\n"			/* MMIO read: the command */
    "	cmn x5, #1\n"
    "	b.eq 3f\n"
    "	str x5, [x6, #8]\n"		/* MMIO write: its echo */
    "	mrs x4, id_aa64pfr0_el1\n"	/* system register read (HCR_EL2.TID3) */
    "	msr actlr_el1, x4\n"		/* and write (TACR; KVM ignores it) */
    "	cbz x5, 1b\n"
    "2:	mov x0, #0\n"
    "	hvc #0\n"
    "	subs x5, x5, #1\n"
    "	b.ne 2b\n"
    "	b 1b\n"
    "3:	movz x0, #0x8400, lsl #16\n"
    "	movk x0, #0x0008\n"		/* PSCI_0_2_FN_SYSTEM_OFF */
    "	hvc #0\n"
    "	b .\n"
    "ks_guest_end:\n"
    ".popsection\n");

#define GUEST_GPA	0x10000UL
#define GUEST_MEM	0x10000UL
#define MMIO_GPA	0x10000000UL

/* The commands, and what they make the guest do. */
static const uint64_t cmds[] = { 100, 50, 7, (uint64_t)-1 };
#define NR_CMDS		(sizeof(cmds) / sizeof(cmds[0]))
#define WORK_HVCS	(100 + 50 + 7 + 1)	/* + SYSTEM_OFF */
#define WORK_READS	NR_CMDS
#define WORK_WRITES	(NR_CMDS - 1)
#define WORK_MMIO	(WORK_READS + WORK_WRITES)
#define WORK_SYSREGS	(NR_CMDS - 1)	/* reads, and as many writes */
#define WORK_WFIS	NR_CMDS		/* a wait, a trapped WFI, per command */

#define EC_WFX		0x01
#define EC_HVC64	0x16
#define EC_SYS64	0x18
#define EC_DABT_LOW	0x24
#define KIND_TRAP	2
#define NR_KINDS	5

static int failures;

static void check(int ok, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void check(int ok, const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("%s - %s", ok ? "ok" : "not ok", what);
	if (fmt) {
		printf(" # ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	printf("\n");
	failures += !ok;
}

static void die(const char *what)
{
	printf("not ok - %s: %s\n", what, strerror(errno));
	exit(1);
}

#define CORE_REG(x) (KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | \
		     (offsetof(struct kvm_regs, x) / sizeof(__u32)))

struct vm {
	int vm, vcpu;
	unsigned int reads, writes, events, others;
	unsigned int intrs;	/* KVM_RUN's EINTR returns: the timer's output */
};

static volatile sig_atomic_t timed_out;

static void on_alarm(int sig)
{
	(void)sig;
	timed_out = 1;
}

/* Create the VM and run the work; its fds stay open for the stats. */
static void run_work(int kvm, struct vm *v)
{
	struct kvm_userspace_memory_region r = {
		.guest_phys_addr = GUEST_GPA, .memory_size = GUEST_MEM,
	};
	struct sigaction sa = { .sa_handler = on_alarm };
	struct kvm_vcpu_init init;
	struct kvm_one_reg reg;
	struct kvm_run *run;
	uint64_t pc = GUEST_GPA;
	unsigned int next = 0;
	void *mem;
	int sz;

	memset(v, 0, sizeof(*v));
	v->vm = ioctl(kvm, KVM_CREATE_VM, 0);
	if (v->vm < 0)
		die("KVM_CREATE_VM");
	mem = mmap(NULL, GUEST_MEM, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap");
	memcpy(mem, ks_guest, ks_guest_end - ks_guest);
	r.userspace_addr = (uintptr_t)mem;
	if (ioctl(v->vm, KVM_SET_USER_MEMORY_REGION, &r))
		die("KVM_SET_USER_MEMORY_REGION");
	v->vcpu = ioctl(v->vm, KVM_CREATE_VCPU, 0);
	if (v->vcpu < 0)
		die("KVM_CREATE_VCPU");
	sz = ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0);
	run = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, v->vcpu, 0);
	if (run == MAP_FAILED)
		die("mmap kvm_run");
	if (ioctl(v->vm, KVM_ARM_PREFERRED_TARGET, &init))
		die("KVM_ARM_PREFERRED_TARGET");
	init.features[0] |= 1U << KVM_ARM_VCPU_PSCI_0_2;
	if (ioctl(v->vcpu, KVM_ARM_VCPU_INIT, &init))
		die("KVM_ARM_VCPU_INIT");
	reg.id = CORE_REG(regs.pc);
	reg.addr = (uintptr_t)&pc;
	if (ioctl(v->vcpu, KVM_SET_ONE_REG, &reg))
		die("KVM_SET_ONE_REG pc");

	/* A guest that faults loops in KVM_RUN forever: bound it. */
	sigaction(SIGALRM, &sa, NULL);
	alarm(30);
	for (;;) {
		if (ioctl(v->vcpu, KVM_RUN, 0)) {
			if (errno != EINTR || timed_out ||
			    run->exit_reason != KVM_EXIT_INTR)
				die("KVM_RUN");
			v->intrs++;
			continue;
		}
		if (run->exit_reason == KVM_EXIT_SYSTEM_EVENT) {
			v->events++;
			break;
		}
		if (run->exit_reason != KVM_EXIT_MMIO) {
			v->others++;
			continue;
		}
		if (run->mmio.is_write) {
			v->writes++;
		} else {
			v->reads++;
			memcpy(run->mmio.data, &cmds[next < NR_CMDS ? next : NR_CMDS - 1], 8);
			next++;
		}
	}
	alarm(0);
	check(v->reads == WORK_READS && v->writes == WORK_WRITES &&
	      v->events == 1 && !v->others, "the guest did the work",
	      "%u reads, %u writes, %u system events, %u other exits, %u EINTR",
	      v->reads, v->writes, v->events, v->others, v->intrs);
}

/* A whole stats file, as read. */
struct stats {
	struct kvm_stats_header h;
	char id[64];
	char *descs;		/* h.num_desc of dsz bytes */
	size_t dsz;
	uint64_t *data;		/* from h.data_offset to the end */
};

static void stats_read(int fd, struct stats *s)
{
	size_t size = 0;
	unsigned int k;

	if (pread(fd, &s->h, sizeof(s->h), 0) != sizeof(s->h))
		die("read stats header");
	s->dsz = sizeof(struct kvm_stats_desc) + s->h.name_size;
	s->descs = calloc(s->h.num_desc, s->dsz);
	memset(s->id, 0, sizeof(s->id));
	if (pread(fd, s->id, sizeof(s->id) - 1, s->h.id_offset) < 0 ||
	    pread(fd, s->descs, s->h.num_desc * s->dsz, s->h.desc_offset) < 0)
		die("read stats descriptors");
	/* The data block ends with its last stat (KVM's file has no size). */
	for (k = 0; k < s->h.num_desc; k++) {
		struct kvm_stats_desc *d = (void *)(s->descs + k * s->dsz);

		if (d->offset + d->size * 8UL > size)
			size = d->offset + d->size * 8UL;
	}
	s->data = calloc(1, size + 8);
	if (pread(fd, s->data, size, s->h.data_offset) != (ssize_t)size)
		die("read stats data");
}

static struct kvm_stats_desc *desc_at(struct stats *s, unsigned int i)
{
	return (struct kvm_stats_desc *)(s->descs + i * s->dsz);
}

/* Stat @name's first value and bucket @i; -1 (and no stat) if missing. */
static int64_t stat_of(struct stats *s, const char *name, unsigned int i)
{
	unsigned int k;

	for (k = 0; k < s->h.num_desc; k++) {
		struct kvm_stats_desc *d = desc_at(s, k);

		if (!strcmp(d->name, name))
			return i < d->size ? (int64_t)s->data[d->offset / 8 + i] : -1;
	}
	return -1;
}

static uint64_t stat_sum(struct stats *s, const char *name)
{
	unsigned int k, i;
	uint64_t sum = 0;

	for (k = 0; k < s->h.num_desc; k++) {
		struct kvm_stats_desc *d = desc_at(s, k);

		if (!strcmp(d->name, name))
			for (i = 0; i < d->size; i++)
				sum += s->data[d->offset / 8 + i];
	}
	return sum;
}

/* KVM's own descriptors of both files, as FILE holds them. */
struct saved {
	uint32_t num_desc[2];
	char *descs[2];
	size_t dsz[2];
};

static void save(const char *path, struct stats *st)
{
	FILE *f = fopen(path, "w");
	int k;

	if (!f)
		die(path);
	for (k = 0; k < 2; k++) {
		fwrite(&st[k].h.num_desc, 4, 1, f);
		fwrite(&st[k].dsz, sizeof(st[k].dsz), 1, f);
		fwrite(st[k].descs, st[k].dsz, st[k].h.num_desc, f);
	}
	fclose(f);
}

static int load(const char *path, struct saved *sv)
{
	FILE *f = fopen(path, "r");
	int k, ok = 1;

	if (!f)
		return 0;
	for (k = 0; k < 2; k++) {
		ok &= fread(&sv->num_desc[k], 4, 1, f) == 1;
		ok &= fread(&sv->dsz[k], sizeof(sv->dsz[k]), 1, f) == 1;
		sv->descs[k] = calloc(sv->num_desc[k] + 1, sv->dsz[k]);
		ok &= fread(sv->descs[k], sv->dsz[k], sv->num_desc[k], f) ==
		      sv->num_desc[k];
	}
	fclose(f);
	return ok;
}

static const char *const kind_names[2] = { "VM", "vCPU" };

/* KVM's descriptors come first in @s, byte for byte as saved. */
static void check_native_first(struct saved *sv, int k, struct stats *s)
{
	int same = s->dsz == sv->dsz[k] && s->h.num_desc >= sv->num_desc[k] &&
		   !memcmp(s->descs, sv->descs[k], sv->num_desc[k] * sv->dsz[k]);
	char what[80];

	snprintf(what, sizeof(what), "%s file: KVM's %u descriptors first, unchanged",
		 kind_names[k], sv->num_desc[k]);
	check(same, what, "%u descriptors in all", s->h.num_desc);
}

/* The native counts of the work, with or without the module. */
static void check_native_counts(struct stats *vc)
{
	int64_t hvc = stat_of(vc, "hvc_exit_stat", 0);
	int64_t mmio = stat_of(vc, "mmio_exit_user", 0);
	int64_t wfi = stat_of(vc, "wfi_exit_stat", 0);

	check(hvc == WORK_HVCS, "native hvc_exit_stat is the work's HVCs",
	      "%lld, expected %d", (long long)hvc, WORK_HVCS);
	check(mmio == (int64_t)WORK_MMIO, "native mmio_exit_user is the work's MMIO exits",
	      "%lld, expected %zu", (long long)mmio, WORK_MMIO);
	check(wfi == (int64_t)WORK_WFIS, "native wfi_exit_stat is the work's trapped WFIs",
	      "%lld, expected %zu", (long long)wfi, WORK_WFIS);
}

static void check_module(struct stats *st, const struct vm *w)
{
	struct stats *vm = &st[0], *vc = &st[1];
	int64_t exits = stat_of(vc, "exits", 0);
	int64_t hvc = stat_of(vc, "exit_reasons_arm64", EC_HVC64);
	int64_t dabt = stat_of(vc, "exit_reasons_arm64", EC_DABT_LOW);
	int64_t traps = stat_of(vc, "exit_kinds_arm64", KIND_TRAP);
	uint64_t kinds = stat_sum(vc, "exit_kinds_arm64");
	uint64_t ecs = stat_sum(vc, "exit_reasons_arm64");
	int64_t v;

	check(hvc == WORK_HVCS, "exit_reasons_arm64[HVC64] is the work's HVCs",
	      "%lld, expected %d", (long long)hvc, WORK_HVCS);
	check(dabt == (int64_t)WORK_MMIO,
	      "exit_reasons_arm64[DABT_LOW] is the work's MMIO exits",
	      "%lld, expected %zu", (long long)dabt, WORK_MMIO);
	check(exits > 0 && kinds == (uint64_t)exits,
	      "exit_kinds_arm64 sums to KVM's exits",
	      "%llu, exits %lld", (unsigned long long)kinds, (long long)exits);
	check(traps >= 0 && ecs == (uint64_t)traps,
	      "exit_reasons_arm64 sums to the trap exits",
	      "%llu, traps %lld", (unsigned long long)ecs, (long long)traps);
	v = stat_of(vc, "hvc_exits", 0);
	check(v == WORK_HVCS, "hvc_exits is the work's HVCs", "%lld", (long long)v);
	v = stat_of(vc, "exit_reasons_arm64", EC_SYS64);
	check(v == 2 * (int64_t)WORK_SYSREGS,
	      "exit_reasons_arm64[SYS64] is the work's system register accesses",
	      "%lld, expected %zu", (long long)v, 2 * WORK_SYSREGS);
	v = stat_of(vc, "sysreg_read_exits", 0);
	check(v == (int64_t)WORK_SYSREGS, "sysreg_read_exits is the work's reads",
	      "%lld", (long long)v);
	v = stat_of(vc, "sysreg_write_exits", 0);
	check(v == (int64_t)WORK_SYSREGS, "sysreg_write_exits is the work's writes",
	      "%lld", (long long)v);
	v = stat_of(vc, "exit_reasons_arm64", EC_WFX);
	check(v == (int64_t)WORK_WFIS, "exit_reasons_arm64[WFx] is the work's trapped WFIs",
	      "%lld, expected %zu", (long long)v, WORK_WFIS);
	v = stat_of(vc, "wfi_exits", 0);
	check(v == (int64_t)WORK_WFIS, "wfi_exits is the work's trapped WFIs", "%lld",
	      (long long)v);
	v = stat_of(vc, "wfe_exits", 0);
	check(v == 0, "wfe_exits is 0: the work has no WFE", "%lld", (long long)v);
	v = stat_of(vc, "mmio_reads", 0);
	check(v == (int64_t)WORK_READS, "mmio_reads is the work's reads",
	      "%lld, expected %zu", (long long)v, WORK_READS);
	v = stat_of(vc, "mmio_writes", 0);
	check(v == (int64_t)WORK_WRITES, "mmio_writes is the work's writes",
	      "%lld, expected %zu", (long long)v, WORK_WRITES);
	v = stat_of(vc, "guest_ns", 0);
	check(v > 0, "guest_ns counts time in the guest", "%lld", (long long)v);
	v = stat_of(vc, "userspace_exits", KVM_EXIT_MMIO);
	if (v >= 0) {
		check(v == (int64_t)WORK_MMIO,
		      "userspace_exits[KVM_EXIT_MMIO] is the work's MMIO exits",
		      "%lld", (long long)v);
		v = stat_of(vc, "userspace_exits", KVM_EXIT_SYSTEM_EVENT);
		check(v == 1, "userspace_exits[KVM_EXIT_SYSTEM_EVENT] is 1",
		      "%lld", (long long)v);
		v = stat_of(vc, "userspace_exits", KVM_EXIT_INTR);
		check(w->intrs > 0 && v == (int64_t)w->intrs,
		      "userspace_exits[KVM_EXIT_INTR] is the VMM's EINTR returns",
		      "%lld, the VMM saw %u", (long long)v, w->intrs);
	}
	v = stat_of(vc, "exit_latency_hvc_ns", 0);
	if (v >= 0)
		check(v > 0 && stat_sum(vc, "exit_latency_hvc_hist") ==
		      WORK_HVCS, "exit_latency_hvc_hist has a sample per HVC",
		      "%llu", (unsigned long long)stat_sum(vc, "exit_latency_hvc_hist"));
	if (stat_of(vc, "exit_latency_wfx_ns", 0) >= 0)
		check(stat_sum(vc, "exit_latency_wfx_hist") == WORK_WFIS,
		      "exit_latency_wfx_hist has a sample per trapped WFI", "%llu",
		      (unsigned long long)stat_sum(vc, "exit_latency_wfx_hist"));
	v = stat_of(vm, "vcpus_exit_reasons_arm64", EC_HVC64);
	check(v == WORK_HVCS, "VM file: vcpus_exit_reasons_arm64[HVC64] sums its vCPU",
	      "%lld", (long long)v);
	v = stat_of(vm, "vcpus", 0);
	check(v == 1, "VM file: vcpus is 1", "%lld", (long long)v);
}

int main(int argc, char **argv)
{
	struct stats st[2];
	struct saved sv;
	int kvm, k, module, have;
	struct vm v;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3 || (strcmp(argv[1], "native") && strcmp(argv[1], "module") &&
			  strcmp(argv[1], "hold"))) {
		fprintf(stderr, "usage: kvm_smoke native|module|hold FILE\n");
		return 2;
	}
	module = !strcmp(argv[1], "module");
	kvm = open("/dev/kvm", O_RDWR);
	if (kvm < 0)
		die("/dev/kvm");
	run_work(kvm, &v);
	if (!strcmp(argv[1], "hold")) {
		int fds[2];

		for (k = 0; k < 2; k++)
			fds[k] = ioctl(k ? v.vcpu : v.vm, KVM_GET_STATS_FD, 0);
		check(fds[0] >= 0 && fds[1] >= 0, "stats fds to hold", NULL);
		close(v.vcpu);
		close(v.vm);
		close(kvm);
		printf("# holding\n");
		pause();
		return 0;
	}
	for (k = 0; k < 2; k++) {
		int fd = ioctl(k ? v.vcpu : v.vm, KVM_GET_STATS_FD, 0);

		if (fd < 0)
			die("KVM_GET_STATS_FD");
		stats_read(fd, &st[k]);
		close(fd);
	}
	printf("# vCPU file %s: %u descriptors, exits %lld\n", st[1].id,
	       st[1].h.num_desc, (long long)stat_of(&st[1], "exits", 0));
	check(!strncmp(st[1].id, "kvm-", 4) && strstr(st[1].id, "/vcpu-0"),
	      "vCPU file: KVM's id", "%s", st[1].id);
	check_native_counts(&st[1]);
	have = load(argv[2], &sv);
	if (!module) {
		int own = stat_of(&st[1], "exit_reasons_arm64", 0) >= 0;

		check(!own, "KVM's own file: no module stats", NULL);
		if (have) {
			for (k = 0; k < 2; k++) {
				check_native_first(&sv, k, &st[k]);
				check(st[k].h.num_desc == sv.num_desc[k],
				      "KVM's own file: as without the module", "%u descriptors",
				      st[k].h.num_desc);
			}
		} else {
			save(argv[2], st);
		}
	} else {
		if (!have)
			die(argv[2]);
		for (k = 0; k < 2; k++)
			check_native_first(&sv, k, &st[k]);
		check(st[1].h.num_desc > sv.num_desc[1], "vCPU file: the module's stats follow",
		      "%u more", st[1].h.num_desc - sv.num_desc[1]);
		check_module(st, &v);
	}
	return failures ? 1 : 0;
}
