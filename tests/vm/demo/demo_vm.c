// SPDX-License-Identifier: GPL-2.0
/*
 * demo-vm: a tiny KVM VMM for the kvm-statsfd demo and tool tests.
 *
 * Creates one VM with N vCPUs (default 2), one thread each, running
 * real-mode guest code that loops forever doing
 *   - a port write (out 0x10 + vCPU id): KVM_EXIT_IO, SVM exit "ioio";
 *   - a write to guest-physical 0x20000, which has no memslot:
 *     KVM_EXIT_MMIO, SVM exit "npf";
 *   - every 8th pass a cpuid (handled inside KVM, SVM exit "cpuid");
 *   - every 32nd pass a hlt: with no in-kernel irqchip, KVM_EXIT_HLT.
 * On arm64 the guest runs at EL1 with the MMU off, and arm64 has no ports:
 *   - the "port" write is an MMIO write to 0x30000 + 8 * vCPU id (no
 *     memslot), counted as io; the write to 0x20000 as on x86 (both
 *     KVM_EXIT_MMIO, exception class DABT_LOW);
 *   - the cpuid is a read of ID_AA64PFR0_EL1, which traps to KVM and is
 *     answered there (class SYS64);
 *   - the hlt is an HVC of a function that the VM's SMCCC filter forwards
 *     to userspace (KVM_EXIT_HYPERCALL, class HVC64): a WFI would block in
 *     KVM, as no timer is programmed to end it.
 * Userspace counts the exits and re-enters, after a HLT only once an idle
 * guest's next timer tick would have woken it (--hlt-ms), until the time
 * given with -t is up (default 20 s), or SIGINT/SIGTERM.
 *
 * usage: demo-vm [-name guest=NAME] [-t SECONDS] [-c VCPUS] [--hlt-ms MS]
 *                [--like-qemu 7.2|8.1]
 *   -name        ignored; there so that tools that look for QEMU's -name
 *                (kvm-statsfd list) show a guest name
 *   --hlt-ms     how long a HLT keeps the vCPU out of the guest (default
 *                10, a 100 Hz guest's tick; 0 re-enters at once, a vCPU
 *                that never idles).  Without it every vCPU thread spins
 *                on exits for the whole run, which under the test
 *                guests' emulator is most of a test's CPU time.
 *   --like-qemu  which QEMU's stats fds to keep, for the tools to borrow
 *                when the kernel refuses KVM_GET_STATS_FD to outsiders:
 *     7.2  (default) none.  QEMU 7.1 and 7.2 (Debian 12's) open a stats
 *          fd only while answering query-stats and close it again
 *          (accel/kvm/kvm-all.c: query_stats_cb() for the VM,
 *          query_stats_vcpu() run on each vCPU); a VMM without stats
 *          support keeps none either.
 *     8.1  one per vCPU, opened right after that vCPU is set up and kept
 *          until exit; none for the VM.  Since QEMU 8.1 ("kvm: reuse
 *          per-vcpu stats fd to avoid vcpu interruption") kvm_init_vcpu()
 *          keeps cpu->kvm_vcpu_stats_fd and query_stats_vcpu() reads it,
 *          while query_stats_cb() still opens and closes the VM's per
 *          query.  As QEMU does, a refusal (no binary stats in the
 *          kernel) is not an error: that vCPU just has none.
 * Prints "demo-vm: running pid PID" once every vCPU is created, and a
 * per-vCPU summary at the end.  Exit status 0, or 1 on any KVM error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/kvm.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef KVM_GET_STATS_FD
#define KVM_GET_STATS_FD	_IO(KVMIO, 0xce)
#endif

#define MEM_SIZE	0x10000
#define CODE_ADDR	0x1000
#define MAX_VCPUS	16

extern const unsigned char guest_code[], guest_code_end[];
#if defined(__aarch64__)
/* The idle HVC's function: a fast SMC64 SiP call, not one KVM reserves. */
#define IDLE_FUNC	0xc2000000U
#define PORT_BASE	0x30000

/* EL1 guest code, MMU off; x19 holds the vCPU id (set by the VMM). */
__asm__(
	".pushsection .rodata\n"
	".globl guest_code\n"
	".globl guest_code_end\n"
	".p2align 2\n"
	"guest_code:\n"
	"	movz x6, #0x2, lsl #16\n"	/* GPA 0x20000, not in any memslot */
	"	movz x7, #0x3, lsl #16\n"	/* the vCPU's "port": PORT_BASE */
	"	add x7, x7, x19, lsl #3\n"	/*   + 8 * id */
	"	mov x2, #0\n"
	"1:	strb w2, [x7]\n"		/* the "port" write: MMIO exit */
	"	strb w2, [x6]\n"		/* MMIO exit */
	"	add x2, x2, #1\n"
	"	tst x2, #7\n"
	"	b.ne 1b\n"
	"	mrs x3, id_aa64pfr0_el1\n"	/* trapped, handled in the kernel */
	"	tst x2, #31\n"
	"	b.ne 1b\n"
	"	movz x0, #0xc200, lsl #16\n"	/* IDLE_FUNC */
	"	hvc #0\n"			/* KVM_EXIT_HYPERCALL: the idle */
	"	b 1b\n"
	"guest_code_end:\n"
	".popsection\n");
#else
/* Real-mode guest code; bx holds the vCPU id (set by the VMM). */
__asm__(
	".pushsection .rodata\n"
	".globl guest_code\n"
	".globl guest_code_end\n"
	"guest_code:\n"
	".code16\n"
	"	mov $0x2000, %ax\n"	/* ds:0 = GPA 0x20000, not in any memslot */
	"	mov %ax, %ds\n"
	"	xor %cx, %cx\n"
	"1:	mov %cl, %al\n"
	"	mov $0x10, %dx\n"
	"	add %bx, %dx\n"
	"	out %al, %dx\n"		/* port I/O exit */
	"	movb %al, (0)\n"	/* MMIO exit */
	"	inc %cx\n"
	"	test $7, %cl\n"
	"	jnz 1b\n"
	"	push %cx\n"
	"	push %bx\n"
	"	xor %eax, %eax\n"
	"	cpuid\n"		/* handled in the kernel */
	"	pop %bx\n"
	"	pop %cx\n"
	"	test $31, %cl\n"
	"	jnz 1b\n"
	"	hlt\n"			/* KVM_EXIT_HLT, no irqchip */
	"	jmp 1b\n"
	".code64\n"
	"guest_code_end:\n"
	".popsection\n");
#endif

struct vcpu {
	int id, fd;
	int stats_fd;		/* --like-qemu 8.1: kept until exit, or -1 */
	struct kvm_run *run;
	pthread_t thread;
	unsigned long io, mmio, hlt, intr;
	int err;
};

static int kvm_fd, vm_fd, run_size;
static int like_qemu_81;	/* --like-qemu 8.1 */
static struct vcpu vcpus[MAX_VCPUS];
static double deadline;
static volatile sig_atomic_t stop;
/* --hlt-ms: how long a HLT exit stays out of the guest. */
static double hlt_ms = 10;
static long hlt_ns;
static struct timespec hlt_wait;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void die(const char *what)
{
	fprintf(stderr, "demo-vm: %s: %s\n", what, strerror(errno));
	exit(1);
}

#if defined(__aarch64__)
#define CORE_REG(x) (KVM_REG_ARM64 | KVM_REG_SIZE_U64 | KVM_REG_ARM_CORE | \
		     (offsetof(struct kvm_regs, x) / sizeof(__u32)))

static void set_core_reg(struct vcpu *v, uint64_t id, uint64_t val)
{
	struct kvm_one_reg reg = { .id = id, .addr = (uintptr_t)&val };

	if (ioctl(v->fd, KVM_SET_ONE_REG, &reg) < 0)
		die("KVM_SET_ONE_REG");
}

/* The vCPU as KVM_ARM_VCPU_INIT resets it (EL1h, MMU off), PSCI 0.2. */
static void vcpu_arch_setup(struct vcpu *v)
{
	struct kvm_vcpu_init init;

	if (ioctl(vm_fd, KVM_ARM_PREFERRED_TARGET, &init) < 0)
		die("KVM_ARM_PREFERRED_TARGET");
	init.features[0] |= 1U << KVM_ARM_VCPU_PSCI_0_2;
	if (ioctl(v->fd, KVM_ARM_VCPU_INIT, &init) < 0)
		die("KVM_ARM_VCPU_INIT");
	set_core_reg(v, CORE_REG(regs.pc), CODE_ADDR);
	set_core_reg(v, CORE_REG(regs.regs[19]), v->id);
}

/*
 * The SMCCC filter (Linux 6.4; Debian 12's arm64 libc headers are 6.1's):
 * the idle HVC goes to userspace.  Set before any vCPU runs.
 */
#ifndef KVM_ARM_VM_SMCCC_CTRL
#define KVM_ARM_VM_SMCCC_CTRL		0
#define KVM_ARM_VM_SMCCC_FILTER		0
#define KVM_SMCCC_FILTER_FWD_TO_USER	2
struct kvm_smccc_filter {
	__u32 base;
	__u32 nr_functions;
	__u8 action;
	__u8 pad[15];
};
#endif

static void vm_arch_setup(void)
{
	struct kvm_smccc_filter filter = {
		.base = IDLE_FUNC,
		.nr_functions = 1,
		.action = KVM_SMCCC_FILTER_FWD_TO_USER,
	};
	struct kvm_device_attr attr = {
		.group = KVM_ARM_VM_SMCCC_CTRL,
		.attr = KVM_ARM_VM_SMCCC_FILTER,
		.addr = (uintptr_t)&filter,
	};

	if (ioctl(vm_fd, KVM_SET_DEVICE_ATTR, &attr) < 0)
		die("KVM_SET_DEVICE_ATTR (SMCCC filter)");
}

/* Which of the two MMIO writes exited: the "port" one counts as io. */
static int mmio_is_port(const struct kvm_run *run)
{
	return run->mmio.phys_addr >= PORT_BASE;
}

#define KVM_EXIT_IDLE	KVM_EXIT_HYPERCALL
#else
/* Real mode at CODE_ADDR, bx = the vCPU's id. */
static void vcpu_arch_setup(struct vcpu *v)
{
	struct kvm_sregs sregs;
	struct kvm_regs regs;

	if (ioctl(v->fd, KVM_GET_SREGS, &sregs) < 0)
		die("KVM_GET_SREGS");
	sregs.cs.base = 0;
	sregs.cs.selector = 0;
	if (ioctl(v->fd, KVM_SET_SREGS, &sregs) < 0)
		die("KVM_SET_SREGS");
	memset(&regs, 0, sizeof(regs));
	regs.rip = CODE_ADDR;
	regs.rbx = v->id;
	regs.rflags = 0x2;
	if (ioctl(v->fd, KVM_SET_REGS, &regs) < 0)
		die("KVM_SET_REGS");
}

/* No irqchip: HLT exits to userspace. */
static void vm_arch_setup(void)
{
}

/* Port writes exit as KVM_EXIT_IO: every MMIO exit is the MMIO write. */
static int mmio_is_port(const struct kvm_run *run)
{
	(void)run;
	return 0;
}

#define KVM_EXIT_IDLE	KVM_EXIT_HLT
#endif

static void vcpu_create(struct vcpu *v)
{
	v->fd = ioctl(vm_fd, KVM_CREATE_VCPU, v->id);
	if (v->fd < 0)
		die("KVM_CREATE_VCPU");
	v->run = mmap(NULL, run_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		      v->fd, 0);
	if (v->run == MAP_FAILED)
		die("mmap kvm_run");
	vcpu_arch_setup(v);
	/* QEMU 8.1+: the vCPU's stats fd, opened once it is set up, kept. */
	v->stats_fd = like_qemu_81 ? ioctl(v->fd, KVM_GET_STATS_FD, 0) : -1;
}

static void *vcpu_thread(void *arg)
{
	struct vcpu *v = arg;

	while (!stop && now() < deadline) {
		if (ioctl(v->fd, KVM_RUN, 0) < 0) {
			if (errno == EINTR || errno == EAGAIN) {
				v->intr++;
				continue;
			}
			v->err = errno;
			fprintf(stderr, "demo-vm: vCPU %d: KVM_RUN: %s\n",
				v->id, strerror(errno));
			break;
		}
		switch (v->run->exit_reason) {
		case KVM_EXIT_IO:
			v->io++;
			break;
		case KVM_EXIT_MMIO:
			if (mmio_is_port(v->run))
				v->io++;
			else
				v->mmio++;
			break;
		case KVM_EXIT_IDLE:
			v->hlt++;
			if (hlt_ns)
				nanosleep(&hlt_wait, NULL);
			break;
		case KVM_EXIT_INTR:
			v->intr++;
			break;
		default:
			fprintf(stderr, "demo-vm: vCPU %d: unexpected exit reason %u\n",
				v->id, v->run->exit_reason);
			v->err = EIO;
			return NULL;
		}
	}
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: demo-vm [-name guest=NAME] [-t SECONDS] [-c VCPUS] [--hlt-ms MS] [--like-qemu 7.2|8.1]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	struct kvm_userspace_memory_region region;
	struct sigaction sa = { .sa_handler = on_signal };
	double seconds = 20;
	int i, n = 2, kept = 0, rc = 0;
	void *mem;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-name") && i + 1 < argc)
			i++;
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "-c") && i + 1 < argc)
			n = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--hlt-ms") && i + 1 < argc)
			hlt_ms = atof(argv[++i]);
		else if (!strcmp(argv[i], "--like-qemu") && i + 1 < argc &&
			 (!strcmp(argv[i + 1], "7.2") || !strcmp(argv[i + 1], "8.1")))
			like_qemu_81 = !strcmp(argv[++i], "8.1");
		else
			usage();
	}
	if (n < 1 || n > MAX_VCPUS || !(seconds > 0) ||
	    !(hlt_ms >= 0 && hlt_ms < 1000))
		usage();
	hlt_ns = (long)(hlt_ms * 1e6);
	hlt_wait.tv_nsec = hlt_ns;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm_fd < 0)
		die("/dev/kvm");
	vm_fd = ioctl(kvm_fd, KVM_CREATE_VM, 0);
	if (vm_fd < 0)
		die("KVM_CREATE_VM");
	vm_arch_setup();
	run_size = ioctl(kvm_fd, KVM_GET_VCPU_MMAP_SIZE, 0);
	if (run_size <= 0)
		die("KVM_GET_VCPU_MMAP_SIZE");
	mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem == MAP_FAILED)
		die("mmap guest memory");
	memcpy((char *)mem + CODE_ADDR, guest_code, guest_code_end - guest_code);
	region = (struct kvm_userspace_memory_region){
		.slot = 0,
		.guest_phys_addr = 0,
		.memory_size = MEM_SIZE,
		.userspace_addr = (uintptr_t)mem,
	};
	if (ioctl(vm_fd, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		die("KVM_SET_USER_MEMORY_REGION");
	for (i = 0; i < n; i++) {
		vcpus[i].id = i;
		vcpu_create(&vcpus[i]);
	}
	for (i = 0; i < n; i++)
		kept += vcpus[i].stats_fd >= 0;

	deadline = now() + seconds;
	for (i = 0; i < n; i++) {
		errno = pthread_create(&vcpus[i].thread, NULL, vcpu_thread,
				       &vcpus[i]);
		if (errno)
			die("pthread_create");
	}
	printf("demo-vm: running pid %d, %d vCPUs, %.0f s, like QEMU %s: %d vCPU stats fds kept\n",
	       (int)getpid(), n, seconds, like_qemu_81 ? "8.1" : "7.2", kept);
	fflush(stdout);
	for (i = 0; i < n; i++) {
		pthread_join(vcpus[i].thread, NULL);
		if (vcpus[i].err)
			rc = 1;
	}
	for (i = 0; i < n; i++)
		printf("demo-vm: vCPU %d: %lu io, %lu mmio, %lu hlt exits to userspace%s\n",
		       i, vcpus[i].io, vcpus[i].mmio, vcpus[i].hlt,
		       vcpus[i].err ? " (stopped on error)" : "");
	return rc;
}
